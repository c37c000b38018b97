/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gate_cuda.h - the CUDA backend's files, from the ground up:
 *
 * gate_cuda_driver.c  the driver's handle, the unhooked functions the gate
 *                     calls itself, the capture check, the event query
 * gate_cuda_drain.c   the contexts and streams the process submitted to,
 *                     captures, the drain, the region warm-up
 * gate_cuda.c         the wrappers (cuda_hooks.def), cuGetProcAddress, the
 *                     bounded queue's event calls, the backend
 */
#ifndef KREX_GATE_CUDA_H
#define KREX_GATE_CUDA_H

#include <stdint.h>

#include "gate_types.h"

/* ---- gate_cuda_driver.c ---------------------------------------------------- */

/* libcuda's handle (dlopen, once), or NULL. */
void *gate_cuda_handle(void);

typedef CUresult (*ctx_get_fn)(CUcontext *);
typedef CUresult (*ctx_push_fn)(CUcontext);
typedef CUresult (*ev_create_fn)(CUevent *, unsigned int);
typedef CUresult (*ev_record_fn)(CUevent, CUstream);
typedef CUresult (*ev_sync_fn)(CUevent);
typedef CUresult (*ev_elapsed_fn)(float *, CUevent, CUevent);
typedef CUresult (*is_capturing_fn)(CUstream, int *);
typedef CUresult (*stream_query_fn)(CUstream);
typedef CUresult (*exchange_mode_fn)(CUstreamCaptureMode *);
typedef CUresult (*stream_create_fn)(CUstream *, unsigned int);
typedef CUresult (*mod_load_fn)(CUmodule *, const void *);
typedef CUresult (*mod_fn_fn)(CUfunction *, CUmodule, const char *);
typedef CUresult (*ctx_dev_fn)(CUdevice *);
typedef CUresult (*ctx_dev2_fn)(CUdevice *, CUcontext);
typedef CUresult (*dev_attr_fn)(int *, int, CUdevice);
typedef CUresult (*prim_state_fn)(CUdevice, unsigned int *, int *);
typedef CUresult (*from_green_fn)(CUcontext *, CUgreenCtx);
typedef CUresult (*stream_green_fn)(CUstream, CUgreenCtx *);
typedef CUresult (*stream_ctx_fn)(CUstream, CUcontext *);
typedef CUresult (*launch_fn)(CUfunction, unsigned int, unsigned int, unsigned int, unsigned int,
                              unsigned int, unsigned int, unsigned int, CUstream, void **, void **);
/* The unhooked driver functions the gate calls itself, each resolved from
 * the handle once: gate_cuCtxGetCurrent() ... (NULL when missing). */
#define CU_SYMS(X)                                                                                 \
	X(ctx_get_fn, cuCtxGetCurrent)                                                             \
	X(ctx_push_fn, cuCtxPushCurrent_v2)                                                        \
	X(ctx_get_fn, cuCtxPopCurrent_v2)                                                          \
	X(ev_create_fn, cuEventCreate)                                                             \
	X(ev_record_fn, cuEventRecord)                                                             \
	X(ev_sync_fn, cuEventQuery)                                                                \
	X(ev_elapsed_fn, cuEventElapsedTime_v2)                                                    \
	X(ev_elapsed_fn, cuEventElapsedTime)                                                       \
	X(is_capturing_fn, cuStreamIsCapturing)                                                    \
	X(stream_query_fn, cuStreamQuery)                                                          \
	X(exchange_mode_fn, cuThreadExchangeStreamCaptureMode)                                     \
	X(stream_create_fn, cuStreamCreate)                                                        \
	X(mod_load_fn, cuModuleLoadData)                                                           \
	X(mod_fn_fn, cuModuleGetFunction)                                                          \
	X(ctx_dev_fn, cuCtxGetDevice)                                                              \
	X(ctx_dev2_fn, cuCtxGetDevice_v2)                                                          \
	X(dev_attr_fn, cuDeviceGetAttribute)                                                       \
	X(prim_state_fn, cuDevicePrimaryCtxGetState)                                               \
	X(from_green_fn, cuCtxFromGreenCtx)                                                        \
	X(stream_green_fn, cuStreamGetGreenCtx)                                                    \
	X(stream_ctx_fn, cuStreamGetCtx)                                                           \
	X(launch_fn, cuLaunchKernel)
