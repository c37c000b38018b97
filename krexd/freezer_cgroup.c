/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * freezer_cgroup.c - the cgroup v1 and v2 freezers (see freezer.h): cgroupfs
 * files, mounts, krexd's subtree, cpusets, the guard against freezing
 * slurmd, slurmstepd or krexd, and thaws through fds opened with the freeze.
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
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "conf.h"
#include "defs.h"
#include "fdio.h"
#include "freezer.h"
#include "freezer_impl.h"
#include "log.h"
#include "proc.h"

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

int cg_file(char *out, size_t len, const char *cg, const char *file)
{
	return xsnprintf(out, len, "%s/%s", cg, file);
}

int cg_write(const char *cg, const char *file, const char *s)
{
	char p[600];

	return cg_file(p, sizeof(p), cg, file) < 0 ? -1 : file_write(p, s);
}

ssize_t cg_read(const char *cg, const char *file, char *buf, size_t len)
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

int mountinfo_fields(const char *line, char *point, char *fstype, char *opts)
{
	const char *sep = strstr(line, " - ");

	if (!sep || sscanf(line, "%*s %*s %*s %*s %511s", point) != 1)
		return -1;
	return sscanf(sep + 3, "%63s %*s %511s", fstype, opts) == 2 ? 0 : -1;
}

int mount_opt_has(const char *opts, const char *opt)
{
	size_t n = strlen(opt);
	const char *p = opts;

	while ((p = strstr(p, opt)) != NULL) {
		if ((p == opts || p[-1] == ',') && (p[n] == ',' || p[n] == '\0'))
			return 1;
		p += n;
	}
	return 0;
}

int mountinfo_find(int (*match)(const char *line, const char *key, char *out, size_t len),
                   const char *key, char *out, size_t len)
{
	char line[2048];
	FILE *f = fopen("/proc/self/mountinfo", "re");
	int found = 0;

	if (!f)
		return -1;
	while (!found && fgets(line, sizeof(line), f))
		found = match(line, key, out, len);
	fclose(f);
	return found ? 0 : -1;
}

int freezer_parse_mountinfo(const char *line, const char *ctrl, char *mnt, size_t mntlen)
{
	char point[512], fstype[64], opts[512];

	if (mountinfo_fields(line, point, fstype, opts) < 0)
		return 0;
	if (strcmp(fstype, ctrl ? "cgroup" : "cgroup2") || (ctrl && !mount_opt_has(opts, ctrl)))
		return 0;
	return xstrcpy(mnt, mntlen, point) < 0 ? 0 : 1;
}

/* First mount point of a cgroup2 mount (ctrl NULL) or of v1 controller ctrl. */
int find_mount(const char *ctrl, char *mnt, size_t len)
{
	return mountinfo_find(freezer_parse_mountinfo, ctrl, mnt, len);
}

/* Copy cpuset.cpus and cpuset.mems from parent to child (v1 needs both set). */
static int cpuset_copy(const char *parent, const char *child);

/*
 * Call fn with each level of root/sub (sub may hold '/'), from the top of
 * sub down; stop at the first that returns non-zero and return that.
 */
static int subtree_levels(const char *root, const char *sub,
                          int (*fn)(const char *level, void *arg), void *arg)
{
	char path[600];
	size_t i;
	int rc;

	if (xsnprintf(path, sizeof(path), "%s/%s", root, sub) < 0)
		return -1;
	for (i = strlen(root) + 1;; i++) {
		if (path[i] != '/' && path[i] != '\0')
			continue;
		char c = path[i];
		path[i] = '\0';
		if ((rc = fn(path, arg)) != 0)
			return rc;
		path[i] = c;
		if (!c)
			return 0;
	}
}

/* One level of subtree_make: made, and with *cpuset given its parent's cpus and mems. */
static int level_make(const char *path, void *cpuset)
{
	char parent[600];

	snprintf(parent, sizeof(parent), "%.*s", (int)(strrchr(path, '/') - path), path);
	if (mkdir(path, 0755) == 0)
		return *(int *)cpuset && cpuset_copy(parent, path) < 0 ? -1 : 0;
	return errno == EEXIST ? 0 : -1;
}

/*
 * Make root/sub level by level (sub may hold '/'); with cpuset, give each new
 * level its parent's cpus and mems, which a v1 cpuset needs before a task
 * may enter.  0 or -1/errno.
 */
int subtree_make(const char *root, const char *sub, int cpuset)
{
	return subtree_levels(root, sub, level_make, &cpuset);
}

