#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# The mock GPU (test/mock, a TEST DOUBLE) shares its device fairly: busy
# processes take turns kernel by kernel (a ticket lock, FIFO across
# processes), as a real GPU time-slices between contexts.  Four hogs that wait
# for each 2 ms kernel (krex-hog --sync, no gate) run for 3 s side by side:
# each gets about a quarter of the kernels, and the device is kept busy.
# A turn nobody takes is passed on: a hog frozen (SIGSTOP) while it waits for
# the device does not stop the others.
. "$top_srcdir/test/lib.sh"
MOCKLIB=${KREX_MOCK_LIB:-$top_builddir/test/mock/.libs}
HOG=$top_builddir/test/workloads/krex-hog
FG=$top_builddir/test/gate/fakegate
[ -x "$HOG" ] || skip_all "krex-hog not built"
T=$(mktemp -d) || exit 1
PIDS=
export KREX_MOCK_GPU=/krex-fair-$$
export LD_LIBRARY_PATH=$MOCKLIB${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
cleanup() {
	for p in $PIDS; do
		kill -CONT "$p" 2>/dev/null
		kill -KILL "$p" 2>/dev/null
	done
	wait 2>/dev/null
	rm -rf "$T" "/dev/shm$KREX_MOCK_GPU"
}
trap cleanup EXIT
plan 4

for i in 1 2 3 4; do
	timeout 20 "$HOG" 2000 --sync --seconds 3 --counter "$T/hog.$i" &
	PIDS="$PIDS $!"
done
wait $PIDS
PIDS=
N=$(cat "$T"/hog.* | tr '\n' ' ')
diag "kernels each in 3 s: $N"
MIN=$(cat "$T"/hog.* | sort -n | head -1)
MAX=$(cat "$T"/hog.* | sort -n | tail -1)
SUM=$(cat "$T"/hog.* | awk '{ s += $1 } END { print s + 0 }')
ok "four hogs ran" [ "$(cat "$T"/hog.* | wc -l)" -eq 4 ] && [ "$MIN" -gt 0 ]
ok "fair: the fewest kernels of a hog ($MIN) are at least 3/4 of the most ($MAX)" \
	[ $((MIN * 4)) -ge $((MAX * 3)) ]
# 3 s of 2 ms kernels is 1500; a turn handed over late (the 50 ms cap) gives
# about 60: 600 leaves room for a loaded 2-core machine and a sanitizer build
ok "the device stays busy: $SUM kernels of 2 ms in 3 s (>= 600)" [ "$SUM" -ge 600 ]

# A stopped hog's turn is passed on: two hogs, one stopped (the hog itself,
# not a wrapper) while it waits for its turn; the other then runs alone
# (about 460 kernels of 2 ms a second here; sharing, half that).
rm -f "$T"/hog.*
# Both run until stopped (SIGTERM ends them cleanly); the tries start once
# both have counted kernels (a sanitizer build starts slowly).
"$HOG" 2000 --seconds 60 --counter "$T/hog.a" &
A=$!
"$HOG" 2000 --sync --seconds 60 --counter "$T/hog.b" &
PIDS="$A $!"
wait_for 20 test -s "$T/hog.a" -a -s "$T/hog.b" || diag "the two hogs did not both start in 20 s"
# stopped while it waits for its turn, not mid-kernel (a holder stopped
# mid-kernel keeps the device, as documented in doc/gate.md).  The two hogs
# alternate every 2 ms; the pause between tries varies (1 to 7 centiseconds)
# so that the tries do not fall into step with them (in a CI run under ASan,
# 50 tries at a fixed 10 ms all found the hog holding the device).
caught=no
for i in $(seq 300); do
	kill -STOP "$A"
	[ "$("$FG" holder)" != "$A" ] && { caught="yes (try $i)"; break; }
	kill -CONT "$A"
	sleep "0.0$((i % 7 + 1))"
done
[ "$caught" != no ] || diag "the hog held the device at each of 300 stops"
B0=$(cat "$T/hog.b" 2>/dev/null || echo 0)
sleep 3
B1=$(cat "$T/hog.b" 2>/dev/null || echo 0)
STATE=$(awk '{ print $3 }' "/proc/$A/stat" 2>/dev/null)
kill -CONT "$A"
kill -TERM $PIDS
wait $PIDS
PIDS=
diag "the running hog's kernels in 3 s beside a stopped one (state $STATE, stopped outside its turn: $caught): $((B1 - B0))"
# Measured against the four hogs' total above, on the same machine in the
# same build (a sanitizer build launches slower): alone it gets about all of
# it (0.82 to 1.0 here, the counter being written every 500 ms); a stopped
# hog that still took its turns would hold each for the 50 ms cap (about 60
# kernels in 3 s), and one left running shares fairly (half): 2/3 tells
# both apart.
ok "a hog stopped while queued does not take turns ($((B1 - B0)) kernels of 2 ms in 3 s, >= 2/3 of the four hogs' $SUM)" \
	[ "$STATE" = T ] && [ $((3 * (B1 - B0))) -ge $((2 * SUM)) ]
done_testing
