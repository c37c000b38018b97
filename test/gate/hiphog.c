/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * hiphog - a HIP hog for the gate tests, against the mock libamdhip64.so:
 * launches kernels of US microseconds with hipLaunchKernel on a stream
 * (asynchronously) until killed, 60 s or FILE.stop exists, writing its
 * launch count to FILE every 100 launches.
 *
 *	hiphog US FILE
 *	hiphog multi US FILE
 *	    the same through hipLaunchCooperativeKernelMultiDevice (a list of
 *	    one device)
 *	hiphog ext US FILE
 *	    the same through hip_ext.h's hipExtModuleLaunchKernel under HIP
 *	    5.2's C++-mangled name (what Tensile, so rocBLAS, calls there)
 *	hiphog spt US FILE
 *	    the same through hipLaunchKernel_spt on stream 0 (the per-thread
 *	    stream, as a program built with -fgpu-default-stream=per-thread)
 *	hiphog peer DIR
 *	    one hipMemcpyPeer of 64 bytes; writes "peer rc=R same=S" (S 1: the
 *	    bytes arrived) to DIR/out, then waits (at most 30 s) for DIR/end
 *	hiphog capture MODE DIR
 *	    queue 10 x 20 ms kernels on a stream, capture 3 kernels on another
 *	    (blocking) stream in MODE global|thread|relaxed, touch DIR/ready, wait
 *	    for DIR/go, end the capture, launch the graph; write
 *	    "capture rc=R graph=G" (G 1: the graph ran) to DIR/out.
 *	hiphog streams DIR
 *	    with two devices (KREX_MOCK_HIP_DEVICES=2): queue 8 x 25 ms kernels
 *	    on a non-blocking stream of device 0, 8 on one of device 1 and one
 *	    of 1 ms on device 1's null stream, make device 0 current again,
 *	    touch DIR/queued, wait for DIR/go, synchronize the device, write
 *	    "streams rc=R" to DIR/out.
 *	hiphog multi2 DIR
 *	    the same with one hipLaunchCooperativeKernelMultiDevice instead: a
 *	    kernel of 1 ms on a non-blocking stream of device 0 and one of
 *	    1 s on a non-blocking stream of device 1 (made while device 1
 *	    was current; nothing else submitted to it)
 *	hiphog fmulti2 DIR
 *	    the same through ROCm 6's hipModuleLaunchCooperativeKernelMultiDevice
 *	hiphog many N DIR
 *	    N non-blocking streams, a 1 us kernel on each but the last, 300 ms
 *	    on the last; touch DIR/queued, wait for DIR/go, synchronize the
 *	    device, write "streams rc=R" to DIR/out.
 *	hiphog reset DIR
 *	    20 kernels of 1 ms on a stream and 20 on the null stream, a
 *	    synchronize, hipDeviceReset, the same on a new stream; then as
 *	    streams (DIR/queued, DIR/go, "streams rc=R").
 *	hiphog churn FILE
 *	    until FILE.stop exists (at most 60 s): make a non-blocking stream
 *	    (on devices 0 and 1 in turn when there are two), launch 2 kernels
 *	    of 200 us on it, destroy it; the count of streams made to FILE
 *	    every 10.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "gate_types.h"

hipError_t hipInit(unsigned int);
hipError_t hipStreamCreate(hipStream_t *);
hipError_t hipLaunchKernel(const void *, dim3, dim3, void **, size_t, hipStream_t);
hipError_t hipStreamSynchronize(hipStream_t);
hipError_t hipStreamBeginCapture(hipStream_t, hipStreamCaptureMode);
hipError_t hipStreamEndCapture(hipStream_t, hipGraph_t *);
hipError_t hipGraphInstantiate(hipGraphExec_t *, hipGraph_t, void *, char *, size_t);
hipError_t hipGraphLaunch(hipGraphExec_t, hipStream_t);
hipError_t hipLaunchCooperativeKernelMultiDevice(hipLaunchParams *, int, unsigned int);
hipError_t hipLaunchKernel_spt(const void *, dim3, dim3, void **, size_t, hipStream_t);
hipError_t hipModuleLaunchCooperativeKernelMultiDevice(hipFunctionLaunchParams *, unsigned int,
                                                       unsigned int);
