#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# A participant made while a region holds its GPU (a command started beside
# the region) runs (it may be the next owner: it queues its request), and
# the region remembers it: when a process of it is on the GPU at the
# region's end (it made its CUDA context beside the owner's work; on the
# H200 that disturbs a timed kernel, doc/performance.md), the certificate
# says so and is degraded.  One that made nothing there, or one of another
# GPU, changes nothing.  One held at the gate to make its context (the
# real gate on the mock driver) makes it only after krexd's list at the
# region's end, and the region stays clean.  The GPU's process list: the
# mock NVML (a TEST DOUBLE).
. "$top_srcdir/test/lib.sh"
. "$top_srcdir/test/integration/krexd-lib.sh"

kt_setup
kt_mock_nvml
out() { kt_field "$KT_DIR/$1.out" "$2"; }
rid() { sed -n 's/^granted //p' "$KT_DIR/$1.out"; }
made_during() { grep -qsE "region $1: participant [0-9]+ made during it" "$KT_DIR/krexd.log"; }

kt_nvml "max=1980 app=1980" "0 sm=1980 reasons=0 temp=40" "1 sm=1980 reasons=0 temp=40"
kt_conf "gpus = 0,1" "log_level = debug"
plan 26
ok "krexd starts with the mock NVML" krexd_start

# 1. Made during the region, its process on the GPU at the end: degraded.
ok "a region on GPU 0 granted" kt_hold r1
kt_participant late --gpus 0 --label late0
ok "a participant made during it runs" kt_progress late
ok "krexd's log says the region remembers it" made_during "$(rid r1)"
kt_nvml "max=1980 app=1980" "0 sm=1980 reasons=0 temp=40 pids=$late" "1 sm=1980 reasons=0 temp=40"
kt_unhold r1
ok "its process on the GPU at the end: degraded" test "$(out r1 outcome)" = degraded
ok "... krexd listed the GPU's processes at its end" \
	grep -qsE "region $(rid r1): processes on the GPU at its end: 1 listed" "$KT_DIR/krexd.log"
ok "... the note names it" grep -qs "^note=participant [0-9]*, made during the region, has its process $late on the GPU: it started beside the owner's work" "$KT_DIR/r1.out"

# 2. Made during the region but nothing of it on the GPU: clean.
kt_nvml "max=1980 app=1980" "0 sm=1980 reasons=0 temp=40" "1 sm=1980 reasons=0 temp=40"
kt_hold r2
kt_participant idle --gpus 0 --label idle0
wait_for 10 made_during "$(rid r2)"
kt_unhold r2
ok "made during the region, not on the GPU: clean" test "$(out r2 outcome)/$(out r2 note)" = clean/

# 3. One of another GPU, on its GPU: not the region's.
kt_hold r3
kt_participant other --gpus 1 --label other1
kt_nvml "max=1980 app=1980" "0 sm=1980 reasons=0 temp=40" "1 sm=1980 reasons=0 temp=40 pids=$other"
kt_unhold r3
ok "a participant of GPU 1 made during a region of GPU 0: not remembered" \
	sh -c "! grep -qsE 'region $(rid r3): participant [0-9]+ made during it' '$KT_DIR/krexd.log'"
ok "... and the region is clean" test "$(out r3 outcome)/$(out r3 note)" = clean/

