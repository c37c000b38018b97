/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gate.h - internals of libkrexgate.so shared by its files.
 *
 * gate.c        constructor, join, fork, the gate check and the drain
 * gate_counts.c the gate's counts (KREX_GATE_COUNTS), a stalled drain's thread list
 * gate_dlsym.c  the dlsym override
 * gate_queue.c  the bounded queue, for every backend
 * gate_cuda*.c  the CUDA backend (cuda_hooks.def; gate_cuda.h)
 * gate_hip.c    the HIP backend (hip_hooks.def)
 *
 * gate.c and gate_dlsym.c know no GPU API by name: they iterate the
 * backends (struct gate_backend, below), which call down into them.
 */
#ifndef KREX_GATE_H
#define KREX_GATE_H

#include <stdint.h>
#include <stdio.h>

#define GATE_EXPORT __attribute__((visibility("default")))

/* What a hooked call submits (cuda_hooks.def "kind"). */
enum gate_kind {
	GK_LAUNCH = 0,
	GK_COPY = 1,
	GK_WAIT = 2,
	/* not submissions: never gated, tracked for the drain */
	GK_CAPTURE_BEGIN = 3,
	GK_CAPTURE_END = 4,
	GK_STREAM_DESTROY = 5,
	/* making a GPU context: waits at a closed gate (gate_context_wait()),
	 * never counted in flight, not a submission */
	GK_CONTEXT = 6,
	/* destroying or resetting a context, its streams and events with it:
	 * gated like a submission (never passed, so never inside the driver
	 * while a drain records or polls), and gate_context_end() first */
	GK_CONTEXT_END = 7
};

/* ---- gate.c --------------------------------------------------------------- */

/*
 * A context is about to be destroyed or reset (GK_CONTEXT_END, inside the
 * gate): every event the gate made before belongs to a context that may be
 * gone, and using one would be a use after free inside the driver.  Bumps
 * gate_ctx_gen, which the bounded queue's tables check (their events are
 * forgotten, not destroyed); each backend forgets its drain's tables itself.
 */
extern _Atomic unsigned gate_ctx_gen;
void gate_context_end(void);

/*
 * The gate check in front of one submission: waits while a gate of this
 * process is closed, then counts the caller as in flight until
 * gate_leave().  Returns 1 when the process is joined (the caller must call
 * gate_leave() and may track its context), 0 when passing through.
 * passable: a stalled drain's pass may let this call through (a kernel, a
 * copy, an event wait); not a wait on a memory value, an external
 * semaphore or a host function, which may themselves wait for the host and
 * would then hold the drain (gate_cuda_passable()).  busy(stream), for a
 * passable call: does its stream have work in flight (a drain's first round
 * lets it through, below); NULL when unknown.
 */
typedef int (*gate_busy_fn)(void *stream);
int gate_enter(int passable, gate_busy_fn busy, void *stream);
void gate_leave(int joined);

/*
 * Before a call that makes a GPU context (cuDevicePrimaryCtxRetain,
 * cuCtxCreate, hipCtxCreate, ...): wait while a gate of this process is
 * closed by another participant, as a launch would, but without being
 * counted in flight, so that a drain never waits for a context being made.
 * Making a context beside a timed kernel slows it (measured on the H200,
 * doc/gate.md); a process started during a region would otherwise make its
 * context there.  A context already being made when the gate closes goes
 * on until the freeze, which stops it between its driver calls (doc/gate.md).
 * KREX_GATE_CONTEXTS=pass turns the wait off.  Returns 1 when the process is
 * joined: the call is then counted as a context being made (gate_ctx.c:
 * krexd hears of it, CTX_MAKING; with KREX_GATE_CONTEXTS=finish a drain
 * waits for it), and gate_context_made() must follow the driver call with
 * what it returned.
 */
int gate_context_wait(void);
void gate_context_made(int counted);

/* gate_ctx.c: the contexts being made, and KREX_GATE_CONTEXTS=finish. */
extern int gate_ctx_finish;         /* a drain waits for them */
extern unsigned gate_ctx_finish_ms; /* at most this long (KREX_GATE_FINISH_MS) */
/* From the gate's start: contexts is KREX_GATE_CONTEXTS (NULL: unset). */
void gate_ctx_finish_init(const char *contexts);
/* Count a context about to be made (joined); 1. */
int gate_ctx_making_begin(void);
/* In a child after fork: none being made there. */
void gate_ctx_making_forget(void);
/* Contexts of this process being made now. */
int gate_ctx_making_now(void);
/* Wait, until deadline, while contexts of this process are being made; how
 * many still are. */
int gate_ctx_wait_made(uint64_t deadline);

/* 1 while the process is joined (the gates apply to it). */
int gate_joined(void);

