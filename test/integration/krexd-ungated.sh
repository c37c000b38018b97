#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Siblings that never joined the gate (doc/containers.md "A participant whose
# gate did not load"): a `krex run --no-gate` sibling (no member in the gate,
# as where the gate cannot load) that the mock NVML (test/mock/mock_nvml.c)
# does not list on the GPU leaves the owner's region clean, and the
# certificate names it (ungated, ungated_gpu, ungated_who; the CLI's text and
# JSON); the same sibling listed on the GPU (its command's pid, mapped to the
# participant through its cgroup) makes the region degraded with the cause
# named; a sibling whose gate joined is drained and not named; without NVML
# the ungated sibling is named with its GPU work unknown and the region stays
# clean, as with foreign processes; a participant whose gated processes all
# left (a command that exited before krex run ended the participant) is
# counted the same way and says so.
. "$top_srcdir/test/lib.sh"
. "$top_srcdir/test/integration/krexd-lib.sh"

NVML_LIBS=$top_builddir/test/mock/nvml/.libs
KREX=$top_builddir/krex/krex
G=$top_builddir/gate/.libs/libkrexgate.so
[ -e "$NVML_LIBS/libnvidia-ml.so.1" ] || skip_all "mock NVML not built"
[ -x "$KREX" ] || skip_all "krex CLI not built"
[ -e "$G" ] || skip_all "gate not built"
kt_setup
export KREX_MOCK_GPU=/krex-ungated-$$
export LD_LIBRARY_PATH=$NVML_LIBS:$top_builddir/test/mock/.libs:$top_builddir/libregion/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export KREX_MOCK_NVML=$KT_DIR/nvml.txt
export KREX_GATE_LIB=$G

nvml() { printf '%s\n' "$@" >"$KT_DIR/nvml.tmp" && mv "$KT_DIR/nvml.tmp" "$KREX_MOCK_NVML"; }
field() { kt_field "$KT_DIR/$1.out" "$2"; }
region() { "$CLIENT" region --gpus 0 --hold-ms 50 >"$KT_DIR/$1.out" 2>&1; }
# members N: krexd lists a participant whose gate joined (N members).
members() { "$KREX" status --json 2>/dev/null | grep -q "\"members\":$1"; }
# sibling NAME [krex run options]: `krex run ... -- sleep 300` in the
# background; once its command runs, the participant's pid (krex run's child,
# registered before it spawned the command) goes to NAME.ppid and the
# command's to NAME.pid.
sibling() {
	local name=$1
	shift
	rm -f "$KT_DIR/$name.pid" "$KT_DIR/$name.ppid"
	kt_bg "$name" "$KREX" run --gpus 0 --label "$name" "$@" -- sleep 300
	wait_for 10 spawned "$name"
}
spawned() {
	local w part cmd
	eval "w=\$$1"
	part=$(pgrep -P "$w" | head -n 1) && [ -n "$part" ] || return 1
	cmd=$(pgrep -P "$part" | head -n 1) && [ -n "$cmd" ] || return 1
	[ "$(cat "/proc/$cmd/comm" 2>/dev/null)" = sleep ] || return 1
	echo "$part" >"$KT_DIR/$1.ppid" && echo "$cmd" >"$KT_DIR/$1.pid"
}
# stop_sibling NAME: end its command; krex run unregisters and exits.
stop_sibling() {
	local w
	eval "w=\$$1"
	kill -CONT "$(cat "$KT_DIR/$1.pid")" 2>/dev/null
	kill -KILL "$(cat "$KT_DIR/$1.pid")" 2>/dev/null
	wait_for 10 kt_gone "$w"
}
ungated_cleanup() {
	local n
	kt_thaw_all
	for n in nogate gated nogate2 nogate3; do
		[ -s "$KT_DIR/$n.pid" ] && kill -KILL "$(cat "$KT_DIR/$n.pid")" 2>/dev/null
	done
	rm -f "/dev/shm$KREX_MOCK_GPU"
	kt_cleanup
}
trap ungated_cleanup EXIT

nvml "max=1980 app=1980" "0 sm=1980 reasons=0 temp=40"
kt_conf "gpus = 0" "require_clocks = no"
plan 35
ok "krexd starts with the mock NVML" krexd_start
ok "krexd sees the mock GPU" grep -qs "NVML sees 1 GPU(s)" "$KT_DIR/krexd.log"

