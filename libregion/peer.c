/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * peer.c - which krexd a client trusts (doc/security.md "What a client
 * trusts").
 *
 * Root's krexd, or one of this user's own (a private krexd): a socket served
 * by another user (a squatted run directory) could close our gates forever.
 *
 * In a user namespace that does not map root (an unprivileged user's enroot
 * container, `unshare --user`), root's krexd shows through SO_PEERCRED as
 * the overflow uid, as does every other unmapped uid: any other user's socket
 * would too.  Such a peer is trusted only at the system krexd's socket, a
 * path whose every directory only its owner can write, from / down: a path
 * the other users cannot have made, so the peer there is root's krexd.
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "client.h"
#include "conf.h"
#include "defs.h"
#include "fdio.h"

/* The system krexd's socket: KREX_DEFAULT_RUNDIR/krexd.sock (krexd's own
 * default) or KREX_DEFAULT_RUNDIR/NAME/krexd.sock (spank_krex's default
 * run_dir, KREX_RUNDIR/%n), NAME one component other than "." and "..". */
static int system_socket_path(const char *path)
{
	static const char dir[] = KREX_DEFAULT_RUNDIR "/", sock[] = "/" KREX_SOCKET_NAME;
	const char *name = path + sizeof(dir) - 1, *slash;

	if (strncmp(path, dir, sizeof(dir) - 1) != 0)
		return 0;
	if (!strcmp(name, KREX_SOCKET_NAME))
		return 1;
	slash = strchr(name, '/');
	if (!slash || slash == name || strcmp(slash, sock) != 0)
		return 0;
	return strncmp(name, "./", 2) != 0 && strncmp(name, "../", 3) != 0;
}

/* How this user namespace maps uids (/proc/self/uid_map): USERNS_ROOT when
 * a line's outside range holds uid 0 of the parent, USERNS_ALL when a line
 * maps every uid to itself (the initial namespace); -1 when unreadable. */
enum { USERNS_ROOT = 1, USERNS_ALL = 2 };

static int userns_map(void)
{
	unsigned long in, out, count;
	int m = 0;
	FILE *f = fopen("/proc/self/uid_map", "re");

	if (!f)
		return -1;
	while (fscanf(f, "%lu %lu %lu", &in, &out, &count) == 3) {
		if (out == 0 && count > 0)
			m |= USERNS_ROOT;
		if (in == 0 && out == 0 && count == 4294967295UL)
			m |= USERNS_ALL;
	}
	fclose(f);
	return m;
}

/* Is the directory dir[0..n) (n 0: "/") a real directory, not a symbolic
 * link, that only its owner can write?  1, or 0 with why. */
static int dir_owner_only(char *dir, size_t n, char *why, size_t len)
{
	char c = dir[n ? n : 1];
	struct stat st;
	int ok = 0;

	dir[n ? n : 1] = '\0';
	if (lstat(dir, &st) < 0)
		snprintf(why, len, "but %s cannot be checked", dir);
	else if (!S_ISDIR(st.st_mode))
		snprintf(why, len, "but %s is %s", dir,
		         S_ISLNK(st.st_mode) ? "a symbolic link" : "not a directory");
	else if (st.st_mode & (S_IWGRP | S_IWOTH))
		snprintf(why, len, "but %s is writable by %s (mode %04o)", dir,
		         st.st_mode & S_IWOTH ? "others" : "its group",
		         (unsigned)(st.st_mode & 07777));
	else
		ok = 1;
	dir[n ? n : 1] = c;
	return ok;
}

/* Is every directory of path's, from / to the socket's, one that only its
 * owner can write (and no symbolic link)?  1, or 0 with why. */
static int path_owner_only(const char *path, char *why, size_t len)
{
	char dir[PATH_MAX];
	char *slash;
	size_t i, n;

	if (path[0] != '/' || xstrcpy(dir, sizeof(dir), path) < 0 || !(slash = strrchr(dir, '/'))) {
		snprintf(why, len, "but %s is no absolute path", path);
		return 0;
	}
	n = (size_t)(slash - dir); /* the socket's directory: dir[0..n) */
	if (!dir_owner_only(dir, 0, why, len))
		return 0;
	for (i = 1; i <= n; i++)
		if ((i == n || dir[i] == '/') && !dir_owner_only(dir, i, why, len))
			return 0;
	return 1;
}

/* May a peer that shows as the overflow uid, at path, be root's krexd?
 * 1, or 0 with why. */
static int overflow_root(const char *path, char *why, size_t len)
{
	int m = userns_map();

	if (m < 0) {
		snprintf(why, len, "but /proc/self/uid_map cannot be read");
		return 0;
	}
	if (m & USERNS_ROOT) {
		snprintf(why, len,
		         "but this user namespace maps uid 0, where root's krexd shows as uid 0");
		return 0;
	}
	if (!system_socket_path(path)) {
		snprintf(why, len, "but that is not the system krexd's socket, %s/%s or %s/NAME/%s",
		         KREX_DEFAULT_RUNDIR, KREX_SOCKET_NAME, KREX_DEFAULT_RUNDIR,
		         KREX_SOCKET_NAME);
		return 0;
	}
	return path_owner_only(path, why, len);
}

int client_peer_check(int fd, const char *path, uid_t *uid, char *err, size_t errlen)
{
	char line[32], why[400] = "";
	uid_t u, me = getuid();
	long ovf = 65534; /* the kernel's default, where /proc/sys cannot be read */

	if (uid)
		*uid = (uid_t)-1;
	if (unix_peer_cred(fd, NULL, &u, NULL) < 0) {
		snprintf(err, errlen, "krexd at %s: SO_PEERCRED: %s: not trusting it", path,
		         strerror(errno));
		return 0;
	}
	if (uid)
		*uid = u;
	if (file_read_line("/proc/sys/kernel/overflowuid", line, sizeof(line)) == 0)
		ovf = strtol(line, NULL, 10);
	if (u == 0)
		return 1;
	if ((long)u != ovf) {
		if (u == me)
			return 1;
	} else if ((long)me == ovf) {
		/* our own uid shows as the overflow uid: so does every unmapped
		 * peer, except in the initial namespace, which maps every uid */
		if (userns_map() == (USERNS_ROOT | USERNS_ALL))
			return 1;
		snprintf(
		        why, sizeof(why),
		        "but you show as the overflow uid too: this user namespace maps neither of you");
	} else if (overflow_root(path, why, sizeof(why))) {
		return 1;
	}
	snprintf(
	        err, errlen,
	        "krexd at %s runs as uid %d, neither root nor you (uid %u): not trusting it%s%s%s",
	        path, (int)u, (unsigned)me,
	        *why ? " (the overflow uid, as root's krexd shows in a user namespace that does not map root, "
	             : "",
	        why, *why ? ")" : "");
	return 0;
}
