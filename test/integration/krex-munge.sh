#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Signed certificates with the real munged (doc/admin.md "Signed
# certificates"): krexd signs each certificate, krex verify accepts it (also
# twice: munge's replay cache) and prints who, where, when and the outcome;
# a tampered credential, a certificate that does not match it, a credential
# of another munge key, one munged for a payload by another user, and an
# expired one are refused with their own message; krexd without munged, and
# with munged stopped in the middle of a run, grants every region without a
# stall, says why there is no signature and logs it once.
. "$top_srcdir/test/lib.sh"
. "$top_srcdir/test/integration/krexd-lib.sh"
KREX=$top_builddir/krex/krex
need_root
grep -q '^#define HAVE_MUNGE 1' "$top_builddir/config.h" || skip_all "built without munge (configure --with-munge)"
for b in munged munge unmunge runuser python3; do
	command -v $b >/dev/null 2>&1 || [ -x /usr/sbin/$b ] || skip_all "$b not installed (Debian: munge)"
done
[ -r /etc/munge/munge.key ] || skip_all "no /etc/munge/munge.key (munge package not set up)"
id munge >/dev/null 2>&1 || skip_all "no munge user"
MUNGED=$(command -v munged || echo /usr/sbin/munged)

kt_setup
MG_PIDS=
# Both munged are stopped by pid (and continued first: one may be stopped).
mg_cleanup() {
	local p
	for p in $MG_PIDS; do kill -CONT "$p" 2>/dev/null; kill -TERM "$p" 2>/dev/null; done
	kt_cleanup
}
trap mg_cleanup EXIT

# mg_start NAME KEYFILE: a private munged on $KT_DIR/NAME/sock, as munge
# (it refuses root with the packaged key), like test/slurm/cluster.sh's.
mg_start() {
	install -d -o munge -g munge -m 0755 "$KT_DIR/$1"
	runuser -u munge -- "$MUNGED" --socket="$KT_DIR/$1/sock" --key-file="$2" \
		--pid-file="$KT_DIR/$1/pid" --log-file="$KT_DIR/$1/log" \
		--seed-file="$KT_DIR/$1/seed" --num-threads=2 || return 1
	wait_for 5 test -s "$KT_DIR/$1/pid" || return 1
	MG_PIDS="$MG_PIDS $(cat "$KT_DIR/$1/pid")"
}
# A second key: credentials of another cluster.
install -d -o munge -g munge -m 0700 "$KT_DIR/keyb"
dd if=/dev/urandom of="$KT_DIR/keyb/munge.key" bs=1024 count=1 2>/dev/null
chown munge:munge "$KT_DIR/keyb/munge.key" && chmod 0400 "$KT_DIR/keyb/munge.key"
mg_start mA /etc/munge/munge.key || skip_all "munged did not start ($(tail -n1 "$KT_DIR/mA/log" 2>/dev/null))"
mg_start mB "$KT_DIR/keyb/munge.key" || skip_all "second munged did not start"
A=$KT_DIR/mA/sock
B=$KT_DIR/mB/sock

plan 32

kt_conf "gpus = g0" "node_name = signnode" "munge_socket = $A"
krexd_start
ok "krexd logs at start that it signs" wait_for 5 grep -q "certificates are signed with munge (socket $A" "$KT_DIR/krexd.log"

C=$KT_DIR/cert.json
"$KREX" region --cert "$C" -- true 2>"$KT_DIR/region.err"
ok "a region's certificate carries a munge credential" grep -q '"signed":"MUNGE:' "$C"
"$KREX" verify --socket "$A" "$C" >"$KT_DIR/v1.out" 2>&1
ok "krex verify accepts it" test $? = 0
ok "and prints where: the node" grep -q "where:   node signnode" "$KT_DIR/v1.out"
ok "who: the owner's uid and name" grep -q "who:     uid 0 (root)" "$KT_DIR/v1.out"
ok "when: the encode time" grep -Eq "when:    $(date +%Y-%m-%d) " "$KT_DIR/v1.out"
ok "the outcome" grep -q "outcome: clean (region " "$KT_DIR/v1.out"
"$KREX" verify --socket "$A" "$C" >"$KT_DIR/v2.out" 2>&1; rc=$?
ok "a second verify of the same file is valid too (munge's replay cache: seen before)" \
	eval 'test $rc = 0 && grep -q "verified before on this node" "$KT_DIR/v2.out"'
