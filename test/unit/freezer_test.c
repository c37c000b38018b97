/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * freezer_test.c - the text krexd's freezer reads from the kernel:
 * cgroup.events (v2), /proc/PID/stat, /proc/PID/cgroup, /proc/self/mountinfo.
 * The cgroup v2 backend is also run by the integration tests where a
 * cgroup2 mount has cgroup.freeze.
 */
#include "config.h"

#include <string.h>
#include <sys/types.h>

#include "freezer.h"
#include "tap.h"

int main(void)
{
	char out[256], st = 0;
	pid_t pp = 0;
	int frozen = -1;

	plan(16);
	ok(freezer_parse_events("populated 1\nfrozen 1\n", &frozen) == 0 && frozen == 1,
	   "cgroup.events: frozen 1");
	ok(freezer_parse_events("populated 0\nfrozen 0\n", &frozen) == 0 && frozen == 0,
	   "cgroup.events: frozen 0");
	ok(freezer_parse_events("populated 1\n", &frozen) < 0, "cgroup.events without frozen");
	ok(freezer_parse_events("unfrozen 1\n", &frozen) < 0, "a key that only ends in frozen");

	ok(freezer_parse_stat("1234 (sleep) T 77 1234 1 0", &st, &pp) == 0 && st == 'T' && pp == 77,
	   "stat: state and parent");
	ok(freezer_parse_stat("99 (a) b) c) S 5 99", &st, &pp) == 0 && st == 'S' && pp == 5,
	   "stat: comm holding ') '");
	ok(freezer_parse_stat("99 (cut", &st, &pp) < 0, "stat: truncated");

	ok(freezer_parse_proc_cgroup("12:pids:/a\n7:freezer:/krex/p3\n0::/user.slice\n", "freezer",
	                             out, sizeof(out)) == 0 &&
	           !strcmp(out, "/krex/p3"),
	   "cgroup v1 freezer path");
	ok(freezer_parse_proc_cgroup("4:cpu,cpuacct:/x\n", "cpu", out, sizeof(out)) == 0 &&
	           !strcmp(out, "/x"),
	   "v1 controller in a comma list");
	ok(freezer_parse_proc_cgroup("4:cpuacct:/x\n", "cpu", out, sizeof(out)) < 0,
	   "a controller name's prefix does not match");
	ok(freezer_parse_proc_cgroup("12:pids:/a\n0::/krex/p1\n", NULL, out, sizeof(out)) == 0 &&
	           !strcmp(out, "/krex/p1"),
	   "cgroup v2 path");
	ok(freezer_parse_proc_cgroup("1:name=systemd:/\n", NULL, out, sizeof(out)) < 0,
	   "no v2 line");

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
	return tap_done();
}
