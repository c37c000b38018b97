/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * krex-testclient.c - a small protocol client for krexd's integration tests
 * and benchmark (libregion and the krex CLI are separate work).
 *
 *	krex-testclient [-s SOCKET] participant [--gpus g,..] [--counter FILE]
 *	                [--ack-drains | --gate-noack] [--holds-contexts] [--label L] [--enter DIR]
 *	                [--cgroup CG] [--newcomers-on-drain] [--ack-after FILE]
 *	                [--ack-status N] [--ctx-making]
 *	krex-testclient [-s SOCKET] region --gpus g [--hold-ms N] [--until FILE] [--count C]
 *	                [--max-ms M] [--timeout-ms T] [--grants FILE] [--no-end] [--twice]
 *	                [--hold-until FILE]
 *	krex-testclient [-s SOCKET] status | release ID | as-pid PID [CGROUP]
 *	krex-testclient [-s SOCKET] unregister PID --after FILE | pipelined FILE
 *	krex-testclient [-s SOCKET] raw badmagic|badversion|badtype|short|long|toolong|stall|reply
 *	krex-testclient [-s SOCKET] bench --gpus g --siblings N --regions R [--busy 1]
 *	krex-testclient [-s SOCKET] summary JOB STEP   (PROTO_SUMMARY, one line)
 *
 * KREX_TEST_JOB=JOB.STEP in the environment registers with that Slurm job
 * and step (what the SPANK plugin would).
 *
 * The socket is -s, else $KREX_SOCKET.  Exit status 0 on success, 1 on a
 * krexd error (printed as "error CODE MESSAGE"), 2 on a usage or I/O error.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "conf.h"
#include "fdio.h"
#include "gatepage.h"
#include "proto.h"
#include "timeutil.h"

#define IO_MS 10000

static const char *sock_path;
static uint32_t seq_next = 1;

static int xconnect(void)
{
	int fd = unix_connect(sock_path, 2000);

	if (fd < 0) {
		fprintf(stderr, "connect %s: %s\n", sock_path, strerror(errno));
		exit(2);
	}
	return fd;
}

/* Send one request and wait for its answer (up to timeout_ms). */
/* The last request was sent between these two times (a process may be
 * preempted on either side of send(); the fairness test needs both bounds). */
static uint64_t last_send_start_ns, last_sent_ns;
/* When this process began to send its last END (0: none yet; --grants). */
static uint64_t last_end_start_ns;

static int call(int fd, uint16_t type, const union proto_body *req, uint16_t *rtype,
                union proto_body *rep, unsigned timeout_ms)
{
	uint32_t seq = seq_next++, rseq;
	int herr;

	last_send_start_ns = time_now_ns();
	if (proto_send(fd, type, seq, req, time_deadline_ms(IO_MS)) < 0)
		return -1;
	last_sent_ns = time_now_ns();
	return proto_recv(fd, rtype, &rseq, rep, time_deadline_ms(timeout_ms), &herr);
}

static int print_error(uint16_t type, const union proto_body *m)
{
	if (type == PROTO_ERROR) {
		printf("error %u %s\n", m->error.code, m->error.message);
		fflush(stdout);
		return 1;
	}
	printf("unexpected %s\n", proto_type_name(type));
	return 2;
}

static void gpus_set(struct proto_gpus *g, const char *list)
{
	memset(g, 0, sizeof(*g));
	if (list && *list) {
		int n = conf_split_list(list, &g->name[0][0], sizeof(g->name[0]), KREX_MAX_GPUS);
		if (n < 0) {
			fprintf(stderr, "bad GPU list %s\n", list);
			exit(2);
		}
		g->n = (uint16_t)n;
	}
}

static const char *reg_cgroup; /* participant --cgroup: the cgroup it names (root) */

static int do_register(int fd, const char *gpus, uint32_t flags, pid_t pid, const char *label,
                       struct proto_registered *out)
{
	union proto_body req, rep;
	uint16_t t;

	memset(&req, 0, sizeof(req));
	if (reg_cgroup)
		snprintf(req.reg.cgroup, sizeof(req.reg.cgroup), "%s", reg_cgroup);
	req.reg.pid = (uint32_t)pid;
	req.reg.flags = flags;
	if (getenv("KREX_TEST_JOB") &&
	    sscanf(getenv("KREX_TEST_JOB"), "%u.%u", &req.reg.job, &req.reg.step) != 2) {
		fprintf(stderr, "KREX_TEST_JOB takes JOB.STEP\n");
		exit(2);
	}
	snprintf(req.reg.label, sizeof(req.reg.label), "%s", label ? label : "testclient");
	gpus_set(&req.reg.gpus, gpus);
	if (call(fd, PROTO_REGISTER, &req, &t, &rep, IO_MS) < 0) {
		fprintf(stderr, "register: %s\n", strerror(errno));
		return 2;
	}
	if (t != PROTO_REGISTERED)
		return print_error(t, &rep);
	if (out)
		*out = rep.registered;
	return 0;
}

