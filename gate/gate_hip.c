/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gate_hip.c - the HIP backend of the gate: one wrapper per symbol of
 * hip_hooks.def, the devices to drain, the bounded queue's event calls.  HIP 5.x has no hipGetProcAddress;
 * programs reach these by direct binding or dlsym, both covered.
 * No AMD GPU was available to this project: tested against the mock only.
 */
#include "config.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "gate.h"
#include "gate_queue.h"
#include "gate_types.h"
#include "krex/region.h"
#include "log.h"
#include "timeutil.h"

enum hip_hook_id {
#define HIP_HOOK(name, kind, params, args, stream) HIPH_##name,
#include "hip_hooks.def"
#undef HIP_HOOK
	HIPH_COUNT
};

#define HIP_HOOK(name, kind, params, args, stream) GATE_EXPORT hipError_t name params;
#include "hip_hooks.def"
#undef HIP_HOOK

struct hip_hook {
	const char *name;
	void *wrapper;
};

static const struct hip_hook hip_hooks[HIPH_COUNT] = {
#define HIP_HOOK(name, kind, params, args, stream) {#name, (void *)name},
#include "hip_hooks.def"
#undef HIP_HOOK
};

static _Atomic(void *) hip_real[HIPH_COUNT];
static _Atomic unsigned long hip_count[HIPH_COUNT];
static _Atomic(void *) hip_handle;
static _Atomic uint64_t hip_devices; /* bit d: device d was submitted to */

static void *gate_hip_handle(void)
{
	static const char *const names[] = {"libamdhip64.so", "libamdhip64.so.6",
	                                    "libamdhip64.so.5", NULL};
	void *h = atomic_load(&hip_handle);

	if (!h) {
		h = gate_open_first(names);
		if (h)
			atomic_store(&hip_handle, h);
	}
	return h;
}

static void *gate_hip_sym(const char *name)
{
	void *h = gate_hip_handle();

	return h ? gate_real_dlsym(h, name) : NULL;
}

static void *gate_hip_real(int id)
{
	void *p = atomic_load_explicit(&hip_real[id], memory_order_acquire);
	void *expect = NULL;

	if (p)
		return p;
	p = gate_hip_sym(hip_hooks[id].name);
	if (!p || p == hip_hooks[id].wrapper)
		return NULL;
	if (!atomic_compare_exchange_strong(&hip_real[id], &expect, p))
		p = expect;
	return p;
}

typedef hipError_t (*hip_getdev_fn)(int *);
typedef hipError_t (*hip_setdev_fn)(int);
static _Atomic(void *) hip_getdev;

/* hipGetDevice (resolved once): the calling thread's current device in
 * *d; its answer, or hipErrorNotInitialized without the runtime. */
static hipError_t gate_hip_current(int *d)
{
	hip_getdev_fn get = (hip_getdev_fn)atomic_load(&hip_getdev);

	if (!get) {
		get = (hip_getdev_fn)gate_hip_sym("hipGetDevice");
		atomic_store(&hip_getdev, (void *)get);
	}
	return get ? get(d) : hipErrorNotInitialized;
}

/* Remember device d for the drain: the calling thread's current device
 * when d < 0 (a HIP_HOOK_DEV's device column, hip_hooks.def). */
static void gate_hip_track(int d)
{
	if (d < 0 && gate_hip_current(&d) != hipSuccess)
		return;
	if (d >= 0 && d < 64 &&
	    !(atomic_load_explicit(&hip_devices, memory_order_relaxed) & (1ull << d)))
		atomic_fetch_or(&hip_devices, 1ull << d);
}

typedef int (*hip_streamdev_fn)(hipStream_t);
static _Atomic(void *) hip_streamdev;

/* The device of stream s (hipGetStreamDeviceId, in HIP 5.2 and ROCm 6), or
 * -1. */
