#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# krex-topo --undo: the isolation undo lines of a state file, applied as
# krexd's crash recovery does; `krex run`'s watcher hands them over when its
# private krexd died in a region (krex/rescue.c), so that the krex CLI needs
# no hwloc.  Needs 2 CPUs (pins a process to one, the undo widens it).
. "$top_srcdir/test/lib.sh"
TOPO=$top_builddir/topology/krex-topo
[ -x "$TOPO" ] || skip_all "krex-topo not built"
command -v taskset >/dev/null || skip_all "no taskset (util-linux)"
[ "$(nproc)" -ge 2 ] || skip_all "needs 2 CPUs"
plan 5
sleep 60 &
pid=$!
trap 'kill $pid 2>/dev/null' EXIT
all=$(taskset -pc "$pid" | sed 's/.*: //')
taskset -pc 0 "$pid" >/dev/null
start=$(awk '{print $22}' "/proc/$pid/stat")
ok "a process pinned to CPU 0" test "$(taskset -pc "$pid" | sed 's/.*: //')" = 0
echo "affinity $pid $start $all" | "$TOPO" --undo >/dev/null 2>&1
ok "krex-topo --undo applies its affinity line (exit 0)" test $? = 0
ok "the process has its CPUs back ($all)" test "$(taskset -pc "$pid" | sed 's/.*: //')" = "$all"
taskset -pc 0 "$pid" >/dev/null
echo "affinity $pid $((start + 1)) $all" | "$TOPO" --undo >/dev/null 2>&1
ok "a line for an earlier process of that pid is not applied to this one" \
	test "$(taskset -pc "$pid" | sed 's/.*: //')" = 0
out=$(echo "affinity x y z" | "$TOPO" --undo 2>&1)
ok "a malformed line: exit 1, said ($out)" sh -c "echo 'affinity x y z' | '$TOPO' --undo >/dev/null 2>&1; test \$? = 1"
done_testing
