/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * freezer.c - cgroup v2, cgroup v1 and signal freezers (see freezer.h): the
 * interface and participant setup; the cgroup mechanics are in
 * freezer_cgroup.c, the signal freezer in freezer_signal.c.
 */
#include "config.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "conf.h"
#include "defs.h"
#include "fdio.h"
#include "freezer.h"
#include "freezer_impl.h"
#include "log.h"
#include "proc.h"
#include "proctree.h"
#include "timeutil.h"

#define CG_V2_DEFAULT "/sys/fs/cgroup"

/* ---- backend choice ---- */

/* subtree_lock() failed on root/sub: the error krexd stops with; -1. */
static int subtree_refused(const char *root, const char *sub, char *err, size_t errlen)
{
	if (errno == EWOULDBLOCK)
		snprintf(
		        err, errlen,
		        "cgroup %s/%s is in use by another krexd (give each krexd on a node its own cgroup_subtree)",
		        root, sub);
	else
		snprintf(err, errlen, "cgroup %s/%s: %s", root, sub, strerror(errno));
	return -1;
}

static void freezer_unlock(struct freezer *f)
{
	int i;

	for (i = 0; i < 2; i++)
		if (f->lock_fd[i] >= 0) {
			close(f->lock_fd[i]);
			f->lock_fd[i] = -1;
		}
}

int freezer_init(struct freezer *f, int want, const char *sub, char *err, size_t errlen)
{
	char v2[256] = "", v1[256] = "";
	int have_v2, have_v1;

	memset(f, 0, sizeof(*f));
	f->lock_fd[0] = f->lock_fd[1] = -1;
	if (!sub[0] || sub[0] == '/' || strstr(sub, "..") ||
	    xstrcpy(f->sub, sizeof(f->sub), sub) < 0) {
		snprintf(err, errlen, "bad cgroup subtree '%s'", sub);
		return -1;
	}
	have_v2 = find_mount(NULL, v2, sizeof(v2)) == 0 && v2_usable(v2, sub);
	have_v1 = find_mount("freezer", v1, sizeof(v1)) == 0;
	if (want == FREEZER_AUTO) {
		if (have_v2 && !strcmp(v2, CG_V2_DEFAULT))
			want = FREEZER_CGROUP2;
		else if (have_v1)
			want = FREEZER_CGROUP1;
		else if (have_v2)
			want = FREEZER_CGROUP2;
		else
			want = FREEZER_SIGNAL;
	}
	f->kind = want;
	if (have_v2 && want != FREEZER_CGROUP2) {
		/* The probe's levels go, unless another krexd holds the subtree
		 * there (a hybrid node: it runs the v2 freezer on this subtree;
		 * its cgroups must stay, and this krexd stops at its lock below). */
		int fd = subtree_lock(v2, sub);
		if (fd >= 0) {
			subtree_remove(v2, sub);
			close(fd);
		}
	}
	if (want == FREEZER_CGROUP2) {
		if (!have_v2) {
			snprintf(err, errlen,
			         "freezer=cgroup2: no cgroup2 mount with cgroup.freeze");
			return -1;
		}
		snprintf(f->root, sizeof(f->root), "%s", v2);
	} else if (want == FREEZER_CGROUP1) {
		if (!have_v1) {
			snprintf(err, errlen, "freezer=cgroup1: no cgroup v1 freezer mounted");
			return -1;
		}
		snprintf(f->root, sizeof(f->root), "%s", v1);
	}
	/* A v1 cpuset hierarchy serves the isolation whichever cgroup freezer
	 * runs (a hybrid node: the v2 freezer, v1 cpusets). */
	if (want != FREEZER_SIGNAL &&
	    find_mount("cpuset", f->cpuset_root, sizeof(f->cpuset_root)) < 0)
		f->cpuset_root[0] = '\0';
	if (f->root[0] && subtree_make(f->root, f->sub, 0) < 0) {
		snprintf(err, errlen, "cgroup %s/%s: %s", f->root, f->sub, strerror(errno));
		return -1;
	}
	if (f->root[0] && (f->lock_fd[0] = subtree_lock(f->root, f->sub)) < 0)
		return subtree_refused(f->root, f->sub, err, errlen);
	if (want == FREEZER_CGROUP2 && !f->cpuset_root[0]) {
		int rc = freezer_v2_cpuset_enable(f->root, f->sub);
		if (rc < 0)
			log_warn(
			        "cgroup %s/%s: cannot enable the cpuset controller: %s (isolation moves threads by affinity)",
			        f->root, f->sub, strerror(errno));
		else if (rc == 0)
			log_info(
			        "cgroup %s/%s: no cpuset controller delegated here: isolation moves threads by affinity",
			        f->root, f->sub);
		f->v2_cpuset = rc == 1;
	}
	if (f->cpuset_root[0] && subtree_make(f->cpuset_root, f->sub, 1) < 0) {
		log_warn("cpuset cgroup %s/%s: %s (isolation will not use it)", f->cpuset_root,
		         f->sub, strerror(errno));
		f->cpuset_root[0] = '\0';
	}
	if (f->cpuset_root[0] && (f->lock_fd[1] = subtree_lock(f->cpuset_root, f->sub)) < 0) {
		subtree_refused(f->cpuset_root, f->sub, err, errlen);
		freezer_unlock(f);
		return -1;
	}
	return 0;
}