# 1. A sibling registered by krex run without the gate, not on the GPU.
ok "an ungated sibling runs under krex run --no-gate" sibling nogate --no-gate
NG_PID=$(cat "$KT_DIR/nogate.pid")
NG_PART=$(cat "$KT_DIR/nogate.ppid")
region r1
ok "not on the GPU: the owner's region is clean ($(field r1 note))" test "$(field r1 outcome)" = clean
ok "the certificate counts it ungated, none on the GPU" \
	test "$(field r1 siblings)/$(field r1 ungated)/$(field r1 ungated_gpu)/$(field r1 drained)" = 1/1/0/0
ok "and names it: participant, pid" \
	grep -qs "^ungated_who=participant [0-9]* (pid $NG_PART) not on the GPU$" "$KT_DIR/r1.out"
"$KREX" region --gpus 0 --json -- true 2>"$KT_DIR/r1.json"
ok "the CLI's JSON says it" \
	grep -qs "\"ungated\":1,\"ungated_gpu\":0,\"ungated_who\":\"participant [0-9]* (pid $NG_PART) not on the GPU\"" "$KT_DIR/r1.json"
"$KREX" region --gpus 0 -- true 2>"$KT_DIR/r1.txt"
ok "the CLI's text says it" \
	grep -qs "never joined the gate: 1 sibling(s), 0 on the GPU: participant [0-9]* (pid $NG_PART) not on the GPU" "$KT_DIR/r1.txt"
"$KREX" log --limit 1 >"$KT_DIR/r1.log" 2>&1
ok "krex log's row of a clean region names it" \
	grep -qs " clean .* never joined the gate: participant [0-9]* (pid $NG_PART) not on the GPU$" "$KT_DIR/r1.log"

# 2. The same sibling's command on the GPU (a context there, per NVML).
nvml "max=1980 app=1980" "0 sm=1980 reasons=0 temp=40 pids=$NG_PID"
region r2
ok "on the GPU: the owner's region is degraded" test "$(field r2 outcome)" = degraded
ok "the note names the participant, its process and why" \
	grep -qs "^note=.*participant [0-9]* (pid $NG_PART) never joined the gate and its process $NG_PID is on the GPU: its queued GPU work was not drained" "$KT_DIR/r2.out"
ok "the certificate counts it on the GPU, and no foreign process" \
	test "$(field r2 ungated)/$(field r2 ungated_gpu)/$(field r2 foreign)" = 1/1/0
ok "and names it on the GPU" \
	grep -qs "^ungated_who=participant [0-9]* (pid $NG_PART) on the GPU$" "$KT_DIR/r2.out"
"$KREX" log --limit 1 >"$KT_DIR/r2.log" 2>&1
ok "krex log's row: the note, then who" \
	grep -qs " degraded .* its queued GPU work was not drained; never joined the gate: participant [0-9]* (pid $NG_PART) on the GPU$" "$KT_DIR/r2.log"

# 3. A sibling whose gate joined (krex run preloads it; it joins at load).
ok "a gated sibling runs under krex run" sibling gated
ok "its gate joined krexd (a member)" wait_for 10 members 1
nvml "max=1980 app=1980" "0 sm=1980 reasons=0 temp=40"
region r3
ok "gated and ungated siblings, none on the GPU: clean ($(field r3 note))" test "$(field r3 outcome)" = clean
ok "the gated one drained and not counted ungated" \
	test "$(field r3 siblings)/$(field r3 drained)/$(field r3 frozen)/$(field r3 ungated)" = 2/1/2/1
ok "only the ungated one is named" \
	test "$(grep -o 'participant' "$KT_DIR/r3.out" | wc -l)/$(grep -c "pid $(cat "$KT_DIR/gated.ppid")" "$KT_DIR/r3.out")" = 1/0
# the gated one's process on the GPU: drained, so nothing to say
nvml "max=1980 app=1980" "0 sm=1980 reasons=0 temp=40 pids=$(cat "$KT_DIR/gated.pid")"
region r3b
ok "a gated sibling on the GPU leaves it clean ($(field r3b note))" test "$(field r3b outcome)" = clean
ok "and is not counted ungated on the GPU" test "$(field r3b ungated)/$(field r3b ungated_gpu)" = 1/0

