/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * topo.h - the node's topology for krexd: GPU locality and the choice of
 * cores for a region's owner and for everyone else (doc/topology.md).
 *
 * Only topo_load() reads the system (and NVML / procfs for the GPU table);
 * every other function works on the loaded copy, so the module is tested on
 * XML topologies of real and made-up machines.
 */
#ifndef KREX_TOPO_H
#define KREX_TOPO_H

#include <stddef.h>

struct krex_topo;

/*
 * Load a topology.  spec: NULL, "" or "auto" for this node; "xml:PATH" or a
 * path ending in ".xml" for an exported topology; "synthetic:DESC" for an
 * hwloc synthetic description ("synthetic:pack:2 core:8 pu:2").
 * gpu_pci_overrides: NULL or a NULL-terminated list of "gpuN_pci=BUSID"
 * (or "N=BUSID") from krexd.conf.  Returns a handle, or NULL with the
 * reason in err.
 */
struct krex_topo *topo_load(const char *spec, const char *const *gpu_pci_overrides, char *err,
                            size_t errlen);
void topo_free(struct krex_topo *topo);

/* One line about the loaded topology ("xml, 64 PUs, 32 cores, 8 GPUs (pci scan)"). */
const char *topo_summary(const struct krex_topo *topo);

/* Number of GPUs known, and GPU i's index and PCI bus id (NULL past the end). */
int topo_gpu_count(const struct krex_topo *topo);
const char *topo_gpu_busid(const struct krex_topo *topo, int i, int *index);

/*
 * The CPUs local to one GPU, as a list: those of the nearest non-I/O
 * ancestor of its PCI device.  gpu: a node-level index ("3" or "gpu3"), a
 * PCI bus id, a UUID ("GPU-..."), or an OS device name in the topology
 * ("cuda0", "rsmi1", "card0").  When the GPU is unknown, not in the
 * topology, or hangs from the machine itself, every CPU counts as local,
 * *is_local_known is 0 and topo_gpu_note() says why.  Returns 0, or -1 with
 * errno (ENAMETOOLONG: cpulist too short).
 */
int topo_gpu_cpus(struct krex_topo *topo, const char *gpu, char *cpulist, size_t len,
                  int *is_local_known);

/*
 * About the last topo_gpu_cpus(): where the GPU sits ("0000:3b:00.0 near
 * Package L#0") or why its locality is unknown.
 */
const char *topo_gpu_note(const struct krex_topo *topo);

/* Results of topo_choose(). */
#define TOPO_CHOSEN 0  /* owner_cpus / rest_cpus are a real split */
#define TOPO_SKIPPED 1 /* node too small: owner and rest both get every CPU */

/*
 * Choose the owner's cores for a region.  owner_allowed: the owner's
 * allowed CPUs (NULL or "" = every CPU of the node).  gpus: the region's
 * GPUs (any form topo_gpu_cpus() takes).  want_cores: how many whole cores
 * the owner gets (0 = its allowed cores local to its GPUs).
 *
 * The owner gets whole cores of its allowed CPUs, nearest its GPUs first;
 * rest_cpus is every CPU of the node outside those cores, never empty.
 * Fallbacks (each one said in why): fewer allowed cores than wanted gives
 * what there is; a choice that would leave the rest nothing gives back the
 * farthest cores until one core is left to the rest; on a node of one core
 * isolation is skipped (TOPO_SKIPPED).
 * Returns TOPO_CHOSEN or TOPO_SKIPPED, or -1 with errno (EINVAL: bad or
 * empty owner_allowed, ENAMETOOLONG: a buffer too short) and why.
 */
int topo_choose(struct krex_topo *topo, const char *owner_allowed, const char *const *gpus,
                unsigned ngpus, unsigned want_cores, char *owner_cpus, size_t olen, char *rest_cpus,
                size_t rlen, char *why, size_t wlen);

/* Cores with a PU in cpulist (the node's cores for NULL or ""); -1 (EINVAL). */
int topo_cores_in(struct krex_topo *topo, const char *cpulist);

/* Export the loaded topology as XML (an admin sends it to the developers). */
int topo_export_xml(struct krex_topo *topo, const char *path);

#endif /* KREX_TOPO_H */
