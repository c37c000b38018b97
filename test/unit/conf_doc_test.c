/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * conf_doc_test.c - the key list (common/conf_keys.def) against the pages
 * that name its keys:
 *
 *   krexd/krexd.conf.5.in   every key has an entry and every entry is a key;
 *                           its "Default X" is the row's default (read by
 *                           the key itself: "60s" = "60000" = the row's)
 *   spank/spank_krex.8.in   the keys passed to krexd are the rows with a
 *                           plugin column
 *   contrib/krexd.conf.in   every key has a "#key =" line, and every such
 *                           line is a key
 *   doc/admin.md            a passed key's row in the plugstack table gives
 *                           the row's default
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf_keys.h"
#include "krexd_config.h"
#include "tap.h"

#define MAXLINES 4096

struct text {
	char *line[MAXLINES];
	int n;
};

static int text_read(struct text *t, const char *rel)
{
	char path[1024], buf[4096];
	const char *top = getenv("top_srcdir");
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", top ? top : "../..", rel);
	t->n = 0;
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (t->n < MAXLINES && fgets(buf, sizeof(buf), f)) {
		buf[strcspn(buf, "\n")] = '\0';
		t->line[t->n++] = strdup(buf);
	}
	fclose(f);
	return 0;
}

static void text_free(struct text *t)
{
	while (t->n > 0)
		free(t->line[--t->n]);
}

/* s without troff's font changes (\fB, \fI, \fR, \fP) and with \- as -. */
static void roff_plain(char *dst, size_t len, const char *s)
{
	size_t n = 0;

	while (*s && n + 1 < len) {
		if (s[0] == '\\' && s[1] == 'f' && s[2]) {
			s += 3;
			continue;
		}
		if (s[0] == '\\' && s[1] == '-') {
			dst[n++] = '-';
			s += 2;
			continue;
		}
		dst[n++] = *s++;
	}
	dst[n] = '\0';
}

/* The entries of krexd.conf(5): ".TP" then ".B key", then its text up to
 * the next .TP or .SH, joined into one line (macro names left out). */
struct entry {
	char name[64];
	char text[8192];
};

static int man_entries(const struct text *t, struct entry *e, int max)
{
	char plain[4096];
	const char *l, *sp;
	int i, n = 0;
	size_t used;

	for (i = 0; i + 1 < t->n && n < max; i++) {
		if (strcmp(t->line[i], ".TP") || strncmp(t->line[i + 1], ".B ", 3))
			continue;
		roff_plain(e[n].name, sizeof(e[n].name), t->line[i + 1] + 3);
		e[n].text[0] = '\0';
		used = 0;
		for (i += 2;
		     i < t->n && strncmp(t->line[i], ".TP", 3) && strncmp(t->line[i], ".SH", 3);
		     i++) {
			l = t->line[i];
			if (l[0] == '.') { /* a macro: keep its words */
				sp = strchr(l, ' ');
				l = sp ? sp + 1 : "";
			}
			roff_plain(plain, sizeof(plain), l);
			used += (size_t)snprintf(e[n].text + used,
			                         used < sizeof(e[n].text) ? sizeof(e[n].text) - used
			                                                  : 0,
			                         "%s ", plain);
		}
		i--;
		n++;
	}
	return n;
}

/* Whether v, set on the defaults, leaves them as they are: v is the default. */
static int is_default(const char *key, const char *v)
{
	struct krexd_config d, c;
	char err[512];

	config_defaults(&d);
	c = d;
	return config_set(&c, key, v, err, sizeof(err)) == 0 && memcmp(&c, &d, sizeof(c)) == 0;
}

/* "Default X." in an entry's text: X, or "" when there is none. */
static void man_default(const char *text, char *out, size_t len)
{
	const char *p = strstr(text, "Default ");
	size_t n;

	out[0] = '\0';
	if (!p)
		return;
	p += strlen("Default ");
	n = strcspn(p, " ");
	while (n && (p[n - 1] == '.' || p[n - 1] == ','))
		n--;
	snprintf(out, len, "%.*s", (int)n, p);
	if (strcmp(out, "@krex_rundir@") == 0)
		snprintf(out, len, "%s", KREX_RUNDIR);
}

/* The row named name (gpuN_pci by that name), or NULL. */
static const struct conf_key *row_named(const char *name)
{
	size_t k;

	for (k = 0; k < CONF_KEYS_N; k++)
		if (strcmp(conf_keys[k].name, name) == 0)
			return &conf_keys[k];
	return NULL;
}

static void check_man(void)
{
	static struct entry e[128];
	struct text t;
	char def[256];
	int n, i, found, good;
	size_t k;

	if (!ok(text_read(&t, "krexd/krexd.conf.5.in") == 0, "read krexd.conf.5.in"))
		return;
	n = man_entries(&t, e, 128);
	for (k = 0; k < CONF_KEYS_N; k++) {
		const struct conf_key *row = &conf_keys[k];

		for (found = -1, i = 0; i < n; i++)
			if (strcmp(e[i].name, row->name) == 0)
				found = i;
		if (!ok(found >= 0, "krexd.conf(5) has %s", row->name))
			continue;
		man_default(e[found].text, def, sizeof(def));
		if (!row->def) /* none, or krexd's own (node_name: the host name) */
			good = 1;
		else if (!row->def[0])
			good = !def[0] || !strcmp(def, "none") || !strcmp(def, "empty");
		else
			good = def[0] && is_default(row->name, def);
		ok(good, "krexd.conf(5): %s's default '%s' is the row's ('%s')", row->name, def,
		   row->def ? row->def : "(none)");
	}
	for (i = 0, good = 1; i < n; i++)
		if (!row_named(e[i].name)) {
			diag("krexd.conf(5) has an entry for '%s', which is no key", e[i].name);
			good = 0;
		}
	ok(good && n >= CONF_KEYS_N, "krexd.conf(5): its %d entries are keys", n);
	text_free(&t);
}

