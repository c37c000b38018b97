/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ident.c - a client's identity: the process that connected (its pidfd and
 * start time, taken at accept), and whether it is still that process.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "fdio.h"
#include "ident.h"
#include "krexd.h"
#include "conn.h"
#include "log.h"
#include "proc.h"

int pid_start_ticks(pid_t pid, uint64_t *ticks, uid_t *uid)
{
	struct proc_stat s;

	if (proc_stat_read(pid, &s) < 22 || s.state == 'Z' || s.state == 'X') {
		errno = ESRCH;
		return -1;
	}
	*ticks = s.start;
	return uid ? proc_owner(pid, uid) : 0;
}

/*
 * /proc/PID's owner is the peer's uid.  A root peer may act for any process
 * (the SPANK plugin's task_init connects as root and then takes the job's
 * euid).  A user's peer never stands for a process whose /proc is root's:
 * a root process (a pid reused by one), or a non-dumpable one (a setuid
 * program, PR_SET_DUMPABLE 0), whose /proc the kernel gives to root.
 */
static int owner_ok(uid_t proc_owner, uid_t peer)
{
	return peer == 0 || proc_owner == peer;
}

static int pidfd_alive(int pidfd)
{
	return syscall(SYS_pidfd_send_signal, pidfd, 0, NULL, 0) == 0;
}

int conn_peer_alive(struct conn *c)
{
	uint64_t t;
	uid_t u;

	if (c->pidfd >= 0 && !pidfd_alive(c->pidfd)) {
		c->ident = CONN_IDENT_GONE; /* the process that connected exited */
		return 0;
	}
	if (!c->start_ticks || pid_start_ticks(c->pid, &t, &u) < 0 || t != c->start_ticks) {
		if (c->ident == CONN_IDENT_OK)
			c->ident = CONN_IDENT_GONE;
		return 0;
	}
	if (!owner_ok(u, c->uid)) {
		c->ident = CONN_IDENT_OWNER;
		return 0;
	}
	return 1;
}

#ifndef SO_PEERPIDFD
/* Linux 6.5 (asm-generic/socket.h); Debian 12's glibc headers lack it.  Where
 * the kernel lacks it, getsockopt fails with ENOPROTOOPT: the fallback below. */
#define SO_PEERPIDFD 77
#endif

/* The pid a pidfd refers to (its fdinfo "Pid:" line), -1 when it exited, 0 unknown. */
static pid_t pidfd_pid(int pidfd)
{
	char path[64], buf[1024], *p;
	int v;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", pidfd);
	if (file_read(path, buf, sizeof(buf)) <= 0 || !(p = strstr(buf, "\nPid:")) ||
	    sscanf(p + 5, "%d", &v) != 1)
		return 0;
	return (pid_t)v;
}

/*
 * A pidfd of the process that connected.  SO_PEERPIDFD (Linux 6.5) gives the
 * very process that called connect(), whatever holds its pid number now: a
 * peer that exited before the accept has none (EINVAL, ESRCH), or a dead one.
 * Fallback, for older kernels (ENOPROTOOPT): pidfd_open() of the SO_PEERCRED
 * pid, which a pid reused between the connect and the accept would pass; the
 * owner check (owner_ok) then limits that to a process of the peer's own uid.
 * Returns the pidfd, or -1 (no identity: c->ident says why).
 */
static int conn_pidfd(struct conn *c)
{
	static int said;
	socklen_t len = sizeof(int);
	int pidfd = -1, rc;
	pid_t p;

	rc = getsockopt(c->fd, SOL_SOCKET, SO_PEERPIDFD, &pidfd, &len);
	if (!said && (rc == 0 || errno == ENOPROTOOPT)) {
		said = 1;
		if (rc == 0)
			log_info("peer identity: SO_PEERPIDFD (the process that connected)");
		else
			log_warn(
			        "peer identity: this kernel has no SO_PEERPIDFD (Linux < 6.5): pidfd_open() of the peer pid at accept, owner-checked (doc/security.md)");
	}
	if (rc == 0 && pidfd >= 0) {
		fd_set_cloexec(pidfd);
		p = pidfd_pid(pidfd);
		if (pidfd_alive(pidfd) && (p == c->pid || p == 0))
			return pidfd;
		close(pidfd);
		c->ident = CONN_IDENT_GONE;
		return -1;
	}
	if (errno != ENOPROTOOPT) {
		c->ident = CONN_IDENT_GONE; /* the peer exited before the accept */
		return -1;
	}
	return (int)syscall(SYS_pidfd_open, c->pid, 0);
}

void conn_identity(struct conn *c)
{
	uid_t u;

	c->ident = CONN_IDENT_OK;
	c->pidfd = conn_pidfd(c);
	if (c->ident != CONN_IDENT_OK || pid_start_ticks(c->pid, &c->start_ticks, &u) < 0) {
		c->ident = CONN_IDENT_GONE;
		c->start_ticks = 0;
	} else if (c->pidfd >= 0 && !pidfd_alive(c->pidfd)) {
		c->ident = CONN_IDENT_GONE; /* exited between the two: the ticks may be another's */
		c->start_ticks = 0;
	} else if (!owner_ok(u, c->uid)) {
		/* root's /proc (a root or non-dumpable process), or a setuid exec: no identity */
		c->ident = CONN_IDENT_OWNER;
		c->start_ticks = 0;
	}
}
