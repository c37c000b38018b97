/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mock_hip.c - TEST DOUBLE: a fake libamdhip64.so (not HIP) implementing
 * the subset tests use, on the simulated GPU of mock_gpu.c.  No AMD GPU
 * was available to the project; HIP support is tested against this only.
 *
 * hipLaunchKernel / hipModuleLaunchKernel (and each entry of
 * hipLaunchCooperativeKernelMultiDevice) run a "kernel" of args[1]
 * (long long *) microseconds and write that number to *(void **)args[0].
 * Stream capture (hipStreamBeginCapture ... hipGraphLaunch) follows the
 * same rules as the CUDA mock (mock_gpu.h mock_unsafe).
 *
 * KREX_MOCK_HIP_DEVICES=N (1 to 8, default 1): N devices.  A stream and an
 * event belong to the device current when they were made, the null stream
 * to the caller's current device (each device has its own, mock_legacy());
 * hipEventRecord of an event on a stream of another device fails with
 * hipErrorInvalidHandle, as HIP's does.  The per-thread default stream is
 * device 0's.  Every device runs on the one simulated GPU.
 *
 * hipStreamDestroy waits for the stream's work and keeps the handle dead,
 * not freed: a later use of it aborts the process with a message (on a
 * real runtime, a use after free).
 *
 * KREX_MOCK_HIP52=1: hipMemcpyPeer copies through the exported hipMemcpy,
 * found with dlsym(RTLD_DEFAULT) (a preloaded gate's wrapper first), as
 * Debian's HIP 5.2 runtime does; with KREX_MOCK_HIP52_WAIT=P it first
 * creates P.in and waits (at most 30 s) for P.go, so that a test can close
 * a gate between the two calls.
 */
#include "config.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "gate_types.h"
#include "mock_gpu.h"
#include "mock_hip.h"

#define EXPORT __attribute__((visibility("default")))
#define hipErrorInvalidValue 1
#define hipErrorInvalidHandle 400
#define hipErrorStreamCaptureUnsupported 900
#define hipErrorStreamCaptureInvalidated 901
#define hipErrorStreamCaptureImplicit 906
#define hipErrorCapturedEvent 907

struct ihipStream_t {
	struct mock_stream s;
	int dead;       /* destroyed (hipStreamDestroy) */
	unsigned epoch; /* hip_epoch at its making */
};
struct ihipEvent_t {
	struct mock_event e;
	int dev;
	unsigned epoch;
};

/* Bumped by hipDeviceReset, hipDevicePrimaryCtxReset and hipCtxDestroy:
 * the streams and events made before are gone (a use aborts; every device
 * counts as reset). */
static unsigned hip_epoch;

static void check_epoch(unsigned epoch, const char *what, const void *p)
{
	if (epoch != hip_epoch)
		mock_used_after_end("HIP", what, p);
}
struct ihipGraph {
	struct mock_op *ops;
};
struct hipGraphExec {
	struct mock_op *ops;
};

static __thread int cur_dev;

/* KREX_MOCK_HIP_DEVICES, 1 to MOCK_MAX_DEVICES. */
static int ndevices(void)
{
	const char *e = getenv("KREX_MOCK_HIP_DEVICES");
	int n = e ? atoi(e) : 1;

	return n < 1 ? 1 : n > MOCK_MAX_DEVICES ? MOCK_MAX_DEVICES : n;
}

static struct mock_stream *mstream(hipStream_t s)
{
	if (s == hipStreamPerThread)
		return mock_per_thread();
	if (s && s->dead)
		mock_used_after_end("HIP", "stream (destroyed)", s);
	if (s)
		check_epoch(s->epoch, "stream", s);
	return s ? &s->s : mock_legacy(cur_dev);
}

/* The device of stream s (the null stream: the current device's). */
static int stream_dev(hipStream_t s)
{
	struct mock_stream *ms = mstream(s);

	return s && s != hipStreamPerThread && ms ? ms->dev : s ? 0 : cur_dev;
}

/* Queue op on s or record it into s's capture; *seq 0 when captured. */
static hipError_t submit(hipStream_t s, const struct mock_op *op, uint64_t *seq)
{
	struct mock_stream *ms = mstream(s);
	int c = mock_capture_op(ms, op);
	uint64_t n = 0;

	if (c < 0)
		return ms ? hipErrorStreamCaptureInvalidated : hipErrorStreamCaptureImplicit;
	if (c == 0)
		n = mock_submit(ms, op);
	if (seq)
		*seq = n;
	return hipSuccess;
}

EXPORT hipError_t hipInit(unsigned int flags)
{
	return hipSuccess;
}

EXPORT hipError_t hipGetDeviceCount(int *n)
{
	*n = ndevices();
	return hipSuccess;
}

/*
 * KREX_MOCK_HIP_DEINIT=PATH: once PATH exists the runtime is shut down, as in
 * a process's exit after HIP's teardown: hipGetDevice, hipEventRecord and
 * hipEventQuery answer hipErrorDeinitialized (CUDA's mock does the same).
 */
static int deinitialized(void)
{
	return mock_deinitialized("KREX_MOCK_HIP_DEINIT");
}

EXPORT hipError_t hipGetDevice(int *d)
{
	if (deinitialized())
		return hipErrorDeinitialized;
	*d = cur_dev;
	return hipSuccess;
}

EXPORT hipError_t hipSetDevice(int d)
{
	if (d < 0 || d >= ndevices())
		return hipErrorInvalidValue;
	cur_dev = d;
	return hipSuccess;
}

/* HIP: -1 for an invalid stream, not checked here. */
EXPORT int hipGetStreamDeviceId(hipStream_t s)
{
	return stream_dev(s);
}

EXPORT hipError_t hipDeviceSynchronize(void)
{
	if (mock_unsafe(NULL, 1))
		return hipErrorStreamCaptureUnsupported;
	mock_sync_all();
	return hipSuccess;
}

EXPORT hipError_t hipMalloc(void **p, size_t n)
{
	*p = calloc(1, n ? n : 1);
	return *p ? hipSuccess : 2;
}

EXPORT hipError_t hipFree(void *p)
{
	mock_sync_all();
	free(p);
	return hipSuccess;
}

EXPORT hipError_t hipStreamCreateWithFlags(hipStream_t *s, unsigned int flags)
{
	*s = calloc(1, sizeof(**s));
	if (!*s)
		return 2;
	(*s)->s.flags = flags & 1 ? MOCK_STREAM_NONBLOCKING : 0; /* hipStreamNonBlocking */
	(*s)->s.dev = cur_dev;
	(*s)->epoch = hip_epoch;
	return hipSuccess;
}

EXPORT hipError_t hipStreamCreate(hipStream_t *s)
{
	return hipStreamCreateWithFlags(s, 0);
}

/* Gated (hip_hooks.def GK_CONTEXT_END): the work queued first, then every
 * stream and event made before is gone (hip_epoch). */
static hipError_t end_context(void)
{
	mock_sync_all();
	hip_epoch++;
	return hipSuccess;
}

hipError_t mock_hip_hipDeviceReset(void)
{
	return end_context();
}

hipError_t mock_hip_hipDevicePrimaryCtxReset(hipDevice_t d)
{
	return d < 0 || d >= ndevices() ? hipErrorInvalidValue : end_context();
}

hipError_t mock_hip_hipCtxDestroy(hipCtx_t c)
{
	return c ? end_context() : hipErrorInvalidValue;
}

hipError_t mock_hip_hipStreamDestroy(hipStream_t s)
{
	struct mock_stream *ms;

	if (!s || s == hipStreamPerThread)
		return hipErrorInvalidHandle;
	ms = mstream(s); /* aborts on a second destroy */
	mock_sync_stream(ms);
	mock_stream_release(ms);
	s->dead = 1; /* not freed: a later use is caught */
	return hipSuccess;
}

EXPORT hipError_t hipStreamGetFlags(hipStream_t s, unsigned int *flags)
{
	struct mock_stream *ms = mstream(s);

	*flags = ms && (ms->flags & MOCK_STREAM_NONBLOCKING) ? 1 : 0;
	return hipSuccess;
}

EXPORT hipError_t hipStreamSynchronize(hipStream_t s)
{
	if (mock_unsafe(mstream(s), 0))
		return hipErrorStreamCaptureUnsupported;
	mock_sync_stream(mstream(s));
	return hipSuccess;
}

EXPORT hipError_t hipStreamQuery(hipStream_t s)
{
	struct mock_stream *ms = mstream(s);

	if (mock_unsafe(ms, 0))
		return hipErrorStreamCaptureUnsupported;
	return mock_done(ms, ms ? ms->submitted : 0) ? hipSuccess : 600; /* hipErrorNotReady */
}

EXPORT hipError_t hipEventCreate(hipEvent_t *e)
{
	*e = calloc(1, sizeof(**e));
	if (!*e)
		return 2;
	(*e)->dev = cur_dev;
	(*e)->epoch = hip_epoch;
	return hipSuccess;
}

EXPORT hipError_t hipEventRecord(hipEvent_t e, hipStream_t s)
{
	struct mock_op op = {.type = MOP_EVENT, .ev = &e->e};

	if (deinitialized())
		return hipErrorDeinitialized;
	if (!e)
		return hipErrorInvalidHandle;
	check_epoch(e->epoch, "event", e);
	if (e->dev != stream_dev(s))
		return hipErrorInvalidHandle; /* an event of another device */
	return submit(s, &op, NULL);
}

static hipError_t event_check(hipEvent_t e)
{
	if (!e)
		return hipErrorInvalidValue;
	check_epoch(e->epoch, "event", e);
	if (e->e.captured) {
		mock_unsafe(e->e.s, 0);
		return hipErrorCapturedEvent;
	}
	return mock_unsafe(NULL, 0) ? hipErrorStreamCaptureUnsupported : hipSuccess;
}

EXPORT hipError_t hipEventSynchronize(hipEvent_t e)
{
	hipError_t r = event_check(e);

	if (r == hipSuccess && e->e.s)
		mock_wait(e->e.s, e->e.seq);
	return r;
}

EXPORT hipError_t hipEventCreateWithFlags(hipEvent_t *e, unsigned flags)
{
	(void)flags;
	return hipEventCreate(e);
}

EXPORT hipError_t hipEventQuery(hipEvent_t e)
{
	hipError_t r = deinitialized() ? hipErrorDeinitialized : event_check(e);

	if (r != hipSuccess)
		return r;
	return !e->e.s || mock_done(e->e.s, e->e.seq) ? hipSuccess : 600; /* hipErrorNotReady */
}

EXPORT hipError_t hipEventElapsedTime(float *ms, hipEvent_t a, hipEvent_t b)
{
	if (!a->e.s || !b->e.s)
		return hipErrorInvalidValue;
	mock_wait(a->e.s, a->e.seq);
	mock_wait(b->e.s, b->e.seq);
	*ms = (float)((double)((int64_t)(b->e.t_ns - a->e.t_ns)) / 1e6);
	return hipSuccess;
}

static hipError_t kernel(void **args, hipStream_t s)
{
	struct mock_op op = {.type = MOP_KERNEL};

	if (args) {
		op.dst = args[0] ? *(void **)args[0] : NULL;
		op.us = args[1] ? (uint64_t) * (long long *)args[1] : 0;
	}
	return submit(s, &op, NULL);
}

hipError_t mock_hip_hipLaunchKernel(const void *f, dim3 g, dim3 b, void **args, size_t shm,
                                    hipStream_t s)
{
	return kernel(args, s);
}

/* hip_ext.h's module launches, ROCm 6's C names and HIP 5.2's mangled ones
 * (hip_hooks.def): a kernel of kernelParams, as hipModuleLaunchKernel's */
#define MOCK_EXT_LAUNCH(name, ...)                                                                 \
	hipError_t mock_hip_##name(hipFunction_t f, uint32_t gx, uint32_t gy, uint32_t gz,         \
	                           uint32_t bx, uint32_t by, uint32_t bz, size_t shm,              \
	                           hipStream_t s, void **args, void **extra, hipEvent_t start,     \
	                           hipEvent_t stop __VA_ARGS__)                                    \
	{                                                                                          \
		return kernel(args, s);                                                            \
	}
