/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gate_queue.h - the bounded queue: how much GPU work one stream of a
 * participant may have queued outside regions, so that a region's drain
 * waits for little more than the kernel in flight.
 *
 * The API side (gate_cuda.c, gate_hip.c) gives the event calls as
 * gq_ops and keeps one struct gq per (thread, stream).  Before a launch,
 * gq_before() may wait on an event the gate recorded earlier; it is called
 * before the gate check, so a thread waiting there is not "inside the
 * driver" for the drain and steps into the closed gate when it wakes.
 * After a successful launch, gq_after() records the next event when
 * gq_before() asked for it.  What happens between a thread's launch and
 * its own events is timed by the thread (a benchmark outside any region):
 * gq_before() makes no event call when the marks' bookkeeping of the last
 * gq_after() says no wait can be needed (it then assumes nothing outstanding
 * completed); otherwise it queries the outstanding marks, one call each,
 * and takes their time samples only when it then waits.  gq_after(), with
 * the launch already queued, collects what completed and takes the samples.
 *
 * Per stream, an event marks every `stride` launches, and before a mark the
 * gate waits for the older of two marks still outstanding, so at most about
 * 3 strides of launches are ever queued.  The stride:
 *
 *  - by launch count (queue_time = 0, and until the first sample): queue_cap.
 *    That bounds launches, not time: 2 x queue_cap launches of 5 ms kernels
 *    queue 10 ms or more of work.
 *  - by time (queue_time = T): the gate times its own marks (the GPU time
 *    between two consecutive marks over the launches between them: t per
 *    launch), keeps the stride at T / (2 t) (1 to GQ_MAX_STRIDE, growing at
 *    most twofold per mark), and before a mark also waits until the
 *    estimated queued work, this launch included, is at most T or nothing is
 *    queued.  Long kernels are then queued one at a time (a region's drain
 *    waits for at most the kernel in flight); short ones with a mark every
 *    GQ_MAX_STRIDE launches and no waiting (cheap).  The estimate is the last
 *    sample, taken only from a mark whose predecessor had not completed when
 *    it was recorded (or had just been waited for): the stream never idled
 *    between them, so a host pause (an XLA compile) is not taken for GPU
 *    time.
 *    What no rule can see in advance: a stream that switches from short to
 *    long kernels queues up to 3 x GQ_MAX_STRIDE of the long ones before the
 *    first of them has been timed.
 *
 * Pure bookkeeping over the ops: tested without a GPU by
 * test/unit/gate_queue_test.c against a virtual-time double.
 */
#ifndef KREX_GATE_QUEUE_H
#define KREX_GATE_QUEUE_H

#include <stdint.h>

#define GQ_DEPTH 2      /* marks outstanding per stream at most */
#define GQ_MAX_STRIDE 8 /* launches per mark at most (time rule) */
#define GQ_SLOTS (GQ_DEPTH + 1)

/* The API's event calls; each returns 0 on success. */
struct gq_ops {
	int (*create)(void **ev, int timing);
	int (*record)(void *ev, void *stream);
	int (*sync)(void *ev);  /* only where wait is NULL: may be NULL if wait is not */
	int (*query)(void *ev); /* 1 done, 0 not yet, < 0 error */
	int (*elapsed)(float *ms, void *from, void *to);
	/* 1 while the stream is being captured into a graph (never record or
	 * wait there: it would invalidate the capture); may be NULL. */
	int (*capturing)(void *stream);
	/* Wait for ev at most limit_ns: 1 done, 0 not done in time, < 0 error.
	 * Past suspect_ns the wait may be for work the host holds (a stalled
	 * region's drain may then end it early: gate.c).  May be NULL: sync is
	 * used (tests with a virtual clock). */
	int (*wait)(void *ev, uint64_t limit_ns, uint64_t suspect_ns);
};

