/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * region_queue_test.c - the queue/lease state machine of krexd, driven
 * without I/O: per-GPU FIFO, multi-GPU all at once, conflicts, EBUSY,
 * leases and queue timeouts, alternation, max_share.
 */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "region_queue.h"
#include "tap.h"
#include "timeutil.h"

#define MS NS_PER_MS

static struct rq_req R[16];

static struct rq_req *req(int i, uint32_t owner, uint64_t mask)
{
	memset(&R[i], 0, sizeof(R[i]));
	R[i].owner = owner;
	R[i].mask = mask;
	R[i].owner_mask = mask;
	return &R[i];
}

/* Start whatever may start now; returns how many. */
static int start_all(struct region_queue *q, uint64_t now)
{
	struct rq_req *r;
	int n = 0;

	while ((r = rq_next(q, now))) {
		rq_start(q, r, now);
		rq_grant(q, r, now);
		n++;
	}
	return n;
}

int main(void)
{
	struct region_queue q;
	struct rq_req *a, *b, *c, *d;
	uint64_t t = 1000 * MS;
	int i, alt = 1;
	uint32_t last = 0;

	plan(35);

	/* FIFO on one GPU, EBUSY, lease cap. */
	rq_init(&q, 500 * MS, 1.0, 0);
	a = req(0, 1, 0x1);
	b = req(1, 2, 0x1);
	ok(rq_submit(&q, a, 0, 0, t) == 0 && a->id == 1, "first request queued, id 1");
	ok(rq_submit(&q, b, 10 * MS, 0, t) == 0 && b->id == 2, "second request queued, id 2");
	ok(rq_submit(&q, req(2, 1, 0x1), 0, 0, t) < 0 && errno == EBUSY,
	   "second request of the same owner: EBUSY");
	ok(a->lease_ns == 500 * MS && b->lease_ns == 10 * MS,
	   "lease: 0 asks for the cap, less is kept");
	ok(rq_next(&q, t) == a, "head of the queue starts first");
	rq_start(&q, a, t);
	ok(rq_next(&q, t) == NULL, "nothing else while the GPU is busy");
	ok(rq_holder(&q, 0) == a && rq_queued_on(&q, 0) == 1, "holder and queue length");
	rq_grant(&q, a, t);
	ok(rq_next_deadline(&q) == t + 500 * MS, "next deadline is the lease");
	ok(rq_expired(&q, t + 499 * MS) == NULL && rq_expired(&q, t + 500 * MS) == a,
	   "lease expires at its deadline");
	rq_remove(&q, a, t + 500 * MS);
	ok(rq_next(&q, t) == b, "after the holder leaves the next starts");
	rq_start(&q, b, t);
	rq_remove(&q, b, t);
	ok(q.head == NULL && q.busy == 0, "queue empty, no GPU busy");

	/* Multi-GPU: all at once, in arrival order, no overtaking. */
	rq_init(&q, 500 * MS, 1.0, 0);
	a = req(0, 1, 0x1);
	b = req(1, 2, 0x3);
	c = req(2, 3, 0x2);
	d = req(3, 4, 0x4);
	rq_submit(&q, a, 0, 0, t);
	rq_submit(&q, b, 0, 0, t);
	rq_submit(&q, c, 0, 0, t);
	rq_submit(&q, d, 0, 0, t);
	ok(start_all(&q, t) == 2 && a->state == RQ_HELD && d->state == RQ_HELD,
	   "GPU 0 and GPU 2 requests start");
	ok(b->state == RQ_QUEUED && c->state == RQ_QUEUED,
	   "the 2-GPU request waits for GPU 0, and the one behind it on GPU 1 waits too");
	rq_remove(&q, a, t);
	ok(start_all(&q, t) == 1 && b->state == RQ_HELD, "2-GPU request takes both at once");
	rq_remove(&q, b, t);
	ok(start_all(&q, t) == 1 && c->state == RQ_HELD, "then the GPU 1 request");

	/* Conflicts: an owner whose other GPU is in a region would be frozen. */
	rq_init(&q, 500 * MS, 1.0, 0);
	a = req(0, 1, 0x1);
	a->owner_mask = 0x3; /* owner 1 uses GPUs 0 and 1, asks for 0 */
	b = req(1, 2, 0x2);  /* owner 2 uses GPU 1: owner 1 is its sibling */
	rq_submit(&q, a, 0, 0, t);
	rq_submit(&q, b, 0, 0, t);
	ok(start_all(&q, t) == 1 && a->state == RQ_HELD && b->state == RQ_QUEUED,
	   "a region whose sibling owns a region waits");
	rq_remove(&q, a, t);
	ok(start_all(&q, t) == 1 && b->state == RQ_HELD, "and starts when that region ends");

	/* Queue timeout. */
	rq_init(&q, 500 * MS, 1.0, 0);
	a = req(0, 1, 0x1);
	b = req(1, 2, 0x1);
	rq_submit(&q, a, 0, 0, t);
	rq_submit(&q, b, 0, 100 * MS, t);
	start_all(&q, t);
	ok(rq_next_deadline(&q) == t + 100 * MS, "next deadline is the queue timeout");
	ok(rq_expired(&q, t + 100 * MS) == b && b->state == RQ_QUEUED, "queued request times out");
	ok(rq_find_id(&q, b->id) == b && rq_find_owner(&q, 1) == a, "find by id and owner");

	/* Alternation: two owners loop begin/end. */
	rq_init(&q, 500 * MS, 1.0, 0);
	a = req(0, 1, 0x1);
	b = req(1, 2, 0x1);
	rq_submit(&q, a, 0, 0, t);
	rq_submit(&q, b, 0, 0, t);
	for (i = 0; i < 10; i++) {
		struct rq_req *r = rq_next(&q, t);
		if (!r || r->owner == last)
			alt = 0;
		last = r ? r->owner : 0;
		if (!r)
			break;
		rq_start(&q, r, t);
		rq_grant(&q, r, t);
		rq_remove(&q, r, t + MS);
		rq_submit(&q, r, 0, 0, t + MS); /* begins again at once: back of the queue */
		t += MS;
	}
	ok(alt, "two looping owners alternate");

	/* A grace (not_before) passes a request over without blocking the next. */
	rq_init(&q, 500 * MS, 1.0, 0);
	a = req(0, 1, 0x1);
	b = req(1, 2, 0x1);
	rq_submit(&q, a, 0, 0, t);
	a->not_before_ns = t + 2 * MS;
	rq_submit(&q, b, 0, 0, t + MS);
	ok(rq_next(&q, t + MS) == b, "a request in its grace is passed over, the next starts");
	ok(rq_next_deadline(&q) == t + 2 * MS && rq_expired(&q, t + 2 * MS) == NULL,
	   "the grace is a wake-up deadline, not an expiry");
	ok(rq_next(&q, t + 2 * MS) == a, "after the grace, FIFO order again");

	/* max_share: an owner over its share is passed over while others wait. */
	rq_init(&q, 10000 * MS, 0.5, 1000 * MS);
	t = 10000 * MS;
	a = req(0, 1, 0x1);
	rq_submit(&q, a, 0, 0, t);
	start_all(&q, t);
	rq_remove(&q, a, t + 800 * MS); /* held 800 of the last 1000 ms */
	t += 800 * MS;
	ok(rq_share(&q, 1, 0x1, t) > 0.79 && rq_share(&q, 1, 0x1, t) < 0.81, "share measured");
	a = req(0, 1, 0x1);
	b = req(1, 2, 0x1);
	rq_submit(&q, a, 0, 0, t);
	ok(rq_next(&q, t) == a, "over its share but nobody waits: it may start");
	rq_submit(&q, b, 0, 0, t);
	ok(rq_next(&q, t) == b, "over its share while another waits: the other goes first");
	ok(rq_share(&q, 1, 0x1, t + 2000 * MS) == 0.0, "the share is forgotten after the window");
	ok(rq_next(&q, t + 2000 * MS) == a, "and FIFO order is back");
	rq_remove(&q, a, t);
	rq_remove(&q, b, t);
	ok(q.head == NULL && q.tail == NULL, "queue empty again");

	/* Chains: the next request within a region's GPUs; a cut's gap. */
	rq_init(&q, 10000 * MS, 1.0, 0);
	t = 20000 * MS;
	a = req(0, 1, 0x3);
	b = req(1, 2, 0x2);
	c = req(2, 3, 0x1);
	rq_submit(&q, a, 0, 0, t);
	start_all(&q, t);
	rq_submit(&q, c, 0, 0, t);
	rq_submit(&q, b, 0, 0, t);
	rq_remove(&q, a, t + MS);
	ok(rq_next_within(&q, t + MS, 0x2) == b && rq_next_within(&q, t + MS, 0x4) == NULL,
	   "within a mask: the first request wanting only those GPUs");
	rq_gap(&q, 0x1, t + 100 * MS);
	ok(rq_next(&q, t + MS) == b, "a GPU in its gap: its request waits, others start");
	ok(rq_next_deadline(&q) == t + 100 * MS, "the gap's end is a wake-up deadline");
	ok(rq_gap_over(&q, t + 99 * MS) == 0 && rq_gap_over(&q, t + 100 * MS) == 1 &&
	           rq_next_deadline(&q) == 0,
	   "the gap is forgotten once over");
	ok(rq_next(&q, t + 100 * MS) == c, "then its request starts");
	rq_remove(&q, b, t);
	rq_remove(&q, c, t);
	return tap_done();
}
