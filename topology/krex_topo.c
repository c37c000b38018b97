/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * krex-topo - check what krexd will make of a node's shape, offline.
 *
 *	krex-topo [-t SPEC] [-p gpuN_pci=BUSID]...            summary and GPU table
 *	krex-topo [-t SPEC] -c [-a ALLOWED] [-n CORES] GPU... one core choice
 *	krex-topo [-t SPEC] -f CASES                          the table, then one choice per line
 *	krex-topo [-t SPEC] -x FILE                           export the topology as XML
 *
 * Long forms: --topology, --gpu-pci, --choose, --allowed, --cores, --cases,
 * --export-xml.  krex-topo(1).
 *
 * SPEC is what krexd.conf's `topology` takes (default: this node).  A CASES
 * line is "gpus=0,1 allowed=0-7 cores=2" (each key optional, # comments).
 * The output is stable text: test/topology compares it with fixtures.
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf.h"
#include "defs.h"
#include "isolate_backend.h"
#include "topo.h"

#define MAX_OVERRIDES 64
#define LIST_LEN 4096

static void print_gpus(struct krex_topo *topo)
{
	char cpus[LIST_LEN], name[16];
	const char *busid;
	int i, idx, known;

	printf("summary: %s\n", topo_summary(topo));
	for (i = 0; (busid = topo_gpu_busid(topo, i, &idx)); i++) {
		snprintf(name, sizeof(name), "%d", idx);
		if (topo_gpu_cpus(topo, name, cpus, sizeof(cpus), &known) < 0) {
			printf("gpu %d %s: error %s\n", idx, busid, strerror(errno));
			continue;
		}
		printf("gpu %d %s: cpus %s (%s%s)\n", idx, busid, cpus,
		       known ? "" : "locality unknown: ", topo_gpu_note(topo));
	}
	if (i == 0)
		printf("no GPU: every core is local\n");
}

/* One choice; prints "choose ARGS: owner X rest Y (why)". */
static int print_choice(struct krex_topo *topo, const char *allowed, const char *gpulist,
                        unsigned cores)
{
	char gbuf[KREX_MAX_GPUS * 32], owner[LIST_LEN], rest[LIST_LEN], why[1024];
	const char *gpus[KREX_MAX_GPUS];
	int n = 0, rc;

	if (gpulist && *gpulist) {
		n = conf_split_list(gpulist, gbuf, 32, KREX_MAX_GPUS);
		if (n < 0) {
			fprintf(stderr, "krex-topo: bad GPU list '%s'\n", gpulist);
			return -1;
		}
	}
	for (rc = 0; rc < n; rc++)
		gpus[rc] = gbuf + rc * 32;
	rc = topo_choose(topo, allowed, gpus, (unsigned)n, cores, owner, sizeof(owner), rest,
	                 sizeof(rest), why, sizeof(why));
	printf("choose gpus=%s allowed=%s cores=%u: ", gpulist && *gpulist ? gpulist : "-",
	       allowed && *allowed ? allowed : "all", cores);
	if (rc < 0)
		printf("error (%s)\n", why);
	else
		printf("%sowner %s rest %s (%s)\n", rc == TOPO_SKIPPED ? "skipped: " : "", owner,
		       rest, why);
	return rc < 0 ? -1 : 0;
}

/*
 * Run every line of a cases file.  A choice that fails prints its error as
 * its result (fixtures test errors too); returns -1 only if the file is unreadable.
 */
static int run_cases(struct krex_topo *topo, const char *path)
{
	char line[1024], gpus[512], allowed[1024], *tok, *save;
	unsigned long cores;
	FILE *f = fopen(path, "re");

	if (!f) {
		fprintf(stderr, "krex-topo: %s: %s\n", path, strerror(errno));
		return -1;
	}
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "#\n")] = '\0';
		gpus[0] = allowed[0] = '\0';
		cores = 0;
		tok = strtok_r(line, " \t", &save);
		if (!tok)
			continue;
		for (; tok; tok = strtok_r(NULL, " \t", &save)) {
			if (strncmp(tok, "gpus=", 5) == 0)
				snprintf(gpus, sizeof(gpus), "%s", tok + 5);
			else if (strncmp(tok, "allowed=", 8) == 0)
				snprintf(allowed, sizeof(allowed), "%s", tok + 8);
			else if (strncmp(tok, "cores=", 6) == 0)
				cores = strtoul(tok + 6, NULL, 10);
		}
		print_choice(topo, allowed, gpus, (unsigned)cores);
	}
	fclose(f);
	return 0;
}

