/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * stepd.c - the remote context: slurmstepd and the tasks it starts, for
 * --krex-shared steps only (a step without the option is never touched).
 *
 *	init_post_opt		slurmstepd	read the option (or KREX_SHARED)
 *	task_post_fork		slurmstepd	remember the task pid
 *	task_init_privileged	task, root	register the task with krexd
 *	task_init		task, user	fail with a message, or set the env
 *	task_exit, exit		slurmstepd	unregister
 *
 * Why register in task_init_privileged: it is the last point where the task
 * runs as root (the registration names the step's cgroup, which only root
 * may) and it runs in the task itself, so task_init, in the same process,
 * sees the outcome.  Errors are reported from task_init: the task exits with
 * the message and the job fails; an error from init or from slurmstepd could
 * drain the node instead.
 */
#include "config.h"

#include <errno.h>
#include <sched.h>
#include <sys/prctl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <hwloc.h>
#include <hwloc/glibc-sched.h>

#include "conf.h"
#include "krex_spank.h"
#include "timeutil.h"

#define MAX_TASKS 256
#define STEP_CGROUP_WAIT_MS 5000

static struct shared_opts opts;
static char opt_err[256]; /* a bad option, reported in task_init */
static char reg_err[640]; /* a failed registration, reported in task_init */
static char sock[SPANK_PATH_LEN];
static char gpu_list[512];
static pid_t task_pids[MAX_TASKS];
static int summary_done; /* the step's line was printed */

int stepd_init_post_opt(spank_t sp, const struct spank_args *a)
{
	char env[256], err[160];
	const char *val = option_value();

	if (!val && spank_getenv(sp, KREX_ENV_SHARED, env, sizeof(env)) == ESPANK_SUCCESS)
		val = option_env_value(env);
	if (!val)
		return 0;
	if (option_parse(val, &opts, err, sizeof(err)) < 0) {
		opts.on = 1; /* so that task_init reports it */
		xsnprintf(opt_err, sizeof(opt_err), "--krex-shared: %s", err);
	} else if (opts.on && !a) {
		xsnprintf(opt_err, sizeof(opt_err),
		          "bad arguments in plugstack.conf (slurmd's log names them)");
	}
	return 0;
}

/* The freezer cgroup of pid (else its v2 cgroup) into out; "" if unknown. */
static void pid_cgroup(pid_t pid, char *out, size_t len)
{
	char line[1024], path[64], v2[1024] = "", *cg;
	FILE *f;

	out[0] = '\0';
	snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		cg = strchr(line, ':');
		cg = cg ? strchr(cg + 1, ':') : NULL;
		if (!cg)
			continue;
		if (strstr(line, ":freezer:")) {
			xstrcpy(out, len, cg + 1);
			break;
		}
		if (!strncmp(line, "0::", 3))
			xstrcpy(v2, sizeof(v2), cg + 1);
	}
	fclose(f);
	if (!out[0])
		xstrcpy(out, len, v2);
}

/*
 * The step's own cgroup, cut after its step_* component, or "" when it has
 * none (proctrack/linuxproc: krexd then makes one).
 *
 * Why wait: under proctrack/cgroup slurmstepd (which sits at the job level,
 * .../job_N) puts each task into .../job_N/step_M after forking it, and the
 * task may reach task_init_privileged first (seen on 22.05).  When the
 * parent is in a job_ cgroup we poll, bounded, until we are in the step's.
 */
/* 1 if path is a cgroup v2 step's slurm/ (slurmstepd's own, .../step_M/slurm). */
static int in_stepd_own(const char *path)
{
	const char *step = strstr(path, "/step_"), *next = step ? strchr(step + 1, '/') : NULL;

	return next && !strncmp(next, "/slurm", 6) && (next[6] == '\0' || next[6] == '/');
}

