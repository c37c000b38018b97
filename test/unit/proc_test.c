/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * proc_test.c - common/proc.c: /proc/PID/stat (hostile comm fields, cut
 * lines), the start time, the owner, the parent walk, /proc/PID/cgroup,
 * pending signals and the fault hook.  The stat and cgroup cases are those
 * the parsers of krexd (freezer.c, conn.c), topology and the plugin held.
 */
#include "config.h"

#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fdio.h"
#include "proc.h"
#include "tap.h"

static const char full[] = "1 (a b) c) S 0 1 1 0 -1 4194560 1 2 3 4 5 6 7 8 20 0 1 0 4242 9 10";

static void stat_text(void)
{
	struct proc_stat s;

	memset(&s, 0, sizeof(s));
	ok(proc_stat_parse("1234 (sleep) T 77 1234 1 0", &s) >= 4 && s.state == 'T' && s.ppid == 77,
	   "stat: state and parent");
	ok(proc_stat_parse("99 (a) b) c) S 5 99", &s) >= 4 && s.state == 'S' && s.ppid == 5,
	   "stat: comm holding ') '");
	ok(proc_stat_parse("99 (cut", &s) < 0, "stat: truncated in comm, no ')': -1");
	ok(proc_stat_parse("garbage", &s) < 0, "stat: no comm: -1");
	ok(proc_stat_parse(full, &s) == 22 && s.start == 4242 && s.flags == 4194560 &&
	           s.state == 'S' && s.ppid == 0,
	   "stat: start time and flags after a comm with spaces and ')'");
	ok(proc_stat_parse("1 (x) S 0 1", &s) == 4,
	   "stat: cut after the parent: no flags, no start");
	ok(proc_stat_parse("1 (a b) S 0 1 1 0 -1 4194560 1 2", &s) == 9 && s.flags == 4194560,
	   "stat: cut before the start time: flags only");
	ok(proc_stat_parse("1 (x) Z", &s) == 3 && s.state == 'Z',
	   "stat: cut after the state: the state (a zombie)");
	ok(proc_stat_parse("1 (x)", &s) == 2, "stat: cut after comm: nothing");
	ok(proc_stat_parse("1 (x)S 2", &s) == 2, "stat: no space after ')': nothing");
	ok(proc_stat_parse("1 (x) SS 2", &s) == 3, "stat: a state of two letters: no parent");
	ok(proc_stat_parse("7 (1 2 3) 4) R 9 1 1 0 -1 64 1 2 3 4 5 6 7 8 20 0 1 0 77 9", &s) ==
	                   22 &&
	           s.state == 'R' && s.ppid == 9 && s.flags == 64 && s.start == 77,
	   "stat: a comm of numbers and ')' does not shift the fields");
}

static void stat_live(void)
{
	struct proc_stat s;
	unsigned long long st1 = 0, st2 = 1;
	char state = 0;
	pid_t pp = 0;
	uid_t u = 12345;

	ok(proc_stat_read(getpid(), &s) == 22 && s.state == 'R' && s.ppid == getppid() &&
	           s.start > 0,
	   "own stat: running, parent, start time");
	ok(proc_state(getpid(), &state, &pp) == 0 && state == 'R' && pp == getppid(),
	   "proc_state: own state and parent");
	ok(proc_start(getpid(), &st1) == 0 && st1 == s.start && proc_start(getppid(), &st2) == 0 &&
	           st2 <= st1,
	   "start time: own, and the parent's no later");
	ok(proc_start(0x3ffffff0, &st1) < 0 && proc_state(0x3ffffff0, &state, &pp) < 0,
	   "no such pid: -1");
	ok(proc_owner(getpid(), &u) == 0 && u == geteuid(), "owner: own euid");
	ok(proc_descends(getpid(), getppid()) == 1 && proc_descends(getpid(), getpid()) == 1,
	   "descends from its parent and from itself");
	ok(proc_descends(getppid(), getpid()) == 0 && proc_descends(1, getpid()) == 0,
	   "the parent and init do not descend from it");
}

