/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gpujudge.c - inherited or own: the GPU's part of the outcome rule
 * (gpujudge.h; doc/architecture.md "The GPU's state: inherited or own").
 */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "gpujudge.h"
#include "nvmlapi.h"

void gpu_capped_in_region(uint64_t grew_us, uint64_t window_us, uint64_t held_us, uint64_t *lo,
                          uint64_t *hi)
{
	uint64_t outside = window_us > held_us ? window_us - held_us : 0;

	*hi = grew_us < held_us ? grew_us : held_us;
	/* Readings whose times are unknown may span anything: nothing is sure. */
	*lo = !window_us ? 0 : grew_us > outside ? grew_us - outside : 0;
	if (*lo > *hi)
		*lo = *hi;
}

static void note(struct gpu_verdict *v, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void note(struct gpu_verdict *v, const char *fmt, ...)
{
	size_t n = strlen(v->note);
	va_list ap;

	if (n && n + 2 < sizeof(v->note)) {
		memcpy(v->note + n, "; ", 3);
		n += 2;
	}
	if (n + 1 >= sizeof(v->note))
		return;
	va_start(ap, fmt);
	vsnprintf(v->note + n, sizeof(v->note) - n, fmt, ap);
	va_end(ap);
}

/* The causes of the reasons in bad, in words ("power cap, thermal slowdown"). */
static void causes(uint64_t bad, char *out, size_t len)
{
	static const struct {
		uint64_t mask;
		const char *text;
	} names[] = {
	        {NVML_REASONS_POWER, "power cap"},
	        {NVML_REASONS_THERMAL, "thermal slowdown"},
	        {NVML_REASON_HW_SLOWDOWN, "hardware slowdown"},
	        {NVML_REASON_SYNC_BOOST, "sync boost"},
	        {NVML_REASON_DISPLAY_CLOCK, "display clock setting"},
	        {~(NVML_REASONS_BENIGN | NVML_REASONS_POWER | NVML_REASONS_THERMAL |
	           NVML_REASON_HW_SLOWDOWN | NVML_REASON_SYNC_BOOST | NVML_REASON_DISPLAY_CLOCK),
	         "clocks held back"},
	};
	size_t i, off = 0;

	out[0] = '\0';
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (bad & names[i].mask && off < len)
			off += (size_t)snprintf(out + off, len - off, "%s%s", off ? ", " : "",
			                        names[i].text);
}

/* "CAUSES[ WHERE]: SM MIN MHz of NOMINAL (names)" for the reasons in bad. */
static void note_reasons(struct gpu_verdict *v, const struct gpu_obs *o, uint64_t bad, int32_t mhz,
                         const char *where)
{
	char names[256], what[160], temp[32] = "";

	causes(bad, what, sizeof(what));
	nvml_reason_names(bad, ",", names, sizeof(names));
	if (bad & NVML_REASONS_THERMAL && o->temp_grant_c >= 0)
		snprintf(temp, sizeof(temp), ", %d C at the grant", o->temp_grant_c);
	if (mhz >= 0 && o->nominal_mhz > 0)
		note(v, "%s%s: SM %d MHz of %d (%s)%s", what, where, mhz, o->nominal_mhz, names,
		     temp);
	else
		note(v, "%s%s (%s)%s", what, where, names, temp);
}

/* Why a power cap seen in the region cannot be the owner's alone; NULL if it can. */
static const char *not_own(const struct gpu_obs *o, char *buf, size_t len)
{
	if (o->reasons_grant & ~NVML_REASONS_BENIGN || o->low_grant)
		return "the GPU throttled at the grant";
	if (o->foreign < 0)
		return "processes on the GPU unknown";
	if (o->foreign > 0) {
		snprintf(buf, len, "%d foreign process(es) on the GPU", o->foreign);
		return buf;
	}
	if (o->late || o->unfrozen)
		return "a late or unfrozen sibling";
	return NULL;
}

int gpu_judge(const struct gpu_obs *o, struct gpu_verdict *v)
{
	uint64_t bad_grant = o->reasons_grant & ~NVML_REASONS_BENIGN;
	uint64_t bad_all = (o->reasons_all | o->reasons_grant) & ~NVML_REASONS_BENIGN;
	uint64_t never = bad_all & ~NVML_REASON_SW_POWER_CAP & ~bad_grant;
	uint64_t plo = 0, phi = 0, tlo = 0, thi = 0, tol_us;
	int cap_counted;
	const char *why;
	char buf[64];

	memset(v, 0, sizeof(*v));
	v->own_power_cap_first_us = -1;
	tol_us = (uint64_t)(o->tolerance / 100.0 * (double)o->held_us);
	if (o->viol_known) {
		gpu_capped_in_region(o->viol_power_us, o->viol_window_us, o->held_us, &plo, &phi);
		gpu_capped_in_region(o->viol_thermal_us, o->viol_window_us, o->held_us, &tlo, &thi);
	}
	cap_counted = o->viol_known && plo > tol_us;

	/* 1. The state at the grant is inherited: nothing of the owner's ran yet. */
	if (bad_grant)
		note_reasons(v, o, bad_grant, o->grant_mhz, " at the grant");
	else if (o->low_grant)
		note(v, "SM clock low at the grant: %d MHz of %d, beyond clock_tolerance %g%%",
		     o->grant_mhz, o->nominal_mhz, o->tolerance);
	/* 2. Reasons the owner's work never causes on a dedicated GPU in one
	 * region: heat (carried in: a GPU's temperature is minutes of
	 * everyone's work), hardware slowdown, power brake, sync boost. */
	if (never)
		note_reasons(v, o, never, o->min_mhz, "");
	if (o->viol_known && tlo > tol_us && !(bad_all & NVML_REASONS_THERMAL))
		note(v, "thermal slowdown between samples: %llu us of %llu us held",
		     (unsigned long long)thi, (unsigned long long)o->held_us);
	/* 3. The power cap: the owner's own when the GPU was settled at the
	 * grant and nobody else's work was on it. */
	why = not_own(o, buf, sizeof(buf));
	if (why && !(bad_grant & NVML_REASON_SW_POWER_CAP)) {
		if (bad_all & NVML_REASON_SW_POWER_CAP)
			note(v, "power cap with %s: SM %d MHz of %d (sw_power_cap)", why,
			     o->min_mhz, o->nominal_mhz);
		else if (cap_counted)
			note(v, "power cap between samples with %s: %llu us of %llu us held", why,
			     (unsigned long long)phi, (unsigned long long)o->held_us);
	}
	if (!why) {
		v->own_known = 1;
		v->own_power_cap_samples = o->cap_samples;
		v->own_power_cap_first_us = o->cap_first_us;
		if (o->viol_known)
			v->own_power_cap_us = phi;
		else if (o->sample_period_us) {
			v->own_power_cap_us = (uint64_t)o->cap_samples * o->sample_period_us;
			if (v->own_power_cap_us > o->held_us)
				v->own_power_cap_us = o->held_us;
		}
	}
	/* 4. A low clock with no reason: the power management of a GPU near
	 * its cap (the reason flag comes only once the clock is clamped) when
	 * the region reached its cap (a sample saw it, or the power counter
	 * surely grew inside the region); otherwise nothing explains it. */
	if (o->low_busy && !o->cap_samples && !(bad_all & NVML_REASON_SW_POWER_CAP) && !plo &&
	    !v->note[0])
		note(v, "SM clock low: %d MHz of %d, beyond clock_tolerance %g%%", o->min_mhz,
		     o->nominal_mhz, o->tolerance);
	return v->note[0] != '\0';
}
