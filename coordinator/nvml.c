/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * nvml.c - GPU clocks, throttle reasons and compute processes from NVML,
 * resolved at run time.  Only read calls are used: KREX never changes a
 * GPU's clocks, power or modes.
 */
#include "config.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "nvml.h"

/* Opaque NVML types and the few constants used (nvml.h, NVML API v12). */
typedef void *nvml_device_t;
#define NVML_SUCCESS 0
#define NVML_ERROR_INSUFFICIENT_SIZE 7
#define NVML_CLOCK_SM 1

/* nvmlProcessInfo_t as of the _v3 calls: pid, used memory, GPU and compute
 * instance ids. */
struct nvml_process_info {
	unsigned int pid;
	unsigned long long used_gpu_memory;
	unsigned int gpu_instance_id;
	unsigned int compute_instance_id;
};

static struct {
	void *handle;
	int state; /* 0 untried, 1 ready, -1 unavailable */
	int (*init)(void);
	int (*shutdown)(void);
	int (*by_index)(unsigned int, nvml_device_t *);
	int (*by_pci)(const char *, nvml_device_t *);
	int (*by_uuid)(const char *, nvml_device_t *);
	int (*clock)(nvml_device_t, int, unsigned int *);
	int (*reasons)(nvml_device_t, unsigned long long *);
	int (*procs)(nvml_device_t, unsigned int *, struct nvml_process_info *);
} nv;

static void *nvml_sym(const char *a, const char *b)
{
	void *p = dlsym(nv.handle, a);

	return p || !b ? p : dlsym(nv.handle, b);
}

int nvml_open(void)
{
	if (nv.state)
		return nv.state > 0 ? 0 : -1;
	nv.state = -1;
	nv.handle = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!nv.handle) {
		log_info("NVML not available (%s): GPU clocks and foreign processes unknown",
		         dlerror());
		return -1;
	}
	nv.init = nvml_sym("nvmlInit_v2", "nvmlInit");
	nv.shutdown = nvml_sym("nvmlShutdown", NULL);
	nv.by_index = nvml_sym("nvmlDeviceGetHandleByIndex_v2", "nvmlDeviceGetHandleByIndex");
	nv.by_pci = nvml_sym("nvmlDeviceGetHandleByPciBusId_v2", "nvmlDeviceGetHandleByPciBusId");
	nv.by_uuid = nvml_sym("nvmlDeviceGetHandleByUUID", NULL);
	nv.clock = nvml_sym("nvmlDeviceGetClockInfo", NULL);
	/* Renamed from ...ThrottleReasons in NVML 12.x; the old name remains. */
	nv.reasons = nvml_sym("nvmlDeviceGetCurrentClocksEventReasons",
	                      "nvmlDeviceGetCurrentClocksThrottleReasons");
	nv.procs = nvml_sym("nvmlDeviceGetComputeRunningProcesses_v3", NULL);
	if (!nv.init || !nv.by_index || nv.init() != NVML_SUCCESS) {
		log_warn("NVML found but did not initialise; GPU fields stay unknown");
		dlclose(nv.handle);
		nv.handle = NULL;
		return -1;
	}
	nv.state = 1;
	return 0;
}

void nvml_close(void)
{
	if (nv.state > 0 && nv.shutdown)
		nv.shutdown();
	if (nv.handle)
		dlclose(nv.handle);
	memset(&nv, 0, sizeof(nv));
}

/* A device handle for a PCI bus id ("0000:19:00.0"), a UUID ("GPU-...") or
 * an index ("0"). */
static int nvml_device(const char *gpu, nvml_device_t *dev)
{
	char *end;
	unsigned long idx;

	if (nvml_open() < 0)
		return -1;
	if (strchr(gpu, ':'))
		return nv.by_pci && nv.by_pci(gpu, dev) == NVML_SUCCESS ? 0 : -1;
	if (strncmp(gpu, "GPU-", 4) == 0 || strncmp(gpu, "MIG-", 4) == 0)
		return nv.by_uuid && nv.by_uuid(gpu, dev) == NVML_SUCCESS ? 0 : -1;
	idx = strtoul(gpu, &end, 10);
	if (*gpu == '\0' || *end)
		return -1;
	return nv.by_index((unsigned)idx, dev) == NVML_SUCCESS ? 0 : -1;
}

int nvml_sample(const char *gpu, struct nvml_sample *s)
{
	nvml_device_t dev;
	unsigned int mhz = 0;
	unsigned long long reasons = 0;

	s->sm_clock_mhz = -1;
	s->event_reasons = 0;
	s->known = 0;
	if (nvml_device(gpu, &dev) < 0 || !nv.clock || !nv.reasons)
		return -1;
	if (nv.clock(dev, NVML_CLOCK_SM, &mhz) != NVML_SUCCESS ||
	    nv.reasons(dev, &reasons) != NVML_SUCCESS)
		return -1;
	s->sm_clock_mhz = (int32_t)mhz;
	s->event_reasons = reasons;
	s->known = 1;
	return 0;
}

int nvml_gpu_pids(const char *gpu, pid_t *pids, unsigned max)
{
	struct nvml_process_info info[256];
	nvml_device_t dev;
	unsigned int n = 256, i;

	if (nvml_device(gpu, &dev) < 0 || !nv.procs)
		return -1;
	if (nv.procs(dev, &n, info) != NVML_SUCCESS)
		return -1;
	for (i = 0; i < n && i < max; i++)
		pids[i] = (pid_t)info[i].pid;
	return (int)(i);
}
