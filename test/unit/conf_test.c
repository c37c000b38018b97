/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * conf_test.c - key = value files, bools, numbers, durations, lists.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "conf.h"
#include "tap.h"
#include "timeutil.h"

struct seen {
	int n;
	char last_key[64];
	char last_value[64];
};

static int kv(const char *key, const char *value, void *ctx, char *err, size_t errlen)
{
	struct seen *s = ctx;

	if (strcmp(key, "known") && strcmp(key, "other")) {
		snprintf(err, errlen, "unknown key '%s'", key);
		return -1;
	}
	s->n++;
	snprintf(s->last_key, sizeof(s->last_key), "%s", key);
	snprintf(s->last_value, sizeof(s->last_value), "%s", value);
	return 0;
}

static int parse_text(const char *text, struct seen *s, char *err, size_t errlen)
{
	char path[] = "/tmp/krex-conf-XXXXXX";
	int fd = mkstemp(path), rc;

	write(fd, text, strlen(text));
	close(fd);
	memset(s, 0, sizeof(*s));
	rc = conf_parse_file(path, 0, kv, s, err, errlen);
	unlink(path);
	return rc;
}

int main(void)
{
	struct seen s;
	char err[256], items[4][8];
	uint64_t v;
	int b;

	plan(30);
	ok(parse_text("# comment\n\n known = 1 \nother=two words # trailing\n", &s, err,
	              sizeof(err)) == 0 &&
	           s.n == 2 && strcmp(s.last_value, "two words") == 0,
	   "comments, blanks, spaces and trailing comments");
	ok(parse_text("known = 1\nbogus = 2\n", &s, err, sizeof(err)) < 0 &&
	           strstr(err, ":2: unknown key 'bogus'"),
	   "unknown key rejected with its line: %s", err);
	ok(parse_text("known 1\n", &s, err, sizeof(err)) < 0 && strstr(err, ":1: expected"),
	   "line without '=' rejected");
	ok(parse_text("= 1\n", &s, err, sizeof(err)) < 0, "empty key rejected");
	ok(conf_parse_file("/nonexistent/krexd.conf", 1, kv, &s, err, sizeof(err)) == 0,
	   "missing file allowed when asked");
	ok(conf_parse_file("/nonexistent/krexd.conf", 0, kv, &s, err, sizeof(err)) < 0 &&
	           strstr(err, "/nonexistent/krexd.conf"),
	   "missing file names the path");
	memset(&s, 0, sizeof(s));
	ok(conf_parse_arg("known=x", kv, &s, err, sizeof(err)) == 0 && s.n == 1,
	   "key=value argument");
	ok(conf_parse_arg("known", kv, &s, err, sizeof(err)) < 0, "argument without '=' rejected");

	ok(conf_parse_bool("Yes", &b) == 0 && b == 1, "bool yes");
	ok(conf_parse_bool("off", &b) == 0 && b == 0, "bool off");
	ok(conf_parse_bool("maybe", &b) < 0, "bool junk rejected");
	ok(conf_parse_uint("42", 1, 100, &v) == 0 && v == 42, "uint in range");
	ok(conf_parse_uint("420", 1, 100, &v) < 0, "uint over max rejected");
	ok(conf_parse_uint("-1", 0, 100, &v) < 0 && conf_parse_uint("4x", 0, 100, &v) < 0,
	   "uint junk rejected");
	{
		int said = 0;

		unsetenv("KREX_TEST_US");
		ok(conf_env_uint("KREX_TEST_US", 100, 7, &said, "us", "7") == 7 && !said,
		   "env uint unset: the default, nothing said");
		setenv("KREX_TEST_US", "42", 1);
		ok(conf_env_uint("KREX_TEST_US", 100, 7, &said, "us", "7") == 42 && !said,
		   "env uint in range");
		setenv("KREX_TEST_US", "420", 1);
		ok(conf_env_uint("KREX_TEST_US", 100, 7, &said, "us", "7") == 7 && said == 1,
		   "env uint over max: the default, said");
		setenv("KREX_TEST_US", "4ms", 1);
		ok(conf_env_uint("KREX_TEST_US", 100, 7, &said, "us", "7") == 7 && said == 1,
		   "env uint not a number: the default, said once only");
		unsetenv("KREX_TEST_US");
	}

	ok(time_parse_duration("250ms", NS_PER_S, &v) == 0 && v == 250 * NS_PER_MS, "duration ms");
	ok(time_parse_duration("2", NS_PER_S, &v) == 0 && v == 2 * NS_PER_S,
	   "duration default unit");
	ok(time_parse_duration("1.5s", NS_PER_MS, &v) == 0 && v == 1500 * NS_PER_MS,
	   "duration 1.5s");
	ok(time_parse_duration("5 parsecs", NS_PER_S, &v) < 0 && time_parse_duration("", 1, &v) < 0,
	   "duration junk rejected");
	v = 77;
	ok(time_parse_duration("nan", NS_PER_S, &v) < 0 &&
	           time_parse_duration("NaNms", 1, &v) < 0 && v == 77,
	   "duration nan rejected (no undefined cast)");
	ok(time_parse_duration("inf", NS_PER_S, &v) < 0 &&
	           time_parse_duration("infinitys", 1, &v) < 0 && v == 77,
	   "duration inf rejected");
	ok(time_parse_duration("1e300h", NS_PER_S, &v) < 0 &&
	           time_parse_duration("18446744073709551615s", 1, &v) < 0 && v == 77,
	   "duration too large rejected");
	ok(time_us_to_ns(UINT64_MAX) == UINT64_MAX &&
	           time_us_to_ns(UINT64_MAX / 1000 + 1) == UINT64_MAX && time_us_to_ns(5) == 5000,
	   "us to ns saturates, never wraps (max_us * NS_PER_US)");

	ok(conf_split_list(" a, b ,c", &items[0][0], 8, 4) == 3 && strcmp(items[1], "b") == 0,
	   "list split and trimmed");
	ok(conf_split_list("a,b,c,d,e", &items[0][0], 8, 4) < 0, "too many items rejected");
	ok(conf_split_list("aaaaaaaaaaa", &items[0][0], 8, 4) < 0, "too long item rejected");
	ok(xsnprintf(err, 4, "%s", "abcdef") < 0, "xsnprintf reports truncation");
	return tap_done();
}
