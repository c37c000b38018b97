#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""test_krex.py - TAP checks of the ctypes binding against the built library,
without krexd: error paths, unprotected regions, the certificate layout, and
do_bench's CUDA-driver timer on the mock libcuda (test/mock).

	PYTHONPATH=SRC/python KREX_LIBRARY=BUILD/libregion/.libs/libkrexregion.so \
	LD_LIBRARY_PATH=BUILD/test/mock/.libs python3 test_krex.py

Prints TAP; exits 1 when a check fails.  Stdlib only.
"""

import atexit
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # krextest


# No krexd: a socket path that cannot exist, and no unprotected default.
_tmp = tempfile.mkdtemp(prefix="krex-pytest-")
atexit.register(shutil.rmtree, _tmp, True)  # nothing left in /tmp
os.environ["KREX_SOCKET"] = os.path.join(_tmp, "none", "krexd.sock")
os.environ.pop("KREX_UNPROTECTED", None)

import krex  # noqa: E402
from krextest import done, mock_kernel, ok, skip  # noqa: E402

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
    before = krex.held()
    try:
        krex.begin(unprotected_ok=True, expected_us=1000)
        inside = krex.held()
        cert = krex.end()
    except krex.KrexError as e:
        ok(False, "unprotected_ok: begin and end succeed without krexd", e)
        return
    ok(True, "unprotected_ok: begin and end succeed without krexd")
    ok(before is False and inside is False and krex.held() is False,
       "held() is False before, in and after an unprotected region", (before, inside))
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
    env = dict(os.environ, KREX_UNPROTECTED="1", PYTHONDONTWRITEBYTECODE="1")
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                       timeout=60)
    ok(r.returncode == 0 and r.stdout.strip() == '"unprotected"',
       "KREX_UNPROTECTED=1: region() works without krexd, unprotected", r.stdout + r.stderr)


def check_do_bench():
    """do_bench's CUDA-driver timer on the mock: 2 ms kernels read as >= 2 ms."""
    fn = mock_kernel(2000)
    if fn is None:
        for _ in range(6):
            skip("do_bench on the mock driver", "mock libcuda.so.1 not on LD_LIBRARY_PATH")
        return
    cert = {}
    try:
        b = krex.do_bench(fn, warmup=10, rep=40, timer="cuda-driver", unprotected_ok=True,
                          cert=cert)
    except Exception as e:  # noqa: BLE001 -- any failure is the test's
        ok(False, "do_bench with the CUDA-driver timer on the mock", repr(e))
        return
    ok(isinstance(b, krex.Bench) and b.timer == "cuda-driver" and len(b.times) == b.n > 0,
       "do_bench returns a Bench with %d times from the CUDA-driver timer" % b.n, b)
    ok(b.min >= 1.9 and b.median < 40, "each timed call reads the 2 ms kernel: min %.3f "
       "median %.3f ms" % (b.min, b.median), b.times)
    # Triton's recipe: 1 + 5 estimate calls, warm-up, then one timed call per pair.
    ok(6 + b.n < len(fn.calls) and b.n <= 40 / 1.9 + 1,
       "call counts follow the estimate (%d calls, %d timed)" % (len(fn.calls), b.n))
    ok(abs(float(b) - b.mean) < 1e-9 and b.min <= b.median <= b.p95 <= b.max,
       "value is the mean, min <= median <= p95 <= max", b)
    ok(b.cert.get("outcome_name") == "unprotected" and cert == b.cert,
       "the certificate comes with the figures (and fills cert=)", b.cert)
    q = krex.do_bench(fn, warmup=2, rep=10, quantiles=[0.5, 0.2], timer="cuda-driver",
                      unprotected_ok=True)
    ok(isinstance(q.value, list) and len(q.value) == 2 and q.value[1] <= q.value[0],
       "quantiles=[0.5, 0.2] gives Triton's list", q.value)


def check_no_gpu():
    """Without any GPU timer do_bench fails at once, naming each, and begins no region."""
    code = ("import krex, time\nt = time.time()\ntry:\n    krex.do_bench(lambda: None)\n"
            "except krex.BenchError as e:\n    print('ERR', round(time.time() - t, 1), e)\n"
            "krex.begin(unprotected_ok=True)\nprint(krex.end()['outcome_name'])\n")
    env = dict(os.environ, LD_LIBRARY_PATH="", PYTHONDONTWRITEBYTECODE="1")
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                       timeout=60)
    out = r.stdout + r.stderr
    if "ERR" not in out and r.returncode == 0:
        skip("do_bench without a GPU timer fails clearly", "this machine has a CUDA timer")
        return
    ok(r.returncode == 0 and "no GPU timer usable" in out and "triton:" in out and
       "torch:" in out and "cuda-driver:" in out and out.strip().endswith("unprotected"),
       "do_bench without a GPU timer: BenchError naming triton, torch, cuda-driver; no region left",
       out)
    e = None
    try:
        krex.do_bench(lambda: None, timer="sundial")
    except krex.BenchError as err:
        e = err
    ok(e is not None and "unknown timer 'sundial'" in str(e), "an unknown timer is refused", e)


def check_region_raises():
    """A body that raises: the certificate is still filled, the body's exception wins."""
    cert = None
    try:
        with krex.region(unprotected_ok=True) as c:
            cert = c
            raise KeyError("body")
    except KeyError:
        pass
    ok(cert and cert.get("outcome_name") == "unprotected",
       "region(): a raising body still ends the region and fills the certificate", cert)
    e = raises(krex.end)
    ok(e is not None and e.code == krex.ENOREGION, "and no region is left open", e)


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
    check_errors()
    check_unprotected()
    check_region_raises()
    check_env()
    check_do_bench()
    check_no_gpu()
    check_verify()
    return done()


if __name__ == "__main__":
    sys.exit(main())
