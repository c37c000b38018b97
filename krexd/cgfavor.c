/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cgfavor.c - the kernel's favordynmods on the cgroup hierarchy krexd moves
 * participants into (krexd.conf(5) favordynmods, doc/admin.md "Making
 * participants").
 *
 * Moving a process into a cgroup (a write to cgroup.procs, as krexd does for
 * every participant it makes) takes the kernel's cgroup_threadgroup_rwsem for
 * writing, which without favordynmods waits for an RCU grace period: 9 ms on
 * an idle 2-core machine here, 17-21 ms at p50 and up to 69 ms on the H200
 * machine with 16-32 sessions (doc/performance.md), each on krexd's loop.  With it (Linux 6.0+, a
 * mount option of the hierarchy, or the boot option cgroup_favordynmods=true)
 * the move takes tens of microseconds; forks and exits take a slightly
 * slower path.  krexd reports which it has at its start and, with
 * favordynmods = yes, turns it on for a cgroup2 hierarchy (a v1 hierarchy
 * refuses a change of its options on a remount).  The kernel keeps it on
 * once on (Linux 6.18 refuses to turn it off again), so krexd never undoes it.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#if defined(__has_include)
#if __has_include(<linux/mount.h>) /* Linux 5.2's fspick/fsconfig; older: not built */
#include <linux/mount.h>
#endif
#endif

#include "conf.h"
#include "defs.h"
#include "freezer.h"
#include "freezer_impl.h"
#include "log.h"

/* The super options of a cgroup2 mount that its reconfigure sets or clears
 * (a reconfigure clears every flag it is not given): passed back as they are. */
static const char *const v2_flags[] = {"nsdelegate",
                                       "favordynmods",
                                       "memory_localevents",
                                       "memory_recursiveprot",
                                       "memory_hugetlb_accounting",
                                       "pids_localevents",
                                       NULL};

int cgfavor_parse_line(const char *line, const char *point, char *opts, size_t len)
{
	char mnt[512], fstype[64], super[512];

	if (mountinfo_fields(line, mnt, fstype, super) < 0 || strcmp(mnt, point) ||
	    (strcmp(fstype, "cgroup2") && strcmp(fstype, "cgroup")))
		return 0;
	return xstrcpy(opts, len, super) < 0 ? 0 : 1;
}

int cgfavor_unknown(const char *opts, char *bad, size_t len)
{
	char copy[512], *o, *save = NULL;
	unsigned i;

	if (xstrcpy(copy, sizeof(copy), opts) < 0) {
		snprintf(bad, len, "(a list too long to read)");
		return 1;
	}
	for (o = strtok_r(copy, ",", &save); o; o = strtok_r(NULL, ",", &save)) {
		/* rw/ro: the superblock's, kept by a reconfigure; seclabel: the LSM's */
		if (!strcmp(o, "rw") || !strcmp(o, "ro") || !strcmp(o, "seclabel"))
			continue;
		for (i = 0; v2_flags[i] && strcmp(o, v2_flags[i]); i++)
			;
		if (!v2_flags[i]) {
			snprintf(bad, len, "%s", o);
			return 1;
		}
	}
	return 0;
}

/* The super options of the cgroup mount at point: 0, or -1. */
static int super_opts(const char *point, char *opts, size_t len)
{
	return mountinfo_find(cgfavor_parse_line, point, opts, len);
}

/* Reconfigure the cgroup2 superblock at point with its flags and
 * favordynmods (the mount's own flags, nosuid and the like, untouched). */
static int v2_turn_on(const char *point, const char *opts)
{
#if defined(SYS_fspick) && defined(SYS_fsconfig) && defined(FSPICK_CLOEXEC)
	unsigned i;
	int fd, err;

	fd = (int)syscall(SYS_fspick, AT_FDCWD, point, FSPICK_CLOEXEC);
	if (fd < 0)
		return -1;
	for (i = 0; v2_flags[i]; i++) {
		if (strcmp(v2_flags[i], "favordynmods") && !mount_opt_has(opts, v2_flags[i]))
			continue;
		if (syscall(SYS_fsconfig, fd, FSCONFIG_SET_FLAG, v2_flags[i], NULL, 0) < 0)
			goto fail;
	}
	if (syscall(SYS_fsconfig, fd, FSCONFIG_CMD_RECONFIGURE, NULL, NULL, 0) < 0)
		goto fail;
	close(fd);
	return 0;
fail:
	err = errno;
	close(fd);
	errno = err;
	return -1;
#else
	(void)point;
	(void)opts;
	errno = ENOSYS;
	return -1;
#endif
}

int freezer_favordynmods(const struct freezer *f, int want)
{
	char opts[512], bad[64];

	if (f->kind == FREEZER_SIGNAL)
		return -1;
	if (super_opts(f->root, opts, sizeof(opts)) < 0) {
		log_warn(
		        "cgroup %s: not in /proc/self/mountinfo: cannot tell whether it has favordynmods",
		        f->root);
		return -1;
	}
	if (mount_opt_has(opts, "favordynmods")) {
		log_info(
		        "cgroup %s: favordynmods on: a participant moves into its cgroup without waiting for an RCU grace period",
		        f->root);
		return 1;
	}
	if (!want) {
		log_info(
		        "cgroup %s: favordynmods off: moving each participant into its cgroup may wait for an RCU grace period (tens of ms on a loaded node, on krexd's mover thread, or its loop with KREXD_MOVE_INLINE=1); favordynmods = yes (krexd.conf(5)) or the kernel's cgroup_favordynmods=true turns it on",
		        f->root);
		return 0;
	}
	if (f->kind == FREEZER_CGROUP1) {
		log_warn(
		        "favordynmods = yes: cgroup %s is a v1 hierarchy, whose options a remount cannot change; boot with cgroup_favordynmods=true instead",
		        f->root);
		return 0;
	}
	if (cgfavor_unknown(opts, bad, sizeof(bad))) {
		log_warn(
		        "favordynmods = yes: cgroup %s has the option '%s', unknown to krexd, which a reconfigure would clear: left as it is",
		        f->root, bad);
		return 0;
	}
	if (v2_turn_on(f->root, opts) < 0) {
		log_warn("favordynmods = yes: cgroup %s: reconfigure: %s: left as it is", f->root,
		         strerror(errno));
		return 0;
	}
	if (super_opts(f->root, opts, sizeof(opts)) < 0)
		snprintf(opts, sizeof(opts), "not found");
	if (!mount_opt_has(opts, "favordynmods")) {
		log_warn(
		        "favordynmods = yes: cgroup %s: reconfigured, but its options do not show it (%s)",
		        f->root, opts);
		return 0;
	}
	log_info(
	        "cgroup %s: favordynmods turned on (favordynmods = yes; the kernel keeps it on until reboot): options now %s",
	        f->root, opts);
	return 1;
}
