#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# How `import krex` finds libkrexregion (test_loader.py prints the TAP): the
# order $KREX_LIBRARY, SONAME, configured libdir, $KREX_BUILDDIR, and the
# ImportError text; and that the generated krex/_config.py holds the
# configured libdir and the library's real SONAME.
. "$top_srcdir/test/lib.sh"

command -v python3 >/dev/null || skip_all "python3 not found"
b=$top_builddir
lib=$b/libregion/.libs/libkrexregion.so
[ -e "$lib" ] || skip_all "libkrexregion not built yet"
[ -e "$b/python/krex/_config.py" ] || skip_all "python/krex/_config.py not made (configured --without-python?)"
soname=$(readelf -d "$lib" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
libdir=$(printf 'print-libdir:\n\t@echo $(libdir)\n' | make -s --no-print-directory -C "$b/python" -f Makefile -f - print-libdir)
export KREX_TEST_SRC=$top_srcdir/python/krex KREX_TEST_LIB=$lib KREX_TEST_SONAME=$soname \
	KREX_TEST_CONFIG=$b/python/krex/_config.py KREX_TEST_LIBDIR=$libdir PYTHONDONTWRITEBYTECODE=1
timeout -k 5 120 python3 "$top_srcdir/test/python/test_loader.py"
