#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# At slurmd's start spank_krex.so logs one line with its version, so that a
# site sees in slurmd's log which KREX a node runs.
. "$top_srcdir/test/lib.sh"
. "$top_srcdir/test/slurm/cluster.sh"
cluster_check || skip_all "$CLUSTER_WHY"
version=$(sed -n 's/^#define PACKAGE_VERSION "\(.*\)"$/\1/p' "$top_builddir/config.h")
plan 2
cluster_start linuxproc 1 || skip_all "$CLUSTER_WHY"
log=$KC_DIR/slurmd-$KC_NODES.log
line() { grep -q "krex: spank_krex $version loaded in slurmd (protocol [0-9]*)" "$log"; }
ok "slurmd's log: krex: spank_krex $version loaded in slurmd" kwait 10 line
grep 'spank_krex' "$log" | sed 's/^/# slurmd: /'
ok "... once" test "$(grep -c 'spank_krex .* loaded in slurmd' "$log")" = 1
done_testing
