/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * capturer - a mock-driver sibling for the gate tests (test/mock, not a
 * real GPU program): the submission patterns that broke the old drain and
 * bounded queue.  Linked against the mock libcuda.so.1.
 *
 *	capturer capture MODE BLOCKING DIR
 *	    queue 10 x 20 ms of kernels on a stream (real queued work), then
 *	    capture 3 kernels on another stream (BLOCKING 1: a blocking stream,
 *	    0: non-blocking, as PyTorch's) in MODE global|thread|relaxed; touch
 *	    DIR/ready; wait for DIR/go; end the capture, instantiate, launch the
 *	    graph and check it ran; write "capture rc=R graph=ok|fail" to DIR/out.
 *	capturer hostflag HOW N DIR
 *	    on one stream: a kernel released by the host (HOW spin: a kernel
 *	    spinning on a host-mapped flag, 3 s timeout; waitvalue:
 *	    cuStreamWaitValue32 on it; hostfn: cuLaunchHostFunc waiting for it),
 *	    then N kernels of 1 ms, then the host writes the flag (no driver
 *	    call); write "released status=S ms=T" (S 1: released by the host,
 *	    2: the spin kernel timed out) to DIR/out.
 *	capturer hostdrain DIR
 *	    a spin kernel (10 s timeout) on a stream, touch DIR/ready, wait for
 *	    DIR/go, release it; write "released status=S ms=T" to DIR/out.
 *	capturer xla POINT DIR
 *	    XLA's timer: a spin kernel on a host-mapped flag (1 s timeout), 3
 *	    kernels of 1 ms on the same stream ($XLA_KERNELS of them when set),
 *	    the host's release (a store), a synchronize.  XLA_SYNC=1: the
 *	    stream is a blocking one and a second thread reads back from the
 *	    device meanwhile (a synchronous copy on the legacy stream, inside
 *	    the driver until the release).  At POINT (0 before the
 *	    spin kernel, 1 after it, 2 after the first kernel, 3 after the last,
 *	    4 after the release) touch
 *	    DIR/at and wait for DIR/go (the test closes the gate there); write
 *	    "released status=S ms=T" (S 1: by the host, 2: the spin timed out);
 *	    exit once DIR/end exists.
 *	capturer streams N DIR
 *	    N non-blocking streams, a 1 us kernel on each but the last, 300 ms
 *	    on the last; touch DIR/queued, wait for DIR/go, synchronize, write
 *	    "streams rc=R" to DIR/out.
 *	capturer reset [HOW] DIR
 *	    20 kernels of 1 ms on a stream and 20 on the legacy stream, the
 *	    context ended, the same again in a new context on a new stream;
 *	    touch DIR/queued, wait for DIR/go, synchronize, write "reset rc=R"
 *	    to DIR/out.  HOW: v2 (the default) cuDevicePrimaryCtxReset_v2; gpa
 *	    cuDevicePrimaryCtxReset from cuGetProcAddress_v2 at CUDA 7.0, as
 *	    cudart 13's cudaDeviceReset asks for it (the 7.0 ABI); release its
 *	    cuDevicePrimaryCtxRelease (7.0 ABI the same way), the last retain;
 *	    live: a second retain first, a 300 ms kernel after the first
 *	    round, then that release, which leaves the context alive, and no
 *	    second round; created: after the first round (synchronized) a context of its own
 *	    (cuCtxCreate_v2, current from then on), a 300 ms kernel on a
 *	    stream of it, then the primary context's last release and no
 *	    second round; many: the same in the last of 40 contexts of its own,
 *	    all kept (toomany: 1030); destroyed: after the first round a context of its
 *	    own, 20 kernels of 1 ms on a stream of it, cuCtxDestroy_v2, the
 *	    primary context current again, then the second round.
 *	capturer green HOW DIR
 *	    20 kernels of 1 ms on a stream of the primary context and 20 on
 *	    the legacy stream; a green context of it, 20 kernels on its stream
 *	    (the primary context current) and 20 on its default stream (its
 *	    own context current), a synchronize, the green context destroyed
 *	    without its streams (each call on them fails after it);
 *	    HOW last: before that, the primary context's own retain released,
 *	    so that the green context's end is its last release, and retained
 *	    again after it.  Then 20 + 20 kernels on a new stream and the
 *	    legacy stream; touch DIR/queued, wait for DIR/go, synchronize,
 *	    "green rc=R" to DIR/out.
 *	capturer busyhold HOW DIR
 *	    a stream busy with a 300 ms kernel; touch DIR/at, wait for DIR/go
 *	    (the test closes the gate there), then submit a host-released op
 *	    onto that busy stream (HOW waitvalue: cuStreamWaitValue32 on a host
 *	    flag; hostfn: a host function waiting for it, 3 s at most); once
 *	    DIR/end exists, write the flag and synchronize; "released status=S
 *	    ms=T" (S 1: the op waited for the host's write) to DIR/out.
 *	capturer capqueue N DIR
 *	    one thread captures 3 kernels on a non-blocking stream in global
 *	    mode while another launches N kernels of 200 us on its own stream
 *	    (the bounded queue waits on its marks meanwhile); then the capture
 *	    ends and its graph runs; "capture rc=R graph=ok|fail" to DIR/out.
 *	capturer threads N DIR
 *	    N threads, each launching 2 ms kernels round-robin on its own
 *	    stream, its per-thread default stream (_ptsz) and the legacy
 *	    stream, until DIR/stop exists; DIR/count holds the launches.
 *	capturer regioncap MODE DIR
 *	    the process's last launch on the legacy default stream, then a
 *	    capture begun (MODE) on a blocking stream, then a region begun and
 *	    ended (libkrexregion: the gate's warm-up runs at the grant), then 3
 *	    kernels captured, the capture ended, its graph launched and checked;
 *	    "regioncap begin=B end=E capture rc=R graph=0|1" to DIR/out.  A
 *	    warm-up on the legacy stream would have invalidated the capture.
 *	capturer regionflag DIR
 *	    the process's last launch on the legacy default stream, then on a
 *	    blocking stream a wait for a host-mapped flag (cuStreamWaitValue32),
 *	    then a region begun (the gate's warm-up), then a kernel on a second
 *	    blocking stream, waited for, and only then the host's write of the
 *	    flag; "regionflag begin=B done=1 ms=T" to DIR/out.  A warm kernel
 *	    on the legacy stream would sit between the two streams and hold the
 *	    second one's kernel behind the first one's wait: a hang.
 *	capturer context HOW DIR
 *	    cuInit, touch DIR/at, then make a context (HOW retain:
 *	    cuDevicePrimaryCtxRetain; create: cuCtxCreate_v4; create2: the
 *	    CUDA < 12.5 ABI cuCtxCreate_v2); write "context rc=R made=M" to
 *	    DIR/out; exit once DIR/end exists (30 s at most).
 */
#include "config.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "gate_types.h"
#include "krex/region.h"

CUresult cuInit(unsigned int);
CUresult cuDeviceGet(CUdevice *, int);
CUresult cuDevicePrimaryCtxRetain(CUcontext *, CUdevice);
CUresult cuCtxSetCurrent(CUcontext);
CUresult cuCtxCreate_v2(CUcontext *, unsigned int, CUdevice);
CUresult cuCtxCreate_v4(CUcontext *, CUctxCreateParams *, unsigned int, CUdevice);
CUresult cuCtxDestroy_v2(CUcontext);
CUresult cuModuleLoadData(CUmodule *, const void *);
CUresult cuModuleGetFunction(CUfunction *, CUmodule, const char *);
CUresult cuStreamCreate(CUstream *, unsigned int);
CUresult cuStreamSynchronize(CUstream);
CUresult cuCtxSynchronize(void);
CUresult cuDevicePrimaryCtxReset_v2(CUdevice);
CUresult cuDevicePrimaryCtxRelease_v2(CUdevice);
CUresult cuGreenCtxCreate(CUgreenCtx *, CUdevResourceDesc, CUdevice, unsigned int);
CUresult cuGreenCtxDestroy(CUgreenCtx);
CUresult cuGreenCtxStreamCreate(CUstream *, CUgreenCtx, unsigned int, int);
CUresult cuCtxFromGreenCtx(CUcontext *, CUgreenCtx);
CUresult cuCtxPushCurrent_v2(CUcontext);
CUresult cuCtxPopCurrent_v2(CUcontext *);
CUresult cuGetProcAddress_v2(const char *, void **, int, unsigned long long, int *);
CUresult cuMemcpyDtoH_v2(void *, CUdeviceptr, size_t);
CUresult cuLaunchKernel(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                        unsigned, CUstream, void **, void **);
CUresult cuLaunchKernel_ptsz(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                             unsigned, CUstream, void **, void **);
CUresult cuLaunchHostFunc(CUstream, CUhostFn, void *);
CUresult cuStreamWaitValue32_v2(CUstream, CUdeviceptr, cuuint32_t, unsigned int);
CUresult cuStreamBeginCapture_v2(CUstream, int);
CUresult cuStreamEndCapture(CUstream, CUgraph *);
CUresult cuGraphInstantiateWithFlags(CUgraphExec *, CUgraph, unsigned long long);
CUresult cuGraphLaunch(CUgraphExec, CUstream);
CUresult cuMemHostAlloc(void **, size_t, unsigned int);

static CUfunction fma_fn, spin_fn;
static CUcontext ctx;
static const char *dir;

static void die(const char *what, CUresult r)
{
	fprintf(stderr, "capturer: %s failed (%d)\n", what, r);
	exit(1);
}

#define CK(call)                                                                                   \
	do {                                                                                       \
		CUresult r_ = (call);                                                              \
		if (r_ != CUDA_SUCCESS)                                                            \
			die(#call, r_);                                                            \
	} while (0)

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static char *path(const char *name)
{
	static __thread char buf[4096];

	snprintf(buf, sizeof(buf), "%s/%s", dir, name);
	return buf;
}

static void touch(const char *name)
{
	FILE *f = fopen(path(name), "w");

	if (f)
		fclose(f);
}

static int wait_file(const char *name, int seconds)
{
	double end = now_ms() + seconds * 1e3;

	while (access(path(name), F_OK) != 0) {
		if (now_ms() > end)
			return -1;
		usleep(5000);
	}
	return 0;
}

__attribute__((format(printf, 1, 2))) static void out(const char *fmt, ...)
{
	FILE *f = fopen(path("out.tmp"), "w");
	char final[4096];
	va_list ap;

	if (!f)
		exit(1);
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	fclose(f);
	snprintf(final, sizeof(final), "%s/out", dir);
	rename(path("out.tmp"), final);
}

/* One fma_loop of us microseconds writing us to *word. */
static CUresult kernel(CUstream s, long long us, uint32_t *word, int pt)
{
	CUdeviceptr d = (CUdeviceptr)(uintptr_t)word;
	void *params[] = {&d, &us};

	return (pt ? cuLaunchKernel_ptsz : cuLaunchKernel)(fma_fn, 1, 1, 1, 32, 1, 1, 0, s, params,
	                                                   NULL);
}

static void setup(void)
{
	CUdevice dev;
	CUmodule mod;

	CK(cuInit(0));
	CK(cuDeviceGet(&dev, 0));
	CK(cuDevicePrimaryCtxRetain(&ctx, dev));
	CK(cuCtxSetCurrent(ctx));
	CK(cuModuleLoadData(&mod, "mock"));
	CK(cuModuleGetFunction(&fma_fn, mod, "fma_loop"));
	CK(cuModuleGetFunction(&spin_fn, mod, "spin_flag"));
}

/* A capture mode's name: global 0, thread 1, relaxed 2; -1 for another. */
static int capture_mode(const char *mode)
{
	return strcmp(mode, "global") == 0    ? 0
	       : strcmp(mode, "thread") == 0  ? 1
	       : strcmp(mode, "relaxed") == 0 ? 2
	                                      : -1;
}

/*
 * End the capture on cap (3 kernels writing 100, 200, 300 to words[1..3]),
 * instantiate its graph, launch it and wait: *ok 1 when it ran and wrote
 * them.  Returns cuStreamEndCapture's result.
 */
static CUresult capture_end_run(CUstream cap, uint32_t *words, int *ok)
{
	CUgraph g = NULL;
	CUgraphExec x = NULL;
	CUresult r = cuStreamEndCapture(cap, &g);

	*ok = 0;
	if (r == CUDA_SUCCESS && cuGraphInstantiateWithFlags(&x, g, 0) == CUDA_SUCCESS &&
	    cuGraphLaunch(x, cap) == CUDA_SUCCESS && cuStreamSynchronize(cap) == CUDA_SUCCESS)
		*ok = words[1] == 100 && words[2] == 200 && words[3] == 300;
	return r;
}

static int do_capture(const char *mode, int blocking)
{
	static uint32_t words[16];
	int m = capture_mode(mode);
	CUstream work, cap;
	CUresult r;
	int i, ok;

	if (m < 0)
		return 2;
	CK(cuStreamCreate(&work, 0));
	CK(cuStreamCreate(&cap, blocking ? 0 : 1 /* CU_STREAM_NON_BLOCKING */));
	for (i = 0; i < 10; i++)
		CK(kernel(work, 20000, &words[0], 0));
	CK(cuStreamBeginCapture_v2(cap, m));
	for (i = 1; i <= 3; i++)
		CK(kernel(cap, 100 * i, &words[i], 0));
	touch("ready");
	if (wait_file("go", 30) < 0)
		return 1;
	r = capture_end_run(cap, words, &ok);
	out("capture rc=%d graph=%d\n", (int)r, ok); /* graph=1: it ran */
	return 0;
}

static int do_regioncap(const char *mode)
{
	static uint32_t words[16];
	int m = capture_mode(mode);
	CUstream cap;
	CUresult r;
	int i, ok, rb, re = -1;

	if (m < 0)
		return 2;
	CK(cuStreamCreate(&cap, 0));
	CK(kernel(NULL, 100, &words[0], 0)); /* the last launch: the legacy stream */
	CK(cuCtxSynchronize());
	CK(cuStreamBeginCapture_v2(cap, m));
	rb = krex_region_begin(NULL);
	if (rb == KREX_OK)
		re = krex_region_end(NULL);
	for (i = 1; i <= 3; i++)
		CK(kernel(cap, 100 * i, &words[i], 0));
	r = capture_end_run(cap, words, &ok);
	out("regioncap begin=%d end=%d capture rc=%d graph=%d\n", rb, re, (int)r, ok);
	return 0;
}

static int do_regionflag(void)
{
	static uint32_t words[4];
	_Atomic uint32_t *flag;
	CUdeviceptr dflag;
	CUstream s1, s2;
	double t0;
	int rb;

	CK(cuMemHostAlloc((void **)&flag, 64, 0x2 /* CU_MEMHOSTALLOC_DEVICEMAP */));
	dflag = (CUdeviceptr)(uintptr_t)flag;
	CK(cuStreamCreate(&s1, 0));
	CK(cuStreamCreate(&s2, 0));
	CK(kernel(NULL, 100, &words[0], 0)); /* the last launch: the legacy stream */
	CK(cuCtxSynchronize());
	t0 = now_ms();
	CK(cuStreamWaitValue32_v2(s1, dflag, 1, 0 /* CU_STREAM_WAIT_VALUE_GEQ */));
	rb = krex_region_begin(NULL);
	CK(kernel(s2, 100, &words[1], 0));
	CK(cuStreamSynchronize(s2));
	atomic_store(flag, 1); /* the host releases s1 */
	CK(cuStreamSynchronize(s1));
	if (rb == KREX_OK)
		krex_region_end(NULL);
	out("regionflag begin=%d done=1 ms=%.0f\n", rb, now_ms() - t0);
	return 0;
}

static _Atomic int capq_capturing;
static int capq_n;

static void *capq_launcher(void *arg)
{
	static uint32_t word;
	CUstream s;
	int i;

	(void)arg;
	CK(cuCtxSetCurrent(ctx));
	CK(cuStreamCreate(&s, 1));
	while (!atomic_load(&capq_capturing))
		usleep(100);
	/* no synchronize here: that call itself is illegal during a global capture */
	for (i = 0; i < capq_n; i++)
		CK(kernel(s, 200, &word, 0));
	return NULL;
}

/* A global capture on this thread while another thread's launches go
 * through the bounded queue (its event queries must not invalidate it). */
static int do_capqueue(int n)
{
	static uint32_t words[4];
	CUstream cap;
	pthread_t t;
	CUresult r;
	int i, ok = 0;

	capq_n = n;
	CK(cuStreamCreate(&cap, 1 /* CU_STREAM_NON_BLOCKING */));
	if (pthread_create(&t, NULL, capq_launcher, NULL) != 0)
		return 2;
	CK(cuStreamBeginCapture_v2(cap, 0 /* global */));
	for (i = 1; i <= 3; i++)
		CK(kernel(cap, 100 * i, &words[i], 0));
	atomic_store(&capq_capturing, 1);
	pthread_join(t, NULL);
	r = capture_end_run(cap, words, &ok);
	out("capture rc=%d graph=%d\n", (int)r, ok);
	return 0;
}

static _Atomic uint32_t *hostfn_flag;

static void hostfn_wait(void *arg)
{
	double end = now_ms() + 3000;

	(void)arg;
	while (!atomic_load(hostfn_flag) && now_ms() < end)
		usleep(100);
}

static int do_hostflag(const char *how, int n)
{
	static uint32_t word;
	_Atomic uint32_t *flag;
	uint32_t *status;
	CUdeviceptr dflag, dstatus;
	long long timeout = 3000000;
	void *params[] = {&dflag, &timeout, &dstatus};
	CUstream s;
	double t0;
	int i;

	CK(cuMemHostAlloc((void **)&flag, 64, 0x2 /* CU_MEMHOSTALLOC_DEVICEMAP */));
	status = (uint32_t *)flag + 8;
	dflag = (CUdeviceptr)(uintptr_t)flag;
	dstatus = (CUdeviceptr)(uintptr_t)status;
	CK(cuStreamCreate(&s, 0));
	t0 = now_ms();
	if (strcmp(how, "spin") == 0) {
		CK(cuLaunchKernel(spin_fn, 1, 1, 1, 1, 1, 1, 0, s, params, NULL));
	} else if (strcmp(how, "waitvalue") == 0) {
		CK(cuStreamWaitValue32_v2(s, dflag, 1, 0 /* CU_STREAM_WAIT_VALUE_GEQ */));
		*status = 1;
	} else if (strcmp(how, "hostfn") == 0) {
		hostfn_flag = flag;
		CK(cuLaunchHostFunc(s, hostfn_wait, NULL));
		*status = 1;
	} else {
		return 2;
	}
	for (i = 0; i < n; i++)
		CK(kernel(s, 1000, &word, 0));
	atomic_store(flag, 1); /* the host releases the GPU: a plain store */
	if (strcmp(how, "spin") != 0 && now_ms() - t0 >= 3000)
		*status = 2; /* the launches were held until a timeout */
	CK(cuStreamSynchronize(s));
	out("released status=%u ms=%.0f\n", *status, now_ms() - t0);
	return 0;
}

static int do_hostdrain(void)
{
	_Atomic uint32_t *flag;
	uint32_t *status;
	CUdeviceptr dflag, dstatus;
	long long timeout = 10000000;
	void *params[] = {&dflag, &timeout, &dstatus};
	CUstream s;
	double t0 = now_ms();

	CK(cuMemHostAlloc((void **)&flag, 64, 0x2));
	status = (uint32_t *)flag + 8;
	dflag = (CUdeviceptr)(uintptr_t)flag;
	dstatus = (CUdeviceptr)(uintptr_t)status;
	CK(cuStreamCreate(&s, 0));
	CK(cuLaunchKernel(spin_fn, 1, 1, 1, 1, 1, 1, 0, s, params, NULL));
	touch("ready");
	if (wait_file("go", 30) < 0)
		return 1;
	atomic_store(flag, 1);
	CK(cuStreamSynchronize(s));
	out("released status=%u ms=%.0f\n", *status, now_ms() - t0);
	return 0;
}

/* A host-released op onto a stream busy at the close (never let through
 * onto it: it would hold the drain until the host writes the flag). */
static int do_busyhold(const char *how)
{
	static uint32_t word;
	_Atomic uint32_t *flag;
	CUstream s;
	double t0 = now_ms();

	CK(cuMemHostAlloc((void **)&flag, 64, 0x2));
	hostfn_flag = flag;
	CK(cuStreamCreate(&s, 0));
	CK(kernel(s, 300000, &word, 0));
	touch("at");
	if (wait_file("go", 30) < 0)
		return 1;
	if (strcmp(how, "waitvalue") == 0)
		CK(cuStreamWaitValue32_v2(s, (CUdeviceptr)(uintptr_t)flag, 1, 0));
	else if (strcmp(how, "hostfn") == 0)
		CK(cuLaunchHostFunc(s, hostfn_wait, NULL));
	else
		return 2;
	touch("queued");
	if (wait_file("end", 30) < 0)
		return 1;
	atomic_store(flag, 1);
	CK(cuStreamSynchronize(s));
	out("released status=%d ms=%.0f\n", now_ms() - t0 < 3000 ? 1 : 2, now_ms() - t0);
	return 0;
}

/* A thread of the sibling that reads back from the device while the timer
 * runs (XLA_SYNC=1): a synchronous copy on the legacy stream, which waits
 * for the blocking stream the spin kernel is on, so it is inside the
 * driver (past the gate) until the host releases the spin kernel. */
static void *xla_reader(void *arg)
{
	static uint32_t host[4];

	CK(cuCtxSetCurrent(ctx));
	CK(cuMemcpyDtoH_v2(host, (CUdeviceptr)(uintptr_t)arg, sizeof(host)));
	touch("read");
	return NULL;
}

/* XLA's timer, with a stop at point pt for the test to close the gate. */
static int do_xla(int pt)
{
	static uint32_t word;
	_Atomic uint32_t *flag;
	uint32_t *status;
	CUdeviceptr dflag, dstatus;
	long long timeout = 1000000;
	void *params[] = {&dflag, &timeout, &dstatus};
	CUstream s;
	double t0;
	const char *e = getenv("XLA_KERNELS");
	int i, at = 0, nk = e && atoi(e) > 1 ? atoi(e) : 3;
	int sync = getenv("XLA_SYNC") && strcmp(getenv("XLA_SYNC"), "1") == 0;
	pthread_t reader;

	CK(cuMemHostAlloc((void **)&flag, 64, 0x2));
	status = (uint32_t *)flag + 8;
	dflag = (CUdeviceptr)(uintptr_t)flag;
	dstatus = (CUdeviceptr)(uintptr_t)status;
	CK(cuStreamCreate(&s, sync ? 0 : 1 /* CU_STREAM_NON_BLOCKING */));
#define XLA_POINT()                                                                                \
	do {                                                                                       \
		if (at++ == pt) {                                                                  \
			touch("at");                                                               \
			if (wait_file("go", 30) < 0)                                               \
				return 1;                                                          \
		}                                                                                  \
	} while (0)
	XLA_POINT();
	t0 = now_ms();
	CK(cuLaunchKernel(spin_fn, 1, 1, 1, 1, 1, 1, 0, s, params, NULL));
	if (sync && pthread_create(&reader, NULL, xla_reader, (void *)(uintptr_t)dstatus) != 0)
		return 1;
	XLA_POINT();
	for (i = 0; i < nk; i++) {
		CK(kernel(s, 1000, &word, 0));
		if (i == 0 || i == nk - 1)
			XLA_POINT();
	}
	atomic_store(flag, 1); /* the host releases the spin kernel: a plain store */
	XLA_POINT();
	CK(cuStreamSynchronize(s));
	if (sync)
		pthread_join(reader, NULL);
	out("released status=%u ms=%.0f\n", *status, now_ms() - t0);
	return wait_file("end", 30) < 0; /* the drain thread lives until the test is done */
}

static _Atomic unsigned long launches;

static void *submitter(void *arg)
{
	static uint32_t word;
	CUstream s;
	int i;

	(void)arg;
	CK(cuCtxSetCurrent(ctx));
	CK(cuStreamCreate(&s, 0));
	for (i = 0; access(path("stop"), F_OK) != 0; i++) {
		switch (i % 3) {
		case 0:
			CK(kernel(s, 2000, &word, 0));
			break;
		case 1:
			CK(kernel(0, 2000, &word, 1)); /* per-thread default stream */
			break;
		default:
			CK(kernel(0, 2000, &word, 0)); /* legacy default stream */
		}
		atomic_fetch_add(&launches, 1);
	}
	return NULL;
}

static int do_threads(int n)
{
	pthread_t t[16];
	char tmp[4096];
	FILE *f;
	int i;

	if (n < 1 || n > 16)
		return 2;
	for (i = 0; i < n; i++)
		pthread_create(&t[i], NULL, submitter, NULL);
	while (access(path("stop"), F_OK) != 0) {
		usleep(20000);
		snprintf(tmp, sizeof(tmp), "%s", path("count.tmp"));
		if ((f = fopen(tmp, "w"))) {
			fprintf(f, "%lu\n", atomic_load(&launches));
			fclose(f);
			rename(tmp, path("count"));
		}
	}
	for (i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	return 0;
}

/* streams N: N non-blocking streams, a 1 us kernel on each but the last,
 * 300 ms on the last (made last); touch DIR/queued, wait for DIR/go,
 * synchronize, "streams rc=R". */
static int do_streams(int n)
{
	static uint32_t word;
	CUstream s;
	int i;

	if (n < 1)
		return 2;
	for (i = 0; i < n; i++) {
		CK(cuStreamCreate(&s, 1));
		CK(kernel(s, i == n - 1 ? 300000 : 1, &word, 0));
	}
	touch("queued");
	wait_file("go", 30);
	out("streams rc=%d\n", (int)cuCtxSynchronize());
	return 0;
}

/* The CUDA 7.0 ABI of a primary context call, as cudart 13 gets it. */
static CUresult (*proc7000(const char *name))(CUdevice)
{
	void *p = NULL;

	CK(cuGetProcAddress_v2(name, &p, 7000, 0, NULL));
	return (CUresult(*)(CUdevice))p;
}

/* 20 kernels of 1 ms on a new stream, 20 on the legacy stream between them;
 * the stream. */
static CUstream twenty_pairs(uint32_t *word)
{
	CUstream s;
	int i;

	CK(cuStreamCreate(&s, 1));
	for (i = 0; i < 20; i++) {
		CK(kernel(s, 1000, word, 0));
		CK(kernel(NULL, 1000, word, 0));
	}
	return s;
}

/* touch DIR/queued, wait for DIR/go, synchronize, "WHAT rc=R" to DIR/out. */
static int queued_then_sync(const char *what)
{
	touch("queued");
	wait_file("go", 30);
	out("%s rc=%d\n", what, (int)cuCtxSynchronize());
	return 0;
}

/* reset HOW: 20 kernels of 1 ms on a stream and 20 on the legacy stream, a
 * synchronize, the context ended, made again, the same on a new stream
 * (live: a 300 ms kernel on the stream, the release, nothing more);
 * touch DIR/queued, wait for DIR/go, synchronize, "reset rc=R". */
static int do_reset(const char *how)
{
	static uint32_t word;
	CUcontext extra;
	CUdevice dev;
	CUstream s;
	int round, live = strcmp(how, "live") == 0;

	CK(cuDeviceGet(&dev, 0));
	if (live)
		CK(cuDevicePrimaryCtxRetain(&extra, dev));
	for (round = 0; round < 2; round++) {
		if (round && (strcmp(how, "created") == 0 || strcmp(how, "many") == 0 ||
		              strcmp(how, "toomany") == 0)) {
			/* queued in its own context before the primary one
			 * ends, nothing after: the drain must wait for it (the
			 * first round done first: the mock runs one kernel at
			 * a time, and the release waits for the first round);
			 * many: in the last of 40 contexts of its own, toomany
			 * of 1030 */
			int n = strcmp(how, "many") == 0      ? 40
			        : strcmp(how, "toomany") == 0 ? 1030
			                                      : 1;

			CK(cuCtxSynchronize());
			while (n--) {
				CUcontext popped;

				CK(cuCtxCreate_v2(&extra, 0, dev));
				if (n) /* kept, not current (the mock's stack is 16 deep) */
					CK(cuCtxPopCurrent_v2(&popped));
			}
			CK(cuStreamCreate(&s, 1));
			CK(kernel(s, 300000, &word, 0));
			CK(proc7000("cuDevicePrimaryCtxRelease")(dev));
			break;
		} else if (round && strcmp(how, "destroyed") == 0) {
			int i;

			CK(cuCtxCreate_v2(&extra, 0, dev));
			CK(cuStreamCreate(&s, 1));
			for (i = 0; i < 20; i++)
				CK(kernel(s, 1000, &word, 0));
			CK(cuCtxDestroy_v2(extra));
			CK(cuCtxSetCurrent(ctx));
		} else if (round && live) {
			/* nothing after it: only the gate's memory of s and
			 * the context makes the drain wait for this kernel */
			CK(kernel(s, 300000, &word, 0));
			CK(proc7000("cuDevicePrimaryCtxRelease")(dev));
			break;
		} else if (round) {
			CK(cuCtxSynchronize());
			if (strcmp(how, "gpa") == 0)
				CK(proc7000("cuDevicePrimaryCtxReset")(dev));
			else if (strcmp(how, "release") == 0)
				CK(proc7000("cuDevicePrimaryCtxRelease")(dev));
			else
				CK(cuDevicePrimaryCtxReset_v2(dev));
			setup();
		}
		s = twenty_pairs(&word);
	}
	return queued_then_sync("reset");
}

/* green HOW: see the usage above */
static int do_green(const char *how)
{
	static uint32_t word;
	CUcontext gc, old;
	CUgreenCtx g;
	CUstream gs;
	CUdevice dev;
	int i;

	CK(cuDeviceGet(&dev, 0));
	twenty_pairs(&word);
	CK(cuGreenCtxCreate(&g, NULL, dev, 0));
	CK(cuCtxFromGreenCtx(&gc, g));
	CK(cuGreenCtxStreamCreate(&gs, g, 1, 0));
	for (i = 0; i < 20; i++)
		CK(kernel(gs, 1000, &word, 0));
	CK(cuCtxPushCurrent_v2(gc));
	for (i = 0; i < 20; i++)
		CK(kernel(NULL, 1000, &word, 0));
	CK(cuCtxPopCurrent_v2(&old));
	CK(cuCtxSynchronize());
	if (strcmp(how, "last") == 0)
		CK(cuDevicePrimaryCtxRelease_v2(dev));
	CK(cuGreenCtxDestroy(g));
	if (strcmp(how, "last") == 0)
		setup();
	twenty_pairs(&word);
	return queued_then_sync("green");
}

static int do_context(const char *how)
{
	CUcontext c = NULL;
	CUdevice dev;
	CUresult r;

	CK(cuInit(0));
	CK(cuDeviceGet(&dev, 0));
	touch("at");
	if (strcmp(how, "retain") == 0)
		r = cuDevicePrimaryCtxRetain(&c, dev);
	else if (strcmp(how, "create") == 0)
		r = cuCtxCreate_v4(&c, NULL, 0, dev);
	else if (strcmp(how, "create2") == 0)
		r = cuCtxCreate_v2(&c, 0, dev);
	else
		return 2;
	out("context rc=%d made=%d\n", (int)r, c != NULL);
	return wait_file("end", 30) == 0 ? 0 : 1;
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr,
		        "usage: capturer capture|regioncap|regionflag|hostflag|hostdrain|xla|busyhold|threads|streams|reset|green|context ... DIR\n");
		return 2;
	}
	dir = argv[argc - 1];
	if (strcmp(argv[1], "context") == 0 && argc == 4)
		return do_context(argv[2]);
	setup();
	if (strcmp(argv[1], "capture") == 0 && argc == 5)
		return do_capture(argv[2], atoi(argv[3]));
	if (strcmp(argv[1], "regionflag") == 0 && argc == 3)
		return do_regionflag();
	if (strcmp(argv[1], "regioncap") == 0 && argc == 4)
		return do_regioncap(argv[2]);
	if (strcmp(argv[1], "capqueue") == 0 && argc == 4)
		return do_capqueue(atoi(argv[2]));
	if (strcmp(argv[1], "hostflag") == 0 && argc == 5)
		return do_hostflag(argv[2], atoi(argv[3]));
	if (strcmp(argv[1], "busyhold") == 0 && argc == 4)
		return do_busyhold(argv[2]);
	if (strcmp(argv[1], "xla") == 0 && argc == 4)
		return do_xla(atoi(argv[2]));
	if (strcmp(argv[1], "hostdrain") == 0 && argc == 3)
		return do_hostdrain();
	if (strcmp(argv[1], "threads") == 0 && argc == 4)
		return do_threads(atoi(argv[2]));
	if (strcmp(argv[1], "streams") == 0 && argc == 4)
		return do_streams(atoi(argv[2]));
	if (strcmp(argv[1], "reset") == 0 && argc == 3)
		return do_reset("v2");
	if (strcmp(argv[1], "reset") == 0 && argc == 4)
		return do_reset(argv[2]);
	if (strcmp(argv[1], "green") == 0 && argc == 4)
		return do_green(argv[2]);
	fprintf(stderr, "capturer: bad arguments\n");
	return 2;
}
