/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * history.c - what happened (history.h): the last `history` certificates in
 * a ring (PROTO_LOG), per-step figures (PROTO_SUMMARY), the region log
 * lines and the metrics text, both written by logwriter.c's thread.
 * Everything here runs in the epoll loop and is bounded: the ring by
 * `history`, the steps by HIST_STEPS, the metrics by fixed label sets.
 */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "history.h"
#include "certjson.h"
#include "krexd.h"
#include "conn.h"
#include "outbox.h"
#include "log.h"
#include "logwriter.h"
#include "timeutil.h"

/* ---- causes ---- */

static const char *const cause_names[CAUSE_MAX] = {
        "drain",     "freeze", "suspend",    "settle",    "clocks",  "clocks_unknown", "foreign",
        "isolation", "thaw",   "state_file", "early_end", "ungated", "other"};

const char *history_cause_name(int cause)
{
	return cause >= 0 && cause < CAUSE_MAX ? cause_names[cause] : "other";
}

/* The texts region_note() writes (region.c, isolate.c), by class; first match wins. */
static const struct {
	const char *text;
	int cause;
} cause_texts[] = {
        {"never joined the gate", CAUSE_UNGATED},
        {"had no process in the gate", CAUSE_UNGATED},
        {"acknowledge the drain", CAUSE_DRAIN},
        {"drain failed", CAUSE_DRAIN},
        {"suspended", CAUSE_SUSPEND},
        {"resumed by another", CAUSE_SUSPEND},
        {"killed during the region", CAUSE_SUSPEND},
        {"thawed by another", CAUSE_SUSPEND},
        {"thaw failed", CAUSE_THAW},
        {"state file", CAUSE_STATE_FILE},
        {"not frozen", CAUSE_FREEZE},
        {"could not be frozen", CAUSE_FREEZE},
        {"not settled", CAUSE_SETTLE},
        {"clocks unknown", CAUSE_CLOCKS_UNKNOWN},
        {"not participants", CAUSE_FOREIGN},
        {"isolation", CAUSE_ISOLATION},
        {"power cap", CAUSE_CLOCKS},
        {"thermal", CAUSE_CLOCKS},
        {"SM clock", CAUSE_CLOCKS},
        {": SM ", CAUSE_CLOCKS},
        {"ended before the grant", CAUSE_EARLY_END},
};

static int cause_of(const char *s, size_t n)
{
	char one[256];
	size_t i;

	if (n >= sizeof(one))
		n = sizeof(one) - 1;
	memcpy(one, s, n);
	one[n] = '\0';
	for (i = 0; i < sizeof(cause_texts) / sizeof(cause_texts[0]); i++)
		if (strstr(one, cause_texts[i].text))
			return cause_texts[i].cause;
	return CAUSE_OTHER;
}

unsigned history_cause_classes(const char *note)
{
	const char *p = note, *sep;
	unsigned mask = 0;

	while (*p) {
		sep = strstr(p, "; ");
		size_t n = sep ? (size_t)(sep - p) : strlen(p);
		if (n)
			mask |= 1u << cause_of(p, n);
		if (!sep)
			break;
		p = sep + 2;
	}
	return mask;
}

/* ---- state ---- */

/* Histogram bounds in seconds (Prometheus le), shared by every histogram. */
static const double hist_le[] = {0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
                                 0.1,    0.25,    0.5,    1,     2.5,    5,     10,   30,    60};
#define NLE (sizeof(hist_le) / sizeof(hist_le[0]))

struct phist {
	uint64_t b[NLE]; /* not cumulative; +Inf is count */
	uint64_t count;
	uint64_t sum_us;
};

enum { H_WAIT = 0, H_DRAIN, H_FREEZE, H_SETTLE, H_ENTRY, H_HELD, H_MAX };
static const char *const hist_names[H_MAX] = {"wait", "drain", "freeze", "settle", "entry", "held"};
static const char *const hist_help[H_MAX] = {
        "Time a region waited in the queue",
        "Time from closing the gates to the last drain acknowledgement (or drain_timeout)",
        "Time from the last acknowledgement until every sibling was frozen",
        "Time waited after the freeze for the GPU's clock (settle = wait)",
        "Time from REGION_BEGIN to the grant (wait + drain + freeze + settle)",
        "Time a region was held, from the grant to its end"};

