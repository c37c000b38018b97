/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cmd_verify.c - `krex verify FILE`: check a signed certificate with this
 * node's munged and print who, where, when and the outcome
 * (krex_certificate_verify(3)).  Exit 0 valid, 1 refused, 2 usage, 3 cannot
 * check (munged not reachable, no libmunge).
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "conf.h"
#include "json.h"
#include "krex/region.h"
#include "krex_cmd.h"

static const char *const verdict_names[] = {"valid",        "tampered or another key",
                                            "expired",      "not signed by krexd",
                                            "mismatch",     "malformed",
                                            "cannot verify"};
static const char *const verdict_keys[] = {"valid",    "bad",       "expired", "signer",
                                           "mismatch", "malformed", "nomunge"};

/* The whole of FILE ("-": stdin), at most 1 MiB. */
static char *read_all(const char *file)
{
	FILE *f = strcmp(file, "-") ? fopen(file, "re") : stdin;
	size_t n = 0, cap = 1 << 20;
	char *buf;

	if (!f)
		die("verify: cannot read %s: %s", file, strerror(errno));
	buf = malloc(cap + 1);
	if (!buf)
		die("verify: out of memory");
	n = fread(buf, 1, cap, f);
	if (ferror(f))
		die("verify: cannot read %s: %s", file, strerror(errno));
	if (!feof(f) && fgetc(f) != EOF)
		die("verify: %s is larger than 1 MiB: not a certificate", file);
	if (f != stdin)
		fclose(f);
	buf[n] = '\0';
	if (strlen(buf) != n)
		die("verify: %s holds a NUL byte: not a certificate", file);
	return buf;
}

/*
 * One JSON object for every verdict, every member always there: what the
 * verdict does not vouch for is null.  signer_uid, encoded and ttl are
 * munge's (null when munged decoded nothing); the owner, job, step, node,
 * region, outcome and the certificate are the payload's, shown only when
 * the verdict is valid (a forged payload says whatever its author wanted).
 */
static void print_json(const struct krex_verify *v)
{
	int decoded = v->encoded != 0, valid = v->verdict == KREX_VERIFY_VALID;

	printf("{\"verdict\":\"%s\",\"reason\":", verdict_keys[v->verdict]);
	json_fput_str(stdout, v->reason);
	if (decoded)
		printf(",\"signer_uid\":%u,\"encoded\":%lld,\"ttl\":%d", v->cred_uid,
		       (long long)v->encoded, v->ttl);
	else
		printf(",\"signer_uid\":null,\"encoded\":null,\"ttl\":null");
	printf(",\"replayed\":%s,\"expired\":%s", v->replayed ? "true" : "false",
	       v->expired ? "true" : "false");
	if (!valid) {
		printf(",\"uid\":null,\"user\":null,\"job\":null,\"step\":null,\"node\":null,"
		       "\"region\":null,\"outcome\":null,\"certificate\":null}\n");
		return;
	}
	printf(",\"uid\":%u,\"user\":", v->uid);
	if (v->user[0])
		json_fput_str(stdout, v->user);
	else
		printf("null");
	printf(",\"job\":%u,\"step\":%u,\"node\":", v->job, v->step);
	json_fput_str(stdout, v->node);
	/* the certificate was checked to be one strict JSON object (libregion/verify.c) */
	printf(",\"region\":%llu,\"outcome\":\"%s\",\"certificate\":%s}\n",
	       (unsigned long long)v->region_id, krex_outcome_name(v->outcome),
	       v->certificate[0] ? v->certificate : "null");
}

static void print_text(const struct krex_verify *v, const char *file)
{
	char when[64];
	struct tm tm;
	time_t t = (time_t)v->encoded;

	if (!localtime_r(&t, &tm) || !strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S %z", &tm))
		snprintf(when, sizeof(when), "%lld", (long long)v->encoded);
	printf("%s: valid: %s\n", file, v->reason);
	printf("  who:     uid %u (%s), job %u step %u\n", v->uid,
	       v->user[0] ? v->user : "unknown here", v->job, v->step);
	printf("  where:   node %s (signed by uid %u)\n", v->node, v->cred_uid);
	printf("  when:    %s (time-to-live %d s)%s\n", when, v->ttl,
	       v->replayed ? ", verified before on this node" : "");
	printf("  outcome: %s (region %llu)\n", krex_outcome_name(v->outcome),
	       (unsigned long long)v->region_id);
}

int cmd_verify(int argc, char **argv)
{
	static const struct option opts[] = {{"allow-expired", no_argument, 0, 'e'},
	                                     {"signer", required_argument, 0, 's'},
	                                     {"any-signer", no_argument, 0, 'a'},
	                                     {"socket", required_argument, 0, 'S'},
	                                     {"json", no_argument, 0, 'j'},
	                                     {"help", no_argument, 0, 'h'},
	                                     {0, 0, 0, 0}};
	static struct krex_verify v = KREX_VERIFY_INIT;
	uint64_t u;
	char *text;
	int c, json = 0, rc;

	optind = 1;
	while ((c = getopt_long(argc, argv, "es:aS:jh", opts, NULL)) != -1) {
		switch (c) {
		case 'e':
			v.flags |= KREX_VERIFY_ALLOW_EXPIRED;
			break;
		case 's':
			if (conf_parse_uint(optarg, 0, 0xfffffffeu, &u) < 0)
				die_usage("verify: bad --signer '%s' (a uid)", optarg);
			v.signer_uid = (uint32_t)u;
			break;
		case 'a':
			v.flags |= KREX_VERIFY_ANY_SIGNER;
			break;
		case 'S':
			if (optarg[0] != '/' || strlen(optarg) >= sizeof(v.munge_socket))
				die_usage("verify: bad --socket '%s' (an absolute path)", optarg);
			snprintf(v.munge_socket, sizeof(v.munge_socket), "%s", optarg);
			break;
		case 'j':
			json = 1;
			break;
		case 'h':
			printf("Usage: krex verify [--allow-expired] [--signer UID | --any-signer] [--socket PATH] [--json] FILE\n");
			return 0;
		default:
			die_usage("verify: bad option");
		}
	}
	if (optind != argc - 1)
		die_usage(
		        "verify: give one FILE (a certificate from krex region --json, or - for stdin)");
	text = read_all(argv[optind]);
	rc = krex_certificate_verify(text, &v);
	free(text);
	if (rc != KREX_OK)
		die("verify: %s", krex_strerror(rc));
	if (json)
		print_json(&v);
	else if (v.verdict == KREX_VERIFY_VALID)
		print_text(&v, argv[optind]);
	if (v.verdict != KREX_VERIFY_VALID && !json)
		fprintf(stderr, "krex: verify: %s: refused (%s): %s\n", argv[optind],
		        verdict_names[v.verdict], v.reason);
	if (v.verdict == KREX_VERIFY_VALID)
		return 0;
	return v.verdict == KREX_VERIFY_NOMUNGE ? 3 : 1;
}
