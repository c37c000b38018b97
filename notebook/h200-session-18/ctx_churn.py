#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""ctx_churn.py - a sibling that only makes and ends CUDA contexts (a stand-in
for commands starting and exiting beside a measurement; session 18, call 3).

  ctx_churn.py once MODULE     one process: cuInit, the primary context, the
                               module loaded, then exit (the driver tears the
                               context down at the exit); no kernel
  ctx_churn.py hold MODULE S   the same, then sleep S seconds (an idle context)

MODULE "-" loads none (the mock driver has no cuModuleLoad).

Driver API through ctypes; prints nothing unless a call fails."""
import ctypes
import sys
import time

cu = ctypes.CDLL("libcuda.so.1")
dev, ctx, mod = ctypes.c_int(), ctypes.c_void_p(), ctypes.c_void_p()
steps = [("cuInit", lambda: cu.cuInit(0)),
         ("cuDeviceGet", lambda: cu.cuDeviceGet(ctypes.byref(dev), 0)),
         ("cuDevicePrimaryCtxRetain", lambda: cu.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev)),
         ("cuCtxSetCurrent", lambda: cu.cuCtxSetCurrent(ctx))]
if sys.argv[2] != "-":  # MODULE "-": no module (the mock driver has no cuModuleLoad)
    steps.append(("cuModuleLoad", lambda: cu.cuModuleLoad(ctypes.byref(mod), sys.argv[2].encode())))
for name, call in steps:
    rc = call()
    if rc:
        print("ctx_churn: %s failed: %d" % (name, rc), file=sys.stderr)
        sys.exit(1)
if sys.argv[1] == "hold":
    time.sleep(float(sys.argv[3]))
