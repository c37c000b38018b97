/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * isolate_backend.c - cpuset cgroups and thread affinity, with undo lines.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cpulist.h"
#include "fdio.h"
#include "isolate_backend.h"
#include "proc.h"

#define LIST_LEN 4096
#define MAX_PASSES 4 /* re-scans of a process's threads (threads created meanwhile) */

const char *isolate_kind_name(enum isolate_kind kind)
{
	switch (kind) {
	case ISOLATE_CGROUP2:
		return "cgroup2-cpuset";
	case ISOLATE_CGROUP1:
		return "cgroup1-cpuset";
	default:
		return "affinity";
	}
}

/*
 * Write s as the whole value of an open cgroup file (pwrite at 0: the fd
 * may be reused).  A regular file (a fake cgroup tree in the tests) is
 * truncated first; cgroup files have size 0 and need nothing.
 */
static int write_fd(int fd, const char *s)
{
	size_t len = strlen(s);
	struct stat sb;
	ssize_t n;

	if (fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) && sb.st_size > 0 && ftruncate(fd, 0) < 0)
		return -1;
	/* cgroup files take one value per write(); an empty v2 cpuset.cpus is "\n". */
	n = pwrite(fd, len ? s : "\n", len ? len : 1, 0);
	return n < 0 ? -1 : 0;
}

static int write_small(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC), rc, err;

	if (fd < 0)
		return -1;
	rc = write_fd(fd, s);
	err = errno;
	if (close(fd) < 0 && rc == 0)
		return -1;
	errno = err;
	return rc;
}

