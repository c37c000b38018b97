/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * part.c - participants (doc/architecture.md "Participants, members and
 * connections").  Someone else's suspend is part_ext.c's, the GPU table
 * gpuslot.c's.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "conf.h"
#include "fdio.h"
#include "gpuslot.h"
#include "krexd.h"
#include "conn.h"
#include "ident.h"
#include "outbox.h"
#include "quota.h"
#include "part.h"
#include "proc.h"
#include "text.h"
#include "log.h"
#include "timeutil.h"

/* ---- state file callbacks (ctx is struct krexd) ---- */

int state_rec(void *ctx, const char *line)
{
	struct krexd *k = ctx;

	if (state_add(&k->st, "%s", line) < 0 || state_sync(&k->st) < 0) {
		log_error("state file %s: %s", k->st.path, strerror(errno));
		state_drop(&k->st, line);
		return -1;
	}
	return 0;
}

void state_unrec(void *ctx, const char *line)
{
	struct krexd *k = ctx;

	state_drop(&k->st, line);
}

/* ---- lookup ---- */

struct part *part_find_id(struct krexd *k, uint32_t id)
{
	struct part *p;

	for (p = k->parts; p; p = p->next)
		if (p->id == id)
			return p;
	return NULL;
}

struct part *part_find_pid_key(struct krexd *k, pid_t pid, const struct freezer_key *key)
{
	struct part *p;

	for (p = k->parts; p; p = p->next)
		if (p->pid == pid)
			return p;
	if (!key)
		return NULL;
	for (p = k->parts; p; p = p->next)
		if (freezer_contains_key(&k->fz, &p->ft, pid, key))
			return p;
	return NULL;
}

int part_pid_holds_ctx(const struct krexd *k, const struct part *p, pid_t pid, uint64_t start)
{
	const struct conn *c;

	for (c = k->conns; c; c = c->next)
		if (c->part == p && !c->dead && c->holdctx && c->member_pid == pid &&
		    c->pid == pid && c->start_ticks && c->start_ticks == start)
			return 1;
	return 0;
}

struct part *part_find_pid(struct krexd *k, pid_t pid)
{
	struct freezer_key key;

	return part_find_pid_key(k, pid, freezer_key(&k->fz, pid, &key) < 0 ? NULL : &key);
}

/* krexd lets go of p: leave it frozen when another suspended it in the same file.  1 if so. */
static int ext_handover(struct krexd *k, struct part *p)
{
	if (p->ext_confirm_ns)
		ext_confirm(k, p, time_now_ns());
	if (p->ext != FREEZER_EXT_FROZEN || !freezer_ext_shared(&k->fz, &p->ft))
		return 0;
	log_info(
	        "participant %u stays frozen: suspended by another too (Slurm's suspend?), who resumes it",
	        p->id);
	freezer_ext_handover(&k->fz, &p->ft, state_unrec, k);
	return 1;
}

/* ---- freeze references: a participant may be a sibling of two regions ---- */

/* State line added without a write: the caller writes once for a batch. */
static int state_rec_batch(void *ctx, const char *line)
{
	struct krexd *k = ctx;

	return state_add(&k->st, "%s", line);
}

int part_freeze_prepare(struct krexd *k, struct part *p)
{
	char line[600];

	if (p->freeze_refs++ > 0)
		return 0;
	/* Its last thaw still retried: this freeze's thaw takes over. */
	freezer_line(&k->fz, &p->ft, line, sizeof(line));
	if (line[0])
		state_retry_cancel(&k->st, line);
	if (freezer_prepare(&k->fz, &p->ft, state_rec_batch, k) < 0) {
		int err = errno;
		freezer_thaw(&k->fz, &p->ft, state_unrec, k);
		p->freeze_refs--;
		errno = err;
		return -1;
	}
	/* Signals: a process a poll finds forked after the batch's snapshot is
	 * stopped right after its line is recorded: that line is written first. */
	p->ft.rec = state_rec;
	return 1;
}

int part_freeze_start(struct krexd *k, struct part *p)
{
	int rc;

	ext_own_write_begin(k);
	rc = freezer_start(&k->fz, &p->ft);
	ext_own_write_end(k, p);
	if (!k->ext_kill_check_ns)
		k->ext_kill_check_ns = time_now_ns() + 100 * NS_PER_MS;
	return rc;
}

int part_freeze_poll(struct krexd *k, struct part *p)
{
	int rc;

	ext_own_write_begin(k);
	rc = freezer_poll(&k->fz, &p->ft);
	ext_own_write_end(k, p);
	return rc;
}

/*
 * Thaw p now.  A thaw that fails (or reads back frozen) keeps its state
 * line and is retried from the event loop (state_retry_add).  0 or -1.
 */
static int part_thaw_now(struct krexd *k, struct part *p)
{
	char line[600], who[64];
	int err;

	if (freezer_thaw(&k->fz, &p->ft, state_unrec, k) == 0)
		return 0;
	err = errno;
	freezer_line(&k->fz, &p->ft, line, sizeof(line));
	snprintf(who, sizeof(who), "participant %u, pid %d", p->id, (int)p->pid);
	log_error("participant %u (pid %d): thaw failed: %s; kept in the state file, retrying",
	          p->id, (int)p->pid, strerror(err));
	if (line[0])
		state_retry_add(&k->st, line, 0, who, time_now_ns());
	errno = err;
	return -1;
}

int part_thaw(struct krexd *k, struct part *p)
{
	int rc = part_thaw_nosync(k, p);

	if (state_sync(&k->st) < 0)
		log_error("state file %s: %s", k->st.path, strerror(errno));
	return rc;
}

int part_thaw_nosync(struct krexd *k, struct part *p)
{
	int rc;

	if (p->freeze_refs <= 0 || --p->freeze_refs > 0)
		return 0;
	rc = 0;
	ext_own_write_begin(k);
	if (!ext_handover(k, p)) {
		rc = part_thaw_now(k, p);
		if (!p->ext)
			p->quiet_mask = 0; /* it runs again */
	}
	p->ext_dying = 0;
	p->ext_kill_until = 0;
	ext_own_write_end(k, p);
	return rc;
}

/* ---- registration ---- */

/* Watch p's root pid: a pidfd in the loop (pidfd: one taken already, or -1), else a periodic /proc check. */
static void part_watch(struct krexd *k, struct part *p, int pidfd)
{
	struct epoll_event ev = {.events = EPOLLIN};

	p->pidfd = pidfd >= 0 ? pidfd : (int)syscall(SYS_pidfd_open, p->pid, 0);
	if (p->pidfd < 0) {
		/* ENOSYS before Linux 5.3: fall back to checking /proc. */
		log_debug("pidfd_open(%d): %s; watching /proc instead", (int)p->pid,
		          strerror(errno));
		if (!k->proc_check_ns)
			k->proc_check_ns = time_now_ns() + NS_PER_S;
		return;
	}
	p->ep.kind = EP_PIDFD;
	p->ep.ptr = p;
	ev.data.ptr = &p->ep;
	if (epoll_ctl(k->epfd, EPOLL_CTL_ADD, p->pidfd, &ev) < 0) {
		close(p->pidfd);
		p->pidfd = -1;
		k->proc_check_ns = time_now_ns() + NS_PER_S;
	}
}

static struct part *part_create(struct krexd *k, const struct proto_register *reg, pid_t pid,
                                uid_t uid, const uint32_t jobstep[2], uint64_t mask, int pidfd)
{
	struct uacct *ua = uacct_get(k, uid);
	uint64_t t0 = time_now_ns();
	struct part *p;

	if (k->nparts >= KREX_MAX_PARTICIPANTS || !ua) {
		errno = EMFILE;
		return NULL;
	}
	if (uid != 0 && ua->parts >= k->cfg.max_parts_per_uid) {
		errno = EDQUOT;
		return NULL;
	}
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	do
		p->id = ++k->next_part_id;
	while (p->id == 0 || part_find_id(k, p->id));
	p->uid = uid;
	p->pid = pid;
	p->job = jobstep[0];
	p->step = jobstep[1];
	p->mask = mask;
	snprintf(p->label, sizeof(p->label), "%s", reg->label);
	snprintf(p->cpus, sizeof(p->cpus), "%s", reg->cpus);
	if (freezer_adopt(&k->fz, &p->ft, p->id, pid, reg->cgroup) < 0) {
		free(p);
		return NULL;
	}
	ua->parts++;
	part_watch(k, p, pidfd);
	ext_watch(k, p);
	p->next = k->parts;
	k->parts = p;
	k->nparts++;
	/* the time includes moving pid into its cgroup: the kernel's cgroup
	 * migration, which can wait for an RCU grace period (doc/performance.md) */
	t0 = time_now_ns() - t0;
	k->parts_made++;
	k->parts_made_ns += t0;
	log_info("participant %u: pid %d uid %u job %u.%u '%s' cgroup %s (made in %llu us)", p->id,
	         (int)pid, (unsigned)uid, p->job, p->step, p->label,
	         p->ft.cg[0] ? p->ft.cg : "(signals)", (unsigned long long)(t0 / 1000));
	return p;
}

static int reply_registered(struct krexd *k, struct conn *c, uint32_t seq,
                            const struct proto_register *reg)
{
	union proto_body m;
	struct proto_registered *r = &m.registered;
	unsigned i;

	memset(&m, 0, sizeof(m));
	r->participant = c->part->id;
	r->queue_cap = k->cfg.queue_cap;
	r->queue_us = (uint32_t)(k->cfg.queue_time_ns / 1000);
	r->gate_timeout_ms = (uint32_t)(k->cfg.gate_timeout_ns / NS_PER_MS);
	snprintf(r->gate_path, sizeof(r->gate_path), "%s", k->gate.path);
	if (reg->gpus.n) {
		for (i = 0; i < reg->gpus.n; i++)
			r->slot[r->nslots++] = (uint16_t)gpu_slot(k, reg->gpus.name[i], 0);
	} else {
		for (i = 0; i < k->ngpus; i++)
			if (c->part->mask >> i & 1)
				r->slot[r->nslots++] = (uint16_t)i;
	}
	return conn_send(k, c, PROTO_REGISTERED, seq, &m);
}

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
static int register_names_check(const struct proto_register *reg, char *err, size_t len)
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
static int part_pin(struct conn *c, pid_t pid, uid_t *uid, char *why, size_t len)
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
static int part_gpus(struct krexd *k, struct conn *c, const struct proto_register *reg,
                     uint64_t *mask, int *code, char *why, size_t len)
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
static int part_in_slurm_step(const struct krexd *k, pid_t pid, char *cg, size_t len)
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
static void part_job(struct krexd *k, struct conn *c, pid_t pid, const struct proto_register *reg,
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

int part_register(struct krexd *k, struct conn *c, uint32_t seq, const struct proto_register *reg)
{
	uint32_t jobstep[2];
	pid_t pid = reg->pid ? (pid_t)reg->pid : c->pid;
	struct part *p = NULL;
	uint64_t mask;
	uid_t uid = c->uid;
	char why[400], cg[512];
	int pidfd, code;

	if (c->part)
		return conn_error(k, c, seq, KREX_EBUSY, "this connection is already registered");
	if (register_names_check(reg, why, sizeof(why)) < 0)
		return conn_error(k, c, seq, KREX_EINVAL, "%s", why);
	if (pid != c->pid && c->uid != 0)
		return conn_error(k, c, seq, KREX_EPERM, "pid %d may only register itself, not %d",
		                  (int)c->pid, (int)pid);
	if (reg->cgroup[0] && c->uid != 0)
		return conn_error(k, c, seq, KREX_EPERM, "only root may name a cgroup");
	pidfd = part_pin(c, pid, &uid, why, sizeof(why));
	if (pidfd == -2)
		return conn_error(k, c, seq, pid == c->pid ? KREX_EPERM : KREX_EINVAL, "%s", why);
	if (c->uid != 0)
		uid = c->uid;
	if (part_gpus(k, c, reg, &mask, &code, why, sizeof(why)) < 0) {
		if (pidfd >= 0)
			close(pidfd);
		return conn_error(k, c, seq, code, "%s", why);
	}
	if (!(reg->flags & PROTO_REG_NEWCG))
		p = part_find_pid(k, pid);
	if (p) {
		if (p->uid != c->uid && c->uid != 0)
			return conn_error(k, c, seq, KREX_EPERM, "participant %u belongs to uid %u",
			                  p->id, (unsigned)p->uid);
		if (pid != p->pid && k->fz.kind == FREEZER_SIGNAL &&
		    !freezer_contains(&k->fz, &p->ft, pid))
			freezer_add_pid(&p->ft, pid);
		p->mask |= mask;
		if (pidfd >= 0)
			close(pidfd);
		part_job(k, c, pid, reg, p, jobstep); /* its job is the participant's */
		log_debug("pid %d joins participant %u", (int)pid, p->id);
	} else if (!reg->cgroup[0] && part_in_slurm_step(k, pid, cg, sizeof(cg))) {
		if (pidfd >= 0)
			close(pidfd);
		gpu_prune(k);
		return conn_error(
		        k, c, seq, KREX_EPERM,
		        "pid %d is in the cgroup of a Slurm step (%s) that is not registered: the SPANK plugin registers a step's tasks (krexd restarted under the job?), and krexd does not move a task out of its step",
		        (int)pid, cg);
	} else {
		part_job(k, c, pid, reg, NULL, jobstep);
		p = part_create(k, reg, pid, uid, jobstep, mask, pidfd);
		if (!p) {
			int err = errno;
			if (pidfd >= 0)
				close(pidfd);
			gpu_prune(k);
			if (err == EDQUOT)
				return conn_error(k, c, seq, KREX_ELIMIT,
				                  "uid %u has %u participants (max_parts_per_uid)",
				                  (unsigned)uid, k->cfg.max_parts_per_uid);
			return conn_error(k, c, seq, err == EPERM ? KREX_EPERM : KREX_ESYS,
			                  "cannot make pid %d a participant: %s", (int)pid,
			                  strerror(err));
		}
		p->by_root = c->uid == 0 && p->uid != 0;
		k->ev.part_new(k, p); /* from a cpuset a held region narrowed */
	}
	c->part = p;
	c->member_pid = pid;
	c->gate = !!(reg->flags & PROTO_REG_GATE);
	c->holdctx = c->gate && (reg->flags & PROTO_REG_HOLDCTX);
	p->conns++;
	if (c->gate) {
		p->members++;
		p->gate_seen = 1;
	}
	return reply_registered(k, c, seq, reg);
}

/* Detach c from its participant (it stays registered). */
static void part_detach(struct krexd *k, struct conn *c)
{
	struct part *p = c->part;

	if (!p)
		return;
	k->ev.conn_gone(k, c);
	p->conns--;
	if (c->gate)
		p->members--;
	c->part = NULL;
	c->gate = 0;
}

int part_unregister(struct krexd *k, struct conn *c, uint32_t seq, const struct proto_unregister *u)
{
	pid_t pid = u->pid ? (pid_t)u->pid : c->pid;
	union proto_body m = {.ok = {0}};
	struct part *p;

	if (pid != c->pid && c->uid != 0)
		return conn_error(k, c, seq, KREX_EPERM, "pid %d may only unregister itself",
		                  (int)c->pid);
	for (p = k->parts; p; p = p->next)
		if (p->pid == pid)
			break;
	if (p && (p->uid == c->uid || c->uid == 0)) {
		part_end(k, p, "unregistered");
	} else if (c->part && c->member_pid == pid) {
		part_detach(k, c);
	} else {
		return conn_error(k, c, seq, KREX_ENOTREG, "pid %d is not registered", (int)pid);
	}
	return conn_send(k, c, PROTO_OK, seq, &m);
}

void part_end(struct krexd *k, struct part *p, const char *why)
{
	struct part **pp;
	struct conn *c;

	log_info("participant %u (pid %d) ends: %s", p->id, (int)p->pid, why);
	k->ev.part_gone(k, p);
	for (c = k->conns; c; c = c->next)
		if (c->part == p)
			part_detach(k, c);
	p->freeze_refs = 0;
	ext_own_write_begin(k);
	if (!ext_handover(k, p))
		part_thaw_now(k, p);
	freezer_release(&k->fz, &p->ft, state_unrec, k);
	ext_own_write_end(k, p);
	ext_unwatch(k, p);
	if (state_sync(&k->st) < 0)
		log_error("state file %s: %s", k->st.path, strerror(errno));
	if (p->pidfd >= 0) {
		epoll_ctl(k->epfd, EPOLL_CTL_DEL, p->pidfd, NULL);
		close(p->pidfd);
	}
	for (pp = &k->parts; *pp; pp = &(*pp)->next)
		if (*pp == p) {
			*pp = p->next;
			break;
		}
	k->nparts--;
	{
		struct uacct *ua = uacct_get(k, p->uid);
		if (ua && ua->parts)
			ua->parts--;
	}
	/* Not freed yet: the event batch the loop is in may still name it (its
	 * pidfd's event after an UNREGISTER that ended it). */
	p->ended = 1;
	p->dead_next = k->dead_parts;
	k->dead_parts = p;
	gpu_prune(k);
	k->resched = 1;
}

void part_reap(struct krexd *k)
{
	struct part *p;

	while ((p = k->dead_parts)) {
		k->dead_parts = p->dead_next;
		free(p);
	}
}

/* The /proc fallback: end participants whose root pid is gone (or a zombie). */
void part_check_proc(struct krexd *k, uint64_t now)
{
	struct part *p, *next;
	char st;
	pid_t pp;
	int alive, any = 0;

	if (!k->proc_check_ns || now < k->proc_check_ns)
		return;
	for (p = k->parts; p; p = next) {
		next = p->next;
		if (p->pidfd >= 0)
			continue;
		any = 1;
		alive = proc_state(p->pid, &st, &pp) == 0 && st != 'Z' && st != 'X';
		if (!alive)
			part_end(k, p, "root pid exited");
	}
	k->proc_check_ns = any ? now + NS_PER_S : 0;
}
