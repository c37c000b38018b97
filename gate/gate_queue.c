/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gate_queue.c - the bounded queue (see gate_queue.h for the rules).
 */
#include "config.h"

#include <limits.h>
#include <string.h>

#include "gate_queue.h"

struct gq *gq_find(struct gq *tab, int len, void *s)
{
	int i;

	for (i = 0; i < len; i++)
		if (tab[i].used && tab[i].stream == s)
			return &tab[i];
	for (i = 0; i < len; i++)
		if (!tab[i].used) {
			memset(&tab[i], 0, sizeof(tab[i]));
			tab[i].used = 1;
			tab[i].stream = s;
			return &tab[i];
		}
	return NULL;
}

static void *gq_ev(struct gq *q, uint64_t seq)
{
	return q->ev[seq % GQ_SLOTS];
}

/* The marks up to q->done have completed: take the samples of those not
 * sampled yet (each closes a span from its predecessor, still in its slot:
 * every caller runs before the next record), a sample of the GPU time per
 * launch when the stream was busy all along (gq_mark(): its predecessor had
 * not completed when it was recorded).  Apart from the completion check, so
 * that a launch that need not wait makes no elapsed-time call before it
 * (gq_before()). */
static void gq_samples(struct gq *q, const struct gq_ops *ops, uint64_t budget_ns)
{
	uint64_t seq;

	for (seq = q->sampled + 1; seq <= q->done; seq++) {
		float ms = 0;
		unsigned n = q->n[seq % GQ_SLOTS];
		uint64_t t;

		if (budget_ns && q->busy[seq % GQ_SLOTS] && n && ops->elapsed &&
		    ops->elapsed(&ms, gq_ev(q, seq - 1), gq_ev(q, seq)) == 0 && ms > 0) {
			t = (uint64_t)((double)ms * 1e6 / n);
			/* a mark given up on may hold host time: it at most
			 * doubles the estimate (a stream slow by sharing still
			 * learns its time) */
			if (seq == q->gave_seq && q->est_ns && t > 2 * q->est_ns)
				t = 2 * q->est_ns;
			q->est_ns = t;
		}
	}
	q->sampled = q->done;
}

/* Take what has completed, in order, without waiting: one query per mark
 * found complete and one for the first that is not.  0, or -1 (broken). */
static int gq_collect(struct gq *q, const struct gq_ops *ops)
{
	int r;

	while (q->rec > q->done) {
		r = ops->query(gq_ev(q, q->done + 1));
		if (r < 0) {
			q->broken = 1;
			return -1;
		}
		if (!r)
			break;
		q->done++;
	}
	return 0;
}

/* Launches covered by the outstanding events. */
static uint64_t gq_queued(const struct gq *q)
{
	uint64_t s, sum = 0;

	for (s = q->done + 1; s <= q->rec; s++)
		sum += q->n[s % GQ_SLOTS];
	return sum;
}

static int gq_mark(struct gq *q, const struct gq_ops *ops, unsigned n, uint64_t budget_ns);

/* How long to wait for the oldest mark before giving up (gate_queue.h). */
static uint64_t gq_wait_limit(const struct gq *q)
{
	uint64_t t = GQ_WAIT_FACTOR * q->n[(q->done + 1) % GQ_SLOTS] * q->est_ns;

	return t < GQ_WAIT_MAX_NS ? GQ_WAIT_MAX_NS : t > GQ_WAIT_CAP_NS ? GQ_WAIT_CAP_NS : t;
}

/* When the wait for the oldest mark becomes suspect (gate_queue.h). */
static uint64_t gq_suspect(const struct gq *q)
{
	uint64_t t = GQ_WAIT_FACTOR * q->n[(q->done + 1) % GQ_SLOTS] * q->est_ns;

	if (!q->est_ns)
		return GQ_SUSPECT_UNTIMED_NS;
	return t < GQ_SUSPECT_MIN_NS ? GQ_SUSPECT_MIN_NS : t;
}

/* Launches let through without waiting after a give-up (gate_queue.h). */
static unsigned gq_held_max(const struct gq *q)
{
	uint64_t n;

	if (!q->est_ns)
		return GQ_HELD_MAX;
	n = GQ_WAIT_MAX_NS / q->est_ns;
	return n < 1 ? 1 : n > GQ_HELD_MAX ? GQ_HELD_MAX : (unsigned)n;
}

/* 1 when the launch about to be made must wait for the oldest mark first. */
static int gq_must_wait(const struct gq *q, uint64_t budget_ns)
{
	uint64_t out = q->rec - q->done;

	if (!out)
		return 0;
	if (out >= GQ_DEPTH)
		return 1;
	return budget_ns && q->est_ns && (gq_queued(q) + q->pending) * q->est_ns > budget_ns;
}

