/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cmd_region.c - `krex region`: run a command inside one critical region and
 * print its certificate.
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "client.h"
#include "defs.h"
#include "json.h"
#include "krex/region.h"
#include "krex_cmd.h"
#include "nvmlapi.h"
#include "timeutil.h"

/* Seconds (fractions allowed) to microseconds; dies on junk. */
static uint64_t parse_seconds_us(const char *opt, const char *s)
{
	uint64_t ns;

	if (time_parse_duration(s, NS_PER_S, &ns) < 0 || ns == 0)
		die_usage("region: bad %s '%s' (seconds, or a number with us/ms/s/m)", opt, s);
	return ns / NS_PER_US;
}

static int env_unprotected(void)
{
	const char *e = getenv(KREX_ENV_UNPROTECTED);

	return e && !strcmp(e, "1");
}

static void print_cert(FILE *f, const struct krex_certificate *c)
{
	fprintf(f, "krex: region %llu on %s: %s%s%s\n", (unsigned long long)c->region_id,
	        c->gpus[0] ? c->gpus : "-", krex_outcome_name(c->outcome), c->note[0] ? " - " : "",
	        c->note);
	fprintf(f,
	        "krex:   wait %.3f ms, drain %.3f ms, freeze %.3f ms, isolate %.3f ms, held %.3f ms (lease %.0f ms)\n",
	        c->wait_us / 1e3, c->drain_us / 1e3, c->freeze_us / 1e3, c->isolate_us / 1e3,
	        c->held_us / 1e3, c->lease_us / 1e3);
	fprintf(f, "krex:   siblings %u: drained %u, late %u, frozen %u\n", c->siblings, c->drained,
	        c->late, c->frozen);
	if (c->known & KREX_CERT_ISOLATION)
		fprintf(f, "krex:   owner cores %s, %d processes moved off them\n", c->owner_cores,
		        c->moved);
	else
		fprintf(f, "krex:   isolation: unknown\n");
	if (c->known & KREX_CERT_FOREIGN)
		fprintf(f, "krex:   foreign processes on the GPUs: %d\n", c->foreign);
	if (c->ungated && c->ungated_gpu >= 0)
		fprintf(f, "krex:   never joined the gate: %u sibling(s), %d on the GPU: %s\n",
		        c->ungated, c->ungated_gpu, c->ungated_who);
	else if (c->ungated)
		fprintf(f,
		        "krex:   never joined the gate: %u sibling(s), whether on the GPU unknown: %s\n",
		        c->ungated, c->ungated_who);
	if (c->known & KREX_CERT_SETTLE)
		fprintf(f, "krex:   settle: waited %.3f ms for the GPU's clock\n",
		        c->settle_us / 1e3);
	if (c->known & KREX_CERT_CLOCKS) {
		char names[512];
		nvml_reason_names(c->clock_reasons, ", ", names, sizeof(names));
		fprintf(f, "krex:   SM clock %d -> %d MHz, %d-%d MHz of %d nominal in %u samples\n",
		        c->sm_clock_start_mhz, c->sm_clock_end_mhz, c->sm_clock_min_mhz,
		        c->sm_clock_max_mhz, c->sm_clock_nominal_mhz, c->clock_samples);
		fprintf(f, "krex:   clocks-event reasons seen: %s\n", names[0] ? names : "none");
	} else
		fprintf(f, "krex:   GPU clocks: unknown\n");
	if (c->known & KREX_CERT_TEMP)
		fprintf(f, "krex:   temperature %d -> %d C\n", c->temp_start_c, c->temp_end_c);
	if (c->known & KREX_CERT_VIOLATION)
		fprintf(f, "krex:   power / thermal violation during the region: %llu / %llu us\n",
		        (unsigned long long)c->violation_power_us,
		        (unsigned long long)c->violation_thermal_us);
	if (c->known & KREX_CERT_OWN_POWER && c->own_power_cap_first_us >= 0)
		fprintf(f,
		        "krex:   the owner's own work reached the power cap (clean, as on a dedicated GPU): %.3f ms of the region, first %.3f ms after the grant, %u samples\n",
		        c->own_power_cap_us / 1e3, c->own_power_cap_first_us / 1e3,
		        c->own_power_cap_samples);
	else if (c->known & KREX_CERT_OWN_POWER && c->own_power_cap_us)
		fprintf(f,
		        "krex:   the owner's own work reached the power cap between samples (clean): %.3f ms of the region\n",
		        c->own_power_cap_us / 1e3);
	if (c->chained)
		fprintf(f,
		        "krex:   chained: region %u of its chain, %.1f ms after the chain's first grant\n",
		        c->chained + 1, c->chain_us / 1e3);
}

/*
 * The certificate as JSON with its signed form appended: "signed" holds the
 * munge credential, or null and "unsigned" says why (krex verify reads it).
 */
