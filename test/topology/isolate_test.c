/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * isolate_test.c - the isolation backends on this machine's real cgroup v1
 * cpuset and thread affinity (root; skips otherwise).
 *
 * CPU-bound children run in a private cpuset tree krextest-PID (a parent,
 * a nested child, an owner cgroup) and as plain processes; every plan is
 * applied, checked, and undone, also from recorded lines after a simulated
 * crash.  Children die with the test (PR_SET_PDEATHSIG) and are killed by
 * pid at exit; the tree is removed.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cgtest.h"
#include "cpulist.h"
#include "isolate_plan.h"
#include "isolate_region.h"
#include "tap.h"

#define MAX_KIDS 8
#define MAX_LINES 64

static pid_t kids[MAX_KIDS];
static int nkids;
static char tree[512];
static char v2dir[256]; /* a cgroup v2 directory without cpuset */
static struct isolate_sys sys;

static char lines[MAX_LINES][4096];
static int nlines, refuse;

/* ---- helpers ---------------------------------------------------------- */

static volatile sig_atomic_t want_thread;

static void *spin(void *arg)
{
	volatile unsigned long x = 0;

	for (;;)
		x++;
	return arg;
}

static void on_usr1(int sig)
{
	want_thread = sig;
}

/* A child: one spinning thread plus the main one; SIGUSR1 adds a thread. */
static pid_t spawn_spinner(void)
{
	pthread_t t;
	pid_t pid = fork();

	if (pid != 0) {
		if (pid > 0 && nkids < MAX_KIDS)
			kids[nkids++] = pid;
		return pid;
	}
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	signal(SIGUSR1, on_usr1);
	pthread_create(&t, NULL, spin, NULL);
	for (;;) {
		if (want_thread) {
			want_thread = 0;
			pthread_create(&t, NULL, spin, NULL);
		}
		usleep(1000);
	}
}

static void cleanup(void)
{
	const char *sub[] = {"a/sub", "a", "o", ""};
	char path[600];
	int i;

	for (i = 0; i < nkids; i++)
		if (kids[i] > 0) {
			kill(kids[i], SIGKILL);
			waitpid(kids[i], NULL, 0);
		}
	nkids = 0;
	if (v2dir[0])
		rmdir(v2dir);
	for (i = 0; tree[0] && i < 4; i++) {
		snprintf(path, sizeof(path), "%s/%s", tree, sub[i]);
		rmdir(path);
	}
}

static int put_path(const char *path, const char *val)
{
	FILE *f = fopen(path, "we");
	int rc;

	if (!f)
		return -1;
	rc = fputs(val, f) < 0 ? -1 : 0;
	return fclose(f) < 0 ? -1 : rc;
}

/* mkdir a v1 cpuset cgroup with cpus and the parent's mems. */
static int cg_make(const char *dir, const char *cpus)
{
	char path[600];

	if (mkdir(dir, 0755) < 0 && errno != EEXIST)
		return -1;
	snprintf(path, sizeof(path), "%s/cpuset.mems", dir);
	if (put_path(path, "0") < 0)
		return -1;
	snprintf(path, sizeof(path), "%s/cpuset.cpus", dir);
	return put_path(path, cpus);
}

static int cg_add(const char *dir, pid_t pid)
{
	char path[600], val[32];

	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	snprintf(val, sizeof(val), "%d", (int)pid);
	return put_path(path, val);
}

/* The CPU list of one thread. */

/* Do all threads of pid but skip have the mask list? */
static int threads_but(pid_t pid, pid_t skip, const char *list, int *nthreads)
{
	char path[64], m[256];
	struct dirent *de;
	DIR *d;
	int same = 1;

	*nthreads = 0;
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	while (d && (de = readdir(d))) {
		if (de->d_name[0] == '.' || atoi(de->d_name) == skip)
			continue;
		mask_of(atoi(de->d_name), m, sizeof(m));
		(*nthreads)++;
		if (strcmp(m, list) != 0) {
			diag("thread %s of %d: %s, want %s", de->d_name, (int)pid, m, list);
			same = 0;
		}
	}
	if (d)
		closedir(d);
	return same && *nthreads > 0;
}

static int all_threads(pid_t pid, const char *list, int *nthreads)
{
	return threads_but(pid, 0, list, nthreads);
}

static int rec_line(void *ctx, const char *line)
{
	(void)ctx;
	if (refuse || nlines == MAX_LINES)
		return -1;
	snprintf(lines[nlines++], sizeof(lines[0]), "%s", line);
	return 0;
}

/* ---- the tests ---------------------------------------------------------- */

static char dir_a[600], dir_sub[600], dir_o[600];
static pid_t k3_pinned; /* a thread of the owner with a mask of its own */

