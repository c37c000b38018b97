#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# No deadlock with a host-released stream (issue 20, JAX's "Delay kernel
# timed out"): a sibling launches a spin kernel that waits for a host flag
# (XLA's delay kernel, here with a 1 s timeout), queues 3 timed kernels
# behind it, then releases it from the host.  The gate closes at each point
# of that sequence (the sibling stops there, test/gate/capturer xla, and
# goes on once the gate is closed): before the spin kernel, after it,
# between the timed kernels, after the last, after the release.  Where the
# releasing thread would park at the gate while the drain waits for the
# spin kernel, its launches onto that busy stream go through at once (the
# drain's first round, gate.h): the spin kernel is released by the host
# (not its timeout), the drain completes (status 0, not late), nothing runs
# after the ack, gate.through_launches counts them and, without the
# bounded queue, no pass (10 ms held) was needed.  The same with the
# bounded queue on (queue_cap 1, queue time 1 ms), where the thread waits
# for the spin kernel in the queue first (the queue's own limit, region or
# not; a pass may end that wait); with 12 and 40 timed kernels between the
# spin kernel and the release (an XLA candidate of several kernels); with a
# second thread inside the driver in a synchronous read-back; floods that
# never stop launching onto busy streams (at most 64 through a drain); and
# once through the real libkrexregion and krexd (`krex run`, `krex
# region`).
. "$top_srcdir/test/lib.sh"
. "$top_srcdir/test/gate/gate_env.sh"
plan 90

# drain_at WHAT DIR CAP US CMD...: start CMD gated (queue CAP/US, its
# counts in DIR/counts), close the gate once it touched DIR/at, let it go
# on (DIR/go) and wait for the drain's ack: $P, $st (its status), $us.
drain_at() {
	local what=$1 dd=$2
	mkdir -p "$dd"
	page init "$3" "$4"
	shift 4
	a0=$(page get acks)
	bg_gated env KREX_GATE_COUNTS="$dd/counts" "$@"
	P=$!
	wait_for 10 test -e "$dd/at" || diag "$what: the sibling did not get there"
	page close
	touch "$dd/go"
	page wait-acks $((a0 + 1)) 5000 || diag "$what: no ack in 5 s"
	st=$(page get ack_status)
	us=$(page get drain_us)
}

# gcount NAME FILE: the gate's count gate.NAME summed over FILE's processes
gcount() { awk -v k="gate.$1" '$2 == k { n += $3 } END { print n + 0 }' "$2" 2>/dev/null; }

# xla POINT CAP US: one sequence with the gate closed at POINT.
xla() {
	d=$T/xla-$1-$2-${XK:-3}${XLA_SYNC:+-sync}
	drain_at "point $1" "$d" "$2" "$3" env XLA_KERNELS="${XK:-3}" XLA_SYNC="${XLA_SYNC:-}" \
		./capturer xla "$1" "$d"
	ok "point $1 (queue $2/$3, ${XK:-3} kernels${XLA_SYNC:+, a reader inside the driver}): the drain completed in $((us / 1000)) ms (status $st)" \
		[ "$st" = 0 -a "$us" -lt 1000000 ]
	ok "point $1 (queue $2/$3, ${XK:-3} kernels${XLA_SYNC:+, a reader inside the driver}): nothing queued runs after the ack" stable 100
	page open
	wait_for 10 test -e "$d/out"
	touch "$d/end"
	wait "$P" 2>/dev/null
	# every gated process of the command writes its counts: sum them
	c=$(awk '$2 ~ /^gate\.(drain|passed|queue_gave|through)/ { n[$2] += $3 }
		END { for (k in n) printf "%s=%d ", substr(k, 6), n[k] }' "$d/counts" 2>/dev/null)
	diag "point $1: $(cat "$d/out" 2>/dev/null); $c"
	ok "point $1 (queue $2/$3, ${XK:-3} kernels${XLA_SYNC:+, a reader inside the driver}): the spin kernel was released by the host" \
		grep -q "released status=1 " "$d/out"
	passes=$(gcount drain_passes "$d/counts")
	through=$(gcount through_launches "$d/counts")
	what="queue $2/$3, ${XK:-3} kernels${XLA_SYNC:+, a reader inside the driver}"
	case $1 in
	1 | 2)
		# the releasing thread's launches onto its busy stream go
		# through at once; with the bounded queue it first waits
		# there for its spin kernel (the queue's own limit, region or
		# not), and that suspect wait may take a pass
		ok "point $1 ($what): the releasing thread was not held at the gate (through ${through:-none})" \
			[ "${through:-0}" -ge 1 ]
		if [ "$2" = 0 ]; then
			ok "point $1 ($what): so the drain never stalled (passes ${passes:-none})" \
				[ "${passes:-0}" = 0 ]
		fi ;;
	*)
		ok "point $1 ($what): nothing let through, no pass needed (through ${through:-none}, passes ${passes:-none})" \
			[ "${passes:-0}" = 0 -a "${through:-0}" = 0 ] ;;
	esac
}

for p in 0 1 2 3 4; do
	xla "$p" 0 0
