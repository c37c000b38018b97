#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# A private krexd killed in the middle of a region (kill -9, as the OOM
# killer does) leaves no job stopped (issue 20, item 4): each `krex run`
# watches its krexd (a pidfd) and undoes the freeze of its own job from
# the state file at once.  Under both freezers embedded mode can use: the
# signal freezer (a user's private krexd) and the node's cgroup freezer
# (root's: cgroup v1 here, v2 where /sys/fs/cgroup is cgroup2).  RUNS (5;
# KREX_KILL_RUNS) kills per freezer, each with two fresh siblings frozen by
# a region: both must run again (their counters move); how long that took
# after the kill is reported (the goal is 1 s; the wait's deadline only
# guards against a hang).
. "$top_srcdir/test/lib.sh"
. "$top_srcdir/test/integration/embedded-lib.sh"
need_root
emb_setup
RUNS=${KREX_KILL_RUNS:-5}
# a freeze slowed by a loaded host must still end frozen (the kill is what is tested)
echo "freeze_timeout = 30s" >>"$EMB_DIR/krexd.conf"
# A second wrapper: the same private krexd with the freezer krexd picks (a cgroup one as root).
sed 's/ -o freezer=signal//' "$EMB_DIR/krexd-wrap" >"$EMB_DIR/krexd-wrap-cg"
chmod 755 "$EMB_DIR/krexd-wrap-cg"

now_ms() { echo $(($(date +%s%N) / 1000000)); }

# sib N: a `krex run` whose loop writes its pid, then a counter every 10 ms
# (its stdout not ours: one_kill's output is read through a pipe).
sib() {
	"$KREX" run --no-gate -- sh -c "echo \$\$ >'$EMB_DIR/s$1.pid'; i=0; while [ ! -e '$EMB_DIR/stop' ]; do i=\$((i+1)); echo \$i >'$EMB_DIR/s$1.n'; sleep 0.01; done" \
		>/dev/null 2>"$EMB_DIR/s$1.err" &
}

# 1 if the loop of sibling N is stopped or frozen now (signal: state T, or
# D with a SIGSTOP pending: dash waits in vfork for a child stopped before
# its exec, and krexd counts it stopped; cgroup v1: freezer.state not
# THAWED; v2: cgroup.events frozen 1).
held() {
	local p cg st
	p=$(cat "$EMB_DIR/s$1.pid" 2>/dev/null) || return 1
	grep -q '^State:.*T (stopped)' "/proc/$p/status" 2>/dev/null && return 0
	if grep -q '^State:.*D ' "/proc/$p/status" 2>/dev/null; then
		for st in $(sed -n 's/^\(SigPnd\|ShdPnd\):[[:space:]]*//p' "/proc/$p/status" 2>/dev/null); do
			[ $((0x$st & 0x40000)) != 0 ] && return 0 # SIGSTOP (19) pending
		done
	fi
	cg=$(sed -n 's/^[0-9]*:freezer:\(.*\)/\1/p' "/proc/$p/cgroup" 2>/dev/null)
	st=$(cat "/sys/fs/cgroup/freezer$cg/freezer.state" 2>/dev/null) # the root has none
	[ -n "$st" ] && [ "$st" != THAWED ] && return 0
	cg=$(sed -n 's/^0::\(.*\)/\1/p' "/proc/$p/cgroup" 2>/dev/null)
	[ -n "$cg" ] && grep -qx 'frozen 1' "/sys/fs/cgroup$cg/cgroup.events" 2>/dev/null
}
both_held() { held 1 && held 2; }
# Both run: neither held, and each counter moved past what it read at the kill.
moved() { [ "$(cat "$EMB_DIR/s$1.n" 2>/dev/null)" != "$2" ] && ! held "$1"; }
both_run() { moved 1 "$N1" && moved 2 "$N2"; }

