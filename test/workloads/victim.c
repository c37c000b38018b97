/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * krex-victim - times kernels of fixed work, alone or inside KREX regions.
 *
 *	krex-victim calib MS
 *	krex-victim run ITERS SAMPLES [--region none|sample|batch] [--batch B]
 *	            [--warmup W] [--region-warmup K] [--idle sleep|spin:US[+spin:US2]]
 *	            [--warm-us S] [--drop-stream] [--churn] [--spacer ITERS]
 *	            [--warm-events] [--host-split] [--stamps] [--label L]
 *	            [--raw FILE] [--certs FILE]
 *
 * --region-warmup K: K untimed kernels right after each region begins (with
 * --region none and --idle: after each idle gap, as a region's would run).
 * --warm-events: each of those untimed kernels between the two timing events,
 * recorded and waited for as a timed sample's are (the warm-up then runs the
 * host calls of a sample too, not only its launch; issue 18's per-sample
 * experiment, notebook/h200-session-20).
 * --host-split: the host's time in each call of a sample (the start event's
 * record, the launch, the end event's record, the wait), appended to each
 * --raw line as "rec0_us launch_us rec1_us sync_us" and their p50 and p95 to
 * the output line (host_p50_us=A/B/C/D host_p95_us=A/B/C/D): tells which host
 * call a region's edge slows.
 * --stamps: each --raw line ends with "t=MS", the sample's start on
 * CLOCK_MONOTONIC in milliseconds (krexd's clock and Python's
 * time.monotonic()): places a slow stretch against other logs of the run.
 * --idle sleep:US / spin:US: before each sample the thread sleeps or spins US
 * microseconds with the GPU idle (what a region entry does to the owner,
 * without KREX): tells a host wake-up cost from a GPU idle cost.
 * sleep:US+spin:US2 sleeps US, then spins US2 (a host awake again before the
 * GPU is used).
 * --warm-us S: with --region none and --idle, after each gap empty kernels one
 * after another, each waited for, for S microseconds (what the gate's
 * KREX_REGION_WARM_US does in a region), then the --region-warmup kernels.
 * --drop-stream: before each region, an empty kernel on a new stream, which
 * is then destroyed: the process's last launch was on a stream that is gone
 * when the region's warm-up runs (test/gate/region_krexd.sh).
 * --churn: a second thread creates and destroys streams all along; a last
 * line churn_in_begin=N counts the destructions that completed while a
 * krex_region_begin call was in progress (a diagnostic).
 * --spacer ITERS: right before each sample's start event, an untimed kernel of
 * ITERS, not waited for: the start event is then stamped when the spacer
 * ends, after the host has submitted the timed kernel, so the event time
 * holds the kernel's GPU time and not the host's launch of it (the wall time
 * holds what was left of the spacer too).  Tells a host-side cost from a
 * GPU-side one.
 * --certs FILE: one line per region, where its entry went (ms, certificate
 * fields in us): "entry_ms warm_ms wait_us drain_us freeze_us isolate_us
 * settle_us outcome region_id begin_ns return_ns sm_start sm_end sm_min
 * sm_nominal" (the last four the certificate's SM clocks in MHz, -1 when
 * krexd knew none), warm_ms the
 * --region-warmup kernels' wall time, begin_ns and return_ns the
 * krex_region_begin call's CLOCK_MONOTONIC (krexd's clock: entry_split.py
 * --owner sets them against krexd's log).
 *
 * calib prints the ITERS that take MS milliseconds alone (mock: microseconds).
 * run prints one line (milliseconds; entry = krex_region_begin latency):
 *	victim label=L n=N ev_p50= ev_p95= ev_p99= wall_p50= wall_p95= wall_p99=
 *	entry_p50= entry_p95= outcome_clean=K
 * This line is a contract with test/perf; keep it.
 */
#include "config.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "krex/region.h"
#include "wl_cuda.h"

enum { REG_NONE, REG_SAMPLE, REG_BATCH };

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double pct(double *v, int n, int p)
{
	int i = (int)((long)n * p / 100);

	return v[i < n ? i : n - 1];
}

static void spin_for(long us)
{
	double end = wl_now_ms() + us / 1000.0;

	while (wl_now_ms() < end)
		;
}