done
for p in 0 1 2 3 4; do
	xla "$p" 1 1000
done
# (40 with the bounded queue on is a stream's own limit, not a region's: its
# first launches behind a host-released kernel wait 50-80 ms each there,
# region or not; doc/gate.md, gate_queue_test 25.)
XK=12
xla 2 0 0
xla 2 1 1000
XK=40
xla 2 0 0
XK=3
# A second thread of the sibling in a synchronous read-back (inside the
# driver, behind the spin kernel) while the releasing thread parks: the
# drain's wait for calls inside the driver must let the parked one through
# too (it waited for the read, the read for the spin kernel, the spin
# kernel for the parked thread: 100 ms drains and JAX's "Delay kernel timed
# out" on the H200).
export XLA_SYNC=1
xla 2 0 0
xla 2 1 1000
unset XLA_SYNC

# A sibling that never stops launching onto its busy streams (CUDA: 4
# threads, 2 ms kernels on their own stream, per-thread and legacy default
# streams; HIP: one stream of 2 ms kernels), the bounded queue by count
# only (8 launches a mark): the drain's first round lets at most 64
# launches through, the rest park, the drain completes and nothing runs
# after the ack.
# flood NAME COUNTFILE CMD...
flood() {
	local name=$1 cf=$2 d=$T/flood-$1 st us through
	shift 2
	mkdir -p "$d"
	page init 8 0
	a0=$(page get acks)
	bg_gated env KREX_GATE_COUNTS="$d/counts" "$@"
	P=$!
	wait_for 10 counter_ge "$cf" 40 || diag "$name flood: the sibling did not launch"
	page close
	page wait-acks $((a0 + 1)) 10000 || diag "$name flood: no ack in 10 s"
	st=$(page get ack_status)
	us=$(page get drain_us)
	ok "$name flood: the drain completed in $((us / 1000)) ms (status $st)" [ "$st" = 0 ]
	ok "$name flood: nothing queued runs after the ack" stable 100
	page open
	touch "$d/stop" "$cf.stop"
	wait "$P" 2>/dev/null
	through=$(gcount through_launches "$d/counts")
	ok "$name flood: launches onto busy streams went through, at most 64 ($through)" \
		[ "${through:-0}" -ge 1 -a "${through:-0}" -le 64 ]
}
mkdir -p "$T/flood-cuda" "$T/flood-hip"
flood cuda "$T/flood-cuda/count" ./capturer threads 4 "$T/flood-cuda"
flood hip "$T/flood-hip/count" ./hiphog 2000 "$T/flood-hip/count"

# A releasing thread that parked at the closed gate before the drain began
# (krexd closes the gates, the process's drain thread starts a moment
# later): the first round wakes it to ask, and its launch onto the busy
# stream goes through; no pass.  The fake drain begins only once the
# thread has waited at the gate (KREX_FAKE_DRAIN_HOLD).
# early WHAT [LATE]: that case; LATE: the woken thread does not run on for
# LATE ms (KREX_FAKE_WAKE_LATE_MS, a loaded machine), longer than the
# stall (10 ms): until it asked, it is no reason for a pass.
early() {
	local what=$1 late=${2:-0}
	d=$T/early$late
	mkdir -p "$d"
	page init 0 0
	a0=$(page get acks)
	w0=$(page get waits)
	bg_gated env KREX_FAKE_DRAIN_HOLD="$d/hold" KREX_FAKE_WAKE_LATE_MS="$late" \
		KREX_GATE_COUNTS="$d/counts" ./capturer xla 1 "$d"
	P=$!
	wait_for 10 test -e "$d/at" || diag "$what: the sibling did not get to point 1"
	page close
	touch "$d/go"
	ok "$what: the releasing thread parked at the gate before the drain began" \
		wait_for 10 sh -c "[ \$('$FG' '$T/page' get waits) -gt $w0 ]"
	touch "$d/hold"
	page wait-acks $((a0 + 1)) 5000 || diag "$what: no ack in 5 s"
	ok "$what: the drain completed (status $(page get ack_status))" [ "$(page get ack_status)" = 0 ]
	page open
	wait_for 10 test -e "$d/out"
	touch "$d/end"
	wait "$P" 2>/dev/null
	ok "$what: woken by the first round, it went through (through $(gcount through_launches "$d/counts"), passes $(gcount drain_passes "$d/counts")); released by the host" \
		[ "$(gcount through_launches "$d/counts")" -ge 1 -a "$(gcount drain_passes "$d/counts")" = 0 ] &&
		grep -q "released status=1 " "$d/out"
}
early early
early "early, run 30 ms late after the wake" 30

