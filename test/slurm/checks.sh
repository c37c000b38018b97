# SPDX-License-Identifier: BSD-3-Clause
# checks.sh - the checks run against a one-node cluster, once per proctrack
# mode (source it after cluster.sh; proctrack-*.sh call checks_run MODE).
#
# Job scripts write into $KC_DIR/work; a "counter" job increments a number
# in a file every 10 ms, so a frozen job is one whose counter stands still.

W() { echo "$KC_DIR/work/$1"; }

# kcheck CHECK ARGS...: a check that starts jobs; with its jobs in a
# container (KC_CONTAINER_IMAGE: containers-checks.sh), also that each of
# them ran its body in the image (ct_check, containers-setup.sh).
kcheck() {
	if [ -n "${KC_CONTAINER_IMAGE:-}" ]; then ct_check "$@"; else "$@"; fi
}

# The gate's path as a --krex-shared task sees it in its LD_PRELOAD: in a
# container, where KREX's enroot hook mounts it (doc/containers.md).
kc_task_gate() {
	if [ -n "${KC_CONTAINER_IMAGE:-}" ]; then echo /opt/krex/lib/libkrexgate.so; else echo "$KC_GATE"; fi
}

# A sibling job body: count forever into FILE.
counter_body() {
	printf '#!/bin/sh\ni=0\nwhile :; do i=$((i+1)); echo $i > %s.tmp; mv %s.tmp %s; sleep 0.01; done\n' \
		"$1" "$1" "$1"
}

# read a counter (0 if not there yet)
counter() { cat "$1" 2>/dev/null || echo 0; }

# counter_moves FILE: the counter exists within 30 s (the job may wait for
# the scheduler) and changes within 2 s.
counter_moves() {
	local a
	wait_for 30 test -s "$1" || return 1
	a=$(counter "$1")
	wait_for 2 counter_differs "$1" "$a"
}

counter_differs() { [ "$(counter "$1")" != "$2" ]; }

# counter_stands FILE SECONDS: the counter does not change for SECONDS.
counter_stands() {
	local a
	a=$(counter "$1")
	sleep "$2"
	[ "$(counter "$1")" = "$a" ]
}

# running_at_least N: N jobs are RUNNING now.
running_at_least() { [ "$(krun squeue -h -t R -o %i | wc -l)" -ge "$1" ]; }

check_help() {
	krun srun --help 2>&1 | grep -q -- '--krex-shared'
}

check_help_line() {
	krun srun --help 2>&1 | grep -A1 -- '--krex-shared' | grep -q 'Share a GPU under KREX'
}

# A bad word is rejected before submission and named.
check_bad_option() {
	local out
	out=$(krun srun --krex-shared=bogus true 2>&1) && return 1
	echo "$out" | grep -q "krex: --krex-shared: unknown option 'bogus'" || { diag "$out"; return 1; }
	out=$(krun sbatch --krex-shared=gate=maybe --wrap=true 2>&1) && return 1
	echo "$out" | grep -q "krex: --krex-shared: bad value in 'gate=maybe'" || { diag "$out"; return 1; }
	out=$(KREX_SHARED=frobnicate krun srun true 2>&1) && return 1
	echo "$out" | grep -q "krex: KREX_SHARED=frobnicate: unknown option 'frobnicate'" ||
		{ diag "$out"; return 1; }
}

# An unknown plugstack key is an error that names it (read by srun itself).
check_bad_plugstack() {
	local out
	sed "s#^PlugStackConfig=.*#PlugStackConfig=$KC_DIR/plugstack.bad#" "$KC_DIR/slurm.conf" \
		>"$KC_DIR/slurm.bad.conf"
	echo "required $KC_PLUGIN colour=blue" >"$KC_DIR/plugstack.bad"
	out=$(SLURM_CONF=$KC_DIR/slurm.bad.conf timeout 20 srun true 2>&1) && return 1
	echo "$out" | grep -q "krex: unknown plugstack argument 'colour'" || { diag "$out"; return 1; }
}

