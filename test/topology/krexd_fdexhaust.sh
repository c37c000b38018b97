#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# krexd_fdexhaust.sh - fd exhaustion at region end cannot lose a thaw or an
# undo (issue 12 item 1): while a region is held, krexd's RLIMIT_NOFILE is
# lowered to what it has open plus 4 and idle connections take the rest;
# when the region ends the sibling must be thawed and back on its cores
# anyway, through the fds krexd opened with the freeze and the move.
# Root, cgroup v1 freezer and cpuset, prlimit, python3.
. "$top_srcdir/test/lib.sh"
. "$top_srcdir/test/integration/krexd-lib.sh"
. "$top_srcdir/test/topology/krexd-topo-lib.sh"

need_isolation_host freezer
command -v prlimit >/dev/null || skip_all "no prlimit"
command -v python3 >/dev/null || skip_all "no python3"

frz() { cat "/sys/fs/cgroup/freezer$(sed -n 's/^[0-9]*:freezer://p' "/proc/$1/cgroup")/freezer.state"; }
thawed() { [ "$(frz "$sib")" = THAWED ]; }
cpus_back() { [ "$(cg_cpus "$sib")" = "$before" ]; }

kt_setup
kt_conf "gpus = g0" "freezer = cgroup1" "log_level = error"
plan 8
ok "krexd starts" krexd_start
kt_participant sib --gpus g0 --ack-drains
before=$(cg_cpus "$sib")
kt_bg own "$CLIENT" region --gpus g0 --hold-ms 1500
ok "region granted" wait_for 5 grep -qs granted "$KT_DIR/own.out"
ok "sibling frozen" wait_for 10 sh -c "[ \"\$(cat /sys/fs/cgroup/freezer\$(sed -n 's/^[0-9]*:freezer://p' /proc/$sib/cgroup)/freezer.state)\" = FROZEN ]"
n=$(ls "/proc/$KREXD_PID/fd" | wc -l)
prlimit --pid "$KREXD_PID" --nofile=$((n + 4)):$((n + 4))
# Idle connections hold every fd left (krexd keeps accepting until EMFILE).
kt_bg hog python3 -c "
import socket, time
s = []
for i in range(64):
    c = socket.socket(socket.AF_UNIX)
    c.connect('$KREX_SOCKET')
    s.append(c)
time.sleep(6)
"
full() { [ "$(ls "/proc/$KREXD_PID/fd" | wc -l)" -ge $((n + 4)) ]; }
ok "krexd out of fds (limit $((n + 4)))" wait_for 5 full
ok "region ends while krexd is out of fds" wait_for 5 kt_gone "$own"
ok "sibling thawed" wait_for 10 thawed
ok "sibling's cpuset back ($before)" wait_for 10 cpus_back
ok "certificate sent" grep -qs '^outcome=' "$KT_DIR/own.out"
diag "certificate: $(kt_field "$KT_DIR/own.out" outcome) $(kt_field "$KT_DIR/own.out" note)"
diag "hog: $(cat "$KT_DIR/hog.out")"; kill "$hog" 2>/dev/null
done_testing
