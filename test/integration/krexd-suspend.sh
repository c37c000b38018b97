#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Someone else's suspend composed with KREX's freeze (what Slurm's
# `scontrol suspend`, PreemptMode=SUSPEND and gang scheduling do):
#  - a sibling stopped with SIGSTOP by a third party (proctrack/linuxproc),
#    with every freezer this node has;
#  - a sibling in a v1 freezer cgroup of its own that a third party freezes
#    and thaws (proctrack/cgroup writes the step's freezer.state), before,
#    during and after a region;
#  - the same with cgroup v2 on a Slurm-like tree (job/step/user/task_0,
#    the third party writing user/cgroup.freeze as Slurm's cgroup/v2 does),
#    when a cgroup2 hierarchy is mounted.
# Each must cost the region no drain timeout, stay suspended until both
# KREX and the third party let it go, and never run inside a region.
. "$top_srcdir/test/lib.sh"
. "$top_srcdir/test/integration/krexd-lib.sh"

V1=/sys/fs/cgroup/freezer
V2=$(awk '$9 == "cgroup2" { print $5; exit }' /proc/self/mountinfo)
EXT1=$V1/krex-test-ext$$
EXT2=${V2:-/nonexistent}/krex-test-ext$$

# The third party's cgroups: thawed before the processes are killed, removed after.
ext_thaw() {
	[ -d "$EXT1" ] && echo THAWED >"$EXT1/freezer.state" 2>/dev/null
	[ -d "$EXT2" ] && echo 0 >"$EXT2/job/step/user/cgroup.freeze" 2>/dev/null
	[ -d "$EXT2" ] && echo 0 >"$EXT2/job/step/user/task_0/cgroup.freeze" 2>/dev/null
	return 0
}
ext_rm() {
	[ -d "$EXT1" ] && rmdir "$EXT1" 2>/dev/null
	[ -d "$EXT2" ] && for d in job/step/user/task_0 job/step/user job/step/slurm job/step job; do
		rmdir "$EXT2/$d" 2>/dev/null
	done
	[ -d "$EXT2" ] && rmdir "$EXT2" 2>/dev/null
	return 0
}

kt_setup
trap 'ext_thaw; kt_cleanup; ext_rm' EXIT
kt_conf "gpus = g0" "drain_timeout = 2s"

cert() { kt_field "$KT_DIR/owner.out" "$1"; }
# No drain timeout: the drain ended before drain_timeout (2 s), nobody late.
# (Not "well under" it: a drain on a loaded host may take a second.)
no_timeout() {
	local d
	d=$(cert drain_us)
	diag "drain_us=$d late=$(cert late) frozen=$(cert frozen) outcome=$(cert outcome) note=$(cert note)"
	[ -n "$d" ] && [ "$d" -lt 2000000 ] && [ "$(cert late)" = 0 ]
}
note_names() { cert note | grep -q "$1"; }
outcome_is() { [ "$(cert outcome)" = "$1" ]; }
# region HOLD_MS: one region, in the foreground, certificate in owner.out
region() { "$CLIENT" region --gpus g0 --hold-ms "$1" >"$KT_DIR/owner.out" 2>&1; }
region_bg() { kt_bg owner "$CLIENT" region --gpus g0 --hold-ms "$1" && wait_for 10 grep -qs granted "$KT_DIR/owner.out"; }
region_done() { wait_for 10 grep -qs '^outcome=' "$KT_DIR/owner.out"; }
pstate() { sed 's/.*) \(.\).*/\1/' "/proc/$1/stat" 2>/dev/null; }
is_stopped() { [ "$(pstate "$1")" = T ]; }
v1_is() { grep -q "^$1" "$EXT1/freezer.state"; }
s_cpu() { cut -d' ' -f1 "/proc/$s/schedstat" 2>/dev/null || echo 0; }
s_moves() {
	local a i
	a=$(s_cpu)
	for i in $(seq 20); do
		sleep 0.1
		[ "$(s_cpu)" != "$a" ] && return 0
	done
	diag "s: CPU time $(s_cpu) ns, cgroup $(cat "/proc/$s/cgroup" 2>&1 | tr '\n' ' ') state $(pstate "$s")"
	return 1
}
# gone_in_region PID: PID exits while the region (owner.out) is still held.
gone_in_region() {
	wait_for 10 kt_gone "$1" || return 1
	! grep -qs '^outcome=' "$KT_DIR/owner.out" || { diag "the region ended before $1 exited"; return 1; }
}
# draining: krexd holds the region (status: held) and has not granted it.
draining() {
	"$CLIENT" status 2>/dev/null | grep -qs '^region .*state=held' && ! grep -qs granted "$KT_DIR/owner.out"
}
v2_frozen() { grep -q '^frozen 1' "$EXT2/job/step/user/task_0/cgroup.events"; }

