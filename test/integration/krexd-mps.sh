#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# NVIDIA MPS (doc/admin.md "MPS"), with the mock NVML (test/mock/mock_nvml.c,
# a TEST DOUBLE): NVML lists an MPS server as a compute process and its
# clients through nvmlDeviceGetMPSComputeRunningProcesses_v3.  krexd does
# not count the server as foreign when it could list the clients, and
# counts each client as any process; krexd's log says a region ran over
# MPS (not the certificate: a note there is a cause of degraded).  Without the client list (a driver that cannot give it), or for
# a program that only bears the server's name (not root's, or writable by
# others), the server is a foreign process, as before.
. "$top_srcdir/test/lib.sh"
. "$top_srcdir/test/integration/krexd-lib.sh"

need_root # the stand-in server must be root's
NVML_LIBS=$top_builddir/test/mock/nvml/.libs
[ -e "$NVML_LIBS/libnvidia-ml.so.1" ] || skip_all "mock NVML not built"
kt_setup
export LD_LIBRARY_PATH=$NVML_LIBS${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export KREX_MOCK_NVML=$KT_DIR/nvml.txt

nvml() { printf '%s\n' "$@" >"$KT_DIR/nvml.tmp" && mv "$KT_DIR/nvml.tmp" "$KREX_MOCK_NVML"; }
field() { kt_field "$KT_DIR/$1.out" "$2"; }
region() { "$CLIENT" region --gpus 0 --hold-ms 10 >"$KT_DIR/$1.out" 2>&1; }

# start NAME FILE: FILE (a copy of sleep) in the background; its pid in $NAME.
start() {
	"$2" 600 &
	eval "$1=\$!"
	KT_PIDS="$KT_PIDS $!"
}
# The MPS server's stand-ins: copies of sleep(1) under its name.
SLEEP=$(command -v sleep)
mkdir -p "$KT_DIR/root" "$KT_DIR/user" "$KT_DIR/gw"
for d in root user gw; do cp "$SLEEP" "$KT_DIR/$d/nvidia-cuda-mps-server"; done
chmod 755 "$KT_DIR/root/nvidia-cuda-mps-server"
chown nobody "$KT_DIR/user/nvidia-cuda-mps-server"
chmod 775 "$KT_DIR/gw/nvidia-cuda-mps-server"
start SRV "$KT_DIR/root/nvidia-cuda-mps-server"
start USR "$KT_DIR/user/nvidia-cuda-mps-server"
start GW "$KT_DIR/gw/nvidia-cuda-mps-server"
start OTHER "$SLEEP" # a process that is no participant

nvml "max=1980 app=1980" "0 sm=1980 reasons=0 temp=40"
kt_conf "gpus = 0"
plan 17
ok "krexd starts with the mock NVML" krexd_start
ok "a participant runs (its gate acks drains)" kt_participant a --ack-drains

# 1. Over MPS, every client a participant: clean, the server not counted.
nvml "mps_pids=$a" "0 sm=1980 reasons=0 temp=40 pids=$SRV"
region m1
ok "MPS server and a participant client: clean, no foreign process" \
	test "$(field m1 outcome)/$(field m1 foreign)" = clean/0
ok "... with no note, and krexd's log says it ran over MPS" sh -c "
	! grep -qs '^note=.' '$KT_DIR/m1.out' &&
	grep -qs 'region $(field m1 region_id): over MPS: 1 MPS server(s) on its GPUs' '$KT_DIR/krexd.log'"

# 2. A client that is no participant: foreign, counted once though NVML
# lists it in both lists.
nvml "mps_pids=$a,$OTHER" "0 sm=1980 reasons=0 temp=40 pids=$SRV,$OTHER"
region m2
ok "an MPS client that is no participant: degraded, 1 foreign process" \
	test "$(field m2 outcome)/$(field m2 foreign)" = degraded/1
ok "... the note says why" grep -qs '^note=1 process(es) on the GPU are not participants$' "$KT_DIR/m2.out"

# 3. NVML cannot list the clients: the server is a process KREX cannot see
# behind.
nvml "mps=off mps_pids=$a" "0 sm=1980 reasons=0 temp=40 pids=$SRV"
region m3
ok "no MPS client list: the server counts as foreign (degraded, 1)" \
	test "$(field m3 outcome)/$(field m3 foreign)" = degraded/1
ok "... the note says why" grep -qs '^note=1 process(es) on the GPU are not participants$' "$KT_DIR/m3.out"

# 4. Programs that only bear the server's name.
nvml "mps_pids=$a" "0 sm=1980 reasons=0 temp=40 pids=$USR"
region m4
ok "a 'server' whose file is not root's is foreign" \
	test "$(field m4 outcome)/$(field m4 foreign)" = degraded/1
nvml "mps_pids=$a" "0 sm=1980 reasons=0 temp=40 pids=$GW"
region m5
ok "a 'server' whose file others may write is foreign" \
	test "$(field m5 outcome)/$(field m5 foreign)" = degraded/1
nvml "mps_pids=$a" "0 sm=1980 reasons=0 temp=40 pids=$OTHER"
region m6
ok "a process with another name is foreign, MPS list or not" \
	test "$(field m6 outcome)/$(field m6 foreign)" = degraded/1

# 5. krexd itself in NVML's lists (over MPS, hwloc's CUDA component makes
# it an MPS client): never foreign, with MPS or without.
nvml "mps_pids=$a,$KREXD_PID" "0 sm=1980 reasons=0 temp=40 pids=$SRV"
region m9
ok "krexd listed as an MPS client: clean, not foreign" \
	test "$(field m9 outcome)/$(field m9 foreign)" = clean/0
nvml "0 sm=1980 reasons=0 temp=40 pids=$KREXD_PID"
region m10
ok "krexd listed without MPS: clean, not foreign" \
	test "$(field m10 outcome)/$(field m10 foreign)" = clean/0

# 6. No MPS: as before.
nvml "0 sm=1980 reasons=0 temp=40 pids=$a"
region m7
ok "no MPS, the participant on the GPU: clean" test "$(field m7 outcome)/$(field m7 foreign)" = clean/0
ok "... with no note" sh -c "! grep -qs '^note=.' '$KT_DIR/m7.out'"
# 7. The server's file replaced while it runs (a driver update): still the
# server (its /proc/PID/exe ends in " (deleted)").
rm "$KT_DIR/root/nvidia-cuda-mps-server"
cp "$SLEEP" "$KT_DIR/root/nvidia-cuda-mps-server"
nvml "mps_pids=$a" "0 sm=1980 reasons=0 temp=40 pids=$SRV"
region m8
ok "a server whose file was replaced since it started: still clean" \
	test "$(field m8 outcome)/$(field m8 foreign)" = clean/0
ok "krexd still answers" "$CLIENT" status
done_testing
