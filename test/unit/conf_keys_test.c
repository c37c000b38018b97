/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * conf_keys_test.c - krexd.conf values checked in one place: what the SPANK
 * plugin checks at srun time (conf_key_check) agrees with what krexd
 * accepts (config_set), with the same error text.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "conf_keys.h"
#include "krexd_config.h"
#include "tap.h"

/* The keys spank/args.c passes on to krexd, each with a good and a bad value. */
static const struct {
	const char *key, *good, *bad;
} cases[] = {
        {"max_region", "2s", "0"},
        {"drain_timeout", "250", "2x"},
        {"queue_time", "250us", "5us"},
        {"queue_cap", "4", "-1"},
        {"isolate", "node", "cores"},
        {"freezer", "signal", "sometimes"},
        {"cgroup_subtree", "krex/a", "../x"},
        {"history", "1000", "100001"},
        {"region_log", "/var/log/krex/regions.jsonl", "regions.jsonl"},
        {"region_log_max", "10M", "1k"},
        {"region_log_keep", "5", "101"},
        {"metrics_file", "/var/lib/node_exporter/textfile/krex.prom", "krex.prom"},
        {"sign", "off", "gpg"},
        {"munge_socket", "/run/munge/munge.socket.2", "munge.sock"},
        {"chain_max", "500ms", "2m"}, /* krexd.conf only, checked by the same row */
        {"chain_gap", "0", "1h"},
};

int main(void)
{
	char e1[256], e2[256];
	struct krexd_config c;
	size_t i, n = sizeof(cases) / sizeof(cases[0]);

	plan((int)(3 * n + 7));
	for (i = 0; i < n; i++) {
		config_defaults(&c);
		ok(conf_key_check(cases[i].key, cases[i].good, e1, sizeof(e1)) == 0 &&
		           config_set(&c, cases[i].key, cases[i].good, e2, sizeof(e2)) == 0,
		   "%s=%s accepted by both", cases[i].key, cases[i].good);
		e1[0] = e2[0] = '\0';
		ok(conf_key_check(cases[i].key, cases[i].bad, e1, sizeof(e1)) < 0 &&
		           config_set(&c, cases[i].key, cases[i].bad, e2, sizeof(e2)) < 0,
		   "%s=%s refused by both", cases[i].key, cases[i].bad);
		ok(e1[0] && strcmp(e1, e2) == 0, "one text: %s", e1);
	}
	ok(conf_key_check("no_such_key", "1", e1, sizeof(e1)) == 1, "a key outside the table: 1");
	ok(conf_key_check("freezer", "x", e1, sizeof(e1)) < 0 &&
	           strstr(e1, "bad value 'x' for key 'freezer' (auto, cgroup2, cgroup1 or signal)"),
	   "the text says what the key takes: %s", e1);
	config_defaults(&c);
	ok(config_set(&c, "gpus", "", e2, sizeof(e2)) == 0 &&
	           config_set(&c, "region_cores", "0-3", e2, sizeof(e2)) == 0,
	   "keys outside the table stay krexd's");
	ok(strcmp(config_freezer_name(FREEZER_CGROUP1), "cgroup1") == 0 &&
	           strcmp(config_isolate_name(ISOLATE_NONE), "none") == 0,
	   "the names follow krexd's enums");
	{
		uint64_t u = 0, v = 0, w = 1;
		ok(conf_parse_size("10M", 0, 1ULL << 30, &u) == 0 && u == 10u << 20 &&
		           conf_parse_size("4k", 0, 1ULL << 30, &v) == 0 && v == 4096 &&
		           conf_parse_size("0", 0, 1ULL << 30, &w) == 0 && w == 0,
		   "sizes: 10M, 4k, 0");
		ok(conf_parse_size("2G", 0, 1ULL << 30, &u) < 0 &&
		           conf_parse_size("M", 0, 1ULL << 30, &u) < 0 &&
		           conf_parse_size("-1k", 0, 1ULL << 30, &u) < 0 &&
		           conf_parse_size("99999999999999999999", 0, UINT64_MAX, &u) < 0,
		   "sizes past the bound, without a number or negative are refused");
		config_defaults(&c);
		ok(c.history == 1000 && c.region_log[0] == '\0' && c.metrics_file[0] == '\0' &&
		           c.region_log_max == 10u << 20 && c.region_log_keep == 5,
		   "defaults: history 1000, no region log, no metrics file, 10M, 5 kept");
	}
	return tap_done();
}
