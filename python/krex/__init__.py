# SPDX-License-Identifier: BSD-3-Clause
"""krex - Python binding of libkrexregion (<krex/region.h>), stdlib only.

Ask KREX for a quiet GPU around the code you time:

    import krex
    with krex.region() as cert:
        run_and_time_kernels()
    print(cert["outcome_name"], cert["drain_us"])

    b = krex.do_bench(lambda: model(x))      # one region around the whole run
    print(b.median, b.p95, b.cert["outcome_name"])

The process must be a KREX participant (started by `krex run` or a
`--krex-shared` Slurm step).  Without krexd, krex_region_begin() fails with
KREX_ENOKREXD (KrexError) unless unprotected regions are allowed: pass
unprotected_ok=True or set KREX_UNPROTECTED=1; the certificate then says
"unprotected".

libkrexregion is loaded at import, from the first of: $KREX_LIBRARY (a path,
and nothing else when it is set), the SONAME through the dynamic linker's
search, the libdir `make install` put it in (krex/_config.py), the build
tree $KREX_BUILDDIR, ctypes.util.find_library("krexregion").  When none
loads, `import krex` raises ImportError naming each place tried (doc/python.md).
The ctypes structures below mirror include/krex/region.h
(KREX_API_VERSION 1) field for field.
"""

import contextlib
import ctypes
import ctypes.util
import dataclasses
import importlib.util
import os

__all__ = ["KrexError", "BenchError", "Bench", "begin", "end", "region", "do_bench", "strerror",
           "api_version", "library", "last_certificate_json", "UNPROTECTED_OK", "API_VERSION",
           "end_signed", "verify", "VerifyError", "held"]

API_VERSION = 1
UNPROTECTED_OK = 0x1  # KREX_REGION_UNPROTECTED_OK

# enum krex_error
ERRORS = {0: "KREX_OK", 1: "KREX_ENOKREXD", 2: "KREX_EPROTO", 3: "KREX_EPERM", 4: "KREX_EBUSY",
          5: "KREX_ETIMEDOUT", 6: "KREX_EINVAL", 7: "KREX_ENOTREG", 8: "KREX_ENOREGION",
          9: "KREX_ENOMEM", 10: "KREX_ESYS", 11: "KREX_ENOGPU", 12: "KREX_ESHUTDOWN",
          13: "KREX_EVERSION", 14: "KREX_ELIMIT"}
(OK, ENOKREXD, EPROTO, EPERM, EBUSY, ETIMEDOUT, EINVAL, ENOTREG, ENOREGION, ENOMEM, ESYS, ENOGPU,
 ESHUTDOWN, EVERSION, ELIMIT) = range(15)

# Bits of krex_certificate.known, and the fields each one vouches for.
CERT_FOREIGN, CERT_ISOLATION, CERT_CLOCKS = 0x1, 0x2, 0x4
CERT_TEMP, CERT_VIOLATION, CERT_SETTLE = 0x8, 0x10, 0x20
CERT_OWN_POWER = 0x40
_KNOWN = {CERT_FOREIGN: ("foreign",), CERT_ISOLATION: ("owner_cores", "moved"),
          CERT_CLOCKS: ("sm_clock_start_mhz", "sm_clock_end_mhz", "throttle_start",
                        "throttle_end", "sm_clock_min_mhz", "sm_clock_max_mhz",
                        "sm_clock_nominal_mhz", "clock_reasons"),
          CERT_TEMP: ("temp_start_c", "temp_end_c"),
          CERT_VIOLATION: ("violation_power_us", "violation_thermal_us"),
          CERT_SETTLE: ("settle_us",),
          CERT_OWN_POWER: ("own_power_cap_us", "own_power_cap_first_us",
                           "own_power_cap_samples")}

# NVML clocks-event reason bits, as the certificate's clock_reasons names them.
CLOCK_REASONS = {0x1: "gpu_idle", 0x2: "app_clocks_setting", 0x4: "sw_power_cap",
                 0x8: "hw_slowdown", 0x10: "sync_boost", 0x20: "sw_thermal",
                 0x40: "hw_thermal", 0x80: "hw_power_brake", 0x100: "display_clock_setting"}


def reason_names(mask):
    """The names of the bits of a clocks-event reason mask, lowest bit first."""
    return [CLOCK_REASONS.get(1 << b, hex(1 << b)) for b in range(64) if mask >> b & 1]


