#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# run-gpu.sh - the gate on a real GPU, in one call (doc/gpu.md).
#
#	bash test/gpu/run-gpu.sh [BUILDDIR]        (from the source tree's root)
#
# BUILDDIR: a tree configured and built with CUDA (default $KREX_BUILDDIR,
# else the source tree; if neither has krexd, it builds: from .gpu/'s dist
# tarball with scripts/gpu-build.sh, else ./configure && make here).
# Writes logs, certificates and table.txt under $OUT (default ./gpu-out);
# prints the table last.  Without a GPU it prints a SKIP line and exits 0.
# Needs root for freezing.  Every step has a time limit; the whole is meant
# to stay under 10 minutes.  Reads GPU clocks, never sets them.
set -u
src=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT" && OUT=$(cd "$OUT" && pwd)
W=$OUT/work
mkdir -p "$W"
T0=$(date +%s)

# KREX_GPU_MOCK=1: a dry run of this script on the mock driver (no GPU, no
# runtime program, no torch), to check the script itself on a CPU machine.
MOCK=${KREX_GPU_MOCK:-0}
if [ "$MOCK" != 1 ] && { ! command -v nvidia-smi >/dev/null || ! nvidia-smi -L >/dev/null 2>&1; }; then
	echo "SKIP: no NVIDIA GPU here (nvidia-smi -L failed)"
	exit 0
fi
NVCC=$(command -v nvcc || { [ -x /usr/local/cuda/bin/nvcc ] && echo /usr/local/cuda/bin/nvcc; })
[ -n "$NVCC" ] || [ "$MOCK" = 1 ] || { echo "SKIP: no nvcc"; exit 0; }

# ---- build --------------------------------------------------------------------
. "$src/test/gpu/gpu-lib.sh"
gpu_build "${1:-${KREX_BUILDDIR:-$src}}" "$W" || { echo "FAIL: no build (see $W/*.log)"; exit 1; }
echo "build: $B"
WL=$B/test/workloads
KREXD=$B/krexd/krexd
KREX=$B/krex/krex
export KREX_GATE_LIB=$B/gate/.libs/libkrexgate.so
G=$KREX_GATE_LIB
RT=$W/rt_prog
TORCH="python3 $src/test/workloads/torch_loop.py"
python3 -c 'import torch' 2>/dev/null || TORCH=
if [ "$MOCK" = 1 ]; then
	export LD_LIBRARY_PATH=$B/test/mock/.libs KREX_MOCK_GPU=/krex-gpu-dry-$$ KREX_GPUS=g0
	KOPT="-o gpus=g0"
	RT= TORCH=
	nvidia-smi() { echo "mock"; }
else
	KOPT=
fi
[ "$MOCK" = 1 ] || [ -f "$WL/fma.fatbin" ] || "$NVCC" -fatbin -gencode arch=compute_90,code=sm_90 \
	-gencode arch=compute_90,code=compute_90 -o "$WL/fma.fatbin" "$src/test/workloads/fma.cu"
[ "$MOCK" = 1 ] || export KREX_WL_MODULE=$WL/fma.fatbin
[ -z "$RT" ] || "$NVCC" -O2 -o "$RT" "$src/test/gpu/rt_prog.cu" >"$W/nvcc.log" 2>&1 ||
	{ echo "FAIL: nvcc rt_prog.cu"; cat "$W/nvcc.log"; exit 1; }

cleanup() {
	stop_all
	krexd_down
	[ "$MOCK" = 1 ] && rm -f "/dev/shm$KREX_MOCK_GPU"
}
trap cleanup EXIT
# krexd_up [-o k=v...]: a fresh krexd in $W/run (its own discovery of GPUs).
krexd_up() {
	krexd_down
	rm -rf "$W/run" && mkdir -p "$W/run"
	sleep 0.2
	"$KREXD" -F -r "$W/run" -o "cgroup_subtree=krex-rungpu-$$" $KOPT "$@" >>"$W/krexd.log" 2>&1 &
	KD=$!
	export KREX_SOCKET=$W/run/krexd.sock
	for _ in $(seq 50); do [ -S "$KREX_SOCKET" ] && return 0; sleep 0.1; done
	echo "FAIL: krexd did not start"; tail "$W/krexd.log"; exit 1
}
sib() { "$KREX" run -- "$@" >>"$W/siblings.log" 2>&1 & PIDS="$PIDS $!"; }
row() { printf '%-44s %s\n' "$1" "$2" | tee -a "$OUT/table.txt"; }
field() { sed -n "s/.*\"$1\":\([0-9]*\).*/\1/p" "$2" | head -1; }
v() { sed -n "s/.*$1=\([0-9.-]*\).*/\1/p" "$2"; }
: >"$OUT/table.txt"
# KREX_GPU_SECTIONS: which numbered sections to run (default all);
# KREX_GPU_QUEUES (or KREX_GPU_CAPS): the bounded queues of section 4; KREX_GPU_REPS: section 5's
# repetitions (interleaved, so drift hits every variant alike).
SECTIONS=" ${KREX_GPU_SECTIONS:-1 2 3 4 5} "
want() { case "$SECTIONS" in *" $1 "*) return 0 ;; esac; return 1; }
declare -A IT
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks_event_reasons.active \
	--format=csv >"$OUT/clocks-before.txt" 2>&1