MOCK_EXT_LAUNCH(hipExtModuleLaunchKernel, , uint32_t flags)
MOCK_EXT_LAUNCH(hipHccModuleLaunchKernel)
MOCK_EXT_LAUNCH(
        _Z24hipExtModuleLaunchKernelP18ihipModuleSymbol_tjjjjjjmP12ihipStream_tPPvS4_P11ihipEvent_tS6_j,
        , uint32_t flags)
MOCK_EXT_LAUNCH(
        _Z24hipHccModuleLaunchKernelP18ihipModuleSymbol_tjjjjjjmP12ihipStream_tPPvS4_P11ihipEvent_tS6_)
#undef MOCK_EXT_LAUNCH

/* -fgpu-default-stream=per-thread: a stream of 0 is the per-thread stream */
hipError_t mock_hip_hipLaunchKernel_spt(const void *f, dim3 g, dim3 b, void **args, size_t shm,
                                        hipStream_t s)
{
	return kernel(args, s ? s : hipStreamPerThread);
}

hipError_t mock_hip_hipModuleLaunchKernel(hipFunction_t f, unsigned int gx, unsigned int gy,
                                          unsigned int gz, unsigned int bx, unsigned int by,
                                          unsigned int bz, unsigned int shm, hipStream_t s,
                                          void **args, void **extra)
{
	return kernel(args, s);
}

