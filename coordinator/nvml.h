/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * nvml.h - read-only GPU facts for the certificate, through NVML loaded with
 * dlopen (krexd never links it, so it runs on nodes without a GPU).
 */
#ifndef KREX_NVML_H
#define KREX_NVML_H

#include <stdint.h>
#include <sys/types.h>

struct nvml_sample {
	int32_t sm_clock_mhz;   /* -1 unknown */
	uint64_t event_reasons; /* clocks-event (throttle) reasons bit mask */
	int known;              /* 1 if both fields were read */
};

/* Load libnvidia-ml.so.1 and initialise it once.  Returns 0, or -1 when NVML
 * is not there (the certificate then keeps its GPU fields unknown). */
int nvml_open(void);

void nvml_close(void);

/* Clock and throttle reasons of a GPU named by PCI bus id, UUID or index. */
int nvml_sample(const char *gpu, struct nvml_sample *s);

/* Pids of compute processes on the GPU; returns their count (at most max),
 * or -1 if NVML cannot tell. */
int nvml_gpu_pids(const char *gpu, pid_t *pids, unsigned max);

#endif /* KREX_NVML_H */
