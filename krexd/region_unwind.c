/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * region_unwind.c - isolation and its undo lines, and the way out of a
 * region: undo, thaw, open gates, certify, record, sign.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "region_int.h"
#include "fdio.h"
#include "gpuslot.h"
#include "history.h"
#include "isolate.h"
#include "sign.h"
#include "log.h"
#include "proc.h"
#include "timeutil.h"

struct region *regions;

/* ---- isolate ---- */

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

void region_isolate(struct krexd *k, struct region *r)
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
 * A participant made while a region's gates are closed on one of its GPUs
 * (a command started beside the region) is remembered by the region: its
 * launches and the making of its CUDA context wait at the gate, but without
 * the gate's hold (KREX_GATE_CONTEXTS=pass, HIP's implicit initialisation, no
 * gate) it makes its context during the region, and on the H200 that slowed
 * the owner's timed samples (doc/performance.md "Contexts held at the
 * gate").  region_late_judge() lists the GPU's processes at the region's
 * end and notes one of such a participant there.  Not frozen: it may be the
 * next owner, which must be able to queue its request.
 */
void region_late_part(struct part *p)
{
	struct region *r;
	uint32_t *n;
	size_t i;

	for (r = regions; r; r = r->next) {
		if (r->phase == PH_QUEUED || r->owner == p->id || !(r->rq.mask & p->mask))
			continue;
		for (i = 0; i < r->nlate && r->late[i] != p->id; i++)
			;
		if (i < r->nlate)
			continue;
		n = realloc(r->late, (r->nlate + 1) * sizeof(*n));
		if (!n) {
			region_note(r, "participant %u, made during the region, not watched: %s",
			            p->id, strerror(ENOMEM));
			continue;
		}
		r->late = n;
		r->late[r->nlate++] = p->id;
		log_debug("region %llu: participant %u made during it",
		          (unsigned long long)r->rq.id, p->id);
	}
}

void region_ctx_release(struct krexd *k, struct region *r)
{
	size_t i;

	if (!r->ctx_held)
		return;
	r->ctx_held = 0;
	for (i = 0; i < k->ngpus; i++)
		if (r->rq.mask >> i & 1)
			gatectl_release_ctx(&k->gate, (unsigned)i);
	log_debug("region %llu: new GPU contexts on its GPUs may be made again",
	          (unsigned long long)r->rq.id);
}

/*
 * A participant that registers while a region holds its source cpuset
 * narrowed (a process of a sibling's job that registers on its own): its
 * new cgroup's cpuset is a copy of that source (freezer_adopt_prepare: never wider
 * than what it had), so it is narrowed too, and no undo line of the region
 * names it: it would stay on the others' CPUs for good.  Each region whose
 * undo narrowed the source gets one line more, the new cgroup back to what
 * the source had before that region; undone (and its threads swept) with
 * the region's other lines.  First, every region whose gates are closed on
 * its GPUs remembers it (region_late_part()).
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

	region_late_part(p);
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
void region_unwind_iso(struct krexd *k, struct region *r)
{
	uint64_t t0 = time_now_ns();

	r->cost.t_unwind = t0;
	r->cost.rd_unwind = region_run_delay();
	isolate_fds_release(); /* what the undo still opens finds fds */
	region_undo(k, r);
	r->cost.undo_ns = time_now_ns() - t0;
}

/* b - a when b is past a (a counter read at two points), else 0. */
static uint64_t grew(uint64_t a, uint64_t b)
{
	return b > a ? b - a : 0;
}

/*
 * The way out, second half: drop r's freeze references (the last thaws),
 * open its gates but those of keep (a chained region closed them again for
 * its owner), write the state file.  A sibling a chained region carried has
 * its own reference by now: it stays frozen.
 */
