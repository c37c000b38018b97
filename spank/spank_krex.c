/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * spank_krex.c - the SPANK entry points of spank_krex.so: parse the
 * plugstack arguments, register --krex-shared, and hand each callback to the
 * part that runs in this process (krex_spank.h lists them).
 *
 * Callbacks, contexts and processes as seen on Slurm 22.05:
 *	init			every context (slurmd: once at its start)
 *	init_post_opt		local, allocator, remote
 *	task_init_privileged	remote, in the task before exec, root
 *	task_init		remote, in the task before exec, the user
 *	task_post_fork		remote, slurmstepd
 *	task_exit, exit		remote, slurmstepd
 *	slurmd_exit		slurmd, at its stop
 */
#include "config.h"

#include "krex_spank.h"

SPANK_PLUGIN(krex, 1);

static struct spank_args args;
static int args_ok;

int slurm_spank_init(spank_t sp, int ac, char **av)
{
	spank_context_t ctx = spank_context();

	args_ok = args_parse(&args, ac, av) == 0;
	if (ctx == S_CTX_SLURMD) {
		/* One line at slurmd's start says which plugin it loaded. */
		slurm_info("krex: spank_krex %s loaded in slurmd (protocol %d)", PACKAGE_VERSION,
		           PROTO_VERSION);
		/* Never fail slurmd: a bad plugstack.conf is logged, no krexd. */
		return args_ok ? slurmd_init(sp, &args) : 0;
	}
	if (ctx == S_CTX_JOB_SCRIPT)
		return 0;
	if (option_register(sp) < 0)
		return -1;
	/* In slurmstepd a bad plugstack.conf fails --krex-shared steps from
	 * task_init (stepd.c); failing here could drain the node. */
	if (ctx == S_CTX_REMOTE)
		return 0;
	return args_ok ? 0 : -1;
}

int slurm_spank_init_post_opt(spank_t sp, int ac, char **av)
{
	switch (spank_context()) {
	case S_CTX_LOCAL:
	case S_CTX_ALLOCATOR:
		return local_init_post_opt(sp, &args);
	case S_CTX_REMOTE:
		return stepd_init_post_opt(sp, args_ok ? &args : NULL);
	default:
		return 0;
	}
}

int slurm_spank_task_init_privileged(spank_t sp, int ac, char **av)
{
	return args_ok ? stepd_task_init_privileged(sp, &args) : 0;
}

int slurm_spank_task_init(spank_t sp, int ac, char **av)
{
	return stepd_task_init(sp, args_ok ? &args : NULL);
}

int slurm_spank_task_post_fork(spank_t sp, int ac, char **av)
{
	return args_ok ? stepd_task_post_fork(sp, &args) : 0;
}

int slurm_spank_task_exit(spank_t sp, int ac, char **av)
{
	return args_ok ? stepd_task_exit(sp, &args) : 0;
}

int slurm_spank_exit(spank_t sp, int ac, char **av)
{
	if (spank_context() != S_CTX_REMOTE || !args_ok)
		return 0;
	return stepd_exit(sp, &args);
}

int slurm_spank_slurmd_exit(spank_t sp, int ac, char **av)
{
	return args_ok ? slurmd_exit(sp, &args) : 0;
}
