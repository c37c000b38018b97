#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# fault-matrix-slurm.sh [RUNS] - the fault matrix's Slurm cases, each RUNS
# times (default 100) per proctrack mode (MODES, default "cgroup linuxproc":
# the step's cgroup v1 freezer, or signals), on a private one-node cluster
# (test/slurm/cluster.sh; ports, node names and job ids unique to this pid).
# Needs root and Slurm; run from the build tree.
#
# Cases (CASES selects), each mid-region: a --krex-shared job holds a region
# (krex region -- sleep) while two --krex-shared counter jobs on the same GPU
# are frozen by it (checked: their counters stand), then
#   scancel          the owner job is cancelled;
#   slurmd_restart   slurmd is stopped (SIGTERM: its SPANK exit stops krexd)
#                    and started again (a new krexd), the owner still holding;
#   slurmd_kill      slurmd is SIGKILLed (krexd and the jobs stay) and started
#                    again, then the owner job is cancelled.
# After every run: no process of the cluster's jobs stopped (state T) or
# pinned (its CPU list changed since before the region), no freezer cgroup
# of the cluster or krexd FROZEN, no participant FROZEN or GATED in krexd's
# STATUS, the gate page open, and the siblings' counters move again.
# Prints one table line per case and mode (markdown, for doc/security.md)
# and exits 1 if anything was left.
: "${top_srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}"
: "${top_builddir:=$top_srcdir}"
export top_srcdir top_builddir
. "$top_srcdir/test/lib.sh"
. "$top_srcdir/test/slurm/cluster.sh"
. "$top_srcdir/test/slurm/checks.sh"
RUNS=${1:-100}
MODES=${MODES:-cgroup linuxproc}
cluster_check || {
	echo "fault-matrix-slurm: $CLUSTER_WHY"
	exit 2
}
why=$(regions_why)
[ -z "$why" ] || {
	echo "fault-matrix-slurm: $why"
	exit 2
}

TESTCLIENT=$top_builddir/test/integration/krex-testclient
[ -x "$TESTCLIENT" ] || {
	echo "fault-matrix-slurm: $TESTCLIENT not built"
	exit 2
}

# ---- the cluster's job processes ----

