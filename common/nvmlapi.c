/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * nvmlapi.c - load libnvidia-ml.so.1 once, resolve its read calls, and name
 * its clocks-event reasons (nvmlapi.h).
 */
#include "config.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "log.h"
#include "nvmlapi.h"

static struct {
	void *handle;
	int state; /* 0 untried, 1 ready, -1 unavailable */
	int (*shutdown)(void);
	struct nvml_api api;
} nv;

/* a, or b when a is missing (renamed or versioned calls). */
static void *sym(const char *a, const char *b)
{
	void *p = dlsym(nv.handle, a);

	return p || !b ? p : dlsym(nv.handle, b);
}

const struct nvml_api *nvml_api_load(void)
{
	int (*init)(void);
	struct nvml_api *a = &nv.api;

	if (nv.state)
		return nv.state > 0 ? a : NULL;
	nv.state = -1;
	nv.handle = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!nv.handle) {
		log_info("NVML not available (%s): GPU clocks and foreign processes unknown",
		         dlerror());
		return NULL;
	}
	*(void **)&init = sym("nvmlInit_v2", "nvmlInit");
	*(void **)&nv.shutdown = sym("nvmlShutdown", NULL);
	*(void **)&a->count = sym("nvmlDeviceGetCount_v2", "nvmlDeviceGetCount");
	*(void **)&a->by_index = sym("nvmlDeviceGetHandleByIndex_v2", "nvmlDeviceGetHandleByIndex");
	*(void **)&a->by_pci =
	        sym("nvmlDeviceGetHandleByPciBusId_v2", "nvmlDeviceGetHandleByPciBusId");
	*(void **)&a->by_uuid = sym("nvmlDeviceGetHandleByUUID", NULL);
	*(void **)&a->pci_info = sym("nvmlDeviceGetPciInfo_v3", NULL);
	*(void **)&a->uuid = sym("nvmlDeviceGetUUID", NULL);
	*(void **)&a->clock = sym("nvmlDeviceGetClockInfo", NULL);
	*(void **)&a->max_clock = sym("nvmlDeviceGetMaxClockInfo", NULL);
	*(void **)&a->app_clock = sym("nvmlDeviceGetApplicationsClock", NULL);
	/* Renamed from ...ThrottleReasons in NVML 12.x; the old name remains. */
	*(void **)&a->reasons = sym("nvmlDeviceGetCurrentClocksEventReasons",
	                            "nvmlDeviceGetCurrentClocksThrottleReasons");
	*(void **)&a->temperature = sym("nvmlDeviceGetTemperature", NULL);
	*(void **)&a->violation = sym("nvmlDeviceGetViolationStatus", NULL);
	*(void **)&a->procs = sym("nvmlDeviceGetComputeRunningProcesses_v3", NULL);
	*(void **)&a->mps_procs = sym("nvmlDeviceGetMPSComputeRunningProcesses_v3", NULL);
	if (!init || !a->by_index || init() != NVML_SUCCESS) {
		log_warn("NVML found but did not initialise; GPU fields stay unknown");
		dlclose(nv.handle);
		memset(&nv, 0, sizeof(nv));
		nv.state = -1;
		return NULL;
	}
	nv.state = 1;
	return a;
}

void nvml_api_unload(void)
{
	if (nv.state > 0 && nv.shutdown)
		nv.shutdown();
	if (nv.handle)
		dlclose(nv.handle);
	memset(&nv, 0, sizeof(nv));
}

static const struct {
	uint64_t bit;
	const char *name;
} reason_names[] = {
        {NVML_REASON_GPU_IDLE, "gpu_idle"},
        {NVML_REASON_APP_CLOCKS, "app_clocks_setting"},
        {NVML_REASON_SW_POWER_CAP, "sw_power_cap"},
        {NVML_REASON_HW_SLOWDOWN, "hw_slowdown"},
        {NVML_REASON_SYNC_BOOST, "sync_boost"},
        {NVML_REASON_SW_THERMAL, "sw_thermal"},
        {NVML_REASON_HW_THERMAL, "hw_thermal"},
        {NVML_REASON_HW_POWER_BRAKE, "hw_power_brake"},
        {NVML_REASON_DISPLAY_CLOCK, "display_clock_setting"},
};

const char *nvml_reason_name(uint64_t bit)
{
	size_t i;

	for (i = 0; i < sizeof(reason_names) / sizeof(reason_names[0]); i++)
		if (reason_names[i].bit == bit)
			return reason_names[i].name;
	return NULL;
}

int nvml_reason_names(uint64_t mask, const char *sep, char *buf, size_t len)
{
	char hex[24];
	const char *name;
	size_t off = 0, n;
	int bit;

	if (len)
		buf[0] = '\0';
	for (bit = 0; bit < 64; bit++) {
		if (!(mask >> bit & 1))
			continue;
		name = nvml_reason_name(1ULL << bit);
		if (!name) {
			snprintf(hex, sizeof(hex), "0x%llx", 1ULL << bit);
			name = hex;
		}
		n = (off ? strlen(sep) : 0) + strlen(name);
		if (off + n < len)
			snprintf(buf + off, len - off, "%s%s", off ? sep : "", name);
		off += n;
	}
	return (int)off;
}
