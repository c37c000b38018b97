/* SPDX-License-Identifier: BSD-3-Clause */
// sib_capture.cu - harmless.py's CUDA runtime sibling: stream capture in each
// of the three modes (global, thread-local, relaxed), captured and replayed
// in a loop on one thread while another thread launches kernels and
// synchronizes its own stream, every result checked exactly (integers).
//
//	sib_capture [--reset | --green] [--seconds S] [--seed N] [--phases FILE] [--linger FILE]
//	            [--hold-ms MS]
//
// The capture thread: BeginCapture(mode) on its stream, M add_one kernels, a
// device-to-device copy, a double_it kernel, a host pause of up to --hold-ms
// (so that a region lands inside the capture), EndCapture, instantiate,
// replay R times, check: buf = init + R*M, buf2 = 2 * buf.  The launcher
// thread: Q kernels c = 3a + r into Q buffers, copy back, synchronize its
// own stream, check.  During a global-mode capture the launcher does not
// synchronize (that would be the program's own error, not KREX's); in the
// other modes it synchronizes freely, which those modes allow.  All memory is
// allocated before the first capture.
//
// --reset (the sibling "cuda-reset", the real-driver twin of sib_mock.py's
// mock-reset): no capture, no threads; one loop launches lin kernels
// (c = 3a + r) on the legacy default stream and on a non-blocking stream of
// its own, copies back, synchronizes and checks; every third iteration, in a
// "compile" phase (a host pause of up to --hold-ms, so that a region lands in
// it), cudaDeviceReset() ends the context with its stream and buffers still
// there (nothing freed first), the context is made again, and so are the
// stream, the device and the pinned host buffers and the inputs.
//
// --green (the sibling "cuda-green", the real-driver twin of the gate tier's
// `capturer green`): the --reset loop, but every third iteration makes a
// green context of all the device's SMs instead of resetting, runs lin on a
// stream of the green context (the primary context current) and on its
// default stream (the green context current), checks both, and in the
// "compile" phase destroys the green context with that stream left in
// place (the driver's documentation: the stream leaks and every call on it
// fails after; a careless program does so, and the gate had tracked it).
//
// Phases (sib_common.py's format): "T begin|end capture" (--reset: compile),
// init, linger, run.  Prints one JSON line (sib_common.py's fields, plus
// captures per mode, or with --reset the resets); exit 0 when every check
// passed and no call failed.
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>
#include <cuda.h>
#include <cuda_runtime.h>

static std::atomic<long> n_errors{0}, n_wrong{0}, n_checks{0}, n_iters{0};
static std::atomic<long> n_capt[3];
static long n_resets, n_greens;
static const char *me = "cuda-capture"; // "cuda-reset" with --reset, "cuda-green"
static bool green;                      // --green
static std::atomic<bool> stop_now{false};
// The launcher's set-up (cudaMalloc, an unsafe call during a global-mode
// capture in any thread) is done before the first capture begins.
static std::atomic<bool> launcher_ready{false};
static std::shared_mutex sync_lock; // exclusive while a global-mode capture is open
static std::mutex ph_lock;
static FILE *ph;
static const char *mode_name[3] = {"global", "thread_local", "relaxed"};
static const cudaStreamCaptureMode modes[3] = {cudaStreamCaptureModeGlobal,
                                               cudaStreamCaptureModeThreadLocal,
                                               cudaStreamCaptureModeRelaxed};

