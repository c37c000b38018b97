/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gpus.c - a step's GPUs, named node-wide (doc/design.md "Naming GPUs").
 *
 * Slurm gives node-level indices in SLURM_STEP_GPUS (every step with a GPU
 * gres, shards included) and SLURM_JOB_GPUS (batch steps).  The index is
 * turned into the GPU's PCI bus id where the NVIDIA driver says which device
 * minor it has (/proc/driver/nvidia/gpus/BUS/information, "Device Minor: N",
 * which is Slurm's index when gres.conf lists /dev/nvidia0..N in order, as
 * AutoDetect=nvml does); elsewhere (the fake GPU of the tests, AMD) the index
 * itself is the name.  CUDA_VISIBLE_DEVICES and ROCR_VISIBLE_DEVICES are the
 * last resort: under ConstrainDevices they are renumbered from 0, so they
 * name node GPUs only when Slurm set no SLURM_*_GPUS.
 */
#include "config.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf.h"
#include "krex_spank.h"

#define NVIDIA_PROC "/proc/driver/nvidia/gpus"

/* The PCI bus id of the NVIDIA GPU with device minor idx into out; 0 or -1. */
static int gpus_nvidia_bus(const char *idx, char *out, size_t len)
{
	char path[512], line[256];
	struct dirent *d;
	DIR *dir;
	FILE *f;
	int found = -1;

	dir = opendir(NVIDIA_PROC);
	if (!dir)
		return -1;
	while (found < 0 && (d = readdir(dir))) {
		if (d->d_name[0] == '.')
			continue;
		if (xsnprintf(path, sizeof(path), NVIDIA_PROC "/%s/information", d->d_name) < 0)
			continue;
		f = fopen(path, "r");
		if (!f)
			continue;
		while (fgets(line, sizeof(line), f)) {
			char minor[32];

			if (sscanf(line, "Device Minor: %31s", minor) == 1 && !strcmp(minor, idx)) {
				found = xstrcpy(out, len, d->d_name);
				break;
			}
		}
		fclose(f);
	}
	closedir(dir);
	return found;
}

int gpus_from_step(spank_t sp, struct proto_gpus *g)
{
	static const char *const vars[] = {"SLURM_STEP_GPUS", "SLURM_JOB_GPUS",
	                                   "CUDA_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES"};
	char val[1024], items[KREX_MAX_GPUS][PROTO_GPU_NAME_LEN];
	unsigned i;
	int n = 0;

	memset(g, 0, sizeof(*g));
	for (i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
		if (spank_getenv(sp, vars[i], val, sizeof(val)) != ESPANK_SUCCESS || !val[0])
			continue;
		n = conf_split_list(val, &items[0][0], PROTO_GPU_NAME_LEN, KREX_MAX_GPUS);
		if (n < 0)
			return -1;
		break;
	}
	for (i = 0; i < (unsigned)n; i++)
		if (gpus_nvidia_bus(items[i], g->name[i], PROTO_GPU_NAME_LEN) < 0)
			xstrcpy(g->name[i], PROTO_GPU_NAME_LEN, items[i]);
	g->n = (uint16_t)n;
	return n;
}

void gpus_join(const struct proto_gpus *g, char *out, size_t len)
{
	size_t used = 0;
	unsigned i;
	int w;

	out[0] = '\0';
	for (i = 0; i < g->n && used < len; i++) {
		w = snprintf(out + used, len - used, "%s%s", i ? "," : "", g->name[i]);
		if (w < 0 || (size_t)w >= len - used)
			break;
		used += (size_t)w;
	}
}