static void stepd_cgroup(char *out, size_t len)
{
	uint64_t deadline = time_deadline_ms(STEP_CGROUP_WAIT_MS);
	char parent[1024], *step, *end;

	pid_cgroup(getpid(), out, len);
	/* cgroup v2: a task still in slurmstepd's step_M/slurm moves to
	 * step_M/user/task_N; krexd refuses a step with slurmstepd below the
	 * task (it would freeze it), so wait for the move, bounded. */
	while (in_stepd_own(out) && time_left_ms(deadline) > 0) {
		usleep(2000);
		pid_cgroup(getpid(), out, len);
	}
	if (!strstr(out, "/step_")) {
		pid_cgroup(getppid(), parent, sizeof(parent));
		while (strstr(parent, "/job_") && !strstr(out, "/step_") &&
		       time_left_ms(deadline) > 0) {
			usleep(2000);
			pid_cgroup(getpid(), out, len);
		}
	}
	step = strstr(out, "/step_");
	if (!step) {
		out[0] = '\0';
		return;
	}
	end = strchr(step + 1, '/');
	if (end)
		*end = '\0';
}

/* This task's CPUs as a list ("0-3,8"), which task/affinity has set; ""
 * when unknown.  hwloc writes the list, as it does for krexd (topology/cpulist.c). */
static void stepd_cpus(char *out, size_t len)
{
	hwloc_bitmap_t set = hwloc_bitmap_alloc();
	cpu_set_t mask;
	int n = -1;

	if (set && sched_getaffinity(0, sizeof(mask), &mask) == 0 &&
	    hwloc_cpuset_from_glibc_sched_affinity(NULL, set, &mask, sizeof(mask)) == 0)
		n = hwloc_bitmap_list_snprintf(out, len, set);
	if (n < 0 || (size_t)n >= len)
		out[0] = '\0';
	hwloc_bitmap_free(set);
}

/* Socket path of this node's krexd; 0 or -1 with reg_err set. */
static int stepd_socket(spank_t sp, const struct spank_args *a)
{
	char node[64], run_dir[SPANK_PATH_LEN];
	const char *env = getenv(SPANK_ENV_NODE);

	if (env && *env)
		xstrcpy(node, sizeof(node), env);
	else if (spank_getenv(sp, "SLURMD_NODENAME", node, sizeof(node)) != ESPANK_SUCCESS) {
		if (gethostname(node, sizeof(node)) < 0)
			xstrcpy(node, sizeof(node), "localhost");
		node[sizeof(node) - 1] = '\0';
		node[strcspn(node, ".")] = '\0';
	}
	if (args_paths(a, node, run_dir, sock, sizeof(sock)) < 0) {
		xsnprintf(reg_err, sizeof(reg_err), "krex: run_dir or socket too long for node %s",
		          node);
		return -1;
	}
	return 0;
}

/* Fill the REGISTER request for this task; -1 with reg_err set. */
static int stepd_request(spank_t sp, struct proto_register *r)
{
	uint32_t job = 0, step = 0;

	memset(r, 0, sizeof(*r));
	spank_get_item(sp, S_JOB_ID, &job);
	spank_get_item(sp, S_JOB_STEPID, &step);
	r->pid = (uint32_t)getpid();
	r->job = job;
	r->step = step;
	r->flags = 0;
	stepd_cgroup(r->cgroup, sizeof(r->cgroup));
	stepd_cpus(r->cpus, sizeof(r->cpus));
	if (opts.label[0])
		xstrcpy(r->label, sizeof(r->label), opts.label);
	else if (step == 0xfffffffbu) /* SLURM_BATCH_SCRIPT */
		xsnprintf(r->label, sizeof(r->label), "job %u.batch", job);
	else
		xsnprintf(r->label, sizeof(r->label), "job %u.%u", job, step);
	if (gpus_from_step(sp, &r->gpus) < 0) {
		xsnprintf(reg_err, sizeof(reg_err), "krex: cannot read the step's GPU list");
		return -1;
	}
	gpus_join(&r->gpus, gpu_list, sizeof(gpu_list));
	return 0;
}