/* Read an open cgroup file from its start, like file_read_line(). */
static int read_fd(int fd, char *buf, size_t len)
{
	ssize_t n = pread(fd, buf, len - 1, 0);

	if (n < 0)
		return -1;
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

static int path_join(char *out, size_t len, const char *a, const char *b)
{
	int n = snprintf(out, len, "%s/%s", a, b);

	if (n < 0 || (size_t)n >= len) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return 0;
}

/* cgroup v2: does DIR's cgroup.controllers list cpuset? */
static int v2_has_cpuset(const char *mnt)
{
	char path[512], buf[512];

	if (path_join(path, sizeof(path), mnt, "cgroup.controllers") < 0 ||
	    file_read_line(path, buf, sizeof(buf)) < 0)
		return 0;
	return strstr(buf, "cpuset") != NULL;
}

void isolate_probe(struct isolate_sys *sys)
{
	char line[1024], mnt[256], fstype[64], opts[512];
	char v2[256] = "";
	FILE *f = fopen("/proc/self/mountinfo", "re");

	memset(sys, 0, sizeof(*sys));
	sys->kind = ISOLATE_AFFINITY;
	while (f && fgets(line, sizeof(line), f)) {
		/* "ID PARENT MAJ:MIN ROOT MOUNT OPTS [TAGS] - FSTYPE SOURCE SUPEROPTS" */
		char *sep = strstr(line, " - ");

		if (!sep || sscanf(line, "%*s %*s %*s %*s %255s", mnt) != 1 ||
		    sscanf(sep + 3, "%63s %*s %511s", fstype, opts) != 2)
			continue;
		if (strcmp(fstype, "cgroup") == 0 && strstr(opts, "cpuset")) {
			sys->kind = ISOLATE_CGROUP1;
			snprintf(sys->mount, sizeof(sys->mount), "%s", mnt);
			break;
		}
		if (strcmp(fstype, "cgroup2") == 0 && !v2[0] && v2_has_cpuset(mnt))
			snprintf(v2, sizeof(v2), "%s", mnt);
	}
	if (f)
		fclose(f);
	if (sys->kind == ISOLATE_AFFINITY && v2[0]) {
		sys->kind = ISOLATE_CGROUP2;
		snprintf(sys->mount, sizeof(sys->mount), "%s", v2);
	}
}

int isolate_pid_cgroup(const struct isolate_sys *sys, pid_t pid, char *dir, size_t len)
{
	char path[64], rel[1024];
	int n;

	dir[0] = '\0';
	if (sys->kind == ISOLATE_AFFINITY)
		return 0;
	snprintf(path, sizeof(path), "/proc/%d/cpuset", (int)pid);
	if (file_read_line(path, rel, sizeof(rel)) < 0)
		return -1;
	if (strcmp(rel, "/") == 0)
		return 0;
	n = snprintf(dir, len, "%s%s", sys->mount, rel);
	if (n < 0 || (size_t)n >= len) {
		dir[0] = '\0';
		errno = ENAMETOOLONG;
		return -1;
	}
	return 0;
}

int isolate_cgroup_version(const char *dir)
{
	char path[1024];

	if (path_join(path, sizeof(path), dir, "cpuset.effective_cpus") == 0 &&
	    access(path, F_OK) == 0)
		return 1;
	if (path_join(path, sizeof(path), dir, "cpuset.cpus.effective") == 0 &&
	    access(path, F_OK) == 0)
		return 2;
	errno = ENOENT;
	return -1;
}

/* Keep a copy of line in undo, then hand it to rec.  0, 1 (rec's dry pass: make no change), -1. */
static int undo_record(const char *line, isolate_rec_fn rec, void *ctx, struct isolate_undo *undo)
{
	char **grown, *copy;
	int rc;

	if (undo->n == undo->cap) {
		grown = realloc(undo->line, (undo->cap ? undo->cap * 2 : 16) * sizeof(*grown));
		if (!grown)
			return -1;
		undo->line = grown;
		undo->cap = undo->cap ? undo->cap * 2 : 16;
	}
	copy = strdup(line);
	if (!copy)
		return -1;
	rc = rec ? rec(ctx, line) : 0;
	if (rc < 0) {
		free(copy);
		errno = ECANCELED; /* not recorded: the change must not be made */
		return -1;
	}
	if (rc == 1) { /* dry: nothing to undo */
		free(copy);
		return 1;
	}
	undo->line[undo->n++] = copy;
	return 0;
}

static void keep_list(const char *dir, int v, hwloc_const_bitmap_t now, char *keep, size_t len);
#define KEEP_LEN 512

int isolate_cgroup_set(const char *dir, hwloc_const_bitmap_t want, hwloc_const_bitmap_t kids,
                       hwloc_bitmap_t now, isolate_rec_fn rec, void *ctx, struct isolate_undo *undo)
{
	char path[1024], raw[LIST_LEN], eff[LIST_LEN], val[LIST_LEN], keep[KEEP_LEN], *line = NULL;
	hwloc_bitmap_t old = hwloc_bitmap_alloc();
	int v = isolate_cgroup_version(dir), rc = -1;

	if (!old || v < 0)
		goto out;
	if (path_join(path, sizeof(path), dir,
	              v == 1 ? "cpuset.effective_cpus" : "cpuset.cpus.effective") < 0 ||
	    file_read_line(path, eff, sizeof(eff)) < 0 || cpulist_parse(eff, old) < 0 ||
	    path_join(path, sizeof(path), dir, "cpuset.cpus") < 0 ||
	    file_read_line(path, raw, sizeof(raw)) < 0)
		goto out;
	if (v == 2 && !raw[0]) {
		/* v2 "inherit": once narrowed it cannot be made empty again while
		 * it holds processes (the kernel answers ENOSPC until Linux 6.13),
		 * so it is left as it is and the caller moves its processes. */
		rc = 2;
		goto out;
	}
	hwloc_bitmap_and(now, old, want);
	if (hwloc_bitmap_iszero(now))
		hwloc_bitmap_copy(now, old); /* it has only CPUs we do not want: leave it */
	if (kids)
		hwloc_bitmap_or(now, now, kids);
	if (hwloc_bitmap_isequal(now, old)) {
		rc = 0;
		goto out;
	}
	keep_list(dir, v, now, keep, sizeof(keep));
	if (cpulist_format(now, val, sizeof(val)) < 0 ||
	    asprintf(&line, "cpuset v%d%s%s %s %s", v, keep[0] ? "+" : "", keep, dir,
	             raw[0] ? raw : "-") < 0) {
		line = NULL;
		goto out;
	}
	switch (undo_record(line, rec, ctx, undo)) {
	case 0:
		rc = write_small(path, val) < 0 ? -1 : 1;
		break;
	case 1:
		rc = 1; /* dry */
		break;
	}
out:
	free(line);
	hwloc_bitmap_free(old);
	return rc;
}

/* The thread ids of pid, into a malloc'd array; returns the count or -1. */
static int proc_tids(pid_t pid, pid_t **tids)
{
	char path[64];
	struct dirent *de;
	pid_t *t = NULL, *grown;
	int n = 0, cap = 0;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	if (!d)
		return -1;
	while ((de = readdir(d))) {
		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 16;
			grown = realloc(t, (size_t)cap * sizeof(*t));
			if (!grown) {
				free(t);
				closedir(d);
				return -1;
			}
			t = grown;
		}
		t[n++] = (pid_t)atoi(de->d_name);
	}
	closedir(d);
	*tids = t;
	return n;
}

