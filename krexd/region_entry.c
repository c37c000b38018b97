/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * region_entry.c - the way in of a region: close its gates and ask the
 * siblings to drain, wait for the acks, freeze them, settle, grant
 * (doc/design.md "The region entry sequence").
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "region_int.h"
#include "outbox.h"
#include "conn.h"
#include "fdio.h"
#include "log.h"
#include "proc.h"
#include "timeutil.h"

static void region_settle(struct krexd *k, struct region *r, uint64_t now);
static void region_grant(struct krexd *k, struct region *r, uint64_t now);

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
 * before prev's thaw) and is not drained again.  One whose drain said its
 * process was exiting is carried as such: r judges it as prev did, by
 * whether its process is still on the GPU (region_start_settle()); entered
 * as usual, it would be a sibling frozen by KREX whose work was never
 * drained, and r degraded for it.  One that was late, failed its drain or
 * was suspended by another is entered as usual.
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
	s->drain_exiting = ps->drain_exiting;
}

/* Close the region's gates and ask every sibling member to drain; prev: the
 * region before it in a chain, whose frozen siblings it keeps (NULL: none). */
void region_close(struct krexd *k, struct region *r, uint64_t now, const struct region *prev)
{
	struct part *p;
	struct conn *c;
	char line[64];
	uint64_t t0;
	unsigned i;

	r->t_close = now;
	r->cost.rd_close = region_run_delay();
	r->cost.writes0 = k->st.writes;
	r->cost.write_ns0 = k->st.write_ns;
	r->cert.wait_us = us(now - r->rq.enq_ns);
	if (k->st.retries) /* failed undos and thaws: once more before anything changes */
		state_retry_flush(&k->st, now);
	for (p = k->parts; p; p = p->next)
		if (p->id != r->owner && (p->mask & r->rq.mask) && sib_add(r, p->id) == 0) {
			p->gated++;
			r->sibs[r->nsibs - 1].ungated = p->members == 0;
			r->sibs[r->nsibs - 1].gate_left = p->members == 0 && p->gate_seen;
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
	r->defer_held = 0; /* its wait's hold of new contexts: the close's now */
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
	/* The telemetry at start needs nothing from the drain: done now.  The
	 * isolation waits for the freeze (region_frozen()): done here, it put
	 * the draining siblings on the few CPUs left to them while they had to
	 * poll, acknowledge and release host-released work (H200, issue 18's
	 * all mix: a sibling without GPU work answered after 64 ms at p95), and
	 * let them see, and keep, the narrowed mask. */
	t0 = time_now_ns();
	region_telemetry_start(k, r);
	log_debug("region %llu: telemetry at start %llu us (acks wait meanwhile)",
	          (unsigned long long)r->rq.id, (unsigned long long)us(time_now_ns() - t0));
	r->phase = PH_DRAIN;
	r->drain_deadline = now + k->cfg.drain_timeout_ns;
}

/* After region_close(): with no ack due, freeze at once.  Now, not the
 * close's now: the freeze phase must not count the isolation and telemetry
 * (freeze_us 22490 without siblings). */
void region_drain_or_freeze(struct krexd *k, struct region *r)
{
	if (!r->npending)
		region_freeze(k, r, time_now_ns());
}

/* ---- drain ---- */

struct sib *sib_find(struct region *r, uint32_t part)
{
	size_t i;

	for (i = 0; i < r->nsibs; i++)
		if (r->sibs[i].part == part)
			return &r->sibs[i];
	return NULL;
}

/* Drop serial from r's pending list; returns 1 if it was there. */
int pending_take(struct region *r, uint64_t serial)
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
		/* Where a drain's time went, per sibling: krexd's wait for this ack
		 * against the gate's own drain (the rest is delivery and wake-up). */
		log_debug(
		        "region %llu: participant %u (pid %d) acknowledged the drain after %llu us, its own drain %llu us, status %u",
		        (unsigned long long)r->rq.id, c->part->id, (int)c->part->pid,
		        (unsigned long long)((time_now_ns() - r->t_close) / 1000),
		        (unsigned long long)a->drain_us, a->status);
		s = sib_find(r, c->part->id);
		if (s) {
			s->pending--;
			/* Its GPU runtime was shutting down (its process exits):
			 * judged by whether the process is still on the GPU
			 * (region_start_settle()), not as a failed drain. */
			if (a->status == KREX_DRAIN_EXITING)
				s->drain_exiting = 1;
			else if (a->status)
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

/* When to poll next: in the freeze's first KREX_FREEZE_FAST_MS every
 * freeze_poll (after one look at 100 us), never more often than
 * KREX_FREEZE_POLL_DUTY times the last round's own cost; past that, or with
 * freeze_poll = 0, from 100 us doubling to 10 ms.  A cgroup v2 change wakes
 * the poll too (region_tick), but the kernel notifies cgroup.events at most
 * once per 10 ms per cgroup, and the thaw at the end of the previous region
 * often took that turn: without a steady poll a freeze that completes at
 * 1.6 ms was seen at 3.1 ms (notebook/h200-session-29). */
static uint64_t poll_step(const struct krexd *k, struct region *r, uint64_t now, uint64_t cost)
{
	uint64_t step = k->cfg.freeze_poll_ns;

	if (step && r->poll_step && now - r->t_freeze < KREX_FREEZE_FAST_MS * NS_PER_MS) {
		if (step < KREX_FREEZE_POLL_DUTY * cost)
			step = KREX_FREEZE_POLL_DUTY * cost;
		return step;
	}
	step = r->poll_step ? r->poll_step * 2 : 100 * NS_PER_US;
	return step > 10 * NS_PER_MS ? 10 * NS_PER_MS : step;
}

/* Test hook: KREX_TEST_FREEZE_POLLS=N in krexd's environment: the first N
 * poll rounds of every freeze look at nothing and find it not yet over, as a
 * slow freeze would (test/integration/krexd-freezepoll.sh). */
static unsigned test_freeze_polls(void)
{
	static int n = -1;
	const char *e;

	if (n < 0) {
		e = getenv("KREX_TEST_FREEZE_POLLS");
		n = e ? atoi(e) : 0;
		if (n < 0 || n > 1000)
			n = 0;
		if (n)
			log_info(
			        "test hook KREX_TEST_FREEZE_POLLS=%d: every freeze takes %d more poll rounds",
			        n, n);
	}
	return (unsigned)n;
}

/* ---- a slow freeze: where its laggards' tasks are (debug) ---- */

/* Task tid's state letter, wchan and syscall (the number, -1 in user mode,
 * "running") into w (wn bytes), as "STATE:WCHAN:SYSCALL"; *frozen 1 when
 * it sits in a freezer or a stop; *exiting 1 when it is leaving (PF_EXITING:
 * in the kernel's exit, its files' release, a GPU context's teardown among
 * them; it never returns to user mode).  -1 when it is gone. */
static int task_where(pid_t tid, char *w, size_t wn, int *frozen, int *exiting)
{
	char path[64], stat[512], wch[64], sc[128], *p;
	struct proc_stat ps;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)tid);
	if (file_read(path, stat, sizeof(stat)) <= 0 || !(p = strrchr(stat, ')')) || p[1] != ' ')
		return -1;
	*exiting = proc_stat_parse(stat, &ps) >= 9 && (ps.flags & KREX_PF_EXITING);
	snprintf(path, sizeof(path), "/proc/%d/wchan", (int)tid);
	if (file_read(path, wch, sizeof(wch)) <= 0 || !wch[0])
		snprintf(wch, sizeof(wch), "-");
	wch[strcspn(wch, "\n ")] = '\0';
	snprintf(path, sizeof(path), "/proc/%d/syscall", (int)tid);
	if (file_read(path, sc, sizeof(sc)) <= 0 || !sc[0])
		snprintf(sc, sizeof(sc), "?");
	sc[strcspn(sc, "\n ")] = '\0';
	/* cgroup v1: __refrigerator; v2: do_freezer_trap, or get_signal where
	 * the kernel inlined it (6.18); a stop: T */
	*frozen = p[2] == 'T' || p[2] == 't' || !strcmp(wch, "__refrigerator") ||
	          (p[2] == 'S' && (!strcmp(wch, "do_freezer_trap") || !strcmp(wch, "get_signal")));
	snprintf(w, wn, "%c:%.40s:%.15s", p[2], wch, sc);
	return 0;
}

