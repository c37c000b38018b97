/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * region_clocks.c - the GPU's part of a region's outcome: what krexd saw of
 * its clocks, throttle reasons, temperature and power, judged by
 * gpujudge.c's rule into the certificate's notes.
 */
#include "config.h"

#include <string.h>

#include "region_int.h"
#include "gpujudge.h"
#include "log.h"

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
void region_judge_clocks(struct krexd *k, struct region *r)
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