static int tid_get(pid_t tid, hwloc_bitmap_t set)
{
	cpu_set_t cs;

	if (sched_getaffinity(tid, sizeof(cs), &cs) < 0)
		return -1;
	cpulist_from_cpuset(&cs, set);
	return 0;
}

/* Set one thread's mask; a thread that has exited is not an error. */
static int tid_set(pid_t tid, hwloc_const_bitmap_t set)
{
	cpu_set_t cs;

	if (cpulist_to_cpuset(set, &cs) < 0)
		return -1;
	if (sched_setaffinity(tid, sizeof(cs), &cs) < 0 && errno != ESRCH)
		return -1;
	return 0;
}

/* Append " TID=CPUS" to a growing line. */
static int line_add(char **line, size_t *len, pid_t tid, hwloc_const_bitmap_t set)
{
	char val[LIST_LEN], *grown;
	int n;

	if (cpulist_format(set, val, sizeof(val)) < 0)
		return -1;
	grown = realloc(*line, *len + strlen(val) + 24);
	if (!grown)
		return -1;
	*line = grown;
	n = sprintf(*line + *len, " %d=%s", (int)tid, val);
	*len += (size_t)n;
	return 0;
}

/*
 * Processes a moved process forks during the region start with its
 * narrowed mask and are in no undo line: the affinity line says since when
 * and onto what, " new=SINCE:CPUS" (SINCE in clock ticks since boot, as
 * /proc/PID/stat's start time, rounded down to NEW_GRAIN so that the dry and
 * the real pass of a region write the same line), and the undo gives the
 * process's descendants started since then whose threads are inside CPUS
 * the process's mask (undo_new).
 */
#define NEW_GRAIN 100 /* ticks: 1 s at USER_HZ 100 */

static int new_add(char **line, size_t *len, hwloc_const_bitmap_t want)
{
	char val[LIST_LEN], *grown;
	struct timespec ts;
	unsigned long long ticks;
	long hz = sysconf(_SC_CLK_TCK);
	int n;

	if (clock_gettime(CLOCK_BOOTTIME, &ts) < 0 || hz <= 0 ||
	    cpulist_format(want, val, sizeof(val)) < 0)
		return -1;
	ticks = (unsigned long long)ts.tv_sec * (unsigned long long)hz +
	        (unsigned long long)ts.tv_nsec / (1000000000ULL / (unsigned long long)hz);
	ticks -= ticks % NEW_GRAIN;
	grown = realloc(*line, *len + strlen(val) + 32);
	if (!grown)
		return -1;
	*line = grown;
	n = sprintf(*line + *len, " new=%llu:%s", ticks, val);
	*len += (size_t)n;
	return 0;
}

/*
 * Build the undo line of pid: "affinity PID START MAIN" and one TID=CPUS per
 * thread whose mask differs from the main thread's.  Returns 0, or -1 with
 * errno ESRCH when the process is gone.
 */
static int affinity_line(pid_t pid, const pid_t *tids, int n, hwloc_const_bitmap_t want,
                         char **line)
{
	hwloc_bitmap_t main_set = hwloc_bitmap_alloc(), set = hwloc_bitmap_alloc();
	unsigned long long start;
	char val[LIST_LEN];
	size_t len;
	int i, rc = -1;

	*line = NULL;
	if (!main_set || !set || proc_start(pid, &start) < 0 || tid_get(pid, main_set) < 0 ||
	    cpulist_format(main_set, val, sizeof(val)) < 0 ||
	    asprintf(line, "affinity %d %llu %s", (int)pid, start, val) < 0) {
		*line = NULL;
		goto out;
	}
	len = strlen(*line);
	for (i = 0; i < n; i++) {
		if (tids[i] == pid || tid_get(tids[i], set) < 0 ||
		    hwloc_bitmap_isequal(set, main_set))
			continue;
		if (line_add(line, &len, tids[i], set) < 0)
			goto out;
	}
	if (new_add(line, &len, want) < 0)
		goto out;
	rc = 0;
out:
	if (rc < 0) {
		free(*line);
		*line = NULL;
	}
	hwloc_bitmap_free(main_set);
	hwloc_bitmap_free(set);
	return rc;
}

