/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * identity_test.c - krexd's process identity (doc/security.md "Identity"):
 * the start time parsed from /proc/PID/stat, and a connection whose peer's
 * start time no longer matches (pid reuse) is not trusted; the per-uid
 * accounting.
 */
#include "config.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "conn.h"
#include "ident.h"
#include "krexd.h"
#include "quota.h"
#include "tap.h"
#include "text.h"
#include "timeutil.h"

/* Labels and GPU names (text_check): one printable line of well-formed UTF-8. */
static void test_names(void)
{
	static const char *const good[] = {"job 42.0", "caf\xc3\xa9 \xe2\x82\xac",
	                                   "\xf0\x9f\x98\x80", "\xef\xbf\xbd", ""};
	static const char *const bad[] = {
	        "\x1b[31m",           "a\x7f",        "\xc2\x80",         "x\xc2\x9b[2J",
	        "\xc2\x9d\x30;t\x07", "x\x9b",        "\xc0\x80",         "\xc1\xbf",
	        "\xe0\x80\x80",       "\xed\xa0\x80", "\xf4\x90\x80\x80", "\xf8\x88\x80\x80\x80",
	        "\xe2\x82",           "\xe2\x80\xae", "\xe2\x81\xa6",     "\xe2\x80\xa8"};
	char err[200];
	unsigned i, n = 0;

	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		n += text_check("the label", good[i], err, sizeof(err)) == 0;
	ok(n == sizeof(good) / sizeof(good[0]),
	   "plain ASCII, UTF-8 of 2, 3, 4 bytes, U+FFFD: taken");
	for (i = 0, n = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		n += text_check("the label", bad[i], err, sizeof(err)) < 0;
	ok(n == sizeof(bad) / sizeof(bad[0]),
	   "C0, DEL, C1, raw 0x9b, overlong, surrogate, past U+10FFFF, 5 bytes, cut short, bidi and line separators: %u of %zu refused",
	   n, sizeof(bad) / sizeof(bad[0]));
	ok(text_check("the label", "x\xc2\x9b", err, sizeof(err)) < 0 &&
	           !strcmp(err, "the label holds a control character (U+009B at 1)"),
	   "U+009B named: %s", err);
	ok(text_check("GPU name 0", "g\x9b", err, sizeof(err)) < 0 &&
	           !strcmp(err, "GPU name 0 is not UTF-8 (byte 0x9b at 1)"),
	   "a raw byte named: %s", err);
	for (i = 0, n = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char buf[32];
		snprintf(buf, sizeof(buf), "%s", bad[i]);
		text_clean(buf);
		n += text_check("the label", buf, err, sizeof(err)) == 0 &&
		     strlen(buf) == strlen(bad[i]);
	}
	{
		char cut[] = "caf\xc3\xa9 \xe2\x82";
		char keep[] = "caf\xc3\xa9 \xe2\x82\xac";
		text_clean(cut);
		text_clean(keep);
		ok(n == sizeof(bad) / sizeof(bad[0]) && !strcmp(cut, "caf\xc3\xa9 ??") &&
		           !strcmp(keep, "caf\xc3\xa9 \xe2\x82\xac"),
		   "text_clean: every refused name passes after it, byte for byte; a cut sequence becomes '?', valid UTF-8 stays (%s)",
		   cut);
	}
}

int main(void)
{
	struct krexd k;
	struct conn c;
	struct uacct *a;
	uint64_t t = 0, t2 = 0;
	uid_t u = 12345;
	pid_t child;

	plan(17);
	test_names();
	ok(pid_start_ticks(getpid(), &t, &u) == 0 && t > 0 && u == geteuid(),
	   "own start time and uid read");

	memset(&c, 0, sizeof(c));
	c.pid = getpid();
	c.uid = geteuid();
	c.pidfd = (int)syscall(SYS_pidfd_open, c.pid, 0);
	c.start_ticks = t;
	ok(conn_peer_alive(&c) == 1, "same pid, uid and start time: the peer is alive");
	c.start_ticks = t + 1;
	ok(conn_peer_alive(&c) == 0, "start time mismatch (a reused pid): not the peer");
	c.start_ticks = t;
	c.uid = geteuid() + 1;
	ok(conn_peer_alive(&c) == 0 && c.ident == CONN_IDENT_OWNER,
	   "uid mismatch: not the peer, also when /proc is root's (a root or non-dumpable process)");
	c.uid = geteuid();
	c.start_ticks = 0;
	ok(conn_peer_alive(&c) == 0, "no identity taken at accept: not trusted");
	if (c.pidfd >= 0)
		close(c.pidfd);

	/* a peer that exited (a zombie still has its pid) */
	child = fork();
	if (child == 0)
		_exit(0);
	c.pid = child;
	c.pidfd = (int)syscall(SYS_pidfd_open, child, 0);
	ok(pid_start_ticks(child, &t2, NULL) == 0 || 1, "child started");
	c.start_ticks = t2;
	usleep(100 * 1000);
	ok(conn_peer_alive(&c) == 0, "a peer that exited (zombie) is not alive");
	waitpid(child, NULL, 0);
	if (c.pidfd >= 0)
		close(c.pidfd);

	/* connected as root, then dropped to a user (the SPANK plugin's task_init):
	 * SO_PEERCRED says 0, /proc says the user; the same process all the same */
	if (geteuid() == 0) {
		int ready[2];
		char ch;
		if (pipe(ready) < 0)
			return 1;
		child = fork();
		if (child == 0) {
			if (setgid(65534) < 0 || setuid(65534) < 0)
				_exit(1);
			prctl(PR_SET_DUMPABLE,
			      1); /* /proc/PID is the user's again, as slurmstepd makes it */
			(void)!write(ready[1], "r", 1);
			pause();
			_exit(0);
		}
		(void)!read(ready[0], &ch, 1);
		memset(&c, 0, sizeof(c));
		c.pid = child;
		c.uid = 0;
		c.pidfd = (int)syscall(SYS_pidfd_open, child, 0);
		pid_start_ticks(child, &c.start_ticks, &u);
		ok(u == 65534 && conn_peer_alive(&c) == 1,
		   "a peer that connected as root and became a user is still the peer (owner %u)",
		   (unsigned)u);
		kill(child, SIGKILL);
		waitpid(child, NULL, 0);
		if (c.pidfd >= 0)
			close(c.pidfd);
	} else
		ok(1, "# SKIP needs root");

	/* accounting */
	memset(&k, 0, sizeof(k));
	config_defaults(&k.cfg);
	k.cfg.max_buffer_per_uid = 1000;
	memset(&c, 0, sizeof(c));
	c.ua = a = uacct_get(&k, 1000);
	ok(a && uacct_get(&k, 1000) == a, "one account per uid");
	ok(uacct_charge(&k, &c, 600) == 0 && uacct_charge(&k, &c, 600) < 0 && a->bytes == 600,
	   "max_buffer_per_uid refuses what passes it");
	uacct_uncharge(&c, 600);
	uacct_gc(&k);
	ok(k.uaccts == NULL, "an account that holds nothing is freed");
	c.ua = uacct_get(&k, 0);
	ok(uacct_charge(&k, &c, 100000) == 0, "root is counted, never limited");
	uacct_uncharge(&c, 100000);
	uacct_gc(&k);
	return tap_done();
}
