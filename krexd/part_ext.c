/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * part_ext.c - someone else's suspend: Slurm's scontrol suspend, a SIGSTOP,
 * an administrator's write to a participant's freezer file, as krexd sees
 * them (doc/architecture.md "Someone else's suspend").  part.c's.
 */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/inotify.h>
#include <unistd.h>

#include "krexd.h"
#include "conn.h"
#include "part.h"
#include "log.h"
#include "timeutil.h"

/*
 * ---- someone else's suspend ----
 *
 * Slurm suspends a job where krexd freezes it (freezer.h): with cgroup v1
 * both write the step's one freezer.state.  krexd watches that file
 * (inotify sees every write to it) and keeps what it learns in p->ext:
 *  - a write krexd did not make, while it holds p frozen, that leaves it
 *    FROZEN: the other suspended it too, so krexd leaves it frozen when it
 *    lets go (ext_handover).  Decided when the writer closes the file (or
 *    EXT_CONFIRM_MS later, or when krexd lets go first): a shell's
 *    `echo THAWED > freezer.state` is two writes, the O_TRUNC of its open
 *    (the file still FROZEN) and then its own, and on a loaded host krexd
 *    can read the first long before the second;
 *  - one that leaves it THAWED: the other resumed it inside a region, so
 *    krexd freezes it again at once and the regions holding it say so;
 *  - any write while krexd holds none: it may have run (quiet_mask = 0).
 * krexd's own writes are told apart by reading the events before and
 * after each of them (ext_own_write_begin/end): the loop is single-
 * threaded, so an event read right after its write is its own, unless
 * another wrote within that microsecond (then both are one event, read as
 * krexd's).  With cgroup v2 krexd freezes a level below Slurm's (freezer.h)
 * and the kernel composes the two; the watch only keeps p->ext current.
 */

static void ext_update(struct krexd *k, struct part *p, uint64_t now);
static void ext_set(struct part *p, int ext, uint64_t now);

/* A writer that keeps the file open: its FROZEN counts as a suspend after this. */
#define EXT_CONFIRM_MS 1000

/* A write left p FROZEN under krexd's freeze and no thaw followed: a suspend. */
void ext_confirm(struct krexd *k, struct part *p, uint64_t now)
{
	p->ext_confirm_ns = 0;
	if (p->freeze_refs <= 0 || p->ext == FREEZER_EXT_FROZEN ||
	    !freezer_ext_shared(&k->fz, &p->ft) || freezer_ext_thawed_under(&k->fz, &p->ft))
		return;
	ext_set(p, FREEZER_EXT_FROZEN, now);
	log_info("participant %u: suspended (its freezer written) by another", p->id);
	k->ev.part_suspended(k, p);
}

void part_ext_confirm(struct krexd *k, uint64_t now)
{
	struct part *p, *next;
	uint64_t first = 0;

	if (!k->ext_confirm_ns || now < k->ext_confirm_ns)
		return;
	for (p = k->parts; p; p = next) {
		next = p->next;
		if (p->ext_confirm_ns && now >= p->ext_confirm_ns)
			ext_confirm(k, p, now);
		if (p->ext_confirm_ns && (!first || p->ext_confirm_ns < first))
			first = p->ext_confirm_ns;
	}
	k->ext_confirm_ns = first;
}

/* Read every pending event; those of skip_wd (krexd's own write) are dropped. */
static void ext_read(struct krexd *k, int skip_wd)
{
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	const struct inotify_event *e;
	struct part *p;
	ssize_t n;
	char *q;

	if (k->ifd < 0)
		return;
	while ((n = read(k->ifd, buf, sizeof(buf))) > 0) {
		for (q = buf; q < buf + n; q += sizeof(*e) + e->len) {
			e = (const struct inotify_event *)q;
			if (e->wd == skip_wd)
				continue;
			for (p = k->parts; p; p = p->next)
				if (p->ext_wd == e->wd) {
					if (e->mask & IN_MODIFY) {
						p->ext_dirty = 1;
						if (p->freeze_refs > 0)
							k->freeze_event = 1;
					}
					/* The close of a write looked at already says nothing. */
					if ((e->mask & IN_CLOSE_WRITE) &&
					    (p->ext_dirty || p->ext_confirm_ns))
						p->ext_closed = p->ext_dirty = 1;
				}
		}
	}
}

void part_ext_events(struct krexd *k)
{
	uint64_t now = time_now_ns();
	struct part *p, *next;

	ext_read(k, -1);
	for (p = k->parts; p; p = next) {
		next = p->next;
		if (p->ext_dirty)
			ext_update(k, p, now);
	}
}

