/*
 * isolate_plan.h - apply a region's CPU split to the whole node, undo it.
 *
 * The owner is pinned to owner_cpus; every other target (participants'
 * cgroups or pids) is restricted to rest_cpus.  With node set (krexd.conf
 * isolate = node) every cgroup of the cpuset hierarchy and every other
 * process that may be moved goes to rest_cpus too: never kernel threads,
 * pid 1, krexd itself (nor its cgroup), or a process with
 * PF_NO_SETAFFINITY.  A set only ever shrinks to the CPUs of the target
 * it already had; one that has none of them is left alone (krexd never
 * widens a job past its allocation), as the why text says.
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
