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
#include "mover.h"
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

/* p's making is done: watched, listed, logged (p->made_ns: its time on the loop so far). */
static void part_link(struct krexd *k, struct part *p, int pidfd, const struct mv_done *d)
{
	uint64_t t0 = time_now_ns(), took;

	part_watch(k, p, pidfd);
	ext_watch(k, p);
	p->next = k->parts;
	k->parts = p;
	/* the loop's part of it: with a move on the loop, the kernel's cgroup
	 * migration, which can wait for an RCU grace period (doc/performance.md) */
	took = p->made_ns + (time_now_ns() - t0);
	k->parts_made++;
	k->parts_made_ns += took;
	if (d) {
		k->parts_moved_ns += d->move_ns;
		k->parts_move_held_ns += d->held_ns;
		log_info(
		        "participant %u: pid %d uid %u job %u.%u '%s' cgroup %s (made in %llu us); moved in by the mover thread in %llu us after %llu us queued, %llu us of it held for regions' entries",
		        p->id, (int)p->pid, (unsigned)p->uid, p->job, p->step, p->label, p->ft.cg,
		        (unsigned long long)(took / 1000), (unsigned long long)(d->move_ns / 1000),
		        (unsigned long long)(d->queued_ns / 1000),
		        (unsigned long long)(d->held_ns / 1000));
	} else
		log_info("participant %u: pid %d uid %u job %u.%u '%s' cgroup %s (made in %llu us)",
		         p->id, (int)p->pid, (unsigned)p->uid, p->job, p->step, p->label,
		         p->ft.cg[0] ? p->ft.cg : "(signals)", (unsigned long long)(took / 1000));
}

static struct part *part_find_moving(struct krexd *k, uint32_t id, pid_t pid)
{
	struct part *p;

	for (p = k->moving; p; p = p->next)
		if (id ? p->id == id : p->pid == pid)
			return p;
	return NULL;
}

/* Undo the counts and the cgroups of a participant never linked, and free it. */
static void part_unmake(struct krexd *k, struct part *p, int pidfd)
{
	struct uacct *ua = uacct_get(k, p->uid);

	freezer_release(&k->fz, &p->ft, state_unrec, k); /* leftovers back where they were */
	if (ua && ua->parts)
		ua->parts--;
	k->nparts--;
	if (pidfd >= 0)
		close(pidfd);
	free(p);
}

/*
 * Make a participant of pid.  Its cgroup is made here; the pid's move into
 * it (a write that waits for an RCU grace period without favordynmods) goes
 * to the mover thread when move_off is set: p is then returned in k->moving
 * (p->moving), linked by part_moves_done().  Otherwise, or when the thread
 * does not take it, the move is made here.
 */
