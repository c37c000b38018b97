/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * region.c - the region entry sequence (doc/design.md "The region entry
 * sequence", doc/architecture.md "Region entry"): close gates, wait for drain
 * acks, freeze, isolate, grant; and the way out: isolation undo, thaw, open
 * gates, certificate.  Driven by the epoll loop: nothing here blocks.
 * This file: begin, the schedule, chains, the end (region_finish), ticks,
 * status, and the events of part.c; the steps are in region_entry.c,
 * region_unwind.c and region_judge.c (region_int.h).
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gpuprocs.h"
#include "mover.h"
#include "region_int.h"
#include "gpuslot.h"
#include "outbox.h"
#include "quota.h"
#include "history.h"
#include "isolate.h"
#include "sign.h"
#include "log.h"
#include "timeutil.h"

static void region_finish(struct krexd *k, struct region *r, int why, const char *who);

/* ---- begin ---- */

int region_begin(struct krexd *k, struct conn *c, uint32_t seq, const struct proto_region_begin *b)
{
	struct part *p = c->part;
	uint64_t mask, qt = k->cfg.queue_timeout_ns, now = time_now_ns(), wait_ns = 0, lease;
	struct uacct *ua;
	struct region *r;
	unsigned i;
	int s;

	if (!p)
		return conn_error(k, c, seq, KREX_ENOTREG, "register before beginning a region");
	if (c->region || rq_find_owner(&k->rq, p->id))
		return conn_error(k, c, seq, KREX_EBUSY,
		                  "participant %u already holds or waits for a region", p->id);
	mask = b->gpus.n ? 0 : p->mask;
	for (i = 0; i < b->gpus.n; i++) {
		s = gpu_slot(k, b->gpus.name[i], 0);
		if (s < 0 || !(p->mask >> s & 1))
			return conn_error(k, c, seq, KREX_ENOGPU,
			                  "GPU %s is not one of participant %u's", b->gpus.name[i],
			                  p->id);
		mask |= 1ULL << s;
	}
	if (!mask)
		return conn_error(k, c, seq, KREX_ENOGPU, "participant %u has no GPUs", p->id);
	ua = uacct_get(k, p->uid);
	if (!ua)
		return conn_error(k, c, seq, KREX_ENOMEM, "out of memory");
	if (p->uid != 0 && ua->queued >= k->cfg.max_queued_per_uid)
		return conn_error(k, c, seq, KREX_ELIMIT,
		                  "uid %u has %u regions queued or held (max_queued_per_uid)",
		                  (unsigned)p->uid, ua->queued);
	if (uacct_region_allowed(k, ua, now, &wait_ns) < 0)
		return conn_error(
		        k, c, seq, KREX_ELIMIT,
		        "uid %u used its region time for this minute (region_time_per_uid); next in %llu ms",
		        (unsigned)p->uid, (unsigned long long)(wait_ns / NS_PER_MS));
	/* a huge max_us saturates to krexd's cap (max_region), never wraps to a tiny lease */
	lease = time_us_to_ns(b->max_us);
	if (k->cfg.region_time_per_uid && p->uid != 0) {
		uint64_t left = k->cfg.region_time_per_uid - ua->win_used_ns;
		if (!lease || lease > left)
			lease = left;
	}
	if (b->timeout_ms && (uint64_t)b->timeout_ms * NS_PER_MS < qt)
		qt = (uint64_t)b->timeout_ms * NS_PER_MS;
	r = calloc(1, sizeof(*r));
	if (!r)
		return conn_error(k, c, seq, KREX_ENOMEM, "out of memory");
	r->rq.owner = p->id;
	r->rq.mask = mask;
	r->rq.owner_mask = p->mask;
	r->rq.data = r;
	r->conn = c;
	/* a kept connection (libregion's, between regions): from the BEGIN's first byte */
	r->conn_ns = c->regions++ ? c->msg_ns : c->accepted_ns;
	r->seq = seq;
	r->owner = p->id;
	if (rq_submit(&k->rq, &r->rq, lease, qt, now) < 0) {
		free(r);
		return conn_error(k, c, seq, KREX_EBUSY, "participant %u already has a region",
		                  p->id);
	}
	c->region = r;
	r->uid = p->uid;
	r->pid = p->pid;
	r->job = p->job;
	r->step = p->step;
	snprintf(r->label, sizeof(r->label), "%s", p->label);
	ua->queued++;
	r->next = regions;
	regions = r;
	log_debug("region %llu: participant %u queued", (unsigned long long)r->rq.id, p->id);
	r->turn = k->turn;
	p->asked++;
	if (p->end_thawed_askers && r->rq.enq_ns < p->last_end_ns + KREXD_FAIR_GRACE_NS)
		r->rq.not_before_ns = p->last_end_ns + KREXD_FAIR_GRACE_NS;
	k->resched = 1; /* decided at the end of the loop turn */
	return 0;
}

/*
 * region_time_per_uid, charged when the region leaves its queue or is
 * granted chained (quota.c): its lease is cut to what its uid has left.  With nothing left its owner
 * gets error 14 and the region is dropped (-1).
 */
static int region_quota_take(struct krexd *k, struct region *r, uint64_t now)
{
	uint64_t wait_ns = 0;
	struct conn *c = r->conn;

	if (uacct_region_start(k, r->uid, &r->rq.lease_ns, now, &r->quota_ns, &r->quota_win,
	                       &wait_ns) == 0)
		return 0;
	log_info("region %llu of uid %u: refused at its turn: region_time_per_uid used",
	         (unsigned long long)r->rq.id, (unsigned)r->uid);
	if (c) {
		conn_error(
		        k, c, r->seq, KREX_ELIMIT,
		        "uid %u used its region time for this minute (region_time_per_uid); next in %llu ms",
		        (unsigned)r->uid, (unsigned long long)(wait_ns / NS_PER_MS));
		c->region = NULL;
		r->conn = NULL;
	}
	region_finish(k, r, END_GONE, "region_time_per_uid");
	return -1;
}

/*
 * Test hook (HACKING.md "Tests that wait on events"): with
 * KREX_TEST_GRANT_QUEUED=N in krexd's environment, the first region of
 * krexd's life is granted only once N requests are queued, so that a test
 * of chained regions has a request queued behind the first one whatever
 * the machine's load (test/gpu/settle.sh's chain mode).  1: hold now.
 */
static int test_grant_held(struct krexd *k)
{
	static int want = -1;
	const struct rq_req *q;
	const char *e;
	int n = 0;

	if (want < 0) {
		e = getenv("KREX_TEST_GRANT_QUEUED");
		want = e ? atoi(e) : 0;
		/* said at the first look, whether or not the requests are queued by
		 * then (a test waits on this line, not on the load) */
		if (want > 0)
			log_info(
			        "test hook KREX_TEST_GRANT_QUEUED=%d: the first grant waits for %d queued requests",
			        want, want);
	}
	if (want <= 0)
		return 0;
	if (k->regions_total)
		want = 0;
	for (q = k->rq.head; q && want > 0; q = q->next)
		n += q->state == RQ_QUEUED;
	if (n >= want || want <= 0) {
		want = 0;
		return 0;
	}
	return 1;
}

/*
 * Start every region that may start.  Called once per loop turn, after the
 * turn's events and whatever was readable already (krexd.c), so that
 * requests sent while a region was ending are all queued before the next
 * grant is decided.  Fairness tie-break: a participant whose region ended in
 * this turn and that begins again in this turn goes behind every other
 * request of the turn.  Why: epoll reports a level-triggered fd again at the
 * tail of its ready list, so the owner's END and new BEGIN can come ahead of
 * a waiting sibling's BEGIN that was sent earlier (seen in the fairness test).
 */
void region_schedule(struct krexd *k)
{
	struct region *r, *late[64];
	struct rq_req *q;
	struct part *p;
	size_t n = 0, i;
	uint64_t now;

	k->resched = 0;
	if (k->stopping)
		return;
	for (q = k->rq.head; q && n < 64; q = q->next) {
		r = q->data;
		if (q->state == RQ_QUEUED && r->turn == k->turn &&
		    (p = part_find_id(k, r->owner)) && p->ended_turn == k->turn)
			late[n++] = r;
	}
	for (i = 0; i < n; i++)
		rq_requeue(&k->rq, &late[i]->rq);
	now = time_now_ns();
	if (test_grant_held(k))
		return;
	while ((q = rq_next(&k->rq, now))) {
		if (region_ctx_defer(k, q->data, now))
			continue; /* siblings' contexts being made: passed over until made */
		if (region_quota_take(k, q->data, now) < 0)
			continue; /* refused and removed from the queue */
		rq_start(&k->rq, q, now);
		region_close(k, q->data, now, NULL);
		region_drain_or_freeze(k, q->data);
	}
}

/*
 * Chained regions (doc/design.md "Chained regions"): a held region r ends
 * while another waits for (some of) its GPUs.  The next one is granted at
 * once, without a thaw-freeze cycle and without a settle: r's siblings
 * stay frozen, r's owner and participants that joined during r are drained
 * and frozen as new siblings.  Not when the chain has run chain_max: it is
 * cut, the GPUs open, and no region starts on them for chain_gap (the
 * siblings' turn).  r has left the region queue (rq_gone) when this returns
 * the next region; NULL when r ends as usual.
 */
static struct region *region_chain_next(struct krexd *k, struct region *r, uint64_t now)
{
	struct rq_req *q;

	if (k->stopping || !k->cfg.chain_max_ns || r->phase != PH_HELD)
		return NULL;
	rq_remove(&k->rq, &r->rq, now);
	r->rq_gone = 1;
	for (;;) {
		q = rq_next_within(&k->rq, now, r->rq.mask);
		if (!q)
			return NULL;
		if (now - r->chain_t0 >= k->cfg.chain_max_ns) {
			rq_gap(&k->rq, r->rq.mask, now + k->cfg.chain_gap_ns);
			log_debug(
			        "region %llu: chain cut after %u chained, %llu ms (chain_max): no region on its GPUs for %llu ms (chain_gap)",
			        (unsigned long long)r->rq.id, r->chained,
			        (unsigned long long)((now - r->chain_t0) / NS_PER_MS),
			        (unsigned long long)(k->cfg.chain_gap_ns / NS_PER_MS));
			return NULL;
		}
		if (region_quota_take(k, q->data, now) == 0)
			return q->data;
	}
}

/* Grant next at the end of r, chained (region_chain_next). */
static void region_chain(struct krexd *k, struct region *r, struct region *next, uint64_t now)
{
	size_t i;

	next->chained = r->chained + 1;
	next->chain_t0 = r->chain_t0;
	next->chain_own = next->owner == r->owner;
	region_unwind_iso(k, r);
	rq_start(&k->rq, &next->rq, now);
	region_close(k, next, now, r);
	for (i = 0; i < next->nsibs; i++) {
		struct sib *s = &next->sibs[i];
		if (s->carried && sib_freeze_prepare(k, next, s)) {
			s->started = s->frozen = 1; /* r froze it: it stays */
		} else
			s->carried = 0;
	}
	region_unwind_rest(k, r, next->rq.mask);
	log_debug("region %llu: chained to region %llu (participant %u), %u in its chain",
	          (unsigned long long)r->rq.id, (unsigned long long)next->rq.id, next->owner,
	          next->chained + 1);
	region_drain_or_freeze(k, next);
}

/*
 * Regions that ended and whose certificate waits for the process list their
 * start asked for (gpuprocs.c): out of `regions` and the queue, their GPUs
 * and siblings given back already; certified when the list comes, or at
 * procs_deadline without it (region_finish_cert).
 */
static struct region *ending;

static void ending_unlink(struct region *r)
{
	struct region **pp;

	for (pp = &ending; *pp; pp = &(*pp)->next)
		if (*pp == r) {
			*pp = r->next;
			break;
		}
}

/*
 * The certificate of r, which ended (region_finish): judged, recorded, sent
 * to its owner (CERT for its END, ERROR for a queued request that timed
 * out) or kept for its END (revoked); then r is freed.
 */
static void region_finish_cert(struct krexd *k, struct region *r)
{
	struct conn *c = r->conn;
	int why = r->end_why;
	union proto_body m;

	region_ctx_release(k, r); /* the end's list, if any, is in */
	region_certify(k, r, why, r->end_who[0] ? r->end_who : NULL, r->end_ns);
	log_debug("region %llu ends (%d): outcome %u, held %llu us", (unsigned long long)r->rq.id,
	          why, r->cert.outcome, (unsigned long long)r->cert.held_us);
	region_record(k, r, why, r->end_ns);
	if (c) {
		if (r->phase == PH_QUEUED && why == END_TIMEOUT)
			conn_error(k, c, r->seq, KREX_ETIMEDOUT,
			           "no grant within the queue timeout");
		else if (r->phase != PH_HELD && why != END_GONE && why != END_BY_OWNER)
			conn_error(k, c, r->seq, why == END_STOP ? KREX_ESHUTDOWN : KREX_ENOREGION,
			           "region %llu %s before the grant", (unsigned long long)r->rq.id,
			           why == END_STOP ? "stopped" : "released");
		else if (why == END_BY_OWNER || r->end_asked) {
			memset(&m, 0, sizeof(m));
			m.cert = r->cert;
			conn_send(k, c, PROTO_CERT, r->end_asked ? r->end_seq : r->seq, &m);
			region_sign(k, r);
		} else if (why != END_GONE) {
			c->expired = r->cert;
			c->have_expired = 1;
			region_sign(k, r);
		}
	}
	free(r->sibs);
	free(r->late);
	free(r->pending);
	free(r->undo);
	free(r->undo_fd);
	free(r->start_res);
	free(r);
}

/* The process list of a region still held, or one that ended (then certified now). */
void region_procs_event(struct krexd *k)
{
	struct gp_result *res, *next;
	struct region *r;
	int ended = 0;

	for (res = gp_take(); res; res = next) {
		next = res->next;
		for (r = regions; r && r->procs_ticket != res->ticket; r = r->next)
			;
		if (!r)
			for (r = ending, ended = 1; r && r->procs_ticket != res->ticket;
			     r = r->next)
				;
		if (r) { /* else its region ended without it: dropped */
			if (region_procs_done(k, r, res))
				res = NULL; /* kept for the settle */
			if (ended && r->late_pending) {
				r->late_pending = 0;
				region_late_judge(k, r); /* the end's list, asked for now */
			}
			if (ended && !r->procs_ticket) {
				ending_unlink(r);
				log_debug(
				        "region %llu: its certificate waited %llu us for the process list",
				        (unsigned long long)r->rq.id,
				        (unsigned long long)us(time_now_ns() - r->end_ns));
				region_finish_cert(k, r);
			}
		}
		ended = 0;
		free(res);
	}
	if (gp_recovered())
		log_info(
		        "NVML's process list answers again: the requests that waited for it are done");
}

/* Ended regions whose list has not come by their deadline (or all, now). */
static void region_procs_expire(struct krexd *k, uint64_t now, int all)
{
	struct region *r, *next;

	for (r = ending; r; r = next) {
		next = r->next;
		if (!all && now < r->procs_deadline)
			continue;
		ending_unlink(r);
		region_procs_lost(k, r);
		region_finish_cert(k, r);
	}
}

/*
 * End r for why: undo everything it did, give back its place in the queue
 * and its GPUs (a chained region starts now), then its certificate
 * (region_finish_cert), at once or, when the process list its start asked
 * for has not come, once it comes.  who says who released it.
 */
static void region_finish(struct krexd *k, struct region *r, int why, const char *who)
{
	uint64_t now = time_now_ns();
	struct conn *c = r->conn;
	struct region *next;
	struct part *p;

	region_ctx_gone(k, r);
	if (r->phase == PH_HELD) {
		/* What it held, charged before a chained region's check of the
		 * uid's time; the lease charged at the grant is given back. */
		uacct_region_end(k, r->uid, r->quota_ns, r->quota_win,
		                 us(now - r->rq.grant_ns) * NS_PER_US, now);
		r->quota_ns = 0;
	}
	if (r->phase != PH_QUEUED) {
		/* The GPU as the region leaves it: before the thaw (or the chained
		 * grant) lets other work (and power) on it. */
		if (r->phase == PH_HELD)
			region_telemetry_end(k, r);
		if ((next = region_chain_next(k, r, now)))
			region_chain(k, r, next, now);
		else
			region_unwind(k, r);
		region_cost_log(k, r);
	}
	if (c)
		c->region = NULL;
	if (r->phase != PH_QUEUED && (p = part_find_id(k, r->owner))) {
		struct part *s;
		size_t i;
		p->ended_turn = k->turn;
		p->last_end_ns = now;
		p->end_thawed_askers = 0;
		for (i = 0; i < r->nsibs; i++)
			if ((s = part_find_id(k, r->sibs[i].part)) && s->asked)
				p->end_thawed_askers = 1;
	}
	{
		struct uacct *ua = uacct_get(k, r->uid);
		if (ua && ua->queued)
			ua->queued--;
		uacct_region_end(k, r->uid, r->quota_ns, r->quota_win,
		                 r->phase == PH_HELD ? us(now - r->rq.grant_ns) * NS_PER_US : 0,
		                 now);
	}
	if (!r->rq_gone)
		rq_remove(&k->rq, &r->rq, now);
	region_unlink(r);
	k->resched = 1;
	r->end_why = why;
	r->end_ns = now;
	snprintf(r->end_who, sizeof(r->end_who), "%s", who ? who : "");
	if (r->phase == PH_HELD)
		region_late_judge(k, r); /* may ask for a list the certificate waits for */
	if (r->phase == PH_HELD && r->procs_ticket) {
		if (k->stopping || gp_hung(KREXD_PROCS_WAIT_MS)) {
			region_procs_lost(k, r);
		} else {
			r->procs_deadline = now + KREXD_PROCS_WAIT_MS * NS_PER_MS;
			r->next = ending;
			ending = r;
			log_debug(
			        "region %llu: ended (%d), its GPUs given back; its certificate waits for the process list",
			        (unsigned long long)r->rq.id, why);
			return;
		}
	}
	region_finish_cert(k, r);
}

int region_end(struct krexd *k, struct conn *c, uint32_t seq, const struct proto_region_end *e)
{
	struct region *r = c->region;
	union proto_body m;

	if (r && (!e->region_id || e->region_id == r->rq.id)) {
		r->seq = seq;
		if (r->phase != PH_HELD)
			region_note(r, "ended before the grant");
		region_finish(k, r, END_BY_OWNER, NULL);
		return 0;
	}
	for (r = ending; r; r = r->next)
		if (r->conn == c && r->end_why != END_BY_OWNER &&
		    (!e->region_id || e->region_id == r->rq.id)) {
			r->end_asked = 1; /* revoked; its certificate is sent when it is done */
			r->end_seq = seq;
			return 0;
		}
	if (c->have_expired && (!e->region_id || e->region_id == c->expired.region_id)) {
		memset(&m, 0, sizeof(m));
		m.cert = c->expired;
		c->have_expired = 0;
		return conn_send(k, c, PROTO_CERT, seq, &m);
	}
	return conn_error(k, c, seq, KREX_ENOREGION, "no region to end");
}

int region_release(struct krexd *k, struct conn *c, uint32_t seq, const struct proto_release *rel)
{
	struct rq_req *q = rq_find_id(&k->rq, rel->region_id);
	union proto_body m = {.ok = {0}};
	struct part *owner;
	char who[64];

	if (!q)
		return conn_error(k, c, seq, KREX_ENOREGION, "no region %llu",
		                  (unsigned long long)rel->region_id);
	owner = part_find_id(k, q->owner);
	if (c->uid != 0 && (!owner || owner->uid != c->uid))
		return conn_error(k, c, seq, KREX_EPERM, "region %llu is not uid %u's",
		                  (unsigned long long)rel->region_id, (unsigned)c->uid);
	snprintf(who, sizeof(who), "released by uid %u", (unsigned)c->uid);
	log_info("region %llu %s", (unsigned long long)rel->region_id, who);
	m.ok.value = 0;
	region_finish(k, q->data, END_RELEASED, who);
	return conn_send(k, c, PROTO_OK, seq, &m);
}

/* Whether a region of c is queued, held, ending, or has a certificate c has not fetched. */
int region_conn_busy(const struct conn *c)
{
	struct region *r;

	if (c->region || c->have_expired)
		return 1;
	for (r = ending; r; r = r->next)
		if (r->conn == c)
			return 1;
	return 0;
}

void region_conn_gone(struct krexd *k, struct conn *c)
{
	struct region *r, *next;
	struct sib *s;

	region_ctx_making(k, c, 0); /* a region waiting for its contexts: no longer */
	if (c->region) {
		c->region->conn = NULL;
		region_finish(k, c->region, END_GONE, NULL);
		c->region = NULL;
	}
	for (r = ending; r; r = r->next)
		if (r->conn == c)
			r->conn = NULL;
	for (r = regions; r; r = next) {
		next = r->next;
		if (r->phase != PH_DRAIN || !pending_take(r, c->serial))
			continue;
		if (c->part && (s = sib_find(r, c->part->id)) && !--s->pending && r->npending)
			sib_freeze_soon(k, r, s);
		if (!r->npending)
			region_freeze(k, r, time_now_ns());
	}
}

void region_part_gone(struct krexd *k, struct part *p)
{
	struct region *r, *next;
	struct rq_req *q = rq_find_owner(&k->rq, p->id);
	struct sib *s;

	if (q) {
		struct region *own = q->data;
		region_finish(k, own, own->conn ? END_RELEASED : END_GONE, "participant ended");
	}
	for (r = regions; r; r = next) {
		next = r->next;
		s = sib_find(r, p->id);
		if (!s)
			continue;
		s->part = 0; /* freezer_release thaws it; our reference goes with it */
		s->ref = 0;
		s->frozen = 1; /* gone: nothing left to disturb the owner */
	}
}

void region_tick(struct krexd *k, uint64_t now)
{
	struct region *r, *next;
	struct rq_req *q;
	int fz_event = k->freeze_event;

	k->freeze_event = 0; /* one read during the polls below sets it again */
	if (k->freeze_soon) {
		k->freeze_soon = 0;
		for (r = regions; r; r = r->next)
			if (r->soon && r->phase == PH_DRAIN)
				sib_freeze_batch(k, r, 1);
	}
	if (k->st.retries && state_retry_next(&k->st) <= now)
		state_retry_run(&k->st, now); /* failed undos and thaws */
	if (rq_gap_over(&k->rq, now))
		k->resched = 1; /* a chain's gap is over: its GPUs' regions may start */

	for (q = k->rq.head; q; q = q->next)
		if (q->state == RQ_QUEUED && q->not_before_ns && q->not_before_ns <= now) {
			q->not_before_ns = 0; /* its grace is over */
			k->resched = 1;
		}
	for (r = regions; r; r = next) {
		next = r->next;
		if (r->phase == PH_DRAIN && now >= r->drain_deadline)
			region_freeze(k, r, now);
		else if (r->phase == PH_FREEZE && (now >= r->poll_at || fz_event))
			region_poll(k, r, now, now < r->poll_at); /* early: cgroup.events (v2) */
		else if (r->phase == PH_SETTLE && now >= r->settle_poll_at)
			region_settle_poll(k, r, now);
		else if (r->phase == PH_HELD && region_sampling(k, r) && now >= r->sample_at) {
			struct nvml_sample smp;
			region_sample(k, r, &smp);
			r->sample_at = now + KREX_CLOCK_SAMPLE_MS * NS_PER_MS;
		}
	}
	if (ending)
		region_procs_expire(k, now, 0);
	while ((q = rq_expired(&k->rq, now))) {
		r = q->data;
		if (r->phase == PH_HELD)
			log_info("region %llu: lease expired, revoked", (unsigned long long)q->id);
		region_finish(k, r, r->phase == PH_HELD ? END_EXPIRED : END_TIMEOUT, NULL);
	}
}

/*
 * The mover's hold (KREXD_MOVE_HOLD_MS, mover.h): on cgroup v2 a freeze's
 * writes (cgroup.freeze) take cgroup_mutex, which a move into a cgroup
 * holds through its RCU grace period (doc/architecture.md "Making a
 * participant"); moves not begun wait from a region's close to its grant
 * (drain and freeze), at most the hold from the close, so that the moves
 * under way end during the drain.  Once per loop turn.
 */
void region_move_hold(struct krexd *k, uint64_t now)
{
	static uint64_t said;
	uint64_t bound = mv_hold_ns(), until = 0, u;
	struct region *r;

	(void)k;
	if (!bound || !mv_on())
		return;
	for (r = regions; r; r = r->next)
		if ((r->phase == PH_DRAIN || r->phase == PH_FREEZE) &&
		    (u = r->t_close + bound) > now && u > until)
			until = u;
	if (until != said) {
		said = until;
		mv_hold_until(until);
	}
}

uint64_t region_next_deadline(struct krexd *k)
{
	uint64_t best = rq_next_deadline(&k->rq), d;
	struct region *r;

	d = state_retry_next(&k->st);
	if (d && (!best || d < best))
		best = d;
	if (k->freeze_soon)
		return 1; /* drained siblings to freeze: at once */
	for (r = regions; r; r = r->next) {
		d = r->phase == PH_DRAIN    ? r->drain_deadline
		    : r->phase == PH_FREEZE ? (k->freeze_event ? 1 : r->poll_at)
		    : r->phase == PH_SETTLE ? r->settle_poll_at
		    : r->phase == PH_HELD && region_sampling(k, r) ? r->sample_at
		                                                   : 0;
		if (d && (!best || d < best))
			best = d;
	}
	for (r = ending; r; r = r->next)
		if (!best || r->procs_deadline < best)
			best = r->procs_deadline;
	return best;
}

void region_stop_all(struct krexd *k)
{
	k->stopping = 1;
	while (regions)
		region_finish(k, regions, END_STOP, "krexd stopping");
	region_procs_event(k);
	region_procs_expire(k, 0, 1);
}

int region_status(struct krexd *k, struct proto_status_reply *s)
{
	uint64_t now = time_now_ns();
	struct region *r;
	size_t n = 0;

	for (r = regions; r; r = r->next)
		n++;
	s->regions = calloc(n ? n : 1, sizeof(*s->regions));
	if (!s->regions)
		return -1;
	for (r = regions; r && s->nregions < 65535; r = r->next) {
		struct proto_status_region *o = &s->regions[s->nregions++];
		struct part *p = part_find_id(k, r->owner);
		o->id = r->rq.id;
		o->owner = r->owner;
		o->pid = p ? (uint32_t)p->pid : 0;
		o->state = r->phase == PH_QUEUED ? 0 : 1;
		o->age_us = us(now - r->rq.enq_ns);
		o->lease_us = us(r->rq.lease_ns);
		gpu_list(k, r->rq.mask, o->gpus, sizeof(o->gpus));
	}
	return 0;
}

/* ---- someone else's suspend (part.c) ---- */

/* Drop the acks p's members owe r. */
static void sib_ext_drop_pending(struct krexd *k, struct region *r, struct sib *s, struct part *p)
{
	struct conn *c;

	for (c = k->conns; c; c = c->next)
		if (c->part == p && pending_take(r, c->serial) && s->pending > 0)
			s->pending--;
	s->pending = 0;
}

void region_ext_suspended(struct krexd *k, struct part *p)
{
	struct region *r, *next;
	struct sib *s;

	for (r = regions; r; r = next) {
		next = r->next;
		if (r->phase != PH_DRAIN || !(s = sib_find(r, p->id)) || !s->pending)
			continue;
		/* Suspended while it drains: its ack cannot come. */
		s->ext = 1;
		sib_ext_drop_pending(k, r, s, p);
		region_note(
		        r,
		        "participant %u was suspended by another during the drain: the GPU work it queued was not drained",
		        p->id);
		if (!r->npending)
			region_freeze(k, r, time_now_ns());
	}
}

void region_ext_resumed(struct krexd *k, struct part *p, int how)
{
	struct region *r;
	struct sib *s;

	(void)k;
	for (r = regions; r; r = r->next) {
		if (r->phase == PH_QUEUED || !(s = sib_find(r, p->id)) || !s->ref)
			continue;
		if (how == REGION_EXT_FROZEN_AGAIN)
			region_note(
			        r,
			        "participant %u was resumed by another during the region and ran until krexd froze it again",
			        p->id);
		else if (how == REGION_EXT_KILLED)
			region_note(
			        r,
			        "participant %u was killed during the region (SIGKILL pending): krexd thawed it so that it can exit",
			        p->id);
		else
			region_note(
			        r,
			        "participant %u was thawed by another during the region (Slurm's kill?) and left to run",
			        p->id);
	}
}
