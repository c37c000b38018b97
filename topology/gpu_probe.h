/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gpu_probe.h - which PCI device is the node's GPU N.
 *
 * krexd names GPUs node-wide by PCI bus id (doc/design.md "Naming GPUs"); Slurm
 * and users name them by node-level index.  The sources, best first:
 * gpuN_pci overrides from krexd.conf, NVML (dlopen of libnvidia-ml.so.1,
 * never linked), /proc/driver/nvidia/gpus/BUSID/information, and a scan of
 * the PCI devices of the loaded topology (display class 0x0300 / 3D class
 * 0x0302, vendor NVIDIA 0x10de or AMD 0x1002, in bus id order, which is what
 * /sys/bus/pci/devices lists).
 */
#ifndef KREX_GPU_PROBE_H
#define KREX_GPU_PROBE_H

#include <hwloc.h>

#define GPU_BUSID_LEN 16 /* "dddd:bb:dd.f" + NUL */
#define GPU_UUID_LEN 96

struct gpu_entry {
	int index;                 /* node-level index, -1 if unset */
	char busid[GPU_BUSID_LEN]; /* normalized, lower case */
	char uuid[GPU_UUID_LEN];   /* "GPU-..." when a source gives it, else "" */
};

/*
 * Normalize a PCI bus id: accepts "3b:00.0", "0000:3B:00.0" and NVML's
 * "00000000:3B:00.0"; writes "0000:3b:00.0" into out (GPU_BUSID_LEN bytes).
 * Returns 0, or -1 (EINVAL) if s is not a bus id.
 */
int gpu_busid_normalize(const char *s, char *out);

/* NVML (common/nvmlapi.h, loaded once and kept); returns the count found (0 when NVML is absent). */
int gpu_probe_nvml(struct gpu_entry *tab, int max);

/*
 * The NVIDIA driver's procfs: every DIR/BUSID/information, index from its
 * "Device Minor:" line, UUID from "GPU UUID:".  dir is normally
 * "/proc/driver/nvidia/gpus" (a test passes a fake tree).  Returns the count.
 */
int gpu_probe_procfs(const char *dir, struct gpu_entry *tab, int max);

/* GPUs among the PCI devices of topo, indexed in bus id order. */
int gpu_probe_topology(hwloc_topology_t topo, struct gpu_entry *tab, int max);

/*
 * Apply overrides: a NULL-terminated list of "N=BUSID" or "gpuN_pci=BUSID".
 * Sets (or adds) entry N.  Returns the new count, or -1 (EINVAL) on a bad
 * item, with its text in err.
 */
int gpu_apply_overrides(const char *const *ov, struct gpu_entry *tab, int n, int max, char *err,
                        size_t errlen);

#endif /* KREX_GPU_PROBE_H */
