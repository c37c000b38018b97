#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Labels and GPU names reach `krex status` (root's terminal), krex log and
# krexd's log: control characters are refused in them, C1 (U+0080-U+009F:
# CSI U+009B, OSC U+009D, as UTF-8 or as a raw byte) like C0, and so is a
# byte that is not UTF-8.  Plain UTF-8 (an accented letter) is accepted.
. "$top_srcdir/test/lib.sh"
. "$top_srcdir/test/integration/krexd-lib.sh"
. "$top_srcdir/test/attack/attack-lib.sh"
at_setup
plan 9
kt_conf "freezer = signal"
krexd_start

# label BYTES NAME: register with that label; its answer in $KT_DIR/NAME.out
label() { as_user "$ATTACK" label "$(printf "$1")" "$(printf "${3:-}")" >"$KT_DIR/$2.out" 2>&1; }

label 'job \033[31mred' c0
ok "a C0 control (ESC) in a label is refused" grep -qs 'last_error=error 6 the label holds a control character (byte 0x1b' "$KT_DIR/c0.out"
label 'x\302\233[2Jy' csi
diag "$(tr '\n' ' ' <"$KT_DIR/csi.out")"
ok "U+009B (CSI) as UTF-8 in a label is refused" grep -qs 'last_error=error 6 the label holds a control character (U+009B at 1)' "$KT_DIR/csi.out"
label 'x\302\2350;evil\007' osc
ok "U+009D (OSC) as UTF-8 in a label is refused" grep -qs 'last_error=error 6 the label holds a control character' "$KT_DIR/osc.out"
label 'x\233[2J' raw
diag "$(tr '\n' ' ' <"$KT_DIR/raw.out")"
ok "a raw 0x9b byte in a label is refused" grep -qs 'last_error=error 6 the label is not UTF-8 (byte 0x9b at 1)' "$KT_DIR/raw.out"
label 'x\300\200' overlong
ok "an overlong UTF-8 form in a label is refused" grep -qs 'last_error=error 6 the label is not UTF-8' "$KT_DIR/overlong.out"
label 'g' gpu 'g\302\2330'
diag "$(tr '\n' ' ' <"$KT_DIR/gpu.out")"
ok "U+009B in a GPU name is refused" grep -qs 'last_error=error 6 GPU name 0 holds a control character' "$KT_DIR/gpu.out"
label 'g' gpuraw 'g\2330'
ok "a raw 0x9b byte in a GPU name is refused" grep -qs 'last_error=error 6 GPU name 0 is not UTF-8' "$KT_DIR/gpuraw.out"
label 'caf\303\251 \342\202\254' utf8 g0
ok "a label in plain UTF-8 is accepted" grep -qs 'registered=1' "$KT_DIR/utf8.out"
ok "no C1 byte reached krexd's log" sh -c "! LC_ALL=C grep -q \"\$(printf '\\302\\233\\|\\233')\" '$KT_DIR/krexd.log'"
done_testing
