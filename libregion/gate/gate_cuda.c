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
typedef CUresult (*ctx_sync_fn)(void);
typedef CUresult (*ev_create_fn)(CUevent *, unsigned int);
typedef CUresult (*ev_record_fn)(CUevent, CUstream);
typedef CUresult (*ev_sync_fn)(CUevent);
typedef CUresult (*ev_elapsed_fn)(float *, CUevent, CUevent);
typedef CUresult (*is_capturing_fn)(CUstream, int *);
typedef CUresult (*stream_create_fn)(CUstream *, unsigned int);
typedef CUresult (*capture_mode_fn)(int *);
typedef CUresult (*mod_load_fn)(CUmodule *, const void *);
typedef CUresult (*mod_fn_fn)(CUfunction *, CUmodule, const char *);
typedef CUresult (*ctx_dev_fn)(CUdevice *);
typedef CUresult (*dev_attr_fn)(int *, int, CUdevice);
typedef CUresult (*launch_fn)(CUfunction, unsigned int, unsigned int, unsigned int, unsigned int,
                              unsigned int, unsigned int, unsigned int, CUstream, void **, void **);
CU_SYM(ctx_get_fn, cuCtxGetCurrent)
CU_SYM(ctx_push_fn, cuCtxPushCurrent_v2)
CU_SYM(ctx_get_fn, cuCtxPopCurrent_v2)
CU_SYM(ctx_sync_fn, cuCtxSynchronize)
CU_SYM(ev_create_fn, cuEventCreate)
CU_SYM(ev_record_fn, cuEventRecord)
CU_SYM(ev_sync_fn, cuEventSynchronize)
CU_SYM(ev_sync_fn, cuEventQuery)
CU_SYM(ev_elapsed_fn, cuEventElapsedTime_v2)
CU_SYM(ev_elapsed_fn, cuEventElapsedTime)
CU_SYM(is_capturing_fn, cuStreamIsCapturing)
CU_SYM(stream_create_fn, cuStreamCreate)
CU_SYM(capture_mode_fn, cuThreadExchangeStreamCaptureMode)
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

/* ---- contexts to drain ------------------------------------------------------ */

/*
 * Why contexts and not streams: cuCtxSynchronize covers every stream of a
 * context, the legacy and per-thread default streams of every thread
 * included, and a context can be made current in the drain thread with
 * cuCtxPushCurrent.  Stream handles would miss per-thread default streams
 * (meaningful only in their own thread) and go stale silently.  A context
 * destroyed since it was seen only makes its push fail, which is ignored.
 */
#define CU_MAX_CTX 64
static _Atomic(CUcontext) cu_ctx[CU_MAX_CTX];

static CUcontext gate_cuda_track(void)
{
	ctx_get_fn get = gate_cuCtxGetCurrent();
	CUcontext c = NULL, expect;
	int i;

	if (!get || get(&c) != CUDA_SUCCESS || !c)
		return NULL;
	for (i = 0; i < CU_MAX_CTX; i++) {
		expect = atomic_load_explicit(&cu_ctx[i], memory_order_relaxed);
		if (expect == c)
			return c;
		if (!expect && atomic_compare_exchange_strong(&cu_ctx[i], &expect, c))
			return c;
		if (expect == c)
			return c;
	}
	return c;
}

/*
 * The stream of this process's last kernel launch and its context: the warm
 * after a grant also runs there, since the owner's next timed launch most
 * likely goes to the same stream (H200: warming only a stream of the gate's
 * own left the first timed kernel slower; doc/performance.md).
 */
static _Atomic(CUcontext) cu_last_ctx;
static _Atomic(CUstream) cu_last_stream;

static void gate_cuda_note_launch(CUcontext c, CUstream s, int pt)
{
	if (pt && !s)
		s = CU_STREAM_PER_THREAD; /* the _ptsz variant's stream 0 */
	atomic_store_explicit(&cu_last_stream, s, memory_order_relaxed);
	atomic_store_explicit(&cu_last_ctx, c, memory_order_relaxed);
}

