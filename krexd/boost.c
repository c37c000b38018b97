/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * boost.c - the drain thread's priority while krexd waits for its drain.
 *
 * A region's entry waits for every sibling's drain acknowledgement.  The
 * drain thread of a sibling whose other threads keep its CPUs busy (a
 * compile, a CPU loop) may wait for a CPU before it can even look at the
 * gate page.  On the H200 the long waits at 24-32 sessions turned out to be
 * krexd's own (its telemetry at the start, since fixed), and drain_boost=10
 * changed nothing measurable (notebook/h200-session-7): off by default.
 * krexd (root) lowers that one thread's nice by
 * drain_boost for the drain only, then puts it back: the thread mostly
 * sleeps on a futex, and a thread that merely calls itself krex-drain gains
 * at most the drain's time ahead of its own process's other threads and
 * the node's.  Without the privilege (embedded mode) it silently does
 * nothing.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "boost.h"
#include "conn.h"
#include "defs.h"
#include "log.h"

#define BOOST_FIND_TRIES 3 /* scans for the thread before giving up on a connection */

/* Is task tid of pid the drain thread (by its name)? */
static int boost_is_drain(pid_t pid, pid_t tid)
{
	char path[64], name[32];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/comm", (int)pid, (int)tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, name, sizeof(name) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	name[n] = 0;
	name[strcspn(name, "\n")] = 0;
	return strcmp(name, KREX_DRAIN_THREAD_NAME) == 0;
}

static pid_t boost_find(pid_t pid)
{
	char path[48];
	struct dirent *e;
	pid_t tid = 0;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	if (!d)
		return 0;
	while (!tid && (e = readdir(d)))
		if (e->d_name[0] >= '1' && e->d_name[0] <= '9' &&
		    boost_is_drain(pid, (pid_t)atoi(e->d_name)))
			tid = (pid_t)atoi(e->d_name);
	closedir(d);
	return tid;
}

void boost_begin(struct conn *c, unsigned by)
{
	pid_t pid = c->member_pid > 0 ? c->member_pid : c->pid;
	int old, want;

	if (!by || c->boosted || c->dead || pid <= 0)
		return;
	if (c->drain_tid <= 0) {
		if (c->drain_tid < 0 || ++c->drain_finds > BOOST_FIND_TRIES)
			return;
		c->drain_tid = boost_find(pid);
		if (c->drain_tid <= 0) {
			c->drain_tid = c->drain_finds >= BOOST_FIND_TRIES ? -1 : 0;
			return;
		}
	} else if (!boost_is_drain(pid, c->drain_tid)) {
		c->drain_tid = 0; /* gone, or renamed: look again next time */
		return;
	}
	errno = 0;
	old = getpriority(PRIO_PROCESS, (id_t)c->drain_tid);
	if (old == -1 && errno)
		return;
	want = old - (int)by < -20 ? -20 : old - (int)by;
	if (want >= old || setpriority(PRIO_PROCESS, (id_t)c->drain_tid, want) < 0) {
		if (errno == EACCES || errno == EPERM)
			c->drain_tid = -1; /* not ours to raise (embedded mode): never again */
		return;
	}
	c->drain_nice = old;
	c->boosted = 1;
}

void boost_end(struct conn *c)
{
	if (!c->boosted)
		return;
	c->boosted = 0;
	if (c->drain_tid > 0 &&
	    boost_is_drain(c->member_pid > 0 ? c->member_pid : c->pid, c->drain_tid) &&
	    setpriority(PRIO_PROCESS, (id_t)c->drain_tid, c->drain_nice) < 0 && errno != ESRCH)
		log_debug("connection %llu: drain thread %d's nice not put back to %d: %s",
		          (unsigned long long)c->serial, (int)c->drain_tid, c->drain_nice,
		          strerror(errno));
}
