/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gate_cuda_drain.c - what the CUDA backend's drain waits for: the contexts
 * and streams the process submitted to, the captures begun through the
 * gate, the drain itself, and the region warm-up in those contexts.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gate.h"
#include "conf.h"
#include "gate_cuda.h"
#include "krex/region.h"
#include "log.h"
#include "timeutil.h"

/* ---- what the drain waits for ----------------------------------------------- */

/*
 * The drain never synchronizes a context: cuCtxSynchronize from any thread
 * invalidates a stream capture in progress on the device, whatever the
 * capture modes (seen with PyTorch's CUDA graphs on the H200), and it waits
 * without a bound behind a kernel that only the host can release.  It waits
 * for events instead, polled with a deadline, in relaxed capture mode:
 *
 *  - every explicit stream the process submitted to (cu_strm, filled at
 *    each submission) gets an event recorded by the drain thread, unless it
 *    is capturing: then the event the gate recorded on it just before the
 *    capture began stands for its real work (captured work is not queued);
 *  - the default streams (legacy, and every thread's per-thread stream,
 *    which are blocking streams) are covered by one event on
 *    CU_STREAM_LEGACY per context, which waits for every blocking stream.
 *    That is illegal while a blocking stream captures (an implicit
 *    dependency invalidates the capture); the driver's own check,
 *    cuStreamIsCapturing(CU_STREAM_LEGACY), says when.  Then the event the
 *    gate recorded on the legacy stream when that capture began stands for
 *    the default streams, and a default-stream submission since then makes
 *    the drain report itself incomplete.
 *
 * Recording and the capture check are done under cu_cap_mu, which the
 * gate's cuStreamBeginCapture wrapper also holds, so no capture begins
 * between the check and the record.
 */
#define CU_MAX_CTX 64
#define CU_MAX_STREAMS 256

struct cu_ctx_slot {
	_Atomic(CUcontext) ctx;
	int dev;                /* its device (cuCtxGetDevice when first tracked), -1 unknown */
	_Atomic int dflt_dirty; /* a default-stream submission since the last cover */
	CUevent ev;             /* the drain's event on CU_STREAM_LEGACY */
	CUevent pre;            /* recorded on CU_STREAM_LEGACY as a capture began */
	int pre_valid;
};

enum { SS_FREE = 0, SS_CLAIMED = 1, SS_READY = 2 };
struct cu_strm {
	_Atomic int state;
	CUstream s;
	CUcontext ctx;
	CUevent ev;  /* the drain's event */
	CUevent pre; /* recorded just before a capture of s began */
	int pre_valid;
	int doomed; /* goes with the primary context (gate_cuda_release_scan()) */
};

static struct cu_ctx_slot cu_ctx[CU_MAX_CTX];
static struct cu_strm cu_strms[CU_MAX_STREAMS];
static pthread_mutex_t cu_cap_mu = PTHREAD_MUTEX_INITIALIZER;
static _Atomic int cu_strms_full;
/* The last stream this thread submitted to, valid while no stream has been
 * destroyed since (a new stream may get a destroyed one's handle). */
static _Atomic unsigned cu_destroys;
static __thread CUstream cu_last_stream;
static __thread CUcontext cu_last_ctx;
static __thread unsigned cu_last_gen;

static int is_default_stream(CUstream s)
{
	return (uintptr_t)s <= 2; /* 0, CU_STREAM_LEGACY, CU_STREAM_PER_THREAD */
}

static struct cu_ctx_slot *gate_cuda_ctx_slot(CUcontext c)
{
	CUcontext expect;
	int i;

	for (i = 0; i < CU_MAX_CTX; i++) {
		expect = atomic_load_explicit(&cu_ctx[i].ctx, memory_order_acquire);
		if (expect == c)
			return &cu_ctx[i];
		if (!expect && atomic_compare_exchange_strong(&cu_ctx[i].ctx, &expect, c)) {
			ctx_dev_fn getdev = gate_cuCtxGetDevice();
			CUdevice d;

			/* c is the caller's current context */
			cu_ctx[i].dev = getdev && getdev(&d) == CUDA_SUCCESS ? (int)d : -1;
			return &cu_ctx[i];
		}
		if (expect == c)
			return &cu_ctx[i];
	}
	return NULL;
}

