#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# The Python binding (contrib/python/krex.py) against the built libkrexregion,
# without krexd: error paths, unprotected regions, the certificate layout.
# contrib/python/test_krex.py prints the TAP; this finds the library.
. "$top_srcdir/test/lib.sh"

command -v python3 >/dev/null || skip_all "python3 not found"
lib=
for f in "$top_builddir"/libregion/.libs/libkrexregion.so "$top_builddir"/libregion/libkrexregion.so; do
	[ -e "$f" ] && lib=$f && break
done
[ -n "$lib" ] || skip_all "libkrexregion not built yet"
export KREX_LIBREGION=$lib PYTHONDONTWRITEBYTECODE=1
# do_bench's CUDA-event loop runs on the mock driver when it is built (and
# is skipped without any libcuda); a simulated GPU of our own.
for d in "$top_builddir/test/mock/.libs" "$top_builddir/test/mock"; do
	if [ -e "$d/libcuda.so.1" ]; then
		export LD_LIBRARY_PATH=$d${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
		export KREX_MOCK_GPU=/krex-pybind-$$
		trap 'rm -f "/dev/shm$KREX_MOCK_GPU"' EXIT
		break
	fi
done
timeout -k 5 120 python3 "$top_srcdir/contrib/python/test_krex.py"
