# SPDX-License-Identifier: BSD-3-Clause
# embedded-lib.sh - helpers for the embedded-mode tests (source after lib.sh).
#
#	. "$top_srcdir/test/lib.sh"; . "$top_srcdir/test/integration/embedded-lib.sh"
#	emb_setup; "$KREX" run -- true; ...
#
# Each test gets a fresh XDG_RUNTIME_DIR; `krex run` starts its private krexd
# through a wrapper (KREX_KREXD) that gives it the signal freezer and a
# cgroup subtree of the test's own.  The EXIT trap stops every private krexd
# the test started (by the pids in their pid files) and removes the dirs.

KREX=$top_builddir/krex/krex
KREXD=$top_builddir/krexd/krexd
EMB_PIDS=

emb_setup() {
	[ -x "$KREXD" ] || skip_all "krexd not built"
	[ -x "$KREX" ] || skip_all "krex not built"
	# A system krexd would be used instead of a private one.
	[ -S /run/krex/krexd.sock ] && skip_all "a system krexd runs (/run/krex/krexd.sock)"
	EMB_DIR=$(mktemp -d /tmp/krex-emb-test.XXXXXX) || exit 1
	chmod 755 "$EMB_DIR" # tests that run a second user reach their files
	EMB_SUB=krex-test/e$$
	trap emb_cleanup EXIT
	cat >"$EMB_DIR/krexd-wrap" <<WRAP
#!/bin/sh
echo \$\$ >>"$EMB_DIR/krexd-starts"
exec "$KREXD" "\$@" -c "$EMB_DIR/krexd.conf" -o freezer=signal -o "cgroup_subtree=$EMB_SUB" -o gpus=g0 -o isolate=none
WRAP
	chmod 755 "$EMB_DIR/krexd-wrap"
	: >"$EMB_DIR/krexd.conf" # tests may add lines (node_name, ...)
	: >"$EMB_DIR/krexd-starts"
	chmod 666 "$EMB_DIR/krexd-starts" # krexd started by a test's second user
	export KREX_KREXD=$EMB_DIR/krexd-wrap
	unset KREX_SOCKET KREX_GPUS CUDA_VISIBLE_DEVICES
	emb_fresh xdg
}

# emb_fresh NAME: a new, empty XDG_RUNTIME_DIR (0700) for what follows.
emb_fresh() {
	export XDG_RUNTIME_DIR=$EMB_DIR/$1
	mkdir -m 0700 "$XDG_RUNTIME_DIR"
	EMB_RUN=$XDG_RUNTIME_DIR/krex
}

# The pid in a private krexd's pid file, if that process runs.
emb_pid() {
	local p
	p=$(cat "${1:-$EMB_RUN}/krexd.pid" 2>/dev/null) || return 1
	[ -n "$p" ] && kill -0 "$p" 2>/dev/null && echo "$p"
}

# How many krexd processes run with run dir $1 (default $EMB_RUN).
emb_count() {
	local dir=${1:-$EMB_RUN} n=0 f
	for f in /proc/[0-9]*/cmdline; do
		{ tr '\0' ' ' <"$f"; } 2>/dev/null | grep -q "krexd -r $dir " && n=$((n + 1))
	done
	echo "$n"
}

emb_cleanup() {
	local f p
	for f in "$EMB_DIR"/*/krex/krexd.pid "$EMB_DIR"/*/krexd.pid; do
		p=$(cat "$f" 2>/dev/null) || continue
		[ -n "$p" ] && kill -TERM "$p" 2>/dev/null && EMB_PIDS="$EMB_PIDS $p"
	done
	for p in $EMB_PIDS; do emb_kill_tree "$p"; done
	for p in $EMB_PIDS; do
		wait_for 5 emb_gone "$p" || kill -KILL "$p" 2>/dev/null
	done
	for p in /sys/fs/cgroup/*/"$EMB_SUB" /sys/fs/cgroup/"$EMB_SUB"; do
		[ -d "$p" ] && find "$p" -depth -type d -exec rmdir {} + 2>/dev/null
	done
	if [ "$_tap_fail" != 0 ] && [ -z "$EMB_QUIET" ]; then
		for f in "$EMB_DIR"/*.out; do
			[ -s "$f" ] && diag "$f: $(head -c 300 "$f" | tr '\n' '|')"
		done
	fi
	[ -n "$KT_KEEP" ] || rm -rf "$EMB_DIR"
}

emb_gone() { ! kill -0 "$1" 2>/dev/null; }

# emb_kill_tree PID: PID and its descendants (krex run's child is the command).
emb_kill_tree() {
	local c
	for c in $(pgrep -P "$1" 2>/dev/null); do emb_kill_tree "$c"; done
	kill -CONT "$1" 2>/dev/null
	kill -TERM "$1" 2>/dev/null
}