/* Any context tracked?  Slots are freed by gate_cuda_context_end(). */
static int gate_cuda_any_ctx(void)
{
	int i;

	for (i = 0; i < CU_MAX_CTX; i++)
		if (atomic_load_explicit(&cu_ctx[i].ctx, memory_order_acquire))
			return 1;
	return 0;
}

static void gate_cuda_track_stream(CUstream s, CUcontext c)
{
	int i, expect;

	for (i = 0; i < CU_MAX_STREAMS; i++)
		if (atomic_load_explicit(&cu_strms[i].state, memory_order_acquire) == SS_READY &&
		    cu_strms[i].s == s)
			return;
	for (i = 0; i < CU_MAX_STREAMS; i++) {
		expect = SS_FREE;
		if (atomic_compare_exchange_strong(&cu_strms[i].state, &expect, SS_CLAIMED)) {
			if (cu_strms[i].ctx != c) /* events belong to their context */
				cu_strms[i].ev = cu_strms[i].pre = NULL;
			cu_strms[i].s = s;
			cu_strms[i].ctx = c;
			cu_strms[i].pre_valid = 0;
			cu_strms[i].doomed = 0;
			atomic_store_explicit(&cu_strms[i].state, SS_READY, memory_order_release);
			return;
		}
	}
	if (!atomic_exchange(&cu_strms_full, 1))
		log_warn(
		        "more than %d streams: the drain does not see the others (from now on it says it is incomplete)",
		        CU_MAX_STREAMS);
}

/* A submission to stream s (pt: a _ptsz/_ptds entry point) by this thread. */
CUcontext gate_cuda_track(CUstream s)
{
	ctx_get_fn get = gate_cuCtxGetCurrent();
	struct cu_ctx_slot *cs;
	CUcontext c = NULL;

	if (!get || get(&c) != CUDA_SUCCESS || !c)
		return NULL;
	if (is_default_stream(s)) {
		cs = gate_cuda_ctx_slot(c);
		if (cs && !atomic_load_explicit(&cs->dflt_dirty, memory_order_relaxed))
			atomic_store(&cs->dflt_dirty, 1);
		return c;
	}
	if (s == cu_last_stream && c == cu_last_ctx &&
	    cu_last_gen == atomic_load_explicit(&cu_destroys, memory_order_relaxed))
		return c;
	gate_cuda_ctx_slot(c);
	gate_cuda_track_stream(s, c);
	cu_last_stream = s;
	cu_last_ctx = c;
	cu_last_gen = atomic_load_explicit(&cu_destroys, memory_order_relaxed);
	return c;
}

static struct cu_strm *gate_cuda_find_stream(CUstream s)
{
	int i;

	for (i = 0; i < CU_MAX_STREAMS; i++)
		if (atomic_load_explicit(&cu_strms[i].state, memory_order_acquire) == SS_READY &&
		    cu_strms[i].s == s)
			return &cu_strms[i];
	return NULL;
}

static int gate_cuda_event(CUevent *ev)
{
	ev_create_fn create = gate_cuEventCreate();

	if (*ev)
		return 0;
	return create && create(ev, CU_EVENT_DISABLE_TIMING) == CUDA_SUCCESS ? 0 : -1;
}

/* Record *ev (created on first use) on s.  On failure *ev is forgotten (the
 * context it belonged to may be gone, its address reused): the next drain
 * creates another. */
static int gate_cuda_record(CUevent *ev, CUstream s)
{
	ev_record_fn record = gate_cuEventRecord();

	CUresult r = CUDA_ERROR_NOT_INITIALIZED;

	if (record && gate_cuda_event(ev) == 0 && (r = record(*ev, s)) == CUDA_SUCCESS)
		return 0;
	if (r == CUDA_ERROR_DEINITIALIZED)
		atomic_store(&gate_cuda_deinit_seen, 1);
	*ev = NULL;
	return -1;
}

/*
 * cuStreamBeginCapture wrapper, before the driver (cu_cap_mu held until
 * gate_cuda_capture_after): record on s the event that stands for its
 * queued work during the capture, and, when no blocking stream captures
 * yet, one on the legacy stream for the default streams.
 */
