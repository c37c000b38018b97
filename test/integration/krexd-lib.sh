# SPDX-License-Identifier: BSD-3-Clause
# krexd-lib.sh - helpers for krexd's integration tests (source after lib.sh).
#
#	. "$top_srcdir/test/lib.sh"; . "$top_srcdir/test/integration/krexd-lib.sh"
#	kt_setup; kt_conf "gpus = g0"; krexd_start; ...
#
# Each test runs its own krexd in a temp run dir with its own cgroup subtree,
# and the EXIT trap thaws and kills everything it started, also on failure.

CLIENT=$top_builddir/test/integration/krex-testclient
KREXD=$top_builddir/krexd/krexd
KT_PIDS=
KREXD_PID=

kt_setup() {
	[ -x "$KREXD" ] || skip_all "krexd not built"
	KT_DIR=$(mktemp -d /tmp/krexd-test.XXXXXX) || exit 1
	chmod 755 "$KT_DIR" # other users reach the socket (tests that run as nobody)
	KT_SUB=krex-test/t$$
	export KREX_SOCKET=$KT_DIR/krexd.sock
	trap kt_cleanup EXIT
	: >"$KT_DIR/krexd.conf"
}

# kt_mock_nvml: after kt_setup, krexd and its clients load the mock NVML
# (test/mock/mock_nvml.c, a TEST DOUBLE): its script $KREX_MOCK_NVML, its
# log $KREX_MOCK_NVML_LOG.  Skips the test when the mock is not built.
kt_mock_nvml() {
	local libs=$top_builddir/test/mock/nvml/.libs
	[ -e "$libs/libnvidia-ml.so.1" ] || skip_all "mock NVML not built"
	export LD_LIBRARY_PATH=$libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
	export KREX_MOCK_NVML=$KT_DIR/nvml.txt KREX_MOCK_NVML_LOG=$KT_DIR/nvml.log
}

# kt_nvml LINE...: the mock NVML's script, replaced whole at once.
kt_nvml() { printf '%s\n' "$@" >"$KT_DIR/nvml.tmp" && mv "$KT_DIR/nvml.tmp" "$KREX_MOCK_NVML"; }

# kt_hold NAME: a region on GPU 0 in the background, held until NAME.end
# exists; waits for its grant.
kt_hold() {
	rm -f "$KT_DIR/$1.end"
	kt_bg "$1" "$CLIENT" region --gpus 0 --hold-until "$KT_DIR/$1.end"
	wait_for 10 grep -qs granted "$KT_DIR/$1.out"
}

# kt_unhold NAME: end it and wait for its certificate.
kt_unhold() {
	local w
	eval "w=\$$1"
	touch "$KT_DIR/$1.end"
	wait_for 10 kt_gone "$w" && grep -qs '^outcome=' "$KT_DIR/$1.out"
}

# kt_conf LINE...: append lines to the test's krexd.conf.
kt_conf() { printf '%s\n' "$@" >>"$KT_DIR/krexd.conf"; }

# The freezers this node has, for tests that loop over them.
kt_freezers() {
	if [ -n "$KT_FREEZERS" ]; then echo "$KT_FREEZERS"; return; fi
	local f=
	grep -qs ' - cgroup .*freezer' /proc/self/mountinfo && [ "$(id -u)" = 0 ] && f="$f cgroup1"
	grep -qs ' - cgroup2 ' /proc/self/mountinfo && [ "$(id -u)" = 0 ] && f="$f cgroup2"
	echo "$f signal"
}

# krexd_start [ARGS...]: start krexd -F and wait until it answers.
krexd_start() {
	"$KREXD" -F -c "$KT_DIR/krexd.conf" -r "$KT_DIR" -o "cgroup_subtree=$KT_SUB" "$@" \
		>>"$KT_DIR/krexd.log" 2>&1 &
	KREXD_PID=$!
	wait_for 5 "$CLIENT" status >/dev/null 2>&1
}

