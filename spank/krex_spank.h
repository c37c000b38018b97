/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * krex_spank.h - what the parts of spank_krex.so share.
 *
 * The plugin is split by the process it runs in (as pyxis is):
 *	spank_krex.c	dispatch: the slurm_spank_* entry points
 *	args.c		plugstack.conf arguments
 *	option.c	--krex-shared[=OPTS] and KREX_SHARED
 *	local.c		srun, sbatch, salloc (local and allocator contexts)
 *	slurmd.c	slurmd: start and stop this node's krexd
 *	stepd.c		slurmstepd and the tasks it starts (remote context)
 *	client.c	the few krexd requests the plugin makes
 *	gpus.c		a step's GPUs as node-wide names
 */
#ifndef KREX_SPANK_H
#define KREX_SPANK_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <slurm/spank.h>

#include "conf_keys.h"
#include "defs.h"
#include "proto.h"

#define SPANK_PATH_LEN 512
#define SPANK_PASSED_LEN 160 /* the largest plugin column of conf_keys.def */

/* Set by the slurmd-context part in slurmd's own environment, which every
 * slurmstepd inherits: the node name as slurmd knows it.  Why: in slurmstepd
 * no SPANK item names the node, and SLURMD_NODENAME enters the task's
 * environment only after task_init_privileged. */
#define SPANK_ENV_NODE "KREX_SLURMD_NODENAME"

/* plugstack.conf arguments (doc/admin.md "plugstack arguments"). */
struct spank_args {
	char run_dir[SPANK_PATH_LEN]; /* krexd's run directory; %n = node name */
	char socket[SPANK_PATH_LEN];  /* krexd's socket; "" = run_dir/krexd.sock */
	int external;                 /* coordinator=external: never spawn or stop krexd */
	int summary;                  /* summary=yes: one line per step into its output */
	char krexd[SPANK_PATH_LEN];   /* krexd binary */
	char gate[SPANK_PATH_LEN];    /* libkrexgate.so preloaded into tasks */
	char gres[64];                /* the gres that means "a share of a GPU" */
	/* The krexd.conf keys passed to krexd as -o key=value when set (spawn
	 * mode): those with a plugin column in common/conf_keys.def, by row;
	 * %n = node name. */
	char passed[CONF_KEYS_N][SPANK_PASSED_LEN];
};

/* Parse plugstack.conf's arguments into *a (defaults first).  Returns 0, or
 * -1 after slurm_error() naming the bad argument. */
int args_parse(struct spank_args *a, int ac, char **av);

/* Expand %n in fmt with node into out.  Returns 0 or -1 (too long). */
int args_expand(char *out, size_t len, const char *fmt, const char *node);

/* Fill run dir and socket for node.  Returns 0 or -1 (too long). */
int args_paths(const struct spank_args *a, const char *node, char *run_dir, char *sock, size_t len);

/* ---- --krex-shared ------------------------------------------------------ */

/* What a --krex-shared step asks for (doc: spank_krex(8) OPTIONS). */
struct shared_opts {
	int on;         /* the step takes part */
	int gate;       /* preload the gate (default yes) */
	char label[64]; /* label in krex status; "" = job.step */
};

/* Register --krex-shared for every context.  Returns 0 or -1. */
int option_register(spank_t sp);

/*
 * Parse OPTS (a comma-separated list) into *o.  NULL or "" is the default.
 * Returns 0, or -1 with the bad word in err.
 */
int option_parse(const char *val, struct shared_opts *o, char *err, size_t errlen);

/* The option's value if given on the command line or #SBATCH, else NULL. */
const char *option_value(void);

/* 1 if the option was given (with or without a value). */
int option_given(void);

/* KREX_SHARED's value as an OPTS string: NULL when it means "not shared". */
const char *option_env_value(const char *env);

/* ---- contexts --------------------------------------------------------- */

int local_init_post_opt(spank_t sp, const struct spank_args *a);

int slurmd_init(spank_t sp, const struct spank_args *a);
int slurmd_exit(spank_t sp, const struct spank_args *a);

int stepd_init_post_opt(spank_t sp, const struct spank_args *a);
int stepd_task_init_privileged(spank_t sp, const struct spank_args *a);
int stepd_task_init(spank_t sp, const struct spank_args *a);
int stepd_task_post_fork(spank_t sp, const struct spank_args *a);
int stepd_task_exit(spank_t sp, const struct spank_args *a);
int stepd_exit(spank_t sp, const struct spank_args *a);

/* ---- krexd requests ----------------------------------------------------- */

/*
 * Send req (of type) to krexd at sock and wait for its reply (common's
 * proto_call), connected as root but handled by krexd while the effective
 * uid is as_uid (0: unchanged), so that the participant belongs to the job's
 * user (client.c says why).  Returns 0 with the reply in *rep and its type in
 * *rtype, or -1 with errno and a message in err ("No such file or
 * directory", "REGISTER: Connection reset by peer").
 */
int client_request_as(const char *sock, uid_t as_uid, uint16_t type, const union proto_body *req,
                      uint16_t *rtype, union proto_body *rep, char *err, size_t errlen);

/* Ask whether a krexd answers at sock (connect only).  Returns 1 or 0. */
int client_alive(const char *sock);

/* ---- GPUs --------------------------------------------------------------- */

/*
 * Node-wide GPU names of a step from its environment (SLURM_STEP_GPUS,
 * SLURM_JOB_GPUS, CUDA_VISIBLE_DEVICES, ROCR_VISIBLE_DEVICES, first found).
 * Returns the count (0: no GPU) or -1 if the list is malformed.
 */
int gpus_from_step(spank_t sp, struct proto_gpus *g);

/* Join g's names with commas into out. */
void gpus_join(const struct proto_gpus *g, char *out, size_t len);

#endif /* KREX_SPANK_H */
