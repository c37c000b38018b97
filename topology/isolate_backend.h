/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * isolate_backend.h - move processes between CPU sets, and put them back.
 *
 * Three backends, chosen from what the node has: the cpuset of a cgroup
 * (v2 cpuset.cpus, v1 cpuset.cpus), and sched_setaffinity() on every thread
 * of a process as the last resort.  krexd calls isolate_apply() when a
 * region is granted and isolate_restore() when it ends (doc/topology.md).
 *
 * Durability: before each change the plan's rec callback gets one undo line
 * (text, no newline) that krexd writes into its state file; the change is
 * made only if rec returns 0.  rec may return 1 instead: the line is
 * recorded and the change is not made (a dry pass: krexd writes every line
 * of a region to its state file at once, then makes the changes in a second
 * pass whose lines it finds written already); the call then returns as if
 * it changed, and undo does not keep the line.  isolate_undo_line() undoes one line.  Undo
 * lines newest first (a cgroup v1 parent is widened before its children),
 * as isolate_undo_all() does; oldest first works too, because a v1 line
 * widens the ancestors its old value does not fit in yet.  Line forms:
 *
 *	cpuset v1 DIR CPUS          write CPUS into DIR/cpuset.cpus, then every
 *	                            thread of DIR still inside the CPUs it had
 *	                            goes to its CPUs (the mask a thread asked for
 *	                            with sched_setaffinity during the region, or
 *	                            inherited from one that did: since Linux 6.2
 *	                            the kernel applies it again when the cpuset
 *	                            widens)
 *	cpuset v2 DIR CPUS|-        the same on v2 ("-": empty, inherit the parent)
 *	cpuset vN+TID,.. DIR CPUS   the same, but the threads listed (pinned inside
 *	                            the narrowed CPUs before the region) keep their mask
 *	affinity PID START MAIN [TID=CPUS]... [new=SINCE:CPUS]
 *	                            every thread of PID (if its start time is still
 *	                            START) back to its listed mask, or to MAIN
 *	                            (the main thread's) for threads not listed,
 *	                            which covers threads created during the region;
 *	                            with new=, also the threads inside CPUS (what
 *	                            the region moved it onto) of PID's descendants
 *	                            started since SINCE (clock ticks since boot,
 *	                            rounded down to 1 s): processes it forked
 *	                            while narrowed
 */
#ifndef KREX_ISOLATE_BACKEND_H
#define KREX_ISOLATE_BACKEND_H

#include <stddef.h>
#include <sys/types.h>

#include <hwloc.h>

enum isolate_kind {
	ISOLATE_AFFINITY = 0, /* sched_setaffinity per thread */
	ISOLATE_CGROUP1 = 1,  /* cgroup v1 cpuset */
	ISOLATE_CGROUP2 = 2,  /* cgroup v2 cpuset */
};

/* Where the node's cpuset controller is mounted, if anywhere. */
struct isolate_sys {
	enum isolate_kind kind;
	char mount[256]; /* cpuset hierarchy mount point ("" for affinity) */
};

typedef int (*isolate_rec_fn)(void *ctx, const char *undo_line);

/* Undo lines kept in memory, in recording order. */
struct isolate_undo {
	char **line;
	unsigned n, cap;
};

/*
 * Find the node's cpuset controller in /proc/self/mountinfo: a v1 mount
 * with the cpuset option, else a v2 mount whose cgroup.controllers lists
 * cpuset, else the affinity backend.  Always succeeds.
 */
void isolate_probe(struct isolate_sys *sys);
const char *isolate_kind_name(enum isolate_kind kind);

/*
 * The cpuset cgroup directory of a process (/proc/PID/cpuset joined to the
 * mount) into dir; "" when it is the hierarchy's root (where nothing can be
 * restricted) or there is no cpuset controller.  Returns 0 or -1 (errno).
 */
int isolate_pid_cgroup(const struct isolate_sys *sys, pid_t pid, char *dir, size_t len);

/* Which cgroup version a cpuset directory belongs to: 1, 2, or -1 (ENOENT). */
int isolate_cgroup_version(const char *dir);

/*
 * Restrict one cgroup directory's cpuset.cpus to the CPUs of want that it
 * already has (or keep it when it has none of them), widened to cover kids
 * (what its children keep, v1 needs parent >= child).  The value it ends
 * with goes into now.  Records, then writes, only on a change.  Returns 1
 * when it changed, 0 when not, 2 when it left a v2 cpuset alone because
 * its cpuset.cpus is empty (it inherits: the caller moves its processes
 * instead, see isolate_undo_line), -1 (errno) on a failure.
 */
int isolate_cgroup_set(const char *dir, hwloc_const_bitmap_t want, hwloc_const_bitmap_t kids,
                       hwloc_bitmap_t now, isolate_rec_fn rec, void *ctx,
                       struct isolate_undo *undo);

/*
 * Restrict every thread of pid to its mask's CPUs in want (to want when it
 * has none).  Re-scans until no new thread appears, so a thread created
 * while it works is caught.  Returns 1 when it changed something, 0 when
 * not (nothing to change, or the process is gone), -1 (errno) on a failure.
 */
int isolate_affinity_set(pid_t pid, hwloc_const_bitmap_t want, isolate_rec_fn rec, void *ctx,
                         struct isolate_undo *undo);

/* (Both return -1 with errno ECANCELED when rec refused the undo line.) */

/*
 * Undo one line and verify it: the cpuset read back, each thread's mask
 * read back (what its cpuset allows of the old mask).  Returns 0 (also
 * when its target is gone), -1 (errno; EIO: it read back something else,
 * EINVAL for an affinity line: the thread's cpuset allows none of its old
 * CPUs, and it was put on every CPU its cpuset allows instead).  A v2 line
 * "-" that the kernel refuses (ENOSPC: a populated cpuset cannot become
 * empty again) gets the parent's effective CPUs, the ones it inherited.
 */
int isolate_undo_line(const char *line);

/*
 * What undoing line needs, opened when the change is made, so that the
 * undo cannot fail for want of an fd: for a cpuset line, DIR/cpuset.cpus
 * (O_RDWR, into *fd); -1 for an affinity line (nothing to hold).  0, or
 * -1 (errno) when it cannot be opened: then do not make the change.
 */
int isolate_undo_open(const char *line, int *fd);

/* isolate_undo_line() through the fd isolate_undo_open() gave (-1: by path). */
int isolate_undo_line_fd(const char *line, int fd);

/*
 * Test hook: the next n undo writes are dropped, as if they never reached
 * the kernel, so that the verification and the retries can be seen to
 * work.  krexd takes n from KREX_TEST_UNDO_FAULTS in its environment.
 * KREX_TEST_UNDO_HOLD=FILE drops every undo write while FILE exists (a
 * test holds the retries pending until it removes the file).
 */
void isolate_undo_fault(int n);

/* Undo all lines of undo in reverse order and empty it; -1 if one failed. */
int isolate_undo_all(struct isolate_undo *undo);
void isolate_undo_free(struct isolate_undo *undo);

#endif /* KREX_ISOLATE_BACKEND_H */