static struct part *part_create(struct krexd *k, const struct proto_register *reg, pid_t pid,
                                uid_t uid, const uint32_t jobstep[2], uint64_t mask, int pidfd,
                                int move_off)
{
	struct uacct *ua = uacct_get(k, uid);
	uint64_t t0 = time_now_ns();
	struct part *p;
	int rc, cerr, err;

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
	while (p->id == 0 || part_find_id(k, p->id) || part_find_moving(k, p->id, 0));
	p->uid = uid;
	p->pid = pid;
	p->job = jobstep[0];
	p->step = jobstep[1];
	p->mask = mask;
	p->pidfd = -1;
	snprintf(p->label, sizeof(p->label), "%s", reg->label);
	snprintf(p->cpus, sizeof(p->cpus), "%s", reg->cpus);
	rc = freezer_adopt_prepare(&k->fz, &p->ft, p->id, pid, reg->cgroup);
	if (rc < 0) {
		free(p);
		return NULL;
	}
	ua->parts++;
	k->nparts++;
	if (rc == 1 && move_off && mv_submit(p->id, pid, p->ft.cg, p->ft.cpuset_cg) == 0) {
		p->moving = 1;
		p->pidfd = pidfd;
		p->made_ns = time_now_ns() - t0;
		p->next = k->moving;
		k->moving = p;
		log_debug("participant %u: pid %d goes into cgroup %s on the mover thread", p->id,
		          (int)pid, p->ft.cg);
		return p;
	}
	if (rc == 1) {
		if (freezer_move(p->ft.cg, p->ft.cpuset_cg, pid, &cerr) < 0) {
			err = errno;
			part_unmake(k, p, -1);
			errno = err;
			return NULL;
		}
		freezer_moved(&k->fz, &p->ft, p->id, cerr, 0);
	}
	p->made_ns = time_now_ns() - t0;
	part_link(k, p, pidfd, NULL);
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

/* c registered pid as (a member of) p: attach it and answer. */
static int part_attach(struct krexd *k, struct conn *c, uint32_t seq,
                       const struct proto_register *reg, struct part *p, pid_t pid)
{
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

/* c's REGISTER is answered when p's move is done (part_moves_done). */
static int part_wait(struct krexd *k, struct conn *c, uint32_t seq,
                     const struct proto_register *reg, struct part *p)
{
	c->reg = malloc(sizeof(*c->reg));
	if (!c->reg)
		return conn_error(k, c, seq, KREX_ENOMEM, "out of memory");
	*c->reg = *reg;
	c->reg_wait = p->id;
	c->reg_seq = seq;
	return 0;
}

void part_unwait(struct conn *c)
{
	free(c->reg);
	c->reg = NULL;
	c->reg_wait = 0;
	c->reg_seq = 0;
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

	if (c->part || c->reg_wait)
		return conn_error(k, c, seq, KREX_EBUSY, "this connection is already registered");
	if (part_names_check(reg, why, sizeof(why)) < 0)
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
	if (!p && !(reg->flags & PROTO_REG_NEWCG) && (p = part_find_moving(k, 0, pid))) {
		/* its pid is being moved in for another REGISTER: this one waits too */
		if (p->uid != c->uid && c->uid != 0) {
			if (pidfd >= 0)
				close(pidfd);
			return conn_error(k, c, seq, KREX_EPERM, "participant %u belongs to uid %u",
			                  p->id, (unsigned)p->uid);
		}
		p->mask |= mask;
		if (pidfd >= 0)
			close(pidfd);
		return part_wait(k, c, seq, reg, p);
	}
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
		/* Off the loop only for a pid of no participant: one in a
		 * sibling's cgroup (NEWCG) could be frozen there by a region
		 * meanwhile, and the move would thaw it. */
		p = part_create(k, reg, pid, uid, jobstep, mask, pidfd,
		                mv_on() && !part_find_pid(k, pid));
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
		if (p->moving)
			return part_wait(k, c, seq, reg, p);
		k->ev.part_new(k, p); /* from a cpuset a held region narrowed */
	}
	return part_attach(k, c, seq, reg, p, pid);
}

/* The mover thread's results: link each participant and answer its waiters, or undo it. */
void part_moves_done(struct krexd *k)
{
	struct mv_done *d, *next;
	struct part **pp, *p;
	struct conn *c;

	for (d = mv_take(); d; d = next) {
		next = d->next;
		for (pp = &k->moving; *pp && (*pp)->id != d->id; pp = &(*pp)->next)
			;
		p = *pp;
		if (!p) { /* cannot be: every result is of one in the list */
			free(d);
			continue;
		}
		*pp = p->next;
		p->next = NULL;
		p->moving = 0;
		/* The pid alive after the write: it was the one moved (no reuse of its number). */
		if (!d->err && p->pidfd >= 0 &&
		    syscall(SYS_pidfd_send_signal, p->pidfd, 0, NULL, 0) < 0)
			d->err = ESRCH;
		if (d->err) {
			log_info("participant %u: pid %d not moved into cgroup %s: %s", p->id,
			         (int)p->pid, p->ft.cg, strerror(d->err));
			for (c = k->conns; c; c = c->next)
				if (!c->dead && c->reg_wait == p->id) {
					conn_error(k, c, c->reg_seq,
					           d->err == EPERM ? KREX_EPERM : KREX_ESYS,
					           "cannot make pid %d a participant: %s",
					           (int)p->pid, strerror(d->err));
					part_unwait(c);
				}
			part_unmake(k, p, p->pidfd);
			gpu_prune(k);
			free(d);
			continue;
		}
		freezer_moved(&k->fz, &p->ft, p->id, d->cpuset_err, 1);
		part_link(k, p, p->pidfd, d);
		k->ev.part_new(k, p); /* from a cpuset a held region narrowed */
		for (c = k->conns; c; c = c->next)
			if (!c->dead && c->reg_wait == p->id) {
				struct proto_register *reg = c->reg;
				uint32_t seq = c->reg_seq;
				c->reg = NULL;
				part_unwait(c);
				part_attach(k, c, seq, reg, p, reg->pid ? (pid_t)reg->pid : c->pid);
				free(reg);
			}
		free(d);
	}
}

void part_moves_stop(struct krexd *k)
{
	mv_stop(); /* what was queued is written first */
	part_moves_done(k);
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