/*
 * How long a launching thread waits for one mark before it gives up.  The
 * work before the mark may be a kernel that only this thread can release
 * (XLA's delay kernel spins on a host flag, and times out after about
 * 100 ms; cuStreamWaitValue32; a host function waiting for the host): then
 * the gate gives up, counts it (gave_up), lets the launch through and lets
 * more launches through without waiting while the mark is outstanding
 * (then waits again, bounded again).  Work that merely runs slowly, on a
 * GPU shared with busy siblings, must not be taken for that: the mark's
 * expected time is its launches x the GPU time per launch the queue
 * measured (est_ns: from event times, so it includes the time slices of
 * the siblings).
 *
 *  - The wait: GQ_WAIT_FACTOR x the mark's expected time, at least
 *    GQ_WAIT_MAX_NS (50 ms: half of XLA's timeout, well above a kernel in
 *    flight on an unshared GPU, and all there is before the first sample),
 *    at most GQ_WAIT_CAP_NS (80 ms: a host thread that holds its own
 *    stream waits at most that long, so a 100 ms delay kernel is still
 *    released by its host, with 20 ms to spare).  A stream slowed by
 *    sharing stays bounded without give-ups while one launch's turn (its
 *    kernel and the siblings' kernels taking turns with it) stays under
 *    GQ_WAIT_CAP_NS: 15 siblings of 5 ms kernels, 75 of 1 ms.
 *  - After a give-up: the launches let through without waiting are worth
 *    at most GQ_WAIT_MAX_NS of estimated GPU time (at least one, at most
 *    GQ_HELD_MAX), so a slow stream that passed the cap queues a launch or
 *    two more, not GQ_HELD_MAX; they get a mark of their own before the
 *    next wait.  A give-up on a stream not timed yet takes the wait over
 *    the mark's launches + 1 as its estimate (a lower bound, unless the host
 *    holds the work): the mark's launches + 1 pass (doc/gate.md: the
 *    trade-off for a host-released chain among a stream's first launches).
 *  - A mark is recorded before the stream's first launch, so the first
 *    completed mark is a time sample.  The sample closed by a mark that
 *    was given up on may hold host time: it at most doubles the estimate, so
 *    a host-released stream's estimate stays near its kernels' (its next
 *    waits stay suspect early) while a stream slowed by sharing still learns
 *    its time in a few marks.
 */
/*
 * When a wait becomes suspect (ops->wait's suspect_ns): GQ_WAIT_FACTOR x the
 * mark's expected GPU time, at least GQ_SUSPECT_MIN_NS; GQ_SUSPECT_UNTIMED_NS
 * before the stream is timed.  A suspect waiter counts as parked for a
 * region's drain (gate.c): when the drain has made no progress for 10 ms it
 * ends the wait and lets the thread through, since it may be the host thread
 * that must release the work both wait for (XLA's delay kernel; issue 20).
 * A waiter on a GPU merely shared is not suspect while its mark is on time,
 * and the sample of a mark that was given up on (host time) at most doubles
 * the estimate.
 */
#define GQ_SUSPECT_MIN_NS (5ull * 1000 * 1000)
#define GQ_SUSPECT_UNTIMED_NS (10ull * 1000 * 1000)
#define GQ_WAIT_MAX_NS (50ull * 1000 * 1000)
#define GQ_WAIT_CAP_NS (80ull * 1000 * 1000)
#define GQ_WAIT_FACTOR 2
#define GQ_HELD_MAX 64

struct gq {
	void *stream;
	int used, broken;
	unsigned stride;  /* launches per event now (0: not started) */
	unsigned pending; /* launches since the last event */
	uint64_t rec;     /* events recorded (the last one's sequence number) */
	uint64_t done;    /* events known complete, in order */
	uint64_t sampled; /* events up to it taken as time samples (<= done) */
	void *ev[GQ_SLOTS];
	unsigned n[GQ_SLOTS]; /* launches each event closes */
	int busy[GQ_SLOTS];   /* its predecessor not done when it was recorded: a sample */
	int waited_out;       /* gq_before() just waited for the last outstanding mark */
	uint64_t est_ns;      /* GPU time per launch, last sample; 0 = unknown */
	uint64_t waits;       /* times gq_before() waited (tests, debug) */
	uint64_t gave_up;     /* waits that gave up (gq_wait_limit) */
	unsigned held;        /* gave up: launches let through since (0: not held) */
	uint64_t gave_seq;    /* the last mark given up on (its sample is host time) */
	int start_mark;       /* ev[0] was recorded before the first launch */
	unsigned gen;         /* the context generation its events belong to (gate.h) */
};

/* The struct for stream s in a per-thread table of len entries (a free one
 * the first time), or NULL when the table is full (that stream is not
 * bounded). */
struct gq *gq_find(struct gq *tab, int len, void *s);

/*
 * Before a launch on q's stream, under krexd's queue_cap (launches, 0 = off)
 * and queue_time (ns, 0 = launch count only).  May wait.  Returns 1 when
 * gq_after() must record an event after the launch, else 0.
 */
int gq_before(struct gq *q, const struct gq_ops *ops, unsigned cap, uint64_t budget_ns);

/* After a successful launch for which gq_before() returned 1. */
void gq_after(struct gq *q, const struct gq_ops *ops, uint64_t budget_ns);

/*
 * A launch made without the queue (the process held a region: nothing else
 * runs on its GPUs, and the queue's own calls would sit inside what the
 * owner times): no wait, no event, no driver call; it counts toward the next
 * mark, so that what the owner left queued is bounded at its next launches
 * outside the region (from its first mark on).  q may be NULL.
 */
void gq_count(struct gq *q);

#endif /* KREX_GATE_QUEUE_H */