/* The keys spank_krex(8) says are passed to krexd: the .BI/.BR lines
 * (joined by .TQ) of the entry that ends "passed to the krexd ...". */
static void check_spank_man(void)
{
	char name[64], seen[CONF_KEYS_N] = {0};
	const struct conf_key *row;
	struct text t;
	int i, end = -1, good = 1, n = 0;
	unsigned gi;
	size_t k;

	if (!ok(text_read(&t, "spank/spank_krex.8.in") == 0, "read spank_krex.8.in"))
		return;
	for (i = 0; i < t.n; i++)
		if (strncmp(t.line[i], "passed to the krexd the plugin starts", 37) == 0)
			end = i;
	for (i = end - 1; i >= 0 && strcmp(t.line[i], ".TP"); i--) {
		if (strcmp(t.line[i], ".TQ") == 0)
			continue;
		roff_plain(name, sizeof(name),
		           strchr(t.line[i], ' ') ? strchr(t.line[i], ' ') + 1 : "");
		name[strcspn(name, "= ")] = '\0';
		row = conf_key_find(name, &gi);
		if (!row || !row->plugin) {
			diag("spank_krex(8) passes '%s', which the key list does not", name);
			good = 0;
			continue;
		}
		seen[row - conf_keys] = 1;
		n++;
	}
	for (k = 0; k < CONF_KEYS_N; k++)
		if (conf_keys[k].plugin && !seen[k]) {
			diag("spank_krex(8) does not name '%s', which the plugin passes",
			     conf_keys[k].name);
			good = 0;
		}
	ok(end > 0 && n > 0 && good, "spank_krex(8) names the %d passed keys", n);
	text_free(&t);
}

/* contrib/krexd.conf.in: "#key = ..." for every key (gpuN_pci, a pattern,
 * has none). */
static void check_contrib(void)
{
	char seen[CONF_KEYS_N] = {0}, name[64];
	const struct conf_key *row;
	struct text t;
	int i, good = 1;
	unsigned gi;
	size_t k, n;

	if (!ok(text_read(&t, "contrib/krexd.conf.in") == 0, "read contrib/krexd.conf.in"))
		return;
	for (i = 0; i < t.n; i++) {
		if (t.line[i][0] != '#')
			continue;
		n = strspn(t.line[i] + 1, "abcdefghijklmnopqrstuvwxyz0123456789_");
		if (n == 0 || n >= sizeof(name) || strncmp(t.line[i] + 1 + n, " =", 2))
			continue;
		snprintf(name, sizeof(name), "%.*s", (int)n, t.line[i] + 1);
		row = conf_key_find(name, &gi);
		if (!row) {
			diag("contrib/krexd.conf.in sets '%s', which is no key", name);
			good = 0;
			continue;
		}
		seen[row - conf_keys] = 1;
	}
	for (k = 0; k < CONF_KEYS_N; k++)
		if (!seen[k] && conf_keys[k].type != CONF_PCI) {
			diag("contrib/krexd.conf.in has no '#%s =' line", conf_keys[k].name);
			good = 0;
		}
	ok(good, "contrib/krexd.conf.in shows every key, and only keys");
	text_free(&t);
}

/* doc/admin.md's plugstack table: "| `key` | default | what |". */
static void check_admin(void)
{
	const struct conf_key *row;
	char name[64], cell[256], word[256];
	const char *l, *p, *q;
	struct text t;
	int i, rows = 0, good = 1, hit;
	unsigned gi;

	if (!ok(text_read(&t, "doc/admin.md") == 0, "read doc/admin.md"))
		return;
	for (i = 0; i < t.n; i++) {
		l = t.line[i];
		if (strncmp(l, "| `", 3) || !(p = strchr(l + 3, '`')))
			continue;
		snprintf(name, sizeof(name), "%.*s", (int)(p - l - 3), l + 3);
		row = conf_key_find(name, &gi);
		if (!row || !row->plugin || !(p = strchr(p, '|')) || !(q = strchr(p + 1, '|')))
			continue;
		snprintf(cell, sizeof(cell), "%.*s", (int)(q - p - 1), p + 1);
		/* the first word, or a `word`, is the default */
		hit = sscanf(cell, "%255s", word) == 1 && is_default(name, word);
		for (p = strchr(cell, '`'); !hit && p && (q = strchr(p + 1, '`'));
		     p = strchr(q + 1, '`')) {
			snprintf(word, sizeof(word), "%.*s", (int)(q - p - 1), p + 1);
			hit = is_default(name, word);
		}
		if (!hit) {
			diag("doc/admin.md gives %s the default '%s', not '%s'", name, cell,
			     row->def);
			good = 0;
		}
		rows++;
	}
	ok(rows > 0 && good,
	   "doc/admin.md: the %d passed keys of its plugstack table give the rows' defaults", rows);
	text_free(&t);
}

int main(void)
{
	struct krexd_config c;
	char err[512];
	size_t k;
	int good = 1;

	for (k = 0; k < CONF_KEYS_N; k++) {
		memset(&c, 0, sizeof(c));
		if (conf_keys[k].def &&
		    config_set(&c, conf_keys[k].name, conf_keys[k].def, err, sizeof(err)) < 0) {
			diag("%s", err);
			good = 0;
		}
	}
	ok(good, "every row's default is a value its key takes");
	check_man();
	check_spank_man();
	check_contrib();
	check_admin();
	printf("1..%d\n", tap_n);
	return tap_failed ? 1 : 0;
}
