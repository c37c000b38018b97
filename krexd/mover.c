/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mover.c - the mover thread (mover.h).  Moving a process into a cgroup (a
 * write to cgroup.procs) waits for an RCU grace period in the kernel unless
 * the hierarchy has favordynmods (cgfavor.c): tens of milliseconds on a busy
 * node, every one of them lost to every region on krexd's loop.  Here one
 * thread makes the writes, in the order they were asked for, under nothing
 * of krexd's: a FIFO under a mutex that no write holds, and an eventfd.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "freezer.h"
#include "krexd.h"
#include "mover.h"
#include "timeutil.h"

struct mv_req {
	uint32_t id;
	pid_t pid;
	char cg[512], cpuset_cg[512];
	uint64_t queued_ns;
	struct mv_done *d; /* its result, made with it: the thread allocates nothing */
	struct mv_req *next;
};

static struct {
	pthread_mutex_t mu;
	pthread_cond_t work;
	pthread_t th;
	int on, efd, epfd, stop;
	struct ep_item ep;
	struct mv_req *qhead, *qtail;
	struct mv_done *dhead, *dtail;
	unsigned pending; /* queued or being written */
	const char *hold; /* KREX_TEST_MOVE_HOLD: a test's file; each move waits while it exists */
	uint64_t hold_until; /* mv_hold_until(): moves not begun wait until then (0: none) */
	uint64_t hold_max;   /* KREXD_MOVE_HOLD_MS: no move waits longer for holds (0: none) */
	int mono;            /* work's clock is CLOCK_MONOTONIC: the hold can be waited */
} mv = {.mu = PTHREAD_MUTEX_INITIALIZER, .work = PTHREAD_COND_INITIALIZER, .efd = -1};

/* The test hook: wait while the file exists (the loop runs meanwhile), unless krexd stops. */
static void mv_hold(void)
{
	struct timespec ts = {0, 2 * 1000000L};
	int stop;

	if (!mv.hold)
		return;
	for (;;) {
		pthread_mutex_lock(&mv.mu);
		stop = mv.stop;
		pthread_mutex_unlock(&mv.mu);
		if (stop || access(mv.hold, F_OK) < 0)
			return;
		nanosleep(&ts, NULL);
	}
}

/* Called with mv.mu held and a move queued: wait while the loop holds the
 * moves not begun (mv_hold_until()), unless krexd stops, and no longer than
 * hold_max from its queueing (regions on several GPUs can enter one after
 * another without a gap); how long it waited. */
static uint64_t mv_region_hold(void)
{
	uint64_t now, t0 = 0, until;
	struct timespec ts;

	while (mv.mono && mv.qhead && !mv.stop && mv.hold_until) {
		until = mv.qhead->queued_ns + mv.hold_max;
		if (mv.hold_until < until)
			until = mv.hold_until;
		if ((now = time_now_ns()) >= until)
			break;
		if (!t0)
			t0 = now;
		ts.tv_sec = (time_t)(until / NS_PER_S);
		ts.tv_nsec = (long)(until % NS_PER_S);
		pthread_cond_timedwait(&mv.work, &mv.mu, &ts); /* CLOCK_MONOTONIC (mv_start) */
	}
	return t0 ? time_now_ns() - t0 : 0;
}

static void *mv_main(void *unused)
{
	const uint64_t one = 1;
	struct mv_req *q;
	struct mv_done *d;
	uint64_t t0, held;

	(void)unused;
	pthread_mutex_lock(&mv.mu);
	for (;;) {
		while (!mv.qhead && !mv.stop)
			pthread_cond_wait(&mv.work, &mv.mu);
		if (!mv.qhead)
			break; /* stopping, nothing left */
		held = mv_region_hold();
		q = mv.qhead;
		mv.qhead = q->next;
		if (!mv.qhead)
			mv.qtail = NULL;
		pthread_mutex_unlock(&mv.mu);

		mv_hold();
		d = q->d;
		t0 = time_now_ns();
		d->queued_ns = t0 - q->queued_ns;
		d->held_ns = held;
		if (freezer_move(q->cg, q->cpuset_cg, q->pid, &d->cpuset_err) < 0)
			d->err = errno ? errno : EIO;
		d->move_ns = time_now_ns() - t0;

		pthread_mutex_lock(&mv.mu);
		if (mv.dtail)
			mv.dtail->next = d;
		else
			mv.dhead = d;
		mv.dtail = d;
		mv.pending--;
		free(q);
		(void)!write(mv.efd, &one, sizeof(one));
	}
	pthread_mutex_unlock(&mv.mu);
	return NULL;
}

/* KREXD_MOVE_HOLD_MS in ns; 0 when unset or not a number from 0 to 3600000
 * (krexd.c says so at the start). */