# ---- 1. the gate sees every launch path (no krexd: pass-through, counted) -------
if want 1; then
echo "== 1. launches seen by the gate"
if [ -n "$RT" ]; then
	LD_PRELOAD=$G KREX_GATE_COUNTS=$W/counts.rt timeout 60 "$RT" >"$W/rt.out" 2>&1
	row "runtime program (rt_prog)" "$(tail -1 "$W/rt.out"); gate: $(awk '{printf "%s=%s ", $2, $3}' "$W/counts.rt" 2>/dev/null)"
fi
LD_PRELOAD=$G KREX_GATE_COUNTS=$W/counts.pa timeout 60 "$WL/krex-procaddr" >"$W/pa.out" 2>&1
row "driver API via cuGetProcAddress (procaddr)" "$(tail -1 "$W/pa.out"); gate: $(awk '{printf "%s=%s ", $2, $3}' "$W/counts.pa" 2>/dev/null)"
if [ -n "$TORCH" ]; then
	LD_PRELOAD=$G KREX_GATE_COUNTS=$W/counts.torch timeout 120 $TORCH --steps 50 >"$W/torch.out" 2>&1
	row "PyTorch loop" "$(tail -1 "$W/torch.out"); gate: $(awk '{n[$2] += $3} END {for (s in n) printf "%s=%s ", s, n[s]}' "$W/counts.torch" 2>/dev/null)"
else
	row "PyTorch loop" "SKIP (no torch)"
fi
fi

# ---- 2. siblings under krex run: drained, frozen, correct ------------------------
if want 2; then
echo "== 2. siblings under krex run, regions drain and freeze them"
krexd_up -o drain_timeout=2s
HIT5=$(timeout 60 "$WL/krex-victim" calib 5)
[ -n "$RT" ] && KREX_GATE_COUNTS=$W/counts.sib sib "$RT" 25
KREX_GATE_COUNTS=$W/counts.sib sib "$WL/krex-hog" "$HIT5" --seconds 25
[ -n "$TORCH" ] && KREX_GATE_COUNTS=$W/counts.sib sib $TORCH --seconds 25
sleep 8
for i in 1 2 3; do
	timeout 30 "$KREX" region --cert "$W/cert$i.json" -- sleep 0.3
	row "region $i: siblings drained/late/frozen" \
		"$(field siblings "$W/cert$i.json")/$(field drained "$W/cert$i.json")/$(field late "$W/cert$i.json")/$(field frozen "$W/cert$i.json") drain_us=$(field drain_us "$W/cert$i.json") outcome=$(sed -n 's/.*"outcome":"\([a-z]*\)".*/\1/p' "$W/cert$i.json")"
	sleep 2
done
wait $PIDS 2>/dev/null
PIDS=
row "siblings finished" "$(grep -E 'rt_prog|torch_loop' "$W/siblings.log" | tr '\n' ' ')"
row "gate counts of the siblings" "$(awk '{n[$2] += $3} END {for (s in n) printf "%s=%s ", s, n[s]}' "$W/counts.sib" 2>/dev/null)"
fi

