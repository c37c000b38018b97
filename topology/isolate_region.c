/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * isolate_region.c - topo_choose() + isolate_apply() for one region.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpulist.h"
#include "isolate_region.h"
#include "proc.h"

#define CG_LEN 1024

/* The owner's allowed CPUs: given, or its current affinity (cgroup and Slurm binding). */
static int owner_allowed(const struct isolate_region_req *req, char *buf, size_t len)
{
	hwloc_bitmap_t set;
	cpu_set_t cs;
	int rc;

	if (req->owner_allowed && req->owner_allowed[0])
		return snprintf(buf, len, "%s", req->owner_allowed) < (int)len ? 0 : -1;
	if (sched_getaffinity(req->owner_pid, sizeof(cs), &cs) < 0)
		return -1;
	set = hwloc_bitmap_alloc();
	if (!set)
		return -1;
	cpulist_from_cpuset(&cs, set);
	rc = cpulist_format(set, buf, len) < 0 ? -1 : 0;
	hwloc_bitmap_free(set);
	return rc;
}

/* Targets for the others: their own cgroup, else their pid; cgroups once each. */
static size_t region_targets(const struct isolate_sys *sys, const struct isolate_region_req *req,
                             const char *owner_cg, struct isolate_target *t, char (*cg)[CG_LEN])
{
	size_t i, j, n = 0;

	for (i = 0; i < req->nothers; i++) {
		if (isolate_pid_cgroup(sys, req->others[i], cg[n], CG_LEN) < 0 ||
		    strcmp(cg[n], owner_cg) == 0)
			cg[n][0] = '\0'; /* no cgroup of its own: by pid */
		for (j = 0; cg[n][0] && j < n; j++)
			if (strcmp(cg[j], cg[n]) == 0)
				break;
		if (cg[n][0] && j < n)
			continue; /* that cgroup is a target already */
		t[n].cgroup = cg[n][0] ? cg[n] : NULL;
		t[n].pid = req->others[i];
		n++;
	}
	return n;
}

/*
 * Does the cgroup tree at dir hold only root's process tree?  The whole
 * tree: on v2, /proc/PID/cpuset names the nearest cgroup with the cpuset
 * controller, whose own cgroup.procs is empty while its children (krexd's
 * p<ID> of every participant, say) hold everyone.
 */
static int cgroup_only(const char *dir, pid_t root, int depth)
{
	char path[CG_LEN + 300], line[32];
	struct dirent *de;
	int only = 1;
	FILE *f;
	DIR *d;

	if (depth > 32)
		return 0;
	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (only && fgets(line, sizeof(line), f))
		only = proc_descends((pid_t)atoi(line), root);
	fclose(f);
	d = only ? opendir(dir) : NULL;
	while (d && only && (de = readdir(d))) {
		if (de->d_type != DT_DIR || de->d_name[0] == '.')
			continue;
		if (snprintf(path, sizeof(path), "%s/%s", dir, de->d_name) >= (int)sizeof(path))
			only = 0;
		else
			only = cgroup_only(path, root, depth + 1);
	}
	if (d)
		closedir(d);
	return only;
}

int isolate_region_choose(struct krex_topo *topo, const struct isolate_region_req *req,
                          struct isolate_region_out *out)
{
	char allowed[1024];
	int rc, cap = 0, node, mine;
	size_t len;

	memset(out, 0, sizeof(*out));
	if (owner_allowed(req, allowed, sizeof(allowed)) < 0) {
		snprintf(out->why, sizeof(out->why), "owner %d: allowed CPUs: %s",
		         (int)req->owner_pid, strerror(errno));
		return -1;
	}
	node = topo_cores_in(topo, NULL);
	mine = topo_cores_in(topo, allowed);
	if (req->node_gpus > 1 && node > 0 && mine >= node) /* no allocation of its own */
		cap = node / (int)req->node_gpus > 0 ? node / (int)req->node_gpus : 1;
	rc = topo_choose(topo, allowed, req->gpus, req->ngpus, req->want_cores, out->owner_cpus,
	                 sizeof(out->owner_cpus), out->rest_cpus, sizeof(out->rest_cpus), out->why,
	                 sizeof(out->why));
	if (rc == TOPO_CHOSEN && cap && topo_cores_in(topo, out->owner_cpus) > cap) {
		/* Again, within its share: cores / GPUs. */
		rc = topo_choose(topo, allowed, req->gpus, req->ngpus, (unsigned)cap,
		                 out->owner_cpus, sizeof(out->owner_cpus), out->rest_cpus,
		                 sizeof(out->rest_cpus), out->why, sizeof(out->why));
		len = strlen(out->why);
		snprintf(
		        out->why + len, sizeof(out->why) - len,
		        "; no CPU allocation of its own: at most %d of %d cores, its share of %u GPUs",
		        cap, node, req->node_gpus);
	}
	if (rc != TOPO_CHOSEN) {
		out->skipped = rc == TOPO_SKIPPED;
		return rc == TOPO_SKIPPED ? 0 : -1;
	}
	return 0;
}

int isolate_region_enter(struct krex_topo *topo, const struct isolate_sys *sys,
                         const struct isolate_region_req *req, isolate_rec_fn rec, void *ctx,
                         struct isolate_region_out *out)
{
	struct isolate_target *t = calloc(req->nothers + 1, sizeof(*t));
	char(*cg)[CG_LEN] = calloc(req->nothers + 1, CG_LEN);
	char owner_cg[CG_LEN] = "", why[512];
	struct isolate_plan plan;
	struct isolate_undo undo = {0};
	int rc = -1;

	memset(out, 0, sizeof(*out));
	if (!t || !cg)
		goto out;
	rc = isolate_region_choose(topo, req, out);
	if (rc < 0 || out->skipped)
		goto out;
	if (req->owner_cpuset && req->owner_cpuset[0])
		snprintf(owner_cg, sizeof(owner_cg), "%s", req->owner_cpuset);
	else if (isolate_pid_cgroup(sys, req->owner_pid, owner_cg, sizeof(owner_cg)) < 0)
		owner_cg[0] = '\0';
	memset(&plan, 0, sizeof(plan));
	plan.sys = sys;
	plan.nothers = (unsigned)region_targets(sys, req, owner_cg, t, cg);
	/* Narrowing a cgroup the owner shares would put the others on its cores
	 * (the kernel resets every task's mask to the cgroup's new set). */
	if (owner_cg[0] && !(req->owner_cpuset && req->owner_cpuset[0]) &&
	    !cgroup_only(owner_cg, req->owner_pid, 0))
		owner_cg[0] = '\0';
	plan.owner.cgroup = owner_cg[0] ? owner_cg : NULL;
	plan.owner.pid = req->owner_pid;
	plan.others = t;
	plan.owner_cpus = out->owner_cpus;
	plan.rest_cpus = out->rest_cpus;
	plan.node = req->node;
	plan.rec = rec;
	plan.rec_ctx = ctx;
	rc = isolate_apply(&plan, &undo, &out->moved, why, sizeof(why));
	if (why[0]) /* the choice, then what the moves ran into */
		snprintf(out->why + strlen(out->why), sizeof(out->why) - strlen(out->why), "; %s",
		         why);
	isolate_undo_free(&undo); /* the caller keeps the lines (rec) */
out:
	free(t);
	free(cg);
	return rc;
}
