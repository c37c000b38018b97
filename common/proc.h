/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * proc.h - what KREX reads of a process in /proc: its stat line (state,
 * parent, flags, start time), its owner, its cgroup, its pending signals,
 * the walk up its parents; and the test hook that drops a kernel write.
 * Shared by krexd, the topology library and the SPANK plugin: the one place
 * /proc/PID/stat is parsed.
 */
#ifndef KREX_PROC_H
#define KREX_PROC_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* flags (field 9): the process is exiting (include/linux/sched.h) */
#define KREX_PF_EXITING 0x00000004u

/* Fields of /proc/PID/stat (proc(5) numbers them from 1: 1 pid, 2 comm). */
struct proc_stat {
	char state;               /* field 3: R, S, D, T, t, Z, X... */
	pid_t ppid;               /* field 4 */
	unsigned flags;           /* field 9: PF_* */
	unsigned long long start; /* field 22: start time, clock ticks after boot */
};

/*
 * Parse a /proc/PID/stat line: "PID (comm) S PPID ...".  comm may hold
 * anything, spaces and ')' included, so the fields start after the last ')',
 * each after one space.  Returns how far it got: 22 (every field of s), 9
 * (state, ppid, flags), 4 (state, ppid), 3 (state), 2 (none: a line cut after
 * comm), or -1 when there is no ')' at all.
 */
int proc_stat_parse(const char *text, struct proc_stat *s);

/*
 * proc_stat_parse of /proc/PID/stat: -1/errno when it cannot be read
 * (ENOENT, ESRCH: gone), -1/EINVAL when it holds no "(comm)".
 */
int proc_stat_read(pid_t pid, struct proc_stat *s);

/* State letter and parent of pid from /proc/PID/stat.  0, or -1 (gone). */
int proc_state(pid_t pid, char *state, pid_t *ppid);

/* Start time of pid (field 22, clock ticks): tells a reused pid apart.  0, or -1/errno. */
int proc_start(pid_t pid, unsigned long long *start);

/*
 * The owner of pid's /proc files (of /proc/PID/stat, not of the folder: the
 * kernel gives a non-dumpable process's files, not its folder, to root).
 * 0, or -1/errno.
 */
int proc_owner(pid_t pid, uid_t *uid);

/* 1 when pid is root or below it (by /proc, at most 64 levels up), else 0. */
int proc_descends(pid_t pid, pid_t root);

/*
 * The cgroup path of the v1 controller ctrl (e.g. "freezer", "cpuset"; one
 * of a comma list), or of the v2 hierarchy ("0::") when ctrl is NULL, from
 * /proc/PID/cgroup text.  0, or -1 (absent, or longer than outlen).
 */
int proc_cgroup_parse(const char *text, const char *ctrl, char *out, size_t outlen);

/* proc_cgroup_parse of /proc/PID/cgroup.  0 or -1. */
int proc_cgroup(pid_t pid, const char *ctrl, char *out, size_t outlen);

/*
 * Signals pending for pid (SigPnd and ShdPnd of /proc/PID/status, or'ed) as
 * a mask of 1 << (sig - 1); in *caught (may be NULL), those it has a handler
 * for (SigCgt).  0, or -1 when it cannot be read (both masks 0).
 */
int proc_sig_pending(pid_t pid, unsigned long long *pending, unsigned long long *caught);

/*
 * A test hook that drops kernel writes, as if they never took: the next N
 * calls of fault_take() return 1, N from the environment variable count_env
 * (read at the first call) unless fault_set() gave it; with hold_env (may be
 * NULL), every call returns 1 while the file that variable names exists, so
 * that a test can act while a retry is surely pending.
 */
struct fault_hook {
	const char *count_env;
	const char *hold_env;
	int left; /* -1: count_env not read yet */
};
#define FAULT_HOOK(count_env, hold_env)                                                            \
	{                                                                                          \
		(count_env), (hold_env), -1                                                        \
	}

/* 1: drop this write; 0: make it. */
int fault_take(struct fault_hook *h);

/* Drop the next n writes (a test in the same process). */
void fault_set(struct fault_hook *h, int n);

/*
 * A thread's CPU time and its time runnable but waiting for a CPU, in ns
 * (the first two fields of /proc/TID/schedstat: sum_exec_runtime,
 * run_delay; the kernel's CONFIG_SCHED_INFO).  tid 0: the calling thread
 * (/proc/thread-self).  The parse: 0, or -1 when text does not start with
 * two numbers; the read: 0, or -1/errno (gone, or no schedstat).
 */
int proc_schedstat_parse(const char *text, uint64_t *run_ns, uint64_t *wait_ns);
int proc_schedstat(pid_t tid, uint64_t *run_ns, uint64_t *wait_ns);

/* The calling thread at normal scheduling (SCHED_OTHER), whatever it
 * inherited: a helper thread of a real-time krexd (sched_priority). */
void proc_thread_normal(void);

#endif /* KREX_PROC_H */
