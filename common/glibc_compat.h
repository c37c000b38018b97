/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * glibc_compat.h - force-included (-include) into the gate, libkrexregion
 * and the code they link, so that they load in a container image whose
 * glibc is older than the build host's: doc/containers.md "Older images".
 *
 * The oldest glibc supported is 2.17 (RHEL/CentOS 7; aarch64's first).
 * Newer glibc (2.32 to 2.34) moved dlopen & co. and pthread_create & co.
 * into libc under new symbol versions and made fstat a real function
 * (GLIBC_2.33); a library linked on such a host asks for those versions and
 * an older ld.so refuses to start the program at all (a preload's version
 * error is fatal, not ignored).  Here every such reference is bound to the
 * old version, which newer glibc still defines (as a compat symbol); the
 * gate and libkrexregion also name libdl.so.2 and libpthread.so.0
 * (configure's KREX_GLIBC_LIBS), where old glibc defines them.
 * test/gate/glibc-versions.sh fails when a newer version appears.
 *
 * KREX_DEFINES_DLSYM: the unit defines dlsym/dlvsym itself (the gate),
 * which a .symver here would turn into a versioned definition.
 */
#ifndef KREX_GLIBC_COMPAT_H
#define KREX_GLIBC_COMPAT_H

#if defined(__x86_64__)
#define KREX_GLIBC_BASE "GLIBC_2.2.5"
#define KREX_STAT_VER 1
#elif defined(__aarch64__)
#define KREX_GLIBC_BASE "GLIBC_2.17"
#define KREX_STAT_VER 0
#endif

#ifdef KREX_GLIBC_BASE
#define KREX_PIN(sym) __asm__(".symver " #sym "," #sym "@" KREX_GLIBC_BASE)
KREX_PIN(dlopen);
KREX_PIN(dlclose);
KREX_PIN(dlerror);
#ifndef KREX_DEFINES_DLSYM
KREX_PIN(dlsym);
KREX_PIN(dlvsym);
#endif
KREX_PIN(pthread_create);
KREX_PIN(pthread_join);
KREX_PIN(pthread_once);
KREX_PIN(pthread_sigmask);
KREX_PIN(pthread_kill);
KREX_PIN(pthread_detach);
KREX_PIN(pthread_key_create);
KREX_PIN(pthread_setspecific);
KREX_PIN(pthread_getspecific);
KREX_PIN(pthread_mutex_trylock);
KREX_PIN(pthread_attr_setstacksize);
#undef KREX_PIN

/* fstat is a GLIBC_2.33 function; before, <sys/stat.h> made it a call of
 * __fxstat, which glibc still exports.  The macro also renames the
 * declaration in <sys/stat.h>, which then takes this internal linkage. */
struct stat;
extern int __fxstat(int ver, int fd, struct stat *buf);
static inline int krex_compat_fstat(int fd, struct stat *buf)
{
	return __fxstat(KREX_STAT_VER, fd, buf);
}
#define fstat krex_compat_fstat
/* lstat likewise (GLIBC_2.33): __lxstat. */
extern int __lxstat(int ver, const char *path, struct stat *buf);
static inline int krex_compat_lstat(const char *path, struct stat *buf)
{
	return __lxstat(KREX_STAT_VER, path, buf);
}
#define lstat krex_compat_lstat
#endif /* KREX_GLIBC_BASE */

#endif /* KREX_GLIBC_COMPAT_H */
