/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * freezer_test.c - the text krexd's freezer reads from the kernel:
 * cgroup.events (v2), /proc/PID/stat, /proc/PID/cgroup, /proc/self/mountinfo.
 * The cgroup v2 backend is also run by the integration tests where a
 * cgroup2 mount has cgroup.freeze.
 *
 * And someone else's suspend (freezer_ext_*) against a fake cgroup tree in
 * a temp dir: a Slurm cgroup/v2 step (job/step/user/task_0, Slurm writing
 * user/cgroup.freeze) and a v1 freezer cgroup, and a child stopped with
 * SIGSTOP.  The real kernel's v1 and v2 freezers: krexd-suspend.sh.
 *
 * And the cpuset krexd gives its own v2 cgroups (issue 15), on a fake tree:
 * the controller enabled level by level only where the level above gave it,
 * explicit cpus and mems copied from where the process came from.  The
 * real kernel: test/topology/krexd_isolate_own.sh (v1 cpusets here).
 */
#include "config.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "freezer.h"
#include "tap.h"

static void put(const char *dir, const char *file, const char *text)
{
	char p[600];
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", dir, file);
	f = fopen(p, "w");
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

/* freezer_ext_state() of the fake f and t, with no member pids */
#define EXT_IS(want, what) ok(freezer_ext_state(&f, &t, NULL, 0) == (want), what)

static char dropped[600];

static void drop(void *ctx, const char *line)
{
	(void)ctx;
	snprintf(dropped, sizeof(dropped), "%s", line);
}

/* A fake freezer of kind rooted at a new temp dir (root: its template). */
static int fake_freezer(char *root, int kind, struct freezer *f, struct freezer_target *t)
{
	if (!mkdtemp(root)) {
		ok(0, "mkdtemp");
		return -1;
	}
	memset(f, 0, sizeof(*f));
	memset(t, 0, sizeof(*t));
	f->kind = kind;
	snprintf(f->root, sizeof(f->root), "%s", root);
	return 0;
}

static void ext_v2(void)
{
	char root[] = "/tmp/krex-fzt.XXXXXX", d[600], user[600];
	struct freezer f;
	struct freezer_target t;

	if (fake_freezer(root, FREEZER_CGROUP2, &f, &t) < 0)
		return;
	snprintf(d, sizeof(d), "%s/job", root);
	mkdir(d, 0755);
	put(d, "cgroup.freeze", "0\n");
	snprintf(d, sizeof(d), "%s/job/step", root);
	mkdir(d, 0755);
	put(d, "cgroup.freeze", "0\n");
	snprintf(user, sizeof(user), "%s/job/step/user", root);
	mkdir(user, 0755);
	put(user, "cgroup.freeze", "0\n");
	snprintf(t.cg, sizeof(t.cg), "%s/job/step/user/task_0", root);
	mkdir(t.cg, 0755);
	put(t.cg, "cgroup.freeze", "0\n");
	put(t.cg, "cgroup.events", "populated 1\nfrozen 0\n");
	EXT_IS(FREEZER_EXT_NONE, "v2: nobody froze it");
	put(user, "cgroup.freeze", "1\n");
	EXT_IS(FREEZER_EXT_FROZEN, "v2: Slurm froze step/user: suspended by another");
	t.frozen = 1;
	EXT_IS(FREEZER_EXT_FROZEN, "v2: ... also while krexd holds task_0 frozen");
	put(user, "cgroup.freeze", "0\n");
	put(t.cg, "cgroup.freeze", "1\n");
	EXT_IS(FREEZER_EXT_NONE, "v2: krexd's own freeze of task_0 is not another's");
	t.frozen = 0;
	EXT_IS(FREEZER_EXT_FROZEN, "v2: task_0 frozen while krexd holds none: another's");
	put(t.cg, "cgroup.freeze", "0\n");
	put(t.cg, "cgroup.events", "populated 1\nfrozen 1\n");
	EXT_IS(FREEZER_EXT_FROZEN, "v2: cgroup.events frozen 1 while krexd holds none: another's");
	t.frozen = 1;
	ok(freezer_ext_thawed_under(&f, &t) == 1,
	   "v2: krexd holds it but its cgroup.freeze reads 0: thawed by another");
	put(t.cg, "cgroup.freeze", "1\n");
	ok(freezer_ext_thawed_under(&f, &t) == 0, "v2: ... not while it reads 1");
	ok(!freezer_ext_shared(&f, &t), "v2: krexd's level is its own (nothing to hand over)");
	snprintf(d, sizeof(d), "rm -rf '%s'", root);
	(void)!system(d);
}

static void ext_v1(void)
{
	char root[] = "/tmp/krex-fzt.XXXXXX", cmd[600];
	struct freezer f;
	struct freezer_target t;
	char buf[64] = "";
	FILE *fp;

	if (fake_freezer(root, FREEZER_CGROUP1, &f, &t) < 0)
		return;
	snprintf(t.cg, sizeof(t.cg), "%s/step_0", root);
	mkdir(t.cg, 0755);
	put(t.cg, "freezer.state", "THAWED\n");
	put(t.cg, "freezer.parent_freezing", "0\n");
	EXT_IS(FREEZER_EXT_NONE, "v1: thawed");
	put(t.cg, "freezer.state", "FROZEN\n");
	EXT_IS(FREEZER_EXT_FROZEN, "v1: FROZEN while krexd holds none: Slurm's suspend");
	t.frozen = 1;
	EXT_IS(FREEZER_EXT_NONE,
	       "v1: FROZEN while krexd holds it: the file cannot say (the watch does)");
	put(t.cg, "freezer.parent_freezing", "1\n");
	EXT_IS(FREEZER_EXT_FROZEN, "v1: a frozen parent is another's freeze");
	put(t.cg, "freezer.state", "THAWED\n");
	ok(freezer_ext_thawed_under(&f, &t) == 1, "v1: krexd holds it, THAWED: thawed by another");
	ok(freezer_ext_shared(&f, &t), "v1: a cgroup krexd did not make is shared with Slurm");
	put(t.cg, "freezer.state", "FROZEN\n");
	freezer_ext_handover(&f, &t, drop, NULL);
	fp = fopen(strcat(strcpy(cmd, t.cg), "/freezer.state"), "r");
	if (fp) {
		(void)!fgets(buf, sizeof(buf), fp);
		fclose(fp);
	}
	ok(!t.frozen && !strncmp(buf, "FROZEN", 6) && !strncmp(dropped, "cgroup1 ", 8),
	   "v1: handover leaves it FROZEN and drops krexd's state line");
	t.owned = 1;
	ok(!freezer_ext_shared(&f, &t), "v1: a cgroup krexd made is not shared");
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	(void)!system(cmd);
}

static void ext_stopped(void)
{
	struct freezer f;
	struct freezer_target t;
	pid_t kid = fork();
	int st;

	if (kid == 0) {
		for (;;)
			pause();
	}
	memset(&f, 0, sizeof(f));
	memset(&t, 0, sizeof(t));
	f.kind = FREEZER_SIGNAL;
	ok(freezer_ext_state(&f, &t, &kid, 1) == FREEZER_EXT_NONE, "signal: a running member");
	kill(kid, SIGSTOP);
	waitpid(kid, &st, WUNTRACED);
	ok(freezer_ext_state(&f, &t, &kid, 1) == FREEZER_EXT_STOPPED,
	   "signal: a member stopped by another (SIGSTOP)");
	t.frozen = 1;
	t.stopped = &kid;
	t.nstopped = 1;
	ok(freezer_ext_state(&f, &t, &kid, 1) == FREEZER_EXT_NONE,
	   "signal: ... not one krexd stopped itself");
	kill(kid, SIGKILL);
	kill(kid, SIGCONT);
	waitpid(kid, &st, 0);
}

static void get(const char *dir, const char *file, char *buf, size_t len)
{
	char p[600];
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", dir, file);
	buf[0] = '\0';
	f = fopen(p, "r");
	if (f) {
		if (!fgets(buf, (int)len, f))
			buf[0] = '\0';
		fclose(f);
	}
	buf[strcspn(buf, "\n")] = '\0';
}

/* A v2 tree: root gives cpuset to krex, which gives nothing yet; krex/t (a test's second level). */
static void v2_cpuset(void)
{
	char root[] = "/tmp/krex-fzcpuset-XXXXXX", d[700], e[700], buf[64];

	if (!mkdtemp(root)) {
		ok(0, "mkdtemp");
		return;
	}
	snprintf(d, sizeof(d), "%s/krex", root);
	mkdir(d, 0755);
	put(d, "cgroup.controllers", "cpu cpuset memory pids\n");
	put(d, "cgroup.subtree_control", "");
	snprintf(e, sizeof(e), "%s/krex/t", root);
	mkdir(e, 0755);
	put(e, "cgroup.controllers", "cpuset\n"); /* what the kernel shows once krex gives it */
	put(e, "cgroup.subtree_control", "");
	ok(freezer_v2_cpuset_enable(root, "krex/t") == 1,
	   "v2 cpuset: enabled down krexd's subtree");
	get(d, "cgroup.subtree_control", buf, sizeof(buf));
	ok(!strcmp(buf, "+cpuset"), "v2 cpuset: +cpuset written at the first level (%s)", buf);
	get(e, "cgroup.subtree_control", buf, sizeof(buf));
	ok(!strcmp(buf, "+cpuset"), "v2 cpuset: and at the second (%s)", buf);
	put(d, "cgroup.controllers", "cpu memory pids\n");
	put(d, "cgroup.subtree_control", "");
	ok(freezer_v2_cpuset_enable(root, "krex/t") == 0,
	   "v2 cpuset: not given to krexd's subtree: 0, nothing written above it");
	get(d, "cgroup.subtree_control", buf, sizeof(buf));
	ok(!buf[0], "v2 cpuset: krex's subtree_control left empty");

	/* explicit cpus and mems: the effective ones of where it came from */
	put(root, "cpuset.cpus.effective", "2-5\n");
	put(root, "cpuset.mems.effective", "0\n");
	put(e, "cpuset.cpus", "");
	put(e, "cpuset.mems", "");
	ok(freezer_v2_cpuset_own(e, root) == 0, "v2 cpuset: own cpus and mems written");
	get(e, "cpuset.cpus", buf, sizeof(buf));
	ok(!strcmp(buf, "2-5"), "v2 cpuset: cpus from the origin (%s)", buf);
	get(e, "cpuset.mems", buf, sizeof(buf));
	ok(!strcmp(buf, "0"), "v2 cpuset: mems from the origin (%s)", buf);
	put(root, "cpuset.cpus.effective", "\n");
	ok(freezer_v2_cpuset_own(e, root) < 0, "v2 cpuset: an origin without effective cpus: -1");
	snprintf(d, sizeof(d), "rm -rf '%s'", root);
	(void)!system(d);
}

/* krexd/cgfavor.c's parsing: the super options of the mount at a point,
 * and which a cgroup2 reconfigure would clear unseen. */
static void cgfavor(void)
{
	char o[512], bad[64];

	ok(cgfavor_parse_line(
	           "40 25 0:35 / /sys/fs/cgroup rw,nosuid shared:9 - cgroup2 cgroup2 rw,nsdelegate,memory_recursiveprot\n",
	           "/sys/fs/cgroup", o, sizeof(o)) == 1 &&
	           !strcmp(o, "rw,nsdelegate,memory_recursiveprot"),
	   "favordynmods: the super options, after the optional fields");
	ok(cgfavor_parse_line("40 25 0:35 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw\n",
	                      "/sys/fs/cgroup", o, sizeof(o)) == 0,
	   "favordynmods: another mount point is not it");
	ok(cgfavor_parse_line("22 1 8:1 / /sys/fs/cgroup rw - tmpfs tmpfs rw\n", "/sys/fs/cgroup",
	                      o, sizeof(o)) == 0,
	   "favordynmods: a tmpfs at the point is not it");
	ok(cgfavor_parse_line(
	           "37 31 0:34 / /sys/fs/cgroup/freezer rw - cgroup cgroup rw,freezer,favordynmods\n",
	           "/sys/fs/cgroup/freezer", o, sizeof(o)) == 1 &&
	           mount_opt_has(o, "favordynmods"),
	   "favordynmods: a v1 mount that has it");
	ok(mount_opt_has("rw,favordynmods", "favordynmods") &&
	           mount_opt_has("favordynmods", "favordynmods"),
	   "favordynmods: found last and alone");
	ok(!mount_opt_has("rw,nofavordynmods,favordynmodsx", "favordynmods"),
	   "favordynmods: a longer word is not it");
	ok(cgfavor_unknown("rw,nsdelegate,memory_recursiveprot,seclabel", bad, sizeof(bad)) == 0,
	   "favordynmods: every option known: the reconfigure passes them back");
	ok(cgfavor_unknown("rw,nsdelegate,memory_future_flag", bad, sizeof(bad)) == 1 &&
	           !strcmp(bad, "memory_future_flag"),
	   "favordynmods: an unknown option is named (krexd then leaves the mount)");
	ok(cgfavor_unknown("ro", bad, sizeof(bad)) == 0, "favordynmods: ro is the superblock's");
	{
		char big[700];

		memset(big, 'a', sizeof(big) - 1);
		big[sizeof(big) - 1] = '\0';
		bad[0] = '\0';
		ok(cgfavor_unknown(big, bad, sizeof(bad)) == 1 && bad[0],
		   "favordynmods: a list too long to read counts as unknown, and says so");
	}
}

int main(void)
{
	char out[256];
	int frozen = -1;

	plan(8 + 9 + 8 + 3 + 9 + 10);
	ok(freezer_parse_events("populated 1\nfrozen 1\n", &frozen) == 0 && frozen == 1,
	   "cgroup.events: frozen 1");
	ok(freezer_parse_events("populated 0\nfrozen 0\n", &frozen) == 0 && frozen == 0,
	   "cgroup.events: frozen 0");
	ok(freezer_parse_events("populated 1\n", &frozen) < 0, "cgroup.events without frozen");
	ok(freezer_parse_events("unfrozen 1\n", &frozen) < 0, "a key that only ends in frozen");

	ok(freezer_parse_mountinfo(
	           "35 25 0:30 / /sys/fs/cgroup/freezer rw,nosuid shared:15 - cgroup cgroup rw,freezer\n",
	           "freezer", out, sizeof(out)) == 1 &&
	           !strcmp(out, "/sys/fs/cgroup/freezer"),
	   "mountinfo: v1 freezer mount (optional fields before -)");
	ok(freezer_parse_mountinfo("35 25 0:30 / /sys/fs/cgroup/cpu rw - cgroup cgroup rw,cpu\n",
	                           "freezer", out, sizeof(out)) == 0,
	   "mountinfo: another controller");
	ok(freezer_parse_mountinfo(
	           "40 25 0:35 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw,nsdelegate\n", NULL, out,
	           sizeof(out)) == 1 &&
	           !strcmp(out, "/sys/fs/cgroup"),
	   "mountinfo: cgroup2 mount");
	ok(freezer_parse_mountinfo("22 1 8:1 / / rw - ext4 /dev/sda1 rw\n", NULL, out,
	                           sizeof(out)) == 0,
	   "mountinfo: not a cgroup");
	cgfavor();
	ext_v2();
	ext_v1();
	ext_stopped();
	v2_cpuset();
	return tap_done();
}