krexd_stop() {
	[ -n "$KREXD_PID" ] || return 0
	kill -TERM "$KREXD_PID" 2>/dev/null
	wait_for 5 kt_gone "$KREXD_PID" || kill -KILL "$KREXD_PID" 2>/dev/null
	wait "$KREXD_PID" 2>/dev/null
	KREXD_PID=
}

kt_gone() { ! kill -0 "$1" 2>/dev/null; }

# kt_bg NAME CMD...: run a client in the background; its pid goes to KT_PIDS and $NAME.
kt_bg() {
	local name=$1
	shift
	rm -f "$KT_DIR/$name.out" # a wait on it must not see an earlier run's
	"$@" >"$KT_DIR/$name.out" 2>&1 &
	KT_PIDS="$KT_PIDS $!"
	eval "$name=$!"
}

# kt_participant NAME ARGS...: a busy participant counting into $KT_DIR/NAME.count.
kt_participant() {
	local name=$1
	shift
	kt_bg "$name" "$CLIENT" participant --counter "$KT_DIR/$name.count" "$@"
	wait_for 5 grep -qs registered "$KT_DIR/$name.out" &&
		wait_for 5 test -s "$KT_DIR/$name.count"
}

# (read again when empty: a writer's "echo N > FILE" truncates first, and on a
# loaded host a reader can find it empty many times in a row)
kt_count() {
	local v i
	for i in 1 2 3 4 5; do
		v=$(cat "$KT_DIR/$1.count" 2>/dev/null)
		[ -n "$v" ] && break
		sleep 0.01
	done
	echo "${v:-0}"
}

# kt_progress NAME: true if NAME's counter moves within 1 s.
kt_progress() {
	local a b i
	a=$(kt_count "$1")
	for i in 1 2 3 4 5 6 7 8 9 10; do
		sleep 0.1
		b=$(kt_count "$1")
		[ "$a" != "$b" ] && return 0
	done
	return 1
}

# kt_stalled NAME: true if NAME's counter does not move for 0.3 s.
kt_stalled() {
	local a b
	a=$(kt_count "$1")
	sleep 0.3
	b=$(kt_count "$1")
	[ "$a" = "$b" ]
}

# kt_field FILE KEY: the value of key=value in FILE.
kt_field() { sed -n "s/^$2=//p" "$1" | head -n 1; }

# Thaw whatever this test's cgroups or pids may still hold, then kill it all.
kt_thaw_all() {
	local d
	for d in /sys/fs/cgroup/freezer/$KT_SUB/p*; do
		[ -d "$d" ] && echo THAWED >"$d/freezer.state" 2>/dev/null
	done
	for d in /sys/fs/cgroup/unified/$KT_SUB/p* /sys/fs/cgroup/$KT_SUB/p*; do
		[ -f "$d/cgroup.freeze" ] && echo 0 >"$d/cgroup.freeze" 2>/dev/null
	done
	for d in $KT_PIDS; do kill -CONT "$d" 2>/dev/null; done
}

kt_rm_cgroups() {
	local root d
	for root in /sys/fs/cgroup/freezer /sys/fs/cgroup/cpuset /sys/fs/cgroup/unified /sys/fs/cgroup; do
		for d in "$root/$KT_SUB"/p*; do [ -d "$d" ] && rmdir "$d" 2>/dev/null; done
		[ -d "$root/$KT_SUB" ] && rmdir "$root/$KT_SUB" 2>/dev/null
	done
}

kt_cleanup() {
	local p
	kt_thaw_all
	krexd_stop
	kt_thaw_all
	for p in $KT_PIDS; do kill -KILL "$p" 2>/dev/null; done
	for p in $KT_PIDS; do wait "$p" 2>/dev/null; done
	kt_rm_cgroups
	if [ "$_tap_fail" != 0 ] && [ -f "$KT_DIR/krexd.log" ]; then
		diag "krexd log:"
		sed 's/^/#   /' "$KT_DIR/krexd.log" | tail -n 150
	fi
	[ -n "$KT_KEEP" ] || rm -rf "$KT_DIR"
}