static void idle_for(int spin, long us, long then_spin_us)
{
	struct timespec ts = {us / 1000000, us % 1000000 * 1000};

	if (spin)
		spin_for(us);
	else
		nanosleep(&ts, NULL);
	if (then_spin_us)
		spin_for(then_spin_us);
}

/* An empty kernel on a new stream, waited for; then the stream is destroyed. */
static void launch_on_dropped_stream(struct wl_kernel *k)
{
	CUstream s;

	wl_check(k->cu.cuStreamCreate(&s, 0), "cuStreamCreate");
	wl_check(k->cu.cuLaunchKernel(k->empty, 1, 1, 1, 32, 1, 1, 0, s, NULL, NULL),
	         "cuLaunchKernel");
	wl_check(k->cu.cuStreamSynchronize(s), "cuStreamSynchronize");
	wl_check(k->cu.cuStreamDestroy_v2(s), "cuStreamDestroy");
}

/* Empty kernels, each waited for, for us microseconds (--warm-us). */
/* The untimed warm-up: n kernels of iters, then waited for; with ev (the
 * two timing events, --warm-events) each between them and waited for as a
 * timed sample is. */
static void warm_kernels(struct wl_kernel *k, int n, long long iters, const CUevent *ev)
{
	int j;

	for (j = 0; j < n; j++) {
		if (ev)
			k->cu.cuEventRecord(ev[0], NULL);
		wl_launch(k, iters);
		if (ev) {
			k->cu.cuEventRecord(ev[1], NULL);
			wl_check(k->cu.cuEventSynchronize(ev[1]), "cuEventSynchronize");
		}
	}
	if (n && !ev)
		wl_check(k->cu.cuCtxSynchronize(), "cuCtxSynchronize");
}

static void warm_for(struct wl_kernel *k, long us)
{
	double end = wl_now_ms() + us / 1000.0;

	while (wl_now_ms() < end) {
		wl_launch_empty(k);
		wl_check(k->cu.cuCtxSynchronize(), "cuCtxSynchronize");
	}
}

static void usage(void)
{
	fprintf(stderr,
	        "usage: krex-victim calib MS\n"
	        "       krex-victim run ITERS SAMPLES [--region none|sample|batch] [--batch B] [--warmup W] [--region-warmup K] [--idle sleep|spin:US[+spin:US2]] [--warm-us S] [--drop-stream] [--churn] [--spacer ITERS] [--warm-events] [--host-split] [--stamps] [--label L] [--raw FILE] [--certs FILE]\n");
	exit(2);
}

/* CLOCK_MONOTONIC in ns, krexd's clock too (its debug log's cost lines). */
static unsigned long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ULL + (unsigned long long)ts.tv_nsec;
}

/* The last krex_region_begin's call and return (--certs). */
static unsigned long long begin_t0_ns, begin_t1_ns;

/* --churn: set while krex_region_begin runs; destructions seen meanwhile. */
static atomic_int in_begin, churn_stop;
static atomic_long churn_in_begin;

static void *churn_main(void *arg)
{
	struct wl_kernel *k = arg;
	CUstream s;

	while (!atomic_load(&churn_stop)) {
		int during;

		wl_check(k->cu.cuStreamCreate(&s, 1), "cuStreamCreate");
		during = atomic_load(&in_begin);
		wl_check(k->cu.cuStreamDestroy_v2(s), "cuStreamDestroy");
		if (during && atomic_load(&in_begin))
			atomic_fetch_add(&churn_in_begin, 1);
	}
	return NULL;
}

static int region_begin(double *entry)
{
	struct krex_region_opts o = KREX_REGION_OPTS_INIT;
	double t0 = wl_now_ms();
	int rc;

	begin_t0_ns = now_ns();
	atomic_store(&in_begin, 1);
	rc = krex_region_begin(&o);
	atomic_store(&in_begin, 0);
	begin_t1_ns = now_ns();
	*entry = wl_now_ms() - t0;
	if (rc != KREX_OK) {
		fprintf(stderr, "krex-victim: krex_region_begin: %s\n", krex_strerror(rc));
		exit(1);
	}
	return rc;
}

