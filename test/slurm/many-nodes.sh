#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Many nodes on one host: KS_NODES slurmd (default 4), each with its own fake
# GPU, mock GPU driver and krexd started by the SPANK plugin; KS_JOBS
# --krex-shared batch jobs (default 8), spread evenly, each running a mock-GPU
# hog and taking KS_REGIONS regions (default 3); multi-node steps
# (srun -N KS_NODES --krex-shared) whose tasks take regions too.
# KS_PROCTRACK, KS_HOG, KS_KERNEL_US: below; KS_GATE_LOG=info: the gate's log
# in each job's output file (with KC_KEEP=1 to keep them).  Every region's
# certificate is collected and checked; a step holding a region on
# every node is cancelled mid-region, and one frozen sibling job per node is
# cancelled while frozen; at the end nothing may be left: no frozen cgroup, no
# closed gate slot, no state line (freeze, pin, gate), no participant, no job
# process, and every krexd stops with its slurmd.
#
# Also a benchmark: it prints (as "# " lines, and into KS_OUT/figures.txt when
# KS_OUT names a folder) what the nodes cost: slurmd and krexd start, memory
# (RSS from /proc) and CPU time, the time from srun to the first region, and
# the certificates' phases.  test/perf/slurm-scale.sh runs it with 16 nodes
# and 64 jobs; doc/scale.md has the figures.
. "$top_srcdir/test/lib.sh"
. "$top_srcdir/test/slurm/cluster.sh"
. "$top_srcdir/test/slurm/checks.sh"

NODES=${KS_NODES:-4}
JOBS=${KS_JOBS:-$((2 * NODES))}
REGIONS=${KS_REGIONS:-3}
# The hogs: KS_KERNEL_US (default 5000) kernels, each waited for
# (KS_HOG=sync, the default) or queued (KS_HOG=async).  Why sync: with 4
# async hogs a mock GPU the gate's bounded queue gives up its 50 ms waits on
# this loaded 2-core machine and drains time out (doc/scale.md "Jobs per GPU";
# KS_HOG=async shows it).
KUS=${KS_KERNEL_US:-5000}
case ${KS_HOG:-sync} in
sync) HOGOPT=--sync ;;
async) HOGOPT= ;;
*) echo "many-nodes.sh: KS_HOG must be sync or async, not '$KS_HOG'" >&2; exit 2 ;;
esac
case "$NODES.$JOBS.$REGIONS.$KUS" in
*[!0-9.]* | .* | *..* | *.) echo "many-nodes.sh: KS_NODES, KS_JOBS, KS_REGIONS, KS_KERNEL_US must be numbers" >&2; exit 2 ;;
esac
[ "$JOBS" -ge "$NODES" ] && [ $((JOBS % NODES)) = 0 ] && [ $((JOBS / NODES)) -le 6 ] || {
	echo "many-nodes.sh: KS_JOBS must be KS_NODES x 1..6 (8 shards a node: jobs, a step, a holder)" >&2
	exit 2
}
PER=$((JOBS / NODES))
# KS_PROCTRACK: linuxproc (default: krexd makes a cgroup a participant) or
# cgroup (krexd freezes Slurm's step cgroups)
PROCTRACK=${KS_PROCTRACK:-linuxproc}
case $PROCTRACK in
linuxproc | cgroup) ;;
*) echo "many-nodes.sh: KS_PROCTRACK must be linuxproc or cgroup, not '$PROCTRACK'" >&2; exit 2 ;;
esac
MOCKLIB=$top_builddir/test/mock/.libs
WL=$top_builddir/test/workloads
cluster_check || skip_all "$CLUSTER_WHY"
why=$(regions_why)
[ -z "$why" ] || skip_all "$why"
[ -r "$MOCKLIB/libcuda.so.1" ] && [ -x "$WL/krex-hog" ] || skip_all "mock driver or krex-hog not built"
command -v python3 >/dev/null || skip_all "python3 not installed (scripts/install-deps.sh)"

T_START=$SECONDS
SHM=/krex-scale-$$
FIG=""
# fig LINE: a figure, printed and kept for KS_OUT/figures.txt
fig() {
	diag "$*"
	FIG="$FIG$*
"
}
ms_since() { echo $((($(date +%s%N) - $1) / 1000000)); }

