/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * region_defer.c - a region about to close its gates while siblings are
 * making GPU contexts waits for them, the gates still open (krexd.conf(5)
 * ctx_defer; doc/design.md "Contexts being made at a close").  Making a
 * context is many driver calls: the freeze stops it at its next return to
 * user space and it finishes only after the region, and on an H100 over MPS
 * at 32 sessions such a context took 1.0-1.5 s against 0.2-0.5 s
 * uninterrupted (notebook/h200-session-35).  The gate says when a member
 * process begins and ends making contexts (CTX_MAKING); a region waits only
 * for those begun before it first could start and less than ctx_defer ago,
 * at most ctx_defer from then, and never again after.  While it waits, new
 * contexts on its GPUs are held at their gates (gate page ctx_by, as while
 * the gates are closed): without that, contexts begun during the wait were
 * cut at the close all the same.  Letting the drain wait instead (the gate's
 * KREX_GATE_CONTEXTS=finish) kept the gates closed that long: slower.
 */
#include "config.h"

#include <stdlib.h>

#include "conn.h"
#include "history.h"
#include "log.h"
#include "part.h"
#include "region_int.h"
#include "timeutil.h"

/*
 * Members of r's siblings making contexts since before t0 (r's first look)
 * and for less than bound (one that claims longer is waited for by no
 * region: a member that never says it made them delays regions only within
 * bound of its claim); *until: when the youngest of them turns bound old.
 */
static unsigned defer_makers(struct krexd *k, const struct region *r, uint64_t t0, uint64_t now,
                             uint64_t bound, uint64_t *until)
{
	const struct conn *c;
	unsigned n = 0;

	*until = 0;
	for (c = k->conns; c; c = c->next)
		if (!c->dead && c->gate && c->ctx_since && c->ctx_since <= t0 &&
		    c->ctx_since + bound > now && c->part && c->part->id != r->owner &&
		    (c->part->mask & r->rq.mask)) {
			n++;
			if (c->ctx_since + bound > *until)
				*until = c->ctx_since + bound;
		}
	return n;
}

/*
 * Test hook (HACKING.md "Flakes"): KREX_TEST_CTX_DEFER_MS=N in krexd's
 * environment: a ctx_defer that is not 0 is N ms instead, beyond its 2 s
 * cap, so that a test's steps during a region's wait for contexts need not
 * fit ctx_defer whatever the load (test/gate/context_defer.sh); the wait
 * then ends on the events alone: the contexts made, their process gone, the
 * region gone.
 */
static uint64_t test_ctx_defer(uint64_t bound)
{
	static long long ms = -1;
	const char *e;

	if (ms < 0) {
		e = getenv("KREX_TEST_CTX_DEFER_MS");
		ms = e ? atoll(e) : 0;
		if (ms < 0 || ms > 24LL * 3600 * 1000)
			ms = 0;
		if (ms)
			log_info("test hook KREX_TEST_CTX_DEFER_MS=%lld: ctx_defer is %lld ms", ms,
			         ms);
	}
	return bound && ms ? (uint64_t)ms * NS_PER_MS : bound;
}

int region_ctx_defer(struct krexd *k, struct region *r, uint64_t now)
{
	uint64_t bound = test_ctx_defer(k->cfg.ctx_defer_ns), until = 0;
	unsigned n;

	if (!bound)
		return 0;
	if (!r->defer_t0) {
		r->defer_t0 = now;
		r->defer_nb = r->rq.not_before_ns;
	}
	n = now < r->defer_t0 + bound ? defer_makers(k, r, r->defer_t0, now, bound, &until) : 0;
	if (until <= now)
		n = 0; /* never a not_before in the past: region_schedule() would loop */
	if (!n) {
		if (r->deferred) {
			history_ctx_defer(now - r->defer_t0);
			log_debug(
			        "region %llu: the contexts being made at its start are made (or %llu ms passed): it starts after %llu us",
			        (unsigned long long)r->rq.id,
			        (unsigned long long)(bound / NS_PER_MS),
			        (unsigned long long)((now - r->defer_t0) / NS_PER_US));
		}
		r->deferred = 0;
		return 0;
	}
	if (!r->deferred) {
		size_t i;

		for (i = 0; i < k->ngpus; i++)
			if (r->rq.mask >> i & 1 &&
			    gatectl_hold_ctx(&k->gate, (unsigned)i, r->owner))
				r->defer_held |= 1ULL << i;
		log_debug(
		        "region %llu: %u sibling process(es) making GPU contexts: its gates close when they are made, at most %llu ms; new contexts wait",
		        (unsigned long long)r->rq.id, n, (unsigned long long)(bound / NS_PER_MS));
	}
	r->deferred = 1;
	/* rq_next() passes it over until then (a fairness grace it had stays) */
	r->rq.not_before_ns = until > r->defer_nb ? until : r->defer_nb;
	return 1;
}

void region_ctx_gone(struct krexd *k, struct region *r)
{
	size_t i;

	if (r->deferred) /* it left the queue while it waited */
		history_ctx_defer(time_now_ns() - r->defer_t0);
	r->deferred = 0;
	if (!r->defer_held)
		return;
	for (i = 0; i < k->ngpus; i++)
		if (r->defer_held >> i & 1)
			gatectl_unhold_ctx(&k->gate, (unsigned)i, r->owner);
	r->defer_held = 0;
	log_debug(
	        "region %llu: left the queue before its start: new GPU contexts may be made again",
	        (unsigned long long)r->rq.id);
}

void region_ctx_making(struct krexd *k, struct conn *c, int on)
{
	struct region *r;

	if (on) {
		if (!c->ctx_since)
			c->ctx_since = time_now_ns();
		return;
	}
	if (!c->ctx_since)
		return;
	c->ctx_since = 0;
	/* the regions waiting for contexts look again this loop turn */
	for (r = regions; r; r = r->next)
		if (r->deferred && r->phase == PH_QUEUED) {
			r->rq.not_before_ns = r->defer_nb;
			k->resched = 1;
		}
}
