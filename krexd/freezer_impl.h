/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * freezer_impl.h - between the freezer's files only (krexd/freezer*.c):
 * freezer.c, the interface (freezer.h), calls down into the signal freezer
 * (freezer_signal.c) and the cgroup mechanics (freezer_cgroup.c); the
 * signal freezer calls pid_protected() of the latter.  Nothing else
 * includes this.
 */
#ifndef KREXD_FREEZER_IMPL_H
#define KREXD_FREEZER_IMPL_H

#include <stddef.h>
#include <sys/types.h>

#include "freezer.h"

/* ---- freezer_cgroup.c ---- */

/* cg/file into out.  0, or -1 (too long). */
int cg_file(char *out, size_t len, const char *cg, const char *file);

/* Write s to (read up to len - 1 bytes of) the file named file of cgroup cg.  0/bytes, or -1/errno. */
int cg_write(const char *cg, const char *file, const char *s);
ssize_t cg_read(const char *cg, const char *file, char *buf, size_t len);

/* First mount point of a cgroup2 mount (ctrl NULL) or of v1 controller ctrl. */
int find_mount(const char *ctrl, char *mnt, size_t len);

/* The first line of /proc/self/mountinfo that match(line, key, out, len)
 * takes (returns 1 for, filling out): 0, or -1 when none or unreadable. */
int mountinfo_find(int (*match)(const char *line, const char *key, char *out, size_t len),
                   const char *key, char *out, size_t len);

/* A mountinfo line's mount point (512 bytes), file system type (64) and
 * super options (512): 0, or -1 for a line without them. */
int mountinfo_fields(const char *line, char *point, char *fstype, char *opts);

/* Make root/sub level by level (with cpuset: each new level gets its parent's cpus and mems). */
int subtree_make(const char *root, const char *sub, int cpuset);

/* Remove root/sub level by level from the leaf up; levels still in use stay. */
void subtree_remove(const char *root, const char *sub);

/* Hold root/sub against another krexd (an exclusive flock on the directory,
 * for as long as the returned fd is open); -1 with errno EWOULDBLOCK when
 * another holds it. */
int subtree_lock(const char *root, const char *sub);

/* Thaw (thaw_file: thaw_value) and remove every p* cgroup under root/subtree. */
void subtree_clean(const char *root, const char *subtree, const char *thaw_file,
                   const char *thaw_value);

/* cgroup.freeze exists in non-root v2 cgroups only (Linux >= 5.2): probe krexd's subtree. */
int v2_usable(const char *mnt, const char *sub);

/* 1 for a process krexd must never stop: itself, slurmd, slurmstepd. */
int pid_protected(pid_t pid);

/* 1 if pred holds for a pid in the cgroup's cgroup.procs, 0 if for none, -1 unreadable. */
int cg_any_pid(const char *cg, int (*pred)(pid_t));

/* 1 if cg or a cgroup below it (depth 8) holds a protected pid. */
int cg_protected_tree(const char *cg, int depth);

/* The absolute cgroup of pid in f's hierarchy.  0 or -1. */
int pid_cgroup(const struct freezer *f, pid_t pid, char *out, size_t len);

/* cgroup v2: t's own cgroup gets the cpus and mems of the cpuset pid is in now. */
int cpuset_v2_make(struct freezer *f, struct freezer_target *t, pid_t pid);

/* cgroup v1: t's cpuset cgroup p<id>, made with the cpus and mems of pid's
 * (freezer_move() moves pid in).  0 or -1. */
int cpuset_make(struct freezer *f, struct freezer_target *t, unsigned id, pid_t pid);

/* cgroup v1: t's cpuset cgroup gets the cpus and mems of where it came from again.  0 or -1. */
int cpuset_recopy(struct freezer *f, struct freezer_target *t);

/* Open (close) the fds a thaw of t needs, with the freeze.  0 or -1/errno. */
int thaw_fds_open(struct freezer *f, struct freezer_target *t);
void thaw_fds_close(struct freezer_target *t);

/* Thaw t through its fds (by path when they could not be opened), read back.  0 or -1/errno. */
int thaw_do(struct freezer *f, struct freezer_target *t);

/* Thaw the cgroup at cg by path (a retry, or a line a previous krexd left).  0 or -1/errno. */
int thaw_path(int kind, const char *cg);

/* Move every pid left in cg to back (else to root), then remove cg.  0 when
 * cg is gone, -1 with errno (EBUSY: a task of it is still exiting). */
int cg_remove(const char *cg, const char *back, const char *root);

/* 1 if some cgroup strictly above cg (up to root) has "1" in cgroup.freeze. */
int v2_ancestor_frozen(const char *root, const char *cg);

/* 1 if /proc/PID/status says SIGKILL is pending (SigPnd or ShdPnd). */
int pid_kill_pending(pid_t pid);

/* ---- freezer_signal.c ---- */

/* freezer_prepare() with signals: t's stop list from the batch's /proc snapshot, each pid recorded. */
int stop_prepare(struct freezer *f, struct freezer_target *t, freezer_rec_fn rec, void *ctx);

/* Signal the next wave of t's stop list: 1 when every entry is stopped (or gone), 0 not yet, -1. */
int stop_advance(struct freezer_target *t);

/* freezer_poll() with signals: the next wave; once all stopped, the rescan for late forks. */
int stop_poll(struct freezer *f, struct freezer_target *t);

/* Continue what t's stop list stopped, children before parents; drop (may be NULL) gets each line. */
void stop_cont_all(struct freezer_target *t, freezer_drop_fn drop, void *ctx);

/* Forget t's stop list (close its pidfds). */
void stop_free(struct freezer_target *t);

/* 1 if pid is stopped (SIGSTOP, SIGTSTP, a tracer): state T or t. */
int pid_stopped(pid_t pid);

/* 1 if pid is one krexd stopped itself (signals). */
int pid_ours(const struct freezer_target *t, pid_t pid);

#endif /* KREXD_FREEZER_IMPL_H */
