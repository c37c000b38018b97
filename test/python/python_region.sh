#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# krex.region() and krex.do_bench() under `krex run`: a private krexd (signal
# freezer, gpus=g0), the gate and the mock libcuda, with a gated mock sibling
# (krex-hog).  The region's certificate comes from krexd (an id, the sibling
# drained and frozen), and do_bench's figures come with their own region's.
. "$top_srcdir/test/lib.sh"
. "$top_srcdir/test/integration/embedded-lib.sh"

command -v python3 >/dev/null || skip_all "python3 not found"
b=$top_builddir
[ -e "$b/libregion/.libs/libkrexregion.so" ] || skip_all "libkrexregion not built yet"
[ -e "$b/test/mock/.libs/libcuda.so.1" ] || skip_all "mock libcuda.so.1 not built yet"
[ -x "$b/test/workloads/krex-hog" ] || skip_all "test/workloads/krex-hog not built yet"
emb_setup
export KREX_GATE_LIB=$b/gate/.libs/libkrexgate.so
export KREX_MOCK_GPU=/krex-pyregion-$$
export LD_LIBRARY_PATH=$b/test/mock/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export KREX_LIBRARY=$b/libregion/.libs/libkrexregion.so PYTHONPATH=$top_srcdir/python
export PYTHONDONTWRITEBYTECODE=1
trap 'emb_cleanup; rm -f "/dev/shm$KREX_MOCK_GPU"' EXIT

out=$EMB_DIR/job.out
f() { sed -n "s/^$1=//p" "$out" | head -n 1; }
counter_ge() { [ -r "$1" ] && [ "$(cat "$1")" -ge "$2" ]; }

plan 11
"$KREX" run -- "$b/test/workloads/krex-hog" 2000 --seconds 120 --counter "$EMB_DIR/hog" \
	>"$EMB_DIR/hog.out" 2>&1 &
EMB_PIDS="$EMB_PIDS $!"
ok "a gated mock sibling runs under krex run" wait_for 20 counter_ge "$EMB_DIR/hog" 1
timeout -k 5 120 "$KREX" run -- python3 "$top_srcdir/test/python/region_job.py" >"$out" 2>&1
rc=$?
diag "$(tr '\n' ' ' <"$out")"
ok "the job under krex run exits 0 (rc $rc)" [ "$rc" = 0 ]
ok "with krex.region() as cert: a clean certificate from krexd ($(f outcome): $(f note))" \
	[ "$(f outcome)" = clean ]
ok "krex.held(): 0 before the region, 1 in it, 0 after ($(f held))" [ "$(f held)" = 0,1,0 ]
ok "the certificate has krexd's region id ($(f region_id)) and the GPU g0 ($(f gpus))" \
	sh -c "[ '$(f region_id)' -gt 0 ] && [ '$(f gpus)' = g0 ]"
ok "the sibling was counted, drained and frozen ($(f siblings)/$(f drained)/$(f frozen))" \
	sh -c "[ '$(f siblings)' -ge 1 ] && [ '$(f drained)' -ge 1 ] && [ '$(f frozen)' -ge 1 ]"
ok "the gated sibling is not named as ungated ($(f ungated)/$(f ungated_gpu)/'$(f ungated_who)')" \
	test "$(f ungated)/$(f ungated_gpu)/$(f ungated_who)" = "0/0/"
ok "do_bench timed with the CUDA driver's events ($(f bench_timer), $(f bench_n) calls)" \
	sh -c "[ '$(f bench_timer)' = cuda-driver ] && [ '$(f bench_n)' -ge 5 ]"
ok "do_bench's times read the 2 ms kernel (min $(f bench_min), median $(f bench_median) ms)" \
	awk -v m="$(f bench_min)" 'BEGIN { exit !(m >= 1.9) }'
ok "do_bench's figures come with a clean certificate of their own region ($(f bench_outcome))" \
	sh -c "[ '$(f bench_outcome)' = clean ] && [ '$(f bench_region_id)' -gt '$(f region_id)' ]"
ok "that region also saw the sibling ($(f bench_siblings))" [ "$(f bench_siblings)" -ge 1 ]
done_testing