/* TAP skip of one test. */
static void skip(const char *what, const char *why)
{
	ok(1, "%s # SKIP %s", what, why);
}

static int only_mine(void *ctx, pid_t pid)
{
	return pid == *(pid_t *)ctx;
}

/* Every set as it was before any plan. */
static int all_back(pid_t k1, pid_t k2, pid_t k3, pid_t k4, pid_t k4_pinned)
{
	char a[64], s[64], o[64];
	int n, good;

	get(dir_a, "cpuset.cpus", a, sizeof(a));
	get(dir_sub, "cpuset.cpus", s, sizeof(s));
	get(dir_o, "cpuset.cpus", o, sizeof(o));
	good = strcmp(a, "0-1") == 0 && strcmp(s, "0-1") == 0 && strcmp(o, "0-1") == 0;
	if (!good)
		diag("cpusets a=%s a/sub=%s o=%s, want 0-1", a, s, o);
	good &= all_threads(k1, "0-1", &n) & all_threads(k2, "0-1", &n);
	mask_of(k3, a, sizeof(a));
	mask_of(k3_pinned, o, sizeof(o));
	/* Why the owner's pinned thread gets CPU 1 back through a cpuset change:
	 * since Linux 6.2 the kernel keeps the mask asked with sched_setaffinity
	 * (user_cpus_ptr) and reapplies it when the cpuset widens. */
	if (strcmp(a, "0-1") || strcmp(o, "1"))
		diag("owner: main %s (want 0-1), pinned thread %s (want 1)", a, o);
	good &= strcmp(a, "0-1") == 0 && strcmp(o, "1") == 0;
	mask_of(k4_pinned, s, sizeof(s));
	if (strcmp(s, "0"))
		diag("plain process: pinned thread %s (want 0)", s);
	return good && threads_but(k4, k4_pinned, "0-1", &n) && strcmp(s, "0") == 0;
}

/* Is the split in place: a, a/sub and the plain process on 1, the owner on 0? */
static int split_in_place(pid_t k1, pid_t k2, pid_t k3, pid_t k4)
{
	char a[64], s[64], o[64];
	int n;

	get(dir_a, "cpuset.cpus", a, sizeof(a));
	get(dir_sub, "cpuset.cpus", s, sizeof(s));
	get(dir_o, "cpuset.cpus", o, sizeof(o));
	if (strcmp(a, "1") || strcmp(s, "1") || strcmp(o, "0"))
		diag("cpusets a=%s a/sub=%s o=%s, want 1 1 0", a, s, o);
	return !strcmp(a, "1") && !strcmp(s, "1") && !strcmp(o, "0") && all_threads(k1, "1", &n) &&
	       all_threads(k2, "1", &n) && all_threads(k3, "0", &n) && all_threads(k4, "1", &n);
}

/* The thread of pid that is not its main thread (the first one). */
static pid_t other_thread(pid_t pid)
{
	char path[64];
	struct dirent *de;
	pid_t tid = 0;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	while (d && (de = readdir(d)) && !tid)
		if (de->d_name[0] != '.' && atoi(de->d_name) != pid)
			tid = atoi(de->d_name);
	if (d)
		closedir(d);
	return tid;
}

static int find_line(const char *needle)
{
	int i;

	for (i = 0; i < nlines; i++)
		if (strstr(lines[i], needle))
			return i;
	return -1;
}

static int wait_threads(pid_t pid, int want)
{
	int i, n = 0;

	for (i = 0; i < 200; i++) { /* 2 s */
		all_threads(pid, "", &n);
		if (n >= want)
			return 1;
		usleep(10000);
	}
	return 0;
}

