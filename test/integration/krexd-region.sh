#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Regions: lease expiry (the certificate says expired, siblings resume), a
# shorter lease asked for, RELEASE by id, drain acks (drained) and silence
# (late, frozen anyway), queue timeout, a second begin (EBUSY), STATUS.
. "$top_srcdir/test/lib.sh"
. "$top_srcdir/test/integration/krexd-lib.sh"

field() { kt_field "$KT_DIR/$1.out" "$2"; }
stalled_a() { kt_stalled a; }
runs_a() { kt_progress a; }
runs_c() { kt_progress c; }
status_shows() { "$CLIENT" status >"$KT_DIR/status.out" && grep -q "$1" "$KT_DIR/status.out"; }
outcome_is() { test "$(field "$1" outcome)" = "$2"; }

kt_setup
kt_conf "gpus = g0" "max_region = 400ms" "drain_timeout = 300ms" "log_level = debug"
plan 22
ok "krexd starts" krexd_start
kt_participant a --gpus g0 --ack-drains

# Lease expiry: the owner holds 5 s, the lease is 400 ms.  (The sibling's
# freeze is read from the certificate, not from a counter standing still for
# 0.3 s inside the 400 ms lease: the test seeing the grant late on a loaded
# host left less than that.)
kt_bg owner "$CLIENT" region --gpus g0 --hold-ms 5000
ok "region granted" wait_for 5 grep -qs granted "$KT_DIR/owner.out"
holding() { ! grep -qs '^outcome=' "$KT_DIR/owner.out" || { diag "the owner had ended"; return 1; }; }
lease_runs() { runs_a && holding; }
ok "lease expired: sibling runs again while the owner still holds" lease_runs
ok "owner's END gets a certificate" wait_for 10 grep -qs '^outcome=' "$KT_DIR/owner.out"
ok "sibling frozen in the region (certificate: frozen=1)" test "$(field owner frozen)" = 1
ok "certificate says expired" outcome_is owner expired
ok "note says the lease expired" grep -qs '^note=.*lease expired' "$KT_DIR/owner.out"
ok "lease_us is the cap" test "$(field owner lease_us)" = 400000

# A request may ask for a shorter lease.
kt_bg short "$CLIENT" region --gpus g0 --max-ms 100 --hold-ms 300
ok "shorter lease granted as asked" wait_for 5 grep -qs '^lease_us=100000$' "$KT_DIR/short.out"
ok "and it expired" outcome_is short expired

# RELEASE by id (root may release any region).
kt_bg held "$CLIENT" region --gpus g0 --no-end
ok "held region granted" wait_for 5 grep -qs granted "$KT_DIR/held.out"
ok "status shows the holder" status_shows "^gpu g0 slot=0 holder=[1-9]"
id=$(sed -n 's/^granted //p' "$KT_DIR/held.out")
release() { "$CLIENT" release "$1" >/dev/null; }
ok "release $id" release "$id"
ok "sibling runs after the release" runs_a
kill $held 2>/dev/null

# Drain: a member that acks is drained, one that never acks is late and frozen anyway.
kt_participant c --gpus g0 --gate-noack
kt_bg drain "$CLIENT" region --gpus g0 --hold-ms 100
ok "region with a silent member ends" wait_for 5 grep -qs '^outcome=' "$KT_DIR/drain.out"
ok "drained=1 late=1 frozen=2, degraded" test \
	"$(field drain drained)/$(field drain late)/$(field drain frozen)/$(field drain outcome)" = "1/1/2/degraded"
ok "note names the late sibling" grep -qs '^note=.*did not acknowledge' "$KT_DIR/drain.out"
ok "krexd's debug log has the acking sibling's wait and its own drain time" \
	grep -qsE 'region [0-9]+: participant [0-9]+ \(pid [0-9]+\) acknowledged the drain after [0-9]+ us, its own drain [0-9]+ us, status 0' "$KT_DIR/krexd.log"
ok "silent sibling runs again" runs_c

# Queue timeout and a second begin from the same process, under a longer lease.
krexd_stop
krexd_start -o max_region=30s
kt_bg held "$CLIENT" region --gpus g0 --no-end --twice
ok "second begin of a process that holds one: EBUSY" wait_for 5 grep -qs '^error 4 ' "$KT_DIR/held.out"
# (queued for 3 s: the status polls see it however slow the client's start)
kt_bg late "$CLIENT" region --gpus g0 --timeout-ms 3000
ok "status shows a queued region" wait_for 10 status_shows "^region .* state=queued"
ok "a waiting begin times out with ETIMEDOUT" wait_for 10 grep -qs '^error 5 ' "$KT_DIR/late.out"
done_testing
