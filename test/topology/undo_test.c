/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * undo_test.c - isolation that can be undone, and is checked when it is:
 *
 *   1. a cgroup v2 cpuset whose cpuset.cpus is empty ("inherit") is never
 *      written (the kernel refuses to make a populated cpuset empty again,
 *      ENOSPC, seen on the H200): its processes move by affinity instead;
 *   2. an owner whose cgroup also holds other participants is moved by its
 *      threads' affinity, never by narrowing that shared cgroup (which put
 *      the siblings on the owner's cores on a 32-core v2 node);
 *   3. an undo is verified: a write that did not take is reported, and the
 *      retry restores it;
 *   4. an affinity undo whose old mask its cpuset no longer allows fails
 *      (retried later) but leaves the threads on every CPU their cpuset
 *      allows, never on the isolation's set;
 *   5. an undo done with the fd opened at the move works when krexd is out
 *      of fds;
 *   6. without a Slurm allocation the owner takes at most its GPU's fair
 *      share of the node's cores (synthetic 32 cores, 2 GPUs).
 *
 * The v2 cases run against a fake v2 tree in a temp dir (this VM's v2 has
 * no cpuset controller) whose directory names match real v1 cpuset cgroups
 * the test processes sit in, so that /proc/PID/cpuset leads into it.
 * Root and a cgroup v1 cpuset; the test processes sleep (no CPU burnt) and
 * are killed by pid at exit, the cgroups and the temp tree removed.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
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
static char v1[512], fake[256];
static struct isolate_sys v1sys, v2sys;
static char lines[MAX_LINES][4096];
static int nlines;

static void *nap(void *arg)
{
	for (;;)
		pause();
	return arg;
}

/* A sleeping child with two threads. */
static pid_t spawn_sleeper(void)
{
	pthread_t t;
	pid_t pid = fork();

	if (pid != 0) {
		if (pid > 0 && nkids < MAX_KIDS)
			kids[nkids++] = pid;
		return pid;
	}
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	pthread_create(&t, NULL, nap, NULL);
	for (;;)
		pause();
}

static const char *const subs[] = {"inh", "shared", "nar", "nest", NULL};

static void cleanup(void)
{
	char path[700];
	int i;

	for (i = 0; i < nkids; i++) {
		kill(kids[i], SIGKILL);
		waitpid(kids[i], NULL, 0);
	}
	nkids = 0;
	for (i = 0; subs[i]; i++) {
		snprintf(path, sizeof(path), "%s/%s", v1, subs[i]);
		rmdir(path);
	}
	if (v1[0])
		rmdir(v1);
	if (fake[0]) {
		char cmd[400];
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", fake);
		(void)!system(cmd);
	}
}

/* A real v1 cpuset cgroup under v1 (cpus 0-1), and its fake v2 twin. */
static int make_pair(const char *sub, const char *fake_cpus, const char *procs, char *fdir,
                     size_t flen)
{
	char dir[700];

	snprintf(dir, sizeof(dir), "%s/%s", v1, sub);
	if ((mkdir(dir, 0755) < 0 && errno != EEXIST) || put(dir, "cpuset.mems", "0") < 0 ||
	    put(dir, "cpuset.cpus", "0-1") < 0)
		return -1;
	snprintf(fdir, flen, "%s%s/%s", fake, strrchr(v1, '/'), sub);
	if (mkdir(fdir, 0755) < 0 && errno != EEXIST)
		return -1;
	return put(fdir, "cpuset.cpus", fake_cpus) < 0 ||
	                       put(fdir, "cpuset.cpus.effective", "0-1") < 0 ||
	                       put(fdir, "cgroup.procs", procs) < 0
	               ? -1
	               : 0;
}

static int join(const char *sub, pid_t pid)
{
	char dir[700], val[32];

	snprintf(dir, sizeof(dir), "%s/%s", v1, sub);
	snprintf(val, sizeof(val), "%d", (int)pid);
	return put(dir, "cgroup.procs", val);
}