const char *freezer_name(const struct freezer *f)
{
	return config_freezer_name(f->kind);
}

/* ---- who is what ---- */

int freezer_key(const struct freezer *f, pid_t pid, struct freezer_key *key)
{
	key->have_cg = 0;
	if (f->kind == FREEZER_SIGNAL)
		return 0;
	if (pid_cgroup(f, pid, key->cg, sizeof(key->cg)) < 0)
		return -1;
	key->have_cg = 1;
	return 0;
}

int freezer_contains_key(const struct freezer *f, const struct freezer_target *t, pid_t pid,
                         const struct freezer_key *key)
{
	size_t i;

	if (f->kind != FREEZER_SIGNAL)
		return key->have_cg && !strcmp(key->cg, t->cg);
	for (i = 0; i < t->nextra; i++)
		if (t->extra[i] == pid)
			return 1;
	return proc_descends(pid, t->root);
}

int freezer_contains(const struct freezer *f, const struct freezer_target *t, pid_t pid)
{
	struct freezer_key key;

	return freezer_key(f, pid, &key) == 0 && freezer_contains_key(f, t, pid, &key);
}

/* ---- participant setup ---- */

int freezer_adopt_prepare(struct freezer *f, struct freezer_target *t, unsigned id, pid_t pid,
                          const char *cgroup)
{
	struct stat sb;

	memset(t, 0, sizeof(*t));
	t->root = pid;
	t->thaw_fd = t->thaw_chk_fd = -1;
	if (f->kind == FREEZER_SIGNAL)
		return 0;
	if (cgroup && cgroup[0]) {
		if (strstr(cgroup, "..")) {
			errno = EINVAL;
			return -1;
		}
		if (!strncmp(cgroup, f->root, strlen(f->root)) && cgroup[strlen(f->root)] == '/') {
			if (xstrcpy(t->cg, sizeof(t->cg), cgroup) < 0)
				return -1;
		} else if (xsnprintf(t->cg, sizeof(t->cg), "%s%s%s", f->root,
		                     cgroup[0] == '/' ? "" : "/", cgroup) < 0)
			return -1;
		if (stat(t->cg, &sb) < 0 || !S_ISDIR(sb.st_mode))
			return -1;
		if (freezer_v2_task_level(f, t, pid) < 0)
			return -1;
		if (!strcmp(t->cg, f->root) || cg_protected_tree(t->cg, 0)) {
			errno = EPERM;
			return -1;
		}
		return 0;
	}
	if (pid_protected(pid)) {
		errno = EPERM;
		return -1;
	}
	if (xsnprintf(t->cg, sizeof(t->cg), "%s/%s/p%u", f->root, f->sub, id) < 0)
		return -1;
	if (pid_cgroup(f, pid, t->orig_cg, sizeof(t->orig_cg)) < 0)
		snprintf(t->orig_cg, sizeof(t->orig_cg), "%s", f->root);
	if (mkdir(t->cg, 0755) < 0 && errno != EEXIST)
		return -1;
	t->owned = 1;
	/* Before the pid goes in: it never runs on more than it had. */
	if (f->kind == FREEZER_CGROUP2 && f->v2_cpuset && cpuset_v2_make(f, t, pid) < 0)
		log_warn(
		        "participant %u: cgroup %s: explicit cpuset: %s (isolation moves its threads by affinity)",
		        id, t->cg, strerror(errno));
	if (f->cpuset_root[0] && cpuset_make(f, t, id, pid) < 0)
		log_warn("participant %u: cpuset cgroup: %s (isolation will not use it)", id,
		         strerror(errno));
	return 1;
}