int stepd_task_init_privileged(spank_t sp, const struct spank_args *a)
{
	union proto_body req, rep;
	uid_t uid = 0;
	uint16_t rtype;
	char err[256];

	if (!opts.on || opt_err[0])
		return 0;
	if (stepd_socket(sp, a) < 0 || stepd_request(sp, &req.reg) < 0)
		return 0;
	spank_get_item(sp, S_JOB_UID, &uid);
	/*
	 * Why rename: until it execs, the task is a fork of slurmstepd and its
	 * comm says "slurmstepd"; krexd never adopts a slurmstepd (nor a cgroup
	 * holding one), so it would refuse the task.  exec sets the real name.
	 */
	prctl(PR_SET_NAME, "krex-task", 0, 0, 0);
	if (client_request_as(sock, uid, PROTO_REGISTER, &req, &rtype, &rep, err, sizeof(err)) <
	    0) {
		xsnprintf(reg_err, sizeof(reg_err), "krex: cannot reach krexd at %s: %s", sock,
		          err);
		return 0;
	}
	if (rtype == PROTO_ERROR) {
		xsnprintf(reg_err, sizeof(reg_err),
		          "krex: krexd at %s refused task %u: %s (error %u)", sock, req.reg.pid,
		          rep.error.message, rep.error.code);
		return 0;
	}
	if (rtype != PROTO_REGISTERED)
		xsnprintf(reg_err, sizeof(reg_err), "krex: krexd at %s answered %s to REGISTER",
		          sock, proto_type_name(rtype));
	return 0;
}

/* Put the gate first in LD_PRELOAD; a missing gate is reported, not fatal. */
static int stepd_preload(spank_t sp, const struct spank_args *a)
{
	char cur[2048], val[2048 + SPANK_PATH_LEN + 2];

	if (!opts.gate)
		return 0;
	if (access(a->gate, R_OK) < 0) {
		slurm_info("krex: gate %s: %s; GPU work of this step is frozen but not drained",
		           a->gate, strerror(errno));
		return 0;
	}
	/* The gate's host path, for container hooks (contrib/enroot, contrib/oci):
	 * in an image the host path is not there, they mount it and preload it. */
	if (spank_setenv(sp, KREX_ENV_GATE_PATH, a->gate, 1) != ESPANK_SUCCESS) {
		slurm_error("krex: cannot set %s for the gate %s", KREX_ENV_GATE_PATH, a->gate);
		return -1;
	}
	if (spank_getenv(sp, "LD_PRELOAD", cur, sizeof(cur)) != ESPANK_SUCCESS)
		cur[0] = '\0';
	if (strstr(cur, a->gate))
		return 0;
	if (xsnprintf(val, sizeof(val), "%s%s%s", a->gate, cur[0] ? ":" : "", cur) < 0 ||
	    spank_setenv(sp, "LD_PRELOAD", val, 1) != ESPANK_SUCCESS) {
		slurm_error("krex: cannot set LD_PRELOAD for the gate %s", a->gate);
		return -1;
	}
	return 0;
}

int stepd_task_init(spank_t sp, const struct spank_args *a)
{
	if (!opts.on)
		return 0;
	if (opt_err[0]) {
		slurm_error("krex: %s", opt_err);
		return -1;
	}
	if (reg_err[0]) {
		slurm_error("%s", reg_err);
		return -1;
	}
	if (spank_setenv(sp, KREX_ENV_SOCKET, sock, 1) != ESPANK_SUCCESS ||
	    spank_setenv(sp, KREX_ENV_GPUS, gpu_list, 1) != ESPANK_SUCCESS) {
		slurm_error("krex: cannot set %s in the task's environment", KREX_ENV_SOCKET);
		return -1;
	}
	return stepd_preload(sp, a);
}

int stepd_task_post_fork(spank_t sp, const struct spank_args *a)
{
	pid_t pid = 0;
	int i;

	(void)a;
	if (!opts.on || spank_get_item(sp, S_TASK_PID, &pid) != ESPANK_SUCCESS)
		return 0;
	for (i = 0; i < MAX_TASKS; i++)
		if (!task_pids[i]) {
			task_pids[i] = pid;
			break;
		}
	return 0;
}

/* Tell krexd that pid left (it also notices by itself); errors are debug. */
static void stepd_unregister(const struct spank_args *a, spank_t sp, pid_t pid)
{
	union proto_body req, rep;
	uint16_t rtype;
	char err[256];

	if (!sock[0] && stepd_socket(sp, a) < 0)
		return;
	memset(&req, 0, sizeof(req));
	req.unreg.pid = (uint32_t)pid;
	if (client_request_as(sock, 0, PROTO_UNREGISTER, &req, &rtype, &rep, err, sizeof(err)) < 0)
		slurm_debug("krex: unregister %d at %s: %s", (int)pid, sock, err);
}