/* ---- participant ---- */

struct drainer {
	int fd;
	struct gate_page *page;
	uint32_t me;
	struct proto_registered reg;
	int newcomers;         /* --newcomers-on-drain: see newcomers() */
	cpu_set_t wide;        /* the process's CPUs at registration */
	const char *ack_after; /* --ack-after FILE: each ack waits until FILE exists */
	unsigned ack_status;   /* --ack-status N: the status each ack carries (0 drained) */
};

static void *sleeper(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return NULL;
}

/*
 * --newcomers-on-drain: what a program may do while it drains, before it is
 * frozen: read its mask and re-assert it on its main thread and this one (a
 * library "binding" to the CPUs it finds), start a thread and fork a child
 * that both sleep.  "drain-mask LIST" and the child's pid go to stdout.
 * krexd isolates only once the siblings are frozen, so the mask read here
 * is the wide one; were it narrowed (the isolation ran while the siblings
 * drained, before issue 18), the kernel would keep the re-asserted mask.
 */
static void newcomers(struct drainer *d)
{
	cpu_set_t now;
	pthread_t th;
	pid_t child;
	char list[256];
	int i, n = 0;

	if (sched_getaffinity(0, sizeof(now), &now) < 0)
		return;
	list[0] = '\0';
	for (i = 0; i < CPU_SETSIZE && n < (int)sizeof(list) - 8; i++)
		if (CPU_ISSET(i, &now))
			n += snprintf(list + n, sizeof(list) - (size_t)n, "%s%d", n ? "," : "", i);
	printf("drain-mask %s\n", list);
	(void)!sched_setaffinity(getpid(), sizeof(now), &now);
	(void)!sched_setaffinity(0, sizeof(now), &now);
	pthread_create(&th, NULL, sleeper, NULL);
	child = fork();
	if (child == 0) {
		for (;;)
			pause();
	}
	printf("forked %d\n", (int)child);
	fflush(stdout);
	d->newcomers = 0;
}

static int closed_by_other(const struct drainer *d)
{
	unsigned i;
	uint32_t by;

	for (i = 0; i < d->reg.nslots; i++) {
		by = __atomic_load_n(&d->page->slot[d->reg.slot[i]].closed_by, __ATOMIC_ACQUIRE);
		if (by && by != d->me)
			return 1;
	}
	return 0;
}

/*
 * The drain thread: ack every generation that closes our gates.  It looks at
 * the page before it waits (as libregion's does): a gate closed between the
 * registration and this thread's start is acked too, not taken for the
 * state it began in.
 */
static void *drain_thread(void *arg)
{
	struct drainer *d = arg;
	struct timespec ts = {0, 100 * 1000 * 1000};
	uint32_t acked = 0, gen;
	union proto_body m;

	for (;;) {
		gen = __atomic_load_n(&d->page->generation, __ATOMIC_ACQUIRE);
		if (gen == acked || !closed_by_other(d)) {
			syscall(SYS_futex, &d->page->generation, FUTEX_WAIT, gen, &ts, NULL, 0);
			continue;
		}
		acked = gen;
		if (d->newcomers)
			newcomers(d);
		while (d->ack_after && access(d->ack_after, F_OK) != 0) {
			struct timespec w = {0, 5 * 1000 * 1000};
			nanosleep(&w, NULL); /* a test holds krexd in the drain */
		}
		memset(&m, 0, sizeof(m));
		m.ack.generation = gen;
		m.ack.status = d->ack_status;
		if (proto_send(d->fd, PROTO_DRAIN_ACK, seq_next++, &m, time_deadline_ms(IO_MS)) < 0)
			return NULL;
	}
}

static void counter_write(int fd, unsigned long long n)
{
	char buf[32];
	int len = snprintf(buf, sizeof(buf), "%llu\n", n);

	if (pwrite(fd, buf, (size_t)len, 0) == len)
		(void)!ftruncate(fd, len);
}

