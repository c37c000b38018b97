/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * option.c - --krex-shared[=OPTS] for srun, sbatch and salloc.
 *
 * OPTS is a comma-separated list of:
 *	off		do not take part (overrides KREX_SHARED)
 *	gate=yes|no	preload the GPU gate into the tasks (default yes)
 *	label=NAME	the name krex status shows (letters, digits, . _ -)
 * KREX_SHARED in the environment is the default: unset, "", 0, no or off mean
 * not shared, 1 or yes mean shared with default OPTS, anything else is OPTS.
 */
#include "config.h"

#include <ctype.h>
#include <string.h>

#include "conf.h"
#include "krex_spank.h"

static int opt_given;
static char opt_value[256];

/*
 * Why idempotent: in the remote context Slurm runs the callback twice for
 * srun steps (once from the SLURM_SPANK_* environment, once from the step
 * options); it only stores the value.  Validation with a message happens
 * here in srun/sbatch/salloc, so a bad word fails before submission.
 */
static int option_cb(int val, const char *optarg, int remote)
{
	struct shared_opts o;
	char err[160];

	/* An srun inside an sbatch --krex-shared job gets the batch's option
	 * from the environment Slurm exported, as the text "(null)" when it had
	 * no value: that is no word, it is the default. */
	if (optarg && !strcmp(optarg, "(null)"))
		optarg = NULL;
	if (xstrcpy(opt_value, sizeof(opt_value), optarg ? optarg : "") < 0) {
		slurm_error("krex: --krex-shared: argument too long");
		return -1;
	}
	opt_given = 1;
	if (remote)
		return 0;
	if (option_parse(opt_value, &o, err, sizeof(err)) < 0) {
		slurm_error("krex: --krex-shared: %s", err);
		return -1;
	}
	return 0;
}

static struct spank_option shared_option = {
        "krex-shared",
        "[opts]",
        "Share a GPU under KREX: quiet critical regions (opts: off, gate=yes|no, label=NAME).",
        2, /* optional argument */
        0,
        option_cb,
};

int option_register(spank_t sp)
{
	if (spank_option_register(sp, &shared_option) != ESPANK_SUCCESS) {
		slurm_error("krex: cannot register --krex-shared");
		return -1;
	}
	return 0;
}

int option_given(void)
{
	return opt_given;
}

const char *option_value(void)
{
	return opt_given ? opt_value : NULL;
}

const char *option_env_value(const char *env)
{
	if (!env || !*env || !strcmp(env, "0") || !strcasecmp(env, "no") || !strcasecmp(env, "off"))
		return NULL;
	if (!strcmp(env, "1") || !strcasecmp(env, "yes"))
		return "";
	return env;
}

static int label_ok(const char *s)
{
	if (!*s)
		return 0;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && !strchr("._-", *s))
			return 0;
	return 1;
}

/* One OPTS word into *o; -1 with err naming it. */
static int option_word(const char *w, struct shared_opts *o, char *err, size_t errlen)
{
	const char *eq = strchr(w, '=');
	int b;

	if (!strcmp(w, "off") || !strcmp(w, "no")) {
		o->on = 0;
		return 0;
	}
	if (eq && !strncmp(w, "gate=", 5)) {
		if (conf_parse_bool(eq + 1, &b) < 0) {
			xsnprintf(err, errlen, "bad value in '%s' (gate=yes or gate=no)", w);
			return -1;
		}
		o->gate = b;
		return 0;
	}
	if (eq && !strncmp(w, "label=", 6)) {
		if (!label_ok(eq + 1) || xstrcpy(o->label, sizeof(o->label), eq + 1) < 0) {
			xsnprintf(err, errlen,
			          "bad label in '%s' (up to 63 letters, digits, '.', '_', '-')", w);
			return -1;
		}
		return 0;
	}
	xsnprintf(err, errlen, "unknown option '%s' (known: off, gate=yes|no, label=NAME)", w);
	return -1;
}

int option_parse(const char *val, struct shared_opts *o, char *err, size_t errlen)
{
	char words[8][80];
	int i, n;

	memset(o, 0, sizeof(*o));
	o->on = 1;
	o->gate = 1;
	if (!val || !*val)
		return 0;
	n = conf_split_list(val, &words[0][0], sizeof(words[0]), 8);
	if (n < 0) {
		xsnprintf(err, errlen, "too many or too long options in '%s'", val);
		return -1;
	}
	for (i = 0; i < n; i++)
		if (option_word(words[i], o, err, errlen) < 0)
			return -1;
	return 0;
}
