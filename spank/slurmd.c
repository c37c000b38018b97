/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * slurmd.c - the slurmd context: make sure this node's krexd runs, and stop
 * it when slurmd stops (coordinator=spawn), or only look for it
 * (coordinator=external, e.g. systemd's krexd.service).
 *
 * Nothing here may make slurmd fail: every error is logged and the callbacks
 * return 0.  A node without krexd fails --krex-shared jobs in task_init with
 * a clear message; it is never drained for it.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "conf.h"
#include "fdio.h"
#include "krex_spank.h"
#include "proc.h"
#include "timeutil.h"

#define SPAWN_TIMEOUT_MS 10000 /* krexd's launcher must exit (ready or failed) by then */
#define STOP_TIMEOUT_MS 5000

static char node_name[64];
static char krexd_rundir[SPANK_PATH_LEN];
static char krexd_sock[SPANK_PATH_LEN];

/*
 * This slurmd's node name: "-N NAME" on its command line (two slurmd on one
 * host, as the tests run them), else the short host name, which is what
 * slurmd itself uses.  Why /proc/self/cmdline: SPANK has no item for the
 * node name in the slurmd context.
 */
static void slurmd_node_name(char *out, size_t len)
{
	char buf[4096], *p, *end;
	ssize_t n;
	int fd;

	fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
	n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
	if (fd >= 0)
		close(fd);
	if (n > 0) {
		buf[n] = '\0';
		end = buf + n;
		for (p = buf; p < end; p += strlen(p) + 1) {
			if (!strcmp(p, "-N") && p + strlen(p) + 1 < end) {
				xstrcpy(out, len, p + strlen(p) + 1);
				return;
			}
			if (!strncmp(p, "-N", 2) && p[2]) {
				xstrcpy(out, len, p + 2);
				return;
			}
		}
	}
	if (gethostname(out, len) < 0)
		xstrcpy(out, len, "localhost");
	out[len - 1] = '\0';
	p = strchr(out, '.');
	if (p)
		*p = '\0';
}

/*
 * Move the calling process to the root cgroup of every mounted hierarchy
 * (v1 controllers and v2).  Why: a daemon started from slurmd (or a step)
 * otherwise stays in its cgroups; under proctrack/cgroup those are a job's,
 * which can then never be removed (doc/slurm-on-one-host.md).  Best effort.
 */
static void cgroup_move_root(void)
{
	char line[1024], mnt[512], path[600], fstype[32], pid[16];
	FILE *f = fopen("/proc/self/mountinfo", "r");
	char *sep;
	int fd;

	if (!f)
		return;
	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	while (fgets(line, sizeof(line), f)) {
		sep = strstr(line, " - ");
		if (!sep || sscanf(sep, " - %31s", fstype) != 1)
			continue;
		if (strcmp(fstype, "cgroup") && strcmp(fstype, "cgroup2"))
			continue;
		if (sscanf(line, "%*s %*s %*s %*s %511s", mnt) != 1)
			continue;
		if (xsnprintf(path, sizeof(path), "%s/cgroup.procs", mnt) < 0)
			continue;
		fd = open(path, O_WRONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		if (write(fd, pid, strlen(pid)) < 0) {
			/* a hierarchy we may not write: stay there */
		}
		close(fd);
	}
	fclose(f);
}

/* argv for krexd: -r RUNDIR, -o node_name=NODE and -o key=value for each
 * plugstack tunable given (%n expanded).  opts holds the strings. */
#define KREXD_OPTS (CONF_KEYS_N + 1)
static void slurmd_krexd_argv(const struct spank_args *a, char *argv[], char opts[KREXD_OPTS][200])
{
	char val[160];
	int i, n = 0;

	argv[n++] = (char *)a->krexd;
	argv[n++] = (char *)"-r";
	argv[n++] = krexd_rundir;
	for (i = -1; i < CONF_KEYS_N; i++) { /* -1: node_name, always */
		if (i >= 0 && (!conf_keys[i].plugin || !a->passed[i][0]))
			continue;
		if (args_expand(val, sizeof(val), i < 0 ? "%n" : a->passed[i], node_name) < 0)
			continue;
		snprintf(opts[i + 1], 200, "%s=%s", i < 0 ? "node_name" : conf_keys[i].name, val);
		argv[n++] = (char *)"-o";
		argv[n++] = opts[i + 1];
	}
	argv[n] = NULL;
}

/* The launcher child: out of slurmd's session and cgroups, then exec. */
static void slurmd_spawn_child(const struct spank_args *a, int errfd)
{
	char *argv[2 * KREXD_OPTS + 4], opts[KREXD_OPTS][200];
	int fd;

	setsid();
	cgroup_move_root();
	fd = open("/dev/null", O_RDWR);
	if (fd >= 0) {
		dup2(fd, STDIN_FILENO);
		dup2(fd, STDOUT_FILENO);
	}
	dup2(errfd, STDERR_FILENO);
	for (fd = 3; fd < 1024; fd++)
		close(fd);
	signal(SIGPIPE, SIG_DFL);
	slurmd_krexd_argv(a, argv, opts);
	execv(a->krexd, argv);
	dprintf(STDERR_FILENO, "exec %s: %s", a->krexd, strerror(errno));
	_exit(127);
}

/*
 * Start krexd and wait for its launcher to exit: krexd daemonizes and its
 * launcher exits 0 once the daemon is ready, or non-zero with the reason on
 * stderr (which comes back through a pipe).  We do not wait for the pipe's
 * EOF: the daemon may keep it open.  Returns 0 or -1 (logged).
 */
static int slurmd_spawn(const struct spank_args *a)
{
	char msg[512] = "";
	size_t used = 0;
	uint64_t deadline = time_deadline_ms(SPAWN_TIMEOUT_MS);
	int pfd[2], status = 0, done = 0;
	struct pollfd p;
	ssize_t r;
	pid_t pid;

	if (pipe2(pfd, O_CLOEXEC) < 0) {
		slurm_error("krex: pipe: %s", strerror(errno));
		return -1;
	}
	pid = fork();
	if (pid < 0) {
		slurm_error("krex: fork: %s", strerror(errno));
		close(pfd[0]);
		close(pfd[1]);
		return -1;
	}
	if (pid == 0)
		slurmd_spawn_child(a, pfd[1]);
	close(pfd[1]);
	fd_set_nonblock(pfd[0], 1);
	while (!done && time_left_ms(deadline) > 0) {
		p.fd = pfd[0];
		p.events = POLLIN;
		poll(&p, 1, 50);
		while (used < sizeof(msg) - 1 &&
		       (r = read(pfd[0], msg + used, sizeof(msg) - 1 - used)) > 0)
			used += (size_t)r;
		done = waitpid(pid, &status, WNOHANG) == pid;
	}
	while (used < sizeof(msg) - 1 && (r = read(pfd[0], msg + used, sizeof(msg) - 1 - used)) > 0)
		used += (size_t)r;
	close(pfd[0]);
	msg[used] = '\0';
	while (used && (msg[used - 1] == '\n' || msg[used - 1] == '\r'))
		msg[--used] = '\0';
	if (!done) {
		slurm_error("krex: %s -r %s did not report ready within %d ms", a->krexd,
		            krexd_rundir, SPAWN_TIMEOUT_MS);
		return -1;
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		slurm_error("krex: %s -r %s failed (status %d): %s", a->krexd, krexd_rundir,
		            WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status),
		            msg[0] ? msg : "no message");
		return -1;
	}
	slurm_info("krex: started krexd for node %s (run dir %s)", node_name, krexd_rundir);
	return 0;
}

int slurmd_init(spank_t sp, const struct spank_args *a)
{
	(void)sp;
	slurmd_node_name(node_name, sizeof(node_name));
	setenv(SPANK_ENV_NODE, node_name, 1);
	if (args_paths(a, node_name, krexd_rundir, krexd_sock, sizeof(krexd_sock)) < 0) {
		slurm_error("krex: run_dir or socket too long for node %s", node_name);
		return 0;
	}
	if (client_alive(krexd_sock)) {
		slurm_info("krex: krexd already answers at %s", krexd_sock);
		return 0;
	}
	if (a->external) {
		slurm_info("krex: no krexd answers at %s yet (coordinator=external)", krexd_sock);
		return 0;
	}
	if (access(a->krexd, X_OK) < 0) {
		slurm_error("krex: cannot run krexd %s: %s", a->krexd, strerror(errno));
		return 0;
	}
	if (mkdir_p(krexd_rundir, 0755) < 0)
		slurm_error("krex: mkdir %s: %s", krexd_rundir, strerror(errno));
	slurmd_spawn(a);
	return 0;
}

/* The krexd whose pid is in the run dir's pid file, if it is one; else 0. */
static pid_t slurmd_krexd_pid(void)
{
	char path[SPANK_PATH_LEN + 32], buf[64];
	pid_t pid;

	if (xsnprintf(path, sizeof(path), "%s/%s", krexd_rundir, KREX_PIDFILE_NAME) < 0 ||
	    file_read(path, buf, sizeof(buf)) <= 0)
		return 0;
	pid = (pid_t)strtol(buf, NULL, 10);
	if (pid <= 1)
		return 0;
	/* A stale pid file could name a reused pid: check it is a krexd. */
	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	if (file_read(path, buf, sizeof(buf)) <= 0)
		return 0;
	return strstr(buf, "krexd") ? pid : 0;
}

/* 1 while pid exists and is not a zombie (PID 1 may be slow to reap). */
static int pid_running(pid_t pid)
{
	struct proc_stat s;
	int n = proc_stat_read(pid, &s);

	if (n < 0)
		return n == -1 && errno == EINVAL; /* there, but no "(comm)": running */
	return !(n >= 3 && (s.state == 'Z' || s.state == 'X'));
}

int slurmd_exit(spank_t sp, const struct spank_args *a)
{
	uint64_t deadline = time_deadline_ms(STOP_TIMEOUT_MS);
	pid_t pid;

	(void)sp;
	if (a->external || !krexd_rundir[0])
		return 0;
	pid = slurmd_krexd_pid();
	if (!pid)
		return 0;
	/* SIGTERM: krexd thaws, reopens every gate and restores cpusets first. */
	if (kill(pid, SIGTERM) < 0)
		return 0;
	while (pid_running(pid) && time_left_ms(deadline) > 0)
		usleep(20000);
	if (pid_running(pid))
		slurm_error("krex: krexd (pid %d) still runs %d ms after SIGTERM", (int)pid,
		            STOP_TIMEOUT_MS);
	else
		slurm_info("krex: stopped krexd (pid %d) of node %s", (int)pid, node_name);
	return 0;
}
