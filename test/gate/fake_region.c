/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fake_region.c - TEST DOUBLE of libkrexregion's joining API (see
 * fake_region.h).  Loaded with LD_PRELOAD before libkrexgate.so, whose weak
 * references to krex_* resolve to these.
 */
#include "config.h"

#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "fake_region.h"
#include "krex/region.h"

#define A(field) ((_Atomic uint32_t *)&page->field)

static struct fake_page *page;
static krex_drain_fn drain_fn;
static void *drain_arg;
static pid_t joined_pid;
static pthread_t drain_thread;

static void futex_wait(_Atomic uint32_t *w, uint32_t val, long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

	syscall(SYS_futex, (uint32_t *)w, FUTEX_WAIT, val, &ts, NULL, 0);
}

static void futex_wake(_Atomic uint32_t *w)
{
	syscall(SYS_futex, (uint32_t *)w, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

static uint64_t now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static void *fake_drain_thread(void *arg)
{
	const char *hold = getenv("KREX_FAKE_DRAIN_HOLD");
	uint32_t acked = 0, g;
	uint64_t t0;
	int rc;

	(void)arg;
	/* looks at the page before it waits (as libregion's): a gate closed
	 * before this thread started is drained too */
	for (;;) {
		g = atomic_load(A(generation));
		if (g == acked || !atomic_load(A(closed))) {
			futex_wait(A(generation), g, 100);
			continue;
		}
		acked = g;
		/* KREX_FAKE_DRAIN_HOLD=FILE: the drain begins once FILE exists
		 * (a thread can be made to park at the closed gate first) */
		while (hold && access(hold, F_OK) != 0)
			usleep(1000);
		t0 = now_us();
		rc = drain_fn ? drain_fn(drain_arg) : 0;
		page->drain_us = now_us() - t0;
		atomic_store(A(ack_status), (uint32_t)rc);
		atomic_fetch_add(A(acks), 1);
		atomic_store(A(ack_gen), g);
		futex_wake(A(ack_gen));
	}
	return NULL;
}

int krex_join(const struct krex_join_opts *o)
{
	const char *path = getenv("KREX_FAKE_GATE");
	sigset_t all, old;
	int fd;

	if (page && joined_pid == getpid())
		return KREX_OK;
	if (!path)
		return KREX_ENOKREXD;
	fd = open(path, O_RDWR);
	if (fd < 0)
		return KREX_ENOKREXD;
	page = mmap(NULL, sizeof(*page), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (page == MAP_FAILED) {
		page = NULL;
		return KREX_ESYS;
	}
	drain_fn = o ? o->drain : NULL;
	drain_arg = o ? o->drain_arg : NULL;
	joined_pid = getpid();
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	pthread_create(&drain_thread, NULL, fake_drain_thread, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	atomic_fetch_add(A(joins), 1);
	return KREX_OK;
}

int krex_leave(void)
{
	/* In a fork child the drain thread is the parent's: nothing to stop. */
	if (page && joined_pid == getpid())
		pthread_cancel(drain_thread);
	page = NULL;
	joined_pid = 0;
	return KREX_OK;
}

static _Atomic unsigned parked;
static _Atomic int pass;

/* KREX_FAKE_WAKE_LATE_MS=N: a thread the pass woke does not run on for N ms,
 * still counted as waiting here (as a thread woken on a loaded machine) */
static long wake_late_ms = -1;

int krex_gate_wait(void)
{
	uint64_t deadline;
	int waited = 0;

	if (!page || !atomic_load_explicit(A(closed), memory_order_acquire) || atomic_load(&pass))
		return 0;
	deadline = now_us() + 20 * 1000000u;
	atomic_fetch_add(A(waits), 1);
	atomic_fetch_add(&parked, 1);
	while (atomic_load(A(closed)) && atomic_load(A(alive)) && !atomic_load(&pass) &&
	       now_us() < deadline) {
		futex_wait(A(closed), 1, 100);
		waited = 1;
		if (wake_late_ms < 0) {
			const char *e = getenv("KREX_FAKE_WAKE_LATE_MS");

			wake_late_ms = e ? atol(e) : 0;
		}
		if (wake_late_ms > 0 && atomic_load(&pass))
			usleep((useconds_t)wake_late_ms * 1000);
	}
	atomic_fetch_sub(&parked, 1);
	return waited;
}

/* the fake has no ctx_by: a context waits as a submission does */
int krex_gate_wait_contexts(void)
{
	return krex_gate_wait();
}

unsigned krex_gate_parked(void)
{
	return atomic_load(&parked);
}

/* the fake has no krexd to tell: contexts being made delay no region */
void krex_gate_ctx_making(int on)
{
	(void)on;
}

void krex_gate_pass(int on)
{
	atomic_store(&pass, on != 0);
	if (on && page)
		futex_wake(A(closed));
}

unsigned krex_queue_cap(void)
{
	return page ? page->cap : 0;
}

unsigned krex_queue_time_us(void)
{
	return page ? page->queue_us : 0;
}

/* fakegate publishes no drain_timeout: the default, as from an older krexd */
unsigned krex_drain_timeout_ms(void)
{
	return 2000;
}

/* No region is ever held here: the fake has no krex_region_begin. */
int krex_region_held(void)
{
	return 0;
}

const char *krex_strerror(int err)
{
	return err == KREX_OK ? "success" : "fake libregion error";
}
