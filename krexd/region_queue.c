/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * region_queue.c - per-GPU FIFO, grant order, leases and fairness
 * (see region_queue.h).
 */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "region_queue.h"

void rq_init(struct region_queue *q, uint64_t max_lease_ns, double max_share,
             uint64_t share_window_ns)
{
	memset(q, 0, sizeof(*q));
	q->next_id = 1;
	q->max_lease_ns = max_lease_ns;
	q->max_share = max_share;
	q->share_window_ns = share_window_ns;
}

int rq_submit(struct region_queue *q, struct rq_req *r, uint64_t want_lease_ns,
              uint64_t queue_timeout_ns, uint64_t now)
{
	if (rq_find_owner(q, r->owner)) {
		errno = EBUSY;
		return -1;
	}
	r->id = q->next_id++;
	r->state = RQ_QUEUED;
	r->enq_ns = now;
	r->queue_deadline_ns = queue_timeout_ns ? now + queue_timeout_ns : 0;
	r->not_before_ns = 0;
	r->lease_ns =
	        want_lease_ns && want_lease_ns < q->max_lease_ns ? want_lease_ns : q->max_lease_ns;
	r->next = NULL;
	r->prev = q->tail;
	if (q->tail)
		q->tail->next = r;
	else
		q->head = r;
	q->tail = r;
	return 0;
}

/* Would starting r disturb active region a, or a disturb r? */
static int rq_conflict(const struct rq_req *r, const struct rq_req *a)
{
	return (a->mask & r->owner_mask) || (r->mask & a->owner_mask);
}

double rq_share(const struct region_queue *q, uint32_t owner, uint64_t mask, uint64_t now)
{
	uint64_t from = now > q->share_window_ns ? now - q->share_window_ns : 0, held = 0;
	const struct rq_req *a;
	unsigned i;

	if (!q->share_window_ns)
		return 0.0;
	for (i = 0; i < RQ_HISTORY; i++) {
		const struct rq_hold *h = &q->hist[i];
		if (h->owner != owner || !(h->mask & mask) || h->end_ns <= from)
			continue;
		held += h->end_ns - (h->start_ns > from ? h->start_ns : from);
	}
	for (a = q->head; a; a = a->next)
		if (a->owner == owner && a->state == RQ_HELD && (a->mask & mask))
			held += now - (a->grant_ns > from ? a->grant_ns : from);
	return (double)held / (double)q->share_window_ns;
}

/* r is over its share while another request waits for one of its GPUs. */
static int rq_deferred(const struct region_queue *q, const struct rq_req *r, uint64_t now)
{
	const struct rq_req *o;

	if (q->max_share >= 1.0)
		return 0;
	for (o = q->head; o; o = o->next)
		if (o != r && o->state == RQ_QUEUED && (o->mask & r->mask))
			break;
	return o && rq_share(q, r->owner, r->mask, now) > q->max_share;
}

/* GPU slots in a gap now. */
static uint64_t rq_gapped(const struct region_queue *q, uint64_t now)
{
	uint64_t m = 0;
	unsigned i;

	for (i = 0; i < 64; i++)
		if (q->gap_until[i] > now)
			m |= 1ULL << i;
	return m;
}

void rq_gap(struct region_queue *q, uint64_t mask, uint64_t until)
{
	unsigned i;

	for (i = 0; i < 64; i++)
		if (mask >> i & 1 && until > q->gap_until[i])
			q->gap_until[i] = until;
}

int rq_gap_over(struct region_queue *q, uint64_t now)
{
	unsigned i;
	int over = 0;

	for (i = 0; i < 64; i++)
		if (q->gap_until[i] && q->gap_until[i] <= now) {
			q->gap_until[i] = 0;
			over = 1;
		}
	return over;
}

struct rq_req *rq_next(struct region_queue *q, uint64_t now)
{
	return rq_next_within(q, now, ~0ULL);
}

struct rq_req *rq_next_within(struct region_queue *q, uint64_t now, uint64_t within)
{
	uint64_t blocked = rq_gapped(q, now); /* GPUs an earlier waiting request stands in
	                                       * line for, and those in a gap */
	struct rq_req *r, *a;

