/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gpujudge.h - the GPU's part of the outcome rule, as a pure function of
 * what krexd observed (doc/architecture.md "The GPU's state: inherited or
 * own").  A region is degraded for the GPU's state only when that state did
 * not come from the owner's own work in the region; a power cap that the
 * owner's own work reached on a settled, quiet GPU keeps it clean and is
 * reported in the certificate's own_power_cap_* fields.  No NVML here:
 * region.c gathers the observations, this file decides, so that the rule is
 * tested in test/unit/gpujudge_test.c without a GPU.
 */
#ifndef KREX_GPUJUDGE_H
#define KREX_GPUJUDGE_H

#include <stddef.h>
#include <stdint.h>

/* What krexd saw of the region's GPUs (over all of them: reasons ORed,
 * clocks the lowest, counters the largest growth). */
struct gpu_obs {
	uint64_t held_us;
	double tolerance;       /* clock_tolerance, percent */
	int32_t nominal_mhz;    /* lowest nominal SM clock, -1 unknown */
	int32_t min_mhz;        /* lowest busy SM clock sampled, -1 none */
	int32_t grant_mhz;      /* lowest SM clock in the grant's sample, -1 unknown */
	uint64_t reasons_grant; /* clocks-event reasons in the grant's sample */
	int low_grant;          /* a busy clock under the tolerance at the grant, no reason */
	uint64_t reasons_all;   /* every reason seen from the grant to the end */
	int low_busy;           /* after the grant: a busy clock under the tolerance, no reason */
	int32_t temp_grant_c;   /* -1 unknown */
	int32_t foreign;        /* most non-participant processes seen on the GPUs, -1 unknown */
	uint32_t late;          /* siblings late for the drain */
	uint32_t unfrozen;      /* siblings not frozen */
	int viol_known;
	uint64_t viol_power_us, viol_thermal_us; /* counter growth between the two readings */
	uint64_t viol_window_us;                 /* NVML's time between the two readings */
	uint32_t cap_samples;                    /* samples that saw sw_power_cap */
	int64_t cap_first_us;                    /* grant to the first of them, -1 none */
	uint64_t sample_period_us;               /* between two samples, 0: edges only */
};

struct gpu_verdict {
	char note[256]; /* the causes, "; "-separated, "" when clean */
	int own_known;  /* the own_* fields say what the owner's work did */
	uint64_t own_power_cap_us;
	int64_t own_power_cap_first_us;
	uint32_t own_power_cap_samples;
};

/*
 * Time a violation counter that grew by grew_us between two readings
 * window_us apart can have held the GPU within a region held held_us:
 * at most the growth and at most the time held (hi), and at least what
 * remains of the growth once the part of the window outside the region is
 * taken away (lo).  window_us 0 means the readings' times are unknown.
 */
void gpu_capped_in_region(uint64_t grew_us, uint64_t window_us, uint64_t held_us, uint64_t *lo,
                          uint64_t *hi);

/* Judge o into *v.  Returns 1 when the GPU's state degrades the region. */
int gpu_judge(const struct gpu_obs *o, struct gpu_verdict *v);

#endif /* KREX_GPUJUDGE_H */
