/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gate_cuda.c - the CUDA driver API side of the gate: one wrapper per
 * (hooked symbol, per-thread variant) generated from cuda_hooks.def, the
 * cuGetProcAddress(_v2) dispatch, the contexts to drain and the bounded queue.
 */
#include "config.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gate.h"
#include "gate_queue.h"
#include "gate_types.h"
#include "log.h"
#include "timeutil.h"

/* ---- the hook table ------------------------------------------------------- */

enum cu_hook_id {
#define CU_HOOK(PT, name, proc, since, kind, params, args, stream) CUH_##name,
#include "cuda_hooks.def"
#undef CU_HOOK
	CUH_COUNT
};

/* Prototypes of every wrapper (they are exported under the driver's names). */
#define CU_DECL_NONE(name, params)
#define CU_DECL_PTDS(name, params) GATE_EXPORT CUresult name##_ptds params;
#define CU_DECL_PTSZ(name, params) GATE_EXPORT CUresult name##_ptsz params;
#define CU_HOOK(PT, name, proc, since, kind, params, args, stream)                                 \
	GATE_EXPORT CUresult name params;                                                          \
	CU_DECL_##PT(name, params)
#include "cuda_hooks.def"
#undef CU_HOOK

struct cu_hook {
	const char *name[2]; /* exported symbol; its per-thread variant or NULL */
	const char *proc;    /* name given to cuGetProcAddress */
	int since;           /* lowest cudaVersion that maps proc to this symbol */
	int kind;
	void *wrapper[2];
};

