#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# The GPU proof script test/gpu/proof.sh, dry run end to end on the mock CUDA
# driver (a TEST DOUBLE; no GPU, no torch; its figures mean nothing), so that
# the one run on the H200 is not the script's first: every step runs and
# exits 0, the fidelity tables have alone interleaved with krex in rounds,
# the alone-gapped reference, the entry
# breakdown and the drain per sibling, the three entry runs and the agents are read, and the goal
# table is printed with a verdict on every line; then KREX_PROOF_PART=agents
# into the same OUT, then KREX_PROOF_PART=share (plain sharing) beside them,
# then KREX_PROOF_PART=settle (settle.sh's recovery and chained regions),
# and the part names it refuses.
. "$top_srcdir/test/lib.sh"
[ -x "$top_builddir/krexd/krexd" ] || skip_all "krexd not built"
[ -x "$top_builddir/krex/krex" ] || skip_all "krex CLI not built"
[ -x "$top_builddir/test/workloads/krex-victim" ] || skip_all "workloads not built"
command -v python3 >/dev/null || skip_all "no python3"
T=$(mktemp -d) || exit 1
trap 'rm -rf "$T"' EXIT
run_proof() {
	env KREX_GPU_MOCK=1 OUT="$T/out" \
		timeout 600 bash "$top_srcdir/test/gpu/proof.sh" "$top_builddir" >"$T/log" 2>&1
}
plan 24
ok "proof.sh runs on the mock" run_proof
sed 's/^/# /' "$T/out/env.txt" 2>/dev/null
ok "it says it is a mock run" grep -qs "^MOCK RUN" "$T/log"
ok "every step exited 0" sh -c "! grep -E '^(fidelity|entry2|entry3|agents): rc [^0]' '$T/out/env.txt'"
ok "alone and krex interleaved in 2 rounds, pooled" sh -c \
	"grep -qs '^1,alone,none,none,.*2 of 2 rounds' '$T/out/fidelity/fidelity.csv' &&
	grep -qs '^1,1,krex,all,sample,' '$T/out/fidelity/fidelity-rounds.csv'"
ok "alone-gapped rows with their gap" grep -qs "^1,alone-gapped,none,none,.*gap [0-9]* us" \
	"$T/out/fidelity/fidelity.csv"
ok "the entry breakdown per KREX row" grep -qs "^1,krex,all,sample," "$T/out/fidelity/fidelity-entry.csv"
ok "the drain per sibling per KREX mode and mix, printed" sh -c \
	"grep -qs '^krex,all,async,1,' '$T/out/fidelity/fidelity-siblings.csv' && grep -q '^## Drain per sibling' '$T/log'"
ok "the drain per role at each N (agents)" grep -qs '^[0-9]*,krex,correct,' "$T/out/agents/agents-siblings.csv"
sed -n '/^| goal/,$p' "$T/log" | sed 's/^/# /'
# the entry line of proof.md judges three runs, each with its regions
three_entries() {
	grep -qs "^| entry p95.* ([1-9][0-9]* regions).* ([1-9][0-9]* regions).* ([1-9][0-9]* regions)" "$T/out/proof.md"
}
ok "three entry runs read, each with its regions" three_entries
verdicts() { sed 1,2d "$T/out/proof.md" | grep -c ' | \(MET\|MET (.*)\|NOT MET\|NOT MET (.*)\|NOT MEASURED\|TOO FEW (.*)\) |$'; }
ok "a verdict on each of the 11 goal lines ($(verdicts))" [ "$(verdicts)" = 11 ]

# KREX_PROOF_PART=agents into the same OUT: KREX at 2, 3, 4 and the lock
# at 3, 4 in runs of their own; it replaces the agents' files of the run
# above, keeps its fidelity files, and the table judges from both.
run_agents() {
	touch "$T/out/agents/stale" "$T/out/fidelity/kept"
	env KREX_GPU_MOCK=1 KREX_PROOF_PART=agents KREX_PROOF_KREXD_OPT="sched_priority=0" OUT="$T/out" \
		timeout 300 bash "$top_srcdir/test/gpu/proof.sh" "$top_builddir" >"$T/aglog" 2>&1
}
ok "KREX_PROOF_PART=agents runs on the mock" run_agents
ok "... only its two agents steps, both exit 0" sh -c \
	"grep -q '^agents: rc 0' '$T/out/env.txt' && grep -q '^agents-cmd: rc 0' '$T/out/env.txt' &&
	 ! grep -q '^fidelity:' '$T/out/env.txt'"
ok "... KREX_PROOF_KREXD_OPT's option given to every KREX window's krexd" sh -c \
	"for f in '$T/out'/agents/agents.krex.*.krexd.log; do head -n 1 \"\$f\" | grep -q -- '-o sched_priority=0\$' || exit 1; done &&
	 grep -q '^krexd options: sched_priority=0\$' '$T/out/env.txt'"
ok "... its directories made afresh, the fidelity run's kept" sh -c \
	"[ ! -e '$T/out/agents/stale' ] && [ -e '$T/out/fidelity/kept' ]"
