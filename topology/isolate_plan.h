/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * isolate_plan.h - apply a region's CPU split to the whole node, undo it.
 *
 * The owner is pinned to owner_cpus; every other target (participants'
 * cgroups or pids) is restricted to rest_cpus.  With node set (krexd.conf
 * isolate = node) every cgroup of the cpuset hierarchy and every other
 * process that may be moved goes to rest_cpus too: never kernel threads,
 * pid 1, krexd itself (nor its cgroup), or a process with
 * PF_NO_SETAFFINITY.  A cgroup's set only shrinks to the CPUs of the new
 * list it already had; a cgroup that has none of them is left alone
 * (krexd never widens a job past its allocation).  A thread pinned only to
 * the owner's CPUs is moved to the whole new list (the kernel refuses,
 * and it stays, when its cgroup allows none of those).
 */
#ifndef KREX_ISOLATE_PLAN_H
#define KREX_ISOLATE_PLAN_H

#include <stddef.h>
#include <sys/types.h>

#include "isolate_backend.h"

struct isolate_target {
	const char *cgroup; /* cpuset cgroup directory (isolate_pid_cgroup), or NULL / "" */
	pid_t pid;          /* without a cgroup: this process, every thread */
};

struct isolate_plan {
	const struct isolate_sys *sys;
	struct isolate_target owner;
	const struct isolate_target *others;
	unsigned nothers;
	const char *owner_cpus; /* topo_choose() */
	const char *rest_cpus;
	int node;                              /* isolate = node */
	const char *node_root;                 /* node: cpuset dir to walk (NULL: the mount) */
	int (*may_move)(void *ctx, pid_t pid); /* node: filter for plain pids (NULL: all) */
	void *may_move_ctx;
	isolate_rec_fn rec; /* durability: called with each undo line first */
	void *rec_ctx;
};

/*
 * Apply plan.  Undo lines go to plan->rec and into undo (empty it first).
 * *moved gets the number of processes whose CPUs changed, the owner's not
 * counted.  A target that cannot be changed is skipped and named in why.
 * Returns 0, or -1 (errno) when nothing could be applied; when rec fails
 * (ECANCELED) what was done is undone first.
 */
int isolate_apply(const struct isolate_plan *plan, struct isolate_undo *undo, int *moved, char *why,
                  size_t wlen);

/* Undo everything isolate_apply() did, newest first.  0, or -1 if a line failed. */
int isolate_restore(struct isolate_undo *undo);

#endif /* KREX_ISOLATE_PLAN_H */