static int gate_hip_stream_device(hipStream_t s)
{
	hip_streamdev_fn f = (hip_streamdev_fn)atomic_load(&hip_streamdev);

	if (!f) {
		f = (hip_streamdev_fn)gate_hip_sym("hipGetStreamDeviceId");
		atomic_store(&hip_streamdev, (void *)f);
	}
	return f ? f(s) : -1;
}

/*
 * Every explicit stream the process submitted to, with its device, for the
 * drain: an event on each, as the CUDA backend does (gate_cuda_drain.c),
 * since the null stream does not wait for a non-blocking stream.  A slot
 * is filled at a stream's first submission (by the submitting thread) and
 * emptied by hipStreamDestroy's wrapper before the runtime destroys it,
 * under hip_strm_mu, which the drain holds while it records: the drain
 * never touches a destroyed stream.  The slot keeps its event (of its
 * device) for the next stream.
 */
#define HIP_MAX_STREAMS 256
enum { HS_FREE = 0, HS_READY = 1 };
struct hip_strm {
	_Atomic int state;
	hipStream_t s;
	int dev;       /* the stream's device */
	hipEvent_t ev; /* the drain's event, made on ev_dev */
	int ev_dev;
};
static struct hip_strm hip_strms[HIP_MAX_STREAMS];
static pthread_mutex_t hip_strm_mu = PTHREAD_MUTEX_INITIALIZER;
static _Atomic unsigned hip_destroys;
static _Atomic int hip_strms_full;
/* The last stream this thread submitted to, valid while no stream has been
 * destroyed since (a new stream may get a destroyed one's handle). */
static __thread hipStream_t hip_last_stream;
static __thread unsigned hip_last_gen;

static struct hip_strm *gate_hip_find_stream(hipStream_t s)
{
	int i;

	for (i = 0; i < HIP_MAX_STREAMS; i++)
		if (atomic_load_explicit(&hip_strms[i].state, memory_order_acquire) == HS_READY &&
		    hip_strms[i].s == s)
			return &hip_strms[i];
	return NULL;
}

/* A submission to stream s by this thread (joined); dev: s's device, or -1
 * to ask the runtime.  The null and per-thread streams are blocking: the
 * drain's event on the null stream of each device covers them. */
static void gate_hip_track_stream(hipStream_t s, int dev)
{
	unsigned gen = atomic_load_explicit(&hip_destroys, memory_order_acquire);
	int i;

	if (!s || s == hipStreamPerThread || (s == hip_last_stream && gen == hip_last_gen))
		return;
	if (dev < 0)
		dev = gate_hip_stream_device(s);
	/* no hipGetStreamDeviceId: a launch goes to the current device */
	if (dev < 0 && gate_hip_current(&dev) != hipSuccess)
		dev = 0;
	pthread_mutex_lock(&hip_strm_mu);
	if (!gate_hip_find_stream(s)) {
		for (i = 0; i < HIP_MAX_STREAMS; i++)
			if (atomic_load_explicit(&hip_strms[i].state, memory_order_relaxed) ==
			    HS_FREE)
				break;
		if (i < HIP_MAX_STREAMS) {
			hip_strms[i].s = s;
			hip_strms[i].dev = dev;
			atomic_store_explicit(&hip_strms[i].state, HS_READY, memory_order_release);
		} else if (!atomic_exchange(&hip_strms_full, 1)) {
			log_warn(
			        "more than %d HIP streams: the drain does not see the others (from now on it says it is incomplete)",
			        HIP_MAX_STREAMS);
		}
	}
	pthread_mutex_unlock(&hip_strm_mu);
	hip_last_stream = s;
	hip_last_gen = gen;
}

/* hipStreamDestroy, before the runtime: forget s. */
static void gate_hip_destroy_before(hipStream_t s)
{
	struct hip_strm *st;

	pthread_mutex_lock(&hip_strm_mu);
	st = gate_hip_find_stream(s);
	if (st) {
		st->s = NULL;
		atomic_store(&st->state, HS_FREE);
	}
	atomic_fetch_add(&hip_destroys, 1);
	pthread_mutex_unlock(&hip_strm_mu);
}