/* A list of one entry per device, each on a stream of its device (HIP
 * rejects a null stream and a device named twice), each entry's kernel
 * on its stream: list, n entries of stride bytes, each's stream at
 * stream_off and its kernel arguments at args_off. */
static hipError_t multi_launch(const char *list, size_t stride, size_t stream_off, size_t args_off,
                               long n)
{
	unsigned seen = 0;
	hipStream_t s;
	void **args;
	long i;
	int d;

	if (!list || n < 1 || n > ndevices())
		return hipErrorInvalidValue;
	for (i = 0; i < n; i++) {
		memcpy(&s, list + (size_t)i * stride + stream_off, sizeof(s));
		if (!s || s == hipStreamPerThread)
			return hipErrorInvalidValue;
		d = stream_dev(s);
		if (seen & (1u << d))
			return hipErrorInvalidValue;
		seen |= 1u << d;
	}
	for (i = 0; i < n; i++) {
		memcpy(&s, list + (size_t)i * stride + stream_off, sizeof(s));
		memcpy(&args, list + (size_t)i * stride + args_off, sizeof(args));
		kernel(args, s);
	}
	return hipSuccess;
}

hipError_t mock_hip_hipLaunchCooperativeKernelMultiDevice(hipLaunchParams *l, int n,
                                                          unsigned int flags)
{
	return multi_launch((const char *)l, sizeof(*l), offsetof(hipLaunchParams, stream),
	                    offsetof(hipLaunchParams, args), n);
}

