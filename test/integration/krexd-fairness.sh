#!/bin/sh
# Fairness: two participants that loop begin/end on one GPU alternate (an
# ended participant's next begin joins the back of the queue).
. "$top_srcdir/test/lib.sh"
. "$top_srcdir/test/integration/krexd-lib.sh"

# Grants in region id order (the order krexd granted them), as A/B.
order() {
	sort -k3,3n "$KT_DIR/grants" | awk -v a="$x" '{ printf "%s", ($1 == a ? "A" : "B") }'
}
# Unfair grants: one granted twice in a row although the other had asked
# (sent its begin) more than 1 ms before the second of the two.  A repeat
# where the other had not asked yet (descheduled under load) is fair.
unfair() {
	sort -k3,3n "$KT_DIR/grants" | awk '
		{ pid[NR] = $1; begin[NR] = $4 }
		END {
			bad = 0
			for (i = 2; i <= NR; i++) {
				if (pid[i] != pid[i - 1])
					continue
				for (j = i + 1; j <= NR; j++)
					if (pid[j] != pid[i]) {
						if (begin[j] + 1000000 < begin[i])
							bad++
						break
					}
			}
			print bad
		}'
}
both_done() { ! kill -0 "$x" 2>/dev/null && ! kill -0 "$y" 2>/dev/null; }

kt_setup
kt_conf "gpus = g0"
plan 5
ok "krexd starts" krexd_start
: >"$KT_DIR/grants"
# Both start waiting on a holder, so both are queued before the loops begin.
kt_bg held "$CLIENT" region --gpus g0 --hold-ms 300
wait_for 5 grep -qs granted "$KT_DIR/held.out"
kt_bg x "$CLIENT" region --gpus g0 --count 10 --hold-ms 20 --grants "$KT_DIR/grants"
kt_bg y "$CLIENT" region --gpus g0 --count 10 --hold-ms 20 --grants "$KT_DIR/grants"
ok "both loops finish" wait_for 20 both_done
ok "20 grants" test "$(wc -l <"$KT_DIR/grants")" = 20
diag "grant order (A = first loop): $(order)"
ok "they alternate: nobody granted twice while the other waited" test "$(unfair)" = 0
ok "every certificate is clean" test "$(grep -c '^outcome=clean' "$KT_DIR/x.out" "$KT_DIR/y.out" | awk -F: '{ s += $2 } END { print s }')" = 20
done_testing
