#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# undo-v2.sh - CPU isolation and its undo on this node's real cgroups
# (meant for the H200 node: cgroup v2 with the cpuset controller; it runs
# on cgroup v1 too).  Issue 10 item 3: after every region every process is
# back on the CPUs it had, no undo fails, a job of another GPU is never
# moved, and the owner takes at most its GPU's share of the cores.
#
#	bash test/gpu/undo-v2.sh [BUILDDIR]      (root; from the source tree's root)
#
# No GPU work: the participants are krex-testclient processes (two GPU
# names, g0 and g1, stand for the node's GPUs), so it needs no driver.
# Writes krexd.log, the certificates and summary.txt under $OUT (default
# ./undo-v2-out); prints the summary last: one PASS/FAIL line per check,
# then "undo-v2: N/M passed".  Stays under 2 minutes (REGIONS=20 regions of 1 s).
set -u
src=$(cd "$(dirname "$0")/../.." && pwd)
B=${1:-${KREX_BUILDDIR:-$src}}
OUT=${OUT:-$PWD/undo-v2-out}
mkdir -p "$OUT" && OUT=$(cd "$OUT" && pwd)
KREXD=$B/krexd/krexd
CLIENT=$B/test/integration/krex-testclient
REGIONS=${REGIONS:-20}
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root"; exit 0; }
[ -x "$KREXD" ] && [ -x "$CLIENT" ] || { echo "SKIP: build krexd and test/integration/krex-testclient first"; exit 0; }

RUN=$(mktemp -d /tmp/krex-undo-v2.XXXXXX)
chmod 755 "$RUN"
export KREX_SOCKET=$RUN/krexd.sock
SUB=krex-undo-v2-$$
PIDS=
KPID=
S=$OUT/summary.txt
: >"$S"
rm -f "$OUT"/cert*.txt
pass=0
total=0

cleanup() {
	local p d
	for d in /sys/fs/cgroup/$SUB/p* /sys/fs/cgroup/freezer/$SUB/p*; do
		[ -f "$d/cgroup.freeze" ] && echo 0 >"$d/cgroup.freeze" 2>/dev/null
		[ -f "$d/freezer.state" ] && echo THAWED >"$d/freezer.state" 2>/dev/null
	done
	[ -n "$KPID" ] && kill -TERM "$KPID" 2>/dev/null && sleep 1
	for p in $PIDS; do kill -CONT "$p" 2>/dev/null; kill -KILL "$p" 2>/dev/null; done
	[ -n "$KPID" ] && kill -KILL "$KPID" 2>/dev/null
	cp "$RUN/krexd.log" "$OUT/" 2>/dev/null
	rm -rf "$RUN"
}
trap cleanup EXIT

check() { # check NAME COMMAND...
	local name=$1
	shift
	total=$((total + 1))
	if "$@"; then
		pass=$((pass + 1))
		echo "PASS $name" | tee -a "$S"
	else
		echo "FAIL $name" | tee -a "$S"
	fi
}
cpus() { sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' "/proc/$1/status" 2>/dev/null; }
all_cpus() { local p; for p in "$@"; do printf '%s=%s ' "$p" "$(cpus "$p")"; done; }
ncpus() { # number of CPUs in a list
	local n=0 r a b
	for r in $(echo "$1" | tr , ' '); do
		a=${r%-*}
		b=${r#*-}
		n=$((n + b - a + 1))
	done
	echo $n
}
expand() { # the CPUs of a list, one per line
	local r a b
	for r in $(echo "$1" | tr , ' '); do
		a=${r%-*}
		b=${r#*-}
		seq "$a" "$b"
	done
}
disjoint() { # disjoint LIST LIST
	[ -z "$(comm -12 <(expand "$1" | sort) <(expand "$2" | sort))" ]
}

printf 'gpus = g0,g1\nisolate = participants\n' >"$RUN/krexd.conf"
timeout 100 "$KREXD" -F -c "$RUN/krexd.conf" -r "$RUN" -o "cgroup_subtree=$SUB" >"$RUN/krexd.log" 2>&1 &
KPID=$!
for i in $(seq 50); do "$CLIENT" status >/dev/null 2>&1 && break; sleep 0.1; done
echo "node: $(nproc) CPUs; $("$CLIENT" status | head -1)" | tee -a "$S"
"$CLIENT" participant --gpus g0 --ack-drains >"$RUN/sib1.out" 2>&1 &
sib1=$!
"$CLIENT" participant --gpus g0 --ack-drains >"$RUN/sib2.out" 2>&1 &
sib2=$!
"$CLIENT" participant --gpus g1 --ack-drains >"$RUN/far.out" 2>&1 &
far=$!
PIDS="$sib1 $sib2 $far"
for i in $(seq 50); do grep -qs registered "$RUN/far.out" && grep -qs registered "$RUN/sib2.out" && break; sleep 0.1; done
before=$(all_cpus $sib1 $sib2 $far)
far_before=$(cpus $far)
echo "before: $before" | tee -a "$S"
bad_during=0
far_moved=0
own_max=0
for r in $(seq "$REGIONS"); do
	"$CLIENT" region --gpus g0 --hold-ms 1000 >"$RUN/own$r.out" 2>&1 &
	own=$!
	PIDS="$PIDS $own"
	for i in $(seq 50); do grep -qs granted "$RUN/own$r.out" && break; sleep 0.02; done
	# Read every mask at once, while the region is surely held (1 s).
	oc=$(cpus $own)
	s1=$(cpus $sib1)
	s2=$(cpus $sib2)
	fc=$(cpus $far)
	n=$(ncpus "$oc")
	[ "$n" -gt "$own_max" ] && own_max=$n
	# Siblings are frozen: their masks still say where they may run.
	disjoint "$oc" "$s1" && disjoint "$oc" "$s2" || {
		bad_during=$((bad_during + 1))
		echo "region $r: owner $oc, siblings $s1 $s2" >>"$S"
	}
	[ "$fc" = "$far_before" ] || far_moved=$((far_moved + 1))
	wait "$own"
	cp "$RUN/own$r.out" "$OUT/cert$r.txt"
	after=$(all_cpus $sib1 $sib2 $far)
	[ "$after" = "$before" ] || echo "after region $r: $after" >>"$S"
done
after=$(all_cpus $sib1 $sib2 $far)
echo "after: $after" | tee -a "$S"
outcomes=$(cat "$OUT"/cert*.txt | sed -n 's/^outcome=//p' | sort | uniq -c | tr '\n' ' ')
echo "certificates: $outcomes" | tee -a "$S"
check "siblings off the owner's cores in every region ($bad_during of $REGIONS not)" test "$bad_during" = 0
check "job of the other GPU never moved ($far_moved of $REGIONS moved)" test "$far_moved" = 0
check "everyone back on their CPUs after the last region" test "$after" = "$before"
check "no undo or thaw failed (krexd.log)" sh -c "! grep -qi 'undo.*fail\|undo .*:\|thaw failed\|still not undone' '$RUN/krexd.log'"
check "owner at most $(( $(nproc) / 2 )) CPUs, its share of 2 GPUs (got $own_max)" test "$own_max" -le $(( $(nproc) / 2 ))
check "every certificate clean" sh -c "[ \"\$(cat '$OUT'/cert*.txt | grep -c '^outcome=clean')\" = $REGIONS ]"
echo "undo-v2: $pass/$total passed" | tee -a "$S"
[ "$pass" = "$total" ]
