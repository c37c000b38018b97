#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# The GPU machine's container demo, test/gpu/containers-on-gpu.sh, run end
# to end on the mock CUDA driver (a TEST DOUBLE; no GPU), so that the one run
# on the H200 is not the script's first: a one-node Slurm with spank_krex
# then spank_pyxis, two --krex-shared krex-hog siblings in an enroot image
# made from this machine's programs (the mock's libcuda.so.1 mounted by the
# script's enroot mount file), a host owner's regions; every row of its
# table as expected, the table printed last.  Needs root, Slurm and munge,
# and enroot + pyxis built by scripts/container-deps.sh (skips with the
# reason otherwise).  It starts Slurm daemons: run it under
# `flock /tmp/krex-slurm.lock`.
. "$top_srcdir/test/lib.sh"
need_root
[ -x "$top_builddir/krexd/krexd" ] || skip_all "krexd not built"
[ -f "$top_builddir/spank/.libs/spank_krex.so" ] || skip_all "spank_krex.so not built (no slurm/spank.h)"
[ -x "$top_builddir/test/workloads/krex-hog" ] || skip_all "test/workloads not built (make check builds it)"
CACHE=${KREX_CONTAINER_CACHE:-/var/cache/krex-test}
[ -x "$CACHE/enroot/bin/enroot" ] || skip_all "no enroot at $CACHE/enroot (scripts/container-deps.sh enroot)"
ver=$(slurmd -V 2>/dev/null | sed -n 's/^slurm[^ ]* \([0-9][0-9.]*\).*/\1/p')
[ -n "$ver" ] || skip_all "no slurmd in PATH"
[ -f "$CACHE/pyxis-$ver/spank_pyxis.so" ] ||
	skip_all "no pyxis for Slurm $ver at $CACHE/pyxis-$ver (scripts/container-deps.sh pyxis)"
command -v mksquashfs >/dev/null && command -v unsquashfs >/dev/null || skip_all "no squashfs-tools"
T=$(mktemp -d) || exit 1
trap 'rm -rf "$T"' EXIT
run_it() {
	env KREX_GPU_MOCK=1 OUT="$T/out" timeout 420 bash "$top_srcdir/test/gpu/containers-on-gpu.sh" \
		"$top_builddir" >"$T/log" 2>&1
}
# row TEXT: the table's row beginning with TEXT says yes
row_yes() { grep -q "^| $1[^|]*| yes" "$T/out/table.txt"; }
plan 10
ok "containers-on-gpu.sh runs on the mock, every row as expected (exit 0)" run_it
sed 's/^/# /' "$T/log" | tail -n 60
ok "it says it is a mock run" grep -q "^MOCK RUN" "$T/log"
ok "the table is printed last" sh -c "tail -n 1 '$T/log' | grep -q '^| nothing left frozen after'"
ok "siblings containerized" row_yes "siblings containerized"
ok "the gate preloaded in the container" row_yes "the gate preloaded in the container"
ok "gated: their gate joined krexd" row_yes "gated: their gate joined"
ok "libcuda.so.1 from the mount file" row_yes "libcuda.so.1 in the container from the mount file"
ok "siblings frozen during the owner's region" row_yes "siblings frozen during the owner's region"
ok "certificates: drained, frozen, clean" sh -c "grep -c '^| certificates: .*| yes' '$T/out/table.txt' | grep -qx 3"
ok "nothing left frozen after" row_yes "nothing left frozen after"
done_testing