static int cmd_participant(int argc, char **argv)
{
	const char *gpus = NULL, *counter = NULL, *label = NULL, *enter = NULL;
	int ack = 0, gate_noack = 0, ctx_making = 0, fd, cfd = -1, i, rc;
	uint32_t holdctx = 0;
	static struct drainer d;
	unsigned long long n = 0;
	uint64_t next = 0;
	pthread_t th;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--gpus") && i + 1 < argc)
			gpus = argv[++i];
		else if (!strcmp(argv[i], "--counter") && i + 1 < argc)
			counter = argv[++i];
		else if (!strcmp(argv[i], "--label") && i + 1 < argc)
			label = argv[++i];
		else if (!strcmp(argv[i], "--ack-drains"))
			ack = 1;
		else if (!strcmp(argv[i], "--gate-noack"))
			gate_noack = 1;
		else if (!strcmp(argv[i], "--ctx-making"))
			ctx_making =
			        1; /* says it makes GPU contexts, and never that it made them */
		else if (!strcmp(argv[i], "--holds-contexts"))
			holdctx = PROTO_REG_HOLDCTX; /* claims its contexts wait at a gate */
		else if (!strcmp(argv[i], "--newcomers-on-drain"))
			ack = d.newcomers = 1;
		else if (!strcmp(argv[i], "--ack-status") && i + 1 < argc) {
			ack = 1;
			d.ack_status = (unsigned)atoi(argv[++i]);
		} else if (!strcmp(argv[i], "--ack-after") && i + 1 < argc) {
			ack = 1;
			d.ack_after = argv[++i];
		} else if (!strcmp(argv[i], "--cgroup") && i + 1 < argc)
			reg_cgroup = argv[++i]; /* named in the registration (root) */
		else if (!strcmp(argv[i], "--enter") && i + 1 < argc)
			enter = argv[++i]; /* a cgroup krexd did not make (a Slurm step's) */
		else
			return 2;
	}
	if (enter) {
		char path[600];
		FILE *f;
		snprintf(path, sizeof(path), "%s/cgroup.procs", enter);
		f = fopen(path, "w");
		if (!f || fprintf(f, "%d\n", (int)getpid()) < 0 || fclose(f) != 0) {
			fprintf(stderr, "cannot enter %s: %s\n", enter, strerror(errno));
			return 2;
		}
	}
	fd = xconnect();
	rc = do_register(fd, gpus, (ack || gate_noack ? PROTO_REG_GATE : 0) | holdctx, 0, label,
	                 &d.reg);
	if (rc)
		return rc;
	printf("registered %u\n", d.reg.participant);
	fflush(stdout);
	if (ctx_making) {
		union proto_body m = {.ctxm = {.making = 1}};
		uint16_t type;
		int herr;

		if (proto_send(fd, PROTO_CTX_MAKING, seq_next++, &m, time_deadline_ms(IO_MS)) < 0)
			return 2;
		/* no answer to a member; a connection without a drain thread gets ERROR */
		if (!ack && !gate_noack) {
			if (proto_recv(fd, &type, NULL, &m, time_deadline_ms(IO_MS), &herr) < 0)
				return 2;
			if (type == PROTO_ERROR)
				printf("ctx_making: error %u %s\n", m.error.code, m.error.message);
			proto_body_free(type, &m);
		}
		printf("ctx_making sent\n");
		fflush(stdout);
	}
	if (ack) {
		int gfd = open(d.reg.gate_path, O_RDONLY | O_CLOEXEC);
		d.page = gfd < 0 ? MAP_FAILED
		                 : mmap(NULL, GATE_PAGE_SIZE, PROT_READ, MAP_SHARED, gfd, 0);
		if (d.page == MAP_FAILED) {
			fprintf(stderr, "gate page %s: %s\n", d.reg.gate_path, strerror(errno));
			return 2;
		}
		d.fd = fd;
		d.me = d.reg.participant;
		sched_getaffinity(0, sizeof(d.wide), &d.wide);
		pthread_create(&th, NULL, drain_thread, &d);
	}
	if (counter) {
		cfd = open(counter, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
		if (cfd < 0)
			return 2;
	}
	for (;;) { /* busy: progress stops only when frozen */
		n++;
		if ((n & 0x3ff) == 0 && time_now_ns() >= next) {
			if (cfd >= 0)
				counter_write(cfd, n);
			next = time_now_ns() + 2 * NS_PER_MS;
		}
	}
}

/* ---- region ---- */

