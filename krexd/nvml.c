/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * nvml.c - GPU clocks, clocks-event reasons, temperature, violation counters
 * and compute processes from NVML, resolved at run time through
 * common/nvmlapi.c.  Device handles are cached by name: a sample during a
 * region is two NVML calls.
 */
#include "config.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "defs.h"
#include "nvml.h"

static const struct nvml_api *nv;

static struct {
	char name[KREX_MAX_GPU_NAME + 1];
	nvml_device_t dev;
} cache[KREX_MAX_GPUS];
static unsigned ncache;
/* The cache is shared with the process-list thread (gpuprocs.c); NVML
 * itself is thread-safe. */
static pthread_mutex_t cache_mu = PTHREAD_MUTEX_INITIALIZER;

int nvml_open(void)
{
	if (!nv)
		nv = nvml_api_load();
	return nv ? 0 : -1;
}

void nvml_close(void)
{
	nvml_api_unload();
	nv = NULL;
	ncache = 0;
}

unsigned nvml_gpu_count(void)
{
	unsigned n = 0;

	if (nvml_open() < 0 || !nv->count || nv->count(&n) != NVML_SUCCESS)
		return 0;
	return n;
}

/* A device handle for a PCI bus id ("0000:19:00.0"), a UUID ("GPU-...") or
 * an index ("0"). */
static int nvml_device(const char *gpu, nvml_device_t *dev)
{
	unsigned long idx;
	char *end;
	unsigned i;
	int rc;

	if (nvml_open() < 0)
		return -1;
	pthread_mutex_lock(&cache_mu);
	for (i = 0; i < ncache; i++)
		if (strcmp(cache[i].name, gpu) == 0) {
			*dev = cache[i].dev;
			pthread_mutex_unlock(&cache_mu);
			return 0;
		}
	pthread_mutex_unlock(&cache_mu);
	if (strchr(gpu, ':'))
		rc = nv->by_pci && nv->by_pci(gpu, dev) == NVML_SUCCESS ? 0 : -1;
	else if (strncmp(gpu, "GPU-", 4) == 0 || strncmp(gpu, "MIG-", 4) == 0)
		rc = nv->by_uuid && nv->by_uuid(gpu, dev) == NVML_SUCCESS ? 0 : -1;
	else {
		idx = strtoul(gpu, &end, 10);
		rc = *gpu && !*end && nv->by_index((unsigned)idx, dev) == NVML_SUCCESS ? 0 : -1;
	}
	pthread_mutex_lock(&cache_mu);
	if (rc == 0 && ncache < KREX_MAX_GPUS && strlen(gpu) < sizeof(cache[0].name)) {
		strcpy(cache[ncache].name, gpu);
		cache[ncache++].dev = *dev;
	}
	pthread_mutex_unlock(&cache_mu);
	return rc;
}

int nvml_has(const char *gpu)
{
	nvml_device_t dev;

	return nvml_device(gpu, &dev) == 0;
}

int nvml_sample(const char *gpu, struct nvml_sample *s)
{
	nvml_device_t dev;
	unsigned int mhz = 0;
	unsigned long long reasons = 0;

	s->sm_clock_mhz = -1;
	s->event_reasons = 0;
	s->known = 0;
	if (nvml_device(gpu, &dev) < 0 || !nv->clock || !nv->reasons)
		return -1;
	if (nv->clock(dev, NVML_CLOCK_SM, &mhz) != NVML_SUCCESS ||
	    nv->reasons(dev, &reasons) != NVML_SUCCESS)
		return -1;
	s->sm_clock_mhz = (int32_t)mhz;
	s->event_reasons = reasons;
	s->known = 1;
	return 0;
}

int32_t nvml_nominal_clock(const char *gpu)
{
	nvml_device_t dev;
	unsigned int max = 0, app = 0;

	if (nvml_device(gpu, &dev) < 0)
		return -1;
	if (!nv->max_clock || nv->max_clock(dev, NVML_CLOCK_SM, &max) != NVML_SUCCESS)
		max = 0;
	if (!nv->app_clock || nv->app_clock(dev, NVML_CLOCK_SM, &app) != NVML_SUCCESS)
		app = 0;
	if (app && (!max || app <= max))
		return (int32_t)app;
	return max ? (int32_t)max : -1;
}

void nvml_edge(const char *gpu, struct nvml_edge *e)
{
	struct nvml_violation_time p, t;
	nvml_device_t dev;
	unsigned int temp;

	e->temp_c = -1;
	e->viol_known = 0;
	e->viol_power_ns = e->viol_thermal_ns = e->viol_ref_us = 0;
	if (nvml_device(gpu, &dev) < 0)
		return;
	if (nv->temperature && nv->temperature(dev, NVML_TEMPERATURE_GPU, &temp) == NVML_SUCCESS)
		e->temp_c = (int32_t)temp;
	if (nv->violation && nv->violation(dev, NVML_PERF_POLICY_POWER, &p) == NVML_SUCCESS &&
	    nv->violation(dev, NVML_PERF_POLICY_THERMAL, &t) == NVML_SUCCESS) {
		e->viol_power_ns = p.violation_time;
		e->viol_thermal_ns = t.violation_time;
		e->viol_ref_us =
		        p.reference_time > t.reference_time ? p.reference_time : t.reference_time;
		e->viol_known = 1;
	}
}

int nvml_gpu_pids(const char *gpu, pid_t *pids, unsigned long long *mem, unsigned max, int *mps)
{
	struct nvml_process_info info[256];
	nvml_device_t dev;
	unsigned int n = 256, i, j, got;

	*mps = 0;
	if (nvml_device(gpu, &dev) < 0 || !nv->procs)
		return -1;
	if (nv->procs(dev, &n, info) != NVML_SUCCESS)
		return -1;
	for (got = 0; got < n && got < max; got++) {
		pids[got] = (pid_t)info[got].pid;
		if (mem)
			mem[got] = info[got].used_gpu_memory;
	}
	n = 256;
	if (!nv->mps_procs || nv->mps_procs(dev, &n, info) != NVML_SUCCESS)
		return (int)got;
	*mps = 1;
	for (i = 0; i < n; i++) {
		for (j = 0; j < got && pids[j] != (pid_t)info[i].pid; j++)
			;
		if (j == got && got == max)
			continue;
		if (j == got)
			pids[got++] = (pid_t)info[i].pid;
		if (mem)
			mem[j] = info[i].used_gpu_memory;
	}
	return (int)got;
}
