#!/bin/bash
# Device call 1 of session 38 (issue 18): the mover thread, side by side.
# agents.py's KREX mode over MPS at 32 sessions (then 24 while time is left),
# each N run with the new participants' moves into their cgroups on krexd's
# mover thread (the default) and on its loop (KREXD_MOVE_INLINE=1, as
# before), interleaved M I M I on one machine and one build: the rate, the
# entry (p95, its split, "other"), the participants' making on the loop and
# the moves on the thread.  Session 37's proof settings for the KREX windows
# (--scale 0.2 --window 52 --warm-s 8).  About 520 s.
. notebook/gpu-call-prologue.sh
export KREX_WL_MODULE=$B/test/workloads/fma.fatbin
. notebook/gpu-call-mps.sh
mps_start
run() { # NAME N [inline]
	local name=$1 n=$2
	st "$name"
	if [ "${3:-}" = inline ]; then export KREXD_MOVE_INLINE=1; else unset KREXD_MOVE_INLINE; fi
	timeout -k 10 100 python3 test/perf/agents.py --full --builddir "$B" --srcdir "$B" \
		--out "/tmp/o/$name" --n "$n" --modes krex --scale 0.2 --window 52 --warm-s 8 \
		--budget-s 95 >"/tmp/o/$name.txt" 2>&1
	echo "$name: rc $?" >>"$O/steps.txt"
	unset KREXD_MOVE_INLINE
}
run m32a 32
run i32a 32 inline
run m32b 32
run i32b 32 inline
if [ $(($(date +%s) - t0)) -lt 330 ]; then
	run m24 24
	run i24 24 inline
fi
mps_stop
st done
{
	for r in m32a i32a m32b i32b m24 i24; do
		[ -d "/tmp/o/$r" ] || continue
		echo "######## $r ($( [ "${r#i}" != "$r" ] && echo 'KREXD_MOVE_INLINE=1: moves on the loop' || echo 'the mover thread'))"
		tables "/tmp/o/$r" agents.md agents-breakdown.md
		L=$(ls /tmp/o/$r/agents.krex.*.krexd.log 2>/dev/null | head -1)
		[ -n "$L" ] || continue
		echo "==== krexd's log: participants made, the loop's share and the moves"
		python3 - "$L" <<'PY'
import re, sys
t = open(sys.argv[1], errors="replace").read()
made = [int(x) / 1000.0 for x in re.findall(r"\(made in (\d+) us\)", t)]
moved = [int(x) / 1000.0 for x in re.findall(r"moved in by the mover thread in (\d+) us", t)]
queued = [int(x) / 1000.0 for x in re.findall(r"after (\d+) us queued", t)]
def q(v, p):
    v = sorted(v)
    return v[min(len(v) - 1, int(p / 100.0 * len(v)))] if v else float("nan")
for name, v in (("made on the loop", made), ("moved on the thread", moved), ("queued for the thread", queued)):
    print("%-22s n %4d  p50 %7.2f ms  p90 %7.2f  max %7.2f  sum %8.1f ms" % (name, len(v), q(v, 50), q(v, 90), max(v) if v else float("nan"), sum(v)))
PY
		echo "==== entry_split.py"
		timeout 60 python3 test/perf/entry_split.py "$L" | sed -n '/^phase/,$p'
	done
} >"$O/call1.md" 2>&1
tar czf "$O/call1.tgz" -C /tmp/o $(cd /tmp/o && ls -d m32a i32a m32b i32b m24 i24 *.txt 2>/dev/null) 2>/dev/null
[ -s "$O/build.err" ] || rm -f "$O/build.err"
cat "$O/call1.md"
ls -la "$O"
