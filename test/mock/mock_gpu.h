/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mock_gpu.h - TEST DOUBLE.  The simulated GPU behind the fake libcuda.so.1
 * and libamdhip64.so used by make check on machines without a GPU.
 *
 * One simulated GPU is shared by every process of the machine (or of one
 * test: KREX_MOCK_GPU names the POSIX shared-memory object).  Each stream of
 * a process is a FIFO run by its own worker thread, so streams are
 * independent as on a real GPU: a kernel spinning on a host flag stalls its
 * own stream only.  The stream semantics modelled:
 *
 *  - the legacy default stream (NULL here) waits for all work queued before
 *    on every blocking stream, and every blocking stream's later work waits
 *    for the legacy stream's work queued before (CUDA's implicit
 *    synchronization); non-blocking streams (MOCK_STREAM_NONBLOCKING) do
 *    neither;
 *  - per-thread default streams (mock_per_thread()) are blocking streams;
 *  - an op may wait for a point of another stream (stream wait event).
 *
 * A kernel takes the machine-wide device lock only while its simulated time
 * runs, so kernels of all processes execute one at a time and a hog sibling
 * really delays a victim.  The lock is fair (tickets, FIFO across processes):
 * busy processes take turns kernel by kernel, as a real GPU time-slices
 * between contexts; a turn nobody takes (its thread gone, frozen, stopped,
 * or not running for 50 ms) is passed on.  A spin kernel (MOP_SPIN) and a stream wait on a
 * value (MOP_WAITVAL) hold no lock: they poll a host word that the host
 * writes without any driver call, as XLA's delay kernel and
 * cuStreamWaitValue32 do.
 *
 * A process frozen while its worker holds the lock (mid-kernel) keeps every
 * other process waiting until it is thawed: that is exactly what KREX's
 * drain-before-freeze prevents.  A dead holder is detected (kill(pid, 0))
 * and its lock taken over.
 *
 * Event times are simulated device time: a kernel that follows other queued
 * work of its stream starts when the previous one ended (or when it got the
 * lock, if later) and ends exactly its duration later; an event records the
 * end of the work before it, or the time the worker reached it if the
 * stream was idle.  So alone, event time = kernel duration + a few us.
 *
 * Stream capture (mock_capture_*): while a stream captures, its work is
 * recorded into a graph instead of being queued; a "potentially unsafe"
 * call (mock_unsafe) invalidates captures by the rules of the CUDA driver
 * (see mock_unsafe), and the capture's end then fails.
 */
#ifndef KREX_MOCK_GPU_H
#define KREX_MOCK_GPU_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

struct mock_op;

#define MOCK_STREAM_NONBLOCKING 0x1

/* Capture status (CUstreamCaptureStatus) and mode (CUstreamCaptureMode). */
enum { MOCK_CAP_NONE = 0, MOCK_CAP_ACTIVE = 1, MOCK_CAP_INVALIDATED = 2 };
enum { MOCK_MODE_GLOBAL = 0, MOCK_MODE_THREAD_LOCAL = 1, MOCK_MODE_RELAXED = 2 };

/* Zero-initialized is a valid, unused, blocking stream. */
struct mock_stream {
	int flags;  /* MOCK_STREAM_NONBLOCKING */
	int dev;    /* its device (mock_legacy()); 0 unless the HIP mock has more */
	int legacy; /* a device's legacy default stream */
	int registered, dying, worker_done;
	pthread_t worker;
	struct mock_op *head, *tail;
	uint64_t submitted, done; /* per-stream sequence numbers */
	uint64_t busy_end;        /* simulated end of the work before the head */
	struct mock_stream *next; /* every registered stream of the process */
	const void *ctx;          /* the CUDA mock's context it was made in; NULL: none */
	/* capture */
	int cap_status, cap_mode;
	pthread_t cap_thread;
	uint64_t cap_id;
	struct mock_op *cap_head, *cap_tail;
};

struct mock_event {
	struct mock_stream *s; /* where it was last recorded; NULL = never */
	uint64_t seq;
	uint64_t t_ns;
	int captured; /* last recorded inside a capture */
};

enum mock_op_type {
	MOP_KERNEL,
	MOP_COPY,
	MOP_SET,
	MOP_EVENT,
	MOP_HOSTFN,
	MOP_NOP,
	MOP_SPIN,    /* kernel spinning until *flag >= value, or timeout_us */
	MOP_WAITVAL, /* stream wait until the 32/64-bit word at dst meets value */
	MOP_WRITEVAL /* stream write of value to dst */
};

/* MOP_WAITVAL conditions (CU_STREAM_WAIT_VALUE_*). */
enum { MOCK_WAIT_GEQ = 0, MOCK_WAIT_EQ = 1, MOCK_WAIT_AND = 2, MOCK_WAIT_NOR = 3 };

