#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# The signal freezer (embedded mode) harms no job control (issue 20, item
# 3): su, runuser and sudo stop themselves when their child stops, and an
# interactive bash marks a foreground job Stopped and takes the terminal
# back.  Siblings under runuser, su (to root, and to a test user inside the
# job), sudo (to root, and to the test user inside the job; when installed)
# and a foreground job of an interactive bash on a pty, then REGIONS (100,
# KREX_JOBCTL_REGIONS) regions: every one froze every sibling, and after
# each nothing is stopped; at the end every su/runuser/sudo still reaps its
# child, and bash still has its job in the foreground.
. "$top_srcdir/test/lib.sh"
. "$top_srcdir/test/integration/embedded-lib.sh"
need_root
emb_setup
command -v runuser >/dev/null && command -v su >/dev/null || skip_all "needs runuser and su"
command -v python3 >/dev/null || skip_all "needs python3 (the pty)"
REGIONS=${KREX_JOBCTL_REGIONS:-100}
# What is checked is the siblings' state, not how fast krexd freezes them: a
# freeze slowed by a loaded host must still end frozen, not degraded.
echo "freeze_timeout = 30s" >>"$EMB_DIR/krexd.conf"

# A test user for su inside a job, removed at the end.
TUSER=krexjc$$
useradd -M -N -s /bin/sh "$TUSER" 2>/dev/null || skip_all "cannot add a test user"
jc_cleanup() {
	local p
	for p in $(pgrep -u "$TUSER" 2>/dev/null); do kill -CONT "$p"; kill -KILL "$p"; done
	userdel "$TUSER" 2>/dev/null
	[ -n "$PTY_PID" ] && kill "$PTY_PID" 2>/dev/null
	emb_cleanup
}
trap jc_cleanup EXIT

# The sibling's command: a loop that ends when its stop file appears.
loop() { echo "while [ ! -e $EMB_DIR/stop ]; do sleep 0.05; done"; }
KR="$KREX run --no-gate --"
SIBS="runuser su inner-runuser inner-su"
runuser -u root -- $KR sh -c "$(loop)" >"$EMB_DIR/runuser.out" 2>&1 &
P_runuser=$!
su root -c "$KR sh -c '$(loop)'" >"$EMB_DIR/su.out" 2>&1 &
P_su=$!
$KR runuser -u root -- sh -c "$(loop)" >"$EMB_DIR/inner-runuser.out" 2>&1 &
P_inner_runuser=$!
$KR su "$TUSER" -c "$(loop)" >"$EMB_DIR/inner-su.out" 2>&1 &
P_inner_su=$!
if command -v sudo >/dev/null; then
	# sudo resets the environment: the private krexd's place passed again
	sudo -u root env KREX_KREXD="$KREX_KREXD" XDG_RUNTIME_DIR="$XDG_RUNTIME_DIR" \
		$KR sh -c "$(loop)" >"$EMB_DIR/sudo.out" 2>&1 &
	P_sudo=$!
	$KR sudo -u "$TUSER" sh -c "$(loop)" >"$EMB_DIR/inner-sudo.out" 2>&1 &
	P_inner_sudo=$!
	SIBS="$SIBS sudo inner-sudo"
fi
# the interactive bash: its job prints JOB-2RUNS once it is the foreground job
mkfifo "$EMB_DIR/pty.go"
python3 "$top_srcdir/test/integration/ptyjob.py" "$EMB_DIR" \
	$KR sh -c "'printf JOB-%sRUNS\\\\n 2; $(loop)'" >"$EMB_DIR/pty.err" 2>&1 &
PTY_PID=$!
NSIB=$(($(echo $SIBS | wc -w) + 1))

nparts() { "$KREX" status --json 2>/dev/null | grep -o '"pid":' | wc -l; }
registered() { [ "$(nparts)" -ge "$NSIB" ] && [ -s "$EMB_DIR/pty.pids" ]; }
plan 8
wait_for 30 registered
ok "$NSIB siblings registered ($SIBS, bash on a pty: $(nparts) participants)" registered
BASH_PID=$(cat "$EMB_DIR/pty.pids")

