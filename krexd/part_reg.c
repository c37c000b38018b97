/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * part_reg.c - what a REGISTER may ask for (part.c makes the participant):
 * its names, the pid it names, its GPUs under gpu_policy, its Slurm step
 * and job (doc/security.md "What krexd trusts").
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "conf.h"
#include "gpuslot.h"
#include "krexd.h"
#include "conn.h"
#include "ident.h"
#include "part.h"
#include "proc.h"
#include "text.h"
#include "log.h"
#include "timeutil.h"

int gpus_check(const struct proto_gpus *g, char *err, size_t len)
{
	char what[32];
	unsigned i;

	for (i = 0; i < g->n && i < KREX_MAX_GPUS; i++) {
		snprintf(what, sizeof(what), "GPU name %u", i);
		if (text_check(what, g->name[i], err, len) < 0)
			return -1;
	}
	return 0;
}

/* A REGISTER's label, CPU list and GPU names are one printable line of UTF-8
 * each (they end up in log lines and on root's terminal): 0, or -1 with the
 * reason in err. */
int part_names_check(const struct proto_register *reg, char *err, size_t len)
{
	if (text_check("the label", reg->label, err, len) < 0 ||
	    text_check("the CPU list", reg->cpus, err, len) < 0)
		return -1;
	return gpus_check(&reg->gpus, err, len);
}

/*
 * The pid a registration names, pinned: a pidfd of it, checked to be the
 * process the connection came from (pid 0 or its own pid: same start time
 * as at accept) or, for root naming another pid, alive when it was opened.
 * Returns the pidfd (-1 where the kernel has none), or -2 with why set.
 */
int part_pin(struct conn *c, pid_t pid, uid_t *uid, char *why, size_t len)
{
	uint64_t ticks, ticks2;
	int fd;

	if (pid <= 0 || kill(pid, 0) < 0) {
		snprintf(why, len, "no process %d", (int)pid);
		return -2;
	}
	if (pid == c->pid && !conn_peer_alive(c)) {
		if (c->ident == CONN_IDENT_OWNER)
			snprintf(
			        why, len,
			        "pid %d is not uid %u's to register: its /proc entry is root's (a root process, or a non-dumpable one: a setuid program, PR_SET_DUMPABLE 0)",
			        (int)pid, (unsigned)c->uid);
		else
			snprintf(
			        why, len,
			        "pid %d that connected has exited or was replaced (pid reuse); register from a process that holds its own connection",
			        (int)pid);
		return -2;
	}
	/* the process that connected: its own pidfd (SO_PEERPIDFD), not whatever has the pid */
	if (pid == c->pid && c->pidfd >= 0)
		fd = fcntl(c->pidfd, F_DUPFD_CLOEXEC, 0);
	else
		fd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (pid_start_ticks(pid, &ticks, uid) < 0 ||
	    (fd >= 0 && syscall(SYS_pidfd_send_signal, fd, 0, NULL, 0) < 0) ||
	    pid_start_ticks(pid, &ticks2, NULL) < 0 || ticks2 != ticks ||
	    (pid == c->pid && ticks != c->start_ticks)) {
		if (fd >= 0)
			close(fd);
		snprintf(why, len, "process %d exited or was replaced while registering", (int)pid);
		return -2;
	}
	return fd;
}

/*
 * max_gpus_per_uid: the names of g that krexd's table lacks (each once) go
 * into fresh[]; a user may hold at most max_gpus_per_uid names that it
 * brought in.  0, or -1 with why set.
 */
static int gpu_fresh(struct krexd *k, struct conn *c, const struct proto_gpus *g, int *fresh,
                     char *why, size_t len)
{
	unsigned i, j, mine = 0, n = 0;

	for (i = 0; i < g->n; i++) {
		fresh[i] = gpu_slot(k, g->name[i], 0) < 0;
		for (j = 0; fresh[i] && j < i; j++)
			if (!strcmp(g->name[j], g->name[i]))
				fresh[i] = 0;
		n += (unsigned)fresh[i];
	}
	if (!n || c->uid == 0)
		return 0;
	for (i = 0; i < k->ngpus; i++)
		if (k->gpu[i][0] && k->gpu_adder[i] == c->uid)
			mine++;
	if (mine + n <= k->cfg.max_gpus_per_uid)
		return 0;
	snprintf(
	        why, len,
	        "uid %u would bring %u new GPU names into krexd's table, with %u it brought already (max_gpus_per_uid %u)",
	        (unsigned)c->uid, n, mine, k->cfg.max_gpus_per_uid);
	return -1;
}