/* The certificates' phases, summed over the run's regions (agents.py's breakdown). */
static struct {
	unsigned long long wait, drain, freeze, isolate, settle, held;
	int chained;
} certsum;

/* End the region; 1 when clean.  With certs, one line of where its entry
 * went (see --certs). */
/* --host-split: a sample's four host calls (start event, launch, end event,
 * wait), HS_CALLS doubles a sample. */
#define HS_CALLS 4

/* t[0..2]: the clock after the first three calls (ms); start, end: the
 * sample's; into t[0..3], each call's time in us. */
static void host_split_us(double *t, double start, double end)
{
	double a = t[0], b = t[1], c = t[2];

	t[0] = (a - start) * 1000.0;
	t[1] = (b - a) * 1000.0;
	t[2] = (c - b) * 1000.0;
	t[3] = (end - c) * 1000.0;
}

/* " host_p50_us=A/B/C/D host_p95_us=A/B/C/D" of the n samples in hs. */
static void host_split_print(const double *hs, int n)
{
	static const int q[2] = {50, 95};
	double *col = calloc((size_t)n, sizeof(double)), v[2][HS_CALLS];
	int c, i, j;

	if (!col)
		return;
	for (c = 0; c < HS_CALLS; c++) {
		for (i = 0; i < n; i++)
			col[i] = hs[i * HS_CALLS + c];
		qsort(col, (size_t)n, sizeof(double), cmp_double);
		for (j = 0; j < 2; j++)
			v[j][c] = pct(col, n, q[j]);
	}
	for (j = 0; j < 2; j++)
		printf(" host_p%d_us=%.3f/%.3f/%.3f/%.3f", q[j], v[j][0], v[j][1], v[j][2],
		       v[j][3]);
	free(col);
}

static int region_end(FILE *certs, double entry, double warm)
{
	struct krex_certificate c;

	memset(&c, 0, sizeof(c));
	if (krex_region_end(&c) != KREX_OK)
		return 0;
	certsum.wait += c.wait_us;
	certsum.drain += c.drain_us;
	certsum.freeze += c.freeze_us;
	certsum.isolate += c.isolate_us;
	certsum.settle += c.settle_us;
	certsum.held += c.held_us;
	certsum.chained += c.chained != 0;
	if (certs) {
		int clk = (c.known & KREX_CERT_CLOCKS) != 0;

		fprintf(certs, "%.4f %.4f %llu %llu %llu %llu %llu %u %llu %llu %llu %d %d %d %d\n",
		        entry, warm, (unsigned long long)c.wait_us, (unsigned long long)c.drain_us,
		        (unsigned long long)c.freeze_us, (unsigned long long)c.isolate_us,
		        (unsigned long long)c.settle_us, c.outcome, (unsigned long long)c.region_id,
		        begin_t0_ns, begin_t1_ns, clk ? c.sm_clock_start_mhz : -1,
		        clk ? c.sm_clock_end_mhz : -1, clk ? c.sm_clock_min_mhz : -1,
		        clk ? c.sm_clock_nominal_mhz : -1);
	}
	return c.outcome == KREX_OUTCOME_CLEAN;
}