freezers=$(kt_freezers)
n=0
for f in $freezers; do n=$((n + 5)); done
v1=0
[ "$(id -u)" = 0 ] && [ -w "$V1/cgroup.procs" ] && v1=1 && n=$((n + 31))
v2=0
[ "$(id -u)" = 0 ] && [ -n "$V2" ] && [ -w "$V2/cgroup.procs" ] && v2=1 && n=$((n + 11))
plan $n

# ---- a sibling stopped by a third party (SIGSTOP) ----
for f in $freezers; do
	krexd_start -o freezer=$f || diag "$f: krexd did not start"
	kt_participant a --gpus g0 --ack-drains
	kill -STOP "$a"
	wait_for 5 is_stopped "$a"
	region 300
	ok "$f: a sibling stopped by a third party costs the region no drain timeout" no_timeout
	ok "$f: the certificate names the stopped sibling (its GPU work was not drained)" note_names "suspended"
	ok "$f: it is still stopped after the region (KREX did not continue it)" is_stopped "$a"
	kill -CONT "$a"
	ok "$f: it runs once the third party continues it" kt_progress a
	# Continued again: an ordinary sibling, drained and frozen, clean.
	region 200
	ok "$f: the next region drains and freezes it as usual, clean" outcome_is clean
	kill -KILL "$a" 2>/dev/null
	wait "$a" 2>/dev/null
	krexd_stop
done