class RegionOpts(ctypes.Structure):
    """struct krex_region_opts"""
    _fields_ = [("size", ctypes.c_uint32), ("gpus", ctypes.POINTER(ctypes.c_char_p)),
                ("ngpus", ctypes.c_uint), ("expected_us", ctypes.c_uint64),
                ("max_us", ctypes.c_uint64), ("timeout_ms", ctypes.c_uint),
                ("flags", ctypes.c_uint)]


class Certificate(ctypes.Structure):
    """struct krex_certificate"""
    _fields_ = [("size", ctypes.c_uint32), ("region_id", ctypes.c_uint64),
                ("outcome", ctypes.c_uint32), ("wait_us", ctypes.c_uint64),
                ("drain_us", ctypes.c_uint64), ("freeze_us", ctypes.c_uint64),
                ("isolate_us", ctypes.c_uint64), ("held_us", ctypes.c_uint64),
                ("lease_us", ctypes.c_uint64), ("siblings", ctypes.c_uint32),
                ("drained", ctypes.c_uint32), ("late", ctypes.c_uint32),
                ("frozen", ctypes.c_uint32), ("known", ctypes.c_uint32),
                ("foreign", ctypes.c_int32), ("moved", ctypes.c_int32),
                ("owner_cores", ctypes.c_char * 128), ("sm_clock_start_mhz", ctypes.c_int32),
                ("sm_clock_end_mhz", ctypes.c_int32), ("throttle_start", ctypes.c_uint64),
                ("throttle_end", ctypes.c_uint64), ("gpus", ctypes.c_char * 256),
                ("note", ctypes.c_char * 256),
                # added with protocol 3: the GPU's own state
                ("settle_us", ctypes.c_uint64), ("sm_clock_min_mhz", ctypes.c_int32),
                ("sm_clock_max_mhz", ctypes.c_int32), ("sm_clock_nominal_mhz", ctypes.c_int32),
                ("clock_samples", ctypes.c_uint32), ("clock_reasons", ctypes.c_uint64),
                ("temp_start_c", ctypes.c_int32), ("temp_end_c", ctypes.c_int32),
                ("violation_power_us", ctypes.c_uint64),
                ("violation_thermal_us", ctypes.c_uint64),
                # added with protocol 5: the owner's own power cap (clean)
                ("own_power_cap_us", ctypes.c_uint64),
                ("own_power_cap_first_us", ctypes.c_int64),
                ("own_power_cap_samples", ctypes.c_uint32),
                # added with protocol 5: chained regions
                ("chain_us", ctypes.c_uint64), ("chained", ctypes.c_uint32),
                # added with protocol 6: siblings that never joined the gate
                ("ungated", ctypes.c_uint32), ("ungated_gpu", ctypes.c_int32),
                ("ungated_who", ctypes.c_char * 256)]


_lib = None
_lib_from = None  # (how, name): how _load() found the library
_last = None  # the Certificate of the last end()


def _read_config():
    """LIBDIR, SONAME and VERSION from krex/_config.py (written by make with the
    install paths), else from $KREX_BUILDDIR/python/krex/_config.py (a build
    tree outside the source tree), else {}."""
    try:
        from . import _config as c
        return vars(c)
    except ImportError:
        pass
    b = os.environ.get("KREX_BUILDDIR")
    f = os.path.join(b, "python", "krex", "_config.py") if b else None
    if f and os.path.exists(f):
        spec = importlib.util.spec_from_file_location("krex._config", f)
        c = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(c)
        return vars(c)
    return {}


def _candidates():
    """(how, name) in the order _load() tries them; when $KREX_LIBRARY is set
    (or the older $KREX_LIBREGION), only that."""
    for var in ("KREX_LIBRARY", "KREX_LIBREGION"):
        if os.environ.get(var):
            return [(var, os.environ[var])]
    conf = _read_config()
    soname, libdir = conf.get("SONAME"), conf.get("LIBDIR")
    out = []
    if soname:
        out.append(("soname", soname))
        if libdir:
            out.append(("libdir", os.path.join(libdir, soname)))
    if os.environ.get("KREX_BUILDDIR"):
        d = os.path.join(os.environ["KREX_BUILDDIR"], "libregion", ".libs")
        out.append(("KREX_BUILDDIR", os.path.join(d, soname or "libkrexregion.so")))
    out.append(("find_library", None))  # looked up only when reached (it runs ldconfig)
    return out


