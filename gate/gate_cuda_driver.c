/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gate_cuda_driver.c - the CUDA backend's ground floor: libcuda's handle,
 * the few unhooked driver functions the gate calls itself (resolved once),
 * the capture check and the event query of the drain and the bounded queue.
 */
#include "config.h"

#include <stdatomic.h>

#include "gate.h"
#include "gate_cuda.h"

static _Atomic(void *) cu_handle;

void *gate_cuda_handle(void)
{
	static const char *const names[] = {"libcuda.so.1", "libcuda.so", NULL};
	void *h = atomic_load(&cu_handle);

	if (!h) {
		h = gate_open_first(names);
		if (h)
			atomic_store(&cu_handle, h);
	}
	return h;
}

/* Resolve an unhooked driver function (cuCtxSynchronize...) once. */
static void *gate_cuda_sym(_Atomic(void *) *slot, const char *name)
{
	void *p = atomic_load_explicit(slot, memory_order_acquire);
	void *h;

	if (p)
		return p;
	h = gate_cuda_handle();
	p = h ? gate_real_dlsym(h, name) : NULL;
	if (p)
		atomic_store_explicit(slot, p, memory_order_release);
	return p;
}

#define CU_SYM_DEF(type, name)                                                                     \
	static _Atomic(void *) sym_##name;                                                         \
	type gate_##name(void)                                                                     \
	{                                                                                          \
		return (type)gate_cuda_sym(&sym_##name, #name);                                    \
	}
CU_SYMS(CU_SYM_DEF)
#undef CU_SYM_DEF

int gate_cuda_capturing(CUstream s)
{
	is_capturing_fn f = gate_cuStreamIsCapturing();
	int st = 0;

	if (!f)
		return 0; /* a driver without capture */
	if (f(s, &st) != CUDA_SUCCESS)
		return 1;
	return st != 0; /* CU_STREAM_CAPTURE_STATUS_NONE */
}

_Atomic int gate_cuda_deinit_seen;

int gate_cuda_query(void *ev)
{
	ev_sync_fn query = gate_cuEventQuery();
	CUstreamCaptureMode m;
	CUresult r;
	int relaxed;

	if (!query)
		return -1;
	relaxed = gate_relax(gate_cuThreadExchangeStreamCaptureMode(), &m);
	r = query((CUevent)ev);
	gate_unrelax(gate_cuThreadExchangeStreamCaptureMode(), relaxed, &m);
	if (r == CUDA_ERROR_DEINITIALIZED)
		atomic_store(&gate_cuda_deinit_seen, 1);
	return r == CUDA_SUCCESS ? 1 : r == CUDA_ERROR_NOT_READY ? 0 : -1;
}
