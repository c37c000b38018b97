/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * krexd.c - the per-node KREX coordinator: main() as a checklist, the
 * daemon start-up (double fork, a pipe that carries start-up errors back),
 * signals through signalfd, and the single epoll loop.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/epoll.h>
#include <sys/inotify.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "conf.h"
#include "fdio.h"
#include "history.h"
#include "isolate.h"
#include "krexd.h"
#include "conn.h"
#include "outbox.h"
#include "part.h"
#include "gpuprocs.h"
#include "gpuslot.h"
#include "region.h"
#include "log.h"
#include "logwriter.h"
#include "mover.h"
#include "nvml.h"
#include "sign.h"
#include "timeutil.h"

static struct krexd K;
static int startup_pipe = -1; /* write end, in the daemon until it is up */
static int lock_fd = -1;

/* Start-up failed: tell the launcher (or stderr) and exit 1. */
static void __attribute__((noreturn, format(printf, 1, 2))) die(const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (startup_pipe >= 0) {
		(void)!write(startup_pipe, msg, strlen(msg));
		close(startup_pipe);
	} else
		/* "<3>": the journal files it as an error (log.h). */
		fprintf(stderr, "%s%s%s\n", log_stderr_is_journal() ? "<3>" : "",
		        strncmp(msg, "krexd ", 6) ? "krexd: " : "", msg);
	exit(1);
}

static void usage(FILE *f)
{
	fprintf(f,
	        "usage: krexd [-F] [-v] [-c FILE] [-r RUNDIR] [-o key=value]...\n"
	        "  -F             stay in the foreground, log to stderr\n"
	        "  -c FILE        config file (default %s)\n"
	        "  -r RUNDIR      run directory (default %s)\n"
	        "  -o key=value   override a config key (repeatable)\n"
	        "  -v             debug logging\n"
	        "  -h, -V         help, version\n"
	        "See krexd(8) and krexd.conf(5).\n",
	        KREX_DEFAULT_CONF, KREX_DEFAULT_RUNDIR);
}

/* Defaults, then the file, then the overrides in order. */
static int config_build(struct krexd *k, struct krexd_config *c, char *err, size_t errlen)
{
	char why[512];
	int i;

	config_defaults(c);
	if (config_load(c, k->conf_path, k->conf_missing_ok, err, errlen) < 0)
		return -1;
	for (i = 0; i < k->noverrides; i++) {
		if (conf_parse_arg(k->overrides[i], config_kv, c, why, sizeof(why)) < 0) {
			snprintf(err, errlen, "-o %s: %s", k->overrides[i], why);
			return -1;
		}
	}
	return 0;
}

static void parse_args(struct krexd *k, int argc, char **argv)
{
	char err[1024], *o;
	int ch;

	k->conf_path = KREX_DEFAULT_CONF;
	k->conf_missing_ok = 1;
	k->overrides = calloc((size_t)argc + 1, sizeof(char *));
	while ((ch = getopt(argc, argv, "Fvc:r:o:hV")) != -1) {
		switch (ch) {
		case 'F':
			k->foreground = 1;
			break;
		case 'v':
			k->overrides[k->noverrides++] = "log_level=debug";
			break;
		case 'c':
			k->conf_path = optarg;
			k->conf_missing_ok = 0;
			break;
		case 'r':
			if (asprintf(&o, "run_dir=%s", optarg) < 0)
				die("out of memory");
			k->overrides[k->noverrides++] = o;
			break;
		case 'o':
			k->overrides[k->noverrides++] = optarg;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		case 'V':
			printf("krexd %s (protocol %d)\n", PACKAGE_VERSION, PROTO_VERSION);
			exit(0);
		default:
			usage(stderr);
			exit(2);
		}
	}
	if (optind < argc) {
		usage(stderr);
		exit(2);
	}
	if (config_build(k, &k->cfg, err, sizeof(err)) < 0)
		die("%s", err);
}

/*
 * Double fork: the launcher waits on a pipe until the daemon says it is up
 * (one NUL byte) or why it is not (the message), and exits 0 or 1.
 */
