/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * isolate.c - the isolation hook (see isolate.h), wired to topology/:
 * isolate_region_enter() chooses the owner's cores (topo_choose) and moves
 * every other participant (cpuset cgroup or affinity) off them, recording
 * an undo line through rec before each change.  The lines are undone by
 * hwloc's isolate_undo_line() (region end, and recovery at start).
 * doc/topology.md.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "conf.h"
#include "isolate.h"
#include "isolate_region.h"
#include "krexd_config.h"
#include "log.h"

const char *const isolate_undo_kinds[] = {"cpuset", "affinity", NULL};

static struct isolate_sys iso_sys;
static int iso_probed;
static struct krex_topo *iso_topo;
static char iso_spec[2048]; /* the topology and overrides iso_topo was loaded from */

/*
 * Probe the backend once; load the topology, again when its spec or the
 * gpuN_pci overrides changed (SIGHUP reload).
 */
static struct krex_topo *isolate_topo(const char *spec, const char (*gpu_pci)[16])
{
	static char ovbuf[KREX_MAX_GPUS][32];
	const char *ov[KREX_MAX_GPUS + 1];
	char key[sizeof(iso_spec)], err[256];
	unsigned i, n = 0;
	size_t len;

	if (!iso_probed) {
		isolate_probe(&iso_sys);
		iso_probed = 1;
	}
	snprintf(key, sizeof(key), "%s", spec ? spec : "");
	for (i = 0; gpu_pci && i < KREX_MAX_GPUS; i++) {
		if (!gpu_pci[i][0])
			continue;
		snprintf(ovbuf[n], sizeof(ovbuf[n]), "%u=%s", i, gpu_pci[i]);
		ov[n] = ovbuf[n];
		len = strlen(key);
		snprintf(key + len, sizeof(key) - len, " %s", ovbuf[n]);
		n++;
	}
	ov[n] = NULL;
	if (iso_topo && strcmp(key, iso_spec) == 0)
		return iso_topo;
	topo_free(iso_topo);
	iso_topo = topo_load(spec, ov, err, sizeof(err));
	if (!iso_topo) {
		log_error("isolate: %s", err);
		iso_spec[0] = '\0';
		return NULL;
	}
	snprintf(iso_spec, sizeof(iso_spec), "%s", key);
	log_info("isolate: topology %s; backend %s", topo_summary(iso_topo),
	         isolate_kind_name(iso_sys.kind));
	return iso_topo;
}

#define ISO_SPARE_FDS 8
static int iso_spare[ISO_SPARE_FDS] = {-1, -1, -1, -1, -1, -1, -1, -1};

void isolate_fds_reserve(void)
{
	int i;

	for (i = 0; i < ISO_SPARE_FDS; i++)
		if (iso_spare[i] < 0)
			iso_spare[i] = open("/dev/null", O_RDONLY | O_CLOEXEC);
}

void isolate_fds_release(void)
{
	int i;

	for (i = 0; i < ISO_SPARE_FDS; i++)
		if (iso_spare[i] >= 0) {
			close(iso_spare[i]);
			iso_spare[i] = -1;
		}
}

int isolate_load(const char *topology, const char (*gpu_pci)[16])
{
	isolate_fds_reserve();
	return isolate_topo(topology, gpu_pci) ? 0 : -1;
}

const char *isolate_backend_name(void)
{
	if (!iso_probed) {
		isolate_probe(&iso_sys);
		iso_probed = 1;
	}
	return isolate_kind_name(iso_sys.kind);
}

/* Fill the certificate's isolation fields from out. */
static void isolate_cert(const struct isolate_region_out *out, struct krex_certificate *cert)
{
	if (xstrcpy(cert->owner_cores, sizeof(cert->owner_cores), out->owner_cpus) < 0)
		cert->owner_cores[0] = '\0'; /* too long for the certificate: unknown */
	cert->moved = out->moved;
	cert->known |= KREX_CERT_ISOLATION;
}

int isolate_enter(const struct isolate_req *req, isolate_rec_fn rec, void *ctx,
                  struct krex_certificate *cert)
{
	struct isolate_region_req rr;
	struct isolate_region_out out;
	struct krex_topo *topo;
	uint64_t cores = 0;

	cert->known &= ~KREX_CERT_ISOLATION;
	cert->moved = -1;
	cert->owner_cores[0] = '\0';
	if (req->mode == ISOLATE_NONE || req->owner_pid <= 0)
		return 0;
	topo = isolate_topo(req->topology, req->gpu_pci);
	if (!topo) {
		errno = ENOENT;
		return -1;
	}
	if (req->region_cores && req->region_cores[0] &&
	    conf_parse_uint(req->region_cores, 0, 4096, &cores) < 0)
		cores = 0; /* config_set validated it; a bad value means the default */
	memset(&rr, 0, sizeof(rr));
	rr.owner_pid = req->owner_pid;
	rr.owner_cpuset = req->owner_cpuset;
	rr.owner_allowed = req->owner_cpus;
	rr.gpus = req->gpus;
	rr.ngpus = req->ngpus;
	rr.others = req->other_pids;
	rr.nothers = req->nother;
	rr.node = req->mode == ISOLATE_NODE;
	rr.want_cores = (unsigned)cores;
	rr.node_gpus = req->node_gpus;
	if (topo_gpu_count(topo) > (int)rr.node_gpus)
		rr.node_gpus = (unsigned)topo_gpu_count(topo);
	if (isolate_region_enter(topo, &iso_sys, &rr, rec, ctx, &out) < 0) {
		if (req->dry)
			return -1;
		log_warn("isolate: region %llu: %s", (unsigned long long)req->region_id, out.why);
		return -1;
	}
	if (req->dry)
		return 0;
	log_debug("isolate: region %llu: owner %s, rest %s, moved %d (%s)",
	          (unsigned long long)req->region_id, out.owner_cpus, out.rest_cpus, out.moved,
	          out.why);
	isolate_cert(&out, cert);
	if (out.skipped && !cert->note[0]) /* a 1-core node: the certificate says why */
		snprintf(cert->note, sizeof(cert->note), "isolation skipped: %.200s", out.why);
	return 0;
}