# krexd was started from slurmd's context: its pid file is in the node's
# run dir and it answers (and it is not inside any Slurm cgroup).
check_krexd_started() {
	local f="${KC_RUN}$KC_NODES/krexd.pid"
	wait_for 5 test -s "$f" || return 1
	kill -0 "$(cat "$f")" 2>/dev/null || return 1
	! grep -q slurm "/proc/$(cat "$f")/cgroup"
}

# Three --krex-shared jobs on one fake GPU (shards) run at the same time, and
# each task got KREX_SOCKET, KREX_GPUS and the gate in LD_PRELOAD.
check_three_share() {
	local j i ids=""
	for i in 1 2 3; do
		j=$(ksbatch --krex-shared --gres=shard:1 -o "$(W share$i.out)" \
			--wrap="env | grep -E '^(KREX_|LD_PRELOAD)' > $(W share$i.env); sleep 4") || return 1
		ids="$ids $j"
	done
	kwait 15 running_at_least 3 || {
		diag "not 3 running: $(krun squeue -h -o '%i %T %r')"
		return 1
	}
	for i in 1 2 3; do
		wait_for 5 test -s "$(W share$i.env)" || { diag "job $i wrote no environment"; return 1; }
		grep -q "^KREX_SOCKET=${KC_RUN}$KC_NODES/krexd.sock" "$(W share$i.env)" &&
			grep -q '^KREX_GPUS=0$' "$(W share$i.env)" &&
			{ grep -q "^LD_PRELOAD=$(kc_task_gate)" "$(W share$i.env)" || [ ! -f "$KC_GATE" ]; } ||
			{ diag "job $i: $(tr '\n' ' ' <"$(W share$i.env)")"; return 1; }
	done
	for j in $ids; do kwait 20 kjob_done "$j" || { diag "job $j: $(kjob_state "$j")"; return 1; }; done
	for j in $ids; do
		[ "$(kjob_state "$j")" = COMPLETED ] || { diag "job $j: $(kjob_state "$j")"; return 1; }
	done
}

# A job without the option is never touched: no KREX_ variable the
# submitter did not have (sbatch passes its environment on, the runner's
# KREX_SLURM_PREFIX with it), no gate.
check_untouched() {
	local j added
	j=$(ksbatch --gres=shard:1 -o /dev/null --wrap="env > $(W plain.env)") || return 1
	kwait 20 kjob_done "$j" || return 1
	[ "$(kjob_state "$j")" = COMPLETED ] && test -s "$(W plain.env)" || return 1
	added=$(grep -E '^KREX_|krexgate' "$(W plain.env)" | grep -vxF -f <(env | grep '^KREX_'))
	[ -z "$added" ] || { diag "added to a plain job: $added"; return 1; }
}

# What the plugin registers, seen by a fake krexd (coordinator=external):
# the task's pid, job, step, GPU 0, its CPUs, and under proctrack/cgroup
# the step's freezer cgroup.  Then the task's unregistration.
check_registration() {
	local mode=$1 fk="$KC_DIR/fakereg" j log line
	fake_krexd_start "$fk" >/dev/null || return 1
	cluster_plugstack "coordinator=external socket=$fk/krexd.sock"
	j=$(ksbatch --krex-shared=label=probe --gres=shard:1 -o /dev/null \
		--wrap="echo \$\$ > $(W reg.pid)") || return 1
	kwait 20 kjob_done "$j" || return 1
	log="$fk/requests.log"
	line=$(grep '^REGISTER' "$log" | head -1)
	diag "$line"
	echo "$line" | grep -q " pid=$(cat "$(W reg.pid)") job=$j step=4294967291 " || return 1
	echo "$line" | grep -q " gpus=0 label=probe" || return 1
	echo "$line" | grep -qE ' cpus=[0-9]' || return 1
	if [ "$mode" = cgroup ]; then
		echo "$line" | grep -qE " cgroup=/[^ ]*job_$j/step_batch " || return 1
	else
		echo "$line" | grep -q ' cgroup= ' || return 1
	fi
	wait_for 5 grep -q "^UNREGISTER uid=0 pid=$(cat "$(W reg.pid)")" "$log"
}