/* Every thread of pid on list? */
static int threads_on(pid_t pid, const char *list)
{
	char path[64], m[256];
	struct dirent *de;
	DIR *d;
	int n = 0, same = 1;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	while (d && (de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		n++;
		mask_of(atoi(de->d_name), m, sizeof(m));
		if (strcmp(m, list)) {
			diag("thread %s of %d on %s, want %s", de->d_name, (int)pid, m, list);
			same = 0;
		}
	}
	if (d)
		closedir(d);
	return same && n > 0;
}

static int set_all(pid_t pid, const char *list)
{
	char path[64];
	struct dirent *de;
	DIR *d;
	int rc = 0;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	while (d && (de = readdir(d)))
		if (de->d_name[0] != '.')
			rc |= set_mask(atoi(de->d_name), list);
	if (d)
		closedir(d);
	return rc;
}

static int rec_line(void *ctx, const char *line)
{
	(void)ctx;
	if (nlines == MAX_LINES)
		return -1;
	snprintf(lines[nlines++], sizeof(lines[0]), "%s", line);
	return 0;
}

static int have_line(const char *prefix)
{
	int i;

	for (i = 0; i < nlines; i++)
		if (!strncmp(lines[i], prefix, strlen(prefix)))
			return 1;
	return 0;
}

static int undo_lines(void)
{
	int rc = 0;

	while (nlines > 0)
		if (isolate_undo_line(lines[--nlines]) < 0) {
			diag("undo '%s': %s", lines[nlines], strerror(errno));
			rc = -1;
		}
	return rc;
}

static int wait_threads(pid_t pid, int want)
{
	char path[64];
	struct dirent *de;
	int i, n;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	for (i = 0; i < 200; i++, usleep(10000)) {
		d = opendir(path);
		for (n = 0; d && (de = readdir(d));)
			n += de->d_name[0] != '.';
		if (d)
			closedir(d);
		if (n >= want)
			return 1;
	}
	return 0;
}

/* 1: v2, cpuset.cpus empty: never written, its processes by affinity. */
static void t_inherit(void)
{
	struct isolate_target other;
	struct isolate_undo undo = {0};
	struct isolate_plan pl;
	char fdir[800], procs[32], why[512], buf[64];
	pid_t s = spawn_sleeper();
	int moved, rc;

	snprintf(procs, sizeof(procs), "%d\n", (int)s);
	if (!ok(s > 0 && make_pair("inh", "", procs, fdir, sizeof(fdir)) == 0 &&
	                join("inh", s) == 0 && wait_threads(s, 2),
	        "v2 inherit: a process in a fake v2 cgroup whose cpuset.cpus is empty"))
		return;
	other = (struct isolate_target){fdir, 0};
	pl = (struct isolate_plan){.sys = &v2sys,
	                           .owner = {NULL, getpid()},
	                           .others = &other,
	                           .nothers = 1,
	                           .owner_cpus = "0",
	                           .rest_cpus = "1",
	                           .rec = rec_line};
	nlines = 0;
	/* The owner (this test) is moved by affinity too: keep our own mask. */
	pl.owner.pid = spawn_sleeper();
	rc = isolate_apply(&pl, &undo, &moved, why, sizeof(why));
	get(fdir, "cpuset.cpus", buf, sizeof(buf));
	ok(rc == 0 && buf[0] == '\0' && !have_line("cpuset v2"),
	   "v2 inherit: its empty cpuset.cpus is not written (got '%s', rc %d) %s", buf, rc, why);
	ok(threads_on(s, "1") && have_line("affinity"),
	   "v2 inherit: its process moved by affinity instead");
	isolate_undo_free(&undo);
	ok(undo_lines() == 0 && threads_on(s, "0-1"), "v2 inherit: undone");
}

/* 2: the owner shares its cgroup with a sibling: by affinity, cgroup untouched. */
static void t_shared(struct krex_topo *topo)
{
	struct isolate_region_req req;
	struct isolate_region_out out;
	char fdir[800], procs[64], buf[64], om[64], sm[64];
	pid_t o = spawn_sleeper(), s = spawn_sleeper();
	const char *gpus[] = {"0"};
	int rc;

	snprintf(procs, sizeof(procs), "%d\n%d\n", (int)o, (int)s);
	if (!ok(o > 0 && s > 0 && make_pair("shared", "0-1", procs, fdir, sizeof(fdir)) == 0 &&
	                join("shared", o) == 0 && join("shared", s) == 0 && wait_threads(o, 2) &&
	                wait_threads(s, 2),
	        "shared: owner and sibling in one (fake v2) cgroup"))
		return;
	memset(&req, 0, sizeof(req));
	req.owner_pid = o;
	req.owner_allowed = "0-1";
	req.gpus = gpus;
	req.ngpus = 1;
	req.others = &s;
	req.nothers = 1;
	nlines = 0;
	rc = isolate_region_enter(topo, &v2sys, &req, rec_line, NULL, &out);
	get(fdir, "cpuset.cpus", buf, sizeof(buf));
	mask_of(o, om, sizeof(om));
	mask_of(s, sm, sizeof(sm));
	ok(rc == 0 && !have_line("cpuset v2"),
	   "shared: the shared cgroup is not narrowed to the owner's cores (rc %d, %s)", rc,
	   out.why);
	ok(threads_on(o, out.owner_cpus) && threads_on(s, out.rest_cpus) && strcmp(om, sm),
	   "shared: owner on %s, sibling on %s (owner %s, rest %s)", om, sm, out.owner_cpus,
	   out.rest_cpus);
	ok(undo_lines() == 0 && threads_on(o, "0-1") && threads_on(s, "0-1"),
	   "shared: both back on 0-1");
}

/*
 * 2b: the H200's layout: krexd's v2 subtree (cpuset.cpus empty, no process
 * of its own) with a p<ID> child per participant that has no cpuset files;
 * /proc/PID/cpuset of every participant names the subtree.  Nothing may be
 * written, and nobody may land on the owner's cores but the owner.
 */
static void t_subtree(struct krex_topo *topo)
{
	struct isolate_region_req req;
	struct isolate_region_out out;
	char fdir[800], kid[900], val[32], buf[64];
	pid_t o = spawn_sleeper(), s = spawn_sleeper();
	const char *gpus[] = {"0"};
	int rc;

	if (!ok(o > 0 && s > 0 && make_pair("nest", "", "", fdir, sizeof(fdir)) == 0 &&
	                join("nest", o) == 0 && join("nest", s) == 0 && wait_threads(o, 2) &&
	                wait_threads(s, 2),
	        "subtree: owner and sibling in p<ID> children of a v2 subtree"))
		return;
	snprintf(kid, sizeof(kid), "%s/p1", fdir);
	snprintf(val, sizeof(val), "%d\n", (int)o);
	mkdir(kid, 0755);
	put(kid, "cgroup.procs", val);
	snprintf(kid, sizeof(kid), "%s/p2", fdir);
	snprintf(val, sizeof(val), "%d\n", (int)s);
	mkdir(kid, 0755);
	put(kid, "cgroup.procs", val);
	memset(&req, 0, sizeof(req));
	req.owner_pid = o;
	req.owner_allowed = "0-1";
	req.gpus = gpus;
	req.ngpus = 1;
	req.others = &s;
	req.nothers = 1;
	nlines = 0;
	rc = isolate_region_enter(topo, &v2sys, &req, rec_line, NULL, &out);
	get(fdir, "cpuset.cpus", buf, sizeof(buf));
	ok(rc == 0 && !have_line("cpuset v2") && !buf[0],
	   "subtree: the subtree's cpuset is not written (rc %d, '%s')", rc, buf);
	ok(threads_on(o, out.owner_cpus) && threads_on(s, out.rest_cpus),
	   "subtree: owner on %s, sibling on %s", out.owner_cpus, out.rest_cpus);
	ok(undo_lines() == 0 && threads_on(o, "0-1") && threads_on(s, "0-1"),
	   "subtree: both back on 0-1");
}

/* 3 and 5: a cpuset undo is verified; with the fd opened at the move, no fd needed. */
static void t_verify(void)
{
	char dir[700], line[800], buf[64];
	struct rlimit old, low;
	int fd, fill[64], nfill = 0, rc, i;

	snprintf(dir, sizeof(dir), "%s/nar", v1);
	if (!ok(mkdir(dir, 0755) == 0 || errno == EEXIST, "verify: cgroup %s", dir))
		return;
	put(dir, "cpuset.mems", "0");
	put(dir, "cpuset.cpus", "1");
	snprintf(line, sizeof(line), "cpuset v1 %s 0-1", dir);
	isolate_undo_fault(
	        1); /* the next undo write is dropped, as if it never reached the kernel */
	rc = isolate_undo_line(line);
	get(dir, "cpuset.cpus", buf, sizeof(buf));
	ok(rc < 0 && strcmp(buf, "1") == 0,
	   "verify: an undo whose write did not take is reported (rc %d: %s; cpus %s)", rc,
	   strerror(errno), buf);
	rc = isolate_undo_line(line);
	get(dir, "cpuset.cpus", buf, sizeof(buf));
	ok(rc == 0 && strcmp(buf, "0-1") == 0, "verify: the retry restores it (cpus %s)", buf);

	put(dir, "cpuset.cpus", "1");
	if (isolate_undo_open(line, &fd) < 0)
		fd = -1;
	getrlimit(RLIMIT_NOFILE, &old);
	low = old;
	low.rlim_cur = (rlim_t)fd + 8;
	setrlimit(RLIMIT_NOFILE, &low);
	while (nfill < 64 && (fill[nfill] = open("/dev/null", O_RDONLY)) >= 0)
		nfill++;
	rc = isolate_undo_line_fd(line, fd);
	for (i = 0; i < nfill; i++)
		close(fill[i]);
	setrlimit(RLIMIT_NOFILE, &old);
	if (fd >= 0)
		close(fd);
	get(dir, "cpuset.cpus", buf, sizeof(buf));
	ok(fd >= 0 && rc == 0 && strcmp(buf, "0-1") == 0,
	   "fds: an undo with the fd opened at the move works with no fd left (rc %d, cpus %s)", rc,
	   buf);
}

/* 4: the old mask is outside the thread's cpuset now: fails, but not left pinned. */
static void t_einval(void)
{
	struct isolate_undo undo = {0};
	hwloc_bitmap_t want = hwloc_bitmap_alloc();
	char dir[700];
	pid_t s = spawn_sleeper();
	int rc;

	snprintf(dir, sizeof(dir), "%s/nar", v1);
	put(dir, "cpuset.cpus", "0-1");
	if (!ok(s > 0 && join("nar", s) == 0 && wait_threads(s, 2) && set_all(s, "0") == 0,
	        "einval: a process on CPU 0 in cpuset 0-1"))
		return;
	cpulist_parse("1", want);
	nlines = 0;
	rc = isolate_affinity_set(s, want, rec_line, NULL, &undo);
	isolate_undo_free(&undo);
	/* Its cpuset shrinks to CPU 1 meanwhile (say Slurm, or an undo still due). */
	put(dir, "cpuset.cpus", "1");
	ok(rc == 1 && nlines == 1 && isolate_undo_line(lines[0]) < 0,
	   "einval: restoring CPU 0 in a cpuset of CPU 1 is reported");
	ok(threads_on(s, "1"), "einval: left on what its cpuset allows");
	put(dir, "cpuset.cpus", "0-1");
	set_all(s, "1");
	ok(isolate_undo_line(lines[0]) == 0 && threads_on(s, "0"),
	   "einval: the retry, once the cpuset allows it, restores CPU 0");
	nlines = 0;
	hwloc_bitmap_free(want);
}

/* 6: fair share on a node of 32 cores and 2 GPUs. */
static void t_fair(void)
{
	char err[256];
	struct krex_topo *t = topo_load("synthetic:pack:1 core:32 pu:1", NULL, err, sizeof(err));
	struct isolate_region_req req;
	struct isolate_region_out out;
	const char *gpus[] = {"0"};
	hwloc_bitmap_t set = hwloc_bitmap_alloc();
	int rc;

	if (!ok(t != NULL, "fair: synthetic topology of 32 cores (%s)", t ? "" : err))
		return;
	memset(&req, 0, sizeof(req));
	req.owner_pid = getpid();
	req.owner_allowed = "0-31";
	req.gpus = gpus;
	req.ngpus = 1;
	req.node_gpus = 2;
	rc = isolate_region_choose(t, &req, &out);
	cpulist_parse(out.owner_cpus, set);
	ok(rc == 0 && hwloc_bitmap_weight(set) == 16,
	   "fair: no allocation, 2 GPUs: owner gets 16 of 32 cores (%s; %s)", out.owner_cpus,
	   out.why);
	req.owner_allowed = "0-7";
	rc = isolate_region_choose(t, &req, &out);
	cpulist_parse(out.owner_cpus, set);
	ok(rc == 0 && hwloc_bitmap_weight(set) == 8,
	   "fair: a Slurm allocation of 8 cores is the owner's (%s)", out.owner_cpus);
	req.owner_allowed = "0-31";
	req.node_gpus = 1;
	rc = isolate_region_choose(t, &req, &out);
	cpulist_parse(out.owner_cpus, set);
	ok(rc == 0 && hwloc_bitmap_weight(set) == 31,
	   "fair: one GPU: the owner's is every core but the rest's one (%s)", out.owner_cpus);
	hwloc_bitmap_free(set);
	topo_free(t);
}

int main(void)
{
	char err[256], tmpl[] = "/tmp/krexundo-XXXXXX", buf[600];
	struct krex_topo *topo;

	if (geteuid() != 0) {
		skip_all("needs root (cgroup cpuset and other processes' affinity)");
		return 0;
	}
	isolate_probe(&v1sys);
	if (v1sys.kind != ISOLATE_CGROUP1) {
		skip_all("needs a cgroup v1 cpuset hierarchy");
		return 0;
	}
	get(v1sys.mount, "cpuset.effective_cpus", buf, sizeof(buf));
	if (strncmp(buf, "0-", 2)) {
		skip_all("needs CPUs 0 and 1 in the root cpuset");
		return 0;
	}
	snprintf(v1, sizeof(v1), "%s/krexundo-%d", v1sys.mount, (int)getpid());
	if (!mkdtemp(tmpl)) {
		skip_all("no temp dir");
		return 0;
	}
	snprintf(fake, sizeof(fake), "%s", tmpl);
	atexit(cleanup);
	v2sys.kind = ISOLATE_CGROUP2;
	snprintf(v2sys.mount, sizeof(v2sys.mount), "%s", fake);
	snprintf(buf, sizeof(buf), "%s%s", fake, strrchr(v1, '/'));
	plan(25);
	if (!ok(mkdir(v1, 0755) == 0 && put(v1, "cpuset.mems", "0") == 0 &&
	                put(v1, "cpuset.cpus", "0-1") == 0 && mkdir(buf, 0755) == 0 &&
	                put(buf, "cpuset.cpus", "0-1") == 0 &&
	                put(buf, "cpuset.cpus.effective", "0-1") == 0,
	        "made %s and its fake v2 twin under %s", v1, fake))
		return tap_done();
	topo = topo_load("synthetic:pack:1 core:2 pu:1", NULL, err, sizeof(err));
	t_inherit();
	if (topo) {
		t_shared(topo);
		t_subtree(topo);
	}
	topo_free(topo);
	t_verify();
	t_einval();
	t_fair();
	return tap_done();
}
