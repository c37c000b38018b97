#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# The Python binding (python/krex) against the built libkrexregion, without
# krexd: error paths, unprotected regions, the certificate layout, and
# do_bench's CUDA-driver timer on the mock libcuda.  test_krex.py prints the TAP.
. "$top_srcdir/test/lib.sh"

command -v python3 >/dev/null || skip_all "python3 not found"
lib=$top_builddir/libregion/.libs/libkrexregion.so
[ -e "$lib" ] || skip_all "libkrexregion not built yet"
export KREX_LIBRARY=$lib PYTHONPATH=$top_srcdir/python PYTHONDONTWRITEBYTECODE=1
# do_bench's CUDA-event loop runs on the mock driver (a simulated GPU of our own).
mock=$top_builddir/test/mock/.libs
[ -e "$mock/libcuda.so.1" ] || skip_all "mock libcuda.so.1 not built yet"
export LD_LIBRARY_PATH=$mock${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export KREX_MOCK_GPU=/krex-pybind-$$
trap 'rm -f "/dev/shm$KREX_MOCK_GPU"' EXIT
timeout -k 5 120 python3 "$top_srcdir/test/python/test_krex.py"
