/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gate_cuda.c - the CUDA driver API backend of the gate: one wrapper per
 * (hooked symbol, per-thread variant) generated from cuda_hooks.def, the
 * cuGetProcAddress(_v2) dispatch, the bounded queue's event calls, and the
 * backend (gate.h).  What the drain waits for: gate_cuda_drain.c.
 */
#include "config.h"

#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "gate.h"
#include "gate_cuda.h"
#include "gate_queue.h"
#include "gate_types.h"
#include "log.h"

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

	gate_stat_add(GST_QUEUE_MARKS);
	return record && record((CUevent)ev, (CUstream)s) == CUDA_SUCCESS ? 0 : -1;
}

/* The bounded queue's wait: poll, at most limit_ns (gate_gq_wait). */
static int cu_gq_wait(void *ev, uint64_t limit_ns, uint64_t suspect_ns)
{
	return gate_gq_wait(gate_cuda_query, ev, limit_ns, suspect_ns);
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
	relaxed = gate_relax(gate_cuThreadExchangeStreamCaptureMode(), &m);
	rc = el(ms, (CUevent)from, (CUevent)to) == CUDA_SUCCESS ? 0 : -1;
	gate_unrelax(gate_cuThreadExchangeStreamCaptureMode(), relaxed, &m);
	return rc;
}

/* gate_cuda_capturing() for the queue's stream */
static int cu_gq_capturing(void *s)
{
	return gate_cuda_capturing((CUstream)s);
}

static const struct gq_ops cu_gq_ops = {cu_gq_create,  cu_gq_record,    NULL,      gate_cuda_query,
                                        cu_gq_elapsed, cu_gq_capturing, cu_gq_wait};

/* Before a launch, outside the gate: may wait; returns the queue to record
 * into after the launch, or NULL (gate_queue_before()). */
static struct gq *gate_cuda_queue_before(CUstream s, int pt)
{
	(void)pt;
	return gate_queue_before(cu_gq, CU_GQ_STREAMS, s, &cu_gq_ops);
}

/* ---- the wrappers ------------------------------------------------------------ */

struct cu_ticket {
	int joined, kind, id;
	int ctx_counted; /* GK_CONTEXT: gate_context_wait()'s answer */
	int released;    /* a primary context release's device, else -1 */
	struct gq *q;
};

/*
 * May a closed gate let this call through, a stalled drain's pass or onto
 * its busy stream (gate.h)?  Kernels, copies, event waits: this thread may
 * be the one that releases the work the drain waits for.  Not what waits
 * for the host or a peer (a stream's wait on a memory value, a batch of
 * such ops, an external semaphore's wait, a host function): let through,
 * it would hold the drain until its deadline.
 */
static int gate_cuda_passable(int id)
{
	return id != CUH_cuStreamWaitValue32_v2 && id != CUH_cuStreamWaitValue64_v2 &&
	       id != CUH_cuStreamBatchMemOp_v2 && id != CUH_cuStreamWaitValue32 &&
	       id != CUH_cuStreamWaitValue64 && id != CUH_cuStreamBatchMemOp &&
	       id != CUH_cuWaitExternalSemaphoresAsync && id != CUH_cuLaunchHostFunc;
}

/* A GK_CONTEXT_END call's context or device (cuda_hooks.def's stream column
 * for them: gate_cuda_ending(), gate_cuda_releasing()), for
 * gate_cuda_before(). */
static __thread CUcontext cu_ending_ctx;
static __thread CUgreenCtx cu_ending_green;
static __thread int cu_ending_dev, cu_ending_release;

CUstream gate_cuda_ending(CUcontext c, int dev)
{
	cu_ending_ctx = c;
	cu_ending_green = NULL;
	cu_ending_dev = dev;
	cu_ending_release = 0;
	return NULL;
}

CUstream gate_cuda_releasing(int dev)
{
	gate_cuda_ending(NULL, dev);
	cu_ending_release = 1;
	return NULL;
}

/* Its CUcontext and device, read before the call (queries, no work). */
CUstream gate_cuda_ending_green(CUgreenCtx g)
{
	from_green_fn conv = gate_cuCtxFromGreenCtx();
	CUcontext c = NULL;

	gate_cuda_releasing(-1);
	cu_ending_green = g;
	if (!g || !conv || conv(&c, g) != CUDA_SUCCESS || !c)
		return NULL;
	cu_ending_ctx = c;
	cu_ending_dev = gate_cuda_ctx_dev(c);
	return NULL;
}

/*
 * The contexts the process made itself (cuCtxCreate, noted after the call:
 * the new context is then the thread's current one) and has not destroyed:
 * the primary context's last release does not end them, so the gate keeps
 * what it tracked there and a drain still waits for the work queued in
 * them.  Full (more than CU_OWN_MAX; a context takes hundreds of MB of the
 * GPU's memory, so 1024 of one process is past any GPU's): a context not
 * noted is forgotten at a last release as before, and tracked again at its
 * next submission, and the gate says so once (test/gate/ctx_reset.sh
 * makes 40).
 */