/* One Slurm step's regions (by uid: root sees the sum, a user its own). */
#define HIST_STEPS 1024
#define STEP_EXACT 64 /* entry times kept exactly; beyond, the log histogram */
#define STEP_HB 8     /* log histogram buckets per octave of microseconds */
#define STEP_NB (STEP_HB * 40)

struct step_sum {
	uint32_t job, step, uid;
	uint64_t used_ns; /* last update, for eviction */
	uint32_t regions, clean, degraded, expired, late, granted;
	uint64_t exact[STEP_EXACT];
	uint32_t hb[STEP_NB];
	uint64_t entry_max_us, held_us;
};

static struct {
	struct proto_log_entry *ring;
	unsigned cap, head, count; /* head: where the next one goes */
	uint64_t total;
	struct step_sum *steps;
	unsigned nsteps;
	uint64_t by_outcome[KREX_OUTCOME_UNPROTECTED + 1];
	uint64_t not_entered[2]; /* timed out, given up */
	uint64_t causes[CAUSE_MAX];
	uint64_t siblings, late, frozen;
	uint64_t ctx_defer,
	        ctx_defer_ns; /* regions that waited for contexts (ctx_defer), their waits */
	struct phist h[H_MAX];
	uint64_t m_last_ns; /* metrics last handed over */
	int m_dirty;
	int writer; /* the writer thread runs */
} H;

#define METRICS_MIN_NS (1 * NS_PER_S)     /* at most once a second after a region end */
#define METRICS_REFRESH_NS (5 * NS_PER_S) /* and every 5 s for the gauges */

static void ring_resize(unsigned cap)
{
	struct proto_log_entry *n = NULL;
	unsigned keep, i;

	if (cap == H.cap)
		return;
	if (cap) {
		n = calloc(cap, sizeof(*n));
		if (!n) {
			log_error("history: out of memory for %u entries; keeping %u", cap, H.cap);
			return;
		}
	}
	keep = H.count < cap ? H.count : cap;
	for (i = 0; i < keep; i++) /* the newest keep, oldest first */
		n[i] = H.ring[(H.head + H.cap - keep + i) % H.cap];
	free(H.ring);
	H.ring = n;
	H.cap = cap;
	H.count = keep;
	H.head = cap ? keep % cap : 0;
}

static void steps_alloc(void)
{
	if (!H.steps && !(H.steps = calloc(HIST_STEPS, sizeof(*H.steps))))
		log_error("history: out of memory for the step summaries");
}

int history_init(struct krexd *k)
{
	int efd;

	ring_resize(k->cfg.history);
	steps_alloc();
	efd = lw_start();
	if (efd < 0) {
		log_error("history: writer thread: %s (no region log, no metrics file)",
		          strerror(errno));
		return -1;
	}
	H.writer = 1;
	lw_config(k->cfg.region_log, k->cfg.region_log_max, k->cfg.region_log_keep,
	          k->cfg.metrics_file);
	H.m_dirty = 1;
	return efd;
}

void history_reconfigure(struct krexd *k, int reopen)
{
	ring_resize(k->cfg.history);
	steps_alloc();
	if (!H.writer)
		return;
	lw_config(k->cfg.region_log, k->cfg.region_log_max, k->cfg.region_log_keep,
	          k->cfg.metrics_file);
	if (reopen)
		lw_reopen();
	H.m_dirty = 1;
	H.m_last_ns = 0;
}

void history_fini(struct krexd *k)
{
	if (H.writer && k->cfg.metrics_file[0]) {
		size_t n;
		char *t = history_metrics_text(k, &n);
		if (t)
			lw_metrics(t, n);
	}
	if (H.writer)
		lw_stop(2000);
	H.writer = 0;
	free(H.ring);
	free(H.steps);
	memset(&H, 0, sizeof(H));
}