int freezer_move(const char *cg, const char *cpuset_cg, pid_t pid, int *cpuset_err)
{
	char pidbuf[32];

	*cpuset_err = 0;
	snprintf(pidbuf, sizeof(pidbuf), "%d", (int)pid);
	if (cg_write(cg, "cgroup.procs", pidbuf) < 0)
		return -1;
	if (cpuset_cg[0] && cg_write(cpuset_cg, "cgroup.procs", pidbuf) < 0)
		*cpuset_err = errno ? errno : EIO;
	return 0;
}

void freezer_moved(struct freezer *f, struct freezer_target *t, unsigned id, int cpuset_err,
                   int recopy)
{
	if (cpuset_err) {
		log_warn("participant %u: cpuset cgroup: %s (isolation will not use it)", id,
		         strerror(cpuset_err));
		rmdir(t->cpuset_cg);
		t->cpuset_cg[0] = '\0';
	}
	if (!recopy)
		return;
	if (t->cpuset_cg[0] && cpuset_recopy(f, t) < 0)
		log_warn("participant %u: cpuset cgroup %s: its cpus again from %s: %s", id,
		         t->cpuset_cg, t->orig_cpuset, strerror(errno));
	if (f->kind == FREEZER_CGROUP2 && t->cpuset_from[0] &&
	    freezer_v2_cpuset_own(t->cg, t->cpuset_from) < 0)
		log_warn("participant %u: cgroup %s: its cpus again from %s: %s", id, t->cg,
		         t->cpuset_from, strerror(errno));
}

int freezer_add_pid(struct freezer_target *t, pid_t pid)
{
	pid_t *n = realloc(t->extra, (t->nextra + 1) * sizeof(*n));

	if (!n)
		return -1;
	t->extra = n;
	t->extra[t->nextra++] = pid;
	return 0;
}

void freezer_line(const struct freezer *f, const struct freezer_target *t, char *buf, size_t len)
{
	if (f->kind == FREEZER_SIGNAL)
		buf[0] = '\0';
	else
		snprintf(buf, len, "%s %s", f->kind == FREEZER_CGROUP1 ? "cgroup1" : "cgroup2",
		         t->cg);
}

int freezer_prepare(struct freezer *f, struct freezer_target *t, freezer_rec_fn rec, void *ctx)
{
	char line[600];

	if (f->kind == FREEZER_SIGNAL)
		return stop_prepare(f, t, rec, ctx);
	if (cg_protected_tree(t->cg, 0)) {
		errno = EPERM;
		return -1;
	}
	if (thaw_fds_open(f, t) < 0)
		return -1; /* no fd for its thaw now: do not freeze it */
	snprintf(line, sizeof(line), "%s %s", f->kind == FREEZER_CGROUP1 ? "cgroup1" : "cgroup2",
	         t->cg);
	if (rec(ctx, line) < 0)
		return -1;
	t->frozen = 1;
	return 0;
}

int freezer_start(struct freezer *f, struct freezer_target *t)
{

	if (f->kind == FREEZER_SIGNAL)
		return stop_advance(t) < 0 ? -1 : 0;
	if (f->kind == FREEZER_CGROUP1)
		return cg_write(t->cg, "freezer.state", "FROZEN");
	return cg_write(t->cg, "cgroup.freeze", "1");
}

int freezer_poll(struct freezer *f, struct freezer_target *t)
{
	char buf[256];
	int frozen;

	if (f->kind == FREEZER_CGROUP1) {
		if (cg_read(t->cg, "freezer.state", buf, sizeof(buf)) < 0)
			return -1;
		/* FREEZING until every task stopped; write FROZEN again to retry
		 * tasks the first attempt could not stop (kernel freezer docs). */
		if (!strncmp(buf, "FROZEN", 6))
			return 1;
		cg_write(t->cg, "freezer.state", "FROZEN");
		return 0;
	}
	if (f->kind == FREEZER_CGROUP2) {
		if (cg_read(t->cg, "cgroup.events", buf, sizeof(buf)) < 0 ||
		    freezer_parse_events(buf, &frozen) < 0)
			return -1;
		return frozen;
	}
	return stop_poll(f, t);
}

int freezer_thaw(struct freezer *f, struct freezer_target *t, freezer_drop_fn drop, void *ctx)
{
	char line[600];

	if (!t->frozen)
		return 0;
	t->frozen = 0;
	if (f->kind == FREEZER_SIGNAL) {
		stop_cont_all(t, drop, ctx);
		stop_free(t);
		return 0;
	}
	if (thaw_do(f, t) < 0)
		return -1; /* its line stays: the caller retries */
	freezer_line(f, t, line, sizeof(line));
	drop(ctx, line);
	return 0;
}