# Never through: a stream wait or a host function that waits for the host,
# submitted onto a stream busy (a 300 ms kernel) in the drain's first
# round, parks (let through, it would hold the drain until the host writes
# its flag, which this sibling does only after the region).
for how in waitvalue hostfn; do
	d=$T/busyhold-$how
	drain_at "busyhold $how" "$d" 0 0 ./capturer busyhold "$how" "$d"
	ok "busyhold $how: the drain completed, not held by the op (status $st, $((us / 1000)) ms)" \
		[ "$st" = 0 ]
	ok "busyhold $how: the op was not submitted while the gate was closed" test ! -e "$d/queued"
	page open
	wait_for 10 test -e "$d/queued"
	touch "$d/end"
	wait_for 10 test -e "$d/out"
	wait "$P" 2>/dev/null
	through=$(gcount through_launches "$d/counts")
	ok "busyhold $how: nothing went through onto the busy stream ($through); the op ran after ($(cat "$d/out" 2>/dev/null))" \
		[ "${through:-x}" = 0 ] && grep -q "released status=1 " "$d/out"
done

# A drain stalled with nothing parked and nothing inside the driver (the
# releasing thread busy elsewhere: here it waits for DIR/go, at point 2,
# behind its spin kernel): at KREX_LOG=debug the gate says, once per drain
# and only after 50 ms without progress, where each of its threads is.
d=$T/snap
mkdir -p "$d"
page init 0 0
a0=$(page get acks)
bg_gated env KREX_LOG=debug ./capturer xla 2 "$d" 2>"$d/err"
P=$!
wait_for 10 test -e "$d/at" || diag "snapshot: the sibling did not get to point 2"
page close
ok "a drain stalled 50 ms with nothing parked says where its threads are" \
	wait_for 10 grep -q "drain: no progress for [0-9]* ms, 0 parked, 0 inside the driver; threads: [0-9]*/[^ ]*:[RSD]:" "$d/err"
diag "$(grep -m1 'no progress for' "$d/err" | cut -c1-300)"
touch "$d/go"
page wait-acks $((a0 + 1)) 5000 || diag "snapshot: no ack in 5 s"
ok "once per drain" [ "$(grep -c 'no progress for' "$d/err")" = 1 ]
page open
wait_for 10 test -e "$d/out"
touch "$d/end"
wait "$P" 2>/dev/null

# The same through the real libkrexregion and krexd (point 1): the sibling
# under `krex run`, a region from `krex region`; the sibling goes on once
# krexd has logged that it closed the gates (-v), so its launches meet the
# closed gate while the drain waits for its spin kernel (and go through).
KREXD=$top_builddir/krexd/krexd
KREX=$top_builddir/krex/krex
if [ -x "$KREXD" ] && [ -x "$KREX" ]; then
	export KREX_SOCKET=$T/run/krexd.sock KREX_GPUS=mock0 KREX_GATE_LIB=$G
	export LD_LIBRARY_PATH=$top_builddir/libregion/.libs:$LD_LIBRARY_PATH
	unset KREX_FAKE_GATE
	mkdir -p "$T/run" "$T/real"
	"$KREXD" -F -v -r "$T/run" -o gpus=mock0 -o drain_timeout=2s \
		-o "cgroup_subtree=krex-test/x$$" 2>"$T/krexd.log" &
	KD=$!
	PIDS="$PIDS $KD"
	wait_for 10 test -S "$KREX_SOCKET" || diag "krexd did not start"
	"$KREX" run --gpus mock0 -- env KREX_GATE_COUNTS="$T/real/counts" ./capturer xla 1 "$T/real" &
	S=$!
	PIDS="$PIDS $S"
	wait_for 10 test -e "$T/real/at" || diag "the sibling did not get to point 1"
	# libkrexregion names its drain thread (the stall snapshot shows it)
	CP=$(pgrep -f "^[^ ]*capturer xla 1 $T/real" | head -1)
	ok "krexd: the sibling's drain thread is named krex-drain" \
		sh -c "cat /proc/${CP:-0}/task/*/comm 2>/dev/null | grep -qx krex-drain"
	timeout -k 5 30 "$KREX" region --gpus mock0 --cert "$T/real/cert" -- true &
	R=$!
	wait_for 10 grep -q 'gates closed' "$T/krexd.log" || diag "krexd did not close the gates"
	touch "$T/real/go"
	wait "$R"
	diag "$(tr -d '\n' <"$T/real/cert" | cut -c1-400)"
	ok "krexd: the region's certificate is clean" grep -q '"outcome": *"clean"' "$T/real/cert"
	wait_for 10 test -e "$T/real/out"
	ok "krexd: the spin kernel was released by the host ($(cat "$T/real/out" 2>/dev/null))" \
		grep -q "released status=1 " "$T/real/out"
	touch "$T/real/end"
	wait "$S"
	src=$?
	c=$(awk '$2 ~ /^gate\.(drain|passed|through)/ { n[$2] += $3 }
		END { for (k in n) printf "%s=%d ", substr(k, 6), n[k] }' "$T/real/counts" 2>/dev/null)
	ok "krexd: the releasing thread went through onto its busy stream, in the gate's counts ($c)" \
		sh -c "awk '\$2 == \"gate.through_launches\" { n += \$3 } END { exit !(n >= 1) }' '$T/real/counts'"
	ok "krexd: the sibling ran to its end (krex run exited $src)" [ "$src" = 0 ]

	kill "$KD"
	wait "$KD" 2>/dev/null
else
	for i in 1 2 3 4 5 6 7; do skip "real krexd check $i" "krexd or krex not built"; done
fi
done_testing
