/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * region_judge.c - what a region's GPUs did: telemetry (NVML samples,
 * foreign processes, participants made during it) and the certificate's
 * note (doc/architecture.md "Settle"); the clock judge is region_clocks.c.
 */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "region_int.h"
#include "gpujudge.h"
#include "gpuprocs.h"
#include "log.h"
#include "timeutil.h"

/* Write the state file; a failure is logged and noted on r's certificate (no record of what
 * it undoes survives a krexd crash). */
void region_state_sync(struct krexd *k, struct region *r, const char *doing)
{
	if (state_sync(&k->st) == 0)
		return;
	log_error("state file %s: %s (%s anyway)", k->st.path, strerror(errno), doing);
	region_note(r, "state file not written (%s): %s", doing, strerror(errno));
}

void region_note(struct region *r, const char *fmt, ...)
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

/* Compute processes on the region's GPUs (res, gpuprocs.c) that are not
 * participants; -1 when NVML could not tell.  A sibling with one of them gets
 * its pid in on_gpu.  An MPS server is not counted when NVML listed its
 * clients, each of which is then counted as any process (doc/admin.md
 * "NVIDIA MPS beside KREX"); without that list it is a process KREX cannot see behind:
 * foreign.  krexd itself is never foreign: it runs no GPU work, yet over MPS
 * NVML lists it as a client once hwloc's CUDA component has initialised
 * CUDA in it (measured on the H200).  *mps: the servers not counted.  bad
 * (NULL: not asked): 1 for each process that makes the region degraded, a
 * foreign one, or one of a sibling outside the gate (region_ungated()) or
 * whose process was exiting at its drain (region_exiting_sibs()). */
static int region_foreign_of(struct krexd *k, struct region *r, const struct gp_result *res,
                             int *mps, unsigned char *bad)
{
	struct part *p;
	size_t x;
	int j, foreign = 0;

	*mps = 0;
	if (res->n < 0)
		return -1;
	for (j = 0; j < res->n; j++) {
		if (bad)
			bad[j] = 0;
		if (res->pid[j] == getpid())
			continue;
		p = part_find_pid_key(k, res->pid[j], res->key_err[j] ? NULL : &res->key[j]);
		if (!p && res->mps_known && res->mps_server[j]) {
			(*mps)++;
			continue;
		}
		if (!p) {
			foreign++;
			if (bad)
				bad[j] = 1;
		}
		for (x = 0; p && x < r->nsibs; x++)
			if (r->sibs[x].part == p->id) {
				if (!r->sibs[x].on_gpu)
					r->sibs[x].on_gpu = res->pid[j];
				if (bad && (r->sibs[x].ungated || r->sibs[x].drain_exiting))
					bad[j] = 1;
			}
	}
	return foreign;
}

static void region_late_of(struct krexd *k, struct region *r, const struct gp_result *res);

/* The region's GPU names, for gpuprocs.c. */
static unsigned region_gpu_names(struct krexd *k, struct region *r, const char **names)
{
	unsigned i, n = 0;

	FOR_GPU(k, r, i)
	names[n++] = k->gpu[i];
	return n;
}

/* The processes on r's GPUs, listed now, on the loop (the end's list; the
 * start's when the thread is not there): a result to free(), NULL when out
 * of memory. */
static struct gp_result *region_list_now(struct krexd *k, struct region *r)
{
	const char *names[KREX_MAX_GPUS];
	struct gp_result *res = calloc(1, sizeof(*res));

	if (res)
		gp_list(res, names, region_gpu_names(k, r, names), &k->fz);
	return res;
}

/* The foreign processes, listed now (region_list_now()); -1 unknown. */
static int region_foreign(struct krexd *k, struct region *r, int *mps)
{
	struct gp_result *res = region_list_now(k, r);
	int foreign;

	*mps = 0;
	if (!res)
		return -1;
	foreign = region_foreign_of(k, r, res, mps, NULL);
	free(res);
	return foreign;
}

/*
 * The siblings that never joined the gate (their gate could not load: an
 * image without glibc 2.17, a failed preload, a program run without it):
 * frozen with the others, but nothing drained the GPU work they queued.
 * One with a process on the region's GPUs had a context there, so work of
 * it may still run in the region: degraded.  One without cannot disturb the
 * GPU: named, and the region stays clean.  When NVML cannot list the
 * processes (known: 0) they are named as unknown, and, as foreign processes
 * are then, they do not make the region degraded (doc/containers.md).
 */