_Static_assert(offsetof(hipLaunchParams, stream) == 48, "hipLaunchParams.stream moved");
/* ROCm 6's hip_runtime_api.h: function, 7 unsigned ints, hStream, kernelParams */
_Static_assert(offsetof(hipFunctionLaunchParams, hStream) == 40 &&
                       sizeof(hipFunctionLaunchParams) == 56,
               "hipFunctionLaunchParams layout");

/*
 * A multi-device launch (hip_hooks.def): one entry per device, each on its
 * own stream (list: n entries of stride bytes, each's stream at stream_off).
 * Remember every entry's stream and device (hipGetStreamDeviceId, in HIP
 * 5.2 and ROCm 6); returns -1, so the caller's current device is
 * remembered too.  A list longer than the drain's 64 devices is not read
 * (HIP rejects more entries than devices); an invalid stream (-1) fails
 * the launch itself.
 */
static int gate_hip_streams_devices(const char *list, size_t stride, size_t stream_off, long n)
{
	static _Atomic int warned;
	hipStream_t s;
	long i;
	int d;

	if (!list || n <= 0 || n > 64)
		return -1;
	for (i = 0; i < n; i++) {
		memcpy(&s, list + (size_t)i * stride + stream_off, sizeof(s));
		d = gate_hip_stream_device(s);
		if (d < 0 && !atomic_exchange(&warned, 1))
			log_warn(
			        "no hipGetStreamDeviceId: the drain waits only on the current device of a multi-device launch");
		if (d >= 0)
			gate_hip_track(d);
		gate_hip_track_stream(s, d);
	}
	return -1;
}

static int gate_hip_list_devices(const hipLaunchParams *list, int n)
{
	return gate_hip_streams_devices((const char *)list, sizeof(*list),
	                                offsetof(hipLaunchParams, stream), n);
}

/* ROCm 6's hipModuleLaunchCooperativeKernelMultiDevice: the same. */
static int gate_hip_flist_devices(const hipFunctionLaunchParams *list, unsigned n)
{
	return gate_hip_streams_devices((const char *)list, sizeof(*list),
	                                offsetof(hipFunctionLaunchParams, hStream), (long)n);
}

static _Atomic int hip_captures; /* captures begun through the gate, not ended */

typedef hipError_t (*hip_evcreate_fn)(hipEvent_t *, unsigned);
typedef hipError_t (*hip_evrecord_fn)(hipEvent_t, hipStream_t);
typedef hipError_t (*hip_ev_fn)(hipEvent_t);
/* The gate's own event calls (the drain, the bounded queue's) run in
 * relaxed capture mode (gate_relax()). */
static gate_xmode_fn hip_xmode(void)
{
	return (gate_xmode_fn)gate_hip_sym("hipThreadExchangeStreamCaptureMode");
}

/*
 * Per device: an event on the null stream (which waits for every blocking
 * stream), and one on every explicit stream tracked (a non-blocking stream
 * is not waited for by the null stream), each made on its stream's device;
 * polled until deadline, in relaxed capture mode; never
 * hipDeviceSynchronize (it invalidates captures, and waits without bound
 * behind a kernel the host releases).  While a capture begun through the
 * gate is open the null stream is out of reach (an implicit dependency on
 * a capturing blocking stream), as is a capturing stream: the drain waits
 * for the rest and says it is incomplete rather than risk the capture.
 */
static int hip_gq_query(void *ev);

/* Is the runtime shut down (hipErrorDeinitialized: the process is in
 * exit)?  1 or 0. */
static int hip_deinit(void)
{
	int d;

	return gate_hip_current(&d) == hipErrorDeinitialized;
}

static int hip_gq_capturing(void *s);

/* Record *ev (made on dev on first use) on s, dev current; 0 or -1.  On
 * failure *ev is forgotten (made again next time). */
