# SPDX-License-Identifier: BSD-3-Clause
# lib.sh - helpers for shell TAP tests (source it).
#
#	. "$top_srcdir/test/lib.sh"
#	plan 3; ok "krexd starts" krexd_start; ...; done_testing
#
# Every test that starts a daemon stops it in its EXIT trap.

: "${top_srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}"
: "${top_builddir:=$top_srcdir}"

_tap_n=0
_tap_fail=0

# TAP_EXTRA: checks a harness adds after the test's own (test/slurm's
# containers mode: every job ran in the image, cluster.sh)
plan() {
	_tap_planned=$1
	echo "1..$(($1 + ${TAP_EXTRA:-0}))"
}
skip_all() { echo "1..0 # SKIP $*"; exit 0; }
diag() { echo "# $*"; }

# ok DESCRIPTION COMMAND...: one TAP line for the command's exit status.
# With TODO=REASON (a known bug), the line carries "# TODO REASON": its
# failure does not fail the test (automake: XFAIL), its pass does (XPASS:
# the bug is gone, remove the TODO).
ok() {
	local desc=$1 todo=${TODO:+ # TODO $TODO}
	shift
	_tap_n=$((_tap_n + 1))
	if TODO="" "$@"; then
		echo "ok $_tap_n - $desc$todo"
	else
		echo "not ok $_tap_n - $desc$todo"
		[ -n "$todo" ] || _tap_fail=$((_tap_fail + 1))
	fi
}

# skip DESCRIPTION REASON
skip() {
	_tap_n=$((_tap_n + 1))
	echo "ok $_tap_n - $1 # SKIP $2"
}

done_testing() { [ "$_tap_fail" = 0 ]; }

need_root() { [ "$(id -u)" = 0 ] || skip_all "needs root"; }

# wait_for SECONDS COMMAND...: poll every 20 ms until the command succeeds.
# in_futex PID: PID's main thread is blocked in futex(2) (a wait at the gate).
in_futex() {
	local w n
	w=$(cat "/proc/$1/wchan" 2>/dev/null)
	case $w in *futex*) return 0 ;; esac
	read -r n _ <"/proc/$1/syscall" 2>/dev/null || return 1
	case $(uname -m) in
	x86_64) [ "$n" = 202 ] ;;
	aarch64) [ "$n" = 98 ] ;;
	*) return 1 ;;
	esac
}

wait_for() {
	local limit=$1 i=0
	shift
	while ! "$@"; do
		i=$((i + 1))
		[ $i -ge $((limit * 50)) ] && return 1
		sleep 0.02
	done
}
