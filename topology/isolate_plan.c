/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * isolate_plan.c - walk the targets of a region's CPU split.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cpulist.h"
#include "isolate_plan.h"
#include "proc.h"

#define MAX_DEPTH 32
#define PF_KTHREAD 0x00200000u        /* include/linux/sched.h */
#define PF_NO_SETAFFINITY 0x04000000u /* the kernel refuses to move it (per-CPU kthreads) */

/* What one apply needs on every step. */
struct walk {
	const struct isolate_plan *plan;
	struct isolate_undo *undo;
	hwloc_bitmap_t owner, rest, all;
	char self_cg[1024]; /* krexd's own cpuset cgroup: never touched */
	int moved;
	int failed;
	char *why;
	size_t wlen;
};

__attribute__((format(printf, 2, 3))) static void walk_note(struct walk *w, const char *fmt, ...)
{
	size_t n = strlen(w->why);
	va_list ap;

	if (n && n + 2 < w->wlen) {
		memcpy(w->why + n, "; ", 3);
		n += 2;
	}
	if (n + 1 >= w->wlen)
		return;
	va_start(ap, fmt);
	vsnprintf(w->why + n, w->wlen - n, fmt, ap);
	va_end(ap);
}

/* Processes in one cgroup (its cgroup.procs lines). */
static int cgroup_nprocs(const char *dir)
{
	char path[1100], line[32];
	int n = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		n++;
	fclose(f);
	return n;
}

/* A failed step: a refused undo line aborts the apply, anything else is noted. */
static void walk_failed(struct walk *w, const char *what, const char *name)
{
	if (errno == ECANCELED)
		w->failed = 1;
	walk_note(w, "%s %s: %s", what, name, strerror(errno));
}

static void walk_pid(struct walk *w, pid_t pid, hwloc_const_bitmap_t want);

/* Every process of one cgroup (not below it) by affinity. */
static void walk_procs(struct walk *w, const char *dir, hwloc_const_bitmap_t want)
{
	char path[1100], line[32];
	FILE *f;
	pid_t pid;

	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	f = fopen(path, "re");
	while (f && fgets(line, sizeof(line), f) && !w->failed) {
		pid = (pid_t)atoi(line);
		if (pid > 1 && pid != getpid())
			walk_pid(w, pid, want);
	}
	if (f)
		fclose(f);
}

/*
 * Restrict the cgroup tree at dir to want, children first: a v1 parent
 * may never be smaller than a child (the kernel answers EBUSY), so
 * children shrink before their parent, and the undo, newest first, widens
 * the parent before them.  The owner's cgroup, met on the way in node mode,
 * gets the owner's CPUs; krexd's own is kept as it is.  now: what dir keeps.
 */
static void walk_tree(struct walk *w, const char *dir, hwloc_const_bitmap_t want, int depth,
                      int write_self, hwloc_bitmap_t now)
{
	hwloc_bitmap_t kids = hwloc_bitmap_alloc(), child_now = hwloc_bitmap_alloc();
	const char *odir = w->plan->owner.cgroup;
	hwloc_const_bitmap_t cw;
	char child[1100];
	struct dirent *de;
	DIR *d;
	int r;

	if (!kids || !child_now || w->failed)
		goto out;
	d = depth < MAX_DEPTH ? opendir(dir) : NULL;
	while (d && (de = readdir(d)) && !w->failed) {
		if (de->d_type != DT_DIR || de->d_name[0] == '.')
			continue;
		if (snprintf(child, sizeof(child), "%s/%s", dir, de->d_name) >= (int)sizeof(child))
			continue;
		cw = want;
		if (odir && strcmp(child, odir) == 0)
			cw = w->owner;
		else if (strcmp(child, w->self_cg) == 0)
			cw = w->all;
		walk_tree(w, child, cw, depth + 1, 1, child_now);
		hwloc_bitmap_or(kids, kids, child_now);
	}
	if (d)
		closedir(d);
	if (!write_self || w->failed)
		goto out;
	if (isolate_cgroup_version(dir) < 0) {
		/* v2 without the cpuset controller enabled here: its processes by affinity. */
		hwloc_bitmap_zero(now);
		walk_procs(w, dir, want);
		goto out;
	}
	r = isolate_cgroup_set(dir, want, kids, now, w->plan->rec, w->plan->rec_ctx, w->undo);
	if (r == 2) { /* a v2 cpuset that inherits its parent's: its processes by affinity */
		hwloc_bitmap_zero(now);
		walk_procs(w, dir, want);
	} else if (r < 0)
		walk_failed(w, "cgroup", dir);
	else if (r == 1 && want != w->owner)
		w->moved += cgroup_nprocs(dir);
out:
	hwloc_bitmap_free(kids);
	hwloc_bitmap_free(child_now);
}