static void usage(void)
{
	fprintf(stderr,
	        "usage: krex-topo --undo  (isolation undo lines on stdin)\n"
	        "       krex-topo [-t SPEC] [-p gpuN_pci=BUSID]... [-x FILE | -f CASES | -c [-a ALLOWED] [-n CORES] [GPU...]]\n");
	exit(2);
}

/*
 * --undo: apply the isolation undo lines read from stdin (krexd's state file
 * lines "cpuset v..." and "affinity ..."), as krexd's crash recovery does.
 * `krex run`'s watcher runs it when its private krexd died in a region, so
 * that the krex CLI itself needs no hwloc (it also runs in container images).
 * Exit 0 when every line was undone, 1 otherwise.
 */
static int undo_lines(void)
{
	char line[1024];
	unsigned ok = 0, bad = 0;

	while (fgets(line, sizeof(line), stdin)) {
		line[strcspn(line, "\n")] = '\0';
		if (!line[0])
			continue;
		if (isolate_undo_line(line) == 0)
			ok++;
		else {
			fprintf(stderr, "krex-topo: cannot undo '%s': %s\n", line, strerror(errno));
			bad++;
		}
	}
	printf("krex-topo: %u undo line(s) applied, %u failed\n", ok, bad);
	return bad ? 1 : 0;
}

int main(int argc, char **argv)
{
	const char *spec = NULL, *xml = NULL, *cases = NULL, *allowed = NULL;
	const char *ov[MAX_OVERRIDES + 1] = {NULL};
	char err[512], gl[1024] = "";
	unsigned cores = 0;
	int c, nov = 0, choose = 0, rc = 0;
	struct krex_topo *topo;

	static const struct option longopts[] = {{"topology", required_argument, NULL, 't'},
	                                         {"gpu-pci", required_argument, NULL, 'p'},
	                                         {"export-xml", required_argument, NULL, 'x'},
	                                         {"cases", required_argument, NULL, 'f'},
	                                         {"choose", no_argument, NULL, 'c'},
	                                         {"allowed", required_argument, NULL, 'a'},
	                                         {"cores", required_argument, NULL, 'n'},
	                                         {"help", no_argument, NULL, 'h'},
	                                         {"undo", no_argument, NULL, 'u'},
	                                         {NULL, 0, NULL, 0}};

	while ((c = getopt_long(argc, argv, "t:p:x:f:ca:n:hu", longopts, NULL)) != -1) {
		switch (c) {
		case 'u':
			return undo_lines();
		case 't':
			spec = optarg;
			break;
		case 'p':
			if (nov == MAX_OVERRIDES)
				usage();
			ov[nov++] = optarg;
			break;
		case 'x':
			xml = optarg;
			break;
		case 'f':
			cases = optarg;
			break;
		case 'c':
			choose = 1;
			break;
		case 'a':
			allowed = optarg;
			break;
		case 'n':
			cores = (unsigned)strtoul(optarg, NULL, 10);
			break;
		default:
			usage();
		}
	}
	topo = topo_load(spec, ov, err, sizeof(err));
	if (!topo) {
		fprintf(stderr, "krex-topo: %s\n", err);
		return 1;
	}
	if (xml) {
		rc = topo_export_xml(topo, xml) < 0;
		if (rc)
			fprintf(stderr, "krex-topo: export to %s failed\n", xml);
	} else if (choose) {
		for (c = optind; c < argc; c++)
			if (xsnprintf(gl + strlen(gl), sizeof(gl) - strlen(gl), "%s%s",
			              c > optind ? "," : "", argv[c]) < 0)
				usage();
		rc = print_choice(topo, allowed, gl, cores) < 0;
	} else {
		print_gpus(topo);
		if (cases)
			rc = run_cases(topo, cases) < 0;
	}
	topo_free(topo);
	return rc;
}