/* Restrict the threads tids[0..n) to want; returns how many changed. */
static int affinity_restrict(const pid_t *tids, int n, hwloc_const_bitmap_t want)
{
	hwloc_bitmap_t old = hwloc_bitmap_alloc(), now = hwloc_bitmap_alloc();
	int i, changed = 0;

	for (i = 0; old && now && i < n; i++) {
		if (tid_get(tids[i], old) < 0)
			continue; /* exited */
		hwloc_bitmap_and(now, old, want);
		if (hwloc_bitmap_iszero(now))
			hwloc_bitmap_copy(now, want);
		if (hwloc_bitmap_isequal(now, old))
			continue;
		if (tid_set(tids[i], now) == 0)
			changed++;
	}
	hwloc_bitmap_free(old);
	hwloc_bitmap_free(now);
	return changed;
}

/* Does every thread of tids already run inside want? */
static int affinity_inside(const pid_t *tids, int n, hwloc_const_bitmap_t want)
{
	hwloc_bitmap_t set = hwloc_bitmap_alloc();
	int i, inside = 1;

	for (i = 0; set && i < n && inside; i++)
		if (tid_get(tids[i], set) == 0 && !hwloc_bitmap_isincluded(set, want))
			inside = 0;
	hwloc_bitmap_free(set);
	return inside;
}

int isolate_affinity_set(pid_t pid, hwloc_const_bitmap_t want, isolate_rec_fn rec, void *ctx,
                         struct isolate_undo *undo)
{
	pid_t *tids = NULL;
	char *line = NULL;
	int n, pass, c, changed = 0, rc = -1;

	n = proc_tids(pid, &tids);
	if (n < 0)
		return errno == ENOENT ? 0 : -1;
	if (affinity_inside(tids, n, want)) {
		free(tids);
		return 0;
	}
	if (affinity_line(pid, tids, n, want, &line) < 0) {
		rc = errno == ESRCH || errno == ENOENT ? 0 : -1;
		goto out;
	}
	if ((c = undo_record(line, rec, ctx, undo)) != 0) {
		rc = c; /* -1, or 1: dry */
		goto out;
	}
	/* A thread cloned before its creator was restricted has the old mask:
	 * re-scan until a pass finds nothing left to change. */
	for (pass = 0; pass < MAX_PASSES; pass++) {
		c = affinity_restrict(tids, n, want);
		changed += c;
		free(tids);
		tids = NULL;
		if (c == 0 || (n = proc_tids(pid, &tids)) < 0)
			break;
	}
	rc = changed > 0;
out:
	free(tids);
	free(line);
	return rc;
}

/*
 * The threads of a cpuset cgroup (not below it): v1 "tasks", v2
 * "cgroup.threads".  Why krexd looks at them: since Linux 6.2 the kernel
 * keeps the mask a thread asked for with sched_setaffinity (user_cpus_ptr)
 * and applies it again when its cpuset changes.  A thread that asks for
 * the mask it finds while a region holds its cpuset on the others' CPUs (a
 * library binding to "its" CPUs), and every thread and process it starts
 * after, would stay there when the cpuset widens again.
 */

static FILE *threads_open(const char *dir, int v)
{
	char path[1100];

	if (path_join(path, sizeof(path), dir, v == 1 ? "tasks" : "cgroup.threads") < 0)
		return NULL;
	return fopen(path, "re");
}

/*
 * The threads of dir already inside now before the region narrows it to
 * now (pinned by their own choice): "TID,TID" into keep ("" for none).
 * The undo leaves them as they are; past KEEP_LEN the rest are left out
 * (the undo would widen them: a pin inside the others' CPUs is rare).
 */
static void keep_list(const char *dir, int v, hwloc_const_bitmap_t now, char *keep, size_t len)
{
	hwloc_bitmap_t set = hwloc_bitmap_alloc();
	char line[32];
	size_t n = 0;
	FILE *f = threads_open(dir, v);
	int tid, w;

	keep[0] = '\0';
	while (set && f && fgets(line, sizeof(line), f)) {
		tid = atoi(line);
		if (tid <= 0 || tid_get(tid, set) < 0 || !hwloc_bitmap_isincluded(set, now))
			continue;
		w = snprintf(keep + n, len - n, "%s%d", n ? "," : "", tid);
		if (w < 0 || (size_t)w >= len - n) {
			keep[n] = '\0';
			break;
		}
		n += (size_t)w;
	}
	if (f)
		fclose(f);
	hwloc_bitmap_free(set);
}

/* Is tid in the list "TID,TID,..."? */
static int keep_has(const char *keep, int tid)
{
	const char *p = keep;
	char *end;

	while (p && *p) {
		if ((int)strtol(p, &end, 10) == tid)
			return 1;
		p = *end == ',' ? end + 1 : NULL;
	}
	return 0;
}

