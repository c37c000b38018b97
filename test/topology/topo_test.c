/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * topo_test.c - unit tests of the topology module's I/O-free parts: CPU
 * lists, bus ids, GPU overrides, the NVIDIA procfs parser (on a fake tree),
 * topology specs, core choice fallbacks and short buffers.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cpulist.h"
#include "gpu_probe.h"
#include "tap.h"
#include "topo.h"

/* Parse then format: the canonical form of s, or "ERR". */
static const char *roundtrip(const char *s)
{
	static char out[256];
	hwloc_bitmap_t set = hwloc_bitmap_alloc();

	if (cpulist_parse(s, set) < 0 || cpulist_format(set, out, sizeof(out)) < 0)
		snprintf(out, sizeof(out), "ERR");
	hwloc_bitmap_free(set);
	return out;
}

static void test_cpulist(void)
{
	hwloc_bitmap_t set = hwloc_bitmap_alloc();
	char small[4];

	ok(strcmp(roundtrip("0-3,8"), "0-3,8") == 0, "cpulist 0-3,8");
	ok(strcmp(roundtrip("8,0,1,2,3\n"), "0-3,8") == 0, "cpulist unordered, newline");
	ok(strcmp(roundtrip(""), "") == 0, "cpulist empty");
	ok(strcmp(roundtrip("5-5,7-9,10"), "5,7-10") == 0, "cpulist merges ranges");
	ok(strcmp(roundtrip("3-"), "ERR") == 0, "cpulist open range refused");
	ok(strcmp(roundtrip("3-1"), "ERR") == 0, "cpulist reversed range refused");
	ok(strcmp(roundtrip("1,,2"), "ERR") == 0, "cpulist empty item refused");
	ok(strcmp(roundtrip(" 1"), "ERR") == 0, "cpulist space refused");
	ok(strcmp(roundtrip("8192"), "ERR") == 0, "cpulist CPU above the ceiling refused");
	cpulist_parse("0-3,8-11", set);
	ok(cpulist_format(set, small, sizeof(small)) < 0 && errno == ENAMETOOLONG,
	   "cpulist format into a short buffer: ENAMETOOLONG");
	hwloc_bitmap_fill(set);
	ok(cpulist_format(set, small, sizeof(small)) < 0 && errno == EINVAL,
	   "cpulist of an infinite set refused");
	hwloc_bitmap_free(set);
}

static void test_busid(void)
{
	char b[GPU_BUSID_LEN];

	ok(gpu_busid_normalize("0000:3B:00.0", b) == 0 && strcmp(b, "0000:3b:00.0") == 0,
	   "bus id upper case");
	ok(gpu_busid_normalize("00000000:3B:00.0", b) == 0 && strcmp(b, "0000:3b:00.0") == 0,
	   "bus id with NVML's 8-digit domain");
	ok(gpu_busid_normalize("3b:00.0", b) == 0 && strcmp(b, "0000:3b:00.0") == 0,
	   "bus id without a domain");
	ok(gpu_busid_normalize("3b:00", b) < 0 && gpu_busid_normalize("cuda0", b) < 0 &&
	           gpu_busid_normalize("0000:3b:20.0", b) < 0,
	   "not bus ids refused");
}

static void test_overrides(void)
{
	struct gpu_entry tab[4] = {{0, "0000:01:00.0", ""}};
	const char *good[] = {"gpu1_pci=0000:41:00.0", "0=81:00.0", NULL};
	const char *bad[] = {"gpu1=zz", NULL};
	char err[128];
	int n = gpu_apply_overrides(good, tab, 1, 4, err, sizeof(err));

	ok(n == 2 && tab[0].index == 0 && strcmp(tab[0].busid, "0000:81:00.0") == 0 &&
	           tab[1].index == 1 && strcmp(tab[1].busid, "0000:41:00.0") == 0,
	   "overrides replace GPU 0 and add GPU 1");
	ok(gpu_apply_overrides(bad, tab, n, 4, err, sizeof(err)) < 0 && strstr(err, "gpu1=zz"),
	   "a bad override is refused by name (%s)", err);
}

