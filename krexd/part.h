/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * part.h - participants (part.c) and someone else's suspend (part_ext.c).
 */
#ifndef KREXD_PART_H
#define KREXD_PART_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "krexd.h"

struct conn;

struct part {
	struct ep_item ep; /* pidfd */
	int ended;         /* part_end() done: freed by part_reap() (its pidfd event may
	                    * still be in the loop's batch) */
	struct part *dead_next;
	uint32_t id;
	uid_t uid;
	pid_t pid; /* root pid */
	uint32_t job, step;
	char label[128];
	char cpus[256];
	uint64_t mask; /* GPU slots */
	struct freezer_target ft;
	int pidfd;             /* -1: watched through /proc */
	uint64_t ended_turn;   /* loop turn in which its last region ended */
	uint64_t last_end_ns;  /* when it ended */
	int end_thawed_askers; /* that region thawed siblings that ask for regions too */
	unsigned asked;        /* regions it asked for */
	int freeze_refs;       /* regions that froze it */
	int gated;             /* regions it is a sibling of */
	unsigned members;      /* connections with a drain thread */
	int gate_seen;         /* it has had one: its gated processes may have left */
	unsigned conns;
	/* Someone else's suspend (Slurm's scontrol suspend, a SIGSTOP): part.c
	 * "someone else's suspend", doc/architecture.md. */
	int ext;               /* FREEZER_EXT_* as krexd last saw it */
	uint64_t ext_since_ns; /* since when krexd has seen it so; 0 when not */
	uint64_t quiet_mask; /* GPU slots on which it queued nothing since an acknowledged drain */
	int ext_wd;          /* inotify watch on its freezer file, -1 none */
	int ext_dirty;       /* that file was written: look again */
	int ext_dying;       /* thawed by another to be killed: krexd does not freeze it again */
	uint64_t ext_kill_until; /* after krexd froze it again: watch for a SIGKILL until then */
	int ext_closed;          /* a writer of that file closed it (its write is whole) */
	uint64_t ext_confirm_ns; /* a write left it FROZEN under krexd's freeze: a suspend, unless
	                          * a thaw comes before its writer closes the file or by then */
	int by_root; /* root registered it for a user (the SPANK plugin): its GPUs are the step's */
	int moving;  /* in k->moving: its pid not in its cgroup yet (the mover thread) */
	uint64_t made_ns; /* when its REGISTER was taken */
	struct part *next;
};

/* text_check() of each GPU name of g ("GPU name N ..."). */
int gpus_check(const struct proto_gpus *g, char *err, size_t len);
struct part *part_find_id(struct krexd *k, uint32_t id);
struct part *part_find_pid(struct krexd *k, pid_t pid);
/* The same with pid's cgroup read already (freezer_key; NULL: it could not be). */
struct part *part_find_pid_key(struct krexd *k, pid_t pid, const struct freezer_key *key);
/* Whether pid, started at start (/proc/PID/stat field 22), is a live member
 * of p that registered with PROTO_REG_HOLDCTX (its GPU contexts wait at the
 * gate); the pid's start must match the one krexd saw at its connection. */
int part_pid_holds_ctx(const struct krexd *k, const struct part *p, pid_t pid, uint64_t start);
int part_register(struct krexd *k, struct conn *c, uint32_t seq, const struct proto_register *reg);
/* The mover thread's results (EP_MOVER): each participant linked and its
 * waiting connections answered, or its making undone and refused. */
void part_moves_done(struct krexd *k);
/* krexd stops: the moves under way finished, their participants linked (then ended with all). */
void part_moves_stop(struct krexd *k);
/* c waits no more for a REGISTER's answer (it is given, or c closes). */
void part_unwait(struct conn *c);
int part_unregister(struct krexd *k, struct conn *c, uint32_t seq,
                    const struct proto_unregister *u);
void part_end(struct krexd *k, struct part *p, const char *why);
/* Free the participants part_end() ended (after the loop's event batch). */
void part_reap(struct krexd *k);
/* Take a freeze reference: 1 when the caller must part_freeze_start() it after writing
 * the state file, 0 when another region froze it already, -1/errno. */
int part_freeze_prepare(struct krexd *k, struct part *p);
int part_freeze_start(struct krexd *k, struct part *p);
/* Drop a freeze reference; the last thaws (0), or keeps the line and retries it (-1);
 * the state file is written after.  _nosync: the caller writes it once for a batch (a
 * region's end thaws every sibling, then writes once; a line still on disk for a moment
 * after its thaw only thaws again after a crash). */
int part_thaw(struct krexd *k, struct part *p);
int part_thaw_nosync(struct krexd *k, struct part *p);
void part_check_proc(struct krexd *k, uint64_t now);
/* The freeze poll of a region (v1 writes FROZEN again while FREEZING). */
int part_freeze_poll(struct krexd *k, struct part *p);
/* Someone else's suspend: look at p now (at region entry); FREEZER_EXT_*. */
int part_ext_check(struct krexd *k, struct part *p, uint64_t now);
/* The inotify fd is readable, or krexd's own writes left events to sort. */
void part_ext_events(struct krexd *k);
/* Participants frozen again after another's thaw: one being killed is let go. */
void part_ext_kill_check(struct krexd *k, uint64_t now);
/* Writes that left a participant FROZEN under krexd's freeze, whose writer kept the file open: suspends after EXT_CONFIRM_MS. */
void part_ext_confirm(struct krexd *k, uint64_t now);
int state_rec(void *ctx, const char *line);
void state_unrec(void *ctx, const char *line);

/* ---- part_reg.c's, for part.c: what a REGISTER may ask for ---- */
/* Its label, CPU list and GPU names: 0, or -1 with why in err. */
int part_names_check(const struct proto_register *reg, char *err, size_t len);
/* The pid it names, pinned: its pidfd (-1: none), or -2 with why. */
int part_pin(struct conn *c, pid_t pid, uid_t *uid, char *why, size_t len);
/* Its GPUs as a slot mask within gpu_policy: 0, or -1 with a KREX_E* code and why. */
int part_gpus(struct krexd *k, struct conn *c, const struct proto_register *reg, uint64_t *mask,
              int *code, char *why, size_t len);
/* 1, with its cgroup in cg, when pid is in an unregistered Slurm step's cgroup. */
int part_in_slurm_step(const struct krexd *k, pid_t pid, char *cg, size_t len);
/* The job and step of pid as krexd verified them (joined: the participant it joins). */
void part_job(struct krexd *k, struct conn *c, pid_t pid, const struct proto_register *reg,
              const struct part *joined, uint32_t jobstep[2]);

/* ---- part_ext.c's, for part.c ---- */
/* A write left p FROZEN under krexd's freeze and no thaw followed: a suspend. */
void ext_confirm(struct krexd *k, struct part *p, uint64_t now);
/* Around each of krexd's own writes to a freezer file: its events are not another's. */
void ext_own_write_begin(struct krexd *k);
void ext_own_write_end(struct krexd *k, struct part *p);
/* Watch p's freezer file; without one (signals) p->ext is looked at region entry only. */
void ext_watch(struct krexd *k, struct part *p);
void ext_unwatch(struct krexd *k, struct part *p);

#endif /* KREXD_PART_H */