#define CU_VNAME_NONE(name) NULL
#define CU_VNAME_PTDS(name) #name "_ptds"
#define CU_VNAME_PTSZ(name) #name "_ptsz"
#define CU_VWRAP_NONE(name) NULL
#define CU_VWRAP_PTDS(name) (void *)name##_ptds
#define CU_VWRAP_PTSZ(name) (void *)name##_ptsz
static const struct cu_hook cu_hooks[CUH_COUNT] = {
#define CU_HOOK(PT, name, proc, since, kind, params, args, stream)                                 \
	{{#name, CU_VNAME_##PT(name)}, #proc, since, kind, {(void *)name, CU_VWRAP_##PT(name)}},
#include "cuda_hooks.def"
#undef CU_HOOK
};

/* The real function per (hook, variant): from the driver's handle, from the
 * application's dlsym, or from cuGetProcAddress, whichever came first. */
static _Atomic(void *) cu_real[CUH_COUNT][2];
static _Atomic unsigned long cu_count[CUH_COUNT][2];

/* ---- the driver's handle and the few unhooked functions the gate calls -- */

static _Atomic(void *) cu_handle;

static void *gate_cuda_handle(void)
{
	static const char *const names[] = {"libcuda.so.1", "libcuda.so", NULL};
	void *h = atomic_load(&cu_handle);

	if (!h) {
		h = gate_open_first(names);
		if (h)
			atomic_store(&cu_handle, h);
	}
	return h;
}

/* Resolve an unhooked driver function (cuCtxSynchronize...) once. */
static void *gate_cuda_sym(_Atomic(void *) *slot, const char *name)
{
	void *p = atomic_load_explicit(slot, memory_order_acquire);
	void *h;

	if (p)
		return p;
	h = gate_cuda_handle();
	p = h ? gate_real_dlsym(h, name) : NULL;
	if (p)
		atomic_store_explicit(slot, p, memory_order_release);
	return p;
}

#define CU_SYM(type, name)                                                                         \
	static _Atomic(void *) sym_##name;                                                         \
	static type gate_##name(void)                                                              \
	{                                                                                          \
		return (type)gate_cuda_sym(&sym_##name, #name);                                    \
	}
typedef CUresult (*ctx_get_fn)(CUcontext *);
typedef CUresult (*ctx_push_fn)(CUcontext);
typedef CUresult (*ev_create_fn)(CUevent *, unsigned int);
typedef CUresult (*ev_record_fn)(CUevent, CUstream);
typedef CUresult (*ev_sync_fn)(CUevent);
typedef CUresult (*ev_elapsed_fn)(float *, CUevent, CUevent);
typedef CUresult (*is_capturing_fn)(CUstream, int *);
typedef CUresult (*exchange_mode_fn)(CUstreamCaptureMode *);
typedef CUresult (*stream_create_fn)(CUstream *, unsigned int);
typedef CUresult (*mod_load_fn)(CUmodule *, const void *);
typedef CUresult (*mod_fn_fn)(CUfunction *, CUmodule, const char *);
typedef CUresult (*ctx_dev_fn)(CUdevice *);
typedef CUresult (*dev_attr_fn)(int *, int, CUdevice);
typedef CUresult (*launch_fn)(CUfunction, unsigned int, unsigned int, unsigned int, unsigned int,
                              unsigned int, unsigned int, unsigned int, CUstream, void **, void **);
CU_SYM(ctx_get_fn, cuCtxGetCurrent)
CU_SYM(ctx_push_fn, cuCtxPushCurrent_v2)
CU_SYM(ctx_get_fn, cuCtxPopCurrent_v2)
CU_SYM(ev_create_fn, cuEventCreate)
CU_SYM(ev_record_fn, cuEventRecord)
CU_SYM(ev_sync_fn, cuEventSynchronize)
CU_SYM(ev_sync_fn, cuEventQuery)
CU_SYM(ev_elapsed_fn, cuEventElapsedTime_v2)
CU_SYM(ev_elapsed_fn, cuEventElapsedTime)
CU_SYM(is_capturing_fn, cuStreamIsCapturing)
CU_SYM(exchange_mode_fn, cuThreadExchangeStreamCaptureMode)
CU_SYM(stream_create_fn, cuStreamCreate)
CU_SYM(mod_load_fn, cuModuleLoadData)
CU_SYM(mod_fn_fn, cuModuleGetFunction)
CU_SYM(ctx_dev_fn, cuCtxGetDevice)
CU_SYM(dev_attr_fn, cuDeviceGetAttribute)
CU_SYM(launch_fn, cuLaunchKernel)

/* The real function for (id, pt), resolving it from the handle the first
 * time; never one of our own wrappers (that would recurse). */
static void *gate_cuda_real(int id, int pt)
{
	void *p = atomic_load_explicit(&cu_real[id][pt], memory_order_acquire);
	void *h, *expect = NULL;

	if (p)
		return p;
	h = gate_cuda_handle();
	if (!h || !cu_hooks[id].name[pt])
		return NULL;
	p = gate_real_dlsym(h, cu_hooks[id].name[pt]);
	if (!p || p == cu_hooks[id].wrapper[pt])
		return NULL;
	if (!atomic_compare_exchange_strong(&cu_real[id][pt], &expect, p))
		p = expect;
	return p;
}

/* Remember p as the real (id, pt) unless one is known; returns the wrapper. */
static void *gate_cuda_adopt(int id, int pt, void *p)
{
	void *expect = NULL;

	if (p == cu_hooks[id].wrapper[pt])
		return p;
	if (!atomic_compare_exchange_strong(&cu_real[id][pt], &expect, p) && expect != p)
		log_debug("%s: keeping the first real pointer", cu_hooks[id].name[pt]);
	return cu_hooks[id].wrapper[pt];
}

/*
 * Every event call of the gate's own (the drain, the warm-up, the bounded
 * queue's on the application's launching thread) runs in relaxed capture
 * mode: in the thread's own mode (global by default) cuEventQuery and friends
 * are "potentially unsafe", and with another thread of the process capturing
 * in global mode they invalidate that capture (seen on the H200 with a CUDA
 * runtime program).  The thread's own mode is put back after.
 */
static int cu_relax(CUstreamCaptureMode *m)
{
	exchange_mode_fn xmode = gate_cuThreadExchangeStreamCaptureMode();

	*m = CU_STREAM_CAPTURE_MODE_RELAXED;
	return xmode && xmode(m) == CUDA_SUCCESS;
}

static void cu_unrelax(int relaxed, CUstreamCaptureMode *m)
{
	exchange_mode_fn xmode = gate_cuThreadExchangeStreamCaptureMode();

	if (relaxed && xmode)
		xmode(m);
}

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
		if (!expect && atomic_compare_exchange_strong(&cu_ctx[i].ctx, &expect, c))
			return &cu_ctx[i];
		if (expect == c)
			return &cu_ctx[i];
	}
	return NULL;
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
			atomic_store_explicit(&cu_strms[i].state, SS_READY, memory_order_release);
			return;
		}
	}
	if (!atomic_exchange(&cu_strms_full, 1))
		log_warn("more than %d streams: the drain does not see the others", CU_MAX_STREAMS);
}