/* cgroup.freeze exists in non-root v2 cgroups only (Linux >= 5.2): probe our subtree. */
int v2_usable(const char *mnt, const char *sub)
{
	char p[600];
	struct stat sb;

	if (subtree_make(mnt, sub, 0) < 0)
		return 0;
	snprintf(p, sizeof(p), "%s/%s/cgroup.freeze", mnt, sub);
	return stat(p, &sb) == 0;
}

/* 1 for a process krexd must never stop: itself, slurmd, slurmstepd. */
int pid_protected(pid_t pid)
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

/* 1 if pred holds for a pid in the cgroup's cgroup.procs, 0 if for none, -1 unreadable. */
int cg_any_pid(const char *cg, int (*pred)(pid_t))
{
	char buf[65536], *p, *e;

	if (cg_read(cg, "cgroup.procs", buf, sizeof(buf)) < 0)
		return -1;
	for (p = buf; *p; p = e) {
		long pid = strtol(p, &e, 10);
		if (e == p)
			break;
		if (pred((pid_t)pid))
			return 1;
		while (*e == '\n')
			e++;
	}
	return 0;
}

/* 1 if any pid in the cgroup's cgroup.procs is protected. */
static int cg_protected(const char *cg)
{
	return cg_any_pid(cg, pid_protected) == 1;
}

/*
 * 1 if cg or any cgroup below it (depth 8) holds a protected pid: freezing
 * a cgroup freezes its whole subtree (v1 and v2), and with cgroup v2 a
 * Slurm step's slurmstepd sits in step_M/slurm, below the step the plugin
 * names.
 */
int cg_protected_tree(const char *cg, int depth)
{
	char sub[600];
	struct dirent *e;
	DIR *d;
	int hit = cg_protected(cg);

	if (hit || depth >= 8 || !(d = opendir(cg)))
		return hit;
	while (!hit && (e = readdir(d)))
		if (e->d_type == DT_DIR && e->d_name[0] != '.' &&
		    xsnprintf(sub, sizeof(sub), "%s/%s", cg, e->d_name) >= 0)
			hit = cg_protected_tree(sub, depth + 1);
	closedir(d);
	return hit;
}

/* The absolute cgroup of pid in the hierarchy at root (v1 controller ctrl, or v2). */
static int pid_cgroup_in(const char *root, const char *ctrl, pid_t pid, char *out, size_t len)
{
	char rel[512];

	if (proc_cgroup(pid, ctrl, rel, sizeof(rel)) < 0)
		return -1;
	/* 0 or -1: xsnprintf returns the length, and callers test == 0 */
	return xsnprintf(out, len, "%s%s", root, strcmp(rel, "/") ? rel : "") < 0 ? -1 : 0;
}

int pid_cgroup(const struct freezer *f, pid_t pid, char *out, size_t len)
{
	return pid_cgroup_in(f->root, f->kind == FREEZER_CGROUP1 ? "freezer" : NULL, pid, out, len);
}

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

/* Does dir's cgroup.controllers (or cgroup.subtree_control) list cpuset?  1, 0. */
static int v2_lists_cpuset(const char *dir, const char *file)
{
	char buf[512], *w, *save = NULL;

	if (cg_read(dir, file, buf, sizeof(buf)) < 0)
		return 0;
	for (w = strtok_r(buf, " \n", &save); w; w = strtok_r(NULL, " \n", &save))
		if (!strcmp(w, "cpuset"))
			return 1;
	return 0;
}

/* One level of freezer_v2_cpuset_enable: 0 enabled, 2 not given to it, -1. */
static int level_cpuset(const char *path, void *unused)
{
	(void)unused;
	if (!v2_lists_cpuset(path, "cgroup.controllers"))
		return 2; /* not given to this level: nothing below can have it */
	if (!v2_lists_cpuset(path, "cgroup.subtree_control") &&
	    cg_write(path, "cgroup.subtree_control", "+cpuset") < 0)
		return -1;
	return 0;
}

int freezer_v2_cpuset_enable(const char *root, const char *sub)
{
	int rc = subtree_levels(root, sub, level_cpuset, NULL);

	return rc < 0 ? -1 : rc == 0;
}

int freezer_v2_cpuset_own(const char *cg, const char *from)
{
	static const char *const eff[] = {"cpuset.cpus.effective", "cpuset.mems.effective"};
	static const char *const own[] = {"cpuset.cpus", "cpuset.mems"};
	char buf[1024];
	int i;

	for (i = 0; i < 2; i++)
		if (cg_read(from, eff[i], buf, sizeof(buf)) <= 0 || buf[0] == '\n' ||
		    cg_write(cg, own[i], buf) < 0)
			return -1;
	return 0;
}

