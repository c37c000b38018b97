/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gate_types.h - opaque stand-ins for the CUDA driver and HIP types that
 * cuda_hooks.def and hip_hooks.def name.
 *
 * The gate forwards arguments untouched, so it needs only their size and
 * calling convention, never cuda.h or hip_runtime_api.h: it builds and loads
 * on machines without a GPU toolkit.  test/gate/proto_cuda.c and
 * proto_hip.c check every hooked prototype against the real headers where
 * they exist.  Handles are pointers to incomplete structs (as in cuda.h);
 * enums (CUresult, hipError_t, hipMemcpyKind) are int-sized.
 */
#ifndef KREX_GATE_TYPES_H
#define KREX_GATE_TYPES_H

#include <stddef.h>
#include <stdint.h>

/* ---- CUDA driver API ------------------------------------------------------ */
typedef int CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef uint32_t cuuint32_t;
typedef uint64_t cuuint64_t;
typedef struct CUctx_st *CUcontext;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef struct CUstream_st *CUstream;
typedef struct CUevent_st *CUevent;
typedef struct CUgraph_st *CUgraph;
typedef struct CUgraphExec_st *CUgraphExec;
typedef struct CUarray_st *CUarray;
typedef void (*CUhostFn)(void *userData);
typedef struct CUDA_MEMCPY2D_st CUDA_MEMCPY2D;
typedef struct CUDA_MEMCPY3D_st CUDA_MEMCPY3D;
typedef struct CUDA_MEMCPY3D_PEER_st CUDA_MEMCPY3D_PEER;
typedef struct CUDA_LAUNCH_PARAMS_st CUDA_LAUNCH_PARAMS;
typedef union CUstreamBatchMemOpParams_union CUstreamBatchMemOpParams;
typedef struct CUlaunchAttribute_st CUlaunchAttribute;
typedef int CUdriverProcAddressQueryResult;
typedef int CUstreamCaptureMode;
typedef struct CUgraphNode_st *CUgraphNode;
typedef struct CUgraphEdgeData_st CUgraphEdgeData;
typedef struct CUextSemaphore_st *CUexternalSemaphore;
typedef struct CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS_st CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS;
typedef struct CUDA_EXTERNAL_SEMAPHORE_WAIT_PARAMS_st CUDA_EXTERNAL_SEMAPHORE_WAIT_PARAMS;
typedef struct CUmemcpyAttributes_st CUmemcpyAttributes;
typedef struct CUDA_MEMCPY3D_BATCH_OP_st CUDA_MEMCPY3D_BATCH_OP;
typedef struct CUmemDecompressParams_st CUmemDecompressParams;
typedef struct CUctxCreateParams_st CUctxCreateParams;
typedef struct CUexecAffinityParam_st CUexecAffinityParam;
typedef struct CUgreenCtx_st *CUgreenCtx;
typedef struct CUdevResourceDesc_st *CUdevResourceDesc;
/* Passed by value to cuMemPrefetchAsync_v2: layout checked by proto_cuda.c. */
typedef struct CUmemLocation_st {
	int type;
	int id;
} CUmemLocation;

/* The gate reads hStream out of it (queue cap); layout checked against
 * cuda.h by test/gate/proto_cuda.c. */
typedef struct CUlaunchConfig_st {
	unsigned int gridDimX, gridDimY, gridDimZ;
	unsigned int blockDimX, blockDimY, blockDimZ;
	unsigned int sharedMemBytes;
	CUstream hStream;
	CUlaunchAttribute *attrs;
	unsigned int numAttrs;
} CUlaunchConfig;

#define CUDA_SUCCESS 0
#define CUDA_ERROR_NOT_INITIALIZED 3
#define CUDA_ERROR_DEINITIALIZED 4
#define CUDA_ERROR_NOT_READY 600
#define CU_STREAM_LEGACY ((CUstream)0x1)
#define CU_STREAM_CAPTURE_MODE_RELAXED 2
#define CU_EVENT_DEFAULT 0x0
#define CU_EVENT_DISABLE_TIMING 0x2
#define CU_STREAM_NON_BLOCKING 0x1
/* cuGetProcAddress flags: bit 1 asks for the per-thread-default-stream
 * variant (CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM). */
#define CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM 0x2
/* The per-thread default stream handle (cuda.h CU_STREAM_PER_THREAD). */
#define CU_STREAM_PER_THREAD ((CUstream)0x2)

/* ---- HIP ------------------------------------------------------------------ */
typedef int hipError_t;
typedef int hipMemcpyKind;
typedef void *hipDeviceptr_t;
typedef struct ihipStream_t *hipStream_t;
typedef struct ihipCtx_t *hipCtx_t;
typedef int hipDevice_t;
typedef struct ihipEvent_t *hipEvent_t;
typedef struct ihipModuleSymbol_t *hipFunction_t;
typedef struct hipGraphExec *hipGraphExec_t;
typedef struct ihipGraph *hipGraph_t;
typedef int hipStreamCaptureMode;
typedef void (*hipHostFn_t)(void *userData);
struct hipMemcpy3DParms;
typedef struct hipArray hipArray;
typedef const struct hipArray *hipArray_const_t;
typedef struct hip_Memcpy2D hip_Memcpy2D;
typedef struct HIP_MEMCPY3D HIP_MEMCPY3D;
typedef void *hipExternalSemaphore_t;
typedef struct hipExternalSemaphoreSignalParams_st hipExternalSemaphoreSignalParams;
typedef struct hipExternalSemaphoreWaitParams_st hipExternalSemaphoreWaitParams;
typedef struct dim3 {
	uint32_t x, y, z;
} dim3;
/* Passed by value to hipMemset3D(Async): layouts checked by proto_hip.c. */
typedef struct hipPitchedPtr {
	void *ptr;
	size_t pitch, xsize, ysize;
} hipPitchedPtr;
typedef struct hipExtent {
	size_t width, height, depth;
} hipExtent;
/* A multi-device launch's entry: the gate reads each one's stream; layout
 * checked by proto_hip.c. */
typedef struct hipLaunchParams_t {
	void *func;
	dim3 gridDim, blockDim;
	void **args;
	size_t sharedMem;
	hipStream_t stream;
} hipLaunchParams;

/* ROCm 6's (not in HIP 5.2): hipModuleLaunchCooperativeKernelMultiDevice's
 * entry, whose stream the gate reads (hip_hooks.def HIP_HOOK_HAND: from
 * ROCm 6's hip_runtime_api.h, not checked by proto_hip.c), and opaque types
 * of ROCm 6's hooked calls. */
typedef struct hipFunctionLaunchParams_t {
	hipFunction_t function;
	unsigned int gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ;
	unsigned int sharedMemBytes;
	hipStream_t hStream;
	void **kernelParams;
} hipFunctionLaunchParams;
typedef union hipStreamBatchMemOpParams_union hipStreamBatchMemOpParams;
typedef struct hipGraphNode *hipGraphNode_t;
typedef struct hipGraphEdgeData hipGraphEdgeData;

#define hipSuccess 0
#define hipErrorNotInitialized 3
#define hipErrorDeinitialized 4
#define hipErrorNotReady 600
#define hipEventDefault 0x0
#define hipEventDisableTiming 0x2
/* The per-thread default stream handle (hip_runtime_api.h hipStreamPerThread). */
#define hipStreamPerThread ((hipStream_t)2)

#endif /* KREX_GATE_TYPES_H */
