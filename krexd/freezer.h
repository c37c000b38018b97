/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * freezer.h - stopping and resuming a participant's processes.
 *
 * Backends, chosen at start (freezer = auto picks the first the node has):
 *	cgroup2  write 1 to cgroup.freeze, wait for "frozen 1" in cgroup.events
 *	cgroup1  write FROZEN to freezer.state, poll until it reads FROZEN
 *	signal   SIGSTOP every pid of the participant, wait for state T in
 *	         /proc/PID/stat; SIGCONT to resume (last resort: a process that
 *	         handles SIGCONT sees it, and a parent's wait() sees the stop,
 *	         so parents are stopped before their children and continued
 *	         after them: proctree.h)
 *
 * A participant without a cgroup of its own gets one under the subtree krexd
 * owns (cgroup_subtree, default KREX_CGROUP_SUBTREE: krex/p<ID> under the
 * freezer hierarchy root), with a cpuset of its own for the isolation work,
 * so that a region narrows and restores it with one write each: a matching
 * cgroup in a v1 cpuset hierarchy when the node has one (either freezer),
 * else, with cgroup2 and the cpuset controller in krexd's subtree, p<ID>
 * itself with explicit cpuset.cpus and cpuset.mems (an empty v2 cpuset
 * inherits, and krexd would move its threads one by one instead).  Either
 * way the cpus and mems are those of the cpuset the process came from.
 */
#ifndef KREXD_FREEZER_H
#define KREXD_FREEZER_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "krexd_config.h"

/* Ended participants' cgroups waiting for a task's exit to finish, at most. */
#define FREEZER_PENDING_MAX 32
/* How long one may wait before krexd gives up on it, and how often it retries. */
#define FREEZER_PENDING_GIVEUP_NS (10 * 1000000000ull)
#define FREEZER_PENDING_RETRY_NS (50 * 1000000ull)
/* At a clean stop, how long krexd waits for them all. */
#define FREEZER_PENDING_STOP_NS (2 * 1000000000ull)

/* Called before each change with the state line that undoes it. */
typedef int (*freezer_rec_fn)(void *ctx, const char *line);
/* Called after each change is undone, with the same line. */
typedef void (*freezer_drop_fn)(void *ctx, const char *line);

struct freezer {
	int kind;              /* FREEZER_CGROUP2, FREEZER_CGROUP1 or FREEZER_SIGNAL */
	char root[256];        /* freezer hierarchy root ("" with signals) */
	char cpuset_root[256]; /* cgroup1 cpuset hierarchy root, or "" */
	char sub[128];         /* krexd's subtree under both roots (cgroup_subtree) */
	int v2_cpuset;         /* cgroup2: krexd's p<ID> get the cpuset controller */
	int lock_fd[2];        /* the subtree held under root and cpuset_root, or -1 */
	/* Cgroups of ended participants still holding a task in its exit
	 * (a pid in its exit cannot be moved, and its cgroup cannot be removed
	 * until the exit is done): removed later (freezer_tick, freezer_fini). */
	struct freezer_pending {
		char cg[512];
		char back[512];
		int cpuset;     /* under cpuset_root, else under root */
		uint64_t since; /* CLOCK_MONOTONIC ns of the first try */
	} pending[FREEZER_PENDING_MAX];
	size_t npending;
	uint64_t retry_at; /* when freezer_tick wants to run next (CLOCK_MONOTONIC ns), 0 never */
};