# With no krexd (coordinator=external, nothing there) a --krex-shared job
# fails with the message, a plain job still runs, and the node stays up.
check_krexd_down() {
	local j out
	cluster_plugstack "coordinator=external socket=$KC_DIR/nothing/krexd.sock"
	out=$(ksrun --krex-shared --gres=shard:1 true 2>&1) && { diag "srun ran"; return 1; }
	echo "$out" | grep -q "krex: cannot reach krexd at $KC_DIR/nothing/krexd.sock" ||
		{ diag "$out"; return 1; }
	j=$(ksbatch --krex-shared --gres=shard:1 -o "$(W down.out)" --wrap=true) || return 1
	kwait 20 kjob_done "$j" || { diag "job $j: $(kjob_state "$j")"; return 1; }
	[ "$(kjob_state "$j")" = FAILED ] || { diag "job $j: $(kjob_state "$j")"; return 1; }
	grep -q "krex: cannot reach krexd" "$(W down.out)" || { diag "$(cat "$(W down.out)")"; return 1; }
	ksrun --gres=shard:1 true || { diag "a plain srun failed"; return 1; }
	kwait 10 nodes_idle ||
		{ diag "nodes: $(krun sinfo -h -N -o '%N %T %E') jobs: $(krun squeue -h -o '%i %T %u %j' | tr '\n' ' ')"; return 1; }
}

# nodes_idle: every node idle (not drained, not down).  "planned" is an idle
# node the backfill scheduler has planned a pending job on (22.05 showed it
# here under load, 10 s after the checks' jobs).
nodes_idle() {
	local st
	st=$(krun sinfo -h -N -o %T) && [ -n "$st" ] && ! echo "$st" | grep -qvE '^(idle|planned)$'
}

# krexd stops with slurmd (slurm_spank_slurmd_exit).
check_krexd_stops() {
	local pid
	pid=$(cat "${KC_RUN}$KC_NODES/krexd.pid") || return 1
	cluster_stop_slurmd
	wait_for 10 sh -c "! kill -0 $pid 2>/dev/null"
}

KREX_CLI=$top_builddir/krex/krex

# The region checks need the real krexd and the krex CLI.
regions_why() {
	krexd_real || { echo "krexd not built"; return; }
	[ -x "$KREX_CLI" ] || echo "krex CLI not built"
}

# Start a counter job (OPTS: extra sbatch options); prints the job id.
counter_job() {
	local file=$1
	shift
	counter_body "$file" >"$file.sh"
	chmod 755 "$file.sh"
	ksbatch "$@" --gres=shard:1 -o /dev/null "$file.sh"
}

