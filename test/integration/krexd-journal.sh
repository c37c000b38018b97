#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# krexd under systemd (contrib/krexd.service): when $JOURNAL_STREAM names
# the device and inode of krexd's stderr, each log line starts with its
# sd-daemon priority ("<6>info: ..."), so the journal files it at the right
# level; when it names another stream (a child whose stderr was redirected)
# the lines are plain.  The start line carries krexd's version.
. "$top_srcdir/test/lib.sh"
. "$top_srcdir/test/integration/krexd-lib.sh"
kt_setup
kt_conf "gpus = g0" "freezer = signal"
version=$("$KREXD" -V | awk '{ print $2 }')

# run_krexd JOURNAL_STREAM LOG: krexd -F with stderr to LOG, until it answers; then stopped.
run_krexd() {
	JOURNAL_STREAM=$1 "$KREXD" -F -c "$KT_DIR/krexd.conf" -r "$KT_DIR" -o "cgroup_subtree=$KT_SUB" \
		2>>"$2" &
	KREXD_PID=$!
	wait_for 5 "$CLIENT" status >/dev/null 2>&1
	krexd_stop
}
devino() { stat -c '%d:%i' "$1"; }

plan 6
j=$KT_DIR/journal.log
: >"$j"
run_krexd "$(devino "$j")" "$j"
sed 's/^/# journal: /' "$j"
every_line_prefixed() { [ -s "$j" ] && ! grep -qv '^<[0-7]>' "$j"; }
ok "JOURNAL_STREAM = stderr's dev:ino: every line starts with <N>" every_line_prefixed
ok "the start line is <6>info: with krexd's version ($version)" \
	grep -q "^<6>info: krexd $version started on " "$j"
ok "the stop line is <6>info: too" grep -qx '<6>info: stopped' "$j"

p=$KT_DIR/plain.log
: >"$p"
run_krexd "$(devino "$KT_DIR/krexd.conf")" "$p"
sed 's/^/# plain: /' "$p"
ok "JOURNAL_STREAM naming another file: plain lines" \
	grep -q "^krexd: info: krexd $version started on " "$p"
ok "... and no <N> prefix anywhere" bash -c "! grep -q '^<' '$p'"

e=$KT_DIR/error.log
: >"$e"
JOURNAL_STREAM=$(devino "$e") timeout 10 "$KREXD" -F -c "$KT_DIR/krexd.conf" -r "$KT_DIR" \
	-o "no_such_key=1" 2>>"$e"
rc=$?
sed 's/^/# error: /' "$e"
ok "a configuration error is <3> and krexd exits non-zero (rc $rc)" \
	bash -c "[ $rc -ne 0 ] && [ $rc -ne 124 ] && grep -q '^<3>krexd: ' '$e'"
done_testing