static void region_ungated(struct krexd *k, struct region *r, int known)
{
	struct krex_certificate *c = &r->cert;
	size_t i, off = 0, len = sizeof(c->ungated_who);
	struct part *p;
	char job[32];
	int n;

	c->ungated = 0;
	c->ungated_gpu = 0;
	c->ungated_who[0] = '\0';
	for (i = 0; i < r->nsibs; i++) {
		const struct sib *s = &r->sibs[i];
		if (!s->ungated || !(p = part_find_id(k, s->part)))
			continue;
		c->ungated++;
		if (s->on_gpu && known) {
			c->ungated_gpu++;
			region_note(
			        r,
			        "participant %u (pid %d) %s and its process %d is on the GPU: its queued GPU work was not drained",
			        p->id, (int)p->pid,
			        s->gate_left ? "had no process in the gate (its gated ones left)"
			                     : "never joined the gate",
			        (int)s->on_gpu);
		}
		job[0] = '\0';
		if (p->job)
			snprintf(job, sizeof(job), ", job %u.%u", p->job, p->step);
		if (off >= len - 4)
			continue;
		n = snprintf(c->ungated_who + off, len - off, "%sparticipant %u (pid %d%s%s) %s",
		             off ? "; " : "", p->id, (int)p->pid, job,
		             s->gate_left ? ", its gated processes left" : "",
		             !known      ? "GPU work unknown"
		             : s->on_gpu ? "on the GPU"
		                         : "not on the GPU");
		if (n >= (int)(len - off)) /* cut, and says so */
			memcpy(c->ungated_who + len - 4, "...", 4);
		off += (size_t)n;
	}
	if (c->ungated && !known)
		c->ungated_gpu = -1;
	if (c->ungated)
		log_debug("region %llu: %u sibling(s) never joined the gate: %s",
		          (unsigned long long)r->rq.id, c->ungated, c->ungated_who);
}

/*
 * The siblings whose drain ack said their GPU runtime was shutting down
 * (KREX_DRAIN_EXITING: the process exits, its contexts go with it): one no
 * longer on the region's GPUs left nothing there; one still on them, or one
 * NVML cannot tell about (known 0), makes the region degraded.
 */
static void region_exiting_sibs(struct krexd *k, struct region *r, int known)
{
	size_t i;

	for (i = 0; i < r->nsibs; i++) {
		const struct sib *s = &r->sibs[i];
		if (!s->drain_exiting || !s->part)
			continue;
		if (!known)
			region_note(
			        r,
			        "participant %u: drain failed (its process was exiting; whether it left the GPU is unknown)",
			        s->part);
		else if (s->on_gpu)
			region_note(
			        r,
			        "participant %u: its process was exiting at the drain and its process %d is still on the GPU",
			        s->part, (int)s->on_gpu);
		else
			log_debug(
			        "region %llu: participant %u was exiting at the drain and has left the GPU",
			        (unsigned long long)r->rq.id, s->part);
	}
}

/* No process list for the start: the processes are unknown. */
static void region_start_unknown(struct krexd *k, struct region *r)
{
	region_ungated(k, r, 0);
	region_exiting_sibs(k, r, 0);
}

/* The end's count into the certificate, when it is more than the start's. */
static void region_foreign_merge(struct region *r)
{
	struct krex_certificate *c = &r->cert;

	if (r->foreign_end > 0 && r->foreign_end > c->foreign && c->known & KREX_CERT_FOREIGN) {
		region_note(r, "%d process(es) on the GPU at the end are not participants",
		            r->foreign_end);
		c->foreign = r->foreign_end;
	}
}

/* NVML's process list has not come: late (a region ended without it), full
 * (its thread's queue); each warned once until a list comes again. */
static unsigned procs_late, procs_full;

/* The start's foreign processes into the certificate; known: NVML listed
 * them.  mps: MPS servers not counted (logged, not a note: a note is a
 * cause of degraded). */
static void region_foreign_start(struct krexd *k, struct region *r, int foreign, int mps)
{
	static unsigned mps_said; /* said at info once, then at debug */
	struct krex_certificate *c = &r->cert;

	if (foreign >= 0) {
		c->foreign = foreign;
		c->known |= KREX_CERT_FOREIGN;
		if (foreign)
			region_note(r, "%d process(es) on the GPU are not participants", foreign);
	}
	if (mps)
		log_msg(mps_said++ ? LOG_LVL_DEBUG : LOG_LVL_INFO,
		        "region %llu: over MPS: %d MPS server(s) on its GPUs, not counted as foreign processes (NVML lists their clients, each counted as any process)",
		        (unsigned long long)r->rq.id, mps);
	region_ungated(k, r, foreign >= 0);
	region_exiting_sibs(k, r, foreign >= 0);
}