/*
 * After the undo widened dir from narrow: every thread of it still inside
 * narrow (the mask it asked for during the region, which the kernel
 * re-applied, or inherited from a thread that did) goes to the cpuset's
 * CPUs, as the widening would have done without that mask, but those in
 * keep.  Threads that exited are not an error; the others are retried.
 */
static int threads_widen(const char *dir, int v, hwloc_const_bitmap_t narrow, const char *keep)
{
	hwloc_bitmap_t wide = hwloc_bitmap_alloc(), set = hwloc_bitmap_alloc();
	char path[1100], val[LIST_LEN], line[32];
	FILE *f = NULL;
	int tid, rc = -1, err = 0;

	if (!wide || !set ||
	    path_join(path, sizeof(path), dir,
	              v == 1 ? "cpuset.effective_cpus" : "cpuset.cpus.effective") < 0)
		goto out;
	if (file_read_line(path, val, sizeof(val)) < 0 || cpulist_parse(val, wide) < 0) {
		rc = errno == ENOENT || errno == ENODEV ? 0 : -1; /* gone */
		goto out;
	}
	rc = 0;
	if (hwloc_bitmap_iszero(wide) || hwloc_bitmap_isincluded(wide, narrow))
		goto out; /* not widened: nothing the kernel could have kept */
	f = threads_open(dir, v);
	while (f && fgets(line, sizeof(line), f)) {
		tid = atoi(line);
		if (tid <= 0 || keep_has(keep, tid) || tid_get(tid, set) < 0 ||
		    !hwloc_bitmap_isincluded(set, narrow) || hwloc_bitmap_isequal(set, wide))
			continue;
		if (tid_set(tid, wide) < 0) {
			rc = -1;
			err = errno;
		}
	}
	if (f)
		fclose(f);
	errno = err;
out:
	err = errno;
	hwloc_bitmap_free(wide);
	hwloc_bitmap_free(set);
	errno = err;
	return rc;
}

/* Parse the CPU list that starts s and ends at a space or the end. */
static int parse_word(const char *s, hwloc_bitmap_t set)
{
	char word[LIST_LEN];
	size_t n = strcspn(s, " ");

	if (n >= sizeof(word)) {
		errno = EINVAL;
		return -1;
	}
	memcpy(word, s, n);
	word[n] = '\0';
	return cpulist_parse(word, set);
}

/* ---- undo: every line verified after it runs ---- */

static struct fault_hook undo_fault = FAULT_HOOK("KREX_TEST_UNDO_FAULTS", "KREX_TEST_UNDO_HOLD");

void isolate_undo_fault(int n)
{
	fault_set(&undo_fault, n);
}

/* What the cpuset of thread tid allows now (every CPU without a cpuset controller). */
static void thread_allowed(pid_t tid, hwloc_bitmap_t set)
{
	static struct isolate_sys sys;
	static int probed;
	char dir[1024], path[1100], val[LIST_LEN];
	int v;

	hwloc_bitmap_fill(set);
	if (!probed) {
		isolate_probe(&sys);
		probed = 1;
	}
	if (isolate_pid_cgroup(&sys, tid, dir, sizeof(dir)) < 0 || !dir[0] ||
	    (v = isolate_cgroup_version(dir)) < 0 ||
	    path_join(path, sizeof(path), dir,
	              v == 1 ? "cpuset.effective_cpus" : "cpuset.cpus.effective") < 0 ||
	    file_read_line(path, val, sizeof(val)) < 0 || cpulist_parse(val, set) < 0 ||
	    hwloc_bitmap_iszero(set))
		hwloc_bitmap_fill(set);
}

/*
 * Put one thread back on set and read it back.  What its cpuset no longer
 * allows is not asked for.  When it allows none of set (EINVAL) the thread
 * goes to every CPU its cpuset allows, never stays on the isolation's
 * CPUs, and the undo fails with EINVAL (retried: a cpuset undo still due
 * may widen it).  A thread that exited is not an error.
 */
