/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gpujudge_test.c - the GPU's part of the outcome rule (krexd/gpujudge.c):
 * inherited state degrades, the owner's own power cap on a settled, quiet
 * GPU does not and is reported; the capped time is never more than held.
 */
#include "config.h"

#include <string.h>

#include "gpujudge.h"
#include "nvmlapi.h"
#include "tap.h"

/* A settled, quiet GPU: nominal at the grant, no foreign process, every
 * sibling frozen, counters known over exactly the region. */
static struct gpu_obs quiet(void)
{
	struct gpu_obs o;

	memset(&o, 0, sizeof(o));
	o.held_us = 100000;
	o.tolerance = 1;
	o.nominal_mhz = 1980;
	o.min_mhz = 1980;
	o.grant_mhz = 1980;
	o.temp_grant_c = 45;
	o.viol_known = 1;
	o.viol_window_us = 100000;
	o.cap_first_us = -1;
	o.sample_period_us = 20000;
	return o;
}

/* The owner's matmuls reach the cap 30 ms in, held 60 ms of it. */
static struct gpu_obs own_cap(void)
{
	struct gpu_obs o = quiet();

	o.min_mhz = 1545;
	o.reasons_all = NVML_REASON_SW_POWER_CAP;
	o.viol_power_us = 60000;
	o.cap_samples = 3;
	o.cap_first_us = 30000;
	return o;
}

static void arithmetic(void)
{
	uint64_t lo, hi;

	/* The note: "86375 us of 85279 us held". */
	gpu_capped_in_region(86375, 86375 + 20000, 85279, &lo, &hi);
	ok(hi == 85279, "capped time never more than held (hi %llu)", (unsigned long long)hi);
	ok(lo == 86375 - (86375 + 20000 - 85279),
	   "the part of the window outside the region is taken away (lo %llu)",
	   (unsigned long long)lo);
	gpu_capped_in_region(5000, 100000, 100000, &lo, &hi);
	ok(lo == 5000 && hi == 5000, "window = held: the growth, both bounds");
	gpu_capped_in_region(30000, 140000, 100000, &lo, &hi);
	ok(lo == 0 && hi == 30000, "a stale reading may hold all of it: lo 0");
	gpu_capped_in_region(30000, 0, 100000, &lo, &hi);
	ok(lo == 0 && hi == 30000, "reading times unknown: lo 0");
	gpu_capped_in_region(200000, 50000, 100000, &lo, &hi);
	ok(lo <= hi && hi == 100000, "growth beyond real time: clamped to held");
}