void ext_own_write_begin(struct krexd *k)
{
	ext_read(k, -1); /* what others wrote before: theirs, looked at by the loop */
}

void ext_own_write_end(struct krexd *k, struct part *p)
{
	ext_read(k, p->ext_wd);
}

/* Watch p's freezer file; without one (signals) p->ext is looked at region entry only. */
void ext_watch(struct krexd *k, struct part *p)
{
	char path[600];

	p->ext_wd = -1;
	if (k->ifd < 0 || freezer_ext_watch_path(&k->fz, &p->ft, path, sizeof(path)) < 0)
		return;
	p->ext_wd = inotify_add_watch(k->ifd, path, IN_MODIFY | IN_CLOSE_WRITE);
	if (p->ext_wd < 0)
		log_warn(
		        "participant %u: cannot watch %s: %s (a suspend by Slurm is seen at region entry only)",
		        p->id, path, strerror(errno));
}

void ext_unwatch(struct krexd *k, struct part *p)
{
	struct part *o;

	if (p->ext_wd < 0)
		return;
	for (o = k->parts; o; o = o->next) /* two participants may share one cgroup: one watch */
		if (o != p && o->ext_wd == p->ext_wd)
			break;
	if (!o)
		inotify_rm_watch(k->ifd, p->ext_wd);
	p->ext_wd = -1;
}

/* The pids that must acknowledge drains (members), for the stopped check. */
static size_t ext_member_pids(struct krexd *k, struct part *p, pid_t *v, size_t cap)
{
	struct conn *c;
	size_t n = 0;

	for (c = k->conns; c && n < cap; c = c->next)
		if (!c->dead && c->part == p && c->gate && c->member_pid > 0)
			v[n++] = c->member_pid;
	return n;
}

static void ext_set(struct part *p, int ext, uint64_t now)
{
	if (ext && !p->ext_since_ns)
		p->ext_since_ns = now;
	if (!ext)
		p->ext_since_ns = 0;
	p->ext = ext;
}

/* p's freezer file was written by someone other than krexd. */
static void ext_update(struct krexd *k, struct part *p, uint64_t now)
{
	pid_t pids[64];
	size_t n = ext_member_pids(k, p, pids, 64);
	int was = p->ext, ext, closed = p->ext_closed;

	p->ext_dirty = 0;
	p->ext_closed = 0;
	if (p->freeze_refs > 0 && freezer_ext_thawed_under(&k->fz, &p->ft))
		p->ext_confirm_ns = 0; /* thawed: what looked like a suspend was not one */
	if (p->freeze_refs > 0 && freezer_ext_thawed_under(&k->fz, &p->ft) &&
	    (p->ext != FREEZER_EXT_FROZEN || p->ext_dying)) {
		/* Thawed by another that had not suspended it: Slurm does that only
		 * to kill a step (THAWED, then SIGKILL; a frozen task cannot die),
		 * else an administrator.  Left thawed. */
		log_info(
		        "participant %u: thawed by another (Slurm's kill?) while a region holds it frozen; left thawed",
		        p->id);
		ext_set(p, FREEZER_EXT_NONE, now);
		p->quiet_mask = 0;
		p->ext_dying = 1;
		k->ev.part_resumed(k, p, REGION_EXT_LEFT_THAWED);
		return;
	}
	if (p->freeze_refs > 0 && freezer_ext_thawed_under(&k->fz, &p->ft)) {
		/* Resumed by the other while krexd holds it: freeze it again now. */
		log_info(
		        "participant %u: thawed by another (Slurm's resume?) while a region holds it frozen; freezing it again",
		        p->id);
		ext_set(p, FREEZER_EXT_NONE, now);
		p->quiet_mask = 0;
		ext_own_write_begin(k);
		if (freezer_start(&k->fz, &p->ft) < 0)
			log_error("participant %u: freezing again: %s", p->id, strerror(errno));
		ext_own_write_end(k, p);
		/* Events read since the state was read above are of the write it
		 * showed (a shell's `echo > file` is two: O_TRUNC, then the write),
		 * or of one krexd's FROZEN just overrode: not a suspend.  Its close
		 * goes with them: a close kept for later would make the next
		 * writer's O_TRUNC (the file still FROZEN) look like a whole write,
		 * a suspend, and its THAWED a resume (frozen again, not left to run). */
		p->ext_dirty = 0;
		p->ext_closed = 0;
		/* A kill of a suspended step thaws it too: watch for the SIGKILL. */
		p->ext_kill_until = now + 2 * NS_PER_S;
		if (!k->ext_kill_check_ns || k->ext_kill_check_ns > now + 10 * NS_PER_MS)
			k->ext_kill_check_ns = now + 10 * NS_PER_MS;
		k->ev.part_resumed(k, p, REGION_EXT_FROZEN_AGAIN);
		return;
	}
	if (p->freeze_refs > 0 && freezer_ext_shared(&k->fz, &p->ft)) {
		/* A write not ours that left it frozen: a suspend once its writer
		 * closed the file; until then it may be a shell's O_TRUNC. */
		if (p->ext != FREEZER_EXT_FROZEN && !closed) {
			if (!p->ext_confirm_ns)
				p->ext_confirm_ns = now + EXT_CONFIRM_MS * NS_PER_MS;
			if (!k->ext_confirm_ns || k->ext_confirm_ns > p->ext_confirm_ns)
				k->ext_confirm_ns = p->ext_confirm_ns;
			return;
		}
		p->ext_confirm_ns = 0;
		ext = FREEZER_EXT_FROZEN;
	} else
		ext = freezer_ext_state(&k->fz, &p->ft, pids, n);
	if (p->freeze_refs == 0)
		p->quiet_mask = 0; /* written while krexd held none: it may have run */
	ext_set(p, ext, now);
	if (ext != was)
		log_info("participant %u: %s by another", p->id,
		         ext ? "suspended (its freezer written)" : "resumed");
	if (ext && !was)
		k->ev.part_suspended(k, p);
}

