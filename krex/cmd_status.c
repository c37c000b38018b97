/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cmd_status.c - `krex status`, `krex release`, `krex stop`.
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "client.h"
#include "conf.h"
#include "defs.h"
#include "json.h"
#include "krex/region.h"
#include "krex_cmd.h"
#include "timeutil.h"

/* Connect to the krexd clients would use: KREX_SOCKET, the system one, or
 * this user's private one. */
int krex_cli_connect(char *path, size_t len)
{
	int fd, kerr;

	krexd_locate(path, len);
	fd = client_connect(path, &kerr);
	if (fd < 0 && kerr == KREX_EPERM)
		die("%s", client_error());
	if (fd < 0)
		die("no krexd answers (%s): %s", path, krex_strerror(kerr));
	return fd;
}

/* "key":"value" with value escaped (json.h); sep goes first. */
static void json_kv(const char *sep, const char *key, const char *value)
{
	printf("%s\"%s\":", sep, key);
	json_fput_str(stdout, value);
}

static void status_print_json(const struct proto_status_reply *s)
{
	char st[64];
	unsigned i;

	json_kv("{", "node", s->node);
	json_kv(",", "freezer", s->freezer);
	json_kv(",", "isolation", s->isolation);
	printf(",\"uptime_s\":%.3f,\"regions_total\":%llu,\"gpus\":[", s->uptime_us / 1e6,
	       (unsigned long long)s->regions_total);
	for (i = 0; i < s->ngpus; i++) {
		json_kv(i ? ",{" : "{", "name", s->gpu[i].name);
		printf(",\"slot\":%u,\"holder\":%u,\"region\":%llu,\"queued\":%u}", s->gpu[i].slot,
		       s->gpu[i].holder, (unsigned long long)s->gpu[i].region_id, s->gpu[i].queued);
	}
	printf("],\"participants\":[");
	for (i = 0; i < s->nparts; i++) {
		const struct proto_status_part *p = &s->parts[i];
		printf("%s{\"id\":%u,\"pid\":%u,\"uid\":%u,\"job\":%u,\"step\":%u,", i ? "," : "",
		       p->id, p->pid, p->uid, p->job, p->step);
		json_kv("", "state", proto_part_state(p->state, st, sizeof(st)));
		printf(",\"members\":%u", p->members);
		json_kv(",", "label", p->label);
		json_kv(",", "gpus", p->gpus);
		json_kv(",", "cgroup", p->cgroup);
		printf("}");
	}
	printf("],\"regions\":[");
	for (i = 0; i < s->nregions; i++) {
		const struct proto_status_region *r = &s->regions[i];
		printf("%s{\"id\":%llu,\"owner\":%u,\"pid\":%u,\"state\":\"%s\",\"age_s\":%.3f,"
		       "\"lease_s\":%.3f,",
		       i ? "," : "", (unsigned long long)r->id, r->owner, r->pid,
		       r->state ? "held" : "queued", r->age_us / 1e6, r->lease_us / 1e6);
		json_kv("", "gpus", r->gpus);
		printf("}");
	}
	printf("]}\n");
}

static void status_print(const struct proto_status_reply *s)
{
	char st[64];
	unsigned i;

	printf("krexd on %s: freezer %s, isolation %s, up %.1f s, %llu regions served\n", s->node,
	       s->freezer, s->isolation, s->uptime_us / 1e6, (unsigned long long)s->regions_total);
	printf("\n%-20s %5s %7s %8s %7s\n", "GPU", "SLOT", "HOLDER", "REGION", "QUEUED");
	for (i = 0; i < s->ngpus; i++)
		printf("%-20s %5u %7u %8llu %7u\n", s->gpu[i].name, s->gpu[i].slot,
		       s->gpu[i].holder, (unsigned long long)s->gpu[i].region_id, s->gpu[i].queued);
	printf("\n%5s %8s %6s %10s %-16s %-12s %s\n", "ID", "PID", "UID", "JOB.STEP", "STATE",
	       "GPUS", "LABEL");
	for (i = 0; i < s->nparts; i++) {
		const struct proto_status_part *p = &s->parts[i];
		char js[32];
		if (p->job)
			snprintf(js, sizeof(js), "%u.%u", p->job, p->step);
		else
			snprintf(js, sizeof(js), "-");
		printf("%5u %8u %6u %10s %-16s %-12s %s\n", p->id, p->pid, p->uid, js,
		       proto_part_state(p->state, st, sizeof(st)), p->gpus, p->label);
	}
	if (s->nregions)
		printf("\n%8s %6s %8s %7s %9s %9s %s\n", "REGION", "OWNER", "PID", "STATE", "AGE_S",
		       "LEASE_S", "GPUS");
	for (i = 0; i < s->nregions; i++) {
		const struct proto_status_region *r = &s->regions[i];
		printf("%8llu %6u %8u %7s %9.3f %9.3f %s\n", (unsigned long long)r->id, r->owner,
		       r->pid, r->state ? "held" : "queued", r->age_us / 1e6, r->lease_us / 1e6,
		       r->gpus);
	}
}

