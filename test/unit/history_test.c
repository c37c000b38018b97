/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * history_test.c - krexd/history.c without a daemon: the cause class
 * of every note text region.c writes, the bounded ring, the step figures
 * (exact up to 64 regions, the log histogram past them), the metrics text.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "history.h"
#include "krexd.h"
#include "tap.h"

static struct krexd K;

static void add(uint32_t job, uint32_t step, uint32_t uid, uint32_t outcome, uint64_t entry_us,
                const char *note)
{
	struct proto_log_entry e;

	memset(&e, 0, sizeof(e));
	e.job = job;
	e.step = step;
	e.uid = uid;
	e.end_us = 1000;
	e.cert.outcome = outcome;
	e.cert.wait_us = entry_us;
	e.cert.held_us = 10;
	snprintf(e.cert.note, sizeof(e.cert.note), "%s", note);
	history_region_end(&K, &e, 1);
}

static int has(const char *text, const char *line)
{
	char want[256];

	snprintf(want, sizeof(want), "\n%s\n", line);
	return strstr(text, want) != NULL;
}

static void test_causes(void)
{
	static const struct {
		const char *note;
		int cause;
	} cases[] = {
	        {"1 sibling(s) did not acknowledge the drain in time", CAUSE_DRAIN},
	        {"participant 3: drain failed", CAUSE_DRAIN},
	        {"participant 3 not frozen within freeze_timeout", CAUSE_FREEZE},
	        {"participant 3 could not be frozen", CAUSE_FREEZE},
	        {"participant 3 was suspended by another during the drain: the GPU work it queued was not drained",
	         CAUSE_SUSPEND},
	        {"participant 3 was thawed by another during the region (Slurm's kill?) and left to run",
	         CAUSE_SUSPEND},
	        {"GPU not settled within settle_timeout (750 ms)", CAUSE_SETTLE},
	        {"power cap: SM 1500 MHz of 1980 (sw_power_cap)", CAUSE_CLOCKS},
	        {"SM clock low: 1500 MHz of 1980, beyond clock_tolerance 1%", CAUSE_CLOCKS},
	        {"power cap at the grant: SM 1500 MHz of 1980 (sw_power_cap)", CAUSE_CLOCKS},
	        {"SM clock low at the grant: 1800 MHz of 1980, beyond clock_tolerance 1%",
	         CAUSE_CLOCKS},
	        {"thermal slowdown: SM 1800 MHz of 1980 (sw_thermal), 88 C at the grant",
	         CAUSE_CLOCKS},
	        {"thermal slowdown between samples: 20000 us of 100000 us held", CAUSE_CLOCKS},
	        {"power cap with 1 foreign process(es) on the GPU: SM 1545 MHz of 1980 (sw_power_cap)",
	         CAUSE_CLOCKS},
	        {"power cap between samples with a late or unfrozen sibling: 30000 us of 100000 us held",
	         CAUSE_CLOCKS},
	        {"1 process(es) on the GPU at the end are not participants", CAUSE_FOREIGN},
	        {"GPU clocks unknown: NVML not available", CAUSE_CLOCKS_UNKNOWN},
	        {"2 process(es) on the GPU are not participants", CAUSE_FOREIGN},
	        {"isolation failed: Permission denied", CAUSE_ISOLATION},
	        {"participant 3: thaw failed (Device or resource busy), retried", CAUSE_THAW},
	        {"state file not written (freeze): No space left on device", CAUSE_STATE_FILE},
	        {"ended before the grant", CAUSE_EARLY_END},
	        {"participant 3 (pid 41) never joined the gate and its process 42 is on the GPU: its queued GPU work was not drained",
	         CAUSE_UNGATED},
	        {"participant 3 (pid 41) had no process in the gate (its gated ones left) and its process 42 is on the GPU: its queued GPU work was not drained",
	         CAUSE_UNGATED},
	        {"something new", CAUSE_OTHER},
	};
	unsigned i, bad = 0;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		if (history_cause_classes(cases[i].note) != 1u << cases[i].cause) {
			diag("'%s': mask %#x, want class %s", cases[i].note,
			     history_cause_classes(cases[i].note),
			     history_cause_name(cases[i].cause));
			bad++;
		}
	ok(!bad, "each note text region.c writes has its cause class (%u texts)", i);
	ok(history_cause_classes(
	           "GPU not settled within settle_timeout (750 ms); 2 process(es) on the GPU are not participants") ==
	           (1u << CAUSE_SETTLE | 1u << CAUSE_FOREIGN),
	   "a note with two causes has both classes");
	ok(history_cause_classes("") == 0, "an empty note has none");
}

