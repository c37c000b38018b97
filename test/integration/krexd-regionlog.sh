#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# The region log and the metrics file: one JSON line per region end; size
# rotation keeps region_log_keep files of whole lines; SIGHUP opens the log
# again (logrotate); the node_exporter textfile is valid Prometheus text
# (promcheck.py, and promtool when installed) with the right counts, written
# by rename; a region log that fails (a full file system) is said once and
# regions go on; a FIFO nobody reads is refused without blocking, and stalls
# neither a region nor krexd's stop; bad values are refused at start.
. "$top_srcdir/test/lib.sh"
. "$top_srcdir/test/integration/krexd-lib.sh"
command -v python3 >/dev/null || skip_all "no python3"
PROM="python3 $top_srcdir/test/integration/promcheck.py"

kt_setup
LOG=$KT_DIR/log/regions.jsonl
MET=$KT_DIR/textfile/krex.prom
mkdir -p "$KT_DIR/textfile"
kt_conf "gpus = g0" "drain_timeout = 200ms" "region_log = $LOG" "region_log_max = 4k" \
	"region_log_keep = 2" "metrics_file = $MET"
plan 28
ok "krexd starts" krexd_start

# lines FILE...: the JSON lines of the files (each must parse), their seqs on one line.
seqs() {
	python3 - "$@" <<'PY'
import json, sys
out = []
for f in sys.argv[1:]:
    for line in open(f, encoding="utf-8").read().splitlines():
        o = json.loads(line)
        assert o["node"] and "uid" in o and "job" in o and o["certificate"]["region"] > 0, line
        out.append(str(o["seq"]))
print(" ".join(out))
PY
}

"$CLIENT" region --gpus g0 --count 2 --quiet
ok "two regions: two JSON lines in the region log" test "$(seqs "$LOG")" = "1 2"
ok "the log is not world-readable (0640)" test "$(stat -c %a "$LOG")" = 640
mtime() { stat -c %Y.%y "$MET" 2>/dev/null; }
ok "the metrics file appears" wait_for 5 test -s "$MET"
ok "it is valid Prometheus text" $PROM "$MET"
val() { $PROM --value "$1" "$MET"; }
val_is() { [ "$(val "$1")" = "$2" ]; }
ok "krex_regions_total{outcome=\"clean\"} 2" wait_for 10 val_is 'krex_regions_total{outcome="clean"}' 2
ok "world-readable for node_exporter (0644), no temp file left" \
	test "$(stat -c %a "$MET")" = 644 -a ! -e "$MET.tmp"

# A degraded region (a silent sibling) and an expired one, with a participant registered.
kt_participant c --gpus g0 --gate-noack
"$CLIENT" region --gpus g0 --hold-ms 10 --quiet
kill "$c"
"$CLIENT" region --gpus g0 --max-ms 50 --hold-ms 300 --quiet
ok "the metrics count the degraded region" wait_for 10 val_is 'krex_regions_total{outcome="degraded"}' 1
ok "and the expired one" wait_for 10 val_is 'krex_regions_total{outcome="expired"}' 1
ok "the cause class drain" wait_for 10 val_is 'krex_region_degraded_causes_total{cause="drain"}' 1
ok "one late sibling" wait_for 10 val_is 'krex_region_late_siblings_total' 1
ok "entry histogram: 4 regions" wait_for 10 val_is 'krex_region_entry_seconds_count' 4
ok "a wait bucket +Inf of 4" wait_for 10 val_is 'krex_region_wait_seconds_bucket{le="+Inf"}' 4
ok "still valid after the update" $PROM "$MET"
if command -v promtool >/dev/null; then
	ok "promtool check metrics accepts it" sh -c "promtool check metrics <'$MET'"
else
	skip "promtool check metrics accepts it" "promtool not installed (Debian: prometheus)"
fi

# Rotation at 4 KiB (a line is about 1.1 KiB), two files kept.
"$CLIENT" region --gpus g0 --count 20 --quiet
# the log writer is a thread of its own, behind krexd's loop (at real-time
# priority, sched_priority): wait until it wrote the last region's line
# (fresh-clone run 19, loaded: checked before the writer had rotated)
last_is() { [ "$(seqs "$LOG" 2>/dev/null | tr ' ' '\n' | tail -n 1)" = "$1" ]; }
wait_for 10 last_is 24 || diag "the region log's last line is not region 24: $(seqs "$LOG" 2>&1 | tail -c 80)"
ok "rotated: regions.jsonl, .1 and .2, no .3" test -s "$LOG" -a -s "$LOG.1" -a -s "$LOG.2" -a ! -e "$LOG.3"
small() { for f in "$LOG" "$LOG.1" "$LOG.2"; do [ "$(stat -c %s "$f")" -le 4096 ] || return 1; done; }
ok "no file past region_log_max" small
contiguous() {
	local s
	s=$(seqs "$LOG.2" "$LOG.1" "$LOG") || return 1
	python3 -c "import sys; s=[int(x) for x in sys.argv[1].split()]; sys.exit(not (s == list(range(s[0], 25)) and len(s) >= 6))" "$s"
}
ok "whole JSON lines, the newest, in order up to region 24" contiguous

