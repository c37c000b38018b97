/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * isolate.h - the CPU isolation hook of the region entry sequence.
 *
 * krexd calls isolate_enter() after the siblings are frozen and before GRANT;
 * when the region ends it first undoes the region's recorded lines (below),
 * then thaws.
 * The isolation work (topology/: topo_choose() picks the owner's cores; cpuset
 * and affinity backends apply the change) plugs in here.  Its contract:
 *
 *   - before each change, call rec(ctx, undo_line) with one line that undoes
 *     it ("cpuset PATH CPUS", "affinity PID CPUS", ...; no newline).  krexd
 *     writes it to the state file before rec returns 0; -1 means "do not
 *     make the change", 1 "recorded, do not make it now": krexd runs a dry
 *     pass first that collects every line of the region, writes them in one
 *     state file write, then the real pass, whose lines are written already.
 *   - isolate_undo_line(line) restores one such line: at region end (every
 *     line of the region, newest first) and at the next krexd start for
 *     lines a killed krexd left (registered as the state file's undo handler
 *     for the kinds in isolate_undo_kinds[]).
 *
 * isolate.c runs topology/'s isolate_region_enter(); isolate_undo_line() is
 * hwloc's (topology/isolate_backend.h has the line forms).  With isolate =
 * none, or when it fails, the certificate says isolation is unknown
 * (KREX_CERT_ISOLATION clear, moved = -1).
 */
#ifndef KREXD_ISOLATE_H
#define KREXD_ISOLATE_H

#include <stddef.h>
#include <sys/types.h>

#include "krex/region.h"

typedef int (*isolate_rec_fn)(void *ctx, const char *undo_line);

/* What the hook knows about a region. */
struct isolate_req {
	uint64_t region_id;
	pid_t owner_pid;
	const char *owner_cgroup; /* its freezer cgroup, or "" */
	const char *owner_cpuset; /* its v1 cpuset cgroup krexd made, or "" */
	const char *owner_cpus;   /* its allowed cpus from registration, or "" */
	const char *const *gpus;  /* node-wide GPU names of the region */
	unsigned ngpus;
	const pid_t *other_pids; /* root pids of the siblings (those sharing a GPU of the region) */
	size_t nother;
	unsigned node_gpus;       /* GPUs krexd knows on the node (the owner's fair share) */
	int mode;                 /* enum isolate_mode */
	const char *region_cores; /* krexd.conf region_cores */
	const char *topology;     /* krexd.conf topology */
	const char (
	        *gpu_pci)[16]; /* krexd.conf gpuN_pci, KREX_MAX_GPUS entries ("" unset), or NULL */
	int dry;               /* the dry pass (rec returns 1): nothing logged */
};

/*
 * Load the node's topology (krexd.conf topology, gpuN_pci) now rather than
 * at the first region, whose isolate_us it would inflate; again on reload
 * when they changed.  Opens NVML and the spare fds (isolate_fds_reserve)
 * too, for the same reason.  0, or -1 (logged; regions then retry and fail).
 */
int isolate_load(const char *topology, const char (*gpu_pci)[16]);

/* Line kinds isolate_undo_line() understands, NULL-terminated. */
extern const char *const isolate_undo_kinds[];

/* Name of the isolation backend in use (cgroup2-cpuset, cgroup1-cpuset, affinity). */
const char *isolate_backend_name(void);

/*
 * Isolate for req.  Calls rec before each change.  Fills cert->owner_cores,
 * cert->moved and the KREX_CERT_ISOLATION bit of cert->known when it knows
 * them.  Returns 0, or -1/errno (the region goes on, degraded).
 */
int isolate_enter(const struct isolate_req *req, isolate_rec_fn rec, void *ctx,
                  struct krex_certificate *cert);

/* Undo one recorded line and read it back (topology/isolate_backend.h).  0 or -1/errno. */
int isolate_undo_line(const char *line);

/* The fd undoing line needs, opened when the change is made (-1: none needed).  0 or -1. */
int isolate_undo_open(const char *line, int *fd);

/* isolate_undo_line() through the fd isolate_undo_open() gave. */
int isolate_undo_line_fd(const char *line, int fd);

/*
 * Spare fds krexd keeps (opened at isolate_load) and lets go of just
 * before it undoes and thaws, so that what the undo still opens (/proc of
 * an affinity line, a retry) finds fds even when clients took all others.
 */
void isolate_fds_release(void);
void isolate_fds_reserve(void);

#endif /* KREXD_ISOLATE_H */
