/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gate.h - internals of libkrexgate.so shared by its files.
 *
 * gate.c        constructor, join, fork, the gate check and the drain
 * gate_cuda.c   CUDA wrappers (cuda_hooks.def), cuGetProcAddress, contexts
 * gate_hip.c    HIP wrappers (hip_hooks.def), devices
 * gate_queue.c  the bounded queue, for both
 * gate_dlsym.c  the dlsym override
 */
#ifndef KREX_GATE_H
#define KREX_GATE_H

#include <stdint.h>
#include <stdio.h>

#define GATE_EXPORT __attribute__((visibility("default")))

/* What a hooked call submits (cuda_hooks.def "kind"). */
enum gate_kind { GK_LAUNCH = 0, GK_COPY = 1, GK_WAIT = 2 };

/* ---- gate.c --------------------------------------------------------------- */

/*
 * The gate check in front of one submission: waits while a gate of this
 * process is closed, then counts the caller as in flight until
 * gate_leave().  Returns 1 when the process is joined (the caller must call
 * gate_leave() and may track its context), 0 when passing through.
 */
int gate_enter(void);
void gate_leave(int joined);

/* 1 while the process is joined (the gates apply to it). */
int gate_joined(void);

/* The bounded queue krexd asked for (gate_queue.h): queue_cap in launches
 * (0 = off) and queue_time in ns (0 = launch count only). */
unsigned gate_queue_cap(void);
uint64_t gate_queue_ns(void);

/* Counting of wrapper entries for tests (KREX_GATE_COUNTS=FILE). */
extern int gate_counting;

/* ---- gate_cuda.c / gate_hip.c --------------------------------------------- */

/* Synchronize every context (device) this process submitted to; 0 or -1. */
int gate_cuda_drain(void);
int gate_hip_drain(void);

/*
 * In the region owner, after the grant: one event recorded and waited for on
 * a stream of the gate's own in every context this process used, so the GPU
 * runs the owner's context before its first timed launch; 0 or -1.
 */
int gate_cuda_warm(void);

/* Forget tracked contexts and per-thread state (fork child). */
void gate_cuda_forget(void);
void gate_hip_forget(void);

/* Write "pid name count" lines for every wrapper entered (counting on). */
void gate_cuda_counts(FILE *f);
void gate_hip_counts(FILE *f);

/*
 * dlsym dispatch: name is a symbol just found as p by the real dlsym.
 * Returns the wrapper for it when it is hooked (remembering p as the real
 * function), else p.
 */
void *gate_cuda_swap(const char *name, void *p);
void *gate_hip_swap(const char *name, void *p);

/* The real function behind a hooked name (from the driver's handle), or
 * NULL when name is not hooked; *wrapper gets the wrapper. */
void *gate_cuda_lookup(const char *name, void **wrapper);
void *gate_hip_lookup(const char *name, void **wrapper);

/* ---- gate_dlsym.c --------------------------------------------------------- */

/* The real dlsym (glibc's, found with dlvsym), never the override. */
void *gate_real_dlsym(void *handle, const char *name);

/* dlopen the first of names already loaded, else the first that loads. */
void *gate_open_first(const char *const *names);

#endif /* KREX_GATE_H */