int gq_before(struct gq *q, const struct gq_ops *ops, unsigned cap, uint64_t budget_ns)
{
	int r;

	if (!q || q->broken || !cap)
		return 0;
	if (!q->stride) {
		q->stride = cap;
		/* A mark before the first launch: the first mark's completion
		 * is then a time sample (else only the second's is). */
		if (budget_ns && !(ops->capturing && ops->capturing(q->stream)) &&
		    ops->create(&q->ev[0], 1) == 0)
			q->start_mark = ops->record(q->ev[0], q->stream) == 0;
	}
	if (++q->pending < q->stride && !q->held)
		return 0;
	if (ops->capturing && ops->capturing(q->stream))
		return 0; /* launches stay pending; graph replays are bounded like any launch */
	/* No wait needed even if nothing outstanding has completed (what
	 * gq_after() found, after the last mark's launch): no driver call
	 * before this launch, which may be inside an interval its thread
	 * times (a cuEventRecord just before it); gq_after() collects. */
	if (!q->held && !gq_must_wait(q, budget_ns))
		return 1;
	/* Collect what has finished without waiting (free slots); the
	 * samples wait for gq_after() unless a wait or a give-up needs them. */
	if (gq_collect(q, ops) < 0)
		return 0;
	if (q->held) {
		gq_samples(q, ops, budget_ns); /* gq_held_max() uses the estimate */
		/* gave up on this stream: no waiting, no mark, until the work
		 * before its marks (released by the host?) has completed, for at
		 * most gq_held_max() launches */
		if (q->rec > q->done && ++q->held <= gq_held_max(q))
			return 0;
		q->held = 0;
		if (q->pending < q->stride && q->rec == q->done)
			return 0;
		/* The launches let through get a mark of their own (before
		 * this one), so that the waits below bound them too. */
		if (q->pending > 1 && q->rec - q->done < GQ_DEPTH &&
		    gq_mark(q, ops, q->pending - 1, budget_ns) != 0)
			return 0;
	}
	if (gq_must_wait(q, budget_ns))
		gq_samples(q, ops, budget_ns); /* it waits: with the latest estimate */
	while (gq_must_wait(q, budget_ns)) {
		q->waits++;
		r = ops->wait ? ops->wait(gq_ev(q, q->done + 1), gq_wait_limit(q), gq_suspect(q))
		              : ops->sync(gq_ev(q, q->done + 1)) == 0;
		if (r < 0) {
			q->broken = 1;
			return 0;
		}
		if (!r) {
			q->gave_up++;
			q->held = 1;
			q->gave_seq = q->done + 1;
			/* Not timed yet: the wait itself says its launches take
			 * at least limit / n each, unless the host holds them. */
			if (budget_ns && !q->est_ns)
				q->est_ns = gq_wait_limit(q) / (q->n[(q->done + 1) % GQ_SLOTS] + 1);
			return 0;
		}
		q->done++;
		gq_samples(q, ops, budget_ns);
		q->waited_out = q->done == q->rec;
	}
	return 1;
}

/* Record the next mark, closing n of the pending launches: 0, or -1 (broken). */
static int gq_mark(struct gq *q, const struct gq_ops *ops, unsigned n, uint64_t budget_ns)
{
	uint64_t seq = q->rec + 1;
	void **ev = &q->ev[seq % GQ_SLOTS];
	int busy = 0;

	if (!*ev && ops->create(ev, budget_ns != 0) != 0) {
		*ev = NULL;
		q->broken = 1;
		return -1;
	}
	/* Its launches were all queued before the previous mark completed:
	 * from that mark to this one the stream never idled, and the time
	 * between them is GPU time (else it may hold a host pause: an XLA
	 * compile of 20 s between two autotuning candidates made one
	 * launch's estimate seconds on the H200, and with it the waits
	 * never suspect and 80 ms long, past the delay kernel's timeout).
	 * A predecessor that gq_before() just waited for counts as busy:
	 * the stream idled only for this thread's launches since.  Every
	 * caller collected just before (gq_collect()), and a stream's marks
	 * complete in order: the last is outstanding when any is. */
	if (budget_ns && seq == 1)
		busy = q->start_mark; /* recorded just before the first launch */
	else if (budget_ns)
		busy = q->waited_out || q->rec > q->done;
	q->waited_out = 0;
	if (ops->record(*ev, q->stream) != 0) {
		/* Nothing recorded: the launches stay pending for the next mark. */
		q->broken = 1;
		return -1;
	}
	q->n[seq % GQ_SLOTS] = n;
	q->busy[seq % GQ_SLOTS] = busy;
	q->pending -= n;
	q->rec = seq;
	return 0;
}

void gq_after(struct gq *q, const struct gq_ops *ops, uint64_t budget_ns)
{
	uint64_t stride;

	/* After the launch (its kernel already queued): what completed, and
	 * its samples, before the record reuses a slot. */
	if (gq_collect(q, ops) < 0)
		return;
	gq_samples(q, ops, budget_ns);
	if (gq_mark(q, ops, q->pending, budget_ns) != 0)
		return;
	if (budget_ns && q->est_ns) {
		stride = budget_ns / (2 * q->est_ns);
		if (stride > 2 * (uint64_t)q->stride)
			stride = 2 * (uint64_t)q->stride;
		q->stride = stride < 1               ? 1
		            : stride > GQ_MAX_STRIDE ? GQ_MAX_STRIDE
		                                     : (unsigned)stride;
	}
}

void gq_count(struct gq *q)
{
	/* A queue not started yet (no launch outside a region so far) starts
	 * afresh at its first launch: its start mark then times only that. */
	if (q && q->stride && !q->broken && q->pending < UINT_MAX / 2)
		q->pending++;
}