/* One STATUS: 0, or the krex_error with its text in err. */
static int status_once(char *path, size_t plen, union proto_body *reply, char *err, size_t elen)
{
	union proto_body req;
	int fd, kerr, rc;

	krexd_locate(path, plen);
	fd = client_connect(path, &kerr);
	if (fd < 0) {
		snprintf(err, elen, "%s", kerr == KREX_EPERM ? client_error() : "no krexd answers");
		return kerr;
	}
	memset(&req, 0, sizeof(req));
	rc = client_call(fd, PROTO_STATUS, &req, PROTO_STATUS_REPLY, reply,
	                 time_deadline_ms(KREX_DEFAULT_IO_TIMEOUT_MS), err, elen);
	close(fd);
	return rc;
}

static volatile sig_atomic_t watch_stop;

static void watch_signal(int sig)
{
	(void)sig;
	watch_stop = 1;
}

/*
 * krex status --watch: like watch(1), a fresh view every interval.  On a
 * terminal the screen is cleared before each view; otherwise (a pipe, a
 * file) the views follow each other after a "--- time" line, without a
 * terminal code.  Ends with status 0 on SIGINT or SIGTERM, on end of input
 * (Ctrl-D, or "q" and Enter, when stdin is a terminal), and when stdout is
 * closed (krex status --watch | head).  krexd going away is shown, and
 * waited for.
 */
static int status_watch(int json, unsigned interval_ms)
{
	struct sigaction sa;
	union proto_body reply;
	char path[PATH_MAX], err[768], when[32], line[64];
	int tty = isatty(STDOUT_FILENO), in_tty = isatty(STDIN_FILENO), rc;
	struct pollfd pfd = {.fd = STDIN_FILENO, .events = POLLIN};
	time_t t;
	struct tm tm;
	ssize_t n;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = watch_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	while (!watch_stop) {
		t = time(NULL);
		if (!localtime_r(&t, &tm) ||
		    !strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", &tm))
			snprintf(when, sizeof(when), "?");
		rc = status_once(path, sizeof(path), &reply, err, sizeof(err));
		if (tty)
			printf("\033[H\033[2JEvery %.1fs: krex status%s    %s\n\n",
			       interval_ms / 1000.0, json ? " --json" : "", when);
		else if (!json)
			printf("--- %s\n", when);
		if (rc != KREX_OK)
			printf("krex: status from %s: %s%s%s\n", path, krex_strerror(rc),
			       err[0] ? ": " : "", err);
		else {
			if (json)
				status_print_json(&reply.status_reply);
			else
				status_print(&reply.status_reply);
			proto_body_free(PROTO_STATUS_REPLY, &reply);
		}
		if (fflush(stdout) == EOF || ferror(stdout))
			return 0; /* stdout closed: the reader is done */
		if (in_tty) {
			if (poll(&pfd, 1, (int)interval_ms) > 0) {
				n = read(STDIN_FILENO, line, sizeof(line));
				if (n <= 0 || line[0] == 'q')
					break;
			}
		} else
			poll(NULL, 0, (int)interval_ms);
	}
	return 0;
}

int cmd_status(int argc, char **argv)
{
	union proto_body reply;
	char path[PATH_MAX], err[768];
	int rc, i, json = 0, watch = 0;
	uint64_t interval_ns = NS_PER_S;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--json"))
			json = 1;
		else if (!strcmp(argv[i], "--watch"))
			watch = 1;
		else if (!strcmp(argv[i], "--interval") && i + 1 < argc) {
			if (time_parse_duration(argv[++i], NS_PER_S, &interval_ns) < 0 ||
			    interval_ns < 100 * NS_PER_MS || interval_ns > 3600 * NS_PER_S)
				die_usage("status: --interval takes a duration from 0.1s to 1h");
			watch = 1;
		} else
			die_usage(
			        "status: usage: krex status [--json] [--watch [--interval SECONDS]]");
	}
	if (watch)
		return status_watch(json, (unsigned)(interval_ns / NS_PER_MS));
	rc = status_once(path, sizeof(path), &reply, err, sizeof(err));
	if (rc != KREX_OK)
		die("status from %s: %s%s%s", path, krex_strerror(rc), err[0] ? ": " : "", err);
	if (json)
		status_print_json(&reply.status_reply);
	else
		status_print(&reply.status_reply);
	proto_body_free(PROTO_STATUS_REPLY, &reply);
	return 0;
}