/* The GPUs of a registration, within what gpu_policy lets c's user name. */
int part_gpus(struct krexd *k, struct conn *c, const struct proto_register *reg, uint64_t *mask,
              int *code, char *why, size_t len)
{
	/* a user may add names to the table only where the policy leaves it open */
	int add = c->uid == 0 || k->cfg.gpu_policy == GPU_POLICY_OPEN ||
	          (k->cfg.gpu_policy == GPU_POLICY_CONFIGURED && !k->nconf_gpus);
	char bad[KREX_MAX_GPU_NAME + 1];
	int fresh[KREX_MAX_GPUS];
	unsigned i;

	*code = KREX_EPERM;
	for (i = 0; i < reg->gpus.n; i++)
		if (gpu_slot(k, reg->gpus.name[i], 0) < 0 && !add) {
			snprintf(why, len, "GPU %s is not one of this node's (gpu_policy %s)",
			         reg->gpus.name[i], config_gpu_policy_name(k->cfg.gpu_policy));
			*code = KREX_ENOGPU;
			return -1;
		}
	if (gpu_fresh(k, c, &reg->gpus, fresh, why, len) < 0) {
		*code = KREX_ELIMIT;
		return -1;
	}
	if (gpu_mask(k, &reg->gpus, 1, mask) < 0) {
		snprintf(why, len, "GPU table full (%d GPUs)", KREX_MAX_GPUS);
		*code = KREX_ELIMIT;
		gpu_prune(k);
		return -1;
	}
	for (i = 0; i < reg->gpus.n; i++)
		if (fresh[i])
			k->gpu_adder[gpu_slot(k, reg->gpus.name[i], 0)] = c->uid;
	/* No GPUs named: every GPU krexd knows (the user's step's under gpu_policy step);
	 * on a node whose table is empty (no gpus= key, nobody registered one yet) a
	 * single GPU named "0". */
	if (!reg->gpus.n) {
		if (!k->ngpus && gpu_slot(k, "0", 1) < 0) {
			snprintf(why, len, "GPU table full");
			*code = KREX_ELIMIT;
			return -1;
		}
		*mask = k->ngpus >= 64 ? ~0ULL : (1ULL << k->ngpus) - 1;
		if (c->uid != 0 && k->cfg.gpu_policy == GPU_POLICY_STEP)
			*mask = gpu_step_mask(k, c->uid);
		if (c->uid != 0 && k->cfg.gpu_policy == GPU_POLICY_CONFIGURED && k->nconf_gpus)
			*mask &= k->nconf_gpus >= 64 ? ~0ULL : (1ULL << k->nconf_gpus) - 1;
	}
	if (gpu_allowed(k, c->uid, *mask, bad, sizeof(bad)) < 0) {
		snprintf(why, len, "uid %u may not name GPU %s (gpu_policy %s)", (unsigned)c->uid,
		         bad, config_gpu_policy_name(k->cfg.gpu_policy));
		gpu_prune(k);
		return -1;
	}
	if (!*mask) {
		snprintf(
		        why, len,
		        "uid %u has no GPU it may name (gpu_policy %s: no Slurm step of it is registered)",
		        (unsigned)c->uid, config_gpu_policy_name(k->cfg.gpu_policy));
		return -1;
	}
	return 0;
}

/*
 * 1, with its cgroup in cg, when pid is in a Slurm step's cgroup (a path
 * component job_J followed by step_S: cgroup v1 slurm[_NODE]/uid_U/job_J/
 * step_S, v2 .../job_J/step_S/user/task_T) of the hierarchy krexd freezes
 * with.  Such a task is the SPANK plugin's to register, naming the step's
 * cgroup; registered on its own (a krexd restarted under a running job: a
 * slurmd restart) krexd would move it into a cgroup of its own, out of
 * Slurm's reach: scancel could no longer kill it ("Kill task failed").
 */
int part_in_slurm_step(const struct krexd *k, pid_t pid, char *cg, size_t len)
{
	const char *j;

	if (k->fz.kind == FREEZER_SIGNAL)
		return 0;
	if (proc_cgroup(pid, k->fz.kind == FREEZER_CGROUP1 ? "freezer" : NULL, cg, len) < 0)
		return 0;
	for (j = strstr(cg, "/job_"); j; j = strstr(j, "/job_")) {
		j += 5;
		if (*j < '0' || *j > '9')
			continue;
		while (*j >= '0' && *j <= '9')
			j++;
		if (!strncmp(j, "/step_", 6))
			return 1;
	}
	return 0;
}

/*
 * The job and step of pid, registered by c: never a user's word (doc/security.md
 * "What krexd trusts").  Root's registration (the SPANK plugin, in slurmstepd)
 * says them.  A user's process carries the job and step of a participant root
 * registered for that same uid (a Slurm step's task) that holds it: its cgroup,
 * or, under the signal freezer, one of its ancestors is that task.  Otherwise
 * it has none (0.0).  A claim that differs from that is logged (once a second).
 */
void part_job(struct krexd *k, struct conn *c, pid_t pid, const struct proto_register *reg,
              const struct part *joined, uint32_t jobstep[2])
{
	static uint64_t last;
	const struct part *p = joined;

	if (!p && c->uid == 0) {
		jobstep[0] = reg->job;
		jobstep[1] = reg->step;
		return;
	}
	if (!p)
		for (p = k->parts; p; p = p->next)
			if (p->by_root && p->uid == c->uid && p->job &&
			    (p->pid == pid || freezer_contains(&k->fz, &p->ft, pid)))
				break;
	jobstep[0] = p ? p->job : 0;
	jobstep[1] = p ? p->step : 0;
	if (c->uid != 0 && (reg->job || reg->step) &&
	    (reg->job != jobstep[0] || reg->step != jobstep[1]) && log_ratelimit(&last, NS_PER_S))
		log_info(
		        "uid %u claimed job %u.%u for pid %d; root registered no such step of that uid holding it on this node: it is job %u.%u (0.0: none) (logged once per s)",
		        (unsigned)c->uid, reg->job, reg->step, (int)pid, jobstep[0], jobstep[1]);
}
