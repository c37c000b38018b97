/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mock_hip.c - TEST DOUBLE: a fake libamdhip64.so (not HIP) implementing
 * the subset tests use, on the simulated GPU of mock_gpu.c.  No AMD GPU
 * was available to the project; HIP support is tested against this only.
 *
 * hipLaunchKernel / hipModuleLaunchKernel run a "kernel" of args[1]
 * (long long *) microseconds and write that number to *(void **)args[0].
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "gate_types.h"
#include "mock_gpu.h"
#include "mock_hip.h"

#define EXPORT __attribute__((visibility("default")))
#define hipErrorInvalidValue 1

struct ihipStream_t {
	struct mock_stream s;
};
struct ihipEvent_t {
	struct mock_event e;
};

static __thread int cur_dev;

static struct mock_stream *mstream(hipStream_t s)
{
	return s ? &s->s : NULL;
}

EXPORT hipError_t hipInit(unsigned int flags)
{
	return hipSuccess;
}

EXPORT hipError_t hipGetDeviceCount(int *n)
{
	*n = 1;
	return hipSuccess;
}

EXPORT hipError_t hipGetDevice(int *d)
{
	*d = cur_dev;
	return hipSuccess;
}

EXPORT hipError_t hipSetDevice(int d)
{
	if (d != 0)
		return hipErrorInvalidValue;
	cur_dev = d;
	return hipSuccess;
}

EXPORT hipError_t hipDeviceSynchronize(void)
{
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

EXPORT hipError_t hipStreamCreate(hipStream_t *s)
{
	*s = calloc(1, sizeof(**s));
	return *s ? hipSuccess : 2;
}

EXPORT hipError_t hipStreamSynchronize(hipStream_t s)
{
	mock_sync_stream(mstream(s));
	return hipSuccess;
}

EXPORT hipError_t hipEventCreate(hipEvent_t *e)
{
	*e = calloc(1, sizeof(**e));
	return *e ? hipSuccess : 2;
}

EXPORT hipError_t hipEventRecord(hipEvent_t e, hipStream_t s)
{
	struct mock_op op = {.type = MOP_EVENT, .ev = &e->e};

	mock_submit(mstream(s), &op);
	return hipSuccess;
}

EXPORT hipError_t hipEventSynchronize(hipEvent_t e)
{
	if (e->e.seq)
		mock_wait_seq(e->e.seq);
	return hipSuccess;
}

EXPORT hipError_t hipEventCreateWithFlags(hipEvent_t *e, unsigned flags)
{
	(void)flags;
	return hipEventCreate(e);
}

EXPORT hipError_t hipEventQuery(hipEvent_t e)
{
	return !e->e.seq || mock_done_seq(e->e.seq) ? hipSuccess : 600; /* hipErrorNotReady */
}

EXPORT hipError_t hipEventElapsedTime(float *ms, hipEvent_t a, hipEvent_t b)
{
	mock_wait_seq(b->e.seq > a->e.seq ? b->e.seq : a->e.seq);
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
	mock_submit(mstream(s), &op);
	return hipSuccess;
}

hipError_t mock_hip_hipLaunchKernel(const void *f, dim3 g, dim3 b, void **args, size_t shm,
                                    hipStream_t s)
{
	return kernel(args, s);
}

hipError_t mock_hip_hipModuleLaunchKernel(hipFunction_t f, unsigned int gx, unsigned int gy,
                                          unsigned int gz, unsigned int bx, unsigned int by,
                                          unsigned int bz, unsigned int shm, hipStream_t s,
                                          void **args, void **extra)
{
	return kernel(args, s);
}

static hipError_t copy(void *dst, const void *src, size_t n, hipStream_t s, int sync)
{
	struct mock_op op = {.type = MOP_COPY, .dst = dst, .src = src, .n = n};
	uint64_t seq = mock_submit(mstream(s), &op);

	if (sync)
		mock_wait_seq(seq);
	return hipSuccess;
}

hipError_t mock_hip_hipMemcpy(void *dst, const void *src, size_t n, hipMemcpyKind k)
{
	return copy(dst, src, n, NULL, 1);
}

hipError_t mock_hip_hipMemcpyAsync(void *dst, const void *src, size_t n, hipMemcpyKind k,
                                   hipStream_t s)
{
	return copy(dst, src, n, s, 0);
}

hipError_t mock_hip_hipMemset(void *dst, int v, size_t n)
{
	struct mock_op op = {.type = MOP_SET, .dst = dst, .value = (uint32_t)v, .elem = 1, .n = n};

	mock_wait_seq(mock_submit(NULL, &op));
	return hipSuccess;
}