void gate_cuda_capture_before(CUstream s)
{
	ctx_get_fn get = gate_cuCtxGetCurrent();
	struct cu_ctx_slot *cs;
	struct cu_strm *st;
	CUcontext c = NULL;

	pthread_mutex_lock(&cu_cap_mu);
	if (!gate_joined() || !get || get(&c) != CUDA_SUCCESS || !c)
		return;
	cs = gate_cuda_ctx_slot(c);
	if (!is_default_stream(s)) {
		gate_cuda_track_stream(s, c);
		st = gate_cuda_find_stream(s);
		if (st && !gate_cuda_capturing(s))
			st->pre_valid = gate_cuda_record(&st->pre, s) == 0;
	}
	if (cs && !gate_cuda_capturing(CU_STREAM_LEGACY)) {
		atomic_store(&cs->dflt_dirty, 0);
		cs->pre_valid = gate_cuda_record(&cs->pre, CU_STREAM_LEGACY) == 0;
		if (!cs->pre_valid)
			atomic_store(&cs->dflt_dirty, 1);
	}
}

void gate_cuda_capture_after(void)
{
	pthread_mutex_unlock(&cu_cap_mu);
}

/*
 * The stream of this process's last kernel launch and its context: the warm
 * after a grant also runs there, since the owner's next timed launch most
 * likely goes to the same stream (H200: warming only a stream of the gate's
 * own left the first timed kernel slower; doc/performance.md).  A destroyed
 * stream is forgotten (gate_cuda_destroy_before).
 */
static _Atomic(CUcontext) cu_warm_last_ctx;
static _Atomic(CUstream) cu_warm_last_stream;

/* cuStreamDestroy: forget s before the driver does, under cu_cap_mu, so
 * the drain and the warm-up never use a destroyed stream.  Not held across
 * the driver's call. */
void gate_cuda_destroy_before(CUstream s)
{
	struct cu_strm *st;
	CUstream w = s;

	pthread_mutex_lock(&cu_cap_mu);
	atomic_compare_exchange_strong(&cu_warm_last_stream, &w, NULL);
	st = gate_cuda_find_stream(s);
	if (st) {
		/* the events stay with the slot for the next stream */
		st->s = NULL;
		st->pre_valid = 0;
		atomic_store(&st->state, SS_FREE);
	}
	atomic_fetch_add(&cu_destroys, 1);
	pthread_mutex_unlock(&cu_cap_mu);
}

/*
 * Does s still have work in flight (asked in a drain's first round, from
 * the submitting thread)?  cuStreamQuery in relaxed capture mode; a stream
 * being captured queues nothing, so it is not busy.
 */
int gate_cuda_stream_busy(void *stream)
{
	CUstream s = (CUstream)stream;
	stream_query_fn query = gate_cuStreamQuery();
	CUstreamCaptureMode m;
	CUresult r;
	int relaxed;

	if (!query || gate_cuda_capturing(s))
		return 0;
	relaxed = gate_relax(gate_cuThreadExchangeStreamCaptureMode(), &m);
	r = query(s);
	gate_unrelax(gate_cuThreadExchangeStreamCaptureMode(), relaxed, &m);
	return r == CUDA_ERROR_NOT_READY;
}

#define CU_MAX_TARGETS (CU_MAX_STREAMS + CU_MAX_CTX)

/*
 * Wait for what the process queued, until deadline (ns, CLOCK_MONOTONIC).
 * Returns 0, or -1 when it could not (late: the deadline passed, e.g.
 * behind a kernel only the host releases; incomplete: work it could not
 * see), logged.
 */
/* Is the driver shut down (CUDA_ERROR_DEINITIALIZED: the process is in
 * exit, past the runtime's teardown)?  1 or 0. */
static int gate_cuda_deinit(void)
{
	ctx_get_fn get = gate_cuCtxGetCurrent();
	CUcontext c;

	return atomic_load(&gate_cuda_deinit_seen) || (get && get(&c) == CUDA_ERROR_DEINITIALIZED);
}