# 4. Made during the region, its context held at the gate (the real gate,
# the mock driver: a TEST DOUBLE): when the gates open, new contexts still
# wait until krexd has the end's list; then it is made, and nothing of it
# was on the GPU during the region: clean.
CAP=$top_builddir/test/gate/.libs/capturer
[ -x "$CAP" ] || CAP=$top_builddir/test/gate/capturer
if [ -x "$CAP" ] && [ -x "$top_builddir/krex/krex" ] && [ -e "$top_builddir/test/mock/.libs/libcuda.so.1" ]; then
	kt_nvml "max=1980 app=1980" "0 sm=1980 reasons=0 temp=40" "1 sm=1980 reasons=0 temp=40"
	kt_hold r4
	wait_for 10 grep -qsE "region $(rid r4): processes on the GPU: [0-9]+ listed" "$KT_DIR/krexd.log"
	mkdir -p "$KT_DIR/c"
	kt_bg ctx env KREX_MOCK_GPU=/krex-late-$$ KREX_GATE_LIB="$top_builddir/gate/.libs/libkrexgate.so" \
		KREX_GATE_TRACE="$KT_DIR/c" \
		LD_LIBRARY_PATH="$top_builddir/test/mock/.libs:$top_builddir/libregion/.libs:$LD_LIBRARY_PATH" \
		"$top_builddir/krex/krex" run --gpus 0 -- "$CAP" context retain "$KT_DIR/c"
	cpid() { pgrep -f "^[^ ]*capturer context retain $KT_DIR/c\$" | head -1; }
	held() { p=$(cpid) && [ -n "$p" ] && in_futex "$p" && grep -qs "context: at the gate" "$KT_DIR"/c/trace.*; }
	still() { ! test -e "$KT_DIR/c/out" && held; }
	ok "a command started during the region waits at the gate to make its context" wait_for 10 held
	kt_nvml "max=1980 app=1980 procs_wait=$KT_DIR/go" "0 sm=1980 reasons=0 temp=40" "1 sm=1980 reasons=0 temp=40"
	touch "$KT_DIR/r4.end"
	ok "the region ends, its certificate waiting for the end's list" wait_for 10 grep -qs \
		"region $(rid r4): ended (0), its GPUs given back; its certificate waits for the process list" "$KT_DIR/krexd.log"
	ok "... its gates open, the context still waits" still
	touch "$KT_DIR/go"
	ok "it is made once the list is in" wait_for 10 test -e "$KT_DIR/c/out"
	wait_for 10 grep -qs '^outcome=' "$KT_DIR/r4.out"
	ok "... and the region is clean ($(out r4 outcome), note '$(out r4 note)')" \
		test "$(out r4 outcome)/$(out r4 note)" = clean/
	touch "$KT_DIR/c/end"
	rm -f "/dev/shm/krex-late-$$"
else
	for i in 1 2 3 4 5; do skip "a context held until the end's list" "capturer, krex or the mock libcuda not built"; done
fi