static void print_cert(const struct krex_certificate *c)
{
	static const char *const outcome[] = {"clean", "expired", "degraded", "unprotected"};

	printf("region_id=%llu\noutcome=%s\nwait_us=%llu\ndrain_us=%llu\nfreeze_us=%llu\n"
	       "isolate_us=%llu\nheld_us=%llu\nlease_us=%llu\nsiblings=%u\ndrained=%u\nlate=%u\n"
	       "frozen=%u\nknown=%u\nforeign=%d\nmoved=%d\nsm_clock_start_mhz=%d\ngpus=%s\n"
	       "note=%s\n",
	       (unsigned long long)c->region_id, c->outcome < 4 ? outcome[c->outcome] : "?",
	       (unsigned long long)c->wait_us, (unsigned long long)c->drain_us,
	       (unsigned long long)c->freeze_us, (unsigned long long)c->isolate_us,
	       (unsigned long long)c->held_us, (unsigned long long)c->lease_us, c->siblings,
	       c->drained, c->late, c->frozen, c->known, c->foreign, c->moved,
	       c->sm_clock_start_mhz, c->gpus, c->note);
	printf("settle_us=%llu\nsm_clock_end_mhz=%d\nsm_clock_min_mhz=%d\nsm_clock_max_mhz=%d\n"
	       "sm_clock_nominal_mhz=%d\nclock_samples=%u\nclock_reasons=%llu\n"
	       "temp_start_c=%d\ntemp_end_c=%d\nviolation_power_us=%llu\n"
	       "violation_thermal_us=%llu\nchained=%u\nchain_us=%llu\n",
	       (unsigned long long)c->settle_us, c->sm_clock_end_mhz, c->sm_clock_min_mhz,
	       c->sm_clock_max_mhz, c->sm_clock_nominal_mhz, c->clock_samples,
	       (unsigned long long)c->clock_reasons, c->temp_start_c, c->temp_end_c,
	       (unsigned long long)c->violation_power_us,
	       (unsigned long long)c->violation_thermal_us, c->chained,
	       (unsigned long long)c->chain_us);
	printf("own_power_cap_us=%llu\nown_power_cap_first_us=%lld\nown_power_cap_samples=%u\n",
	       (unsigned long long)c->own_power_cap_us, (long long)c->own_power_cap_first_us,
	       c->own_power_cap_samples);
	printf("ungated=%u\nungated_gpu=%d\nungated_who=%s\n", c->ungated, c->ungated_gpu,
	       c->ungated_who);
	fflush(stdout);
}

struct region_opts {
	const char *gpus;
	unsigned hold_ms, count, max_ms, timeout_ms;
	const char *grants;
	const char *until;      /* after hold_ms, hold until this file exists */
	const char *hold_until; /* hold until this file exists (the test's event), then end */
	int no_end, quiet, twice;
};

static int region_once(int fd, const struct region_opts *o, FILE *grants, uint64_t *rtt_ns);

/* Inside a region: a second connection of the same process asks for another one. */
static void region_second(const struct region_opts *o)
{
	struct region_opts o2 = *o;
	int fd2 = xconnect();

	o2.twice = 0;
	o2.no_end = 0;
	if (do_register(fd2, o->gpus, 0, 0, "second", NULL) == 0)
		region_once(fd2, &o2, NULL, NULL);
	close(fd2);
}