static uint64_t hold_env(void)
{
	const char *e = getenv("KREXD_MOVE_HOLD_MS");
	long long ms;
	char *end;

	if (!e || !*e)
		return 0;
	ms = strtoll(e, &end, 10);
	return *end || ms < 0 || ms > 3600000 ? 0 : (uint64_t)ms * NS_PER_MS;
}

int mv_start(struct krexd *k)
{
	struct epoll_event ev = {.events = EPOLLIN};
	const char *h = getenv("KREX_TEST_MOVE_HOLD");
	pthread_condattr_t ca;
	int err;

	if (mv.on)
		return 0;
	mv.hold = h && h[0] ? h : NULL;
	mv.hold_until = 0;
	mv.hold_max = hold_env();
	/* the region hold's deadline is time_now_ns()'s clock (no thread waits
	 * yet); without it no hold (a realtime wait would not last) */
	mv.mono = 0;
	if (pthread_condattr_init(&ca) == 0) {
		if (pthread_condattr_setclock(&ca, CLOCK_MONOTONIC) == 0) {
			pthread_cond_destroy(&mv.work);
			mv.mono = pthread_cond_init(&mv.work, &ca) == 0;
			if (!mv.mono)
				pthread_cond_init(&mv.work, NULL);
		}
		pthread_condattr_destroy(&ca);
	}
	mv.efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (mv.efd < 0)
		return -1;
	mv.ep.kind = EP_MOVER;
	mv.ep.ptr = k;
	ev.data.ptr = &mv.ep;
	if (epoll_ctl(k->epfd, EPOLL_CTL_ADD, mv.efd, &ev) < 0)
		goto fail;
	mv.epfd = k->epfd;
	mv.stop = 0;
	err = pthread_create(&mv.th, NULL, mv_main, NULL);
	if (err) {
		epoll_ctl(k->epfd, EPOLL_CTL_DEL, mv.efd, NULL);
		errno = err;
		goto fail;
	}
	mv.on = 1;
	return 0;
fail:
	err = errno;
	close(mv.efd);
	mv.efd = -1;
	errno = err;
	return -1;
}

uint64_t mv_hold_ns(void)
{
	return mv.on && mv.mono ? mv.hold_max : 0;
}

void mv_hold_until(uint64_t until_ns)
{
	if (!mv.on)
		return;
	pthread_mutex_lock(&mv.mu);
	if (!until_ns || until_ns < mv.hold_until)
		pthread_cond_signal(&mv.work); /* released or shortened: it looks again */
	mv.hold_until = until_ns;
	pthread_mutex_unlock(&mv.mu);
}

int mv_inline(void)
{
	const char *e = getenv("KREXD_MOVE_INLINE");

	return e && !strcmp(e, "1");
}

int mv_on(void)
{
	return mv.on;
}

int mv_submit(uint32_t id, pid_t pid, const char *cg, const char *cpuset_cg)
{
	struct mv_req *q;

	if (!mv.on) {
		errno = ENOSYS;
		return -1;
	}
	q = calloc(1, sizeof(*q));
	if (!q || !(q->d = calloc(1, sizeof(*q->d)))) {
		free(q);
		errno = ENOMEM;
		return -1;
	}
	q->d->id = id;
	q->id = id;
	q->pid = pid;
	snprintf(q->cg, sizeof(q->cg), "%s", cg);
	snprintf(q->cpuset_cg, sizeof(q->cpuset_cg), "%s", cpuset_cg);
	q->queued_ns = time_now_ns();
	pthread_mutex_lock(&mv.mu);
	if (mv.qtail)
		mv.qtail->next = q;
	else
		mv.qhead = q;
	mv.qtail = q;
	mv.pending++;
	pthread_cond_signal(&mv.work);
	pthread_mutex_unlock(&mv.mu);
	return 0;
}

struct mv_done *mv_take(void)
{
	struct mv_done *d;
	uint64_t v;

	if (mv.efd >= 0)
		(void)!read(mv.efd, &v, sizeof(v));
	pthread_mutex_lock(&mv.mu);
	d = mv.dhead;
	mv.dhead = mv.dtail = NULL;
	pthread_mutex_unlock(&mv.mu);
	return d;
}

unsigned mv_pending(void)
{
	unsigned n;

	pthread_mutex_lock(&mv.mu);
	n = mv.pending;
	pthread_mutex_unlock(&mv.mu);
	return n;
}

void mv_stop(void)
{
	if (!mv.on)
		return;
	pthread_mutex_lock(&mv.mu);
	mv.stop = 1;
	pthread_cond_signal(&mv.work);
	pthread_mutex_unlock(&mv.mu);
	pthread_join(mv.th, NULL);
	mv.on = 0;
	/* what it wrote last is mv_take()'s without the eventfd */
	epoll_ctl(mv.epfd, EPOLL_CTL_DEL, mv.efd, NULL);
	close(mv.efd);
	mv.efd = -1;
}
