#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Build KREX on the GPU machine (Ubuntu 24.04, no apt, no libtoolize) from a
# `make dist` tarball carried in .gpu/, into /tmp/krex-build.  Prints the
# build directory on the last line.  Used by the GPU runs (doc/gpu.md).
#
#   bash scripts/gpu-build.sh [TARBALL]
set -euo pipefail
tarball=${1:-$(ls .gpu/krex-*.tar.gz | head -n1)}
src=/tmp/krex-src
build=/tmp/krex-build
rm -rf "$src" "$build"
mkdir -p "$src" "$build"
tar xzf "$tarball" -C "$src" --strip-components=1
slurm_opt=--without-slurm
# Slurm's headers, carried from Debian 12 with its binaries (doc/gpu.md).
if [ -f .gpu/slurm-bin.tar.gz ]; then
	tar xzf .gpu/slurm-bin.tar.gz --skip-old-files -C / 2>/dev/null || true
	ldconfig
	[ -f /usr/include/slurm/spank.h ] && slurm_opt=--with-slurm
fi
cd "$build"
"$src/configure" -q --prefix=/opt/krex --with-cuda=/usr/local/cuda "$slurm_opt" >configure.log 2>&1 ||
	{ tail -30 configure.log; exit 1; }
make -j"$(nproc)" >make.log 2>&1 || { grep -E "error|Error" make.log | head -30; exit 1; }
make install >install.log 2>&1 || { tail -20 install.log; exit 1; }
echo "$build"
