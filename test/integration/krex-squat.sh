#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Embedded mode cannot be taken over: a run dir another user made (or a link,
# or one of ours with a loose mode) is refused; a krexd run by another user is
# not trusted (SO_PEERCRED), by krex and by libkrexregion; a gate page that is
# empty, short or not krexd's is refused without SIGBUS and the gate stays
# open; krex_leave() unmaps the gate page and frees its view (valgrind).
. "$top_srcdir/test/lib.sh"
. "$top_srcdir/test/integration/embedded-lib.sh"
need_root
JT=$top_builddir/test/integration/krex-jointest
GATE=$top_builddir/gate/.libs/libkrexgate.so
[ -x "$JT" ] || skip_all "krex-jointest not built"
emb_setup
export LD_LIBRARY_PATH=$top_builddir/libregion/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
NOBODY=$(id -u nobody)
# The victim: a uid of no account, so that /tmp/krex-VUID is no one's real dir.
VUID=64991
while getent passwd "$VUID" >/dev/null || [ -e "/tmp/krex-$VUID" ]; do VUID=$((VUID - 1)); done
SQ=/tmp/krex-$VUID
as() { # as UID CMD...: run CMD as UID (gid the same), no XDG_RUNTIME_DIR
	local u=$1
	shift
	setpriv --reuid="$u" --regid="$u" --clear-groups env -u XDG_RUNTIME_DIR "$@"
}
squat_cleanup() {
	local p
	p=$(cat "$SQ/krexd.pid" 2>/dev/null) && [ -n "$p" ] && kill -TERM "$p" 2>/dev/null
	[ -n "$p" ] && wait_for 5 emb_gone "$p"
	rm -rf "$SQ"
	emb_cleanup
}
trap squat_cleanup EXIT
# nobody_krexd DIR: a real krexd run by nobody in DIR (mode 0755: others reach it).
nobody_krexd() {
	mkdir -p "$1" && chown "$NOBODY" "$1" && chmod 755 "$1"
	as "$NOBODY" "$KREXD" -r "$1" -o freezer=signal -o gpus=g0 -o isolate=none \
		-o "cgroup_subtree=$EMB_SUB/n" 2>"$EMB_DIR/nobody-krexd.out"
	wait_for 10 test -S "$1/krexd.sock"
}

plan 24

# 1. A squatted /tmp/krex-UID with a fake krexd of another user in it.
as "$NOBODY" mkdir -m 0755 "$SQ"
ok "nobody squats $SQ and runs a krexd there" nobody_krexd "$SQ"
as "$VUID" "$KREX" run --no-gate -- touch "$EMB_DIR/victim-ran" >"$EMB_DIR/squat.out" 2>&1
rc=$?
ok "the victim's krex run refuses it (exit $rc)" [ "$rc" = 1 ]
ok "with a clear error" grep -q "refusing the private krexd's run directory: $SQ is owned by uid $NOBODY" "$EMB_DIR/squat.out"
ok "and its command did not run" [ ! -e "$EMB_DIR/victim-ran" ]
as "$VUID" "$KREX" status >"$EMB_DIR/squat-status.out" 2>&1
ok "krex status refuses it too" grep -q "refusing" "$EMB_DIR/squat-status.out"
squat_cleanup_dir() { p=$(cat "$SQ/krexd.pid" 2>/dev/null) && kill -TERM "$p" 2>/dev/null; wait_for 5 emb_gone "$p"; rm -rf "$SQ"; }
squat_cleanup_dir

# 2. A symbolic link squatted in its place (to a directory of the victim's).
mkdir -m 0700 "$EMB_DIR/vdir" && chown "$VUID" "$EMB_DIR/vdir"
as "$NOBODY" ln -s "$EMB_DIR/vdir" "$SQ"
as "$VUID" "$KREX" run --no-gate -- true >"$EMB_DIR/link.out" 2>&1
ok "a symbolic link at $SQ is refused" grep -q "$SQ is a symbolic link" "$EMB_DIR/link.out"
rm -f "$SQ"

# 3. Our own directory, but open to others (mode 0755): refused too.
mkdir -m 0755 "$SQ" && chown "$VUID" "$SQ"
as "$VUID" "$KREX" run --no-gate -- true >"$EMB_DIR/mode.out" 2>&1
ok "a run dir of ours with mode 0755 is refused" grep -q "$SQ has mode 0755, not 0700" "$EMB_DIR/mode.out"
rm -rf "$SQ"

# 4. No squatter: the victim's own private krexd starts in a fresh 0700 dir.
as "$VUID" "$KREX" run --no-gate -- true >"$EMB_DIR/fresh.out" 2>&1
ok "with no squatter the victim's krex run works" [ $? = 0 ]
ok "in a 0700 dir of its own" [ "$(stat -c %a:%u "$SQ")" = "700:$VUID" ]
p=$(cat "$SQ/krexd.pid" 2>/dev/null) && EMB_PIDS="$EMB_PIDS $p" # the EXIT trap's, if stop fails
as "$VUID" "$KREX" stop >/dev/null 2>&1
rm -rf "$SQ"

# 5. KREX_SOCKET naming a krexd of another user: krex and the library refuse it.
ok "nobody runs a krexd in $EMB_DIR/nb" nobody_krexd "$EMB_DIR/nb"
KREX_SOCKET=$EMB_DIR/nb/krexd.sock "$KREX" run --no-gate -- touch "$EMB_DIR/ran2" \
	>"$EMB_DIR/peer.out" 2>&1