# A region freezes the other --krex-shared jobs on its GPU and they resume
# after it; a job without the option keeps running through it.
check_region_freezes() {
	local s1 s2 p o
	s1=$(counter_job "$(W c1)" --krex-shared) || return 1
	s2=$(counter_job "$(W c2)" --krex-shared) || return 1
	p=$(counter_job "$(W c3)") || return 1
	counter_moves "$(W c1)" && counter_moves "$(W c2)" && counter_moves "$(W c3)" ||
		{ diag "counters do not move: $(krun squeue -h -o '%i %T %r' | tr '\n' ' ')"; return 1; }
	cat >"$(W owner.sh)" <<EOS
#!/bin/sh
$KREX_CLI region --json --cert $(W owner.cert) -- sh -c '
	a=\$(cat $(W c1) $(W c2)); p=\$(cat $(W c3)); sleep 1
	b=\$(cat $(W c1) $(W c2)); q=\$(cat $(W c3))
	[ "\$a" = "\$b" ] && echo siblings=frozen || echo siblings=moved
	[ "\$p" != "\$q" ] && echo plain=moved || echo plain=frozen' > $(W owner.out)
EOS
	o=$(ksbatch --krex-shared --gres=shard:1 -o "$(W owner.log)" "$(W owner.sh)") || return 1
	kwait 30 kjob_done "$o" || return 1
	diag "owner: $(tr '\n' ' ' <"$(W owner.out)" 2>/dev/null) cert: $(cat "$(W owner.cert)" 2>/dev/null)"
	grep -q siblings=frozen "$(W owner.out)" && grep -q plain=moved "$(W owner.out)" &&
		counter_moves "$(W c1)" && counter_moves "$(W c2)" || return 1
	# The certificate is signed by the node's krexd with the cluster's munge
	# key and names the job (doc/admin.md "Signed certificates").
	if krexd_real && grep -q "^#define HAVE_MUNGE 1" "$top_builddir/config.h"; then
		"$KREX_CLI" verify --socket "$KC_MUNGE_SOCK" "$(W owner.cert)" >"$(W verify.out)" 2>&1 &&
			grep -q "who:     uid 0 (root), job $o step " "$(W verify.out)" ||
			{ diag "krex verify: $(tr '\n' ' ' <"$(W verify.out)")"; return 1; }
	fi
	KREGION_SIBLINGS="$s1 $s2 $p"
}

# scancel of the region owner mid-region thaws the siblings.
check_scancel_owner() {
	local o rc=0
	cat >"$(W hold.sh)" <<EOS
#!/bin/sh
exec $KREX_CLI region -- sh -c 'touch $(W holding); sleep 60'
EOS
	o=$(ksbatch --krex-shared --gres=shard:1 -o "$(W hold.log)" "$(W hold.sh)") || return 1
	if ! wait_for 30 test -e "$(W holding)"; then
		diag "no region within 30 s: $(krex_status | tr '\n' ' ')"
		rc=1
	elif ! counter_stands "$(W c1)" 0.5; then
		diag "sibling not frozen: $(krex_status | tr '\n' ' ')"
		rc=1
	fi
	krun scancel "$o" || return 1
	kwait 10 kjob_done "$o" || return 1
	counter_moves "$(W c1)" && counter_moves "$(W c2)" && return $rc
	diag "siblings still frozen after scancel: $(cat "$(W hold.log)") $(krex_status | tr '\n' ' ')"
	return 1
}

krex_status() {
	KREX_SOCKET=${KC_RUN}${KC_NODES%% *}/krexd.sock "$KREX_CLI" status "$@" 2>&1
}

# A job of another user cannot release the region a job of root holds, and
# that region's holder is not ended by it; root's job ends it normally.
check_two_users() {
	local o rc=0
	kc_user || return 1
	rm -f "$(W holding)"
	o=$(ksbatch --krex-shared --gres=shard:1 -o "$(W hold2.log)" "$(W hold.sh)") || return 1
	two_users_held "$o" || rc=1
	# the holder ends here also when a step above failed
	krun scancel "$o"
	kwait 10 kjob_done "$o" && counter_moves "$(W c1)" && return $rc
}

# The user's release of the region root's job O holds.
two_users_held() {
	local o=$1 u rid
	wait_for 20 test -e "$(W holding)" || return 1
	rid=$(krex_status --json |
		grep -o '"regions":\[[^]]*' | grep -o '"id":[0-9]*' | head -1 | cut -d: -f2)
	[ -n "$rid" ] || { diag "no region id in krex status"; return 1; }
	u=$(ksbatch --uid="$KC_USER" --gid="$KC_USER" --krex-shared --gres=shard:1 -o "$(W user.log)" \
		--chdir="$KC_DIR/work" --wrap="$KREX_CLI release $rid; echo rc=\$? > $(W user.rc)") ||
		return 1
	kwait 20 kjob_done "$u" || { diag "user's job: $(kjob_state "$u")"; return 1; }
	diag "user's release: $(cat "$(W user.rc)" 2>/dev/null) $(tail -1 "$(W user.log)" 2>/dev/null)"
	# refused by krexd (the region is not the user's), not before
	grep -q 'rc=1' "$(W user.rc)" && grep -q "region $rid is not uid $(id -u "$KC_USER")'s" "$(W user.log)" ||
		{ diag "user's job: $(tr '\n' ' ' <"$(W user.log)")"; return 1; }
	[ "$(kjob_state "$o")" = RUNNING ] || { diag "holder: $(kjob_state "$o")"; return 1; }
	counter_stands "$(W c1)" 0.5 || { diag "sibling not frozen while held"; return 1; }
}

