/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gpuslot.h - krexd's GPU table (gpuslot.c): slot i is gate page slot i.
 */
#ifndef KREXD_GPUSLOT_H
#define KREXD_GPUSLOT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "proto.h"

struct krexd;

int gpu_slot(struct krexd *k, const char *name, int add);
/* Free the slots no participant and no region names (configured ones stay). */
void gpu_prune(struct krexd *k);
/* May uid name the GPUs of mask (gpu_policy)?  0, or -1 with the refused name in why. */
int gpu_allowed(struct krexd *k, uid_t uid, uint64_t mask, char *why, size_t len);
int gpu_mask(struct krexd *k, const struct proto_gpus *g, int add, uint64_t *mask);
void gpu_list(const struct krexd *k, uint64_t mask, char *buf, size_t len);
/* The GPUs uid's Slurm steps were registered with (by root, from the SPANK plugin). */
uint64_t gpu_step_mask(struct krexd *k, uid_t uid);

#endif /* KREXD_GPUSLOT_H */