/* A duration for people: "830 us", "12.4 ms", "1.25 s". */
static void human_us(char *out, size_t len, uint64_t us)
{
	if (us < 1000)
		snprintf(out, len, "%llu us", (unsigned long long)us);
	else if (us < 1000000)
		snprintf(out, len, "%.1f ms", (double)us / 1e3);
	else
		snprintf(out, len, "%.2f s", (double)us / 1e6);
}

/*
 * The step's line (summary=yes): its regions on this node, in figures, from
 * krexd (PROTO_SUMMARY).  slurm_spank_log writes at error() level without the
 * "error: " prefix: slurmstepd sends it to the step's stderr (srun's, or the
 * batch script's output file), where info() would reach slurmd's log only.
 */
static void stepd_summary(spank_t sp, const struct spank_args *a)
{
	union proto_body req, rep;
	uint32_t job = 0, step = 0;
	uint16_t rtype = 0;
	char err[256] = "", node[64], p50[32], p95[32], st[16];
	const char *env = getenv(SPANK_ENV_NODE);
	const struct proto_summary_reply *r = &rep.summary_reply;

	if (!a->summary || summary_done || (!sock[0] && stepd_socket(sp, a) < 0))
		return;
	summary_done = 1;
	spank_get_item(sp, S_JOB_ID, &job);
	spank_get_item(sp, S_JOB_STEPID, &step);
	memset(&req, 0, sizeof(req));
	req.summary.job = job;
	req.summary.step = step;
	if (client_request_as(sock, 0, PROTO_SUMMARY, &req, &rtype, &rep, err, sizeof(err)) < 0 ||
	    rtype != PROTO_SUMMARY_REPLY) {
		slurm_debug("krex: step summary from %s: %s", sock,
		            rtype == PROTO_ERROR ? rep.error.message : err);
		return;
	}
	if (env && *env)
		xstrcpy(node, sizeof(node), env);
	else if (gethostname(node, sizeof(node)) < 0)
		xstrcpy(node, sizeof(node), "?");
	node[sizeof(node) - 1] = '\0';
	if (step == 0xfffffffbu) /* SLURM_BATCH_SCRIPT */
		xstrcpy(st, sizeof(st), "batch");
	else
		xsnprintf(st, sizeof(st), "%u", step);
	human_us(p50, sizeof(p50), r->entry_p50_us);
	human_us(p95, sizeof(p95), r->entry_p95_us);
	if (r->regions)
		slurm_spank_log(
		        "krex: step %u.%s on %s: %u region%s, %u clean, %u degraded, %u expired; entry p50 %s, p95 %s",
		        job, st, node, r->regions, r->regions == 1 ? "" : "s", r->clean,
		        r->degraded, r->expired, p50, p95);
	else
		slurm_spank_log("krex: step %u.%s on %s: 0 regions", job, st, node);
}

int stepd_task_exit(spank_t sp, const struct spank_args *a)
{
	pid_t pid = 0;
	int i, left = 0;

	if (!opts.on || opt_err[0] || spank_get_item(sp, S_TASK_PID, &pid) != ESPANK_SUCCESS)
		return 0;
	for (i = 0; i < MAX_TASKS; i++) {
		if (task_pids[i] == pid)
			task_pids[i] = 0;
		left += task_pids[i] != 0;
	}
	stepd_unregister(a, sp, pid);
	if (!left) /* the step's last task on this node: its output still reaches srun */
		stepd_summary(sp, a); /* once: done already when the last task's exit was seen */
	return 0;
}

int stepd_exit(spank_t sp, const struct spank_args *a)
{
	int i;

	if (!opts.on || opt_err[0])
		return 0;
	for (i = 0; i < MAX_TASKS; i++)
		if (task_pids[i]) {
			stepd_unregister(a, sp, task_pids[i]);
			task_pids[i] = 0;
		}
	stepd_summary(sp, a); /* once: done already when the last task's exit was seen */
	return 0;
}