static void daemonize(void)
{
	char buf[1024];
	int fds[2], n, got = 0;
	pid_t pid;

	if (pipe2(fds, O_CLOEXEC) < 0)
		die("pipe: %s", strerror(errno));
	pid = fork();
	if (pid < 0)
		die("fork: %s", strerror(errno));
	if (pid > 0) {
		close(fds[1]);
		while (got < (int)sizeof(buf) - 1 &&
		       (n = (int)read(fds[0], buf + got, sizeof(buf) - 1 - (size_t)got)) > 0)
			got += n;
		buf[got] = '\0';
		if (got == 1 && buf[0] == '\0')
			exit(0);
		fprintf(stderr, "%s%s\n", strncmp(buf, "krexd ", 6) ? "krexd: " : "",
		        got ? buf : "exited during start-up");
		exit(1);
	}
	close(fds[0]);
	startup_pipe = fds[1];
	if (setsid() < 0)
		die("setsid: %s", strerror(errno));
	pid = fork();
	if (pid < 0)
		die("fork: %s", strerror(errno));
	if (pid > 0)
		_exit(0);
	if (chdir("/") < 0)
		die("chdir /: %s", strerror(errno));
	umask(022);
}

static void startup_done(void)
{
	int fd;

	if (startup_pipe < 0)
		return;
	fd = open("/dev/null", O_RDWR);
	if (fd >= 0) {
		dup2(fd, 0);
		dup2(fd, 1);
		dup2(fd, 2);
		if (fd > 2)
			close(fd);
	}
	(void)!write(startup_pipe, "", 1);
	close(startup_pipe);
	startup_pipe = -1;
}

/* Take the lock file; a second krexd on the same run dir fails here. */
static void lock_take(const struct krexd *k)
{
	char path[512], buf[32];
	ssize_t n;

	if (xsnprintf(path, sizeof(path), "%s/%s", k->cfg.run_dir, KREX_LOCK_NAME) < 0)
		die("run_dir too long");
	lock_fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (lock_fd < 0)
		die("%s: %s", path, strerror(errno));
	if (flock(lock_fd, LOCK_EX | LOCK_NB) < 0) {
		n = pread(lock_fd, buf, sizeof(buf) - 1, 0);
		buf[n > 0 ? n : 0] = '\0';
		buf[strcspn(buf, "\n")] = '\0';
		die("krexd already running (pid %s) on %s", buf[0] ? buf : "?", k->cfg.run_dir);
	}
}

/* The lock file and the pid file both hold our pid (after daemonizing). */
static void pidfile_write(const struct krexd *k)
{
	char path[512], buf[32];
	int fd, len = snprintf(buf, sizeof(buf), "%d\n", (int)getpid());

	if (ftruncate(lock_fd, 0) < 0 || pwrite(lock_fd, buf, (size_t)len, 0) != len)
		die("lock file: %s", strerror(errno));
	if (xsnprintf(path, sizeof(path), "%s/%s", k->cfg.run_dir, KREX_PIDFILE_NAME) < 0)
		die("run_dir too long");
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0 || write(fd, buf, (size_t)len) != len)
		die("%s: %s", path, strerror(errno));
	close(fd);
}

/* Built-in undo of a line a previous krexd left (gates are open already). */
static int undo_builtin(const char *line)
{
	if (!strncmp(line, "gate ", 5))
		return 0; /* gatectl_open opened every slot and woke the waiters */
	return freezer_undo_line(line);
}

static void epoll_add(struct krexd *k, int fd, struct ep_item *it, int kind)
{
	struct epoll_event ev = {.events = EPOLLIN};

	it->kind = kind;
	it->ptr = k;
	ev.data.ptr = it;
	if (epoll_ctl(k->epfd, EPOLL_CTL_ADD, fd, &ev) < 0)
		die("epoll_ctl: %s", strerror(errno));
}

/*
 * Raise RLIMIT_NOFILE (to KREX_NOFILE_WANT, the hard limit permitting): a
 * thaw or an undo must never find krexd out of fds.  Connections are refused
 * once fewer than reserve_fds are left.
 */