/* A fake /proc/driver/nvidia/gpus with two GPUs and a stray entry. */
static void test_procfs(void)
{
	char dir[] = "/tmp/krex-procfs-XXXXXX", path[256];
	const char *bus[] = {"0000:18:00.0", "0000:2a:00.0"};
	struct gpu_entry tab[4];
	FILE *f;
	int i, n;

	if (!mkdtemp(dir)) {
		ok(0, "mkdtemp");
		return;
	}
	for (i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, bus[i]);
		mkdir(path, 0755);
		snprintf(path, sizeof(path), "%s/%s/information", dir, bus[i]);
		f = fopen(path, "w");
		fprintf(f,
		        "Model: \t\t NVIDIA H200\nIRQ:   \t\t 42\nGPU UUID: \t GPU-%d\n"
		        "Device Minor: \t %d\nBus Location: \t %s\n",
		        i, 1 - i, bus[i]);
		fclose(f);
	}
	snprintf(path, sizeof(path), "%s/stray", dir);
	mkdir(path, 0755);
	n = gpu_probe_procfs(dir, tab, 4);
	if (n == 2 && strcmp(tab[0].busid, bus[1]) == 0) { /* readdir order: sort */
		struct gpu_entry t = tab[0];
		tab[0] = tab[1];
		tab[1] = t;
	}
	ok(n == 2 && strcmp(tab[0].busid, bus[0]) == 0 && tab[0].index == 1 &&
	           strcmp(tab[0].uuid, "GPU-0") == 0 && tab[1].index == 0,
	   "procfs: index from Device Minor, UUID, stray entry skipped (%d)", n);
	for (i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), "%s/%s/information", dir, bus[i]);
		unlink(path);
		snprintf(path, sizeof(path), "%s/%s", dir, bus[i]);
		rmdir(path);
	}
	snprintf(path, sizeof(path), "%s/stray", dir);
	rmdir(path);
	rmdir(dir);
	ok(gpu_probe_procfs("/nonexistent", tab, 4) == 0, "procfs: no driver, no GPU");
}

static void test_topo(void)
{
	const char *ov[] = {"gpu0_pci=0000:3b:00.0", NULL};
	const char *gpus[] = {"0"};
	char err[256], o[64], r[64], why[512], tiny[2];
	struct krex_topo *t;
	int known = -1, rc;

	ok(topo_load("bogus-spec", NULL, err, sizeof(err)) == NULL && strstr(err, "bogus-spec"),
	   "an unknown topology spec is refused (%s)", err);
	ok(topo_load("/nonexistent.xml", NULL, err, sizeof(err)) == NULL,
	   "a missing XML file is refused (%s)", err);
	t = topo_load("synthetic:pack:2 core:4 pu:2", ov, err, sizeof(err));
	if (!ok(t != NULL, "synthetic topology with a GPU override loads (%s)", t ? "" : err))
		return;
	ok(topo_gpu_count(t) == 1 && strcmp(topo_gpu_busid(t, 0, NULL), "0000:3b:00.0") == 0,
	   "the override names GPU 0");
	rc = topo_gpu_cpus(t, "0", o, sizeof(o), &known);
	ok(rc == 0 && known == 0 && strcmp(o, "0-15") == 0 && strstr(topo_gpu_note(t), "not in"),
	   "a GPU outside the topology: every CPU local, and said (%s)", topo_gpu_note(t));
	ok(topo_gpu_cpus(t, "0", tiny, sizeof(tiny), &known) < 0 && errno == ENAMETOOLONG,
	   "topo_gpu_cpus into a short buffer: ENAMETOOLONG");
	rc = topo_choose(t, "0-7", gpus, 1, 0, o, sizeof(o), r, sizeof(r), why, sizeof(why));
	ok(rc == TOPO_CHOSEN && strcmp(o, "0-7") == 0 && strcmp(r, "8-15") == 0,
	   "default: the owner keeps its allowed cores (%s | %s | %s)", o, r, why);
	rc = topo_choose(t, "0-15", gpus, 1, 0, o, sizeof(o), r, sizeof(r), why, sizeof(why));
	ok(rc == TOPO_CHOSEN && strcmp(o, "0-13") == 0 && strcmp(r, "14-15") == 0 &&
	           strstr(why, "gives back"),
	   "an owner allowed everything leaves one core (%s | %s)", o, r);
	rc = topo_choose(t, "1", NULL, 0, 1, o, sizeof(o), r, sizeof(r), why, sizeof(why));
	ok(rc == TOPO_CHOSEN && strcmp(o, "1") == 0 && strcmp(r, "2-15") == 0,
	   "one thread allowed: the whole core leaves the rest (%s | %s)", o, r);
	rc = topo_choose(t, "0-7", gpus, 1, 0, tiny, sizeof(tiny), r, sizeof(r), why, sizeof(why));
	ok(rc < 0 && errno == ENAMETOOLONG, "topo_choose into a short buffer fails");
	topo_free(t);
	t = topo_load("synthetic:pack:1 pu:1", NULL, err, sizeof(err));
	rc = t ? topo_choose(t, NULL, NULL, 0, 0, o, sizeof(o), r, sizeof(r), why, sizeof(why))
	       : -1;
	ok(rc == TOPO_SKIPPED && strcmp(o, "0") == 0 && strcmp(r, "0") == 0 &&
	           strstr(why, "skipped"),
	   "one PU, no core objects: isolation skipped (%s)", why);
	topo_free(t);
}

int main(void)
{
	plan(30);
	test_cpulist();
	test_busid();
	test_overrides();
	test_procfs();
	test_topo();
	return tap_done();
}
