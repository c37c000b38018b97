dnl SPDX-License-Identifier: BSD-3-Clause
dnl Optional dependencies, one macro each (munge's configure.ac habit).
dnl Each sets krex_have_X=yes|no, an AM_CONDITIONAL HAVE_X and, where found,
dnl X_CPPFLAGS / X_LIBS.

AC_DEFUN([KREX_WITH_SLURM], [
  AC_ARG_WITH([slurm],
    [AS_HELP_STRING([--with-slurm@<:@=PREFIX@:>@], [build the SPANK plugin (default: if found)])],
    [], [with_slurm=check])
  krex_have_slurm=no
  SLURM_CPPFLAGS=
  SLURM_VERSION=
  AS_IF([test "x$with_slurm" != xno], [
    AS_IF([test "x$with_slurm" != xyes && test "x$with_slurm" != xcheck],
      [SLURM_CPPFLAGS="-I$with_slurm/include"])
    krex_save_CPPFLAGS=$CPPFLAGS
    CPPFLAGS="$CPPFLAGS $SLURM_CPPFLAGS"
    AC_CHECK_HEADER([slurm/spank.h], [krex_have_slurm=yes])
    dnl The release the plugin is built for (SPANK_PLUGIN() stamps it: Slurm
    dnl loads the plugin only into the same MAJOR.MINOR); the Slurm tier checks it.
    AS_IF([test $krex_have_slurm = yes], [
      AC_MSG_CHECKING([the Slurm release of slurm/spank.h])
      AC_COMPUTE_INT([krex_slurm_vn], [SLURM_VERSION_NUMBER], [[#include <slurm/slurm_version.h>]],
        [krex_slurm_vn=0])
      SLURM_VERSION=$((krex_slurm_vn >> 16)).`printf %02d $(((krex_slurm_vn >> 8) & 255))`.$((krex_slurm_vn & 255))
      AC_MSG_RESULT([$SLURM_VERSION])
    ])
    CPPFLAGS=$krex_save_CPPFLAGS
    AS_IF([test "x$with_slurm" != xcheck && test $krex_have_slurm = no],
      [AC_MSG_ERROR([--with-slurm given but slurm/spank.h not found (Debian: libslurm-dev)])])
  ])
  dnl Where spank_krex.so goes.  plugstack.conf names it by full path, so any
  dnl directory works; the default is Slurm's own plugin dir where configure
  dnl can tell it (slurm.pc's libdir, or the --with-slurm=PREFIX given), else
  dnl LIBDIR/slurm.  --with-spank-plugindir is the older name of the option.
  AC_ARG_WITH([slurm-plugindir],
    [AS_HELP_STRING([--with-slurm-plugindir=DIR], [where spank_krex.so goes @<:@slurm.pc libdir/slurm, else PREFIX/lib/slurm of --with-slurm=PREFIX, else LIBDIR/slurm@:>@])],
    [spank_plugindir="$withval"], [spank_plugindir=])
  AC_ARG_WITH([spank-plugindir],
    [AS_HELP_STRING([--with-spank-plugindir=DIR], [the same as --with-slurm-plugindir])],
    [spank_plugindir="$withval"])
  AS_IF([test "x$spank_plugindir" = xyes || test "x$spank_plugindir" = xno],
    [AC_MSG_ERROR([--with-slurm-plugindir needs a directory, not $spank_plugindir])])
  AS_IF([test -z "$spank_plugindir" && test -n "$PKG_CONFIG" && $PKG_CONFIG --exists slurm 2>/dev/null],
    [spank_plugindir="`$PKG_CONFIG --variable=libdir slurm`/slurm"])
  AS_IF([test -z "$spank_plugindir" && test "x$with_slurm" != xyes && test "x$with_slurm" != xcheck &&
         test "x$with_slurm" != xno],
    [AS_IF([test -d "$with_slurm/lib64/slurm"], [spank_plugindir="$with_slurm/lib64/slurm"],
      [spank_plugindir="$with_slurm/lib/slurm"])])
  AS_IF([test -z "$spank_plugindir"], [spank_plugindir='${libdir}/slurm'])
  AC_SUBST([spank_plugindir])
  dnl The plugstack.conf.d snippet; Debian's plugstack.conf includes
  dnl /etc/slurm/plugstack.conf.d/*.conf.
  AC_ARG_WITH([plugstackdir],
    [AS_HELP_STRING([--with-plugstackdir=DIR], [where plugstack.conf.d/krex.conf goes, no: none @<:@SYSCONFDIR/slurm/plugstack.conf.d@:>@])],
    [], [with_plugstackdir='${sysconfdir}/slurm/plugstack.conf.d'])
  AS_IF([test "x$with_plugstackdir" = xyes], [with_plugstackdir='${sysconfdir}/slurm/plugstack.conf.d'])
  plugstackdir=
  AS_IF([test "x$with_plugstackdir" != xno], [plugstackdir=$with_plugstackdir])
  AC_SUBST([plugstackdir])
  AM_CONDITIONAL([HAVE_PLUGSTACKDIR], [test "x$with_plugstackdir" != xno && test $krex_have_slurm = yes])
  AC_SUBST([SLURM_CPPFLAGS])
  AC_SUBST([SLURM_VERSION])
  AM_CONDITIONAL([HAVE_SLURM], [test $krex_have_slurm = yes])
])

AC_DEFUN([KREX_WITH_MUNGE], [
  AC_ARG_WITH([munge],
    [AS_HELP_STRING([--with-munge], [munge credentials for cross-node status (default: if found)])],
    [], [with_munge=check])
  krex_have_munge=no
  MUNGE_LIBS=
  AS_IF([test "x$with_munge" != xno], [
    AC_CHECK_HEADER([munge.h],
      [AC_CHECK_LIB([munge], [munge_encode], [krex_have_munge=yes; MUNGE_LIBS=-lmunge])])
    AS_IF([test "x$with_munge" = xyes && test $krex_have_munge = no],
      [AC_MSG_ERROR([--with-munge given but libmunge not found (Debian: libmunge-dev)])])
  ])
  AS_IF([test $krex_have_munge = yes], [AC_DEFINE([HAVE_MUNGE], [1], [munge available])])
  AC_SUBST([MUNGE_LIBS])
  AM_CONDITIONAL([HAVE_MUNGE], [test $krex_have_munge = yes])
])

dnl cuda.h is used only by a test that checks the gate's prototypes against
dnl the real ones; the gate itself never needs it.
AC_DEFUN([KREX_WITH_CUDA], [
  AC_ARG_WITH([cuda],
    [AS_HELP_STRING([--with-cuda@<:@=PREFIX@:>@], [CUDA toolkit for prototype checks @<:@/usr/local/cuda if there@:>@])],
    [], [with_cuda=check])
  krex_have_cuda=no
  CUDA_CPPFLAGS=
  AS_IF([test "x$with_cuda" != xno], [
    AS_CASE([$with_cuda], [yes|check], [krex_cuda_prefix=/usr/local/cuda], [krex_cuda_prefix=$with_cuda])
    AS_IF([test -r "$krex_cuda_prefix/include/cuda.h"],
      [krex_have_cuda=yes; CUDA_CPPFLAGS="-I$krex_cuda_prefix/include"])
    AS_IF([test "x$with_cuda" != xcheck && test $krex_have_cuda = no],
      [AC_MSG_ERROR([--with-cuda given but $krex_cuda_prefix/include/cuda.h not found])])
  ])
  AC_SUBST([CUDA_CPPFLAGS])
  AM_CONDITIONAL([HAVE_CUDA_H], [test $krex_have_cuda = yes])
])

AC_DEFUN([KREX_WITH_ROCM], [
  AC_ARG_WITH([rocm],
    [AS_HELP_STRING([--with-rocm@<:@=PREFIX@:>@], [HIP headers for prototype checks (default: if found)])],
    [], [with_rocm=check])
  krex_have_rocm=no
  ROCM_CPPFLAGS=
  AS_IF([test "x$with_rocm" != xno], [
    AS_CASE([$with_rocm], [yes|check], [krex_rocm_inc=/usr/include], [krex_rocm_inc=$with_rocm/include])
    AS_IF([test -r "$krex_rocm_inc/hip/hip_runtime_api.h"],
      [krex_have_rocm=yes; ROCM_CPPFLAGS="-I$krex_rocm_inc -D__HIP_PLATFORM_AMD__"])
    AS_IF([test "x$with_rocm" != xcheck && test $krex_have_rocm = no],
      [AC_MSG_ERROR([--with-rocm given but hip/hip_runtime_api.h not found (Debian: libamdhip64-dev)])])
  ])
  AC_SUBST([ROCM_CPPFLAGS])
  AM_CONDITIONAL([HAVE_ROCM_H], [test $krex_have_rocm = yes])
])

dnl The systemd unit: --with-systemdunitdir=DIR, "no" for none.  The
dnl default, PREFIX/lib/systemd/system, is on systemd's unit path both for
dnl /usr/local and for /usr; "yes" asks systemd.pc (systemdsystemunitdir).
AC_DEFUN([KREX_WITH_SYSTEMD], [
  AC_ARG_WITH([systemdunitdir],
    [AS_HELP_STRING([--with-systemdunitdir=DIR], [where krexd.service goes, no: none, yes: systemd.pc's @<:@PREFIX/lib/systemd/system@:>@])],
    [], [with_systemdunitdir='${prefix}/lib/systemd/system'])
  AS_IF([test "x$with_systemdunitdir" = xyes], [
    with_systemdunitdir=
    AS_IF([test -n "$PKG_CONFIG"],
      [with_systemdunitdir=`$PKG_CONFIG --variable=systemdsystemunitdir systemd 2>/dev/null`])
    AS_IF([test -z "$with_systemdunitdir"],
      [AC_MSG_ERROR([--with-systemdunitdir=yes: pkg-config does not know systemd's unit dir (give the directory)])])
  ])
  systemdunitdir=
  AS_IF([test "x$with_systemdunitdir" != xno], [systemdunitdir=$with_systemdunitdir])
  AC_SUBST([systemdunitdir])
  AM_CONDITIONAL([HAVE_SYSTEMDUNITDIR], [test "x$with_systemdunitdir" != xno])
])