static int hip_drain_record(hipEvent_t *ev, int *ev_dev, int dev, hipStream_t s)
{
	hip_evcreate_fn create = (hip_evcreate_fn)gate_hip_sym("hipEventCreateWithFlags");
	hip_evrecord_fn record = (hip_evrecord_fn)gate_hip_sym("hipEventRecord");
	hip_ev_fn destroy = (hip_ev_fn)gate_hip_sym("hipEventDestroy");

	if (*ev && *ev_dev != dev) {
		if (destroy)
			destroy(*ev);
		*ev = NULL;
	}
	if (!create || !record)
		return -1;
	if (!*ev && create(ev, hipEventDisableTiming) != hipSuccess)
		return *ev = NULL, -1;
	*ev_dev = dev;
	if (record(*ev, s) == hipSuccess)
		return 0;
	*ev = NULL;
	return -1;
}

/* The drain's event on each device's null stream, made on that device. */
static hipEvent_t hip_null_evs[64];
static int hip_null_ev_devs[64];

static int gate_hip_drain(uint64_t deadline)
{
	hipEvent_t *evs = hip_null_evs;
	int *ev_devs = hip_null_ev_devs;
	uint64_t devs = atomic_load(&hip_devices);
	hip_setdev_fn set = (hip_setdev_fn)gate_hip_sym("hipSetDevice");
	hipStreamCaptureMode mode;
	void *targets[64 + HIP_MAX_STREAMS];
	int d, i, n = 0, rc = 0, relaxed, busy, errors = 0, cur = -1;

	if (!devs)
		return 0;
	if (!set)
		return -1;
	relaxed = gate_relax(hip_xmode(), &mode);
	pthread_mutex_lock(&hip_strm_mu);
	if (atomic_load(&hip_captures) > 0) {
		log_info("drain: a HIP stream capture is open: not waiting on the null stream");
		rc = -1;
	} else {
		for (d = 0; d < 64; d++) {
			if (!(devs & (1ull << d)))
				continue;
			if (set(d) == hipSuccess &&
			    hip_drain_record(&evs[d], &ev_devs[d], d, NULL) == 0)
				targets[n++] = evs[d];
			else
				rc = -1;
		}
	}
	for (i = 0; i < HIP_MAX_STREAMS; i++) {
		struct hip_strm *st = &hip_strms[i];

		if (atomic_load(&st->state) != HS_READY)
			continue;
		if (hip_gq_capturing(st->s)) {
			rc = -1; /* its work before the capture is not waited for */
			continue;
		}
		if (cur != st->dev && set(st->dev) != hipSuccess) {
			rc = -1;
			cur = -1;
			continue;
		}
		cur = st->dev;
		if (hip_drain_record(&st->ev, &st->ev_dev, st->dev, st->s) == 0)
			targets[n++] = st->ev;
		else
			rc = -1;
	}
	pthread_mutex_unlock(&hip_strm_mu);
	if (atomic_load(&hip_strms_full)) {
		log_info("drain: more HIP streams than the gate tracks: incomplete");
		rc = -1; /* a stream past HIP_MAX_STREAMS was never seen */
	}
	busy = gate_poll_events(hip_gq_query, targets, n, deadline, &errors);
	if (errors)
		rc = -1;
	gate_unrelax(hip_xmode(), relaxed, &mode);
	if ((busy || rc) && hip_deinit())
		return KREX_DRAIN_EXITING; /* the process exits: its contexts go */
	if (busy) {
		log_info("drain: HIP work still busy at the deadline");
		rc = -1;
	}
	return rc;
}

/* A GK_CONTEXT_END call's device (hip_hooks.def's stream column for them:
 * gate_hip_ending()): -1 every device, -2 the caller's current one. */
static __thread int hip_ending_dev;

static hipStream_t gate_hip_ending(int dev)
{
	hip_ending_dev = dev;
	return NULL;
}

