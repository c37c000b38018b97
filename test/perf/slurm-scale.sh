#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# The many-nodes scale run (doc/scale.md): test/slurm/many-nodes.sh with 16
# slurmd on this host, 64 --krex-shared jobs (4 a node) and multi-node steps
# across all 16, 3 regions a task, on the mock GPU driver.  Prints TAP and
# the figures; writes them (figures.txt), every certificate (certs.txt) and
# the 1 s samples of each krexd and slurmd (samples) to the folder given (default $OUT, else
# notebook/slurm-scale-DATE).  Needs root, Slurm and munge
# (scripts/install-deps.sh) and a build (make).  About a minute on the
# 2-core CPU test machine; never fails on a time, only on a wrong result
# or a leftover.
#
#	bash test/perf/slurm-scale.sh [OUTDIR]
#	KS_NODES=26 KS_JOBS=104 bash test/perf/slurm-scale.sh /tmp/x   # other sizes
: "${top_srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}"
: "${top_builddir:=$top_srcdir}"
export top_srcdir top_builddir
out=${1:-${OUT:-$top_srcdir/notebook/slurm-scale-$(date -u +%Y%m%d-%H%M)}}
mkdir -p "$out" || exit 2
export KS_NODES=${KS_NODES:-16} KS_JOBS=${KS_JOBS:-64} KS_REGIONS=${KS_REGIONS:-3} KS_OUT=$out
{
	echo "# $(date -u '+%Y-%m-%d %H:%M UTC') $(uname -r), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
	echo "# commit $(git -C "$top_srcdir" rev-parse --short HEAD 2>/dev/null || echo unknown)"
	echo "# KS_NODES=$KS_NODES KS_JOBS=$KS_JOBS KS_REGIONS=$KS_REGIONS"
	timeout -k 10 900 bash "$top_srcdir/test/slurm/many-nodes.sh"
	echo "# exit status $?"
} 2>&1 | tee "$out/tap.txt"
# the status of many-nodes.sh, not tee's
grep -q '^# exit status 0$' "$out/tap.txt"