# ---- a sibling in a v1 freezer cgroup of its own, frozen by a third party ----
if [ "$v1" = 1 ]; then
	mkdir -p "$EXT1"
	krexd_start -o freezer=cgroup1 || diag "cgroup1: krexd did not start"
	# Killed (scancel under proctrack/linuxproc: SIGKILL) while a region
	# holds it frozen: a task frozen in a v1 cgroup cannot die, so krexd
	# thaws it; it exits long before the region ends.
	kt_participant e --gpus g0 --ack-drains
	region_bg 3000
	kill -KILL "$e"
	ok "v1: a sibling killed while a region holds it frozen exits before the region ends" \
		gone_in_region "$e"
	region_done
	ok "v1: ... and the certificate says so" note_names "killed during the region"
	wait "$e" 2>/dev/null
	kt_participant b --gpus g0 --ack-drains --enter "$EXT1" --cgroup "$EXT1"
	ok "v1: the sibling runs in the third party's cgroup" kt_progress b

	# Suspended before the region.
	echo FROZEN >"$EXT1/freezer.state"
	wait_for 5 v1_is FROZEN
	region 300
	ok "v1: frozen by a third party at entry: no drain timeout" no_timeout
	ok "v1: the certificate names it (suspended moments ago, its GPU work not drained)" note_names "suspended"
	ok "v1: KREX left it frozen after the region" v1_is FROZEN
	ok "v1: and it does not run" kt_stalled b

	# Suspended for longer than drain_timeout: its GPU work had the time a drain gets.
	v1_is FROZEN || diag "not frozen before the long suspension"
	sleep 2.2
	region 200
	ok "v1: suspended for longer than drain_timeout: no drain timeout" no_timeout
	ok "v1: ... and the region is clean" outcome_is clean

	# Resumed by the third party while a region is held: it stays frozen.
	region_bg 1500
	echo THAWED >"$EXT1/freezer.state"
	# (it runs from that write until krexd's FROZEN: microseconds idle, more
	# under load; the check starts once krexd has frozen it again)
	wait_for 5 v1_is FROZEN || diag "krexd did not freeze it again"
	ok "v1: resumed by the third party inside the region, it does not run there" kt_stalled b
	region_done
	ok "v1: the certificate says it was resumed during the region" note_names "resumed"
	ok "v1: it runs after the region" kt_progress b

	# Running at entry, suspended during the region: KREX must not thaw it at the end.
	region_bg 800
	echo FROZEN >"$EXT1/freezer.state"
	region_done
	ok "v1: suspended by the third party during a region: still frozen after it" v1_is FROZEN
	ok "v1: ... and does not run" kt_stalled b
	echo THAWED >"$EXT1/freezer.state"
	ok "v1: it runs when the third party resumes it" kt_progress b

	# Running at entry, suspended and resumed during the region: frozen to the end.
	region_bg 1500
	echo FROZEN >"$EXT1/freezer.state"
	sleep 0.1
	echo THAWED >"$EXT1/freezer.state"
	# (it runs from that write until krexd's FROZEN, microseconds on an idle host)
	wait_for 5 v1_is FROZEN || diag "krexd did not freeze it again"
	ok "v1: suspended and resumed inside the region, it does not run there" kt_stalled b
	region_done
	# v1 has one freezer.state for both: the third party's THAWED thaws it
	# until krexd, woken by the write, freezes it again (microseconds).
	ok "v1: the certificate says it was resumed during the region" note_names "resumed"
	ok "v1: it runs after the region" kt_progress b
	# Right after that: a thaw whose O_TRUNC comes 0.3 s before its write.
	# The close of the resume's write, read while krexd froze it again, is
	# that write's: it must not make this O_TRUNC (the file still FROZEN)
	# look like a whole write, a suspend.  Left to run.
	region_bg 1500
	exec 3>"$EXT1/freezer.state"
	sleep 0.3
	echo THAWED >&3
	exec 3>&-
	ok "v1: a slow thaw after a resume krexd answered: left to run" kt_progress b
	region_done
	ok "v1: ... and the certificate says so" note_names "left to run"
	# Thawed by the third party while only KREX froze it: not a resume (Slurm
	# resumes only what it suspended) but the start of a kill (THAWED, then
	# SIGKILL: a frozen task cannot die) or an administrator's thaw: left
	# thawed, and the certificate says so.
	region_bg 1500
	echo THAWED >"$EXT1/freezer.state"
	ok "v1: thawed by a third party that had not suspended it: left to run" kt_progress b
	region_done
	ok "v1: ... and the certificate says so" note_names "left to run"
	# The same thaw by a shell: `echo THAWED > freezer.state` opens with
	# O_TRUNC (an event of its own, while the file still says FROZEN), then
	# writes; here 0.3 s apart, as on a loaded host.  The truncation is no
	# suspend: left to run all the same.
	region_bg 1500
	exec 3>"$EXT1/freezer.state"
	sleep 0.3
	echo THAWED >&3
	exec 3>&-
	ok "v1: the thaw's O_TRUNC 0.3 s before its write is not read as a suspend: left to run" kt_progress b
	region_done
	ok "v1: ... and the certificate says so" note_names "left to run"
	# A suspend by a writer that truncated first and keeps the file open
	# (no close to say its write is whole): still a suspend.
	region_bg 1200
	exec 3>"$EXT1/freezer.state"
	sleep 0.3
	echo FROZEN >&3
	region_done
	exec 3>&-
	ok "v1: suspended by a slow shell during a region (O_TRUNC, then FROZEN, file kept open): still frozen after it" v1_is FROZEN
	ok "v1: ... and does not run" kt_stalled b
	echo THAWED >"$EXT1/freezer.state"
	ok "v1: ... and runs when resumed" kt_progress b
	# Slurm's kill of a suspended sibling inside a region: THAWED (krexd
	# freezes it again: a resume, for all it knows), then SIGKILL: krexd
	# sees the pending SIGKILL and lets it go, it dies before the region ends.
	echo FROZEN >"$EXT1/freezer.state"
	wait_for 5 v1_is FROZEN
	region_bg 3000
	echo THAWED >"$EXT1/freezer.state"
	kill -KILL "$b"
	ok "v1: killed while suspended, inside a region: it exits before the region ends" \
		gone_in_region "$b"
	region_done
	wait "$b" 2>/dev/null
	echo THAWED >"$EXT1/freezer.state"

	# Suspended while the region waits for its drain (it never acknowledges):
	# the region stops waiting for it at once.
	kt_participant d --gpus g0 --gate-noack --enter "$EXT1" --cgroup "$EXT1"
	kt_bg owner "$CLIENT" region --gpus g0 --hold-ms 100
	# (frozen once krexd is seen draining: status holds the region, no grant)
	wait_for 10 draining || diag "the region was not seen draining"
	echo FROZEN >"$EXT1/freezer.state"
	region_done
	ok "v1: suspended by the third party during the drain: no drain timeout" no_timeout
	ok "v1: ... and the certificate says so" note_names "during the drain"
	krexd_stop
	ok "v1: krexd stopped, it leaves the third party's freeze alone" v1_is FROZEN
	echo THAWED >"$EXT1/freezer.state"
	kill -KILL "$d" 2>/dev/null
	wait "$d" 2>/dev/null