/*
 * A task frozen in a v1 cgroup with SIGKILL pending never dies (v2 lets it
 * die): a job cancelled (scancel, a time limit, under proctrack/linuxproc
 * or after Slurm's thaw) while a region holds it frozen would stay until
 * the region ends, and slurmd may call the step unkillable and drain the
 * node.  While krexd holds v1 freezes it looks for a pending SIGKILL every
 * 100 ms (every 10 ms for 2 s after it froze one again on another's thaw)
 * and thaws such a participant so that it can exit; the regions note it.
 */
void part_ext_kill_check(struct krexd *k, uint64_t now)
{
	struct part *p;
	int any = 0, fast = 0;

	if (!k->ext_kill_check_ns || now < k->ext_kill_check_ns)
		return;
	for (p = k->parts; p; p = p->next) {
		if (p->freeze_refs <= 0 || p->ext_dying || k->fz.kind != FREEZER_CGROUP1) {
			p->ext_kill_until = 0;
			continue;
		}
		if (freezer_ext_kill_pending(&k->fz, &p->ft)) {
			log_info(
			        "participant %u: SIGKILL pending while krexd holds it frozen: thawed so that it can exit",
			        p->id);
			p->ext_dying = 1;
			p->ext_kill_until = 0;
			ext_own_write_begin(k);
			if (freezer_ext_let_go(&k->fz, &p->ft) < 0)
				log_error("participant %u: thaw: %s", p->id, strerror(errno));
			ext_own_write_end(k, p);
			k->ev.part_resumed(k, p, REGION_EXT_KILLED);
			continue;
		}
		any = 1;
		if (p->ext_kill_until && now < p->ext_kill_until)
			fast = 1;
		else
			p->ext_kill_until = 0;
	}
	k->ext_kill_check_ns = !any ? 0 : now + (fast ? 10 : 100) * NS_PER_MS;
}

int part_ext_check(struct krexd *k, struct part *p, uint64_t now)
{
	pid_t pids[64];
	size_t n;
	int ext;

	if (p->ext_dirty)
		ext_update(k, p, now);
	if (p->ext_confirm_ns)
		ext_confirm(k, p, now);
	n = ext_member_pids(k, p, pids, 64);
	ext = freezer_ext_state(&k->fz, &p->ft, pids, n);
	if (!ext && p->freeze_refs > 0 && p->ext == FREEZER_EXT_FROZEN &&
	    freezer_ext_shared(&k->fz, &p->ft))
		ext = FREEZER_EXT_FROZEN; /* the file cannot say while krexd holds it too */
	if (ext != FREEZER_EXT_FROZEN && p->ext_wd < 0)
		p->ext_since_ns = 0; /* unwatched: since the last look only */
	if (!ext && p->freeze_refs == 0)
		p->quiet_mask = 0; /* it runs now */
	ext_set(p, ext, now);
	return ext;
}