static double now_s()
{
	timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void phase(const char *what, const char *name)
{
	std::lock_guard<std::mutex> g(ph_lock);
	if (ph) {
		fprintf(ph, "%.6f %s %s\n", now_s(), what, name);
		fflush(ph);
	}
}

// ck: count and show (the first few) failed calls; false when it failed.
static bool ck(cudaError_t e, const char *what)
{
	if (e == cudaSuccess)
		return true;
	long n = ++n_errors;
	if (n <= 10)
		fprintf(stderr, "%s: error: %s: %s\n", me, what, cudaGetErrorString(e));
	return false;
}
#define CK(x) ck((x), #x)

// The same for the driver API's calls (--green).
static bool ckd(CUresult e, const char *what)
{
	const char *s = nullptr;

	if (e == CUDA_SUCCESS)
		return true;
	long n = ++n_errors;
	cuGetErrorString(e, &s);
	if (n <= 10)
		fprintf(stderr, "%s: error: %s: %s\n", me, what, s ? s : "?");
	return false;
}
#define CKD(x) ckd((x), #x)

static void wrong(const char *what, long i, long got, long want)
{
	long n = ++n_wrong;
	if (n <= 5)
		fprintf(stderr, "%s: WRONG result %s at %ld: %ld, expected %ld\n", me, what, i, got,
		        want);
}

__global__ void add_one(int *b, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		b[i] += 1;
}

__global__ void double_it(int *b, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		b[i] *= 2;
}

__global__ void lin(const int *a, int *c, int r, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		c[i] = 3 * a[i] + r;
}

static unsigned rnd(unsigned *s)
{
	*s = *s * 1103515245u + 12345u;
	return (*s >> 8) & 0xffffff;
}

static const int N = 1 << 18;
static const int M = 8; // add_one kernels per graph
static const int R = 5; // replays per graph
static const int Q = 4; // launcher buffers
static double hold_ms = 30;

static void capture_thread(unsigned seed)
{
	cudaStream_t s;
	int *buf, *buf2, *h_init, *h_out, *h_out2;
	unsigned st = seed * 7 + 1;
	long cycle = 0;

	if (!CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking)) ||
	    !CK(cudaMalloc(&buf, N * sizeof(int))) || !CK(cudaMalloc(&buf2, N * sizeof(int))) ||
	    !CK(cudaMallocHost(&h_init, N * sizeof(int))) ||
	    !CK(cudaMallocHost(&h_out, N * sizeof(int))) ||
	    !CK(cudaMallocHost(&h_out2, N * sizeof(int))))
		return;
	while (!launcher_ready.load() && !stop_now.load())
		usleep(1000);
	while (!stop_now.load()) {
		int m = (int)(cycle % 3);
		cudaGraph_t g = nullptr;
		cudaGraphExec_t ge = nullptr;
		bool ok = true;

		for (int i = 0; i < N; i++)
			h_init[i] = (int)(rnd(&st) & 0xffff);
		CK(cudaMemcpyAsync(buf, h_init, N * sizeof(int), cudaMemcpyHostToDevice, s));
		CK(cudaStreamSynchronize(s));
		{
			std::unique_lock<std::shared_mutex> excl(sync_lock, std::defer_lock);
			if (modes[m] == cudaStreamCaptureModeGlobal)
				excl.lock();
			phase("begin", "capture");
			bool began = CK(cudaStreamBeginCapture(s, modes[m]));
			ok = began;
			for (int j = 0; ok && j < M; j++)
				add_one<<<(N + 255) / 256, 256, 0, s>>>(buf, N);
			ok = ok && CK(cudaGetLastError());
			ok = ok && CK(cudaMemcpyAsync(buf2, buf, N * sizeof(int),
			                              cudaMemcpyDeviceToDevice, s));
			if (ok)
				double_it<<<(N + 255) / 256, 256, 0, s>>>(buf2, N);
			usleep((useconds_t)(hold_ms * 1000 *
			                    (0.2 + 0.8 * (rnd(&st) % 1000) / 1000.0)));
			if (began) {
				cudaError_t e = cudaStreamEndCapture(s, &g);
				ok = ck(e, mode_name[m]) && ok && g;
			}
			phase("end", "capture");
		}
		if (ok && CK(cudaGraphInstantiate(&ge, g, 0))) {
			for (int r = 0; r < R; r++)
				CK(cudaGraphLaunch(ge, s));
			CK(cudaMemcpyAsync(h_out, buf, N * sizeof(int), cudaMemcpyDeviceToHost, s));
			CK(cudaMemcpyAsync(h_out2, buf2, N * sizeof(int), cudaMemcpyDeviceToHost,
			                   s));
			if (CK(cudaStreamSynchronize(s))) {
				n_checks += 2;
				for (int i = 0; i < N; i++)
					if (h_out[i] != h_init[i] + R * M) {
						wrong("graph buf", i, h_out[i], h_init[i] + R * M);
						break;
					}
				for (int i = 0; i < N; i++)
					if (h_out2[i] != 2 * (h_init[i] + R * M)) {
						wrong("graph buf2", i, h_out2[i],
						      2 * (h_init[i] + R * M));
						break;
					}
				n_capt[m]++;
				n_iters++;
			}
		} else {
			// A failed capture leaves the stream usable; say which mode.
			cudaGetLastError();
		}
		if (ge)
			CK(cudaGraphExecDestroy(ge));
		if (g)
			CK(cudaGraphDestroy(g));
		cycle++;
	}
	cudaStreamSynchronize(s);
	cudaFree(buf);
	cudaFree(buf2);
	cudaFreeHost(h_init);
	cudaFreeHost(h_out);
	cudaFreeHost(h_out2);
	cudaStreamDestroy(s);
}

