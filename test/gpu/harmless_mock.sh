#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# The harmless.sh harness itself, on the mock driver (test/mock: a TEST
# DOUBLE, no GPU): a clean run must say PASS with every column computed from
# what the siblings, the certificates and /proc said; a run with planted
# faults (a crash, a hang, a wrong result, an exception, a new warning, a
# pinned thread, a stopped process, an undo failure, a certificate that is
# not honest, a pinned bystander) must report each one where it happened,
# and no false one.  Nothing may be left running.
. "$top_srcdir/test/lib.sh"

command -v python3 >/dev/null || skip_all "python3 not found"
need_root
[ -x "$top_builddir/krexd/krexd" ] || skip_all "krexd not built"
[ -e "$top_builddir/test/mock/.libs/libcuda.so.1" ] || skip_all "mock libcuda not built"
tmp=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$tmp"' EXIT
export PYTHONDONTWRITEBYTECODE=1
h=$top_srcdir/test/gpu/harmless.sh

# q FILE EXPR: a Python expression over the report (d = harmless.json,
# rows = run 1's rows by name, t = run 1's totals); prints it.
q() {
	python3 - "$1" "$2" <<-'EOF'
	import json, sys
	d = json.load(open(sys.argv[1]))
	r1 = d["runs"][0] if d["runs"] else {"rows": [], "totals": {}}
	rows = {r["framework"]: r for r in r1["rows"]}
	t = r1["totals"]
	print(eval(sys.argv[2]))
	EOF
}
is() { [ "$(q "$1" "$2")" = "$3" ] || { diag "$2: '$(q "$1" "$2")', expected '$3'"; return 1; }; }

plan 20

# ---- a clean run ---------------------------------------------------------------
KREX_HARMLESS_LIMIT=120 bash "$h" --mock --builddir "$top_builddir" --out "$tmp/ok" --seconds 8 \
	--min-regions 20 >"$tmp/ok.txt" 2>"$tmp/ok.err"
rc=$?
ok "clean mock run: exit 0, overall PASS" [ $rc = 0 -a "$(q "$tmp/ok/harmless.json" 'd["overall"]')" = PASS ]
J=$tmp/ok/harmless.json
K=$tmp/ok/run1/krex
# Recount from the raw files, independently of harmless.py.
recount() {
	python3 - "$J" "$K" <<-'EOF'
	import json, sys, os
	d = json.load(open(sys.argv[1])); k = sys.argv[2]
	r1 = d["runs"][0]
	certs = [json.loads(l) for l in open(os.path.join(k, "certs.jsonl"))]
	t = r1["totals"]
	bad = []
	if t["regions"] != len(certs): bad.append("regions %s != %d lines" % (t["regions"], len(certs)))
	clean = sum(1 for c in certs if c.get("cert", {}).get("outcome") == "clean")
	if t["clean"] != clean: bad.append("clean %s != %d" % (t["clean"], clean))
	for r in r1["rows"]:
	    res = [json.loads(l) for l in open(os.path.join(k, r["framework"] + ".out")) if l.startswith('{"harmless"')][-1]
	    if r["iterations"] != res["iterations"] or r["iterations"] <= 0:
	        bad.append("%s iterations %s, its line says %s" % (r["framework"], r["iterations"], res["iterations"]))
	    if sum(r["certs"].values()) != r["regions"] or r["regions"] > len(certs):
	        bad.append("%s certificate classes %s, regions %s" % (r["framework"], r["certs"], r["regions"]))
	    if r["tasks_checked"] < 2:
	        bad.append("%s: %s tasks checked" % (r["framework"], r["tasks_checked"]))
	print("; ".join(bad) or "ok")
	EOF
}
r=$(recount)
[ "$r" = ok ] || diag "$r"
ok "columns recounted from certs.jsonl and the result lines agree: $r" [ "$r" = ok ]
ok "every mock sibling ran in both passes and saw >= 20 regions" is "$J" \
	'all(r["iterations"] > 0 and r["iterations_base"] > 0 and r["regions"] >= 20 for r in rows.values()) and len(rows) == 6' True
ok "regions aimed at a sibling's phase (a module load) landed in it" is "$J" \
	't["triggered"]["phase"] >= 1 and rows["mock-async"]["regions_in_phase"]["compile"] >= 1' True
ok "certificates came from a real krexd (siblings frozen: 6 in a clean one)" is "$J" \
	'any(json.loads(l)["cert"]["frozen"] == 6 for l in open("'"$K"'/certs.jsonl") if "cert" in l)' True
ok "the markdown table has a row per sibling and the goal line" \
	test "$(grep -cE '^\| mock-(async|sync|threads|procaddr|hostrelease|reset) \|' "$tmp/ok/harmless.md")" = 6 -a \
	"$(grep -c 'Goal.*PASS' "$tmp/ok/harmless.md")" = 1

# ---- planted faults --------------------------------------------------------------
KREX_HARMLESS_LIMIT=150 bash "$h" --mock --builddir "$top_builddir" --out "$tmp/bad" --seconds 8 \
	--min-regions 1 --check-every 1 --only mock-async \
	--plant crash,hang,wrong,exc,warn,pin,stop,undo,cert,bystander \
	>"$tmp/bad.txt" 2>"$tmp/bad.err"
rc=$?
B=$tmp/bad/harmless.json
ok "planted run: exit 1, overall FAIL" [ $rc = 1 -a "$(q "$B" 'd["overall"]')" = FAIL ]
ok "planted crash: 1 crash, by SIGABRT" is "$B" 'rows["plant-crash"]["crashes"], rows["plant-crash"]["crash"]' \
	"(1, 'killed by signal 6')"
ok "planted hang: 1 crash, hung" is "$B" 'rows["plant-hang"]["crash"]' hung
ok "planted wrong result: counted" is "$B" 'rows["plant-wrong"]["wrong"] >= 1' True
ok "planted exception: counted" is "$B" 'rows["plant-exc"]["exceptions"]' 1
ok "planted warning: exactly that line is new (the pid/address/time noise is not)" is "$B" \
	'rows["plant-warn"]["new_warning_lines"]' "['mock-async: warning: planted warning, printed only under KREX']"
ok "planted pinned thread: left pinned" is "$B" 'rows["plant-pin"]["left_pinned"] >= 1 and rows["plant-pin"]["left_frozen"] == 0' True
ok "planted stopped process: left frozen" is "$B" 'rows["plant-stop"]["left_frozen"] >= 1' True
ok "planted undo failure: 1, from krexd's log" is "$B" 't["undo_failures"]' 1
ok "planted stopped process: seen frozen 100 ms after a region ended" is "$B" 't["stuck_frozen"] >= 1' True
ok "planted certificate (clean with a late sibling): the one not honest" is "$B" 't["dishonest_n"]' 1
ok "planted pinned bystander (no participant): left pinned" is "$B" 'len(t["bystander_pinned"])' 1
ok "no false report: the unplanted sibling is clean in the same run" is "$B" \
	'[rows["mock-async"][k] for k in ("crashes", "new_warnings", "wrong", "exceptions", "errors", "left_frozen", "left_pinned")]' \
	"[0, 0, 0, 0, 0, 0, 0]"
left() {
	! pgrep -f "$tmp/" >/dev/null && ! ls /dev/shm/krex-harmless-* >/dev/null 2>&1
}
wait_for 10 left
ok "nothing left running, no simulated GPU left" left
grep -E '^\| (mock|plant)' "$tmp/bad/harmless.md" | sed 's/^/# /'
done_testing