/* The tasks of sibling p into tids (at most n): its cgroup's threads (v2
 * cgroup.threads, v1 tasks), else the processes the signal freezer stops
 * (their main threads only). */
static size_t laggard_tasks(const struct part *p, pid_t *tids, size_t n)
{
	char buf[16384], path[600], *q, *e;
	size_t got = 0, i;

	if (p->ft.cg[0]) {
		snprintf(path, sizeof(path), "%s/cgroup.threads", p->ft.cg);
		if (file_read(path, buf, sizeof(buf)) < 0) {
			snprintf(path, sizeof(path), "%s/tasks", p->ft.cg);
			if (file_read(path, buf, sizeof(buf)) < 0)
				return 0;
		}
		for (q = buf; *q && got < n; q = e) {
			long t = strtol(q, &e, 10);
			if (e == q)
				break;
			tids[got++] = (pid_t)t;
			e += strspn(e, "\n");
		}
		return got;
	}
	for (i = 0; i < p->ft.nstopped && got < n; i++)
		tids[got++] = p->ft.stopped[i];
	return got;
}

/* Follow task tid (state letter st at the look) to the freeze's end. */
static void lag_add(struct region *r, pid_t tid, char st)
{
	struct lag_task *t = &r->lag[r->nlag];

	if (r->nlag >= KREX_LAG_FOLLOW || proc_schedstat(tid, &t->run_ns, &t->wait_ns) < 0)
		return;
	t->tid = tid;
	t->state = st;
	r->nlag++;
}

