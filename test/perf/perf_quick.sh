#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Tier 5 (perf), quick: fidelity.py --quick and agents.py --quick against the
# mock driver.  Prints their tables as TAP diagnostics; a timing never fails
# it (only a crash or unparsable output does).  Skips while the workloads,
# the mock driver, krexd or krex are not built.
. "$top_srcdir/test/lib.sh"

b=$top_builddir
command -v python3 >/dev/null || skip_all "python3 not found"
for t in test/workloads/krex-victim test/workloads/krex-hog; do
	[ -x "$b/$t" ] || skip_all "$t not built yet"
done
[ -x "$b/krexd/krexd" ] || skip_all "krexd not built yet"
[ -x "$b/krex/krex" ] || [ -x "$b/krexd/krex" ] || skip_all "krex not built yet"
[ -e "$b/test/mock/.libs/libcuda.so.1" ] || [ -e "$b/test/mock/libcuda.so.1" ] ||
	skip_all "mock libcuda.so.1 not built yet"

tmp=$(mktemp -d)
# A simulated GPU of our own, so other tests running at the same time do
# not share it (test/mock: KREX_MOCK_GPU names its shared-memory object).
export KREX_MOCK_GPU=/krex-perf-$$
trap 'rm -rf "$tmp" "/dev/shm$KREX_MOCK_GPU"' EXIT
export PYTHONDONTWRITEBYTECODE=1 # the source tree may be read-only (distcheck)

# bench NAME DESCRIPTION: run NAME.py --quick, one TAP line, the table as diag.
bench() {
	local name=$1 desc=$2 rc
	timeout -k 10 240 python3 "$top_srcdir/test/perf/$name.py" --quick --mock auto \
		--builddir "$b" --srcdir "$top_srcdir" --out "$tmp/$name" \
		>"$tmp/$name.txt" 2>"$tmp/$name.err"
	rc=$?
	_tap_n=$((_tap_n + 1))
	case $rc in
	0) echo "ok $_tap_n - $desc completed # figures below" ;;
	77) echo "ok $_tap_n - $desc # SKIP $(tail -1 "$tmp/$name.txt")" ;;
	*)
		echo "not ok $_tap_n - $desc failed (rc $rc)"
		_tap_fail=$((_tap_fail + 1))
		sed 's/^/# stderr: /' "$tmp/$name.err" | tail -20
		;;
	esac
	sed 's/^/# /' "$tmp/$name.txt"
}

# The drain per sibling (--drain-log, on with --quick on the mock): a row per
# sibling that started, each drained by the victim's regions (krexd drains
# every participant on the GPU), every figure a number.  Structure only: no
# figure is judged.  Exit 77 (a skip) when no KREX group ran (the time
# budget spent first on a loaded machine).
fid_siblings() {
	python3 - "$tmp/fidelity" <<-'PY'
	import csv, os, sys
	d = sys.argv[1]
	# a sibling started once it wrote its counter
	started = [s for s in ("async", "sync", "cpu", "torch")
	           if os.path.exists("%s/krex.all.%s.count" % (d, s))]
	if not started:
	    print("no sibling of krex/all started (skipped: %s)" % " ".join(
	        {r["note"] for r in csv.DictReader(open(d + "/fidelity.csv")) if r["mode"] == "krex"}))
	    sys.exit(77)
	rows = {r["sibling"]: r for r in csv.DictReader(open(d + "/fidelity-siblings.csv"))
	        if r["mode"] == "krex" and r["mix"] == "all"}
	ok = all(s in rows and int(rows[s]["drains"]) > 0 and
	                     int(rows[s]["gate_drains"]) > 0 for s in started)
	for r in rows.values():
	    for k, v in r.items():
	        if k.endswith("_ms") and v:
	            float(v)
	print("# siblings started: %s; rows: %s" % (" ".join(started), " ".join(sorted(rows))))
	sys.exit(0 if ok else 1)
	PY
}
ag_siblings() {
	python3 - "$tmp/agents" <<-'PY'
	import csv, sys
	rows = list(csv.DictReader(open(sys.argv[1] + "/agents-siblings.csv")))
	krex = {(r["n"], r["sibling"]) for r in rows if r["mode"] == "krex"}
	ns = {r["n"] for r in csv.DictReader(open(sys.argv[1] + "/agents.csv"))
	      if r["mode"] == "krex" and "skipped" not in r["note"]}
	if not ns:
	    print("no krex window ran (time budget spent)")
	    sys.exit(77)
	ok = all((n, s) in krex for n in ns for s in ("correct", "bench"))
	for r in rows:
	    ok = ok and int(r["participants"]) > 0
	    for k, v in r.items():
	        if k.endswith("_ms") and v:
	            float(v)
	sys.exit(0 if ok else 1)
	PY
}