void region_unwind_rest(struct krexd *k, struct region *r, uint64_t keep)
{
	uint64_t t0 = time_now_ns(), w0 = k->st.write_ns, rd;
	char line[64];
	struct part *p;
	size_t i;
	/* new contexts wait for the end's list of the participants made
	 * during it (region_late_judge()), released at the certificate */
	int opened = 0, hold_ctx = region_late_listed(r);

	r->cost.rd_thaw = region_run_delay();
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
	rd = region_run_delay();
	r->cost.rd_thaw = grew(r->cost.rd_thaw, rd);
	for (i = 0; i < k->ngpus; i++) {
		if (!(r->rq.mask >> i & 1))
			continue;
		if (!(keep >> i & 1)) {
			gatectl_open_slot(&k->gate, i, hold_ctx);
			opened = 1;
			r->ctx_held |= hold_ctx;
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

void region_unwind(struct krexd *k, struct region *r)
{
	region_unwind_iso(k, r);
	region_unwind_rest(k, r, 0);
}

/*
 * The outcome rule: expired when the lease ran out or the region was taken
 * away; clean only when the drain, the freeze, the isolation and the undo
 * went to plan (no note) and the GPU was at its nominal clock with no
 * throttling from grant to end (region_judge_clocks); otherwise degraded,
 * the note naming each cause.
 */
void region_certify(struct krexd *k, struct region *r, int why, const char *who, uint64_t now)
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
	else if (!strstr(c->note, "ended before the grant")) /* its owner's END says it */
		region_note(r, "ended before the grant%s",
		            why == END_GONE      ? " (its owner left)"
		            : why == END_TIMEOUT ? " (no grant within the queue timeout)"
		                                 : "");
	if (c->late || c->frozen < c->siblings || c->note[0])
		c->outcome = KREX_OUTCOME_DEGRADED;
	else
		c->outcome = KREX_OUTCOME_CLEAN;
}

/* What happened, for krex log, the region log, the metrics (history.c). */
void region_record(struct krexd *k, struct region *r, int why, uint64_t now)
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

/*
 * How long krexd's calling thread has waited for a CPU, in ns (the second
 * field of /proc/thread-self/schedstat: run_delay); 0 without it, and at
 * any level but debug (only the cost line reads it).  The cost line's
 * *_rq_us are its growth over a region's entry, its exit and its thaw
 * writes: the part of them spent runnable, not running (on a node whose
 * cores busy siblings hold).
 */
uint64_t region_run_delay(void)
{
	uint64_t run, delay;

	if (log_get_level() < LOG_LVL_DEBUG || proc_schedstat(0, &run, &delay) < 0)
		return 0;
	return delay;
}

/* The cost line (struct region_cost): one per region, at debug level; with
 * its connection's accept, the request's, the close's and the grant's
 * CLOCK_MONOTONIC (entry_split.py
 * --owner sets them against the owner's). */
void region_cost_log(struct krexd *k, const struct region *r)
{
	const struct region_cost *c = &r->cost;
	uint64_t entry = r->rq.grant_ns > r->t_close ? r->rq.grant_ns - r->t_close : 0;

	if (log_get_level() < LOG_LVL_DEBUG)
		return;
	log_debug(
	        "region %llu: cost siblings=%zu entry_us=%llu isolate_us=%llu iso_cpuset=%u iso_affinity=%u fz_prepare_us=%llu fz_start_us=%llu fz_poll_us=%llu fz_polls=%u fz_woken=%u freeze_us=%llu undo_us=%llu thaw_us=%llu exit_us=%llu state_writes=%lu state_us=%llu entry_rq_us=%llu exit_rq_us=%llu thaw_rq_us=%llu conn_ns=%llu enq_ns=%llu close_ns=%llu grant_ns=%llu",
	        (unsigned long long)r->rq.id, r->nsibs, (unsigned long long)us(entry),
	        (unsigned long long)r->cert.isolate_us, c->iso_cpuset, c->iso_affinity,
	        (unsigned long long)us(c->fz_prepare_ns), (unsigned long long)us(c->fz_start_ns),
	        (unsigned long long)us(c->fz_poll_ns), c->fz_polls, c->fz_woken,
	        (unsigned long long)r->cert.freeze_us, (unsigned long long)us(c->undo_ns),
	        (unsigned long long)us(c->thaw_ns),
	        (unsigned long long)us(time_now_ns() - c->t_unwind), k->st.writes - c->writes0,
	        (unsigned long long)us(k->st.write_ns - c->write_ns0),
	        (unsigned long long)us(grew(c->rd_close, c->rd_grant)),
	        (unsigned long long)us(grew(c->rd_unwind, region_run_delay())),
	        (unsigned long long)us(c->rd_thaw), (unsigned long long)r->conn_ns,
	        (unsigned long long)r->rq.enq_ns, (unsigned long long)r->t_close,
	        (unsigned long long)r->rq.grant_ns);
}

void region_unlink(struct region *r)
{
	struct region **pp;

	for (pp = &regions; *pp; pp = &(*pp)->next)
		if (*pp == r) {
			*pp = r->next;
			break;
		}
}

/* The certificate goes to its owner: krexd signs it too (sign.c). */
void region_sign(struct krexd *k, struct region *r)
{
	struct part *p = part_find_id(k, r->owner);

	sign_cert(k, r->uid, p ? p->job : 0, p ? p->step : 0, &r->cert);
}