int gate_cuda_drain(uint64_t deadline)
{
	ctx_push_fn push = gate_cuCtxPushCurrent_v2();
	ctx_get_fn pop = gate_cuCtxPopCurrent_v2();
	CUstreamCaptureMode mode;
	CUevent targets[CU_MAX_TARGETS];
	int i, j, n = 0, left, incomplete = 0, relaxed;
	struct cu_ctx_slot *cs;
	CUcontext c, old;

	if (!gate_cuda_any_ctx())
		return 0; /* never submitted */
	if (!push || !pop)
		return -1;
	relaxed = gate_relax(gate_cuThreadExchangeStreamCaptureMode(), &mode);
	pthread_mutex_lock(&cu_cap_mu);
	for (i = 0; i < CU_MAX_CTX; i++) {
		cs = &cu_ctx[i];
		c = atomic_load(&cs->ctx);
		if (!c)
			continue;
		if (push(c) != CUDA_SUCCESS)
			continue; /* destroyed since (its work with it) */
		if (!gate_cuda_capturing(CU_STREAM_LEGACY)) {
			atomic_store(&cs->dflt_dirty, 0);
			if (gate_cuda_record(&cs->ev, CU_STREAM_LEGACY) == 0)
				targets[n++] = cs->ev;
			else
				incomplete++;
		} else {
			/* a blocking stream captures: the legacy stream is out of reach */
			if (cs->pre_valid)
				targets[n++] = cs->pre;
			if (atomic_load(&cs->dflt_dirty))
				incomplete++;
		}
		for (j = 0; j < CU_MAX_STREAMS; j++) {
			struct cu_strm *st = &cu_strms[j];

			if (atomic_load(&st->state) != SS_READY || st->ctx != c)
				continue;
			if (!gate_cuda_capturing(st->s)) {
				if (gate_cuda_record(&st->ev, st->s) == 0)
					targets[n++] = st->ev;
				else
					incomplete++;
			} else if (st->pre_valid) {
				targets[n++] = st->pre; /* its work before the capture */
			} else {
				incomplete++; /* a capture the gate did not see begin */
			}
		}
		pop(&old);
	}
	pthread_mutex_unlock(&cu_cap_mu);
	if (atomic_load(&cu_strms_full))
		incomplete++; /* a stream past CU_MAX_STREAMS was never seen */
	/* Poll, never block: a kernel the host releases may never end while
	 * the host waits at the gate. */
	left = gate_poll_events(gate_cuda_query, (void **)targets, n, deadline, &incomplete);
	gate_unrelax(gate_cuThreadExchangeStreamCaptureMode(), relaxed, &mode);
	if (left) {
		log_info(
		        "drain: %d streams still busy at the deadline (work the host must release?)",
		        left);
	}
	if ((left || incomplete) && gate_cuda_deinit())
		return KREX_DRAIN_EXITING; /* the process exits: its contexts go */
	if (incomplete) {
		log_info(
		        "drain: %d streams could not be waited for (capture, destroyed stream, more streams than the gate tracks)",
		        incomplete);
	}
	return left || incomplete ? -1 : 0;
}

/* ---- region warm-up (in the owner, after a grant) ---------------------------- */

#include "warm_ptx.h"
#define CU_ATTR_MULTIPROCESSOR_COUNT 16

void gate_cuda_note_launch(CUcontext c, CUstream s)
{
	/* NULL here is the legacy default stream (a _ptsz launch's NULL is
	 * CU_STREAM_PER_THREAD already); NULL in cu_warm_last_stream means none
	 * known, and the warm-up would use a stream of its own instead */
	if (!s)
		s = CU_STREAM_LEGACY;
	atomic_store_explicit(&cu_warm_last_stream, s, memory_order_relaxed);
	atomic_store_explicit(&cu_warm_last_ctx, c, memory_order_relaxed);
}

/*
 * The warm-up's own stream, events and kernel in each tracked context (made
 * once).  The events time the warm kernel as a benchmark times a sample
 * (start event, launch, end event, wait, elapsed time): after a region's
 * round trips the host's first calls of each kind are slow (H200: a
 * sample's start-event record 0.9-1.6 us alone, 2.3-3.5 us after a grant
 * until the warm-up also ran on the sample's own stream, doc/performance.md
 * "One region per sample").
 */
