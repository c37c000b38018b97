/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * region.c - the region entry sequence (doc/design.md "The region entry
 * sequence", doc/architecture.md "Region entry"): close gates, wait for drain
 * acks, freeze, isolate, grant; and the way out: isolation undo, thaw, open
 * gates, certificate.  Driven by the epoll loop: nothing here blocks.
 */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gpujudge.h"
#include "history.h"
#include "isolate.h"
#include "nvml.h"
#include "sign.h"
#include "krexd.h"
#include "log.h"
#include "timeutil.h"

enum phase { PH_QUEUED = 0, PH_DRAIN, PH_FREEZE, PH_SETTLE, PH_HELD };

enum end_why { END_BY_OWNER, END_EXPIRED, END_RELEASED, END_GONE, END_TIMEOUT, END_STOP };

struct sib {
	uint32_t part; /* participant id (0 once it ended) */
	int gate;      /* it had members with a drain thread */
	int pending;   /* acks still due */
	int drain_err; /* an ack said the drain failed */
	int ref;       /* we hold a freeze reference */
	int start;     /* this region starts the freeze (nobody froze it before) */
	int started;   /* the freeze was started (early, or in the batch) */
	int frozen;    /* the kernel said frozen */
	int freeze_err;
	int ext;     /* suspended (by another, or by KREX for another region): no ack awaited */
	int soon;    /* drained: frozen with the others drained this loop turn (sib_freeze_soon) */
	int carried; /* chained: drained and frozen by the previous region, kept frozen */
};

/*
 * Where krexd's own time for one region goes, logged at debug level when it
 * ends ("region N: cost ..."; test/perf/freeze-scale.sh reads it).  The
 * state file counters are krexd's, taken at the close and at the end: a
 * region that overlaps another counts the other's writes too.
 */
struct region_cost {
	uint64_t fz_prepare_ns; /* freeze references, lines, fds (every sibling) */
	uint64_t fz_start_ns;   /* the freeze writes / signals */
	uint64_t fz_poll_ns;    /* reading whether they are frozen */
	unsigned fz_polls;      /* poll rounds until all were frozen */
	uint64_t undo_ns, thaw_ns;
	unsigned iso_cpuset,
	        iso_affinity;  /* isolation undo lines: cgroups written, processes moved */
	unsigned long writes0; /* state file writes before the close */
	uint64_t write_ns0;
	uint64_t t_unwind; /* the end's start */
};

struct region {
	struct rq_req rq;
	uint64_t quota_ns, quota_win; /* region_time_per_uid charged at its start, and when */
	struct conn *conn;            /* requester (NULL once it is gone) */
	uint32_t seq;                 /* of the REGION_BEGIN, for the GRANT */
	uint32_t owner;
	int phase;
	uint32_t close_gen;
	uint64_t t_close, t_freeze, t_iso;
	int soon; /* a sibling waits for sib_freeze_batch at the end of the turn */
	uint64_t drain_deadline, freeze_deadline, poll_at, poll_step;
	struct sib *sibs;
	size_t nsibs;
	uint64_t *pending; /* conn serials that owe an ack */
	size_t npending;
	char **undo;  /* isolation undo lines, oldest first */
	int *undo_fd; /* what each needs, opened with the change (-1: none) */
	size_t nundo;
	struct krex_certificate cert;
	/* The GPU's state (settle, samples): doc/architecture.md "Settle". */
	uint64_t t_settle, settle_deadline, settle_poll_at, sample_at;
	int32_t busy_min, busy_max; /* SM clock over samples without the idle reason, -1 none */
	int32_t all_min, all_max;   /* over every sample */
	int low_grant;        /* the grant's sample: a busy clock under the tolerance, no reason */
	int low_busy;         /* later: the same (gpujudge.c decides whether a cap explains it) */
	uint32_t cap_samples; /* samples with sw_power_cap, from the grant on */
	int64_t cap_first_us; /* grant to the first of them, -1 none */
	int32_t foreign_end;  /* non-participants on the GPUs at the end, -1 unknown */
	int sample_failed;    /* an NVML read during the region failed */
	int32_t nominal[KREX_MAX_GPUS];        /* per GPU slot, -1 unknown */
	struct nvml_edge edge0[KREX_MAX_GPUS]; /* temperature, violation counters at grant */
	uint64_t viol_window_us;               /* span of NVML's counter readings, the widest */
	struct region_cost cost;               /* krexd's own work for it (the cost log line) */
	uint64_t turn;                         /* loop turn it was asked in */
	uint32_t chained;                      /* its place in a chain (0: entered on its own) */
	uint64_t chain_t0;                     /* the chain's first grant */
	int chain_own; /* chained after a region of the same owner: the power cap at its grant is the owner's own */
	int rq_gone; /* rq_remove() done (a chain's predecessor leaves the queue early) */
	uid_t uid;   /* its owner's, for the per-uid limits */
	pid_t pid;   /* the owner's root pid, job, step, label: history */
	uint32_t job, step;
	char label[128];
	struct region *next; /* every region, for ticks and status */
};

static struct region *regions;

static void region_freeze(struct krexd *k, struct region *r, uint64_t now);
static void sib_freeze_soon(struct krexd *k, struct region *r, struct sib *s);
static void region_isolate(struct krexd *k, struct region *r);
static void region_telemetry_start(struct krexd *k, struct region *r);
static void region_settle(struct krexd *k, struct region *r, uint64_t now);
static void region_grant(struct krexd *k, struct region *r, uint64_t now);
static void region_finish(struct krexd *k, struct region *r, int why, const char *who);
static void region_note(struct region *r, const char *fmt, ...)
        __attribute__((format(printf, 2, 3)));

static void region_note(struct region *r, const char *fmt, ...)
        __attribute__((format(printf, 2, 3)));

/* Write the state file; a failure is logged and noted on r's certificate (no record of what
 * it undoes survives a krexd crash). */
static void region_state_sync(struct krexd *k, struct region *r, const char *doing)
{
	if (state_sync(&k->st) == 0)
		return;
	log_error("state file %s: %s (%s anyway)", k->st.path, strerror(errno), doing);
	region_note(r, "state file not written (%s): %s", doing, strerror(errno));
}

static uint64_t us(uint64_t ns)
{
	return ns / NS_PER_US;
}

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

/* ---- close gates ---- */

static int sib_add(struct region *r, uint32_t part)
{
	struct sib *n = realloc(r->sibs, (r->nsibs + 1) * sizeof(*n));

	if (!n)
		return -1;
	r->sibs = n;
	memset(&n[r->nsibs], 0, sizeof(*n));
	n[r->nsibs++].part = part;
	return 0;
}

static int pending_add(struct region *r, uint64_t serial)
{
	uint64_t *n = realloc(r->pending, (r->npending + 1) * sizeof(*n));

	if (!n)
		return -1;
	r->pending = n;
	r->pending[r->npending++] = serial;
	return 0;
}

static void gate_line(char *buf, size_t len, unsigned slot, uint32_t owner)
{
	snprintf(buf, len, "gate %u %u", slot, owner);
}

static void region_note(struct region *r, const char *fmt, ...)
        __attribute__((format(printf, 2, 3)));

/*
 * A sibling suspended at entry (Slurm's scontrol suspend, a SIGSTOP, or a
 * freeze by KREX for another region) cannot acknowledge a drain: no ack is
 * awaited from it.  Its GPU work is accounted for instead: none when it has
 * not run since it acknowledged a drain with these GPUs' gates closed
 * (quiet_mask); when its freezer file has been watched frozen for at least
 * drain_timeout, the work it queued before had the time a drain gets (the
 * gate's bounded queue holds about queue_time of it); otherwise the
 * certificate names it and the outcome is degraded.
 */
static void sib_ext_entry(struct krexd *k, struct region *r, struct sib *s, uint64_t now)
{
	struct part *p = part_find_id(k, s->part);
	uint64_t since;
	int ext;

	if (!p)
		return;
	ext = part_ext_check(k, p, now);
	if (!ext && p->freeze_refs == 0)
		return; /* runs: drained as usual */
	s->ext = 1;
	if (!(r->rq.mask & p->mask & ~p->quiet_mask))
		return; /* nothing queued on these GPUs since an acknowledged drain */
	since = p->ext_since_ns ? now - p->ext_since_ns : 0;
	if (ext == FREEZER_EXT_FROZEN && p->ext_wd >= 0 && p->ext_since_ns &&
	    since >= k->cfg.drain_timeout_ns) {
		log_debug(
		        "region %llu: participant %u suspended by another for %llu ms: its queued GPU work had drain_timeout to finish",
		        (unsigned long long)r->rq.id, p->id,
		        (unsigned long long)(since / NS_PER_MS));
		return;
	}
	region_note(
	        r,
	        "participant %u was suspended at entry (%s, %llu ms): the GPU work it queued before was not drained",
	        p->id,
	        ext == FREEZER_EXT_FROZEN    ? "its cgroup frozen by another: Slurm's suspend?"
	        : ext == FREEZER_EXT_STOPPED ? "stopped by a signal: Slurm's suspend?"
	                                     : "frozen by KREX for another region",
	        (unsigned long long)(since / NS_PER_MS));
}

/*
 * A sibling of chained region r that prev, the region before it in the
 * chain, drained and froze: it stays frozen (r takes its own reference
 * before prev's thaw) and is not drained again.  One that was late, failed
 * its drain or was suspended by another is entered as usual.
 */
static void sib_carry(struct region *r, struct sib *s, const struct region *prev)
{
	const struct sib *ps = NULL;
	size_t i;

	for (i = 0; prev && i < prev->nsibs; i++)
		if (prev->sibs[i].part == s->part)
			ps = &prev->sibs[i];
	if (!ps || !ps->ref || !ps->frozen || ps->freeze_err || ps->ext || ps->drain_err ||
	    ps->pending)
		return;
	s->carried = 1;
	s->gate = ps->gate;
}

/* Close the region's gates and ask every sibling member to drain; prev: the
 * region before it in a chain, whose frozen siblings it keeps (NULL: none). */
static void region_close(struct krexd *k, struct region *r, uint64_t now, const struct region *prev)
{
	struct part *p;
	struct conn *c;
	char line[64];
	unsigned i;

	r->t_close = now;
	r->cost.writes0 = k->st.writes;
	r->cost.write_ns0 = k->st.write_ns;
	r->cert.wait_us = us(now - r->rq.enq_ns);
	if (k->st.retries) /* failed undos and thaws: once more before anything changes */
		state_retry_flush(&k->st, now);
	for (p = k->parts; p; p = p->next)
		if (p->id != r->owner && (p->mask & r->rq.mask) && sib_add(r, p->id) == 0) {
			p->gated++;
			sib_carry(r, &r->sibs[r->nsibs - 1], prev);
		}
	for (i = 0; i < k->ngpus; i++) {
		if (!(r->rq.mask >> i & 1))
			continue;
		gate_line(line, sizeof(line), i, r->owner);
		state_add(&k->st, "%s", line);
	}
	region_state_sync(k, r, "closing gates"); /* written before the gates close */
	for (i = 0; i < k->ngpus; i++)
		if (r->rq.mask >> i & 1)
			gatectl_close_slot(&k->gate, i, r->owner, r->rq.id);
	r->close_gen = gatectl_bump(&k->gate);
	for (i = 0; i < r->nsibs; i++)
		if (!r->sibs[i].carried)
			sib_ext_entry(k, r, &r->sibs[i], now);
	for (i = 0; i < r->nsibs; i++)
		for (c = k->conns; c; c = c->next)
			if (!r->sibs[i].ext && !r->sibs[i].carried && !c->dead && c->gate &&
			    c->part && c->part->id == r->sibs[i].part &&
			    pending_add(r, c->serial) == 0) {
				r->sibs[i].gate = 1;
				r->sibs[i].pending++;
			}
	log_debug("region %llu: gates closed (generation %u), %zu siblings, %zu acks due%s",
	          (unsigned long long)r->rq.id, r->close_gen, r->nsibs, r->npending,
	          prev ? " (chained)" : "");
	/* Isolation and the telemetry at start need nothing from the drain or the
	 * freeze: done now, while the siblings drain, they add nothing to the
	 * entry (on the H200 they took ~1 ms after the freeze).  region_unwind()
	 * undoes the isolation on every way out, before the grant too. */
	r->t_iso = time_now_ns();
	region_isolate(k, r);
	r->cert.isolate_us = us(time_now_ns() - r->t_iso);
	region_telemetry_start(k, r);
	r->phase = PH_DRAIN;
	r->drain_deadline = now + k->cfg.drain_timeout_ns;
}

/* After region_close(): with no ack due, freeze at once.  Now, not the
 * close's now: the freeze phase must not count the isolation and telemetry
 * (freeze_us 22490 without siblings). */
static void region_drain_or_freeze(struct krexd *k, struct region *r)
{
	if (!r->npending)
		region_freeze(k, r, time_now_ns());
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
	while ((q = rq_next(&k->rq, now))) {
		if (region_quota_take(k, q->data, now) < 0)
			continue; /* refused and removed from the queue */
		rq_start(&k->rq, q, now);
		region_close(k, q->data, now, NULL);
		region_drain_or_freeze(k, q->data);
	}
}

/* ---- drain ---- */

static struct sib *sib_find(struct region *r, uint32_t part)
{
	size_t i;

	for (i = 0; i < r->nsibs; i++)
		if (r->sibs[i].part == part)
			return &r->sibs[i];
	return NULL;
}

/* Drop serial from r's pending list; returns 1 if it was there. */
static int pending_take(struct region *r, uint64_t serial)
{
	size_t i;

	for (i = 0; i < r->npending; i++)
		if (r->pending[i] == serial) {
			r->pending[i] = r->pending[--r->npending];
			return 1;
		}
	return 0;
}

void region_ack(struct krexd *k, struct conn *c, const struct proto_drain_ack *a)
{
	struct region *r, *next;
	struct sib *s;

	for (r = regions; r; r = next) {
		next = r->next;
		if (r->phase != PH_DRAIN || !c->part || (int32_t)(a->generation - r->close_gen) < 0)
			continue;
		if (!pending_take(r, c->serial))
			continue;
		s = sib_find(r, c->part->id);
		if (s) {
			s->pending--;
			if (a->status)
				s->drain_err = 1;
			if (!s->pending && r->npending)
				sib_freeze_soon(k, r,
				                s); /* drained: freeze it while others drain */
		}
		if (!r->npending)
			region_freeze(k, r, time_now_ns());
	}
}

/* ---- freeze ---- */

static void region_note(struct region *r, const char *fmt, ...)
{
	size_t off = strlen(r->cert.note);
	va_list ap;

	if (off + 3 >= sizeof(r->cert.note))
		return;
	if (off) {
		strcat(r->cert.note, "; ");
		off += 2;
	}
	va_start(ap, fmt);
	if (vsnprintf(r->cert.note + off, sizeof(r->cert.note) - off, fmt, ap) >=
	    (int)(sizeof(r->cert.note) - off))
		memcpy(r->cert.note + sizeof(r->cert.note) - 4, "...", 4); /* cut, and says so */
	va_end(ap);
}

static void region_poll(struct krexd *k, struct region *r, uint64_t now)
{
	uint64_t t0 = time_now_ns();
	struct part *p;
	int all = 1, rc;
	size_t i;

	r->cost.fz_polls++;
	freezer_round_begin(&k->fz); /* signals: one /proc scan for every sibling's rescan */
	for (i = 0; i < 2 * r->nsibs; i++) {
		struct sib *s = &r->sibs[i % r->nsibs];
		if (!s->ref || s->frozen)
			continue;
		p = part_find_id(k, s->part);
		if (i < r->nsibs)
			rc = p ? part_freeze_poll(k, p) : 1;
		else if (p && p->ft.rescan_due) /* second pass: the rescans the first deferred */
			rc = freezer_rescan(&k->fz, &p->ft);
		else
			continue;
		if (i < r->nsibs && p && p->ft.rescan_due)
			continue; /* not all = 0: the second pass decides */
		if (rc == 1) {
			s->frozen = 1;
			/* drained with these gates closed, frozen since: nothing queued */
			if (p && s->gate && !s->ext && !s->pending && !s->drain_err)
				p->quiet_mask |= r->rq.mask;
		} else if (rc < 0) {
			s->freeze_err = 1;
			s->ref = 0;
			if (p)
				part_thaw(k, p);
		} else
			all = 0;
	}
	freezer_round_end(&k->fz);
	r->cost.fz_poll_ns += time_now_ns() - t0;
	if (all || now >= r->freeze_deadline) {
		region_settle(k, r, now);
		return;
	}
	/* Poll fast first (a cgroup usually freezes within a millisecond), then back off. */
	r->poll_step = r->poll_step ? r->poll_step * 2 : 100 * NS_PER_US;
	if (r->poll_step > 10 * NS_PER_MS)
		r->poll_step = 10 * NS_PER_MS;
	r->poll_at = now + r->poll_step;
}

/* Take a freeze reference on sibling s (its cgroup or pids go to the state
 * file, not yet written); 1 when it was taken. */
static int sib_freeze_prepare(struct krexd *k, struct region *r, struct sib *s)
{
	struct part *p = part_find_id(k, s->part);
	uint64_t t0 = time_now_ns();
	int rc;

	if (!p || s->ref || s->freeze_err)
		return 0;
	rc = part_freeze_prepare(k, p);
	r->cost.fz_prepare_ns += time_now_ns() - t0;
	if (rc < 0) {
		s->freeze_err = 1;
		log_warn("region %llu: cannot freeze participant %u: %s",
		         (unsigned long long)r->rq.id, p->id, strerror(errno));
		return 0;
	}
	s->ref = 1;
	s->start = rc;
	return 1;
}

/*
 * The state file could not be written: a freeze without its line could
 * outlive a killed krexd, so s is not frozen (its reference goes back).
 */
static void sib_freeze_refuse(struct krexd *k, struct region *r, struct sib *s, int err)
{
	struct part *p = part_find_id(k, s->part);

	log_error("region %llu: participant %u not frozen: state file %s: %s",
	          (unsigned long long)r->rq.id, s->part, k->st.path, strerror(err));
	s->ref = 0;
	s->freeze_err = 1;
	if (p)
		part_thaw(k, p);
	region_note(r, "participant %u not frozen: state file not written", s->part);
}

/* Start freezing sibling s, once: after sib_freeze_prepare() and a state sync. */
static void sib_freeze_start(struct krexd *k, struct region *r, struct sib *s)
{
	uint64_t t0 = time_now_ns();
	struct part *p;

	if (!s->ref || s->started)
		return;
	s->started = 1;
	if (s->start && (p = part_find_id(k, s->part)) && part_freeze_start(k, p) < 0) {
		s->freeze_err = 1;
		log_warn("region %llu: freezing participant %u: %s", (unsigned long long)r->rq.id,
		         p->id, strerror(errno));
	}
	r->cost.fz_start_ns += time_now_ns() - t0;
}

/*
 * Freeze the siblings not frozen yet (soon_only: those drained this turn):
 * one /proc snapshot and one state write for all of them, before any of
 * them is touched, then every freeze started.
 */
static void sib_freeze_batch(struct krexd *k, struct region *r, int soon_only)
{
	size_t i;
	int batch = 0, err;

	for (i = 0; i < r->nsibs; i++)
		if (!soon_only || r->sibs[i].soon)
			batch |= !r->sibs[i].ref && !r->sibs[i].freeze_err && r->sibs[i].part;
	if (batch) {
		freezer_snapshot(&k->fz);
		for (i = 0; i < r->nsibs; i++)
			if (!soon_only || r->sibs[i].soon)
				sib_freeze_prepare(k, r, &r->sibs[i]);
		if (state_sync(&k->st) < 0) {
			err = errno;
			for (i = 0; i < r->nsibs; i++)
				if (r->sibs[i].ref && !r->sibs[i].started)
					sib_freeze_refuse(k, r, &r->sibs[i], err);
		}
	}
	for (i = 0; i < r->nsibs; i++) {
		if (!soon_only || r->sibs[i].soon)
			sib_freeze_start(k, r, &r->sibs[i]);
		r->sibs[i].soon = 0;
	}
	r->soon = 0;
}

/*
 * Freeze sibling s soon: at the end of this loop turn, with every other
 * sibling whose drain was acknowledged in it (region_tick), so that
 * freezing the siblings that drained early overlaps the drain of the slow
 * ones and a turn's acks cost one state write; region_freeze() does the
 * rest in one batch.
 */
static void sib_freeze_soon(struct krexd *k, struct region *r, struct sib *s)
{
	if (!part_find_id(k, s->part) || s->ref || s->freeze_err)
		return;
	s->soon = r->soon = k->freeze_soon = 1;
}

static void region_freeze(struct krexd *k, struct region *r, uint64_t now)
{
	size_t i;

	r->cert.drain_us = us(now - r->t_close);
	for (i = 0; i < r->nsibs; i++) {
		struct sib *s = &r->sibs[i];
		if (s->pending)
			r->cert.late++;
		else if (s->gate && !s->drain_err && !s->ext)
			r->cert.drained++; /* carried ones too: drained with these gates closed */
		if (s->drain_err)
			region_note(r, "participant %u: drain failed", s->part);
	}
	if (r->cert.late)
		region_note(r, "%u sibling(s) did not acknowledge the drain in time", r->cert.late);
	r->npending = 0;
	r->phase = PH_FREEZE;
	r->t_freeze = now;
	/* The siblings not frozen as they drained (late ones, those without a
	 * gate, those drained this turn). */
	sib_freeze_batch(k, r, 0);
	r->freeze_deadline = now + k->cfg.freeze_timeout_ns;
	r->poll_step = 0;
	region_poll(k, r, now);
}

/* ---- isolate and grant ---- */

/*
 * The isolation's lines, written in one state file write: a dry pass
 * (dry_rec) adds every line the region will need to the state file's list,
 * krexd writes the file once, and the real pass (undo_rec) finds each of its
 * lines written already (iso_pre_take); a line that changed in between (a
 * thread started) is written on its own before its change, as without the
 * dry pass, and a dry line no change used leaves the list.  ctx is
 * {krexd, region, struct iso_pre}.
 */
struct iso_pre {
	char **line; /* NULL once taken */
	size_t n;
};

static int dry_rec(void *ctx, const char *line)
{
	struct krexd *k = ((void **)ctx)[0];
	struct iso_pre *pre = ((void **)ctx)[2];
	char **n = realloc(pre->line, (pre->n + 1) * sizeof(*n));

	if (!n)
		return -1;
	pre->line = n;
	if (!(n[pre->n] = strdup(line)))
		return -1;
	if (state_add(&k->st, "%s", line) < 0) {
		free(n[pre->n]);
		return -1;
	}
	pre->n++;
	return 1; /* recorded, no change now */
}

/* 1 when line was written by the dry pass (taken: it is the change's now). */
static int iso_pre_take(struct iso_pre *pre, const char *line)
{
	size_t i;

	for (i = 0; i < pre->n; i++)
		if (pre->line[i] && !strcmp(pre->line[i], line)) {
			free(pre->line[i]);
			pre->line[i] = NULL;
			return 1;
		}
	return 0;
}

/* Drop the dry lines no change took from the state file's list (written with the next write). */
static void iso_pre_free(struct krexd *k, struct iso_pre *pre)
{
	size_t i;

	for (i = 0; i < pre->n; i++)
		if (pre->line[i]) {
			state_drop(&k->st, pre->line[i]);
			free(pre->line[i]);
		}
	free(pre->line);
	memset(pre, 0, sizeof(*pre));
}

static int undo_rec(void *ctx, const char *line)
{
	struct region *r = ((void **)ctx)[1];
	char **n, *dup;

	int *fds, fd = -1;

	/* What the undo needs is opened now, with the change, not at the end. */
	if (isolate_undo_open(line, &fd) < 0) {
		log_warn("region %llu: not isolating '%s': %s", (unsigned long long)r->rq.id, line,
		         strerror(errno));
		return -1;
	}
	if (!iso_pre_take(((void **)ctx)[2], line) && state_rec(((void **)ctx)[0], line) < 0)
		goto fail;
	n = realloc(r->undo, (r->nundo + 1) * sizeof(*n));
	if (n)
		r->undo = n;
	fds = realloc(r->undo_fd, (r->nundo + 1) * sizeof(*fds));
	if (fds)
		r->undo_fd = fds;
	dup = strdup(line);
	if (!n || !fds || !dup) {
		free(dup);
		state_unrec(((void **)ctx)[0], line);
		goto fail;
	}
	r->undo_fd[r->nundo] = fd;
	r->undo[r->nundo++] = dup;
	return 0;
fail:
	if (fd >= 0)
		close(fd);
	return -1;
}

static void region_isolate(struct krexd *k, struct region *r)
{
	struct part *owner = part_find_id(k, r->owner), *p;
	const char *names[KREX_MAX_GPUS];
	pid_t others[256];
	struct isolate_req req;
	struct iso_pre pre = {0};
	struct krex_certificate scratch;
	void *ctx[3] = {k, r, &pre};
	unsigned i, n = 0;

	memset(&req, 0, sizeof(req));
	for (i = 0; i < k->ngpus; i++)
		if (r->rq.mask >> i & 1)
			names[n++] = k->gpu[i];
	req.gpus = names;
	req.ngpus = n;
	/* Siblings only: a job of another GPU is never moved (doc/topology.md). */
	for (p = k->parts, n = 0; p && n < 256; p = p->next)
		if (p->id != r->owner && (p->mask & r->rq.mask))
			others[n++] = p->pid;
	req.other_pids = others;
	req.nother = n;
	req.node_gpus = k->ngpus;
	req.region_id = r->rq.id;
	req.owner_pid = owner ? owner->pid : 0;
	req.owner_cgroup = owner ? owner->ft.cg : "";
	req.owner_cpuset = owner ? owner->ft.cpuset_cg : "";
	req.owner_cpus = owner ? owner->cpus : "";
	req.mode = k->cfg.isolate;
	/* Never isolate on top of an undo still retried: its "old" values would
	 * be the isolation's, and the retry would undo this region's moves. */
	if (req.mode != ISOLATE_NONE &&
	    (state_retry_pending(&k->st, "cpuset ") || state_retry_pending(&k->st, "affinity "))) {
		req.mode = ISOLATE_NONE;
		region_note(r, "isolation skipped: an earlier undo is still being retried");
	}
	req.region_cores = k->cfg.region_cores;
	req.topology = k->cfg.topology;
	req.gpu_pci = (const char(*)[16])k->cfg.gpu_pci;
	if (req.mode != ISOLATE_NONE) {
		req.dry = 1;
		memset(&scratch, 0, sizeof(scratch));
		if (isolate_enter(&req, dry_rec, ctx, &scratch) < 0 || state_sync(&k->st) < 0)
			iso_pre_free(k, &pre); /* each line written on its own, as without */
		req.dry = 0;
	}
	if (isolate_enter(&req, undo_rec, ctx, &r->cert) < 0)
		region_note(r, "isolation failed: %s", strerror(errno));
	iso_pre_free(k, &pre);
	for (i = 0; i < r->nundo; i++) {
		r->cost.iso_cpuset += !strncmp(r->undo[i], "cpuset ", 7);
		r->cost.iso_affinity += !strncmp(r->undo[i], "affinity ", 9);
	}
}

/*
 * A participant that registers while a region holds its source cpuset
 * narrowed (a process of a sibling's job that registers on its own): its
 * new cgroup's cpuset is a copy of that source (freezer_adopt: never wider
 * than what it had), so it is narrowed too, and no undo line of the region
 * names it: it would stay on the others' CPUs for good.  Each region whose
 * undo narrowed the source gets one line more, the new cgroup back to what
 * the source had before that region; undone (and its threads swept) with
 * the region's other lines.
 */
void region_part_new(struct krexd *k, struct part *p)
{
	const char *dst = p->ft.cpuset_cg[0] ? p->ft.cpuset_cg : k->fz.v2_cpuset ? p->ft.cg : "";
	const char *d, *sp;
	struct region *r;
	struct iso_pre pre = {0};
	void *ctx[3] = {k, NULL, &pre};
	char *line;
	size_t i, n, nundo;
	int v;

	if (!dst[0])
		return;
	for (r = regions; r; r = r->next) {
		nundo = r->nundo;
		for (i = 0; i < nundo; i++) {
			if (strncmp(r->undo[i], "cpuset v", 8) ||
			    !(d = strchr(r->undo[i] + 8, ' ')) ||
			    !(sp = strrchr(r->undo[i], ' ')) || sp <= d || !strcmp(sp + 1, "-"))
				continue;
			n = (size_t)(sp - d - 1);
			if (!((strlen(p->ft.orig_cpuset) == n &&
			       !strncmp(d + 1, p->ft.orig_cpuset, n)) ||
			      (strlen(p->ft.orig_cg) == n && !strncmp(d + 1, p->ft.orig_cg, n))))
				continue;
			v = r->undo[i][8] - '0';
			if (asprintf(&line, "cpuset v%d %s %s", v, dst, sp + 1) < 0)
				continue;
			ctx[1] = r;
			if (undo_rec(ctx, line) < 0)
				log_warn(
				        "region %llu: participant %u came from cpuset %.*s, which the region narrowed: its cpuset %s may stay narrowed",
				        (unsigned long long)r->rq.id, p->id, (int)n, d + 1, dst);
			else
				log_debug(
				        "region %llu: participant %u came from narrowed cpuset %.*s: '%s' added to the undo",
				        (unsigned long long)r->rq.id, p->id, (int)n, d + 1, line);
			free(line);
			break;
		}
	}
}

/* for each GPU slot i of region r */
#define FOR_GPU(k, r, i)                                                                           \
	for ((i) = 0; (i) < (k)->ngpus; (i)++)                                                     \
		if ((r)->rq.mask >> (i)&1)

/* Compute processes on the region's GPUs that are not participants; -1 when
 * NVML cannot tell. */
static int region_foreign(struct krexd *k, struct region *r)
{
	pid_t pids[256];
	unsigned i;
	int n, j, foreign = 0;

	FOR_GPU(k, r, i)
	{
		n = nvml_gpu_pids(k->gpu[i], pids, 256);
		if (n < 0)
			return -1;
		for (j = 0; j < n; j++)
			if (!part_find_pid(k, pids[j]))
				foreign++;
	}
	return foreign;
}

/*
 * GPU telemetry while the siblings drain: the nominal SM clock of each of
 * the region's GPUs, and compute processes on them that are not
 * participants (KREX cannot quiet those, so the certificate reports them).
 * Unknown without NVML.  The clock samples start at the grant.
 */
static void region_telemetry_start(struct krexd *k, struct region *r)
{
	struct krex_certificate *c = &r->cert;
	unsigned i;
	int foreign;

	c->foreign = -1;
	c->sm_clock_start_mhz = c->sm_clock_end_mhz = -1;
	c->sm_clock_min_mhz = c->sm_clock_max_mhz = c->sm_clock_nominal_mhz = -1;
	c->temp_start_c = c->temp_end_c = -1;
	c->known &= ~(KREX_CERT_FOREIGN | KREX_CERT_CLOCKS | KREX_CERT_TEMP | KREX_CERT_VIOLATION);
	r->busy_min = r->busy_max = r->all_min = r->all_max = -1;
	r->cap_first_us = -1;
	r->foreign_end = -1;
	c->own_power_cap_first_us = -1;
	for (i = 0; i < KREX_MAX_GPUS; i++)
		r->nominal[i] = -1;
	if (!r->rq.mask || nvml_open() < 0)
		return;
	FOR_GPU(k, r, i)
	{
		r->nominal[i] = nvml_nominal_clock(k->gpu[i]);
		if (r->nominal[i] > 0 &&
		    (c->sm_clock_nominal_mhz < 0 || r->nominal[i] < c->sm_clock_nominal_mhz))
			c->sm_clock_nominal_mhz = r->nominal[i];
	}
	foreign = region_foreign(k, r);
	if (foreign >= 0) {
		c->foreign = foreign;
		c->known |= KREX_CERT_FOREIGN;
		if (foreign)
			region_note(r, "%d process(es) on the GPU are not participants", foreign);
	}
}

/*
 * Is sample s of a GPU at its unthrottled clock?  No clocks-event reason but
 * idle or application clocks, and the SM clock within clock_tolerance of
 * nominal (an idle GPU's low clock rises with the first kernel: not judged).
 */
static int clock_ok(const struct krexd *k, int32_t nominal, const struct nvml_sample *s)
{
	if (s->event_reasons & ~NVML_REASONS_BENIGN)
		return 0;
	if (s->event_reasons & NVML_REASON_GPU_IDLE || nominal <= 0)
		return 1;
	return s->sm_clock_mhz * 100.0 >= nominal * (100.0 - k->cfg.clock_tolerance);
}

static void minmax(int32_t v, int32_t *lo, int32_t *hi)
{
	if (*lo < 0 || v < *lo)
		*lo = v;
	if (*hi < 0 || v > *hi)
		*hi = v;
}

/*
 * Take one sample of every GPU of the region into the certificate: the
 * reasons ORed, the clocks into min/max, the power cap's first sample and
 * count.  *all gets the lowest clock and the OR of the reasons of this
 * round.  -1 when a read failed.
 */
static int region_sample(struct krexd *k, struct region *r, struct nvml_sample *all)
{
	struct krex_certificate *c = &r->cert;
	struct nvml_sample s;
	unsigned i;
	int rc = 0, first = c->clock_samples == 0 && !r->sample_failed;

	all->sm_clock_mhz = -1;
	all->event_reasons = 0;
	FOR_GPU(k, r, i)
	{
		if (nvml_sample(k->gpu[i], &s) < 0) {
			rc = -1;
			continue;
		}
		all->event_reasons |= s.event_reasons;
		if (all->sm_clock_mhz < 0 || s.sm_clock_mhz < all->sm_clock_mhz)
			all->sm_clock_mhz = s.sm_clock_mhz;
		c->clock_reasons |= s.event_reasons;
		minmax(s.sm_clock_mhz, &r->all_min, &r->all_max);
		if (!(s.event_reasons & NVML_REASON_GPU_IDLE)) {
			minmax(s.sm_clock_mhz, &r->busy_min, &r->busy_max);
			if (!(s.event_reasons & ~NVML_REASONS_BENIGN) &&
			    !clock_ok(k, r->nominal[i], &s))
				*(first ? &r->low_grant : &r->low_busy) = 1;
		}
	}
	if (all->event_reasons & NVML_REASON_SW_POWER_CAP && !first) {
		if (!r->cap_samples++)
			r->cap_first_us = (int64_t)us(time_now_ns() - r->rq.grant_ns);
	}
	if (rc < 0)
		r->sample_failed = 1;
	else
		c->clock_samples++;
	return rc;
}

/* Every GPU of the region at its unthrottled clock?  -1 when a read failed. */
static int region_settled(struct krexd *k, struct region *r)
{
	struct nvml_sample s;
	unsigned i;

	FOR_GPU(k, r, i)
	{
		if (nvml_sample(k->gpu[i], &s) < 0)
			return -1;
		if (!clock_ok(k, r->nominal[i], &s))
			return 0;
	}
	return 1;
}

/* Sampling during the region: not with settle = off, nor without NVML. */
static int region_sampling(const struct krexd *k, const struct region *r)
{
	return k->cfg.settle != SETTLE_OFF && r->sample_at;
}

/*
 * Whose work was on the GPU when it reached its power cap: a process that
 * came during the region counts as much as one that was there at the
 * grant.  Listed again only for a region that reached the cap (the list is
 * the slowest NVML call, and the end waits for it); otherwise the grant's.
 */
static void region_foreign_end(struct krexd *k, struct region *r)
{
	struct krex_certificate *c = &r->cert;

	if (!(c->clock_reasons & NVML_REASON_SW_POWER_CAP) &&
	    !(c->known & KREX_CERT_VIOLATION && c->violation_power_us)) {
		r->foreign_end = c->known & KREX_CERT_FOREIGN ? c->foreign : -1;
		return;
	}
	r->foreign_end = region_foreign(k, r);
	if (r->foreign_end > 0 && r->foreign_end > c->foreign && c->known & KREX_CERT_FOREIGN) {
		region_note(r, "%d process(es) on the GPU at the end are not participants",
		            r->foreign_end);
		c->foreign = r->foreign_end;
	}
}

/* Temperature (the hottest GPU) and violation counters (the largest growth)
 * at the end; clocks stay known only if every read worked. */
static void region_telemetry_end(struct krexd *k, struct region *r)
{
	struct krex_certificate *c = &r->cert;
	struct nvml_sample smp;
	struct nvml_edge e, *e0;
	uint64_t dp, dt;
	int temp = 1, viol = 1;
	unsigned i;

	if (!(c->known & KREX_CERT_CLOCKS))
		return;
	if (region_sample(k, r, &smp) == 0) {
		c->sm_clock_end_mhz = smp.sm_clock_mhz;
		c->throttle_end = smp.event_reasons;
	}
	if (r->sample_failed)
		c->known &= ~KREX_CERT_CLOCKS;
	c->sm_clock_min_mhz = r->busy_min >= 0 ? r->busy_min : r->all_min;
	c->sm_clock_max_mhz = r->busy_max >= 0 ? r->busy_max : r->all_max;
	FOR_GPU(k, r, i)
	{
		e0 = &r->edge0[i];
		nvml_edge(k->gpu[i], &e);
		if (e.temp_c >= 0 && e0->temp_c >= 0) {
			c->temp_start_c =
			        e0->temp_c > c->temp_start_c ? e0->temp_c : c->temp_start_c;
			c->temp_end_c = e.temp_c > c->temp_end_c ? e.temp_c : c->temp_end_c;
		} else
			temp = 0;
		if (!e.viol_known || !e0->viol_known) {
			viol = 0;
			continue;
		}
		/* a counter that went back (reset) grew by nothing we can tell */
		dp = e.viol_power_ns > e0->viol_power_ns
		             ? (e.viol_power_ns - e0->viol_power_ns) / 1000
		             : 0;
		dt = e.viol_thermal_ns > e0->viol_thermal_ns
		             ? (e.viol_thermal_ns - e0->viol_thermal_ns) / 1000
		             : 0;
		if (e.viol_ref_us > e0->viol_ref_us &&
		    e.viol_ref_us - e0->viol_ref_us > r->viol_window_us)
			r->viol_window_us = e.viol_ref_us - e0->viol_ref_us;
		c->violation_power_us = dp > c->violation_power_us ? dp : c->violation_power_us;
		c->violation_thermal_us =
		        dt > c->violation_thermal_us ? dt : c->violation_thermal_us;
	}
	if (temp)
		c->known |= KREX_CERT_TEMP;
	if (viol)
		c->known |= KREX_CERT_VIOLATION;
	region_foreign_end(k, r);
}

/* The freeze is over (all frozen, or freeze_timeout): account for it. */
static void region_frozen(struct krexd *k, struct region *r)
{
	size_t i;

	(void)k;
	r->cert.freeze_us = us(time_now_ns() - r->t_freeze);
	for (i = 0; i < r->nsibs; i++) {
		if (r->sibs[i].frozen)
			r->cert.frozen++;
		else if (r->sibs[i].part)
			region_note(r, "participant %u %s", r->sibs[i].part,
			            r->sibs[i].freeze_err ? "could not be frozen"
			                                  : "not frozen within freeze_timeout");
	}
}

/*
 * One settle poll: grant when the GPU is at its unthrottled clock, or when
 * settle_timeout has passed (the region is then judged on what it got), or
 * when NVML cannot be read (judged as unknown).  Otherwise poll again in
 * KREX_SETTLE_POLL_MS, from the epoll loop's timer: other clients are served
 * meanwhile.
 */
static void region_settle_poll(struct krexd *k, struct region *r, uint64_t now)
{
	if (region_settled(k, r) != 0) {
		region_grant(k, r, now);
		return;
	}
	if (now >= r->settle_deadline) {
		region_note(r, "GPU not settled within settle_timeout (%llu ms)",
		            (unsigned long long)(k->cfg.settle_timeout_ns / NS_PER_MS));
		region_grant(k, r, now);
		return;
	}
	r->settle_poll_at = now + KREX_SETTLE_POLL_MS * NS_PER_MS;
}

/*
 * Does region r have to wait for its GPUs before the grant?  1 when
 * settle = wait and a GPU of the region is not at its unthrottled clock now
 * (one NVML read per GPU), 0 when it may be granted at once (the GPU is
 * back, or not judged: settle = mark/off, no NVML, a read failed).  A caller
 * that knows the GPU was quiet since the last check (a chained region) need
 * not ask.
 */
static int region_settle_needed(struct krexd *k, struct region *r)
{
	if (k->cfg.settle != SETTLE_WAIT || !r->rq.mask || nvml_open() < 0)
		return 0;
	r->cert.known |= KREX_CERT_SETTLE; /* checked: settle_us is 0 or the wait */
	return region_settled(k, r) == 0;
}

/* After the freeze: settle only as long as the GPU needs (settle = wait:
 * until every GPU of the region is back), then grant. */
static void region_settle(struct krexd *k, struct region *r, uint64_t now)
{
	region_frozen(k, r);
	/* Chained after the same owner's region: the GPU ran only that owner's
	 * work, as on a dedicated GPU: no settle.  Chained after another owner:
	 * the GPU ran only region work, so it settles only if that work left it
	 * capped (region_settle_needed() reads it: 0 when it is back). */
	if (r->chain_own || !region_settle_needed(k, r)) {
		region_grant(k, r, now);
		return;
	}
	now = time_now_ns();
	r->phase = PH_SETTLE;
	r->t_settle = now;
	r->settle_deadline = now + k->cfg.settle_timeout_ns;
	r->settle_poll_at = now + KREX_SETTLE_POLL_MS * NS_PER_MS;
}

static void region_grant(struct krexd *k, struct region *r, uint64_t now)
{
	struct nvml_sample smp;
	unsigned i;
	union proto_body m;

	now = time_now_ns(); /* the caller's now predates the freeze work */
	if (r->phase == PH_SETTLE)
		r->cert.settle_us = us(now - r->t_settle);
	rq_grant(&k->rq, &r->rq, now);
	r->phase = PH_HELD;
	if (!r->chained)
		r->chain_t0 = now;
	r->cert.chained = r->chained;
	r->cert.chain_us = r->chained ? us(now - r->chain_t0) : 0;
	k->regions_total++;
	memset(&m, 0, sizeof(m));
	m.grant.region_id = r->rq.id;
	m.grant.lease_us = us(r->rq.lease_ns);
	m.grant.wait_us = r->cert.wait_us;
	m.grant.drain_us = r->cert.drain_us;
	m.grant.freeze_us = r->cert.freeze_us;
	m.grant.isolate_us = r->cert.isolate_us;
	log_debug(
	        "region %llu: granted to participant %u (wait %llu drain %llu freeze %llu us; settle %llu us; isolate %llu us, during the drain; chained %u)",
	        (unsigned long long)r->rq.id, r->owner, (unsigned long long)m.grant.wait_us,
	        (unsigned long long)m.grant.drain_us, (unsigned long long)m.grant.freeze_us,
	        (unsigned long long)r->cert.settle_us, (unsigned long long)m.grant.isolate_us,
	        r->chained);
	if (r->conn)
		conn_send(k, r->conn, PROTO_GRANT, r->seq, &m);
	/* The region's first samples and the edge counters: after the GRANT is
	 * on its way, so the owner does not wait for these NVML reads. */
	if (nvml_open() < 0)
		return;
	FOR_GPU(k, r, i)
	{
		nvml_edge(k->gpu[i], &r->edge0[i]);
	}
	if (region_sample(k, r, &smp) < 0)
		return;
	r->cert.sm_clock_start_mhz = smp.sm_clock_mhz;
	r->cert.throttle_start = smp.event_reasons;
	r->cert.known |= KREX_CERT_CLOCKS;
	r->sample_at = time_now_ns() + KREX_CLOCK_SAMPLE_MS * NS_PER_MS;
}

/* Whether unknown GPU clocks make a region degraded (krexd.conf require_clocks). */
static int clocks_required(const struct krexd *k)
{
	return k->cfg.require_clocks == REQUIRE_CLOCKS_YES ||
	       (k->cfg.require_clocks == REQUIRE_CLOCKS_AUTO && k->nvml_gpus);
}

/* What krexd saw of the region's GPUs, for gpu_judge(). */
static void region_gpu_obs(struct krexd *k, struct region *r, struct gpu_obs *o)
{
	const struct krex_certificate *c = &r->cert;
	size_t i;

	memset(o, 0, sizeof(*o));
	o->held_us = c->held_us;
	o->tolerance = k->cfg.clock_tolerance;
	o->nominal_mhz = c->sm_clock_nominal_mhz;
	o->min_mhz = c->sm_clock_min_mhz;
	o->grant_mhz = c->sm_clock_start_mhz;
	o->reasons_grant = c->throttle_start;
	if (r->chain_own) /* the cap at a chained grant is the same owner's previous region's */
		o->reasons_grant &= ~NVML_REASON_SW_POWER_CAP;
	o->low_grant = r->low_grant;
	o->reasons_all = c->clock_reasons;
	o->low_busy = r->low_busy;
	o->temp_grant_c = c->known & KREX_CERT_TEMP ? c->temp_start_c : -1;
	o->foreign = c->known & KREX_CERT_FOREIGN && r->foreign_end >= 0 ? c->foreign : -1;
	o->late = c->late;
	for (i = 0; i < r->nsibs; i++)
		if (!r->sibs[i].frozen)
			o->unfrozen++;
	o->viol_known = (c->known & KREX_CERT_VIOLATION) != 0;
	o->viol_power_us = c->violation_power_us;
	o->viol_thermal_us = c->violation_thermal_us;
	o->viol_window_us = r->viol_window_us;
	o->cap_samples = r->cap_samples;
	o->cap_first_us = r->cap_first_us;
	o->sample_period_us = region_sampling(k, r) ? KREX_CLOCK_SAMPLE_MS * 1000ULL : 0;
}

/*
 * The GPU's part of the outcome rule (gpujudge.c): degraded only for a
 * state that did not come from the owner's own work in the region; the
 * owner's own power cap is reported in the own_power_cap_* fields.  Clocks
 * that could not be read are a cause when require_clocks says so (not
 * under settle = off).  Each cause becomes a note.
 */
static void region_judge_clocks(struct krexd *k, struct region *r)
{
	struct krex_certificate *c = &r->cert;
	struct gpu_verdict v;
	struct gpu_obs o;
	unsigned i;

	if (!(c->known & KREX_CERT_CLOCKS)) {
		if (k->cfg.settle == SETTLE_OFF || !clocks_required(k))
			return;
		if (nvml_open() < 0) {
			region_note(r, "GPU clocks unknown: NVML not available");
			return;
		}
		FOR_GPU(k, r, i)
		{
			if (!nvml_has(k->gpu[i])) {
				region_note(
				        r,
				        "GPU clocks unknown: NVML does not know GPU %s (name GPUs by index, PCI bus id or UUID)",
				        k->gpu[i]);
				return;
			}
		}
		region_note(r, "GPU clocks unknown: NVML read failed");
		return;
	}
	region_gpu_obs(k, r, &o);
	if (gpu_judge(&o, &v))
		region_note(r, "%s", v.note);
	if (!v.own_known)
		return;
	c->known |= KREX_CERT_OWN_POWER;
	c->own_power_cap_us = v.own_power_cap_us;
	c->own_power_cap_first_us = v.own_power_cap_first_us;
	c->own_power_cap_samples = v.own_power_cap_samples;
}

/* ---- the way out ---- */

/* The participant an undo line is about (0: none known): its pid, or its cpuset cgroup. */
static uint32_t undo_part(struct krexd *k, const char *line)
{
	char dir[1024], path[1100], buf[32];
	const char *sp, *d;
	struct part *p;
	size_t n;
	int pid = 0;
	FILE *f;

	if (sscanf(line, "affinity %d", &pid) == 1)
		return (p = part_find_pid(k, pid)) ? p->id : 0;
	sp = strrchr(line, ' ');
	d = strncmp(line, "cpuset v", 8) ? NULL : strchr(line + 8, ' ');
	if (!d || !sp || sp <= d)
		return 0;
	n = (size_t)(sp - (d + 1)); /* "cpuset vN[+KEEP] DIR CPUS" */
	if (n >= sizeof(dir))
		return 0;
	memcpy(dir, d + 1, n);
	dir[n] = '\0';
	for (p = k->parts; p; p = p->next)
		if (!strcmp(p->ft.cpuset_cg, dir) || !strcmp(p->ft.cg, dir))
			return p->id;
	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	f = fopen(path, "re");
	if (f && fgets(buf, sizeof(buf), f))
		pid = atoi(buf);
	if (f)
		fclose(f);
	return pid > 0 && (p = part_find_pid(k, pid)) ? p->id : 0;
}

/*
 * Undo the isolation, newest first, each line verified (isolate_undo_line).
 * A line that fails keeps its state line and goes to the retries, with
 * every older line of the region after it (they may depend on it: a
 * thread's mask inside a cpuset still narrow); logged and noted once per
 * participant.
 */
static void region_undo(struct krexd *k, struct region *r)
{
	uint32_t noted[16], id;
	unsigned nnoted = 0, j;
	uint64_t now = time_now_ns();
	int failed = 0, rc, fd, err;
	char who[64];
	char *l;

	while (r->nundo > 0) { /* newest first */
		l = r->undo[--r->nundo];
		fd = r->undo_fd[r->nundo];
		rc = isolate_undo_line_fd(l, fd);
		err = errno;
		if (fd >= 0)
			close(fd);
		if (rc == 0 && !failed) {
			state_drop(&k->st, l);
			free(l);
			continue;
		}
		id = undo_part(k, l);
		if (id)
			snprintf(who, sizeof(who), "participant %u", id);
		else
			snprintf(who, sizeof(who), "no participant");
		if (rc < 0) {
			for (j = 0; j < nnoted && noted[j] != id; j++)
				;
			if (j == nnoted) {
				log_error(
				        "region %llu: %s: undo '%s' failed: %s; kept in the state file, retrying",
				        (unsigned long long)r->rq.id, who, l, strerror(err));
				region_note(r, "%s: undo of its CPU isolation failed (%s), retried",
				            who, strerror(err));
				if (nnoted < 16)
					noted[nnoted++] = id;
			}
			failed = 1;
		}
		state_retry_add(&k->st, l, r->rq.id, who, now);
		free(l);
	}
}

/* The way out, first half: the isolation's undo (before a chained region isolates). */
static void region_unwind_iso(struct krexd *k, struct region *r)
{
	uint64_t t0 = time_now_ns();

	r->cost.t_unwind = t0;
	isolate_fds_release(); /* what the undo still opens finds fds */
	region_undo(k, r);
	r->cost.undo_ns = time_now_ns() - t0;
}

/*
 * The way out, second half: drop r's freeze references (the last thaws),
 * open its gates but those of keep (a chained region closed them again for
 * its owner), write the state file.  A sibling a chained region carried has
 * its own reference by now: it stays frozen.
 */
static void region_unwind_rest(struct krexd *k, struct region *r, uint64_t keep)
{
	uint64_t t0 = time_now_ns(), w0 = k->st.write_ns;
	char line[64];
	struct part *p;
	size_t i;
	int opened = 0;

	for (i = 0; i < r->nsibs; i++) {
		p = part_find_id(k, r->sibs[i].part);
		if (!p)
			continue;
		if (r->sibs[i].ref && part_thaw_nosync(k, p) < 0) /* one state write below */
			region_note(r, "participant %u: thaw failed (%s), retried", p->id,
			            strerror(errno));
		p->gated--;
	}
	r->cost.thaw_ns = time_now_ns() - t0 - (k->st.write_ns - w0); /* its state writes apart */
	for (i = 0; i < k->ngpus; i++) {
		if (!(r->rq.mask >> i & 1))
			continue;
		if (!(keep >> i & 1)) {
			gatectl_open_slot(&k->gate, i);
			opened = 1;
		}
		gate_line(line, sizeof(line), (unsigned)i, r->owner);
		state_drop(&k->st, line);
	}
	if (opened || !keep)
		gatectl_bump(&k->gate);
	if (state_sync(&k->st) < 0)
		log_error("state file %s: %s", k->st.path, strerror(errno));
	isolate_fds_reserve();
}

static void region_unwind(struct krexd *k, struct region *r)
{
	region_unwind_iso(k, r);
	region_unwind_rest(k, r, 0);
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
 * The outcome rule: expired when the lease ran out or the region was taken
 * away; clean only when the drain, the freeze, the isolation and the undo
 * went to plan (no note) and the GPU was at its nominal clock with no
 * throttling from grant to end (region_judge_clocks); otherwise degraded,
 * the note naming each cause.
 */
static void region_certify(struct krexd *k, struct region *r, int why, const char *who,
                           uint64_t now)
{
	struct krex_certificate *c = &r->cert;

	c->size = sizeof(*c);
	c->region_id = r->rq.id;
	c->held_us = r->phase == PH_HELD ? us(now - r->rq.grant_ns) : 0;
	c->lease_us = us(r->rq.lease_ns);
	c->siblings = (uint32_t)r->nsibs;
	if (r->phase != PH_HELD) {
		c->foreign = -1;
		c->sm_clock_start_mhz = c->sm_clock_end_mhz = -1;
		c->sm_clock_min_mhz = c->sm_clock_max_mhz = -1;
		c->known &= ~(KREX_CERT_FOREIGN | KREX_CERT_CLOCKS | KREX_CERT_TEMP |
		              KREX_CERT_VIOLATION);
	}
	gpu_list(k, r->rq.mask, c->gpus, sizeof(c->gpus));
	if (why == END_EXPIRED || why == END_RELEASED || why == END_STOP) {
		c->outcome = KREX_OUTCOME_EXPIRED;
		region_note(r, "%s", why == END_EXPIRED ? "lease expired" : who);
		return;
	}
	if (r->phase == PH_HELD)
		region_judge_clocks(k, r);
	if (c->late || c->frozen < c->siblings || c->note[0])
		c->outcome = KREX_OUTCOME_DEGRADED;
	else
		c->outcome = KREX_OUTCOME_CLEAN;
}

/* What happened, for krex log, the region log, the metrics (history.c). */
static void region_record(struct krexd *k, struct region *r, int why, uint64_t now)
{
	struct proto_log_entry e;
	uint64_t wall = time_wall_ns();

	if (r->phase == PH_QUEUED) {
		history_queue_end(k, why == END_TIMEOUT);
		return;
	}
	memset(&e, 0, sizeof(e));
	e.end_us = wall / NS_PER_US;
	e.begin_us = (wall - (now - r->rq.enq_ns)) / NS_PER_US;
	e.uid = (uint32_t)r->uid;
	e.pid = (uint32_t)r->pid;
	e.job = r->job;
	e.step = r->step;
	snprintf(e.label, sizeof(e.label), "%s", r->label);
	e.cert = r->cert;
	history_region_end(k, &e, r->phase == PH_HELD);
}

/* The cost line (struct region_cost): one per region, at debug level. */
static void region_cost_log(struct krexd *k, const struct region *r)
{
	const struct region_cost *c = &r->cost;
	uint64_t entry = r->rq.grant_ns > r->t_close ? r->rq.grant_ns - r->t_close : 0;

	if (log_get_level() < LOG_LVL_DEBUG)
		return;
	log_debug(
	        "region %llu: cost siblings=%zu entry_us=%llu isolate_us=%llu iso_cpuset=%u iso_affinity=%u fz_prepare_us=%llu fz_start_us=%llu fz_poll_us=%llu fz_polls=%u freeze_us=%llu undo_us=%llu thaw_us=%llu exit_us=%llu state_writes=%lu state_us=%llu",
	        (unsigned long long)r->rq.id, r->nsibs, (unsigned long long)us(entry),
	        (unsigned long long)r->cert.isolate_us, c->iso_cpuset, c->iso_affinity,
	        (unsigned long long)us(c->fz_prepare_ns), (unsigned long long)us(c->fz_start_ns),
	        (unsigned long long)us(c->fz_poll_ns), c->fz_polls,
	        (unsigned long long)r->cert.freeze_us, (unsigned long long)us(c->undo_ns),
	        (unsigned long long)us(c->thaw_ns),
	        (unsigned long long)us(time_now_ns() - c->t_unwind), k->st.writes - c->writes0,
	        (unsigned long long)us(k->st.write_ns - c->write_ns0));
}

static void region_unlink(struct region *r)
{
	struct region **pp;

	for (pp = &regions; *pp; pp = &(*pp)->next)
		if (*pp == r) {
			*pp = r->next;
			break;
		}
}

/* The certificate goes to its owner: krexd signs it too (sign.c). */
static void region_sign(struct krexd *k, struct region *r)
{
	struct part *p = part_find_id(k, r->owner);

	sign_cert(k, r->uid, p ? p->job : 0, p ? p->step : 0, &r->cert);
}

/*
 * End r for why: undo everything it did, then answer the owner (CERT for its
 * END, ERROR for a queued request that timed out) or keep the certificate for
 * its END (revoked).  who says who released it.
 */
static void region_finish(struct krexd *k, struct region *r, int why, const char *who)
{
	uint64_t now = time_now_ns();
	struct conn *c = r->conn;
	struct region *next;
	struct part *p;
	union proto_body m;

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
	region_certify(k, r, why, who, now);
	log_debug("region %llu ends (%d): outcome %u, held %llu us", (unsigned long long)r->rq.id,
	          why, r->cert.outcome, (unsigned long long)r->cert.held_us);
	region_record(k, r, why, now);
	if (c) {
		c->region = NULL;
		if (r->phase == PH_QUEUED && why == END_TIMEOUT)
			conn_error(k, c, r->seq, KREX_ETIMEDOUT,
			           "no grant within the queue timeout");
		else if (r->phase != PH_HELD && why != END_GONE && why != END_BY_OWNER)
			conn_error(k, c, r->seq, why == END_STOP ? KREX_ESHUTDOWN : KREX_ENOREGION,
			           "region %llu %s before the grant", (unsigned long long)r->rq.id,
			           why == END_STOP ? "stopped" : "released");
		else if (why == END_BY_OWNER) {
			memset(&m, 0, sizeof(m));
			m.cert = r->cert;
			conn_send(k, c, PROTO_CERT, r->seq, &m);
			region_sign(k, r);
		} else if (why != END_GONE) {
			c->expired = r->cert;
			c->have_expired = 1;
			region_sign(k, r);
		}
	}
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
		                 r->phase == PH_HELD ? r->cert.held_us * NS_PER_US : 0, now);
	}
	if (!r->rq_gone)
		rq_remove(&k->rq, &r->rq, now);
	region_unlink(r);
	free(r->sibs);
	free(r->pending);
	free(r->undo);
	free(r->undo_fd);
	free(r);
	k->resched = 1;
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

void region_conn_gone(struct krexd *k, struct conn *c)
{
	struct region *r, *next;
	struct sib *s;

	if (c->region) {
		c->region->conn = NULL;
		region_finish(k, c->region, END_GONE, NULL);
		c->region = NULL;
	}
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
			region_poll(k, r,
			            now); /* v2: woken by cgroup.events, the timer backs it up */
		else if (r->phase == PH_SETTLE && now >= r->settle_poll_at)
			region_settle_poll(k, r, now);
		else if (r->phase == PH_HELD && region_sampling(k, r) && now >= r->sample_at) {
			struct nvml_sample smp;
			region_sample(k, r, &smp);
			r->sample_at = now + KREX_CLOCK_SAMPLE_MS * NS_PER_MS;
		}
	}
	while ((q = rq_expired(&k->rq, now))) {
		r = q->data;
		if (r->phase == PH_HELD)
			log_info("region %llu: lease expired, revoked", (unsigned long long)q->id);
		region_finish(k, r, r->phase == PH_HELD ? END_EXPIRED : END_TIMEOUT, NULL);
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
	return best;
}

void region_stop_all(struct krexd *k)
{
	k->stopping = 1;
	while (regions)
		region_finish(k, regions, END_STOP, "krexd stopping");
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
