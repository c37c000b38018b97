/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * proctree.h - stopping and continuing processes with signals without
 * harming a parent that watches its child (krexd's signal freezer, and
 * `krex run` continuing its own job when its krexd died).
 *
 * su, runuser and sudo wait for their child with waitpid(WUNTRACED) and,
 * when it stops, stop themselves (kill(getpid(), SIGSTOP)) until someone
 * continues them; an interactive shell marks a foreground job that stops
 * as Stopped and takes the terminal back.  A parent that is already stopped
 * when its child stops, and is continued only after its child was (SIGCONT
 * clears the child's stop at once, in kill(2) itself), never sees the stop:
 * so stop parents before children (each child once its parent is seen
 * stopped) and continue children before parents.
 */
#ifndef KREX_PROCTREE_H
#define KREX_PROCTREE_H

#include <stddef.h>
#include <sys/types.h>

#include "proc.h" /* proc_state, proc_descends */

/* A pidfd of pid (pidfd_open(2)), or -1/errno (ENOSYS before Linux 5.3). */
int proc_pidfd(pid_t pid);

/* 1 when state (a /proc state letter) means it runs no more: stopped, traced, dead. */
int proc_state_still(char state);

/*
 * Stop signals pending for pid (SigPnd and ShdPnd of /proc/PID/status) as a
 * mask of 1 << (sig - 1) over SIGSTOP, SIGTSTP, SIGTTIN and SIGTTOU; in
 * *caught, those of them pid has a handler for (SigCgt).  0 when none or gone.
 */
unsigned long proc_stop_pending(pid_t pid, unsigned long *caught);

/*
 * Continue pid, which krexd stopped, unless someone else asked it to stop
 * meanwhile: a SIGTSTP, SIGTTIN or SIGTTOU pending that it has no handler
 * for (a shell's Ctrl-Z, Slurm's linuxproc suspend, which sends SIGTSTP
 * first), or, when seen_stopped (krexd saw it stopped, so its own SIGSTOP
 * was taken), a SIGSTOP pending: that one is left stopped for whoever
 * stopped it, who continues it.  A stop signal it has a handler for is sent
 * again after the SIGCONT (which discards pending stop signals).  Signals
 * through pidfd when >= 0.  Returns 0 continued, 1 left stopped, -1/errno.
 */
int proc_cont(pid_t pid, int pidfd, int seen_stopped);

/* A set of pids sorted for lookup by pid (proc_index, proc_index_find). */
struct proc_index {
	pid_t pid;
	size_t i; /* its place in the pids given to proc_index() */
};

/* An index of pids[0..n), or NULL without memory (free() it). */
struct proc_index *proc_index(const pid_t *pids, size_t n);

/* The place in pids of pid, or -1 when it is not one of them. */
long proc_index_find(const struct proc_index *x, size_t n, pid_t pid);

/*
 * depth[i]: how many of pids are ancestors of pids[i], following ppids[i]
 * (each one's parent; NULL: read from /proc) from one to the next within
 * the set.  Stop in increasing depth, continue in decreasing depth.
 */
void proc_depths(const pid_t *pids, const pid_t *ppids, size_t n, unsigned *depth);

/* idx[0..n): 0..n-1 ordered by depth, deepest first when deepest, else shallowest first. */
void proc_order(const unsigned *depth, size_t n, size_t *idx, int deepest);

#endif /* KREX_PROCTREE_H */
