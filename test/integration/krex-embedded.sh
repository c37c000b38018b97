#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Embedded mode: however many `krex run` / `krex region` race for a private
# krexd, exactly one starts and every command runs; a killed private krexd
# (stale socket, lock and pid files) is replaced cleanly by the next command.
. "$top_srcdir/test/lib.sh"
. "$top_srcdir/test/integration/embedded-lib.sh"
emb_setup

# race N CMD...: start N copies of `krex CMD...` at once; each appends its exit
# status to $EMB_DIR/rc and its command marks $EMB_DIR/ran.
race() {
	local n=$1 i
	shift
	: >"$EMB_DIR/rc"
	: >"$EMB_DIR/ran"
	for i in $(seq "$n"); do
		(
			"$KREX" "$@" -- sh -c "echo $i >>'$EMB_DIR/ran'" >"$EMB_DIR/c$i.out" 2>&1
			echo $? >>"$EMB_DIR/rc"
		) &
	done
	wait
}
all_zero() { [ "$(grep -c '^0$' "$EMB_DIR/rc")" = "$1" ] && [ "$(wc -l <"$EMB_DIR/rc")" = "$1" ]; }
ran() { [ "$(sort -u "$EMB_DIR/ran" | wc -l)" = "$1" ]; }
# The distinct error lines the commands printed (certificates left out).
failures() {
	cat "$EMB_DIR"/c*.out 2>/dev/null | grep -v '^krex:  \|^krex: region [0-9]* on' |
		sort | uniq -c | head -5 | tr '\n' ';'
}

plan 22

race 20 run --no-gate
ok "20 concurrent krex run: all exit 0 ($(failures))" all_zero 20
ok "20 concurrent krex run: all 20 commands ran" ran 20
ok "exactly one private krexd runs (found $(emb_count))" [ "$(emb_count)" = 1 ]
ok "and it answers krex status" sh -c "\"$KREX\" status >/dev/null"
ok "exactly one krexd was started" [ "$(wc -l <"$EMB_DIR/krexd-starts")" = 1 ]

# A mix of run and region in another fresh run dir; region starts it too.
emb_fresh xdg2
: >"$EMB_DIR/krexd-starts"
rm -f "$EMB_DIR"/c*.out
: >"$EMB_DIR/rc"
: >"$EMB_DIR/ran"
for i in $(seq 20); do
	if [ $((i % 2)) = 0 ]; then sub="region --timeout 60"; else sub="run --no-gate"; fi
	(
		# shellcheck disable=SC2086
		"$KREX" $sub -- sh -c "echo $i >>'$EMB_DIR/ran'" >"$EMB_DIR/c$i.out" 2>&1
		echo $? >>"$EMB_DIR/rc"
	) &
done
wait
ok "10 krex run + 10 krex region at once: all exit 0 ($(failures))" all_zero 20
ok "all 20 commands ran" ran 20
ok "exactly one private krexd for the mix (found $(emb_count))" [ "$(emb_count)" = 1 ]
ok "exactly one krexd was started for the mix" [ "$(wc -l <"$EMB_DIR/krexd-starts")" = 1 ]

# Restart: SIGKILL leaves the socket, lock and pid files behind.
old=$(emb_pid)
kill -KILL "$old"
wait_for 5 emb_gone "$old"
ok "the killed krexd left its socket behind" test -S "$EMB_RUN/krexd.sock"
race 10 run --no-gate
ok "after SIGKILL: 10 concurrent krex run exit 0 ($(failures))" all_zero 10
ok "after SIGKILL: all 10 commands ran" ran 10
new=$(emb_pid)
ok "a new private krexd runs ($old -> $new)" [ -n "$new" ] && [ "$new" != "$old" ]
ok "exactly one after the restart (found $(emb_count))" [ "$(emb_count)" = 1 ]

# krex stop, then one more command: a clean start after a clean stop.
"$KREX" stop >/dev/null
ok "krex stop stops it" [ "$(emb_count)" = 0 ]
ok "krex run after krex stop starts it again" "$KREX" run --no-gate -- true
"$KREX" stop >/dev/null

# The same as a user that is not root, in its default /tmp/krex-UID: its
# private krexd freezes with signals.
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
	VUID=64981
	while getent passwd "$VUID" >/dev/null || [ -e "/tmp/krex-$VUID" ]; do VUID=$((VUID - 1)); done
	user_cleanup() {
		local p
		p=$(cat "/tmp/krex-$VUID/krexd.pid" 2>/dev/null) && kill -TERM "$p" 2>/dev/null &&
			wait_for 5 emb_gone "$p"
		rm -rf "/tmp/krex-$VUID"
		emb_cleanup
	}
	trap user_cleanup EXIT
	chmod 777 "$EMB_DIR"
	: >"$EMB_DIR/krexd-starts"
	: >"$EMB_DIR/rc"
	: >"$EMB_DIR/ran"
	chmod 666 "$EMB_DIR/rc" "$EMB_DIR/ran"
	for i in $(seq 20); do
		(
			setpriv --reuid="$VUID" --regid="$VUID" --clear-groups env -u XDG_RUNTIME_DIR \
				"$KREX" run --no-gate -- sh -c "echo $i >>'$EMB_DIR/ran'" >"$EMB_DIR/u$i.out" 2>&1
			echo $? >>"$EMB_DIR/rc"
		) &
	done
	wait
	ok "uid $VUID: 20 concurrent krex run exit 0 ($(cat "$EMB_DIR"/u*.out | sort | uniq -c | head -3 | tr '\n' ';'))" all_zero 20
	ok "uid $VUID: all 20 commands ran" ran 20
	ok "uid $VUID: one krexd, started once, in a 0700 /tmp/krex-$VUID of its own" \
		[ "$(emb_count "/tmp/krex-$VUID")" = 1 ] && [ "$(wc -l <"$EMB_DIR/krexd-starts")" = 1 ] &&
		[ "$(stat -c %a:%u "/tmp/krex-$VUID")" = "700:$VUID" ]
	chmod 755 "$EMB_DIR"
else
	skip "20 concurrent krex run as another user" "needs root and setpriv"
	skip "all 20 commands ran" "needs root and setpriv"
	skip "one krexd" "needs root and setpriv"
fi

# Start-up that cannot work fails at once, with the reason.
emb_fresh "$(printf 'x%.0s' $(seq 110))"
"$KREX" run --no-gate -- true 2>"$EMB_DIR/long.out"
ok "a run dir too long for a socket path: refused with the reason" \
	grep -q "too long for a unix socket" "$EMB_DIR/long.out"
emb_fresh nokrexd
s0=$(date +%s)
KREX_KREXD=/nonexistent/krexd "$KREX" run --no-gate -- true 2>"$EMB_DIR/nokrexd.out"
ok "no krexd binary: exit 1" [ $? = 1 ]
ok "at once, saying so ($(($(date +%s) - s0)) s)" [ $(($(date +%s) - s0)) -lt 5 ] &&
	grep -q "cannot start krexd" "$EMB_DIR/nokrexd.out"
done_testing
