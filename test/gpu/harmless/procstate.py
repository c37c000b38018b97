# SPDX-License-Identifier: BSD-3-Clause
"""procstate - what /proc and the cgroup files say about a process tree:
every task's State and Cpus_allowed_list, and whether its cgroup is frozen
(v1 freezer.state, v2 cgroup.events).  Read only.  Stdlib only."""

import os

CGROOT = "/sys/fs/cgroup"


def parse_cpulist(s):
    """'0-3,5' -> {0, 1, 2, 3, 5}"""
    out = set()
    for part in s.strip().split(","):
        if not part:
            continue
        lo, _, hi = part.partition("-")
        out.update(range(int(lo), int(hi or lo) + 1))
    return out


def cpulist(cpus):
    """{0, 1, 2, 3, 5} -> '0-3,5'"""
    v = sorted(cpus)
    out, i = [], 0
    while i < len(v):
        j = i
        while j + 1 < len(v) and v[j + 1] == v[j] + 1:
            j += 1
        out.append(str(v[i]) if i == j else "%d-%d" % (v[i], v[j]))
        i = j + 1
    return ",".join(out)


def read_pids(path):
    try:
        with open(path) as f:
            return [int(x) for x in f.read().split() if x.isdigit()]
    except OSError:
        return []


def children_map():
    """ppid -> [pid] over the whole system."""
    kids = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % d) as f:
                st = f.read()
        except OSError:
            continue
        # comm may hold spaces and parentheses: the fields follow the last ')'
        ppid = int(st[st.rfind(")") + 2:].split()[1])
        kids.setdefault(ppid, []).append(int(d))
    return kids


def tree(pids, kids=None):
    """The pids and all their descendants."""
    kids = children_map() if kids is None else kids
    out, todo = [], list(pids)
    while todo:
        p = todo.pop()
        if p in out:
            continue
        out.append(p)
        todo.extend(kids.get(p, []))
    return out


def status(path):
    d = {}
    try:
        with open(path) as f:
            for ln in f:
                k, _, v = ln.partition(":")
                d[k] = v.strip()
    except OSError:
        return None
    return d


def cgroup_frozen(pid):
    """'v1'/'v2' when pid's cgroup is frozen (or freezing), else None."""
    try:
        with open("/proc/%d/cgroup" % pid) as f:
            lines = f.read().splitlines()
    except OSError:
        return None
    for ln in lines:
        hid, ctrls, path = ln.split(":", 2)
        if hid == "0" and ctrls == "":
            ev = status(os.path.join(CGROOT, path.lstrip("/"), "cgroup.events")) or {}
            if ev.get("frozen") is not None and ev.get("frozen").split()[0] == "1":
                return "v2"
            try:
                with open(os.path.join(CGROOT, path.lstrip("/"), "cgroup.freeze")) as f:
                    if f.read().strip() == "1":
                        return "v2"
            except OSError:
                pass
        elif "freezer" in ctrls.split(","):
            try:
                with open(os.path.join(CGROOT, "freezer", path.lstrip("/"),
                                       "freezer.state")) as f:
                    if f.read().strip() != "THAWED":
                        return "v1"
            except OSError:
                pass
    return None


def frozen_pids(pids):
    """The processes of the pids' trees that are stopped (State T/t) or in a
    frozen cgroup."""
    out = []
    for p in tree(pids):
        st = status("/proc/%d/status" % p)
        if st is None:
            continue
        state = st.get("State", "?")[:1]
        if state in "Tt" or cgroup_frozen(p):
            out.append(p)
    return out


def snapshot(pids):
    """Every task of the pids' trees: {tid: {pid, comm, state, cpus, frozen}}."""
    out = {}
    for p in tree(pids):
        fz = cgroup_frozen(p)
        try:
            tids = os.listdir("/proc/%d/task" % p)
        except OSError:
            continue
        for t in tids:
            st = status("/proc/%d/task/%s/status" % (p, t))
            if st is None:
                continue
            out[int(t)] = {"pid": p, "comm": st.get("Name", "?"),
                           "state": st.get("State", "?")[:1],
                           "cpus": st.get("Cpus_allowed_list", "?"), "frozen": fz}
    return out