/* HIP 5.2's hipExtModuleLaunchKernel (hip_ext.h, C++) */
hipError_t
_Z24hipExtModuleLaunchKernelP18ihipModuleSymbol_tjjjjjjmP12ihipStream_tPPvS4_P11ihipEvent_tS6_j(
        hipFunction_t, uint32_t, uint32_t, uint32_t, uint32_t, uint32_t, uint32_t, size_t,
        hipStream_t, void **, void **, hipEvent_t, hipEvent_t, uint32_t);
#define EXT_LAUNCH                                                                                 \
	_Z24hipExtModuleLaunchKernelP18ihipModuleSymbol_tjjjjjjmP12ihipStream_tPPvS4_P11ihipEvent_tS6_j
hipError_t hipMemcpyPeer(void *, int, const void *, int, size_t);
hipError_t hipStreamCreateWithFlags(hipStream_t *, unsigned int);
hipError_t hipStreamDestroy(hipStream_t);
hipError_t hipSetDevice(int);
hipError_t hipGetDeviceCount(int *);
hipError_t hipDeviceSynchronize(void);
hipError_t hipDeviceReset(void);

static void touch(const char *dir, const char *name)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if ((f = fopen(path, "w")))
		fclose(f);
}

/* Wait (at most 30 s) for DIR/NAME. */
static void await(const char *dir, const char *name)
{
	char path[4096];
	int i;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	for (i = 0; i < 3000 && access(path, F_OK) != 0; i++)
		usleep(10000);
}

/* Launch n kernels of us microseconds on s. */
static hipError_t launch(hipStream_t s, int n, long long us)
{
	static uint32_t word;
	dim3 grid = {1, 1, 1}, block = {32, 1, 1};
	void *out = &word;
	void *args[] = {&out, &us};
	hipError_t r = hipSuccess;

	while (n-- > 0 && r == hipSuccess)
		r = hipLaunchKernel((const void *)launch, grid, block, args, 0, s);
	return r;
}

/* streams, multi2 and fmulti2 (above; multi 0, 1, 2): queue. */
static hipError_t queue(int multi)
{
	static uint32_t word;
	long long us0 = 1000, us1 = 1000000;
	void *out = &word;
	void *args0[] = {&out, &us0}, *args1[] = {&out, &us1};
	hipLaunchParams list[2] = {{(void *)queue, {1, 1, 1}, {32, 1, 1}, args0, 0, NULL},
	                           {(void *)queue, {1, 1, 1}, {32, 1, 1}, args1, 0, NULL}};
	hipFunctionLaunchParams flist[2] = {{NULL, 1, 1, 1, 32, 1, 1, 0, NULL, args0},
	                                    {NULL, 1, 1, 1, 32, 1, 1, 0, NULL, args1}};
	hipStream_t a, b;
	hipError_t r;

	if (hipStreamCreateWithFlags(&a, 1) != hipSuccess || hipSetDevice(1) != hipSuccess ||
	    hipStreamCreateWithFlags(&b, 1) != hipSuccess)
		return 2;
	if (multi == 2) {
		flist[0].hStream = a;
		flist[1].hStream = b;
		r = hipModuleLaunchCooperativeKernelMultiDevice(flist, 2, 0);
	} else if (multi) {
		list[0].stream = a;
		list[1].stream = b;
		r = hipLaunchCooperativeKernelMultiDevice(list, 2, 0);
	} else {
		r = launch(a, 8, 25000);
		if (r == hipSuccess)
			r = launch(b, 8, 25000);
		if (r == hipSuccess)
			r = launch(NULL, 1, 1000);
	}
	return r == hipSuccess ? hipSetDevice(0) : r;
}

/* After queueing: touch DIR/queued, wait for DIR/go, synchronize the
 * device, write "streams rc=R" to DIR/out; 0 when it synchronized. */