static char *cert_json_signed(const struct krex_certificate *c, const char *cred, const char *why)
{
	int need = krex_certificate_json(c, NULL, 0);
	size_t extra = strlen(cred) + 6 * strlen(why) + 64;
	char *buf = malloc((size_t)need + 1 + extra), *end;

	/* Sized by a first call: escaped fields can be six times their length. */
	if (need < 0 || !buf)
		die("certificate JSON: out of memory");
	krex_certificate_json(c, buf, (unsigned long)need + 1);
	end = buf + need - 1; /* the closing brace */
	if (cred[0]) {
		snprintf(end, extra + 2, ",\"signed\":\"%s\"}", cred);
	} else {
		char *e = end + snprintf(end, extra, ",\"signed\":null,\"unsigned\":\"");
		e += json_escape(e, extra - (size_t)(e - end), why);
		snprintf(e, extra - (size_t)(e - end), "\"}");
	}
	return buf;
}

static void write_cert(const struct krex_certificate *c, int json, const char *file,
                       const char *cred, const char *why)
{
	FILE *f = stderr;
	char *buf = cert_json_signed(c, cred, why);

	if (file) {
		f = fopen(file, "we");
		if (!f)
			die("cannot write certificate to %s: %s", file, strerror(errno));
		fprintf(f, "%s\n", buf);
		if (fclose(f) != 0)
			die("cannot write certificate to %s: %s", file, strerror(errno));
		free(buf);
		return;
	}
	if (json)
		fprintf(f, "%s\n", buf);
	else {
		print_cert(f, c);
		if (cred[0])
			fprintf(f,
			        "krex:   signed by krexd with munge (%zu bytes; --json or --cert FILE keeps it for krex verify)\n",
			        strlen(cred));
		else
			fprintf(f, "krex:   not signed: %s\n", why);
	}
	free(buf);
}

int cmd_region(int argc, char **argv)
{
	static const struct option opts[] = {
	        {"gpus", required_argument, 0, 'g'},    {"max", required_argument, 0, 'm'},
	        {"timeout", required_argument, 0, 't'}, {"json", no_argument, 0, 'j'},
	        {"cert", required_argument, 0, 'c'},    {"unprotected", no_argument, 0, 'u'},
	        {"help", no_argument, 0, 'h'},          {0, 0, 0, 0}};
	struct krex_region_opts o = KREX_REGION_OPTS_INIT;
	struct krex_certificate cert;
	static char cred[KREX_SIGNED_MAX];
	char why[256];
	struct proto_gpus g;
	const char *names[KREX_MAX_GPUS], *certfile = NULL;
	char sock[512];
	int c, json = 0, rc, status;
	unsigned i;

	optind = 1;
	while ((c = getopt_long(argc, argv, "+g:m:t:jc:uh", opts, NULL)) != -1) {
		switch (c) {
		case 'g':
			if (client_parse_gpus(optarg, &g) != KREX_OK || g.n == 0)
				die_usage("region: bad --gpus list '%s'", optarg);
			for (i = 0; i < g.n; i++)
				names[i] = strdup(g.name[i]);
			o.gpus = names;
			o.ngpus = g.n;
			break;
		case 'm':
			o.max_us = parse_seconds_us("--max", optarg);
			break;
		case 't':
			o.timeout_ms = (unsigned)(parse_seconds_us("--timeout", optarg) / 1000);
			break;
		case 'j':
			json = 1;
			break;
		case 'c':
			certfile = optarg;
			break;
		case 'u':
			o.flags |= KREX_REGION_UNPROTECTED_OK;
			break;
		case 'h':
			printf("Usage: krex region [--gpus LIST] [--max SECONDS] [--timeout SECONDS] [--json] [--cert FILE] [--unprotected] -- CMD [ARGS]\n");
			return 0;
		default:
			die_usage("region: bad option");
		}
	}
	if (optind >= argc)
		die_usage("region: no command given");
	if (o.flags & KREX_REGION_UNPROTECTED_OK || env_unprotected()) {
		/* Unprotected is acceptable: use a krexd that runs, start none. */
		krexd_locate(sock, sizeof(sock));
	} else {
		/* Like krex run: the system krexd, else this user's private one,
		 * started if needed (embedded mode). */
		close(krexd_find_or_start(sock, sizeof(sock)));
		setenv(KREX_ENV_SOCKET, sock, 1);
	}
	rc = krex_region_begin(&o);
	if (rc != KREX_OK) {
		die("region not granted: %s (krexd socket %s)", krex_strerror(rc), sock);
	}
	status = wait_child(spawn_command(argv + optind));
	rc = krex_region_end_signed(&cert, cred, sizeof(cred), why, sizeof(why));
	if (rc != KREX_OK)
		die("ending the region: %s", krex_strerror(rc));
	write_cert(&cert, json, certfile, cred, why);
	return status;
}