/* The start's process list res into r: judged now, or held back while
 * exiting processes leave (region_exit_hold).  1 when judged. */
static int region_start_list(struct krexd *k, struct region *r, const struct gp_result *res)
{
	unsigned char bad[GP_MAX_PIDS];
	int foreign, mps;

	foreign = region_foreign_of(k, r, res, &mps, bad);
	if (foreign >= 0 && region_exit_hold(k, r, res, bad))
		return 0;
	if (r->exit_wait && r->phase == PH_SETTLE)
		r->settle_poll_at = 1; /* granted at this loop turn's tick */
	r->exit_wait = 0;
	region_foreign_start(k, r, foreign, mps);
	return 1;
}

/*
 * In the settle (region_settle_poll): 1 while r still waits for exiting
 * processes to leave its GPUs.  Lists again when no list is on its way;
 * without an answer from the process-list thread within
 * KREXD_PROCS_WAIT_MS after exit_wait, r stops waiting (the list is judged
 * when it comes, as a late start list is).
 */
int region_exit_poll(struct krexd *k, struct region *r, uint64_t now)
{
	const char *names[KREX_MAX_GPUS];
	struct gp_result *res;
	unsigned n;
	int64_t t;

	if (!r->exit_wait)
		return 0;
	if (r->procs_ticket) {
		if (now - r->exit_t0 < k->cfg.exit_wait_ns + KREXD_PROCS_WAIT_MS * NS_PER_MS)
			return 1;
		log_warn(
		        "region %llu: no process list within %u ms of exit_wait: granted, judged when the list comes",
		        (unsigned long long)r->rq.id, KREXD_PROCS_WAIT_MS);
		r->exit_wait = 0;
		return 0;
	}
	n = region_gpu_names(k, r, names);
	t = gp_inline() ? 0 : gp_submit(names, n, &k->fz, 0);
	if (t > 0) {
		r->procs_ticket = (uint64_t)t;
		r->procs_t0 = now;
		return 1;
	}
	res = t == 0 ? region_list_now(k, r) : NULL;
	if (!res) { /* the thread's queue is full (NVML hung?): unknown */
		r->exit_wait = 0;
		region_start_unknown(k, r);
		return 0;
	}
	region_start_list(k, r, res);
	free(res);
	return r->exit_wait;
}

/*
 * GPU telemetry while the siblings drain: the nominal SM clock of each of
 * the region's GPUs, and compute processes on them that are not
 * participants (KREX cannot quiet those, so the certificate reports them).
 * Unknown without NVML.  The clock samples start at the grant.  The
 * process list goes to its thread (gpuprocs.c): its answer comes as an
 * event (region_procs_event), and the region's end waits for it if it has
 * not come yet (region_procs_wait).
 */
void region_telemetry_start(struct krexd *k, struct region *r)
{
	struct krex_certificate *c = &r->cert;
	const char *names[KREX_MAX_GPUS];
	unsigned i;
	struct gp_result *res;
	int64_t t;

	c->foreign = -1;
	c->sm_clock_start_mhz = c->sm_clock_end_mhz = -1;
	c->sm_clock_min_mhz = c->sm_clock_max_mhz = c->sm_clock_nominal_mhz = -1;
	c->temp_start_c = c->temp_end_c = -1;
	c->known &= ~(KREX_CERT_FOREIGN | KREX_CERT_CLOCKS | KREX_CERT_TEMP | KREX_CERT_VIOLATION);
	r->busy_min = r->busy_max = r->all_min = r->all_max = -1;
	r->cap_first_us = -1;
	r->foreign_end = -1;
	r->end_listed = -1;
	r->procs_ticket = 0;
	c->own_power_cap_first_us = -1;
	for (i = 0; i < KREX_MAX_GPUS; i++)
		r->nominal[i] = -1;
	if (!r->rq.mask || nvml_open() < 0) {
		region_start_unknown(k, r);
		return;
	}
	r->exit_wait = 0;
	r->exit_t0 = 0;
	r->exit_lists = 0;
	t = gp_inline() ? 0 : gp_submit(names, region_gpu_names(k, r, names), &k->fz, 1);
	FOR_GPU(k, r, i)
	{
		/* krexd's cache, from the thread's last read (after an earlier
		 * region's list); read now only without the thread (not while
		 * its queue is full: NVML may hang), or when unknown */
		static uint64_t seen; /* the thread's reads told (one line a read) */
		uint64_t read_ns = 0, reads = 0;
		int32_t mhz = t == 0 ? -1 : gp_nominal(k->gpu[i], &read_ns, &reads);

		if (reads != seen) {
			seen = reads;
			log_debug("nominal clocks read on the process-list thread in %llu us",
			          (unsigned long long)us(read_ns));
		}
		if (mhz > 0) {
			if (mhz != k->nominal[i])
				log_debug(
				        "GPU %s: nominal SM clock %d MHz (read on the process-list thread in %llu us)",
				        k->gpu[i], (int)mhz, (unsigned long long)us(read_ns));
			k->nominal[i] = mhz;
		}
		if (t == 0 || k->nominal[i] < 0)
			k->nominal[i] = nvml_nominal_clock(k->gpu[i]);
		r->nominal[i] = k->nominal[i];
		if (r->nominal[i] > 0 &&
		    (c->sm_clock_nominal_mhz < 0 || r->nominal[i] < c->sm_clock_nominal_mhz))
			c->sm_clock_nominal_mhz = r->nominal[i];
	}
	if (t > 0) {
		r->procs_ticket = (uint64_t)t;
		r->procs_t0 = time_now_ns();
		return;
	}
	if (t < 0) {
		log_msg(procs_full++ ? LOG_LVL_DEBUG : LOG_LVL_WARN,
		        "region %llu: the GPU process-list thread has %u requests waiting (NVML hung?): foreign processes unknown",
		        (unsigned long long)r->rq.id, GP_MAX_QUEUED);
		region_start_unknown(k, r);
		return;
	}
	res = region_list_now(k, r);
	if (!res) {
		region_start_unknown(k, r);
		return;
	}
	free(r->start_res);
	r->start_res = res; /* judged at the settle (region_start_settle()) */
}

