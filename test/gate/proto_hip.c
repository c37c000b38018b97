/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * proto_hip.c - compile-time check of hip_hooks.def against the HIP
 * headers (Debian libamdhip64-dev, HAVE_ROCM_H): each hook's parameter
 * list is the type of the header's declaration, and the layout of the
 * structs the gate passes by value or reads is gate_types.h's.
 */
#include <stddef.h>
#include <stdio.h>

#include <hip/hip_runtime_api.h>

#define HIP_HOOK(name, kind, params, args, stream)                                                 \
	_Static_assert(__builtin_types_compatible_p(__typeof__(&name), hipError_t(*) params),      \
	               #name ": parameter list differs from hip_runtime_api.h");
/* ROCm 6's own (hip_hooks.def): not declared by HIP 5.2's headers */
#define HIP_HOOK_HAND(name, kind, params, args, stream)
#define HIP_HOOK_HAND_DEV(name, kind, params, args, stream, device)
#include "hip_hooks.def"
#undef HIP_HOOK
#undef HIP_HOOK_HAND
#undef HIP_HOOK_HAND_DEV

_Static_assert(sizeof(dim3) == 12, "dim3 is not three uint32_t");
/* passed by value to hipMemset3D(Async): gate_types.h's stand-ins have these layouts */
_Static_assert(sizeof(hipPitchedPtr) == 4 * sizeof(size_t) &&
                       offsetof(hipPitchedPtr, pitch) == sizeof(void *) &&
                       offsetof(hipPitchedPtr, ysize) == 3 * sizeof(size_t),
               "hipPitchedPtr is not {ptr, pitch, xsize, ysize}");
_Static_assert(sizeof(hipExtent) == 3 * sizeof(size_t) &&
                       offsetof(hipExtent, depth) == 2 * sizeof(size_t),
               "hipExtent is not {width, height, depth}");
/* the gate reads each entry's stream of a multi-device launch (gate_types.h) */
_Static_assert(offsetof(hipLaunchParams, stream) == 48 && sizeof(hipLaunchParams) == 56,
               "hipLaunchParams layout changed");

int main(void)
{
	printf("1..1\nok 1 - every hooked HIP prototype matches hip_runtime_api.h (HIP %d.%d)\n",
	       HIP_VERSION_MAJOR, HIP_VERSION_MINOR);
	return 0;
}