# The CPU an iteration took (getrusage: the session's and its GPU commands')
# and the machine's CPU use over each window (/proc/stat): every window that
# counted benchmarks has them, the commands' share below the whole, the busy
# share a percentage, each command's CPU in the commands table.
ag_cpu() {
	python3 - "$tmp/agents" <<-'PY'
	import csv, sys
	d = sys.argv[1]
	rows = [r for r in csv.DictReader(open(d + "/agents-breakdown.csv"))
	        if r["iter_s"] not in ("", "-")]
	if not rows:
	    print("no window counted a benchmark (time budget spent)")
	    sys.exit(77)
	ok = True
	for r in rows:
	    it, cmd, util = (float(r[k]) for k in ("cpu_iter_s", "cmd_cpu_s", "cpu_util_pct"))
	    ok = ok and 0 < cmd < it and 0 < util <= 100
	    print("# N=%s %s: cpu_iter_s %.3f cmd_cpu_s %.3f cpu_util_pct %.1f" % (
	        r["n"], r["mode"], it, cmd, util))
	cmds = [r for r in csv.DictReader(open(d + "/agents-commands.csv")) if r["commands"] != "0"]
	ok = ok and bool(cmds) and all(float(r["cpu_s"]) > 0 for r in cmds)
	sys.exit(0 if ok else 1)
	PY
}

# The count's standard error (benches_se): a number in every window where
# sessions ran side by side and benchmarks were counted, none with a lock.
ag_count_se() {
	python3 - "$tmp/agents" <<-'PY'
	import csv, sys
	rows = [r for r in csv.DictReader(open(sys.argv[1] + "/agents.csv"))
	        if r["benches"] not in ("", "0")]
	side = [r for r in rows if r["mode"] not in ("cmd", "job")]
	if not side:
	    print("no window of sessions side by side counted a benchmark (time budget spent)")
	    sys.exit(77)
	ok = all(float(r["benches_se"]) >= 0 for r in side)
	ok = ok and all(r["benches_se"] == "" for r in rows if r["mode"] in ("cmd", "job"))
	for r in rows:
	    print("# N=%s %s: %s benchmarks, standard error %s" % (
	        r["n"], r["mode"], r["benches"], r["benches_se"] or "-"))
	sys.exit(0 if ok else 1)
	PY
}

# Each benchmark under KREX names its region (its record's "regions", the
# ids krexd's region log and log carry), one per batch-style benchmark, all
# apart; the lock's benchmarks none.
ag_region_ids() {
	python3 - "$tmp/agents" <<-'PY'
	import glob, json, os, sys
	d, recs = sys.argv[1], {}
	for path in glob.glob(os.path.join(d, "w.*.jsonl")):
	    mode = os.path.basename(path).split(".")[1]
	    for ln in open(path):
	        r = json.loads(ln)
	        if r.get("kind") == "bench" and r.get("rc") == 0:
	            recs.setdefault(mode, []).append(r.get("regions"))
	if not recs.get("krex"):
	    print("no krex benchmark finished (time budget spent)")
	    sys.exit(77)
	ids = [i for x in recs["krex"] for i in x]
	ok = all(isinstance(x, list) and len(x) == 1 for x in recs["krex"]) and len(set(ids)) == len(ids)
	ok = ok and all(x == [] for m, v in recs.items() if m in ("cmd", "job") for x in v)
	print("# " + "; ".join("%s: %d benchmarks, %d region ids" % (
	    m, len(v), sum(len(x or []) for x in v)) for m, v in sorted(recs.items())))
	sys.exit(0 if ok else 1)
	PY
}

