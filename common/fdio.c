/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fdio.c - whole reads and writes with deadlines, unix socket helpers.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "fdio.h"
#include "timeutil.h"

/* Wait until fd is ready for events or the deadline passes. */
static int fd_wait(int fd, short events, uint64_t deadline_ns)
{
	struct pollfd p = {.fd = fd, .events = events};
	int rc;

	for (;;) {
		rc = poll(&p, 1, time_left_ms(deadline_ns));
		if (rc > 0)
			return 0;
		if (rc == 0) {
			errno = ETIMEDOUT;
			return -1;
		}
		if (errno != EINTR)
			return -1;
	}
}

int fd_read_full(int fd, void *buf, size_t len, uint64_t deadline_ns)
{
	char *p = buf;
	ssize_t n;

	while (len > 0) {
		/* Poll first: the fd may be blocking, and the deadline must hold. */
		if (fd_wait(fd, POLLIN, deadline_ns) < 0)
			return -1;
		n = read(fd, p, len);
		if (n > 0) {
			p += n;
			len -= (size_t)n;
			continue;
		}
		if (n == 0) {
			errno = ECONNRESET;
			return -1;
		}
		if (errno == EINTR)
			continue;
		if (errno != EAGAIN && errno != EWOULDBLOCK)
			return -1;
	}
	return 0;
}

int fd_spin_readable(int fd, uint64_t until_ns)
{
	struct pollfd p = {.fd = fd, .events = POLLIN};

	do {
		if (poll(&p, 1, 0) > 0)
			return 1;
		/* runnable, never idle, but any other thread of this CPU goes first
		 * (the process's own threads may be what the reply waits for) */
		sched_yield();
	} while (time_now_ns() < until_ns);
	return 0;
}

int fd_write_full(int fd, const void *buf, size_t len, uint64_t deadline_ns)
{
	const char *p = buf;
	ssize_t n;

	while (len > 0) {
		if (fd_wait(fd, POLLOUT, deadline_ns) < 0)
			return -1;
		n = send(fd, p, len, MSG_NOSIGNAL);
		if (n < 0 && errno == ENOTSOCK)
			n = write(fd, p, len);
		if (n > 0) {
			p += n;
			len -= (size_t)n;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
			return -1;
	}
	return 0;
}

int fd_set_nonblock(int fd, int on)
{
	int fl = fcntl(fd, F_GETFL);

	if (fl < 0)
		return -1;
	fl = on ? (fl | O_NONBLOCK) : (fl & ~O_NONBLOCK);
	return fcntl(fd, F_SETFL, fl);
}

int fd_set_cloexec(int fd)
{
	int fl = fcntl(fd, F_GETFD);

	if (fl < 0)
		return -1;
	return fcntl(fd, F_SETFD, fl | FD_CLOEXEC);
}

static int unix_addr(const char *path, struct sockaddr_un *sa)
{
	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(sa->sun_path)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	strcpy(sa->sun_path, path);
	return 0;
}

/* Close fd after a failure, keeping the failure's errno; returns -1. */
static int close_failed(int fd)
{
	int err = errno;

	close(fd);
	errno = err;
	return -1;
}

int unix_connect(const char *path, unsigned timeout_ms)
{
	struct sockaddr_un sa;
	uint64_t deadline = time_deadline_ms(timeout_ms);
	int fd, err;
	socklen_t elen = sizeof(err);

	if (unix_addr(path, &sa) < 0)
		return -1;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0)
		return fd;
	if (errno != EINPROGRESS && errno != EAGAIN)
		goto fail;
	if (fd_wait(fd, POLLOUT, deadline) < 0)
		goto fail;
	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &elen) < 0)
		goto fail;
	if (err) {
		errno = err;
		goto fail;
	}
	return fd;
fail:
	return close_failed(fd);
}

int unix_listen(const char *path, int backlog, mode_t mode)
{
	struct sockaddr_un sa;
	int fd;

	if (unix_addr(path, &sa) < 0)
		return -1;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	/* The caller holds the lock file, so a socket left here is stale. */
	(void)unlink(path);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		goto fail;
	if (chmod(path, mode) < 0)
		goto fail;
	if (listen(fd, backlog) < 0)
		goto fail;
	return fd;
fail:
	return close_failed(fd);
}

