#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Two events about one participant in one batch of krexd's event loop: its
# UNREGISTER (which ends it) and its root pid's exit (its pidfd), read in the
# same epoll_wait.  krexd ends it once and does not touch it after (before
# the fix the pidfd's event read the freed participant: AddressSanitizer's
# heap-use-after-free in loop_dispatch in fresh-clone CI run 20).  krexd is
# stopped (SIGSTOP) while both happen, so that they come in one batch.
. "$top_srcdir/test/lib.sh"
. "$top_srcdir/test/integration/krexd-lib.sh"

kt_setup
kt_conf "gpus = g0" "log_level = debug"
plan 6
ok "krexd starts" krexd_start
sleep 600 &
P=$!
KT_PIDS="$KT_PIDS $P"
ok "a process registered as a participant" sh -c "'$CLIENT' as-pid $P | grep -q '^registered'"
kt_bg u "$CLIENT" unregister "$P" --after "$KT_DIR/go"
ok "a client connected, to unregister it" \
	wait_for 10 grep -qs "connection [0-9]* from pid $u " "$KT_DIR/krexd.log"
kill -STOP "$KREXD_PID"
touch "$KT_DIR/go"
wait "$u"
kill -KILL "$P"
wait "$P" 2>/dev/null
kill -CONT "$KREXD_PID"
ok "the participant ends (unregistered)" \
	wait_for 10 grep -qs "(pid $P) ends: unregistered" "$KT_DIR/krexd.log"
ok "krexd answers afterwards" "$CLIENT" status
ok "it ended once" test "$(grep -c "(pid $P) ends:" "$KT_DIR/krexd.log")" = 1
