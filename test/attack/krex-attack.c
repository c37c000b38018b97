/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * krex-attack.c - what a hostile local user does to krexd, for the attacker
 * tier (test/attack/attack-*.sh runs it as an unprivileged user).
 *
 *	krex-attack conns N SECS       open N idle connections, hold them SECS
 *	krex-attack noread N SECS      N connections pipelining STATUS, never reading;
 *	                               a dropped one is opened again (sustained attack)
 *	krex-attack partial N SECS     N connections that send 64 KiB frames, never the last byte
 *	krex-attack pidreuse           connect, hand the socket to a child, exit; the
 *	                               child registers pid 0 once the connecting pid is gone
 *	krex-attack register N GPUS    N registrations (one connection each, NEWCG) naming GPUS
 *	krex-attack label LABEL [GPUS] one registration with that label (any bytes)
 *	krex-attack nodump             a non-dumpable process (its /proc is root's) registers itself
 *
 * The socket is $KREX_SOCKET.  Each prints key=value lines of what happened;
 * the tests assert on them.  Every loop is bounded in count and time.
 */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "conf.h"
#include "fdio.h"
#include "proto.h"
#include "timeutil.h"

static const char *sock_path;

static void put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

/* 1 if krexd closed fd (EOF or reset pending), 0 if it is open. */
static int peer_closed(int fd)
{
	struct pollfd p = {.fd = fd, .events = POLLIN | POLLRDHUP};
	char c;

	if (poll(&p, 1, 0) <= 0)
		return 0;
	if (p.revents & (POLLHUP | POLLERR | POLLRDHUP))
		return 1;
	/* readable: an error reply, then EOF; peek at what is there */
	return recv(fd, &c, 1, MSG_PEEK | MSG_DONTWAIT) == 0;
}

/* The last ERROR frame readable on fd, printed as error=CODE MESSAGE. */
static void print_reply(int fd, const char *key)
{
	union proto_body m;
	uint16_t t;
	uint32_t seq;
	int herr;

	if (proto_recv(fd, &t, &seq, &m, time_deadline_ms(2000), &herr) < 0) {
		printf("%s=none\n", key);
		return;
	}
	if (t == PROTO_ERROR)
		printf("%s=error %u %s\n", key, m.error.code, m.error.message);
	else
		printf("%s=%s\n", key, proto_type_name(t));
	proto_body_free(t, &m);
}

static int cmd_conns(int n, int secs)
{
	int *fd = calloc((size_t)n, sizeof(int)), i, open_ = 0, failed = 0, closed = 0;
	int first_closed = -1;

	for (i = 0; i < n; i++) {
		fd[i] = unix_connect(sock_path, 2000);
		if (fd[i] < 0)
			failed++;
		else
			open_++;
	}
	printf("open=%d failed=%d\n", open_, failed);
	fflush(stdout);
	sleep((unsigned)secs);
	for (i = 0; i < n; i++)
		if (fd[i] >= 0 && peer_closed(fd[i])) {
			if (first_closed < 0)
				first_closed = i;
			closed++;
		}
	printf("closed_by_krexd=%d\n", closed);
	if (first_closed >= 0)
		print_reply(fd[first_closed], "reply");
	fflush(stdout);
	return 0;
}

static int status_frame(uint8_t *buf)
{
	union proto_body m;
	struct pbuf b;
	int len;

	memset(&m, 0, sizeof(m));
	pbuf_init(&b);
	if (proto_pack(&b, PROTO_STATUS, 1, &m) < 0 || b.len > 64)
		exit(2);
	len = (int)b.len;
	memcpy(buf, b.data, b.len);
	pbuf_free(&b);
	return len;
}

static int cmd_noread(int n, int secs)
{
	uint8_t frame[64], burst[64 * 64];
	int *fd = calloc((size_t)n, sizeof(int)), len = status_frame(frame), i, j;
	unsigned long drops = 0, sent = 0;
	uint64_t end = time_deadline_ms((unsigned)secs * 1000);

	signal(SIGPIPE, SIG_IGN);
	for (j = 0; j < 64; j++)
		memcpy(burst + j * len, frame, (size_t)len);
	for (i = 0; i < n; i++)
		fd[i] = unix_connect(sock_path, 2000);
	printf("connected=%d\n", n);
	fflush(stdout);
	while (time_now_ns() < end) {
		for (i = 0; i < n; i++) {
			ssize_t w;
			if (fd[i] < 0) {
				fd[i] = unix_connect(sock_path, 2000);
				continue;
			}
			w = send(fd[i], burst, (size_t)len * 64, MSG_DONTWAIT | MSG_NOSIGNAL);
			if (w > 0)
				sent += (unsigned long)w / (unsigned long)len;
			if ((w < 0 && errno != EAGAIN && errno != EWOULDBLOCK) ||
			    peer_closed(fd[i])) {
				drops++;
				close(fd[i]);
				fd[i] = -1;
			}
		}
		usleep(1000);
	}
	printf("requests=%lu dropped=%lu\n", sent, drops);
	fflush(stdout);
	return 0;
}

static int cmd_partial(int n, int secs)
{
	static uint8_t buf[PROTO_HDR_LEN + PROTO_MAX_PAYLOAD];
	int *fd = calloc((size_t)n, sizeof(int)), i, sent = 0, refused = 0, closed = 0;

	signal(SIGPIPE, SIG_IGN);
	put32(buf, PROTO_MAGIC);
	buf[5] = PROTO_VERSION;
	buf[7] = PROTO_REGISTER;
	put32(buf + 8, PROTO_MAX_PAYLOAD);
	put32(buf + 12, 1);
	for (i = 0; i < n; i++) {
		fd[i] = unix_connect(sock_path, 2000);
		if (fd[i] < 0) {
			refused++;
			continue;
		}
		/* all but the last byte: krexd holds the frame until the I/O timeout */
		if (fd_write_full(fd[i], buf, sizeof(buf) - 1, time_deadline_ms(2000)) == 0)
			sent++;
	}
	printf("partial_frames=%d refused=%d\n", sent, refused);
	fflush(stdout);
	sleep((unsigned)secs);
	for (i = 0; i < n; i++)
		if (fd[i] >= 0 && peer_closed(fd[i]))
			closed++;
	printf("closed_by_krexd=%d\n", closed);
	fflush(stdout);
	return 0;
}

static const char *reg_label = "attack";

static int do_register(int fd, const char *gpus, uint32_t flags, char *out, size_t len)
{
	union proto_body req, rep;
	uint16_t t;
	uint32_t seq;
	int herr;

	memset(&req, 0, sizeof(req));
	req.reg.flags = flags;
	snprintf(req.reg.label, sizeof(req.reg.label), "%s", reg_label);
	if (gpus && *gpus) {
		int n = conf_split_list(gpus, &req.reg.gpus.name[0][0],
		                        sizeof(req.reg.gpus.name[0]), KREX_MAX_GPUS);
		if (n < 0)
			return -1;
		req.reg.gpus.n = (uint16_t)n;
	}
	if (proto_send(fd, PROTO_REGISTER, 1, &req, time_deadline_ms(5000)) < 0 ||
	    proto_recv(fd, &t, &seq, &rep, time_deadline_ms(5000), &herr) < 0) {
		snprintf(out, len, "io %s", strerror(errno));
		return -1;
	}
	if (t == PROTO_REGISTERED)
		snprintf(out, len, "registered %u", rep.registered.participant);
	else if (t == PROTO_ERROR)
		snprintf(out, len, "error %u %s", rep.error.code, rep.error.message);
	else
		snprintf(out, len, "unexpected %s", proto_type_name(t));
	proto_body_free(t, &rep);
	return t == PROTO_REGISTERED ? 0 : -1;
}

/*
 * The connecting process C hands its socket to a child G and exits.  G waits
 * until $KREX_ATTACK_GO exists (the test recycles C's pid meanwhile), then
 * registers pid 0: "the pid that connected", which is no longer C.
 */
static int cmd_pidreuse(void)
{
	const char *go = getenv("KREX_ATTACK_GO");
	char out[1200];
	pid_t c, g;
	int st, i;

	c = fork();
	if (c < 0)
		return 2;
	if (c == 0) {
		int fd = unix_connect(sock_path, 2000);
		if (fd < 0)
			_exit(2);
		printf("connector=%d\n", (int)getpid());
		fflush(stdout);
		c = getpid();
		g = fork();
		if (g != 0)
			_exit(g < 0 ? 2 : 0); /* the pid krexd took at accept exits */
		/* until it has (this child is re-parented then): a register sent
		 * before would rightly be taken, from a connector still running */
		for (i = 0; i < 3000 && getppid() == c; i++)
			usleep(1000);
		for (i = 0; go && i < 3000 && access(go, F_OK) < 0; i++)
			usleep(10 * 1000);
		do_register(fd, "", 0, out, sizeof(out));
		printf("register=%s\n", out);
		fflush(stdout);
		if (getenv("KREX_ATTACK_HOLD"))
			sleep((unsigned)atoi(getenv("KREX_ATTACK_HOLD")));
		_exit(0);
	}
	waitpid(c, &st, 0);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 2;
}

static int cmd_register(int n, const char *gpus)
{
	char out[1200], last[1200] = "";
	int i, ok = 0, fail = 0, *fd = calloc((size_t)n, sizeof(int));

	for (i = 0; i < n; i++) {
		fd[i] = unix_connect(sock_path, 2000);
		if (fd[i] < 0) {
			fail++;
			snprintf(last, sizeof(last), "connect %s", strerror(errno));
			continue;
		}
		if (do_register(fd[i], gpus, PROTO_REG_NEWCG, out, sizeof(out)) == 0)
			ok++;
		else {
			fail++;
			snprintf(last, sizeof(last), "%s", out);
		}
	}
	printf("registered=%d failed=%d\nlast_error=%s\n", ok, fail, last);
	fflush(stdout);
	/* hold them until stdin closes or a signal */
	if (getenv("KREX_ATTACK_HOLD"))
		sleep((unsigned)atoi(getenv("KREX_ATTACK_HOLD")));
	return 0;
}

/* A process that made itself non-dumpable (its /proc/PID is root's) registers itself. */
static int cmd_nodump(void)
{
	char out[1200];
	int fd;

	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
		return 2;
	fd = unix_connect(sock_path, 2000);
	if (fd < 0)
		return 2;
	do_register(fd, "", 0, out, sizeof(out));
	printf("register=%s\n", out);
	fflush(stdout);
	if (getenv("KREX_ATTACK_HOLD"))
		sleep((unsigned)atoi(getenv("KREX_ATTACK_HOLD")));
	return 0;
}

int main(int argc, char **argv)
{
	sock_path = getenv(KREX_ENV_SOCKET);
	if (!sock_path || argc < 2) {
		fprintf(stderr,
		        "usage: KREX_SOCKET=... krex-attack conns|noread|partial|pidreuse|register|label|nodump ...\n");
		return 2;
	}
	if (!strcmp(argv[1], "conns") && argc == 4)
		return cmd_conns(atoi(argv[2]), atoi(argv[3]));
	if (!strcmp(argv[1], "noread") && argc == 4)
		return cmd_noread(atoi(argv[2]), atoi(argv[3]));
	if (!strcmp(argv[1], "partial") && argc == 4)
		return cmd_partial(atoi(argv[2]), atoi(argv[3]));
	if (!strcmp(argv[1], "pidreuse") && argc == 2)
		return cmd_pidreuse();
	if (!strcmp(argv[1], "nodump") && argc == 2)
		return cmd_nodump();
	if (!strcmp(argv[1], "label") && argc >= 3) {
		reg_label = argv[2];
		return cmd_register(1, argc > 3 ? argv[3] : "");
	}
	if (!strcmp(argv[1], "register") && argc >= 3)
		return cmd_register(atoi(argv[2]), argc > 3 ? argv[3] : "");
	fprintf(stderr, "krex-attack: bad arguments\n");
	return 2;
}
