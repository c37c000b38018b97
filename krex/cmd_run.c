/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cmd_run.c - `krex run`: run a command as a participant, and embedded mode
 * (a private krexd for this user when no system krexd runs).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "client.h"
#include "conf.h"
#include "defs.h"
#include "fdio.h"
#include "krex/region.h"
#include "krex_cmd.h"
#include "proctree.h"
#include "timeutil.h"

#ifndef SBINDIR
#define SBINDIR "/usr/sbin"
#endif
#ifndef LIBDIR
#define LIBDIR "/usr/lib"
#endif

#define EMBEDDED_START_MS 10000
#define EMBEDDED_LOCK_NAME "start.lock"

/*
 * Is dir a private directory of ours: a real directory (not a symbolic link),
 * owned by us, with no permission for group or others?  Otherwise explains
 * why not in err.
 */
static int dir_private(const char *dir, char *err, size_t errlen)
{
	struct stat st;

	if (lstat(dir, &st) < 0) {
		snprintf(err, errlen, "%s: %s", dir, strerror(errno));
		return 0;
	}
	if (S_ISLNK(st.st_mode))
		snprintf(err, errlen, "%s is a symbolic link", dir);
	else if (!S_ISDIR(st.st_mode))
		snprintf(err, errlen, "%s is not a directory", dir);
	else if (st.st_uid != getuid())
		snprintf(err, errlen, "%s is owned by uid %u, not by you (uid %u)", dir,
		         (unsigned)st.st_uid, (unsigned)getuid());
	else if (st.st_mode & 077)
		snprintf(err, errlen, "%s has mode %04o, not 0700", dir,
		         (unsigned)(st.st_mode & 07777));
	else
		return 1;
	return 0;
}

/*
 * The private krexd's run directory: $XDG_RUNTIME_DIR/krex when
 * XDG_RUNTIME_DIR is a private directory of ours (after su it may be another
 * user's: then it is not used), else /tmp/krex-UID.
 */
int embedded_rundir(char *buf, size_t len)
{
	const char *xdg = getenv("XDG_RUNTIME_DIR");
	char err[PATH_MAX + 64];

	if (xdg && *xdg && dir_private(xdg, err, sizeof(err)))
		return xsnprintf(buf, len, "%s/%s", xdg, KREX_EMBEDDED_SUBDIR) < 0 ? -1 : 0;
	return xsnprintf(buf, len, KREX_EMBEDDED_TMP_FMT, (unsigned)getuid()) < 0 ? -1 : 0;
}

/*
 * Check the run directory every time before trusting anything in it: made by
 * us (mkdir 0700 when it is missing), ours, 0700, not a link.  Someone else's
 * directory at that name (another user squatting /tmp/krex-UID to serve a fake
 * krexd) is refused.  Returns 0, or -1 (errno ENOENT) when it does not exist
 * and create is 0; dies when it is not safe.
 */
int embedded_rundir_check(const char *rundir, int create)
{
	char err[PATH_MAX + 64];

	if (create && mkdir(rundir, 0700) < 0 && errno != EEXIST)
		die("cannot make the run directory %s: %s", rundir, strerror(errno));
	if (!create && lstat(rundir, &(struct stat){0}) < 0 && errno == ENOENT)
		return -1;
	if (!dir_private(rundir, err, sizeof(err)))
		die("refusing the private krexd's run directory: %s (someone else may have made it to take KREX over: remove it, or set XDG_RUNTIME_DIR)",
		    err);
	return 0;
}

/* Start a private krexd in rundir; it daemonizes and reports start-up errors
 * through its exit status (krexd(8)).  Returns its exit status (it said why),
 * 127 when it could not be run, -1 when it died of a signal. */