static int undo_tid(pid_t tid, hwloc_const_bitmap_t set)
{
	hwloc_bitmap_t allowed = hwloc_bitmap_alloc(), want = hwloc_bitmap_alloc(),
	               got = hwloc_bitmap_alloc();
	cpu_set_t cs;
	int rc = -1, err = 0;

	if (!allowed || !want || !got)
		goto out;
	thread_allowed(tid, allowed);
	hwloc_bitmap_and(want, set, allowed);
	if (hwloc_bitmap_iszero(want)) {
		hwloc_bitmap_copy(want, allowed);
		err = EINVAL;
	}
	if (cpulist_to_cpuset(want, &cs) < 0)
		goto out;
	if (!fault_take(&undo_fault) && sched_setaffinity(tid, sizeof(cs), &cs) < 0) {
		if (errno == ESRCH)
			rc = 0;
		goto out;
	}
	if (tid_get(tid, got) < 0) {
		rc = errno == ESRCH ? 0 : -1;
		goto out;
	}
	if (!hwloc_bitmap_isequal(got, want)) {
		errno = EIO; /* the kernel did not take it (or the test hook dropped it) */
		goto out;
	}
	rc = err ? -1 : 0;
	errno = err;
out:
	err = errno;
	hwloc_bitmap_free(allowed);
	hwloc_bitmap_free(want);
	hwloc_bitmap_free(got);
	errno = err;
	return rc;
}

/*
 * The descendants of pid started since `since` (and theirs, to a depth of
 * 8), every thread of them inside narrow, back to set as undo_tid() does.
 * Read from /proc/PID/task/TID/children (Linux 3.5+, CONFIG_PROC_CHILDREN):
 * without it, nothing is found.
 */
static int undo_new(pid_t pid, unsigned long long since, hwloc_const_bitmap_t narrow,
                    hwloc_const_bitmap_t set, int depth)
{
	hwloc_bitmap_t mask = hwloc_bitmap_alloc();
	unsigned long long start;
	pid_t *tids = NULL, *ctids = NULL;
	char path[96], buf[4096], *p, *end;
	int n, cn, i, j, rc = 0, err = 0;
	long child;

	if (!mask || depth > 8 || (n = proc_tids(pid, &tids)) < 0)
		goto out;
	for (i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int)pid, (int)tids[i]);
		if (file_read_line(path, buf, sizeof(buf)) < 0)
			continue;
		for (p = buf; (child = strtol(p, &end, 10)) > 0; p = end) {
			if (proc_start((pid_t)child, &start) < 0 || start < since)
				continue;
			cn = proc_tids((pid_t)child, &ctids);
			for (j = 0; j < cn; j++)
				if (tid_get(ctids[j], mask) == 0 &&
				    hwloc_bitmap_isincluded(mask, narrow) &&
				    undo_tid(ctids[j], set) < 0) {
					rc = -1;
					err = errno;
				}
			free(ctids);
			ctids = NULL;
			if (undo_new((pid_t)child, since, narrow, set, depth + 1) < 0) {
				rc = -1;
				err = errno;
			}
		}
	}
out:
	free(tids);
	hwloc_bitmap_free(mask);
	errno = err;
	return rc;
}

/* Undo "affinity PID START MAIN [TID=CPUS]... [new=SINCE:CPUS]". */
static int undo_affinity(const char *args)
{
	hwloc_bitmap_t main_set = hwloc_bitmap_alloc(), set = hwloc_bitmap_alloc();
	unsigned long long start, now, since;
	char main_list[LIST_LEN], key[32];
	const char *p;
	pid_t *tids = NULL;
	int pid, off, n, i, rc = -1, err = 0;

	if (!main_set || !set ||
	    sscanf(args, "%d %llu %4095s%n", &pid, &start, main_list, &off) != 3 || pid <= 0 ||
	    cpulist_parse(main_list, main_set) < 0) {
		errno = EINVAL;
		goto out;
	}
	rc = 0;
	if (proc_start(pid, &now) < 0 || now != start)
		goto out; /* gone, or the pid now names another process */
	n = proc_tids(pid, &tids);
	if (n < 0) {
		rc = errno == ENOENT ? 0 : -1;
		goto out;
	}
	for (i = 0; i < n; i++) {
		hwloc_bitmap_copy(set, main_set);
		snprintf(key, sizeof(key), " %d=", (int)tids[i]);
		p = strstr(args + off, key);
		if (p && parse_word(p + strlen(key), set) < 0) {
			rc = -1;
			err = EINVAL;
			continue;
		}
		if (undo_tid(tids[i], set) < 0) {
			rc = -1;
			err = errno;
		}
	}
	p = strstr(args + off, " new=");
	if (p && sscanf(p, " new=%llu:%4095s", &since, main_list) == 2 &&
	    cpulist_parse(main_list, set) == 0 && undo_new(pid, since, set, main_set, 0) < 0) {
		rc = -1;
		err = errno;
	}
	errno = err;
out:
	err = errno;
	free(tids);
	hwloc_bitmap_free(main_set);
	hwloc_bitmap_free(set);
	errno = err;
	return rc;
}

