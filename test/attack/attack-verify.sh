#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# `krex verify --json` against forged credentials: an ordinary user munges
# a KREX payload of its choosing (the usual forgery), or one whose
# certificate is not JSON, or the text is no credential at all, or munged
# cannot be reached.  Every answer is valid JSON (python3 -m json.tool);
# the signer is the credential's real uid, or null when munge did not say;
# the payload is shown as the certificate only when the verdict is valid;
# --any-signer never calls a user's credential "signed by krexd" and never
# accepts a certificate that is not a JSON object.
. "$top_srcdir/test/lib.sh"
. "$top_srcdir/test/integration/krexd-lib.sh"
. "$top_srcdir/test/attack/attack-lib.sh"
at_setup
at_need_krex
grep -q '^#define HAVE_MUNGE 1' "$top_builddir/config.h" || skip_all "built without munge (configure --with-munge)"
for b in munged munge runuser python3; do
	command -v $b >/dev/null 2>&1 || [ -x /usr/sbin/$b ] || skip_all "$b not installed (Debian: munge)"
done
[ -r /etc/munge/munge.key ] || skip_all "no /etc/munge/munge.key"
id munge >/dev/null 2>&1 || skip_all "no munge user"
MUNGED=$(command -v munged || echo /usr/sbin/munged)
MG_PID=
trap '[ -n "$MG_PID" ] && kill -TERM "$MG_PID" 2>/dev/null; kt_cleanup' EXIT
install -d -o munge -g munge -m 0755 "$KT_DIR/m"
runuser -u munge -- "$MUNGED" --socket="$KT_DIR/m/sock" --key-file=/etc/munge/munge.key \
	--pid-file="$KT_DIR/m/pid" --log-file="$KT_DIR/m/log" --seed-file="$KT_DIR/m/seed" \
	--num-threads=2 || skip_all "munged did not start"
wait_for 5 test -s "$KT_DIR/m/pid" || skip_all "munged did not start"
MG_PID=$(cat "$KT_DIR/m/pid")
S=$KT_DIR/m/sock
plan 17

cert='{"region_id":9,"outcome":1,"outcome_name":"clean","held_us":1000}'
good="{\"krex\":\"signed certificate 1\",\"node\":\"n1\",\"uid\":0,\"job\":4242,\"step\":0,\"region\":9,\"outcome\":\"clean\",\"certificate\":$cert}"
bad="{\"krex\":\"signed certificate 1\",\"node\":\"n1\",\"uid\":0,\"job\":4242,\"step\":0,\"region\":9,\"outcome\":\"clean\",\"certificate\":{\"held_us\":tttt}}"
as_user munge --socket="$S" -s "$good" >"$KT_DIR/forged.cred" 2>"$KT_DIR/munge.err"
as_user munge --socket="$S" -s "$bad" >"$KT_DIR/forged-bad.cred" 2>>"$KT_DIR/munge.err"
diag "$(cat "$KT_DIR/munge.err")"

# vj NAME ARGS...: krex verify --json ARGS into NAME.json, its exit status into NAME.rc
vj() {
	local n=$1
	shift
	"$KREX" verify --socket "$S" --json "$@" >"$KT_DIR/$n.json" 2>"$KT_DIR/$n.err"
	echo $? >"$KT_DIR/$n.rc"
	diag "$n: $(cat "$KT_DIR/$n.json") rc $(cat "$KT_DIR/$n.rc")"
}
# field NAME EXPR: python3 on the parsed output (j)
field() { python3 -c "import json,sys; j=json.load(open(sys.argv[1])); print($2)" "$KT_DIR/$1.json"; }

vj forged "$KT_DIR/forged.cred"
ok "a user's credential: valid JSON" python3 -m json.tool "$KT_DIR/forged.json"
ok "verdict signer, exit 1" test "$(field forged 'j["verdict"]')/$(cat "$KT_DIR/forged.rc")" = signer/1
ok "the signer is the user's real uid" test "$(field forged 'j["signer_uid"]')" = "$AT_UID"
ok "no owner uid is claimed (null, not 0)" test "$(field forged 'j["uid"]')" = None
ok "the payload is not shown as a certificate" test "$(field forged 'j["certificate"]')" = None

vj anyok --any-signer "$KT_DIR/forged.cred"
ok "--any-signer: valid JSON" python3 -m json.tool "$KT_DIR/anyok.json"
ok "--any-signer: the reason names the user's uid, not krexd" \
	sh -c "grep -q 'uid $AT_UID' '$KT_DIR/anyok.json' && ! grep -q 'signed by krexd' '$KT_DIR/anyok.json'"

vj anybad --any-signer "$KT_DIR/forged-bad.cred"
ok "--any-signer, certificate not JSON: valid JSON" python3 -m json.tool "$KT_DIR/anybad.json"
ok "verdict malformed, exit 1" test "$(field anybad 'j["verdict"]')/$(cat "$KT_DIR/anybad.rc")" = malformed/1
ok "its text is not copied out" sh -c "! grep -q tttt '$KT_DIR/anybad.json'"

echo 'MUNGE:AwQFAAAAtampered:' >"$KT_DIR/garbage.cred"
vj garbage "$KT_DIR/garbage.cred"
ok "a tampered credential: valid JSON" python3 -m json.tool "$KT_DIR/garbage.json"
ok "verdict bad, signer null" test "$(field garbage 'j["verdict"], j["signer_uid"]')" = "bad None"

echo 'not a certificate' >"$KT_DIR/text.cred"
vj text "$KT_DIR/text.cred"
ok "not a credential: valid JSON, verdict malformed" test "$(field text 'j["verdict"], j["signer_uid"], j["certificate"]')" = "malformed None None"

"$KREX" verify --socket "$KT_DIR/none.sock" --json "$KT_DIR/forged.cred" >"$KT_DIR/nomunge.json" 2>/dev/null
echo $? >"$KT_DIR/nomunge.rc"
ok "munged not reachable: valid JSON" python3 -m json.tool "$KT_DIR/nomunge.json"
ok "verdict nomunge, exit 3" test "$(field nomunge 'j["verdict"]')/$(cat "$KT_DIR/nomunge.rc")" = nomunge/3

# a real certificate is still valid and shown
kt_conf "gpus = g0" "munge_socket = $S"
krexd_start
"$KREX" region --cert "$KT_DIR/cert.json" -- true 2>"$KT_DIR/real.err"
diag "$(cat "$KT_DIR/real.err")"
vj real "$KT_DIR/cert.json"
ok "krexd's own certificate: valid" test "$(field real 'j["verdict"], j["signer_uid"], j["uid"]')" = "valid 0 0"
ok "and its certificate is the decoded object" test "$(field real 'type(j["certificate"]).__name__')" = dict
done_testing