/* ROCm 6's */
hipError_t mock_hip_hipModuleLaunchCooperativeKernelMultiDevice(hipFunctionLaunchParams *l,
                                                                unsigned int n, unsigned int flags)
{
	return multi_launch((const char *)l, sizeof(*l), offsetof(hipFunctionLaunchParams, hStream),
	                    offsetof(hipFunctionLaunchParams, kernelParams), (long)n);
}

static hipError_t copy(void *dst, const void *src, size_t n, hipStream_t s, int sync)
{
	struct mock_op op = {.type = MOP_COPY, .dst = dst, .src = src, .n = n};
	uint64_t seq;
	hipError_t r;

	if (sync && mock_unsafe(NULL, 0))
		return hipErrorStreamCaptureUnsupported;
	r = submit(s, &op, &seq);
	if (r == hipSuccess && sync && seq)
		mock_wait(mstream(s), seq);
	return r;
}

hipError_t mock_hip_hipMemcpy(void *dst, const void *src, size_t n, hipMemcpyKind k)
{
	return copy(dst, src, n, NULL, 1);
}

/* KREX_MOCK_HIP52 (above): HIP 5.2's hipMemcpyPeer, through hipMemcpy. */
hipError_t mock_hip_hipMemcpyPeer(void *dst, int dd, const void *src, int sd, size_t n)
{
	hipError_t (*cp)(void *, const void *, size_t, hipMemcpyKind);
	const char *w = getenv("KREX_MOCK_HIP52_WAIT");
	struct timespec tick = {0, 1000 * 1000};
	char path[4096];
	int i, fd;

	(void)dd;
	(void)sd;
	if (!getenv("KREX_MOCK_HIP52"))
		return copy(dst, src, n, NULL, 1);
	if (w && snprintf(path, sizeof(path), "%s.in", w) < (int)sizeof(path) &&
	    (fd = open(path, O_WRONLY | O_CREAT, 0644)) >= 0) {
		close(fd);
		snprintf(path, sizeof(path), "%s.go", w);
		for (i = 0; i < 30000 && access(path, F_OK) != 0; i++)
			nanosleep(&tick, NULL);
	}
	cp = (hipError_t(*)(void *, const void *, size_t, hipMemcpyKind))dlsym(RTLD_DEFAULT,
	                                                                       "hipMemcpy");
	return cp ? cp(dst, src, n, (hipMemcpyKind)3 /* hipMemcpyDeviceToDevice */)
	          : hipErrorInvalidValue;
}