/* The bounded queue's queue_time krexd asked for, in ns (0 = launch count
 * only; gate_queue.h). */
uint64_t gate_queue_ns(void);

/*
 * The bounded queue's step before a launch onto stream s, outside the gate
 * (gate_queue.h): finds s's queue in tab[len] and may wait for its mark.
 * Returns the queue to record into after the launch, or NULL: the queue is
 * off, the process is not joined, or it is the region owner in its region
 * (krex_region_held(): the launch is counted toward the stream's next mark,
 * not bounded).
 */
struct gq;
struct gq_ops;
struct gq *gate_queue_before(struct gq *tab, int len, void *s, const struct gq_ops *ops);

/* Counting of wrapper entries for tests (KREX_GATE_COUNTS=FILE). */
extern int gate_counting;

/* The gate's own counts, written with the wrapper counts as "gate.NAME". */
enum gate_stat {
	GST_QUEUE_WAITS,      /* bounded queue: waits for a mark */
	GST_QUEUE_GAVE_UP,    /* of which gave up (50-80 ms, gate_queue.h) and proceeded */
	GST_DRAINS,           /* drain callbacks */
	GST_DRAIN_LATE,       /* drains that reached their deadline */
	GST_DRAIN_INCOMPLETE, /* drains that could not see some work */
	GST_DRAIN_PASSES,     /* stalled drains that let parked threads through */
	GST_PASSED_LAUNCHES,  /* submissions made through such a pass */
	GST_THROUGH_LAUNCHES, /* submissions onto a stream busy at the close, not held */
	GST_QUEUE_MARKS,      /* bounded queue: events recorded (marks) */
	GST_CONTEXT_HELD,     /* contexts made only after waiting at a closed gate */
	GST_NESTED,           /* gated calls made inside another of the same thread: passed */
	GST_COUNT
};
/* ---- gate_counts.c -------------------------------------------------------- */
/* Count one (returns the count before it); read one. */
unsigned long gate_stat_add(enum gate_stat st);
unsigned long gate_stat(enum gate_stat st);
/* KREX_GATE_COUNTS; debug: count also without it (to stderr at exit). */
void gate_counts_init(int debug);
/* At exit: every backend's wrapper counts, then the gate's own. */
void gate_write_counts(void);
/* This process's threads into line (len bytes), each " TID/NAME:STATE:SYSCALL"
 * from /proc/self/task (SYSCALL: the number it is in, "running" in user
 * space; 202 futex: a lock or a condition, 16 ioctl: inside the GPU driver,
 * 7 poll); returns how many did not fit. */
unsigned gate_threads_line(char *line, size_t len);

/*
 * A drain that saw no event of its complete for GATE_STALL_NS while threads
 * of the process wait for it at the gate lets them through (the pass:
 * GATE_PASS_LAUNCHES submissions, or until the drain progresses), and
 * again as soon as they are taken while the drain is still stalled, at
 * most GATE_PASS_MAX times a drain: one of them may be the host thread
 * that releases the work the drain waits for (XLA's delay kernel spins on
 * a host flag, about 100 ms), and it may have more to submit before the
 * release than one pass holds (XLA times a candidate of several kernels,
 * events included; with 2 passes a sequence of 12 kernels timed out on the
 * mock).  64 submissions in all; a thread that merely shares the GPU is
 * not parked (its bounded-queue wait is not suspect), so this is no
 * licence to queue.  10 ms: above a kernel in flight under queue_time
 * (1 ms) on a shared GPU, far below XLA's timeout.  The drain then waits
 * for what they submitted (doc/gate.md).
 */
#define GATE_STALL_NS (10ull * 1000 * 1000)
#define GATE_SNAP_NS (50ull * 1000 * 1000) /* a stall this long: gate_stall_snapshot() */
#define GATE_PASS_MAX 16                   /* passes a drain */
#define GATE_PASS_LAUNCHES 4 /* submissions a pass lets through, all threads together */

/*
 * A drain's first round lets a submission onto a stream that still has work
 * in flight through at once, without parking it (gate_enter()'s busy; a
 * thread that parked before the round began is woken to ask): the drain waits
 * for that stream anyway, and the thread may be the one that must release
 * the work in flight from the host.  XLA's timer launches a kernel that
 * spins on a host flag (its delay kernel), then its timed kernels, then
 * stores the flag: held at the gate between the two, the thread left the
 * spin kernel running for the stall threshold at least, and on the H200
 * JAX's autotuning then timed out ("Delay kernel timed out", issue 20).
 * The drain then waits, in a next round with the gate shut, for what went
 * through.  At most GATE_THROUGH_MAX submissions a drain, passable ones only
 * (gate_enter()); an idle stream, or a submission after the first round,
 * parks.
 */
#define GATE_THROUGH_MAX 64

