/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fakegate - TEST DOUBLE standing in for krexd against fake_region.c.
 *
 *	fakegate FILE init [CAP [US]]  create the page (gate open, alive), queue cap
 *	                               and queue time handed to joiners
 *	fakegate FILE close            close the gate (generation++)
 *	fakegate FILE open             open it (generation++)
 *	fakegate FILE wait-acks N MS   wait until N acks in total; exit 1 on timeout
 *	fakegate FILE get FIELD        print joins|acks|waits|drain_us|ack_status
 *	fakegate FILE dead             mark "krexd" gone (gates fail open)
 *	fakegate kernels               print the mock GPU's kernel count
 *	fakegate maxq [reset]          print (or zero) the most kernels one process of
 *	                               the mock GPU had queued
 *	fakegate holder                print the pid holding the mock GPU's device lock
 *	                               (0: free)
 */
#include "config.h"

#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "fake_region.h"

#define A(field) ((_Atomic uint32_t *)&p->field)

static void wake(_Atomic uint32_t *w)
{
	syscall(SYS_futex, (uint32_t *)w, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

static int kernels(int what)
{
	/* The mock's shared page: struct mock_shm in test/mock/mock_gpu.c. */
	struct {
		uint32_t lock, seq, last, waiters;
		uint64_t kernels;
		uint32_t maxq, pad;
	} * m;
	const char *name = getenv("KREX_MOCK_GPU");
	int fd;

	if (!name)
		return 1;
	fd = shm_open(name, what == 2 ? O_RDWR : O_RDONLY, 0);
	if (fd < 0) {
		printf("0\n");
		return 0;
	}
	m = mmap(NULL, sizeof(*m), what == 2 ? PROT_READ | PROT_WRITE : PROT_READ, MAP_SHARED, fd,
	         0);
	close(fd);
	if (m == MAP_FAILED)
		return 1;
	if (what == 2)
		atomic_store((_Atomic uint32_t *)&m->maxq, 0);
	else
		printf("%llu\n", what == 3 ? (unsigned long long)m->lock
		                 : what    ? (unsigned long long)m->maxq
		                           : (unsigned long long)m->kernels);
	return 0;
}

int main(int argc, char **argv)
{
	struct fake_page *p, init;
	const char *cmd;
	int fd;

	if (argc == 2 && strcmp(argv[1], "kernels") == 0)
		return kernels(0);
	if (argc == 2 && strcmp(argv[1], "holder") == 0)
		return kernels(3);
	if (argc >= 2 && strcmp(argv[1], "maxq") == 0)
		return kernels(argc > 2 && strcmp(argv[2], "reset") == 0 ? 2 : 1);
	if (argc < 3)
		return 2;
	cmd = argv[2];
	if (strcmp(cmd, "init") == 0) {
		memset(&init, 0, sizeof(init));
		init.alive = 1;
		init.cap = argc > 3 ? (uint32_t)atoi(argv[3]) : 0;
		init.queue_us = argc > 4 ? (uint32_t)atoi(argv[4]) : 0;
		fd = open(argv[1], O_RDWR | O_CREAT | O_TRUNC, 0600);
		if (fd < 0 || write(fd, &init, sizeof(init)) != sizeof(init))
			return 1;
		close(fd);
		return 0;
	}
	fd = open(argv[1], O_RDWR);
	if (fd < 0)
		return 1;
	p = mmap(NULL, sizeof(*p), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (p == MAP_FAILED)
		return 1;
	if (strcmp(cmd, "close") == 0 || strcmp(cmd, "open") == 0) {
		atomic_store(A(closed), cmd[0] == 'c');
		atomic_fetch_add(A(generation), 1);
		wake(A(closed));
		wake(A(generation));
	} else if (strcmp(cmd, "dead") == 0) {
		atomic_store(A(alive), 0);
		wake(A(closed));
	} else if (strcmp(cmd, "wait-acks") == 0 && argc == 5) {
		uint32_t want = (uint32_t)atoi(argv[3]);
		long ms = atol(argv[4]);
		struct timespec ts = {0, 10 * 1000 * 1000};

		while (atomic_load(A(acks)) < want && ms > 0) {
			nanosleep(&ts, NULL);
			ms -= 10;
		}
		return atomic_load(A(acks)) >= want ? 0 : 1;
	} else if (strcmp(cmd, "get") == 0 && argc == 4) {
		const char *f = argv[3];

		printf("%llu\n", (unsigned long long)(strcmp(f, "joins") == 0        ? p->joins
		                                      : strcmp(f, "acks") == 0       ? p->acks
		                                      : strcmp(f, "waits") == 0      ? p->waits
		                                      : strcmp(f, "drain_us") == 0   ? p->drain_us
		                                      : strcmp(f, "ack_status") == 0 ? p->ack_status
		                                                                     : 0));
	} else {
		return 2;
	}
	return 0;
}
