/*
 * freezer.c - cgroup v2, cgroup v1 and signal freezers (see freezer.h).
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
#include <unistd.h>

#include "conf.h"
#include "defs.h"
#include "fdio.h"
#include "freezer.h"
#include "log.h"

#define CG_V2_DEFAULT "/sys/fs/cgroup"

/* ---- small file helpers ---- */

static int file_write(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC), err;
	ssize_t n;

	if (fd < 0)
		return -1;
	n = write(fd, s, strlen(s));
	err = errno;
	close(fd);
	errno = err;
	return n == (ssize_t)strlen(s) ? 0 : -1;
}

static int cg_file(char *out, size_t len, const char *cg, const char *file)
{
	return xsnprintf(out, len, "%s/%s", cg, file);
}

static int cg_write(const char *cg, const char *file, const char *s)
{
	char p[600];

	return cg_file(p, sizeof(p), cg, file) < 0 ? -1 : file_write(p, s);
}

static ssize_t cg_read(const char *cg, const char *file, char *buf, size_t len)
{
	char p[600];

	return cg_file(p, sizeof(p), cg, file) < 0 ? -1 : file_read(p, buf, len);
}

/* ---- parsers ---- */

int freezer_parse_events(const char *text, int *frozen)
{
	const char *p = text;

	while (p && *p) {
		if (!strncmp(p, "frozen ", 7) && (p[7] == '0' || p[7] == '1')) {
			*frozen = p[7] == '1';
			return 0;
		}
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return -1;
}

int freezer_parse_stat(const char *text, char *state, pid_t *ppid)
{
	/* "PID (comm) S PPID ...": comm may hold anything, so take the last ')'. */
	const char *p = strrchr(text, ')');
	long pp;

	if (!p || p[1] != ' ' || !p[2] || p[3] != ' ')
		return -1;
	*state = p[2];
	if (sscanf(p + 4, "%ld", &pp) != 1)
		return -1;
	*ppid = (pid_t)pp;
	return 0;
}

int freezer_parse_proc_cgroup(const char *text, const char *ctrl, char *out, size_t outlen)
{
	const char *line = text, *c1, *c2, *end;
	size_t clen = ctrl ? strlen(ctrl) : 0, n;

	for (; line && *line; line = end ? end + 1 : NULL) {
		end = strchr(line, '\n');
		c1 = strchr(line, ':');
		if (!c1 || (end && c1 > end))
			continue;
		c2 = strchr(c1 + 1, ':');
		if (!c2 || (end && c2 > end))
			continue;
		if (!ctrl) {
			if (!(c1 - line == 1 && line[0] == '0' && c2 == c1 + 1))
				continue;
		} else {
			/* controllers: comma list between the colons */
			const char *q = c1 + 1;
			int found = 0;
			while (q < c2) {
				const char *comma = memchr(q, ',', (size_t)(c2 - q));
				const char *e = comma ? comma : c2;
				if ((size_t)(e - q) == clen && !strncmp(q, ctrl, clen))
					found = 1;
				q = e + 1;
			}
			if (!found)
				continue;
		}
		n = end ? (size_t)(end - (c2 + 1)) : strlen(c2 + 1);
		if (n + 1 > outlen)
			return -1;
		memcpy(out, c2 + 1, n);
		out[n] = '\0';
		return 0;
	}
	return -1;
}

int freezer_parse_mountinfo(const char *line, const char *ctrl, char *mnt, size_t mntlen)
{
	char point[512], fstype[64], opts[512];
	const char *sep = strstr(line, " - ");
	char *o, *save = NULL;

	if (!sep || sscanf(line, "%*s %*s %*s %*s %511s", point) != 1)
		return 0;
	if (sscanf(sep + 3, "%63s %*s %511s", fstype, opts) != 2)
		return 0;
	if (!ctrl) {
		if (strcmp(fstype, "cgroup2"))
			return 0;
	} else {
		int found = 0;
		if (strcmp(fstype, "cgroup"))
			return 0;
		for (o = strtok_r(opts, ",", &save); o; o = strtok_r(NULL, ",", &save))
			if (!strcmp(o, ctrl))
				found = 1;
		if (!found)
			return 0;
	}
	return xstrcpy(mnt, mntlen, point) < 0 ? 0 : 1;
}

/* First mount point of a cgroup2 mount (ctrl NULL) or of v1 controller ctrl. */
static int find_mount(const char *ctrl, char *mnt, size_t len)
{
	char line[1024];
	FILE *f = fopen("/proc/self/mountinfo", "re");
	int found = 0;

	if (!f)
		return -1;
	while (!found && fgets(line, sizeof(line), f))
		found = freezer_parse_mountinfo(line, ctrl, mnt, len);
	fclose(f);
	return found ? 0 : -1;
}

/* ---- backend choice ---- */

/* Copy cpuset.cpus and cpuset.mems from parent to child (v1 needs both set). */
static int cpuset_copy(const char *parent, const char *child);

/*
 * Make root/sub level by level (sub may hold '/'); with cpuset, give each new
 * level its parent's cpus and mems, which a v1 cpuset needs before a task
 * may enter.  0 or -1/errno.
 */
static int subtree_make(const char *root, const char *sub, int cpuset)
{
	char path[600], parent[600];
	size_t off = strlen(root), i;

	if (xsnprintf(path, sizeof(path), "%s/%s", root, sub) < 0)
		return -1;
	for (i = off + 1;; i++) {
		if (path[i] != '/' && path[i] != '\0')
			continue;
		char c = path[i];
		path[i] = '\0';
		snprintf(parent, sizeof(parent), "%.*s", (int)(strrchr(path, '/') - path), path);
		if (mkdir(path, 0755) == 0) {
			if (cpuset && cpuset_copy(parent, path) < 0)
				return -1;
		} else if (errno != EEXIST)
			return -1;
		path[i] = c;
		if (!c)
			return 0;
	}
}

static void subtree_remove(const char *root, const char *sub);

/* cgroup.freeze exists in non-root v2 cgroups only (Linux >= 5.2): probe our subtree. */
static int v2_usable(const char *mnt, const char *sub)
{
	char p[600];
	struct stat sb;

	if (subtree_make(mnt, sub, 0) < 0)
		return 0;
	snprintf(p, sizeof(p), "%s/%s/cgroup.freeze", mnt, sub);
	return stat(p, &sb) == 0;
}

int freezer_init(struct freezer *f, int want, const char *sub, char *err, size_t errlen)
{
	char v2[256] = "", v1[256] = "";
	int have_v2, have_v1;

	memset(f, 0, sizeof(*f));
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
	if (have_v2 && want != FREEZER_CGROUP2)
		subtree_remove(v2, sub); /* the probe's */
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
		if (find_mount("cpuset", f->cpuset_root, sizeof(f->cpuset_root)) < 0)
			f->cpuset_root[0] = '\0';
	}
	if (f->root[0] && subtree_make(f->root, f->sub, 0) < 0) {
		snprintf(err, errlen, "cgroup %s/%s: %s", f->root, f->sub, strerror(errno));
		return -1;
	}
	if (f->cpuset_root[0] && subtree_make(f->cpuset_root, f->sub, 1) < 0) {
		log_warn("cpuset cgroup %s/%s: %s (isolation will not use it)", f->cpuset_root,
		         f->sub, strerror(errno));
		f->cpuset_root[0] = '\0';
	}
	return 0;
}

