/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * topo.c - load the topology, find GPU locality, choose the owner's cores.
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hwloc.h>

#include "cpulist.h"
#include "defs.h"
#include "gpu_probe.h"
#include "topo.h"

#define NVIDIA_PROCFS "/proc/driver/nvidia/gpus"

struct krex_topo {
	hwloc_topology_t t;
	int ngpu;
	struct gpu_entry gpu[KREX_MAX_GPUS];
	hwloc_obj_type_t core_type; /* Core, or PU where the topology has no cores */
	char summary[256];
	char note[256];
};

/* Append to a "; "-separated message; silently truncates (it is a message). */
__attribute__((format(printf, 3, 4))) static void msg_add(char *buf, size_t len, const char *fmt,
                                                          ...)
{
	size_t n = strlen(buf);
	va_list ap;

	if (n && n + 2 < len) {
		memcpy(buf + n, "; ", 3);
		n += 2;
	}
	if (n + 1 >= len)
		return;
	va_start(ap, fmt);
	vsnprintf(buf + n, len - n, fmt, ap);
	va_end(ap);
}

/* Point hwloc at the topology source named by spec; returns its kind. */
static const char *topo_set_source(hwloc_topology_t t, const char *spec, int *live)
{
	size_t n = spec ? strlen(spec) : 0;

	*live = 0;
	if (!spec || !*spec || strcmp(spec, "auto") == 0) {
		*live = 1;
		return "this node";
	}
	if (strncmp(spec, "synthetic:", 10) == 0)
		return hwloc_topology_set_synthetic(t, spec + 10) < 0 ? NULL : "synthetic";
	if (strncmp(spec, "xml:", 4) == 0)
		return hwloc_topology_set_xml(t, spec + 4) < 0 ? NULL : "xml";
	if (n > 4 && strcmp(spec + n - 4, ".xml") == 0)
		return hwloc_topology_set_xml(t, spec) < 0 ? NULL : "xml";
	errno = EINVAL;
	return NULL;
}

/* Fill the GPU table from the best source; returns that source's name. */
static const char *topo_probe_gpus(struct krex_topo *topo, int live)
{
	if (live) {
		topo->ngpu = gpu_probe_nvml(topo->gpu, KREX_MAX_GPUS);
		if (topo->ngpu > 0)
			return "nvml";
		topo->ngpu = gpu_probe_procfs(NVIDIA_PROCFS, topo->gpu, KREX_MAX_GPUS);
		if (topo->ngpu > 0)
			return "procfs";
	}
	topo->ngpu = gpu_probe_topology(topo->t, topo->gpu, KREX_MAX_GPUS);
	return "pci scan";
}

static void topo_summarize(struct krex_topo *topo, const char *kind, const char *gsrc, int ov)
{
	hwloc_topology_t t = topo->t;

	snprintf(topo->summary, sizeof(topo->summary),
	         "%s, %d PUs, %d cores, %d packages, %d NUMA nodes, %d GPUs (%s%s)", kind,
	         hwloc_bitmap_weight(hwloc_topology_get_allowed_cpuset(t)),
	         hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_CORE),
	         hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_PACKAGE),
	         hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_NUMANODE), topo->ngpu, gsrc,
	         ov ? " + config" : "");
}