/* The bounded queue's wait (gq_ops.wait): poll query (1 done, 0 not yet,
 * < 0 error) for at most limit_ns, counted. */
int gate_gq_wait(int (*query)(void *ev), void *ev, uint64_t limit_ns, uint64_t suspect_ns);

void gate_sleep_us(long us);

/* Poll the n events of evs with query (1 done, 0 not yet, < 0 error) until
 * all are done or deadline (time_now_ns()); never blocks in the driver.
 * Returns how many are still not done; *errors counts failed queries. */
int gate_poll_events(int (*query)(void *ev), void **evs, int n, uint64_t deadline, int *errors);

/*
 * The gate's own event calls (the drain, the warm-up, the bounded queue's on
 * the application's launching thread) run in relaxed capture mode: in the
 * thread's own mode (global by default) an event query and friends are
 * "potentially unsafe", and with another thread of the process capturing in
 * global mode they invalidate that capture (seen on the H200 with a CUDA
 * runtime program).  xmode is the API's ThreadExchangeStreamCaptureMode
 * (CUDA's and HIP's take and give the same ints, gate_types.h), NULL when
 * the driver has none.  gate_relax() returns 1 when it relaxed; then
 * gate_unrelax() puts the thread's own mode back.
 */
typedef int (*gate_xmode_fn)(int *mode);
#define GATE_CAPTURE_RELAXED 2 /* CU_STREAM_CAPTURE_MODE_RELAXED, hipStreamCaptureModeRelaxed */
int gate_relax(gate_xmode_fn xmode, int *mode);
void gate_unrelax(gate_xmode_fn xmode, int relaxed, int *mode);

/* ---- the backends ---------------------------------------------------------- */

/*
 * One GPU API the gate wraps (gate_cuda.c, gate_hip.c): a third one is one
 * file that defines its wrappers and one of these with GATE_BACKEND(), listed
 * in Makefile.am.  The gate iterates them in link order (gate_backends).  A
 * member may be NULL where the API has nothing to do.
 */
struct gate_backend {
	const char *name;   /* "cuda", "hip" */
	const char *prefix; /* every name it hooks starts with it ("cu", "hip") */
	/* The real function behind a hooked name (from the driver's handle), or
	 * NULL when name is not hooked; *wrapper gets the wrapper. */
	void *(*lookup)(const char *name, void **wrapper);
	/* dlsym dispatch: name is a symbol just found as p by the real dlsym.
	 * Returns the wrapper for it when it is hooked (remembering p as the
	 * real function), else p. */
	void *(*swap)(const char *name, void *p);
	/* Wait, until deadline (time_now_ns()), for what the process queued;
	 * never invalidates a stream capture; 0, or -1 (late or incomplete),
	 * or KREX_DRAIN_EXITING when it could not because the runtime is
	 * shutting down (deinitialized: the process exits). */
	int (*drain)(uint64_t deadline);
	/* In the region owner, after the grant: one event recorded and waited
	 * for on a stream of the gate's own in every context this process used,
	 * so the GPU runs the owner's context before its first timed launch;
	 * 0 or -1. */
	int (*warm)(void);
	/* Forget tracked contexts and per-thread state (fork child). */
	void (*forget)(void);
	/* Write "pid name count" lines for every wrapper entered (counting on). */
	void (*counts)(FILE *f);
};

/*
 * The backends are a table the linker collects: GATE_BACKEND() defines
 * backend id and puts a pointer to it into the section gate_backends, which
 * GNU ld, gold and lld bound with __start_ and __stop_ symbols.  So gate.c
 * and gate_dlsym.c reach every backend without naming one.
 */
#define GATE_BACKEND(id, prefix, lookup, swap, drain, warm, forget, counts)                        \
	static const struct gate_backend gate_backend_##id = {#id,   prefix, lookup, swap,         \
	                                                      drain, warm,   forget, counts};      \
	static const struct gate_backend *const gate_backend_ptr_##id                              \
	        __attribute__((used, section("gate_backends"), aligned(sizeof(void *)))) =         \
	                &gate_backend_##id
extern const struct gate_backend *const __start_gate_backends[]
        __attribute__((visibility("hidden")));
extern const struct gate_backend *const __stop_gate_backends[]
        __attribute__((visibility("hidden")));
/* for (b = gate_backends; b < gate_backends_end; b++): each backend's address */
#define gate_backends __start_gate_backends
#define gate_backends_end __stop_gate_backends

/* ---- gate_dlsym.c --------------------------------------------------------- */

/* The real dlsym (glibc's, found with dlvsym), never the override. */
void *gate_real_dlsym(void *handle, const char *name);

/* dlopen the first of names already loaded, else the first that loads. */
void *gate_open_first(const char *const *names);

#endif /* KREX_GATE_H */