int main(int argc, char **argv)
{
	struct wl_kernel k;
	const char *label = "victim", *raw = NULL, *certs_path = NULL;
	int mode = REG_NONE, batch = 10, warmup = 5, n, i, clean = 0, regions = 0, nentry = 0;
	int region_warmup = 0, idle_spin = 0, drop_stream = 0, churn = 0, warm_events = 0;
	int host_split = 0, stamps = 0;
	pthread_t churner;
	long idle_us = 0, idle_then_spin = 0, warm_us = 0;
	long long iters, spacer = 0;
	double *ev, *wall, *entry, *hs = NULL, *t0s = NULL, warm = 0, t_main = wl_epoch_s(),
	                           t_ready, t_end;
	CUevent e0, e1, tev[2];
	FILE *f, *certs = NULL;

	if (argc < 3)
		usage();
	if (strcmp(argv[1], "calib") == 0) {
		wl_open(&k);
		printf("%lld\n", wl_calibrate(&k, atof(argv[2])));
		return 0;
	}
	if (strcmp(argv[1], "run") != 0 || argc < 4)
		usage();
	iters = atoll(argv[2]);
	n = atoi(argv[3]);
	for (i = 4; i < argc; i++) {
		if (strcmp(argv[i], "--drop-stream") == 0) {
			drop_stream = 1;
			continue;
		}
		if (strcmp(argv[i], "--churn") == 0) {
			churn = 1;
			continue;
		}
		if (strcmp(argv[i], "--warm-events") == 0) {
			warm_events = 1;
			continue;
		}
		if (strcmp(argv[i], "--host-split") == 0) {
			host_split = 1;
			continue;
		}
		if (strcmp(argv[i], "--stamps") == 0) {
			stamps = 1;
			continue;
		}
		if (i + 1 >= argc)
			usage();
		if (strcmp(argv[i], "--region") == 0) {
			i++;
			mode = strcmp(argv[i], "sample") == 0  ? REG_SAMPLE
			       : strcmp(argv[i], "batch") == 0 ? REG_BATCH
			       : strcmp(argv[i], "none") == 0  ? REG_NONE
			                                       : (usage(), 0);
		} else if (strcmp(argv[i], "--batch") == 0)
			batch = atoi(argv[++i]);
		else if (strcmp(argv[i], "--warmup") == 0)
			warmup = atoi(argv[++i]);
		else if (strcmp(argv[i], "--region-warmup") == 0)
			region_warmup = atoi(argv[++i]);
		else if (strcmp(argv[i], "--idle") == 0) {
			const char *v = argv[++i];

			if (strncmp(v, "sleep:", 6) == 0)
				idle_spin = 0;
			else if (strncmp(v, "spin:", 5) == 0)
				idle_spin = 1;
			else
				usage();
			idle_us = atol(strchr(v, ':') + 1);
			if (strstr(v, "+spin:"))
				idle_then_spin = atol(strstr(v, "+spin:") + 6);
			if (idle_us <= 0 || idle_then_spin < 0)
				usage();
		} else if (strcmp(argv[i], "--warm-us") == 0) {
			warm_us = atol(argv[++i]);
			if (warm_us < 0)
				usage();
		} else if (strcmp(argv[i], "--spacer") == 0) {
			spacer = atoll(argv[++i]);
			if (spacer <= 0)
				usage();
		} else if (strcmp(argv[i], "--label") == 0)
			label = argv[++i];
		else if (strcmp(argv[i], "--raw") == 0)
			raw = argv[++i];
		else if (strcmp(argv[i], "--certs") == 0)
			certs_path = argv[++i];
		else
			usage();
	}
	if (n <= 0 || iters < 0 || batch <= 0)
		usage();
	ev = calloc((size_t)n, sizeof(double));
	wall = calloc((size_t)n, sizeof(double));
	entry = calloc((size_t)n, sizeof(double));
	if (host_split)
		hs = calloc((size_t)n * HS_CALLS, sizeof(double));
	if (stamps)
		t0s = calloc((size_t)n, sizeof(double));
	if (!ev || !wall || !entry || (host_split && !hs) || (stamps && !t0s)) {
		fprintf(stderr, "krex-victim: out of memory\n");
		return 1;
	}
	if (certs_path && !(certs = fopen(certs_path, "w"))) {
		perror(certs_path);
		return 1;
	}
	wl_open(&k);
	wl_check(k.cu.cuEventCreate(&e0, 0), "cuEventCreate");
	wl_check(k.cu.cuEventCreate(&e1, 0), "cuEventCreate");
	tev[0] = e0;
	tev[1] = e1;
	t_ready = wl_epoch_s();
	for (i = 0; i < warmup; i++)
		wl_launch(&k, iters);
	wl_check(k.cu.cuCtxSynchronize(), "cuCtxSynchronize");
	if (churn && pthread_create(&churner, NULL, churn_main, &k) != 0) {
		fprintf(stderr, "krex-victim: no churn thread\n");
		return 1;
	}
	for (i = 0; i < n; i++) {
		float t = 0;
		double h0;

		if (idle_us) {
			idle_for(idle_spin, idle_us, idle_then_spin);
			if (mode == REG_NONE && warm_us)
				warm_for(&k, warm_us);
			if (mode == REG_NONE)
				warm_kernels(&k, region_warmup, iters, warm_events ? tev : NULL);
		}
		if (mode == REG_SAMPLE || (mode == REG_BATCH && i % batch == 0)) {
			if (drop_stream)
				launch_on_dropped_stream(&k);
			region_begin(&entry[nentry++]);
			regions++;
			/* untimed kernels first, as benchmark tools warm up inside */
			h0 = wl_now_ms();
			warm_kernels(&k, region_warmup, iters, warm_events ? tev : NULL);
			warm = wl_now_ms() - h0;
		}
		if (spacer)
			wl_launch(&k, spacer);
		h0 = wl_now_ms();
		if (t0s)
			t0s[i] = h0;
		k.cu.cuEventRecord(e0, NULL);
		if (hs)
			hs[i * HS_CALLS + 0] = wl_now_ms();
		wl_launch(&k, iters);
		if (hs)
			hs[i * HS_CALLS + 1] = wl_now_ms();
		k.cu.cuEventRecord(e1, NULL);
		if (hs)
			hs[i * HS_CALLS + 2] = wl_now_ms();
		wl_check(k.cu.cuEventSynchronize(e1), "cuEventSynchronize");
		wall[i] = wl_now_ms() - h0;
		if (hs)
			host_split_us(&hs[i * HS_CALLS], h0, h0 + wall[i]);
		wl_check(k.cu.cuEventElapsedTime(&t, e0, e1), "cuEventElapsedTime");
		ev[i] = t;
		if (mode == REG_SAMPLE ||
		    (mode == REG_BATCH && (i % batch == batch - 1 || i == n - 1)))
			clean += region_end(certs, entry[nentry - 1], warm);
	}
	t_end = wl_epoch_s();
	if (churn) {
		atomic_store(&churn_stop, 1);
		pthread_join(churner, NULL);
	}
	if (certs)
		fclose(certs);
	if (raw && (f = fopen(raw, "w"))) {
		for (i = 0; i < n; i++) {
			fprintf(f, "%d %.4f %.4f %.4f", i, ev[i], wall[i],
			        i < nentry ? entry[i] : -1.0);
			if (hs)
				fprintf(f, " %.3f %.3f %.3f %.3f", hs[i * HS_CALLS],
				        hs[i * HS_CALLS + 1], hs[i * HS_CALLS + 2],
				        hs[i * HS_CALLS + 3]);
			if (t0s)
				fprintf(f, " t=%.3f", t0s[i]);
			fputc('\n', f);
		}
		fclose(f);
	}
	qsort(ev, (size_t)n, sizeof(double), cmp_double);
	qsort(wall, (size_t)n, sizeof(double), cmp_double);
	printf("victim label=%s n=%d ev_p50=%.4f ev_p95=%.4f ev_p99=%.4f wall_p50=%.4f wall_p95=%.4f wall_p99=%.4f",
	       label, n, pct(ev, n, 50), pct(ev, n, 95), pct(ev, n, 99), pct(wall, n, 50),
	       pct(wall, n, 95), pct(wall, n, 99));
	/* the command's phases on the wall clock: agents.py splits its wall
	 * time into start-up, GPU work and exit */
	printf(" t_main=%.6f t_init=%.6f t_ctx=%.6f t_mod=%.6f t_ready=%.6f t_end=%.6f", t_main,
	       k.t_init, k.t_ctx, k.t_mod, t_ready, t_end);
	if (hs)
		host_split_print(hs, n);
	if (regions) {
		qsort(entry, (size_t)nentry, sizeof(double), cmp_double);
		printf(" entry_p50=%.4f entry_p95=%.4f outcome_clean=%d", pct(entry, nentry, 50),
		       pct(entry, nentry, 95), clean);
		printf(" regions=%d cert_wait_us=%llu cert_drain_us=%llu cert_freeze_us=%llu cert_isolate_us=%llu cert_settle_us=%llu cert_held_us=%llu chained=%d\n",
		       regions, certsum.wait, certsum.drain, certsum.freeze, certsum.isolate,
		       certsum.settle, certsum.held, certsum.chained);
	} else {
		printf(" entry_p50=- entry_p95=- outcome_clean=-\n");
	}
	if (churn)
		printf("churn_in_begin=%ld\n", atomic_load(&churn_in_begin));
	return 0;
}