/*
 * The freeze is over: what the tasks followed since the look did until now,
 * in one debug line, each task as TID:STATE:RAN_US:WAITED_US (the growth of
 * its CPU time and of its wait for a CPU since the look, schedstat's: the
 * kernel adds a wait when the task runs, a wait begun before the look too;
 * STATE the one at the look, X for a task exiting then), or TID:STATE:gone
 * (it left since: an exiting process the freeze waited for).  A task
 * runnable at the look that waited for a CPU all along was queued behind
 * other work; one that ran was running (in the kernel: a driver call).
 * entry_split.py sums them per state.
 */
static void region_lag_follow(struct region *r, uint64_t now)
{
	char toks[KREX_LAG_FOLLOW * 64] = "", tok[64];
	unsigned i, gone = 0;
	uint64_t run, wait;

	for (i = 0; i < r->nlag; i++) {
		const struct lag_task *t = &r->lag[i];
		if (proc_schedstat(t->tid, &run, &wait) < 0 || run < t->run_ns ||
		    wait < t->wait_ns) {
			gone++;
			snprintf(tok, sizeof(tok), " %d:%c:gone", (int)t->tid, t->state);
		} else
			snprintf(tok, sizeof(tok), " %d:%c:%llu:%llu", (int)t->tid, t->state,
			         (unsigned long long)us(run - t->run_ns),
			         (unsigned long long)us(wait - t->wait_ns));
		strncat(toks, tok, sizeof(toks) - strlen(toks) - 1);
	}
	log_debug(
	        "region %llu: freeze laggards followed %llu us to the freeze's end: %u tasks, %u gone;%s",
	        (unsigned long long)r->rq.id, (unsigned long long)us(now - r->t_lag), r->nlag, gone,
	        toks);
	r->nlag = 0;
}

/*
 * A freeze still going at KREX_FREEZE_SLOW_MS: once per region, at debug
 * level, one line per sibling not yet frozen (at most 8, 64 tasks each) with
 * where its tasks are: frozen, runnable (R: waiting for a CPU or running), in an
 * uninterruptible wait (D, a driver call among them), asleep (S), exiting
 * (of those not frozen: PF_EXITING, whatever their state), and up to
 * 3 of those not frozen as STATE:WCHAN:SYSCALL (entry_split.py counts
 * them); up to KREX_LAG_FOLLOW of the tasks not frozen are followed to the
 * freeze's end (region_lag_follow).  What a freeze waits for at scale
 * (notebook/h200-session-31).
 */