/* cg (under cpuset_root when cpuset) could not go yet: retried by freezer_tick. */
static void pending_add(struct freezer *f, const char *cg, const char *back, int cpuset)
{
	struct freezer_pending *q;

	if (errno != EBUSY || f->npending >= FREEZER_PENDING_MAX) {
		log_warn("could not remove cgroup %s: %s", cg, strerror(errno));
		return;
	}
	q = &f->pending[f->npending++];
	snprintf(q->cg, sizeof(q->cg), "%s", cg);
	snprintf(q->back, sizeof(q->back), "%s", back);
	q->cpuset = cpuset;
	q->since = time_now_ns();
	if (!f->retry_at)
		f->retry_at = q->since + FREEZER_PENDING_RETRY_NS;
	log_debug("cgroup %s: a task of it is still exiting; removed once it is gone", cg);
}

/* One retry of pending i: 1 when it is gone (and taken off the list). */
static int pending_retry(struct freezer *f, size_t i)
{
	struct freezer_pending *q = &f->pending[i];

	if (cg_remove(q->cg, q->back, q->cpuset ? f->cpuset_root : f->root) < 0)
		return 0;
	log_debug("cgroup %s removed (its last task's exit done)", q->cg);
	f->pending[i] = f->pending[--f->npending];
	return 1;
}

void freezer_tick(struct freezer *f, uint64_t now)
{
	size_t i = 0;

	while (i < f->npending) {
		if (pending_retry(f, i))
			continue;
		if (now - f->pending[i].since >= FREEZER_PENDING_GIVEUP_NS) {
			log_warn("could not remove cgroup %s: %s (after %llu s)", f->pending[i].cg,
			         strerror(errno),
			         (unsigned long long)(FREEZER_PENDING_GIVEUP_NS / 1000000000ull));
			f->pending[i] = f->pending[--f->npending];
			continue;
		}
		i++;
	}
	f->retry_at = f->npending ? now + FREEZER_PENDING_RETRY_NS : 0;
}

void freezer_release(struct freezer *f, struct freezer_target *t, freezer_drop_fn drop, void *ctx)
{
	freezer_thaw(f, t, drop, ctx);
	if (t->owned && cg_remove(t->cg, t->orig_cg, f->root) < 0)
		pending_add(f, t->cg, t->orig_cg, 0);
	if (t->cpuset_cg[0] && cg_remove(t->cpuset_cg, t->orig_cpuset, f->cpuset_root) < 0)
		pending_add(f, t->cpuset_cg, t->orig_cpuset, 1);
	thaw_fds_close(t);
	free(t->extra);
	stop_free(t);
	memset(t, 0, sizeof(*t));
}

int freezer_undo_line(const char *line)
{
	long pid;

	if (!strncmp(line, "cgroup1 ", 8) || !strncmp(line, "cgroup2 ", 8))
		return thaw_path(line[6] == '1' ? FREEZER_CGROUP1 : FREEZER_CGROUP2, line + 8);
	if (!strncmp(line, "pid ", 4) && (pid = strtol(line + 4, NULL, 10)) > 1)
		return proc_cont((pid_t)pid, -1, 0) < 0 ? -1 : 0;
	errno = EINVAL;
	return -1;
}

int freezer_cleanup(struct freezer *f)
{
	if (f->kind == FREEZER_CGROUP1)
		subtree_clean(f->root, f->sub, "freezer.state", "THAWED");
	else if (f->kind == FREEZER_CGROUP2)
		subtree_clean(f->root, f->sub, "cgroup.freeze", "0");
	if (f->cpuset_root[0])
		subtree_clean(f->cpuset_root, f->sub, NULL, NULL);
	return 0;
}

void freezer_fini(struct freezer *f)
{
	uint64_t end = time_now_ns() + FREEZER_PENDING_STOP_NS;
	struct timespec ts = {0, 10 * 1000000L};

	while (f->npending && time_now_ns() < end) {
		freezer_tick(f, time_now_ns());
		if (f->npending)
			nanosleep(&ts, NULL);
	}
	for (; f->npending; f->npending--)
		log_warn("could not remove cgroup %s: a task of it was still exiting at the stop",
		         f->pending[f->npending - 1].cg);
	subtree_remove(f->root, f->sub);
	subtree_remove(f->cpuset_root, f->sub);
	freezer_unlock(f); /* after the removal: a krexd starting now makes its own */
}

/* ---- someone else's suspend (Slurm's scontrol suspend, a SIGSTOP) ---- */

