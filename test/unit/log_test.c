/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * log_test.c - the logger's own flood limit: a loop that logs on every turn
 * (issue: 843,073 lines in 12 s from an accept() that failed with EMFILE)
 * gets a bounded number of lines and a count of what was suppressed.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "tap.h"

int main(void)
{
	char path[] = "/tmp/krex-log-test-XXXXXX", line[512];
	int fd = mkstemp(path), saved = dup(2), i, lines = 0, suppressed = 0;
	FILE *f;

	plan(3);
	log_init("log_test", LOG_LVL_DEBUG, LOG_TO_STDERR);
	dup2(fd, 2);
	for (i = 0; i < 100000; i++)
		log_warn("accept: Too many open files (%d)", i);
	sleep(1);
	log_warn("after the flood");
	fflush(stderr);
	dup2(saved, 2);
	f = fopen(path, "r");
	while (f && fgets(line, sizeof(line), f)) {
		lines++;
		if (strstr(line, "suppressed"))
			suppressed = 1;
	}
	if (f)
		fclose(f);
	unlink(path);
	printf("# %d lines for 100001 messages\n", lines);
	ok(lines > 10, "messages are logged");
	ok(lines < 2500, "a flood is cut to under 2500 lines (1000 a second)");
	ok(suppressed, "the cut is reported with a count");
	return tap_done();
}
