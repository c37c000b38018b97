#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# ctxhold.sh - on the GPU machine: frameworks started while another
# participant's region holds the GPU (PyTorch, CuPy, JAX, each under `krex
# run`) wait at the gate to make their CUDA context (doc/gate.md, "Making a
# context waits at a closed gate"), make it once the region ends, and
# compute the right result.
#
#	bash test/gpu/ctxhold.sh BUILDDIR     (from the source tree's root)
#
# OUT (default ./ctxhold-out) gets krexd's log, each framework's output and
# gate trace.  Prints one PASS or FAIL line per check and exits 1 on a FAIL;
# a framework that does not import is a SKIP line.  Reads no GPU setting and
# changes none.  Every wait is bounded.
set -u
B=${1:?usage: ctxhold.sh BUILDDIR}
OUT=${OUT:-$PWD/ctxhold-out}
mkdir -p "$OUT/run"
. test/gpu/gpu-lib.sh
export KREX_GATE_LIB=$B/gate/.libs/libkrexgate.so
export LD_LIBRARY_PATH=$B/libregion/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export KREX_SOCKET=$OUT/run/krexd.sock XLA_PYTHON_CLIENT_PREALLOCATE=false
KREX=$B/krex/.libs/krex
[ -x "$KREX" ] || KREX=$B/krex/krex
trap 'stop_all; krexd_down' EXIT
fail=0
check() { # DESC CMD...
	if "${@:2}"; then echo "PASS: $1"; else echo "FAIL: $1"; fail=1; fi
}
waitfor() { # SECONDS CMD...
	local i
	for ((i = 0; i < $1 * 10; i++)); do "${@:2}" && return 0; sleep 0.1; done
	return 1
}
declare -A code=(
	[torch]='import torch; s = float(torch.arange(1000., device="cuda").sum())'
	[cupy]='import cupy; s = float(cupy.arange(1000, dtype=cupy.float64).sum())'
	[jax]='import jax.numpy as jnp; s = float(jnp.arange(1000.).sum())'
)
fws=
for fw in torch cupy jax; do
	if timeout 60 python3 -c "import $fw" 2>/dev/null; then fws="$fws $fw"; else echo "SKIP: $fw does not import"; fi
done
krexd_up "$OUT/krexd.log" -r "$OUT/run" -o log_level=debug -o max_region=120s
# The owner: a region held until OUT/go exists.
rm -f "$OUT/in" "$OUT/go"
timeout 150 "$KREX" region --cert "$OUT/cert" -- sh -c "touch $OUT/in; while [ ! -e $OUT/go ]; do sleep 0.01; done" \
	>"$OUT/owner.out" 2>&1 &
PIDS="$PIDS $!"
check "the owner's region is granted" waitfor 30 test -e "$OUT/in"
for fw in $fws; do
	rm -rf "${OUT:?}/$fw"
	mkdir -p "$OUT/$fw"
	KREX_GATE_TRACE=$OUT/$fw timeout 150 "$KREX" run -- python3 -c "import time; ${code[$fw]}
print('done', time.time()); print('result', 'OK' if s == 499500.0 else 'BAD %r' % s)" >"$OUT/$fw.out" 2>&1 &
	PIDS="$PIDS $!"
done
at_gate() { cat "$OUT/$1"/trace.* 2>/dev/null | grep -q "context: at the gate"; }
for fw in $fws; do
	check "$fw: waits at the gate to make its context during the region" waitfor 90 at_gate "$fw"
	check "$fw: nothing computed during the region" test ! -s "$OUT/$fw.out" -o -z "$(grep '^done' "$OUT/$fw.out")"
done
t_open=$(date +%s.%N)
touch "$OUT/go"
for fw in $fws; do
	check "$fw: computes after the region" waitfor 90 grep -q '^result' "$OUT/$fw.out"
	check "$fw: the right result ($(grep '^result' "$OUT/$fw.out"))" grep -q '^result OK' "$OUT/$fw.out"
	t=$(sed -n 's/^done //p' "$OUT/$fw.out")
	check "$fw: its first GPU result came after the open ($t > $t_open)" \
		python3 -c "import sys; sys.exit(0 if float('${t:-0}') > float('$t_open') else 1)"
	held=$(cat "$OUT/$fw"/trace.* 2>/dev/null | sed -n 's/.*context: held \([0-9]*\) us.*/\1/p' | head -1)
	check "$fw: the gate traced the hold (${held:-none} us)" test -n "$held"
done
check "the region's certificate came" waitfor 30 grep -qs '"outcome"' "$OUT/cert"
check "... clean ($(grep -o '"outcome":"[a-z]*"' "$OUT/cert" 2>/dev/null))" grep -q '"outcome":"clean"' "$OUT/cert"
exit $fail