# ---- 3. victim p95 --------------------------------------------------------------
if want 3; then
echo "== 3. victim p95 (ms)"
for ms in 0.1 1 10; do IT[$ms]=$(timeout 60 "$WL/krex-victim" calib "$ms"); done
reps() { case $1 in 10) echo 60 ;; *) echo 300 ;; esac; }
PRE=
VARGS=
victim() { # LABEL MS; $PRE runs it (krex run --), $VARGS are more victim options
	local label=$1 ms=$2
	timeout 120 $PRE "$WL/krex-victim" run "${IT[$ms]}" "$(reps "$ms")" --label "$label" \
		$VARGS >"$W/v.$label.$ms" 2>>"$W/victim.err"
	row "$ms ms $label" "ev_p95=$(v ev_p95 "$W/v.$label.$ms") wall_p95=$(v wall_p95 "$W/v.$label.$ms") entry_p95=$(v entry_p95 "$W/v.$label.$ms") clean=$(v outcome_clean "$W/v.$label.$ms")"
}
for ms in 0.1 1 10; do victim alone "$ms"; done
KREX_GATE=off "$WL/krex-hog" "$HIT5" --seconds 60 >/dev/null 2>&1 & PIDS="$PIDS $!"
sleep 1.5
for ms in 0.1 1 10; do victim shared-no-krex "$ms"; done
stop_all
for kind in async sync torch; do
	krexd_up -o drain_timeout=2s
	case $kind in
	async) sib "$WL/krex-hog" "$HIT5" --seconds 100 ;;
	sync) sib "$WL/krex-hog" "$HIT5" --sync --seconds 100 ;;
	torch) [ -n "$TORCH" ] || continue; sib $TORCH --seconds 100 ;;
	esac
	sleep 3
	PRE="$KREX run --" VARGS="--region batch --batch 10"
	for ms in 0.1 1 10; do victim "region-$kind" "$ms"; done
	PRE= VARGS=
	stop_all
	[ $(($(date +%s) - T0)) -gt 420 ] && { row "time budget" "stopped after $kind"; break; }
done
fi

# ---- 4. region entry under each bounded queue ---------------------------------------
# KREX_GPU_QUEUES: "CAP:TIME ..." (queue_cap, queue_time; TIME 0 = by launch count
# only); KREX_GPU_CAPS="N ..." is the same as "N:0 ...".
if want 4; then
echo "== 4. region entry (1 ms victim, async hog of 5 ms kernels)"
[ -n "${IT[1]:-}" ] || IT[1]=$(timeout 60 "$WL/krex-victim" calib 1)
HIT5=${HIT5:-$(timeout 60 "$WL/krex-victim" calib 5)}
queues=${KREX_GPU_QUEUES:-}
if [ -z "$queues" ]; then
	for cap in ${KREX_GPU_CAPS:-0 2}; do queues="$queues $cap:0"; done
	queues="$queues 2:1ms"
fi
for q in $queues; do
	cap=${q%%:*} qt=${q#*:}
	krexd_up -o drain_timeout=2s -o queue_cap="$cap" -o queue_time="$qt"
	sib "$WL/krex-hog" "$HIT5" --seconds 60
	sleep 2
	timeout 120 "$KREX" run -- "$WL/krex-victim" run "${IT[1]}" 30 --region sample \
		--label "entry-$cap-$qt" >"$W/entry.$cap.$qt" 2>>"$W/victim.err"
	row "region entry, queue_cap=$cap queue_time=$qt" "entry_p50=$(v entry_p50 "$W/entry.$cap.$qt") entry_p95=$(v entry_p95 "$W/entry.$cap.$qt") clean=$(v outcome_clean "$W/entry.$cap.$qt")"
	stop_all
done
fi

# ---- 5. open gate cost --------------------------------------------------------------
if want 5; then
echo "== 5. open-gate cost (empty kernels)"
for rep in $(seq "${KREX_GPU_REPS:-1}"); do
	row "launches/s, no gate" "$(timeout 60 "$WL/krex-launchrate" 200000)"
	row "launches/s, gate, no krexd" "$(LD_PRELOAD=$G timeout 60 "$WL/krex-launchrate" 200000)"
	krexd_up -o queue_cap=0
	row "launches/s, gate joined (krex run)" "$(timeout 60 "$KREX" run -- "$WL/krex-launchrate" 200000)"
	krexd_up -o queue_cap=2 -o queue_time=0
	row "launches/s, gate joined, queue_cap=2 by count" "$(timeout 60 "$KREX" run -- "$WL/krex-launchrate" 200000)"
	krexd_up -o queue_cap=2 -o queue_time=1ms
	row "launches/s, gate joined, queue_time=1ms (default)" "$(timeout 60 "$KREX" run -- "$WL/krex-launchrate" 200000)"
	krexd_down
done
fi

nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks_event_reasons.active \
	--format=csv >"$OUT/clocks-after.txt" 2>&1
echo
echo "== table ($(($(date +%s) - T0)) s; clocks before/after in $OUT)"
cat "$OUT/clocks-before.txt" "$OUT/clocks-after.txt"
cat "$OUT/table.txt"
