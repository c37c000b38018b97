/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * isolate_region.h - one call for krexd's isolation hook: choose the
 * owner's cores (topo_choose) and move everyone (isolate_apply), from what
 * krexd knows about a region: pids, the owner's cgroup and allowed CPUs.
 */
#ifndef KREX_ISOLATE_REGION_H
#define KREX_ISOLATE_REGION_H

#include <stddef.h>
#include <sys/types.h>

#include "isolate_plan.h"
#include "topo.h"

struct isolate_region_req {
	pid_t owner_pid;
	const char *owner_cpuset;  /* its cpuset cgroup dir; NULL/"": found from its pid */
	const char *owner_allowed; /* its allowed CPUs; NULL/"": its current affinity */
	const char *const *gpus;   /* the region's GPUs (node-wide names) */
	unsigned ngpus;
	const pid_t *others; /* root pids of every other participant */
	size_t nothers;
	int node;            /* isolate = node */
	unsigned want_cores; /* region_cores; 0 = default */
	unsigned node_gpus;  /* GPUs of the node (0 or 1: no fair-share cap) */
};

struct isolate_region_out {
	char owner_cpus[256]; /* what the owner runs on (the certificate's owner_cores) */
	char rest_cpus[256];
	int moved;   /* processes moved off the owner's cores */
	int skipped; /* the node is too small: nothing was moved */
	char why[768];
};

/*
 * Choose the owner's and the rest's CPUs (out->owner_cpus, rest_cpus, why,
 * skipped) without moving anything.  Fair share: an owner without an
 * allocation of its own (its allowed CPUs are every core of the node) on
 * a node of node_gpus > 1 GPUs gets at most cores / node_gpus cores (and
 * no more than region_cores or the cores local to its GPUs would give it),
 * so that the jobs of the other GPUs keep cores of their own.  An owner
 * with an allocation (Slurm's) may use all of it.  0, or -1 (errno; why).
 */
int isolate_region_choose(struct krex_topo *topo, const struct isolate_region_req *req,
                          struct isolate_region_out *out);

/*
 * Isolate a region's owner.  Each other participant is moved through its
 * cpuset cgroup when it has one of its own (not the owner's), else through
 * its pid's affinity.  The owner is moved through its cpuset cgroup only
 * when that cgroup holds nothing but the owner's process tree (krexd's
 * own p<ID> cgroup, or owner_cpuset given); a cgroup it shares (with
 * siblings, with a whole session) is never narrowed: by affinity then.  Undo lines go to rec (see isolate_backend.h); the
 * caller keeps them and undoes them newest first with isolate_undo_line().
 * Returns 0 (out filled, also when skipped), or -1 (errno; out->why).
 */
int isolate_region_enter(struct krex_topo *topo, const struct isolate_sys *sys,
                         const struct isolate_region_req *req, isolate_rec_fn rec, void *ctx,
                         struct isolate_region_out *out);

#endif /* KREX_ISOLATE_REGION_H */