/*
 * Make every v1 ancestor of dir (below the hierarchy's root) hold cpus,
 * top-down.  Why: a v1 child must stay a subset of its parent, and a
 * restarted krexd may undo lines oldest first, child before parent; the
 * parent's own line, undone later, sets its exact old value, which held
 * the child's old value anyway.
 */
static int widen_ancestors(const char *dir, hwloc_const_bitmap_t cpus)
{
	char up[1024], path[1100], val[LIST_LEN], *slash;
	hwloc_bitmap_t cur = hwloc_bitmap_alloc();
	int rc = -1;

	if (!cur || snprintf(up, sizeof(up), "%s", dir) >= (int)sizeof(up))
		goto out;
	slash = strrchr(up, '/');
	if (!slash || slash == up)
		goto out;
	*slash = '\0';
	if (isolate_cgroup_version(up) != 1) { /* dir is the hierarchy's root */
		rc = 0;
		goto out;
	}
	snprintf(path, sizeof(path), "%s/..", up);
	if (isolate_cgroup_version(path) == 1 && widen_ancestors(up, cpus) < 0)
		goto out;
	if (isolate_cgroup_version(path) != 1) { /* up is the root: not writable, holds all */
		rc = 0;
		goto out;
	}
	if (path_join(path, sizeof(path), up, "cpuset.cpus") < 0 ||
	    file_read_line(path, val, sizeof(val)) < 0 || cpulist_parse(val, cur) < 0)
		goto out;
	rc = 0;
	if (hwloc_bitmap_isincluded(cpus, cur))
		goto out;
	hwloc_bitmap_or(cur, cur, cpus);
	rc = cpulist_format(cur, val, sizeof(val)) < 0 ? -1 : write_small(path, val);
out:
	hwloc_bitmap_free(cur);
	return rc;
}

/* Split "vN[+KEEP] DIR CPUS|-" into dir, val ("" for "-") and keep (the
 * TID list, "" without); the version, or -1 (EINVAL). */
static int cpuset_args(const char *args, char *dir, size_t dlen_max, const char **val, char *keep,
                       size_t klen)
{
	const char *sp = strrchr(args, ' '), *d = strchr(args, ' ');
	size_t dlen;

	if (!sp || !d || (args[0] != '1' && args[0] != '2') || (args[1] != ' ' && args[1] != '+') ||
	    (size_t)(d - args - 1) > klen) {
		errno = EINVAL;
		return -1;
	}
	keep[0] = '\0';
	if (args[1] == '+') {
		memcpy(keep, args + 2, (size_t)(d - args - 2));
		keep[d - args - 2] = '\0';
	}
	d++;
	dlen = sp > d ? (size_t)(sp - d) : 0;
	if (dlen == 0 || dlen >= dlen_max) {
		errno = EINVAL;
		return -1;
	}
	memcpy(dir, d, dlen);
	dir[dlen] = '\0';
	*val = strcmp(sp + 1, "-") == 0 ? "" : sp + 1;
	return args[0] - '0';
}

/* Write val to DIR/cpuset.cpus through fd (or the path when fd < 0). */
static int cpuset_put(const char *path, int fd, const char *val)
{
	if (fault_take(&undo_fault))
		return 0; /* the test hook: lost on the way, as far as the caller knows */
	return fd >= 0 ? write_fd(fd, val) : write_small(path, val);
}

/* Does DIR/cpuset.cpus read val back?  1, 0, or -1 (errno). */
static int cpuset_holds(const char *path, int fd, const char *val)
{
	hwloc_bitmap_t a = hwloc_bitmap_alloc(), b = hwloc_bitmap_alloc();
	char buf[LIST_LEN];
	int rc = -1;

	if (a && b &&
	    (fd >= 0 ? read_fd(fd, buf, sizeof(buf)) : file_read_line(path, buf, sizeof(buf))) ==
	            0 &&
	    cpulist_parse(buf, a) == 0 && cpulist_parse(val, b) == 0)
		rc = hwloc_bitmap_isequal(a, b);
	hwloc_bitmap_free(a);
	hwloc_bitmap_free(b);
	return rc;
}

/*
 * v2: a populated cpuset cannot go back to empty ("inherit") before Linux
 * 6.13 (ENOSPC); lines an older krexd left ask for it.  Give it what it
 * inherited, its parent's effective CPUs: the same CPUs, now explicit.
 */