# one_kill FREEZER: siblings, a region that freezes them, kill -9 of krexd
# mid-region; prints the ms until both ran again, or "hang".
one_kill() {
	local k t0 t1 r why=
	rm -f "$EMB_DIR"/s[12].* "$EMB_DIR/stop" "$EMB_DIR/granted" "$EMB_DIR/region.pid"
	sib 1
	sib 2
	wait_for 30 sh -c "[ -s '$EMB_DIR/s1.n' ] && [ -s '$EMB_DIR/s2.n' ]" || { echo "no-siblings"; return; }
	"$KREX" region -- sh -c "echo \$\$ >'$EMB_DIR/region.pid'; touch '$EMB_DIR/granted'; exec sleep 60" >/dev/null 2>&1 &
	r=$!
	if ! wait_for 30 test -e "$EMB_DIR/granted"; then
		why=no-region
	elif ! wait_for 10 both_held; then
		# (waited on: a loop that krexd counted stopped while in vfork's D
		# with SIGSTOP pending runs in the kernel, neither T nor D, between
		# the vfork's end and the stop; a loaded host can show that moment)
		why=not-frozen
	elif ! k=$(emb_pid); then
		why=no-krexd
	fi
	if [ -n "${why:-}" ]; then
		echo "$why"
		touch "$EMB_DIR/stop"
		kill "$r" "$(cat "$EMB_DIR/region.pid" 2>/dev/null)" 2>/dev/null
		wait 2>/dev/null
		return
	fi
	N1=$(cat "$EMB_DIR/s1.n") N2=$(cat "$EMB_DIR/s2.n")
	t0=$(now_ms)
	kill -KILL "$k"
	if wait_for 30 both_run; then
		t1=$(now_ms)
		echo $((t1 - t0))
	else
		echo hang
	fi
	# 1 s after the kill: anything still held?
	while [ $(($(now_ms) - t0)) -lt 1000 ]; do sleep 0.05; done
	if held 1 || held 2; then echo "held-1s" >>"$EMB_DIR/held"; fi
	touch "$EMB_DIR/stop"
	# the region's command too: its krex region may have gone with its krexd
	kill "$r" "$(cat "$EMB_DIR/region.pid" 2>/dev/null)" 2>/dev/null
	wait 2>/dev/null
	grep -h 'krexd (pid' "$EMB_DIR"/s[12].err >>"$EMB_DIR/warnings"
}

cg_kind() {
	[ -f /sys/fs/cgroup/cgroup.controllers ] && echo cgroup2 && return
	[ -w /sys/fs/cgroup/freezer/cgroup.procs ] && echo cgroup1 && return
	echo none
}
CG=$(cg_kind)
plan 6
for fz in signal "$CG"; do
	if [ "$fz" = none ]; then
		skip "cgroup freezer: every sibling runs again after each kill" "no cgroup freezer here"
		skip "cgroup freezer: none held 1 s after a kill" "no cgroup freezer here"
		skip "cgroup freezer: each job said what it undid" "no cgroup freezer here"
		continue
	fi
	emb_fresh "x-$fz"
	[ "$fz" = signal ] && export KREX_KREXD=$EMB_DIR/krexd-wrap || export KREX_KREXD=$EMB_DIR/krexd-wrap-cg
	: >"$EMB_DIR/held"
	: >"$EMB_DIR/warnings"
	times="" bad=0
	for i in $(seq "$RUNS"); do
		t=$(one_kill)
		times="$times $t"
		case $t in *[!0-9]*) bad=$((bad + 1)) ;; esac
	done
	"$KREX" status >/dev/null 2>&1 # nothing: every krexd was killed
	sorted=$(echo $times | tr ' ' '\n' | grep -x '[0-9]*' | sort -n | tr '\n' ' ')
	diag "$fz: ms from kill -9 to both siblings running again, sorted: $sorted(other: $(echo $times | tr ' ' '\n' | grep -vx '[0-9]*' | sort | uniq -c | tr '\n' ' '))"
	ok "$fz: every sibling runs again after each of $RUNS kills ($bad did not, or the region did not freeze them)" [ "$bad" = 0 ]
	ok "$fz: none held 1 s after a kill ($(wc -l <"$EMB_DIR/held") runs left some)" [ ! -s "$EMB_DIR/held" ]
	ok "$fz: each job said what it undid ($(sort "$EMB_DIR/warnings" | sed 's/.*: \([0-9]* process.*\)/\1/' | uniq -c | head -2 | tr '\n' ';'))" \
		[ "$(grep -c 'died in a region' "$EMB_DIR/warnings")" = $((2 * RUNS)) ]
done
done_testing
