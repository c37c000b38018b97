/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * forker - fork safety of the gate: forks before touching the GPU, then
 * the child opens the (mock) driver and launches; it writes FILE.ok when
 * its launches returned.  The parent waits for it.
 *
 *	forker FILE
 */
#include "config.h"

#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "wl_cuda.h"

int main(int argc, char **argv)
{
	struct wl_kernel k;
	char path[4096];
	pid_t pid;
	int st, i;
	FILE *f;

	if (argc != 2 || snprintf(path, sizeof(path), "%s.ok", argv[1]) >= (int)sizeof(path))
		return 2;
#if defined(__SANITIZE_ADDRESS__)
	/* GCC 12's ASan allocator is not fork-safe: a child forked while the
	 * gate's thread allocates waits for the allocator's lock forever (seen:
	 * the child stuck in malloc inside dlopen).  Let that thread settle. */
	usleep(200 * 1000);
#endif
	pid = fork();
	if (pid < 0)
		return 1;
	if (pid == 0) {
		wl_open(&k);
		for (i = 0; i < 5; i++)
			wl_launch(&k, 1000);
		wl_check(k.cu.cuCtxSynchronize(), "cuCtxSynchronize");
		f = fopen(path, "w");
		if (f)
			fclose(f);
		_exit(0);
	}
	if (waitpid(pid, &st, 0) != pid)
		return 1;
	sleep(5); /* stay a participant while the test looks */
	return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
}
