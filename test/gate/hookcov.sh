#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Every hooked symbol (and per-thread variant) is reached through direct
# binding, dlsym, dlvsym and cuGetProcAddress (HIP: direct, dlsym, dlvsym): the gate's
# wrapper is entered on each path (KREX_GATE_COUNTS) and every call reaches
# the mock driver exactly once (no call lost, none doubled).
# And nothing is missed: every function of cuda.h (CUDA 13 where configure
# found it) and of hip_runtime_api.h that takes a stream or launches, copies
# or sets memory is hooked or listed in gate/hook_exempt.txt with
# a reason.  And every driver ABI the CUDA runtime (libcudart.so beside
# cuda.h) asks cuGetProcAddress for by a hooked name is hooked
# (scripts/cudart-procs.py): cudart 13's cudaDeviceReset asks for CUDA
# 7.0's cuDevicePrimaryCtxReset.
. "$top_srcdir/test/lib.sh"
. "$top_srcdir/test/gate/hookcov_headers.sh"
EXEMPT=$top_srcdir/gate/hook_exempt.txt

# find_header FLAGS NAME: NAME in the -I directories of FLAGS.
find_header() {
	for f in $1; do
		case $f in -I*) [ -r "${f#-I}/$2" ] && { echo "${f#-I}/$2"; return 0; } ;; esac
	done
	return 1
}

# coverage API HEADER DEF SED: one TAP line.
coverage() {
	sed -n "$4" "$3" | tr ' ' '\n' | sort -u >"$T/hooked-$1"
	uncovered "$1" "$2" "$T/hooked-$1" "$EXEMPT" >"$T/missing-$1"
	n=$(header_functions "$1" "$2" | wc -l)
	sed 's/^/# not hooked and not exempt: /' "$T/missing-$1"
	ok "$1: all $n stream/work functions of $2 hooked or exempt" test ! -s "$T/missing-$1"
	ok "$1: scripts/hook-gaps.sh says the same (exit 0)" \
		sh -c 'sh "$1" "$2" "$3" >/dev/null' - "$top_srcdir/scripts/hook-gaps.sh" "$1" "$2"
}

G=$top_builddir/gate/.libs/libkrexgate.so
[ -r "$G" ] || skip_all "libkrexgate.so not built"
T=$(mktemp -d) || exit 1
trap 'rm -rf "$T"' EXIT
export KREX_MOCK_GPU=/krex-hookcov-$$
LD_LIBRARY_PATH=$top_builddir/test/mock/.libs KREX_GATE_COUNTS=$T/counts LD_PRELOAD=$G \
	./hookcov >"$T/mock" 2>"$T/err"
rc=$?
rm -f /dev/shm/krex-hookcov-$$
n=$(grep -c '^mock ' "$T/mock")
plan $((n + 7))
ok "hookcov ran (rc $rc)" [ "$rc" = 0 ]
ok "every exempt entry has a reason" sh -c "! grep -v '^#' '$EXEMPT' | grep -v '^\$' | grep -qv '^[A-Za-z_0-9]*[[:space:]][[:space:]]*[^[:space:]]'"
if h=$(find_header "$CUDA_CPPFLAGS" cuda.h); then
	coverage cuda "$h" "$top_srcdir/gate/cuda_hooks.def" \
		's/^CU_HOOK([A-Z]*, *\([A-Za-z0-9_]*\), *\([A-Za-z0-9_]*\),.*/\1 \2/p'
else
	skip "cuda: every stream/work function hooked or exempt" "no cuda.h (configure --with-cuda)"
	skip "cuda: scripts/hook-gaps.sh says the same" "no cuda.h (configure --with-cuda)"
fi
cudart=
[ -n "${h:-}" ] && for d in lib64 lib; do
	[ -r "${h%/include/cuda.h}/$d/libcudart.so" ] && { cudart=${h%/include/cuda.h}/$d/libcudart.so; break; }
done
if [ -n "$cudart" ] && command -v objdump >/dev/null && command -v python3 >/dev/null; then
	python3 "$top_srcdir/scripts/cudart-procs.py" "$cudart" "$top_srcdir/gate/cuda_hooks.def" >"$T/cudart"
	rc=$?
	sed 's/^/# /' "$T/cudart"
	if [ "$rc" = 3 ]; then
		skip "cudart's cuGetProcAddress requests hooked" "$(head -1 "$T/cudart")"
	else
		ok "cudart: every ABI it asks cuGetProcAddress for by a hooked name is hooked" test "$rc" = 0
	fi
else
	skip "cudart's cuGetProcAddress requests hooked" "no libcudart.so beside cuda.h, objdump or python3"
fi
if h=$(find_header "$ROCM_CPPFLAGS" hip/hip_runtime_api.h); then
	coverage hip "$h" "$top_srcdir/gate/hip_hooks.def" 's/^HIP_HOOK[A-Z0-9_]*(\([A-Za-z0-9_]*\),.*/\1/p'
else
	skip "hip: every stream/work function hooked or exempt" "no hip_runtime_api.h (configure --with-rocm)"
	skip "hip: scripts/hook-gaps.sh says the same" "no hip_runtime_api.h (configure --with-rocm)"
fi
while read -r _ name calls; do
	case $name in hip* | _Z*hip*) want=3 ;; *) want=4 ;; esac
	gate=$(awk -v s="$name" '$2 == s { n += $3 } END { print n + 0 }' "$T/counts")
	ok "$name: gate saw $gate of $want, driver got $calls" \
		test "$gate" = "$want" -a "$calls" = "$want"
done <"$T/mock"
done_testing
