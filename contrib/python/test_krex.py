#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""test_krex.py - TAP checks of the ctypes binding against the built library,
without krexd: error paths, unprotected regions, the certificate layout.

	KREX_LIBREGION=BUILD/libregion/.libs/libkrexregion.so python3 test_krex.py

Prints TAP; exits 1 when a check fails.  Stdlib only.
"""

import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

# No krexd: a socket path that cannot exist, and no unprotected default.
_tmp = tempfile.mkdtemp(prefix="krex-pytest-")
os.environ["KREX_SOCKET"] = os.path.join(_tmp, "none", "krexd.sock")
os.environ.pop("KREX_UNPROTECTED", None)

import krex  # noqa: E402

_n = 0
_fail = 0


def ok(cond, desc, diag=None):
    global _n, _fail
    _n += 1
    print("%s %d - %s" % ("ok" if cond else "not ok", _n, desc))
    if not cond:
        _fail += 1
        if diag is not None:
            for ln in str(diag).splitlines():
                print("# " + ln)
    return cond


def skip(desc, why):
    global _n
    _n += 1
    print("ok %d - %s # SKIP %s" % (_n, desc, why))


def raises(fn, *a, **kw):
    """The KrexError fn raises, or None."""
    try:
        fn(*a, **kw)
    except krex.KrexError as e:
        return e
    return None


def check_errors():
    ok(krex.api_version() == krex.API_VERSION, "library speaks KREX_API_VERSION 1")
    texts = [krex.strerror(c) for c in range(len(krex.ERRORS))]
    ok(all(texts) and len(set(texts)) == len(texts), "krex_strerror names every code apart",
       texts)
    ok(bool(krex.strerror(9999)), "krex_strerror of an unknown code is not empty")

    e = raises(krex.begin)
    ok(e is not None and e.code == krex.ENOKREXD and e.name == "KREX_ENOKREXD",
       "begin without krexd raises KREX_ENOKREXD", e)
    ok(e is not None and e.text == krex.strerror(krex.ENOKREXD) and e.text in str(e),
       "the KrexError carries krex_strerror's text", e)
    e = raises(krex.end)
    ok(e is not None and e.code == krex.ENOREGION, "end without a region raises KREX_ENOREGION",
       e)
    ran = []
    try:
        with krex.region():
            ran.append(1)
    except krex.KrexError as err:
        e = err
    ok(not ran and e is not None and e.code == krex.ENOKREXD,
       "region() without krexd raises before its body")


def check_unprotected():
    try:
        krex.begin(unprotected_ok=True, expected_us=1000)
        cert = krex.end()
    except krex.KrexError as e:
        ok(False, "unprotected_ok: begin and end succeed without krexd", e)
        return
    ok(True, "unprotected_ok: begin and end succeed without krexd")
    ok(cert["outcome"] == 3 and cert["outcome_name"] == "unprotected",
       "the certificate says unprotected", cert)
    ok(cert["size"] == krex.ctypes.sizeof(krex.Certificate),
       "certificate size matches the ctypes layout (%d)" % krex.ctypes.sizeof(krex.Certificate),
       cert["size"])
    try:
        js = json.loads(krex.last_certificate_json())
    except (TypeError, ValueError) as e:
        ok(False, "krex_certificate_json gives JSON", e)
        return
    same = [k for k in js if k in cert and cert[k] is not None and not isinstance(js[k], dict)]
    # An enum may be written by name ("outcome": "unprotected").
    bad = {k: (js[k], cert[k]) for k in same if js[k] not in (cert[k], cert.get(k + "_name"))}
    ok(len(same) >= 3 and not bad, "library JSON agrees with the ctypes fields (%d shared)" %
       len(same), bad or js)
    e = raises(krex.end)
    ok(e is not None and e.code == krex.ENOREGION, "a second end raises KREX_ENOREGION", e)


def check_env():
    code = ("import krex, json\nwith krex.region() as c:\n    pass\n"
            "print(json.dumps(c['outcome_name']))")
    env = dict(os.environ, KREX_UNPROTECTED="1", PYTHONPATH=HERE, PYTHONDONTWRITEBYTECODE="1")
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                       timeout=60)
    ok(r.returncode == 0 and r.stdout.strip() == '"unprotected"',
       "KREX_UNPROTECTED=1: region() works without krexd, unprotected", r.stdout + r.stderr)


def check_do_bench():
    """do_bench needs Triton, PyTorch with CUDA, or a libcuda (real or mock)."""
    try:
        calls = []
        cert = {}
        ms = krex.do_bench(lambda: calls.append(1), warmup=1, rep=2, unprotected_ok=True,
                           cert=cert)
    except (OSError, RuntimeError, AttributeError) as e:
        skip("do_bench in an unprotected region", "no CUDA here (%s)" % str(e)[:80])
        return
    ok(isinstance(ms, float) and ms >= 0 and calls and cert.get("outcome_name") == "unprotected",
       "do_bench times in a region and fills the certificate", (ms, len(calls), cert))


def check_verify():
    """krex.verify() through krex_certificate_verify; with a real munged and a
    signed certificate when KREX_TEST_MUNGE_SOCKET and KREX_TEST_CERT name them
    (test/integration/krex-munge.sh)."""
    try:
        krex.verify("{}")
        ok(False, "verify: a JSON object without \"signed\" raises VerifyError")
    except krex.VerifyError as e:
        ok(e.verdict == "malformed" and "no \"signed\" member" in e.reason,
           "verify: a JSON object without \"signed\" raises VerifyError (malformed)", e)
    r = krex.verify('{"signed":null,"unsigned":"munged down"}', check=False)
    ok(not r["valid"] and r["verdict"] == "malformed" and "munged down" in r["reason"],
       "verify(check=False) returns the verdict of an unsigned certificate", r)
    r = krex.verify("MUNGE:AAAA:", munge_socket=os.path.join(_tmp, "no.sock"), check=False)
    ok(r["verdict"] == "nomunge" and "cannot verify" in r["reason"],
       "verify with no munged to ask: nomunge", r)
    sock, cert = os.environ.get("KREX_TEST_MUNGE_SOCKET"), os.environ.get("KREX_TEST_CERT")
    if not sock or not cert:
        skip("verify a signed certificate", "no KREX_TEST_MUNGE_SOCKET / KREX_TEST_CERT")
        return
    r = krex.verify(cert, munge_socket=sock)
    with open(cert) as f:
        c = json.load(f)
    del c["signed"]
    ok(r["valid"] and r["who"]["uid"] == os.getuid() and r["node"] and r["when"] > 0 and
       r["outcome"] == c["outcome"] and r["certificate"] == c,
       "verify a signed certificate: who, node, when, outcome, certificate", r)


def main():
    try:
        krex.api_version()
    except OSError as e:
        print("1..0 # SKIP %s" % e)
        return 0
    check_errors()
    check_unprotected()
    check_env()
    check_do_bench()
    check_verify()
    print("1..%d" % _n)
    return 1 if _fail else 0


if __name__ == "__main__":
    sys.exit(main())