int unix_peer_cred(int fd, pid_t *pid, uid_t *uid, gid_t *gid)
{
	struct ucred cr;
	socklen_t len = sizeof(cr);

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) < 0)
		return -1;
	if (pid)
		*pid = cr.pid;
	if (uid)
		*uid = cr.uid;
	if (gid)
		*gid = cr.gid;
	return 0;
}

ssize_t file_read(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), err;
	ssize_t n, got = 0;

	if (fd < 0)
		return -1;
	while ((size_t)got < len - 1 && (n = read(fd, buf + got, len - 1 - (size_t)got)) > 0)
		got += n;
	err = errno;
	close(fd);
	buf[got] = '\0';
	errno = err;
	return got;
}

int file_read_line(const char *path, char *buf, size_t len)
{
	ssize_t n;

	errno = 0;
	n = file_read(path, buf, len);
	if (n < 0 || (n == 0 && errno)) /* cannot open, or the first read failed */
		return -1;
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

/* The kind of file st is, in words. */
static const char *file_kind(const struct stat *st)
{
	switch (st->st_mode & S_IFMT) {
	case S_IFIFO:
		return "a FIFO";
	case S_IFLNK:
		return "a symlink";
	case S_IFDIR:
		return "a directory";
	case S_IFSOCK:
		return "a socket";
	case S_IFCHR:
	case S_IFBLK:
		return "a device";
	}
	return "a regular file";
}

/* Is st a file the caller may write into: regular, its own, one link?  0, or -1 with why. */
static int file_owned(const char *path, const struct stat *st, char *why, size_t len)
{
	if (!S_ISREG(st->st_mode))
		snprintf(why, len, "%s is not a regular file (%s)", path, file_kind(st));
	else if (st->st_uid != geteuid())
		snprintf(why, len, "%s is owned by uid %u, not by uid %u (krexd's)", path,
		         (unsigned)st->st_uid, (unsigned)geteuid());
	else if (st->st_nlink != 1)
		snprintf(why, len, "%s has %u hard links", path, (unsigned)st->st_nlink);
	else
		return 0;
	return -1;
}

int file_open_safe(const char *path, int flags, mode_t mode, char *why, size_t len)
{
	struct stat st;
	int fd, err;

	if (flags & O_TRUNC) {
		snprintf(why, len, "%s: O_TRUNC before the owner check", path);
		errno = EINVAL;
		return -1;
	}
	fd = open(path, O_WRONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC | flags, mode);
	if (fd < 0) {
		err = errno;
		/* ELOOP (a symlink), ENXIO (a FIFO nobody reads), EEXIST...: say what is there */
		if (lstat(path, &st) < 0 || file_owned(path, &st, why, len) == 0)
			snprintf(why, len, "%s: %s", path, strerror(err));
		errno = err;
		return -1;
	}
	if (fstat(fd, &st) < 0) {
		err = errno;
		snprintf(why, len, "%s: %s", path, strerror(err));
		goto fail;
	}
	if (file_owned(path, &st, why, len) < 0) {
		err = EPERM;
		goto fail;
	}
	if (fd_set_nonblock(fd, 0) < 0) {
		err = errno;
		snprintf(why, len, "%s: %s", path, strerror(err));
		goto fail;
	}
	return fd;
fail:
	close(fd);
	errno = err;
	return -1;
}

int mkdir_p(const char *path, mode_t mode)
{
	char buf[4096];
	size_t len = strlen(path);
	char *p;

	if (len == 0 || len >= sizeof(buf)) {
		errno = len ? ENAMETOOLONG : EINVAL;
		return -1;
	}
	memcpy(buf, path, len + 1);
	for (p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, mode) < 0 && errno != EEXIST)
			return -1;
		*p = '/';
	}
	if (mkdir(buf, mode) < 0 && errno != EEXIST)
		return -1;
	return 0;
}