static struct {
	CUstream stream;
	CUevent start, event;
	CUfunction fn;
	unsigned blocks;
} cu_warm[CU_MAX_CTX];

/* Make slot i's stream, event and kernel in the current context; 0 or -1. */
static int gate_cuda_warm_make(int i)
{
	stream_create_fn mks = gate_cuStreamCreate();
	ev_create_fn mke = gate_cuEventCreate();
	mod_load_fn load = gate_cuModuleLoadData();
	mod_fn_fn getfn = gate_cuModuleGetFunction();
	ctx_dev_fn getdev = gate_cuCtxGetDevice();
	dev_attr_fn attr = gate_cuDeviceGetAttribute();
	CUmodule m;
	CUdevice d;
	int sms = 0;

	if (cu_warm[i].fn)
		return 0;
	if (!mks || !mke || !load || !getfn)
		return -1;
	if (!cu_warm[i].stream && mks(&cu_warm[i].stream, CU_STREAM_NON_BLOCKING) != CUDA_SUCCESS)
		return cu_warm[i].stream = NULL, -1;
	if (!cu_warm[i].start && mke(&cu_warm[i].start, 0) != CUDA_SUCCESS)
		return cu_warm[i].start = NULL, -1;
	if (!cu_warm[i].event && mke(&cu_warm[i].event, 0) != CUDA_SUCCESS)
		return cu_warm[i].event = NULL, -1;
	if (load(&m, cu_warm_ptx) != CUDA_SUCCESS ||
	    getfn(&cu_warm[i].fn, m, "krex_warm") != CUDA_SUCCESS)
		return cu_warm[i].fn = NULL, -1;
	if (getdev && attr && getdev(&d) == CUDA_SUCCESS)
		attr(&sms, CU_ATTR_MULTIPROCESSOR_COUNT, d);
	cu_warm[i].blocks = sms > 0 && sms < 4096 ? (unsigned)sms : 1;
	return 0;
}

/*
 * The warm-up kernel of slot i on stream s (one block of 128 threads per
 * multiprocessor) between the slot's two events (under cu_cap_mu); not on a
 * stream being captured.  0 or -1.
 */
static int gate_cuda_warm_launch(int i, CUstream s)
{
	launch_fn launch = gate_cuLaunchKernel();
	ev_record_fn rec = gate_cuEventRecord();

	if (!launch || !rec || gate_cuda_warm_make(i) < 0)
		return -1;
	if (!s)
		s = cu_warm[i].stream;
	if (gate_cuda_capturing(s))
		return -1;
	if (rec(cu_warm[i].start, s) != CUDA_SUCCESS ||
	    launch(cu_warm[i].fn, cu_warm[i].blocks, 1, 1, 128, 1, 1, 0, s, NULL, NULL) !=
	            CUDA_SUCCESS ||
	    rec(cu_warm[i].event, s) != CUDA_SUCCESS)
		return -1;
	return 0;
}

/*
 * Poll slot i's event for at most CU_WARM_WAIT_NS (a stream of the owner's
 * may hold work that only its host releases), then ask the time between the
 * slot's two events into *ms (-1 when the driver gave none).  Needs no lock:
 * the events are the gate's, and outlive the stream they were recorded on.
 * 0 or -1.
 */
#define CU_WARM_WAIT_NS (100 * 1000 * 1000ull)
static int gate_cuda_warm_wait(int i, float *ms)
{
	ev_sync_fn query = gate_cuEventQuery();
	uint64_t end = time_now_ns() + CU_WARM_WAIT_NS;
	CUresult r;
	ev_elapsed_fn el = gate_cuEventElapsedTime_v2();

	*ms = -1;
	if (!el)
		el = gate_cuEventElapsedTime();
	if (!query)
		return -1;
	while ((r = query(cu_warm[i].event)) == CUDA_ERROR_NOT_READY && time_now_ns() < end)
		;
	if (r != CUDA_SUCCESS)
		return -1;
	if (el && el(ms, cu_warm[i].start, cu_warm[i].event) != CUDA_SUCCESS)
		*ms = -1;
	return 0;
}

