/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * region_queue.h - which region may start next, and when one runs out.
 *
 * No I/O and no clock of its own (the caller passes now), so a unit test can
 * drive it.  GPUs are bits of a 64-bit mask (gate page slots).
 *
 * Per-GPU FIFO: requests are kept in arrival order; a request may start when
 * no earlier waiting request wants one of its GPUs (it is at the head of
 * every GPU queue it is in), none of its GPUs is held, and it does not
 * conflict with a region in progress: its owner is not a sibling of that
 * region (it would be frozen), and that region's owner is not one of its
 * siblings.  Multi-GPU requests take all their GPUs at once or wait.
 *
 * Fairness: a participant that ends a region and begins again joins the back
 * of the queue, so two looping participants alternate.  A request whose
 * not_before_ns is still ahead is passed over without holding up the
 * requests behind it (the caller's grace for thawed siblings).  With max_share < 1 a
 * participant that held GPUs more than max_share of the last share_window
 * while someone waits for one of them is passed over (it stays queued).
 */
#ifndef KREXD_REGION_QUEUE_H
#define KREXD_REGION_QUEUE_H

#include <stddef.h>
#include <stdint.h>

enum rq_state { RQ_QUEUED = 0, RQ_ENTERING, RQ_HELD };

struct rq_req {
	uint64_t id;
	uint32_t owner;      /* participant id */
	uint64_t mask;       /* the region's GPUs */
	uint64_t owner_mask; /* every GPU of the owner (its siblings' reach) */
	uint64_t enq_ns;
	uint64_t queue_deadline_ns; /* 0: none */
	uint64_t not_before_ns;     /* may not start before this (a fairness grace), 0: none */
	uint64_t lease_ns;          /* granted lease length */
	uint64_t start_ns;          /* entering began */
	uint64_t grant_ns;
	uint64_t lease_deadline_ns;
	int state;
	void *data; /* the caller's */
	struct rq_req *next, *prev;
};

#define RQ_HISTORY 256

struct rq_hold {
	uint32_t owner;
	uint64_t mask;
	uint64_t start_ns, end_ns;
};

struct region_queue {
	struct rq_req *head, *tail; /* arrival order */
	uint64_t busy;              /* GPUs of regions entering or held */
	uint64_t next_id;
	uint64_t max_lease_ns;
	double max_share;
	uint64_t share_window_ns;
	struct rq_hold hist[RQ_HISTORY]; /* ring of finished holds, for max_share */
	unsigned hist_next;
	uint64_t gap_until[64]; /* per GPU slot: no region starts there before this (chain cut) */
};

void rq_init(struct region_queue *q, uint64_t max_lease_ns, double max_share,
             uint64_t share_window_ns);

/*
 * Queue r (owner, mask, owner_mask set by the caller).  want_lease_ns 0 asks
 * for the cap; more than the cap is cut to it.  Assigns r->id.  Returns 0, or
 * -1 with errno EBUSY when the owner already has a request queued or held.
 */
int rq_submit(struct region_queue *q, struct rq_req *r, uint64_t want_lease_ns,
              uint64_t queue_timeout_ns, uint64_t now);

/* The first request that may start now, or NULL. */
struct rq_req *rq_next(struct region_queue *q, uint64_t now);

/* The first request that may start now and wants only GPUs of within, or NULL
 * (requests for other GPUs still hold up those behind them on theirs). */
struct rq_req *rq_next_within(struct region_queue *q, uint64_t now, uint64_t within);

/* No region starts on the GPUs of mask before until (a chain was cut: the
 * siblings' turn, doc/design.md "Chained regions"). */
void rq_gap(struct region_queue *q, uint64_t mask, uint64_t until);

/* Forget the gaps that are over; 1 when one was (requests may start now). */
int rq_gap_over(struct region_queue *q, uint64_t now);

/* r starts entering (gates close): its GPUs become busy. */
void rq_start(struct region_queue *q, struct rq_req *r, uint64_t now);

/* r is granted: its lease runs from now. */
void rq_grant(struct region_queue *q, struct rq_req *r, uint64_t now);

/* Move queued r behind every other request (the caller's fairness tie-break). */
void rq_requeue(struct region_queue *q, struct rq_req *r);

/* r leaves the queue (ended, revoked, cancelled); its GPUs are free again. */
void rq_remove(struct region_queue *q, struct rq_req *r, uint64_t now);

/* The request of owner, or NULL. */
struct rq_req *rq_find_owner(const struct region_queue *q, uint32_t owner);
struct rq_req *rq_find_id(const struct region_queue *q, uint64_t id);

/* The earliest queue, lease or gap deadline, 0 if none. */
uint64_t rq_next_deadline(const struct region_queue *q);

/* A request whose queue timeout (queued) or lease (held) has passed, or NULL. */
struct rq_req *rq_expired(const struct region_queue *q, uint64_t now);

/* Waiting requests on GPU slot; the holder's request (entering or held) or NULL. */
unsigned rq_queued_on(const struct region_queue *q, unsigned slot);
struct rq_req *rq_holder(const struct region_queue *q, unsigned slot);

/* Fraction of the last share_window owner held GPUs of mask (0..1). */
double rq_share(const struct region_queue *q, uint32_t owner, uint64_t mask, uint64_t now);

#endif /* KREXD_REGION_QUEUE_H */