struct freezer_target {
	char cg[512];          /* absolute path of its freezer cgroup, "" with signals */
	char cpuset_cg[512];   /* cpuset cgroup krexd made for it (cgroup1), or "" */
	int owned;             /* krexd made cg and removes it at the end */
	char orig_cg[512];     /* owned: the pid's cgroup before, where leftovers go back */
	char orig_cpuset[512]; /* likewise for the cpuset cgroup */
	char cpuset_from[512]; /* cgroup v2: the cpuset whose cpus and mems cg copied */
	pid_t root;            /* root pid (signals: it and its descendants) */
	pid_t *extra;          /* more pids of it that are not descendants (attached members) */
	size_t nextra;
	pid_t *stopped;  /* signals: pids stopped now */
	int *stopfd;     /* signals: a pidfd of each (signalled through it), -1 where none */
	pid_t *stopppid; /* signals: each one's parent when it was listed */
	unsigned char *stopsent; /* signals: 0 not signalled yet, 1 SIGSTOP sent, 2 stopped */
	size_t nstopped;
	freezer_rec_fn rec; /* signals: records pids found by a re-scan (from freezer_prepare) */
	void *rec_ctx;
	int frozen;     /* a freeze was started and not undone */
	int rescan_due; /* signals: stopped, its rescan deferred to the round's (freezer_rescan) */
	/* What a thaw needs, opened with the freeze (freezer_prepare), kept
	 * until the participant ends: fd exhaustion cannot lose a thaw. */
	int thaw_fds;    /* the two below are open */
	int thaw_fd;     /* v1 freezer.state, v2 cgroup.freeze (read-write) */
	int thaw_chk_fd; /* v1 freezer.self_freezing (read), or -1 */
};

/*
 * Pick the backend and make subtree (relative, may hold '/') under its root: want is a FREEZER_* (AUTO: cgroup2 when /sys/fs/cgroup is
 * cgroup2, else the v1 freezer, else a cgroup2 mount elsewhere with
 * cgroup.freeze, else signals).  Returns 0, or -1 with why in err.
 */
int freezer_init(struct freezer *f, int want, const char *subtree, char *err, size_t errlen);

/* Clean stop: wait up to FREEZER_PENDING_STOP_NS for the cgroups of tasks
 * still exiting, then remove the subtree (levels other krexds still use stay). */
void freezer_fini(struct freezer *f);

/*
 * Retry the removal of ended participants' cgroups that still held a task
 * in its exit (freezer_release); one that is still there after
 * FREEZER_PENDING_GIVEUP_NS is said (a warning) and left.  Sets f->retry_at
 * to the next time it wants to run (0 when nothing waits): krexd's loop
 * calls it once that time has come.
 */
void freezer_tick(struct freezer *f, uint64_t now);

const char *freezer_name(const struct freezer *f);

/*
 * Make t the freezer target of participant id whose root is pid.  cgroup is
 * the cgroup it has of its own ("" for none: krexd makes one and moves pid
 * in).  Refuses (EPERM) a cgroup that holds krexd, slurmd or slurmstepd,
 * itself or anywhere below it (a v2 Slurm step keeps slurmstepd in slurm/).
 * Three steps (part_create() in part.c composes them): freezer_adopt_prepare()
 * (1: the cgroups are made, pid is to be moved; 0: nothing to move; -1),
 * freezer_move() on any thread (the mover's, mover.c, or krexd's loop; it
 * touches nothing but the kernel's files: a copy of t's paths), then
 * freezer_moved() with its cpuset_err, or freezer_release() after its failure.
 */
int freezer_adopt_prepare(struct freezer *f, struct freezer_target *t, unsigned id, pid_t pid,
                          const char *cgroup);
/* pid into cg, then into cpuset_cg ("": none); 0, or -1/errno when the
 * first failed; *cpuset_err: the second's errno, 0 when it took. */
int freezer_move(const char *cg, const char *cpuset_cg, pid_t pid, int *cpuset_err);
/* After the move: a failed cpuset move undone (logged); with recopy (a move
 * off the loop, during which a region may have narrowed or widened the
 * source), its cpuset copied again from where it came from. */
void freezer_moved(struct freezer *f, struct freezer_target *t, unsigned id, int cpuset_err,
                   int recopy);

/* Add an attached pid that is not a descendant of the root (signals). */
int freezer_add_pid(struct freezer_target *t, pid_t pid);

/* 1 if pid belongs to t (is in its cgroup; signals: is root, extra or a descendant). */
int freezer_contains(const struct freezer *f, const struct freezer_target *t, pid_t pid);

/*
 * The same against many targets: freezer_key() reads what identifies pid's
 * place once (its cgroup; nothing for signals), freezer_contains_key()
 * compares a target with it.  freezer_key: 0, or -1 when pid has none (no
 * target contains it).  Asking each target with freezer_contains() read
 * /proc/PID/cgroup once per target: 17-22 ms at p50, up to 100 ms, for a
 * region's NVML process list beside 24-32 sessions (H200, issue 18).
 */
