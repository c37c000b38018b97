/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * region_example.c - time work in a KREX region and print the certificate.
 *
 *	cc region_example.c $(pkg-config --cflags --libs krexregion) -o region_example
 *	srun --krex-shared --gres=shard:1 ./region_example
 *	./region_example --no-region	(the same work outside a region, to compare)
 *
 * Without krexd (not a --krex-shared job) it runs unprotected and says so.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <krex/region.h>

static double now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

/* Stand-in for the GPU work being timed. */
static void work(void)
{
	volatile unsigned long x = 0;
	unsigned long i;

	for (i = 0; i < 50000000UL; i++)
		x += i;
}

int main(int argc, char **argv)
{
	struct krex_region_opts o = KREX_REGION_OPTS_INIT;
	struct krex_certificate c;
	char json[2048];
	double t0, t1;
	int rc;

	if (argc > 1 && !strcmp(argv[1], "--no-region")) {
		t0 = now_ms();
		work();
		printf("work: %.2f ms\n", now_ms() - t0);
		return 0;
	}
	o.flags = KREX_REGION_UNPROTECTED_OK;
	rc = krex_region_begin(&o);
	if (rc != KREX_OK) {
		fprintf(stderr, "region: %s\n", krex_strerror(rc));
		return 1;
	}
	t0 = now_ms();
	work();
	t1 = now_ms();
	rc = krex_region_end(&c);
	if (rc != KREX_OK) {
		fprintf(stderr, "region end: %s\n", krex_strerror(rc));
		return 1;
	}
	krex_certificate_json(&c, json, sizeof(json));
	printf("work: %.2f ms, outcome %s\n%s\n", t1 - t0, krex_outcome_name(c.outcome), json);
	return 0;
}