static int region_once(int fd, const struct region_opts *o, FILE *grants, uint64_t *rtt_ns)
{
	union proto_body req, rep;
	uint64_t t0 = time_now_ns(), t1;
	uint16_t t;

	memset(&req, 0, sizeof(req));
	gpus_set(&req.begin.gpus, o->gpus);
	req.begin.max_us = (uint64_t)o->max_ms * 1000;
	req.begin.timeout_ms = o->timeout_ms;
	if (call(fd, PROTO_REGION_BEGIN, &req, &t, &rep,
	         o->timeout_ms ? o->timeout_ms + 5000 : 700000) < 0) {
		fprintf(stderr, "begin: %s\n", strerror(errno));
		return 2;
	}
	if (t != PROTO_GRANT)
		return print_error(t, &rep);
	t1 = time_now_ns();
	if (grants) {
		fprintf(grants, "%d %llu %llu %llu %llu %llu\n", (int)getpid(),
		        (unsigned long long)t1, (unsigned long long)rep.grant.region_id,
		        (unsigned long long)last_send_start_ns, (unsigned long long)last_sent_ns,
		        (unsigned long long)last_end_start_ns);
		fflush(grants);
	}
	if (!o->quiet) {
		printf("granted %llu\n", (unsigned long long)rep.grant.region_id);
		fflush(stdout);
	}
	if (o->hold_ms) {
		struct timespec ts = {o->hold_ms / 1000, (long)(o->hold_ms % 1000) * 1000000L};
		while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
			;
	}
	for (unsigned w = 0; o->until && access(o->until, F_OK) < 0 && w < 4000; w++) {
		struct timespec ts = {0, 5000000L}; /* at most 20 s */
		nanosleep(&ts, NULL);
	}
	if (o->hold_until) {
		struct timespec ts = {0, 5000000L}; /* a look every 5 ms: the test decides when */
		while (access(o->hold_until, F_OK) < 0)
			nanosleep(&ts, NULL);
	}
	if (o->twice)
		region_second(o);
	if (o->no_end)
		pause();
	memset(&req, 0, sizeof(req));
	last_end_start_ns = time_now_ns();
	if (call(fd, PROTO_REGION_END, &req, &t, &rep, IO_MS) < 0) {
		fprintf(stderr, "end: %s\n", strerror(errno));
		return 2;
	}
	if (rtt_ns)
		*rtt_ns = time_now_ns() - t0 - (uint64_t)o->hold_ms * NS_PER_MS;
	if (t != PROTO_CERT)
		return print_error(t, &rep);
	if (!o->quiet)
		print_cert(&rep.cert);
	return 0;
}

static int region_args(int argc, char **argv, struct region_opts *o)
{
	int i;

	memset(o, 0, sizeof(*o));
	o->count = 1;
	for (i = 1; i < argc; i++) {
		if (i + 1 < argc && !strcmp(argv[i], "--gpus"))
			o->gpus = argv[++i];
		else if (i + 1 < argc && !strcmp(argv[i], "--hold-ms"))
			o->hold_ms = (unsigned)atoi(argv[++i]);
		else if (i + 1 < argc && !strcmp(argv[i], "--count"))
			o->count = (unsigned)atoi(argv[++i]);
		else if (i + 1 < argc && !strcmp(argv[i], "--max-ms"))
			o->max_ms = (unsigned)atoi(argv[++i]);
		else if (i + 1 < argc && !strcmp(argv[i], "--timeout-ms"))
			o->timeout_ms = (unsigned)atoi(argv[++i]);
		else if (i + 1 < argc && !strcmp(argv[i], "--grants"))
			o->grants = argv[++i];
		else if (i + 1 < argc && !strcmp(argv[i], "--until"))
			o->until = argv[++i];
		else if (i + 1 < argc && !strcmp(argv[i], "--hold-until"))
			o->hold_until = argv[++i];
		else if (!strcmp(argv[i], "--no-end"))
			o->no_end = 1;
		else if (!strcmp(argv[i], "--twice"))
			o->twice = 1;
		else if (!strcmp(argv[i], "--quiet"))
			o->quiet = 1;
		else if (i + 1 < argc && !strcmp(argv[i], "--siblings"))
			i++; /* bench only */
		else if (i + 1 < argc &&
		         (!strcmp(argv[i], "--regions") || !strcmp(argv[i], "--busy")))
			i++;
		else
			return -1;
	}
	return 0;
}

static int cmd_region(int argc, char **argv)
{
	struct region_opts o;
	FILE *grants = NULL;
	unsigned i;
	int fd, rc;

	if (region_args(argc, argv, &o) < 0)
		return 2;
	fd = xconnect();
	rc = do_register(fd, o.gpus, 0, 0, "region", NULL);
	if (rc)
		return rc;
	if (o.grants && !(grants = fopen(o.grants, "a")))
		return 2;
	for (i = 0; i < o.count; i++) {
		rc = region_once(fd, &o, grants, NULL);
		if (rc)
			return rc;
	}
	return 0;
}

/* ---- status, release, as-pid ---- */