const char *freezer_name(const struct freezer *f)
{
	return config_freezer_name(f->kind);
}

/* ---- who is what ---- */

static int proc_stat(pid_t pid, char *state, pid_t *ppid)
{
	char p[64], buf[1024];

	snprintf(p, sizeof(p), "/proc/%d/stat", (int)pid);
	if (file_read(p, buf, sizeof(buf)) <= 0)
		return -1;
	return freezer_parse_stat(buf, state, ppid);
}

/* 1 for a process krexd must never stop: itself, slurmd, slurmstepd. */
static int pid_protected(pid_t pid)
{
	char p[64], comm[64];

	if (pid == getpid() || pid <= 1)
		return 1;
	snprintf(p, sizeof(p), "/proc/%d/comm", (int)pid);
	if (file_read(p, comm, sizeof(comm)) <= 0)
		return 0;
	comm[strcspn(comm, "\n")] = '\0';
	return !strcmp(comm, "slurmd") || !strcmp(comm, "slurmstepd") || !strcmp(comm, "krexd");
}

/* 1 if any pid in the cgroup's cgroup.procs is protected. */
static int cg_protected(const char *cg)
{
	char buf[65536], *p, *e;

	if (cg_read(cg, "cgroup.procs", buf, sizeof(buf)) < 0)
		return 0;
	for (p = buf; *p; p = e) {
		long pid = strtol(p, &e, 10);
		if (e == p)
			break;
		if (pid_protected((pid_t)pid))
			return 1;
		while (*e == '\n')
			e++;
	}
	return 0;
}

