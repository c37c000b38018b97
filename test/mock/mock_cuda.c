/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mock_cuda.c - TEST DOUBLE: a fake libcuda.so.1 for make check on machines
 * without a GPU.  Not a driver: it implements the subset of the CUDA driver
 * API the gate and test/workloads use, on the simulated GPU of mock_gpu.c.
 *
 * Modules: any image loads; functions "fma_loop" (params: CUdeviceptr *out,
 * long long *iters; runs iters microseconds and writes iters to *out),
 * "empty" (runs 0 us) and "spin_flag" (params: CUdeviceptr *flag, long long
 * *timeout_us, CUdeviceptr *status: spins until the host writes a non-zero
 * 32-bit word at flag, or timeout_us; *status = 1 released, 2 timed out, as
 * XLA's delay kernel).  Device memory is host memory, so host-mapped memory
 * is any memory.
 *
 * Stream capture (cuStreamBeginCapture_v2 ... cuGraphLaunch) follows the
 * driver's rules for "potentially unsafe" calls (mock_gpu.h mock_unsafe):
 * cuCtxSynchronize, cuStreamSynchronize/Query, cuEventSynchronize/Query,
 * synchronous copies and memsets, cuMemAlloc/cuMemFree.
 */
#include "config.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "gate_types.h"
#include "mock_cuda.h"
#include "mock_gpu.h"

#define EXPORT __attribute__((visibility("default")))
#define CUDA_ERROR_INVALID_VALUE 1
#define CUDA_ERROR_DEINITIALIZED 4
#define CUDA_ERROR_INVALID_CONTEXT 201
#define CUDA_ERROR_CONTEXT_IS_DESTROYED 709
#define CUDA_ERROR_NOT_FOUND 500
#define CUDA_ERROR_NOT_READY 600
#define CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED 900
#define CUDA_ERROR_STREAM_CAPTURE_INVALIDATED 901
#define CUDA_ERROR_STREAM_CAPTURE_IMPLICIT 906
#define CUDA_ERROR_CAPTURED_EVENT 907

struct CUctx_st {
	int dev;
	struct CUgreenCtx_st *green; /* a green context's CUcontext: its green context */
	unsigned epoch;              /* bumped when it ends (check_epoch()) */
};
/* A green context (cuGreenCtxCreate retains the primary context, its
 * destruction releases it); never freed, so that a use after it fails as the
 * driver's does: CUDA_ERROR_CONTEXT_IS_DESTROYED. */
struct CUgreenCtx_st {
	struct CUctx_st ctx;
	int dead;
};
struct CUfunc_st {
	int kind; /* 0 fma_loop, 1 empty, 2 spin_flag */
};
struct CUgraph_st {
	struct mock_op *ops;
};
struct CUgraphExec_st {
	struct mock_op *ops;
};
struct CUstream_st {
	struct mock_stream s;
	CUcontext ctx;               /* made in it (obj_ctx()) */
	unsigned epoch;              /* its epoch then */
	struct CUgreenCtx_st *green; /* made in a green context */
};
struct CUevent_st {
	struct mock_event e;
	unsigned flags; /* cuEventCreate's: CU_EVENT_DISABLE_TIMING */
	CUcontext ctx;
	unsigned epoch;
};

/*
 * A context's epoch is bumped when it ends (the primary context's at its
 * reset and last release, a made one's at its cuCtxDestroy): the streams
 * and events made in it before went with it (not freed here: a use of one
 * aborts the process with a message, where a real driver would use freed
 * memory).  A context of the process's own making (cuCtxCreate) outlives
 * the primary context, as with the driver.
 */
static void check_epoch(CUcontext c, unsigned epoch, const char *what, const void *p)
{
	if (epoch != c->epoch)
		mock_used_after_end("CUDA", what, p);
}

static int initialized;
static struct CUctx_st primary_ctx;
static struct CUfunc_st fn_fma = {0}, fn_empty = {1}, fn_spin = {2};
static __thread CUcontext ctx_stack[16];
static __thread int ctx_depth; /* ctx_stack[ctx_depth - 1] is current */

/* Set by the _ptds/_ptsz entry points (mock_cuda_stubs.c): stream 0 is then
 * the calling thread's per-thread default stream. */
__thread int mock_cu_per_thread;

static struct mock_stream *mstream(CUstream s)
{
	/* 0: the legacy default stream (per-thread in a _ptsz call);
	 * CU_STREAM_LEGACY (1); CU_STREAM_PER_THREAD (2) */
	if (s == CU_STREAM_PER_THREAD || (!s && mock_cu_per_thread))
		return mock_per_thread();
	if ((uintptr_t)s <= 2)
		return NULL;
	check_epoch(s->ctx, s->epoch, "stream", s);
	return &s->s;
}

/* A stream of a destroyed green context: every call on it fails. */
static int gone(CUstream s)
{
	return (uintptr_t)s > 2 && s->green && s->green->dead;
}

/* Queue op on s, or record it into s's capture; *seq gets its sequence
 * number (0 when captured). */
static CUresult submit(CUstream s, const struct mock_op *op, uint64_t *seq)
{
	struct mock_stream *ms;
	uint64_t n;
	int c;

	if (seq)
		*seq = 0;
	if (gone(s))
		return CUDA_ERROR_CONTEXT_IS_DESTROYED;
	ms = mstream(s);
	c = mock_capture_op(ms, op);
	if (c < 0)
		return ms ? CUDA_ERROR_STREAM_CAPTURE_INVALIDATED
		          : CUDA_ERROR_STREAM_CAPTURE_IMPLICIT;
	if (c > 0)
		return CUDA_SUCCESS;
	n = mock_submit(ms, op);
	if (seq)
		*seq = n;
	return CUDA_SUCCESS;
}

/*
 * KREX_MOCK_CUDA_DEINIT=PATH: once PATH exists the driver is shut down, as
 * in a process's exit after the CUDA runtime's teardown: cuCtxGetCurrent,
 * cuEventRecord and cuEventQuery answer CUDA_ERROR_DEINITIALIZED; contexts
 * can still be pushed (the drains of exiting processes on the H200 failed
 * on their events, not on the push).
 */
static int deinitialized(void)
{
	return mock_deinitialized("KREX_MOCK_CUDA_DEINIT");
}

EXPORT CUresult cuInit(unsigned int flags)
{
	initialized = 1;
	return CUDA_SUCCESS;
}

EXPORT CUresult cuDriverGetVersion(int *v)
{
	*v = 13000;
	return CUDA_SUCCESS;
}

EXPORT CUresult cuDeviceGetCount(int *n)
{
	if (!initialized)
		return CUDA_ERROR_NOT_INITIALIZED;
	*n = 1;
	return CUDA_SUCCESS;
}

EXPORT CUresult cuDeviceGet(CUdevice *d, int ordinal)
{
	if (!initialized)
		return CUDA_ERROR_NOT_INITIALIZED;
	if (ordinal != 0)
		return CUDA_ERROR_INVALID_VALUE;
	*d = 0;
	return CUDA_SUCCESS;
}

EXPORT CUresult cuDeviceGetAttribute(int *v, int attrib, CUdevice d)
{
	*v = attrib == 16 ? 132 : 1; /* 16: multiprocessor count */
	return CUDA_SUCCESS;
}

/* cuDevicePrimaryCtxRetain and cuCtxCreate_v2/_v4 are gated (cuda_hooks.def):
 * mock_cuda_stubs.c exports them, counting, and calls these. */
/* An older ABI of a function (cudart 13 asks cuGetProcAddress for some),
 * the same here as the newer one: an alias of its mock. */
#define MOCK_SAME(name, v2, params)                                                                \
	CUresult mock_cu_##name params __attribute__((alias("mock_cu_" #v2)))

/* The primary context's retains: the last release destroys it, as the
 * driver does (its streams and events with it: its epoch). */
static int primary_refs;

/*
 * A test's hook, not the driver's behaviour: with KREX_MOCK_CTX_WAIT=PATH a
 * retain that makes the primary context creates PATH.in and waits until PATH
 * exists, so that a test holds a context being made (a real driver takes
 * hundreds of milliseconds under load) and lets it finish when it chooses;
 * then it creates PATH.out, inside the call: a test that finds PATH.out
 * knows the context made whatever its process does after the return (it
 * may be frozen before it writes anything of its own).
 */
static void mock_ctx_wait(void)
{
	const char *w = getenv("KREX_MOCK_CTX_WAIT");
	struct timespec ms = {0, 1000 * 1000};
	char in[4096];
	int fd;

	if (!w || !*w || primary_refs > 0 ||
	    snprintf(in, sizeof(in), "%s.in", w) >= (int)sizeof(in))
		return;
	fd = open(in, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	if (fd >= 0)
		close(fd);
	while (access(w, F_OK) != 0)
		nanosleep(&ms, NULL);
	snprintf(in, sizeof(in), "%s.out", w); /* shorter than .in's, which fit */
	fd = open(in, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	if (fd >= 0)
		close(fd);
}

CUresult mock_cu_cuDevicePrimaryCtxRetain(CUcontext *c, CUdevice d)
{
	if (!initialized)
		return CUDA_ERROR_NOT_INITIALIZED;
	mock_ctx_wait();
	*c = &primary_ctx;
	primary_refs++;
	return CUDA_SUCCESS;
}

/* Gated (cuda_hooks.def GK_CONTEXT_END, forgotten after the call when it was
 * the last): both ABIs. */
CUresult mock_cu_cuDevicePrimaryCtxRelease_v2(CUdevice d)
{
	if (!initialized)
		return CUDA_ERROR_NOT_INITIALIZED;
	if (d != 0)
		return 101; /* CUDA_ERROR_INVALID_DEVICE */
	if (primary_refs <= 0)
		return CUDA_ERROR_INVALID_CONTEXT;
	if (--primary_refs == 0) {
		mock_sync_ctx(&primary_ctx);
		primary_ctx.epoch++;
	}
	return CUDA_SUCCESS;
}

MOCK_SAME(cuDevicePrimaryCtxRelease, cuDevicePrimaryCtxRelease_v2, (CUdevice));

EXPORT CUresult cuDevicePrimaryCtxGetState(CUdevice d, unsigned int *flags, int *active)
{
	if (!initialized)
		return CUDA_ERROR_NOT_INITIALIZED;
	if (d != 0)
		return 101;
	if (!flags || !active)
		return CUDA_ERROR_INVALID_VALUE;
	*flags = 0;
	*active = primary_refs > 0;
	return CUDA_SUCCESS;
}

/* Gated (cuda_hooks.def GK_CONTEXT_END): the work queued first, then every
 * stream and event made in the primary context before is gone (its epoch). */
CUresult mock_cu_cuDevicePrimaryCtxReset_v2(CUdevice d)
{
	if (!initialized)
		return CUDA_ERROR_NOT_INITIALIZED;
	if (d != 0)
		return 101; /* CUDA_ERROR_INVALID_DEVICE */
	mock_sync_ctx(&primary_ctx);
	primary_ctx.epoch++;
	return CUDA_SUCCESS;
}

/* CUDA 7.0's ABI, the one cudart 13's cudaDeviceReset asks for */
MOCK_SAME(cuDevicePrimaryCtxReset, cuDevicePrimaryCtxReset_v2, (CUdevice));

CUresult mock_cu_cuCtxDestroy_v2(CUcontext c)
{
	if (!c)
		return CUDA_ERROR_INVALID_VALUE;
	mock_sync_ctx(c);
	c->epoch++;
	if (ctx_depth && ctx_stack[ctx_depth - 1] == c)
		ctx_depth--;
	return CUDA_SUCCESS;
}

CUresult mock_cu_cuCtxCreate_v2(CUcontext *c, unsigned int flags, CUdevice d)
{
	if (!initialized)
		return CUDA_ERROR_NOT_INITIALIZED;
	if (ctx_depth >= 16)
		return CUDA_ERROR_INVALID_CONTEXT;
	*c = calloc(1, sizeof(struct CUctx_st));
	if (!*c)
		return 2;
	ctx_stack[ctx_depth++] = *c; /* pushed, as the driver does */
	return CUDA_SUCCESS;
}

CUresult mock_cu_cuCtxCreate_v3(CUcontext *c, CUexecAffinityParam *p, int n, unsigned int flags,
                                CUdevice d)
{
	return mock_cu_cuCtxCreate_v2(c, flags, d);
}

CUresult mock_cu_cuCtxCreate_v4(CUcontext *c, CUctxCreateParams *p, unsigned int flags, CUdevice d)
{
	return mock_cu_cuCtxCreate_v2(c, flags, d);
}

EXPORT CUresult cuCtxSetCurrent(CUcontext c)
{
	if (c && c->green && c->green->dead)
		return CUDA_ERROR_CONTEXT_IS_DESTROYED;
	ctx_depth = ctx_depth ? ctx_depth : 1;
	ctx_stack[ctx_depth - 1] = c;
	return CUDA_SUCCESS;
}

EXPORT CUresult cuCtxGetCurrent(CUcontext *c)
{
	if (deinitialized())
		return CUDA_ERROR_DEINITIALIZED;
	*c = ctx_depth ? ctx_stack[ctx_depth - 1] : NULL;
	return CUDA_SUCCESS;
}

EXPORT CUresult cuCtxPushCurrent_v2(CUcontext c)
{
	if (!c || ctx_depth >= 16)
		return CUDA_ERROR_INVALID_CONTEXT;
	if (c->green && c->green->dead)
		return CUDA_ERROR_CONTEXT_IS_DESTROYED;
	ctx_stack[ctx_depth++] = c;
	return CUDA_SUCCESS;
}

EXPORT CUresult cuCtxPopCurrent_v2(CUcontext *c)
{
	if (!ctx_depth)
		return CUDA_ERROR_INVALID_CONTEXT;
	if (c)
		*c = ctx_stack[ctx_depth - 1];
	ctx_depth--;
	return CUDA_SUCCESS;
}

static int have_ctx(void)
{
	return ctx_depth && ctx_stack[ctx_depth - 1];
}

/* The context a stream or event made now belongs to: the current one, the
 * primary one when none is current or a green context is (its streams and
 * events live as long as the primary context it retains). */
static CUcontext obj_ctx(void)
{
	return have_ctx() && !ctx_stack[ctx_depth - 1]->green ? ctx_stack[ctx_depth - 1]
	                                                      : &primary_ctx;
}

EXPORT CUresult cuCtxGetDevice(CUdevice *d)
{
	if (!d)
		return CUDA_ERROR_INVALID_VALUE;
	if (!have_ctx())
		return CUDA_ERROR_INVALID_CONTEXT;
	*d = 0; /* one device */
	return CUDA_SUCCESS;
}

EXPORT CUresult cuCtxGetDevice_v2(CUdevice *d, CUcontext c)
{
	if (!d)
		return CUDA_ERROR_INVALID_VALUE;
	if (c && c->green && c->green->dead)
		return CUDA_ERROR_CONTEXT_IS_DESTROYED;
	if (!c)
		return cuCtxGetDevice(d);
	*d = 0; /* one device */
	return CUDA_SUCCESS;
}

EXPORT CUresult cuCtxSynchronize(void)
{
	if (!have_ctx())
		return CUDA_ERROR_INVALID_CONTEXT;
	if (mock_unsafe(NULL, 1))
		return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
	mock_sync_all();
	return CUDA_SUCCESS;
}

EXPORT CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t n)
{
	void *m;

	if (mock_unsafe(NULL, 0))
		return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
	m = calloc(1, n ? n : 1);
	if (!m)
		return 2; /* CUDA_ERROR_OUT_OF_MEMORY */
	*p = (CUdeviceptr)(uintptr_t)m;
	return CUDA_SUCCESS;
}

EXPORT CUresult cuMemFree_v2(CUdeviceptr p)
{
	if (mock_unsafe(NULL, 0))
		return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
	mock_sync_all();
	free((void *)(uintptr_t)p);
	return CUDA_SUCCESS;
}

EXPORT CUresult cuModuleLoadData(CUmodule *m, const void *image)
{
	static char module;

	*m = (CUmodule)&module;
	return CUDA_SUCCESS;
}

EXPORT CUresult cuModuleGetFunction(CUfunction *f, CUmodule m, const char *name)
{
	if (strcmp(name, "fma_loop") == 0)
		*f = &fn_fma;
	else if (strcmp(name, "empty") == 0 || strcmp(name, "krex_warm") == 0)
		*f = &fn_empty; /* krex_warm: the gate's region warm-up kernel */
	else if (strcmp(name, "spin_flag") == 0)
		*f = &fn_spin;
	else
		return CUDA_ERROR_NOT_FOUND;
	return CUDA_SUCCESS;
}

EXPORT CUresult cuStreamCreate(CUstream *s, unsigned int flags)
{
	*s = calloc(1, sizeof(struct CUstream_st));
	if (!*s)
		return 2;
	(*s)->s.flags = flags & 1 ? MOCK_STREAM_NONBLOCKING : 0; /* CU_STREAM_NON_BLOCKING */
	(*s)->ctx = obj_ctx();
	(*s)->epoch = (*s)->ctx->epoch;
	(*s)->s.ctx = (*s)->ctx;
	(*s)->green = have_ctx() ? ctx_stack[ctx_depth - 1]->green : NULL;
	return CUDA_SUCCESS;
}

/* ---- green contexts ---- */

/* Gated (cuda_hooks.def GK_CONTEXT): retains the primary context. */
CUresult mock_cu_cuGreenCtxCreate(CUgreenCtx *g, CUdevResourceDesc desc, CUdevice d,
                                  unsigned int flags)
{
	if (!initialized)
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!g || d != 0)
		return CUDA_ERROR_INVALID_VALUE;
	*g = calloc(1, sizeof(**g));
	if (!*g)
		return 2;
	(*g)->ctx.green = *g;
	primary_refs++;
	return CUDA_SUCCESS;
}

/* Gated (GK_CONTEXT_END): its streams stay, failing every call; the
 * primary context released (the last release ends it: its epoch). */
CUresult mock_cu_cuGreenCtxDestroy(CUgreenCtx g)
{
	if (!g)
		return CUDA_ERROR_INVALID_VALUE;
	if (g->dead)
		return CUDA_ERROR_CONTEXT_IS_DESTROYED;
	g->dead = 1;
	if (primary_refs > 0 && --primary_refs == 0) {
		mock_sync_ctx(&primary_ctx);
		primary_ctx.epoch++;
	}
	return CUDA_SUCCESS;
}

EXPORT CUresult cuCtxFromGreenCtx(CUcontext *c, CUgreenCtx g)
{
	if (!c || !g)
		return CUDA_ERROR_INVALID_VALUE;
	if (g->dead)
		return CUDA_ERROR_CONTEXT_IS_DESTROYED;
	*c = &g->ctx;
	return CUDA_SUCCESS;
}

EXPORT CUresult cuGreenCtxStreamCreate(CUstream *s, CUgreenCtx g, unsigned int flags, int prio)
{
	CUresult r;

	if (!s || !g || !(flags & 1))
		return CUDA_ERROR_INVALID_VALUE;
	if (g->dead)
		return CUDA_ERROR_CONTEXT_IS_DESTROYED;
	r = cuStreamCreate(s, flags);
	if (r == CUDA_SUCCESS)
		(*s)->green = g;
	return r;
}

EXPORT CUresult cuStreamGetGreenCtx(CUstream s, CUgreenCtx *g)
{
	if (!g)
		return CUDA_ERROR_INVALID_VALUE;
	if ((uintptr_t)s > 2)
		*g = s->green;
	else
		*g = have_ctx() ? ctx_stack[ctx_depth - 1]->green : NULL;
	return CUDA_SUCCESS;
}

/* The context s was made in (a green context's stream: the green
 * context's CUcontext); the current one for a default stream. */
EXPORT CUresult cuStreamGetCtx(CUstream s, CUcontext *c)
{
	if (!c)
		return CUDA_ERROR_INVALID_VALUE;
	if ((uintptr_t)s <= 2) {
		if (!have_ctx())
			return CUDA_ERROR_INVALID_CONTEXT;
		*c = ctx_stack[ctx_depth - 1];
		return CUDA_SUCCESS;
	}
	check_epoch(s->ctx, s->epoch, "stream", s);
	*c = s->green ? &s->green->ctx : s->ctx;
	return CUDA_SUCCESS;
}

EXPORT CUresult cuStreamGetFlags(CUstream s, unsigned int *flags)
{
	struct mock_stream *ms = mstream(s);

	*flags = ms && (ms->flags & MOCK_STREAM_NONBLOCKING) ? 1 : 0;
	return CUDA_SUCCESS;
}

CUresult mock_cu_cuStreamDestroy_v2(CUstream s)
{
	if ((uintptr_t)s <= 2)
		return CUDA_ERROR_INVALID_VALUE;
	if (gone(s))
		return CUDA_ERROR_CONTEXT_IS_DESTROYED; /* the driver's word: leaked */
	mock_sync_stream(mstream(s));
	mock_stream_release(mstream(s));
	free(s);
	return CUDA_SUCCESS;
}

EXPORT CUresult cuStreamSynchronize(CUstream s)
{
	if (gone(s))
		return CUDA_ERROR_CONTEXT_IS_DESTROYED;
	if (mock_unsafe(mstream(s), 0))
		return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
	mock_sync_stream(mstream(s));
	return CUDA_SUCCESS;
}

EXPORT CUresult cuStreamQuery(CUstream s)
{
	struct mock_stream *ms;

	if (gone(s))
		return CUDA_ERROR_CONTEXT_IS_DESTROYED;
	ms = mstream(s);
	if (mock_unsafe(ms, 0))
		return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
	return mock_done(ms, ms ? ms->submitted : 0) ? CUDA_SUCCESS : CUDA_ERROR_NOT_READY;
}

EXPORT CUresult cuEventCreate(CUevent *e, unsigned int flags)
{
	*e = calloc(1, sizeof(struct CUevent_st));
	if (!*e)
		return 2;
	(*e)->flags = flags;
	(*e)->ctx = obj_ctx();
	(*e)->epoch = (*e)->ctx->epoch;
	return CUDA_SUCCESS;
}

EXPORT CUresult cuEventDestroy_v2(CUevent e)
{
	if (e)
		check_epoch(e->ctx, e->epoch, "event", e);
	if (e && e->e.s && !e->e.captured)
		mock_wait(e->e.s, e->e.seq);
	free(e);
	return CUDA_SUCCESS;
}

EXPORT CUresult cuEventRecord(CUevent e, CUstream s)
{
	struct mock_op op = {.type = MOP_EVENT, .ev = &e->e};

	if (deinitialized())
		return CUDA_ERROR_DEINITIALIZED;
	if (!e)
		return CUDA_ERROR_INVALID_VALUE;
	check_epoch(e->ctx, e->epoch, "event", e);
	return submit(s, &op, NULL);
}

/* An event wait or query: unsafe during capture; an event last recorded
 * inside a capture cannot be waited for at all (it invalidates that capture). */
static CUresult event_check(CUevent e)
{
	if (!e)
		return CUDA_ERROR_INVALID_VALUE;
	check_epoch(e->ctx, e->epoch, "event", e);
	if (e->e.captured) {
		mock_unsafe(e->e.s, 0);
		return CUDA_ERROR_CAPTURED_EVENT;
	}
	if (mock_unsafe(NULL, 0))
		return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
	return CUDA_SUCCESS;
}

EXPORT CUresult cuEventSynchronize(CUevent e)
{
	CUresult r = event_check(e);

	if (r != CUDA_SUCCESS)
		return r;
	if (e->e.s)
		mock_wait(e->e.s, e->e.seq);
	return CUDA_SUCCESS;
}

EXPORT CUresult cuEventQuery(CUevent e)
{
	CUresult r = deinitialized() ? CUDA_ERROR_DEINITIALIZED : event_check(e);

	if (r != CUDA_SUCCESS)
		return r;
	return !e->e.s || mock_done(e->e.s, e->e.seq) ? CUDA_SUCCESS : CUDA_ERROR_NOT_READY;
}

EXPORT CUresult cuEventElapsedTime(float *ms, CUevent a, CUevent b)
{
	if (!a || !b || ((a->flags | b->flags) & CU_EVENT_DISABLE_TIMING))
		return 400; /* CUDA_ERROR_INVALID_HANDLE, as the driver answers */
	check_epoch(a->ctx, a->epoch, "event", a);
	check_epoch(b->ctx, b->epoch, "event", b);
	if (!a->e.s || !b->e.s || a->e.captured || b->e.captured || !mock_done(a->e.s, a->e.seq) ||
	    !mock_done(b->e.s, b->e.seq))
		return CUDA_ERROR_NOT_READY;
	*ms = (float)((double)((int64_t)(b->e.t_ns - a->e.t_ns)) / 1e6);
	return CUDA_SUCCESS;
}

EXPORT CUresult cuEventElapsedTime_v2(float *ms, CUevent a, CUevent b)
{
	return cuEventElapsedTime(ms, a, b);
}

EXPORT CUresult cuGetErrorString(CUresult r, const char **s)
{
	*s = r == CUDA_SUCCESS ? "no error" : "mock error";
	return CUDA_SUCCESS;
}

/* ---- submissions (the strong mock_cu_* of mock_cuda_stubs.c) ---------------- */

CUresult mock_cu_cuLaunchKernel(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz,
                                unsigned int bx, unsigned int by, unsigned int bz, unsigned int shm,
                                CUstream s, void **params, void **extra)
{
	struct mock_op op = {.type = MOP_KERNEL};

	if (!f)
		return CUDA_ERROR_INVALID_VALUE;
	if (!have_ctx())
		return CUDA_ERROR_INVALID_CONTEXT;
	if (f->kind == 0 && params) {
		op.dst = params[0] ? (void *)(uintptr_t) * (CUdeviceptr *)params[0] : NULL;
		op.us = params[1] ? (uint64_t) * (long long *)params[1] : 0;
	} else if (f->kind == 2) {
		if (!params || !params[0] || !params[1])
			return CUDA_ERROR_INVALID_VALUE;
		op.type = MOP_SPIN;
		op.src = (const void *)(uintptr_t) * (CUdeviceptr *)params[0];
		op.us = (uint64_t) * (long long *)params[1];
		op.dst = params[2] ? (void *)(uintptr_t) * (CUdeviceptr *)params[2] : NULL;
		if (!op.src)
			return CUDA_ERROR_INVALID_VALUE;
	}
	return submit(s, &op, NULL);
}

CUresult mock_cu_cuLaunchKernelEx(const CUlaunchConfig *c, CUfunction f, void **params,
                                  void **extra)
{
	if (!c)
		return CUDA_ERROR_INVALID_VALUE;
	return mock_cu_cuLaunchKernel(f, c->gridDimX, c->gridDimY, c->gridDimZ, c->blockDimX,
	                              c->blockDimY, c->blockDimZ, c->sharedMemBytes, c->hStream,
	                              params, extra);
}

CUresult mock_cu_cuLaunchHostFunc(CUstream s, CUhostFn fn, void *arg)
{
	struct mock_op op = {.type = MOP_HOSTFN, .fn = fn, .arg = arg};

	if (!fn)
		return CUDA_ERROR_INVALID_VALUE;
	return submit(s, &op, NULL);
}

static CUresult copy_async(void *dst, const void *src, size_t n, CUstream s, int sync)
{
	struct mock_op op = {.type = MOP_COPY, .dst = dst, .src = src, .n = n};
	uint64_t seq;
	CUresult r;

	if (n && (!dst || !src))
		return CUDA_ERROR_INVALID_VALUE;
	if (sync && mock_unsafe(NULL, 0))
		return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
	r = submit(s, &op, &seq);
	if (r == CUDA_SUCCESS && sync && seq)
		mock_wait(mstream(s), seq);
	return r;
}

#define DPTR(p) ((void *)(uintptr_t)(p))
CUresult mock_cu_cuMemcpyHtoD_v2(CUdeviceptr d, const void *h, size_t n)
{
	return copy_async(DPTR(d), h, n, NULL, 1);
}
CUresult mock_cu_cuMemcpyDtoH_v2(void *h, CUdeviceptr d, size_t n)
{
	return copy_async(h, DPTR(d), n, NULL, 1);
}
CUresult mock_cu_cuMemcpyDtoD_v2(CUdeviceptr d, CUdeviceptr s, size_t n)
{
	return copy_async(DPTR(d), DPTR(s), n, NULL, 1);
}
CUresult mock_cu_cuMemcpy(CUdeviceptr d, CUdeviceptr s, size_t n)
{
	return copy_async(DPTR(d), DPTR(s), n, NULL, 1);
}
CUresult mock_cu_cuMemcpyAsync(CUdeviceptr d, CUdeviceptr s, size_t n, CUstream st)
{
	return copy_async(DPTR(d), DPTR(s), n, st, 0);
}
CUresult mock_cu_cuMemcpyHtoDAsync_v2(CUdeviceptr d, const void *h, size_t n, CUstream st)
{
	return copy_async(DPTR(d), h, n, st, 0);
}
CUresult mock_cu_cuMemcpyDtoHAsync_v2(void *h, CUdeviceptr d, size_t n, CUstream st)
{
	return copy_async(h, DPTR(d), n, st, 0);
}
CUresult mock_cu_cuMemcpyDtoDAsync_v2(CUdeviceptr d, CUdeviceptr s, size_t n, CUstream st)
{
	return copy_async(DPTR(d), DPTR(s), n, st, 0);
}

static CUresult set_async(CUdeviceptr d, uint32_t v, size_t elem, size_t n, CUstream s, int sync)
{
	struct mock_op op = {.type = MOP_SET, .dst = DPTR(d), .value = v, .elem = elem, .n = n};
	uint64_t seq;
	CUresult r;

	if (n && !d)
		return CUDA_ERROR_INVALID_VALUE;
	if (sync && mock_unsafe(NULL, 0))
		return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
	r = submit(s, &op, &seq);
	if (r == CUDA_SUCCESS && sync && seq)
		mock_wait(mstream(s), seq);
	return r;
}

CUresult mock_cu_cuMemsetD8_v2(CUdeviceptr d, unsigned char v, size_t n)
{
	return set_async(d, v, 1, n, NULL, 1);
}
CUresult mock_cu_cuMemsetD32_v2(CUdeviceptr d, unsigned int v, size_t n)
{
	return set_async(d, v, 4, n, NULL, 1);
}
CUresult mock_cu_cuMemsetD8Async(CUdeviceptr d, unsigned char v, size_t n, CUstream s)
{
	return set_async(d, v, 1, n, s, 0);
}
CUresult mock_cu_cuMemsetD32Async(CUdeviceptr d, unsigned int v, size_t n, CUstream s)
{
	return set_async(d, v, 4, n, s, 0);
}

/* ---- stream waits and writes ------------------------------------------------ */

CUresult mock_cu_cuStreamWaitEvent(CUstream s, CUevent e, unsigned int flags)
{
	struct mock_op op = {.type = MOP_NOP};

	if (!e)
		return CUDA_ERROR_INVALID_VALUE;
	check_epoch(e->ctx, e->epoch, "event", e);
	if (!e->e.captured) {
		op.dep_s = e->e.s;
		op.dep_seq = e->e.seq;
	}
	return submit(s, &op, NULL);
}

static CUresult wait_value(CUstream s, CUdeviceptr addr, uint64_t v, unsigned flags, size_t sz)
{
	struct mock_op op = {.type = MOP_WAITVAL, .dst = DPTR(addr), .value = v, .elem = sz};

	if (!addr)
		return CUDA_ERROR_INVALID_VALUE;
	op.cond = (int)(flags & 3);
	return submit(s, &op, NULL);
}

static CUresult write_value(CUstream s, CUdeviceptr addr, uint64_t v, size_t sz)
{
	struct mock_op op = {.type = MOP_WRITEVAL, .dst = DPTR(addr), .value = v, .elem = sz};

	if (!addr)
		return CUDA_ERROR_INVALID_VALUE;
	return submit(s, &op, NULL);
}

CUresult mock_cu_cuStreamWaitValue32_v2(CUstream s, CUdeviceptr a, cuuint32_t v, unsigned int f)
{
	return wait_value(s, a, v, f, 4);
}
CUresult mock_cu_cuStreamWaitValue64_v2(CUstream s, CUdeviceptr a, cuuint64_t v, unsigned int f)
{
	return wait_value(s, a, v, f, 8);
}
CUresult mock_cu_cuStreamWriteValue32_v2(CUstream s, CUdeviceptr a, cuuint32_t v, unsigned int f)
{
	return write_value(s, a, v, 4);
}
CUresult mock_cu_cuStreamWriteValue64_v2(CUstream s, CUdeviceptr a, cuuint64_t v, unsigned int f)
{
	return write_value(s, a, v, 8);
}
/* The CUDA 8.0/9.0 ABIs (cudart 13 asks for them): the same here */
MOCK_SAME(cuStreamWaitValue32, cuStreamWaitValue32_v2,
          (CUstream, CUdeviceptr, cuuint32_t, unsigned));
MOCK_SAME(cuStreamWaitValue64, cuStreamWaitValue64_v2,
          (CUstream, CUdeviceptr, cuuint64_t, unsigned));
MOCK_SAME(cuStreamWriteValue32, cuStreamWriteValue32_v2,
          (CUstream, CUdeviceptr, cuuint32_t, unsigned));
MOCK_SAME(cuStreamWriteValue64, cuStreamWriteValue64_v2,
          (CUstream, CUdeviceptr, cuuint64_t, unsigned));

/* ---- stream capture and graphs ------------------------------------------------ */

EXPORT CUresult cuThreadExchangeStreamCaptureMode(int *mode)
{
	if (!mode || *mode < 0 || *mode > 2)
		return CUDA_ERROR_INVALID_VALUE;
	mock_capture_exchange_mode(mode);
	return CUDA_SUCCESS;
}

static CUresult begin_capture(CUstream s, int mode)
{
	struct mock_stream *ms = mstream(s);

	if (!ms) /* the legacy stream cannot be captured */
		return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
	return mock_capture_begin(ms, mode) == 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult mock_cu_cuStreamBeginCapture_v2(CUstream s, CUstreamCaptureMode mode)
{
	return begin_capture(s, mode);
}

/* CUDA 10.0's ABI, without a mode: global */
CUresult mock_cu_cuStreamBeginCapture(CUstream s)
{
	return begin_capture(s, 0);
}

static CUresult end_capture(CUstream s, CUgraph *g)
{
	struct mock_op *ops;
	int st;

	if (!g)
		return CUDA_ERROR_INVALID_VALUE;
	st = mock_capture_end(mstream(s), &ops);
	*g = NULL;
	if (st == MOCK_CAP_NONE)
		return CUDA_ERROR_INVALID_VALUE; /* CUDA_ERROR_ILLEGAL_STATE in the driver */
	if (st == MOCK_CAP_INVALIDATED)
		return CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
	*g = calloc(1, sizeof(**g));
	(*g)->ops = ops;
	return CUDA_SUCCESS;
}

CUresult mock_cu_cuStreamEndCapture(CUstream s, CUgraph *g)
{
	return end_capture(s, g);
}

static CUresult is_capturing(CUstream s, int *status, cuuint64_t *id)
{
	int st;

	if (gone(s))
		return CUDA_ERROR_CONTEXT_IS_DESTROYED;
	st = mock_capture_status(mstream(s), (uint64_t *)id);
	if (st < 0)
		return CUDA_ERROR_STREAM_CAPTURE_IMPLICIT;
	*status = st;
	return CUDA_SUCCESS;
}

EXPORT CUresult cuStreamIsCapturing(CUstream s, int *status)
{
	return is_capturing(s, status, NULL);
}

EXPORT CUresult cuStreamIsCapturing_ptsz(CUstream s, int *status)
{
	CUresult r;

	mock_cu_per_thread = 1;
	r = is_capturing(s, status, NULL);
	mock_cu_per_thread = 0;
	return r;
}

EXPORT CUresult cuStreamGetCaptureInfo_v3(CUstream s, int *status, cuuint64_t *id, CUgraph *g,
                                          const void **deps, const void **edges, size_t *ndeps)
{
	cuuint64_t cid = 0;
	CUresult r = is_capturing(s, status, &cid);

	if (id)
		*id = cid;
	if (g)
		*g = NULL;
	if (deps)
		*deps = NULL;
	if (edges)
		*edges = NULL;
	if (ndeps)
		*ndeps = 0;
	return r;
}

EXPORT CUresult cuStreamGetCaptureInfo_v2(CUstream s, int *status, cuuint64_t *id, CUgraph *g,
                                          const void **deps, size_t *ndeps)
{
	return cuStreamGetCaptureInfo_v3(s, status, id, g, deps, NULL, ndeps);
}

EXPORT CUresult cuGraphInstantiateWithFlags(CUgraphExec *x, CUgraph g, unsigned long long flags)
{
	struct mock_op *o, *copy, **tail;

	if (!x || !g)
		return CUDA_ERROR_INVALID_VALUE;
	*x = calloc(1, sizeof(**x));
	tail = &(*x)->ops;
	for (o = g->ops; o; o = o->next) {
		copy = malloc(sizeof(*copy));
		*copy = *o;
		copy->next = NULL;
		*tail = copy;
		tail = &copy->next;
	}
	return CUDA_SUCCESS;
}

EXPORT CUresult cuGraphDestroy(CUgraph g)
{
	if (g)
		mock_graph_free(g->ops);
	free(g);
	return CUDA_SUCCESS;
}

EXPORT CUresult cuGraphExecDestroy(CUgraphExec x)
{
	if (x)
		mock_graph_free(x->ops);
	free(x);
	return CUDA_SUCCESS;
}

CUresult mock_cu_cuStreamBeginCaptureToGraph(CUstream s, CUgraph g, const CUgraphNode *deps,
                                             const CUgraphEdgeData *edges, size_t n,
                                             CUstreamCaptureMode mode)
{
	return begin_capture(s, mode); /* the mock always starts an empty graph */
}

CUresult mock_cu_cuGraphLaunch(CUgraphExec x, CUstream s)
{
	struct mock_stream *ms = mstream(s);

	if (!x)
		return CUDA_ERROR_INVALID_VALUE;
	switch (mock_capture_status(ms, NULL)) {
	case MOCK_CAP_NONE:
		break;
	case -1: /* legacy stream while a blocking stream captures */
		return CUDA_ERROR_STREAM_CAPTURE_IMPLICIT;
	default: /* not modelled: a graph launched into a capture */
		return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
	}
	mock_graph_launch(x->ops, ms);
	return CUDA_SUCCESS;
}

EXPORT CUresult cuMemHostAlloc(void **p, size_t n, unsigned int flags)
{
	*p = calloc(1, n ? n : 1);
	return *p ? CUDA_SUCCESS : 2;
}

EXPORT CUresult cuMemHostGetDevicePointer_v2(CUdeviceptr *d, void *p, unsigned int flags)
{
	*d = (CUdeviceptr)(uintptr_t)p;
	return CUDA_SUCCESS;
}

EXPORT CUresult cuMemFreeHost(void *p)
{
	free(p);
	return CUDA_SUCCESS;
}

/* ---- cuGetProcAddress ---------------------------------------------------------- */

/* The newest ABI of an unhooked name: name_v2 where we export one. */
static void *mock_own_symbol(void *self, const char *symbol)
{
	char v2[128];
	void *p = NULL;

	if (snprintf(v2, sizeof(v2), "%s_v2", symbol) < (int)sizeof(v2))
		p = dlsym(self, v2);
	return p ? p : dlsym(self, symbol);
}

EXPORT CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int ver,
                                    unsigned long long flags, int *status)
{
	void *p = mock_cuda_proc(symbol, ver, flags);
	Dl_info info;
	void *self;

	if (!p && dladdr((void *)cuInit, &info) && info.dli_fname) {
		/* Unhooked names: our own export of that name. */
		self = dlopen(info.dli_fname, RTLD_NOLOAD | RTLD_LAZY);
		if (self) {
			if (strcmp(symbol, "cuGetProcAddress") == 0)
				symbol = ver >= 12000 ? "cuGetProcAddress_v2" : "cuGetProcAddress";
			p = mock_own_symbol(self, symbol);
			dlclose(self);
		}
	}
	if (status)
		*status = p ? 0 : 1; /* CU_GET_PROC_ADDRESS_SUCCESS / SYMBOL_NOT_FOUND */
	*pfn = p;
	return p ? CUDA_SUCCESS : CUDA_ERROR_NOT_FOUND;
}

EXPORT CUresult cuGetProcAddress_v2_ptsz(const char *symbol, void **pfn, int ver,
                                         unsigned long long flags, int *status)
{
	return cuGetProcAddress_v2(symbol, pfn, ver, flags, status);
}

EXPORT CUresult cuGetProcAddress(const char *symbol, void **pfn, int ver, unsigned long long flags)
{
	return cuGetProcAddress_v2(symbol, pfn, ver, flags, NULL);
}