/* ---- recording ---- */

static void phist_add(struct phist *h, uint64_t us)
{
	double s = (double)us / 1e6;
	size_t i;

	for (i = 0; i < NLE; i++)
		if (s <= hist_le[i]) {
			h->b[i]++;
			break;
		}
	h->count++;
	h->sum_us += us;
}

static unsigned step_bucket(uint64_t us)
{
	unsigned b = 0;
	uint64_t v = us ? us : 1;
	int oct = 63 - __builtin_clzll(v);
	/* sub-bucket: the STEP_HB equal steps of the octave [2^oct, 2^(oct+1)) */
	uint64_t frac =
	        oct >= 3 ? (v - (1ULL << oct)) >> (oct - 3) : (v - (1ULL << oct)) << (3 - oct);

	b = (unsigned)oct * STEP_HB + (unsigned)(frac < STEP_HB ? frac : STEP_HB - 1);
	return b < STEP_NB ? b : STEP_NB - 1;
}

/* The upper bound of bucket b, in microseconds. */
static uint64_t step_bucket_top(unsigned b)
{
	unsigned oct = b / STEP_HB, sub = b % STEP_HB;

	return (1ULL << oct) + (((uint64_t)(sub + 1) << oct) / STEP_HB);
}

static struct step_sum *step_get(uint32_t job, uint32_t step, uint32_t uid, int add)
{
	struct step_sum *s, *old = NULL;
	unsigned i;

	if (!H.steps)
		return NULL;
	for (i = 0; i < H.nsteps; i++) {
		s = &H.steps[i];
		if (s->job == job && s->step == step && s->uid == uid)
			return s;
		if (!old || s->used_ns < old->used_ns)
			old = s;
	}
	if (!add)
		return NULL;
	if (H.nsteps < HIST_STEPS)
		s = &H.steps[H.nsteps++];
	else
		s = old; /* the least recently updated step goes */
	memset(s, 0, sizeof(*s));
	s->job = job;
	s->step = step;
	s->uid = uid;
	return s;
}

static void step_add(const struct proto_log_entry *e, int granted, uint64_t entry_us)
{
	struct step_sum *s = step_get(e->job, e->step, e->uid, 1);

	if (!s)
		return;
	s->used_ns = time_now_ns();
	s->regions++;
	s->clean += e->cert.outcome == KREX_OUTCOME_CLEAN;
	s->degraded += e->cert.outcome == KREX_OUTCOME_DEGRADED;
	s->expired += e->cert.outcome == KREX_OUTCOME_EXPIRED;
	s->late += e->cert.late;
	s->held_us += e->cert.held_us;
	if (!granted)
		return;
	if (s->granted < STEP_EXACT)
		s->exact[s->granted] = entry_us;
	s->granted++;
	s->hb[step_bucket(entry_us)]++;
	if (entry_us > s->entry_max_us)
		s->entry_max_us = entry_us;
}