/*
 * Is every stream this process launched on in context c (slot i's) idle?
 * Checked before a warm kernel goes to the legacy default stream: there it
 * waits for all earlier work of the context's blocking streams and all
 * their later work waits for it, so behind a blocking stream's work that
 * only the host releases it could hold up the very work the host waits for
 * before it releases it.  Under cu_cap_mu (no stream destroyed meanwhile),
 * in relaxed capture mode, c current.  Not seen: work another thread left on
 * its own per-thread default stream.  1 or 0.
 */
static int gate_cuda_ctx_idle(CUcontext c)
{
	stream_query_fn query = gate_cuStreamQuery();
	int i;

	if (!query || query(CU_STREAM_PER_THREAD) != CUDA_SUCCESS) /* this thread's */
		return 0;
	for (i = 0; i < CU_MAX_STREAMS; i++)
		if (atomic_load_explicit(&cu_strms[i].state, memory_order_acquire) == SS_READY &&
		    cu_strms[i].ctx == c &&
		    (gate_cuda_capturing(cu_strms[i].s) || query(cu_strms[i].s) != CUDA_SUCCESS))
			return 0; /* a capturing stream is never queried: that would end its capture */
	return 1;
}

/* Launch and wait: one round of the warm-up on stream s (NULL: the gate's). */
static int gate_cuda_warm_on(int i, CUstream s, float *ms)
{
	return gate_cuda_warm_launch(i, s) < 0 ? -1 : gate_cuda_warm_wait(i, ms);
}

/*
 * KREX_REGION_WARM_US: how long, in microseconds from the grant, the warm-up
 * goes on (warm kernels one after another on the last launch's stream, the
 * host thread polling, never sleeping); 0 (the default): one round.  Bad or
 * out of range: 0, said once.
 */
#define CU_WARM_US_MAX 100000L
static long gate_cuda_warm_us(void)
{
	static int said;

	return (long)conf_env_uint("KREX_REGION_WARM_US", CU_WARM_US_MAX, 0, &said, "microseconds",
	                           "one round");
}

int gate_cuda_warm(void)
{
	ctx_push_fn push = gate_cuCtxPushCurrent_v2();
	ctx_get_fn pop = gate_cuCtxPopCurrent_v2();
	CUstreamCaptureMode mode;
	const char *how = getenv("KREX_REGION_WARM");
	int on_last = !how || strcmp(how, "ctx") != 0;
	CUcontext last = atomic_load(&cu_warm_last_ctx), c, old;
	CUstream last_s;
	uint64_t t0 = time_now_ns(), until = t0 + (uint64_t)gate_cuda_warm_us() * 1000u;
	int i, rc = 0, relaxed, rounds = 0, no_legacy;
	float ms = -1;
	const char *where = "none of the owner's";
	char timed[48] = "untimed";

	if (!push || !pop)
		return -1;
	/* Relaxed for this thread: a capture elsewhere in the process stays
	 * valid; cu_cap_mu: no capture begins between the check and the launch. */
	relaxed = gate_relax(gate_cuThreadExchangeStreamCaptureMode(), &mode);
	pthread_mutex_lock(&cu_cap_mu);
	last_s = atomic_load(&cu_warm_last_stream); /* under cu_cap_mu: not destroyed */
	for (i = 0; i < CU_MAX_CTX; i++) {
		c = atomic_load(&cu_ctx[i].ctx);
		if (!c)
			continue;
		if (push(c) != CUDA_SUCCESS)
			continue; /* destroyed since */
		if (gate_cuda_warm_on(i, NULL, &ms) < 0)
			rc = -1;
		no_legacy = on_last && c == last && last_s == CU_STREAM_LEGACY &&
		            !gate_cuda_ctx_idle(c);
		if (no_legacy) {
			where = "none of the owner's (the legacy default stream skipped: a stream of the owner's busy)";
		} else if (on_last && c == last && last_s && last_s != cu_warm[i].stream) {
			where = last_s == CU_STREAM_LEGACY       ? "the legacy default stream"
			        : last_s == CU_STREAM_PER_THREAD ? "the per-thread default stream"
			                                         : "the last launch's stream";
			if (gate_cuda_warm_on(i, last_s, &ms) < 0)
				rc = -1;
		}
		/* warm by time: the last launch's context (else the first), to the
		 * deadline; each round's launch under cu_cap_mu, its wait without it
		 * (a capture or a stream's destruction in another thread waits for a
		 * launch, not for the whole time) */
		while (rc == 0 && (c == last || (!last && i == 0)) && time_now_ns() < until) {
			last_s = atomic_load(&cu_warm_last_stream); /* NULL once destroyed */
			if (last_s == CU_STREAM_LEGACY && (no_legacy || !gate_cuda_ctx_idle(c)))
				last_s = NULL;
			rounds++;
			if (gate_cuda_warm_launch(i, on_last ? last_s : NULL) < 0) {
				rc = -1;
				break;
			}
			pthread_mutex_unlock(&cu_cap_mu);
			if (gate_cuda_warm_wait(i, &ms) < 0)
				rc = -1;
			pthread_mutex_lock(&cu_cap_mu);
		}
		pop(&old);
	}
	pthread_mutex_unlock(&cu_cap_mu);
	gate_unrelax(gate_cuThreadExchangeStreamCaptureMode(), relaxed, &mode);
	if (ms >= 0)
		snprintf(timed, sizeof(timed), "timed %.3f ms by its events", (double)ms);
	log_debug(
	        "region warm-up (CUDA): %d more kernel(s) by time, %llu us in all; last kernel %s; streams: the gate's and %s",
	        rounds, (unsigned long long)((time_now_ns() - t0) / 1000), timed, where);
	return rc;
}