static void walk_pid(struct walk *w, pid_t pid, hwloc_const_bitmap_t want)
{
	char name[32];
	int r = isolate_affinity_set(pid, want, w->plan->rec, w->plan->rec_ctx, w->undo);

	if (r < 0) {
		snprintf(name, sizeof(name), "%d", (int)pid);
		walk_failed(w, "pid", name);
	} else if (r == 1 && want != w->owner) {
		w->moved++;
	}
}

static void walk_target(struct walk *w, const struct isolate_target *t, hwloc_const_bitmap_t want)
{
	hwloc_bitmap_t now = hwloc_bitmap_alloc();

	if (t->cgroup && t->cgroup[0])
		walk_tree(w, t->cgroup, want, 0, 1, now);
	else if (t->pid > 0)
		walk_pid(w, t->pid, want);
	hwloc_bitmap_free(now);
}

/* May this process be moved in node mode?  (Not: pid 1, krexd, kernel threads.) */
static int pid_movable(struct walk *w, pid_t pid, const char *root)
{
	const struct isolate_plan *p = w->plan;
	char cg[1024];
	unsigned i;
	struct proc_stat st;

	if (pid == 1 || pid == getpid() || pid == p->owner.pid)
		return 0;
	for (i = 0; i < p->nothers; i++)
		if (p->others[i].pid == pid)
			return 0; /* done already */
	if (proc_stat_read(pid, &st) < 9 || (st.flags & (PF_KTHREAD | PF_NO_SETAFFINITY)))
		return 0;
	if (p->may_move && !p->may_move(p->may_move_ctx, pid))
		return 0;
	/* In a cgroup under the walked root: the cpuset walk moved it already. */
	if (root && isolate_pid_cgroup(p->sys, pid, cg, sizeof(cg)) == 0 && cg[0] &&
	    strncmp(cg, root, strlen(root)) == 0 && cg[strlen(root)] == '/')
		return 0;
	return 1;
}

/* Node mode: every cgroup under the root, then every plain movable process. */
static void walk_node(struct walk *w)
{
	const struct isolate_plan *p = w->plan;
	const char *root = p->node_root ? p->node_root : p->sys->mount;
	hwloc_bitmap_t now = hwloc_bitmap_alloc();
	struct dirent *de;
	DIR *d;
	pid_t pid;

	if (p->sys->kind == ISOLATE_AFFINITY || !root[0])
		root = NULL;
	if (root)
		walk_tree(w, root, w->rest, 0, 0, now); /* the root's own set stays */
	hwloc_bitmap_free(now);
	d = opendir("/proc");
	while (d && (de = readdir(d)) && !w->failed) {
		pid = (pid_t)atoi(de->d_name);
		if (pid > 0 && pid_movable(w, pid, root))
			walk_pid(w, pid, w->rest);
	}
	if (d)
		closedir(d);
}

int isolate_apply(const struct isolate_plan *plan, struct isolate_undo *undo, int *moved, char *why,
                  size_t wlen)
{
	struct walk w = {.plan = plan, .undo = undo, .why = why, .wlen = wlen};
	unsigned i;
	int rc = -1;

	why[0] = '\0';
	*moved = 0;
	w.owner = hwloc_bitmap_alloc();
	w.rest = hwloc_bitmap_alloc();
	w.all = hwloc_bitmap_alloc();
	if (!w.owner || !w.rest || !w.all)
		goto out;
	if (cpulist_parse(plan->owner_cpus, w.owner) < 0 || hwloc_bitmap_iszero(w.owner) ||
	    cpulist_parse(plan->rest_cpus, w.rest) < 0 || hwloc_bitmap_iszero(w.rest)) {
		walk_note(&w, "owner '%s' or rest '%s' is not a non-empty CPU list",
		          plan->owner_cpus, plan->rest_cpus);
		errno = EINVAL;
		goto out;
	}
	hwloc_bitmap_fill(w.all);
	if (isolate_pid_cgroup(plan->sys, getpid(), w.self_cg, sizeof(w.self_cg)) < 0)
		w.self_cg[0] = '\0';
	for (i = 0; i < plan->nothers && !w.failed; i++)
		walk_target(&w, &plan->others[i], w.rest);
	if (plan->node && !w.failed)
		walk_node(&w);
	if (!w.failed)
		walk_target(&w, &plan->owner, w.owner);
	if (w.failed) {
		isolate_undo_all(undo);
		errno = ECANCELED;
		goto out;
	}
	*moved = w.moved;
	rc = 0;
out:
	hwloc_bitmap_free(w.owner);
	hwloc_bitmap_free(w.rest);
	hwloc_bitmap_free(w.all);
	return rc;
}

int isolate_restore(struct isolate_undo *undo)
{
	return isolate_undo_all(undo);
}