def library():
    """(how, name) of the loaded libkrexregion: how is "KREX_LIBRARY", "soname"
    (the dynamic linker's search), "libdir", "KREX_BUILDDIR" or "find_library"."""
    _load()
    return _lib_from


def _load():
    """libkrexregion, loaded once, with its prototypes declared.  ImportError
    names every place tried when none loads."""
    global _lib, _lib_from
    if _lib is not None:
        return _lib
    tried = []
    for how, name in _candidates():
        if how == "find_library":
            name = ctypes.util.find_library("krexregion")
        if not name:
            tried.append("%s: nothing found" % how)
            continue
        try:
            lib = ctypes.CDLL(name)
            break
        except OSError as e:
            tried.append("%s %s: %s" % (how, name, e))
    else:
        if not _read_config():
            tried.append("no krex/_config.py: krex not installed by make install (see KREX_BUILDDIR)")
        raise ImportError("krex: libkrexregion not found (set KREX_LIBRARY to its path); tried %s" % "; ".join(tried))
    lib.krex_strerror.restype = ctypes.c_char_p
    lib.krex_strerror.argtypes = [ctypes.c_int]
    lib.krex_api_version.restype = ctypes.c_int
    lib.krex_api_version.argtypes = []
    lib.krex_region_begin.restype = ctypes.c_int
    lib.krex_region_begin.argtypes = [ctypes.POINTER(RegionOpts)]
    lib.krex_region_end.restype = ctypes.c_int
    lib.krex_region_end.argtypes = [ctypes.POINTER(Certificate)]
    lib.krex_outcome_name.restype = ctypes.c_char_p
    lib.krex_outcome_name.argtypes = [ctypes.c_uint32]
    lib.krex_certificate_json.restype = ctypes.c_int
    lib.krex_certificate_json.argtypes = [ctypes.POINTER(Certificate), ctypes.c_char_p,
                                          ctypes.c_ulong]
    if hasattr(lib, "krex_region_held"):  # libkrexregion 4:0:3 and later
        lib.krex_region_held.restype = ctypes.c_int
        lib.krex_region_held.argtypes = []
    if lib.krex_api_version() != API_VERSION:
        # A different struct layout would be read wrongly: refuse.
        raise ImportError("krex: %s (%s) speaks API version %d, this binding %d" %
                          (name, how, lib.krex_api_version(), API_VERSION))
    _lib, _lib_from = lib, (how, name)
    return lib


def strerror(code):
    """krex_strerror(code) as str."""
    return _load().krex_strerror(code).decode(errors="replace")


def api_version():
    return _load().krex_api_version()


def held():
    """krex_region_held(): True from krexd's grant to the start of end() in
    this process (any thread); False outside a region and in an unprotected
    one.  Raises KrexError (KREX_EINVAL) with a libkrexregion older than 4:0:3,
    which lacks the call."""
    lib = _load()
    if not hasattr(lib, "krex_region_held"):
        raise KrexError(EINVAL, "krex_region_held (not in %s, %s)" % (_lib_from[1], _lib_from[0]))
    return lib.krex_region_held() != 0


_load()  # at import: `import krex` fails with ImportError when the library is not found


class KrexError(Exception):
    """A libkrexregion call returned an error: .code (enum krex_error), .name
    ("KREX_ENOKREXD"), .text (krex_strerror), .call."""

    def __init__(self, code, call):
        self.code = code
        self.name = ERRORS.get(code, "KREX_E%d" % code)
        self.text = strerror(code)
        self.call = call
        super().__init__("%s: %s (%s)" % (call, self.text, self.name))