static void cgroup(void)
{
	char out[256], buf[4096];

	ok(proc_cgroup_parse("12:pids:/a\n7:freezer:/krex/p3\n0::/user.slice\n", "freezer", out,
	                     sizeof(out)) == 0 &&
	           !strcmp(out, "/krex/p3"),
	   "cgroup v1 freezer path");
	ok(proc_cgroup_parse("4:cpu,cpuacct:/x\n", "cpu", out, sizeof(out)) == 0 &&
	           !strcmp(out, "/x"),
	   "v1 controller in a comma list");
	ok(proc_cgroup_parse("4:cpuacct:/x\n", "cpu", out, sizeof(out)) < 0,
	   "a controller name's prefix does not match");
	ok(proc_cgroup_parse("12:pids:/a\n0::/krex/p1\n", NULL, out, sizeof(out)) == 0 &&
	           !strcmp(out, "/krex/p1"),
	   "cgroup v2 path");
	ok(proc_cgroup_parse("1:name=systemd:/\n", NULL, out, sizeof(out)) < 0, "no v2 line");
	ok(proc_cgroup_parse("0::/a/long/path\n", NULL, out, 8) < 0, "a path longer than out: -1");
	ok(proc_cgroup_parse("7:freezer\n0:/x\n", "freezer", out, sizeof(out)) < 0,
	   "lines without a second ':' are skipped");
	if (file_read("/proc/self/cgroup", buf, sizeof(buf)) > 0 && strstr(buf, "0::/"))
		ok(proc_cgroup(getpid(), NULL, out, sizeof(out)) == 0 && out[0] == '/',
		   "own v2 cgroup: %s", out);
	else
		ok(proc_cgroup(getpid(), NULL, out, sizeof(out)) < 0, "no v2 line of its own: -1");
}

static void on_usr2(int sig)
{
	(void)sig;
}

static void signals(void)
{
	unsigned long long pend = 0, caught = 0;
	sigset_t set, old;

	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigprocmask(SIG_BLOCK, &set, &old);
	signal(SIGUSR2, on_usr2);
	raise(SIGUSR1);
	ok(proc_sig_pending(getpid(), &pend, &caught) == 0 && (pend >> (SIGUSR1 - 1) & 1) &&
	           (caught >> (SIGUSR2 - 1) & 1) && !(caught >> (SIGUSR1 - 1) & 1),
	   "a blocked SIGUSR1 is pending, SIGUSR2 is caught");
	signal(SIGUSR1, SIG_IGN);
	sigprocmask(SIG_SETMASK, &old, NULL);
	signal(SIGUSR2, SIG_DFL);
	ok(proc_sig_pending(0x3ffffff0, &pend, &caught) < 0 && pend == 0 && caught == 0,
	   "no such pid: -1, nothing pending");
}

static void fault(void)
{
	struct fault_hook h = FAULT_HOOK("KREX_TEST_PROC_FAULTS", "KREX_TEST_PROC_HOLD");
	char hold[] = "/tmp/proc_test.XXXXXX";
	int fd, a, b, c;

	setenv("KREX_TEST_PROC_FAULTS", "2", 1);
	a = fault_take(&h);
	b = fault_take(&h);
	c = fault_take(&h);
	ok(a == 1 && b == 1 && c == 0, "fault hook: the environment's 2 writes dropped, then none");
	fault_set(&h, 1);
	a = fault_take(&h);
	b = fault_take(&h);
	ok(a == 1 && b == 0, "fault hook: fault_set(1) drops one more");
	fd = mkstemp(hold);
	setenv("KREX_TEST_PROC_HOLD", hold, 1);
	a = fault_take(&h);
	b = fault_take(&h);
	unlink(hold);
	c = fault_take(&h);
	ok(fd >= 0 && a == 1 && b == 1 && c == 0, "fault hook: every write dropped while held");
	if (fd >= 0)
		close(fd);
	unsetenv("KREX_TEST_PROC_HOLD");
	unsetenv("KREX_TEST_PROC_FAULTS");
}

