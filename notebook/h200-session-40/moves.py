#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""moves.py KREXD_LOG - what krexd's log says of its participants' making:
the loop's part (made in), the mover thread's write (moved in ... in), the
wait for the thread (queued) and, of it, the hold for regions' entries
(KREXD_MOVE_HOLD_MS; 0 on lines without it).  p50 / p90 / max / sum in ms.
A tool of the notebook (session 40), not of KREX."""
import re
import sys

FIELDS = (("made on the loop", r"\(made in (\d+) us\)"),
          ("written by the mover", r"moved in by the mover thread in (\d+) us"),
          ("queued for the mover", r"after (\d+) us queued"),
          ("of it held for entries", r"(\d+) us of it held for regions' entries"))


def quantile(v, q):
    v = sorted(v)
    return v[min(len(v) - 1, int(q * len(v)))] if v else float("nan")


def main():
    text = open(sys.argv[1], errors="replace").read()
    for name, pat in FIELDS:
        ms = [int(x) / 1000.0 for x in re.findall(pat, text)]
        print("%-24s n %4d  p50 %7.2f  p90 %7.2f  max %7.2f  sum %8.1f ms" % (
            name, len(ms), quantile(ms, 0.5), quantile(ms, 0.9),
            max(ms) if ms else float("nan"), sum(ms)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