static void test_steps(void)
{
	struct proto_summary_reply r;
	unsigned i;

	for (i = 1; i <= 10; i++)
		add(5, 0, 1000, i <= 8 ? KREX_OUTCOME_CLEAN : KREX_OUTCOME_DEGRADED, i * 100, "");
	history_step_summary(1000, 5, 0, &r);
	ok(r.regions == 10 && r.clean == 8 && r.degraded == 2 && r.expired == 0,
	   "step 5.0: 10 regions, 8 clean, 2 degraded");
	ok(r.entry_p50_us == 500 && r.entry_p95_us == 1000 && r.entry_max_us == 1000,
	   "10 regions: exact p50 500 us, p95 1000 us (nearest rank): %llu %llu",
	   (unsigned long long)r.entry_p50_us, (unsigned long long)r.entry_p95_us);
	history_step_summary(1001, 5, 0, &r);
	ok(r.regions == 0, "another uid sees no regions of it");
	history_step_summary(0, 5, 0, &r);
	ok(r.regions == 10, "root sees them");

	for (i = 1; i <= 1000; i++)
		add(6, 1, 1000, KREX_OUTCOME_CLEAN, i * 1000, "");
	history_step_summary(0, 6, 1, &r);
	ok(r.regions == 1000 && r.entry_max_us == 1000000, "step 6.1: 1000 regions");
	ok(r.entry_p50_us >= 500000 && r.entry_p50_us <= 500000 * 1.125,
	   "past 64 regions, p50 from the histogram within 1/8 octave: %llu",
	   (unsigned long long)r.entry_p50_us);
	ok(r.entry_p95_us >= 950000 && r.entry_p95_us <= 950000 * 1.125, "p95 too: %llu",
	   (unsigned long long)r.entry_p95_us);
}

static void test_metrics(void)
{
	size_t n;
	char *t;

	snprintf(K.cfg.node_name, sizeof(K.cfg.node_name), "n\"1\\x");
	t = history_metrics_text(&K, &n);
	ok(t && n == strlen(t) && t[n - 1] == '\n', "metrics text, ending in a newline");
	if (!t)
		return;
	ok(has(t, "krex_regions_total{outcome=\"clean\"} 1008") &&
	           has(t, "krex_regions_total{outcome=\"degraded\"} 2"),
	   "regions by outcome");
	ok(has(t, "krex_region_degraded_causes_total{cause=\"other\"} 2"),
	   "degraded without a note: class other");
	ok(has(t, "krex_region_wait_seconds_bucket{le=\"0.001\"} 11") &&
	           has(t, "krex_region_wait_seconds_bucket{le=\"+Inf\"} 1010") &&
	           has(t, "krex_region_wait_seconds_count 1010"),
	   "the wait histogram is cumulative and ends at the count");
	ok(has(t, "krex_info{version=\"" PACKAGE_VERSION "\",node=\"n\\\"1\\\\x\"} 1"),
	   "the node name is escaped as a label value");
	ok(has(t, "# TYPE krex_region_entry_seconds histogram"), "histograms are typed");
	free(t);
	K.parts_made = 3;
	K.parts_made_ns = 4500000;
	K.parts_moved_ns = 61000000;
	K.favordynmods = 0;
	t = history_metrics_text(&K, &n);
	ok(t && has(t, "krex_participants_made_total 3") &&
	           has(t, "krex_participant_make_seconds_total 0.004500") &&
	           has(t, "krex_participant_move_seconds_total 0.061000") &&
	           has(t, "krex_cgroup_favordynmods 0"),
	   "participants made, their time on the loop and the mover thread's, and favordynmods");
	free(t);
}

static int entries_are(unsigned want)
{
	char line[64];
	size_t n;
	char *t = history_metrics_text(&K, &n);
	int rc;

	snprintf(line, sizeof(line), "krex_history_entries %u", want);
	rc = t && has(t, line);
	free(t);
	return rc;
}

static void test_ring(void)
{
	ok(entries_are(0), "history = 0: nothing kept");
	K.cfg.history = 3;
	history_reconfigure(&K, 0);
	add(0, 0, 0, KREX_OUTCOME_CLEAN, 1, "");
	add(0, 0, 0, KREX_OUTCOME_CLEAN, 1, "");
	ok(entries_are(2), "history = 3: 2 of 2 kept");
	add(0, 0, 0, KREX_OUTCOME_CLEAN, 1, "");
	add(0, 0, 0, KREX_OUTCOME_CLEAN, 1, "");
	ok(entries_are(3), "and 3 of 4");
	K.cfg.history = 2;
	history_reconfigure(&K, 0);
	ok(entries_are(2), "shrunk to 2 on reload");
	K.cfg.history = 0;
	history_reconfigure(&K, 0);
	ok(entries_are(0), "and to none");
}

int main(void)
{
	plan(22);
	history_reconfigure(&K, 0); /* the step table, no writer thread */
	test_causes();
	test_steps();
	test_metrics();
	test_ring();
	history_fini(&K);
	return tap_done();
}