static int embedded_start(const char *rundir)
{
	const char *krexd = getenv(KREX_ENV_KREXD);
	pid_t pid;
	int st;

	if (!krexd || !*krexd)
		krexd = SBINDIR "/krexd";
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
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* Connect to path; dies when something answers there that is not to be
 * trusted (client_connect checks krexd's uid). */
static int connect_trusted(const char *path)
{
	int fd, kerr;

	fd = client_connect(path, &kerr);
	if (fd < 0 && kerr == KREX_EPERM)
		die("%s", client_error());
	return fd;
}

/*
 * Take the start lock (flock on rundir/start.lock) within the deadline: one
 * krex at a time starts the private krexd, the others wait for it and then
 * find it answering.  The lock goes with the process, so a killed krex leaves
 * nothing stale.  Returns the lock fd.
 */
static int start_lock(const char *rundir, uint64_t deadline)
{
	char path[PATH_MAX + 16];
	int fd;

	if (xsnprintf(path, sizeof(path), "%s/%s", rundir, EMBEDDED_LOCK_NAME) < 0)
		die("run directory path too long");
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		die("start lock %s: %s", path, strerror(errno));
	while (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		if (errno != EWOULDBLOCK && errno != EINTR)
			die("start lock %s: %s", path, strerror(errno));
		if (time_left_ms(deadline) == 0)
			die("start lock %s: another krex held it for %d s", path,
			    EMBEDDED_START_MS / 1000 * 2);
		usleep(10000);
	}
	return fd;
}

void krexd_locate(char *path, size_t len)
{
	char rundir[PATH_MAX], emb[PATH_MAX + 16];
	int fd;

	if (client_socket_path(path, len) < 0)
		die("socket path too long");
	if (getenv(KREX_ENV_SOCKET))
		return;
	fd = connect_trusted(path);
	if (fd >= 0) {
		close(fd);
		return;
	}
	if (embedded_rundir(rundir, sizeof(rundir)) < 0 ||
	    xsnprintf(emb, sizeof(emb), "%s/%s", rundir, KREX_SOCKET_NAME) < 0)
		return;
	if (embedded_rundir_check(rundir, 0) < 0)
		return;
	fd = connect_trusted(emb);
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
	int fd, kerr, lock, started;
	uint64_t deadline;

	if (env && *env) {
		fd = client_connect(env, &kerr);
		if (fd < 0 && kerr == KREX_EPERM)
			die("%s", client_error());
		if (fd < 0)
			die("no krexd at %s (KREX_SOCKET): %s", env, krex_strerror(kerr));
		xstrcpy(path, len, env);
		return fd;
	}
	if (xsnprintf(path, len, "%s/%s", KREX_DEFAULT_RUNDIR, KREX_SOCKET_NAME) >= 0) {
		fd = connect_trusted(path);
		if (fd >= 0)
			return fd;
	}
	if (embedded_rundir(rundir, sizeof(rundir)) < 0 ||
	    xsnprintf(path, len, "%s/%s", rundir, KREX_SOCKET_NAME) < 0)
		die("run directory path too long");
	if (strlen(path) >= sizeof(((struct sockaddr_un *)0)->sun_path))
		die("socket path %s is too long for a unix socket (%zu bytes, at most %zu): set XDG_RUNTIME_DIR to a shorter directory",
		    path, strlen(path), sizeof(((struct sockaddr_un *)0)->sun_path) - 1);
	embedded_rundir_check(rundir, 1);
	fd = connect_trusted(path);
	if (fd >= 0)
		return fd;
	/* Nothing answers: start it, one krex at a time.  Whoever gets the lock
	 * first starts krexd; the others find it answering once they get it. */
	deadline = time_deadline_ms(2 * EMBEDDED_START_MS);
	lock = start_lock(rundir, deadline);
	fd = connect_trusted(path);
	if (fd >= 0) {
		close(lock);
		return fd;
	}
	/* A krexd that holds its lock but does not answer yet (starting, or
	 * started by hand) makes this fail: then wait for it to answer. */
	started = embedded_start(rundir);
	if (started == 127)
		exit(1); /* no krexd binary: it said so */
	started = started == 0;
	deadline = time_deadline_ms(EMBEDDED_START_MS);
	while ((fd = connect_trusted(path)) < 0 && time_left_ms(deadline) > 0)
		usleep(20000);
	close(lock);
	if (fd < 0)
		die(started ? "private krexd started but does not answer on %s"
		            : "private krexd did not start and none answers on %s",
		    path);
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

/* What the participant process tells `krex run`'s watcher once registered. */
struct run_hello {
	pid_t krexd;         /* krexd's pid (SO_PEERCRED of the connection) */
	char sock[PATH_MAX]; /* its socket: the state file is beside it */
};

/*
 * The participant: register with krexd (it puts this process in a cgroup of
 * its own), tell the watcher through hello, run the command, unregister.
 * Returns the command's exit status.
 */
static int run_participant(char **cmd, struct proto_gpus *g, int gate, int hello)
{
	union proto_body req, reply;
	struct run_hello h;
	struct ucred cr;
	socklen_t crlen = sizeof(cr);
	char path[PATH_MAX], err[256];
	int fd, rc, status;

	fd = krexd_find_or_start(path, sizeof(path));
	/* Register ourselves: krexd puts us in a cgroup of our own before it
	 * answers, so the command we start next is inside it too. */
	client_fill_register(&req, g, PROTO_REG_NEWCG);
	rc = client_call(fd, PROTO_REGISTER, &req, PROTO_REGISTERED, &reply,
	                 time_deadline_ms(KREX_DEFAULT_IO_TIMEOUT_MS), err, sizeof(err));
	if (rc != KREX_OK)
		die("krexd at %s refused to register: %s%s%s", path, krex_strerror(rc),
		    err[0] ? ": " : "", err);
	memset(&h, 0, sizeof(h));
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &crlen) == 0 &&
	    xstrcpy(h.sock, sizeof(h.sock), path) == 0) {
		h.krexd = cr.pid;
		(void)!write(hello, &h, sizeof(h));
	}
	close(hello);
	setenv(KREX_ENV_SOCKET, path, 1);
	if (gate)
		preload_gate();
	status = wait_child(spawn_command(cmd));

	memset(&req, 0, sizeof(req));
	req.unreg.pid = (uint32_t)getpid();
	(void)client_call(fd, PROTO_UNREGISTER, &req, PROTO_OK, &reply,
	                  time_deadline_ms(KREX_DEFAULT_IO_TIMEOUT_MS), NULL, 0);
	close(fd);
	return status;
}

/*
 * The watcher: wait for the participant r; if its krexd dies first, undo
 * what that krexd did to r's job at once (run_rescue), then go on waiting.
 * Without pidfds (Linux < 5.3) it only waits.
 */
static int run_watch(pid_t r, int hello)
{
	struct run_hello h;
	struct pollfd p[2];
	ssize_t n;
	int rfd = -1, kfd = -1;

	do
		n = read(hello, &h, sizeof(h));
	while (n < 0 && errno == EINTR);
	close(hello);
	if (n != (ssize_t)sizeof(h) || h.krexd <= 1 || (rfd = proc_pidfd(r)) < 0)
		goto out;
	h.sock[sizeof(h.sock) - 1] = '\0';
	kfd = proc_pidfd(h.krexd);
	if (kfd < 0 && errno == ESRCH)
		run_rescue(r, h.krexd, h.sock); /* gone already */
	while (kfd >= 0) {
		p[0] = (struct pollfd){.fd = rfd, .events = POLLIN};
		p[1] = (struct pollfd){.fd = kfd, .events = POLLIN};
		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (p[0].revents)
			break; /* the participant ended */
		if (p[1].revents) {
			run_rescue(r, h.krexd, h.sock);
			break;
		}
	}
out:
	if (kfd >= 0)
		close(kfd);
	if (rfd >= 0)
		close(rfd);
	return wait_child(r);
}

int cmd_run(int argc, char **argv)
{
	static const struct option opts[] = {{"gpus", required_argument, 0, 'g'},
	                                     {"label", required_argument, 0, 'l'},
	                                     {"no-gate", no_argument, 0, 'n'},
	                                     {"help", no_argument, 0, 'h'},
	                                     {0, 0, 0, 0}};
	struct proto_gpus g;
	const char *gpus = NULL, *label = NULL;
	int c, gate = 1, hello[2];
	pid_t r;

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
	for (c = 0; label[c]; c++)
		if ((unsigned char)label[c] < 0x20 || label[c] == 0x7f)
			die_usage(
			        "run: the label holds a control character (byte 0x%02x at %d): labels are one printable line",
			        (unsigned char)label[c], c);
	setenv(KREX_ENV_JOB, label, 1);

	/*
	 * Two processes: this one, the watcher, which is what the shell, su,
	 * runuser or sudo that started us waits for, and a child that registers
	 * (the participant: krexd stops or freezes it and what it runs).  A
	 * parent that waits with WUNTRACED sees its child stop and marks a job
	 * Stopped (a shell) or stops itself (su, runuser, sudo); the watcher is
	 * never stopped by krexd, so nothing above it sees a region.  It also
	 * outlives the krexd: when that dies in a region it undoes the region's
	 * freeze and isolation of this job at once (rescue.c).
	 */
	if (pipe2(hello, O_CLOEXEC) < 0)
		die("pipe: %s", strerror(errno));
	fflush(NULL);
	r = fork();
	if (r < 0)
		die("fork: %s", strerror(errno));
	if (r == 0) {
		close(hello[0]);
		exit(run_participant(argv + optind, &g, gate, hello[1]));
	}
	close(hello[1]);
	forward_signals(r);
	return run_watch(r, hello[0]);
}