scale_cleanup() {
	rm -f "$KC_DIR/work/sampling"
	[ -z "${SAMPLER:-}" ] || kill "$SAMPLER" 2>/dev/null
	cluster_stop
	rm -f /dev/shm$SHM-*
}
t0=$(date +%s%N)
cluster_start "$PROCTRACK" "$NODES" || { rm -f /dev/shm$SHM-*; skip_all "$CLUSTER_WHY"; }
trap scale_cleanup EXIT
T_UP=$(ms_since "$t0")
ALL=$(echo $KC_NODES | tr ' ' ,)
mkdir -p "$KC_DIR/work/cert"
plan 15

# ---- /proc readers (bash builtins only: the sampler runs every second) ----

# status_kb PID KEY: VmRSS / VmHWM ... in kB
status_kb() {
	local k v _
	while read -r k v _; do
		[ "$k" = "$2:" ] && { echo "$v"; return; }
	done 2>/dev/null <"/proc/$1/status"
	echo 0
}
nfds() {
	local f=(/proc/"$1"/fd/*)
	[ -e "${f[0]}" ] && echo ${#f[@]} || echo 0
}
# stat_field PID N: field N of /proc/PID/stat (counted as proc(5) does)
stat_field() {
	local s a
	read -r s <"/proc/$1/stat" 2>/dev/null || { echo 0; return; }
	a=(${s##*) })
	echo "${a[$2 - 3]}"
}
cpu_ms() { echo $((($(stat_field "$1" 14) + $(stat_field "$1" 15)) * 1000 / $(getconf CLK_TCK))); }
krexd_pid() { cat "${KC_RUN}$1/krexd.pid" 2>/dev/null; }
# The plugin's share of slurmd's memory: the Rss of spank_krex.so's mappings.
plugin_rss_kb() {
	awk -v so=spank_krex.so '/^[0-9a-f]+-/ { m = index($0, so) > 0 } m && /^Rss:/ { s += $2 } END { print s + 0 }' \
		"/proc/$1/smaps" 2>/dev/null
}

# stats LABEL VALUES...: min / median / max
stats() {
	local label=$1
	shift
	printf '%s\n' "$@" | sort -n | awk -v l="$label" '{ v[NR] = $1 } END {
		if (NR) printf "%s: min %s, median %s, max %s (n=%d)\n", l, v[1], v[int((NR + 1) / 2)], v[NR], NR }'
}

# ---- 1. every node's krexd, and what starting it cost ----

all_krexd() {
	local n p
	for n in $KC_NODES; do
		wait_for 10 test -S "${KC_RUN}$n/krexd.sock" || { diag "$n: no krexd socket"; return 1; }
		p=$(krexd_pid "$n") && kill -0 "$p" 2>/dev/null || { diag "$n: krexd not running"; return 1; }
	done
	[ "$(for n in $KC_NODES; do krexd_pid "$n"; done | sort -u | wc -l)" = "$NODES" ]
}
ok "$NODES slurmd up, each started its own krexd" all_krexd

# Start: krexd's process start and its socket's creation, after its slurmd's
# start (ticks of /proc's starttime: 10 ms).
start_figures() {
	local n sp kp hz boot up sd_t kd_t sock_t spawn=() ready=() srss=() krss=() plug=() kfd=()
	hz=$(getconf CLK_TCK)
	# the boot time in epoch ms (btime is whole seconds: too coarse)
	read -r up _ </proc/uptime
	boot=$(($(date +%s%3N) - ${up/./} * 10))
	set -- $KC_SLURMD_PIDS
	for n in $KC_NODES; do
		sp=$1
		shift
		kp=$(krexd_pid "$n")
		sd_t=$(($(stat_field "$sp" 22) * 1000 / hz))
		kd_t=$(($(stat_field "$kp" 22) * 1000 / hz))
		sock_t=$(($(stat -c %.3Y "${KC_RUN}$n/krexd.sock" | tr -d .) - boot))
		spawn+=($((kd_t - sd_t)))
		ready+=($((sock_t - sd_t)))
		srss+=($(status_kb "$sp" VmRSS))
		plug+=($(plugin_rss_kb "$sp"))
		krss+=($(status_kb "$kp" VmRSS))
		kfd+=($(nfds "$kp"))
	done
	fig "cluster: $NODES nodes idle in sinfo $T_UP ms after cluster_start began"
	fig "$(stats 'krexd process started after its slurmd (ms)' "${spawn[@]}")"
	fig "$(stats 'krexd socket ready after its slurmd started (ms)' "${ready[@]}")"
	fig "$(stats 'slurmd RSS idle (kB)' "${srss[@]}")"
	fig "$(stats 'spank_krex.so mapped in slurmd, RSS (kB)' "${plug[@]}")"
	fig "$(stats 'krexd RSS idle (kB)' "${krss[@]}")"
	fig "$(stats 'krexd fds idle' "${kfd[@]}")"
}
start_figures

# The sampler: every second, each krexd's RSS and fds, each slurmd's RSS.
sampler() {
	local n p
	while [ -e "$KC_DIR/work/sampling" ]; do
		for n in $KC_NODES; do
			p=$(krexd_pid "$n") || continue
			echo "krexd $n $(status_kb "$p" VmRSS) $(nfds "$p")"
		done
		for p in $KC_SLURMD_PIDS; do echo "slurmd $p $(status_kb "$p" VmRSS)"; done
		sleep 1
	done >>"$KC_DIR/work/samples"
}
touch "$KC_DIR/work/sampling"
sampler &
SAMPLER=$!

# ---- 2. srun across every node: plain, with the option, and to the first region ----

# A step whose tasks take REGIONS regions each; the first writes the time it
# was granted.  step_regions TAG [srun options]
step_regions() {
	local tag=$1 out sum
	shift
	out=$(ksrun -Q -N"$NODES" --nodelist="$ALL" --krex-shared --gres=shard:1 "$@" sh -c "
		i=0
		while [ \$i -lt $REGIONS ]; do
			i=\$((i + 1))
			$KREX_CLI region --json --cert $KC_DIR/work/cert/$tag.\$SLURMD_NODENAME.\$i -- \
				sh -c '[ \$0 != 1 ] || date +%s%N > $KC_DIR/work/first.$tag.\$SLURMD_NODENAME' \$i ||
				echo \"\$SLURMD_NODENAME: region \$i failed\"
		done" 2>&1) || { diag "srun $tag: $out"; return 1; }
	# Each node's plugin prints the step's line at its end (summary=yes):
	# one per node, counting this step's regions there; nothing else.
	sum=$(printf '%s\n' "$out" | grep -c "^krex: step [0-9.]* on .*: $REGIONS regions, ")
	out=$(printf '%s\n' "$out" | grep -v "^krex: step " | grep -v '^$')
	[ -z "$out" ] || { diag "$out"; return 1; }
	[ "$sum" = "$NODES" ] || { diag "$tag: $sum of $NODES nodes printed the step's line"; return 1; }
}

# time_srun LABEL ARGS...: milliseconds of one srun across all nodes
time_srun() {
	local t=$(date +%s%N)
	ksrun -N"$NODES" --nodelist="$ALL" "$@" true >/dev/null 2>&1 || { echo fail; return; }
	ms_since "$t"
}

srun_figures() {
	local i plain=() gres=() krex=() t
	for i in 1 2 3; do
		plain+=($(time_srun))
		gres+=($(time_srun --gres=shard:1))
		krex+=($(time_srun --gres=shard:1 --krex-shared))
	done
	fig "$(stats "srun -N$NODES true (ms)" "${plain[@]}")"
	fig "$(stats "srun -N$NODES --gres=shard:1 true (ms)" "${gres[@]}")"
	fig "$(stats "srun -N$NODES --gres=shard:1 --krex-shared true (ms)" "${krex[@]}")"
	case " ${plain[*]} ${gres[*]} ${krex[*]} " in *" fail "*) return 1 ;; esac
}
ok "srun -N$NODES runs, with and without --krex-shared" srun_figures

# first_region TAG T0: srun start to the first task's first region, and to the last task's
first_region() {
	local f v=()
	for f in "$KC_DIR"/work/first."$1".*; do
		[ -s "$f" ] && v+=($((($(cat "$f") - $2) / 1000000)))
	done
	[ ${#v[@]} = "$NODES" ] || { diag "$1: ${#v[@]} of $NODES tasks wrote their first region"; return 1; }
	fig "$(stats "srun -N$NODES --krex-shared ($3) to each task's first region (ms)" "${v[@]}")"
}

idle_step() {
	local t=$(date +%s%N)
	step_regions idle || return 1
	fig "srun -N$NODES --krex-shared, $REGIONS regions a task, no sibling: $(ms_since "$t") ms"
	first_region idle "$t" "no sibling"
}
ok "srun -N$NODES --krex-shared: every task takes $REGIONS regions" idle_step

# ---- 3. JOBS batch jobs, PER a node, each a mock-GPU hog taking regions ----

cat >"$KC_DIR/work/job.sh" <<EOS
#!/bin/sh
# A --krex-shared job: a hog of $KUS us kernels ${KS_HOG:-sync} on its node's mock GPU (the gate
# preloaded by the plugin drains it), then $REGIONS regions once "go" exists,
# then waits for "stop".
W=$KC_DIR/work
export LD_LIBRARY_PATH=$MOCKLIB KREX_MOCK_GPU=$SHM-\$SLURMD_NODENAME
KREX_LOG=${KS_GATE_LOG:-warn} $WL/krex-hog $KUS $HOGOPT --seconds 600 --counter \$W/hog.\$SLURM_JOB_ID &
hog=\$!
trap 'kill \$hog 2>/dev/null' EXIT
while [ ! -e \$W/go ]; do sleep 1; done
i=0
while [ \$i -lt $REGIONS ]; do
	i=\$((i + 1))
	$KREX_CLI region --json --cert \$W/cert/job.\$SLURM_JOB_ID.\$i -- sleep 0.05 ||
		echo "job \$SLURM_JOB_ID: region \$i failed (\$?)" >> \$W/failed
done
touch \$W/done.\$SLURM_JOB_ID
while [ ! -e \$W/stop ]; do sleep 1; done
kill \$hog
wait \$hog
EOS
chmod 755 "$KC_DIR/work/job.sh"

JOBIDS=""
submit_jobs() {
	local i j t=$(date +%s%N) nodes=($KC_NODES)
	for i in $(seq 0 $((JOBS - 1))); do
		j=$(ksbatch --krex-shared --gres=shard:1 -w "${nodes[i % NODES]}" -o "$KC_DIR/work/job.%j.out" \
			"$KC_DIR/work/job.sh") || return 1
		JOBIDS="$JOBIDS $j"
	done
	fig "sbatch of $JOBS --krex-shared jobs: $(ms_since "$t") ms"
	kwait 120 running_at_least "$JOBS" || { diag "not all running: $(krun squeue -h -o '%i %T %r' | tr '\n' ' ')"; return 1; }
	for j in $JOBIDS; do
		wait_for 30 test -s "$KC_DIR/work/hog.$j" || { diag "job $j: no hog counter"; return 1; }
	done
	fig "$JOBS jobs running, each hog launching: $(ms_since "$t") ms after the first sbatch"
}
ok "$JOBS --krex-shared jobs ($PER a node) run, each with a mock-GPU hog" submit_jobs

jobs_done() { [ "$(ls "$KC_DIR"/work/done.* 2>/dev/null | wc -l)" -ge "$JOBS" ]; }
job_regions() {
	local t=$(date +%s%N)
	touch "$KC_DIR/work/go"
	kwait 300 jobs_done || { diag "$(ls "$KC_DIR"/work/done.* 2>/dev/null | wc -l) of $JOBS jobs done"; return 1; }
	fig "$JOBS jobs x $REGIONS regions ($((JOBS * REGIONS)) regions, $PER jobs a GPU): $(ms_since "$t") ms"
	[ ! -s "$KC_DIR/work/failed" ] || { diag "$(cat "$KC_DIR/work/failed")"; return 1; }
	stepd_figures
}
# The jobs' slurmstepd (their cmdline names the job id), read while they wait.
stepd_figures() {
	local p rest j rss=()
	while read -r p rest; do
		j=${rest#*[}
		j=${j%%.*}
		case " $JOBIDS " in *" $j "*) rss+=($(status_kb "$p" VmRSS)) ;; esac
	done < <(pgrep -a slurmstepd)
	fig "$(stats "slurmstepd RSS, one a job (kB)" "${rss[@]}")"
}
ok "every job took its $REGIONS regions" job_regions

busy_step() {
	local t=$(date +%s%N)
	step_regions busy || return 1
	fig "srun -N$NODES --krex-shared, $REGIONS regions a task, $PER sibling jobs a node: $(ms_since "$t") ms"
	first_region busy "$t" "$PER sibling jobs a node"
}
ok "srun -N$NODES --krex-shared beside the jobs: every task takes $REGIONS regions" busy_step

# ---- 4. certificates ----

# Every certificate is there and well formed, and tells the truth: the
# siblings it counts are the other participants on its node's GPU; a clean one
# drained and froze every sibling; a degraded one names each cause in its
# note (a sibling not frozen is one of them).  The degraded ones and their
# causes are counted as figures: on this loaded 2-core machine a few regions
# meet the freeze_timeout (doc/scale.md).
check_certs() {
	python3 - "$KC_DIR/work/cert" "$NODES" "$JOBS" "$REGIONS" "$PER" "$JOBIDS" <<'EOF'
import json, os, re, sys
d, nodes, jobs, regions, per, jobids = sys.argv[1], *map(int, sys.argv[2:6]), sys.argv[6].split()
want = {f"job.{j}.{i}" for j in jobids for i in range(1, regions + 1)}
names = set(os.listdir(d))
bad = 0
def fail(msg):
    global bad
    bad += 1
    if bad <= 10:
        print("# " + msg)
for tag in ("idle", "busy"):
    got = {n for n in names if n.startswith(tag + ".")}
    if len(got) != nodes * regions:
        fail(f"{tag} step: {len(got)} certificates, want {nodes * regions}")
missing = want - names
if missing:
    fail(f"{len(missing)} job certificates missing, e.g. {sorted(missing)[:3]}")
ph = {k: [] for k in ("wait_us", "drain_us", "freeze_us", "isolate_us")}
outcomes, causes = {}, {}
for n in sorted(names):
    try:
        c = json.load(open(os.path.join(d, n)))
    except Exception as e:
        fail(f"{n}: not JSON: {e}")
        continue
    o, note = c["outcome"], c["note"]
    outcomes[o] = outcomes.get(o, 0) + 1
    # idle step: no sibling; the busy step: the node's jobs; a job: the
    # other jobs of its node
    lo, hi = {"idle": (0, 0), "busy": (per, per)}.get(n.split(".")[0], (per - 1, per - 1))
    if not lo <= c["siblings"] <= hi:
        fail(f"{n}: siblings {c['siblings']}, want {lo}-{hi}")
    notfrozen = len(re.findall(r"not frozen", note))
    if o == "clean":
        if note or c["frozen"] != c["siblings"] or c["drained"] != c["siblings"] or c["late"]:
            fail(f"{n}: clean with siblings {c['siblings']}, drained {c['drained']}, frozen {c['frozen']}, late {c['late']}, note '{note}'")
    elif o == "degraded":
        if not note or c["frozen"] + notfrozen != c["siblings"]:
            fail(f"{n}: degraded, frozen {c['frozen']} of {c['siblings']}, note '{note}'")
        for cause in note.split("; "):
            cause = re.sub(r"participant [0-9]+", "participant N", cause)
            causes[cause] = causes.get(cause, 0) + 1
    else:
        fail(f"{n}: outcome {o}: {note}")
    if not n.startswith("idle."):
        for k in ph:
            ph[k].append(c[k])
print(f"# certificates: {len(names)}, outcomes {outcomes}")
for cause, k in sorted(causes.items()):
    print(f"# degraded because: {cause} ({k})")
for k, v in ph.items():
    if v:
        v.sort()
        print(f"# {k} in regions with siblings: p50 {v[len(v) // 2]}, p95 {v[int(len(v) * 0.95)]}, max {v[-1]} (n={len(v)})")
sys.exit(1 if bad else 0)
EOF
}
certs() {
	local out rc
	out=$(check_certs)
	rc=$?
	printf '%s\n' "$out"
	FIG="$FIG$(printf '%s\n' "$out" | sed -n 's/^# \(certificates\|degraded because\|[a-z_]*_us in\)/\1/p')
"
	return $rc
}
ok "every region's certificate: there, siblings counted, each frozen or noted" certs

# ---- 5. scancel mid-region: a step holding a region on every node ----

# frozen cgroups of this cluster: krexd's own (linuxproc) or Slurm's step
# cgroups (proctrack/cgroup: a parent never reads FROZEN for its children)
frozen_count() {
	find /sys/fs/cgroup/freezer/krex-slurm/$$-* \
		$(for n in $KC_NODES; do echo /sys/fs/cgroup/freezer/slurm_$n; done) \
		-name freezer.state 2>/dev/null |
		xargs -r grep -l FROZEN 2>/dev/null | wc -l
}
held_all() { [ "$(ls "$KC_DIR"/work/held.* 2>/dev/null | wc -l)" = "$NODES" ]; }
frozen_is() { [ "$(frozen_count)" = "$1" ]; }
HOLDPID=""
hold_step() {
	local t=$(date +%s%N)
	KC_TIMEOUT=300 ksrun -N"$NODES" --nodelist="$ALL" --krex-shared --gres=shard:1 --job-name=krex-hold sh -c \
		"exec $KREX_CLI region -- sh -c 'touch $KC_DIR/work/held.\$SLURMD_NODENAME; exec sleep 300'" \
		>"$KC_DIR/work/hold.out" 2>&1 &
	HOLDPID=$!
	kwait 60 held_all || { diag "$(ls "$KC_DIR"/work/held.* 2>/dev/null | wc -l) of $NODES holding"; return 1; }
	fig "srun -N$NODES to a region held on every node, $PER sibling jobs a node: $(ms_since "$t") ms"
	wait_for 10 frozen_is "$JOBS" || { diag "frozen cgroups: $(frozen_count), want $JOBS"; return 1; }
}
ok "a step holds a region on every node: all $JOBS jobs frozen" hold_step

# One job per node is cancelled while frozen: it ends, its node's others stay frozen.
CANCELLED=""
cancel_frozen() {
	local j t=$(date +%s%N)
	CANCELLED=$(echo $JOBIDS | tr ' ' '\n' | head -n "$NODES" | tr '\n' ' ')
	krun scancel $CANCELLED || return 1
	for j in $CANCELLED; do
		kwait 30 kjob_done "$j" || { diag "job $j not ended: $(kjob_state "$j")"; return 1; }
	done
	fig "scancel of $NODES frozen jobs (one a node) to all ended: $(ms_since "$t") ms"
	wait_for 10 frozen_is $((JOBS - NODES)) || { diag "frozen: $(frozen_count), want $((JOBS - NODES))"; return 1; }
}
ok "scancel of a frozen sibling job on every node: each ends, the others stay frozen" cancel_frozen

hog_moves() {
	local a
	a=$(cat "$KC_DIR/work/hog.$1" 2>/dev/null)
	wait_for 5 sh -c "[ \"\$(cat $KC_DIR/work/hog.$1 2>/dev/null)\" != '$a' ]"
}
cancel_holder() {
	local j t=$(date +%s%N) id
	id=$(krun squeue -h -n krex-hold -o %i) || return 1
	[ -n "$id" ] || { diag "no krex-hold job"; return 1; }
	krun scancel "$id" || return 1
	wait_for 30 frozen_is 0 || { diag "still frozen: $(frozen_count)"; return 1; }
	fig "scancel of the holding step to no cgroup frozen on any node: $(ms_since "$t") ms"
	kwait 30 kjob_done "$id" || return 1
	wait "$HOLDPID" 2>/dev/null
	for j in $JOBIDS; do
		case " $CANCELLED " in *" $j "*) continue ;; esac
		hog_moves "$j" || { diag "job $j's hog does not move after the thaw"; return 1; }
	done
}
ok "scancel of the step mid-region: every node thaws, every hog moves again" cancel_holder

# ---- 6. the jobs end; nothing is left ----

jobs_end() {
	local j
	touch "$KC_DIR/work/stop"
	for j in $JOBIDS; do kwait 60 kjob_done "$j" || return 1; done
	for j in $JOBIDS; do
		case " $CANCELLED " in *" $j "*) continue ;; esac
		[ "$(kjob_state "$j")" = COMPLETED ] || { diag "job $j: $(kjob_state "$j")"; return 1; }
	done
}
ok "the other jobs end COMPLETED" jobs_end

# Peak figures, read while the jobs are gone and krexd still runs.
rm -f "$KC_DIR/work/sampling"
wait "$SAMPLER" 2>/dev/null
peak_figures() {
	local n p khwm=() kcpu=() shwm=() scpu=()
	for n in $KC_NODES; do
		p=$(krexd_pid "$n")
		khwm+=($(status_kb "$p" VmHWM))
		kcpu+=($(cpu_ms "$p"))
	done
	for p in $KC_SLURMD_PIDS; do
		shwm+=($(status_kb "$p" VmHWM))
		scpu+=($(cpu_ms "$p"))
	done
	fig "$(stats 'krexd RSS peak, VmHWM (kB)' "${khwm[@]}")"
	fig "$(stats 'krexd fds, most seen (sampled 1/s)' $(awk '$1 == "krexd" { if ($4 > m[$2]) m[$2] = $4 } END { for (n in m) print m[n] }' "$KC_DIR/work/samples"))"
	fig "$(stats 'krexd CPU time over the run (ms)' "${kcpu[@]}")"
	fig "$(stats 'slurmd RSS peak, VmHWM (kB)' "${shwm[@]}")"
	fig "$(stats 'slurmd CPU time over the run (ms)' "${scpu[@]}")"
	p=$(cat "$KC_DIR/slurmctld.pid")
	fig "slurmctld: RSS peak $(status_kb "$p" VmHWM) kB, CPU $(cpu_ms "$p") ms, spank_krex.so mappings $(grep -c spank_krex.so "/proc/$p/maps")"
}
peak_figures

# No job process left: nothing with this cluster's SLURM_CONF and a job id.
no_job_process() {
	local e p left=""
	for e in /proc/[0-9]*/environ; do
		p=${e#/proc/}
		p=${p%/environ}
		{ tr '\0' '\n' <"$e"; } 2>/dev/null | grep -qx "SLURM_CONF=$KC_DIR/slurm.conf" || continue
		{ tr '\0' '\n' <"$e"; } 2>/dev/null | grep -q "^SLURM_JOB_ID=" || continue
		left="$left $p($(cat "/proc/$p/comm" 2>/dev/null))"
	done
	LEFT=$left
	[ -z "$left" ]
}
wait_gone() { kwait 20 no_job_process || { diag "left running:$LEFT"; return 1; }; }
ok "no job process left (hogs, krex, tasks, slurmstepd)" wait_gone

# Every node's krexd: no participant, no region, no state line, every gate open.
gate_open() {
	local g=$1 n i c
	n=$(od -An -tu4 -j8 -N4 "$g" | tr -d ' ')
	for i in $(seq 0 $((n - 1))); do
		c=$(od -An -tu4 -j$((32 + i * 80)) -N4 "$g" | tr -d ' ')
		[ "$c" = 0 ] || { WHY="$g: slot $i closed by $c"; return 1; }
	done
}
krexd_clean() {
	local n s st
	for n in $KC_NODES; do
		s=$(KREX_SOCKET=${KC_RUN}$n/krexd.sock "$KREX_CLI" status --json 2>&1) || { WHY="$n: $s"; return 1; }
		case "$s" in *'"participants":[]'*'"regions":[]'*) ;; *) WHY="$n: $s"; return 1 ;; esac
		st=${KC_RUN}$n/krexd.state
		[ ! -s "$st" ] || { WHY="$n: state: $(tr '\n' ' ' <"$st")"; return 1; }
		gate_open "${KC_RUN}$n/gate" || return 1
	done
}
nothing_held() { kwait 10 krexd_clean || { diag "$WHY"; return 1; }; }
ok "every krexd: no participant, no region, no state line (freeze, pin, gate), every gate slot open" nothing_held
ok "no cgroup left frozen (krexd's and Slurm's)" check_none_frozen

all_stop() {
	local n pids="" p t=$(date +%s%N)
	for n in $KC_NODES; do pids="$pids $(krexd_pid "$n")"; done
	cluster_stop_slurmd
	for p in $pids; do wait_for 10 kt_gone "$p" || { diag "krexd $p still running"; return 1; }; done
	fig "$NODES slurmd stopped, all krexd gone: $(ms_since "$t") ms"
}
kt_gone() { ! kill -0 "$1" 2>/dev/null; }
ok "every krexd stops with its slurmd" all_stop

fig "wall time of the whole test: $((SECONDS - T_START)) s"
if [ -n "${KS_OUT:-}" ]; then
	# one line a certificate: its name (step or job, node or job id, region), its JSON
	mkdir -p "$KS_OUT" && printf '%s' "$FIG" >"$KS_OUT/figures.txt" &&
		cp "$KC_DIR/work/samples" "$KS_OUT/" &&
		for f in "$KC_DIR"/work/cert/*; do echo "${f##*/} $(cat "$f")"; done >"$KS_OUT/certs.txt"
fi
done_testing
