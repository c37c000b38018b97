#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""ptyjob.py DIR CMD... - an interactive bash on a pseudo-terminal runs CMD as
a foreground job, as a user at a terminal would; the caller takes regions
meanwhile.

Writes DIR/pty.pids ("BASH_PID") once the job runs, then waits until the
caller writes a line into the FIFO DIR/pty.go.  Then it reads the terminal's
foreground process group (/proc/BASH/stat field 8, tpgid) and the job's
process group, types Ctrl-C (the job ends if it is still the foreground
job), then `jobs` (bash lists a job it took the terminal back from: "[1]+
Stopped", or "Running" once continued in the background), and writes
DIR/pty.out:
    tpgid_is_job 1|0
    jobs <what `jobs` printed, one line, empty when no job is left>
Every wait is on an event (the FIFO, bash's output); DEADLINE seconds (60)
guard against a hang only.
"""
import os
import pty
import select
import signal
import sys
import time

DEADLINE = 60
MARK = b"JOB-2RUNS"  # CMD prints it when it runs (not in the echo of its typed line)


def read_until(fd, marker, buf):
    end = time.monotonic() + DEADLINE
    while marker not in buf:
        left = end - time.monotonic()
        if left <= 0:
            raise TimeoutError("no %r from bash; got %r" % (marker, buf[-300:]))
        r, _, _ = select.select([fd], [], [], left)
        if r:
            try:
                data = os.read(fd, 4096)
            except OSError:
                raise EOFError("bash went away; got %r" % buf[-300:])
            if not data:
                raise EOFError("bash went away; got %r" % buf[-300:])
            buf += data
    return buf


def stat_fields(pid):
    with open("/proc/%d/stat" % pid) as f:
        s = f.read()
    return s[s.rindex(")") + 2:].split()


def main():
    d, cmd = sys.argv[1], sys.argv[2:]
    env = dict(os.environ, PS1="PROMPT> ", TERM="dumb")
    pid, fd = pty.fork()
    if pid == 0:
        # started in the background of a script: SIGINT and SIGQUIT come
        # ignored, and bash keeps signals ignored at its start so for its
        # jobs (a terminal's Ctrl-C would do nothing)
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        signal.signal(signal.SIGQUIT, signal.SIG_DFL)
        os.execvpe("bash", ["bash", "--norc", "--noprofile", "-i"], env)
    buf = read_until(fd, b"PROMPT> ", b"")
    # the job announces itself on the terminal once it runs, so that the
    # caller starts only when it is the foreground job
    os.write(fd, (" ".join(cmd) + "\n").encode())
    buf = read_until(fd, MARK, b"")
    with open(os.path.join(d, "pty.pids.tmp"), "w") as f:
        f.write("%d\n" % pid)
    os.rename(os.path.join(d, "pty.pids.tmp"), os.path.join(d, "pty.pids"))
    go = os.open(os.path.join(d, "pty.go"), os.O_RDONLY | os.O_NONBLOCK)
    # drain the terminal while waiting for the caller's line
    while True:
        r, _, _ = select.select([fd, go], [], [])
        if go in r:
            if os.read(go, 64):
                break
            time.sleep(0.01)  # no writer yet: EOF repeats until one opens it
        if fd in r:
            buf += os.read(fd, 4096)
    f = stat_fields(pid)
    tpgid = int(f[5])
    bash_pgid = int(f[2])
    out = ["tpgid_is_job %d" % (tpgid != bash_pgid and tpgid > 0)]
    os.write(fd, b"\x03")
    read_until(fd, b"PROMPT> ", b"")
    os.write(fd, b"jobs; echo JOBS-DONE\n")
    got = read_until(fd, b"JOBS-DONE\r\n", b"")
    text = got.decode(errors="replace").replace("\r", "")
    lines = [l for l in text.split("\n") if l.startswith("[")]
    out.append("jobs " + " | ".join(lines))
    os.write(fd, b"exit\n")
    with open(os.path.join(d, "pty.out"), "w") as f:
        f.write("\n".join(out) + "\n")
    os.waitpid(pid, 0)


if __name__ == "__main__":
    main()
