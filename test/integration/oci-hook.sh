#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# The OCI hook (contrib/oci, doc/containers.md "OCI runtimes") under podman:
# inactive without KREX_SOCKET; with it the gate is preloaded through
# /etc/ld.so.preload and krexd's socket and the CLI are there; a mock-driver
# sibling in a container (--pid=host, registered by krex run) is drained and
# frozen by a region on the host.  Skips with the reason where podman cannot
# start a container (KREX_OCI_RUNTIME: the OCI runtime, runc by default:
# crun refuses a hybrid cgroup host).  The image: the Debian 12 root file
# system of scripts/container-deps.sh images, imported once.
. "$top_srcdir/test/lib.sh"
need_root
KREXD=$top_builddir/krexd/krexd
KREX=$top_builddir/krex/krex
[ -x "$KREXD" ] && [ -x "$KREX" ] || skip_all "krexd or the krex CLI not built"
[ -x "$top_builddir/test/workloads/krex-hog" ] || skip_all "test/workloads not built (make check builds it)"
# A sanitizer build's gate needs libasan inside the image, which has none
# (scripts/sanitize-check.sh); the normal build's make check runs this.
ldd "$top_builddir/gate/.libs/libkrexgate.so" 2>/dev/null | grep -Eq 'lib(a|t|ub)san' &&
	skip_all "a sanitizer build: its gate needs the sanitizer's runtime inside the image"
for c in podman nsenter python3 file; do
	command -v $c >/dev/null || skip_all "$c not installed (apt-get install podman)"
done
RT=${KREX_OCI_RUNTIME:-runc}
command -v "$RT" >/dev/null || skip_all "OCI runtime $RT not installed (apt-get install $RT)"
ROOTFS=${KREX_CONTAINER_CACHE:-/var/cache/krex-test}/rootfs-bookworm
IMG=localhost/krex-test/bookworm:1
if ! podman image exists "$IMG"; then
	[ -d "$ROOTFS/etc" ] || skip_all "no root file system at $ROOTFS (scripts/container-deps.sh images)"
	tar -C "$ROOTFS" -c . | podman import -q - "$IMG" >/dev/null || skip_all "podman import failed"
fi
T=$(mktemp -d /tmp/krex-oci.XXXXXX)
KD=""
NAMES=""
cleanup() {
	local n
	for n in $NAMES; do podman rm -f "$n" >/dev/null 2>&1; done
	[ -n "$KD" ] && kill "$KD" 2>/dev/null && wait "$KD" 2>/dev/null
	rm -rf "$T" "/dev/shm$KREX_MOCK_GPU"
}
trap cleanup EXIT

# The hook with the build's paths, and podman's hooks.d entry for it.
sed -e "s|@libdir@/libkrexgate.so|$top_builddir/gate/.libs/libkrexgate.so|" \
	-e "s|@libdir@|$top_builddir/libregion/.libs|" -e "s|@bindir@|$top_builddir/krex/.libs|" \
	-e "s|@pythondir@|$top_srcdir/python|" "$top_srcdir/contrib/oci/krex-oci-hook.in" >"$T/krex-oci-hook"
chmod 755 "$T/krex-oci-hook"
mkdir -p "$T/hooks.d" "$T/run"
# (as the Makefile writes contrib/oci/krex.json)
printf '{"version": "1.0.0", "hook": {"path": "%s"}, "when": {"always": true}, "stages": ["createRuntime"]}\n' \
	"$T/krex-oci-hook" >"$T/hooks.d/krex.json"
# Without CAP_SYS_RESOURCE (a CI container) podman's default rlimits fail.
LIM="--ulimit nofile=1024:1024 --ulimit nproc=4096:4096"
# prun NAME ARGS...: podman run with the hook, the build tree and $T mounted.
prun() {
	local n=krex-oci-$$-$1
	shift
	NAMES="$NAMES $n"
	timeout 120 podman --runtime "$RT" --hooks-dir "$T/hooks.d" run --rm --name "$n" $LIM \
		-v "$top_builddir:$top_builddir" -v "$T:$T" "$@"
}
why=$(prun probe "$IMG" true 2>&1) || skip_all "podman cannot start a container here: $(echo "$why" | tail -n 1)"

export KREX_SOCKET=$T/run/krexd.sock KREX_MOCK_GPU=/krex-oci-$$

check_inactive() {
	env -u KREX_SOCKET timeout 120 podman --runtime "$RT" --hooks-dir "$T/hooks.d" run --rm $LIM "$IMG" \
		sh -c 'ls /etc/ld.so.preload /opt/krex 2>&1; grep -c krexgate /proc/self/maps' >"$T/inactive" 2>&1
	grep -q '^0$' "$T/inactive" && [ "$(grep -c 'No such file' "$T/inactive")" = 2 ] ||
		{ diag "$(tr '\n' ' ' <"$T/inactive")"; return 1; }
}

