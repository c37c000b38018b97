/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cmd_log.c - `krex log`: the last regions krexd keeps (krexd.conf
 * history), as a table or as JSON lines (the region log's form), oldest
 * first.  A user sees their own regions, root everyone's (doc/security.md).
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "client.h"
#include "conf.h"
#include "defs.h"
#include "certjson.h"
#include "krex/region.h"
#include "krex_cmd.h"
#include "timeutil.h"

static const char *const outcome_names[] = {"clean", "expired", "degraded"};

static void log_usage_die(const char *why)
{
	die_usage(
	        "log: %s; usage: krex log [--json] [--job JOB[.STEP]] [--since DURATION] [--outcome clean,degraded,expired] [--limit N]",
	        why);
}

/* "clean,degraded": the PROTO_LOG outcomes bits. */
static uint32_t parse_outcomes(const char *v)
{
	char items[4][16];
	uint32_t bits = 0;
	int n, i, j;

	n = conf_split_list(v, &items[0][0], sizeof(items[0]), 4);
	if (n <= 0)
		log_usage_die("--outcome takes clean, degraded or expired, comma-separated");
	for (i = 0; i < n; i++) {
		for (j = 0; j < 3 && strcmp(items[i], outcome_names[j]); j++)
			;
		if (j == 3)
			log_usage_die(
			        "--outcome takes clean, degraded or expired, comma-separated");
		bits |= 1u << (j == 0   ? KREX_OUTCOME_CLEAN
		               : j == 1 ? KREX_OUTCOME_EXPIRED
		                        : KREX_OUTCOME_DEGRADED);
	}
	return bits;
}

static void parse_job(const char *v, uint32_t *job, uint32_t *step)
{
	uint64_t j, s;
	char buf[48], *dot;

	if (xstrcpy(buf, sizeof(buf), v) < 0)
		log_usage_die("--job takes JOB or JOB.STEP");
	dot = strchr(buf, '.');
	if (dot)
		*dot++ = '\0';
	if (conf_parse_uint(buf, 1, UINT32_MAX, &j) < 0 ||
	    (dot && conf_parse_uint(dot, 0, UINT32_MAX - 1, &s) < 0))
		log_usage_die("--job takes JOB or JOB.STEP");
	*job = (uint32_t)j;
	*step = dot ? (uint32_t)s : PROTO_LOG_ANY_STEP;
}

static void ms(char *out, size_t len, uint64_t us)
{
	snprintf(out, len, "%.3f", (double)us / 1000.0);
}

static void print_row(const struct proto_log_entry *e)
{
	char when[32], js[32], w[24], d[24], f[24], s[24];
	time_t t = (time_t)(e->end_us / 1000000);
	struct tm tm;

	if (localtime_r(&t, &tm))
		strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", &tm);
	else
		snprintf(when, sizeof(when), "?");
	if (e->job)
		snprintf(js, sizeof(js), "%u.%u", e->job, e->step);
	else
		snprintf(js, sizeof(js), "-");
	ms(w, sizeof(w), e->cert.wait_us);
	ms(d, sizeof(d), e->cert.drain_us);
	ms(f, sizeof(f), e->cert.freeze_us);
	if (e->cert.known & KREX_CERT_SETTLE)
		ms(s, sizeof(s), e->cert.settle_us);
	else
		snprintf(s, sizeof(s), "-");
	/* the note, then the siblings that never joined the gate (a clean region names them too) */
	printf("%-19s %8llu %12s %6u %-10s %-9s %9s %9s %9s %9s %s%s%s%s\n", when,
	       (unsigned long long)e->cert.region_id, js, e->uid, e->cert.gpus,
	       krex_outcome_name(e->cert.outcome), w, d, f, s, e->cert.note,
	       e->cert.ungated && e->cert.note[0] ? "; " : "",
	       e->cert.ungated ? "never joined the gate: " : "",
	       e->cert.ungated ? e->cert.ungated_who : "");
}

int cmd_log(int argc, char **argv)
{
	static const struct option opts[] = {{"json", no_argument, NULL, 'j'},
	                                     {"job", required_argument, NULL, 'J'},
	                                     {"since", required_argument, NULL, 's'},
	                                     {"outcome", required_argument, NULL, 'o'},
	                                     {"limit", required_argument, NULL, 'n'},
	                                     {"help", no_argument, NULL, 'h'},
	                                     {NULL, 0, NULL, 0}};
	union proto_body req, rep;
	struct proto_log_entry *all = NULL;
	size_t nall = 0, cap = 0, i;
	char path[PATH_MAX], err[256], node[64] = "";
	uint64_t since_ns, limit = 0, kept = 0, total = 0;
	int json = 0, ch, fd, rc;

	memset(&req, 0, sizeof(req));
	req.log.step = PROTO_LOG_ANY_STEP;
	optind = 1;
	while ((ch = getopt_long(argc, argv, "jJ:s:o:n:h", opts, NULL)) != -1) {
		switch (ch) {
		case 'j':
			json = 1;
			break;
		case 'J':
			parse_job(optarg, &req.log.job, &req.log.step);
			break;
		case 's':
			if (time_parse_duration(optarg, NS_PER_S, &since_ns) < 0)
				log_usage_die(
				        "--since takes a duration, e.g. 90s, 10m, 2h (a bare number is seconds)");
			req.log.since_us =
			        since_ns / NS_PER_US >= time_wall_ns() / NS_PER_US
			                ? 1
			                : time_wall_ns() / NS_PER_US - since_ns / NS_PER_US;
			break;
		case 'o':
			req.log.outcomes = parse_outcomes(optarg);
			break;
		case 'n':
			if (conf_parse_uint(optarg, 1, KREX_MAX_HISTORY, &limit) < 0)
				log_usage_die("--limit takes a number from 1 to 100000");
			break;
		case 'h':
			printf("usage: krex log [--json] [--job JOB[.STEP]] [--since DURATION] [--outcome LIST] [--limit N]\n");
			return 0;
		default:
			log_usage_die("unknown option");
		}
	}
	if (optind < argc)
		log_usage_die("unexpected argument");
	fd = krex_cli_connect(path, sizeof(path));
	/* pages, newest first, until krexd says nothing older matches */
	for (;;) {
		if (limit)
			req.log.max = (uint32_t)(limit - nall);
		rc = client_call(fd, PROTO_LOG, &req, PROTO_LOG_REPLY, &rep,
		                 time_deadline_ms(KREX_DEFAULT_IO_TIMEOUT_MS), err, sizeof(err));
		if (rc != KREX_OK)
			die("log from %s: %s%s%s", path, krex_strerror(rc), err[0] ? ": " : "",
			    err);
		snprintf(node, sizeof(node), "%s", rep.log_reply.node);
		kept = rep.log_reply.kept;
		total = rep.log_reply.total;
		if (nall + rep.log_reply.n > cap) {
			cap = (nall + rep.log_reply.n) * 2;
			all = realloc(all, cap * sizeof(*all));
			if (!all)
				die("out of memory");
		}
		memcpy(all + nall, rep.log_reply.e, rep.log_reply.n * sizeof(*all));
		nall += rep.log_reply.n;
		req.log.before = rep.log_reply.next;
		proto_body_free(PROTO_LOG_REPLY, &rep);
		if (!req.log.before || (limit && nall >= limit))
			break;
	}
	close(fd);
	if (json) {
		char *line = malloc(JSON_LOG_ENTRY_MAX);
		if (!line)
			die("out of memory");
		for (i = nall; i-- > 0;) {
			int n = json_log_entry(&all[i], node, line, JSON_LOG_ENTRY_MAX);
			if (n < 0 || n >= JSON_LOG_ENTRY_MAX)
				die("region %llu: its JSON does not fit %d bytes",
				    (unsigned long long)all[i].cert.region_id, JSON_LOG_ENTRY_MAX);
			puts(line);
		}
		free(line);
	} else {
		printf("krexd on %s: %zu region(s) shown; it keeps the last %llu of %llu (krexd.conf history)\n",
		       node, nall, (unsigned long long)kept, (unsigned long long)total);
		if (nall)
			printf("%-19s %8s %12s %6s %-10s %-9s %9s %9s %9s %9s %s\n", "TIME",
			       "REGION", "JOB.STEP", "UID", "GPUS", "OUTCOME", "WAIT_MS",
			       "DRAIN_MS", "FREEZE_MS", "SETTLE_MS", "CAUSES");
		for (i = nall; i-- > 0;)
			print_row(&all[i]);
	}
	free(all);
	return 0;
}
