/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fake_krexd.c - a test double of krexd for the Slurm tier: it speaks the
 * wire protocol, answers REGISTER and UNREGISTER, and writes one line per
 * request to RUNDIR/requests.log so the tests can check what the SPANK
 * plugin sent (pid, job, step, cgroup, cpus, GPUs) and when.  It freezes
 * nothing.  It starts like krexd (`-r RUNDIR [-o key=value]... [-F]`): the
 * launcher exits 0 once the socket is up, or 1 with the reason on stderr.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "conf.h"
#include "fdio.h"
#include "proto.h"
#include "timeutil.h"

static volatile sig_atomic_t stop;
static char rundir[512];

static void on_term(int sig)
{
	(void)sig;
	stop = 1;
}

static void log_request(FILE *log, uid_t uid, uint16_t type, const union proto_body *m)
{
	char gpus[512] = "";
	unsigned i;

	if (type == PROTO_REGISTER) {
		for (i = 0; i < m->reg.gpus.n; i++)
			snprintf(gpus + strlen(gpus), sizeof(gpus) - strlen(gpus), "%s%s",
			         i ? "," : "", m->reg.gpus.name[i]);
		fprintf(log,
		        "REGISTER uid=%u pid=%u job=%u step=%u cgroup=%s cpus=%s gpus=%s label=%s\n",
		        (unsigned)uid, m->reg.pid, m->reg.job, m->reg.step, m->reg.cgroup,
		        m->reg.cpus, gpus, m->reg.label);
	} else if (type == PROTO_UNREGISTER) {
		fprintf(log, "UNREGISTER uid=%u pid=%u\n", (unsigned)uid, m->unreg.pid);
	} else {
		fprintf(log, "%s uid=%u\n", proto_type_name(type), (unsigned)uid);
	}
	fflush(log);
}

/* One request, one reply. */
static void serve_one(int fd, FILE *log, uint32_t *next_id)
{
	union proto_body req, rep;
	uint16_t type;
	uint32_t seq;
	pid_t pid;
	uid_t uid = (uid_t)-1;
	gid_t gid;
	int hdr_err;

	unix_peer_cred(fd, &pid, &uid, &gid);
	if (proto_recv(fd, &type, &seq, &req, time_deadline_ms(2000), &hdr_err) < 0)
		return;
	log_request(log, uid, type, &req);
	memset(&rep, 0, sizeof(rep));
	if (type == PROTO_REGISTER) {
		rep.registered.participant = (*next_id)++;
		xsnprintf(rep.registered.gate_path, sizeof(rep.registered.gate_path), "%s/gate",
		          rundir);
		proto_send(fd, PROTO_REGISTERED, seq, &rep, time_deadline_ms(2000));
	} else if (type == PROTO_UNREGISTER) {
		proto_send(fd, PROTO_OK, seq, &rep, time_deadline_ms(2000));
	} else {
		proto_error_set(&rep, KREX_EINVAL, "fake krexd: %s not supported",
		                proto_type_name(type));
		proto_send(fd, PROTO_ERROR, seq, &rep, time_deadline_ms(2000));
	}
	proto_body_free(type, &req);
}

static int fake_run(int ready_fd)
{
	char path[600];
	uint32_t next_id = 1;
	FILE *log;
	int lfd, fd;

	if (mkdir_p(rundir, 0755) < 0 ||
	    xsnprintf(path, sizeof(path), "%s/%s", rundir, KREX_SOCKET_NAME) < 0)
		return -1;
	lfd = unix_listen(path, 64, 0666);
	if (lfd < 0)
		return -1;
	fd_set_nonblock(lfd, 0);
	snprintf(path, sizeof(path), "%s/requests.log", rundir);
	log = fopen(path, "a");
	snprintf(path, sizeof(path), "%s/%s", rundir, KREX_PIDFILE_NAME);
	FILE *pf = fopen(path, "w");
	if (!log || !pf)
		return -1;
	fprintf(pf, "%d\n", (int)getpid());
	fclose(pf);
	if (ready_fd >= 0) {
		if (write(ready_fd, "", 1) < 0) {
			/* the launcher is gone: run anyway */
		}
		close(ready_fd);
	}
	snprintf(path, sizeof(path), "%s/%s", rundir, KREX_SOCKET_NAME);
	while (!stop) {
		struct pollfd p = {.fd = lfd, .events = POLLIN};
		struct stat sb;

		/* A test double must not outlive its test: gone socket, gone us. */
		if (poll(&p, 1, 1000) <= 0) {
			if (stat(path, &sb) < 0)
				break;
			continue;
		}
		fd = accept(lfd, NULL, NULL);
		if (fd < 0)
			continue; /* EINTR from SIGTERM */
		fd_set_nonblock(fd, 1);
		serve_one(fd, log, &next_id);
		close(fd);
	}
	snprintf(path, sizeof(path), "%s/%s", rundir, KREX_SOCKET_NAME);
	unlink(path);
	snprintf(path, sizeof(path), "%s/%s", rundir, KREX_PIDFILE_NAME);
	unlink(path);
	fclose(log);
	return 0;
}

int main(int argc, char **argv)
{
	struct sigaction sa;
	int c, fg = 0, pfd[2];
	char b;

	while ((c = getopt(argc, argv, "r:o:F")) != -1) {
		if (c == 'r')
			xstrcpy(rundir, sizeof(rundir), optarg);
		else if (c == 'F')
			fg = 1;
		else if (c != 'o')
			return 2;
	}
	if (!rundir[0]) {
		fprintf(stderr, "fake_krexd: -r RUNDIR missing\n");
		return 2;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_term; /* no SA_RESTART: accept() returns EINTR */
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	if (fg)
		return fake_run(-1) < 0 ? 1 : 0;
	if (pipe(pfd) < 0)
		return 1;
	if (fork() == 0) {
		close(pfd[0]);
		setsid();
		if (fork() != 0)
			_exit(0);
		c = open("/dev/null", O_RDWR);
		dup2(c, 0);
		dup2(c, 1);
		dup2(c, 2);
		_exit(fake_run(pfd[1]) < 0 ? 1 : 0);
	}
	close(pfd[1]);
	if (read(pfd[0], &b, 1) != 1) {
		fprintf(stderr, "fake_krexd: could not start in %s\n", rundir);
		return 1;
	}
	return 0;
}