int freezer_ext_state(const struct freezer *f, const struct freezer_target *t, const pid_t *pids,
                      size_t n)
{
	char buf[64];
	size_t i;
	int frozen;

	if (f->kind == FREEZER_CGROUP1 && t->cg[0]) {
		if (cg_read(t->cg, "freezer.parent_freezing", buf, sizeof(buf)) > 0 &&
		    buf[0] == '1')
			return FREEZER_EXT_FROZEN;
		/* One freezer.state for krexd and the other: only while krexd
		 * holds none does FROZEN say the other froze it. */
		if (!t->frozen && cg_read(t->cg, "freezer.state", buf, sizeof(buf)) > 0 &&
		    strncmp(buf, "THAWED", 6))
			return FREEZER_EXT_FROZEN;
	} else if (f->kind == FREEZER_CGROUP2 && t->cg[0]) {
		if (v2_ancestor_frozen(f->root, t->cg))
			return FREEZER_EXT_FROZEN;
		if (!t->frozen &&
		    ((cg_read(t->cg, "cgroup.freeze", buf, sizeof(buf)) > 0 && buf[0] == '1') ||
		     (cg_read(t->cg, "cgroup.events", buf, sizeof(buf)) > 0 &&
		      freezer_parse_events(buf, &frozen) == 0 && frozen)))
			return FREEZER_EXT_FROZEN;
	}
	if (pid_stopped(t->root) && !pid_ours(t, t->root))
		return FREEZER_EXT_STOPPED;
	for (i = 0; i < n; i++)
		if (pid_stopped(pids[i]) && !pid_ours(t, pids[i]))
			return FREEZER_EXT_STOPPED;
	return FREEZER_EXT_NONE;
}

int freezer_ext_watch_path(const struct freezer *f, const struct freezer_target *t, char *out,
                           size_t len)
{
	out[0] = '\0';
	if (!t->cg[0] || f->kind == FREEZER_SIGNAL)
		return -1;
	/* v1: every write to freezer.state (inotify sees writes to cgroupfs
	 * files); v2: cgroup.events changes when an ancestor freezes it too. */
	return cg_file(out, len, t->cg,
	               f->kind == FREEZER_CGROUP1 ? "freezer.state" : "cgroup.events") < 0
	               ? -1
	               : 0;
}

int freezer_ext_shared(const struct freezer *f, const struct freezer_target *t)
{
	return f->kind == FREEZER_CGROUP1 && t->cg[0] && !t->owned;
}

int freezer_ext_thawed_under(const struct freezer *f, const struct freezer_target *t)
{
	char buf[64];

	if (!t->frozen || !t->cg[0])
		return 0;
	if (f->kind == FREEZER_CGROUP1)
		return cg_read(t->cg, "freezer.state", buf, sizeof(buf)) > 0 &&
		       !strncmp(buf, "THAWED", 6);
	if (f->kind == FREEZER_CGROUP2)
		return cg_read(t->cg, "cgroup.freeze", buf, sizeof(buf)) > 0 && buf[0] == '0';
	return 0;
}

void freezer_ext_handover(struct freezer *f, struct freezer_target *t, freezer_drop_fn drop,
                          void *ctx)
{
	char line[600];

	if (!t->frozen || !t->cg[0] || f->kind == FREEZER_SIGNAL) {
		freezer_thaw(f, t, drop, ctx);
		return;
	}
	/* Left frozen for the other, who thaws it when it resumes the job; the
	 * state line goes, so that a krexd restart does not thaw it either. */
	t->frozen = 0;
	snprintf(line, sizeof(line), "%s %s", f->kind == FREEZER_CGROUP1 ? "cgroup1" : "cgroup2",
	         t->cg);
	drop(ctx, line);
}

int freezer_ext_kill_pending(const struct freezer *f, const struct freezer_target *t)
{
	int rc = f->kind == FREEZER_SIGNAL || !t->cg[0] ? -1 : cg_any_pid(t->cg, pid_kill_pending);

	return rc < 0 ? pid_kill_pending(t->root) : rc;
}

int freezer_ext_let_go(struct freezer *f, struct freezer_target *t)
{

	if (f->kind == FREEZER_SIGNAL) {
		if (t->frozen)
			stop_cont_all(t, NULL, NULL);
		return 0;
	}
	return cg_write(t->cg, f->kind == FREEZER_CGROUP1 ? "freezer.state" : "cgroup.freeze",
	                f->kind == FREEZER_CGROUP1 ? "THAWED" : "0");
}