# 5. Over MPS (a server among the listed processes: a copy of sleep under
# its name, root's, as in krexd-mps.sh) NVML lists a client from its CUDA
# initialisation on, before any context.  A late member that registered
# with its contexts held at the gate (PROTO_REG_HOLDCTX) is listed, not
# noted; one without that, or one listed without MPS, is noted as before.
if [ "$(id -u)" = 0 ]; then
	mkdir -p "$KT_DIR/mps"
	cp "$(command -v sleep)" "$KT_DIR/mps/nvidia-cuda-mps-server"
	chmod 755 "$KT_DIR/mps/nvidia-cuda-mps-server"
	"$KT_DIR/mps/nvidia-cuda-mps-server" 600 &
	SRV=$!
	KT_PIDS="$KT_PIDS $SRV"
	mps() { kt_nvml "max=1980 app=1980 mps_pids=$1 mps_mem=${MEM:-0}" "0 sm=1980 reasons=0 temp=40 pids=$SRV" "1 sm=1980 reasons=0 temp=40"; }
	not_noted() { grep -qsE "region $1: over MPS, participant [0-9]+'s process $2 is listed .*: not noted" "$KT_DIR/krexd.log"; }
	idle() { kt_nvml "max=1980 app=1980" "0 sm=1980 reasons=0 temp=40" "1 sm=1980 reasons=0 temp=40"; }

	idle
	kt_hold r5
	kt_participant h5 --gpus 0 --ack-drains --holds-contexts --label h5
	wait_for 10 made_during "$(rid r5)"
	MEM=123 mps "$h5"
	kt_unhold r5
	ok "over MPS, a late member whose contexts wait at the gate, listed: clean" \
		test "$(out r5 outcome)/$(out r5 note)" = clean/
	ok "... krexd's log says why it was not noted" not_noted "$(rid r5)" "$h5"
	ok "... with the memory NVML gives it" grep -qs "region $(rid r5): over MPS, .*process $h5 is listed (.*NVML: 123 bytes of GPU memory)" "$KT_DIR/krexd.log"

	idle
	kt_hold r6
	kt_participant n6 --gpus 0 --ack-drains --label n6
	wait_for 10 made_during "$(rid r6)"
	mps "$n6"
	kt_unhold r6
	ok "over MPS, a late member without the contexts' hold, listed: degraded" \
		test "$(out r6 outcome)" = degraded
	ok "... the note names it" grep -qs "^note=participant [0-9]*, made during the region, has its process $n6 on the GPU" "$KT_DIR/r6.out"

	idle
	kt_hold r7
	kt_participant h7 --gpus 0 --ack-drains --holds-contexts --label h7
	wait_for 10 made_during "$(rid r7)"
	kt_nvml "max=1980 app=1980" "0 sm=1980 reasons=0 temp=40 pids=$h7" "1 sm=1980 reasons=0 temp=40"
	kt_unhold r7
	ok "without MPS a listed late member made a context, hold or not: degraded" \
		test "$(out r7 outcome)" = degraded

	# the real gate (the mock driver, a TEST DOUBLE) registers with the hold
	# (KREX_GATE_CONTEXTS=hold, its default), and without it with pass
	if [ -x "$CAP" ] && [ -x "$top_builddir/krex/krex" ] && [ -e "$top_builddir/test/mock/.libs/libcuda.so.1" ]; then
		# gated NAME CONTEXTS: the capturer under krex run, making a context in $KT_DIR/NAME
		gated() {
			mkdir -p "$KT_DIR/$1"
			kt_bg "$1" env KREX_MOCK_GPU=/krex-late-$$ KREX_GATE_CONTEXTS="$2" \
				KREX_GATE_LIB="$top_builddir/gate/.libs/libkrexgate.so" KREX_GATE_TRACE="$KT_DIR/$1" \
				LD_LIBRARY_PATH="$top_builddir/test/mock/.libs:$top_builddir/libregion/.libs:$LD_LIBRARY_PATH" \
				"$top_builddir/krex/krex" run --gpus 0 -- "$CAP" context retain "$KT_DIR/$1"
		}
		gpid() { pgrep -f "^[^ ]*capturer context retain $KT_DIR/$1\$" | head -1; }
		atgate() { p=$(gpid "$1") && [ -n "$p" ] && in_futex "$p" && grep -qs "context: at the gate" "$KT_DIR/$1"/trace.*; }

		idle
		kt_hold r8
		gated g8 hold
		ok "over MPS, the gate's command started during a region waits to make its context" \
			wait_for 10 atgate g8
		G8=$(gpid g8)
		mps "$G8"
		kt_unhold r8
		ok "... listed as an MPS client at the end: clean ($(out r8 outcome), note '$(out r8 note)')" \
			test "$(out r8 outcome)/$(out r8 note)" = clean/
		ok "... krexd's log says why it was not noted" not_noted "$(rid r8)" "$G8"
		touch "$KT_DIR/g8/end"

		idle
		kt_hold r9
		gated g9 pass
		ok "with KREX_GATE_CONTEXTS=pass it makes its context during the region" \
			wait_for 10 test -e "$KT_DIR/g9/out"
		G9=$(gpid g9)
		mps "$G9"
		kt_unhold r9
		ok "... listed over MPS at the end: degraded, the note names it" \
			grep -qs "^note=participant [0-9]*, made during the region, has its process $G9 on the GPU" "$KT_DIR/r9.out"
		touch "$KT_DIR/g9/end"
		rm -f "/dev/shm/krex-late-$$"
	else
		for i in 1 2 3 4 5; do skip "the gate's hold over MPS" "capturer, krex or the mock libcuda not built"; done
	fi
else
	for i in 1 2 3 4 5 6 7 8 9 10 11; do skip "late members over MPS" "needs root (the MPS server's stand-in is root's)"; done
fi
done_testing