static int queued(const char *dir)
{
	hipError_t r;
	char path[4096];
	FILE *f;

	touch(dir, "queued");
	await(dir, "go");
	r = hipDeviceSynchronize();
	snprintf(path, sizeof(path), "%s/out", dir);
	if (!(f = fopen(path, "w")))
		return 1;
	fprintf(f, "streams rc=%d\n", (int)r);
	fclose(f);
	return r == hipSuccess ? 0 : 1;
}

static int streams(const char *dir, int multi)
{
	return queue(multi) == hipSuccess ? queued(dir) : 1;
}

static int many(int n, const char *dir)
{
	hipStream_t s;
	int i;

	for (i = 0; i < n; i++)
		if (hipStreamCreateWithFlags(&s, 1) != hipSuccess ||
		    launch(s, 1, i == n - 1 ? 300000 : 1) != hipSuccess)
			return 1;
	return queued(dir);
}

static int reset(const char *dir)
{
	hipStream_t s;
	int round;

	for (round = 0; round < 2; round++) {
		if (round &&
		    (hipDeviceSynchronize() != hipSuccess || hipDeviceReset() != hipSuccess))
			return 1;
		if (hipStreamCreateWithFlags(&s, 1) != hipSuccess ||
		    launch(s, 20, 1000) != hipSuccess || launch(NULL, 20, 1000) != hipSuccess)
			return 1;
	}
	return queued(dir);
}

static int churn(const char *file)
{
	time_t t0 = time(NULL);
	unsigned long n = 0;
	char stop[4096];
	hipStream_t s;
	int devs = 1;
	FILE *f;

	hipGetDeviceCount(&devs);
	snprintf(stop, sizeof(stop), "%s.stop", file);
	while (time(NULL) - t0 < 60 && access(stop, F_OK) != 0) {
		if (hipSetDevice((int)(n % (unsigned long)devs)) != hipSuccess ||
		    hipStreamCreateWithFlags(&s, 1) != hipSuccess ||
		    launch(s, 2, 200) != hipSuccess || hipStreamDestroy(s) != hipSuccess)
			return 1;
		if (++n % 10 == 0 && (f = fopen(file, "w"))) {
			fprintf(f, "%lu\n", n);
			fclose(f);
		}
	}
	return 0;
}

static int peer(const char *dir)
{
	static char src[64], dst[64];
	char path[4096];
	hipError_t r;
	FILE *f;
	int i;

	for (i = 0; i < 64; i++)
		src[i] = (char)(i + 1);
	r = hipMemcpyPeer(dst, 0, src, 0, sizeof(src));
	snprintf(path, sizeof(path), "%s/out", dir);
	if (!(f = fopen(path, "w")))
		return 2;
	fprintf(f, "peer rc=%d same=%d\n", (int)r, memcmp(src, dst, sizeof(src)) == 0);
	fclose(f);
	snprintf(path, sizeof(path), "%s/end", dir);
	for (i = 0; i < 3000 && access(path, F_OK) != 0; i++)
		usleep(10000);
	return r == hipSuccess ? 0 : 1;
}

static int capture(const char *mode, const char *dir)
{
	static uint32_t words[4];
	int m = strcmp(mode, "global") == 0 ? 0 : strcmp(mode, "thread") == 0 ? 1 : 2;
	dim3 grid = {1, 1, 1}, block = {32, 1, 1};
	hipStream_t work, cap;
	hipGraph_t g = NULL;
	hipGraphExec_t x = NULL;
	char path[4096];
	long long us;
	void *out, *args[] = {&out, &us};
	hipError_t r;
	int i, ok = 0;
	FILE *f;

	if (hipStreamCreate(&work) != hipSuccess || hipStreamCreate(&cap) != hipSuccess)
		return 2;
	out = &words[0];
	us = 20000;
	for (i = 0; i < 10; i++)
		hipLaunchKernel((const void *)capture, grid, block, args, 0, work);
	if (hipStreamBeginCapture(cap, m) != hipSuccess)
		return 1;
	for (i = 1; i <= 3; i++) {
		out = &words[i];
		us = 100 * i;
		hipLaunchKernel((const void *)capture, grid, block, args, 0, cap);
	}
	snprintf(path, sizeof(path), "%s/ready", dir);
	if ((f = fopen(path, "w")))
		fclose(f);
	snprintf(path, sizeof(path), "%s/go", dir);
	for (i = 0; i < 3000 && access(path, F_OK) != 0; i++)
		usleep(10000);
	r = hipStreamEndCapture(cap, &g);
	if (r == hipSuccess && hipGraphInstantiate(&x, g, NULL, NULL, 0) == hipSuccess &&
	    hipGraphLaunch(x, cap) == hipSuccess && hipStreamSynchronize(cap) == hipSuccess)
		ok = words[1] == 100 && words[2] == 200 && words[3] == 300;
	snprintf(path, sizeof(path), "%s/out", dir);
	if (!(f = fopen(path, "w")))
		return 1;
	fprintf(f, "capture rc=%d graph=%d\n", r, ok);
	fclose(f);
	return 0;
}