struct mock_op {
	enum mock_op_type type;
	uint64_t seq;
	uint64_t us;     /* MOP_KERNEL: simulated duration; MOP_SPIN: timeout */
	void *dst;       /* MOP_KERNEL: optional result word; COPY/SET/WAITVAL/WRITEVAL target;
	              * MOP_SPIN: status word (1 released, 2 timed out) */
	const void *src; /* MOP_SPIN: the host flag (uint32_t) */
	size_t n, elem;  /* bytes (COPY), elements and element size (SET, WAITVAL 4/8) */
	uint64_t value;
	int cond; /* MOP_WAITVAL */
	struct mock_event *ev;
	void (*fn)(void *);
	void *arg;
	struct mock_stream *dep_s; /* wait for dep_seq of dep_s first (stream wait event) */
	uint64_t dep_seq;
	/* implicit legacy-stream dependencies, filled by mock_submit */
	struct mock_stream **deps;
	uint64_t *dep_seqs;
	unsigned ndeps;
	struct mock_op *next;
};

/* Device dev's legacy default stream: NULL (the legacy stream above) for
 * device 0; for 0 < dev < MOCK_MAX_DEVICES a stream with the same implicit
 * synchronization, but only with the blocking streams of its device (the
 * HIP mock's KREX_MOCK_HIP_DEVICES).  Capture rules are modelled on
 * device 0 only. */
#define MOCK_MAX_DEVICES 8
struct mock_stream *mock_legacy(int dev);

/* The per-thread default stream of the calling thread. */
struct mock_stream *mock_per_thread(void);

/* Queue op (copied) on stream s (NULL: the legacy default stream); blocks
 * while the process has MOCK_QUEUE_MAX ops queued.  Returns its seq. */
uint64_t mock_submit(struct mock_stream *s, const struct mock_op *op);

/* Wait until every op of s up to seq has run; 1 if so (done). */
void mock_wait(struct mock_stream *s, uint64_t seq);
int mock_done(struct mock_stream *s, uint64_t seq);

/* Everything this process queued. */
void mock_sync_all(void);
/* Wait until every stream made in ctx (struct mock_stream's), and the legacy
 * streams, have done all they were given: a context's end. */
void mock_sync_ctx(const void *ctx);

/* Every op of stream s (NULL: legacy default stream). */
void mock_sync_stream(struct mock_stream *s);

/* Wait for s's work and stop its worker before s is freed. */
void mock_stream_release(struct mock_stream *s);

/* Kernels run by every process on the simulated GPU. */
uint64_t mock_kernels_total(void);

/* ---- stream capture --------------------------------------------------------- */

/* The calling thread's capture interaction mode: swap (*mode in and out). */
void mock_capture_exchange_mode(int *mode);

/* Start capturing s (not the legacy stream) in mode: 0, or -1. */
int mock_capture_begin(struct mock_stream *s, int mode);

/* End the capture of s: its ops as a graph (a list, caller frees with
 * mock_graph_free), NULL if the capture is empty.  Returns MOCK_CAP_ACTIVE
 * when it was valid, MOCK_CAP_INVALIDATED, or MOCK_CAP_NONE (s was not
 * capturing). */
int mock_capture_end(struct mock_stream *s, struct mock_op **graph);

/* Status of s (MOCK_CAP_*) and its capture id. */
int mock_capture_status(struct mock_stream *s, uint64_t *id);

/* Active captures of the process (tests). */
int mock_captures_active(void);

/*
 * A potentially unsafe call (synchronizing, querying, allocating) is about
 * to run in the calling thread; target is the stream or event's stream it
 * concerns (NULL: none), device_wide is 1 for a context/device synchronize.
 * Returns 0, or -1 when the call conflicts with a capture and must fail
 * (the conflicting captures are invalidated), as the CUDA driver does:
 *  - a device-wide synchronize invalidates every capture of the device,
 *    whatever the modes (measured on NVIDIA GPUs; cuCtxSynchronize and
 *    cudaDeviceSynchronize);
 *  - a call that concerns a capturing stream invalidates its capture;
 *  - a thread with a capture of its own not begun in relaxed mode may make
 *    no unsafe call;
 *  - a global-mode capture forbids unsafe calls to every thread not in
 *    relaxed mode.
 */
int mock_unsafe(struct mock_stream *target, int device_wide);

/* Route op to s's capture when s is capturing: 1 (captured), 0 (not
 * capturing: submit it), -1 when it is an implicit dependency on a
 * capturing stream (op on the legacy stream while a blocking stream
 * captures: the capture is invalidated and the call must fail). */
int mock_capture_op(struct mock_stream *s, const struct mock_op *op);

/* Queue every op of a graph on s. */
void mock_graph_launch(const struct mock_op *graph, struct mock_stream *s);
void mock_graph_free(struct mock_op *graph);

#define MOCK_QUEUE_MAX 1024

/* The runtime shut down, as in a process's exit after its teardown: 1 once
 * the file named by the environment variable env exists (then for good). */
int mock_deinitialized(const char *env);

/* An object of API (CUDA, HIP) used although it went with an ended context
 * or stream (a use after free on a real driver): says so and aborts. */
__attribute__((noreturn)) void mock_used_after_end(const char *api, const char *what,
                                                   const void *p);

#endif /* KREX_MOCK_GPU_H */
