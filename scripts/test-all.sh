#!/bin/bash
# The README's test command: install dependencies, build, run every test
# tier (`make check`), check formatting, and `make distcheck`.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
[ -x configure ] || ./autogen.sh >/dev/null
[ -f Makefile ] || ./configure -q
make -j"$(nproc)" >/dev/null
scripts/check-format.sh .
make check || { find test -name '*.log' -newer Makefile -path '*test*' | xargs grep -l -E '^(not ok|ERROR)' 2>/dev/null | while read -r f; do echo "==== $f"; tail -40 "$f"; done; exit 1; }
make distcheck >/dev/null
echo "distcheck: ok"
