/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * isolate_bench.c - what isolation buys a CPU-timed loop on this node.
 *
 * A fixed CPU work loop (calibrated to about 1 ms alone) is timed, sample
 * by sample, (a) alone, (b) with a busy loop on every core, and (c) with
 * the same busy loops after topo_choose() + isolate_apply() pinned the
 * loop (the owner) and moved the busy loops (a cpuset cgroup, like a
 * participant's) to the other cores.  Prints p50/p95/p99 as TAP comments;
 * never fails on a timing (STYLE: benchmarks print figures).
 *
 *	make -C test/topology check TESTS=isolate_bench   (root)
 *	KREX_BENCH_SAMPLES=3000 test/topology/isolate_bench
 *	KREX_BENCH_NODE=1 ...: isolate = node, every other process of the node
 *	                       moved too (briefly; restored at the end)
 */
#include "config.h"

#include <errno.h>
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
#include "isolate_plan.h"
#include "tap.h"
#include "topo.h"

#define MAX_SPIN 256

static pid_t spinners[MAX_SPIN];
static int nspin;
static char cg[512];

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void work(unsigned long n)
{
	volatile unsigned long x = 0;
	unsigned long i;

	for (i = 0; i < n; i++)
		x += i * 2654435761u;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Time n samples of work(iters); print p50/p95/p99 under label. */
static void measure(const char *label, unsigned long iters, int n, double *p95)
{
	double *s = calloc((size_t)n, sizeof(*s)), t;
	int i;

	if (!s)
		return;
	for (i = 0; i < n; i++) {
		t = now_ms();
		work(iters);
		s[i] = now_ms() - t;
	}
	qsort(s, (size_t)n, sizeof(*s), cmp_double);
	*p95 = s[n * 95 / 100];
	diag("%-34s p50 %7.3f  p95 %7.3f  p99 %7.3f ms  (%d samples)", label, s[n / 2], *p95,
	     s[n * 99 / 100], n);
	free(s);
}

static void stop_spinners(void)
{
	int i;

	for (i = 0; i < nspin; i++) {
		kill(spinners[i], SIGKILL);
		waitpid(spinners[i], NULL, 0);
	}
	nspin = 0;
	if (cg[0])
		rmdir(cg);
}

/* One busy loop per CPU, all in the cgroup cg (when there is one). */
static int start_spinners(int n)
{
	char pid[32];
	int i;

	for (i = 0; i < n && i < MAX_SPIN; i++) {
		pid_t p = fork();

		if (p == 0) {
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			for (;;)
				work(1000000);
		}
		if (p < 0)
			return -1;
		spinners[nspin++] = p;
		snprintf(pid, sizeof(pid), "%d", (int)p);
		if (cg[0] && put(cg, "cgroup.procs", pid) < 0)
			return -1;
	}
	return 0;
}

/* Iterations of work() that take about 1 ms here, alone. */
static unsigned long calibrate(void)
{
	unsigned long iters = 100000;
	double t;

	for (;;) {
		t = now_ms();
		work(iters);
		t = now_ms() - t;
		if (t > 20)
			return (unsigned long)((double)iters / t);
		iters *= 2;
	}
}

int main(void)
{
	struct isolate_undo undo = {0};
	struct isolate_target noise[MAX_SPIN];
	struct isolate_plan pl;
	struct isolate_sys sys;
	struct krex_topo *topo;
	char err[600], owner[256], rest[256], why[512];
	const char *env = getenv("KREX_BENCH_SAMPLES"), *node = getenv("KREX_BENCH_NODE");
	int n = env ? atoi(env) : 1500, ncpu = (int)sysconf(_SC_NPROCESSORS_ONLN), moved, rc, i;
	unsigned long iters;
	double alone, noisy, isolated;
	double t0;

	if (geteuid() != 0) {
		skip_all("needs root (moving other processes)");
		return 0;
	}
	isolate_probe(&sys);
	topo = topo_load(NULL, NULL, err, sizeof(err));
	if (n < 100)
		n = 100;
	if (!topo) {
		skip_all(err);
		return 0;
	}
	rc = topo_choose(topo, NULL, NULL, 0, 0, owner, sizeof(owner), rest, sizeof(rest), why,
	                 sizeof(why));
	topo_free(topo);
	if (rc != TOPO_CHOSEN) {
		skip_all("this node is too small to split");
		return 0;
	}
	if (sys.kind == ISOLATE_CGROUP1) {
		/* The busy loops' own cgroup, on every CPU, like a participant's. */
		snprintf(cg, sizeof(cg), "%s/krexbench-%d", sys.mount, (int)getpid());
		snprintf(err, sizeof(err), "%s,%s", owner, rest);
		if (mkdir(cg, 0755) < 0 || put(cg, "cpuset.mems", "0") < 0 ||
		    put(cg, "cpuset.cpus", err) < 0) {
			rmdir(cg);
			cg[0] = '\0';
		}
	}
	atexit(stop_spinners);
	plan(1);
	iters = calibrate();
	diag("this node: %d CPUs, backend %s, owner %s, rest %s (%s)", ncpu,
	     isolate_kind_name(sys.kind), owner, rest, why);
	measure("alone", iters, n, &alone);
	if (start_spinners(ncpu) < 0) {
		ok(0, "could not start %d busy loops", ncpu);
		return tap_done();
	}
	measure("busy loop on every CPU", iters, n, &noisy);
	for (i = 0; i < nspin; i++) /* one cgroup target, or each busy loop's pid */
		noise[i] = (struct isolate_target){cg[0] ? cg : NULL, spinners[i]};
	pl = (struct isolate_plan){.sys = &sys,
	                           .owner = {NULL, getpid()},
	                           .others = noise,
	                           .nothers = cg[0] ? 1 : (unsigned)nspin,
	                           .owner_cpus = owner,
	                           .rest_cpus = rest,
	                           .node = node && *node == '1'};
	t0 = now_ms();
	rc = isolate_apply(&pl, &undo, &moved, why, sizeof(why));
	diag("isolate_apply: rc %d, moved %d, %.3f ms %s", rc, moved, now_ms() - t0, why);
	measure(pl.node ? "same, owner isolated (node)" : "same, owner isolated", iters, n,
	        &isolated);
	t0 = now_ms();
	isolate_restore(&undo);
	diag("isolate_restore: %.3f ms", now_ms() - t0);
	isolate_undo_free(&undo);
	ok(1, "figures printed (p95 alone %.3f, busy %.3f, isolated %.3f ms)", alone, noisy,
	   isolated);
	return tap_done();
}
