#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# test-slurm-versions.sh - the Slurm tier (test/slurm) against every Slurm
# installed here: the one in PATH (Debian's 22.05) and each one at a prefix
# of its own (scripts/build-slurm.sh), with KREX built for each.
#
#	scripts/test-slurm-versions.sh [--build] [--record] [--no-path] [PREFIX...]
#
# PREFIX...: the Slurm prefixes to test besides the one in PATH (default:
# every /opt/slurm-*/ with a slurmd).  --build: first build Slurm from
# scripts/build-slurm.sh's tarball (skipped with a reason when there is no
# tarball).  --record: add the result to doc/slurm-versions.md.  --no-path:
# leave out the Slurm in PATH.
#
# KREX is built once per Slurm MAJOR.MINOR (SPANK_PLUGIN() stamps it): the
# configured tree serves the Slurm it was configured for; any other gets a
# build of its own in _build/slurm-VERSION (a `make distdir` copy built out of
# tree, incremental on the next run).  Prints, per version, the tier's
# automake summary, and at the end one line per version:
#	slurm 25.11.7 (/opt/slurm-25.11): 54 passed, 0 failed, 0 skipped, 9 min
# Exit status: 0 when no test failed, 1 otherwise, 77 when no Slurm was found.
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
build=0
record=0
path=1
prefixes=()
for a in "$@"; do
	case "$a" in
	--build) build=1 ;;
	--record) record=1 ;;
	--no-path) path=0 ;;
	-*)
		echo "test-slurm-versions: unknown option '$a' (want --build, --record, --no-path, PREFIX...)" >&2
		exit 2
		;;
	*) prefixes+=("$a") ;;
	esac
done
[ -f Makefile ] || {
	echo "test-slurm-versions: $top is not configured (./autogen.sh && ./configure first)" >&2
	exit 2
}
start_all=$SECONDS
if [ $build = 1 ]; then
	t=$SECONDS
	scripts/build-slurm.sh
	rc=$?
	case $rc in
	0) echo "test-slurm-versions: Slurm build: $(((SECONDS - t + 30) / 60)) min" ;;
	77) echo "test-slurm-versions: SKIP building Slurm: no source tarball (scripts/build-slurm.sh says why above)" ;;
	*) echo "test-slurm-versions: building Slurm failed" >&2 && exit 1 ;;
	esac
fi
if [ ${#prefixes[@]} = 0 ]; then
	for d in /opt/slurm-*/; do
		[ -x "$d/sbin/slurmd" ] && prefixes+=("${d%/}")
	done
fi

# built_for DIR: the Slurm release the KREX build in DIR was configured for.
built_for() { sed -n 's/^SLURM_VERSION = //p' "$1/Makefile" 2>/dev/null; }
# version_of PREFIX: the release of the slurmd there ("" for PATH's).
version_of() {
	local d=${1:+$1/sbin/}
	"${d}slurmd" -V 2>/dev/null | sed -n 's/^slurm[^ ]* \([0-9][0-9.]*\).*/\1/p'
}

# krex_build PREFIX VERSION: a KREX build for that Slurm; prints its dir.
krex_build() {
	local prefix=$1 ver=$2 dir src obj
	if [ "$(built_for "$top" | cut -d. -f1,2)" = "${ver%.*}" ]; then
		make -s -j"$(nproc)" >/dev/null || return 1
		echo "$top"
		return
	fi
	dir=$top/_build/slurm-$ver
	src=$dir/src
	obj=$dir/obj
	mkdir -p "$dir"
	# cp -p keeps the dates: an unchanged file is not rebuilt in $obj.
	# (distdir= must be relative: the subdirectories prefix it with ../)
	make -s distdir distdir="_build/slurm-$ver/src" >"$dir/distdir.log" 2>&1 || {
		tail -20 "$dir/distdir.log" >&2
		return 1
	}
	mkdir -p "$obj"
	if [ "$(built_for "$obj")" != "$ver" ]; then
		(cd "$obj" && "$src/configure" -q --with-slurm="${prefix:-yes}") >"$dir/configure.log" 2>&1 || {
			tail -20 "$dir/configure.log" >&2
			return 1
		}
	fi
	make -s -C "$obj" -j"$(nproc)" >"$dir/make.log" 2>&1 || {
		grep -E "error|Error" "$dir/make.log" | head -20 >&2
		return 1
	}
	[ "$(built_for "$obj")" = "$ver" ] || {
		echo "test-slurm-versions: $obj is built for Slurm $(built_for "$obj"), not $ver" >&2
		return 1
	}
	echo "$obj"
}

results=()
failed=0
tested=0
# run_one PREFIX: build, run the tier, summarise ("" for the Slurm in PATH).
run_one() {
	local prefix=$1 ver bdir t p f s e x err
	ver=$(version_of "$prefix")
	if [ -z "$ver" ]; then
		echo "test-slurm-versions: SKIP ${prefix:-PATH}: no slurmd there"
		return
	fi
	t=$SECONDS
	tested=1
	echo "== Slurm $ver (${prefix:-PATH})"
	if ! bdir=$(krex_build "$prefix" "$ver"); then
		results+=("slurm $ver (${prefix:-PATH}): KREX build failed")
		failed=1
		return
	fi
	# the sibling of the suspend tests (a check program of another tier)
	make -s -C "$bdir/test/integration" krex-testclient >/dev/null 2>&1 || true
	KREX_SLURM_PREFIX=$prefix make -C "$bdir/test/slurm" check 2>&1 |
		grep -E '^(PASS|FAIL|ERROR|SKIP|XFAIL|XPASS|# [A-Z]+:)'
	# Every TAP result of every script (the summary above counts scripts).
	count() { cat "$bdir"/test/slurm/*.trs 2>/dev/null | grep -c "^:test-result: $1" || true; }
	p=$(count PASS)
	s=$(count SKIP)
	f=$(($(count FAIL) + $(count XPASS)))
	e=$(count ERROR)
	[ "$f" = 0 ] && [ "$e" = 0 ] || failed=1
	err=""
	[ "$e" = 0 ] || err=", $e scripts in error"
	# known bugs: TAP "# TODO" lines that failed (test/lib.sh)
	x=$(count XFAIL)
	[ "$x" = 0 ] || err="$err, $x known bugs (TODO)"
	results+=("slurm $ver (${prefix:-PATH}): $p passed, $f failed, $s skipped$err, $(((SECONDS - t + 30) / 60)) min")
}

if [ $path = 0 ]; then
	:
elif command -v slurmd >/dev/null 2>&1; then
	run_one ""
else
	echo "test-slurm-versions: SKIP the Slurm in PATH: no slurmd in PATH"
fi
for p in "${prefixes[@]}"; do
	run_one "$p"
done
echo "== summary ($(((SECONDS - start_all + 30) / 60)) min in all)"
for r in "${results[@]}"; do echo "$r"; done
if [ $tested = 0 ]; then
	echo "test-slurm-versions: SKIP: no Slurm to test (none in PATH or --no-path, no /opt/slurm-*/ with a slurmd)"
	exit 77
fi
if [ $record = 1 ]; then
	{
		for r in "${results[@]}"; do
			echo "| $(date -u +%Y-%m-%d) | $(git rev-parse --short HEAD 2>/dev/null || echo -) | $r |"
		done
	} >>doc/slurm-versions.md
	echo "test-slurm-versions: recorded in doc/slurm-versions.md"
fi
exit $failed
