/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rescue.c - `krex run`'s watcher: when the krexd its job registered with
 * dies (kill -9, the OOM killer) in the middle of a region, undo at once
 * what that krexd did to this job, from the state file it left: isolation
 * (affinity and cpuset lines), the freeze (a cgroup thawed, stopped pids
 * continued children first), without waiting for the next krexd to start.
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "conf.h"
#include "defs.h"
#include "fdio.h"
#include "krex_cmd.h"
#include "proctree.h"

/* A state line is at most this long (krexd/state.h STATE_LINE_MAX). */
#define STATE_LINE_BUF 1024

static int file_write_str(const char *path, const char *s)
{
	FILE *f = fopen(path, "we");
	int rc;

	if (!f)
		return -1;
	rc = fputs(s, f) < 0 ? -1 : 0;
	return fclose(f) < 0 || rc < 0 ? -1 : 0;
}

/* 1 when a pid in cg's cgroup.procs is root or below it. */
static int cg_holds(const char *cg, pid_t root)
{
	char path[PATH_MAX + 32], buf[65536], *p, *e;
	long pid;

	if (xsnprintf(path, sizeof(path), "%s/cgroup.procs", cg) < 0 ||
	    file_read(path, buf, sizeof(buf)) <= 0)
		return 0;
	for (p = buf; *p; p = e) {
		pid = strtol(p, &e, 10);
		if (e == p)
			break;
		if (proc_descends((pid_t)pid, root))
			return 1;
		while (*e == '\n')
			e++;
	}
	return 0;
}

/* Thaw a "cgroup1 PATH" or "cgroup2 PATH" line's cgroup.  0 or -1/errno. */
static int cg_thaw(const char *line)
{
	char path[PATH_MAX + 32];
	int v1 = line[6] == '1';

	if (xsnprintf(path, sizeof(path), "%s/%s", line + 8,
	              v1 ? "freezer.state" : "cgroup.freeze") < 0)
		return -1;
	return file_write_str(path, v1 ? "THAWED" : "0");
}

/* The state file's lines into *out (n of them, maybe none).  0, or -1/errno (unreadable). */
static int state_lines(const char *path, char ***out, size_t *n)
{
	char line[STATE_LINE_BUF], **v = NULL, **g;
	size_t cap = 0;
	FILE *f = fopen(path, "re");

	*n = 0;
	*out = NULL;
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		if (!line[0])
			continue;
		if (*n + 1 >= cap) {
			cap = cap ? cap * 2 : 64;
			if (!(g = realloc(v, cap * sizeof(*v))))
				break;
			v = g;
		}
		if (!(v[*n] = strdup(line)))
			break;
		v[++*n] = NULL;
	}
	fclose(f);
	*out = v;
	return 0;
}

/* Is this state line about root's job?  Its pid below root, or its cgroup holding one. */
static int line_ours(const char *l, pid_t root, pid_t *pid)
{
	const char *dir, *end;
	char cg[PATH_MAX];

	*pid = 0;
	if (!strncmp(l, "pid ", 4) || !strncmp(l, "affinity ", 9)) {
		*pid = (pid_t)strtol(strchr(l, ' ') + 1, NULL, 10);
		return *pid > 1 && proc_descends(*pid, root);
	}
	if (!strncmp(l, "cgroup1 ", 8) || !strncmp(l, "cgroup2 ", 8))
		return cg_holds(l + 8, root);
	if (!strncmp(l, "cpuset v", 8) && (dir = strchr(l + 8, ' ')) &&
	    (end = strrchr(l, ' ')) > dir) {
		snprintf(cg, sizeof(cg), "%.*s", (int)(end - dir - 1), dir + 1);
		return cg_holds(cg, root);
	}
	return 0;
}

/*
 * The isolation lines go to `krex-topo --undo` ($KREX_TOPO, else the one
 * installed beside krex, else on PATH): hwloc stays out of the krex CLI,
 * which also runs inside container images (doc/containers.md).  The number
 * of lines undone, or -1 (its output and errors go to stderr).
 */