def begin(gpus=None, expected_us=0, max_us=0, timeout_ms=0, unprotected_ok=False, flags=0):
    """krex_region_begin(): block until krexd grants a region over gpus (node-wide
    names; None = all of the caller's).  Raises KrexError."""
    o = RegionOpts(size=ctypes.sizeof(RegionOpts), expected_us=int(expected_us),
                   max_us=int(max_us), timeout_ms=int(timeout_ms),
                   flags=int(flags) | (UNPROTECTED_OK if unprotected_ok else 0))
    if gpus is not None:
        gpus = [g.encode() if isinstance(g, str) else g for g in gpus]
        arr = (ctypes.c_char_p * len(gpus))(*gpus)  # kept alive until the call returns
        o.gpus = ctypes.cast(arr, ctypes.POINTER(ctypes.c_char_p))
        o.ngpus = len(gpus)
    rc = _load().krex_region_begin(ctypes.byref(o))
    if rc != OK:
        raise KrexError(rc, "krex_region_begin")


def end():
    """krex_region_end(): leave the region; return its certificate as a dict.
    Raises KrexError (ENOREGION when none was begun)."""
    global _last
    c = Certificate()
    rc = _load().krex_region_end(ctypes.byref(c))
    if rc != OK:
        raise KrexError(rc, "krex_region_end")
    _last = c
    return certificate_dict(c)


def certificate_dict(c):
    """A Certificate as a dict; fields whose 'known' bit is clear are None."""
    d = {}
    for name, _ in Certificate._fields_:
        v = getattr(c, name)
        d[name] = v.decode(errors="replace") if isinstance(v, bytes) else v
    for bit, names in _KNOWN.items():
        if not c.known & bit:
            for n in names:
                d[n] = None
    if d["clock_reasons"] is not None:
        d["clock_reasons"] = reason_names(d["clock_reasons"])
    if d["own_power_cap_first_us"] is not None and d["own_power_cap_first_us"] < 0:
        d["own_power_cap_first_us"] = None  # never reached
    if d["ungated_gpu"] < 0:
        d["ungated_gpu"] = None  # NVML could not list the GPU's processes
    d["outcome_name"] = _load().krex_outcome_name(c.outcome).decode(errors="replace")
    return d


def last_certificate_json():
    """The library's own JSON text of the last certificate (None before one)."""
    if _last is None:
        return None
    lib = _load()
    need = lib.krex_certificate_json(ctypes.byref(_last), None, 0)
    buf = ctypes.create_string_buffer(need + 1)
    lib.krex_certificate_json(ctypes.byref(_last), buf, need + 1)
    return buf.value.decode(errors="replace")


@contextlib.contextmanager
def region(**opts):
    """with region(**begin_opts) as cert: ... -- cert (a dict) is filled with the
    certificate when the block ends, also when it raises (then an error of
    end() does not hide the block's exception).  Options as begin()."""
    begin(**opts)
    cert = {}
    try:
        yield cert
    except BaseException:
        with contextlib.suppress(KrexError):
            cert.update(end())
        raise
    cert.update(end())


# ---- do_bench ------------------------------------------------------------------

class BenchError(RuntimeError):
    """do_bench found no GPU timer (no Triton, no PyTorch with CUDA, no usable
    libcuda), or the one asked for (timer=...) is not usable.  Raised before
    any region is begun."""


@dataclasses.dataclass
class Bench:
    """What do_bench measured: value is what triton.testing.do_bench returns
    for the same arguments (ms; a float, or a list for quantiles or
    return_mode="all"); times the ms of each timed call in the order run;
    n, mean, median, min, max, p20, p80, p95, std over them; timer is
    "triton", "torch" or "cuda-driver"; cert the region's certificate (a dict,
    as region() gives; {} when use_region=False).  float(b) is b.value."""
    value: object
    times: list
    timer: str
    cert: dict
    n: int = 0
    mean: float = None
    median: float = None
    min: float = None
    max: float = None
    p20: float = None
    p80: float = None
    p95: float = None
    std: float = None

    def __post_init__(self):
        v = sorted(self.times or [])
        if not v:
            return
        self.n, self.mean, self.min, self.max = len(v), sum(v) / len(v), v[0], v[-1]
        self.median, self.p20, self.p80, self.p95 = (_quantile(v, q) for q in (.5, .2, .8, .95))
        self.std = (sum((x - self.mean) ** 2 for x in v) / len(v)) ** 0.5

    def __float__(self):
        return float(self.value)

    def as_dict(self):
        """A dict for json.dumps: every field, the certificate included."""
        return dataclasses.asdict(self)


TIMERS = ("auto", "triton", "torch", "cuda-driver")


