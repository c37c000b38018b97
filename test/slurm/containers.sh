#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# --krex-shared steps in pyxis + enroot containers (doc/containers.md) on a
# one-node cluster (proctrack/cgroup, cgroup v1 freezer): the enroot hook of
# contrib/enroot puts krexd's socket, the gate and libkrexregion, the CLI
# and the Python package into the container; a containerized mock-driver
# sibling is gated, drained and frozen by a containerized owner's region
# (CLI and Python), whose certificate is checked; a step in an older image
# (Debian 11, glibc 2.31) loads the gate and is frozen; scancel of an owner
# mid-region thaws; an image without glibc runs ungated and is told so, and
# an owner's certificate names it as a sibling that never joined the gate;
# nothing is left frozen.  enroot, pyxis and the images
# are built once into $KREX_CONTAINER_CACHE (scripts/container-deps.sh,
# containers-setup.sh).
. "$top_srcdir/test/lib.sh"
. "$top_srcdir/test/slurm/cluster.sh"
. "$top_srcdir/test/slurm/checks.sh"
. "$top_srcdir/test/slurm/containers-setup.sh"
cluster_check || skip_all "$CLUSTER_WHY"
why=$(regions_why)
[ -z "$why" ] || skip_all "$why"
[ -x "$top_builddir/test/workloads/krex-hog" ] || skip_all "test/workloads not built (make check builds it)"
containers_setup
WL=$top_builddir/test/workloads
MOCK=/krex-ct-$$
KC_CLEAN="$KC_CLEAN /dev/shm$MOCK"
cluster_start cgroup 1 || skip_all "$CLUSTER_WHY"
MOUNTS=$(ct_mounts)
# csrun ARGS...: a --krex-shared containerized step (1 shard, the image).
csrun() { krun srun --krex-shared --gres=shard:1 --container-image="${CIMG:-$IMG}" \
	--container-mounts="$MOUNTS" "$@"; }
# A background containerized step, its srun's pid in BG_PIDS.
BG_PIDS=""
cbg() {
	SLURM_CONF=$KC_DIR/slurm.conf setsid timeout 120 srun --krex-shared --gres=shard:1 \
		--container-image="${CIMG:-$IMG}" --container-mounts="$MOUNTS" "$@" \
		>>"$(W bg.log)" 2>&1 </dev/null &
	BG_PIDS="$BG_PIDS $!"
}
field() { sed -n "s/.*\"$1\": *\([0-9]*\).*/\1/p" "$2" | head -1; }

check_pyxis() { krun srun --help 2>&1 | grep -q -- '--container-image'; }

# The task in the container: in-container paths, the socket there, the gate mapped.
check_inside() {
	local f
	f=$(W inside)
	csrun sh -c "env > $f.env; grep krex /proc/self/maps > $f.maps; test -S \"\$KREX_SOCKET\" && echo socket=ok >> $f.env; /opt/krex/bin/krex --version >> $f.env" \
		>"$f.out" 2>&1 || { diag "srun: $(tr '\n' ' ' <"$f.out")"; return 1; }
	grep -q '^LD_PRELOAD=/opt/krex/lib/libkrexgate.so:/opt/krex/lib/libkrexregion.so.1' "$f.env" &&
		grep -q "^KREX_SOCKET=${KC_RUN}$KC_NODES/krexd.sock\$" "$f.env" && grep -q '^socket=ok$' "$f.env" &&
		grep -q '^krex [0-9]' "$f.env" && grep -q '/opt/krex/lib/libkrexgate.so' "$f.maps" ||
		{ diag "env: $(grep -E '^(KREX|LD_PRELOAD|socket|krex )' "$f.env" | tr '\n' ' ') maps: $(wc -l <"$f.maps")"; return 1; }
}

# A containerized step without --krex-shared: nothing of KREX inside.
check_plain() {
	local f
	f=$(W plain-c)
	krun srun --gres=shard:1 --container-image="$IMG" --container-mounts="$MOUNTS" \
		sh -c "env > $f.env; ls /opt/krex > $f.ls 2>&1; true" >"$f.out" 2>&1 ||
		{ diag "srun: $(cat "$f.out")"; return 1; }
	! grep -qE '^(KREX_SOCKET|KREX_GATE_PATH|LD_PRELOAD)=' "$f.env" && grep -q 'No such file' "$f.ls" ||
		{ diag "$(grep -E '^(KREX|LD_PRE)' "$f.env") $(cat "$f.ls")"; return 1; }
}

hog_moves() { counter_moves "$(W hog)"; }

# The mock-driver sibling in a container (KREX_MOCK_GPU: the mock device's
# shared memory, /dev/shm is the host's in enroot).
start_sibling() {
	cbg env LD_LIBRARY_PATH="$top_builddir/test/mock/.libs" KREX_MOCK_GPU=$MOCK \
		"$WL/krex-hog" 2000 --seconds 100 --counter "$(W hog)"
	wait_for 60 test -s "$(W hog)" && hog_moves
}

