/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gate.c - libkrexgate.so: constructor, joining krexd, fork, the gate check
 * in front of every submission, and the drain callback.
 *
 * The gate check is krex_gate_wait() from libkrexregion (one atomic load
 * while the gates are open).  Around it the gate keeps a count of threads
 * that passed it and are inside the driver: a thread can pass an open gate
 * an instant before krexd closes it, so the drain first waits for those
 * calls to return, and threads arriving meanwhile step back and wait.
 * Nothing here holds a lock across a driver call.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "defs.h"
#include "gate.h"
#include "gate_queue.h"
#include "krex/region.h"
#include "log.h"
#include "timeutil.h"

enum gate_state { GS_PASS = 0, GS_JOINED = 1, GS_REJOIN = 2 };

static _Atomic int gate_state = GS_PASS;
static _Atomic int gate_inflight; /* threads between the gate check and the driver's return */
static _Atomic int gate_draining; /* 1 while the drain callback runs */
static _Atomic int gate_rejoining;
/*
 * The drain's pass (gate_pass_begin()): > 0 while the drain lets this
 * process's threads through the closed gate because it made no progress for
 * GATE_STALL_NS with threads waiting (parked) at the gate, one of which may
 * be the host thread that must release the work it waits for (XLA's delay
 * kernel).  A thread in the bounded queue's wait counts only once its wait
 * is suspect (longer than twice its mark's expected GPU time, gate_queue.h):
 * on a GPU merely shared it waits for its own previous launch, which the
 * drain waits for too, and letting it through would only add work.
 */
static _Atomic int gate_pass;   /* launches the pass still lets through (on while > 0) */
static _Atomic int gate_parked; /* suspect bounded-queue waiters */
static int gate_drain_passes;   /* passes in this drain (the drain thread's) */
/*
 * gate_enter()'s park.  Its futex word is gate_epoch, bumped (gate_park_wake())
 * whenever its threads must ask again: a drain's first round opens, a pass
 * begins, the drain ends.  A parked thread counts for the pass only in the
 * epoch in which it last asked (gate_asked[epoch % GATE_EPOCHS]): one woken
 * but not yet run (a loaded machine) has not asked and is no reason to let
 * threads through; when it asks and must still wait, it counts.  (A thread
 * not run for GATE_EPOCHS bumps counts again early; that costs at most a
 * pass, never a wrong result.)
 */
#define GATE_EPOCHS 4
static _Atomic int gate_epoch;
static _Atomic int gate_asked[GATE_EPOCHS];
static int gate_first_round; /* the drain's first round is open (the drain thread's) */
/* Submissions a drain's first round may still let onto busy streams
 * (gate_take_busy()); 0 when closed.  One word, so that a thread either
 * takes one before the drain closes it (and the drain sees it taken) or
 * not at all. */
static _Atomic int gate_through_left;
static int gate_drain_snapped; /* this drain's stalled-thread snapshot logged */
static unsigned gate_cap;
static uint64_t gate_qns;
/* KREX_GATE_TRACE=DIR (a diagnostic, doc/gate.md): every process appends
 * timestamped lines to DIR/trace.PID: queue waits of 1 ms or more, parks at
 * the closed gate, passes and drains.  -1: off. */
static int gate_trace_fd = -1;
static int gate_ctx_hold; /* KREX_GATE_CONTEXTS */
/* this thread is inside a gated call: gate_enter() returned 1, no gate_leave() yet */
static __thread int gate_inside;
/* One line to the trace file (KREX_GATE_TRACE), prefixed with the wall
 * clock (to the microsecond, comparable with a framework's own log lines)
 * and the thread; a single write(2), O_APPEND. */