	for (r = q->head; r; r = r->next) {
		if (r->state != RQ_QUEUED)
			continue;
		if (rq_deferred(q, r, now) || now < r->not_before_ns)
			continue;
		if (!(r->mask & (blocked | q->busy)) && !(r->mask & ~within)) {
			for (a = q->head; a; a = a->next)
				if (a->state != RQ_QUEUED && rq_conflict(r, a))
					break;
			if (!a)
				return r;
		}
		blocked |= r->mask;
	}
	return NULL;
}

void rq_start(struct region_queue *q, struct rq_req *r, uint64_t now)
{
	r->state = RQ_ENTERING;
	r->start_ns = now;
	q->busy |= r->mask;
}

void rq_grant(struct region_queue *q, struct rq_req *r, uint64_t now)
{
	r->state = RQ_HELD;
	r->grant_ns = now;
	r->lease_deadline_ns = now + r->lease_ns;
}

void rq_remove(struct region_queue *q, struct rq_req *r, uint64_t now)
{
	if (r->state == RQ_HELD) {
		struct rq_hold *h = &q->hist[q->hist_next++ % RQ_HISTORY];
		h->owner = r->owner;
		h->mask = r->mask;
		h->start_ns = r->grant_ns;
		h->end_ns = now;
	}
	if (r->state != RQ_QUEUED)
		q->busy &= ~r->mask;
	if (r->prev)
		r->prev->next = r->next;
	else
		q->head = r->next;
	if (r->next)
		r->next->prev = r->prev;
	else
		q->tail = r->prev;
	r->next = r->prev = NULL;
}

void rq_requeue(struct region_queue *q, struct rq_req *r)
{
	if (r->state != RQ_QUEUED || q->tail == r)
		return;
	if (r->prev)
		r->prev->next = r->next;
	else
		q->head = r->next;
	r->next->prev = r->prev;
	r->prev = q->tail;
	r->next = NULL;
	q->tail->next = r;
	q->tail = r;
}

/* The first request whose id (by_id) or owner is key, NULL if none. */
static struct rq_req *rq_find(const struct region_queue *q, int by_id, uint64_t key)
{
	struct rq_req *r;

	for (r = q->head; r; r = r->next)
		if ((by_id ? r->id : r->owner) == key)
			return r;
	return NULL;
}

struct rq_req *rq_find_owner(const struct region_queue *q, uint32_t owner)
{
	return rq_find(q, 0, owner);
}

struct rq_req *rq_find_id(const struct region_queue *q, uint64_t id)
{
	return rq_find(q, 1, id);
}

/* The deadline that applies to r in its state, 0 if none. */
static uint64_t rq_deadline(const struct rq_req *r)
{
	if (r->state == RQ_QUEUED)
		return r->queue_deadline_ns;
	if (r->state == RQ_HELD)
		return r->lease_deadline_ns;
	return 0;
}

uint64_t rq_next_deadline(const struct region_queue *q)
{
	uint64_t best = 0, d;
	struct rq_req *r;
	unsigned i;

	for (i = 0; i < 64; i++)
		if (q->gap_until[i] && (!best || q->gap_until[i] < best))
			best = q->gap_until[i];
	for (r = q->head; r; r = r->next) {
		d = rq_deadline(r);
		if (d && (!best || d < best))
			best = d;
		d = r->state == RQ_QUEUED ? r->not_before_ns : 0;
		if (d && (!best || d < best))
			best = d;
	}
	return best;
}

struct rq_req *rq_expired(const struct region_queue *q, uint64_t now)
{
	struct rq_req *r;
	uint64_t d;

	for (r = q->head; r; r = r->next) {
		d = rq_deadline(r);
		if (d && d <= now)
			return r;
	}
	return NULL;
}

unsigned rq_queued_on(const struct region_queue *q, unsigned slot)
{
	struct rq_req *r;
	unsigned n = 0;

	for (r = q->head; r; r = r->next)
		if (r->state == RQ_QUEUED && (r->mask >> slot & 1))
			n++;
	return n;
}

struct rq_req *rq_holder(const struct region_queue *q, unsigned slot)
{
	struct rq_req *r;

	for (r = q->head; r; r = r->next)
		if (r->state != RQ_QUEUED && (r->mask >> slot & 1))
			return r;
	return NULL;
}