static int cmd_status(void)
{
	union proto_body req, rep;
	struct proto_status_reply *s = &rep.status_reply;
	uint16_t t;
	unsigned i;
	int fd = xconnect();

	memset(&req, 0, sizeof(req));
	if (call(fd, PROTO_STATUS, &req, &t, &rep, IO_MS) < 0)
		return 2;
	if (t != PROTO_STATUS_REPLY)
		return print_error(t, &rep);
	printf("node=%s freezer=%s isolation=%s regions_total=%llu\n", s->node, s->freezer,
	       s->isolation, (unsigned long long)s->regions_total);
	for (i = 0; i < s->ngpus; i++)
		printf("gpu %s slot=%u holder=%u region=%llu queued=%u\n", s->gpu[i].name,
		       s->gpu[i].slot, s->gpu[i].holder, (unsigned long long)s->gpu[i].region_id,
		       s->gpu[i].queued);
	for (i = 0; i < s->nparts; i++)
		printf("participant %u pid=%u uid=%u state=%u members=%u gpus=%s label=%s cgroup=%s\n",
		       s->parts[i].id, s->parts[i].pid, s->parts[i].uid, s->parts[i].state,
		       s->parts[i].members, s->parts[i].gpus, s->parts[i].label,
		       s->parts[i].cgroup);
	for (i = 0; i < s->nregions; i++)
		printf("region %llu owner=%u pid=%u state=%s gpus=%s\n",
		       (unsigned long long)s->regions[i].id, s->regions[i].owner, s->regions[i].pid,
		       s->regions[i].state ? "held" : "queued", s->regions[i].gpus);
	proto_body_free(PROTO_STATUS_REPLY, &rep);
	return 0;
}

static int cmd_release(const char *id)
{
	union proto_body req, rep;
	uint16_t t;
	int fd = xconnect();

	memset(&req, 0, sizeof(req));
	req.release.region_id = strtoull(id, NULL, 10);
	if (call(fd, PROTO_RELEASE, &req, &t, &rep, IO_MS) < 0)
		return 2;
	if (t != PROTO_OK)
		return print_error(t, &rep);
	printf("released %s\n", id);
	return 0;
}

/* Register pid (and, as root, a cgroup it has of its own). */
static int cmd_as_pid(const char *pid, const char *cgroup)
{
	union proto_body req, rep;
	int fd = xconnect();
	uint16_t t;

	memset(&req, 0, sizeof(req));
	req.reg.pid = (uint32_t)atoi(pid);
	if (getenv("KREX_TEST_JOB") &&
	    sscanf(getenv("KREX_TEST_JOB"), "%u.%u", &req.reg.job, &req.reg.step) != 2)
		return 2;
	snprintf(req.reg.label, sizeof(req.reg.label), "as-pid");
	snprintf(req.reg.cgroup, sizeof(req.reg.cgroup), "%s", cgroup ? cgroup : "");
	gpus_set(&req.reg.gpus, "g0");
	if (call(fd, PROTO_REGISTER, &req, &t, &rep, IO_MS) < 0)
		return 2;
	if (t != PROTO_REGISTERED)
		return print_error(t, &rep);
	printf("registered %u\n", rep.registered.participant);
	return 0;
}

/*
 * pipelined FILE: REGISTER this process on two connections and, on the
 * first, STATUS before any answer came; print each answer as it comes
 * ("1 error CODE MSG", "1 registered ID", "2 registered ID", connection
 * first), then wait until FILE exists.  With the move into its cgroup held
 * off krexd's loop (KREX_TEST_MOVE_HOLD), the STATUS is refused at once
 * and both REGISTERs are answered when the move is done, with one id.
 */
static int cmd_pipelined(const char *file)
{
	union proto_body req, rep;
	int fd[2] = {xconnect(), xconnect()}, herr, i, c;
	uint32_t rseq;
	uint16_t t;

	memset(&req, 0, sizeof(req));
	snprintf(req.reg.label, sizeof(req.reg.label), "pipelined");
	gpus_set(&req.reg.gpus, "g0");
	if (proto_send(fd[0], PROTO_REGISTER, seq_next++, &req, time_deadline_ms(IO_MS)) < 0 ||
	    proto_send(fd[1], PROTO_REGISTER, seq_next++, &req, time_deadline_ms(IO_MS)) < 0)
		return 2;
	memset(&req, 0, sizeof(req));
	if (proto_send(fd[0], PROTO_STATUS, seq_next++, &req, time_deadline_ms(IO_MS)) < 0)
		return 2;
	printf("sent\n");
	fflush(stdout);
	for (i = 0; i < 3; i++) {
		c = i < 2 ? 0 : 1;
		if (proto_recv(fd[c], &t, &rseq, &rep, time_deadline_ms(60000), &herr) < 0) {
			printf("%d none: %s\n", c + 1, strerror(errno));
			return 2;
		}
		if (t == PROTO_ERROR)
			printf("%d error %u %s\n", c + 1, rep.error.code, rep.error.message);
		else if (t == PROTO_REGISTERED)
			printf("%d registered %u\n", c + 1, rep.registered.participant);
		else
			printf("%d %s\n", c + 1, proto_type_name(t));
		fflush(stdout);
		proto_body_free(t, &rep);
	}
	for (i = 0; access(file, F_OK) < 0 && i < 60000; i++)
		usleep(1000);
	return 0;
}