/*
 * The thread's process list res for r, which asked for it: into its
 * certificate, or, before the settle, kept in r->start_res to be judged
 * there once every drain ack is in (region_start_settle()).  1 when kept
 * (r owns res then).
 */
int region_procs_done(struct krexd *k, struct region *r, struct gp_result *res)
{
	const struct krex_certificate *c = &r->cert;
	uint64_t t0 = time_now_ns();
	int kept = 0;

	procs_late = procs_full = 0;
	r->procs_ticket = 0;
	if (r->late_asked) { /* region_late_judge()'s, at the end */
		r->late_asked = 0;
		region_late_of(k, r, res);
		log_debug("region %llu: processes on the GPU at its end: %d listed in %llu us",
		          (unsigned long long)r->rq.id, res->n,
		          (unsigned long long)us(res->list_ns));
		return 0;
	}
	if (r->procs_stale) {
		/* asked before a sibling's exiting ack: says nothing of it */
		r->procs_stale = 0;
		if (r->phase == PH_HELD && !r->exit_wait)
			region_start_unknown(k, r); /* granted without a newer one */
	} else if (r->phase < PH_SETTLE && r->end_listed < 0) {
		free(r->start_res);
		r->start_res = res;
		kept = 1;
	} else if (region_start_list(k, r, res)) {
		if (r->end_listed == 0) /* ended before it came: the end's count is the start's */
			r->foreign_end = c->known & KREX_CERT_FOREIGN ? c->foreign : -1;
		else if (r->end_listed == 1)
			region_foreign_merge(r);
	}
	log_debug(
	        "region %llu: processes on the GPU: %d listed in %llu us (queued %llu us), cgroups read in %llu us, mapped in %llu us on the loop, %llu us after the close",
	        (unsigned long long)r->rq.id, res->n, (unsigned long long)us(res->list_ns),
	        (unsigned long long)us(res->queued_ns), (unsigned long long)us(res->keys_ns),
	        (unsigned long long)us(time_now_ns() - t0),
	        (unsigned long long)us(time_now_ns() - r->procs_t0));
	return kept;
}

/*
 * At the settle (region_settle(), after the freeze), every drain ack in:
 * judge the start's process list that came during the drain and the
 * freeze (none yet: it is judged when it comes).  When a sibling's ack said
 * its process was exiting (KREX_DRAIN_EXITING), that list was taken while
 * the process still ran: the processes are listed again (r->exit_wait,
 * region_exit_poll()) and that list is judged.
 */
void region_start_settle(struct krexd *k, struct region *r)
{
	int exiting = 0;
	size_t i;

	for (i = 0; i < r->nsibs; i++)
		exiting |= r->sibs[i].drain_exiting && r->sibs[i].part;
	if (exiting && k->cfg.exit_wait_ns && r->rq.mask && nvml_open() == 0) {
		log_debug(
		        "region %llu: a sibling's process was exiting at its drain: the processes are listed again",
		        (unsigned long long)r->rq.id);
		free(r->start_res);
		r->start_res = NULL;
		r->procs_stale = r->procs_ticket != 0;
		r->exit_wait = 1;
		return;
	}
	if (r->start_res) {
		region_start_list(k, r, r->start_res);
		free(r->start_res);
		r->start_res = NULL;
	} else if (exiting && !r->procs_ticket)
		region_exiting_sibs(k, r, 0); /* no list comes: unknown */
}

