# SPDX-License-Identifier: BSD-3-Clause
# hookcov_headers.sh - sourced by hookcov.sh: the functions of a driver
# header that take a stream or launch/copy/set work, one name a line.
#
#	header_functions cuda FILE   cuda.h: CUresult CUDAAPI name(... CUstream ...)
#	header_functions hip FILE    hip_runtime_api.h: hipError_t name(... hipStream_t ...),
#	                             and the per-thread stream variants (_spt) of
#	                             amd_detail/amd_hip_runtime_pt_api.h and the
#	                             extensions of hip_ext.h beside it
#
# Also every name that launches, copies or sets memory without a stream
# (cuLaunch*, cuMemcpy*, cuMemset*, cuGraphLaunch; hip likewise).  Names
# declared more than once (per-thread and legacy sections) are listed once;
# a _ptsz/_ptds suffix is kept (the check strips it).
header_functions() {
	case $1 in
	cuda) start='CUresult[ \t]+CUDAAPI[ \t]+' stream='CUstream' work='^cu(Launch|Memcpy|Memset|GraphLaunch)' ;;
	hip) start='hipError_t[ \t]+' stream='hipStream_t' work='^hip(Launch|Memcpy|Memset|GraphLaunch|ModuleLaunch|ExtLaunch|DrvMemcpy)' ;;
	esac
	if [ "$1" = hip ]; then
		d=$(dirname "$2")
		for f in "$d/amd_detail/amd_hip_runtime_pt_api.h" "$d/hip_ext.h"; do
			[ -r "$f" ] && set -- "$@" "$f"
		done
	fi
	shift
	awk -v start="$start" -v stream="$stream" -v work="$work" '
	function flush(   n) {
		if (!match(buf, start "[A-Za-z0-9_]+[ \t]*\\(")) return
		n = substr(buf, RSTART, RLENGTH)
		sub(start, "", n); sub(/[ \t]*\($/, "", n)
		if (buf ~ (stream "[ \t,)]") || n ~ work) print n
	}
	!inp && $0 ~ ("^[ \t]*(extern[ \t]+\"C\"[ \t]+)?(__CUDA_DEPRECATED[ \t]+|DEPRECATED\\([^)]*\\)[ \t]+)?" start "[A-Za-z0-9_]+[ \t]*\\(") {
		buf = $0; inp = 1
		if (buf ~ /;/) { flush(); inp = 0 }
		next
	}
	inp { buf = buf " " $0; if ($0 ~ /[;{]/) { flush(); inp = 0 } }
	' "$@" | sort -u
}

# uncovered API FILE HOOKED EXEMPT: the header's functions that are neither
# hooked (a name or proc of the .def, suffix _ptsz/_ptds stripped) nor
# exempt (first word of a non-comment line of EXEMPT).
uncovered() {
	header_functions "$1" "$2" | sed 's/_pt[sd][zs]$//' | sort -u | while read -r f; do
		grep -qx "$f" "$3" && continue
		grep -q "^$f[[:space:]]" "$4" && continue
		echo "$f"
	done
}