# SIGHUP: the log is opened again (logrotate moved it).
mv "$LOG" "$KT_DIR/moved.jsonl"
before=$(seqs "$KT_DIR/moved.jsonl")
kill -HUP "$KREXD_PID"
wait_for 5 grep -q "configuration reloaded" "$KT_DIR/krexd.log"
"$CLIENT" region --gpus g0 --quiet
ok "after SIGHUP the next line goes to a new file" wait_for 10 test "$(seqs "$LOG" 2>/dev/null)" = 25
ok "the moved file keeps its lines" test "$(seqs "$KT_DIR/moved.jsonl")" = "$before"

# A log that fails: said once, regions go on, counted.  The log is on a
# full file system (a 4 KiB tmpfs, filled): krexd opens only regular files
# (doc/security.md), so /dev/full is refused at the open, not at a write.
krexd_stop
: >"$KT_DIR/krexd.log"
FULL=$KT_DIR/full
mkdir "$FULL"
if mount -t tmpfs -o size=4k tmpfs "$FULL" 2>/dev/null; then
	trap 'umount "$FULL" 2>/dev/null; kt_cleanup' EXIT
	dd if=/dev/zero of="$FULL/fill" bs=4k count=2 2>/dev/null
	FULL_LOG=$FULL/regions.jsonl
	FULL_WHY='write: No space left on device'
else
	FULL_LOG=/dev/full # no tmpfs here: the refused device says the same, once
	FULL_WHY='/dev/full is not a regular file (a device)'
fi
krexd_start -o "region_log=$FULL_LOG" -o region_log_max=0
"$CLIENT" region --gpus g0 --count 5 --quiet >"$KT_DIR/full.out" 2>&1
ok "regions go on while the log cannot be written" test $? = 0
ok "the error is logged once" wait_for 10 test "$(grep -c "region log $FULL_LOG: $FULL_WHY.*logged once" "$KT_DIR/krexd.log")" = 1
ok "the metrics count the errors and the lost lines" wait_for 10 \
	sh -c "[ \"\$($PROM --value krex_region_log_dropped_lines_total '$MET')\" = 5 ] && [ \"\$($PROM --value krex_file_write_errors_total '$MET')\" -ge 1 ]"

# A log that would block (a FIFO nobody reads): refused at the open, which
# does not block (O_NONBLOCK); no region waits for it, nor krexd's stop.
krexd_stop
: >"$KT_DIR/krexd.log"
mkfifo "$KT_DIR/fifo"
krexd_start -o "region_log=$KT_DIR/fifo"
t0=$(date +%s%N)
timeout 20 "$CLIENT" region --gpus g0 --count 20 --quiet
rc=$?
t1=$(date +%s%N)
ok "20 regions while the log blocks ($(((t1 - t0) / 1000000)) ms; a blocked loop would never end them)" \
	test $rc = 0 -a $(((t1 - t0) / 1000000)) -lt 10000
pid=$KREXD_PID
kill -TERM "$pid"
ok "krexd stops within 5 s anyway" wait_for 5 kt_gone "$pid"
ok "the FIFO was refused, not written" grep -q "region log $KT_DIR/fifo: $KT_DIR/fifo is not a regular file (a FIFO)" "$KT_DIR/krexd.log"
wait "$pid" 2>/dev/null
KREXD_PID=

# Bad values: refused at start with the key and what it takes.
refused() {
	"$KREXD" -F -c "$KT_DIR/krexd.conf" -r "$KT_DIR/r2" -o "$1" >"$KT_DIR/bad.out" 2>&1
	[ $? != 0 ] && grep -q -e "$2" "$KT_DIR/bad.out"
}
ok "region_log = relative/path refused" refused region_log=rel/x.jsonl "bad value 'rel/x.jsonl' for key 'region_log' (an absolute path"
ok "region_log_max = 1k refused" refused region_log_max=1k "key 'region_log_max' (0, or a size from 4k to 1G"
done_testing