# fs_job_pids JOB: the processes of JOB (they carry its id and this
# cluster's SLURM_CONF in their environment; slurmstepd too).
fs_job_pids() {
	local e p env
	for e in /proc/[0-9]*/environ; do
		p=${e#/proc/}
		p=${p%/environ}
		env=$({ tr '\0' '\n' <"$e"; } 2>/dev/null) || continue
		echo "$env" | grep -qx "SLURM_CONF=$KC_DIR/slurm.conf" &&
			echo "$env" | grep -qx "SLURM_JOB_ID=$1" && echo "$p"
	done
}

fs_cpus() { sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' "/proc/$1/status" 2>/dev/null; }

# fs_siblings: two counter jobs on the GPU, running and counting; their
# processes' CPU lists recorded (in $KC_DIR/work/cpus.JOB.PID).
SIBS=""
fs_siblings() {
	local s j p
	rm -f "$(W c1)" "$(W c2)" "$KC_DIR"/work/cpus.*
	SIBS=""
	for s in c1 c2; do
		j=$(counter_job "$(W $s)" --krex-shared) || return 1
		SIBS="$SIBS $j"
	done
	counter_moves "$(W c1)" && counter_moves "$(W c2)" || {
		diag "siblings do not count: $(krun squeue -h -o '%i %T %r' | tr '\n' ' ')"
		return 1
	}
	for j in $SIBS; do
		for p in $(fs_job_pids "$j"); do fs_cpus "$p" >"$KC_DIR/work/cpus.$j.$p"; done
	done
}

fs_cancel_siblings() {
	local j
	for j in $SIBS; do krun scancel "$j" 2>/dev/null; done
	for j in $SIBS; do kwait 15 kjob_done "$j"; done
	SIBS=""
}

# fs_region: the owner job (its id in OWNER) holds a region (krex region --
# sleep 60) and the siblings stand.
OWNER=""
fs_region() {
	rm -f "$(W holding)"
	OWNER=$(ksbatch --krex-shared --gres=shard:1 -o "$(W hold.log)" "$(W hold.sh)") || return 1
	kwait 30 test -e "$(W holding)" || {
		diag "no region within 30 s: $(krun squeue -h -o "%i %T %r" | tr "\n" " ") $(krex_status | tr "\n" " ")"
		return 1
	}
	counter_stands "$(W c1)" 0.3 && counter_stands "$(W c2)" 0.3 || {
		diag "siblings not frozen in the region: $(krex_status | tr '\n' ' ')"
		return 1
	}
}

# fs_slurmd_start: slurmd of the node again, and wait for the node and krexd.
fs_slurmd_start() {
	local n
	for n in $KC_NODES; do
		setsid slurmd -D -N "$n" -f "$KC_DIR/slurm.conf" >>"$KC_DIR/slurmd-$n.out" 2>&1 &
		KC_SLURMD_PIDS="$KC_SLURMD_PIDS $!"
		KC_PIDS="$KC_PIDS $!"
	done
	kwait 30 cluster_up || { diag "node not up after the slurmd restart"; return 1; }
	kwait 10 krex_status >/dev/null || { diag "no krexd after the slurmd restart"; return 1; }
}

# fs_slurmd_stop SIG: stop slurmd with SIG (TERM: its SPANK exit stops krexd).
fs_slurmd_stop() {
	local p i
	for p in $KC_SLURMD_PIDS; do
		kill -"$1" "$p" 2>/dev/null
		for i in $(seq 500); do kill -0 "$p" 2>/dev/null || break; sleep 0.02; done
		kill -KILL "$p" 2>/dev/null
		wait "$p" 2>/dev/null
	done
	KC_SLURMD_PIDS=""
}

# ---- the cases (one run each; fail = the fault did not hit mid-region) ----
# fs_end_owner: cancel the owner job and wait until it and its region are gone.
fs_end_owner() {
	[ -n "$OWNER" ] || return 0
	krun scancel "$OWNER" 2>/dev/null
	kwait 15 kjob_done "$OWNER"
	OWNER=""
}
case_scancel() {
	fs_region || { fs_end_owner; return 1; }
	fs_end_owner
}
case_slurmd_restart() {
	fs_region || { fs_end_owner; return 1; }
	fs_slurmd_stop TERM
	fs_slurmd_start
	fs_end_owner
}
case_slurmd_kill() {
	fs_region || { fs_end_owner; return 1; }
	fs_slurmd_stop KILL
	fs_slurmd_start
	fs_end_owner
}

# ---- the checks ----
left=""
fs_check() {
	local bad=0 j p f st cpus
	for j in $SIBS; do
		for p in $(fs_job_pids "$j"); do
			st=$(awk '{print $3}' "/proc/$p/stat" 2>/dev/null)
			[ "$st" = T ] && { left="$left stopped:$p"; bad=1; }
			f=$KC_DIR/work/cpus.$j.$p
			cpus=$(fs_cpus "$p")
			[ -f "$f" ] && [ -n "$cpus" ] && [ "$cpus" != "$(cat "$f")" ] &&
				{ left="$left pinned:$p:$cpus"; bad=1; }
		done
	done
	check_none_frozen || { left="$left frozen-cgroup"; bad=1; }
	# STATUS in krex-testclient's key=value form (krex's table has no state numbers)
	if KREX_SOCKET=$KC_DIR/run/$KC_NODES/krexd.sock "$TESTCLIENT" status >"$KC_DIR/fs.status" 2>&1; then
		grep -Eq 'state=[1-3] ' "$KC_DIR/fs.status" && { left="$left status-frozen-or-gated"; bad=1; }
	else
		left="$left no-status"
		bad=1
	fi
	f=$KC_DIR/run/$KC_NODES/gate
	[ ! -f "$f" ] || [ "$(od -An -tu4 -j 32 -N 4 "$f" | tr -d ' ')" = 0 ] ||
		{ left="$left gate-closed"; bad=1; }
	counter_moves "$(W c1)" && counter_moves "$(W c2)" || { left="$left siblings-stand"; bad=1; }
	return $bad
}

echo "| case | proctrack | runs | left frozen, gated, stopped or pinned | faults not mid-region | s per run |"
echo "| --- | --- | --- | --- | --- | --- |"
rc=0
for MODE in $MODES; do
	KC_PIDS=""
	KC_SLURMD_PIDS=""
	cluster_start "$MODE" 1 || {
		echo "| - | $MODE | 0 | cluster did not start: $CLUSTER_WHY | | |"
		rc=1
		cluster_stop
		continue
	}
	cat >"$(W hold.sh)" <<EOS
#!/bin/sh
exec $KREX_CLI region -- sh -c 'touch $(W holding); sleep 60'
EOS
	chmod 755 "$(W hold.sh)"
	for CASE in ${CASES:-scancel slurmd_restart slurmd_kill}; do
		bad=0
		miss=0
		left=""
		t0=$(date +%s)
		fs_siblings || { echo "| $CASE | $MODE | 0 | siblings did not start | | |"; rc=1; continue; }
		for i in $(seq 1 "$RUNS"); do
			"case_$CASE" || miss=$((miss + 1))
			fs_check || bad=$((bad + 1))
			# new siblings: a new krexd does not know the old ones, and the
			# partition's MaxTime (10 min) would end them (counted as "stand")
			if [ "$CASE" = slurmd_restart ] || [ $((i % 20)) = 0 ]; then
				fs_cancel_siblings && fs_siblings
			fi
		done
		fs_cancel_siblings
		echo "| $CASE | $MODE | $RUNS | $bad${left:+ ($(echo $left | cut -c1-80))} | $miss | $((($(date +%s) - t0) / RUNS)) |"
		[ "$bad" = 0 ] && [ "$miss" = 0 ] || rc=1
	done
	cluster_stop
done
exit $rc