static void launch_thread(unsigned seed)
{
	cudaStream_t s;
	int *a, *c[Q], *h_a, *h_c;
	unsigned st = seed * 13 + 5;

	bool ok = CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking)) &&
	          CK(cudaMalloc(&a, N * sizeof(int))) &&
	          CK(cudaMallocHost(&h_a, N * sizeof(int))) &&
	          CK(cudaMallocHost(&h_c, Q * N * sizeof(int)));
	for (int q = 0; ok && q < Q; q++)
		ok = CK(cudaMalloc(&c[q], N * sizeof(int)));
	if (!ok) {
		launcher_ready = true; // the capture thread runs without it
		return;
	}
	for (int i = 0; i < N; i++)
		h_a[i] = (int)(rnd(&st) & 0xfff);
	CK(cudaMemcpyAsync(a, h_a, N * sizeof(int), cudaMemcpyHostToDevice, s));
	CK(cudaStreamSynchronize(s));
	launcher_ready = true;
	while (!stop_now.load()) {
		int r[Q];
		for (int q = 0; q < Q; q++) {
			r[q] = (int)(rnd(&st) & 0xffff);
			lin<<<(N + 255) / 256, 256, 0, s>>>(a, c[q], r[q], N);
			CK(cudaGetLastError());
			CK(cudaMemcpyAsync(h_c + q * N, c[q], N * sizeof(int),
			                   cudaMemcpyDeviceToHost, s));
		}
		bool synced;
		{
			std::shared_lock<std::shared_mutex> sh(sync_lock);
			synced = CK(cudaStreamSynchronize(s));
		}
		if (!synced)
			continue;
		for (int q = 0; q < Q; q++) {
			n_checks++;
			for (int i = 0; i < N; i++)
				if (h_c[q * N + i] != 3 * h_a[i] + r[q]) {
					wrong("launcher", i, h_c[q * N + i], 3 * h_a[i] + r[q]);
					break;
				}
		}
		n_iters++;
	}
	// No frees here: the capture thread may still be in a global-mode
	// capture; the process's end releases the memory.
	std::shared_lock<std::shared_mutex> sh(sync_lock);
	CK(cudaStreamSynchronize(s));
}

// --reset: the buffers of one life of the context.  Stream 0 (the legacy
// default stream) computes c[0], the stream of its own c[1], from one input.
struct ResetSet {
	cudaStream_t s;
	int *a, *c[2], *h_a, *h_c;
};

// Make the stream and buffers (again, after a reset: the old ones went with
// the context) and upload new inputs; false when a call failed.
static bool reset_make(ResetSet *rs, unsigned *st)
{
	if (!CK(cudaStreamCreateWithFlags(&rs->s, cudaStreamNonBlocking)) ||
	    !CK(cudaMalloc(&rs->a, N * sizeof(int))) ||
	    !CK(cudaMalloc(&rs->c[0], N * sizeof(int))) ||
	    !CK(cudaMalloc(&rs->c[1], N * sizeof(int))) ||
	    !CK(cudaMallocHost(&rs->h_a, N * sizeof(int))) ||
	    !CK(cudaMallocHost(&rs->h_c, 2 * N * sizeof(int))))
		return false;
	for (int i = 0; i < N; i++)
		rs->h_a[i] = (int)(rnd(st) & 0xfff);
	return CK(cudaMemcpyAsync(rs->a, rs->h_a, N * sizeof(int), cudaMemcpyHostToDevice,
	                          rs->s)) &&
	       CK(cudaStreamSynchronize(rs->s));
}

// Check lin's result in rs->h_c's half q against r.
static void lin_check(ResetSet *rs, int q, int r, const char *what)
{
	n_checks++;
	for (int j = 0; j < N; j++)
		if (rs->h_c[q * N + j] != 3 * rs->h_a[j] + r) {
			wrong(what, j, rs->h_c[q * N + j], 3 * rs->h_a[j] + r);
			break;
		}
}

