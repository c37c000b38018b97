#!/bin/bash
# The Python binding (contrib/python/krex.py) against the built libkrexregion,
# without krexd: error paths, unprotected regions, the certificate layout.
# contrib/python/test_krex.py prints the TAP; this finds the library.
. "$top_srcdir/test/lib.sh"

command -v python3 >/dev/null || skip_all "python3 not found"
lib=
for f in "$top_builddir"/libregion/.libs/libkrexregion.so "$top_builddir"/libregion/libkrexregion.so; do
	[ -e "$f" ] && lib=$f && break
done
[ -n "$lib" ] || skip_all "libkrexregion not built yet"
export KREX_LIBREGION=$lib PYTHONDONTWRITEBYTECODE=1
exec timeout -k 5 120 python3 "$top_srcdir/contrib/python/test_krex.py"