struct freezer_key {
	int have_cg;
	char cg[512];
};
int freezer_key(const struct freezer *f, pid_t pid, struct freezer_key *key);
int freezer_contains_key(const struct freezer *f, const struct freezer_target *t, pid_t pid,
                         const struct freezer_key *key);

/*
 * Freezing is two steps, so that a batch of siblings costs one state file
 * write: freezer_prepare() calls rec with every line the freeze will need to
 * undo (and marks t frozen, so a thaw undoes a half-done freeze);
 * freezer_start() then makes the change.  Both return 0 or -1/errno
 * (EPERM: the cgroup holds krexd, slurmd or slurmstepd).
 */
int freezer_prepare(struct freezer *f, struct freezer_target *t, freezer_rec_fn rec, void *ctx);
int freezer_start(struct freezer *f, struct freezer_target *t);

/* Signals: read /proc once for the next batch of freezer_prepare calls. */
void freezer_snapshot(const struct freezer *f);

/* 1 when the kernel reports t frozen, 0 not yet, -1/errno.  Signals: once
 * every pid is stopped, /proc is scanned again and a process forked after the
 * snapshot is stopped too (0 until a scan finds nothing new). */
int freezer_poll(struct freezer *f, struct freezer_target *t);

/*
 * A round of polls over many targets with one /proc scan (signals; the
 * cgroup freezers ignore it).  Between freezer_round_begin() and
 * freezer_round_end(), freezer_poll() of a target whose pids are all stopped
 * sets t->rescan_due and returns 0; once every target was polled, call
 * freezer_rescan() for each such target: the first call reads /proc once
 * (after every target's stop was seen, so a child forked before its
 * parent stopped is in it) and every call looks in that snapshot.  Returns
 * what freezer_poll() would have.  Without the round each poll read /proc
 * itself (64 siblings: 64 scans of every process of the node per poll).
 */
void freezer_round_begin(struct freezer *f);
int freezer_rescan(struct freezer *f, struct freezer_target *t);
void freezer_round_end(struct freezer *f);

/*
 * Thaw t through the fds opened with the freeze, and read it back (v1
 * freezer.self_freezing 0, v2 cgroup.freeze 0: krexd's own freeze is
 * lifted, whatever a parent cgroup does); drop is called after each change
 * is undone and verified.  0, or -1/errno (EIO: it read back frozen) with
 * the state line kept: the caller retries it (freezer_line, state_retry_add).
 */
int freezer_thaw(struct freezer *f, struct freezer_target *t, freezer_drop_fn drop, void *ctx);

/* The state line of t's freeze ("cgroup1 PATH", "cgroup2 PATH"; "" with signals). */
void freezer_line(const struct freezer *f, const struct freezer_target *t, char *buf, size_t len);

/*
 * The participant ends: thaw, move leftover pids back to the cgroups they
 * came from (else the root), remove what krexd made (later, by
 * freezer_tick, where a task of it is still exiting).
 */
void freezer_release(struct freezer *f, struct freezer_target *t, freezer_drop_fn drop, void *ctx);

/*
 * Undo one state line (cgroup1 PATH, cgroup2 PATH, pid PID) and read it
 * back.  0 or -1/errno.  Test hook: KREX_TEST_THAW_FAULTS=N in krexd's
 * environment drops the next N thaw writes (as if lost) to show the
 * verification and the retries at work.
 */
int freezer_undo_line(const char *line);

/* Thaw and remove every p* cgroup a previous krexd left under its subtree. */
int freezer_cleanup(struct freezer *f);

/*
 * ---- someone else's suspend ----
 * Slurm suspends a job (scontrol suspend, PreemptMode=SUSPEND, gang
 * scheduling) in the same places krexd freezes it: proctrack/cgroup with
 * cgroup v1 writes the step's freezer.state (the participant's cgroup),
 * cgroup v2 writes step_M/user/cgroup.freeze, proctrack/linuxproc sends
 * SIGSTOP/SIGCONT.  These tell krexd what the other did; part.c composes.
 */
enum { FREEZER_EXT_NONE = 0, FREEZER_EXT_STOPPED = 1, FREEZER_EXT_FROZEN = 2 };