/* Forget a tracked stream (cu_cap_mu held): its events are not destroyed. */
static void gate_cuda_strm_free(struct cu_strm *st)
{
	atomic_store(&st->state, SS_FREE);
	st->s = NULL;
	st->ctx = NULL;
	st->ev = st->pre = NULL;
	st->pre_valid = 0;
	st->doomed = 0;
}

/*
 * cuCtxDestroy (c) or cuDevicePrimaryCtxReset (dev; c NULL): inside the gate,
 * before the driver.  Forget that context (a reset: every context tracked
 * on dev, or of an unknown device; every context with dev < 0), its
 * streams, events and warm-up objects, under cu_cap_mu: they go with it,
 * and a drain or warm-up that used one would use freed memory inside the
 * driver.  Their events are not destroyed (the driver does).  A live
 * context forgotten with them is tracked again at its next submission.
 * A reset forgets every context of dev, not only the primary one: the
 * driver's contract (cuDevicePrimaryCtxReset, cudaDeviceReset) is that it
 * cleans up every resource of the device in the process and that nothing
 * else in the process uses the device then, and a stream is tracked under
 * the context current at its submissions, not always its own, so keeping
 * another context's would risk a drain on freed memory.
 */
static void gate_cuda_ctx_end(CUcontext c, int dev, int (*keep)(CUcontext))
{
	CUstream w;
	int i, j;

	gate_context_end();
	pthread_mutex_lock(&cu_cap_mu);
	for (i = 0; i < CU_MAX_CTX; i++) {
		CUcontext x = atomic_load(&cu_ctx[i].ctx);

		if (!x || (c ? x != c : dev >= 0 && cu_ctx[i].dev >= 0 && cu_ctx[i].dev != dev))
			continue;
		if (keep && keep(x)) {
			for (j = 0; j < CU_MAX_STREAMS; j++)
				if (cu_strms[j].ctx == x && cu_strms[j].doomed)
					gate_cuda_strm_free(&cu_strms[j]);
			continue;
		}
		for (j = 0; j < CU_MAX_STREAMS; j++)
			if (cu_strms[j].ctx == x)
				gate_cuda_strm_free(&cu_strms[j]);
		cu_ctx[i].ev = cu_ctx[i].pre = NULL;
		cu_ctx[i].pre_valid = 0;
		atomic_store(&cu_ctx[i].dflt_dirty, 0);
		memset(&cu_warm[i], 0, sizeof(cu_warm[i]));
		if (atomic_load(&cu_warm_last_ctx) == x) {
			atomic_store(&cu_warm_last_ctx, NULL);
			w = atomic_load(&cu_warm_last_stream);
			atomic_compare_exchange_strong(&cu_warm_last_stream, &w, NULL);
		}
		atomic_store(&cu_ctx[i].ctx, NULL);
	}
	atomic_fetch_add(&cu_destroys, 1);
	pthread_mutex_unlock(&cu_cap_mu);
}