int gate_cuda_drain(void)
{
	ctx_push_fn push = gate_cuCtxPushCurrent_v2();
	ctx_get_fn pop = gate_cuCtxPopCurrent_v2();
	ctx_sync_fn sync = gate_cuCtxSynchronize();
	CUcontext c, old;
	int i, rc = 0;

	for (i = 0; i < CU_MAX_CTX; i++) {
		c = atomic_load(&cu_ctx[i]);
		if (!c)
			break;
		if (!push || !pop || !sync || push(c) != CUDA_SUCCESS)
			continue;
		if (sync() != CUDA_SUCCESS)
			rc = -1;
		pop(&old);
	}
	return rc;
}

#include "warm_ptx.h"

static int cu_gq_capturing(void *s);

#define CU_ATTR_MULTIPROCESSOR_COUNT 16
#define CU_WARM_ITERS 0

/* The warm-up's own stream, event and kernel in each tracked context (made once). */
static struct {
	CUstream stream;
	CUevent event;
	CUfunction fn;
	unsigned blocks;
} cu_warm[CU_MAX_CTX];
static pthread_mutex_t cu_warm_lock = PTHREAD_MUTEX_INITIALIZER;

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

/* The warm-up kernel of slot i on stream s, then an event there, waited
 * for at most CU_WARM_WAIT_NS (a stream of the owner's may hold work that
 * only its host releases); 0 or -1. */
#define CU_WARM_WAIT_NS (100 * 1000 * 1000ull)
static int gate_cuda_warm_on(int i, CUstream s, unsigned iters)
{
	launch_fn launch = gate_cuLaunchKernel();
	ev_record_fn rec = gate_cuEventRecord();
	ev_sync_fn query = gate_cuEventQuery();
	unsigned long long out = 0;
	void *args[2] = {&iters, &out};
	uint64_t end;
	CUresult r;

	if (!launch || !rec || !query || gate_cuda_warm_make(i) < 0 || cu_gq_capturing(s))
		return -1;
	if (launch(cu_warm[i].fn, cu_warm[i].blocks, 1, 1, 128, 1, 1, 0, s, args, NULL) !=
	            CUDA_SUCCESS ||
	    rec(cu_warm[i].event, s) != CUDA_SUCCESS)
		return -1;
	end = time_now_ns() + CU_WARM_WAIT_NS;
	while ((r = query(cu_warm[i].event)) == CUDA_ERROR_NOT_READY && time_now_ns() < end)
		;
	return r == CUDA_SUCCESS ? 0 : -1;
}

static int gate_cuda_warm_one(int i, unsigned iters)
{
	launch_fn launch = gate_cuLaunchKernel();
	ev_record_fn rec = gate_cuEventRecord();
	ev_sync_fn sync = gate_cuEventSynchronize();
	unsigned long long out = 0;
	void *args[2] = {&iters, &out};

	if (!launch || !rec || !sync || gate_cuda_warm_make(i) < 0)
		return -1;
	if (launch(cu_warm[i].fn, cu_warm[i].blocks, 1, 1, 128, 1, 1, 0, cu_warm[i].stream, args,
	           NULL) != CUDA_SUCCESS ||
	    rec(cu_warm[i].event, cu_warm[i].stream) != CUDA_SUCCESS)
		return -1;
	return sync(cu_warm[i].event) == CUDA_SUCCESS ? 0 : -1;
}