/* /proc/TID/schedstat: the text, then two CPU hogs on one CPU (each
 * runnable all along: its CPU time and its wait for the CPU make up the
 * time, and each waits while the other runs; krexd's laggard follow). */
static void schedstat(void)
{
	uint64_t run = 1, wait = 1, r0[2], w0[2], r1[2], w1[2], t0, t1;
	struct timespec ts;
	cpu_set_t set, one;
	pid_t kid[2];
	int cpu, i, ran;

	ok(proc_schedstat_parse("123 456 7\n", &run, &wait) == 0 && run == 123 && wait == 456,
	   "schedstat: CPU time and run delay");
	ok(proc_schedstat_parse("123\n", &run, &wait) < 0, "schedstat: one field: -1");
	ok(proc_schedstat_parse("12x 4 5", &run, &wait) < 0 &&
	           proc_schedstat_parse("", &run, &wait) < 0,
	   "schedstat: not numbers, empty: -1");
	ok(proc_schedstat(0, &run, &wait) == 0, "schedstat: the calling thread's");
	CPU_ZERO(&one);
	if (sched_getaffinity(0, sizeof(set), &set) < 0)
		CPU_ZERO(&set);
	for (cpu = 0; cpu < CPU_SETSIZE && !CPU_ISSET(cpu, &set); cpu++)
		;
	CPU_SET(cpu < CPU_SETSIZE ? cpu : 0, &one);
	for (i = 0; i < 2; i++) {
		kid[i] = fork();
		if (kid[i] == 0) {
			volatile unsigned long spin = 0;
			(void)prctl(PR_SET_PDEATHSIG, SIGKILL); /* never outlives the test */
			(void)sched_setaffinity(0, sizeof(one), &one);
			for (;;)
				spin++;
		}
	}
	/* both pinned and started: each has run once */
	for (i = 0; i < 1000; i++) {
		if (proc_schedstat(kid[0], &r0[0], &w0[0]) == 0 &&
		    proc_schedstat(kid[1], &r0[1], &w0[1]) == 0 && r0[0] && r0[1])
			break;
		usleep(10000);
	}
	clock_gettime(CLOCK_MONOTONIC, &ts);
	t0 = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	/* until each has run 50 ms more (at most 20 s) */
	for (i = 0, ran = 0; i < 2000 && !ran; i++) {
		usleep(10000);
		ran = proc_schedstat(kid[0], &r1[0], &w1[0]) == 0 &&
		      proc_schedstat(kid[1], &r1[1], &w1[1]) == 0 && r1[0] - r0[0] >= 50000000ull &&
		      r1[1] - r0[1] >= 50000000ull;
	}
	clock_gettime(CLOCK_MONOTONIC, &ts);
	t1 = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	ok(ran && w1[0] > w0[0] && w1[1] > w0[1],
	   "schedstat: two hogs on one CPU: each ran, each waited for it");
	ok(ran && (r1[0] - r0[0]) + (w1[0] - w0[0]) >= (t1 - t0) / 2 &&
	           (r1[1] - r0[1]) + (w1[1] - w0[1]) >= (t1 - t0) / 2 &&
	           (r1[0] - r0[0]) + (r1[1] - r0[1]) <= (t1 - t0) + 50000000ull,
	   "schedstat: a hog's CPU time and wait make up the time (one CPU's worth between them)");
	for (i = 0; i < 2; i++) {
		kill(kid[i], SIGKILL);
		waitpid(kid[i], NULL, 0);
	}
	ok(proc_schedstat(kid[0], &run, &wait) < 0, "schedstat: a task gone: -1");
}

int main(void)
{
	plan(12 + 7 + 8 + 2 + 3 + 7);
	stat_text();
	stat_live();
	cgroup();
	signals();
	fault();
	schedstat();
	return tap_done();
}