ok "krex run refuses a krexd run by uid $NOBODY" grep -q "runs as uid $NOBODY, neither root nor you" "$EMB_DIR/peer.out"
ok "and did not run the command" [ ! -e "$EMB_DIR/ran2" ]
KREX_SOCKET=$EMB_DIR/nb/krexd.sock "$JT" join >"$EMB_DIR/peerjoin.out" 2>&1
ok "krex_join() refuses it: KREX_EPERM ($(cat "$EMB_DIR/peerjoin.out"))" grep -q "^join 3 " "$EMB_DIR/peerjoin.out"
kill -TERM "$(cat "$EMB_DIR/nb/krexd.pid")" 2>/dev/null

# 6. A gate page that is empty, short, or another user's: refused, no SIGBUS.
R=$EMB_DIR/root
mkdir -m 0755 "$R"
"$KREXD" -F -r "$R" -o freezer=signal -o gpus=g0 -o isolate=none -o "cgroup_subtree=$EMB_SUB/r" \
	2>"$EMB_DIR/root-krexd.out" &
EMB_PIDS="$EMB_PIDS $!"
wait_for 10 test -S "$R/krexd.sock"
mv "$R/gate" "$R/gate.real" # krexd keeps its own mapping of the real page
export KREX_SOCKET=$R/krexd.sock
gate_case() { # gate_case NAME: join with the gate file as it is now
	KREX_LOG=warn "$JT" join >"$EMB_DIR/$1.out" 2>&1
	echo "rc $?" >>"$EMB_DIR/$1.out"
}
: >"$R/gate"
gate_case empty
ok "a 0-byte gate page: no SIGBUS ($(tr '\n' ' ' <"$EMB_DIR/empty.out"))" grep -q "^rc 0" "$EMB_DIR/empty.out"
ok "krex_join() fails (KREX_EPROTO), the gate stays open" grep -q "^join 2 " "$EMB_DIR/empty.out"
ok "and it is logged" grep -q "gate page .* refused" "$EMB_DIR/empty.out"
head -c 4096 "$R/gate.real" >"$R/gate"
gate_case short
ok "a 4096-byte gate page: refused, no SIGBUS" grep -q "^join 2 " "$EMB_DIR/short.out"
cp "$R/gate.real" "$R/gate" && chown "$NOBODY" "$R/gate"
gate_case owner
ok "a full gate page owned by uid $NOBODY, not krexd's: refused" grep -q "^join 2 " "$EMB_DIR/owner.out"
: >"$R/gate"
KREX_GATE_LIB=$GATE "$KREX" run -- true >"$EMB_DIR/gaterun.out" 2>&1
ok "krex run -- true with the gate preloaded and a 0-byte page: exit 0, not SIGBUS ($?)" [ $? = 0 ]
mv -f "$R/gate.real" "$R/gate"

# 7. krex_leave() unmaps the gate page and frees its view.
"$JT" cycle 50 >"$EMB_DIR/cycle.out" 2>&1
# A view a preempted reader still holds stays mapped until the next leave (on
# a loaded machine, now and then): counted, not failed; none may stay for good.
ok "50 join/leave cycles with a thread in krex_gate_wait: all joined, nothing left mapped at the end ($(cat "$EMB_DIR/cycle.out"))" \
	grep -q "^cycles 50 joined 50 mapped_after_leave [0-9]* mapped_at_end 0$" "$EMB_DIR/cycle.out"
# A re-join after krexd restarted unmaps the old page once nobody reads it.
KREX_LOG=info "$JT" hold 4 >"$EMB_DIR/hold.out" 2>&1 &
HOLD=$!
wait_for 5 grep -q "^join 0 " "$EMB_DIR/hold.out"
kill -TERM "$(cat "$R/krexd.pid")" && wait_for 5 sh -c "! test -S '$R/krexd.sock'"
"$KREXD" -F -r "$R" -o freezer=signal -o gpus=g0 -o isolate=none -o "cgroup_subtree=$EMB_SUB/r" \
	2>>"$EMB_DIR/root-krexd.out" &
EMB_PIDS="$EMB_PIDS $!"
wait "$HOLD"
ok "the joined process re-joined the restarted krexd" grep -q "re-joined krexd" "$EMB_DIR/hold.out"
ok "and keeps one gate page mapped, not the old one too ($(grep mapped "$EMB_DIR/hold.out" | tr '\n' ' '))" \
	grep -q "^mapped 1$" "$EMB_DIR/hold.out"
ok "none after its leave" grep -q "^after_leave 0$" "$EMB_DIR/hold.out"
if command -v valgrind >/dev/null && [ -z "${ASAN_OPTIONS:-}" ]; then # valgrind cannot run an ASan build
	valgrind -q --fair-sched=yes --leak-check=full --errors-for-leak-kinds=definite,indirect --error-exitcode=3 \
		"$top_builddir/test/integration/.libs/krex-jointest" cycle 5 >"$EMB_DIR/vg.out" 2>&1
	ok "valgrind: join/leave leaks nothing (exit $?)" [ $? = 0 ]
else
	skip "valgrind: join/leave leaks nothing" "no valgrind, or an ASan build"
fi
done_testing