hipError_t mock_hip_hipMemcpyAsync(void *dst, const void *src, size_t n, hipMemcpyKind k,
                                   hipStream_t s)
{
	return copy(dst, src, n, s, 0);
}

hipError_t mock_hip_hipMemset(void *dst, int v, size_t n)
{
	struct mock_op op = {.type = MOP_SET, .dst = dst, .value = (uint32_t)v, .elem = 1, .n = n};

	uint64_t seq;
	hipError_t r;

	if (mock_unsafe(NULL, 0))
		return hipErrorStreamCaptureUnsupported;
	r = submit(NULL, &op, &seq);
	if (r == hipSuccess && seq)
		mock_wait(mstream(NULL), seq);
	return r;
}

/* ---- stream capture and graphs ------------------------------------------------ */

EXPORT hipError_t hipThreadExchangeStreamCaptureMode(int *mode)
{
	if (!mode || *mode < 0 || *mode > 2)
		return hipErrorInvalidValue;
	mock_capture_exchange_mode(mode);
	return hipSuccess;
}

hipError_t mock_hip_hipStreamBeginCapture(hipStream_t s, hipStreamCaptureMode mode)
{
	if (!s)
		return hipErrorStreamCaptureUnsupported;
	return mock_capture_begin(mstream(s), mode) == 0 ? hipSuccess : hipErrorInvalidValue;
}

hipError_t mock_hip_hipStreamEndCapture(hipStream_t s, hipGraph_t *g)
{
	struct mock_op *ops;
	int st;

	if (!g)
		return hipErrorInvalidValue;
	st = mock_capture_end(mstream(s), &ops);
	*g = NULL;
	if (st == MOCK_CAP_NONE)
		return hipErrorInvalidValue;
	if (st == MOCK_CAP_INVALIDATED)
		return hipErrorStreamCaptureInvalidated;
	*g = calloc(1, sizeof(**g));
	(*g)->ops = ops;
	return hipSuccess;
}

EXPORT hipError_t hipStreamIsCapturing(hipStream_t s, int *status)
{
	int st = mock_capture_status(mstream(s), NULL);

	if (st < 0)
		return hipErrorStreamCaptureImplicit;
	*status = st;
	return hipSuccess;
}

EXPORT hipError_t hipGraphInstantiate(hipGraphExec_t *x, hipGraph_t g, void *errnode, char *log,
                                      size_t logsz)
{
	struct mock_op *o, *copy, **tail;

	if (!x || !g)
		return hipErrorInvalidValue;
	*x = calloc(1, sizeof(**x));
	tail = &(*x)->ops;
	for (o = g->ops; o; o = o->next) {
		copy = malloc(sizeof(*copy));
		*copy = *o;
		copy->next = NULL;
		*tail = copy;
		tail = &copy->next;
	}
	return hipSuccess;
}

EXPORT hipError_t hipGraphDestroy(hipGraph_t g)
{
	if (g)
		mock_graph_free(g->ops);
	free(g);
	return hipSuccess;
}

hipError_t mock_hip_hipGraphLaunch(hipGraphExec_t x, hipStream_t s)
{
	if (!x)
		return hipErrorInvalidValue;
	if (mock_capture_status(mstream(s), NULL) != MOCK_CAP_NONE)
		return hipErrorStreamCaptureUnsupported;
	mock_graph_launch(x->ops, mstream(s));
	return hipSuccess;
}