/*
 * hipDeviceReset, hipDevicePrimaryCtxReset (a device), hipCtxDestroy (every
 * device: the gate does not know a context's): inside the gate, before the
 * runtime.  Forget the streams of that device and the drain's events there
 * (they go with it; not destroyed by the gate), under hip_strm_mu; the
 * bounded queue forgets its own (gate_context_end()).  A live stream
 * forgotten with them is tracked again at its next submission.
 */
static void gate_hip_context_end(int dev)
{
	int i;

	if (dev == -2 && gate_hip_current(&dev) != hipSuccess)
		dev = -1;
	gate_context_end();
	pthread_mutex_lock(&hip_strm_mu);
	for (i = 0; i < HIP_MAX_STREAMS; i++)
		if (dev < 0 || hip_strms[i].dev == dev) {
			atomic_store(&hip_strms[i].state, HS_FREE);
			hip_strms[i].s = NULL;
			hip_strms[i].ev = NULL;
		}
	for (i = 0; i < 64; i++)
		if (dev < 0 || i == dev)
			hip_null_evs[i] = NULL;
	atomic_fetch_add(&hip_destroys, 1);
	pthread_mutex_unlock(&hip_strm_mu);
}

/* In a forked child: the parent's streams and events are not its own. */
static void gate_hip_forget(void)
{
	int i;

	atomic_store(&hip_devices, 0);
	pthread_mutex_init(&hip_strm_mu, NULL);
	for (i = 0; i < HIP_MAX_STREAMS; i++) {
		atomic_store(&hip_strms[i].state, HS_FREE);
		hip_strms[i].s = NULL;
		hip_strms[i].ev = NULL;
	}
	atomic_store(&hip_strms_full, 0);
	hip_last_stream = NULL;
}

/* ---- bounded queue (gate_queue.c) ------------------------------------------ */

typedef hipError_t (*hip_evcreate0_fn)(hipEvent_t *);
typedef hipError_t (*hip_elapsed_fn)(float *, hipEvent_t, hipEvent_t);
typedef hipError_t (*hip_capturing_fn)(hipStream_t, int *);
typedef hipError_t (*hip_squery_fn)(hipStream_t);

enum { HQ_CREATE, HQ_CREATE0, HQ_RECORD, HQ_QUERY, HQ_ELAPSED, HQ_CAPTURING, HQ_SQUERY, HQ_COUNT };
static const char *const hq_names[HQ_COUNT] = {
        "hipEventCreateWithFlags", "hipEventCreate",       "hipEventRecord", "hipEventQuery",
        "hipEventElapsedTime",     "hipStreamIsCapturing", "hipStreamQuery"};
static _Atomic(void *) hq_sym[HQ_COUNT];

static void *hq(int i)
{
	void *p = atomic_load_explicit(&hq_sym[i], memory_order_acquire);

	if (!p && (p = gate_hip_sym(hq_names[i])))
		atomic_store_explicit(&hq_sym[i], p, memory_order_release);
	return p;
}

static int hip_gq_create(void **ev, int timing)
{
	hip_evcreate_fn cf = (hip_evcreate_fn)hq(HQ_CREATE);
	hip_evcreate0_fn c0 = (hip_evcreate0_fn)hq(HQ_CREATE0);

	if (cf)
		return cf((hipEvent_t *)ev, timing ? hipEventDefault : hipEventDisableTiming) ==
		                       hipSuccess
		               ? 0
		               : -1;
	return c0 && c0((hipEvent_t *)ev) == hipSuccess ? 0 : -1; /* timing events */
}

static int hip_gq_record(void *ev, void *s)
{
	hip_evrecord_fn f = (hip_evrecord_fn)hq(HQ_RECORD);

	gate_stat_add(GST_QUEUE_MARKS);
	return f && f((hipEvent_t)ev, (hipStream_t)s) == hipSuccess ? 0 : -1;
}