/* A submission to stream s (pt: a _ptsz/_ptds entry point) by this thread. */
static CUcontext gate_cuda_track(CUstream s)
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

/* 1 when stream s (or CU_STREAM_LEGACY) may not be recorded on: capturing,
 * or for the legacy stream a blocking stream capturing. */
static int gate_cuda_capturing(CUstream s)
{
	is_capturing_fn f = gate_cuStreamIsCapturing();
	int st = 0;

	if (!f)
		return 0; /* a driver without capture */
	if (f(s, &st) != CUDA_SUCCESS)
		return 1;
	return st != 0;
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

	if (record && gate_cuda_event(ev) == 0 && record(*ev, s) == CUDA_SUCCESS)
		return 0;
	*ev = NULL;
	return -1;
}

/*
 * cuStreamBeginCapture wrapper, before the driver (cu_cap_mu held until
 * gate_cuda_capture_after): record on s the event that stands for its
 * queued work during the capture, and, when no blocking stream captures
 * yet, one on the legacy stream for the default streams.
 */
static void gate_cuda_capture_before(CUstream s)
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

static void gate_cuda_capture_after(void)
{
	pthread_mutex_unlock(&cu_cap_mu);
}

/* cuStreamDestroy: forget s before the driver does, under cu_cap_mu, so
 * the drain never records on a destroyed stream.  Not held across the
 * driver's call. */
