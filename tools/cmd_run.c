/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cmd_run.c - `krex run`: run a command as a participant, and embedded mode
 * (a private krexd for this user when no system krexd runs).
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "client.h"
#include "conf.h"
#include "defs.h"
#include "fdio.h"
#include "krex/region.h"
#include "krex_cmd.h"
#include "timeutil.h"

#ifndef SBINDIR
#define SBINDIR "/usr/sbin"
#endif
#ifndef LIBDIR
#define LIBDIR "/usr/lib"
#endif

#define EMBEDDED_START_MS 10000

int embedded_rundir(char *buf, size_t len)
{
	const char *xdg = getenv("XDG_RUNTIME_DIR");

	if (xdg && *xdg && access(xdg, W_OK) == 0)
		return xsnprintf(buf, len, "%s/%s", xdg, KREX_EMBEDDED_SUBDIR) < 0 ? -1 : 0;
	return xsnprintf(buf, len, KREX_EMBEDDED_TMP_FMT, (unsigned)getuid()) < 0 ? -1 : 0;
}

/* Start a private krexd in rundir; it daemonizes and reports start-up errors
 * through its exit status (krexd(8)). */
static void embedded_start(const char *rundir)
{
	const char *krexd = getenv(KREX_ENV_KREXD);
	pid_t pid;
	int st;

	if (!krexd || !*krexd)
		krexd = SBINDIR "/krexd";
	if (mkdir_p(rundir, 0700) < 0)
		die("cannot make %s: %s", rundir, strerror(errno));
	fflush(NULL);
	pid = fork();
	if (pid < 0)
		die("fork: %s", strerror(errno));
	if (pid == 0) {
		/* A user's private krexd cannot write the node's cgroups: it freezes
		 * with signals (krexd.conf(5) "freezer"). */
		if (getuid() != 0)
			execl(krexd, "krexd", "-r", rundir, "-o", "freezer=signal", (char *)NULL);
		else
			execl(krexd, "krexd", "-r", rundir, (char *)NULL);
		fprintf(stderr, "krex: cannot start krexd '%s': %s (set KREX_KREXD)\n", krexd,
		        strerror(errno));
		_exit(127);
	}
	if (waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
		die("private krexd did not start in %s", rundir);
}

void krexd_locate(char *path, size_t len)
{
	char rundir[PATH_MAX], emb[PATH_MAX + 16];
	int fd, kerr;

	if (client_socket_path(path, len) < 0)
		die("socket path too long");
	if (getenv(KREX_ENV_SOCKET))
		return;
	fd = client_connect(path, &kerr);
	if (fd >= 0) {
		close(fd);
		return;
	}
	if (embedded_rundir(rundir, sizeof(rundir)) < 0 ||
	    xsnprintf(emb, sizeof(emb), "%s/%s", rundir, KREX_SOCKET_NAME) < 0)
		return;
	fd = client_connect(emb, &kerr);
	if (fd < 0)
		return;
	close(fd);
	xstrcpy(path, len, emb);
	setenv(KREX_ENV_SOCKET, emb, 1);
}

int krexd_find_or_start(char *path, size_t len)
{
	char rundir[PATH_MAX];
	const char *env = getenv(KREX_ENV_SOCKET);
	int fd, kerr;
	uint64_t deadline;

	if (env && *env) {
		fd = client_connect(env, &kerr);
		if (fd < 0)
			die("no krexd at %s (KREX_SOCKET): %s", env, krex_strerror(kerr));
		xstrcpy(path, len, env);
		return fd;
	}
	if (xsnprintf(path, len, "%s/%s", KREX_DEFAULT_RUNDIR, KREX_SOCKET_NAME) >= 0) {
		fd = client_connect(path, &kerr);
		if (fd >= 0)
			return fd;
	}
	if (embedded_rundir(rundir, sizeof(rundir)) < 0 ||
	    xsnprintf(path, len, "%s/%s", rundir, KREX_SOCKET_NAME) < 0)
		die("run directory path too long");
	fd = client_connect(path, &kerr);
	if (fd >= 0)
		return fd;
	embedded_start(rundir);
	deadline = time_deadline_ms(EMBEDDED_START_MS);
	while ((fd = client_connect(path, &kerr)) < 0 && time_left_ms(deadline) > 0)
		usleep(20000);
	if (fd < 0)
		die("private krexd started but does not answer on %s", path);
	return fd;
}

/* LD_PRELOAD with the gate in front, unless it is there already. */
static void preload_gate(void)
{
	const char *gate = getenv("KREX_GATE_LIB");
	const char *old = getenv("LD_PRELOAD");
	char buf[4096];

	if (!gate || !*gate)
		gate = LIBDIR "/libkrexgate.so";
	if (access(gate, R_OK) < 0) {
		fprintf(stderr,
		        "krex: warning: gate %s not found: GPU work is not gated (set KREX_GATE_LIB)\n",
		        gate);
		return;
	}
	if (old && strstr(old, gate))
		return;
	if (xsnprintf(buf, sizeof(buf), "%s%s%s", gate, old && *old ? ":" : "", old ? old : "") < 0)
		die("LD_PRELOAD too long");
	setenv("LD_PRELOAD", buf, 1);
}

int cmd_run(int argc, char **argv)
{
	static const struct option opts[] = {{"gpus", required_argument, 0, 'g'},
	                                     {"label", required_argument, 0, 'l'},
	                                     {"no-gate", no_argument, 0, 'n'},
	                                     {"help", no_argument, 0, 'h'},
	                                     {0, 0, 0, 0}};
	union proto_body req, reply;
	struct proto_gpus g;
	char path[PATH_MAX], err[256];
	const char *gpus = NULL, *label = NULL;
	int c, gate = 1, fd, rc, status;

	optind = 1;
	while ((c = getopt_long(argc, argv, "+g:l:nh", opts, NULL)) != -1) {
		switch (c) {
		case 'g':
			gpus = optarg;
			break;
		case 'l':
			label = optarg;
			break;
		case 'n':
			gate = 0;
			break;
		case 'h':
			printf("Usage: krex run [--gpus LIST] [--label NAME] [--no-gate] -- CMD [ARGS]\n");
			return 0;
		default:
			die_usage("run: bad option");
		}
	}
	if (optind >= argc)
		die_usage("run: no command given");
	if (gpus) {
		if (client_parse_gpus(gpus, &g) != KREX_OK || g.n == 0)
			die_usage("run: bad --gpus list '%s'", gpus);
		setenv(KREX_ENV_GPUS, gpus, 1);
	} else {
		client_env_gpus(&g);
	}
	if (!label)
		label = argv[optind];
	setenv(KREX_ENV_JOB, label, 1);

	fd = krexd_find_or_start(path, sizeof(path));
	/* Register ourselves: krexd puts us in a cgroup of our own before it
	 * answers, so the command we start next is inside it too. */
	client_fill_register(&req, &g, PROTO_REG_NEWCG);
	rc = client_call(fd, PROTO_REGISTER, &req, PROTO_REGISTERED, &reply,
	                 time_deadline_ms(KREX_DEFAULT_IO_TIMEOUT_MS), err, sizeof(err));
	if (rc != KREX_OK)
		die("krexd at %s refused to register: %s%s%s", path, krex_strerror(rc),
		    err[0] ? ": " : "", err);
	setenv(KREX_ENV_SOCKET, path, 1);
	if (gate)
		preload_gate();
	status = wait_child(spawn_command(argv + optind));

	memset(&req, 0, sizeof(req));
	req.unreg.pid = (uint32_t)getpid();
	(void)client_call(fd, PROTO_UNREGISTER, &req, PROTO_OK, &reply,
	                  time_deadline_ms(KREX_DEFAULT_IO_TIMEOUT_MS), NULL, 0);
	close(fd);
	return status;
}
