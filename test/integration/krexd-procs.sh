#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# NVML's process list off krexd's event loop (krexd/gpuprocs.c,
# doc/architecture.md "Telemetry"), with the mock NVML (test/mock/mock_nvml.c,
# a TEST DOUBLE whose process list a test holds until a file exists):
# a region is granted while the list it asked for at its start is still
# held, and its certificate counts the foreign processes once the list
# comes; a list that never comes (NVML hung) leaves the processes unknown,
# not degraded, after a bounded wait at the end, and the next regions do not
# wait again; a queue of requests behind a hung list is bounded; krexd serves
# STATUS meanwhile; once the list comes back, regions have it again; with
# KREXD_PROCS_INLINE=1 (the measurement's reference) the list runs on the
# loop again, before the grant; the nominal clock comes from krexd's cache,
# which the thread refreshes after a region's list (a held read of it never
# delays a list).
. "$top_srcdir/test/lib.sh"
. "$top_srcdir/test/integration/krexd-lib.sh"

NVML_LIBS=$top_builddir/test/mock/nvml/.libs
[ -e "$NVML_LIBS/libnvidia-ml.so.1" ] || skip_all "mock NVML not built"
kt_setup
export LD_LIBRARY_PATH=$NVML_LIBS${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export KREX_MOCK_NVML=$KT_DIR/nvml.txt
export KREX_MOCK_NVML_LOG=$KT_DIR/nvml.log
REL=$KT_DIR/release

nvml() { printf '%s\n' "$@" >"$KT_DIR/nvml.tmp" && mv "$KT_DIR/nvml.tmp" "$KREX_MOCK_NVML"; }
field() { kt_field "$KT_DIR/$1.out" "$2"; }
# In the mock's log: the list began and has not ended; it ended.
list_held() { [ "$(grep -c '^procs_begin' "$KREX_MOCK_NVML_LOG")" -gt "$(grep -c '^procs_end' "$KREX_MOCK_NVML_LOG")" ]; }
list_done() { grep -qs '^procs_end' "$KREX_MOCK_NVML_LOG"; }
# The grant's temperature read came after the list's end (1) or before (0).
grant_after_list() { awk '/^procs_end/ { e = 1 } /^temp/ && !t { t = 1; print e + 0 }' "$KREX_MOCK_NVML_LOG"; }
known_foreign() { echo $(($(field "$1" known) & 1)); }

nvml "max=1980 app=1980 procs_wait=$REL" "0 sm=1980 reasons=0 temp=40 procs=2"
kt_conf "gpus = 0" "log_level = debug"
plan 42
ok "krexd starts with the mock NVML" krexd_start
ok "krexd sees the mock GPU" grep -qs "NVML sees 1 GPU(s)" "$KT_DIR/krexd.log"

# 1. The grant does not wait for the list.
: >"$KREX_MOCK_NVML_LOG"
ok "granted while its process list is held" kt_hold a
ok "the list began and has not ended at the grant" list_held
ok "the grant read the GPU before the list ended" test "$(grant_after_list)" = 0
touch "$REL"
ok "the list ends once released" wait_for 10 list_done
ok "krexd takes the list in (debug line)" \
	wait_for 10 grep -qs "region [0-9]*: processes on the GPU: 2 listed in" "$KT_DIR/krexd.log"
ok "the region ends with a certificate" kt_unhold a
ok "its certificate counts the 2 foreign processes" test "$(field a foreign)/$(known_foreign a)" = 2/1
ok "and says so: degraded, the note names them" \
	grep -qs '^note=.*2 process(es) on the GPU are not participants' "$KT_DIR/a.out"

# 1b. A region that ends before its list comes: its GPU goes to the next
# region at once; its certificate waits for the list.
rm -f "$REL"
ok "granted, its list held" kt_hold g
kt_bg h "$CLIENT" region --gpus 0 --hold-ms 10
touch "$KT_DIR/g.end"
ok "it ends; its certificate waits for the list" wait_for 10 grep -qs \
	"region [0-9]*: ended (0), its GPUs given back; its certificate waits for the process list" \
	"$KT_DIR/krexd.log"
ok "the next region is granted meanwhile" wait_for 10 grep -qs granted "$KT_DIR/h.out"
ok "no certificate yet" sh -c "! grep -qs '^outcome=' '$KT_DIR/g.out'"
touch "$REL"
ok "the certificate comes with the list" kt_unhold g
ok "it counts the processes" test "$(field g foreign)/$(known_foreign g)" = 2/1
wait_for 10 kt_gone "$h"

# 1c. Revoked (its lease expired) while the list is held, and the owner's END
# comes before the certificate is done: the END gets it once it is.
rm -f "$REL"
rm -f "$KT_DIR/l.end"
kt_bg l "$CLIENT" region --gpus 0 --max-ms 100 --hold-until "$KT_DIR/l.end"
ok "revoked at its lease; its certificate waits for the list" wait_for 10 grep -qs \
	"region [0-9]*: ended (1), its GPUs given back; its certificate waits for the process list" \
	"$KT_DIR/krexd.log"
N=$(grep -c "REGION_END" "$KT_DIR/krexd.log")
touch "$KT_DIR/l.end"
ok "its owner's END comes meanwhile" wait_for 10 sh -c "[ \$(grep -c REGION_END '$KT_DIR/krexd.log') -gt $N ]"
touch "$REL"
ok "the END gets the certificate once the list comes" wait_for 10 kt_gone "$l"
ok "expired, with the processes counted" test "$(field l outcome)/$(field l foreign)" = expired/2

# The thread's reads of the nominal clocks, each told once (at the next
# region's start, at debug level): a line a read, fewer than the regions
# (the first has none to tell).  Lists flow here, so the thread reads after
# each; a region started after a read tells it.
reads_told() {
	n=$(grep -c ': nominal clocks read on the process-list thread in [0-9]* us$' "$KT_DIR/krexd.log")
	g=$(grep -c ': granted to participant' "$KT_DIR/krexd.log")
	echo "# $n reads told, $g grants"
	[ "$n" -ge 1 ] && [ "$n" -lt "$g" ]
}
region_told() { "$CLIENT" region --gpus 0 --hold-ms 10 >/dev/null 2>&1 && reads_told; }
ok "the thread's clock reads told, a line each" wait_for 10 region_told

# 2. A list that never comes: bounded wait at the end, processes unknown.
rm -f "$REL"
: >"$KREX_MOCK_NVML_LOG"
ok "granted while the list hangs" kt_hold b
ok "the list hangs" list_held
ok "the region ends while the list hangs" kt_unhold b
ok "its processes are unknown, not counted" test "$(field b foreign)/$(known_foreign b)" = -1/0
ok "not degraded for it (unknown, as without NVML)" test "$(field b outcome)" = clean
ok "krexd says the list did not come" \
	grep -qs "NVML's process list did not come within 1000 ms of its end" "$KT_DIR/krexd.log"
ok "a second region while it still hangs: unknown too" sh -c "
	'$CLIENT' region --gpus 0 --hold-ms 10 >'$KT_DIR/c.out' 2>&1 && grep -q '^foreign=-1' '$KT_DIR/c.out'"
ok "krexd serves STATUS while the list hangs" "$CLIENT" status

# 3. A hung list bounds its queue (GP_MAX_QUEUED = 64 requests).  At log
# level info: a burst of debug lines would be rate-limited, and with them the
# lines this waits for.
krexd_stop
krexd_start -o log_level=info
i=0
while [ $i -lt 66 ]; do
	"$CLIENT" region --gpus 0 --hold-ms 0 >"$KT_DIR/q.out" 2>&1 || break
	i=$((i + 1))
done
ok "66 more regions end while the list hangs" test $i = 66
ok "krexd says the queue is full" grep -qs "has 64 requests waiting (NVML hung?)" "$KT_DIR/krexd.log"

# 4. Released: what queued is done and dropped; new regions have the list again.
touch "$REL"
ok "krexd says NVML answers again once what waited is done" \
	wait_for 20 grep -qs "NVML's process list answers again" "$KT_DIR/krexd.log"
ok "a region after the list came back counts the processes" sh -c "
	'$CLIENT' region --gpus 0 --hold-ms 10 >'$KT_DIR/e.out' 2>&1 && grep -q '^foreign=2' '$KT_DIR/e.out'"
ok "krexd still answers" "$CLIENT" status

# 4b. The nominal clock comes from krexd's cache, which the thread
# refreshes after a region's list, once no list is asked for (never before
# one): a list does not wait for the nominal clock's calls (held here by the
# mock, nominal_wait), and a changed application clock counts from a region
# after the thread read it.
NOM=$KT_DIR/nominal-release
nvml "max=1980 app=1755 procs_wait=$REL nominal_wait=$NOM" "0 sm=1980 reasons=0 temp=40 procs=2"
"$CLIENT" region --gpus 0 --hold-ms 10 >"$KT_DIR/x.out" 2>&1
ok "the thread reads the nominal clock after the region's list" \
	wait_for 10 grep -qs '^nominal_begin' "$KREX_MOCK_NVML_LOG"
ok "the region's list came while the nominal clock's read is held (foreign $(field x foreign))" \
	test "$(field x foreign)" = 2
ok "nominal clock: the cached 1980 in that region" test "$(field x sm_clock_nominal_mhz)" = 1980
touch "$NOM"
ok "once the read is done, a region has the new 1755" wait_for 10 sh -c "
	'$CLIENT' region --gpus 0 --hold-ms 10 >'$KT_DIR/y.out' 2>&1 && grep -q '^sm_clock_nominal_mhz=1755' '$KT_DIR/y.out'"

# 5. KREXD_PROCS_INLINE=1: the list on the loop, before the grant (as before).
krexd_stop
: >"$KREX_MOCK_NVML_LOG"
L=$(wc -l <"$KT_DIR/krexd.log")
export KREXD_PROCS_INLINE=1
krexd_start
unset KREXD_PROCS_INLINE
ok "inline: granted, the certificate counts the processes" sh -c "
	'$CLIENT' region --gpus 0 --hold-ms 10 >'$KT_DIR/f.out' 2>&1 && grep -q '^foreign=2' '$KT_DIR/f.out'"
ok "inline: the grant came after the list" test "$(grant_after_list)" = 1
nvml "max=1980 app=1620 procs_wait=$REL" "0 sm=1980 reasons=0 temp=40 procs=2"
ok "inline: the nominal clock is read at each entry" sh -c "
	'$CLIENT' region --gpus 0 --hold-ms 10 >'$KT_DIR/z.out' 2>&1 && grep -q '^sm_clock_nominal_mhz=1620' '$KT_DIR/z.out'"
ok "inline: no thread's debug line" sh -c "! tail -n +$((L + 1)) '$KT_DIR/krexd.log' | grep -q 'processes on the GPU: .* listed in'"
