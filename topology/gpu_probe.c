/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gpu_probe.c - GPU index to PCI bus id, from the sources gpu_probe.h lists.
 */
#include "config.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_probe.h"
#include "nvmlapi.h"

int gpu_busid_normalize(const char *s, char *out)
{
	unsigned dom = 0, bus, dev, fn;
	int n = 0;

	if (sscanf(s, "%x:%x:%x.%x%n", &dom, &bus, &dev, &fn, &n) == 4 && s[n] == '\0') {
		/* NVML writes the domain with 8 digits; 16 bits is all PCI has. */
	} else if (dom = 0, n = 0,
	           sscanf(s, "%x:%x.%x%n", &bus, &dev, &fn, &n) == 3 && s[n] == '\0') {
	} else {
		errno = EINVAL;
		return -1;
	}
	if (dom > 0xffff || bus > 0xff || dev > 0x1f || fn > 7 || !isxdigit((unsigned char)s[0])) {
		errno = EINVAL;
		return -1;
	}
	snprintf(out, GPU_BUSID_LEN, "%04x:%02x:%02x.%x", dom, bus, dev, fn);
	return 0;
}

int gpu_probe_nvml(struct gpu_entry *tab, int max)
{
	const struct nvml_api *nv = nvml_api_load();
	struct nvml_pci_info info;
	unsigned i, cnt = 0;
	nvml_device_t h;
	int n = 0;

	if (!nv || !nv->count || !nv->pci_info || nv->count(&cnt) != NVML_SUCCESS)
		return 0;
	for (i = 0; i < cnt && n < max; i++) {
		if (nv->by_index(i, &h) != NVML_SUCCESS || nv->pci_info(h, &info) != NVML_SUCCESS)
			continue;
		tab[n].index = (int)i;
		snprintf(tab[n].busid, GPU_BUSID_LEN, "%04x:%02x:%02x.0", info.domain & 0xffff,
		         info.bus & 0xff, info.device & 0x1f);
		tab[n].uuid[0] = '\0';
		if (nv->uuid && nv->uuid(h, tab[n].uuid, GPU_UUID_LEN) != NVML_SUCCESS)
			tab[n].uuid[0] = '\0';
		n++;
	}
	return n;
}

/* One procfs information file: minor number and UUID. */
static int read_information(const char *path, int *minor, char *uuid)
{
	char line[256];
	FILE *f = fopen(path, "re");

	if (!f)
		return -1;
	*minor = -1;
	uuid[0] = '\0';
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "Device Minor: %d", minor) == 1)
			continue;
		if (sscanf(line, "GPU UUID: %95s", uuid) == 1)
			continue;
	}
	fclose(f);
	return *minor >= 0 ? 0 : -1;
}

int gpu_probe_procfs(const char *dir, struct gpu_entry *tab, int max)
{
	char path[512];
	struct dirent *de;
	DIR *d = opendir(dir);
	int n = 0;

	if (!d)
		return 0;
	while ((de = readdir(d)) && n < max) {
		if (gpu_busid_normalize(de->d_name, tab[n].busid) < 0)
			continue;
		if (snprintf(path, sizeof(path), "%s/%s/information", dir, de->d_name) >=
		            (int)sizeof(path) ||
		    read_information(path, &tab[n].index, tab[n].uuid) < 0)
			continue;
		n++;
	}
	closedir(d);
	return n;
}

static int is_gpu_pci(hwloc_obj_t o)
{
	unsigned cls = o->attr->pcidev.class_id;

	return (cls == 0x0300 || cls == 0x0302 || cls == 0x0380) &&
	       (o->attr->pcidev.vendor_id == 0x10de || o->attr->pcidev.vendor_id == 0x1002);
}

static int cmp_busid(const void *a, const void *b)
{
	return strcmp(((const struct gpu_entry *)a)->busid, ((const struct gpu_entry *)b)->busid);
}

int gpu_probe_topology(hwloc_topology_t topo, struct gpu_entry *tab, int max)
{
	hwloc_obj_t o = NULL;
	int n = 0, i;

	while ((o = hwloc_get_next_pcidev(topo, o)) && n < max) {
		if (!is_gpu_pci(o))
			continue;
		snprintf(tab[n].busid, GPU_BUSID_LEN, "%04x:%02x:%02x.%x", o->attr->pcidev.domain,
		         o->attr->pcidev.bus, o->attr->pcidev.dev, o->attr->pcidev.func);
		tab[n].uuid[0] = '\0';
		n++;
	}
	qsort(tab, (size_t)n, sizeof(*tab), cmp_busid);
	for (i = 0; i < n; i++)
		tab[i].index = i;
	return n;
}

/* Parse "N=BUSID" or "gpuN_pci=BUSID". */
static int parse_override(const char *s, int *index, char *busid)
{
	char *end;
	long v;

	if (strncmp(s, "gpu", 3) == 0)
		s += 3;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || v < 0 || v > 1023)
		return -1;
	if (strncmp(end, "_pci", 4) == 0)
		end += 4;
	while (*end == ' ')
		end++;
	if (*end++ != '=')
		return -1;
	while (*end == ' ')
		end++;
	*index = (int)v;
	return gpu_busid_normalize(end, busid);
}

int gpu_apply_overrides(const char *const *ov, struct gpu_entry *tab, int n, int max, char *err,
                        size_t errlen)
{
	char busid[GPU_BUSID_LEN];
	int idx, i;

	for (; ov && *ov; ov++) {
		if (parse_override(*ov, &idx, busid) < 0) {
			snprintf(err, errlen, "bad GPU override '%s' (want gpuN_pci=DDDD:BB:DD.F)",
			         *ov);
			errno = EINVAL;
			return -1;
		}
		for (i = 0; i < n && tab[i].index != idx; i++)
			;
		if (i == n) {
			if (n == max) {
				snprintf(err, errlen, "too many GPUs (%d)", max);
				errno = EINVAL;
				return -1;
			}
			n++;
		}
		tab[i].index = idx;
		memcpy(tab[i].busid, busid, GPU_BUSID_LEN);
		tab[i].uuid[0] = '\0';
	}
	return n;
}
