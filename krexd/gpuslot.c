/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gpuslot.c - krexd's GPU table: slot i is gate page slot i.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf.h"
#include "krexd.h"
#include "part.h"
#include "gpuslot.h"
#include "log.h"

/* ---- GPU table: slot i is gate page slot i ---- */

int gpu_slot(struct krexd *k, const char *name, int add)
{
	unsigned i, free_slot = k->ngpus;

	if (!name[0]) {
		errno = EINVAL;
		return -1;
	}
	for (i = 0; i < k->ngpus; i++) {
		if (!strcmp(k->gpu[i], name))
			return (int)i;
		if (!k->gpu[i][0] && free_slot == k->ngpus)
			free_slot = i; /* pruned: taken again */
	}
	if (!add)
		return -1;
	if (free_slot == KREX_MAX_GPUS || strlen(name) > KREX_MAX_GPU_NAME) {
		errno = ENOSPC;
		return -1;
	}
	snprintf(k->gpu[free_slot], sizeof(k->gpu[0]), "%s", name);
	if (free_slot == k->ngpus)
		k->ngpus++;
	gatectl_name(&k->gate, free_slot, name, k->ngpus);
	log_info("GPU %s is slot %u", name, free_slot);
	return (int)free_slot;
}

void gpu_prune(struct krexd *k)
{
	uint64_t used = 0;
	struct part *p;
	unsigned i;

	for (p = k->parts; p; p = p->next)
		used |= p->mask;
	for (p = k->moving; p; p = p->next)
		used |= p->mask;
	for (i = k->nconf_gpus; i < k->ngpus; i++) {
		if (!k->gpu[i][0] || (used >> i & 1) || rq_holder(&k->rq, i) ||
		    rq_queued_on(&k->rq, i))
			continue;
		log_info("GPU %s (slot %u) pruned: no participant names it", k->gpu[i], i);
		k->gpu[i][0] = '\0';
		k->gpu_adder[i] = 0;
		gatectl_open_slot(&k->gate, i, 0);
		gatectl_name(&k->gate, i, "", k->ngpus);
	}
	while (k->ngpus > k->nconf_gpus && !k->gpu[k->ngpus - 1][0])
		k->ngpus--;
	gatectl_name(&k->gate, k->ngpus ? k->ngpus - 1 : 0, k->ngpus ? k->gpu[k->ngpus - 1] : "",
	             k->ngpus);
}

/* The GPUs uid's Slurm steps were registered with (by root, from the SPANK plugin). */
uint64_t gpu_step_mask(struct krexd *k, uid_t uid)
{
	uint64_t m = 0;
	struct part *p;

	for (p = k->parts; p; p = p->next)
		if (p->uid == uid && p->by_root)
			m |= p->mask;
	for (p = k->moving; p; p = p->next)
		if (p->uid == uid && p->by_root)
			m |= p->mask;
	return m;
}

int gpu_allowed(struct krexd *k, uid_t uid, uint64_t mask, char *why, size_t len)
{
	uint64_t ok;
	unsigned i;

	if (uid == 0 || k->cfg.gpu_policy == GPU_POLICY_OPEN)
		return 0;
	if (k->cfg.gpu_policy == GPU_POLICY_STEP)
		ok = gpu_step_mask(k, uid);
	else if (k->nconf_gpus)
		ok = k->nconf_gpus >= 64 ? ~0ULL : (1ULL << k->nconf_gpus) - 1;
	else
		return 0; /* configured, and no gpus= list: any name (doc/security.md) */
	for (i = 0; i < k->ngpus; i++)
		if ((mask >> i & 1) && !(ok >> i & 1)) {
			snprintf(why, len, "%s", k->gpu[i]);
			return -1;
		}
	return 0;
}

int gpu_mask(struct krexd *k, const struct proto_gpus *g, int add, uint64_t *mask)
{
	unsigned i;
	int s;

	*mask = 0;
	for (i = 0; i < g->n; i++) {
		s = gpu_slot(k, g->name[i], add);
		if (s < 0)
			return -1;
		*mask |= 1ULL << s;
	}
	return 0;
}

void gpu_list(const struct krexd *k, uint64_t mask, char *buf, size_t len)
{
	size_t off = 0;
	unsigned i;
	int n;

	buf[0] = '\0';
	for (i = 0; i < k->ngpus && off < len; i++) {
		if (!(mask >> i & 1))
			continue;
		n = snprintf(buf + off, len - off, "%s%s", off ? "," : "", k->gpu[i]);
		if (n < 0 || (size_t)n >= len - off) {
			buf[off] = '\0';
			return;
		}
		off += (size_t)n;
	}
}