static void region_freeze_laggards(struct krexd *k, struct region *r, uint64_t now)
{
	pid_t tids[64];
	char ex[3][96], w[96];
	unsigned told = 0, nex, cnt[5]; /* frozen, R, D, S; exiting (not frozen) */
	uint64_t t0 = time_now_ns();
	size_t i, j, n;
	int frozen, exiting;

	r->fz_slow_told = 1;
	r->t_lag = now;
	for (i = 0; i < r->nsibs && told < 8; i++) {
		struct sib *s = &r->sibs[i];
		const struct part *p;
		if (!s->ref || s->frozen || !(p = part_find_id(k, s->part)))
			continue;
		memset(cnt, 0, sizeof(cnt));
		memset(ex, 0, sizeof(ex));
		nex = 0;
		n = laggard_tasks(p, tids, sizeof(tids) / sizeof(tids[0]));
		for (j = 0; j < n; j++) {
			if (task_where(tids[j], w, sizeof(w), &frozen, &exiting) < 0)
				continue;
			if (frozen)
				cnt[0]++;
			else if (w[0] == 'R' || w[0] == 'D' || w[0] == 'S')
				cnt[w[0] == 'R' ? 1 : w[0] == 'D' ? 2 : 3]++;
			cnt[4] += !frozen && exiting;
			if (!frozen && nex < 3)
				snprintf(ex[nex++], sizeof(ex[0]), "%d:%.60s", (int)tids[j], w);
			/* the hook holds a freeze whose tasks are frozen: follow those */
			if (!frozen || test_freeze_polls())
				lag_add(r, tids[j], exiting ? 'X' : w[0]);
		}
		told++;
		log_debug(
		        "region %llu: freeze laggard at +%llu us: participant %u (pid %d): %zu tasks, %u frozen, %u R, %u D, %u S, %u exiting; not frozen: %s %s %s",
		        (unsigned long long)r->rq.id, (unsigned long long)us(now - r->t_freeze),
		        p->id, (int)p->pid, n, cnt[0], cnt[1], cnt[2], cnt[3], cnt[4], ex[0], ex[1],
		        ex[2]);
	}
	/* its own cost, on krexd's loop while the freeze goes on */
	log_debug("region %llu: freeze laggards read in %llu us", (unsigned long long)r->rq.id,
	          (unsigned long long)us(time_now_ns() - t0));
}

void region_poll(struct krexd *k, struct region *r, uint64_t now, int woken)
{
	uint64_t t0 = time_now_ns(), cost;
	struct part *p;
	int all = 1, held, over, rc;
	unsigned nfrozen = 0;
	size_t i;

	r->cost.fz_polls++;
	r->cost.fz_woken += woken ? 1 : 0;
	freezer_round_begin(&k->fz); /* signals: one /proc scan for every sibling's rescan */
	held = r->cost.fz_polls <= test_freeze_polls() && now < r->freeze_deadline;
	for (i = 0; !held && i < 2 * r->nsibs; i++) {
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
			if (p && s->gate && !s->ext && !s->pending && !s->drain_err &&
			    !s->drain_exiting)
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
	cost = time_now_ns() - t0;
	r->cost.fz_poll_ns += cost;
	for (i = 0; i < r->nsibs; i++)
		nfrozen += r->sibs[i].frozen ? 1u : 0u;
	over = (all && !held) || now >= r->freeze_deadline;
	if (!over) {
		r->poll_step = poll_step(k, r, now, cost);
		r->poll_at = now + r->poll_step;
	}
	log_debug("region %llu: freeze poll %u at +%llu us (%s): %u of %zu frozen; next in %llu us",
	          (unsigned long long)r->rq.id, r->cost.fz_polls,
	          (unsigned long long)us(now - r->t_freeze), woken ? "cgroup.events" : "timer",
	          nfrozen, r->nsibs, over ? 0ULL : (unsigned long long)us(r->poll_step));
	if (!over && !r->fz_slow_told && now - r->t_freeze >= KREX_FREEZE_SLOW_MS * NS_PER_MS &&
	    log_get_level() >= LOG_LVL_DEBUG)
		region_freeze_laggards(k, r, now);
	if (over && r->nlag)
		region_lag_follow(r, now);
	if (over)
		region_settle(k, r, now);
}

/* Take a freeze reference on sibling s (its cgroup or pids go to the state
 * file, not yet written); 1 when it was taken. */
int sib_freeze_prepare(struct krexd *k, struct region *r, struct sib *s)
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
void sib_freeze_batch(struct krexd *k, struct region *r, int soon_only)
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
void sib_freeze_soon(struct krexd *k, struct region *r, struct sib *s)
{
	if (!part_find_id(k, s->part) || s->ref || s->freeze_err)
		return;
	s->soon = r->soon = k->freeze_soon = 1;
}

void region_freeze(struct krexd *k, struct region *r, uint64_t now)
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
	region_poll(k, r, now, 0);
}

