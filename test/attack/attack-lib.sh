# SPDX-License-Identifier: BSD-3-Clause
# attack-lib.sh - helpers for the attacker tier (source after lib.sh and
# test/integration/krexd-lib.sh): krexd runs as root, the attacks as an
# unprivileged user.
#
#	. "$top_srcdir/test/lib.sh"; . "$top_srcdir/test/integration/krexd-lib.sh"
#	. "$top_srcdir/test/attack/attack-lib.sh"; at_setup; krexd_start; ...

ATTACK=$top_builddir/test/attack/krex-attack
KREX=$top_builddir/krex/krex
AT_USER=nobody

# at_need_krex: skip unless the krex CLI is built.
at_need_krex() { [ -x "$KREX" ] || skip_all "krex CLI not built"; }

at_setup() {
	need_root
	[ -x "$ATTACK" ] || skip_all "krex-attack not built"
	id "$AT_USER" >/dev/null 2>&1 || useradd -r -M -s /usr/sbin/nologin "$AT_USER" 2>/dev/null ||
		skip_all "no user $AT_USER and useradd failed"
	command -v setpriv >/dev/null || skip_all "setpriv (util-linux) not found"
	AT_UID=$(id -u "$AT_USER")
	kt_setup
	# the unprivileged user must reach the socket and the built programs
	as_user test -x "$ATTACK" || skip_all "$ATTACK is not reachable by $AT_USER"
	as_user test -x "$CLIENT" || skip_all "$CLIENT is not reachable by $AT_USER"
}

# as_user CMD...: run CMD as the unprivileged user (environment kept).
as_user() {
	setpriv --reuid="$AT_UID" --regid="$(id -g "$AT_USER")" --clear-groups -- "$@"
}

# at_bg NAME CMD...: like kt_bg, as the unprivileged user.
at_bg() {
	local name=$1
	shift
	kt_bg "$name" setpriv --reuid="$AT_UID" --regid="$(id -g "$AT_USER")" --clear-groups -- "$@"
}

# at_ms CMD...: run CMD, print how many ms it took; fails with CMD.
at_ms() {
	local t0 t1
	t0=$(date +%s%N)
	"$@" >/dev/null 2>&1 || return 1
	t1=$(date +%s%N)
	echo $(((t1 - t0) / 1000000))
}

# at_fds PID: open fds of PID.
at_fds() { ls "/proc/$1/fd" 2>/dev/null | wc -l; }

# at_rss_kb PID
at_rss_kb() { awk '/^VmRSS/ {print $2}' "/proc/$1/status"; }