__attribute__((format(printf, 1, 2))) static void gate_trace(const char *fmt, ...)
{
	char buf[256];
	struct timespec ts;
	va_list ap;
	int n, m;

	if (gate_trace_fd < 0)
		return;
	clock_gettime(CLOCK_REALTIME, &ts);
	n = snprintf(buf, sizeof(buf), "%lld.%06ld %ld ", (long long)ts.tv_sec, ts.tv_nsec / 1000,
	             (long)syscall(SYS_gettid));
	va_start(ap, fmt);
	m = vsnprintf(buf + n, sizeof(buf) - n - 1, fmt, ap);
	va_end(ap);
	if (m < 0)
		return;
	n += m < (int)(sizeof(buf) - n - 1) ? m : (int)(sizeof(buf) - n - 2);
	buf[n++] = '\n';
	if (write(gate_trace_fd, buf, n) < 0)
		return;
}

void gate_sleep_us(long us)
{
	struct timespec ts = {us / 1000000, (us % 1000000) * 1000};

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

int gate_gq_wait(int (*query)(void *ev), void *ev, uint64_t limit_ns, uint64_t suspect_ns)
{
	uint64_t now, t0 = time_now_ns();
	long us = 20;
	int r, parked = 0;

	gate_stat_add(GST_QUEUE_WAITS);
	for (;;) {
		r = query(ev);
		if (r != 0)
			break;
		now = time_now_ns();
		if (now - t0 >= limit_ns)
			break;
		if (!parked && now - t0 >= suspect_ns) {
			/* may be waiting for work only this thread releases */
			atomic_fetch_add(&gate_parked, 1);
			parked = 1;
		}
		if (parked && atomic_load(&gate_pass) > 0)
			break; /* a stalled drain lets us through */
		gate_sleep_us(us);
		if (us < 500)
			us *= 2;
	}
	if (parked)
		atomic_fetch_sub(&gate_parked, 1);
	if (gate_trace_fd >= 0 && time_now_ns() - t0 >= NS_PER_MS)
		gate_trace("queue-wait %llu us %s (limit %llu ms, suspect after %llu ms)",
		           (unsigned long long)((time_now_ns() - t0) / 1000),
		           r > 0                                   ? "done"
		           : r < 0                                 ? "error"
		           : parked && atomic_load(&gate_pass) > 0 ? "passed"
		                                                   : "gave-up",
		           (unsigned long long)(limit_ns / NS_PER_MS),
		           (unsigned long long)(suspect_ns / NS_PER_MS));
	if (r != 0)
		return r;
	if (gate_stat_add(GST_QUEUE_GAVE_UP) == 0)
		log_info(
		        "bounded queue: queued work not done in %llu ms (released by the host?): proceeding without waiting",
		        (unsigned long long)((time_now_ns() - t0) / 1000000));
	return 0;
}

static long gate_futex(_Atomic int *word, int op, int val, const struct timespec *ts);

int gate_relax(gate_xmode_fn xmode, int *mode)
{
	*mode = GATE_CAPTURE_RELAXED;
	return xmode && xmode(mode) == 0; /* CUDA_SUCCESS, hipSuccess */
}

void gate_unrelax(gate_xmode_fn xmode, int relaxed, int *mode)
{
	if (relaxed && xmode)
		xmode(mode);
}

/* Threads that may be waiting for the drain: at the gate (in gate_enter()'s
 * park, asked in this epoch; in libkrexregion's wait, except in the first
 * round, which lets them out of it to ask) or suspect in the queue's wait. */
static unsigned gate_parked_now(void)
{
	unsigned n = (unsigned)atomic_load(&gate_parked) +
	             (unsigned)atomic_load(&gate_asked[atomic_load(&gate_epoch) % GATE_EPOCHS]);

	return gate_first_round ? n : n + krex_gate_parked();
}

/* Wake gate_enter()'s park to ask again. */
static void gate_park_wake(void)
{
	atomic_fetch_add(&gate_epoch, 1);
	gate_futex(&gate_epoch, FUTEX_WAKE_PRIVATE, INT_MAX, NULL);
}

/* test/unit/gate_pass_test.c includes this file with its own: run where a
 * drain that found a stall is about to count the parked threads */
#ifndef GATE_TEST_STALL_FOUND
#define GATE_TEST_STALL_FOUND() ((void)0)
#endif

/*
 * The drain made no progress for GATE_STALL_NS: if threads of ours are
 * parked, let them through (at most GATE_PASS_MAX times a drain), counted.
 * What they submit is drained by the drain's next round (gate_drain()).
 * low: from gate_wait_inflight(), the fewest calls inside the driver it
 * saw in this stall (INT_MAX from a backend's drain).  A thread counts
 * itself inside before it looks for a drain, and one that finds it steps
 * back and parks (gate_enter_once()): a count below low, read after the
 * parked threads, is such a step back (that thread, now parked), i.e.
 * progress, not a stall (a preempted step back on a loaded machine, then
 * read as parked, made a pass nothing needed).
 */
static void gate_pass_begin(int low)
{
	unsigned parked;

	if (atomic_load(&gate_pass) > 0 || gate_drain_passes >= GATE_PASS_MAX)
		return;
	GATE_TEST_STALL_FOUND();
	parked = gate_parked_now();
	if (!parked || atomic_load(&gate_inflight) < low)
		return;
	gate_drain_passes++;
	gate_stat_add(GST_DRAIN_PASSES);
	if (gate_stat(GST_DRAIN_PASSES) == 1)
		log_info(
		        "drain: no progress in %llu ms with %u threads waiting for it: letting them through (work released by the host?)",
		        (unsigned long long)(GATE_STALL_NS / 1000000), parked);
	atomic_store(&gate_pass, GATE_PASS_LAUNCHES);
	krex_gate_pass(1);
	gate_park_wake();
	gate_trace("pass %d, %u thread(s) waiting", gate_drain_passes, parked);
}

/* The drain progressed (or ends): parked threads stay parked again.  In the
 * first round libkrexregion's wait stays open: a thread it woke to ask
 * must not fall back into it (it would need a pass). */
static void gate_pass_end(void)
{
	atomic_store(&gate_pass, 0);
	if (!gate_first_round)
		krex_gate_pass(0);
}

/* In gate_enter(): take one of the pass's launches; 1 when taken. */
static int gate_pass_take(void)
{
	int left = atomic_load(&gate_pass);

	while (left > 0)
		if (atomic_compare_exchange_weak(&gate_pass, &left, left - 1)) {
			/* Past the last one, callers still pass libkrexregion's wait
			 * (the drain alone turns it off, so a late call here can never
			 * turn off the drain's next pass) and park (gate_epoch). */
			gate_stat_add(GST_PASSED_LAUNCHES);
			return 1;
		}
	return 0;
}

static void gate_stall_snapshot(uint64_t stalled_ns);

int gate_poll_events(int (*query)(void *ev), void **evs, int n, uint64_t deadline, int *errors)
{
	uint64_t now, progress = time_now_ns();
	int i, r, done, left = n;
	long us = 50;

	for (;;) {
		done = 0;
		for (i = 0; i < n; i++) {
			if (!evs[i])
				continue;
			r = query(evs[i]);
			if (!r)
				continue;
			if (r < 0)
				(*errors)++;
			evs[i] = NULL;
			left--;
			done++;
		}
		now = time_now_ns();
		if (!left || now >= deadline)
			return left;
		if (done) {
			progress = now;
			gate_pass_end();
		} else if (now - progress >= GATE_STALL_NS) {
			gate_pass_begin(INT_MAX);
			gate_stall_snapshot(now - progress);
		}
		gate_sleep_us(us);
		if (us < 1000)
			us *= 2;
	}
}

/*
 * A drain that made no progress for GATE_SNAP_NS: where are this process's
 * threads?  One debug line per drain (gate_threads_line(), gate_counts.c),
 * so that a stall no thread at the gate explains can be told apart (issue
 * 20: XLA's delay kernel not released by its host thread while nothing is
 * parked or inside a gated call).
 */
static void gate_stall_snapshot(uint64_t stalled_ns)
{
	char line[1536];
	unsigned more;

	if (gate_drain_snapped || stalled_ns < GATE_SNAP_NS || log_get_level() < LOG_LVL_DEBUG)
		return;
	gate_drain_snapped = 1;
	more = gate_threads_line(line, sizeof(line));
	log_debug("drain: no progress for %llu ms, %u parked, %d inside the driver; threads:%s%s",
	          (unsigned long long)(stalled_ns / NS_PER_MS), gate_parked_now(),
	          atomic_load(&gate_inflight), line, more ? " (more not shown)" : "");
}

static long gate_futex(_Atomic int *word, int op, int val, const struct timespec *ts)
{
	return syscall(SYS_futex, (int *)word, op, val, ts, NULL, 0);
}

uint64_t gate_queue_ns(void)
{
	return gate_qns;
}

int gate_joined(void)
{
	return atomic_load_explicit(&gate_state, memory_order_relaxed) == GS_JOINED;
}

_Atomic unsigned gate_ctx_gen;

void gate_context_end(void)
{
	atomic_fetch_add(&gate_ctx_gen, 1);
}

struct gq *gate_queue_before(struct gq *tab, int len, void *s, const struct gq_ops *ops)
{
	unsigned gen = atomic_load_explicit(&gate_ctx_gen, memory_order_relaxed);
	struct gq *q;
	int i;

	if (!gate_cap || !gate_joined())
		return NULL;
	q = gq_find(tab, len, s);
	if (q && q->gen != gen) {
		/* a context was destroyed since this table's events were made:
		 * forget them (never destroyed: they went with it) and their
		 * streams (maybe gone too), start afresh */
		for (i = 0; i < len; i++)
			if (tab[i].gen != gen)
				tab[i].used = 0;
		q = gq_find(tab, len, s);
		if (q)
			q->gen = gen;
	}
	if (krex_region_held()) {
		gq_count(q);
		return NULL;
	}
	return gq_before(q, ops, gate_cap, gate_qns) ? q : NULL;
}

static int gate_drain(void *arg);
static int gate_warm(void *arg);

/* KREX_GATE_CONTEXTS=finish: wait, until deadline, for the contexts being
 * made (traced); the microseconds waited. */
static uint64_t gate_wait_contexts_made(uint64_t deadline)
{
	uint64_t t0 = time_now_ns();
	int n = gate_ctx_making_now();

	if (n <= 0)
		return 0;
	gate_trace("drain: waiting for %d context(s) being made", n);
	n = gate_ctx_wait_made(deadline);
	gate_trace("drain: waited %llu us for contexts being made, %d still being made",
	           (unsigned long long)((time_now_ns() - t0) / 1000), n);
	return (time_now_ns() - t0) / 1000;
}

/* Join krexd; on any failure stay in pass-through (fail open, logged once). */
static void gate_join(void)
{
	struct krex_join_opts o = KREX_JOIN_OPTS_INIT;
	int rc;

	o.drain = gate_drain;
	o.warm = gate_warm;
	o.flags = gate_ctx_hold ? KREX_JOIN_HOLDS_CONTEXTS : 0; /* gate_context_wait() */
	rc = krex_join(&o);
	if (rc != KREX_OK) {
		log_info("not joined (%s): passing through", krex_strerror(rc));
		return;
	}
	gate_cap = krex_queue_cap();
	gate_qns = (uint64_t)krex_queue_time_us() * 1000;
	log_debug("joined; queue cap %u launches, queue time %llu us", gate_cap,
	          (unsigned long long)(gate_qns / 1000));
	atomic_store(&gate_state, GS_JOINED);
}

/*
 * After fork the child has no drain thread and its socket is the parent's:
 * it re-joins as its own member at its first submission (not in the atfork
 * handler, where only async-signal-safe work belongs).
 */
static void gate_atfork_child(void)
{
	const struct gate_backend *const *b;

	atomic_store(&gate_inflight, 0);
	gate_inside = 0; /* the forking thread's, were it inside a gated call */
	atomic_store(&gate_draining, 0);
	atomic_store(&gate_rejoining, 0);
	atomic_store(&gate_pass, 0);
	atomic_store(&gate_parked, 0);
	for (int i = 0; i < GATE_EPOCHS; i++)
		atomic_store(&gate_asked[i], 0);
	atomic_store(&gate_through_left, 0);
	gate_ctx_making_forget();
	for (b = gate_backends; b < gate_backends_end; b++)
		if ((*b)->forget)
			(*b)->forget();
	if (atomic_load(&gate_state) != GS_PASS)
		atomic_store(&gate_state, GS_REJOIN);
}

static void gate_rejoin(void)
{
	if (atomic_exchange(&gate_rejoining, 1))
		return; /* another thread of the child does it; it passes meanwhile */
	atomic_store(&gate_state, GS_PASS);
	krex_leave();
	gate_join();
}

__attribute__((constructor)) static void gate_init(void)
{
	const char *s = getenv(KREX_ENV_LOG);
	int lvl = s ? log_parse_level(s) : -1;

	log_init("krex-gate", lvl >= 0 ? (enum log_level)lvl : LOG_LVL_WARN, LOG_TO_STDERR);
	s = getenv(KREX_ENV_GATE);
	if (s && strcmp(s, "off") == 0) {
		log_info("KREX_GATE=off: disabled");
		return;
	}
	gate_counts_init(lvl >= LOG_LVL_DEBUG);
	s = getenv(KREX_ENV_GATE_TRACE);
	if (s && *s) {
		char path[PATH_MAX];

		if (snprintf(path, sizeof(path), "%s/trace.%d", s, (int)getpid()) <
		    (int)sizeof(path))
			gate_trace_fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
		if (gate_trace_fd < 0)
			log_warn("KREX_GATE_TRACE=%s: cannot open %s: %s", s, path,
			         strerror(errno));
	}
	s = getenv(KREX_ENV_GATE_CONTEXTS);
	gate_ctx_hold = !s || strcmp(s, "pass") != 0;
	gate_ctx_finish_init(s);
	if (s && *s && gate_ctx_hold && !gate_ctx_finish && strcmp(s, "hold") != 0)
		log_warn("%s=%s: not hold, finish or pass; holding", KREX_ENV_GATE_CONTEXTS, s);
	pthread_atfork(NULL, NULL, gate_atfork_child);
	gate_join();
}

__attribute__((destructor)) static void gate_fini(void)
{
	gate_write_counts();
}

/* While a drain's first round is open, and stream has work in flight: take
 * one of its through slots, counted inside the driver; 1 when taken. */
static int gate_take_busy(gate_busy_fn busy, void *stream)
{
	int left;

	if (atomic_load(&gate_through_left) <= 0 || !busy(stream))
		return 0;
	/* counted inside the driver first: the drain closes the first round,
	 * then waits for the calls inside the driver before its next one */
	atomic_fetch_add(&gate_inflight, 1);
	left = atomic_load(&gate_through_left);
	while (left > 0)
		if (atomic_compare_exchange_weak(&gate_through_left, &left, left - 1)) {
			gate_stat_add(GST_THROUGH_LAUNCHES);
			return 1;
		}
	gate_leave(1);
	return 0;
}

/* In gate_enter()'s park: may this call go on (the drain ended, a pass, or
 * its stream busy while the first round is open)? */
static int gate_unpark(int passable, gate_busy_fn busy, void *stream)
{
	if (!atomic_load(&gate_draining))
		return 1;
	if (!passable)
		return 0;
	return atomic_load(&gate_pass) > 0 ||
	       (busy && atomic_load(&gate_through_left) > 0 && busy(stream));
}

static int gate_enter_once(int passable, gate_busy_fn busy, void *stream)
{
	int s = atomic_load_explicit(&gate_state, memory_order_relaxed);

	if (s == GS_PASS)
		return 0;
	if (s == GS_REJOIN) {
		gate_rejoin();
		if (atomic_load(&gate_state) != GS_JOINED)
			return 0;
	}
	if (!passable)
		busy = NULL;
	for (;;) {
		struct timespec slice = {0, 100 * 1000 * 1000};
		uint64_t parked_at = 0;

		/* a drain's first round: work onto a busy stream goes through */
		if (busy && gate_take_busy(busy, stream))
			return 1;
		krex_gate_wait();
		atomic_fetch_add(&gate_inflight, 1);
		if (!atomic_load(&gate_draining))
			return 1;
		if (passable && gate_pass_take())
			return 1; /* the stalled drain let us through; it drains this too */
		/* A drain started between the check and the count: step back.
		 * A call no pass may let through waits for the drain's end (and
		 * then at the closed gate), not counted as parked. */
		gate_leave(1);
		if (gate_trace_fd >= 0)
			parked_at = time_now_ns();
		for (;;) {
			int e = atomic_load(&gate_epoch);

			if (gate_unpark(passable, busy, stream)) {
				if (parked_at)
					gate_trace(
					        "parked %llu us%s, then %s",
					        (unsigned long long)((time_now_ns() - parked_at) /
					                             1000),
					        passable ? "" : " (not passable)",
					        !atomic_load(&gate_draining)  ? "the drain ended"
					        : atomic_load(&gate_pass) > 0 ? "a pass"
					                                      : "busy stream");
				break;
			}
			if (passable)
				atomic_fetch_add(&gate_asked[e % GATE_EPOCHS], 1);
			gate_futex(&gate_epoch, FUTEX_WAIT_PRIVATE, e, &slice);
			if (passable)
				atomic_fetch_sub(&gate_asked[e % GATE_EPOCHS], 1);
		}
	}
}

int gate_context_wait(void)
{
	int s = atomic_load_explicit(&gate_state, memory_order_relaxed), held = 0, e;
	struct timespec slice = {0, 100 * 1000 * 1000};
	uint64_t t0;

	if (!gate_ctx_hold || s == GS_PASS)
		return 0;
	if (s == GS_REJOIN) {
		gate_rejoin();
		if (atomic_load(&gate_state) != GS_JOINED)
			return 0;
	}
	t0 = time_now_ns();
	gate_trace("context: at the gate");
	/* A drain's first round and its passes wake the threads waiting in
	 * libkrexregion (for submissions onto busy streams, for the thread
	 * that releases host-released work): never for a context.  Wait for
	 * the drain's end, then at the gate again. */
	for (;;) {
		held |= krex_gate_wait_contexts() > 0;
		if (gate_unpark(0, NULL, NULL))
			break;
		held = 1;
		e = atomic_load(&gate_epoch);
		if (!gate_unpark(0, NULL, NULL))
			gate_futex(&gate_epoch, FUTEX_WAIT_PRIVATE, e, &slice);
	}
	if (held) {
		unsigned long long w = (time_now_ns() - t0) / 1000;

		gate_stat_add(GST_CONTEXT_HELD);
		gate_trace("context: held %llu us at a closed gate", w);
		/* agents.py reads it: a command's start-up, split */
		log_debug("context: held %llu us at a closed gate", w);
	}
	return gate_joined() ? gate_ctx_making_begin() : 0;
}

/*
 * A gated call that the runtime makes from inside another of the same
 * thread (Debian's HIP 5.2: hipMemcpyPeer through the exported hipMemcpy,
 * hipMemcpyPeerAsync through hipMemcpyAsync) passes uncounted: the outer
 * call is counted in flight, so a drain waits for both, and one held at a
 * gate that closed between the two would hold the drain until its pass.
 */
int gate_enter(int passable, gate_busy_fn busy, void *stream)
{
	if (gate_inside) {
		gate_stat_add(GST_NESTED);
		return 0;
	}
	gate_inside = gate_enter_once(passable, busy, stream);
	return gate_inside;
}

void gate_leave(int joined)
{
	if (!joined)
		return;
	gate_inside = 0;
	if (atomic_fetch_sub(&gate_inflight, 1) == 1 && atomic_load(&gate_draining))
		gate_futex(&gate_inflight, FUTEX_WAKE_PRIVATE, INT_MAX, NULL);
}

/* Wait, until deadline, for the calls already past the gate: 0 or -1. */
static int gate_wait_inflight(uint64_t deadline)
{
	uint64_t now, since = time_now_ns();
	int n, low = INT_MAX;

	while ((n = atomic_load(&gate_inflight)) > 0) {
		struct timespec slice = {0, 2 * 1000 * 1000};

		now = time_now_ns();
		if (now >= deadline) {
			log_warn("drain: %d calls still inside the driver", n);
			return -1;
		}
		/* A call inside the driver may wait for work that only a thread
		 * parked at the gate releases (a synchronous read-back behind
		 * XLA's delay kernel): stalled for GATE_STALL_NS, the pass lets
		 * parked threads through here too.  Progress is a call leaving:
		 * the count below its lowest (threads let through come and go
		 * above it). */
		if (n < low) {
			if (low != INT_MAX)
				gate_pass_end();
			low = n;
			since = now;
		} else if (now - since >= GATE_STALL_NS) {
			gate_pass_begin(low);
			gate_stall_snapshot(now - since);
		}
		gate_futex(&gate_inflight, FUTEX_WAIT_PRIVATE, n, &slice);
	}
	return 0;
}

/* A drain answers a little before krexd's drain_timeout gives up on it: 5 %, 1-100 ms. */
static unsigned gate_drain_ms(void)
{
	unsigned ms = krex_drain_timeout_ms(), early = ms / 20 > 100 ? 100 : ms / 20;

	return ms - (early ? early : ms > 1);
}

/*
 * The drain callback, run by libkrexregion's drain thread once krexd has
 * closed a gate of ours: wait (bounded) for calls already past the gate,
 * then for the work queued on every stream this process used (each
 * backend's drain: events, polled, in relaxed capture mode).  The drain thread itself
 * never passes through gate_enter().  Everything is bounded by one
 * deadline, drain_timeout: a drain that cannot complete (work that only a
 * host thread now waiting at the gate would release) answers late instead
 * of hanging.  In its first round it lets submissions onto busy streams
 * through (gate_take_busy()); when it makes no
 * progress while threads of ours wait for it, it lets them through too (the
 * pass, gate_pass_begin()); either way a next round waits for what they
 * submitted.  Returns 0, or -1 when late or incomplete.
 */
static int gate_drain(void *arg)
{
	uint64_t deadline = time_deadline_ms(gate_drain_ms());
	const struct gate_backend *const *b;
	uint64_t t0 = time_now_ns(), t_in = 0;
	unsigned long through0 = gate_stat(GST_PASSED_LAUNCHES);
	unsigned long busy0 = gate_stat(GST_THROUGH_LAUNCHES);
	unsigned parked0 = gate_parked_now();
	int passes, rc, rounds = 0, onto_busy, exiting = 0;
	uint64_t ctx_us, ctx_deadline = time_deadline_ms(gate_ctx_finish_ms);

	(void)arg;
	atomic_store(&gate_draining, 1);
	gate_drain_passes = 0;
	gate_drain_snapped = 0;
	gate_stat_add(GST_DRAINS);
	/* KREX_GATE_CONTEXTS=finish: a context being made is finished before
	 * the drain looks at anything (its thread then waits at the gate), so
	 * that the freeze does not stop it halfway */
	ctx_us = gate_ctx_finish ? gate_wait_contexts_made(ctx_deadline < deadline ? ctx_deadline
	                                                                           : deadline)
	                         : 0;
	/* Rounds: a round that let parked threads through (a pass) is followed
	 * by one that waits for what they submitted, with the gate shut again. */
	do {
		passes = gate_drain_passes;
		if (!rounds) {
			/* the first round: submissions onto busy streams go
			 * through (gate_take_busy()), also while it waits for
			 * calls inside the driver (a synchronous read behind
			 * the work a thread must release).  Threads that parked
			 * at the gate since krexd closed it, before this drain
			 * began, are woken to ask too: out of libkrexregion's
			 * wait (its pass) into gate_enter()'s own park. */
			gate_first_round = 1;
			atomic_store(&gate_through_left, GATE_THROUGH_MAX);
			krex_gate_pass(1);
			gate_park_wake();
		}
		rc = gate_wait_inflight(deadline);
		if (!rounds++)
			t_in = time_now_ns() - t0;
		for (b = gate_backends; b < gate_backends_end; b++) {
			int d = (*b)->drain ? (*b)->drain(deadline) : 0;
			if (d == KREX_DRAIN_EXITING)
				exiting = 1;
			else if (d < 0)
				rc = -1;
		}
		/* closed: what was taken before this went through (and is
		 * inside the driver, for the next round to wait for) */
		onto_busy =
		        rounds == 1 ? GATE_THROUGH_MAX - atomic_exchange(&gate_through_left, 0) : 0;
		gate_first_round = 0;
		gate_pass_end();
	} while ((gate_drain_passes != passes || onto_busy) && time_now_ns() < deadline);
	if (gate_drain_passes != passes || onto_busy) {
		/* the deadline passed in a round that let threads through */
		if (gate_wait_inflight(deadline + 50 * NS_PER_MS) < 0)
			log_warn("drain: threads let through are still inside the driver");
		rc = -1;
	}
	if (rc < 0 && time_now_ns() >= deadline)
		gate_stat_add(GST_DRAIN_LATE);
	else if (rc < 0)
		gate_stat_add(GST_DRAIN_INCOMPLETE);
	/* one text for the debug log and the trace (KREX_GATE_TRACE) */
	if (log_get_level() >= LOG_LVL_DEBUG || gate_trace_fd >= 0) {
		char d[256];

		snprintf(
		        d, sizeof(d),
		        "%llu us (calls inside the driver: %llu us), %d round(s), %d pass(es), %lu launch(es) let through, %lu onto busy streams, %u thread(s) parked at the start, status %d, contexts being made %llu us",
		        (unsigned long long)((time_now_ns() - t0) / 1000),
		        (unsigned long long)(t_in / 1000), rounds, gate_drain_passes,
		        gate_stat(GST_PASSED_LAUNCHES) - through0,
		        gate_stat(GST_THROUGH_LAUNCHES) - busy0, parked0, rc,
		        (unsigned long long)ctx_us);
		log_debug("drain: %s", d);
		gate_trace("drain %s", d);
	}
	atomic_store(&gate_draining, 0);
	gate_park_wake();
	/* The runtime is shutting down: this process exits, its contexts go
	 * with it; krexd judges by whether it is still on the GPU. */
	if (exiting) {
		log_info("drain: the GPU runtime is shutting down (the process exits)");
		return KREX_DRAIN_EXITING;
	}
	return rc;
}

/*
 * The warm callback, run in the region owner by krex_region_begin() after the
 * grant: one tiny operation on each GPU context this process used, waited
 * for, so the GPU has switched to the owner's context before the owner's
 * first timed launch (the backends that have one: CUDA's).
 */
static int gate_warm(void *arg)
{
	const struct gate_backend *const *b;
	int rc = 0;

	(void)arg;
	for (b = gate_backends; b < gate_backends_end; b++)
		if ((*b)->warm && (*b)->warm() < 0)
			rc = -1;
	log_debug("region warm-up: %s", rc == 0 ? "done" : "failed");
	return rc;
}
