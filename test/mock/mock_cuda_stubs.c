/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mock_cuda_stubs.c - TEST DOUBLE: every symbol of the gate's
 * cuda_hooks.def (and its _ptds/_ptsz variant) exported by the fake
 * libcuda.so.1, counting the calls that reach it.  Each calls
 * mock_cu_<name>(), a no-op unless mock_cuda.c implements it.
 */
#include "config.h"

#include <dlfcn.h>
#include <stdatomic.h>
#include <string.h>

#include "gate_types.h"
#include "mock_cuda.h"

enum mock_cu_id {
#define CU_HOOK(PT, name, proc, since, kind, params, args, stream) MCU_##name,
#include "cuda_hooks.def"
#undef CU_HOOK
	MCU_COUNT
};

static _Atomic unsigned long mock_calls[MCU_COUNT][2];

/* Default implementations: do nothing, succeed. */
#define CU_HOOK(PT, name, proc, since, kind, params, args, stream)                                 \
	__attribute__((weak)) CUresult mock_cu_##name params;                                      \
	CUresult mock_cu_##name params                                                             \
	{                                                                                          \
		return CUDA_SUCCESS;                                                               \
	}
#include "cuda_hooks.def"
#undef CU_HOOK

/* The exported entry points. */
#define MOCK_EXPORT(sym, id, pt, name, params, args)                                               \
	CUresult sym params;                                                                       \
	CUresult sym params                                                                        \
	{                                                                                          \
		CUresult r;                                                                        \
		atomic_fetch_add(&mock_calls[id][pt], 1);                                          \
		mock_cu_per_thread = pt;                                                           \
		r = mock_cu_##name args;                                                           \
		mock_cu_per_thread = 0;                                                            \
		return r;                                                                          \
	}
#define MOCK_V_NONE(name, params, args)
#define MOCK_V_PTDS(name, params, args) MOCK_EXPORT(name##_ptds, MCU_##name, 1, name, params, args)
#define MOCK_V_PTSZ(name, params, args) MOCK_EXPORT(name##_ptsz, MCU_##name, 1, name, params, args)
#define CU_HOOK(PT, name, proc, since, kind, params, args, stream)                                 \
	MOCK_EXPORT(name, MCU_##name, 0, name, params, args)                                       \
	MOCK_V_##PT(name, params, args)
#include "cuda_hooks.def"
#undef CU_HOOK

struct mock_cu_hook {
	const char *name[2];
	const char *proc;
	int since;
	void *fn[2];
};
#define MOCK_N_NONE(name) NULL
#define MOCK_N_PTDS(name) #name "_ptds"
#define MOCK_N_PTSZ(name) #name "_ptsz"
#define MOCK_F_NONE(name) NULL
#define MOCK_F_PTDS(name) (void *)name##_ptds
#define MOCK_F_PTSZ(name) (void *)name##_ptsz
static const struct mock_cu_hook mock_hooks[MCU_COUNT] = {
#define CU_HOOK(PT, name, proc, since, kind, params, args, stream)                                 \
	{{#name, MOCK_N_##PT(name)}, #proc, since, {(void *)name, MOCK_F_##PT(name)}},
#include "cuda_hooks.def"
#undef CU_HOOK
};

unsigned long mock_cuda_calls(const char *name)
{
	int i;

	for (i = 0; i < MCU_COUNT; i++) {
		if (strcmp(name, mock_hooks[i].name[0]) == 0)
			return atomic_load(&mock_calls[i][0]);
		if (mock_hooks[i].name[1] && strcmp(name, mock_hooks[i].name[1]) == 0)
			return atomic_load(&mock_calls[i][1]);
	}
	return 0;
}

/* cuGetProcAddress for hooked names: the version picks the ABI, flags bit 1
 * the per-thread variant, as the real driver does. */
void *mock_cuda_proc(const char *symbol, int ver, unsigned long long flags)
{
	int i, best = -1;

	for (i = 0; i < MCU_COUNT; i++)
		if (mock_hooks[i].since <= ver && strcmp(symbol, mock_hooks[i].proc) == 0 &&
		    (best < 0 || mock_hooks[i].since > mock_hooks[best].since))
			best = i;
	if (best < 0)
		return NULL;
	if ((flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) && mock_hooks[best].fn[1])
		return mock_hooks[best].fn[1];
	return mock_hooks[best].fn[0];
}
