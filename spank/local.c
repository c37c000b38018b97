/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * local.c - srun (local context), sbatch and salloc (allocator context).
 *
 * Nothing runs here but checks: the option's words were checked by its
 * callback; KREX_SHARED, the default, is checked here so that a typo in it
 * fails before submission too.
 */
#include "config.h"

#include <stdlib.h>

#include "defs.h"
#include "krex_spank.h"

int local_init_post_opt(spank_t sp, const struct spank_args *a)
{
	struct shared_opts o;
	const char *val;
	char err[160];

	(void)sp;
	(void)a;
	if (option_given())
		return 0;
	val = option_env_value(getenv(KREX_ENV_SHARED));
	if (!val)
		return 0;
	if (option_parse(val, &o, err, sizeof(err)) < 0) {
		slurm_error("krex: %s=%s: %s", KREX_ENV_SHARED, val, err);
		return -1;
	}
	return 0;
}