int cmd_release(int argc, char **argv)
{
	union proto_body req, reply;
	char path[PATH_MAX], err[256];
	uint64_t id;
	int fd, rc;

	if (argc != 2 || conf_parse_uint(argv[1], 1, UINT64_MAX, &id) < 0)
		die_usage("release: usage: krex release REGION-ID (a number from krex status)");
	fd = krex_cli_connect(path, sizeof(path));
	memset(&req, 0, sizeof(req));
	req.release.region_id = id;
	rc = client_call(fd, PROTO_RELEASE, &req, PROTO_OK, &reply,
	                 time_deadline_ms(KREX_DEFAULT_IO_TIMEOUT_MS), err, sizeof(err));
	close(fd);
	if (rc != KREX_OK)
		die("release %llu: %s%s%s", (unsigned long long)id, krex_strerror(rc),
		    err[0] ? ": " : "", err);
	printf("krex: region %llu released\n", (unsigned long long)id);
	return 0;
}

int cmd_stop(int argc, char **argv)
{
	char rundir[PATH_MAX], pidfile[PATH_MAX + 16], buf[32];
	struct stat st;
	uint64_t deadline;
	FILE *f;
	long pid;

	if (argc != 1)
		die_usage("stop: takes no arguments");
	if (embedded_rundir(rundir, sizeof(rundir)) < 0 ||
	    xsnprintf(pidfile, sizeof(pidfile), "%s/%s", rundir, KREX_PIDFILE_NAME) < 0)
		die("run directory path too long");
	if (embedded_rundir_check(rundir, 0) < 0) {
		printf("krex: no private krexd (%s: %s)\n", rundir, strerror(ENOENT));
		return 0;
	}
	f = fopen(pidfile, "re");
	if (!f) {
		printf("krex: no private krexd (%s: %s)\n", pidfile, strerror(errno));
		return 0;
	}
	pid = fgets(buf, sizeof(buf), f) ? strtol(buf, NULL, 10) : 0;
	fclose(f);
	snprintf(buf, sizeof(buf), "/proc/%ld", pid);
	if (pid <= 1 || stat(buf, &st) < 0) {
		printf("krex: private krexd is not running (stale %s)\n", pidfile);
		return 0;
	}
	if (st.st_uid != getuid())
		die("pid %ld in %s is not yours; not stopping it", pid, pidfile);
	if (kill((pid_t)pid, SIGTERM) < 0)
		die("stopping krexd %ld: %s", pid, strerror(errno));
	deadline = time_deadline_ms(10000);
	while (kill((pid_t)pid, 0) == 0 && time_left_ms(deadline) > 0)
		usleep(20000);
	if (kill((pid_t)pid, 0) == 0)
		die("krexd %ld did not stop within 10 s", pid);
	printf("krex: private krexd %ld stopped\n", pid);
	return 0;
}
