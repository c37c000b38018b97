#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# An sbatch job that shares a GPU with other jobs and times its kernels in
# quiet regions.  Submit with:  sbatch examples/region-job.sh
#SBATCH --job-name=krex-region
#SBATCH --gres=shard:1
#SBATCH --krex-shared
#SBATCH --time=00:10:00

# Outside regions this job shares the GPU like any other.
./warmup

# In a region the other --krex-shared jobs on this GPU are drained and
# frozen; the certificate (JSON) says how quiet it really was.
krex region --json --cert "region-$SLURM_JOB_ID.json" -- ./bench --iterations 100

# Or from inside a program: see region_example.c (krex_region_begin/end).
srun --krex-shared ./region_example