// --green: one green context's life (see the top); false when a call failed.
static bool green_round(ResetSet *rs, unsigned *st)
{
	CUdevice dev;
	CUdevResource res;
	CUdevResourceDesc desc;
	CUgreenCtx g;
	CUcontext gc, old;
	CUstream gs;

	if (!CKD(cuCtxGetDevice(&dev)) ||
	    !CKD(cuDeviceGetDevResource(dev, &res, CU_DEV_RESOURCE_TYPE_SM)) ||
	    !CKD(cuDevResourceGenerateDesc(&desc, &res, 1)) ||
	    !CKD(cuGreenCtxCreate(&g, desc, dev, CU_GREEN_CTX_DEFAULT_STREAM)))
		return false;
	bool ok = CKD(cuCtxFromGreenCtx(&gc, g)) &&
	          CKD(cuGreenCtxStreamCreate(&gs, g, CU_STREAM_NON_BLOCKING, 0));
	for (int q = 0; q < 2 && ok; q++) {
		int r = (int)(rnd(st) & 0xffff);
		cudaStream_t on = q ? (cudaStream_t)0 : (cudaStream_t)gs;

		if (q == 1 && !CKD(cuCtxPushCurrent(gc)))
			return false;
		lin<<<(N + 255) / 256, 256, 0, on>>>(rs->a, rs->c[q], r, N);
		ok = CK(cudaGetLastError()) &&
		     CK(cudaMemcpyAsync(rs->h_c + q * N, rs->c[q], N * sizeof(int),
		                        cudaMemcpyDeviceToHost, on)) &&
		     CK(cudaStreamSynchronize(on));
		if (q == 1)
			ok = CKD(cuCtxPopCurrent(&old)) && ok;
		if (ok)
			lin_check(rs, q, r, q ? "green default stream" : "green stream");
	}
	phase("begin", "compile");
	usleep((useconds_t)(hold_ms * 1000 * (0.2 + 0.8 * (rnd(st) % 1000) / 1000.0)));
	ok = CKD(cuGreenCtxDestroy(g)) && ok; // gs left in place
	phase("end", "compile");
	n_greens += ok;
	return ok;
}

static void reset_loop(unsigned seed, double t0, double seconds)
{
	ResetSet rs;
	unsigned st = seed * 17 + 3;

	if (!reset_make(&rs, &st))
		return;
	for (long i = 0; now_s() - t0 < seconds; i++) {
		if (i % 3 == 2 && green) {
			if (!green_round(&rs, &st))
				return;
		} else if (i % 3 == 2) {
			phase("begin", "compile");
			usleep((useconds_t)(hold_ms * 1000 *
			                    (0.2 + 0.8 * (rnd(&st) % 1000) / 1000.0)));
			// Everything of the context still allocated: the reset ends it.
			bool ok = CK(cudaDeviceReset()) && CK(cudaFree(0)); // the context again
			phase("end", "compile");
			if (!ok || !reset_make(&rs, &st))
				return;
			n_resets++;
		}
		int r[2];
		cudaStream_t on[2] = {0, rs.s};
		for (int q = 0; q < 2; q++) {
			r[q] = (int)(rnd(&st) & 0xffff);
			lin<<<(N + 255) / 256, 256, 0, on[q]>>>(rs.a, rs.c[q], r[q], N);
			CK(cudaGetLastError());
			CK(cudaMemcpyAsync(rs.h_c + q * N, rs.c[q], N * sizeof(int),
			                   cudaMemcpyDeviceToHost, on[q]));
		}
		bool synced = CK(cudaStreamSynchronize(0));
		synced = CK(cudaStreamSynchronize(rs.s)) && synced;
		if (!synced)
			continue;
		for (int q = 0; q < 2; q++)
			lin_check(&rs, q, r[q], q ? "own stream" : "default stream");
		n_iters++;
	}
	CK(cudaStreamDestroy(rs.s));
	CK(cudaFree(rs.a));
	CK(cudaFree(rs.c[0]));
	CK(cudaFree(rs.c[1]));
	CK(cudaFreeHost(rs.h_a));
	CK(cudaFreeHost(rs.h_c));
}