start_krexd() {
	"$KREXD" -F -r "$T/run" -o gpus=mock0 -o drain_timeout=2s -o cgroup_subtree=krex-oci-$$ \
		2>"$T/krexd.log" &
	KD=$!
	wait_for 10 test -S "$KREX_SOCKET"
}

check_active() {
	prun active --env KREX_SOCKET "$IMG" sh -c 'grep -c krexgate /proc/self/maps; cat /etc/ld.so.preload;
		test -S "$KREX_SOCKET" && echo socket=ok; /opt/krex/bin/krex --version' >"$T/active" 2>&1
	[ "$(head -1 "$T/active")" -ge 1 ] && sed -n 2p "$T/active" | grep -qx /opt/krex/lib/libkrexgate.so &&
		grep -qx socket=ok "$T/active" && grep -q '^krex [0-9]' "$T/active" ||
		{ diag "$(tr '\n' ' ' <"$T/active")"; return 1; }
}

counter_ge() { [ -s "$1" ] && [ "$(cat "$1")" -ge "$2" ]; }
field() { sed -n "s/.*\"$1\": *\([0-9]*\).*/\1/p" "$2" | head -1; }

start_sibling() {
	prun sibling -d --pid=host --env KREX_SOCKET --env KREX_MOCK_GPU \
		--env KREX_GATE_LIB=/opt/krex/lib/libkrexgate.so "$IMG" \
		/opt/krex/bin/krex run --gpus mock0 -- env LD_LIBRARY_PATH="$top_builddir/test/mock/.libs" \
		"$top_builddir/test/workloads/krex-hog" 2000 --seconds 100 --counter "$T/hog" >/dev/null 2>"$T/sibling.err" ||
		{ diag "$(cat "$T/sibling.err")"; return 1; }
	wait_for 30 counter_ge "$T/hog" 1
}

check_region() {
	timeout -k 5 60 "$KREX" region --gpus mock0 --json --cert "$T/cert" -- sh -c \
		"a=\$(cat $T/hog); sleep 0.5; b=\$(cat $T/hog); [ \"\$a\" = \"\$b\" ]" >"$T/region" 2>&1 ||
		{ diag "sibling not frozen: $(cat "$T/region") $(tail -3 "$T/krexd.log")"; return 1; }
	diag "certificate: drained=$(field drained "$T/cert") frozen=$(field frozen "$T/cert")"
	[ "$(field drained "$T/cert")" -ge 1 ] && [ "$(field frozen "$T/cert")" -ge 1 ] || return 1
	local c
	c=$(cat "$T/hog")
	wait_for 10 counter_ge "$T/hog" $((c + 5))
}

# An image without glibc (Debian's static busybox): no preload (it would
# fail every program), the container runs.
check_no_glibc() {
	local bb=localhost/krex-test/busybox:1
	if ! podman image exists "$bb"; then
		[ -x /bin/busybox ] && file -L /bin/busybox | grep -q 'statically linked' ||
			{ diag "no static /bin/busybox (apt-get install busybox-static)"; return 1; }
		mkdir -p "$T/bb/bin"
		cp /bin/busybox "$T/bb/bin/"
		ln -s busybox "$T/bb/bin/sh"
		tar -C "$T/bb" -c . | podman import -q - "$bb" >/dev/null || return 1
	fi
	prun nolibc --env KREX_SOCKET "$bb" /bin/busybox sh -c \
		'/bin/busybox ls /etc/ld.so.preload 2>&1; /bin/busybox grep -c krexgate /proc/self/maps; true' \
		>"$T/nolibc" 2>&1
	grep -q '^0$' "$T/nolibc" && grep -q 'No such file' "$T/nolibc" || { diag "$(tr '\n' ' ' <"$T/nolibc")"; return 1; }
}

none_stopped() {
	local p
	for p in $(pgrep -f "$T/hog"); do grep -q '^State:.*T' "/proc/$p/status" && return 1; done
	return 0
}

plan 7
ok "without KREX_SOCKET the hook does nothing (no /etc/ld.so.preload, no /opt/krex)" check_inactive
ok "krexd starts" start_krexd
ok "with KREX_SOCKET: the gate preloaded through /etc/ld.so.preload, the socket and the CLI there" check_active
ok "a mock-driver sibling runs in a container under krex run" start_sibling
ok "a region on the host drains and freezes it; it runs again after" check_region
podman rm -f "krex-oci-$$-sibling" >/dev/null 2>&1
ok "an image without glibc gets no preload and runs" check_no_glibc
ok "nothing left stopped" none_stopped
done_testing
