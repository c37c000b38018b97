/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mock_hip_stubs.c - TEST DOUBLE: every symbol of the gate's hip_hooks.def
 * exported by the fake libamdhip64.so, counting the calls that reach it;
 * each calls mock_hip_<name>(), a no-op unless mock_hip.c implements it.
 */
#include "config.h"

#include <stdatomic.h>
#include <string.h>

#include "gate_types.h"
#include "mock_hip.h"

enum mock_hip_id {
#define HIP_HOOK(name, kind, params, args, stream) MHIP_##name,
#include "hip_hooks.def"
#undef HIP_HOOK
	MHIP_COUNT
};

static _Atomic unsigned long mock_calls[MHIP_COUNT];
static const char *const mock_names[MHIP_COUNT] = {
#define HIP_HOOK(name, kind, params, args, stream) #name,
#include "hip_hooks.def"
#undef HIP_HOOK
};

#define HIP_HOOK(name, kind, params, args, stream)                                                 \
	__attribute__((weak)) hipError_t mock_hip_##name params;                                   \
	hipError_t mock_hip_##name params                                                          \
	{                                                                                          \
		return hipSuccess;                                                                 \
	}                                                                                          \
	hipError_t name params;                                                                    \
	hipError_t name params                                                                     \
	{                                                                                          \
		atomic_fetch_add(&mock_calls[MHIP_##name], 1);                                     \
		return mock_hip_##name args;                                                       \
	}
#include "hip_hooks.def"
#undef HIP_HOOK

unsigned long mock_hip_calls(const char *name)
{
	int i;

	for (i = 0; i < MHIP_COUNT; i++)
		if (strcmp(name, mock_names[i]) == 0)
			return atomic_load(&mock_calls[i]);
	return 0;
}
