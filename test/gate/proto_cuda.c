/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * proto_cuda.c - check cuda_hooks.def against <cuda.h> (HAVE_CUDA_H):
 *  - at compile time, each hook's parameter list (with cuda.h's types) is
 *    the type of cuda.h's declaration of the function its "proc" name
 *    maps to;
 *  - at run time, that cuda.h maps "proc" to the hook's exported "name"
 *    (cuMemcpyHtoD -> cuMemcpyHtoD_v2).
 * Built twice: as is, and with CUDA_API_PER_THREAD_DEFAULT_STREAM, where
 * cuda.h maps proc to the _ptds/_ptsz variant: that checks the PT column.
 * The layout of CUlaunchConfig, which the gate reads, is checked too.
 */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cuda.h>
#include <cudaTypedefs.h>

#define XSTR(x) STR(x)
#define STR(x) #x
#define SAME(a, b) __builtin_types_compatible_p(a, b)

#ifdef CUDA_API_PER_THREAD_DEFAULT_STREAM
#define MODE "per-thread"
#define SUFFIX_NONE ""
#define SUFFIX_PTDS "_ptds"
#define SUFFIX_PTSZ "_ptsz"
#else
#define MODE "legacy-stream"
#define SUFFIX_NONE ""
#define SUFFIX_PTDS ""
#define SUFFIX_PTSZ ""
#endif

#define CU_HOOK(PT, name, proc, since, kind, params, args, stream)                                 \
	_Static_assert(SAME(__typeof__(&proc), CUresult(CUDAAPI *) params),                        \
	               #name ": parameter list differs from cuda.h");
/* cudaTypedefs.h declares these older ABIs for NVIDIA's own build only
 * (__CUDA_API_VERSION_INTERNAL, which also changes cuda.h's names): the same
 * types, spelled out from that block. */
typedef CUresult(CUDAAPI *PFN_cuDevicePrimaryCtxReset_v7000)(CUdevice_v1 dev);
typedef CUresult(CUDAAPI *PFN_cuDevicePrimaryCtxRelease_v7000)(CUdevice_v1 dev);
typedef CUresult(CUDAAPI *PFN_cuStreamBeginCapture_v10000)(CUstream hStream);
/* an older ABI: cudaTypedefs.h's type of that version */
#define CU_HOOK_OLD(PT, name, proc, since, kind, params, args, stream)                             \
	_Static_assert(SAME(PFN_##proc##_v##since, CUresult(CUDAAPI *) params),                    \
	               #name ": parameter list differs from cudaTypedefs.h");
#include "cuda_hooks.def"
#undef CU_HOOK
#undef CU_HOOK_OLD

struct pair {
	const char *cuda_h, *gate;
};
static const struct pair names[] = {
#define CU_HOOK(PT, name, proc, since, kind, params, args, stream) {XSTR(proc), #name SUFFIX_##PT},
#define CU_HOOK_OLD(PT, name, proc, since, kind, params, args, stream) /* cuda.h maps proc on */
#include "cuda_hooks.def"
#undef CU_HOOK
#undef CU_HOOK_OLD
};

/* The gate's cuGetProcAddress_v2 wrapper and its CUlaunchConfig mirror. */
_Static_assert(SAME(__typeof__(&cuGetProcAddress_v2),
                    CUresult(CUDAAPI *)(const char *, void **, int, cuuint64_t,
                                        CUdriverProcAddressQueryResult *)),
               "cuGetProcAddress_v2 changed");
_Static_assert(offsetof(CUlaunchConfig, hStream) == 32, "CUlaunchConfig.hStream moved");
_Static_assert(sizeof(CUdeviceptr) == 8, "CUdeviceptr is not 64-bit");
/* passed by value to cuMemPrefetchAsync_v2: gate_types.h's stand-in is {int, int} */
_Static_assert(sizeof(CUmemLocation) == 8 && offsetof(CUmemLocation, id) == 4,
               "CUmemLocation layout changed");
_Static_assert(CU_STREAM_CAPTURE_MODE_RELAXED == 2, "relaxed capture mode changed");
_Static_assert(CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM == 2, "per-thread flag changed");

int main(void)
{
	unsigned i, n = sizeof(names) / sizeof(names[0]);
	int bad = 0;

	printf("1..2\nok 1 - %u hooked prototypes match cuda.h (CUDA %d, %s)\n", n, CUDA_VERSION,
	       MODE);
	for (i = 0; i < n; i++)
		if (strcmp(names[i].cuda_h, names[i].gate) != 0) {
			printf("# cuda.h maps to %s, the gate hooks %s\n", names[i].cuda_h,
			       names[i].gate);
			bad++;
		}
	printf("%sok 2 - cuda.h's %s names are the gate's\n", bad ? "not " : "", MODE);
	return bad != 0;
}