static int hip_gq_query(void *ev)
{
	hip_ev_fn f = (hip_ev_fn)hq(HQ_QUERY);
	hipStreamCaptureMode m;
	hipError_t r;
	int relaxed;

	if (!f)
		return -1;
	relaxed = gate_relax(hip_xmode(), &m);
	r = f((hipEvent_t)ev);
	gate_unrelax(hip_xmode(), relaxed, &m);
	return r == hipSuccess ? 1 : r == hipErrorNotReady ? 0 : -1;
}

static int hip_gq_elapsed(float *ms, void *from, void *to)
{
	hip_elapsed_fn f = (hip_elapsed_fn)hq(HQ_ELAPSED);
	hipStreamCaptureMode m;
	int relaxed, rc;

	if (!f)
		return -1;
	relaxed = gate_relax(hip_xmode(), &m);
	rc = f(ms, (hipEvent_t)from, (hipEvent_t)to) == hipSuccess ? 0 : -1;
	gate_unrelax(hip_xmode(), relaxed, &m);
	return rc;
}

static int hip_gq_capturing(void *s)
{
	hip_capturing_fn f = (hip_capturing_fn)hq(HQ_CAPTURING);
	int status = 0;

	if (!f)
		return 0;
	if (f((hipStream_t)s, &status) != hipSuccess)
		return 1;
	return status != 0; /* hipStreamCaptureStatusNone */
}

static int hip_gq_wait(void *ev, uint64_t limit_ns, uint64_t suspect_ns)
{
	return gate_gq_wait(hip_gq_query, ev, limit_ns, suspect_ns);
}

static const struct gq_ops hip_gq_ops = {hip_gq_create,  hip_gq_record,    NULL,       hip_gq_query,
                                         hip_gq_elapsed, hip_gq_capturing, hip_gq_wait};

/* In a drain's first round: s has work in flight (gate_enter()'s busy). */
static int gate_hip_stream_busy(void *stream)
{
	hipStream_t s = (hipStream_t)stream;
	hip_squery_fn f = (hip_squery_fn)hq(HQ_SQUERY);
	hipStreamCaptureMode m;
	hipError_t r;
	int relaxed;

	if (!f || hip_gq_capturing((void *)s))
		return 0;
	relaxed = gate_relax(hip_xmode(), &m);
	r = f(s);
	gate_unrelax(hip_xmode(), relaxed, &m);
	return r == hipErrorNotReady;
}

/* A call a closed gate may let through (a pass, onto a busy stream): not a
 * wait on a memory value or an external semaphore, nor a host function
 * (gate_cuda_passable()). */
#define HIP_PASSABLE(id)                                                                           \
	((id) != HIPH_hipStreamWaitValue32 && (id) != HIPH_hipStreamWaitValue64 &&                 \
	 (id) != HIPH_hipWaitExternalSemaphoresAsync && (id) != HIPH_hipLaunchHostFunc &&          \
	 (id) != HIPH_hipLaunchHostFunc_spt && (id) != HIPH_hipStreamBatchMemOp)

#define HIP_GQ_STREAMS 8
static __thread struct gq hip_gq[HIP_GQ_STREAMS];

/* Before a launch, outside the gate (see gate_cuda.c): may wait; returns
 * the queue to record into after the launch, or NULL. */
static struct gq *gate_hip_queue_before(int kind, hipStream_t s)
{
	if (kind != GK_LAUNCH)
		return NULL;
	return gate_queue_before(hip_gq, HIP_GQ_STREAMS, (void *)s, &hip_gq_ops);
}

/* A capture begun or ended through the gate (r: the driver's answer). */
static hipError_t gate_hip_capture(int kind, hipError_t r)
{
	if (kind == GK_CAPTURE_BEGIN && r == hipSuccess)
		atomic_fetch_add(&hip_captures, 1);
	else if (kind == GK_CAPTURE_END && atomic_load(&hip_captures) > 0)
		atomic_fetch_sub(&hip_captures, 1);
	return r;
}