def do_bench(fn, warmup=25, rep=100, grad_to_none=None, quantiles=None, return_mode="mean",
             timer="auto", use_region=True, cert=None, **region_opts):
    """Time fn as triton.testing.do_bench does (estimate, warm up for `warmup`
    ms, time each call for `rep` ms with a pair of CUDA events), the whole
    measurement inside one KREX region; return a Bench (figures and
    certificate).  timer: "auto" (Triton when it imports and PyTorch sees a
    GPU, else PyTorch's CUDA events, else the CUDA driver's events through
    ctypes), or one of "triton", "torch", "cuda-driver".  region_opts go to
    region() (gpus, timeout_ms, unprotected_ok, ...); cert: a dict to fill with
    the certificate as well.  Without a GPU timer, BenchError, before the
    region is begun."""
    name, run = _timer(timer)
    ctx = region(**region_opts) if use_region else contextlib.nullcontext({})
    with ctx as c:
        value, times = run(fn, warmup, rep, grad_to_none, quantiles, return_mode)
    if cert is not None:
        cert.update(c)
    return Bench(value=value, times=times, timer=name, cert=c)


def _timer(want):
    """(name, run) of the timer to use; BenchError naming why each is not usable."""
    if want not in TIMERS:
        raise BenchError("krex.do_bench: unknown timer %r (one of %s)" % (want, ", ".join(TIMERS)))
    why = []
    for name, probe in (("triton", _triton), ("torch", _torch_events), ("cuda-driver", _DriverEvents)):
        if want not in ("auto", name):
            continue
        try:
            t = probe()
        except (ImportError, OSError, RuntimeError, AttributeError) as e:
            why.append("%s: %s" % (name, e))
            continue
        if name == "triton":
            return name, lambda *a: _triton_bench(t, *a)
        return name, lambda fn, *a: _event_loop(fn, t, *a)
    raise BenchError("krex.do_bench: no GPU timer usable (%s)" % "; ".join(why))


def _triton():
    import triton.testing as tt
    _torch_events()  # triton.testing.do_bench times with the GPU PyTorch sees
    return tt


def _triton_bench(tt, fn, warmup, rep, grad_to_none, quantiles, return_mode):
    """triton.testing.do_bench; its per-call times when it can return them
    (Triton 3: return_mode="all"), the value then computed from them."""
    import inspect
    params = inspect.signature(tt.do_bench).parameters
    kw = dict(warmup=warmup, rep=rep, grad_to_none=grad_to_none)
    kw = {k: v for k, v in kw.items() if k in params}
    major = str(getattr(__import__("triton"), "__version__", "0")).split(".")[0]
    if "return_mode" in params and major.isdigit() and int(major) >= 3:
        times = [float(x) for x in tt.do_bench(fn, return_mode="all", **kw)]
        return _summary(sorted(times), quantiles, return_mode), times
    kw.update(quantiles=quantiles, return_mode=return_mode)
    return tt.do_bench(fn, **{k: v for k, v in kw.items() if k in params}), None


# At most this many warm-up or timed calls, however short fn's estimate (a
# timer that reads 0 would otherwise ask for rep/1e-6 calls).
MAX_CALLS = 100000


def _event_loop(fn, ev, warmup, rep, grad_to_none, quantiles, return_mode):
    """Triton's recipe without Triton: estimate, warm up for `warmup` ms, then
    time each call with a pair of events for `rep` ms.  (value, times)."""
    fn()
    ev.sync()
    t0 = ev.record()
    for _ in range(5):
        fn()
    t1 = ev.record()
    est = max(ev.elapsed(t0, t1) / 5, 1e-6)
    n_warm = min(MAX_CALLS, max(1, int(warmup / est)))
    n_rep = min(MAX_CALLS, max(1, int(rep / est)))
    for _ in range(n_warm):
        fn()
    pairs = []
    for _ in range(n_rep):
        if grad_to_none is not None:
            for x in grad_to_none:
                x.grad = None
        s = ev.record()
        fn()
        e = ev.record()
        pairs.append((s, e))
    ev.sync()
    times = [ev.elapsed(s, e) for s, e in pairs]
    for s, e in pairs + [(t0, t1)]:
        ev.free(s)
        ev.free(e)
    return _summary(sorted(times), quantiles, return_mode), times