"$KREX" verify --socket "$A" --json "$C" >"$KT_DIR/v.json"
ok "verify --json: the signed certificate is the one in the file" python3 - "$C" "$KT_DIR/v.json" <<'PY'
import json, sys
c = json.load(open(sys.argv[1])); v = json.load(open(sys.argv[2]))
del c["signed"]
assert v["verdict"] == "valid" and v["node"] == "signnode" and v["uid"] == 0, v
assert v["certificate"] == c, (v["certificate"], c)
PY
KREX_LIBRARY=$top_builddir/libregion/.libs/libkrexregion.so PYTHONPATH=$top_srcdir/python \
	KREX_TEST_MUNGE_SOCKET=$A KREX_TEST_CERT=$C PYTHONDONTWRITEBYTECODE=1 \
	python3 "$top_srcdir/test/python/test_krex.py" >"$KT_DIR/py.out" 2>&1
ok "the Python binding verifies it too (krex.verify)" grep -q "^ok [0-9]* - verify a signed certificate: who" "$KT_DIR/py.out"

# A region whose lease ran out: its certificate (kept for END) is signed too.
"$KREX" region --max 0.2 --cert "$KT_DIR/lease.json" -- sleep 1 2>/dev/null
"$KREX" verify --socket "$A" "$KT_DIR/lease.json" >"$KT_DIR/lease.out" 2>&1; rc=$?
ok "an expired lease's certificate is signed: outcome expired" eval 'test $rc = 0 && grep -q "outcome: expired" "$KT_DIR/lease.out"'

# Tampered: one character of the credential changed.
python3 - "$C" "$KT_DIR/tampered.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); s = d["signed"]; i = len(s) // 2
d["signed"] = s[:i] + ("A" if s[i] != "A" else "B") + s[i + 1:]
json.dump(d, open(sys.argv[2], "w"))
PY
"$KREX" verify --socket "$A" "$KT_DIR/tampered.json" >/dev/null 2>"$KT_DIR/t.err"; rc=$?
ok "a tampered credential is refused" eval 'test $rc = 1 && grep -q "refused (tampered or another key)" "$KT_DIR/t.err"'
# The certificate next to the credential changed: the outcome, or a figure.
sed 's/"held_us":[0-9]*/"held_us":1/' "$C" >"$KT_DIR/held.json"
"$KREX" verify --socket "$A" "$KT_DIR/held.json" >/dev/null 2>"$KT_DIR/h.err"; rc=$?
ok "a certificate that does not match its credential is refused, the field named" \
	eval 'test $rc = 1 && grep -q "refused (mismatch).*\"held_us\" is 1" "$KT_DIR/h.err"'
sed 's/"outcome":"clean"/"outcome":"degraded"/' "$C" >"$KT_DIR/outcome.json"
"$KREX" verify --socket "$A" "$KT_DIR/outcome.json" >/dev/null 2>&1
ok "a changed outcome is refused" test $? = 1
sed 's/"note":"[^"]*",//' "$C" >"$KT_DIR/lack.json"
"$KREX" verify --socket "$A" "$KT_DIR/lack.json" >/dev/null 2>"$KT_DIR/l.err"; rc=$?
ok "a certificate lacking a member is refused" eval 'test $rc = 1 && grep -q "refused (mismatch).*lacks 1 of" "$KT_DIR/l.err"'
sed 's/"signed":"/"late":0,"signed":"/; s/"note":"[^"]*",//' "$C" >"$KT_DIR/twice.json"
"$KREX" verify --socket "$A" "$KT_DIR/twice.json" >/dev/null 2>"$KT_DIR/w.err"; rc=$?
ok "a member given twice (one lacking) is refused" eval 'test $rc = 1 && grep -q "refused (mismatch).*\"late\" twice" "$KT_DIR/w.err"'
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); json.dump(d, open(sys.argv[2],"w"), indent=2, sort_keys=True)' "$C" "$KT_DIR/pretty.json"
"$KREX" verify --socket "$A" "$KT_DIR/pretty.json" >/dev/null 2>&1
ok "the same certificate pretty-printed and reordered is valid" test $? = 0

# The payload krexd signed, encoded again with another key, and by a user.
unmunge -S "$A" -m /dev/null -i <(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["signed"])' "$C") >"$KT_DIR/payload" 2>/dev/null
ok "the signed payload names node, uid, region, outcome and the certificate" \
	grep -q '^{"krex":"signed certificate 1","node":"signnode","uid":0,"job":0,"step":0,"region":[0-9]*,"outcome":"clean","certificate":{' "$KT_DIR/payload"