#define CU_OWN_MAX 1024
static _Atomic(CUcontext) cu_own[CU_OWN_MAX];

static void gate_cuda_own(CUcontext c, CUcontext put)
{
	static _Atomic int warned;
	CUcontext x;
	int i;

	for (i = 0; i < CU_OWN_MAX; i++) {
		x = c;
		if (atomic_compare_exchange_strong(&cu_own[i], &x, put))
			return;
	}
	if (put && !atomic_exchange(&warned, 1))
		log_warn(
		        "over %d CUDA contexts of this process's own (cuCtxCreate): the work queued in the others is not drained after the primary context's last release",
		        CU_OWN_MAX);
}

static int gate_cuda_is_own(CUcontext c)
{
	int i;

	for (i = 0; c && i < CU_OWN_MAX; i++)
		if (atomic_load(&cu_own[i]) == c)
			return 1;
	return 0;
}

/* After a successful cuDevicePrimaryCtxRelease of dev, still inside the
 * gate: the last release destroyed the primary context (the driver says it
 * is not active, or cannot say), so forget that device's contexts, but not
 * those the process made itself (gate_cuda_is_own()) nor their streams,
 * except a stream found made elsewhere before the call
 * (gate_cuda_release_scan()).  A release that leaves it alive forgets
 * nothing. */
static void gate_cuda_released(int dev)
{
	prim_state_fn state = gate_cuDevicePrimaryCtxGetState();
	unsigned int flags = 0;
	int active = 0;

	if (state && state(dev, &flags, &active) == CUDA_SUCCESS && active)
		return;
	gate_cuda_primary_end(dev, gate_cuda_is_own);
}

static void gate_cuda_before(struct cu_ticket *t, int id, int pt, CUstream s)
{
	if (gate_counting)
		atomic_fetch_add_explicit(&cu_count[id][pt], 1, memory_order_relaxed);
	t->kind = cu_hooks[id].kind;
	t->id = id;
	t->released = -1;
	if (pt && !s)
		s = CU_STREAM_PER_THREAD; /* the _ptsz variant's stream 0 */
	if (t->kind == GK_CONTEXT) {
		t->q = NULL;
		t->joined = 0;
		t->ctx_counted = gate_context_wait();
		return;
	}
	if (t->kind == GK_CONTEXT_END) {
		/* gated, never passed: not inside the driver while a drain
		 * records or polls (gate.h) */
		t->q = NULL;
		t->joined = gate_enter(0, NULL, NULL);
		if (cu_ending_green)
			gate_cuda_green_end(cu_ending_green, cu_ending_ctx);
		if (cu_ending_release) {
			t->released = cu_ending_dev; /* after the call: gate_cuda_after() */
			gate_cuda_release_scan(gate_cuda_is_own);
		} else {
			gate_cuda_context_end(cu_ending_ctx, cu_ending_dev);
			if (cu_ending_ctx)
				gate_cuda_own(cu_ending_ctx, NULL); /* cuCtxDestroy */
		}
		return;
	}
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
	t->joined = gate_enter(gate_cuda_passable(id), gate_cuda_stream_busy, (void *)s);
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
	if (t->released >= 0 && r == CUDA_SUCCESS)
		gate_cuda_released(t->released);
	if (t->kind == GK_CONTEXT)
		gate_context_made(t->ctx_counted);
	if (t->kind == GK_CONTEXT_END)
		gate_cuda_release_scan(NULL); /* no marks left */
	if (t->kind == GK_CONTEXT && r == CUDA_SUCCESS &&
	    (t->id == CUH_cuCtxCreate_v4 || t->id == CUH_cuCtxCreate_v2 ||
	     t->id == CUH_cuCtxCreate_v3)) {
		ctx_get_fn get = gate_cuCtxGetCurrent();
		CUcontext c = NULL;

		if (get && get(&c) == CUDA_SUCCESS && c)
			gate_cuda_own(NULL, c); /* the context it made, current now */
	}
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

static void *gate_cuda_swap(const char *name, void *p)
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

static void *gate_cuda_lookup(const char *name, void **wrapper)
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

static void gate_cuda_counts(FILE *f)
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

/* In a child after fork(): the parent's contexts mean nothing there. */
static void gate_cuda_forget_all(void)
{
	int i;

	for (i = 0; i < CU_OWN_MAX; i++)
		atomic_store(&cu_own[i], NULL);
	gate_cuda_forget();
}

/* The backend (gate.h): the order is the link order, CUDA first. */
GATE_BACKEND(cuda, "cu", gate_cuda_lookup, gate_cuda_swap, gate_cuda_drain, gate_cuda_warm,
             gate_cuda_forget_all, gate_cuda_counts);
