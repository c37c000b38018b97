/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * nvmlapi.h - the one NVML loader of KREX: libnvidia-ml.so.1 through dlopen
 * (never linked, so everything runs on nodes without a GPU), the few NVML
 * types and constants KREX uses, declared here because nvml.h is not
 * installed on CPU build hosts, and the names of the clocks-event reasons.
 *
 * Used by krexd (krexd/nvml.c: clocks, reasons, temperature, violation
 * counters, compute processes) and by topology/gpu_probe.c (GPU index to PCI
 * bus id).  Only read calls are resolved: KREX never changes a GPU's clocks,
 * power limit or modes.
 */
#ifndef KREX_NVMLAPI_H
#define KREX_NVMLAPI_H

#include <stddef.h>
#include <stdint.h>

typedef void *nvml_device_t;

#define NVML_SUCCESS 0
#define NVML_ERROR_INSUFFICIENT_SIZE 7
#define NVML_CLOCK_SM 1          /* nvmlClockType_t */
#define NVML_TEMPERATURE_GPU 0   /* nvmlTemperatureSensors_t */
#define NVML_PERF_POLICY_POWER 0 /* nvmlPerfPolicyType_t */
#define NVML_PERF_POLICY_THERMAL 1

/* nvmlClocksEventReasons (formerly ...ThrottleReasons), nvml.h bit values. */
#define NVML_REASON_GPU_IDLE 0x1ULL
#define NVML_REASON_APP_CLOCKS 0x2ULL
#define NVML_REASON_SW_POWER_CAP 0x4ULL
#define NVML_REASON_HW_SLOWDOWN 0x8ULL
#define NVML_REASON_SYNC_BOOST 0x10ULL
#define NVML_REASON_SW_THERMAL 0x20ULL
#define NVML_REASON_HW_THERMAL 0x40ULL
#define NVML_REASON_HW_POWER_BRAKE 0x80ULL
#define NVML_REASON_DISPLAY_CLOCK 0x100ULL
/* Reasons that do not slow work down: an idle GPU, or clocks an admin set. */
#define NVML_REASONS_BENIGN (NVML_REASON_GPU_IDLE | NVML_REASON_APP_CLOCKS)
#define NVML_REASONS_POWER (NVML_REASON_SW_POWER_CAP | NVML_REASON_HW_POWER_BRAKE)
#define NVML_REASONS_THERMAL (NVML_REASON_SW_THERMAL | NVML_REASON_HW_THERMAL)

/* nvmlPciInfo_t as filled by nvmlDeviceGetPciInfo_v3 (layout kept since CUDA 9). */
struct nvml_pci_info {
	char bus_id_legacy[16];
	unsigned domain, bus, device, pci_device_id, pci_subsystem_id;
	char bus_id[32];
};

/* nvmlProcessInfo_t of the _v3 calls. */
struct nvml_process_info {
	unsigned int pid;
	unsigned long long used_gpu_memory;
	unsigned int gpu_instance_id;
	unsigned int compute_instance_id;
};

/* nvmlViolationTime_t: referenceTime in us, violationTime in ns. */
struct nvml_violation_time {
	unsigned long long reference_time;
	unsigned long long violation_time;
};

/* The resolved calls; any may be NULL when the driver lacks it. */
struct nvml_api {
	int (*count)(unsigned int *);
	int (*by_index)(unsigned int, nvml_device_t *);
	int (*by_pci)(const char *, nvml_device_t *);
	int (*by_uuid)(const char *, nvml_device_t *);
	int (*pci_info)(nvml_device_t, struct nvml_pci_info *);
	int (*uuid)(nvml_device_t, char *, unsigned int);
	int (*clock)(nvml_device_t, int, unsigned int *);
	int (*max_clock)(nvml_device_t, int, unsigned int *);
	int (*app_clock)(nvml_device_t, int, unsigned int *);
	int (*reasons)(nvml_device_t, unsigned long long *);
	int (*temperature)(nvml_device_t, int, unsigned int *);
	int (*violation)(nvml_device_t, int, struct nvml_violation_time *);
	int (*procs)(nvml_device_t, unsigned int *, struct nvml_process_info *);
	/* the clients of an MPS server (its own pid is in procs' list) */
	int (*mps_procs)(nvml_device_t, unsigned int *, struct nvml_process_info *);
};

/*
 * Load and initialise NVML once per process.  Returns the calls, or NULL
 * when there is no NVML or it did not initialise (logged once, at info or
 * warn).  Later calls return the same answer without trying again.
 */
const struct nvml_api *nvml_api_load(void);

/* Shut NVML down and unload it (the next nvml_api_load() tries again). */
void nvml_api_unload(void);

/* Name of one reason bit ("sw_power_cap"), or NULL for a bit NVML does not define. */
const char *nvml_reason_name(uint64_t bit);

/*
 * The names of the bits of mask, separated by sep ("gpu_idle,sw_power_cap");
 * an undefined bit as "0x200".  "" for 0.  Returns the length it needed,
 * like snprintf.
 */
int nvml_reason_names(uint64_t mask, const char *sep, char *buf, size_t len);

#endif /* KREX_NVMLAPI_H */
