/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * freezer_signal.c - the signal freezer (see freezer.h): SIGSTOP every pid of
 * a participant, parents before children, SIGCONT children before parents
 * (proctree.h), with one /proc snapshot per batch of freezes.
 */
#include "config.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "defs.h"
#include "freezer.h"
#include "freezer_impl.h"
#include "log.h"
#include "proc.h"
#include "proctree.h"

/* ---- freezing ---- */

/* A snapshot of /proc (pid, parent), so that a batch of signal freezes reads it once. */
struct proc_ent {
	pid_t pid, ppid;
};
static struct proc_ent *snap;
static size_t nsnap;
static int round_on;   /* freezer_round_begin: rescans wait for freezer_rescan */
static int round_snap; /* the round's snapshot is taken */

static int ent_cmp(const void *a, const void *b)
{
	pid_t x = ((const struct proc_ent *)a)->pid, y = ((const struct proc_ent *)b)->pid;

	return x < y ? -1 : x > y;
}

void freezer_snapshot(const struct freezer *f)
{
	struct proc_ent *n;
	struct dirent *e;
	size_t cap = 0;
	char st;
	DIR *d;

	nsnap = 0;
	if (f->kind != FREEZER_SIGNAL || !(d = opendir("/proc")))
		return;
	while ((e = readdir(d))) {
		pid_t pid, pp;
		if (!isdigit((unsigned char)e->d_name[0]))
			continue;
		pid = (pid_t)atoi(e->d_name);
		if (proc_state(pid, &st, &pp) < 0)
			continue;
		if (nsnap == cap) {
			cap = cap ? cap * 2 : 256;
			n = realloc(snap, cap * sizeof(*n));
			if (!n)
				break;
			snap = n;
		}
		snap[nsnap].pid = pid;
		snap[nsnap++].ppid = pp;
	}
	closedir(d);
	qsort(snap, nsnap, sizeof(*snap), ent_cmp);
}

static pid_t snap_parent(pid_t pid)
{
	struct proc_ent key = {pid, 0}, *e = bsearch(&key, snap, nsnap, sizeof(*snap), ent_cmp);

	return e ? e->ppid : 0;
}

/* pid is root or below it, by the snapshot. */
static int snap_descends(pid_t pid, pid_t root)
{
	int depth;

	for (depth = 0; depth < 64 && pid > 1; depth++, pid = snap_parent(pid))
		if (pid == root)
			return 1;
	return 0;
}

/*
 * Every pid of t (signals): root, extra pids and their descendants, but not
 * those stopped already (by Slurm's proctrack/linuxproc suspend, a shell's
 * job control): krexd's SIGCONT must not continue what another stopped.
 * Caller frees.
 */
static pid_t *signal_pids(const struct freezer_target *t, size_t *n)
{
	pid_t *v = calloc(nsnap + 1, sizeof(*v));
	size_t i, j;

	*n = 0;
	if (!v)
		return NULL;
	for (i = 0; i < nsnap; i++) {
		pid_t pid = snap[i].pid;
		int in = snap_descends(pid, t->root);
		for (j = 0; !in && j < t->nextra; j++)
			in = snap_descends(pid, t->extra[j]);
		if (in && !pid_protected(pid) && !pid_stopped(pid))
			v[(*n)++] = pid;
	}
	return v;
}

#ifndef SYS_pidfd_send_signal
#define SYS_pidfd_send_signal 424
#endif

/*
 * A pidfd of pid, checked to be the process of the snapshot: its parent is
 * still ppid after the open (a pid that exited and was reused since has
 * another).  -1 where the kernel has no pidfds or fds run short; -2 when pid
 * is not that one.
 */
static int pid_pin(pid_t pid, pid_t ppid)
{
	int fd = proc_pidfd(pid);
	struct rlimit rl;
	pid_t pp;
	char st;

	if (fd < 0)
		return -1;
	/* a target of thousands of processes must not eat the fds kept for thaws and
	 * undos: near the limit, pids are signalled by number as before */
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
	    (rlim_t)fd + 2 * KREX_DEFAULT_RESERVE_FDS >= rl.rlim_cur) {
		close(fd);
		return -1;
	}
	if (proc_state(pid, &st, &pp) < 0 || (pp != ppid && pp != 1)) {
		close(fd);
		return -2;
	}
	return fd;
}

/* Signal a stopped-list entry: through its pidfd (never a recycled pid), else by pid. */
static void stop_signal(const struct freezer_target *t, size_t i, int sig)
{
	if (t->stopfd && t->stopfd[i] >= 0)
		syscall(SYS_pidfd_send_signal, t->stopfd[i], sig, NULL, 0);
	else
		kill(t->stopped[i], sig);
}

void stop_free(struct freezer_target *t)
{
	size_t i;

	for (i = 0; t->stopfd && i < t->nstopped; i++)
		if (t->stopfd[i] >= 0)
			close(t->stopfd[i]);
	free(t->stopped);
	free(t->stopfd);
	free(t->stopppid);
	free(t->stopsent);
	t->stopped = NULL;
	t->stopfd = NULL;
	t->stopppid = NULL;
	t->stopsent = NULL;
	t->nstopped = 0;
}