# How many processes of the siblings' trees (the pty's bash and below, each
# su/runuser/sudo and below) are stopped; their pid(comm) into stopped.list.
stopped() {
	ps -e -o pid=,ppid=,stat=,comm= | awk -v roots="$P_runuser $P_su $P_inner_runuser $P_inner_su ${P_sudo:-} ${P_inner_sudo:-} $BASH_PID" \
		-v list="$EMB_DIR/stopped.list" '
		{ pp[$1] = $2; st[$1] = $3; cm[$1] = $4 }
		END {
			split(roots, r, " ")
			for (i in r) top[r[i]] = 1
			n = 0
			for (p in pp)
				for (q = p; q > 1 && h < 64; q = pp[q])
					if (q in top) {
						if (st[p] ~ /^T/) { n++; print p "(" cm[p] ")" >>list }
						break
					}
			print n
		}'
}
: >"$EMB_DIR/stopped.list"
bad=0 notfrozen=0 maxstop=0
s0=$(date +%s.%N)
for i in $(seq "$REGIONS"); do
	c=$("$KREX" region --json -- true 2>&1 >/dev/null | grep '"outcome"')
	sib=$(echo "$c" | sed -n 's/.*"siblings":\([0-9]*\).*/\1/p')
	fr=$(echo "$c" | sed -n 's/.*"frozen":\([0-9]*\).*/\1/p')
	[ -n "$sib" ] && [ "$sib" -ge "$NSIB" ] && [ "$fr" = "$sib" ] || {
		notfrozen=$((notfrozen + 1))
		[ $notfrozen -le 3 ] && diag "region $i: $c"
	}
	n=$(stopped)
	[ "$n" -gt "$maxstop" ] && maxstop=$n
	[ "$n" -gt 0 ] && bad=$((bad + 1))
done
s1=$(date +%s.%N)
diag "$REGIONS regions in $(echo "$s1 - $s0" | bc) s"
ok "$REGIONS regions, each froze every sibling ($notfrozen did not)" [ "$notfrozen" = 0 ]
ok "after each region: no process of the siblings stopped ($bad regions left some, up to $maxstop: $(sort -u "$EMB_DIR/stopped.list" | head -5 | tr '\n' ' '))" [ "$bad" = 0 ]
ok "after them: none stopped ($(stopped) now)" [ "$(stopped)" = 0 ]

# The interactive bash: its job still the terminal's foreground; Ctrl-C ends
# it and `jobs` lists nothing.
echo go >"$EMB_DIR/pty.go"
wait "$PTY_PID"
PTY_PID=
ok "bash on the pty: the job is still the terminal's foreground process group" \
	grep -q '^tpgid_is_job 1' "$EMB_DIR/pty.out"
ok "bash on the pty: no job Stopped or sent to the background ($(sed -n 's/^jobs //p' "$EMB_DIR/pty.out"))" \
	grep -qx 'jobs ' "$EMB_DIR/pty.out"

# Every su/runuser/sudo still reaps its child and exits once the loops end
# (one left stopped cannot).
touch "$EMB_DIR/stop"
gone_all() {
	local p
	for p in $P_runuser $P_su $P_inner_runuser $P_inner_su ${P_sudo:-} ${P_inner_sudo:-}; do
		kill -0 "$p" 2>/dev/null && return 1
	done
	return 0
}
ok "every su, runuser (and sudo) sibling exits when its command ends" wait_for 30 gone_all
ok "the siblings' output has no error ($(cat "$EMB_DIR"/*.out 2>/dev/null | grep -v '^$' | head -3 | tr '\n' '|'))" \
	sh -c "! cat '$EMB_DIR'/*.out | grep -qi '^krex:\|error\|stopped'"
done_testing