int main(void)
{
	struct isolate_undo undo = {0};
	struct isolate_target others[2];
	struct isolate_plan pl;
	char why[1024], buf[128], sub_needle[700], a_needle[700];
	pid_t k1, k2, k3, k4, k4_pinned, mine;
	int moved, rc, i, n;
	hwloc_bitmap_t online = hwloc_bitmap_alloc();

	if (geteuid() != 0) {
		skip_all("needs root (cgroup cpuset and other processes' affinity)");
		return 0;
	}
	isolate_probe(&sys);
	if (sys.kind != ISOLATE_CGROUP1) {
		skip_all("needs a cgroup v1 cpuset hierarchy (this test builds a v1 tree)");
		return 0;
	}
	get(sys.mount, "cpuset.effective_cpus", buf, sizeof(buf));
	if (cpulist_parse(buf, online) < 0 || !hwloc_bitmap_isset(online, 0) ||
	    !hwloc_bitmap_isset(online, 1)) {
		skip_all("needs CPUs 0 and 1 in the root cpuset");
		return 0;
	}
	snprintf(tree, sizeof(tree), "%s/krextest-%d", sys.mount, (int)getpid());
	snprintf(dir_a, sizeof(dir_a), "%s/a", tree);
	snprintf(dir_sub, sizeof(dir_sub), "%s/a/sub", tree);
	snprintf(dir_o, sizeof(dir_o), "%s/o", tree);
	atexit(cleanup);
	plan(26);
	if (!ok(cg_make(tree, "0-1") == 0 && cg_make(dir_a, "0-1") == 0 &&
	                cg_make(dir_sub, "0-1") == 0 && cg_make(dir_o, "0-1") == 0,
	        "made the cpuset tree %s", tree))
		return tap_done();
	k1 = spawn_spinner();
	k2 = spawn_spinner();
	k3 = spawn_spinner();
	k4 = spawn_spinner();
	ok(k4 > 0 && cg_add(dir_a, k1) == 0 && cg_add(dir_sub, k2) == 0 && cg_add(dir_o, k3) == 0 &&
	           wait_threads(k4, 2) && wait_threads(k3, 2),
	   "four CPU-bound processes, three in the tree, one plain");
	k4_pinned = other_thread(k4);
	k3_pinned = other_thread(k3);
	ok(set_mask(k4_pinned, "0") == 0 && set_mask(k3_pinned, "1") == 0,
	   "a thread of the plain process pinned to CPU 0, one of the owner's to CPU 1");

	/* 1. participants: owner cgroup o; a (with a/sub) and the plain pid moved. */
	memset(&pl, 0, sizeof(pl));
	others[0] = (struct isolate_target){dir_a, 0};
	others[1] = (struct isolate_target){NULL, k4};
	pl = (struct isolate_plan){.sys = &sys,
	                           .owner = {dir_o, 0},
	                           .others = others,
	                           .nothers = 2,
	                           .owner_cpus = "0",
	                           .rest_cpus = "1",
	                           .rec = rec_line};
	rc = isolate_apply(&pl, &undo, &moved, why, sizeof(why));
	ok(rc == 0 && moved == 3, "apply: rc %d, moved %d (want 3) %s", rc, moved, why);
	ok(split_in_place(k1, k2, k3, k4), "owner on CPU 0, the others (nested one too) on CPU 1");
	snprintf(sub_needle, sizeof(sub_needle), "cpuset v1 %s 0-1", dir_sub);
	snprintf(a_needle, sizeof(a_needle), "cpuset v1 %s 0-1", dir_a);
	ok(find_line(sub_needle) >= 0 && find_line(sub_needle) < find_line(a_needle),
	   "undo lines recorded, the v1 child before its parent (%d lines)", nlines);
	kill(k4, SIGUSR1);
	ok(wait_threads(k4, 3), "the plain process made a thread during the isolation");
	ok(all_threads(k4, "1", &n), "the new thread inherited CPU 1");
	ok(isolate_restore(&undo) == 0, "restore");
	ok(all_back(k1, k2, k3, k4, k4_pinned),
	   "every cpuset and mask exactly back, the new thread on the main thread's mask");

	/* 2. crash: apply, forget, undo from the recorded lines alone. */
	nlines = 0;
	rc = isolate_apply(&pl, &undo, &moved, why, sizeof(why));
	isolate_undo_free(&undo);
	ok(rc == 0 && split_in_place(k1, k2, k3, k4), "crash: applied, in-memory undo forgotten");
	for (rc = 0, i = nlines - 1; i >= 0; i--)
		rc |= isolate_undo_line(lines[i]);
	ok(rc == 0 && all_back(k1, k2, k3, k4, k4_pinned),
	   "crash: the %d recorded lines, newest first, restore everything", nlines);

	/* 2b. the same, lines undone oldest first (a krexd that reads its file in order). */
	nlines = 0;
	rc = isolate_apply(&pl, &undo, &moved, why, sizeof(why));
	isolate_undo_free(&undo);
	for (i = 0; rc == 0 && i < nlines; i++)
		rc |= isolate_undo_line(lines[i]);
	ok(rc == 0 && all_back(k1, k2, k3, k4, k4_pinned),
	   "crash: oldest first works too (v1 parents widened for their children)");

	/* 3. node mode over the test tree; only our plain child may be moved. */
	nlines = 0;
	pl.others = NULL;
	pl.nothers = 0;
	pl.node = 1;
	pl.node_root = tree;
	mine = k4;
	pl.may_move = only_mine;
	pl.may_move_ctx = &mine;
	rc = isolate_apply(&pl, &undo, &moved, why, sizeof(why));
	ok(rc == 0 && moved == 3 && split_in_place(k1, k2, k3, k4),
	   "node mode: every cgroup of the tree and the plain process moved (moved %d) %s", moved,
	   why);
	ok(isolate_restore(&undo) == 0 && all_back(k1, k2, k3, k4, k4_pinned),
	   "node mode: restored");

	/* 4. a refused undo line changes nothing. */
	pl.node = 0;
	pl.others = others;
	pl.nothers = 2;
	refuse = 1;
	rc = isolate_apply(&pl, &undo, &moved, why, sizeof(why));
	refuse = 0;
	ok(rc == -1 && errno == ECANCELED && all_back(k1, k2, k3, k4, k4_pinned),
	   "a state file that cannot record: nothing changed (%s)", why);

	/* 5. undo lines that must do nothing, or fail. */
	ok(isolate_undo_line("bogus 1 2") == -1 && errno == EINVAL, "unknown undo line refused");
	snprintf(buf, sizeof(buf), "affinity %d 1 1", (int)k4);
	rc = isolate_undo_line(buf);
	mask_of(k4, buf, sizeof(buf));
	ok(rc == 0 && strcmp(buf, "0-1") == 0,
	   "an affinity line for a reused pid (other start time) is ignored (mask %s)", buf);
	ok(isolate_undo_line("affinity x") == -1 && errno == EINVAL, "a bad affinity line refused");
	ok(isolate_undo_line("cpuset v1 /sys/fs/cgroup/cpuset/krex-no-such 0-1") == 0,
	   "a cpuset line for a cgroup that is gone is done");

	/* 6. an owner without a cgroup: pinned by affinity, every thread. */
	pl = (struct isolate_plan){.sys = &sys,
	                           .owner = {NULL, k4},
	                           .owner_cpus = "0",
	                           .rest_cpus = "1",
	                           .rec = rec_line};
	rc = isolate_apply(&pl, &undo, &moved, why, sizeof(why));
	ok(rc == 0 && moved == 0 && all_threads(k4, "0", &n),
	   "owner pid pinned to CPU 0 (%d threads)", n);
	ok(isolate_restore(&undo) == 0 && all_back(k1, k2, k3, k4, k4_pinned),
	   "owner pid restored");

	/* 7. the one call krexd makes: choice on this node, targets from pids. */
	{
		struct krex_topo *topo = topo_load(NULL, NULL, why, sizeof(why));
		struct isolate_region_out out;
		pid_t opids[] = {k1, k2, k4};
		struct isolate_region_req req = {.owner_pid = k3, .others = opids, .nothers = 3};

		nlines = 0;
		rc = topo ? isolate_region_enter(topo, &sys, &req, rec_line, NULL, &out) : -1;
		ok(rc == 0 && !strcmp(out.owner_cpus, "0") && out.moved == 3 &&
		           split_in_place(k1, k2, k3, k4),
		   "isolate_region_enter: owner %s, moved %d (%s)", rc == 0 ? out.owner_cpus : "-",
		   rc == 0 ? out.moved : -1, rc == 0 ? out.why : why);
		for (rc = 0, i = nlines - 1; i >= 0; i--)
			rc |= isolate_undo_line(lines[i]);
		ok(rc == 0 && all_back(k1, k2, k3, k4, k4_pinned),
		   "isolate_region_enter: its %d lines undo it", nlines);
		topo_free(topo);
	}

	/* 8. a cgroup without a cpuset controller (the v2 hierarchy here): by affinity. */
	snprintf(v2dir, sizeof(v2dir), "/sys/fs/cgroup/unified/krextest-%d", (int)getpid());
	if (mkdir(v2dir, 0755) < 0 || cg_add(v2dir, k4) < 0) {
		skip("no cpuset in a v2 cgroup: moved by affinity", "no writable cgroup v2 here");
		skip("restored", "no writable cgroup v2 here");
	} else {
		others[0] = (struct isolate_target){v2dir, 0};
		pl = (struct isolate_plan){.sys = &sys,
		                           .owner = {dir_o, 0},
		                           .others = others,
		                           .nothers = 1,
		                           .owner_cpus = "0",
		                           .rest_cpus = "1"};
		rc = isolate_apply(&pl, &undo, &moved, why, sizeof(why));
		ok(rc == 0 && moved == 1 && all_threads(k4, "1", &n),
		   "no cpuset in a v2 cgroup: its process moved by affinity (moved %d) %s", moved,
		   why);
		ok(isolate_restore(&undo) == 0 && all_back(k1, k2, k3, k4, k4_pinned), "restored");
		cg_add("/sys/fs/cgroup/unified", k4);
	}
	rmdir(v2dir);
	hwloc_bitmap_free(online);
	isolate_undo_free(&undo);
	return tap_done();
}