struct krex_topo *topo_load(const char *spec, const char *const *gpu_pci_overrides, char *err,
                            size_t errlen)
{
	struct krex_topo *topo = calloc(1, sizeof(*topo));
	const char *kind, *gsrc;
	int live, n;

	if (!topo || hwloc_topology_init(&topo->t) < 0) {
		snprintf(err, errlen, "out of memory");
		free(topo);
		return NULL;
	}
	/* GPU locality needs the PCI devices, which hwloc 2 drops by default. */
	hwloc_topology_set_io_types_filter(topo->t, HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
	kind = topo_set_source(topo->t, spec, &live);
	if (!kind) {
		snprintf(err, errlen, "topology '%s': %s", spec,
		         errno == EINVAL ? "not auto, xml:PATH, PATH.xml or synthetic:DESC"
		                         : strerror(errno));
		goto fail;
	}
	if (hwloc_topology_load(topo->t) < 0) {
		snprintf(err, errlen, "topology '%s': load failed: %s", spec ? spec : "auto",
		         strerror(errno));
		goto fail;
	}
	gsrc = topo_probe_gpus(topo, live);
	n = gpu_apply_overrides(gpu_pci_overrides, topo->gpu, topo->ngpu, KREX_MAX_GPUS, err,
	                        errlen);
	if (n < 0)
		goto fail;
	topo->ngpu = n;
	topo->core_type = hwloc_get_nbobjs_by_type(topo->t, HWLOC_OBJ_CORE) > 0 ? HWLOC_OBJ_CORE
	                                                                        : HWLOC_OBJ_PU;
	topo_summarize(topo, kind, gsrc, gpu_pci_overrides && *gpu_pci_overrides);
	return topo;
fail:
	hwloc_topology_destroy(topo->t);
	free(topo);
	return NULL;
}

void topo_free(struct krex_topo *topo)
{
	if (!topo)
		return;
	hwloc_topology_destroy(topo->t);
	free(topo);
}

const char *topo_summary(const struct krex_topo *topo)
{
	return topo->summary;
}

int topo_gpu_count(const struct krex_topo *topo)
{
	return topo->ngpu;
}

const char *topo_gpu_busid(const struct krex_topo *topo, int i, int *index)
{
	if (i < 0 || i >= topo->ngpu)
		return NULL;
	if (index)
		*index = topo->gpu[i].index;
	return topo->gpu[i].busid;
}

/* The PCI bus id of an OS device ("cuda0", "rsmi1") of the topology. */
static int topo_osdev_busid(struct krex_topo *topo, const char *name, char *busid)
{
	hwloc_obj_t o = NULL, p;

	while ((o = hwloc_get_next_osdev(topo->t, o)))
		if (o->name && strcmp(o->name, name) == 0)
			break;
	for (p = o; p && p->type != HWLOC_OBJ_PCI_DEVICE; p = p->parent)
		;
	if (!p)
		return -1;
	snprintf(busid, GPU_BUSID_LEN, "%04x:%02x:%02x.%x", p->attr->pcidev.domain,
	         p->attr->pcidev.bus, p->attr->pcidev.dev, p->attr->pcidev.func);
	return 0;
}

/* Any name of a GPU to its bus id; -1 with topo->note when unknown. */
static int topo_gpu_resolve(struct krex_topo *topo, const char *gpu, char *busid)
{
	const char *p = gpu;
	char *end;
	long idx;
	int i;

	if (gpu_busid_normalize(gpu, busid) == 0)
		return 0;
	if (strncmp(gpu, "GPU-", 4) == 0 || strncmp(gpu, "MIG-", 4) == 0) {
		for (i = 0; i < topo->ngpu; i++)
			if (topo->gpu[i].uuid[0] && strcmp(topo->gpu[i].uuid, gpu) == 0)
				return memcpy(busid, topo->gpu[i].busid, GPU_BUSID_LEN), 0;
		snprintf(topo->note, sizeof(topo->note), "GPU %s: UUID not known here", gpu);
		return -1;
	}
	if (strncmp(p, "gpu", 3) == 0)
		p += 3;
	errno = 0;
	idx = strtol(p, &end, 10);
	if (isdigit((unsigned char)*p) && !*end && !errno) {
		for (i = 0; i < topo->ngpu; i++)
			if (topo->gpu[i].index == idx)
				return memcpy(busid, topo->gpu[i].busid, GPU_BUSID_LEN), 0;
		snprintf(topo->note, sizeof(topo->note), "GPU %s: no such index (%d GPUs known)",
		         gpu, topo->ngpu);
		return -1;
	}
	if (topo_osdev_busid(topo, gpu, busid) == 0)
		return 0;
	snprintf(topo->note, sizeof(topo->note), "GPU %s: not an index, bus id, UUID or device",
	         gpu);
	return -1;
}

/*
 * The allowed CPUs local to gpu into set; *anc gets the locality object.
 * Returns 1 when known, 0 when not (set = every allowed CPU; topo->note).
 */
static int topo_gpu_locality(struct krex_topo *topo, const char *gpu, hwloc_bitmap_t set,
                             hwloc_obj_t *anc)
{
	hwloc_const_bitmap_t node = hwloc_topology_get_allowed_cpuset(topo->t);
	char busid[GPU_BUSID_LEN], type[64];
	hwloc_obj_t pci;

	topo->note[0] = '\0';
	*anc = NULL;
	hwloc_bitmap_copy(set, node);
	if (topo_gpu_resolve(topo, gpu, busid) < 0)
		return 0;
	pci = hwloc_get_pcidev_by_busidstring(topo->t, busid);
	if (!pci) {
		snprintf(topo->note, sizeof(topo->note), "GPU %s (%s): not in the topology", gpu,
		         busid);
		return 0;
	}
	*anc = hwloc_get_non_io_ancestor_obj(topo->t, pci);
	if (!*anc || !(*anc)->parent || hwloc_bitmap_iszero((*anc)->cpuset)) {
		snprintf(topo->note, sizeof(topo->note),
		         "GPU %s (%s): attached to the machine, no locality", gpu, busid);
		*anc = NULL;
		return 0;
	}
	hwloc_bitmap_and(set, (*anc)->cpuset, node);
	hwloc_obj_type_snprintf(type, sizeof(type), *anc, 0);
	snprintf(topo->note, sizeof(topo->note), "%s near %s L#%u", busid, type,
	         (*anc)->logical_index);
	return 1;
}

int topo_gpu_cpus(struct krex_topo *topo, const char *gpu, char *cpulist, size_t len,
                  int *is_local_known)
{
	hwloc_bitmap_t set = hwloc_bitmap_alloc();
	hwloc_obj_t anc;
	int known, rc;

	if (!set)
		return -1;
	known = topo_gpu_locality(topo, gpu, set, &anc);
	if (is_local_known)
		*is_local_known = known;
	rc = cpulist_format(set, cpulist, len) < 0 ? -1 : 0;
	hwloc_bitmap_free(set);
	return rc;
}

const char *topo_gpu_note(const struct krex_topo *topo)
{
	return topo->note;
}

int topo_cores_in(struct krex_topo *topo, const char *cpulist)
{
	hwloc_bitmap_t set = hwloc_bitmap_alloc();
	hwloc_obj_t core = NULL;
	int n = 0;

	if (!set)
		return -1;
	if (!cpulist || !*cpulist)
		hwloc_bitmap_copy(set, hwloc_topology_get_allowed_cpuset(topo->t));
	else if (cpulist_parse(cpulist, set) < 0) {
		hwloc_bitmap_free(set);
		return -1;
	}
	while ((core = hwloc_get_next_obj_by_type(topo->t, topo->core_type, core)))
		n += hwloc_bitmap_intersects(core->cpuset, set);
	hwloc_bitmap_free(set);
	return n;
}

int topo_export_xml(struct krex_topo *topo, const char *path)
{
	return hwloc_topology_export_xml(topo->t, path, 0);
}

/* A core the owner may get, and how near it is to the region's GPUs. */
struct core_rank {
	hwloc_obj_t core;
	int depth; /* depth of the deepest ancestor shared with a GPU: bigger is nearer */
	int local; /* inside a GPU's locality */
	int turn;  /* its place among the local cores of that GPU: spreads over GPUs */
};

static int cmp_rank(const void *a, const void *b)
{
	const struct core_rank *x = a, *y = b;

	if (x->local != y->local)
		return y->local - x->local;
	if (x->turn != y->turn)
		return x->turn - y->turn;
	if (x->depth != y->depth)
		return y->depth - x->depth;
	return (int)x->core->logical_index - (int)y->core->logical_index;
}

/* Union of the GPUs' localities into local, their ancestors into anc[]. */
static int topo_gpus_locality(struct krex_topo *topo, const char *const *gpus, unsigned ngpus,
                              hwloc_bitmap_t local, hwloc_obj_t *anc, char *why, size_t wlen)
{
	hwloc_bitmap_t one = hwloc_bitmap_alloc();
	unsigned i, nanc = 0;

	hwloc_bitmap_zero(local);
	for (i = 0; i < ngpus && one; i++) {
		if (topo_gpu_locality(topo, gpus[i], one, &anc[nanc]) == 1) {
			hwloc_bitmap_or(local, local, one);
			nanc++;
		} else {
			msg_add(why, wlen, "%s: every core counted local", topo->note);
		}
	}
	hwloc_bitmap_free(one);
	if (ngpus == 0)
		msg_add(why, wlen, "no GPU: every core counted local");
	return (int)nanc;
}

/* Rank the cores that hold at least one of the owner's allowed CPUs. */
static int topo_rank_cores(struct krex_topo *topo, hwloc_const_bitmap_t allowed,
                           hwloc_const_bitmap_t local, hwloc_obj_t *anc, int nanc,
                           struct core_rank *r)
{
	hwloc_obj_t c = NULL, common;
	int turns[KREX_MAX_GPUS] = {0};
	int n = 0, i;

	while ((c = hwloc_get_next_obj_by_type(topo->t, topo->core_type, c))) {
		if (!hwloc_bitmap_intersects(c->cpuset, allowed))
			continue;
		r[n].core = c;
		r[n].local = nanc == 0 || hwloc_bitmap_isincluded(c->cpuset, local);
		r[n].depth = 0;
		r[n].turn = 0;
		for (i = 0; i < nanc && r[n].local; i++) {
			if (hwloc_bitmap_isincluded(c->cpuset, anc[i]->cpuset)) {
				r[n].turn = turns[i]++;
				break;
			}
		}
		for (i = 0; i < nanc; i++) {
			common = hwloc_get_common_ancestor_obj(topo->t, c, anc[i]);
			if (common && common->depth > r[n].depth)
				r[n].depth = common->depth;
		}
		n++;
	}
	qsort(r, (size_t)n, sizeof(*r), cmp_rank);
	return n;
}

/* owner = allowed CPUs of the first k ranked cores; rest = node minus those cores. */
static void topo_split(const struct core_rank *r, int k, hwloc_const_bitmap_t allowed,
                       hwloc_const_bitmap_t node, hwloc_bitmap_t owner, hwloc_bitmap_t rest)
{
	int i;

	hwloc_bitmap_zero(owner);
	hwloc_bitmap_copy(rest, node);
	for (i = 0; i < k; i++) {
		hwloc_bitmap_or(owner, owner, r[i].core->cpuset);
		hwloc_bitmap_andnot(rest, rest, r[i].core->cpuset);
	}
	hwloc_bitmap_and(owner, owner, allowed);
}

/* How many cores the owner gets, before the leave-one-to-the-rest rule. */
static int topo_want(const struct core_rank *r, int ncand, unsigned want_cores, char *why,
                     size_t wlen)
{
	int nlocal = 0, i, want;

	for (i = 0; i < ncand; i++)
		nlocal += r[i].local;
	if (want_cores == 0) {
		want = nlocal;
		if (want == 0) {
			msg_add(why, wlen,
			        "none of the owner's %d allowed cores is local to its GPUs: it keeps them all",
			        ncand);
			want = ncand;
		}
	} else if (want_cores > (unsigned)ncand) {
		msg_add(why, wlen, "region_cores=%u but the owner has %d allowed cores", want_cores,
		        ncand);
		want = ncand;
	} else {
		want = (int)want_cores;
	}
	return want;
}

int topo_choose(struct krex_topo *topo, const char *owner_allowed, const char *const *gpus,
                unsigned ngpus, unsigned want_cores, char *owner_cpus, size_t olen, char *rest_cpus,
                size_t rlen, char *why, size_t wlen)
{
	hwloc_const_bitmap_t node = hwloc_topology_get_allowed_cpuset(topo->t);
	hwloc_bitmap_t allowed = hwloc_bitmap_alloc(), local = hwloc_bitmap_alloc();
	hwloc_bitmap_t owner = hwloc_bitmap_alloc(), rest = hwloc_bitmap_alloc();
	int ncores = hwloc_get_nbobjs_by_type(topo->t, topo->core_type);
	struct core_rank *r = calloc((size_t)(ncores > 0 ? ncores : 1), sizeof(*r));
	hwloc_obj_t anc[KREX_MAX_GPUS];
	int rc = -1, nanc, ncand, want, nlocal, i;

	why[0] = '\0';
	if (!allowed || !local || !owner || !rest || !r) {
		errno = ENOMEM;
		goto out;
	}
	if (!owner_allowed || !*owner_allowed)
		hwloc_bitmap_copy(allowed, node);
	else if (cpulist_parse(owner_allowed, allowed) < 0) {
		msg_add(why, wlen, "owner's allowed CPUs '%s': not a CPU list", owner_allowed);
		goto out;
	}
	hwloc_bitmap_and(allowed, allowed, node);
	if (ngpus > KREX_MAX_GPUS)
		ngpus = KREX_MAX_GPUS;
	nanc = topo_gpus_locality(topo, gpus, ngpus, local, anc, why, wlen);
	ncand = topo_rank_cores(topo, allowed, local, anc, nanc, r);
	if (ncand == 0) {
		msg_add(why, wlen, "owner's allowed CPUs '%s' hold no core of this node",
		        owner_allowed);
		errno = EINVAL;
		goto out;
	}
	if (ncores < 2) {
		/* Nothing to split: moving everyone onto the owner's one core is worse. */
		msg_add(why, wlen, "node has %d core: isolation skipped", ncores);
		hwloc_bitmap_copy(owner, allowed);
		hwloc_bitmap_copy(rest, node);
		rc = TOPO_SKIPPED;
		goto format;
	}
	want = topo_want(r, ncand, want_cores, why, wlen);
	topo_split(r, want, allowed, node, owner, rest);
	for (i = want; hwloc_bitmap_iszero(rest) && i > 1; i--)
		topo_split(r, i - 1, allowed, node, owner, rest);
	if (i < want)
		msg_add(why, wlen, "owner gives back %d of %d cores to leave the rest one",
		        want - i, want);
	for (nlocal = 0; nlocal < i && r[nlocal].local; nlocal++)
		;
	if (nanc)
		msg_add(why, wlen, "owner gets %d core%s (%d local to its GPUs)", i,
		        i == 1 ? "" : "s", nlocal);
	else
		msg_add(why, wlen, "owner gets %d core%s", i, i == 1 ? "" : "s");
	rc = TOPO_CHOSEN;
format:
	if (cpulist_format(owner, owner_cpus, olen) < 0 ||
	    cpulist_format(rest, rest_cpus, rlen) < 0)
		rc = -1;
out:
	free(r);
	hwloc_bitmap_free(allowed);
	hwloc_bitmap_free(local);
	hwloc_bitmap_free(owner);
	hwloc_bitmap_free(rest);
	return rc;
}
