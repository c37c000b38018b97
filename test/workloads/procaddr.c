/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * krex-procaddr - reaches the driver only the way the CUDA runtime does:
 * one dlsym(libcuda handle, "cuGetProcAddress_v2"), then every function
 * through cuGetProcAddress_v2 (legacy and per-thread variants), launching a
 * few kernels and copies.  Exit 0 when the results are right.
 */
#include "config.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gate_types.h"
#include "wl_cuda.h"

typedef CUresult (*gpa_fn)(const char *, void **, int, cuuint64_t, int *);
static gpa_fn gpa;

static void *get(const char *name, cuuint64_t flags)
{
	void *p = NULL;
	int st = -1;

	if (gpa(name, &p, 12000, flags, &st) != CUDA_SUCCESS || !p) {
		fprintf(stderr, "krex-procaddr: cuGetProcAddress_v2(%s) failed\n", name);
		exit(1);
	}
	return p;
}

#define CK(x)                                                                                      \
	do {                                                                                       \
		CUresult r_ = (x);                                                                 \
		if (r_ != CUDA_SUCCESS) {                                                          \
			fprintf(stderr, "krex-procaddr: %s: %d\n", #x, r_);                        \
			return 1;                                                                  \
		}                                                                                  \
	} while (0)

int main(void)
{
	void *h = dlopen("libcuda.so.1", RTLD_NOW);
	CUresult (*init)(unsigned);
	CUresult (*devget)(CUdevice *, int);
	CUresult (*retain)(CUcontext *, CUdevice);
	CUresult (*setcur)(CUcontext);
	CUresult (*modload)(CUmodule *, const void *);
	CUresult (*getfn)(CUfunction *, CUmodule, const char *);
	CUresult (*alloc)(CUdeviceptr *, size_t);
	CUresult (*launch)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
	                   unsigned, CUstream, void **, void **);
	CUresult (*launch_pt)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
	                      unsigned, unsigned, CUstream, void **, void **);
	CUresult (*memset32)(CUdeviceptr, unsigned, size_t);
	CUresult (*htod_async)(CUdeviceptr, const void *, size_t, CUstream);
	CUresult (*dtoh)(void *, CUdeviceptr, size_t);
	CUresult (*ctxsync)(void);
	unsigned host[64], back[64];
	CUdevice dev;
	CUcontext ctx;
	CUmodule mod;
	CUfunction fn;
	CUdeviceptr buf, out;
	long long iters = 100;
	void *params[] = {&out, &iters};
	int i;

	if (!h) {
		fprintf(stderr, "krex-procaddr: %s\n", dlerror());
		return 1;
	}
	gpa = (gpa_fn)dlsym(h, "cuGetProcAddress_v2");
	if (!gpa) {
		fprintf(stderr, "krex-procaddr: no cuGetProcAddress_v2\n");
		return 1;
	}
	*(void **)&init = get("cuInit", 0);
	*(void **)&devget = get("cuDeviceGet", 0);
	*(void **)&retain = get("cuDevicePrimaryCtxRetain", 0);
	*(void **)&setcur = get("cuCtxSetCurrent", 0);
	*(void **)&modload = get("cuModuleLoadData", 0);
	*(void **)&getfn = get("cuModuleGetFunction", 0);
	*(void **)&alloc = get("cuMemAlloc", 0);
	*(void **)&launch = get("cuLaunchKernel", 0);
	*(void **)&launch_pt = get("cuLaunchKernel", CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM);
	*(void **)&memset32 = get("cuMemsetD32", 0);
	*(void **)&htod_async = get("cuMemcpyHtoDAsync", 0);
	*(void **)&dtoh = get("cuMemcpyDtoH", 0);
	*(void **)&ctxsync = get("cuCtxSynchronize", 0);
	CK(init(0));
	CK(devget(&dev, 0));
	CK(retain(&ctx, dev));
	CK(setcur(ctx));
	CK(modload(&mod, wl_module_image()));
	CK(getfn(&fn, mod, "fma_loop"));
	CK(alloc(&buf, sizeof(host)));
	CK(alloc(&out, 528 * 256 * sizeof(float)));
	for (i = 0; i < 4; i++) {
		CK(launch(fn, 528, 1, 1, 256, 1, 1, 0, NULL, params, NULL));
		CK(launch_pt(fn, 528, 1, 1, 256, 1, 1, 0, NULL, params, NULL));
	}
	CK(memset32(buf, 0xabcd, 64));
	CK(dtoh(back, buf, sizeof(back)));
	for (i = 0; i < 64; i++)
		if (back[i] != 0xabcd) {
			fprintf(stderr, "krex-procaddr: memset result wrong at %d\n", i);
			return 1;
		}
	for (i = 0; i < 64; i++)
		host[i] = (unsigned)i * 7u;
	CK(htod_async(buf, host, sizeof(host), NULL));
	CK(ctxsync());
	CK(dtoh(back, buf, sizeof(back)));
	if (memcmp(host, back, sizeof(host)) != 0) {
		fprintf(stderr, "krex-procaddr: copy result wrong\n");
		return 1;
	}
	printf("krex-procaddr: ok\n");
	return 0;
}
