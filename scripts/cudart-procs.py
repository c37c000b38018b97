#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""cudart-procs.py - which driver ABIs the CUDA runtime asks cuGetProcAddress
for, and whether the gate hooks each one it asks for by a hooked name.

	python3 scripts/cudart-procs.py [--list] LIBCUDART [CUDA_HOOKS_DEF]

cudart (libcudart.so) gets every driver function through cuGetProcAddress,
each with a cudaVersion that picks the ABI: cudart 13 asks for
cuDevicePrimaryCtxReset at 7000 (CUDA 7.0's), not 11000 (_v2).  A version
older than every ABI the gate hooks for that name returns an unwrapped
function: the call passes the gate unseen.  This reads the requests from
the library's x86-64 code (objdump -d: the name's address loaded into
%rdi, the version into %edx, the flags into %ecx, then the indirect call),
matches them against cuda_hooks.def's (proc, since) columns and prints
every gap.  Exit 0: none (the requests and matches are counted on stdout);
1: gaps; 2: usage; 3: nothing recognised (no objdump, not x86-64, another
code shape): the caller skips.
"""
import re
import subprocess
import sys

LEA_RDI = re.compile(r"lea\s+\S+\(%rip\),%rdi\s+# ([0-9a-f]+)")
MOV_EDX = re.compile(r"mov\s+\$0x([0-9a-f]+),%edx")
MOV_ECX = re.compile(r"mov\s+\$0x([0-9a-f]+),%ecx")
XOR_ECX = re.compile(r"xor\s+%ecx,%ecx")
HOOK = re.compile(r"CU_HOOK(?:_OLD)?\(\s*\w+,\s*\w+,\s*(\w+),\s*(\d+),")


def sections(lib):
    """(address, file offset, size) of each allocated section."""
    out = subprocess.run(["readelf", "-SW", lib], capture_output=True, text=True).stdout
    secs = []
    for ln in out.splitlines():
        m = re.match(r"\s*\[\s*\d+\]\s+(\S+)\s+\S+\s+([0-9a-f]+)\s+([0-9a-f]+)\s+([0-9a-f]+)", ln)
        if m and int(m.group(2), 16):
            secs.append((int(m.group(2), 16), int(m.group(3), 16), int(m.group(4), 16)))
    return secs


def requests(lib):
    """{(name, version, flags)} cudart passes to cuGetProcAddress."""
    data = open(lib, "rb").read()
    secs = sections(lib)

    def cstr(addr):
        for a, off, size in secs:
            if a <= addr < a + size:
                o = off + addr - a
                return data[o:data.find(b"\0", o)].decode(errors="replace")
        return None
    dis = subprocess.run(["objdump", "-d", "--no-show-raw-insn", lib], capture_output=True,
                         text=True).stdout.splitlines()
    found = set()
    for i, ln in enumerate(dis):
        if not re.search(r"call\s+\*", ln):
            continue
        name = ver = flags = None
        for w in dis[max(0, i - 9):i]:
            m = LEA_RDI.search(w)
            if m:
                name = cstr(int(m.group(1), 16))
            m = MOV_EDX.search(w)
            if m:
                ver = int(m.group(1), 16)
            m = MOV_ECX.search(w)
            if m:
                flags = int(m.group(1), 16)
            elif XOR_ECX.search(w):
                flags = 0
        if name and re.fullmatch(r"cu[A-Z]\w+", name) and ver and 1000 <= ver <= 99999:
            found.add((name, ver, flags))
    return found


def main(argv):
    args = [a for a in argv if a != "--list"]
    if len(args) not in (1, 2):
        sys.stderr.write(__doc__)
        return 2
    lib = args[0]
    hooks_def = args[1] if len(args) == 2 else "gate/cuda_hooks.def"
    hooks = {}
    for m in HOOK.finditer(open(hooks_def).read()):
        hooks.setdefault(m.group(1), []).append(int(m.group(2)))
    try:
        found = requests(lib)
    except (OSError, subprocess.SubprocessError) as e:
        print("cudart-procs: cannot read %s: %s" % (lib, e))
        return 3
    if not found:
        print("cudart-procs: no cuGetProcAddress request recognised in %s" % lib)
        return 3
    hooked = [r for r in found if r[0] in hooks]
    gaps = sorted(r for r in hooked if min(hooks[r[0]]) > r[1])
    if "--list" in argv:
        for n, v, f in sorted(found):
            print("%s %d %s" % (n, v, "-" if f is None else f))
    print("cudart-procs: %d requests in %s, %d of hooked names, %d older than every hooked ABI"
          % (len(found), lib, len(hooked), len(gaps)))
    for n, v, f in gaps:
        print("gap: %s at cudaVersion %d (flags %s): the gate hooks it from %d" % (
            n, v, "-" if f is None else f, min(hooks[n])))
    return 1 if gaps else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