/*
 * Connect now; once FILE exists, send UNREGISTER for PID and exit without
 * reading the answer (a test stops krexd meanwhile, so that the request and
 * the death of PID reach it in one batch of events).
 */
static int cmd_unregister(const char *pid, const char *file)
{
	union proto_body req;
	int fd = xconnect();
	unsigned i;

	for (i = 0; access(file, F_OK) < 0 && i < 30000; i++)
		usleep(1000);
	memset(&req, 0, sizeof(req));
	req.unreg.pid = (uint32_t)atoi(pid);
	if (proto_send(fd, PROTO_UNREGISTER, seq_next++, &req, time_deadline_ms(IO_MS)) < 0)
		return 2;
	printf("sent\n");
	return 0;
}

/* ---- raw: malformed input ---- */

static void put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

/* Send raw bytes, then print the answer ("error CODE MSG" or "none") and "closed" if EOF follows. */
static int cmd_raw(const char *mode)
{
	uint8_t buf[64] = {0};
	union proto_body m;
	size_t len = PROTO_HDR_LEN;
	uint16_t t;
	uint32_t seq;
	int fd = xconnect(), herr, rc;
	char c;

	put32(buf, PROTO_MAGIC);
	buf[4] = 0, buf[5] = PROTO_VERSION;
	buf[6] = 0, buf[7] = PROTO_STATUS;
	put32(buf + 8, 4); /* STATUS carries one u32 */
	put32(buf + 12, 7);
	len += 4;
	if (!strcmp(mode, "badmagic"))
		put32(buf, 0x12345678);
	else if (!strcmp(mode, "badversion"))
		buf[5] = 99;
	else if (!strcmp(mode, "badtype"))
		buf[7] = 200;
	else if (!strcmp(mode, "short")) /* length says 2: too short for the u32 */
		put32(buf + 8, 2), len = PROTO_HDR_LEN + 2;
	else if (!strcmp(mode, "long")) /* 4 trailing bytes */
		put32(buf + 8, 8), len = PROTO_HDR_LEN + 8;
	else if (!strcmp(mode, "toolong"))
		put32(buf + 8, PROTO_MAX_PAYLOAD + 1);
	else if (!strcmp(mode, "stall")) /* says 4, sends 2, then waits */
		len = PROTO_HDR_LEN + 2;
	else if (!strcmp(mode, "reply")) /* a krexd->client type */
		buf[7] = PROTO_GRANT;
	else
		return 2;
	if (fd_write_full(fd, buf, len, time_deadline_ms(IO_MS)) < 0)
		return 2;
	rc = proto_recv(fd, &t, &seq, &m, time_deadline_ms(IO_MS), &herr);
	if (rc < 0)
		printf("none (%s)\n", strerror(errno));
	else if (t == PROTO_ERROR)
		printf("error %u %s\n", m.error.code, m.error.message);
	else
		printf("answer %s\n", proto_type_name(t));
	proto_body_free(t, &m);
	if (fd_read_full(fd, &c, 1, time_deadline_ms(IO_MS)) < 0 && errno == ECONNRESET)
		printf("closed\n");
	return 0;
}

/* ---- bench ---- */

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static pid_t sibling_spawn(const char *gpus, int busy)
{
	int p[2];
	pid_t pid;
	char c;

	if (pipe(p) < 0)
		return -1;
	pid = fork();
	if (pid == 0) {
		int fd = xconnect();
		close(p[0]);
		if (do_register(fd, gpus, 0, 0, "bench-sibling", NULL))
			_exit(1);
		(void)!write(p[1], "x", 1);
		for (;;)
			if (!busy)
				pause(); /* else spin: a freeze must stop a running process */
	}
	close(p[1]);
	if (pid < 0 || read(p[0], &c, 1) != 1) {
		close(p[0]);
		return -1;
	}
	close(p[0]);
	return pid;
}

