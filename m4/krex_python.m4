dnl SPDX-License-Identifier: BSD-3-Clause
dnl The Python binding (python/krex, doc/python.md): installed under pythondir
dnl when a python3 >= 3.7 is found.  Sets krex_have_python=yes|no and the
dnl AM_CONDITIONAL HAVE_PYTHON; --with-pythondir=DIR replaces AM_PATH_PYTHON's
dnl pythondir (a distribution's: Debian /usr/lib/python3/dist-packages).
dnl `make install pythondir=DIR` overrides it at install time as well.
dnl Without --with-pythondir, a pythondir that python3 does not search (Debian's
dnl python3 searches PREFIX/lib/python3.X/dist-packages, AM_PATH_PYTHON picks
dnl site-packages) is replaced by the entry of python3's sys.path under PREFIX,
dnl if there is one; else configure warns.

AC_DEFUN([KREX_WITH_PYTHON], [
  AC_ARG_WITH([python],
    [AS_HELP_STRING([--without-python], [do not install the Python binding (default: if python3 is found)])],
    [], [with_python=check])
  AC_ARG_WITH([pythondir],
    [AS_HELP_STRING([--with-pythondir=DIR], [where the Python package krex/ goes @<:@python3's site dir under PREFIX@:>@])],
    [], [with_pythondir=])
  krex_have_python=no
  AS_IF([test "x$with_python" != xno], [
    AM_PATH_PYTHON([3.7], [krex_have_python=yes], [:])
    AS_IF([test "x$with_python" = xyes && test $krex_have_python = no],
      [AC_MSG_ERROR([--with-python given but no python3 >= 3.7 found (Debian: apt-get install python3)])])
  ])
  AS_IF([test $krex_have_python = yes], [
    AS_CASE([$with_pythondir],
      [""|yes], [KREX_PYTHONDIR_ON_PATH],
      [no], [AC_MSG_ERROR([--without-pythondir: use --without-python to leave the binding out])],
      [pythondir=$with_pythondir])
  ], [
    dnl Without python3 the binding is not installed; keep the variables defined.
    AC_SUBST([pythondir], ['${prefix}/lib/python3/site-packages'])
    AC_SUBST([pkgpythondir], ['${pythondir}/krex'])
  ])
  AM_CONDITIONAL([HAVE_PYTHON], [test $krex_have_python = yes])
])

dnl pythondir expanded with PREFIX; if python3's sys.path lacks it, the sys.path
dnl entry under PREFIX ending in -packages, kept relative to ${prefix}.
AC_DEFUN([KREX_PYTHONDIR_ON_PATH], [
  krex_prefix=$prefix
  test "x$krex_prefix" = xNONE && krex_prefix=$ac_default_prefix
  krex_pydir=`PYTHON_PREFIX=$krex_prefix prefix=$krex_prefix; eval echo "$pythondir"`
  krex_pypath=`$PYTHON -c 'import sys; print("\n".join(p for p in sys.path if p))'`
  AC_MSG_CHECKING([whether $PYTHON searches $krex_pydir])
  AS_IF([echo "$krex_pypath" | grep -qx "$krex_pydir"], [AC_MSG_RESULT([yes])], [
    krex_pyalt=`echo "$krex_pypath" | grep "^$krex_prefix/lib/.*-packages\$" | head -n 1`
    AS_IF([test -n "$krex_pyalt"], [
      pythondir="\${prefix}${krex_pyalt#$krex_prefix}"
      AC_MSG_RESULT([no, using $krex_pyalt])
    ], [
      AC_MSG_RESULT([no])
      AC_MSG_WARN([$PYTHON does not search $krex_pydir: import krex needs PYTHONPATH (or --with-pythondir=DIR)])
    ])
  ])
])
