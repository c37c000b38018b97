/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mock_cuda.c - TEST DOUBLE: a fake libcuda.so.1 for make check on machines
 * without a GPU.  Not a driver: it implements the subset of the CUDA driver
 * API the gate and test/workloads use, on the simulated GPU of mock_gpu.c.
 *
 * Modules: any image loads; functions "fma_loop" (params: CUdeviceptr *out,
 * long long *iters; runs iters microseconds and writes iters to *out) and
 * "empty" (runs 0 us).  Device memory is host memory.
 */
#include "config.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gate_types.h"
#include "mock_cuda.h"
#include "mock_gpu.h"

#define EXPORT __attribute__((visibility("default")))
#define CUDA_ERROR_INVALID_VALUE 1
#define CUDA_ERROR_INVALID_CONTEXT 201
#define CUDA_ERROR_NOT_FOUND 500
#define CUDA_ERROR_NOT_READY 600

struct CUctx_st {
	int dev;
};
struct CUfunc_st {
	int empty;
};
struct CUstream_st {
	struct mock_stream s;
};
struct CUevent_st {
	struct mock_event e;
};

static int initialized;
static struct CUctx_st primary_ctx;
static struct CUfunc_st fn_fma = {0}, fn_empty = {1};
static __thread CUcontext ctx_stack[16];
static __thread int ctx_depth; /* ctx_stack[ctx_depth - 1] is current */

static struct mock_stream *mstream(CUstream s)
{
	/* 0, CU_STREAM_LEGACY (1), CU_STREAM_PER_THREAD (2): the default FIFO */
	return (uintptr_t)s <= 2 ? NULL : &s->s;
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

EXPORT CUresult cuDevicePrimaryCtxRetain(CUcontext *c, CUdevice d)
{
	if (!initialized)
		return CUDA_ERROR_NOT_INITIALIZED;
	*c = &primary_ctx;
	return CUDA_SUCCESS;
}

EXPORT CUresult cuDevicePrimaryCtxRelease_v2(CUdevice d)
{
	return CUDA_SUCCESS;
}

EXPORT CUresult cuCtxCreate_v2(CUcontext *c, unsigned int flags, CUdevice d)
{
	if (!initialized)
		return CUDA_ERROR_NOT_INITIALIZED;
	*c = calloc(1, sizeof(struct CUctx_st));
	ctx_depth = ctx_depth ? ctx_depth : 1;
	ctx_stack[ctx_depth - 1] = *c;
	return CUDA_SUCCESS;
}

EXPORT CUresult cuCtxSetCurrent(CUcontext c)
{
	ctx_depth = ctx_depth ? ctx_depth : 1;
	ctx_stack[ctx_depth - 1] = c;
	return CUDA_SUCCESS;
}

EXPORT CUresult cuCtxGetCurrent(CUcontext *c)
{
	*c = ctx_depth ? ctx_stack[ctx_depth - 1] : NULL;
	return CUDA_SUCCESS;
}

EXPORT CUresult cuCtxPushCurrent_v2(CUcontext c)
{
	if (!c || ctx_depth >= 16)
		return CUDA_ERROR_INVALID_CONTEXT;
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

EXPORT CUresult cuCtxSynchronize(void)
{
	if (!have_ctx())
		return CUDA_ERROR_INVALID_CONTEXT;
	mock_sync_all();
	return CUDA_SUCCESS;
}

EXPORT CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t n)
{
	void *m = calloc(1, n ? n : 1);

	if (!m)
		return 2; /* CUDA_ERROR_OUT_OF_MEMORY */
	*p = (CUdeviceptr)(uintptr_t)m;
	return CUDA_SUCCESS;
}

EXPORT CUresult cuMemFree_v2(CUdeviceptr p)
{
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
	else
		return CUDA_ERROR_NOT_FOUND;
	return CUDA_SUCCESS;
}

EXPORT CUresult cuStreamCreate(CUstream *s, unsigned int flags)
{
	*s = calloc(1, sizeof(struct CUstream_st));
	return *s ? CUDA_SUCCESS : 2;
}

EXPORT CUresult cuStreamDestroy_v2(CUstream s)
{
	mock_sync_stream(mstream(s));
	free(s);
	return CUDA_SUCCESS;
}

EXPORT CUresult cuStreamSynchronize(CUstream s)
{
	mock_sync_stream(mstream(s));
	return CUDA_SUCCESS;
}

EXPORT CUresult cuEventCreate(CUevent *e, unsigned int flags)
{
	*e = calloc(1, sizeof(struct CUevent_st));
	return *e ? CUDA_SUCCESS : 2;
}

EXPORT CUresult cuEventDestroy_v2(CUevent e)
{
	if (e && e->e.seq)
		mock_wait_seq(e->e.seq);
	free(e);
	return CUDA_SUCCESS;
}

EXPORT CUresult cuEventRecord(CUevent e, CUstream s)
{
	struct mock_op op = {.type = MOP_EVENT, .ev = &e->e};

	mock_submit(mstream(s), &op);
	return CUDA_SUCCESS;
}

EXPORT CUresult cuEventSynchronize(CUevent e)
{
	if (e->e.seq)
		mock_wait_seq(e->e.seq);
	return CUDA_SUCCESS;
}

EXPORT CUresult cuEventQuery(CUevent e)
{
	return !e->e.seq || mock_done_seq(e->e.seq) ? CUDA_SUCCESS : CUDA_ERROR_NOT_READY;
}

EXPORT CUresult cuEventElapsedTime(float *ms, CUevent a, CUevent b)
{
	if (!a->e.seq || !b->e.seq || !mock_done_seq(a->e.seq) || !mock_done_seq(b->e.seq))
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
	if (!f->empty && params) {
		op.dst = params[0] ? (void *)(uintptr_t) * (CUdeviceptr *)params[0] : NULL;
		op.us = params[1] ? (uint64_t) * (long long *)params[1] : 0;
	}
	mock_submit(mstream(s), &op);
	return CUDA_SUCCESS;
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
	mock_submit(mstream(s), &op);
	return CUDA_SUCCESS;
}

static CUresult copy_async(void *dst, const void *src, size_t n, CUstream s, int sync)
{
	struct mock_op op = {.type = MOP_COPY, .dst = dst, .src = src, .n = n};
	uint64_t seq;

	if (n && (!dst || !src))
		return CUDA_ERROR_INVALID_VALUE;
	seq = mock_submit(mstream(s), &op);
	if (sync)
		mock_wait_seq(seq);
	return CUDA_SUCCESS;
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

	if (n && !d)
		return CUDA_ERROR_INVALID_VALUE;
	seq = mock_submit(mstream(s), &op);
	if (sync)
		mock_wait_seq(seq);
	return CUDA_SUCCESS;
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