/* cgroup v2: t's own cgroup gets the cpus and mems of the cpuset pid is in now
 * (/proc/PID/cpuset names the nearest level with the controller). */
int cpuset_v2_make(struct freezer *f, struct freezer_target *t, pid_t pid)
{
	char p[64], rel[512], from[800];

	snprintf(p, sizeof(p), "/proc/%d/cpuset", (int)pid);
	if (file_read(p, rel, sizeof(rel)) <= 0)
		return -1;
	rel[strcspn(rel, "\n")] = '\0';
	if (xsnprintf(from, sizeof(from), "%s%s", f->root, strcmp(rel, "/") ? rel : "") < 0 ||
	    xstrcpy(t->cpuset_from, sizeof(t->cpuset_from), from) < 0)
		return -1;
	return freezer_v2_cpuset_own(t->cg, from);
}

int cpuset_make(struct freezer *f, struct freezer_target *t, unsigned id, pid_t pid)
{
	char sub[600];

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
	    (cpuset_copy(t->orig_cpuset, t->cpuset_cg) < 0 && cpuset_copy(sub, t->cpuset_cg) < 0)) {
		int err = errno;
		rmdir(t->cpuset_cg);
		t->cpuset_cg[0] = '\0';
		errno = err;
		return -1;
	}
	return 0;
}

int cpuset_recopy(struct freezer *f, struct freezer_target *t)
{
	char sub[600];

	snprintf(sub, sizeof(sub), "%s/%s", f->cpuset_root, f->sub);
	return cpuset_copy(t->orig_cpuset, t->cpuset_cg) < 0 && cpuset_copy(sub, t->cpuset_cg) < 0
	               ? -1
	               : 0;
}

/* ---- thaw: fds opened with the freeze, verified (see freezer.h) ---- */

static struct fault_hook thaw_fault = FAULT_HOOK("KREX_TEST_THAW_FAULTS", NULL);

int thaw_fds_open(struct freezer *f, struct freezer_target *t)
{
	char p[600];
	int err;

	if (t->thaw_fds)
		return 0;
	t->thaw_fd = t->thaw_chk_fd = -1;
	if (cg_file(p, sizeof(p), t->cg,
	            f->kind == FREEZER_CGROUP1 ? "freezer.state" : "cgroup.freeze") < 0 ||
	    (t->thaw_fd = open(p, O_RDWR | O_CLOEXEC)) < 0)
		return -1;
	if (f->kind == FREEZER_CGROUP1 &&
	    (cg_file(p, sizeof(p), t->cg, "freezer.self_freezing") < 0 ||
	     (t->thaw_chk_fd = open(p, O_RDONLY | O_CLOEXEC)) < 0)) {
		err = errno;
		close(t->thaw_fd);
		t->thaw_fd = -1;
		errno = err;
		return -1;
	}
	t->thaw_fds = 1;
	return 0;
}

void thaw_fds_close(struct freezer_target *t)
{
	if (!t->thaw_fds)
		return;
	close(t->thaw_fd);
	if (t->thaw_chk_fd >= 0)
		close(t->thaw_chk_fd);
	t->thaw_fd = t->thaw_chk_fd = -1;
	t->thaw_fds = 0;
}

/* Lifted?  v1: freezer.self_freezing reads 0; v2: cgroup.freeze reads 0.  1, 0, -1. */
static int thaw_read(int fd)
{
	char buf[16];
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);

	if (n <= 0)
		return -1;
	return buf[0] == '0';
}

/* Write the thaw through wfd and read it back through rfd. */
static int thaw_fd_do(int kind, int wfd, int rfd)
{
	const char *v = kind == FREEZER_CGROUP1 ? "THAWED" : "0";
	int r;

	if (!fault_take(&thaw_fault) && pwrite(wfd, v, strlen(v), 0) < 0)
		return -1;
	r = thaw_read(rfd);
	if (r == 1)
		return 0;
	if (r == 0)
		errno = EIO; /* still frozen by krexd: the write did not take */
	return -1;
}

/* Thaw t through its fds (by path when they could not be opened). */
int thaw_do(struct freezer *f, struct freezer_target *t)
{
	if (!t->thaw_fds)
		return thaw_path(f->kind, t->cg);
	return thaw_fd_do(f->kind, t->thaw_fd,
	                  f->kind == FREEZER_CGROUP1 ? t->thaw_chk_fd : t->thaw_fd);
}

