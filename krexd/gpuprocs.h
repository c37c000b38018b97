/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gpuprocs.h - krexd's GPU process-list thread.  The telemetry at a
 * region's start needs NVML's list of the compute processes on its GPUs
 * (foreign processes, siblings on the GPU) and each GPU's nominal SM clock,
 * while the siblings drain.  On the H200 the nominal clock's two calls take
 * 1-1.6 ms each (a driver round trip) and the list 25 us idle, up to 1.9 ms
 * under load: on the event loop they held up the acks of the drain and
 * every other region's entry.  The loop hands a request (its GPUs) to this
 * thread, which lists the processes, reads each one's cgroup (freezer_key),
 * posts the result and wakes the loop through an eventfd (EP_PROCS); the
 * loop maps the pids to participants (region_judge.c).  The nominal clocks
 * a request asks for are read once the thread has no request left (with 32
 * sessions on the H200 they took 6 ms at p50, 25 ms at p95, the driver's
 * lock contended: read first, they delayed every list behind them); the
 * loop takes them for the next regions (gp_nominal(), struct krexd's
 * nominal).
 * doc/architecture.md "Telemetry".
 */
#ifndef KREXD_GPUPROCS_H
#define KREXD_GPUPROCS_H

#include <stdint.h>
#include <sys/types.h>

#include "freezer.h"
#include "krexd.h"

#define GP_MAX_PIDS 256 /* processes listed per request, all GPUs together */
#define GP_MAX_QUEUED 64

struct gp_result {
	uint64_t ticket;        /* gp_submit()'s */
	int n;                  /* processes listed, -1: NVML could not list them */
	pid_t pid[GP_MAX_PIDS]; /* and each one's cgroup (key[i].have_cg 0: unknown) */
	struct freezer_key key[GP_MAX_PIDS];
	int key_err[GP_MAX_PIDS]; /* the pid's cgroup could not be read (gone) */
	/* the pid runs NVIDIA's MPS server (gp_mps_server()); mps_known: NVML
	 * listed the MPS clients on every GPU asked for */
	unsigned char mps_server[GP_MAX_PIDS];
	int mps_known;
	/* each one's used GPU memory, bytes, as NVML says (all ones: unknown) */
	unsigned long long mem[GP_MAX_PIDS];
	/* the pid is exiting (PF_EXITING, or a zombie): its context on the GPU
	 * goes when its exit is done; and its start time (/proc/PID/stat field
	 * 22), which tells it from a later process of the same pid */
	unsigned char exiting[GP_MAX_PIDS];
	unsigned long long start[GP_MAX_PIDS];
	uint64_t list_ns, keys_ns; /* the list, the cgroup reads */
	uint64_t queued_ns;        /* submitted to picked up by the thread */
	struct gp_result *next;
};

/* Start the thread and register its eventfd as EP_PROCS.  0, or -1 (then
 * gp_submit() refuses and the caller lists inline, on the loop). */
int gp_start(struct krexd *k);

/* KREXD_PROCS_INLINE in the environment (a measurement's side-by-side
 * reference): the loop lists inline, as before the thread. */
int gp_inline(void);

/* Ask for the processes on these GPUs, and, when clocks is 1, their nominal
 * clocks afterwards (1-1.6 ms an NVML call on the H200; read once no list
 * is asked for: gp_nominal()).  The ticket (> 0), or 0 when the thread is
 * not running (list inline with gp_list()), or -1 when it is busy with
 * GP_MAX_QUEUED requests (NVML hung: the processes stay unknown). */
int64_t gp_submit(const char *const *gpus, unsigned n, const struct freezer *f, int clocks);

/* The nominal SM clock of gpu the thread last read (MHz), -1 when it has
 * read none; *read_ns (may be NULL): how long its last read took; *reads
 * (may be NULL): how many reads it has made (a new one since a look: its
 * time is news). */
int32_t gp_nominal(const char *gpu, uint64_t *read_ns, uint64_t *reads);

/* The work itself, on the caller's thread: fills res (n, pids, keys,
 * exiting, start times, times). */
void gp_list(struct gp_result *res, const char *const *gpus, unsigned n, const struct freezer *f);

/* 1 when pid runs NVIDIA's MPS server: its executable is named
 * nvidia-cuda-mps-server and is root's, writable by no one else (a user's
 * program does not pass for it by its name), else 0. */
int gp_mps_server(pid_t pid);
/* The results done so far, oldest first (the caller frees each with free()). */
struct gp_result *gp_take(void);

/* Has the thread been in one request for ms or longer (NVML hung)?  1, 0. */
int gp_hung(unsigned ms);

/* After gp_hung() or a full queue: 1 once the thread has done every request
 * that waited (NVML answers again), else 0. */
int gp_recovered(void);

/* Stop the thread (it is detached: one stuck in NVML is left behind). */
void gp_stop(void);

#endif /* KREXD_GPUPROCS_H */
