#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# The README's test command: install dependencies, build, check formatting,
# make the container images (scripts/container-deps.sh images), run every
# test tier (`make check`), the Slurm tier against Slurm 25.11 when
# its source is there (scripts/test-slurm-versions.sh), the unit, integration,
# attack and gate tiers again under ASan+UBSan (scripts/sanitize-check.sh), a
# short fuzz run of the wire decoder (scripts/fuzz-check.sh), `make distcheck`,
# then the packaging tier (test/pkg: builds the .debs, installs them, runs the
# demo from them, purges them; checks the RPM spec).
#
# Every step runs even when an earlier one failed, so that a red run shows
# the whole picture; each failure is listed with its log where it happens
# (make check's own report: tier, test, failing lines, log tail).  The end
# is a table of each step's time, make check's per tier, then one line
# "N passed, N failed, N skipped" over every tier's TAP results; the exit
# status is the first failing step's.
#
# distcheck builds and checks the tarball out of tree and read-only; the
# full suite ran once already (make check), so it runs a subset of tiers
# (DISTCHECK_TIERS, default below) and every file git tracks under test/
# and scripts/ is checked to be in the tarball (what a tier left out of
# distcheck would otherwise catch).  KREX_NO_SANITIZE=1 leaves out the
# sanitizer and fuzz runs (about 4 minutes on a 2-core machine).
set -uo pipefail
cd "$(dirname "$0")/.."
# This command is for a test machine (it installs packages too): the tests
# that change a node-wide kernel setting until reboot run (krexd's
# favordynmods, test/integration/krexd-favordynmods.sh); a bare `make check`
# skips them.
export KREX_TEST_KERNEL=1
: "${DISTCHECK_TIERS:=unit topology python attack gate}"
log=$(mktemp)
xlog=$(mktemp)
times=$(mktemp)
trap 'rm -f "$log" "$xlog" "$xlog.out" "$xlog.dc" "$times"' EXIT
rc=0
# step NAME CMD...: run a step, time it, keep the first failure's status.
step() {
	local name=$1 t0 r=0
	shift
	t0=$(date +%s)
	"$@" || r=$?
	printf '%-28s %5d s  %s\n' "$name" $(($(date +%s) - t0)) "$(case $r in 0) echo ok ;; 77) echo skipped ;; *) echo "FAILED ($r)" ;; esac)" >>"$times"
	case $r in 0 | 77) ;; *) [ $rc != 0 ] || rc=$r ;; esac
	return 0
}
# show_failures DIR: the end of each test log under DIR with a failure.
show_failures() {
	for f in $(find "$1" -name '*.log' ! -name test-suite.log 2>/dev/null); do
		grep -q -E '^(not ok|ERROR|FAIL)' "$f" && { echo "==== $f"; tail -40 "$f"; }
	done
	return 0
}
build() {
	[ -x configure ] || ./autogen.sh >/dev/null || return
	[ -f Makefile ] || ./configure -q || return
	make -j"$(nproc)" >/dev/null
}
step "install-deps" scripts/install-deps.sh
step "build" build
if [ $rc != 0 ]; then
	cat "$times"
	exit $rc
fi
step "format" scripts/check-format.sh .
# The root file systems that the integration tier's oci-hook.sh and the gate
# tier's glibc-versions.sh need, made before make check: only the Slurm
# tier's containers-setup.sh made them before, after those tiers, so on a
# fresh machine both skipped (fresh-clone run 84).  Cached; skipped (77)
# where they cannot be made, and the two tests then skip with their reason.
step "container images" scripts/container-deps.sh images
make_check() { make check 2>&1 | tee "$log"; }
step "make check" make_check
slurm_versions() {
	local r=0
	scripts/test-slurm-versions.sh --build --no-path 2>&1 | tee -a "$log" || r=$?
	case $r in 0 | 77) ;; *) show_failures _build ;; esac
	return $r
}
# The Slurm tier against Slurm 25.11 as well (make check's is Debian's 22.05),
# built from ../shared/deps/ when the tarball is there; skipped with the
# reason when not (doc/slurm-versions.md).
step "Slurm 25.11 (build + tier)" slurm_versions
if [ "${KREX_NO_SANITIZE:-0}" != 1 ]; then
	for s in sanitize-check fuzz-check; do
		run_s() {
			local r=0
			scripts/$s.sh >"$xlog.out" 2>&1 || r=$?
			tail -n 60 "$xlog.out"
			tail -n 1 "$xlog.out" >>"$xlog"
			rm -f "$xlog.out"
			return $r
		}
		step "$s" run_s
	done
fi
# distcheck: its output goes to a log; on a failure, the log's end and each
# failing test's log are shown (the tree distcheck leaves behind holds them).
distcheck() {
	if KREX_CHECK_TIERS=$DISTCHECK_TIERS make distcheck >"$xlog.dc" 2>&1; then
		echo "distcheck (tiers: $DISTCHECK_TIERS): ok"
		sed -n '/==== make check: time per tier/,/total/p' "$xlog.dc"
	else
		local r=$?
		tail -n 40 "$xlog.dc"
		show_failures "$(ls -d krex-*/_build 2>/dev/null | head -n 1)"
		return $r
	fi
}
step "distcheck" distcheck
# Every tracked file of the test tiers and scripts is in the tarball (a
# script a tier sources but EXTRA_DIST misses fails here, whichever tiers
# distcheck ran).
in_tarball() {
	local tb missing
	tb=$(ls -t krex-*.tar.gz 2>/dev/null | head -n 1)
	[ -n "$tb" ] || make dist >/dev/null || return
	tb=$(ls -t krex-*.tar.gz | head -n 1)
	missing=$(comm -23 <(git ls-files test scripts | grep -v -E '(^|/)\.' | sort) \
		<(tar tzf "$tb" | sed 's|^[^/]*/||' | sort))
	[ -z "$missing" ] && { echo "tarball $tb: every file of test/ and scripts/ is in it"; return 0; }
	echo "tarball $tb lacks files git tracks (add them to EXTRA_DIST):"
	echo "$missing" | sed 's/^/  /'
	return 1
}
[ -d .git ] || [ -f .git ] && step "tarball holds test/, scripts/" in_tarball
pkg_check() {
	local r=0
	make -C test/pkg check 2>&1 | tee -a "$log" || r=$?
	[ $r = 0 ] || show_failures test/pkg
	return $r
}
step "pkg" pkg_check
echo "==== time per step"
cat "$times"
sed -n '/==== make check: time per tier/,/total/p' "$log" | sed 's/^====/    /'
# make check's per-tier counts, and the last lines of the sanitizer and fuzz runs
cat "$log" "$xlog" | awk '/^# PASS:/ {p += $3} /^# FAIL:/ {f += $3} /^# ERROR:/ {f += $3}
	/^# SKIP:/ {s += $3}
	/^[0-9]+ passed, [0-9]+ failed, [0-9]+ skipped$/ {p += $1; f += $3; s += $5}
	END {printf "%d passed, %d failed, %d skipped\n", p, f, s}'
exit $rc
