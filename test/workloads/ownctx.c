/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ownctx.c - krex-ownctx MS DIR [N]: a sibling whose work sits in a context of
 * its own (cuCtxCreate) when its primary context ends (doc/gate.md, "Ending
 * a context").
 *
 * The primary context is retained once (wl_open) and fma_loop of about MS
 * milliseconds (calibrated there) is run and read back as the reference.
 * Then N contexts of its own are made (cuCtxCreate_v2; N 1 by default),
 * the others kept but popped, the last current from then on (the gate
 * notes a bounded number of them); the module is loaded in the last, the
 * same fma_loop queued on a stream of it and after it a host function
 * that writes the time it ran; the primary
 * context's only retain is released (its last release).  DIR/queued is
 * written then.  When DIR/go exists the stream is synchronized and the
 * result read back.  DIR/out gets "done rc=R result=ok|bad ran=T", T the
 * host function's CLOCK_REALTIME seconds: after the kernel, so a drain that
 * waited for the kernel saw it run before its acknowledgement (a frozen
 * process runs no host function).  Exit 0 when every call succeeded and
 * the result is the reference.
 */
#include "config.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "wl_cuda.h"

static double ran_at;

static void ran(void *arg)
{
	struct timespec ts;

	(void)arg;
	clock_gettime(CLOCK_REALTIME, &ts);
	ran_at = (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void *sym(const char *name)
{
	void *f = dlsym(dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL), name);

	if (!f) {
		fprintf(stderr, "krex-ownctx: libcuda lacks %s\n", name);
		exit(1);
	}
	return f;
}

static void touch(const char *dir, const char *name, const char *text)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	if (!f || fputs(text, f) < 0 || fclose(f) != 0) {
		perror(path);
		exit(1);
	}
}

int main(int argc, char **argv)
{
	CUresult (*create)(CUcontext *, unsigned int, CUdevice);
	CUresult (*pop)(CUcontext *);
	CUresult (*release)(CUdevice);
	CUresult (*hostfn)(CUstream, void (*)(void *), void *);
	CUresult rc;
	struct wl_kernel k;
	CUdeviceptr out2;
	CUcontext own;
	CUmodule mod;
	CUfunction fn;
	CUstream s;
	float *ref, *got;
	long long iters;
	size_t bytes;
	char path[4096], line[160];
	int ok, n = argc == 4 ? atoi(argv[3]) : 1;

	if (argc < 3 || argc > 4 || atof(argv[1]) <= 0 || n < 1) {
		fprintf(stderr, "usage: krex-ownctx MS DIR [N]\n");
		return 2;
	}
	wl_open(&k);
	*(void **)&create = sym("cuCtxCreate_v2");
	*(void **)&pop = sym("cuCtxPopCurrent_v2");
	*(void **)&release = sym("cuDevicePrimaryCtxRelease_v2");
	*(void **)&hostfn = sym("cuLaunchHostFunc");
	iters = (long long)((double)wl_calibrate(&k, 10.0) * atof(argv[1]) / 10.0);
	bytes = (size_t)k.blocks * 256 * sizeof(float);
	ref = calloc(1, bytes);
	got = calloc(1, bytes);
	if (!ref || !got)
		return 1;
	wl_launch(&k, iters);
	wl_check(k.cu.cuMemcpyDtoH_v2(ref, k.out, bytes), "cuMemcpyDtoH (reference)");

	while (--n > 0) {
		CUcontext kept;

		wl_check(create(&own, 0, 0), "cuCtxCreate_v2 (kept)");
		wl_check(pop(&kept), "cuCtxPopCurrent_v2");
	}
	wl_check(create(&own, 0, 0), "cuCtxCreate_v2");
	wl_check(k.cu.cuModuleLoadData(&mod, wl_module_image()), "cuModuleLoadData (own context)");
	wl_check(k.cu.cuModuleGetFunction(&fn, mod, "fma_loop"), "cuModuleGetFunction");
	wl_check(k.cu.cuMemAlloc_v2(&out2, bytes), "cuMemAlloc (own context)");
	wl_check(k.cu.cuStreamCreate(&s, 1), "cuStreamCreate (own context)");
	{
		void *params[] = {&out2, &iters};

		wl_check(k.cu.cuLaunchKernel(fn, k.blocks, 1, 1, 256, 1, 1, 0, s, params, NULL),
		         "cuLaunchKernel (own context)");
	}
	wl_check(hostfn(s, ran, NULL), "cuLaunchHostFunc");
	wl_check(release(0), "cuDevicePrimaryCtxRelease_v2 (the last)");
	touch(argv[2], "queued", "queued\n");

	snprintf(path, sizeof(path), "%s/go", argv[2]);
	while (access(path, F_OK) != 0)
		usleep(10000);
	rc = k.cu.cuStreamSynchronize(s);
	ok = rc == CUDA_SUCCESS && k.cu.cuMemcpyDtoH_v2(got, out2, bytes) == CUDA_SUCCESS &&
	     memcmp(ref, got, bytes) == 0;
	snprintf(line, sizeof(line), "done rc=%d result=%s ran=%.6f\n", (int)rc, ok ? "ok" : "bad",
	         ran_at);
	touch(argv[2], "out", line);
	fputs(line, stdout);
	return ok ? 0 : 1;
}