void gate_cuda_context_end(CUcontext c, int dev)
{
	gate_cuda_ctx_end(c, dev, NULL);
}

void gate_cuda_primary_end(int dev, int (*keep)(CUcontext))
{
	gate_cuda_ctx_end(NULL, dev, keep);
}

void gate_cuda_release_scan(int (*keep)(CUcontext))
{
	stream_ctx_fn of = gate_cuStreamGetCtx();
	struct cu_strm *st;
	CUcontext x;
	int j;

	pthread_mutex_lock(&cu_cap_mu);
	for (j = 0; j < CU_MAX_STREAMS; j++) {
		st = &cu_strms[j];
		if (atomic_load(&st->state) != SS_READY)
			continue;
		x = NULL;
		st->doomed = keep && keep(st->ctx) &&
		             (!of || of(st->s, &x) != CUDA_SUCCESS || x != st->ctx);
	}
	pthread_mutex_unlock(&cu_cap_mu);
}

/* cuCtxGetDevice_v2 (CUDA 13), else cuCtxGetDevice when c is current, else
 * the device noted when c was first tracked. */
int gate_cuda_ctx_dev(CUcontext c)
{
	ctx_dev2_fn v2 = gate_cuCtxGetDevice_v2();
	ctx_dev_fn v1 = gate_cuCtxGetDevice();
	ctx_get_fn get = gate_cuCtxGetCurrent();
	CUcontext cur = NULL;
	CUdevice d;
	int i;

	if (v2 && v2(&d, c) == CUDA_SUCCESS)
		return (int)d;
	if (v1 && get && get(&cur) == CUDA_SUCCESS && cur == c && v1(&d) == CUDA_SUCCESS)
		return (int)d;
	for (i = 0; i < CU_MAX_CTX; i++)
		if (atomic_load(&cu_ctx[i].ctx) == c)
			return cu_ctx[i].dev;
	return -1;
}

/*
 * cuGreenCtxDestroy leaves the green context's streams in place, every later
 * call on them failing (CUDA_ERROR_CONTEXT_IS_DESTROYED): a drain recording
 * there would find its process's work out of reach at every region.  Such a
 * stream may have been tracked under another context (the one current at
 * its submissions), so it is found by its green context.
 */
void gate_cuda_green_end(CUgreenCtx g, CUcontext c)
{
	stream_green_fn green_of = gate_cuStreamGetGreenCtx();
	CUgreenCtx x;
	int j;

	pthread_mutex_lock(&cu_cap_mu);
	for (j = 0; j < CU_MAX_STREAMS && green_of; j++) {
		x = NULL;
		if (atomic_load(&cu_strms[j].state) == SS_READY &&
		    green_of(cu_strms[j].s, &x) == CUDA_SUCCESS && x == g)
			gate_cuda_strm_free(&cu_strms[j]);
	}
	pthread_mutex_unlock(&cu_cap_mu);
	if (c) {
		gate_cuda_context_end(c, -1); /* bumps both generations too */
		return;
	}
	gate_context_end();
	atomic_fetch_add(&cu_destroys, 1);
}

void gate_cuda_forget(void)
{
	int i;

	for (i = 0; i < CU_MAX_CTX; i++) {
		atomic_store(&cu_ctx[i].ctx, NULL);
		cu_ctx[i].ev = cu_ctx[i].pre = NULL;
		cu_ctx[i].pre_valid = 0;
	}
	for (i = 0; i < CU_MAX_STREAMS; i++) {
		atomic_store(&cu_strms[i].state, SS_FREE);
		cu_strms[i].ev = cu_strms[i].pre = NULL;
		cu_strms[i].pre_valid = 0;
	}
	atomic_store(&cu_strms_full, 0);
	pthread_mutex_init(&cu_cap_mu, NULL);
	cu_last_stream = NULL;
	/* the parent's warm-up handles mean nothing in a child */
	memset(cu_warm, 0, sizeof(cu_warm));
	atomic_store(&cu_warm_last_ctx, NULL);
	atomic_store(&cu_warm_last_stream, NULL);
}