static int iso_undo(char **lines, size_t n)
{
	const char *topo = getenv("KREX_TOPO");
	char cmd[PATH_MAX + 16];
	FILE *f;
	size_t i;
	int st;

	if (!n)
		return 0;
	if (!topo || !*topo)
		topo = access(BINDIR "/krex-topo", X_OK) == 0 ? BINDIR "/krex-topo" : "krex-topo";
	if (strchr(topo, '\'') ||
	    snprintf(cmd, sizeof(cmd), "'%s' --undo 1>&2", topo) >= (int)sizeof(cmd))
		return -1;
	f = popen(cmd, "w");
	if (!f)
		return -1;
	for (i = 0; i < n; i++)
		fprintf(f, "%s\n", lines[i]);
	st = pclose(f);
	return st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 0 ? (int)n : -1;
}

int run_rescue(pid_t root, pid_t krexd, const char *sock)
{
	char dir[PATH_MAX], path[PATH_MAX + 32];
	size_t n, i, np = 0, *idx = NULL;
	char **lines;
	pid_t *pids = NULL, pid;
	unsigned *depth = NULL;
	int iso = 0, thawed = 0, cont = 0, kept = 0, err = 0, r;
	char **isol = NULL;
	size_t ni = 0;

	snprintf(dir, sizeof(dir), "%s", sock);
	if (strrchr(dir, '/'))
		*strrchr(dir, '/') = '\0';
	if (xsnprintf(path, sizeof(path), "%s/%s", dir, KREX_STATE_NAME) < 0)
		return -1;
	if (state_lines(path, &lines, &n) < 0) {
		if (errno == ENOENT)
			return 0; /* a clean stop removes it: nothing to undo */
		fprintf(stderr,
		        "krex: warning: krexd (pid %d) died; its state file %s: %s: what it did to this job is undone when krexd starts again\n",
		        (int)krexd, path, strerror(errno));
		return -1;
	}
	pids = calloc(n + 1, sizeof(*pids));
	isol = calloc(n + 1, sizeof(*isol));
	/* Newest first, as a region unwinds: isolation, then the freeze. */
	for (i = n; pids && isol && i-- > 0;) {
		if (!line_ours(lines[i], root, &pid))
			continue;
		if (!strncmp(lines[i], "pid ", 4))
			pids[np++] = pid;
		else if (strncmp(lines[i], "cgroup", 6))
			isol[ni++] = lines[i];
	}
	if (ni && (r = iso_undo(isol, ni)) < 0)
		err += (int)ni;
	else
		iso += (int)ni;
	for (i = n; pids && isol && i-- > 0;)
		if (!strncmp(lines[i], "cgroup", 6) && line_ours(lines[i], root, &pid))
			cg_thaw(lines[i]) < 0 ? err++ : thawed++;
	/* Children before parents (proctree.h): a su or runuser of the job
	 * continued before its child would see it stopped. */
	depth = calloc(np + 1, sizeof(*depth));
	idx = calloc(np + 1, sizeof(*idx));
	if (depth && idx) {
		proc_depths(pids, NULL, np, depth);
		proc_order(depth, np, idx, 1);
	}
	for (i = 0; pids && i < np; i++) {
		r = proc_cont(pids[depth && idx ? idx[i] : i], -1, 0);
		r < 0 ? err++ : r ? kept++ : cont++;
	}
	if (iso + thawed + cont + kept + err)
		fprintf(stderr,
		        "krex: warning: krexd (pid %d) died in a region: this job undone from %s: %d process(es) continued, %d cgroup(s) thawed, %d isolation line(s) undone, %d left stopped by another's stop signal, %d failed\n",
		        (int)krexd, path, cont, thawed, iso, kept, err);
	for (i = 0; lines && i < n; i++)
		free(lines[i]);
	free(lines);
	free(pids);
	free(isol);
	free(depth);
	free(idx);
	return err ? -1 : 0;
}