void history_region_end(struct krexd *k, struct proto_log_entry *e, int granted)
{
	const struct krex_certificate *c = &e->cert;
	uint64_t entry_us = c->wait_us + c->drain_us + c->freeze_us + c->settle_us;
	char *line;
	unsigned mask, i;
	int n;

	e->seq = ++H.total;
	if (H.cap) {
		H.ring[H.head] = *e;
		H.head = (H.head + 1) % H.cap;
		if (H.count < H.cap)
			H.count++;
	}
	if (c->outcome <= KREX_OUTCOME_UNPROTECTED)
		H.by_outcome[c->outcome]++;
	if (c->outcome == KREX_OUTCOME_DEGRADED) {
		mask = history_cause_classes(c->note);
		if (c->late && !(mask & 1u << CAUSE_DRAIN))
			mask |= 1u << CAUSE_DRAIN;
		if (!mask)
			mask = 1u << CAUSE_OTHER;
		for (i = 0; i < CAUSE_MAX; i++)
			if (mask >> i & 1)
				H.causes[i]++;
	}
	H.siblings += c->siblings;
	H.late += c->late;
	H.frozen += c->frozen;
	phist_add(&H.h[H_WAIT], c->wait_us);
	phist_add(&H.h[H_DRAIN], c->drain_us);
	phist_add(&H.h[H_FREEZE], c->freeze_us);
	if (c->known & KREX_CERT_SETTLE)
		phist_add(&H.h[H_SETTLE], c->settle_us);
	if (granted) {
		phist_add(&H.h[H_ENTRY], entry_us);
		phist_add(&H.h[H_HELD], c->held_us);
	}
	if (e->job)
		step_add(e, granted, entry_us);
	H.m_dirty = 1;
	if (!H.writer || !k->cfg.region_log[0])
		return;
	line = malloc(JSON_LOG_ENTRY_MAX);
	if (!line)
		return;
	n = json_log_entry(e, k->cfg.node_name, line, JSON_LOG_ENTRY_MAX);
	if (n > 0 && n < JSON_LOG_ENTRY_MAX && lw_line(line, (size_t)n) < 0) {
		static uint64_t said_ns;
		uint64_t now = time_now_ns();
		if (!said_ns || now - said_ns > 10 * NS_PER_S) {
			said_ns = now;
			log_warn(
			        "region log %s: %u bytes wait to be written, a line was dropped (a slow disk?) (logged once per 10 s)",
			        k->cfg.region_log, LW_BUFFER);
		}
	}
	free(line);
}

void history_queue_end(struct krexd *k, int timeout)
{
	(void)k;
	H.not_entered[timeout ? 0 : 1]++;
	H.m_dirty = 1;
}

void history_ctx_defer(uint64_t wait_ns)
{
	H.ctx_defer++;
	H.ctx_defer_ns += wait_ns;
	H.m_dirty = 1;
}

/* ---- metrics ---- */

struct sbuf {
	char *p;
	size_t len, cap;
	int err;
};

static void __attribute__((format(printf, 2, 3))) sb_printf(struct sbuf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (b->err)
		return;
	for (;;) {
		va_start(ap, fmt);
		n = vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap);
		va_end(ap);
		if (n < 0) {
			b->err = 1;
			return;
		}
		if ((size_t)n < b->cap - b->len) {
			b->len += (size_t)n;
			return;
		}
		char *np = realloc(b->p, b->cap * 2 + (size_t)n);
		if (!np) {
			b->err = 1;
			return;
		}
		b->p = np;
		b->cap = b->cap * 2 + (size_t)n;
	}
}

/* A label value in the text format: backslash, double quote and newline escaped. */
static void prom_label(char *out, size_t len, const char *s)
{
	size_t o = 0;

	for (; *s && o + 3 < len; s++) {
		if (*s == '\\' || *s == '"') {
			out[o++] = '\\';
			out[o++] = *s;
		} else if (*s == '\n') {
			out[o++] = '\\';
			out[o++] = 'n';
		} else
			out[o++] = *s;
	}
	out[o] = '\0';
}

