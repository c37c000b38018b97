#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# The GPU's state in the region, with the mock NVML (test/mock/mock_nvml.c, a
# TEST DOUBLE that scripts SM clock, clocks-event reasons, temperature and
# foreign processes over time or on an event): settle waits and grants when
# the clock recovers, at the first read that sees it back, and not at all on
# a GPU that is not capped; settle_timeout passes and the region is degraded
# with the cause named; inherited or own (doc/architecture.md): a power cap
# at the grant degrades (mark, off), the owner's own cap on a settled, quiet
# GPU is clean and reported (wait, off), the same cap with a foreign process
# on the GPU degrades, thermal state carried in degrades; a throttle reason
# appearing mid-region degrades it; the idle reason alone stays clean;
# min/max sampled; a low clock without a reason degrades; capped time never
# more than held; unknown clocks with require_clocks; reason names in the
# CLI's JSON; STATUS is served while a region settles.
. "$top_srcdir/test/lib.sh"
. "$top_srcdir/test/integration/krexd-lib.sh"

NVML_LIBS=$top_builddir/test/mock/nvml/.libs
KREX=$top_builddir/krex/krex
[ -e "$NVML_LIBS/libnvidia-ml.so.1" ] || skip_all "mock NVML not built"
kt_setup
export LD_LIBRARY_PATH=$NVML_LIBS${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export KREX_MOCK_NVML=$KT_DIR/nvml.txt
export KREX_MOCK_NVML_LOG=$KT_DIR/nvml.log # krexd's reads, for the settle's checks

# nvml LINE...: a new mock NVML story; its clock starts now (the file's mtime).
nvml() {
	printf '%s\n' "$@" >"$KT_DIR/nvml.tmp" && mv "$KT_DIR/nvml.tmp" "$KREX_MOCK_NVML"
}
field() { kt_field "$KT_DIR/$1.out" "$2"; }
# region NAME HOLD_MS: one region on GPU 0, its certificate in NAME.out.
region() { "$CLIENT" region --gpus 0 --hold-ms "$2" >"$KT_DIR/$1.out" 2>&1; }
# region_mid NAME HOLD_MS LINE...: a region on GPU 0 begun on an unthrottled
# GPU; the story LINE... is written once it is granted (its times count from
# then, inside the region, however slow the client was to start).
region_mid() {
	local name=$1 hold=$2 pid
	shift 2
	nvml "0 sm=1980 reasons=0 temp=60"
	rm -f "$KT_DIR/$name.out"
	"$CLIENT" region --gpus 0 --hold-ms "$hold" >"$KT_DIR/$name.out" 2>&1 &
	pid=$!
	wait_for 10 grep -qs granted "$KT_DIR/$name.out" || diag "$name: not granted"
	nvml "$@"
	wait "$pid"
}
between() { [ "$1" -ge "$2" ] && [ "$1" -le "$3" ]; }
restart() { krexd_stop && krexd_start "$@"; }
# The grant's reads in the mock's log: the temperature (edge counters), then a clock sample.
granted_read() { awk '/^temp/ { t = 1 } t && /^clock/ { f = 1 } END { exit !f }' "$KREX_MOCK_NVML_LOG"; }
# At least $1 clock reads in the mock's log.
reads() { [ "$(grep -c '^clock' "$KREX_MOCK_NVML_LOG")" -ge "$1" ]; }
# own NAME [STORY...]: a region whose owner's work starts after krexd took the
# grant's sample (the mock's event line "on=$KT_DIR/work" then holds) and
# ends once krexd sampled what the work did ($OWN_SAMPLES samples, default
# 2; 0 under settle = off, which samples only the edges).
own() {
	local name=$1 n
	shift
	rm -f "$KT_DIR/work" "$KT_DIR/done" "$KREX_MOCK_NVML_LOG"
	nvml "$@"
	kt_bg "$name" "$CLIENT" region --gpus 0 --until "$KT_DIR/done"
	wait_for 10 granted_read && touch "$KT_DIR/work" &&
		n=$(grep -c '^clock' "$KREX_MOCK_NVML_LOG") &&
		wait_for 10 reads $((n + ${OWN_SAMPLES:-2}))
	touch "$KT_DIR/done"
	wait_for 20 grep -qs '^own_power_cap_samples=' "$KT_DIR/$name.out"
}
# settling NAME: krexd lists NAME's region (status) and has not granted it:
# it waits for the clocks.  status goes to status.out.
settling() {
	"$CLIENT" status >"$KT_DIR/status.out" 2>&1 && grep -qs '^region ' "$KT_DIR/status.out" &&
		! grep -qs granted "$KT_DIR/$1.out"
}

nvml "max=1980 app=1980" "0 sm=1980 reasons=0 temp=40"
kt_conf "gpus = 0" "settle_timeout = 2s"
plan 52
ok "krexd starts with the mock NVML" krexd_start
ok "krexd saw the mock GPU and requires clocks" grep -qs "NVML sees 1 GPU(s), clocks required: yes" "$KT_DIR/krexd.log"

# 1. Power-capped when the region begins, back at 1980 MHz once the test has
# seen krexd settle for 200 ms (status lists the region, not granted).  (The
# story no longer starts the clock's return at a fixed time after it was
# written: a client slow to start on a loaded host came out of the wait.
# settle_timeout is 2 s, krexd's maximum: the status, the 200 ms and the
# write back take a fraction of it.)
nvml "0 sm=1500 reasons=0x4 temp=70"
kt_bg settle_c "$CLIENT" region --gpus 0 --hold-ms 100
wait_for 10 settling settle || diag "the region was not seen settling"
sleep 0.2 # settling all along: settle_us is at least this
nvml "0 sm=1980 reasons=0 temp=65"
wait_for 20 kt_gone "$settle_c"
cp "$KT_DIR/settle_c.out" "$KT_DIR/settle.out"
ok "settle: clean once the clock is back" test "$(field settle outcome)" = clean
ok "settle: waited for the clock (>= 200 ms, < settle_timeout)" between "$(field settle settle_us)" 200000 2000000
ok "settle: no reason seen from the grant on, min 1980" \
	test "$(field settle clock_reasons)/$(field settle sm_clock_min_mhz)" = 0/1980
ok "settle: nominal 1980, temperature recorded" \
	test "$(field settle sm_clock_nominal_mhz)/$(field settle temp_end_c)" = 1980/65

# 1b. Settle only as long as the GPU needs: it ends at the first read that
# sees the mock's recovery (at 400 ms), the grant's reads right after it.
rm -f "$KREX_MOCK_NVML_LOG"
nvml "0 sm=1500 reasons=0x4 temp=70" "400 sm=1980 reasons=0 temp=65"
region recover 50
# before the grant: the settle's clock reads; LAST: the one that saw the GPU back
awk '/^temp/ { exit } /^clock/ { n++; if ($2 >= 400) back++; else if ($4 != 1500) early++; last = $0 }
	END { printf "reads=%d back=%d early=%d last=%s\n", n, back, early, last }' \
	"$KREX_MOCK_NVML_LOG" >"$KT_DIR/recover.reads"
ok "settle ends at the first read that sees the GPU back (one read after the recovery)" \
	grep -qs '^reads=[0-9]* back=1 early=0 last=clock [0-9.]* 0 1980 0x0$' "$KT_DIR/recover.reads"
ok "the settle polled while the GPU was capped" test "$(field recover outcome)" = clean
diag "settle: $(cat "$KT_DIR/recover.reads"); grant read $(awk '/^temp/ { print $2 - 400; exit }' \
	"$KREX_MOCK_NVML_LOG") ms after the mock's recovery; settle_us $(field recover settle_us)"

# 1c. No settle on a GPU that is not capped at the freeze.
nvml "0 sm=1980 reasons=0 temp=45"
region nosettle 50
ok "no settle when the GPU is back at the freeze: settle_us 0, settle known" \
	test "$(field nosettle settle_us)/$(($(field nosettle known) & 32))/$(field nosettle outcome)" = 0/32/clean

# 1d. The owner's own power cap on a settled, quiet GPU: clean, reported.
own ownwait "0 sm=1980 reasons=0 temp=50" "on=$KT_DIR/work sm=1545 reasons=0x4 temp=62"
ok "own cap on a settled GPU: clean" test "$(field ownwait outcome)/$(field ownwait note)" = clean/
ok "own cap: reported (samples >= 1, first reached after the grant, known bit)" \
	test "$(field ownwait own_power_cap_samples)" -ge 1 -a \
	"$(field ownwait own_power_cap_first_us)" -ge 0 -a $(($(field ownwait known) & 64)) = 64
ok "own cap: time at the cap counted, never more than held" \
	test "$(field ownwait own_power_cap_us)" -gt 0 -a \
	"$(field ownwait own_power_cap_us)" -le "$(field ownwait held_us)"
ok "own cap: the SM clock range shows it (1545-1980)" \
	test "$(field ownwait sm_clock_min_mhz)/$(field ownwait sm_clock_max_mhz)" = 1545/1980

# 1e. The same cap with a foreign process on the GPU: not the owner's alone.
own foreign "0 sm=1980 reasons=0 temp=50" "on=$KT_DIR/work sm=1545 reasons=0x4 procs=1"
ok "cap while a foreign process runs: degraded" test "$(field foreign outcome)" = degraded
ok "cap while a foreign process runs: the note says whose it may be" \
	grep -qs '^note=.*power cap with 1 foreign process(es) on the GPU: SM 1545 MHz of 1980' "$KT_DIR/foreign.out"
ok "the foreign process that came mid-region is counted" \
	test "$(field foreign foreign)/$(($(field foreign known) & 64))" = 1/0

# 2. Never recovers: settle_timeout, then degraded with the cause.
restart -o settle_timeout=200ms
nvml "0 sm=1500 reasons=0x4 temp=70"
region timeout 100
ok "settle_timeout: degraded" test "$(field timeout outcome)" = degraded
ok "settle_timeout: waited about 200 ms" between "$(field timeout settle_us)" 190000 1000000
ok "settle_timeout: note says so" grep -qs '^note=.*not settled within settle_timeout (200 ms)' "$KT_DIR/timeout.out"
ok "settle_timeout: note names the power cap at the grant and the clock" \
	grep -qs '^note=.*power cap at the grant: SM 1500 MHz of 1980 (sw_power_cap)' "$KT_DIR/timeout.out"
ok "settle_timeout: power violation counted" test "$(field timeout violation_power_us)" -gt 50000

# 3. settle = mark: no wait, judged; a cap at the grant is inherited.
restart -o settle=mark
region mark 100
ok "mark: granted without waiting" test "$(field mark settle_us)" = 0
ok "mark: degraded, power cap at the grant named" \
	grep -qs '^note=power cap at the grant: SM 1500 MHz of 1980' "$KT_DIR/mark.out"
ok "mark: outcome degraded" test "$(field mark outcome)" = degraded
# Thermal state carried in: the GPU throttles for heat at the grant.
nvml "0 sm=1800 reasons=0x20 temp=88"
region hot 100
ok "thermal carried in: degraded, named at the grant" \
	grep -qs '^note=thermal slowdown at the grant: SM 1800 MHz of 1980 (sw_thermal)' "$KT_DIR/hot.out"

# 4. settle = off: no wait and no samples between the edges, but the same
# rule on the grant's and the end's samples: a region that starts capped is
# degraded, the owner's own cap seen at the end is not.
restart -o settle=off
nvml "0 sm=1500 reasons=0x4 temp=70"
region off 100
ok "off: a region that starts capped is degraded" \
	grep -qs '^note=power cap at the grant: SM 1500 MHz of 1980' "$KT_DIR/off.out"
ok "off: start and end sampled only, reason recorded" \
	test "$(field off clock_samples)/$(field off clock_reasons)" = 2/4
OWN_SAMPLES=0 own offown "0 sm=1980 reasons=0 temp=50" "on=$KT_DIR/work sm=1545 reasons=0x4"
ok "off: the owner's own cap, seen at the end, is clean and reported" \
	test "$(field offown outcome)/$(field offown own_power_cap_samples)" = clean/1

# 5. A thermal slowdown appears mid-region.
restart
# (each story from here on is written inside the region, held 2 s: the
# story's 150 to 350 ms, wherever the region's grant fell)
region_mid thermal 2000 "0 sm=1980 reasons=0 temp=60" "300 sm=1800 reasons=0x20 temp=88"
ok "mid-region throttle: degraded" test "$(field thermal outcome)" = degraded
ok "mid-region throttle: note names it" \
	grep -qs '^note=thermal slowdown: SM 1800 MHz of 1980 (sw_thermal)' "$KT_DIR/thermal.out"
ok "mid-region throttle: sampled during the region (>= 10 samples), max 1980" \
	test "$(field thermal clock_samples)" -ge 10 -a "$(field thermal sm_clock_max_mhz)" = 1980

# 6. The idle reason alone (low idle clock) stays clean.
nvml "0 sm=345 reasons=0x1 temp=35"
region idle 200
ok "idle reason alone: clean, no wait" \
	test "$(field idle outcome)/$(field idle note)" = clean/
ok "idle reason alone: recorded" test "$(field idle clock_reasons)/$(field idle sm_clock_min_mhz)" = 1/345

# 7. Min/max over the samples; within clock_tolerance (1 %) is clean, below it is not.
region_mid minmax 2000 "0 sm=1980 reasons=0" "150 sm=1965" "350 sm=1980"
ok "min/max sampled: 1965-1980, clean within 1 %" \
	test "$(field minmax sm_clock_min_mhz)/$(field minmax sm_clock_max_mhz)/$(field minmax outcome)" = 1965/1980/clean
region_mid low 2000 "0 sm=1980 reasons=0" "150 sm=1900"
ok "clock under the tolerance with no reason: degraded" \
	grep -qs '^note=SM clock low: 1900 MHz of 1980' "$KT_DIR/low.out"
restart -o clock_tolerance=5
region_mid low5 2000 "0 sm=1980 reasons=0" "150 sm=1900"
ok "clock_tolerance = 5: the same clock is clean" test "$(field low5 outcome)" = clean

# A power cap too short for the 20 ms samples: the violation counter catches
# it; on a settled, quiet GPU it is the owner's own (clean, counted).
own blip "0 sm=1980 reasons=0" "on=$KT_DIR/work hidden=0x4"
ok "own cap between samples: clean, counted by the violation counter" \
	test "$(field blip outcome)" = clean -a "$(field blip own_power_cap_us)" -gt 0
# The clock held low with no reason while the power counter grows: a GPU
# near its own cap, not a clock nothing explains.
own lowcap "0 sm=1980 reasons=0" "on=$KT_DIR/work sm=1700 hidden=0x4"
ok "low clock with no reason beside the owner's own power counter: clean" \
	test "$(field lowcap outcome)/$(field lowcap sm_clock_min_mhz)" = clean/1700
# Power and thermal caps hidden the whole time, from before the grant: the
# capped time is never more than the time held.
nvml "0 sm=1980 reasons=0 hidden=0x24"
region hidden 200
held=$(field hidden held_us)
capped=$(sed -n 's/^note=.*between samples: \([0-9]*\) us of [0-9]* us held.*/\1/p' "$KT_DIR/hidden.out")
ok "capped between samples: never more than held ($capped of $held us)" \
	test -n "$capped" -a "${capped:-0}" -le "$held" -a "$(field hidden own_power_cap_us)" -le "$held"

# 8. NVML there at start-up but its reads fail: unknown, degraded (require_clocks auto).
nvml "fail=sample" "0 sm=1980 reasons=0"
region broken 100
ok "broken NVML read: degraded" grep -qs '^note=GPU clocks unknown: NVML read failed' "$KT_DIR/broken.out"
ok "broken NVML read: clocks bit clear" test $(($(field broken known) & 4)) = 0
restart -o require_clocks=no
region broken_no 100
ok "require_clocks = no: clean, clocks unknown" \
	test "$(field broken_no outcome)/$(($(field broken_no known) & 4))" = clean/0

# A GPU name NVML cannot resolve: unknown clocks, and the note says why.
restart -o require_clocks=yes -o gpus=g0
nvml "0 sm=1980 reasons=0"
"$CLIENT" region --gpus g0 --hold-ms 50 >"$KT_DIR/noname.out" 2>&1
ok "a GPU name NVML does not know: degraded, the note names it" \
	grep -qs '^note=GPU clocks unknown: NVML does not know GPU g0' "$KT_DIR/noname.out"
ok "krexd warned at start-up" grep -qs 'GPU g0: NVML does not know it' "$KT_DIR/krexd.log"

# 9. Reason names, not a mask, in the CLI's JSON.
restart -o settle=mark
nvml "0 sm=1500 reasons=0x5 temp=70"
json_out() { KREX_GPUS=0 "$KREX" region --gpus 0 --json -- sleep 0.1 2>"$KT_DIR/json.out"; }
if [ -x "$KREX" ]; then
	json_out
	ok "JSON: reasons decoded to names" grep -qs '"clock_reasons":\["gpu_idle","sw_power_cap"\]' "$KT_DIR/json.out"
	ok "JSON: min/nominal clock, settle null under mark" \
		grep -qs '"settle_us":null,.*"sm_clock_min_mhz":1500,"sm_clock_max_mhz":1500,"sm_clock_nominal_mhz":1980' "$KT_DIR/json.out"
else
	skip "krex CLI not built" 2
fi

# 10. Two GPUs: each must settle (GPU 1 is capped, GPU 0 is not); judged over
# both.  GPU 1 comes back once krexd has been seen waiting for 200 ms.
restart -o gpus=0,1
nvml "gpus=2 max=1980 app=1980" "0 sm=1980 reasons=0 temp=50" \
	"0 gpu=1 sm=1500 reasons=0x4 temp=70"
kt_bg two_c "$CLIENT" region --gpus 0,1 --hold-ms 100
wait_for 10 settling two_c || diag "the region on two GPUs was not seen settling"
sleep 0.2 # settling all along: settle_us is at least this
nvml "gpus=2 max=1980 app=1980" "0 sm=1980 reasons=0 temp=50" "0 gpu=1 sm=1980 reasons=0"
wait_for 20 kt_gone "$two_c"
cp "$KT_DIR/two_c.out" "$KT_DIR/two.out"
ok "two GPUs: waited for the capped second GPU (>= 200 ms), then clean" \
	test "$(field two outcome)" = clean -a "$(field two settle_us)" -ge 200000
nvml "gpus=2 max=1980 app=1980" "0 sm=1980 reasons=0 temp=50" "0 gpu=1 sm=1500 reasons=0x4"
restart -o gpus=0,1 -o settle=mark
"$CLIENT" region --gpus 0,1 --hold-ms 100 >"$KT_DIR/two_mark.out" 2>&1
ok "two GPUs, mark: the second GPU's power cap degrades the region" \
	grep -qs '^note=power cap at the grant: SM 1500 MHz of 1980' "$KT_DIR/two_mark.out"

# 11. STATUS is answered while a region settles: the region is listed by a
# status answered before krexd granted it (a status that waited for the
# settle would come after the grant, or not list it).
restart -o settle_timeout=2s
nvml "0 sm=1500 reasons=0x4 temp=70"
kt_bg slow "$CLIENT" region --gpus 0 --hold-ms 50
ok "status answered while the region settles" wait_for 3 settling slow
ok "the settling region is not granted yet" sh -c "! grep -qs granted '$KT_DIR/slow.out'"
ok "status lists it" grep -qs '^region ' "$KT_DIR/status.out"
ok "it ends degraded after settle_timeout" wait_for 10 grep -qs '^outcome=degraded' "$KT_DIR/slow.out"
done_testing