/* Room for cap entries in t's stopped list.  0 or -1. */
static int stop_grow(struct freezer_target *t, size_t cap)
{
	pid_t *ns, *np;
	int *nf;
	unsigned char *nsent;

	if ((ns = realloc(t->stopped, (cap + 1) * sizeof(*ns))))
		t->stopped = ns;
	if ((nf = realloc(t->stopfd, (cap + 1) * sizeof(*nf))))
		t->stopfd = nf;
	if ((np = realloc(t->stopppid, (cap + 1) * sizeof(*np))))
		t->stopppid = np;
	if ((nsent = realloc(t->stopsent, (cap + 1) * sizeof(*nsent))))
		t->stopsent = nsent;
	return ns && nf && np && nsent ? 0 : -1;
}

/*
 * Signal, in waves, the entries not signalled yet whose parent in the list
 * is seen stopped (or that have none in it): a parent is stopped before its
 * child stops, so that su, runuser, sudo or a shell that waits for it with
 * WUNTRACED never sees it stop (proctree.h).  A process in uninterruptible
 * sleep (D) with its SIGSTOP sent counts as stopped, as the cgroup
 * freezers count it: it is not in wait() and stops before it runs user code
 * again.  The common one is a vfork() parent (dash runs commands with
 * vfork) whose child was stopped before its exec: it waits for the child
 * until the thaw, and would otherwise hold the freeze to its timeout.
 * Returns 1 when every entry is stopped (or gone), 0 while some are not,
 * -1 without memory.
 */
int stop_advance(struct freezer_target *t)
{
	struct proc_index *k;
	size_t i, n = t->nstopped;
	long hit;
	unsigned char *dstate;
	int all = 1;
	pid_t pp;
	char st;

	k = proc_index(t->stopped, n);
	dstate = calloc(n + 1, 1);
	if (!k || !dstate) {
		free(k);
		free(dstate);
		return -1;
	}
	for (i = 0; i < n; i++) {
		if (t->stopsent[i] != 1)
			continue;
		if (proc_state(t->stopped[i], &st, &pp) < 0 || proc_state_still(st))
			t->stopsent[i] = 2;
		else
			dstate[i] = st == 'D';
	}
	for (i = 0; i < n; i++) {
		if (t->stopsent[i] == 2)
			continue;
		if (t->stopsent[i] == 1) {
			if (!dstate[i])
				all = 0;
			continue;
		}
		all = 0;
		hit = proc_index_find(k, n, t->stopppid[i]);
		if (hit >= 0 && t->stopsent[hit] != 2 && !dstate[hit])
			continue; /* its parent does not stand still yet */
		stop_signal(t, i, SIGSTOP);
		t->stopsent[i] = 1;
	}
	free(k);
	free(dstate);
	return all;
}

/*
 * Continue what t's stop list stopped, children before parents (a parent
 * continued first could see its child still stopped), each unless another
 * asked it to stop meanwhile (proc_cont).  drop, when given, gets each line.
 */
void stop_cont_all(struct freezer_target *t, freezer_drop_fn drop, void *ctx)
{
	unsigned *depth = calloc(t->nstopped + 1, sizeof(*depth));
	size_t *idx = calloc(t->nstopped + 1, sizeof(*idx)), i, j;
	char line[64];
	int kept = 0;

	if (depth && idx)
		proc_depths(t->stopped, t->stopppid, t->nstopped, depth); /* NULL: by /proc */
	for (i = 0; i < t->nstopped; i++) {
		if (depth && idx && i == 0)
			proc_order(depth, t->nstopped, idx, 1);
		j = depth && idx ? idx[i] : t->nstopped - 1 - i;
		if ((!t->stopsent || t->stopsent[j]) &&
		    proc_cont(t->stopped[j], t->stopfd ? t->stopfd[j] : -1,
		              t->stopsent && t->stopsent[j] == 2) == 1)
			kept++;
		snprintf(line, sizeof(line), "pid %d", (int)t->stopped[j]);
		if (drop)
			drop(ctx, line);
	}
	if (kept)
		log_info(
		        "signal freezer: %d process(es) of pid %d left stopped: a stop signal came for them while krexd held them (a shell's Ctrl-Z, Slurm's suspend)",
		        kept, (int)t->root);
	free(depth);
	free(idx);
}

/* Add pid (child of ppid in the snapshot) to t's stopped list, recorded.  1 added, 0 skipped, -1. */
static int stop_add(struct freezer_target *t, pid_t pid, pid_t ppid, size_t cap)
{
	char line[64];
	int fd = pid_pin(pid, ppid);

	if (fd == -2 || t->nstopped >= cap)
		return 0; /* exited meanwhile */
	snprintf(line, sizeof(line), "pid %d", (int)pid);
	if (t->rec && t->rec(t->rec_ctx, line) < 0) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	t->stopped[t->nstopped] = pid;
	t->stopppid[t->nstopped] = ppid;
	t->stopsent[t->nstopped] = 0;
	t->stopfd[t->nstopped++] = fd;
	return 1;
}