/* The absolute cgroup of pid in the hierarchy at root (v1 controller ctrl, or v2). */
static int pid_cgroup_in(const char *root, const char *ctrl, pid_t pid, char *out, size_t len)
{
	char p[64], buf[4096], rel[512];

	snprintf(p, sizeof(p), "/proc/%d/cgroup", (int)pid);
	if (file_read(p, buf, sizeof(buf)) <= 0)
		return -1;
	if (freezer_parse_proc_cgroup(buf, ctrl, rel, sizeof(rel)) < 0)
		return -1;
	/* 0 or -1: xsnprintf returns the length, and callers test == 0 */
	return xsnprintf(out, len, "%s%s", root, strcmp(rel, "/") ? rel : "") < 0 ? -1 : 0;
}

static int pid_cgroup(const struct freezer *f, pid_t pid, char *out, size_t len)
{
	return pid_cgroup_in(f->root, f->kind == FREEZER_CGROUP1 ? "freezer" : NULL, pid, out, len);
}

static int is_descendant(pid_t pid, pid_t root)
{
	char st;
	pid_t pp;
	int depth;

	for (depth = 0; depth < 64 && pid > 1; depth++) {
		if (pid == root)
			return 1;
		if (proc_stat(pid, &st, &pp) < 0)
			return 0;
		pid = pp;
	}
	return 0;
}

int freezer_contains(const struct freezer *f, const struct freezer_target *t, pid_t pid)
{
	char cg[512];
	size_t i;

	if (f->kind != FREEZER_SIGNAL)
		return pid_cgroup(f, pid, cg, sizeof(cg)) == 0 && !strcmp(cg, t->cg);
	for (i = 0; i < t->nextra; i++)
		if (t->extra[i] == pid)
			return 1;
	return is_descendant(pid, t->root);
}

/* ---- participant setup ---- */

static int cpuset_copy(const char *parent, const char *child)
{
	static const char *const files[] = {"cpuset.cpus", "cpuset.mems"};
	char buf[1024];
	int i;

	for (i = 0; i < 2; i++) {
		if (cg_read(parent, files[i], buf, sizeof(buf)) < 0 ||
		    cg_write(child, files[i], buf[0] == '\n' || !buf[0] ? "\n" : buf) < 0)
			return -1;
	}
	return 0;
}

static int cpuset_make(struct freezer *f, struct freezer_target *t, unsigned id, pid_t pid)
{
	char sub[600], pidbuf[32];

	if (!f->cpuset_root[0])
		return 0;
	snprintf(sub, sizeof(sub), "%s/%s", f->cpuset_root, f->sub);
	if (xsnprintf(t->cpuset_cg, sizeof(t->cpuset_cg), "%s/p%u", sub, id) < 0)
		return -1;
	if (pid_cgroup_in(f->cpuset_root, "cpuset", pid, t->orig_cpuset, sizeof(t->orig_cpuset)) <
	    0)
		snprintf(t->orig_cpuset, sizeof(t->orig_cpuset), "%s", f->cpuset_root);
	/* The process keeps the cpus and mems of the cpuset it comes from (a
	 * Slurm step's, say): moving it must not widen what it may use. */
	if ((mkdir(t->cpuset_cg, 0755) < 0 && errno != EEXIST) ||
	    (cpuset_copy(t->orig_cpuset, t->cpuset_cg) < 0 && cpuset_copy(sub, t->cpuset_cg) < 0))
		goto fail;
	snprintf(pidbuf, sizeof(pidbuf), "%d", (int)pid);
	if (cg_write(t->cpuset_cg, "cgroup.procs", pidbuf) < 0)
		goto fail;
	return 0;
fail:
	rmdir(t->cpuset_cg);
	t->cpuset_cg[0] = '\0';
	return -1;
}

