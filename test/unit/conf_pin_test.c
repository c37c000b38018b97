/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * conf_pin_test.c - every krexd.conf key pinned: its default, what
 * config_set() does with a spread of values (the field it sets, or the exact
 * error text), what conf_key_check() (the SPANK plugin's check) answers, and
 * whether a reload (config_apply_live) may change it.
 *
 * The lines are compared with conf_pin.expected (one TAP line per key).
 * conf_pin_test --write prints them, to make that file again after a change
 * that is meant to change behaviour.  The dump of the struct is written out
 * here by hand, field by field, so that it does not depend on the key list.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "conf_keys.h"
#include "krexd_config.h"
#include "tap.h"

#define MAXL 4096

static char out[MAXL][400];

/* Runs of more than 8 'a' (the long values) written as a*N. */
static void squeeze(char *dst, size_t len, const char *s)
{
	size_t n = 0, r;

	while (*s && n + 1 < len) {
		r = strspn(s, "a");
		if (r > 8) {
			n += (size_t)snprintf(dst + n, len - n, "a*%zu", r);
			s += r;
			continue;
		}
		dst[n++] = *s++;
	}
	dst[n < len ? n : len - 1] = '\0';
}
static int nout;
static char host[256];

__attribute__((format(printf, 1, 2))) static void line(const char *fmt, ...)
{
	va_list ap;

	static char buf[8192];

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	squeeze(out[nout], sizeof(out[0]), buf);
	if (nout < MAXL - 1)
		nout++;
}

/* Every field of the struct as "name=value", into f (at most 128 lines). */
static int dump(const struct krexd_config *c, char f[][600])
{
	int n = 0, i;

#define S(x) snprintf(f[n++], 600, #x "=%s", c->x)
#define U(x) snprintf(f[n++], 600, #x "=%llu", (unsigned long long)c->x)
#define I(x) snprintf(f[n++], 600, #x "=%d", c->x)
#define D(x) snprintf(f[n++], 600, #x "=%.17g", c->x)
	if (strcmp(c->run_dir, KREX_RUNDIR) == 0) /* configure's --with-rundir */
		snprintf(f[n++], 600, "run_dir=(KREX_RUNDIR)");
	else
		S(run_dir);
	U(max_region_ns);
	U(drain_timeout_ns);
	U(freeze_timeout_ns);
	U(freeze_poll_ns);
	U(queue_timeout_ns);
	U(gate_timeout_ns);
	U(queue_cap);
	U(queue_time_ns);
	I(freezer);
	I(isolate);
	S(region_cores);
	S(topology);
	S(gpus);
	D(max_share);
	U(share_window_ns);
	I(log_level);
	if (strcmp(c->node_name, host) == 0)
		snprintf(f[n++], 600, "node_name=(hostname)");
	else
		S(node_name);
	S(cgroup_subtree);
	for (i = 0; i < KREX_MAX_GPUS; i++)
		if (c->gpu_pci[i][0])
			snprintf(f[n++], 600, "gpu_pci[%d]=%s", i, c->gpu_pci[i]);
	I(settle);
	U(settle_timeout_ns);
	D(clock_tolerance);
	I(require_clocks);
	U(chain_max_ns);
	U(chain_gap_ns);
	I(gpu_policy);
	U(max_conns_per_uid);
	U(max_parts_per_uid);
	U(max_queued_per_uid);
	U(max_gpus_per_uid);
	U(max_buffer_per_uid);
	U(conn_buffer);
	U(region_time_per_uid);
	U(reserve_fds);
	U(history);
	S(region_log);
	U(region_log_max);
	U(region_log_keep);
	S(metrics_file);
	I(sign);
	S(munge_socket);
	U(sign_ttl);
	U(sign_timeout_ns);
#undef S
#undef U
#undef I
#undef D
	return n;
}

/* The fields of b that differ from a, space-separated, into buf. */
static void changed(const struct krexd_config *a, const struct krexd_config *b, char *buf,
                    size_t len)
{
	static char fa[128][600], fb[128][600];
	int na = dump(a, fa), nb = dump(b, fb), i, j;
	size_t used = 0;

	buf[0] = '\0';
	for (j = 0; j < nb; j++) {
		for (i = 0; i < na; i++)
			if (strcmp(fa[i], fb[j]) == 0)
				break;
		if (i == na)
			used += (size_t)snprintf(buf + used, used < len ? len - used : 0, " %s",
			                         fb[j]);
	}
	for (i = 0; i < na; i++) { /* a gpu_pci entry that went away */
		for (j = 0; j < nb; j++)
			if (strncmp(fa[i], fb[j], strcspn(fa[i], "=") + 1) == 0)
				break;
		if (j == nb)
			used += (size_t)snprintf(buf + used, used < len ? len - used : 0, " -%s",
			                         fa[i]);
	}
}

static const char *longstr(size_t n)
{
	static char s[4][2048];
	static int k;
	char *p = s[k++ % 4];

	memset(p, 'a', n);
	p[0] = '/';
	p[n] = '\0';
	return p;
}

/* A key and the values it is probed with. */
static const struct probe {
	const char *key;
	const char *vals[32];
} probes[] = {
#define DUR                                                                                        \
	"0", "999us", "1ms", "1", "1.5", "250us", "2s", "1m", "1h", "24h", "86400s", "86401s",     \
	        "25h", "1d", "-1", "abc", "", "1e300", "nan", " 1s", "1s "
        {"run_dir", {"/tmp/kx", "relative", "", "/", "L255", "L256", "L300", NULL}},
        {"max_region", {DUR, NULL}},
        {"drain_timeout", {DUR, NULL}},
        {"freeze_timeout", {DUR, NULL}},
        {"freeze_poll", {DUR, "49us", "50us", "10ms", "10001us", NULL}},
        {"queue_timeout", {DUR, NULL}},
        {"gate_timeout", {DUR, NULL}},
        {"share_window", {DUR, NULL}},
        {"settle_timeout", {DUR, "2000ms", "2001ms", "2.001s", NULL}},
        {"sign_timeout", {DUR, "10s", "10001ms", "11s", NULL}},
        {"queue_cap", {"0", "1", "2", "1000000", "1000001", "-1", "x", "", "1.5", " 3", NULL}},
        {"queue_time",
         {"0", "9us", "10us", "250us", "1", "1s", "1001ms", "2s", "-1", "x", "", "0us", "0.001",
          NULL}},
        {"chain_max", {"0", "1us", "500ms", "1m", "60s", "60001ms", "2m", "-1", "x", "", NULL}},
        {"chain_gap", {"0", "1us", "250ms", "1m", "61s", "1h", "-1", "x", "", NULL}},
        {"region_time_per_uid",
         {"0", "1us", "1", "30s", "60s", "60001ms", "2m", "nan", "-1", "x", "", NULL}},
        {"freezer", {"auto", "cgroup2", "cgroup1", "signal", "magic", "", "AUTO", "0", NULL}},
        {"isolate", {"participants", "node", "none", "cores", "", "Node", "1", NULL}},
        {"settle", {"wait", "mark", "off", "sometimes", "", "WAIT", "0", NULL}},
        {"gpu_policy", {"configured", "step", "open", "anyone", "", "1", NULL}},
        {"sign", {"munge", "off", "gpg", "", "MUNGE", "0", NULL}},
        {"require_clocks",
         {"auto", "yes", "no", "true", "1", "false", "0", "maybe", "on", "off", "", "YES", NULL}},
        {"log_level",
         {"none", "error", "warn", "info", "debug", "DEBUG", "Info", "0", "4", "5", "-1", "verbose",
          "", "44", NULL}},
        {"clock_tolerance",
         {"0", "1", "2.5%", "50", "50%", "50.1", "60", "-1", "%", "x", "", "1%%", "nan", "inf",
          "1e1", NULL}},
        {"max_share",
         {"1.0", "1", "0.5", "1e-9", "0", "1.5", "-0.5", "50%", "x", "", "nan", "inf", NULL}},
        {"max_conns_per_uid", {"0", "1", "256", "8192", "8193", "-1", "x", "", NULL}},
        {"max_parts_per_uid", {"0", "1", "10", "4096", "4097", "-1", "x", "", NULL}},
        {"max_queued_per_uid", {"0", "1", "64", "4096", "4097", "-1", "x", "", NULL}},
        {"max_gpus_per_uid", {"0", "8", "64", "65", "-1", "x", "", NULL}},
        {"max_buffer_per_uid",
         {"1000", "131103", "131104", "8388608", "4294967296", "4294967297", "8M", "-1", "x", "",
          NULL}},
        {"conn_buffer",
         {"100", "65551", "65552", "262144", "1073741824", "1073741825", "256k", "-1", "x", "",
          NULL}},
        {"reserve_fds", {"15", "16", "256", "65536", "65537", "-1", "x", "", NULL}},
        {"sign_ttl", {"0", "60", "31536000", "31536001", "-1", "x", "", NULL}},
        {"history", {"0", "1000", "100000", "100001", "-1", "x", "", NULL}},
        {"region_log_max",
         {"0", "1", "4095", "4096", "4k", "4K", "10M", "1G", "1025M", "2G", "1k", "-1k", "M", "x",
          "", "10m", NULL}},
        {"region_log_keep", {"0", "5", "100", "101", "-1", "x", "", NULL}},
        {"region_log",
         {"/var/log/krex/regions.jsonl", "", "regions.jsonl", "/", "L255", "L256", NULL}},
        {"metrics_file",
         {"/var/lib/node_exporter/textfile/krex.prom", "", "krex.prom", "L255", "L256", NULL}},
        {"munge_socket", {"/run/munge/munge.socket.2", "", "munge.sock", "L255", "L256", NULL}},
        {"node_name", {"n1", "", "L63", "L64", "a b", NULL}},
        {"cgroup_subtree",
         {"krex", "krex/t1", "../up", "a/../b", "..", "/abs", "", "a..b", "L127", "L128", NULL}},
        {"region_cores", {"0-3", "", "anything at all", "L255", "L256", NULL}},
        {"topology", {"synthetic:pack:1 core:4", "", "/x.xml", "L511", "L512", NULL}},
        {"gpus",
         {"g0,g1", "", "a", "a,", ",a", "a,,b", "L63", "L64", "L512", "0000:17:00.0,0000:65:00.0",
          NULL}},
        {"gpu0_pci",
         {"0000:17:00.0", "17:00.0", "nocolon", "", ":", "L15:", "0000:17:00.00", NULL}},
        {"gpu63_pci", {"0000:17:00.0", NULL}},
        {"gpu64_pci", {"0000:17:00.0", NULL}},
        {"gpu01_pci", {"0000:17:00.0", NULL}},
        {"gpu 2_pci", {"0000:17:00.0", NULL}},
        {"gpu-1_pci", {"0000:17:00.0", NULL}},
        {"gpu_pci", {"0000:17:00.0", NULL}},
        {"gpu3_pcix", {"0000:17:00.0", NULL}},
        {"bogus", {"1", NULL}},
        {"", {"1", NULL}},
        {"MAX_REGION", {"1s", NULL}},
};

/* "L<n>": a string of n bytes starting with '/' ("L15:": 15 bytes with a ':'). */
static const char *value_of(const char *v)
{
	static char s[2048];
	char *end;
	unsigned long n;

	if (v[0] != 'L' || v[1] < '0' || v[1] > '9')
		return v;
	n = strtoul(v + 1, &end, 10);
	if (*end == ':') {
		snprintf(s, sizeof(s), "%s", longstr(n));
		s[n - 1] = ':';
		return s;
	}
	return longstr(n);
}

/* For the reload lines: each key with a value other than its default. */
static const char *const reload_vals[][2] = {
        {"run_dir", "/tmp/kx"},
        {"max_region", "5s"},
        {"drain_timeout", "3s"},
        {"freeze_timeout", "3s"},
        {"freeze_poll", "1ms"},
        {"queue_timeout", "3s"},
        {"gate_timeout", "3s"},
        {"share_window", "3s"},
        {"settle_timeout", "1s"},
        {"sign_timeout", "3s"},
        {"queue_cap", "4"},
        {"queue_time", "2ms"},
        {"chain_max", "2s"},
        {"chain_gap", "2s"},
        {"region_time_per_uid", "2s"},
        {"freezer", "signal"},
        {"isolate", "node"},
        {"settle", "mark"},
        {"gpu_policy", "open"},
        {"sign", "off"},
        {"require_clocks", "yes"},
        {"log_level", "debug"},
        {"clock_tolerance", "5"},
        {"max_share", "0.5"},
        {"max_conns_per_uid", "7"},
        {"max_parts_per_uid", "7"},
        {"max_queued_per_uid", "7"},
        {"max_gpus_per_uid", "7"},
        {"max_buffer_per_uid", "9000000"},
        {"conn_buffer", "70000"},
        {"reserve_fds", "70"},
        {"sign_ttl", "70"},
        {"history", "70"},
        {"region_log_max", "1M"},
        {"region_log_keep", "7"},
        {"region_log", "/tmp/r.jsonl"},
        {"metrics_file", "/tmp/m.prom"},
        {"munge_socket", "/tmp/m.sock"},
        {"node_name", "other"},
        {"cgroup_subtree", "krex/x"},
        {"region_cores", "1-2"},
        {"topology", "synthetic:pack:1 core:2"},
        {"gpus", "g0,g1"},
        {"gpu5_pci", "0000:17:00.0"},
};

static char reported[512];

static void report(const char *key)
{
	size_t n = strlen(reported);

	snprintf(reported + n, sizeof(reported) - n, " %s", key);
}

static void run(void)
{
	struct krexd_config d, c, n;
	static char f[128][600];
	char err[4096], ch[8192];
	const char *v;
	size_t i, j;
	int k, rc;

	config_defaults(&d);
	k = dump(&d, f);
	for (i = 0; i < (size_t)k; i++)
		line("default %s", f[i]);
	for (i = 0; i < sizeof(probes) / sizeof(probes[0]); i++) {
		for (j = 0; probes[i].vals[j]; j++) {
			v = value_of(probes[i].vals[j]);
			c = d;
			err[0] = '\0';
			rc = config_set(&c, probes[i].key, v, err, sizeof(err));
			changed(&d, &c, ch, sizeof(ch));
			if (rc == 0)
				line("set %s=%s -> ok%s", probes[i].key, probes[i].vals[j], ch);
			else
				line("set %s=%s -> %d [%s]%s%s", probes[i].key, probes[i].vals[j],
				     rc, err, ch[0] ? " changed:" : "", ch);
			err[0] = '\0';
			rc = conf_key_check(probes[i].key, v, err, sizeof(err));
			line("check %s=%s -> %d [%s]", probes[i].key, probes[i].vals[j], rc, err);
		}
	}
	for (i = 0; i < sizeof(reload_vals) / sizeof(reload_vals[0]); i++) {
		c = d;
		n = d;
		if (config_set(&n, reload_vals[i][0], reload_vals[i][1], err, sizeof(err)) < 0) {
			line("reload %s=%s -> cannot set [%s]", reload_vals[i][0],
			     reload_vals[i][1], err);
			continue;
		}
		reported[0] = '\0';
		rc = config_apply_live(&c, &n, report);
		changed(&d, &c, ch, sizeof(ch));
		line("reload %s=%s -> %d refused [%s] now%s", reload_vals[i][0], reload_vals[i][1],
		     rc, reported, ch);
	}
	/* every key at once: the order of the reports */
	c = d;
	n = d;
	for (i = 0; i < sizeof(reload_vals) / sizeof(reload_vals[0]); i++)
		config_set(&n, reload_vals[i][0], reload_vals[i][1], err, sizeof(err));
	reported[0] = '\0';
	rc = config_apply_live(&c, &n, report);
	line("reload all -> %d refused [%s]", rc, reported);
	changed(&n, &c, ch, sizeof(ch));
	line("reload all -> kept%s", ch);
}

/* The key a line is about: "default" for the defaults, else its key. */
static void line_key(const char *l, char *key, size_t len)
{
	const char *p = strchr(l, ' '), *e;

	if (strncmp(l, "default ", 8) == 0 || !p) {
		snprintf(key, len, "default");
		return;
	}
	p++;
	e = strstr(p, " -> ");
	e = e ? e : p + strlen(p);
	snprintf(key, len, "%.*s", (int)strcspn(p, "="), p);
	if ((size_t)(e - p) < strcspn(p, "="))
		snprintf(key, len, "%.*s", (int)(e - p), p);
	if (strncmp(l, "reload ", 7) == 0) {
		size_t n = strlen(key);
		snprintf(key + n, len - n, " (reload)");
	}
}

int main(int argc, char **argv)
{
	static char exp[MAXL][400];
	char path[1024], key[128], k2[128], *src = getenv("top_srcdir");
	int nexp = 0, i, j, tested[MAXL] = {0}, good;
	FILE *f;

	if (gethostname(host, sizeof(host)) < 0)
		host[0] = '\0';
	run();
	if (argc > 1 && strcmp(argv[1], "--write") == 0) {
		for (i = 0; i < nout; i++)
			printf("%s\n", out[i]);
		return 0;
	}
	snprintf(path, sizeof(path), "%s/test/unit/conf_pin.expected", src ? src : "../..");
	f = fopen(path, "r");
	if (!f) {
		plan(1);
		ok(0, "read %s", path);
		return tap_done();
	}
	while (nexp < MAXL && fgets(exp[nexp], sizeof(exp[0]), f)) {
		exp[nexp][strcspn(exp[nexp], "\n")] = '\0';
		nexp++;
	}
	fclose(f);
	ok(nexp == nout, "%d lines, %d expected", nout, nexp);
	/* One check per key: all its lines as expected, in order. */
	for (i = 0; i < nout; i++) {
		if (tested[i])
			continue;
		line_key(out[i], key, sizeof(key));
		good = 1;
		for (j = i; j < nout; j++) {
			line_key(out[j], k2, sizeof(k2));
			if (strcmp(key, k2))
				continue;
			tested[j] = 1;
			if (j >= nexp || strcmp(out[j], exp[j])) {
				good = 0;
				diag("got:  %s", out[j]);
				diag("want: %s", j < nexp ? exp[j] : "(nothing)");
			}
		}
		ok(good, "%s", key);
	}
	printf("1..%d\n", tap_n);
	return tap_failed ? 1 : 0;
}