/*
 * Make t's stopped list from the snapshot: pids pinned by pidfds and
 * recorded, parents before children (the state file then lists them in the
 * order they are stopped, and a recovery undoes them newest first).
 */
static int stop_list(struct freezer_target *t)
{
	size_t n, i, *idx = NULL;
	pid_t *v = signal_pids(t, &n), *pp = NULL;
	unsigned *depth = NULL;
	int rc = -1;

	if (!v)
		return -1;
	stop_free(t);
	pp = calloc(n + 1, sizeof(*pp));
	depth = calloc(n + 1, sizeof(*depth));
	idx = calloc(n + 1, sizeof(*idx));
	if (!pp || !depth || !idx || stop_grow(t, n) < 0)
		goto out;
	for (i = 0; i < n; i++)
		pp[i] = snap_parent(v[i]);
	proc_depths(v, pp, n, depth);
	proc_order(depth, n, idx, 0);
	for (i = 0; i < n; i++)
		if (stop_add(t, v[idx[i]], pp[idx[i]], n) < 0)
			goto out;
	rc = 0;
out:
	free(v);
	free(pp);
	free(depth);
	free(idx);
	return rc;
}

/*
 * Signals, once every listed pid stopped: scan /proc again; a process of t
 * forked after the snapshot is added, recorded and stopped.  Returns how
 * many were added (0: stable), or -1.
 */
static int stop_rescan(struct freezer *f, struct freezer_target *t)
{
	size_t n, i, j, cap;
	pid_t *v;
	int added = 0;

	if (!round_snap)
		freezer_snapshot(f);
	round_snap = round_on; /* in a round: one snapshot for every target's rescan */
	v = signal_pids(t, &n);
	if (!v)
		return -1;
	cap = t->nstopped + n;
	if (stop_grow(t, cap) < 0) {
		free(v);
		nsnap = 0;
		return -1;
	}
	for (i = 0; i < n; i++) {
		for (j = 0; j < t->nstopped && t->stopped[j] != v[i]; j++)
			;
		if (j < t->nstopped)
			continue;
		if (stop_add(t, v[i], snap_parent(v[i]), cap) > 0)
			added++;
	}
	free(v);
	/* the new ones are stopped in waves, from their parents down */
	if (added && stop_advance(t) < 0)
		added = -1;
	if (!round_on)
		nsnap = 0; /* the next batch takes a fresh snapshot */
	if (added)
		log_debug(
		        "signal freezer: %d process(es) of pid %d forked after the snapshot, stopped too",
		        added, (int)t->root);
	return added;
}

int stop_prepare(struct freezer *f, struct freezer_target *t, freezer_rec_fn rec, void *ctx)
{
	if (!nsnap)
		freezer_snapshot(f);
	t->rec = rec;
	t->rec_ctx = ctx;
	t->frozen = 1;
	return stop_list(t);
}

int stop_poll(struct freezer *f, struct freezer_target *t)
{
	int frozen;

	/* the next wave, once the last one stands still */
	frozen = stop_advance(t);
	if (frozen <= 0)
		return frozen;
	/* all stopped: stable only if no process of t was forked after the snapshot */
	if (round_on) {
		t->rescan_due = 1;
		return 0;
	}
	frozen = stop_rescan(f, t);
	return frozen < 0 ? -1 : frozen == 0;
}

void freezer_round_begin(struct freezer *f)
{
	round_on = f->kind == FREEZER_SIGNAL;
	round_snap = 0;
}

int freezer_rescan(struct freezer *f, struct freezer_target *t)
{
	int added;

	if (!t->rescan_due)
		return 0;
	t->rescan_due = 0;
	added = stop_rescan(f, t);
	return added < 0 ? -1 : added == 0;
}

void freezer_round_end(struct freezer *f)
{
	(void)f;
	if (round_on)
		nsnap = 0; /* the next batch takes a fresh snapshot */
	round_on = round_snap = 0;
}

/* ---- someone else's suspend: a stop krexd did not send ---- */

/* 1 if pid is stopped (SIGSTOP, SIGTSTP, a tracer): state T or t. */
int pid_stopped(pid_t pid)
{
	char st;
	pid_t pp;

	return pid > 0 && proc_state(pid, &st, &pp) == 0 && (st == 'T' || st == 't');
}

/* 1 if pid is one krexd stopped itself (signals). */
int pid_ours(const struct freezer_target *t, pid_t pid)
{
	size_t i;

	for (i = 0; t->frozen && i < t->nstopped; i++)
		if (t->stopped[i] == pid)
			return !t->stopsent ||
			       t->stopsent[i] != 0; /* not signalled yet: not ours */
	return 0;
}
