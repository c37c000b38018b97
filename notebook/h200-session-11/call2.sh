#!/bin/bash
# Device call 2 of session 11 (issue 18), the tree of 7e09fa1 (the process
# list and the nominal clocks on krexd's thread):
#  - test/perf/nvml-calls.py on the idle GPU: each NVML call krexd makes;
#  - test/gpu/proof.sh: issue 18's table, with nvml-calls.py every 40 s
#    alongside (the GPU and CPU as busy as the proof makes them);
#  - entry (1 ms, per sample, every sibling) with krexd's default
#    scheduling and with sched_priority = 1 (nice -20 there), interleaved,
#    as long as the call has time.
. notebook/gpu-call-prologue.sh
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,power.draw,temperature.gpu --format=csv; } >"$O/env.txt" 2>&1
left() { echo $((540 - ($(date +%s) - t0))); }
st nvml-idle
timeout 60 python3 test/perf/nvml-calls.py --reps 200 --label idle >"$O/nvml-calls.txt" 2>&1
st proof
(
	for i in 1 2 3 4 5 6 7 8; do
		sleep 40
		timeout 30 python3 test/perf/nvml-calls.py --reps 50 --label "proof, $((i * 40)) s in" >>/tmp/o/nvml-busy.txt 2>&1
	done
) </dev/null >/dev/null 2>&1 &
NB=$!
OUT=/tmp/o/proof timeout -k 5 330 bash test/gpu/proof.sh "$B" >/tmp/o/proof.txt 2>&1
echo "rc=$?" >>/tmp/o/proof.txt
kill "$NB" 2>/dev/null
cp /tmp/o/proof.txt "$O/proof.txt"; cp /tmp/o/proof/proof.md "$O/proof.md" 2>/dev/null
cp /tmp/o/nvml-busy.txt "$O/nvml-busy.txt" 2>/dev/null
# entry NAME [krexd-opt...]
entry() {
	local name=$1
	shift
	st "entry $name $*"
	timeout -k 5 45 python3 test/perf/fidelity.py --full --builddir "$B" --srcdir "$PWD" \
		--out "/tmp/o/$name" --sizes 1 --samples 1:300 --mixes all --sample-mixes all --modes krex \
		--regions sample --budget-s 35 --krexd-opt settle=wait "$@" >"/tmp/o/$name.txt" 2>&1
	echo "rc=$?" >>"/tmp/o/$name.txt"
	{
		echo "==== $name $*"
		tail -n +5 "/tmp/o/$name/fidelity-entry.md" 2>/dev/null | head -2 | cut -c1-220
		for l in /tmp/o/$name/*.krexd.log; do
			[ -f "$l" ] && grep -o "scheduling [a-z -]*[0-9]*" "$l" | head -1
		done
	} >>"$O/entry.md"
}
n=0
while [ "$(left)" -gt 70 ] && [ $n -lt 6 ]; do
	n=$((n + 1))
	if [ $((n % 2)) = 1 ]; then entry "e$n-default"; else entry "e$n-sched1" --krexd-opt sched_priority=1; fi
done
st done
tar czf "$O/detail.tgz" -C /tmp/o --exclude='*.fatbin' --exclude='*.fatbin.*' --exclude='*.jsonl' proof $(cd /tmp/o && ls -d e[0-9]* 2>/dev/null) 2>/dev/null
ls -la "$O/detail.tgz"
cat "$O/nvml-calls.txt"
grep -A9 "NVML calls" "$O/nvml-busy.txt" 2>/dev/null | head -44
echo "---- proof"; sed -n '/| goal |/,$p' /tmp/o/proof.txt | head -20
echo "---- entry"; cat "$O/entry.md"
cat "$O/steps.txt"