int gate_cuda_warm(void)
{
	ctx_push_fn push = gate_cuCtxPushCurrent_v2();
	ctx_get_fn pop = gate_cuCtxPopCurrent_v2();
	capture_mode_fn mode = gate_cuThreadExchangeStreamCaptureMode();
	CUcontext c, old;
	int i, rc = 0, m = CU_STREAM_CAPTURE_MODE_RELAXED, relaxed;
	const char *e = getenv("KREX_REGION_WARM_ITERS");
	unsigned iters = e ? (unsigned)strtoul(e, NULL, 10) : CU_WARM_ITERS;

	if (!push || !pop)
		return -1;
	/* Relaxed for this thread: a capture elsewhere in the process stays valid. */
	relaxed = mode && mode(&m) == CUDA_SUCCESS;
	const char *how = getenv("KREX_REGION_WARM");
	int on_last = !how || strcmp(how, "ctx") != 0;
	CUcontext last = atomic_load(&cu_last_ctx);
	CUstream last_s = atomic_load(&cu_last_stream);

	pthread_mutex_lock(&cu_warm_lock);
	for (i = 0; i < CU_MAX_CTX; i++) {
		c = atomic_load(&cu_ctx[i]);
		if (!c)
			break;
		if (push(c) != CUDA_SUCCESS)
			continue;
		if (gate_cuda_warm_one(i, iters) < 0)
			rc = -1;
		if (on_last && c == last && gate_cuda_warm_on(i, last_s, iters) < 0)
			rc = -1;
		pop(&old);
	}
	pthread_mutex_unlock(&cu_warm_lock);
	if (relaxed)
		mode(&m);
	return rc;
}

void gate_cuda_forget(void)
{
	int i;

	for (i = 0; i < CU_MAX_CTX; i++) {
		atomic_store(&cu_ctx[i], NULL);
		/* the parent's handles mean nothing in a child */
		memset(&cu_warm[i], 0, sizeof(cu_warm[i]));
	}
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

	return sync && sync((CUevent)ev) == CUDA_SUCCESS ? 0 : -1;
}

static int cu_gq_query(void *ev)
{
	ev_sync_fn query = gate_cuEventQuery();
	CUresult r;

	if (!query)
		return -1;
	r = query((CUevent)ev);
	return r == CUDA_SUCCESS ? 1 : r == CUDA_ERROR_NOT_READY ? 0 : -1;
}

static int cu_gq_elapsed(float *ms, void *from, void *to)
{
	ev_elapsed_fn el = gate_cuEventElapsedTime_v2();

	if (!el)
		el = gate_cuEventElapsedTime();
	return el && el(ms, (CUevent)from, (CUevent)to) == CUDA_SUCCESS ? 0 : -1;
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

static const struct gq_ops cu_gq_ops = {cu_gq_create, cu_gq_record,  cu_gq_sync,
                                        cu_gq_query,  cu_gq_elapsed, cu_gq_capturing};

/* Before a launch, outside the gate: may wait; returns the queue to record
 * into after the launch, or NULL. */
static struct gq *gate_cuda_queue_before(CUstream s, int pt)
{
	unsigned cap = gate_queue_cap();
	struct gq *q;

	if (!cap || !gate_joined())
		return NULL;
	if (pt && !s)
		s = CU_STREAM_PER_THREAD; /* the _ptsz variant's stream 0 */
	q = gq_find(cu_gq, CU_GQ_STREAMS, s);
	return gq_before(q, &cu_gq_ops, cap, gate_queue_ns()) ? q : NULL;
}

/* ---- the wrappers ------------------------------------------------------------ */

struct cu_ticket {
	int joined;
	struct gq *q;
};

static void gate_cuda_before(struct cu_ticket *t, int id, int pt, CUstream s)
{
	if (gate_counting)
		atomic_fetch_add_explicit(&cu_count[id][pt], 1, memory_order_relaxed);
	/* The bounded queue first: a thread waiting there is not inside the
	 * driver, so a drain does not wait for it, and it meets a closed gate
	 * when it wakes instead of adding to the work being drained. */
	t->q = cu_hooks[id].kind == GK_LAUNCH ? gate_cuda_queue_before(s, pt) : NULL;
	t->joined = gate_enter();
	if (t->joined) {
		CUcontext c = gate_cuda_track();

		if (c && cu_hooks[id].kind == GK_LAUNCH)
			gate_cuda_note_launch(c, s, pt);
	}
}

static void gate_cuda_after(struct cu_ticket *t, CUresult r)
{
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