def _summary(ms, quantiles, return_mode):
    """What triton.testing.do_bench returns, from the sorted times ms."""
    if quantiles is not None:
        out = [_quantile(ms, q) for q in quantiles]
        return out[0] if len(out) == 1 else out
    if return_mode == "all":
        return ms
    pick = {"min": ms[0], "max": ms[-1], "median": _quantile(ms, 0.5),
            "mean": sum(ms) / len(ms)}
    return pick[return_mode]


def _quantile(v, q):
    k = (len(v) - 1) * q
    lo = int(k)
    hi = min(lo + 1, len(v) - 1)
    return v[lo] + (v[hi] - v[lo]) * (k - lo)


def _torch_events():
    import torch
    if not torch.cuda.is_available():
        raise RuntimeError("PyTorch %s sees no CUDA GPU" % torch.__version__)
    return _TorchEvents()


class _TorchEvents:
    def __init__(self):
        import torch
        self.torch = torch

    def record(self):
        e = self.torch.cuda.Event(enable_timing=True)
        e.record()
        return e

    def elapsed(self, a, b):
        b.synchronize()
        return a.elapsed_time(b)

    def sync(self):
        self.torch.cuda.synchronize()

    def free(self, e):
        pass


class _DriverEvents:
    """CUDA events on the legacy default stream of the current context (the
    primary context of device 0 when none is current), through libcuda."""

    def __init__(self):
        cu = ctypes.CDLL("libcuda.so.1")
        self.cu = cu
        self._check(cu.cuInit(0), "cuInit")
        ctx = ctypes.c_void_p()
        self._check(cu.cuCtxGetCurrent(ctypes.byref(ctx)), "cuCtxGetCurrent")
        if not ctx.value:
            dev = ctypes.c_int()
            self._check(cu.cuDeviceGet(ctypes.byref(dev), 0), "cuDeviceGet")
            self._check(cu.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev),
                        "cuDevicePrimaryCtxRetain")
            self._check(cu.cuCtxSetCurrent(ctx), "cuCtxSetCurrent")
        # CUDA 12.8 added cuEventElapsedTime_v2 and cuda.h 13 maps the name to it.
        self.elapsed_fn = getattr(cu, "cuEventElapsedTime_v2", None) or cu.cuEventElapsedTime

    def _check(self, rc, call):
        if rc != 0:
            name, get = ctypes.c_char_p(), getattr(self.cu, "cuGetErrorName", None)
            if get is not None:
                get(rc, ctypes.byref(name))
            raise RuntimeError("%s failed: CUresult %d %s" % (call, rc, (name.value or b"").decode()))

    def record(self):
        e = ctypes.c_void_p()
        self._check(self.cu.cuEventCreate(ctypes.byref(e), 0), "cuEventCreate")
        self._check(self.cu.cuEventRecord(e, None), "cuEventRecord")
        return e

    def elapsed(self, a, b):
        ms = ctypes.c_float()
        self._check(self.cu.cuEventSynchronize(b), "cuEventSynchronize")
        self._check(self.elapsed_fn(ctypes.byref(ms), a, b), "cuEventElapsedTime")
        return ms.value

    def sync(self):
        self._check(self.cu.cuCtxSynchronize(), "cuCtxSynchronize")

    def free(self, e):
        self.cu.cuEventDestroy_v2(e)


# ---- signed certificates (krex_certificate_verify(3)) ---------------------
# A self-contained block: krexd signs each certificate with munge; end_signed()
# hands out the signed form, verify() checks one on any node of the cluster.
import json as _json  # noqa: E402

SIGNED_MAX = 16384  # KREX_SIGNED_MAX
VERIFY_ALLOW_EXPIRED, VERIFY_ANY_SIGNER = 0x1, 0x2
# enum krex_verdict
VERDICTS = {0: "valid", 1: "bad", 2: "expired", 3: "signer", 4: "mismatch", 5: "malformed",
            6: "nomunge"}