fi

# ---- cgroup v2: a Slurm-like step tree, the third party freezing user/ ----
if [ "$v2" = 1 ]; then
	mkdir -p "$EXT2/job/step/slurm" "$EXT2/job/step/user/task_0"
	krexd_start -o freezer=cgroup2 || diag "cgroup2: krexd did not start"
	# Registered with the step's cgroup, as the SPANK plugin does.
	kt_bg c "$CLIENT" participant --counter "$KT_DIR/c.count" --gpus g0 --ack-drains \
		--enter "$EXT2/job/step/user/task_0" --cgroup "$EXT2/job/step"
	wait_for 5 grep -qs registered "$KT_DIR/c.out"
	ok "v2: the sibling runs in task_0" kt_progress c
	# slurmstepd's place in a v2 step (step/slurm): never frozen.
	# (it runs a busy loop; "runs" is read from its CPU time in
	# /proc/PID/schedstat: a counter file it rewrote was read empty, between
	# the truncate and the write, on a loaded host)
	kt_bg s sh -c "echo \$\$ > $EXT2/job/step/slurm/cgroup.procs && while :; do :; done"
	region_bg 3000
	# (up to 2 s to see it move, on a loaded host; the region holds 3 s)
	ok "v2: a process in the step's slurm/ cgroup (slurmstepd's) runs through a region" s_moves
	region_done
	kill -KILL "$s" 2>/dev/null
	wait "$s" 2>/dev/null
	echo 1 >"$EXT2/job/step/user/cgroup.freeze"
	wait_for 5 v2_frozen
	region 300
	ok "v2: frozen by a third party at entry: no drain timeout" no_timeout
	ok "v2: the certificate names it" note_names "suspended"
	ok "v2: it stays frozen after the region" v2_frozen
	region_bg 1500
	echo 0 >"$EXT2/job/step/user/cgroup.freeze"
	ok "v2: resumed by the third party inside the region, it does not run there" kt_stalled c
	region_done
	ok "v2: it runs after the region" kt_progress c
	region_bg 800
	echo 1 >"$EXT2/job/step/user/cgroup.freeze"
	region_done
	ok "v2: suspended during a region: still frozen after it" v2_frozen
	ok "v2: ... and does not run" kt_stalled c
	echo 0 >"$EXT2/job/step/user/cgroup.freeze"
	ok "v2: it runs when the third party resumes it" kt_progress c
	kill -KILL "$c" 2>/dev/null
	wait "$c" 2>/dev/null
	# A task registered with the step while it sits outside user/ (the plugin
	# raced slurmstepd's move): krexd would freeze the step and slurmstepd
	# with it; it refuses.
	cp "$(command -v sleep)" "$KT_DIR/slurmstepd"
	kt_bg fs sh -c "echo \$\$ > $EXT2/job/step/slurm/cgroup.procs && exec $KT_DIR/slurmstepd 60"
	wait_for 5 grep -qs '^slurmstepd$' "/proc/$fs/comm"
	"$CLIENT" participant --gpus g0 --enter "$EXT2/job/step" --cgroup "$EXT2/job/step" \
		>"$KT_DIR/refused.out" 2>&1
	diag "$(cat "$KT_DIR/refused.out")"
	ok "v2: a step cgroup with slurmstepd below it is refused" \
		grep -qs '^error.*not permitted' "$KT_DIR/refused.out"
	kill -KILL "$fs" 2>/dev/null
	wait "$fs" 2>/dev/null
	krexd_stop
fi
done_testing