static int cpuset_v2_inherit(const char *dir, const char *path, int fd)
{
	char up[1024], eff[1100], val[LIST_LEN], *slash;

	if (snprintf(up, sizeof(up), "%s", dir) >= (int)sizeof(up) || !(slash = strrchr(up, '/')) ||
	    slash == up)
		return -1;
	*slash = '\0';
	if (path_join(eff, sizeof(eff), up, "cpuset.cpus.effective") < 0 ||
	    file_read_line(eff, val, sizeof(val)) < 0 || !val[0])
		return -1;
	if (cpuset_put(path, fd, val) < 0)
		return -1;
	if (cpuset_holds(path, fd, val) == 1)
		return 0;
	errno = EIO;
	return -1;
}

static int undo_cpuset_write(int v, const char *dir, const char *path, int fd, const char *val);

/* Undo "cpuset vN[+KEEP] DIR CPUS|-": DIR may hold spaces, CPUS is the last word. */
static int undo_cpuset(const char *args, int fd)
{
	char dir[1024], path[1100], eff[1100], keep[KEEP_LEN], now[LIST_LEN];
	const char *val;
	hwloc_bitmap_t narrow;
	int v = cpuset_args(args, dir, sizeof(dir), &val, keep, sizeof(keep)), rc;

	if (v < 0 || path_join(path, sizeof(path), dir, "cpuset.cpus") < 0 ||
	    path_join(eff, sizeof(eff), dir,
	              v == 1 ? "cpuset.effective_cpus" : "cpuset.cpus.effective") < 0)
		return -1;
	/* What the region left it on: its threads still inside after the widening are swept. */
	if (file_read_line(eff, now, sizeof(now)) < 0)
		now[0] = '\0';
	rc = undo_cpuset_write(v, dir, path, fd, val);
	if (rc < 0 || !now[0] || !(narrow = hwloc_bitmap_alloc()))
		return rc;
	/* Best effort: the cpuset is back, which a retry could not improve on
	 * (it would find the cpuset wide and sweep nothing). */
	if (cpulist_parse(now, narrow) == 0)
		(void)threads_widen(dir, v, narrow, keep);
	hwloc_bitmap_free(narrow);
	return rc;
}

/* The write of undo_cpuset(), verified. */
static int undo_cpuset_write(int v, const char *dir, const char *path, int fd, const char *val)
{
	hwloc_bitmap_t set;
	int rc;

	if (cpuset_put(path, fd, val) < 0) {
		if (errno == ENOENT || errno == ENODEV)
			return 0; /* the cgroup is gone: nothing to restore */
		if (v == 2 && !val[0] && errno == ENOSPC)
			return cpuset_v2_inherit(dir, path, fd);
		if (v != 1 || !(set = hwloc_bitmap_alloc()))
			return -1;
		rc = cpulist_parse(val, set) < 0 || widen_ancestors(dir, set) < 0
		             ? -1
		             : cpuset_put(path, fd, val);
		hwloc_bitmap_free(set);
		if (rc < 0)
			return -1;
	}
	rc = cpuset_holds(path, fd, val);
	if (rc < 0 && (errno == ENOENT || errno == ENODEV))
		return 0;
	if (rc == 1)
		return 0;
	if (rc == 0)
		errno = EIO; /* read back something else: the write did not take */
	return -1;
}

int isolate_undo_open(const char *line, int *fd)
{
	char dir[1024], path[1100], keep[KEEP_LEN];
	const char *val;

	*fd = -1;
	if (strncmp(line, "cpuset v", 8) != 0)
		return 0; /* affinity: nothing to hold */
	if (cpuset_args(line + 8, dir, sizeof(dir), &val, keep, sizeof(keep)) < 0 ||
	    path_join(path, sizeof(path), dir, "cpuset.cpus") < 0)
		return -1;
	*fd = open(path, O_RDWR | O_CLOEXEC);
	return *fd < 0 ? -1 : 0;
}

int isolate_undo_line_fd(const char *line, int fd)
{
	if (strncmp(line, "cpuset v", 8) == 0)
		return undo_cpuset(line + 8, fd);
	if (strncmp(line, "affinity ", 9) == 0)
		return undo_affinity(line + 9);
	errno = EINVAL;
	return -1;
}

int isolate_undo_line(const char *line)
{
	return isolate_undo_line_fd(line, -1);
}

int isolate_undo_all(struct isolate_undo *undo)
{
	int rc = 0;

	while (undo->n > 0) {
		undo->n--;
		if (isolate_undo_line(undo->line[undo->n]) < 0)
			rc = -1;
		free(undo->line[undo->n]);
	}
	return rc;
}

void isolate_undo_free(struct isolate_undo *undo)
{
	while (undo->n > 0)
		free(undo->line[--undo->n]);
	free(undo->line);
	memset(undo, 0, sizeof(*undo));
}