static int cmd_bench(int argc, char **argv)
{
	unsigned nsib = 0, nreg = 1000, i;
	int busy = 0;
	struct region_opts o;
	pid_t *sib;
	uint64_t *rtt, t0, total;
	int fd, rc = 0;

	for (i = 1; i + 1 < (unsigned)argc; i++) {
		if (!strcmp(argv[i], "--siblings"))
			nsib = (unsigned)atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--regions"))
			nreg = (unsigned)atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--busy"))
			busy = atoi(argv[i + 1]);
	}
	if (region_args(argc, argv, &o) < 0 || !nreg)
		return 2;
	o.quiet = 1;
	o.hold_ms = 0;
	sib = calloc(nsib + 1, sizeof(*sib));
	rtt = calloc(nreg, sizeof(*rtt));
	for (i = 0; i < nsib; i++)
		if ((sib[i] = sibling_spawn(o.gpus, busy)) < 0) {
			fprintf(stderr, "cannot start sibling %u\n", i);
			nsib = i;
			rc = 2;
			goto out;
		}
	fd = xconnect();
	if ((rc = do_register(fd, o.gpus, 0, 0, "bench-owner", NULL)))
		goto out;
	t0 = time_now_ns();
	for (i = 0; i < nreg; i++)
		if ((rc = region_once(fd, &o, NULL, &rtt[i])))
			goto out;
	total = time_now_ns() - t0;
	qsort(rtt, nreg, sizeof(*rtt), cmp_u64);
	printf("siblings=%u regions=%u p50_us=%.1f p95_us=%.1f p99_us=%.1f max_us=%.1f rate_per_s=%.0f\n",
	       nsib, nreg, rtt[nreg / 2] / 1e3, rtt[(nreg * 95) / 100] / 1e3,
	       rtt[(nreg * 99) / 100] / 1e3, rtt[nreg - 1] / 1e3, nreg / (total / 1e9));
out:
	for (i = 0; i < nsib; i++)
		kill(sib[i], SIGKILL);
	for (i = 0; i < nsib; i++)
		waitpid(sib[i], NULL, 0);
	free(sib);
	free(rtt);
	return rc;
}

static int cmd_summary(const char *job, const char *step)
{
	union proto_body req, rep;
	struct proto_summary_reply *r = &rep.summary_reply;
	uint16_t t;
	int fd = xconnect();

	memset(&req, 0, sizeof(req));
	req.summary.job = (uint32_t)strtoul(job, NULL, 10);
	req.summary.step = (uint32_t)strtoul(step, NULL, 10);
	if (call(fd, PROTO_SUMMARY, &req, &t, &rep, IO_MS) < 0)
		return 2;
	if (t != PROTO_SUMMARY_REPLY)
		return print_error(t, &rep);
	printf("job=%u step=%u regions=%u clean=%u degraded=%u expired=%u late=%u p50=%llu p95=%llu max=%llu held=%llu\n",
	       r->job, r->step, r->regions, r->clean, r->degraded, r->expired, r->late,
	       (unsigned long long)r->entry_p50_us, (unsigned long long)r->entry_p95_us,
	       (unsigned long long)r->entry_max_us, (unsigned long long)r->held_us);
	return 0;
}

int main(int argc, char **argv)
{
	signal(SIGPIPE, SIG_IGN);
	sock_path = getenv(KREX_ENV_SOCKET);
	if (argc > 2 && !strcmp(argv[1], "-s")) {
		sock_path = argv[2];
		argc -= 2;
		argv += 2;
	}
	if (argc < 2 || !sock_path) {
		fprintf(stderr,
		        "usage: krex-testclient [-s SOCKET] COMMAND ... (see the source)\n");
		return 2;
	}
	if (!strcmp(argv[1], "participant"))
		return cmd_participant(argc - 1, argv + 1);
	if (!strcmp(argv[1], "region"))
		return cmd_region(argc - 1, argv + 1);
	if (!strcmp(argv[1], "bench"))
		return cmd_bench(argc - 1, argv + 1);
	if (!strcmp(argv[1], "status"))
		return cmd_status();
	if (argc > 2 && !strcmp(argv[1], "release"))
		return cmd_release(argv[2]);
	if (argc > 4 && !strcmp(argv[1], "unregister") && !strcmp(argv[3], "--after"))
		return cmd_unregister(argv[2], argv[4]);
	if (argc > 2 && !strcmp(argv[1], "as-pid"))
		return cmd_as_pid(argv[2], argc > 3 ? argv[3] : NULL);
	if (argc > 2 && !strcmp(argv[1], "pipelined"))
		return cmd_pipelined(argv[2]);
	if (argc > 3 && !strcmp(argv[1], "summary"))
		return cmd_summary(argv[2], argv[3]);
	if (argc > 2 && !strcmp(argv[1], "raw"))
		return cmd_raw(argv[2]);
	fprintf(stderr, "unknown command %s\n", argv[1]);
	return 2;
}