/* Its process list never came: the processes stay unknown.  Said once
 * while NVML hangs. */
void region_procs_lost(struct krexd *k, struct region *r)
{
	log_msg(procs_late++ ? LOG_LVL_DEBUG : LOG_LVL_WARN,
	        "region %llu: NVML's process list did not come within %u ms of its end: %s unknown",
	        (unsigned long long)r->rq.id, KREXD_PROCS_WAIT_MS,
	        r->late_asked ? "the processes of participants made during it"
	                      : "foreign processes");
	r->procs_ticket = 0;
	if (!r->late_asked) /* the end's list only: the start's came */
		region_start_unknown(k, r);
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
int region_sample(struct krexd *k, struct region *r, struct nvml_sample *all)
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
int region_settled(struct krexd *k, struct region *r)
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
int region_sampling(const struct krexd *k, const struct region *r)
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
	int mps;

	if (!(c->clock_reasons & NVML_REASON_SW_POWER_CAP) &&
	    !(c->known & KREX_CERT_VIOLATION && c->violation_power_us)) {
		r->end_listed = 0;
		r->foreign_end = c->known & KREX_CERT_FOREIGN ? c->foreign : -1;
		return;
	}
	r->end_listed = 1;
	r->foreign_end = region_foreign(k, r, &mps);
	region_foreign_merge(r);
}

/* Temperature (the hottest GPU) and violation counters (the largest growth)
 * at the end; clocks stay known only if every read worked. */
void region_telemetry_end(struct krexd *k, struct region *r)
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

/*
 * A participant made during the region (region_late_part()) with a process on
 * its GPUs at its end made its CUDA context beside the owner's work: noted,
 * degraded.  The context outlives the region: the list may come after the
 * thaw, from the thread (the certificate waits for it, and after the start's
 * list when that one is due), or on the loop without the thread.  Without
 * NVML nothing is known and nothing noted.  Over MPS (a server listed) NVML
 * lists a client from its CUDA initialisation on, before any context: one
 * that registered with PROTO_REG_HOLDCTX (its contexts wait at the gate for
 * this list) is not noted.
 */
static void region_late_of(struct krexd *k, struct region *r, const struct gp_result *res)
{
	struct part *p;
	size_t i;
	int j, mps = 0;

	for (j = 0; j < res->n; j++)
		mps |= res->mps_known && res->mps_server[j];
	for (j = 0; j < res->n; j++) {
		p = part_find_pid_key(k, res->pid[j], res->key_err[j] ? NULL : &res->key[j]);
		for (i = 0; p && i < r->nlate; i++)
			if (r->late[i] != p->id) {
				continue;
			} else if (mps && part_pid_holds_ctx(k, p, res->pid[j], res->start[j])) {
				log_debug(
				        "region %llu: over MPS, participant %u's process %d is listed (an MPS client from its CUDA initialisation; NVML: %lld bytes of GPU memory); its contexts wait at the gate: not noted",
				        (unsigned long long)r->rq.id, p->id, (int)res->pid[j],
				        res->mem[j] == ~0ULL ? -1LL : (long long)res->mem[j]);
			} else {
				region_note(
				        r,
				        "participant %u, made during the region, has its process %d on the GPU: it started beside the owner's work",
				        p->id, (int)res->pid[j]);
				r->late[i] = 0; /* one note each */
			}
	}
}

void region_late_judge(struct krexd *k, struct region *r)
{
	const char *names[KREX_MAX_GPUS];
	struct gp_result *res;
	int t;

	if (!region_late_listed(r) || (r->late_pending = r->procs_ticket != 0))
		return; /* after the start's list (region_procs_event()): never inline */
	t = gp_inline() ? 0 : gp_submit(names, region_gpu_names(k, r, names), &k->fz, 0);
	if (t > 0) {
		r->procs_ticket = (uint64_t)t;
		r->procs_t0 = time_now_ns();
		r->late_asked = 1;
		return;
	}
	if (t < 0 || !(res = region_list_now(k, r)))
		return;
	region_late_of(k, r, res);
	log_debug("region %llu: processes on the GPU at its end: %d listed on the loop",
	          (unsigned long long)r->rq.id, res->n);
	free(res);
}