static void head(struct sbuf *b, const char *name, const char *type, const char *help)
{
	sb_printf(b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

char *history_metrics_text(struct krexd *k, size_t *len)
{
	struct sbuf b = {.cap = 16384};
	static const char *const outcomes[] = {"clean", "expired", "degraded"};
	unsigned queued = 0, held = 0, i, j;
	uint64_t dropped = 0, errors = 0, cum;
	struct rq_req *q;
	char node[200];

	b.p = malloc(b.cap);
	if (!b.p)
		return NULL;
	for (q = k->rq.head; q; q = q->next) {
		if (q->state == RQ_QUEUED)
			queued++;
		else
			held++;
	}
	if (H.writer)
		lw_counts(&dropped, &errors);
	prom_label(node, sizeof(node), k->cfg.node_name);
	head(&b, "krex_info", "gauge", "krexd's version and node name (always 1).");
	sb_printf(&b, "krex_info{version=\"%s\",node=\"%s\"} 1\n", PACKAGE_VERSION, node);
	head(&b, "krex_start_time_seconds", "gauge", "When krexd started, Unix time.");
	sb_printf(&b, "krex_start_time_seconds %.3f\n",
	          (double)(time_wall_ns() - (time_now_ns() - k->start_ns)) / 1e9);
	head(&b, "krex_regions_total", "counter",
	     "Regions that ended after they entered (gates closed), by outcome.");
	for (i = 0; i < 3; i++)
		sb_printf(&b, "krex_regions_total{outcome=\"%s\"} %llu\n", outcomes[i],
		          (unsigned long long)H.by_outcome[i]);
	head(&b, "krex_regions_not_entered_total", "counter",
	     "Requests that left the queue without entering: timed out, or given up (released, disconnected, krexd stopping).");
	sb_printf(&b, "krex_regions_not_entered_total{reason=\"timeout\"} %llu\n",
	          (unsigned long long)H.not_entered[0]);
	sb_printf(&b, "krex_regions_not_entered_total{reason=\"gone\"} %llu\n",
	          (unsigned long long)H.not_entered[1]);
	head(&b, "krex_region_degraded_causes_total", "counter",
	     "Degraded regions by cause class (a region with several classes counts in each).");
	for (i = 0; i < CAUSE_MAX; i++)
		sb_printf(&b, "krex_region_degraded_causes_total{cause=\"%s\"} %llu\n",
		          cause_names[i], (unsigned long long)H.causes[i]);
	head(&b, "krex_region_siblings_total", "counter",
	     "Participants that shared a region's GPUs, summed over regions.");
	sb_printf(&b, "krex_region_siblings_total %llu\n", (unsigned long long)H.siblings);
	head(&b, "krex_region_late_siblings_total", "counter",
	     "Siblings that did not acknowledge the drain within drain_timeout (frozen anyway).");
	sb_printf(&b, "krex_region_late_siblings_total %llu\n", (unsigned long long)H.late);
	head(&b, "krex_region_frozen_siblings_total", "counter",
	     "Siblings the kernel reported frozen.");
	sb_printf(&b, "krex_region_frozen_siblings_total %llu\n", (unsigned long long)H.frozen);
	head(&b, "krex_region_ctx_defer_total", "counter",
	     "Regions that waited, gates open, for siblings' GPU contexts being made (ctx_defer).");
	sb_printf(&b, "krex_region_ctx_defer_total %llu\n", (unsigned long long)H.ctx_defer);
	head(&b, "krex_region_ctx_defer_seconds_total", "counter",
	     "Those regions' waits for the contexts, summed (in their queue time).");
	sb_printf(&b, "krex_region_ctx_defer_seconds_total %.6f\n",
	          (double)H.ctx_defer_ns / (double)NS_PER_S);
	for (i = 0; i < H_MAX; i++) {
		char name[64], help[200];
		snprintf(name, sizeof(name), "krex_region_%s_seconds", hist_names[i]);
		snprintf(help, sizeof(help), "%s.", hist_help[i]);
		head(&b, name, "histogram", help);
		for (j = 0, cum = 0; j < NLE; j++) {
			cum += H.h[i].b[j];
			sb_printf(&b, "%s_bucket{le=\"%g\"} %llu\n", name, hist_le[j],
			          (unsigned long long)cum);
		}
		sb_printf(&b, "%s_bucket{le=\"+Inf\"} %llu\n", name,
		          (unsigned long long)H.h[i].count);
		sb_printf(&b, "%s_sum %.6f\n", name, (double)H.h[i].sum_us / 1e6);
		sb_printf(&b, "%s_count %llu\n", name, (unsigned long long)H.h[i].count);
	}
	head(&b, "krex_participants", "gauge", "Participants registered now.");
	sb_printf(&b, "krex_participants %u\n", k->nparts);
	head(&b, "krex_regions_queued", "gauge", "Regions waiting in the queue now.");
	sb_printf(&b, "krex_regions_queued %u\n", queued);
	head(&b, "krex_regions_held", "gauge", "Regions held or entering now.");
	sb_printf(&b, "krex_regions_held %u\n", held);
	head(&b, "krex_participants_made_total", "counter",
	     "Participants made since krexd started (each a cgroup made and a pid moved into it).");
	sb_printf(&b, "krex_participants_made_total %llu\n", (unsigned long long)k->parts_made);
	head(&b, "krex_participant_make_seconds_total", "counter",
	     "Time krexd's loop spent making them, summed (the moves into their cgroups are on the mover thread, but with KREXD_MOVE_INLINE=1).");
	sb_printf(&b, "krex_participant_make_seconds_total %.6f\n", (double)k->parts_made_ns / 1e9);
	head(&b, "krex_participant_move_seconds_total", "counter",
	     "Time the mover thread spent moving their pids into their cgroups, summed (without the kernel's favordynmods each move may wait for an RCU grace period).");
	sb_printf(&b, "krex_participant_move_seconds_total %.6f\n",
	          (double)k->parts_moved_ns / 1e9);
	head(&b, "krex_participant_move_held_seconds_total", "counter",
	     "Time moves not begun waited for regions' entries, summed (KREXD_MOVE_HOLD_MS in krexd's environment, krexd(8); 0 without it).");
	sb_printf(&b, "krex_participant_move_held_seconds_total %.6f\n",
	          (double)k->parts_move_held_ns / 1e9);
	head(&b, "krex_cgroup_favordynmods", "gauge",
	     "1 when the cgroup hierarchy krexd moves participants into has the kernel's favordynmods, 0 when not, -1 unknown or no cgroup freezer.");
	sb_printf(&b, "krex_cgroup_favordynmods %d\n", k->favordynmods);
	head(&b, "krex_gpus", "gauge", "GPUs in krexd's table.");
	sb_printf(&b, "krex_gpus %u\n", k->ngpus);
	head(&b, "krex_history_entries", "gauge", "Certificates kept in memory for krex log.");
	sb_printf(&b, "krex_history_entries %u\n", H.count);
	head(&b, "krex_region_log_dropped_lines_total", "counter",
	     "Region log lines not written (the writer fell behind, or a write failed).");
	sb_printf(&b, "krex_region_log_dropped_lines_total %llu\n", (unsigned long long)dropped);
	head(&b, "krex_file_write_errors_total", "counter",
	     "Failed writes of the region log and the metrics file.");
	sb_printf(&b, "krex_file_write_errors_total %llu\n", (unsigned long long)errors);
	if (b.err) {
		free(b.p);
		return NULL;
	}
	*len = b.len;
	return b.p;
}

void history_tick(struct krexd *k, uint64_t now)
{
	size_t n;
	char *t;

	if (!H.writer || !k->cfg.metrics_file[0] || now < history_next_deadline(k))
		return;
	t = history_metrics_text(k, &n);
	if (!t)
		return;
	lw_metrics(t, n);
	H.m_last_ns = now;
	H.m_dirty = 0;
}

uint64_t history_next_deadline(struct krexd *k)
{
	if (!H.writer || !k->cfg.metrics_file[0])
		return 0;
	if (!H.m_last_ns)
		return 1; /* now */
	return H.m_last_ns + (H.m_dirty ? METRICS_MIN_NS : METRICS_REFRESH_NS);
}

/* ---- requests ---- */

static int log_match(const struct proto_log_entry *e, const struct proto_log *q, uid_t uid)
{
	if (uid != 0 && e->uid != (uint32_t)uid)
		return 0; /* a user sees their own regions (doc/security.md) */
	if (q->before && e->seq >= q->before)
		return 0;
	if (q->job && e->job != q->job)
		return 0;
	if (q->step != PROTO_LOG_ANY_STEP && e->step != q->step)
		return 0;
	if (q->outcomes && !(q->outcomes >> (e->cert.outcome & 31) & 1))
		return 0;
	return e->end_us >= q->since_us;
}

/* Packed size of one entry (PROTO_LOG_ENTRY_MIN plus its strings). */
static size_t log_entry_size(const struct proto_log_entry *e)
{
	return PROTO_LOG_ENTRY_MIN + strlen(e->label) + strlen(e->cert.owner_cores) +
	       strlen(e->cert.gpus) + strlen(e->cert.note);
}

void history_log(struct krexd *k, struct conn *c, uint32_t seq, const struct proto_log *q)
{
	union proto_body m;
	struct proto_log_reply *r = &m.log_reply;
	size_t room, want = q->max ? q->max : 65535, size;
	unsigned i;

	memset(&m, 0, sizeof(m));
	snprintf(r->node, sizeof(r->node), "%s", k->cfg.node_name);
	r->total = H.total;
	r->kept = H.count;
	room = PROTO_MAX_PAYLOAD - (2 + strlen(r->node) + 3 * 8 + 2);
	r->e = calloc(H.count < want ? (H.count ? H.count : 1) : want, sizeof(*r->e));
	if (!r->e) {
		conn_error(k, c, seq, KREX_ENOMEM, "out of memory");
		return;
	}
	for (i = 0; i < H.count; i++) { /* newest first */
		const struct proto_log_entry *e = &H.ring[(H.head + H.cap - 1 - i) % H.cap];
		if (!log_match(e, q,
		               c->uid)) /* all of them: the wall clock may have stepped back */
			continue;
		size = log_entry_size(e);
		if (r->n >= want || size > room || r->n == 65535) {
			r->next = r->e[r->n - 1].seq; /* a page is full and more match */
			break;
		}
		r->e[r->n++] = *e;
		room -= size;
	}
	conn_send(k, c, PROTO_LOG_REPLY, seq, &m);
	free(r->e);
}

/* The value at rank ceil(p * n) of the step's entry times. */
static uint64_t step_quantile(const struct step_sum *const *s, unsigned ns, double p)
{
	uint64_t all[STEP_EXACT], v;
	unsigned n = 0, i, j, rank, b;

	for (i = 0; i < ns; i++)
		n += s[i]->granted;
	if (!n)
		return 0;
	rank = (unsigned)(p * n + 0.999999);
	if (rank < 1)
		rank = 1;
	if (n <= STEP_EXACT) { /* exact: sort the few */
		unsigned m = 0;
		for (i = 0; i < ns; i++)
			for (j = 0; j < s[i]->granted; j++)
				all[m++] = s[i]->exact[j];
		for (i = 1; i < m; i++)
			for (j = i; j > 0 && all[j - 1] > all[j]; j--) {
				v = all[j];
				all[j] = all[j - 1];
				all[j - 1] = v;
			}
		return all[rank - 1];
	}
	for (b = 0, j = 0; b < STEP_NB; b++) { /* the bucket's top: within 1/8 octave */
		for (i = 0; i < ns; i++)
			j += s[i]->hb[b];
		if (j >= rank)
			return step_bucket_top(b);
	}
	return 0;
}

void history_step_summary(uid_t uid, uint32_t job, uint32_t step, struct proto_summary_reply *r)
{
	const struct step_sum *found[HIST_STEPS];
	unsigned i, n = 0;

	memset(r, 0, sizeof(*r));
	r->job = job;
	r->step = step;
	for (i = 0; H.steps && i < H.nsteps; i++) {
		const struct step_sum *s = &H.steps[i];
		if (s->job != job || s->step != step || (uid != 0 && s->uid != (uint32_t)uid))
			continue;
		found[n++] = s;
		r->regions += s->regions;
		r->clean += s->clean;
		r->degraded += s->degraded;
		r->expired += s->expired;
		r->late += s->late;
		r->held_us += s->held_us;
		if (s->entry_max_us > r->entry_max_us)
			r->entry_max_us = s->entry_max_us;
	}
	r->entry_p50_us = step_quantile(found, n, 0.50);
	r->entry_p95_us = step_quantile(found, n, 0.95);
}

void history_summary(struct krexd *k, struct conn *c, uint32_t seq, const struct proto_summary *q)
{
	union proto_body m;

	history_step_summary(c->uid, q->job, q->step, &m.summary_reply);
	conn_send(k, c, PROTO_SUMMARY_REPLY, seq, &m);
}
