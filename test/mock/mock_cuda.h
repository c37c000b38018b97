/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mock_cuda.h - TEST DOUBLE: what the fake libcuda.so.1 exports besides
 * the driver API, for tests.
 */
#ifndef KREX_MOCK_CUDA_H
#define KREX_MOCK_CUDA_H

/* Calls that reached the mock's function of that exported name. */
unsigned long mock_cuda_calls(const char *name);

/* The mock's function for a hooked name given to cuGetProcAddress. */
void *mock_cuda_proc(const char *symbol, int ver, unsigned long long flags);

/* 1 inside a _ptds/_ptsz entry point: stream 0 is the per-thread stream. */
extern __thread int mock_cu_per_thread;

#endif /* KREX_MOCK_CUDA_H */
