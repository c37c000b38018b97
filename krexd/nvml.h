/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * nvml.h - read-only GPU facts for the certificate and for the settle before
 * a grant, through the NVML loader of common/nvmlapi.h (krexd never links
 * NVML, so it runs on nodes without a GPU).  KREX never changes a GPU's
 * clocks, power limit or modes: only read calls are used.
 */
#ifndef KREX_NVML_H
#define KREX_NVML_H

#include <stdint.h>
#include <sys/types.h>

#include "nvmlapi.h"

/* One sample of a GPU's clock state. */
struct nvml_sample {
	int32_t sm_clock_mhz;   /* -1 unknown */
	uint64_t event_reasons; /* clocks-event (throttle) reasons bit mask */
	int known;              /* 1 if both fields were read */
};

/* Slower facts, read at the edges of a region. */
struct nvml_edge {
	int32_t temp_c;         /* -1 unknown */
	uint64_t viol_power_ns; /* violation counters (cumulative), valid if viol_known */
	uint64_t viol_thermal_ns;
	uint64_t viol_ref_us; /* NVML's reference time of the counters (latest of the two) */
	int viol_known;
};

/* Load NVML (once).  Returns 0, or -1 when it is not there. */
int nvml_open(void);

void nvml_close(void);

/* Number of GPUs NVML sees, 0 without NVML. */
unsigned nvml_gpu_count(void);

/* 1 when NVML knows the GPU named gpu (PCI bus id, UUID or index), else 0. */
int nvml_has(const char *gpu);

/* Clock and throttle reasons of a GPU named by PCI bus id, UUID or index. */
int nvml_sample(const char *gpu, struct nvml_sample *s);

/*
 * The GPU's unthrottled SM clock: its application clock when NVML reports
 * one (what the GPU runs work at when nothing holds it back), no higher than
 * its max clock; else the max clock.  -1 when unknown.
 */
int32_t nvml_nominal_clock(const char *gpu);

/* Temperature and violation counters; fields unknown stay -1 / viol_known 0. */
void nvml_edge(const char *gpu, struct nvml_edge *e);

/* Pids of compute processes on the GPU, MPS clients among them (each pid
 * once); returns their count (at most max), or -1 if NVML cannot tell.
 * mem (NULL: not asked) gets each one's used GPU memory in bytes as NVML
 * says (an MPS client's from the MPS list; NVML_VALUE_NOT_AVAILABLE, all
 * ones, when it does not say).  *mps is 1 when NVML listed the MPS clients
 * (none is an answer too), 0 when it could not (the driver lacks the call,
 * or it failed). */
int nvml_gpu_pids(const char *gpu, pid_t *pids, unsigned long long *mem, unsigned max, int *mps);

#endif /* KREX_NVML_H */