int freezer_adopt(struct freezer *f, struct freezer_target *t, unsigned id, pid_t pid,
                  const char *cgroup)
{
	char pidbuf[32];
	struct stat sb;

	memset(t, 0, sizeof(*t));
	t->root = pid;
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
		if (!strcmp(t->cg, f->root) || cg_protected(t->cg)) {
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
	snprintf(pidbuf, sizeof(pidbuf), "%d", (int)pid);
	if (cg_write(t->cg, "cgroup.procs", pidbuf) < 0) {
		int err = errno;
		rmdir(t->cg);
		t->owned = 0;
		errno = err;
		return -1;
	}
	if (f->kind == FREEZER_CGROUP1 && cpuset_make(f, t, id, pid) < 0)
		log_warn("participant %u: cpuset cgroup: %s (isolation will not use it)", id,
		         strerror(errno));
	return 0;
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

/* ---- freezing ---- */

/* A snapshot of /proc (pid, parent), so that a batch of signal freezes reads it once. */
struct proc_ent {
	pid_t pid, ppid;
};
static struct proc_ent *snap;
static size_t nsnap;

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
		if (proc_stat(pid, &st, &pp) < 0)
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

/* Every pid of t (signals): root, extra pids and their descendants.  Caller frees. */
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
		if (in && !pid_protected(pid))
			v[(*n)++] = pid;
	}
	return v;
}

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
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
	int fd = (int)syscall(SYS_pidfd_open, pid, 0);
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
	if (proc_stat(pid, &st, &pp) < 0 || (pp != ppid && pp != 1)) {
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

static void stop_free(struct freezer_target *t)
{
	size_t i;

	for (i = 0; t->stopfd && i < t->nstopped; i++)
		if (t->stopfd[i] >= 0)
			close(t->stopfd[i]);
	free(t->stopped);
	free(t->stopfd);
	t->stopped = NULL;
	t->stopfd = NULL;
	t->nstopped = 0;
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
	t->stopfd[t->nstopped++] = fd;
	return 1;
}

/* Make t's stopped list from the snapshot: pids pinned by pidfds and recorded. */
static int stop_list(struct freezer_target *t)
{
	size_t n, i;
	pid_t *v = signal_pids(t, &n);

	if (!v)
		return -1;
	stop_free(t);
	t->stopped = calloc(n + 1, sizeof(*t->stopped));
	t->stopfd = calloc(n + 1, sizeof(*t->stopfd));
	if (!t->stopped || !t->stopfd) {
		free(v);
		return -1;
	}
	for (i = 0; i < n; i++)
		if (stop_add(t, v[i], snap_parent(v[i]), n) < 0) {
			free(v);
			return -1;
		}
	free(v);
	return 0;
}

/*
 * Signals, once every listed pid stopped: scan /proc again; a process of t
 * forked after the snapshot is added, recorded and stopped.  Returns how
 * many were added (0: stable), or -1.
 */
static int stop_rescan(struct freezer *f, struct freezer_target *t)
{
	size_t n, i, j, cap;
	pid_t *v, *ns;
	int *nf, added = 0;

	freezer_snapshot(f);
	v = signal_pids(t, &n);
	if (!v)
		return -1;
	cap = t->nstopped + n;
	ns = realloc(t->stopped, (cap + 1) * sizeof(*ns));
	if (ns)
		t->stopped = ns;
	nf = ns ? realloc(t->stopfd, (cap + 1) * sizeof(*nf)) : NULL;
	if (!ns || !nf) {
		free(v);
		nsnap = 0;
		return -1;
	}
	t->stopfd = nf;
	for (i = 0; i < n; i++) {
		size_t at = t->nstopped;
		for (j = 0; j < t->nstopped && t->stopped[j] != v[i]; j++)
			;
		if (j < t->nstopped)
			continue;
		if (stop_add(t, v[i], snap_parent(v[i]), cap) > 0) {
			stop_signal(t, at, SIGSTOP);
			added++;
		}
	}
	free(v);
	nsnap = 0; /* the next batch takes a fresh snapshot */
	if (added)
		log_debug(
		        "signal freezer: %d process(es) of pid %d forked after the snapshot, stopped too",
		        added, (int)t->root);
	return added;
}

int freezer_prepare(struct freezer *f, struct freezer_target *t, freezer_rec_fn rec, void *ctx)
{
	char line[600];

	if (f->kind == FREEZER_SIGNAL) {
		if (!nsnap)
			freezer_snapshot(f);
		t->rec = rec;
		t->rec_ctx = ctx;
		t->frozen = 1;
		return stop_list(t);
	}
	if (cg_protected(t->cg)) {
		errno = EPERM;
		return -1;
	}
	snprintf(line, sizeof(line), "%s %s", f->kind == FREEZER_CGROUP1 ? "cgroup1" : "cgroup2",
	         t->cg);
	if (rec(ctx, line) < 0)
		return -1;
	t->frozen = 1;
	return 0;
}

int freezer_start(struct freezer *f, struct freezer_target *t)
{
	size_t i;

	if (f->kind == FREEZER_SIGNAL) {
		for (i = 0; i < t->nstopped; i++)
			stop_signal(t, i, SIGSTOP);
		return 0;
	}
	if (f->kind == FREEZER_CGROUP1)
		return cg_write(t->cg, "freezer.state", "FROZEN");
	return cg_write(t->cg, "cgroup.freeze", "1");
}

int freezer_poll(struct freezer *f, struct freezer_target *t)
{
	char buf[256], st;
	pid_t pp;
	size_t i;
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
	for (i = 0; i < t->nstopped; i++) {
		if (proc_stat(t->stopped[i], &st, &pp) < 0)
			continue; /* gone: nothing left to stop */
		if (st != 'T' && st != 't' && st != 'Z' && st != 'X')
			return 0;
	}
	/* all stopped: stable only if no process of t was forked after the snapshot */
	frozen = stop_rescan(f, t);
	return frozen < 0 ? -1 : frozen == 0;
}

void freezer_thaw(struct freezer *f, struct freezer_target *t, freezer_drop_fn drop, void *ctx)
{
	char line[600];
	size_t i;

	if (!t->frozen)
		return;
	t->frozen = 0;
	if (f->kind == FREEZER_SIGNAL) {
		for (i = 0; i < t->nstopped; i++) {
			stop_signal(t, i, SIGCONT);
			snprintf(line, sizeof(line), "pid %d", (int)t->stopped[i]);
			drop(ctx, line);
		}
		stop_free(t);
		return;
	}
	if (f->kind == FREEZER_CGROUP1) {
		if (cg_write(t->cg, "freezer.state", "THAWED") < 0)
			log_error("thaw %s: %s", t->cg, strerror(errno));
		snprintf(line, sizeof(line), "cgroup1 %s", t->cg);
	} else {
		if (cg_write(t->cg, "cgroup.freeze", "0") < 0)
			log_error("thaw %s: %s", t->cg, strerror(errno));
		snprintf(line, sizeof(line), "cgroup2 %s", t->cg);
	}
	drop(ctx, line);
}

/* Move every pid left in cg to back (its cgroup before krexd's, else the root), then remove cg. */
static void cg_remove(const char *cg, const char *back, const char *root)
{
	char buf[65536], *p, *e;
	int tries;

	for (tries = 0; tries < 3 && rmdir(cg) < 0 && errno == EBUSY; tries++) {
		if (cg_read(cg, "cgroup.procs", buf, sizeof(buf)) < 0)
			break;
		for (p = strtok_r(buf, "\n", &e); p; p = strtok_r(NULL, "\n", &e))
			if (!back[0] || cg_write(back, "cgroup.procs", p) < 0)
				cg_write(root, "cgroup.procs", p);
	}
	if (access(cg, F_OK) == 0)
		log_warn("could not remove cgroup %s: %s", cg, strerror(errno));
}

void freezer_release(struct freezer *f, struct freezer_target *t, freezer_drop_fn drop, void *ctx)
{
	freezer_thaw(f, t, drop, ctx);
	if (t->owned)
		cg_remove(t->cg, t->orig_cg, f->root);
	if (t->cpuset_cg[0])
		cg_remove(t->cpuset_cg, t->orig_cpuset, f->cpuset_root);
	free(t->extra);
	stop_free(t);
	memset(t, 0, sizeof(*t));
}

int freezer_undo_line(const char *line)
{
	long pid;

	if (!strncmp(line, "cgroup1 ", 8))
		return cg_write(line + 8, "freezer.state", "THAWED");
	if (!strncmp(line, "cgroup2 ", 8))
		return cg_write(line + 8, "cgroup.freeze", "0");
	if (!strncmp(line, "pid ", 4) && (pid = strtol(line + 4, NULL, 10)) > 1)
		return kill((pid_t)pid, SIGCONT) < 0 && errno != ESRCH ? -1 : 0;
	errno = EINVAL;
	return -1;
}

/* Thaw and remove every p* under root/sub. */
static void subtree_clean(const char *root, const char *subtree, const char *thaw_file,
                          const char *thaw_value)
{
	char sub[600], cg[900];
	struct dirent *e;
	DIR *d;

	snprintf(sub, sizeof(sub), "%s/%s", root, subtree);
	d = opendir(sub);
	if (!d)
		return;
	while ((e = readdir(d))) {
		if (e->d_name[0] != 'p' || !isdigit((unsigned char)e->d_name[1]))
			continue;
		snprintf(cg, sizeof(cg), "%s/%s", sub, e->d_name);
		if (thaw_file)
			cg_write(cg, thaw_file, thaw_value);
		cg_remove(cg, "", root);
	}
	closedir(d);
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

/* Remove root/sub level by level from the leaf up; levels still in use stay. */
static void subtree_remove(const char *root, const char *sub)
{
	char path[600], *slash;

	if (!root[0] || xsnprintf(path, sizeof(path), "%s/%s", root, sub) < 0)
		return;
	while (strlen(path) > strlen(root) && rmdir(path) == 0 && (slash = strrchr(path, '/')))
		*slash = '\0';
}

void freezer_fini(struct freezer *f)
{
	subtree_remove(f->root, f->sub);
	subtree_remove(f->cpuset_root, f->sub);
}