static void nofile_raise(struct krexd *k)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return;
	if (rl.rlim_cur < KREX_NOFILE_WANT) {
		struct rlimit want = rl;
		want.rlim_cur = rl.rlim_max == RLIM_INFINITY || rl.rlim_max > KREX_NOFILE_WANT
		                        ? KREX_NOFILE_WANT
		                        : rl.rlim_max;
		if (want.rlim_max != RLIM_INFINITY && want.rlim_max < KREX_NOFILE_WANT &&
		    geteuid() == 0)
			want.rlim_max = want.rlim_cur = KREX_NOFILE_WANT;
		if (setrlimit(RLIMIT_NOFILE, &want) == 0 || setrlimit(RLIMIT_NOFILE, &rl) == 0)
			getrlimit(RLIMIT_NOFILE, &rl);
	}
	k->fd_limit = rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur > 1u << 30
	                      ? 1u << 30
	                      : (unsigned)rl.rlim_cur;
	if (k->fd_limit <= 2 * k->cfg.reserve_fds)
		log_warn(
		        "RLIMIT_NOFILE is %u, reserve_fds %u: krexd will refuse most connections; raise LimitNOFILE",
		        k->fd_limit, k->cfg.reserve_fds);
}

static void setup(struct krexd *k)
{
	char path[512], err[512];
	char names[KREX_MAX_GPUS][KREX_MAX_GPU_NAME + 1];
	sigset_t set;
	int i, n;

	nofile_raise(k);
	k->spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (mkdir_p(k->cfg.run_dir, 0755) < 0)
		die("run dir %s: %s", k->cfg.run_dir, strerror(errno));
	lock_take(k);
	if (xsnprintf(path, sizeof(path), "%s/%s", k->cfg.run_dir, KREX_GATE_NAME) < 0 ||
	    gatectl_open(&k->gate, path) < 0)
		die("gate page %s: %s", path, strerror(errno));
	gatectl_drain_timeout(&k->gate, k->cfg.drain_timeout_ns);
	if (freezer_init(&k->fz, k->cfg.freezer, k->cfg.cgroup_subtree, err, sizeof(err)) < 0)
		die("%s", err);
	k->favordynmods = freezer_favordynmods(&k->fz, k->cfg.favordynmods);
	if (state_init(&k->st, k->cfg.run_dir) < 0)
		die("run_dir too long");
	for (i = 0; isolate_undo_kinds[i]; i++)
		state_register_undo(isolate_undo_kinds[i], isolate_undo_line);
	n = state_recover(&k->st, undo_builtin);
	if (n < 0)
		die("state file %s: %s", k->st.path, strerror(errno));
	if (n > 0)
		log_warn("undid %d change(s) a previous krexd left in %s", n, k->st.path);
	freezer_cleanup(&k->fz);
	n = k->cfg.gpus[0]
	            ? conf_split_list(k->cfg.gpus, &names[0][0], sizeof(names[0]), KREX_MAX_GPUS)
	            : 0;
	for (i = 0; i < n; i++)
		gpu_slot(k, names[i], 1);
	k->nconf_gpus = k->ngpus;
	rq_init(&k->rq, k->cfg.max_region_ns, k->cfg.max_share, k->cfg.share_window_ns);

	k->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (k->epfd < 0)
		die("epoll: %s", strerror(errno));
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	sigprocmask(SIG_BLOCK, &set, NULL);
	signal(SIGPIPE, SIG_IGN);
	k->sigfd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
	k->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (k->sigfd < 0 || k->tfd < 0)
		die("signalfd/timerfd: %s", strerror(errno));
	if (xsnprintf(path, sizeof(path), "%s/%s", k->cfg.run_dir, KREX_SOCKET_NAME) < 0)
		die("run_dir too long");
	/* 0666: any user may connect; who they are comes from SO_PEERCRED. */
	k->lfd = unix_listen(path, 128, 0666);
	if (k->lfd < 0)
		die("socket %s: %s", path, strerror(errno));
	epoll_add(k, k->lfd, &k->ep_listen, EP_LISTEN);
	epoll_add(k, k->sigfd, &k->ep_signal, EP_SIGNAL);
	epoll_add(k, k->tfd, &k->ep_timer, EP_TIMER);
	/* Writes to the participants' freezer files: someone else's suspend (part.c). */
	k->ifd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (k->ifd < 0)
		log_warn("inotify: %s (a suspend by Slurm is seen at region entry only)",
		         strerror(errno));
	else
		epoll_add(k, k->ifd, &k->ep_inotify, EP_INOTIFY);
	k->start_ns = time_now_ns();
	/* History, region log, metrics: their writer thread's messages come through an eventfd. */
	n = history_init(k);
	if (n >= 0)
		epoll_add(k, n, &k->ep_history, EP_HISTORY);
}

static void report_fixed(const char *key)
{
	log_warn("reload: '%s' cannot change while krexd runs; restart to apply it", key);
}