# A job of an unprivileged user holds a region of its own: its participant
# is the user's, so its own processes may join it and begin a region.
check_user_region() {
	local u
	kc_user || return 1
	u=$(ksbatch --uid="$KC_USER" --gid="$KC_USER" --krex-shared --gres=shard:1 \
		-o "$(W ureg.log)" --chdir="$KC_DIR/work" \
		--wrap="$KREX_CLI region -- true; echo rc=\$? > $(W ureg.rc)") || return 1
	kwait 30 kjob_done "$u" || { diag "user's job: $(kjob_state "$u")"; return 1; }
	grep -q 'rc=0' "$(W ureg.rc)" || { diag "$(cat "$(W ureg.log)")"; return 1; }
}

# Run every check on a one-node cluster with proctrack MODE.
checks_run() {
	local mode=$1 why
	cluster_start "$mode" 1 || skip_all "$CLUSTER_WHY"
	plan 15
	krexd_real || diag "krexd not built: the cluster runs the fake krexd (test/slurm/fake_krexd)"
	ok "srun --help lists --krex-shared" check_help
	ok "its help line says what it does" check_help_line
	ok "a bad option word is rejected before submission, named" check_bad_option
	ok "an unknown plugstack argument is an error that names it" check_bad_plugstack
	ok "krexd was started from slurmd's context, outside Slurm's cgroups" check_krexd_started
	ok "three --krex-shared jobs run at once on one fake GPU" kcheck check_three_share
	ok "a job without the option is not touched" kcheck check_untouched
	why=$(regions_why)
	if [ -z "$why" ]; then
		ok "a region freezes its siblings, they resume after; a plain job runs on; krex verify accepts its signed certificate" \
			kcheck check_region_freezes
		ok "scancel of the owner mid-region thaws the siblings" kcheck check_scancel_owner
		ok "another user's job cannot release the region" kcheck check_two_users
		ok "an unprivileged user's job holds a region of its own" kcheck check_user_region
		for j in ${KREGION_SIBLINGS:-}; do krun scancel "$j"; done
	else
		skip "a region freezes its siblings, they resume after" "$why"
		skip "scancel of the owner mid-region thaws the siblings" "$why"
		skip "another user's job cannot release the region" "$why"
		skip "an unprivileged user's job holds a region of its own" "$why"
	fi
	ok "the plugin registers the task, its step cgroup, GPUs and CPUs" kcheck check_registration "$mode"
	ok "krexd down: a --krex-shared job fails clearly, the node stays idle" kcheck check_krexd_down
	cluster_plugstack ""
	ok "krexd stops with slurmd" check_krexd_stops
	ok "no process left frozen" check_none_frozen
	done_testing
}

# No freezer cgroup of this test's jobs (Slurm's step cgroups, our krexd's
# subtree) is left FROZEN.  Other cgroups are not ours to judge.
check_none_frozen() {
	local f
	for f in $(find $(for n in $KC_NODES; do echo /sys/fs/cgroup/freezer/slurm_$n; done) \
		/sys/fs/cgroup/freezer/krex-slurm/$$-* \
		-name freezer.state 2>/dev/null); do
		grep -q FROZEN "$f" && { diag "frozen: $f"; return 1; }
	done
	return 0
}