# 4. NVML that fails every device call: the processes on the GPU are
# unknown; the ungated sibling is named so, and the region is not degraded
# for it (require_clocks = no: the clocks are unknown too).
stop_sibling gated
nvml "max=1980 app=1980 fail=all" "0 sm=1980 reasons=0 temp=40 pids=$NG_PID"
region r4
ok "broken NVML: foreign and ungated_gpu unknown" \
	test "$(field r4 ungated)/$(field r4 ungated_gpu)/$(field r4 foreign)" = 1/-1/-1
ok "named with its GPU work unknown" \
	grep -qs "^ungated_who=participant [0-9]* (pid $NG_PART) GPU work unknown$" "$KT_DIR/r4.out"
ok "not degraded for it ($(field r4 note))" test "$(field r4 outcome)" = clean

# 5. No NVML at all (krexd restarted without it; a new ungated sibling).
stop_sibling nogate
krexd_stop
unset KREX_MOCK_NVML
ok "krexd starts without NVML" krexd_start
ok "a new ungated sibling" sibling nogate2 --no-gate
region r5
ok "no NVML: the region is clean ($(field r5 note))" test "$(field r5 outcome)" = clean
ok "the ungated sibling is counted, its GPU work unknown" \
	test "$(field r5 ungated)/$(field r5 ungated_gpu)" = 1/-1
ok "and named" grep -qs "^ungated_who=participant [0-9]* (pid $(cat "$KT_DIR/nogate2.ppid")) GPU work unknown$" "$KT_DIR/r5.out"
"$KREX" region --gpus 0 --json -- true 2>"$KT_DIR/r5.json"
ok "the JSON says ungated_gpu null" grep -qs '"ungated":1,"ungated_gpu":null,' "$KT_DIR/r5.json"
stop_sibling nogate2

# 6. Its gated processes left: a participant that had a member when its
# gate was closed before, and has none now (krexd with NVML again).
krexd_stop
export KREX_MOCK_NVML=$KT_DIR/nvml.txt
ok "krexd starts with the mock NVML again" krexd_start
ok "another ungated sibling" sibling nogate3 --no-gate
NG3_PID=$(cat "$KT_DIR/nogate3.pid")
NG3_PART=$(cat "$KT_DIR/nogate3.ppid")
# The freezer cgroup of a pid (v1, else the v2 hierarchy).
cg_dir() {
	local p
	p=$(sed -n 's/^[0-9]*:freezer://p' "/proc/$1/cgroup")
	[ -n "$p" ] && [ -d "/sys/fs/cgroup/freezer$p" ] && echo "/sys/fs/cgroup/freezer$p" && return
	p=$(sed -n 's/^0:://p' "/proc/$1/cgroup")
	[ -d "/sys/fs/cgroup$p" ] && echo "/sys/fs/cgroup$p"
}
if [ "$(id -u)" = 0 ] && D=$(cg_dir "$NG3_PID") && [ -n "$D" ]; then
	kt_bg member "$CLIENT" participant --ack-drains --enter "$D"
	member_left() { wait_for 10 members 1 && kill "$member" && wait_for 10 members 0; }
	ok "a gated member joins its participant, then leaves" member_left
	nvml "max=1980 app=1980" "0 sm=1980 reasons=0 temp=40 pids=$NG3_PID"
	region r6
	ok "on the GPU: degraded, the note says its gated processes left" \
		grep -qs "^note=.*participant [0-9]* (pid $NG3_PART) had no process in the gate (its gated ones left) and its process $NG3_PID is on the GPU: its queued GPU work was not drained" "$KT_DIR/r6.out"
	ok "ungated_who says so too" \
		grep -qs "^ungated_who=participant [0-9]* (pid $NG3_PART, its gated processes left) on the GPU$" "$KT_DIR/r6.out"
else
	skip "a gated member joins its participant, then leaves" "needs root and a cgroup freezer"
	skip "on the GPU: degraded, the note says its gated processes left" "needs root and a cgroup freezer"
	skip "ungated_who says so too" "needs root and a cgroup freezer"
fi
stop_sibling nogate3
done_testing