munge -S "$B" -i "$KT_DIR/payload" >"$KT_DIR/otherkey.cred"
"$KREX" verify --socket "$A" "$KT_DIR/otherkey.cred" >/dev/null 2>"$KT_DIR/o.err"; rc=$?
ok "a credential of another munge key is refused" eval 'test $rc = 1 && grep -q "refused (tampered or another key)" "$KT_DIR/o.err"'
"$KREX" verify --socket "$B" "$KT_DIR/otherkey.cred" >/dev/null 2>&1
ok "(the same credential is valid for that key's munged)" test $? = 0
chmod 644 "$KT_DIR/payload"
runuser -u nobody -- munge -S "$A" -i "$KT_DIR/payload" >"$KT_DIR/forged.cred"
"$KREX" verify --socket "$A" "$KT_DIR/forged.cred" >/dev/null 2>"$KT_DIR/f.err"; rc=$?
ok "the same payload munged by another user is refused (not krexd's uid)" \
	eval 'test $rc = 1 && grep -q "refused (not signed by krexd).*encoded by uid $(id -u nobody) (nobody)" "$KT_DIR/f.err"'
"$KREX" verify --socket "$KT_DIR/none.sock" "$C" >/dev/null 2>"$KT_DIR/n.err"; rc=$?
ok "no munged to ask: cannot verify, exit 3" eval 'test $rc = 3 && grep -q "refused (cannot verify)" "$KT_DIR/n.err"'

# Expired: a time-to-live of 1 s (reloaded live).
kt_conf "sign_ttl = 1"
kill -HUP "$KREXD_PID"
wait_for 5 grep -q "configuration reloaded" "$KT_DIR/krexd.log"
"$KREX" region --cert "$KT_DIR/short.json" -- true 2>/dev/null
sleep 2.2
"$KREX" verify --socket "$A" "$KT_DIR/short.json" >/dev/null 2>"$KT_DIR/e.err"; rc=$?
ok "an expired credential is refused" eval 'test $rc = 1 && grep -q "refused (expired).*time-to-live of 1 s" "$KT_DIR/e.err"'
"$KREX" verify --socket "$A" --allow-expired "$KT_DIR/short.json" >/dev/null 2>&1
ok "--allow-expired accepts it (munged checked its MAC)" test $? = 0

# munged stopped in the middle of a run: no stall, one log line.
kill -STOP "$(cat "$KT_DIR/mA/pid")"
t0=$(date +%s%N)
for i in 1 2 3 4 5; do "$KREX" region -- true 2>>"$KT_DIR/stopped.err" || break; done
t1=$(date +%s%N)
ok "munged stopped: five regions granted and ended in under 5 s" test $(((t1 - t0) / 1000000)) -lt 5000
ok "each says why it is not signed" test "$(grep -c 'not signed: munged did not answer within sign_timeout' "$KT_DIR/stopped.err")" = 5
ok "krexd logs it once" test "$(grep -c 'warning: certificates are not signed' "$KT_DIR/krexd.log")" = 1
kill -CONT "$(cat "$KT_DIR/mA/pid")"
ok "munged continued: krexd logs its return" wait_for 10 grep -q "munged answers again" "$KT_DIR/krexd.log"
"$KREX" region --cert "$KT_DIR/again.json" -- true 2>/dev/null
ok "and signs again" grep -q '"signed":"MUNGE:' "$KT_DIR/again.json"
krexd_stop

# krexd with no munged at all.
: >"$KT_DIR/krexd.log"
krexd_start -o "munge_socket=$KT_DIR/none.sock"
for i in 1 2 3; do "$KREX" region --json -- true 2>>"$KT_DIR/nomunge.err" || break; done
ok "no munged: regions are granted, unsigned, with the reason" \
	test "$(grep -c '"signed":null,"unsigned":"munge_encode: Failed to access' "$KT_DIR/nomunge.err")" = 3
ok "and krexd logs why once" test "$(grep -c 'warning: certificates are not signed' "$KT_DIR/krexd.log")" = 1
krexd_stop
krexd_start -o sign=off
"$KREX" region -- true 2>"$KT_DIR/off.err"
ok "sign = off: unsigned, and says so" grep -q "not signed: krexd signs no certificate (sign = off)" "$KT_DIR/off.err"
done_testing
