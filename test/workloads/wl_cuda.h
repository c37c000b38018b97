/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * wl_cuda.h - the CUDA driver API as the test workloads use it: resolved at
 * run time from dlopen("libcuda.so.1"), like the CUDA runtime does, so one
 * build runs against the mock (LD_LIBRARY_PATH=test/mock/.libs) and against
 * a real driver.  No CUDA toolkit needed to build.
 */
#ifndef KREX_WL_CUDA_H
#define KREX_WL_CUDA_H

#include <stddef.h>

#include "gate_types.h"

struct wl_cuda {
	CUresult (*cuInit)(unsigned int);
	CUresult (*cuDeviceGet)(CUdevice *, int);
	CUresult (*cuDeviceGetAttribute)(int *, int, CUdevice);
	CUresult (*cuDevicePrimaryCtxRetain)(CUcontext *, CUdevice);
	CUresult (*cuCtxSetCurrent)(CUcontext);
	CUresult (*cuCtxSynchronize)(void);
	CUresult (*cuModuleLoadData)(CUmodule *, const void *);
	CUresult (*cuModuleGetFunction)(CUfunction *, CUmodule, const char *);
	CUresult (*cuMemAlloc_v2)(CUdeviceptr *, size_t);
	CUresult (*cuLaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
	                           unsigned, unsigned, CUstream, void **, void **);
	CUresult (*cuEventCreate)(CUevent *, unsigned int);
	CUresult (*cuEventRecord)(CUevent, CUstream);
	CUresult (*cuEventSynchronize)(CUevent);
	CUresult (*cuEventElapsedTime)(float *, CUevent, CUevent);
	CUresult (*cuStreamSynchronize)(CUstream);
	CUresult (*cuMemcpyHtoD_v2)(CUdeviceptr, const void *, size_t);
	CUresult (*cuMemcpyDtoH_v2)(void *, CUdeviceptr, size_t);
	CUresult (*cuMemsetD32_v2)(CUdeviceptr, unsigned int, size_t);
	CUresult (*cuStreamCreate)(CUstream *, unsigned int);
	CUresult (*cuStreamDestroy_v2)(CUstream);
};

/* The work kernel: fma_loop(out, iters) over blocks x 256 threads. */
struct wl_kernel {
	struct wl_cuda cu;
	CUfunction fma, empty;
	CUdeviceptr out;
	unsigned blocks;
	/* wl_open()'s start-up, CLOCK_REALTIME seconds at the return of cuInit,
	 * of the primary context's retain and of the module's load */
	double t_init, t_ctx, t_mod;
};

/* dlopen libcuda, resolve, cuInit, primary context, module, buffer.
 * Exits with a message on failure (these are test programs). */
void wl_open(struct wl_kernel *k);

/* Queue one fma_loop of iters (mock: microseconds) on the default stream. */
void wl_launch(struct wl_kernel *k, long long iters);

/* Queue one empty kernel. */
void wl_launch_empty(struct wl_kernel *k);

/* The module image: KREX_WL_MODULE, else fma.fatbin beside the program,
 * else a placeholder only the mock accepts. */
void *wl_module_image(void);

/* Exit with a message when r is not CUDA_SUCCESS. */
void wl_check(CUresult r, const char *what);

/* The wall clock (CLOCK_REALTIME) in seconds since the epoch: comparable
 * with a parent's time.time() (agents.py splits a command's wall time by it). */
double wl_epoch_s(void);

/* CLOCK_MONOTONIC in milliseconds. */
double wl_now_ms(void);

/* Iterations of fma_loop that take ms milliseconds (event time) alone. */
long long wl_calibrate(struct wl_kernel *k, double ms);

#endif /* KREX_WL_CUDA_H */
