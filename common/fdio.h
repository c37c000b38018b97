/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fdio.h - whole reads and writes with a deadline, unix socket helpers.
 */
#ifndef KREX_FDIO_H
#define KREX_FDIO_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/*
 * Read exactly len bytes before deadline_ns (CLOCK_MONOTONIC).  Returns 0, or
 * -1 with errno: ETIMEDOUT, ECONNRESET on end of file, or the read error.
 */
int fd_read_full(int fd, void *buf, size_t len, uint64_t deadline_ns);

/*
 * Poll fd for POLLIN without sleeping until until_ns (CLOCK_MONOTONIC): a
 * thread that must not go idle while a short reply is on its way.  Returns 1
 * when fd is readable (or has an error or hang-up to read), 0 at until_ns.
 */
int fd_spin_readable(int fd, uint64_t until_ns);

/* Write exactly len bytes before deadline_ns; never raises SIGPIPE. */
int fd_write_full(int fd, const void *buf, size_t len, uint64_t deadline_ns);

int fd_set_nonblock(int fd, int on);
int fd_set_cloexec(int fd);

/*
 * Connect to the unix stream socket at path within timeout_ms.  Returns the
 * socket (nonblocking, close-on-exec) or -1 with errno (ENOENT, ECONNREFUSED,
 * ETIMEDOUT, ENAMETOOLONG ...).
 */
int unix_connect(const char *path, unsigned timeout_ms);

/* Bind and listen on path (removing a stale socket first); mode is applied. */
int unix_listen(const char *path, int backlog, mode_t mode);

/* Peer credentials of a connected unix socket (SO_PEERCRED). */
int unix_peer_cred(int fd, pid_t *pid, uid_t *uid, gid_t *gid);

/*
 * Read up to len - 1 bytes of the file at path into buf and NUL-terminate it
 * (for /proc and cgroup files).  Returns the bytes read, or -1 with errno if
 * the file cannot be opened.
 */
ssize_t file_read(const char *path, char *buf, size_t len);

/*
 * The first line of the file at path, newline removed, in buf (len bytes;
 * /proc and cgroup files of one value).  Returns 0, or -1 with errno.
 */
int file_read_line(const char *path, char *buf, size_t len);

/* Make directory path and its parents with mode (like mkdir -p). */
int mkdir_p(const char *path, mode_t mode);

/*
 * Open path to write, as a root daemon writing where an admin chose (a
 * directory others may write to): never through a symlink (O_NOFOLLOW), never
 * blocking on a FIFO or a device (O_NONBLOCK for the open only), and only a
 * regular file with one link owned by the caller's effective uid.  flags:
 * O_APPEND, O_CREAT, O_EXCL (never O_TRUNC: a file is truncated only once it
 * is known to be the caller's).  Returns the fd (close-on-exec, blocking), or
 * -1 with errno set and why saying what is in the way ("is not a regular file
 * (a FIFO)", "is owned by uid 65534, not by uid 0"...).
 */
int file_open_safe(const char *path, int flags, mode_t mode, char *why, size_t len);

#endif /* KREX_FDIO_H */