#define HIP_WRAP(name, kind, params, args, stream, device)                                         \
	hipError_t name params                                                                     \
	{                                                                                          \
		hipError_t(*gate_fn) params = (hipError_t(*) params)gate_hip_real(HIPH_##name);    \
		struct gq *q;                                                                      \
		hipError_t r;                                                                      \
		int joined;                                                                        \
		if (!gate_fn)                                                                      \
			return hipErrorNotInitialized;                                             \
		if (gate_counting)                                                                 \
			atomic_fetch_add_explicit(&hip_count[HIPH_##name], 1,                      \
			                          memory_order_relaxed);                           \
		if (kind == GK_CONTEXT) {                                                          \
			joined = gate_context_wait(); /* here: counted for a drain */              \
			r = gate_fn args;                                                          \
			gate_context_made(joined);                                                 \
			return r;                                                                  \
		}                                                                                  \
		if (kind == GK_CONTEXT_END) { /* gated, never passed (gate.h) */                   \
			(void)(stream);                                                            \
			joined = gate_enter(0, NULL, NULL);                                        \
			gate_hip_context_end(hip_ending_dev);                                      \
			r = gate_fn args;                                                          \
			gate_leave(joined);                                                        \
			return r;                                                                  \
		}                                                                                  \
		if (kind == GK_STREAM_DESTROY)                                                     \
			gate_hip_destroy_before((hipStream_t)(stream));                            \
		if (kind >= GK_CAPTURE_BEGIN) /* not a submission: never gated */                  \
			return gate_hip_capture(kind, gate_fn args);                               \
		q = gate_hip_queue_before(kind, (hipStream_t)(stream));                            \
		joined = gate_enter(HIP_PASSABLE(HIPH_##name), gate_hip_stream_busy,               \
		                    (void *)(stream));                                             \
		if (joined) {                                                                      \
			gate_hip_track(device);                                                    \
			gate_hip_track_stream((hipStream_t)(stream), -1);                          \
		}                                                                                  \
		r = gate_fn args;                                                                  \
		if (q && r == hipSuccess)                                                          \
			gq_after(q, &hip_gq_ops, gate_queue_ns());                                 \
		gate_leave(joined);                                                                \
		return r;                                                                          \
	}
#define HIP_HOOK(name, kind, params, args, stream) HIP_WRAP(name, kind, params, args, stream, -1)
#define HIP_HOOK_DEV(name, kind, params, args, stream, device)                                     \
	HIP_WRAP(name, kind, params, args, stream, device)
#include "hip_hooks.def"
#undef HIP_HOOK
#undef HIP_HOOK_DEV

static int gate_hip_find(const char *name)
{
	int i;

	if (strncmp(name, "hip", 3) != 0 && strncmp(name, "_Z", 2) != 0)
		return -1; /* _Z: HIP 5.2's C++-mangled hip_ext.h launches */
	for (i = 0; i < HIPH_COUNT; i++)
		if (strcmp(name, hip_hooks[i].name) == 0)
			return i;
	return -1;
}

static void *gate_hip_swap(const char *name, void *p)
{
	int i = gate_hip_find(name);
	void *expect = NULL;

	if (i < 0 || p == hip_hooks[i].wrapper)
		return p;
	atomic_compare_exchange_strong(&hip_real[i], &expect, p);
	return hip_hooks[i].wrapper;
}

static void *gate_hip_lookup(const char *name, void **wrapper)
{
	int i = gate_hip_find(name);

	if (i < 0)
		return NULL;
	*wrapper = hip_hooks[i].wrapper;
	return gate_hip_real(i);
}

static void gate_hip_counts(FILE *f)
{
	unsigned long n;
	int i;

	for (i = 0; i < HIPH_COUNT; i++) {
		n = atomic_load(&hip_count[i]);
		if (n)
			fprintf(f, "%ld %s %lu\n", (long)getpid(), hip_hooks[i].name, n);
	}
}

/* The backend (gate.h); HIP has no region warm-up. */
GATE_BACKEND(hip, "hip", gate_hip_lookup, gate_hip_swap, gate_hip_drain, NULL, gate_hip_forget,
             gate_hip_counts);