int main(int argc, char **argv)
{
	double seconds = 30, t0 = now_s();
	unsigned seed = 1234;
	const char *linger = nullptr;
	bool reset = false;

	for (int i = 1; i < argc; i++) {
		std::string a = argv[i];
		if (a == "--reset") { // the one option without a value
			reset = true;
			me = "cuda-reset";
			continue;
		}
		if (a == "--green") { // --reset's loop, a green context for the reset
			reset = green = true;
			me = "cuda-green";
			continue;
		}
		if (i + 1 >= argc) {
			fprintf(stderr, "%s: %s needs a value\n", me, argv[i]);
			return 2;
		}
		if (a == "--seconds")
			seconds = atof(argv[++i]);
		else if (a == "--seed")
			seed = (unsigned)atoi(argv[++i]);
		else if (a == "--phases")
			ph = fopen(argv[++i], "a");
		else if (a == "--linger")
			linger = argv[++i];
		else if (a == "--hold-ms")
			hold_ms = atof(argv[++i]);
		else {
			fprintf(stderr, "%s: bad argument %s\n", me, argv[i]);
			return 2;
		}
	}
	phase("begin", "init");
	if (!CK(cudaFree(0))) { // the context, up front
		printf("{\"harmless\": 1, \"name\": \"%s\", \"iterations\": 0, "
		       "\"errors\": %ld, \"wrong\": 0, \"exceptions\": 0, \"checks\": 0, "
		       "\"skipped\": null, \"notes\": [\"no CUDA context\"], \"pid\": %d}\n",
		       me, n_errors.load(), (int)getpid());
		return 1;
	}
	phase("end", "init");
	if (reset) {
		reset_loop(seed, t0, seconds);
	} else {
		std::thread tc(capture_thread, seed), tl(launch_thread, seed);
		while (now_s() - t0 < seconds)
			usleep(20000);
		stop_now = true;
		tc.join();
		tl.join();
	}
	CK(cudaDeviceSynchronize());
	if (linger) {
		struct stat sb;
		phase("begin", "linger");
		for (double t = now_s(); stat(linger, &sb) != 0 && now_s() - t < 300;)
			usleep(20000);
	}
	phase("end", "run");
	if (green)
		printf("{\"harmless\": 1, \"name\": \"cuda-green\", \"iterations\": %ld, "
		       "\"errors\": %ld, \"wrong\": %ld, \"exceptions\": 0, \"checks\": %ld, "
		       "\"seconds\": %.3f, \"skipped\": null, \"notes\": [\"green contexts %ld\"], "
		       "\"greens\": %ld, \"pid\": %d}\n",
		       n_iters.load(), n_errors.load(), n_wrong.load(), n_checks.load(),
		       now_s() - t0, n_greens, n_greens, (int)getpid());
	else if (reset)
		printf("{\"harmless\": 1, \"name\": \"cuda-reset\", \"iterations\": %ld, "
		       "\"errors\": %ld, \"wrong\": %ld, \"exceptions\": 0, \"checks\": %ld, "
		       "\"seconds\": %.3f, \"skipped\": null, \"notes\": [\"resets %ld\"], "
		       "\"resets\": %ld, \"pid\": %d}\n",
		       n_iters.load(), n_errors.load(), n_wrong.load(), n_checks.load(),
		       now_s() - t0, n_resets, n_resets, (int)getpid());
	else
		printf("{\"harmless\": 1, \"name\": \"cuda-capture\", \"iterations\": %ld, "
		       "\"errors\": %ld, \"wrong\": %ld, \"exceptions\": 0, \"checks\": %ld, "
		       "\"seconds\": %.3f, \"skipped\": null, \"notes\": [\"captures global %ld, "
		       "thread_local %ld, relaxed %ld\"], \"captures\": {\"global\": %ld, "
		       "\"thread_local\": %ld, \"relaxed\": %ld}, \"pid\": %d}\n",
		       n_iters.load(), n_errors.load(), n_wrong.load(), n_checks.load(),
		       now_s() - t0, n_capt[0].load(), n_capt[1].load(), n_capt[2].load(),
		       n_capt[0].load(), n_capt[1].load(), n_capt[2].load(), (int)getpid());
	fflush(stdout);
	return n_errors || n_wrong ? 1 : 0;
}
