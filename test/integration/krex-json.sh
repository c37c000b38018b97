#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Every JSON that KREX prints is valid JSON (and valid UTF-8) whatever the
# labels, GPU names and node name hold: krex status --json, krex region --json,
# the certificate file (--cert, krex_certificate_json).  A label or GPU name
# with a control character is refused at REGISTER (krex run checks --label
# first) and cannot forge a line in krexd's log.
. "$top_srcdir/test/lib.sh"
. "$top_srcdir/test/integration/embedded-lib.sh"
CLIENT=$top_builddir/test/integration/krex-testclient
command -v python3 >/dev/null || skip_all "no python3"
emb_setup

# json_ok FILE [LINE]: FILE (or its last line with LINE=last) is strict UTF-8
# JSON; its fields are written to FILE.py for checks.
json_ok() {
	python3 - "$@" <<'PY' 2>>"$EMB_DIR/json.err"
import json, sys
data = open(sys.argv[1], "rb").read()
if len(sys.argv) > 2:
    data = data.rstrip(b"\n").split(b"\n")[-1]
obj = json.loads(data.decode("utf-8", errors="strict"))
open(sys.argv[1] + ".repr", "w", encoding="utf-8").write(repr(obj))
PY
}
# has FILE TEXT: the parsed value of FILE holds TEXT (a Python repr fragment).
has() { grep -qF -- "$2" "$1.repr"; }

Q='my"job'
B='back\slash\\'
U=$'\xc3\xa9t\xc3\xa9 \xe2\x82\xac'     # valid UTF-8: été €
X=$'bad\xff\xfeutf8\xc3'                # invalid UTF-8 bytes, a cut sequence
L=$(printf 'é%.0s' $(seq 200))          # 400 bytes: cut by the 127-byte label field
G='g"1\x'                               # a GPU name with a quote and a backslash
printf 'node_name = n"o\\de\tx\001y\n' >>"$EMB_DIR/krexd.conf"

plan 17

start_run() { # start_run NAME LABEL [GPUS]
	local n=$1 l=$2 g=${3:-g0}
	"$KREX" run --no-gate --gpus "$g" --label "$l" -- sleep 60 >"$EMB_DIR/$n.out" 2>&1 &
	EMB_PIDS="$EMB_PIDS $!"
}
start_run q "$Q"
start_run b "$B"
start_run u "$U"
start_run x "$X"
start_run l "$L"
start_run g plain "$G"
parts() { [ "$("$KREX" status --json 2>/dev/null | grep -o '"id":' | wc -l)" -ge "$1" ]; }
ok "six participants with hostile labels and GPU names registered" wait_for 10 parts 6

"$KREX" status --json >"$EMB_DIR/status.json"
ok "krex status --json parses as strict UTF-8 JSON" json_ok "$EMB_DIR/status.json"
ok "the quote survives in the label" has "$EMB_DIR/status.json" "'my\"job'"
ok "the backslashes survive" has "$EMB_DIR/status.json" "'back\\\\slash\\\\\\\\'"
ok "valid UTF-8 passes unchanged" has "$EMB_DIR/status.json" "'été €'"
# krexd refuses malformed UTF-8 (doc/security.md): the client replaces it
ok "invalid UTF-8 in a label becomes '?' at the client" has "$EMB_DIR/status.json" "'bad??utf8?'"
ok "the node name with a quote, a backslash, a tab and ^A survives" has "$EMB_DIR/status.json" "'n\"o\\\\de\\tx\\x01y'"
ok "the GPU name with a quote survives" has "$EMB_DIR/status.json" "'g\"1\\\\x'"

"$KREX" region --gpus "$G" --json -- true 2>"$EMB_DIR/region.err"
ok "krex region --json on the hostile GPU: the JSON line parses" json_ok "$EMB_DIR/region.err" last
ok "its gpus field is the GPU name" has "$EMB_DIR/region.err" "'gpus': 'g\"1\\\\x'"
"$KREX" region --gpus "$G,g0" --cert "$EMB_DIR/cert.json" -- true 2>/dev/null
ok "krex region --cert writes valid JSON" json_ok "$EMB_DIR/cert.json"

# A label with a newline: refused, never in the log as a line of its own.
"$KREX" run --no-gate --label $'x\nkrexd: error: forged' -- true 2>"$EMB_DIR/nl.err"
ok "krex run refuses a label with a newline (exit 2)" [ $? = 2 ]
ok "and says why" grep -q "control character" "$EMB_DIR/nl.err"
"$KREXD" -F -r "$EMB_DIR/raw" -o freezer=signal -o gpus=g0 -o isolate=none \
	-o "cgroup_subtree=$EMB_SUB/raw" 2>"$EMB_DIR/raw.log" &
EMB_PIDS="$EMB_PIDS $!"
RAW=$EMB_DIR/raw/krexd.sock
wait_for 10 test -S "$RAW"
timeout 3 "$CLIENT" -s "$RAW" participant --label $'x\nkrexd: error: forged' \
	>"$EMB_DIR/rawlabel.out" 2>&1
ok "krexd refuses REGISTER with a newline in the label" grep -q "control character" "$EMB_DIR/rawlabel.out"
timeout 3 "$CLIENT" -s "$RAW" participant --gpus $'g\nkrexd: error: forged' \
	>"$EMB_DIR/rawgpu.out" 2>&1
ok "and a GPU name with a newline" grep -q "control character" "$EMB_DIR/rawgpu.out"
ok "krexd's log holds no forged line" sh -c "! grep -q '^krexd: error: forged' '$EMB_DIR/raw.log'"
timeout 10 "$CLIENT" -s "$RAW" status >"$EMB_DIR/rawstatus.out" 2>&1
ok "krexd still answers" [ $? = 0 ]
done_testing