/*
 * Is t suspended by someone other than krexd now?  FROZEN: its cgroup is
 * frozen by another writer (v1: freezer.state while krexd holds no freeze,
 * or a frozen parent; v2: an ancestor's or, krexd holding none, its own
 * cgroup.freeze); STOPPED: its root or one of pids is stopped (state T) and
 * not by krexd.  NONE otherwise.
 */
int freezer_ext_state(const struct freezer *f, const struct freezer_target *t, const pid_t *pids,
                      size_t n);

/* The file to watch (inotify IN_MODIFY) for another's freeze or thaw of t: 0, or -1 (signals). */
int freezer_ext_watch_path(const struct freezer *f, const struct freezer_target *t, char *out,
                           size_t len);

/* 1 when krexd's freeze of t is in the one file another writes too (v1, a cgroup krexd did not make). */
int freezer_ext_shared(const struct freezer *f, const struct freezer_target *t);

/* 1 when krexd holds t frozen but its own freeze file says thawed (another thawed it). */
int freezer_ext_thawed_under(const struct freezer *f, const struct freezer_target *t);

/* krexd lets go of t while another keeps it suspended: drop the state line, leave it frozen. */
void freezer_ext_handover(struct freezer *f, struct freezer_target *t, freezer_drop_fn drop,
                          void *ctx);

/*
 * 1 if a process of t has SIGKILL pending: Slurm kills a step (scancel, a
 * time limit) by thawing it and then sending SIGKILL, and a task frozen
 * with SIGKILL pending does not die (cgroup v1).
 */
int freezer_ext_kill_pending(const struct freezer *f, const struct freezer_target *t);

/* Thaw t now and leave it so; t stays marked frozen (its state line and undo stay for the thaw). */
int freezer_ext_let_go(struct freezer *f, struct freezer_target *t);

/*
 * cgroup v2: when pid's own cgroup lies below t->cg/user/ (a Slurm step's
 * step_M/user/task_N under step_M), make that t's cgroup.  1 if changed.
 */
int freezer_v2_task_level(const struct freezer *f, struct freezer_target *t, pid_t pid);

/*
 * cgroup v2: enable the cpuset controller below root/sub, level by level from
 * the top of sub down, where a level has it (its cgroup.controllers lists
 * cpuset: the level above gave it); nothing above sub is written.  1 when
 * root/sub's children get it, 0 when not (the cpuset is not delegated to
 * sub: krexd's cgroups then inherit, and isolation moves threads by
 * affinity), -1/errno on a write that failed.
 */
int freezer_v2_cpuset_enable(const char *root, const char *sub);

/*
 * cgroup v2: give cg (a cgroup krexd made) explicit cpuset.cpus and
 * cpuset.mems: those from has in effect (its cpuset.cpus.effective and
 * cpuset.mems.effective), so that moving a process from there to cg does
 * not widen what it may use.  0, or -1/errno.
 */
int freezer_v2_cpuset_own(const char *cg, const char *from);

/* ---- parsers (unit-tested) ---- */

/* "frozen 0|1" from cgroup.events text; 0 or -1 if absent. */
int freezer_parse_events(const char *text, int *frozen);

/*
 * From one /proc/self/mountinfo line: the mount point of a cgroup2 mount
 * (ctrl NULL) or of a v1 cgroup mount carrying controller ctrl.  1 if the line
 * matches, 0 if not.
 */
int freezer_parse_mountinfo(const char *line, const char *ctrl, char *mnt, size_t mntlen);

/*
 * favordynmods (krexd/cgfavor.c, krexd.conf(5)): say whether f's hierarchy
 * has it and, with want, turn it on where the kernel lets (cgroup2).  1 on,
 * 0 off, -1 unknown or no cgroup freezer; logs which.
 */
int freezer_favordynmods(const struct freezer *f, int want);
/* From one mountinfo line: the super options of the cgroup mount at point.  1 or 0. */
int cgfavor_parse_line(const char *line, const char *point, char *opts, size_t len);
/* 1 if the comma list of mount options opts holds opt. */
int mount_opt_has(const char *opts, const char *opt);
/* 1 (its name in bad) if opts holds a super option a cgroup2 reconfigure
 * would clear that krexd does not pass back (or is too long to read), 0 if none. */
int cgfavor_unknown(const char *opts, char *bad, size_t len);

#endif /* KREXD_FREEZER_H */
