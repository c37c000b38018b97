#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# The gate and libkrexregion load in container images older than the build
# host: they ask for no glibc symbol version newer than 2.17 (KREX's oldest
# supported glibc; common/glibc_compat.h, doc/containers.md "Older images"),
# and, where an older root file system is at hand (KREX_OLD_ROOTFS, e.g. a
# Debian 11 debootstrap: glibc 2.31), that glibc's own ld.so loads them.
. "$top_srcdir/test/lib.sh"

GATE=$top_builddir/gate/.libs/libkrexgate.so
REGION=$top_builddir/libregion/.libs/libkrexregion.so.1
MAX=2.17
: "${KREX_OLD_ROOTFS:=/var/cache/krex-test/rootfs-bullseye}"
[ -f "$GATE" ] && [ -f "$REGION" ] || skip_all "the gate or libkrexregion is not built"
command -v objdump >/dev/null || skip_all "objdump not installed (binutils)"
grep -q 'KREX_GLIBC_CFLAGS = -include' "$top_builddir/gate/Makefile" ||
	skip_all "configure did not pin glibc versions (not glibc on x86_64/aarch64, or --enable-sanitizers)"

# too_new LIB: print every GLIBC_x.y that LIB needs and that is newer than MAX.
too_new() {
	objdump -p "$1" | awk '/^Version References:/ { r = 1; next } r && NF == 0 { r = 0 } r' |
		grep -o 'GLIBC_[0-9][0-9.]*' | sort -u | while read -r v; do
		[ "$(printf '%s\n%s\n' "GLIBC_$MAX" "$v" | sort -V | tail -1)" = "GLIBC_$MAX" ] || echo "$v"
	done
}

# no_newer LIB: LIB needs nothing newer than MAX (the symbols that do are named).
no_newer() {
	local v
	v=$(too_new "$1")
	[ -z "$v" ] && return 0
	diag "$(basename "$1") needs $(echo $v): $(objdump -T "$1" | grep -E "$(echo $v | sed 's/ /|/g;s/\./\\./g')" |
		awk '{print $NF}' | tr '\n' ' ')"
	return 1
}

# The check catches what it is for: a library calling dlopen, linked here
# without the pins, needs GLIBC_2.34 where the host's glibc is 2.34 or newer.
check_catches() {
	local d rc=0
	d=$(mktemp -d)
	printf '#include <dlfcn.h>\nvoid *f(void) { return dlopen("x", RTLD_NOW); }\n' >"$d/p.c"
	${CC:-cc} -shared -fPIC -o "$d/p.so" "$d/p.c" -ldl || rc=1
	[ $rc = 0 ] && [ -n "$(too_new "$d/p.so")" ] || rc=1
	rm -rf "$d"
	return $rc
}

# needs LIB SONAME: LIB names SONAME (where glibc < 2.34 defines dlopen & co.)
needs() { objdump -p "$1" | grep -q "NEEDED *$2\$"; }

# Run a program of the old root file system under its own ld.so with the
# gate preloaded; its maps name the gate, libkrexregion and the old libc.
old_load() {
	local ld lib out
	ld=$(old_ld)
	lib=$(dirname "$ld")
	out=$(env -i "$ld" --library-path "$lib:$(dirname "$REGION")" --preload "$GATE" \
		"$KREX_OLD_ROOTFS/bin/cat" /proc/self/maps 2>&1) || { diag "$out"; return 1; }
	echo "$out" | grep -q "$GATE" && echo "$out" | grep -q "libkrexregion" &&
		echo "$out" | grep -q "$KREX_OLD_ROOTFS/.*/libc[-.]" || { diag "$out"; return 1; }
}

# The old root file system's ld.so and its glibc release ("" if none).
old_ld() {
	ls "$KREX_OLD_ROOTFS"/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2 \
		"$KREX_OLD_ROOTFS"/lib/aarch64-linux-gnu/ld-linux-aarch64.so.1 2>/dev/null | head -1
}
old_glibc() {
	local ld
	ld=$(old_ld)
	[ -n "$ld" ] && "$ld" --library-path "$(dirname "$ld")" "$(dirname "$ld")/libc.so.6" 2>/dev/null |
		sed -n 's/.*release version \([0-9.]*[0-9]\).*/\1/p' | head -1
}

plan 5
ok "the check finds a GLIBC version newer than $MAX (a library linked without the pins)" check_catches
ok "libkrexgate.so needs no glibc symbol version newer than $MAX" no_newer "$GATE"
ok "libkrexregion.so.1 needs no glibc symbol version newer than $MAX" no_newer "$REGION"
ok "both name libdl.so.2 and libpthread.so.0 (where glibc < 2.34 has dlopen, pthread_create)" \
	eval 'needs "$GATE" libdl.so.2 && needs "$GATE" libpthread.so.0 && needs "$REGION" libdl.so.2 && needs "$REGION" libpthread.so.0'
if [ -d "$KREX_OLD_ROOTFS/lib" ] && [ -n "$(old_glibc)" ]; then
	diag "older root file system: $KREX_OLD_ROOTFS, glibc $(old_glibc)"
	ok "glibc $(old_glibc)'s own ld.so preloads the gate and libkrexregion" old_load
else
	skip "an older glibc's ld.so preloads the gate" "no root file system at $KREX_OLD_ROOTFS (scripts/container-deps.sh images makes one)"
fi
done_testing