/* The freeze is over (all frozen, or freeze_timeout): account for it. */
static void region_frozen(struct krexd *k, struct region *r)
{
	size_t i;

	r->cert.freeze_us = us(time_now_ns() - r->t_freeze);
	for (i = 0; i < r->nsibs; i++) {
		if (r->sibs[i].frozen)
			r->cert.frozen++;
		else if (r->sibs[i].part)
			region_note(r, "participant %u %s", r->sibs[i].part,
			            r->sibs[i].freeze_err ? "could not be frozen"
			                                  : "not frozen within freeze_timeout");
	}
	/* The isolation, once the siblings are frozen: a sibling that runs
	 * never sees the others' CPUs as all it has (a library that binds to
	 * the CPUs it finds would keep them after the region), and none is
	 * squeezed onto those few CPUs while it must drain.  region_unwind()
	 * undoes it, before the thaw, on every way out. */
	r->t_iso = time_now_ns();
	region_isolate(k, r);
	r->cert.isolate_us = us(time_now_ns() - r->t_iso);
}

/*
 * One settle poll: grant when the GPU is at its unthrottled clock, or when
 * settle_timeout has passed (the region is then judged on what it got), or
 * when NVML cannot be read (judged as unknown); and when no exiting process
 * is awaited (region_exit_poll(): its own bound, exit_wait).  Otherwise poll
 * again in KREX_SETTLE_POLL_MS, from the epoll loop's timer: other clients
 * are served meanwhile.
 */
void region_settle_poll(struct krexd *k, struct region *r, uint64_t now)
{
	if (r->clock_wait && region_settled(k, r) != 0)
		r->clock_wait = 0;
	else if (r->clock_wait && now >= r->settle_deadline) {
		region_note(r, "GPU not settled within settle_timeout (%llu ms)",
		            (unsigned long long)(k->cfg.settle_timeout_ns / NS_PER_MS));
		r->clock_wait = 0;
	}
	if (region_exit_poll(k, r, now) || r->clock_wait) {
		r->settle_poll_at = now + KREX_SETTLE_POLL_MS * NS_PER_MS;
		return;
	}
	region_grant(k, r, now);
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
	region_start_settle(k, r); /* may wait for exiting processes (r->exit_wait) */
	now = time_now_ns();       /* the isolation ran in region_frozen() */
	/* Chained after the same owner's region: the GPU ran only that owner's
	 * work, as on a dedicated GPU: no settle.  Chained after another owner:
	 * the GPU ran only region work, so it settles only if that work left it
	 * capped (region_settle_needed() reads it: 0 when it is back). */
	r->clock_wait = !r->chain_own && region_settle_needed(k, r);
	if (!r->clock_wait && !r->exit_wait) {
		region_grant(k, r, now);
		return;
	}
	/* Exiting processes held the start's process list back
	 * (region_judge.c): listed again now, and each poll, beside the clock. */
	now = time_now_ns();
	r->phase = PH_SETTLE;
	r->t_settle = now;
	if (r->exit_wait)
		r->exit_t0 = now; /* exit_wait's bound starts */
	r->settle_deadline = now + k->cfg.settle_timeout_ns;
	r->settle_poll_at = now + KREX_SETTLE_POLL_MS * NS_PER_MS;
	if (!region_exit_poll(k, r, now) && !r->clock_wait)
		region_grant(k, r, now);
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
	r->cost.rd_grant = region_run_delay();
	log_debug(
	        "region %llu: granted to participant %u (wait %llu drain %llu freeze %llu us; settle %llu us; isolate %llu us, after the freeze; chained %u)",
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