# A containerized owner's region through the CLI: the sibling is drained and
# frozen (its counter stands), the certificate says so, krex verify accepts it.
check_cli_owner() {
	local c=$(W cli.cert) o=$(W cli.out)
	csrun /opt/krex/bin/krex region --json --cert "$c" -- sh -c \
		"a=\$(cat $(W hog)); sleep 1; b=\$(cat $(W hog)); [ \"\$a\" = \"\$b\" ] && echo sibling=frozen || echo sibling=moved" \
		>"$o" 2>&1 || { diag "owner: $(tr '\n' ' ' <"$o")"; return 1; }
	diag "owner: $(grep sibling= "$o") cert: $(tr -d '\n' <"$c" | cut -c1-300)"
	grep -q sibling=frozen "$o" && [ "$(field drained "$c")" -ge 1 ] && [ "$(field frozen "$c")" -ge 1 ] ||
		return 1
	if grep -q "^#define HAVE_MUNGE 1" "$top_builddir/config.h"; then
		"$KREX_CLI" verify --socket "$KC_MUNGE_SOCK" "$c" >"$(W cverify.out)" 2>&1 ||
			{ diag "krex verify: $(tr '\n' ' ' <"$(W cverify.out)")"; return 1; }
	fi
	hog_moves
}

# The same through the Python package (the image has python3).
check_python_owner() {
	local o=$(W py.out)
	csrun python3 -c "
import krex, time
with krex.region() as cert:
    a = open('$(W hog)').read(); time.sleep(1); b = open('$(W hog)').read()
print('sibling=' + ('frozen' if a == b else 'moved'), 'drained=%s frozen=%s' % (cert['drained'], cert['frozen']))
" >"$o" 2>&1 || { diag "python owner: $(tr '\n' ' ' <"$o")"; return 1; }
	diag "python owner: $(tr '\n' ' ' <"$o")"
	grep -q 'sibling=frozen drained=[1-9][0-9]* frozen=[1-9]' "$o" && hog_moves
}

# A step in the older image (glibc 2.31): the gate loads there, and its
# counter is frozen by a region (no mock driver for that glibc: not drained).
check_old_image() {
	local f=$(W old)
	counter_body "$(W oldc)" >"$(W oldc.sh)"
	chmod 755 "$(W oldc.sh)"
	CIMG=$OLDIMG csrun sh -c "grep -c libkrexgate /proc/self/maps > $f.maps; ldd --version | head -1 > $f.glibc" \
		>"$f.out" 2>&1 || { diag "old image: $(tr '\n' ' ' <"$f.out")"; return 1; }
	diag "old image: $(cat "$f.glibc"), gate mapped: $(cat "$f.maps")"
	[ "$(cat "$f.maps")" -ge 1 ] || return 1
	CIMG=$OLDIMG cbg "$(W oldc.sh)"
	counter_moves "$(W oldc)" || { diag "old-image counter does not move: $(tail -3 "$(W bg.log)")"; return 1; }
	csrun /opt/krex/bin/krex region -- sh -c \
		"a=\$(cat $(W oldc)); sleep 1; b=\$(cat $(W oldc)); [ \"\$a\" = \"\$b\" ]" >"$f.region" 2>&1 ||
		{ diag "old-image sibling not frozen: $(cat "$f.region")"; return 1; }
	counter_moves "$(W oldc)"
}

# An image without glibc (a static busybox): the task runs, ungated (no
# preload: it would fail every program), and KREX_UNGATED says why.
check_no_glibc() {
	local f=$(W nolibc)
	CIMG=$CACHE/busybox.sqsh csrun sh -c "env > $f.env; grep -c libkrexgate /proc/self/maps > $f.maps; true" \
		>"$f.out" 2>&1 || { diag "busybox image: $(tr '\n' ' ' <"$f.out")"; return 1; }
	diag "busybox image: $(grep '^KREX_UNGATED=' "$f.env")"
	grep -q '^0$' "$f.maps" && ! grep -q '^LD_PRELOAD=.' "$f.env" &&
		grep -qx 'KREX_UNGATED=the image has no glibc (libc.so.6): the gate cannot load' "$f.env"
}