int main(int argc, char **argv)
{
	int spt = argc == 4 && strcmp(argv[1], "spt") == 0;
	int ext = argc == 4 && strcmp(argv[1], "ext") == 0;
	int multi = (argc == 4 && strcmp(argv[1], "multi") == 0) || spt || ext;
	long long us = argc > 2 ? atoll(argv[1 + multi]) : 1000;
	const char *file;
	void *out = NULL;
	void *args[] = {&out, &us};
	dim3 grid = {1, 1, 1}, block = {32, 1, 1};
	hipLaunchParams list[1] = {{(void *)main, {1, 1, 1}, {32, 1, 1}, args, 0, NULL}};
	hipStream_t s;
	time_t t0 = time(NULL);
	unsigned long n = 0;
	char stop[4096];
	hipError_t r;
	FILE *f;

	if (argc == 3 && strcmp(argv[1], "peer") == 0)
		return hipInit(0) == hipSuccess ? peer(argv[2]) : 2;
	if (argc == 3 && strcmp(argv[1], "streams") == 0)
		return hipInit(0) == hipSuccess ? streams(argv[2], 0) : 2;
	if (argc == 3 && strcmp(argv[1], "multi2") == 0)
		return hipInit(0) == hipSuccess ? streams(argv[2], 1) : 2;
	if (argc == 3 && strcmp(argv[1], "fmulti2") == 0)
		return hipInit(0) == hipSuccess ? streams(argv[2], 2) : 2;
	if (argc == 4 && strcmp(argv[1], "many") == 0)
		return hipInit(0) == hipSuccess ? many(atoi(argv[2]), argv[3]) : 2;
	if (argc == 3 && strcmp(argv[1], "reset") == 0)
		return hipInit(0) == hipSuccess ? reset(argv[2]) : 2;
	if (argc == 3 && strcmp(argv[1], "churn") == 0)
		return hipInit(0) == hipSuccess ? churn(argv[2]) : 2;
	if (argc == 4 && strcmp(argv[1], "capture") == 0)
		return hipInit(0) == hipSuccess ? capture(argv[2], argv[3]) : 2;
	if (argc != 3 + multi || hipInit(0) != hipSuccess || hipStreamCreate(&s) != hipSuccess)
		return 2;
	file = argv[2 + multi];
	list[0].stream = s;
	snprintf(stop, sizeof(stop), "%s.stop", file);
	while (time(NULL) - t0 < 60) {
		r = ext     ? EXT_LAUNCH(NULL, 32, 1, 1, 32, 1, 1, 0, s, args, NULL, NULL, NULL, 0)
		    : spt   ? hipLaunchKernel_spt((const void *)main, grid, block, args, 0, 0)
		    : multi ? hipLaunchCooperativeKernelMultiDevice(list, 1, 0)
		            : hipLaunchKernel((const void *)main, grid, block, args, 0, s);
		if (r != hipSuccess)
			return 1;
		if (++n % 100 == 0 && (f = fopen(file, "w"))) {
			fprintf(f, "%lu\n", n);
			fclose(f);
			if (access(stop, F_OK) == 0)
				break; /* exits, writing the gate's counts */
		}
	}
	return 0;
}