sed -n '/^| goal/,$p' "$T/aglog" | sed 's/^/# /'
ok "... the ratio at 3 and 4 sessions from both runs, with both runs' host pace" sh -c \
	"grep -q '^| benchmarks/h KREX vs command lock at 3 sessions, >= 4x | [0-9.]*x (KREX [0-9]*, cmd [0-9]*; host pace KREX [0-9.]*, lock [0-9.]* M loops/CPU s[;)].* | [A-Z]' '$T/out/proof.md' &&
	 grep -q '^| benchmarks/h KREX vs command lock at 4 sessions, >= 4x | [0-9.]*x (KREX [0-9]*, cmd [0-9]*; host pace KREX [0-9.]*, lock [0-9.]* M loops/CPU s[;)].* | [A-Z]' '$T/out/proof.md'"
ok "... and the entry from the fidelity run before it" three_entries
# KREX_PROOF_PART=share into the same OUT: plain sharing at 2, 3, 4 in a
# run of its own; the KREX and lock runs kept, the table puts it beside them.
run_share() {
	touch "$T/out/agents/kept"
	env KREX_GPU_MOCK=1 KREX_PROOF_PART=share OUT="$T/out" \
		timeout 300 bash "$top_srcdir/test/gpu/proof.sh" "$top_builddir" >"$T/shlog" 2>&1
}
ok "KREX_PROOF_PART=share runs on the mock" run_share
ok "... only its step, exit 0; the KREX and lock runs kept" sh -c \
	"grep -q '^agents-share: rc 0' '$T/out/env.txt' && ! grep -q '^agents:' '$T/out/env.txt' &&
	 ! grep -q '^fidelity:' '$T/out/env.txt' && [ -e '$T/out/agents/kept' ] &&
	 [ -s '$T/out/agents-cmd/agents.csv' ]"
sed -n '/^| goal/,$p' "$T/shlog" 2>/dev/null | sed 's/^/# /'
ok "... sharing beside each ratio, and KREX against sharing at 2, 3, 4" sh -c \
	"grep -q '^| benchmarks/h KREX vs command lock at 4 sessions, >= 4x | .*; plain sharing [0-9]*/h, [0-9.]*x the lock: 4x is [0-9.]* % of it) | [A-Z]' '$T/out/proof.md' &&
	 grep -q '^| KREX.s rate vs plain sharing.s (no lock, no KREX, timings not clean) at 2, 3, 4 | 2: [0-9]* % .*, 3: [0-9]* % .*, 4: [0-9]* % .* | no goal ' '$T/out/proof.md'"
# KREX_PROOF_PART=settle into the same OUT: settle.sh's modes alone, wait
# and chain (the mock NVML's power story), the rest kept; the table's settle
# line then judges from its records.
run_settle() {
	env KREX_GPU_MOCK=1 KREX_PROOF_PART=settle OUT="$T/out" \
		timeout 300 bash "$top_srcdir/test/gpu/proof.sh" "$top_builddir" >"$T/stlog" 2>&1
}
ok "KREX_PROOF_PART=settle runs on the mock" run_settle
ok "... only its step, exit 0, its three modes' records; the other runs kept" sh -c \
	"grep -q '^settle: rc 0' '$T/out/env.txt' && ! grep -q '^agents' '$T/out/env.txt' &&
	 for m in alone wait chain; do [ -s '$T/out/settle/'\$m.jsonl ] || exit 1; done &&
	 [ -s '$T/out/agents-cmd/agents.csv' ]"
sed -n '/^| goal/,$p' "$T/stlog" 2>/dev/null | sed 's/^/# /'
ok "... the settle line judged from them (chained regions, each region's recovery watch), the others still read" sh -c \
	"grep -q '^| settle beside .* | [0-9]* regions of two owners back to back, [1-9][0-9]* chained, .*; chain, the owner.s NVML watch: [0-9]* of [0-9]* regions settled.*; wait, the owner.s NVML watch: [0-9]* of 4 regions settled; .* | [A-Z]' '$T/out/proof.md' &&
	 grep -q '^| KREX.s rate vs plain sharing.s' '$T/out/proof.md'"
wrong_part() {
	for p in fid all,share share,share fidelity,,share share, ; do
		KREX_PROOF_PART=$p bash "$top_srcdir/test/gpu/proof.sh" "$top_builddir" >/dev/null 2>"$T/wp"
		[ $? = 1 ] && grep -q "KREX_PROOF_PART must be all, or fidelity, agents, share and settle joined by commas, each once (got '$p')" "$T/wp" ||
			{ diag "KREX_PROOF_PART=$p: not refused as expected"; return 1; }
	done
}
ok "a wrong KREX_PROOF_PART (unknown, all with another, twice, empty, trailing comma): exit 1, said" wrong_part
wrong_opt() {
	KREX_PROOF_KREXD_OPT="sched_priority=1 bogus" bash "$top_srcdir/test/gpu/proof.sh" "$top_builddir" \
		>/dev/null 2>"$T/wo"
	[ $? = 1 ] && grep -q "KREX_PROOF_KREXD_OPT: 'bogus' is not KEY=VALUE" "$T/wo"
}
ok "a KREX_PROOF_KREXD_OPT word that is not KEY=VALUE: exit 1, said" wrong_opt
done_testing