static void gate_cuda_destroy_before(CUstream s)
{
	struct cu_strm *st;

	pthread_mutex_lock(&cu_cap_mu);
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

#define CU_MAX_TARGETS (CU_MAX_STREAMS + CU_MAX_CTX)

static int cu_gq_query(void *ev);

/*
 * Wait for what the process queued, until deadline (ns, CLOCK_MONOTONIC).
 * Returns 0, or -1 when it could not (late: the deadline passed, e.g.
 * behind a kernel only the host releases; incomplete: work it could not
 * see), logged.
 */
int gate_cuda_drain(uint64_t deadline)
{
	ctx_push_fn push = gate_cuCtxPushCurrent_v2();
	ctx_get_fn pop = gate_cuCtxPopCurrent_v2();
	CUstreamCaptureMode mode;
	CUevent targets[CU_MAX_TARGETS];
	int i, j, n = 0, left, incomplete = 0, relaxed;
	struct cu_ctx_slot *cs;
	CUcontext c, old;

	if (!atomic_load(&cu_ctx[0].ctx))
		return 0; /* never submitted */
	if (!push || !pop)
		return -1;
	relaxed = cu_relax(&mode);
	pthread_mutex_lock(&cu_cap_mu);
	for (i = 0; i < CU_MAX_CTX; i++) {
		cs = &cu_ctx[i];
		c = atomic_load(&cs->ctx);
		if (!c)
			break;
		if (push(c) != CUDA_SUCCESS)
			continue; /* destroyed since */
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
	/* Poll, never block: a kernel the host releases may never end while
	 * the host waits at the gate. */
	left = gate_poll_events(cu_gq_query, (void **)targets, n, deadline, &incomplete);
	cu_unrelax(relaxed, &mode);
	if (left) {
		log_info(
		        "drain: %d streams still busy at the deadline (work the host must release?)",
		        left);
	}
	if (incomplete) {
		log_info("drain: %d streams could not be waited for (capture, destroyed stream)",
		         incomplete);
	}
	return left || incomplete ? -1 : 0;
}

/* ---- region warm-up (in the owner, after a grant) ---------------------------- */

#include "warm_ptx.h"
#define CU_ATTR_MULTIPROCESSOR_COUNT 16

/*
 * The stream of this process's last kernel launch and its context: the warm
 * after a grant also runs there, since the owner's next timed launch most
 * likely goes to the same stream (H200: warming only a stream of the gate's
 * own left the first timed kernel slower; doc/performance.md).
 */
static _Atomic(CUcontext) cu_warm_last_ctx;
static _Atomic(CUstream) cu_warm_last_stream;

static void gate_cuda_note_launch(CUcontext c, CUstream s)
{
	atomic_store_explicit(&cu_warm_last_stream, s, memory_order_relaxed);
	atomic_store_explicit(&cu_warm_last_ctx, c, memory_order_relaxed);
}

/* The warm-up's own stream, event and kernel in each tracked context (made once). */
static struct {
	CUstream stream;
	CUevent event;
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
	if (!cu_warm[i].event && mke(&cu_warm[i].event, CU_EVENT_DISABLE_TIMING) != CUDA_SUCCESS)
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
 * multiprocessor), then an event there, polled for at most CU_WARM_WAIT_NS:
 * a stream of the owner's may hold work that only its host releases.  Not on
 * a stream being captured.  0 or -1.
 */
#define CU_WARM_WAIT_NS (100 * 1000 * 1000ull)
static int gate_cuda_warm_on(int i, CUstream s)
{
	launch_fn launch = gate_cuLaunchKernel();
	ev_record_fn rec = gate_cuEventRecord();
	ev_sync_fn query = gate_cuEventQuery();
	uint64_t end;
	CUresult r;

	if (!launch || !rec || !query || gate_cuda_warm_make(i) < 0)
		return -1;
	if (!s)
		s = cu_warm[i].stream;
	if (gate_cuda_capturing(s))
		return -1;
	if (launch(cu_warm[i].fn, cu_warm[i].blocks, 1, 1, 128, 1, 1, 0, s, NULL, NULL) !=
	            CUDA_SUCCESS ||
	    rec(cu_warm[i].event, s) != CUDA_SUCCESS)
		return -1;
	end = time_now_ns() + CU_WARM_WAIT_NS;
	while ((r = query(cu_warm[i].event)) == CUDA_ERROR_NOT_READY && time_now_ns() < end)
		;
	return r == CUDA_SUCCESS ? 0 : -1;
}

int gate_cuda_warm(void)
{
	ctx_push_fn push = gate_cuCtxPushCurrent_v2();
	ctx_get_fn pop = gate_cuCtxPopCurrent_v2();
	CUstreamCaptureMode mode;
	const char *how = getenv("KREX_REGION_WARM");
	int on_last = !how || strcmp(how, "ctx") != 0;
	CUcontext last = atomic_load(&cu_warm_last_ctx), c, old;
	CUstream last_s = atomic_load(&cu_warm_last_stream);
	int i, rc = 0, relaxed;

	if (!push || !pop)
		return -1;
	/* Relaxed for this thread: a capture elsewhere in the process stays
	 * valid; cu_cap_mu: no capture begins between the check and the launch. */
	relaxed = cu_relax(&mode);
	pthread_mutex_lock(&cu_cap_mu);
	for (i = 0; i < CU_MAX_CTX; i++) {
		c = atomic_load(&cu_ctx[i].ctx);
		if (!c)
			break;
		if (push(c) != CUDA_SUCCESS)
			continue; /* destroyed since */
		if (gate_cuda_warm_on(i, NULL) < 0)
			rc = -1;
		if (on_last && c == last && last_s != cu_warm[i].stream &&
		    gate_cuda_warm_on(i, last_s) < 0)
			rc = -1;
		pop(&old);
	}
	pthread_mutex_unlock(&cu_cap_mu);
	cu_unrelax(relaxed, &mode);
	return rc;
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
	pthread_mutex_init(&cu_cap_mu, NULL);
	cu_last_stream = NULL;
	/* the parent's warm-up handles mean nothing in a child */
	memset(cu_warm, 0, sizeof(cu_warm));
	atomic_store(&cu_warm_last_ctx, NULL);
	atomic_store(&cu_warm_last_stream, NULL);
}

/* ---- bounded queue (gate_queue.c) ------------------------------------------ */

#define CU_GQ_STREAMS 8 /* streams per thread that are bounded; more pass */
static __thread struct gq cu_gq[CU_GQ_STREAMS];

static int cu_gq_create(void **ev, int timing)
{
	ev_create_fn create = gate_cuEventCreate();

	return create && create((CUevent *)ev, timing ? 0 : CU_EVENT_DISABLE_TIMING) == CUDA_SUCCESS
	               ? 0
	               : -1;
}

static int cu_gq_record(void *ev, void *s)
{
	ev_record_fn record = gate_cuEventRecord();

	return record && record((CUevent)ev, (CUstream)s) == CUDA_SUCCESS ? 0 : -1;
}

static int cu_gq_sync(void *ev)
{
	ev_sync_fn sync = gate_cuEventSynchronize();
	CUstreamCaptureMode m;
	int relaxed, rc;

	if (!sync)
		return -1;
	relaxed = cu_relax(&m);
	rc = sync((CUevent)ev) == CUDA_SUCCESS ? 0 : -1;
	cu_unrelax(relaxed, &m);
	return rc;
}

static int cu_gq_query(void *ev);

/* The bounded queue's wait: poll, at most limit_ns (gate_gq_wait). */
static int cu_gq_wait(void *ev, uint64_t limit_ns, uint64_t suspect_ns)
{
	return gate_gq_wait(cu_gq_query, ev, limit_ns, suspect_ns);
}

static int cu_gq_query(void *ev)
{
	ev_sync_fn query = gate_cuEventQuery();
	CUstreamCaptureMode m;
	CUresult r;
	int relaxed;

	if (!query)
		return -1;
	relaxed = cu_relax(&m);
	r = query((CUevent)ev);
	cu_unrelax(relaxed, &m);
	return r == CUDA_SUCCESS ? 1 : r == CUDA_ERROR_NOT_READY ? 0 : -1;
}

static int cu_gq_elapsed(float *ms, void *from, void *to)
{
	ev_elapsed_fn el = gate_cuEventElapsedTime_v2();
	CUstreamCaptureMode m;
	int relaxed, rc;

	if (!el)
		el = gate_cuEventElapsedTime();
	if (!el)
		return -1;
	relaxed = cu_relax(&m);
	rc = el(ms, (CUevent)from, (CUevent)to) == CUDA_SUCCESS ? 0 : -1;
	cu_unrelax(relaxed, &m);
	return rc;
}

/* 1 if stream s is capturing (or its state cannot be read with a driver
 * that has the call); 0 otherwise.  Seen with PyTorch's CUDA graphs on the
 * H200: an event wait on a capturing stream invalidates the capture. */
static int cu_gq_capturing(void *s)
{
	is_capturing_fn is_capturing = gate_cuStreamIsCapturing();
	int status = 0;

	if (!is_capturing)
		return 0;
	if (is_capturing((CUstream)s, &status) != CUDA_SUCCESS)
		return 1;
	return status != 0; /* CU_STREAM_CAPTURE_STATUS_NONE */
}

static const struct gq_ops cu_gq_ops = {cu_gq_create,  cu_gq_record,    cu_gq_sync, cu_gq_query,
                                        cu_gq_elapsed, cu_gq_capturing, cu_gq_wait};

/* Before a launch, outside the gate: may wait; returns the queue to record
 * into after the launch, or NULL. */
static struct gq *gate_cuda_queue_before(CUstream s, int pt)
{
	unsigned cap = gate_queue_cap();
	struct gq *q;

	(void)pt;
	if (!cap || !gate_joined())
		return NULL;
	q = gq_find(cu_gq, CU_GQ_STREAMS, s);
	return gq_before(q, &cu_gq_ops, cap, gate_queue_ns()) ? q : NULL;
}

/* ---- the wrappers ------------------------------------------------------------ */

struct cu_ticket {
	int joined, kind;
	struct gq *q;
};

static void gate_cuda_before(struct cu_ticket *t, int id, int pt, CUstream s)
{
	if (gate_counting)
		atomic_fetch_add_explicit(&cu_count[id][pt], 1, memory_order_relaxed);
	t->kind = cu_hooks[id].kind;
	if (pt && !s)
		s = CU_STREAM_PER_THREAD; /* the _ptsz variant's stream 0 */
	if (t->kind >= GK_CAPTURE_BEGIN) {
		/* not a submission: never waits at the gate */
		t->q = NULL;
		t->joined = 0;
		if (t->kind == GK_CAPTURE_BEGIN)
			gate_cuda_capture_before(s);
		else if (t->kind == GK_STREAM_DESTROY)
			gate_cuda_destroy_before(s);
		return;
	}
	/* The bounded queue first: a thread waiting there is not inside the
	 * driver, so a drain does not wait for it, and it meets a closed gate
	 * when it wakes instead of adding to the work being drained. */
	t->q = cu_hooks[id].kind == GK_LAUNCH ? gate_cuda_queue_before(s, pt) : NULL;
	t->joined = gate_enter();
	if (t->joined) {
		CUcontext c = gate_cuda_track(s);

		if (c && t->kind == GK_LAUNCH)
			gate_cuda_note_launch(c, s);
	}
}

static void gate_cuda_after(struct cu_ticket *t, CUresult r)
{
	if (t->kind == GK_CAPTURE_BEGIN)
		gate_cuda_capture_after();
	if (t->q && r == CUDA_SUCCESS)
		gq_after(t->q, &cu_gq_ops, gate_queue_ns());
	gate_leave(t->joined);
}

#define CU_WRAP(sym, id, pt, params, args, stream)                                                 \
	CUresult sym params                                                                        \
	{                                                                                          \
		CUresult(*gate_fn) params = (CUresult(*) params)gate_cuda_real(id, pt);            \
		struct cu_ticket t;                                                                \
		CUresult r;                                                                        \
		if (!gate_fn)                                                                      \
			return CUDA_ERROR_NOT_INITIALIZED;                                         \
		gate_cuda_before(&t, id, pt, (CUstream)(stream));                                  \
		r = gate_fn args;                                                                  \
		gate_cuda_after(&t, r);                                                            \
		return r;                                                                          \
	}
#define CU_WRAP_NONE(name, params, args, stream)
#define CU_WRAP_PTDS(name, params, args, stream)                                                   \
	CU_WRAP(name##_ptds, CUH_##name, 1, params, args, stream)
#define CU_WRAP_PTSZ(name, params, args, stream)                                                   \
	CU_WRAP(name##_ptsz, CUH_##name, 1, params, args, stream)
#define CU_HOOK(PT, name, proc, since, kind, params, args, stream)                                 \
	CU_WRAP(name, CUH_##name, 0, params, args, stream)                                         \
	CU_WRAP_##PT(name, params, args, stream)
#include "cuda_hooks.def"
#undef CU_HOOK

/* ---- name lookups (dlsym) --------------------------------------------------- */

static int gate_cuda_find(const char *name, int *pt)
{
	int i;

	if (name[0] != 'c' || name[1] != 'u')
		return -1;
	for (i = 0; i < CUH_COUNT; i++) {
		if (strcmp(name, cu_hooks[i].name[0]) == 0) {
			*pt = 0;
			return i;
		}
		if (cu_hooks[i].name[1] && strcmp(name, cu_hooks[i].name[1]) == 0) {
			*pt = 1;
			return i;
		}
	}
	return -1;
}

/* ---- cuGetProcAddress -------------------------------------------------------- */

GATE_EXPORT CUresult cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion,
                                      cuuint64_t flags);
GATE_EXPORT CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int cudaVersion,
                                         cuuint64_t flags, CUdriverProcAddressQueryResult *status);
GATE_EXPORT CUresult cuGetProcAddress_v2_ptsz(const char *symbol, void **pfn, int cudaVersion,
                                              cuuint64_t flags,
                                              CUdriverProcAddressQueryResult *status);

enum { GPA_V1, GPA_V2, GPA_V2_PTSZ, GPA_COUNT };
static const char *const gpa_names[GPA_COUNT] = {"cuGetProcAddress", "cuGetProcAddress_v2",
                                                 "cuGetProcAddress_v2_ptsz"};
static void *const gpa_wrappers[GPA_COUNT] = {(void *)cuGetProcAddress, (void *)cuGetProcAddress_v2,
                                              (void *)cuGetProcAddress_v2_ptsz};
static _Atomic(void *) gpa_real[GPA_COUNT];

static void *gate_gpa_real(int i)
{
	void *p = atomic_load(&gpa_real[i]), *h;

	if (p)
		return p;
	h = gate_cuda_handle();
	p = h ? gate_real_dlsym(h, gpa_names[i]) : NULL;
	if (p == gpa_wrappers[i])
		p = NULL;
	if (p)
		atomic_store(&gpa_real[i], p);
	return p;
}

/*
 * cuGetProcAddress handed back p for (symbol, cudaVersion, flags): swap in
 * the wrapper of that exact function.  The version picks the ABI (the entry
 * with the highest "since" not above cudaVersion: cuMemcpyHtoD at 3020 and
 * later is cuMemcpyHtoD_v2); the variant is the one whose exported symbol is
 * p, else the one flags asks for.  Older ABIs than any hooked one pass.
 */
static void *gate_cuda_swap_proc(const char *symbol, int ver, cuuint64_t flags, void *p)
{
	int i, best = -1, pt;

	if (strncmp(symbol, "cuGetProcAddress", 16) == 0) {
		for (i = 0; i < GPA_COUNT; i++)
			if (p == gate_gpa_real(i))
				return gpa_wrappers[i];
		i = ver >= 12000 ? GPA_V2 : GPA_V1;
		if (!atomic_load(&gpa_real[i]))
			atomic_store(&gpa_real[i], p);
		return atomic_load(&gpa_real[i]) == p ? gpa_wrappers[i] : p;
	}
	for (i = 0; i < CUH_COUNT; i++)
		if (cu_hooks[i].since <= ver && strcmp(symbol, cu_hooks[i].proc) == 0 &&
		    (best < 0 || cu_hooks[i].since > cu_hooks[best].since))
			best = i;
	if (best < 0)
		return p;
	if (!cu_hooks[best].name[1])
		pt = 0;
	else if (p == gate_cuda_real(best, 1))
		pt = 1;
	else if (p == gate_cuda_real(best, 0))
		pt = 0;
	else
		pt = (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) != 0;
	log_debug("cuGetProcAddress(%s, %d, %#llx) -> %s", symbol, ver, (unsigned long long)flags,
	          cu_hooks[best].name[pt]);
	return gate_cuda_adopt(best, pt, p);
}

typedef CUresult (*gpa1_fn)(const char *, void **, int, cuuint64_t);
typedef CUresult (*gpa2_fn)(const char *, void **, int, cuuint64_t,
                            CUdriverProcAddressQueryResult *);

/* Never assumes cuInit was called: the real one answers first. */
CUresult cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags)
{
	gpa1_fn real = (gpa1_fn)gate_gpa_real(GPA_V1);
	CUresult r;

	if (!real)
		return CUDA_ERROR_NOT_INITIALIZED;
	r = real(symbol, pfn, cudaVersion, flags);
	if (r == CUDA_SUCCESS && symbol && pfn && *pfn)
		*pfn = gate_cuda_swap_proc(symbol, cudaVersion, flags, *pfn);
	return r;
}

static CUresult gate_gpa2(int which, const char *symbol, void **pfn, int cudaVersion,
                          cuuint64_t flags, CUdriverProcAddressQueryResult *status)
{
	gpa2_fn real = (gpa2_fn)gate_gpa_real(which);
	CUresult r;

	if (!real)
		return CUDA_ERROR_NOT_INITIALIZED;
	r = real(symbol, pfn, cudaVersion, flags, status);
	if (r == CUDA_SUCCESS && symbol && pfn && *pfn)
		*pfn = gate_cuda_swap_proc(symbol, cudaVersion, flags, *pfn);
	return r;
}

CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags,
                             CUdriverProcAddressQueryResult *status)
{
	return gate_gpa2(GPA_V2, symbol, pfn, cudaVersion, flags, status);
}

CUresult cuGetProcAddress_v2_ptsz(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags,
                                  CUdriverProcAddressQueryResult *status)
{
	return gate_gpa2(GPA_V2_PTSZ, symbol, pfn, cudaVersion, flags, status);
}

/* ---- dlsym dispatch ------------------------------------------------------------ */

void *gate_cuda_swap(const char *name, void *p)
{
	int i, pt;

	for (i = 0; i < GPA_COUNT; i++)
		if (strcmp(name, gpa_names[i]) == 0) {
			if (p != gpa_wrappers[i] && !atomic_load(&gpa_real[i]))
				atomic_store(&gpa_real[i], p);
			return gpa_wrappers[i];
		}
	i = gate_cuda_find(name, &pt);
	return i < 0 ? p : gate_cuda_adopt(i, pt, p);
}

void *gate_cuda_lookup(const char *name, void **wrapper)
{
	int i, pt;

	for (i = 0; i < GPA_COUNT; i++)
		if (strcmp(name, gpa_names[i]) == 0) {
			*wrapper = gpa_wrappers[i];
			return gate_gpa_real(i);
		}
	i = gate_cuda_find(name, &pt);
	if (i < 0)
		return NULL;
	*wrapper = cu_hooks[i].wrapper[pt];
	return gate_cuda_real(i, pt);
}

void gate_cuda_counts(FILE *f)
{
	unsigned long n;
	int i, pt;

	for (i = 0; i < CUH_COUNT; i++)
		for (pt = 0; pt < 2; pt++) {
			n = atomic_load(&cu_count[i][pt]);
			if (n)
				fprintf(f, "%ld %s %lu\n", (long)getpid(), cu_hooks[i].name[pt], n);
		}
}