#define CU_SYM_DECL(type, name) type gate_##name(void);
CU_SYMS(CU_SYM_DECL)
#undef CU_SYM_DECL

/* 1 when stream s (or CU_STREAM_LEGACY) may not be recorded on or waited
 * for: capturing, or for the legacy stream a blocking stream capturing, or
 * its state unreadable with a driver that has the call.  Seen with
 * PyTorch's CUDA graphs on the H200: an event wait on a capturing stream
 * invalidates the capture. */
int gate_cuda_capturing(CUstream s);

/* cuEventQuery(ev) in relaxed capture mode: 1 done, 0 not yet, < 0 error. */
int gate_cuda_query(void *ev);
/* Set once a driver call of the gate's answered CUDA_ERROR_DEINITIALIZED (the
 * process is in its exit): the drain then answers KREX_DRAIN_EXITING. */
extern _Atomic int gate_cuda_deinit_seen;

/* ---- gate_cuda_drain.c ----------------------------------------------------- */

/* A submission to stream s by this thread, joined: the context it went
 * to (tracked for the drain), or NULL. */
CUcontext gate_cuda_track(CUstream s);

/* 1 when stream s (a CUstream of the current context) has work in flight,
 * not being captured (a drain's first round lets submissions there
 * through: gate_enter()'s busy). */
int gate_cuda_stream_busy(void *s);

/* A kernel launch to s in c: the warm-up after a grant runs there too. */
void gate_cuda_note_launch(CUcontext c, CUstream s);

/* The cuStreamBeginCapture wrapper, around the driver's call. */
void gate_cuda_capture_before(CUstream s);
void gate_cuda_capture_after(void);

/* The cuStreamDestroy wrapper, before the driver's call. */
void gate_cuda_destroy_before(CUstream s);
/* Forget what the gate made or tracked in context c, or with c NULL every
 * context of device dev (every context when dev < 0). */
void gate_cuda_context_end(CUcontext c, int dev);
/* Before a primary context's release (keep: the contexts the process made
 * itself, which outlive it): mark the streams tracked under such a context
 * that were made in another one (cuStreamGetCtx), or whose context cannot
 * be read; keep NULL clears the marks. */
void gate_cuda_release_scan(int (*keep)(CUcontext));
/* After the primary context of dev ended at its last release: forget every
 * context of dev but those keep() says the process made, and the marked
 * streams (gate_cuda_release_scan()). */
void gate_cuda_primary_end(int dev, int (*keep)(CUcontext));
/* A green context g ends (c: its CUcontext, or NULL): forget the streams
 * made in it (cuStreamGetGreenCtx), whichever context was current at their
 * submissions, and c. */
void gate_cuda_green_end(CUgreenCtx g, CUcontext c);
/* Context c's device, -1 unknown; never makes c current (a green context
 * may be current to one thread only). */
int gate_cuda_ctx_dev(CUcontext c);
/* cuda_hooks.def's stream column of a GK_CONTEXT_END call: notes the
 * context (or, NULL, the device) it ends; returns no stream. */
CUstream gate_cuda_ending(CUcontext c, int dev);
/* The same for a primary context's release (cuDevicePrimaryCtxRelease):
 * the gate forgets after the call, and only when it was the last. */
CUstream gate_cuda_releasing(int dev);
/* The same for cuGreenCtxDestroy: forgets the green context's streams and
 * context before the call, and, as a release of its device's primary
 * context, that device's contexts after it when it was the last. */
CUstream gate_cuda_ending_green(CUgreenCtx g);

/* The backend's drain, warm-up and fork (struct gate_backend, gate.h). */
int gate_cuda_drain(uint64_t deadline);
int gate_cuda_warm(void);
void gate_cuda_forget(void);

#endif /* KREX_GATE_CUDA_H */
