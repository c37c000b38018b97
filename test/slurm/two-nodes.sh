#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Two slurmd (n1, n2) on one host, each with its own fake GPU and its own
# krexd (run dir per node name): a step spanning both reaches each node's
# krexd, and a region on n1 does not touch a job on n2.
. "$top_srcdir/test/lib.sh"
. "$top_srcdir/test/slurm/cluster.sh"
. "$top_srcdir/test/slurm/checks.sh"
cluster_check || skip_all "$CLUSTER_WHY"
cluster_start linuxproc 2 || skip_all "$CLUSTER_WHY"
plan 5
set -- $KC_NODES
N1=$1 N2=$2

both_krexd() {
	local n
	for n in $N1 $N2; do
		wait_for 5 test -s "${KC_RUN}$n/krexd.pid" || return 1
		kill -0 "$(cat "${KC_RUN}$n/krexd.pid")" 2>/dev/null || return 1
	done
	[ "$(cat "${KC_RUN}$N1/krexd.pid")" != "$(cat "${KC_RUN}$N2/krexd.pid")" ]
}

# srun -N2: each task is told its own node's socket.
per_node_socket() {
	local out
	out=$(ksrun -N2 --krex-shared --gres=shard:1 -l sh -c 'echo $SLURMD_NODENAME $KREX_SOCKET' 2>&1) ||
		{ diag "$out"; return 1; }
	echo "$out" | grep -q "$N1 ${KC_RUN}$N1/krexd.sock" &&
		echo "$out" | grep -q "$N2 ${KC_RUN}$N2/krexd.sock" || { diag "$out"; return 1; }
}

# A region on n1 freezes n1's sibling and not n2's.
region_one_node() {
	local a b o
	a=$(counter_job "$(W n1c)" --krex-shared -w $N1) || return 1
	b=$(counter_job "$(W n2c)" --krex-shared -w $N2) || return 1
	counter_moves "$(W n1c)" && counter_moves "$(W n2c)" || return 1
	cat >"$(W n1owner.sh)" <<EOS
#!/bin/sh
$KREX_CLI region -- sh -c '
	a=\$(cat $(W n1c)); p=\$(cat $(W n2c)); sleep 1
	b=\$(cat $(W n1c)); q=\$(cat $(W n2c))
	[ "\$a" = "\$b" ] && echo n1=frozen || echo n1=moved
	[ "\$p" != "\$q" ] && echo n2=moved || echo n2=frozen' > $(W n1owner.out)
EOS
	o=$(ksbatch --krex-shared --gres=shard:1 -w $N1 -o "$(W n1owner.log)" "$(W n1owner.sh)") || return 1
	kwait 30 kjob_done "$o" || return 1
	diag "$(tr '\n' ' ' <"$(W n1owner.out)" 2>/dev/null)"
	krun scancel "$a" "$b"
	grep -q n1=frozen "$(W n1owner.out)" && grep -q n2=moved "$(W n1owner.out)"
}

both_stop() {
	local p1 p2
	p1=$(cat "${KC_RUN}$N1/krexd.pid") && p2=$(cat "${KC_RUN}$N2/krexd.pid") || return 1
	cluster_stop_slurmd
	wait_for 10 sh -c "! kill -0 $p1 2>/dev/null && ! kill -0 $p2 2>/dev/null"
}

ok "each slurmd started its own krexd (run dir per node name)" both_krexd
ok "srun -N2 --krex-shared: each task gets its node's krexd socket" per_node_socket
why=$(regions_why)
if [ -z "$why" ]; then
	ok "a region on n1 freezes n1's sibling, not n2's job" region_one_node
else
	skip "a region on n1 freezes n1's sibling, not n2's job" "$why"
fi
ok "both krexd stop with their slurmd" both_stop
ok "no process left frozen" check_none_frozen
done_testing