# A sibling in that image (a busybox counter, never gated) during a
# containerized owner's region: frozen, and the owner's certificate names it
# as a sibling that never joined the gate (its step's job), with its GPU work
# not on the GPU or unknown (no NVML here), not as a sibling that drained.
check_ungated_named() {
	local c=$(W ungated.cert) o=$(W ungated.out) j
	counter_body "$(W ngc)" >"$(W ngc.sh)"
	CIMG=$CACHE/busybox.sqsh cbg -J krexnogate sh "$(W ngc.sh)"
	counter_moves "$(W ngc)" || { diag "busybox counter does not move: $(tail -3 "$(W bg.log)")"; return 1; }
	j=$(krun squeue -h -n krexnogate -o %i)
	csrun /opt/krex/bin/krex region --json --cert "$c" -- sh -c \
		"a=\$(cat $(W ngc)); sleep 1; b=\$(cat $(W ngc)); [ \"\$a\" = \"\$b\" ] && echo sibling=frozen || echo sibling=moved" \
		>"$o" 2>&1 || { diag "owner: $(tr '\n' ' ' <"$o")"; return 1; }
	diag "ungated sibling (job $j): $(grep sibling= "$o"); cert: $(grep -o '"outcome":"[a-z]*"' "$c") $(grep -o '"siblings":[0-9]*,"drained":[0-9]*' "$c") $(grep -o '"ungated":.*' "$c" | cut -c1-200)"
	grep -q sibling=frozen "$o" && [ "$(field ungated "$c")" -ge 1 ] &&
		grep -Eq '"ungated_gpu":(null|0),' "$c" &&
		grep -Eq "\"ungated_who\":\"[^\"]*participant [0-9]+ \(pid [0-9]+, job $j\.[0-9]+\) (not on the GPU|GPU work unknown)" "$c" &&
		counter_moves "$(W ngc)"
}

# pyxis before KREX in plugstack.conf (read again by each srun and
# slurmstepd): the hook sees no KREX_SOCKET, the container gets nothing;
# spank_krex's task_init runs in the container already, finds no gate
# there and preloads none.
check_wrong_order() {
	local f=$(W order) good
	good=$(cat "$KC_DIR/plugstack.conf")
	{ echo "$KC_PLUGSTACK_AFTER"; grep -v pyxis "$KC_DIR/plugstack.conf"; } >"$KC_DIR/plugstack.new"
	mv "$KC_DIR/plugstack.new" "$KC_DIR/plugstack.conf"
	# the work directory only: the build tree holds the gate at its host path
	MOUNTS=$KC_DIR/work:$KC_DIR/work csrun sh -c \
		"env > $f.env; ls /opt/krex > $f.ls 2>&1; grep -c libkrexgate /proc/self/maps > $f.maps; true" \
		>"$f.out" 2>&1
	printf '%s\n' "$good" >"$KC_DIR/plugstack.conf"
	diag "pyxis first: $(grep -E '^(LD_PRELOAD|KREX_SOCKET)=' "$f.env" | tr '\n' ' ')maps: $(cat "$f.maps" 2>/dev/null)"
	grep -q '^KREX_SOCKET=' "$f.env" && ! grep -q '^LD_PRELOAD=.*krexgate' "$f.env" &&
		grep -q 'No such file' "$f.ls" && grep -q '^0$' "$f.maps"
}

# scancel of a containerized owner mid-region thaws the siblings.
check_scancel() {
	local j
	rm -f "$(W holding)"
	cbg -J krexhold /opt/krex/bin/krex region -- sh -c "touch $(W holding); sleep 100"
	wait_for 60 test -e "$(W holding)" || { diag "no region: $(tail -3 "$(W bg.log)")"; return 1; }
	counter_stands "$(W hog)" 0.5 || { diag "sibling not frozen"; return 1; }
	j=$(krun squeue -h -n krexhold -o %i)
	krun scancel "$j" && kwait 20 kjob_done "$j" && hog_moves
}

plan 12
ok "pyxis is loaded after KREX (srun --help lists --container-image)" check_pyxis
ok "a containerized --krex-shared task has the gate preloaded, krexd's socket and the CLI at /opt/krex" check_inside
ok "a containerized step without --krex-shared gets nothing of KREX" check_plain
ok "a containerized mock-driver sibling runs" start_sibling
ok "a containerized owner's region (CLI): the sibling drained and frozen, the certificate says so, krex verify accepts it" check_cli_owner
ok "a containerized owner's region (Python package): the same" check_python_owner
ok "an image with glibc 2.31 loads the gate; its sibling is frozen by a region" check_old_image
ok "an image without glibc: the task runs ungated and is told so" check_no_glibc
ok "an owner's certificate names the sibling in that image as never gated" check_ungated_named
ok "scancel of a containerized owner mid-region thaws the siblings" check_scancel
ok "pyxis before KREX in plugstack.conf: the container gets nothing, the task is ungated" check_wrong_order
for p in $BG_PIDS; do kill -TERM "$p" 2>/dev/null; done
krun scancel --user=root >/dev/null 2>&1
kwait 30 sh -c "[ -z \"\$(SLURM_CONF=$KC_DIR/slurm.conf squeue -h -o %i)\" ]"
ok "no process left frozen" check_none_frozen
done_testing
