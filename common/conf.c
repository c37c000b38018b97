/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * conf.c - key = value parsing shared by krexd.conf, the krexd command line
 * and the SPANK plugstack arguments.
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "conf.h"
#include "log.h"

static char *trim(char *s)
{
	char *e;

	while (isspace((unsigned char)*s))
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = '\0';
	return s;
}

/* Split line at '=' into trimmed key and value; -1 if there is no '='. */
static int split_kv(char *line, char **key, char **value)
{
	char *eq = strchr(line, '=');

	if (!eq)
		return -1;
	*eq = '\0';
	*key = trim(line);
	*value = trim(eq + 1);
	return **key ? 0 : -1;
}

int conf_parse_arg(const char *arg, conf_kv_fn fn, void *ctx, char *err, size_t errlen)
{
	char buf[1024], *key, *value;

	if (xstrcpy(buf, sizeof(buf), arg) < 0) {
		snprintf(err, errlen, "argument too long");
		return -1;
	}
	if (split_kv(buf, &key, &value) < 0) {
		snprintf(err, errlen, "'%s' is not key=value", arg);
		return -1;
	}
	return fn(key, value, ctx, err, errlen);
}

int conf_parse_file(const char *path, int missing_ok, conf_kv_fn fn, void *ctx, char *err,
                    size_t errlen)
{
	char line[1024], msg[512], *p, *key, *value;
	unsigned lineno = 0;
	FILE *f = fopen(path, "re");
	int rc = 0;

	if (!f) {
		if (missing_ok && errno == ENOENT)
			return 0;
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	while (fgets(line, sizeof(line), f)) {
		lineno++;
		if (!strchr(line, '\n') && !feof(f)) {
			snprintf(err, errlen, "%s:%u: line too long", path, lineno);
			rc = -1;
			break;
		}
		if ((p = strchr(line, '#')))
			*p = '\0';
		p = trim(line);
		if (!*p)
			continue;
		if (split_kv(p, &key, &value) < 0) {
			snprintf(err, errlen, "%s:%u: expected key = value", path, lineno);
			rc = -1;
			break;
		}
		msg[0] = '\0';
		if (fn(key, value, ctx, msg, sizeof(msg)) < 0) {
			snprintf(err, errlen, "%s:%u: %s", path, lineno, msg);
			rc = -1;
			break;
		}
	}
	fclose(f);
	return rc;
}

int conf_parse_bool(const char *s, int *out)
{
	static const char *const yes[] = {"1", "yes", "true", "on"};
	static const char *const no[] = {"0", "no", "false", "off"};
	unsigned i;

	for (i = 0; i < 4; i++) {
		if (strcasecmp(s, yes[i]) == 0) {
			*out = 1;
			return 0;
		}
		if (strcasecmp(s, no[i]) == 0) {
			*out = 0;
			return 0;
		}
	}
	errno = EINVAL;
	return -1;
}

int conf_parse_uint(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (!s || !isdigit((unsigned char)*s)) {
		errno = EINVAL;
		return -1;
	}
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end || v < min || v > max) {
		errno = errno ? errno : (*end ? EINVAL : ERANGE);
		return -1;
	}
	*out = v;
	return 0;
}

uint64_t conf_env_uint(const char *name, uint64_t max, uint64_t dflt, int *said, const char *unit,
                       const char *then)
{
	const char *v = getenv(name);
	uint64_t n;

	if (!v || !*v)
		return dflt;
	if (conf_parse_uint(v, 0, max, &n) == 0)
		return n;
	if (!__atomic_exchange_n(said, 1, __ATOMIC_RELAXED))
		log_warn("%s=%s: not 0 to %llu %s; %s", name, v, (unsigned long long)max, unit,
		         then);
	return dflt;
}

int xsnprintf(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, len, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= len) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return n;
}

int xstrcpy(char *buf, size_t len, const char *s)
{
	size_t n = strlen(s);

	if (n >= len) {
		errno = ENAMETOOLONG;
		return -1;
	}
	memcpy(buf, s, n + 1);
	return 0;
}

int conf_split_list(const char *s, char *items, size_t itemlen, int max)
{
	const char *p = s, *e;
	int n = 0;
	size_t len;

	while (*p) {
		e = strchr(p, ',');
		len = e ? (size_t)(e - p) : strlen(p);
		while (len && isspace((unsigned char)*p)) {
			p++;
			len--;
		}
		while (len && isspace((unsigned char)p[len - 1]))
			len--;
		if (len) {
			if (n >= max || len >= itemlen) {
				errno = n >= max ? E2BIG : ENAMETOOLONG;
				return -1;
			}
			memcpy(items + (size_t)n * itemlen, p, len);
			items[(size_t)n * itemlen + len] = '\0';
			n++;
		}
		if (!e)
			break;
		p = e + 1;
	}
	return n;
}