/*
 * The nice of krexd's autogroup.  With the kernel's autogroup on (Linux's
 * default where no cpu cgroup separates tasks) the CPU is shared first
 * between sessions, each weighed by its autogroup's nice, and a thread's
 * own nice counts only inside its session: a krexd in a session of its
 * own (daemon mode, or -F started by a supervisor that gave it one) at
 * nice -20 still waited a scheduler slice behind every busy sibling (the
 * thaw's writes: notebook/h200-session-30).  Only krexd's own session is
 * touched: nothing when krexd does not lead its session (a shell's).
 */
static void sched_autogroup(int nice)
{
	char buf[16];
	int fd, n;

	if (getsid(0) != getpid())
		return;
	fd = open("/proc/self/autogroup", O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return; /* no autogroup in this kernel */
	n = snprintf(buf, sizeof(buf), "%d\n", nice);
	if (write(fd, buf, (size_t)n) != n)
		log_debug("autogroup nice %d: %s", nice, strerror(errno));
	close(fd);
}

/*
 * sched_priority: the main thread (the event loop: requests, acks, the
 * freeze, the grant) at SCHED_FIFO, so that a region's entry does not wait
 * for a CPU that busy siblings hold (a scheduler slice, ~4 ms, at the
 * request and again at the acks).  Reset on fork; the helper threads run
 * at normal priority (proc_thread_normal).  Where real-time priority is
 * refused (a kernel that gives a non-root cgroup no real-time time, as the
 * H200 machine's) krexd takes the highest normal priority, nice -20, and
 * says so; without the privilege for that either (a private krexd of a
 * user) it runs at normal priority.  k->sched_now: > 0 the FIFO priority,
 * KREXD_SCHED_NICE, or 0 (normal).
 */
static void sched_apply(struct krexd *k)
{
	int want = (int)k->cfg.sched_priority, err;
	struct sched_param sp = {.sched_priority = want};

	if (want == k->sched_want)
		return;
	k->sched_want = want;
	if (sched_setscheduler(0, (want ? SCHED_FIFO : SCHED_OTHER) | SCHED_RESET_ON_FORK, &sp) ==
	    0) {
		/* a fallback's nice goes back to 0 (this thread: Linux) */
		(void)setpriority(PRIO_PROCESS, 0, 0);
		if (k->sched_now < 0)
			sched_autogroup(0);
		k->sched_now = want;
		log_debug("scheduling: %s", want ? "real-time (SCHED_FIFO)" : "normal");
		return;
	}
	err = errno;
	sp.sched_priority = 0; /* a child of krexd gets nice 0 (permitted to anyone) */
	(void)sched_setscheduler(0, SCHED_OTHER | SCHED_RESET_ON_FORK, &sp);
	if (setpriority(PRIO_PROCESS, 0, KREXD_SCHED_NICE) == 0) {
		sched_autogroup(KREXD_SCHED_NICE);
		k->sched_now = KREXD_SCHED_NICE;
		log_info(
		        "sched_priority %d: real-time priority refused (%s): running at nice %d instead",
		        want, strerror(err), KREXD_SCHED_NICE);
		return;
	}
	k->sched_now = 0;
	if (err == EPERM && geteuid() != 0) /* a private krexd: expected */
		log_debug("sched_priority %d: not permitted: normal scheduling", want);
	else
		log_info(
		        "sched_priority %d: cannot run at real-time priority (%s) nor at nice %d: normal scheduling (a region's entry may then wait for a busy CPU)",
		        want, strerror(err), KREXD_SCHED_NICE);
}

/* The start-up line's word for k->sched_now. */
static const char *sched_name(const struct krexd *k)
{
	return k->sched_now > 0 ? "real-time" : k->sched_now < 0 ? "nice -20" : "normal";
}

static void reload(struct krexd *k)
{
	struct krexd_config next;
	char err[1024];

	if (config_build(k, &next, err, sizeof(err)) < 0) {
		log_error("reload: %s; keeping the running configuration", err);
		return;
	}
	config_apply_live(&k->cfg, &next, report_fixed);
	log_set_level(k->cfg.log_level);
	gatectl_drain_timeout(&k->gate, k->cfg.drain_timeout_ns);
	sched_apply(k);
	k->rq.max_lease_ns = k->cfg.max_region_ns;
	k->rq.max_share = k->cfg.max_share;
	k->rq.share_window_ns = k->cfg.share_window_ns;
	isolate_load(k->cfg.topology, (const char(*)[16])k->cfg.gpu_pci);
	history_reconfigure(k, 1); /* and the region log opened again (logrotate) */
	log_info("configuration reloaded");
}

static void on_signal(struct krexd *k)
{
	struct signalfd_siginfo si;

	while (read(k->sigfd, &si, sizeof(si)) == sizeof(si)) {
		if (si.ssi_signo == SIGHUP)
			reload(k);
		else {
			log_info("signal %u: stopping", si.ssi_signo);
			k->stopping = 1;
		}
	}
}

/* Arm the timer for the earliest deadline of anything. */
static void timer_arm(struct krexd *k)
{
	uint64_t d[8] = {region_next_deadline(k), conn_next_deadline(k), k->proc_check_ns,
	                 k->ext_kill_check_ns,    k->ext_confirm_ns,     history_next_deadline(k),
	                 sign_next_deadline(k),   k->fz.retry_at};
	struct itimerspec its = {{0, 0}, {0, 0}};
	uint64_t best = 0;
	int i;

	for (i = 0; i < (int)(sizeof(d) / sizeof(d[0])); i++)
		if (d[i] && (!best || d[i] < best))
			best = d[i];
	if (best) {
		its.it_value.tv_sec = (time_t)(best / NS_PER_S);
		its.it_value.tv_nsec = (long)(best % NS_PER_S);
		if (!its.it_value.tv_sec && !its.it_value.tv_nsec)
			its.it_value.tv_nsec = 1;
	}
	timerfd_settime(k->tfd, TFD_TIMER_ABSTIME, &its, NULL);
}

static void loop_dispatch(struct krexd *k, struct epoll_event *ev, int n)
{
	uint64_t ticks;
	int i;

	for (i = 0; i < n; i++) {
		struct ep_item *it = ev[i].data.ptr;
		switch (it->kind) {
		case EP_LISTEN:
			conn_accept(k);
			break;
		case EP_SIGNAL:
			on_signal(k);
			break;
		case EP_TIMER:
			(void)!read(k->tfd, &ticks, sizeof(ticks));
			break;
		case EP_CONN:
			conn_event(k, it->ptr, ev[i].events);
			break;
		case EP_PIDFD:
			if (!((struct part *)it->ptr)->ended)
				part_end(k, it->ptr, "root pid exited");
			break;
		case EP_INOTIFY:
			part_ext_events(k);
			break;
		case EP_HISTORY:
			lw_messages();
			break;
		case EP_SIGN:
			sign_event(k);
			break;
		case EP_PROCS:
			region_procs_event(k);
			break;
		case EP_MOVER:
			part_moves_done(k);
			break;
		}
	}
}

static void loop(struct krexd *k)
{
	struct epoll_event ev[64];
	uint64_t now;
	int n;

	while (!k->stopping) {
		timer_arm(k);
		n = epoll_wait(k->epfd, ev, 64, -1);
		if (n < 0 && errno != EINTR) {
			log_error("epoll_wait: %s", strerror(errno));
			break;
		}
		k->turn++;
		loop_dispatch(k, ev, n > 0 ? n : 0);
		/* Writes by others that krexd's own writes read off the inotify fd
		 * this turn (part.c): looked at now, not at the next event. */
		part_ext_events(k);
		now = time_now_ns();
		region_tick(k, now);
		conn_tick(k, now);
		sign_tick(k, now);
		part_check_proc(k, now);
		part_ext_kill_check(k, now);
		part_ext_confirm(k, now);
		history_tick(k, now);
		if (k->fz.retry_at && now >= k->fz.retry_at)
			freezer_tick(&k->fz, now);
		if (k->resched) {
			/* Take in what is readable already before deciding the next grant. */
			n = epoll_wait(k->epfd, ev, 64, 0);
			loop_dispatch(k, ev, n > 0 ? n : 0);
			region_schedule(k);
		}
		region_move_hold(k, time_now_ns());
		conn_reap(k);
		part_reap(k);
	}
}

/* What KREXD_MOVE_HOLD_MS in krexd's environment made of the mover's hold. */
static void move_hold_say(void)
{
	const char *e = getenv("KREXD_MOVE_HOLD_MS");

	if (!e || !*e || !strcmp(e, "0"))
		return;
	if (!mv_on())
		log_warn("KREXD_MOVE_HOLD_MS: no mover thread, no hold");
	else if (!mv_hold_ns())
		log_warn("KREXD_MOVE_HOLD_MS: not a number of ms from 0 to 3600000; no hold");
	else
		log_info(
		        "KREXD_MOVE_HOLD_MS=%llu: moves not begun wait while a region enters, at most that from its close",
		        (unsigned long long)(mv_hold_ns() / NS_PER_MS));
}

/* Undo everything in reverse order of setup: regions, participants, gates, files. */
static void teardown(struct krexd *k)
{
	char path[512];
	struct conn *c;

	part_moves_stop(k); /* the moves under way done: their participants end with the rest */
	region_stop_all(k);
	while (k->parts)
		part_end(k, k->parts, "krexd stopping");
	for (c = k->conns; c; c = c->next)
		conn_close(k, c);
	conn_reap(k);
	part_reap(k);
	history_fini(k); /* the last lines and metrics written, the writer stopped */
	gp_stop();
	gatectl_shutdown(&k->gate);
	freezer_fini(&k->fz);
	state_free(&k->st);
	k->st.dirty = 1;
	if (state_sync(&k->st) < 0)
		log_error("state file: %s", strerror(errno));
	snprintf(path, sizeof(path), "%s/%s", k->cfg.run_dir, KREX_SOCKET_NAME);
	unlink(path);
	snprintf(path, sizeof(path), "%s/%s", k->cfg.run_dir, KREX_PIDFILE_NAME);
	unlink(path);
	log_info("stopped");
}

/* The region code's handlers of what part.c and outbox.c report (struct krexd_events). */
static void events_init(struct krexd *k)
{
	k->ev.part_new = region_part_new;
	k->ev.part_gone = region_part_gone;
	k->ev.part_suspended = region_ext_suspended;
	k->ev.part_resumed = region_ext_resumed;
	k->ev.conn_gone = region_conn_gone;
}

int main(int argc, char **argv)
{
	struct krexd *k = &K;

	log_init("krexd", LOG_LVL_INFO, LOG_TO_STDERR);
	events_init(k);
	parse_args(k, argc, argv);
	log_set_level(k->cfg.log_level);
	if (!k->foreground) {
		daemonize();
		log_init("krexd", k->cfg.log_level, LOG_TO_SYSLOG);
	}
	setup(k);
	isolate_load(k->cfg.topology, (const char(*)[16])k->cfg.gpu_pci);
	pidfile_write(k);
	/* NVML opened here, at start-up (dlopen + nvmlInit take tens of ms):
	 * never in the first region's entry (its freeze_us counted it once). */
	k->nvml_gpus = nvml_gpu_count();
	for (unsigned g = 0; g < KREX_MAX_GPUS; g++)
		k->nominal[g] = g < k->ngpus && k->nvml_gpus ? nvml_nominal_clock(k->gpu[g]) : -1;
	for (unsigned g = 0; k->nvml_gpus && g < k->ngpus; g++)
		if (!nvml_has(k->gpu[g]))
			log_warn(
			        "GPU %s: NVML does not know it, its clocks stay unknown (name GPUs by index, PCI bus id or UUID)",
			        k->gpu[g]);
	sched_apply(k);
	log_info(
	        "krexd %s started on %s: run dir %s, freezer %s, isolation %s, %u GPU(s); settle %s, NVML sees %u GPU(s), clocks required: %s, scheduling %s",
	        PACKAGE_VERSION, k->cfg.node_name, k->cfg.run_dir, freezer_name(&k->fz),
	        isolate_backend_name(), k->ngpus, config_settle_name(k->cfg.settle), k->nvml_gpus,
	        k->cfg.require_clocks == REQUIRE_CLOCKS_YES ||
	                        (k->cfg.require_clocks == REQUIRE_CLOCKS_AUTO && k->nvml_gpus)
	                ? "yes"
	                : "no",
	        sched_name(k));
	sign_start(k);
	if (k->nvml_gpus && !gp_inline() && gp_start(k) < 0)
		log_warn(
		        "the GPU process-list thread did not start (%s): NVML's process list runs on the event loop",
		        strerror(errno));
	if (k->fz.kind != FREEZER_SIGNAL && !mv_inline() && mv_start(k) < 0)
		log_warn(
		        "the mover thread did not start (%s): new participants are moved into their cgroups on the event loop",
		        strerror(errno));
	move_hold_say();
	startup_done();
	loop(k);
	teardown(k);
	return 0;
}
