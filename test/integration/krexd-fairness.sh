#!/bin/sh
# Fairness: two participants that loop begin/end on one GPU alternate (an
# ended participant's next begin joins the back of the queue).
. "$top_srcdir/test/lib.sh"
. "$top_srcdir/test/integration/krexd-lib.sh"

# Grants in time order, as a string of A/B; count the times one follows itself.
repeats() {
	sort -k2,2n "$KT_DIR/grants" | awk -v a="$x" '{ printf "%s", ($1 == a ? "A" : "B") }' >"$KT_DIR/order"
	grep -o 'AA\|BB' "$KT_DIR/order" | wc -l
}
both_done() { ! kill -0 "$x" 2>/dev/null && ! kill -0 "$y" 2>/dev/null; }

kt_setup
kt_conf "gpus = g0"
plan 4
ok "krexd starts" krexd_start
: >"$KT_DIR/grants"
# Both start waiting on a holder, so both are queued before the loops begin.
kt_bg held "$CLIENT" region --gpus g0 --hold-ms 300
wait_for 5 grep -qs granted "$KT_DIR/held.out"
kt_bg x "$CLIENT" region --gpus g0 --count 10 --hold-ms 20 --grants "$KT_DIR/grants"
kt_bg y "$CLIENT" region --gpus g0 --count 10 --hold-ms 20 --grants "$KT_DIR/grants"
ok "both loops finish" wait_for 20 both_done
ok "20 grants" test "$(wc -l <"$KT_DIR/grants")" = 20
repeats >/dev/null
diag "grant order (A = first loop): $(cat "$KT_DIR/order")"
ok "they alternate (at most one repeat, at the start)" test "$(repeats)" -le 1
ok "every certificate is clean" test "$(grep -c '^outcome=clean' "$KT_DIR/x.out" "$KT_DIR/y.out" | awk -F: '{ s += $2 } END { print s }')" = 20
done_testing
