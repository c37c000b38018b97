#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# hook-gaps.sh cuda|hip HEADER - the functions of a driver header that take
# a stream or launch, copy or set memory and that the gate neither hooks
# (gate/cuda_hooks.def, gate/hip_hooks.def) nor exempts with a reason
# (gate/hook_exempt.txt), one a line: what to look at when a new CUDA or
# ROCm comes out.  HEADER: cuda.h, or hip/hip_runtime_api.h (with
# amd_detail/amd_hip_runtime_pt_api.h and hip_ext.h beside it, when there).
# test/gate/hookcov.sh runs the same check on the headers configure found.
# Exit 0 when none is left, 1 when some are, 2 on a usage error.
top=$(cd "$(dirname "$0")/.." && pwd)
[ $# = 2 ] && [ -r "$2" ] || {
	echo "usage: hook-gaps.sh cuda|hip HEADER (a readable cuda.h or hip_runtime_api.h)" >&2
	exit 2
}
. "$top/test/gate/hookcov_headers.sh"
hooked=$(mktemp) || exit 2
trap 'rm -f "$hooked"' EXIT
case $1 in
cuda) sed -n 's/^CU_HOOK([A-Z]*, *\([A-Za-z0-9_]*\), *\([A-Za-z0-9_]*\),.*/\1 \2/p' \
	"$top/gate/cuda_hooks.def" | tr ' ' '\n' | sort -u >"$hooked" ;;
hip) sed -n 's/^HIP_HOOK[A-Z0-9_]*(\([A-Za-z0-9_]*\),.*/\1/p' "$top/gate/hip_hooks.def" |
	sort -u >"$hooked" ;;
*) echo "hook-gaps.sh: API '$1' is neither cuda nor hip" >&2; exit 2 ;;
esac
n=$(header_functions "$1" "$2" | wc -l)
gaps=$(uncovered "$1" "$2" "$hooked" "$top/gate/hook_exempt.txt")
echo "$1: $n stream/work functions in $2, $(printf '%s' "$gaps" | grep -c .) neither hooked nor exempt"
[ -z "$gaps" ] && exit 0
printf '%s\n' "$gaps"
exit 1