# check DESC FUNC: ok / not ok, or a skip when FUNC exits 77 (its last line says why).
check() {
	local out rc
	out=$("$2")
	rc=$?
	[ "$rc" = 77 ] && skip "$1" "$(echo "$out" | tail -1)" && return
	ok "$1" [ "$rc" = 0 ]
	echo "$out" | sed '/^#/!s/^/# /'
}

# nvml-calls.py against the mock NVML (TEST DOUBLE): each of the 7 calls krexd
# makes timed, none failed.
nvml_calls() {
	local d out
	d=$(mktemp -d) || return 1
	printf 'max=1980 app=1980\n0 sm=1980 reasons=0 temp=40 procs=3\n' >"$d/nvml.txt"
	out=$(KREX_MOCK_NVML=$d/nvml.txt LD_LIBRARY_PATH=$top_builddir/test/mock/nvml/.libs \
		python3 "$top_srcdir/test/perf/nvml-calls.py" --reps 20 --label mock)
	rm -rf "$d"
	echo "$out"
	[ "$(echo "$out" | awk 'NF >= 6 && $NF ~ /^[0-9]+$/ && $NF == 0' | wc -l)" = 7 ] &&
		echo "$out" | grep -q "^processes listed at the end: 3$"
}

# wake-bench.py: a row for each setting, with and without busy loops (the
# figures are this machine's; refused settings say so).
wake_bench() {
	local out
	out=$(timeout 60 python3 "$top_srcdir/test/perf/wake-bench.py" --wakes 20 --period-ms 5 --busy 2)
	echo "$out"
	[ "$(echo "$out" | grep -cE '^(nice0|nice-20|slice|fifo1) +[0-9]+ +([0-9]+ +[0-9]+ +[0-9]+ +[0-9]+|refused)$')" = 8 ]
}

# entry_split.py --owner: the quick run's per-sample regions set against
# krexd's log (the victim's --certs and krexd's cost lines share
# CLOCK_MONOTONIC): every matched region's parts add up to its whole call.
fid_owner() {
	local certs=$tmp/fidelity/raw/krex_all_1_sample.certs log=$tmp/fidelity/krex.all.krexd.log out
	[ -f "$certs" ] && [ -f "$log" ] || { echo "no per-sample krex/all run (time budget?)"; return 77; }
	out=$(python3 "$top_srcdir/test/perf/entry_split.py" --owner "$certs" "$log") || { echo "$out"; return 1; }
	echo "$out"
	echo "$out" | grep -q "^the owner's krex_region_begin against krexd's log, [1-9][0-9]* regions" &&
		echo "$out" | grep -q "^after the grant (to return) "
}

# start-bench.py: what `krex run` adds to a start, and krexd's time to make
# each participant (its log's "made in N us"): a row each, every start a
# participant; with starts apart and a busy loop beside, as asked.
start_bench() {
	local out
	out=$(timeout 120 python3 "$top_srcdir/test/perf/start-bench.py" --builddir "$top_builddir" \
		--srcdir "$top_srcdir" --gpus g0 --n 10 --gap-ms 20 --busy 1 --out "$tmp/start")
	echo "$out"
	[ "$(echo "$out" | grep -cE '^(bare|krex-run|made) +n +[0-9]+ +p50 +[0-9.]+ ms')" = 3 ] &&
		echo "$out" | grep -qE '^made +n +10 ' &&
		echo "$out" | grep -q '^start-bench: 10 starts of each, 1 at once, 20 ms apart, 1 busy loops;'
}

plan 11
check "nvml-calls.py times each NVML call krexd makes (mock NVML)" nvml_calls
check "wake-bench.py measures a woken process's wait for a CPU, per priority" wake_bench
check "start-bench.py: krex run's start against a bare one, krexd's time per participant" start_bench
bench fidelity "fidelity quick run"
check "fidelity: the drain per sibling, a row per started sibling, each drained" fid_siblings
check "entry_split.py --owner: the owner's side of each entry, against krexd's log" fid_owner
bench agents "agents quick run"
check "agents: the drain per role (correct, bench) at each N" ag_siblings
check "agents: the CPU per iteration, per command and the machine's CPU use" ag_cpu
check "agents: the count's standard error with sessions side by side, none with a lock" ag_count_se
check "agents: each benchmark under KREX names its region, the lock's none" ag_region_ids
done_testing
