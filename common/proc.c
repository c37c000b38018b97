/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * proc.c - what KREX reads of a process in /proc (see proc.h).
 */
#include "config.h"

#include <errno.h>
#include <sched.h>
#include <sys/resource.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fdio.h"
#include "proc.h"

/* ---- /proc/PID/stat ---- */

/* The start of field `to`, from p at the start of field `at` (each field after one space). */
static const char *stat_field(const char *p, int at, int to)
{
	for (; p && at < to; at++) {
		p = strchr(p, ' ');
		if (p)
			p++;
	}
	return p;
}

int proc_stat_parse(const char *text, struct proc_stat *s)
{
	/* "PID (comm) S PPID ...": comm may hold anything, so take the last ')'. */
	const char *p = strrchr(text, ')');
	unsigned long long v;
	unsigned fl;
	long pp;

	if (!p)
		return -1;
	if (p[1] != ' ' || !p[2])
		return 2;
	s->state = p[2];
	if (p[3] != ' ' || sscanf(p + 4, "%ld", &pp) != 1)
		return 3;
	s->ppid = (pid_t)pp;
	p = stat_field(p + 4, 4, 9);
	if (!p || sscanf(p, "%u", &fl) != 1)
		return 4;
	s->flags = fl;
	p = stat_field(p, 9, 22);
	if (!p || sscanf(p, "%llu", &v) != 1)
		return 9;
	s->start = v;
	return 22;
}

int proc_stat_read(pid_t pid, struct proc_stat *s)
{
	char path[64], buf[1024];
	ssize_t r;
	int n;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	r = file_read(path, buf, sizeof(buf));
	if (r <= 0) {
		if (r == 0)
			errno = ESRCH; /* empty: as gone */
		return -1;
	}
	n = proc_stat_parse(buf, s);
	if (n < 0)
		errno = EINVAL;
	return n;
}

int proc_state(pid_t pid, char *state, pid_t *ppid)
{
	struct proc_stat s;

	if (proc_stat_read(pid, &s) < 4)
		return -1;
	*state = s.state;
	*ppid = s.ppid;
	return 0;
}

int proc_schedstat_parse(const char *text, uint64_t *run_ns, uint64_t *wait_ns)
{
	unsigned long long run, wait;
	int end = 0;

	if (sscanf(text, "%llu %llu%n", &run, &wait, &end) != 2 || !end ||
	    (text[end] && text[end] != ' ' && text[end] != '\n')) {
		errno = EINVAL;
		return -1;
	}
	*run_ns = run;
	*wait_ns = wait;
	return 0;
}

int proc_schedstat(pid_t tid, uint64_t *run_ns, uint64_t *wait_ns)
{
	char path[64], buf[128];
	ssize_t n;

	if (tid)
		snprintf(path, sizeof(path), "/proc/%d/schedstat", (int)tid);
	else
		snprintf(path, sizeof(path), "/proc/thread-self/schedstat");
	n = file_read(path, buf, sizeof(buf));
	if (n < 0)
		return -1;
	return proc_schedstat_parse(buf, run_ns, wait_ns);
}

int proc_start(pid_t pid, unsigned long long *start)
{
	struct proc_stat s;
	int n = proc_stat_read(pid, &s);

	if (n < 22) {
		if (n >= 0)
			errno = EINVAL;
		return -1;
	}
	*start = s.start;
	return 0;
}

int proc_owner(pid_t pid, uid_t *uid)
{
	char path[64];
	struct stat sb;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	/* lstat: the file is no link, and stat() is a GLIBC_2.33 function that the
	 * gate and libkrexregion, which link this file, must not ask for
	 * (glibc_compat.h binds lstat to the old __lxstat) */
	if (lstat(path, &sb) < 0)
		return -1;
	*uid = sb.st_uid;
	return 0;
}

int proc_descends(pid_t pid, pid_t root)
{
	int hops;
	char st;

	for (hops = 0; hops < 64 && pid > 1; hops++) {
		if (pid == root)
			return 1;
		if (proc_state(pid, &st, &pid) < 0)
			return 0;
	}
	return 0;
}

/* ---- /proc/PID/cgroup ---- */

int proc_cgroup_parse(const char *text, const char *ctrl, char *out, size_t outlen)
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

int proc_cgroup(pid_t pid, const char *ctrl, char *out, size_t outlen)
{
	char path[64], buf[4096];

	snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)pid);
	if (file_read(path, buf, sizeof(buf)) <= 0)
		return -1;
	return proc_cgroup_parse(buf, ctrl, out, outlen);
}

/* ---- /proc/PID/status ---- */

int proc_sig_pending(pid_t pid, unsigned long long *pending, unsigned long long *caught)
{
	char path[64], buf[4096], *l;
	unsigned long long v;

	*pending = 0;
	if (caught)
		*caught = 0;
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if (file_read(path, buf, sizeof(buf)) <= 0)
		return -1;
	for (l = buf; l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		if ((!strncmp(l, "SigPnd:", 7) || !strncmp(l, "ShdPnd:", 7)) &&
		    sscanf(l + 7, "%llx", &v) == 1)
			*pending |= v;
		else if (caught && !strncmp(l, "SigCgt:", 7) && sscanf(l + 7, "%llx", &v) == 1)
			*caught = v;
	}
	return 0;
}

/* ---- the test hook ---- */

int fault_take(struct fault_hook *h)
{
	const char *e;

	if (h->left < 0) {
		e = getenv(h->count_env);
		h->left = e ? atoi(e) : 0;
	}
	e = h->hold_env ? getenv(h->hold_env) : NULL;
	if (e && *e && access(e, F_OK) == 0)
		return 1;
	if (h->left <= 0)
		return 0;
	h->left--;
	return 1;
}

void fault_set(struct fault_hook *h, int n)
{
	h->left = n;
}

void proc_thread_normal(void)
{
	struct sched_param sp = {.sched_priority = 0};

	(void)sched_setscheduler(0, SCHED_OTHER, &sp); /* this thread only (Linux) */
	(void)setpriority(PRIO_PROCESS, 0, 0);         /* and its nice, ditto */
}