class Verify(ctypes.Structure):
    """struct krex_verify"""
    _fields_ = [("size", ctypes.c_uint32), ("flags", ctypes.c_uint32),
                ("signer_uid", ctypes.c_uint32), ("munge_socket", ctypes.c_char * 256),
                ("verdict", ctypes.c_uint32), ("replayed", ctypes.c_uint32),
                ("expired", ctypes.c_uint32), ("uid", ctypes.c_uint32),
                ("job", ctypes.c_uint32), ("step", ctypes.c_uint32),
                ("region_id", ctypes.c_uint64), ("outcome", ctypes.c_uint32),
                ("cred_uid", ctypes.c_uint32), ("cred_gid", ctypes.c_uint32),
                ("encoded", ctypes.c_int64), ("ttl", ctypes.c_int32),
                ("node", ctypes.c_char * 256), ("user", ctypes.c_char * 64),
                ("reason", ctypes.c_char * 512), ("certificate", ctypes.c_char * SIGNED_MAX)]


class VerifyError(Exception):
    """verify() refused a signed certificate: .verdict ("bad", "expired",
    "signer", "mismatch", "malformed", "nomunge"), .reason, .result (the dict)."""

    def __init__(self, result):
        self.verdict = result["verdict"]
        self.reason = result["reason"]
        self.result = result
        super().__init__("%s: %s" % (self.verdict, self.reason))


def _load_signed():
    lib = _load()
    if not getattr(lib, "_krex_signed", False):
        lib.krex_region_end_signed.restype = ctypes.c_int
        lib.krex_region_end_signed.argtypes = [ctypes.POINTER(Certificate), ctypes.c_char_p,
                                               ctypes.c_ulong, ctypes.c_char_p, ctypes.c_ulong]
        lib.krex_certificate_verify.restype = ctypes.c_int
        lib.krex_certificate_verify.argtypes = [ctypes.c_char_p, ctypes.POINTER(Verify)]
        lib._krex_signed = True
    return lib


def end_signed():
    """krex_region_end_signed(): leave the region; return (certificate dict,
    signed form or None, why there is none or None).  Raises KrexError."""
    global _last
    c = Certificate()
    buf = ctypes.create_string_buffer(SIGNED_MAX)
    why = ctypes.create_string_buffer(256)
    rc = _load_signed().krex_region_end_signed(ctypes.byref(c), buf, SIGNED_MAX, why, 256)
    if rc != OK:
        raise KrexError(rc, "krex_region_end_signed")
    _last = c
    cred = buf.value.decode()
    return certificate_dict(c), cred or None, None if cred else why.value.decode(errors="replace")


def verify(path_or_text, munge_socket="", signer_uid=0, any_signer=False, allow_expired=False,
           check=True):
    """krex_certificate_verify(): check a signed certificate (a file path, or
    the text: what `krex region --json` prints, or a bare MUNGE: credential)
    with this node's munged.  Returns a dict: valid, verdict, reason, who
    (uid, user, job, step), node, when (encode time, seconds since the epoch),
    outcome, region, replayed, expired, signer_uid, ttl, certificate (the
    signed certificate as a dict).  Raises VerifyError when it is not valid
    (unless check=False)."""
    text = path_or_text
    if isinstance(text, bytes):
        text = text.decode()
    stripped = text.lstrip()
    if not stripped.startswith("{") and not stripped.startswith("MUNGE:"):
        with open(path_or_text, encoding="utf-8") as f:
            text = f.read()
    v = Verify(size=ctypes.sizeof(Verify), signer_uid=int(signer_uid),
               flags=(VERIFY_ANY_SIGNER if any_signer else 0) |
               (VERIFY_ALLOW_EXPIRED if allow_expired else 0),
               munge_socket=munge_socket.encode())
    rc = _load_signed().krex_certificate_verify(text.encode(), ctypes.byref(v))
    if rc != OK:
        raise KrexError(rc, "krex_certificate_verify")
    dec = lambda b: b.decode(errors="replace")  # noqa: E731
    r = {"valid": v.verdict == 0, "verdict": VERDICTS.get(v.verdict, str(v.verdict)),
         "reason": dec(v.reason)}
    if v.certificate:
        r.update(who={"uid": v.uid, "user": dec(v.user) or None, "job": v.job, "step": v.step},
                 node=dec(v.node), when=v.encoded, ttl=v.ttl, signer_uid=v.cred_uid,
                 outcome=_load().krex_outcome_name(v.outcome).decode(),
                 region=v.region_id, replayed=bool(v.replayed), expired=bool(v.expired),
                 certificate=_json.loads(dec(v.certificate)))
    if check and not r["valid"]:
        raise VerifyError(r)
    return r