/* Thaw the cgroup at cg by path (a retry, or a line a previous krexd left). */
int thaw_path(int kind, const char *cg)
{
	char p[600];
	int wfd, rfd = -1, rc = -1, err;

	if (cg_file(p, sizeof(p), cg, kind == FREEZER_CGROUP1 ? "freezer.state" : "cgroup.freeze") <
	    0)
		return -1;
	wfd = open(p, O_RDWR | O_CLOEXEC);
	if (wfd < 0)
		return errno == ENOENT ? 0 : -1; /* the cgroup is gone: nothing frozen */
	if (kind == FREEZER_CGROUP1 && (cg_file(p, sizeof(p), cg, "freezer.self_freezing") < 0 ||
	                                (rfd = open(p, O_RDONLY | O_CLOEXEC)) < 0))
		goto out;
	rc = thaw_fd_do(kind, wfd, kind == FREEZER_CGROUP1 ? rfd : wfd);
out:
	err = errno;
	close(wfd);
	if (rfd >= 0)
		close(rfd);
	errno = err;
	return rc;
}

/* Move every pid left in cg to back (its cgroup before krexd's, else the root), then remove cg. */
int cg_remove(const char *cg, const char *back, const char *root)
{
	char buf[65536], *p, *e;
	int tries, err = 0;

	for (tries = 0; tries < 3; tries++) {
		if (rmdir(cg) == 0 || errno == ENOENT)
			return 0;
		err = errno;
		if (err != EBUSY || cg_read(cg, "cgroup.procs", buf, sizeof(buf)) < 0)
			break;
		for (p = strtok_r(buf, "\n", &e); p; p = strtok_r(NULL, "\n", &e))
			if (!back[0] || cg_write(back, "cgroup.procs", p) < 0)
				cg_write(root, "cgroup.procs", p);
	}
	errno = err ? err : EBUSY;
	return -1;
}

/* Thaw and remove every p* under root/sub. */
void subtree_clean(const char *root, const char *subtree, const char *thaw_file,
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
		if (cg_remove(cg, "", root) < 0)
			log_warn("could not remove cgroup %s: %s", cg, strerror(errno));
	}
	closedir(d);
}

/* Remove root/sub level by level from the leaf up; levels still in use stay. */
void subtree_remove(const char *root, const char *sub)
{
	char path[600], *slash;

	if (!root[0] || xsnprintf(path, sizeof(path), "%s/%s", root, sub) < 0)
		return;
	while (strlen(path) > strlen(root) && rmdir(path) == 0 && (slash = strrchr(path, '/')))
		*slash = '\0';
}

int subtree_lock(const char *root, const char *sub)
{
	char path[600];
	int fd, err;

	if (xsnprintf(path, sizeof(path), "%s/%s", root, sub) < 0) {
		errno = ENAMETOOLONG;
		return -1;
	}
	fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		err = errno;
		close(fd);
		errno = err;
		return -1;
	}
	return fd;
}

/* 1 if some cgroup strictly above cg (up to root) has "1" in cgroup.freeze. */
int v2_ancestor_frozen(const char *root, const char *cg)
{
	char path[600], buf[16], *slash;

	if (xstrcpy(path, sizeof(path), cg) < 0)
		return 0;
	while ((slash = strrchr(path, '/')) && (size_t)(slash - path) > strlen(root)) {
		*slash = '\0';
		if (cg_read(path, "cgroup.freeze", buf, sizeof(buf)) > 0 && buf[0] == '1')
			return 1;
	}
	return 0;
}

int freezer_v2_task_level(const struct freezer *f, struct freezer_target *t, pid_t pid)
{
	char own[512];
	size_t n = strlen(t->cg);

	/* A Slurm cgroup/v2 step: tasks in step_M/user/task_N, slurmstepd in
	 * step_M/slurm, and Slurm's suspend writes step_M/user/cgroup.freeze.
	 * krexd freezes the task's own cgroup below that: the kernel keeps it
	 * frozen while either says so, and slurmstepd is never in it. */
	if (f->kind != FREEZER_CGROUP2 || pid_cgroup(f, pid, own, sizeof(own)) < 0)
		return 0;
	if (strncmp(own, t->cg, n) || strncmp(own + n, "/user/", 6))
		return 0;
	return xstrcpy(t->cg, sizeof(t->cg), own) < 0 ? -1 : 1;
}

/* 1 if /proc/PID/status says SIGKILL is pending (SigPnd or ShdPnd). */
int pid_kill_pending(pid_t pid)
{
	unsigned long long pend;

	return proc_sig_pending(pid, &pend, NULL) == 0 && (pend >> (SIGKILL - 1) & 1);
}