static void judge(void)
{
	struct gpu_verdict v;
	struct gpu_obs o;

	o = quiet();
	ok(gpu_judge(&o, &v) == 0 && !v.note[0], "a quiet region is clean");
	ok(v.own_known && v.own_power_cap_us == 0 && v.own_power_cap_first_us == -1 &&
	           v.own_power_cap_samples == 0,
	   "own fields known: no cap, never reached");

	o = own_cap();
	ok(gpu_judge(&o, &v) == 0, "own cap on a settled, quiet GPU: clean (note '%s')", v.note);
	ok(v.own_known && v.own_power_cap_us == 60000 && v.own_power_cap_first_us == 30000 &&
	           v.own_power_cap_samples == 3,
	   "own cap reported: %llu us, first at %lld us, %u samples",
	   (unsigned long long)v.own_power_cap_us, (long long)v.own_power_cap_first_us,
	   v.own_power_cap_samples);
	o.viol_power_us = 150000;
	gpu_judge(&o, &v);
	ok(v.own_power_cap_us == 100000, "own cap time never more than held");
	o.viol_known = 0;
	gpu_judge(&o, &v);
	ok(v.own_power_cap_us == 60000, "without counters: samples x period (%llu)",
	   (unsigned long long)v.own_power_cap_us);
	o.viol_known = 1;
	o.viol_power_us = 40000;
	o.reasons_all = 0;
	o.cap_samples = 0;
	o.cap_first_us = -1;
	ok(gpu_judge(&o, &v) == 0 && v.own_power_cap_us == 40000,
	   "own cap between samples (counter only): clean, counted");

	o = own_cap();
	o.reasons_grant = NVML_REASON_SW_POWER_CAP;
	o.grant_mhz = 1500;
	ok(gpu_judge(&o, &v) == 1 && strstr(v.note, "power cap at the grant: SM 1500 MHz of 1980"),
	   "cap at the grant: degraded (%s)", v.note);
	ok(!v.own_known, "cap at the grant: own fields unknown");

	o = quiet();
	o.low_grant = 1;
	o.grant_mhz = 1800;
	ok(gpu_judge(&o, &v) == 1 && strstr(v.note, "SM clock low at the grant: 1800 MHz"),
	   "low clock at the grant: degraded (%s)", v.note);

	o = own_cap();
	o.foreign = 1;
	ok(gpu_judge(&o, &v) == 1 &&
	           strstr(v.note, "power cap with 1 foreign process(es) on the GPU: SM 1545"),
	   "cap with a foreign process: degraded (%s)", v.note);
	o.foreign = -1;
	ok(gpu_judge(&o, &v) == 1 && strstr(v.note, "processes on the GPU unknown"),
	   "cap, processes unknown: degraded (%s)", v.note);
	o.foreign = 0;
	o.late = 1;
	ok(gpu_judge(&o, &v) == 1 && strstr(v.note, "a late or unfrozen sibling"),
	   "cap with a late sibling: degraded (%s)", v.note);
	o.late = 0;
	o.unfrozen = 1;
	ok(gpu_judge(&o, &v) == 1, "cap with a sibling not frozen: degraded");

	o = quiet();
	o.foreign = 1;
	o.viol_power_us = 30000;
	gpu_judge(&o, &v);
	ok(strstr(v.note,
	          "power cap between samples with 1 foreign process(es) on the GPU: 30000 us of 100000 us held") !=
	           NULL,
	   "counter-only cap with a foreign process: degraded (%s)", v.note);

	o = quiet();
	o.reasons_grant = NVML_REASON_SW_THERMAL;
	o.reasons_all = NVML_REASON_SW_THERMAL;
	o.grant_mhz = o.min_mhz = 1800;
	o.temp_grant_c = 88;
	ok(gpu_judge(&o, &v) == 1 && strstr(v.note, "thermal slowdown at the grant: SM 1800"),
	   "thermal carried in: degraded (%s)", v.note);
	o.reasons_grant = 0;
	ok(gpu_judge(&o, &v) == 1 && strstr(v.note, "thermal slowdown: SM 1800 MHz of 1980") &&
	           strstr(v.note, "(sw_thermal), 88 C at the grant"),
	   "thermal mid-region: degraded, heat carried in (%s)", v.note);
	o = quiet();
	o.viol_thermal_us = 20000;
	ok(gpu_judge(&o, &v) == 1 &&
	           strstr(v.note, "thermal slowdown between samples: 20000 us of 100000 us held"),
	   "thermal between samples: degraded (%s)", v.note);
	o.viol_thermal_us = 500;
	ok(gpu_judge(&o, &v) == 0, "thermal counter within clock_tolerance: clean");

	o = quiet();
	o.reasons_all = NVML_REASON_HW_SLOWDOWN;
	ok(gpu_judge(&o, &v) == 1 && strstr(v.note, "hardware slowdown"),
	   "hardware slowdown is never the owner's (%s)", v.note);
	o = quiet();
	o.reasons_all = NVML_REASON_HW_POWER_BRAKE;
	ok(gpu_judge(&o, &v) == 1 && strstr(v.note, "power cap: SM"),
	   "a power brake (external) is never the owner's (%s)", v.note);

	o = quiet();
	o.low_busy = 1;
	o.min_mhz = 1900;
	ok(gpu_judge(&o, &v) == 1 && strstr(v.note, "SM clock low: 1900 MHz of 1980"),
	   "a low clock nothing explains: degraded (%s)", v.note);
	o.viol_power_us = 200;
	ok(gpu_judge(&o, &v) == 0, "a low clock in a region whose power counter grew: own, clean");
	o.viol_window_us = 150000;
	o.viol_power_us = 30000;
	ok(gpu_judge(&o, &v) == 1,
	   "... but not when the growth may all be outside the region (stale reading)");
	o = own_cap();
	o.low_busy = 1;
	ok(gpu_judge(&o, &v) == 0, "a low clock in a region that reached its own cap: clean");
	o.foreign = 1;
	gpu_judge(&o, &v);
	ok(!strstr(v.note, "SM clock low") && strstr(v.note, "power cap with 1 foreign"),
	   "... with a foreign process: degraded for the cap (%s)", v.note);

	/* The case: the counter window a little longer than the
	 * region, the power counter at held: own, and never more than held. */
	o = own_cap();
	o.held_us = 85279;
	o.viol_window_us = 86375 + 20000;
	o.viol_power_us = 86375;
	ok(gpu_judge(&o, &v) == 0, "the issue's region: clean");
	ok(v.own_power_cap_us == 85279, "the issue's region: clean, own cap %llu us of 85279 held",
	   (unsigned long long)v.own_power_cap_us);
}

int main(void)
{
	plan(34);
	arithmetic();
	judge();
	return tap_done();
}
