#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# flake-hunt.sh - run chosen test tiers (or single tests) N times, with or
# without load beside them, and list every test that failed at least once,
# with its logs copied to a report folder.  HACKING.md "Flakes" says how it
# is used; the dated reports are in notebook/ (the lab notebook).
set -u

usage() {
	cat <<'EOF'
usage: scripts/flake-hunt.sh [OPTIONS] TARGET...

TARGET is a tier (a folder of test/: integration, topology, gate, attack,
python, slurm, unit, ...) or one test of a tier (integration/krexd-suspend.sh).
Each run runs every target once (`make -C test/TIER check TESTS=...`); the
Slurm tier runs under `flock /tmp/krex-slurm.lock`.

Options:
  -n, --runs N        runs (default 3)
  -l, --load LIST     load beside the tests, a comma list of:
                        none   nothing (default)
                        cpu    one busy loop per core
                        build  a parallel compile of the tree's C files, in a loop
                        io     a 256 MiB write with fsync, in a loop
                        all    cpu,build,io
  -a, --alternate     every other run without load (runs 1, 3, ...: none)
  -o, --out DIR       report folder (default flake-report-YYYYmmdd-HHMMSS)
  -C, --builddir DIR  the configured, built tree (default: this tree)
  -h, --help          this text

The report folder gets summary.txt (one line per run, then every test that
failed at least once: how often, under which load, its first failing TAP
lines) and fail/RUN-TIER-TEST.log, each failing test's whole log.
Exit status: 0 when nothing failed, 1 when a test failed, 2 on bad usage.
EOF
}

die() {
	echo "flake-hunt: $*" >&2
	echo "flake-hunt: see --help" >&2
	exit 2
}

# need OPTION ARGC WHAT: OPTION, with ARGC words left, must have its argument
need() {
	[ "$2" -ge 2 ] || die "$1 needs $3"
}

runs=3
load=none
alternate=0
out=
builddir=
targets=()
while [ $# -gt 0 ]; do
	case $1 in
	-n | --runs) need "$1" $# "a number"; runs=$2; shift 2 ;;
	-l | --load) need "$1" $# "a list (none, cpu, build, io, all)"; load=$2; shift 2 ;;
	-a | --alternate)
		alternate=1
		shift
		;;
	-o | --out) need "$1" $# "a folder"; out=$2; shift 2 ;;
	-C | --builddir) need "$1" $# "a folder"; builddir=$2; shift 2 ;;
	-h | --help)
		usage
		exit 0
		;;
	--)
		shift
		targets+=("$@")
		break
		;;
	-*) die "unknown option '$1'" ;;
	*)
		targets+=("$1")
		shift
		;;
	esac
done

case $runs in
'' | *[!0-9]*) die "--runs wants a whole number of 1 or more, not '$runs'" ;;
esac
[ "$runs" -ge 1 ] || die "--runs wants a whole number of 1 or more, not '$runs'"
[ ${#targets[@]} -gt 0 ] || die "no tier or test given"

loads=
IFS=, read -r -a _l <<<"$load"
for l in "${_l[@]}"; do
	case $l in
	none) ;;
	cpu | build | io) loads="$loads $l" ;;
	all) loads="$loads cpu build io" ;;
	*) die "unknown load '$l' (none, cpu, build, io, all)" ;;
	esac
done
loads=$(echo $loads | tr ' ' '\n' | sort -u | tr '\n' ' ')
loads=${loads% }

srcdir=$(cd "$(dirname "$0")/.." && pwd)
builddir=$(cd "${builddir:-$srcdir}" 2>/dev/null && pwd) || die "no such build folder: $builddir"
[ -f "$builddir/test/Makefile" ] || die "$builddir is not a configured build (no test/Makefile): run ./configure and make first"

# Every target as TIER and TESTS ("" for the whole tier), checked now.
declare -a t_tier t_tests
for t in "${targets[@]}"; do
	t=${t#test/}
	t=${t%/}
	tier=${t%%/*}
	test=
	[ "$tier" != "$t" ] && test=${t#*/}
	[ -f "$builddir/test/$tier/Makefile" ] || die "no tier '$tier' (no test/$tier/Makefile in $builddir)"
	if [ -n "$test" ]; then
		all=$(make -s -C "$builddir/test/$tier" -f Makefile -f - flake-hunt-tests <<<'flake-hunt-tests: ; @echo $(TESTS)' 2>/dev/null)
		case " $all " in
		*" $test "*) ;;
		*) die "tier $tier has no test '$test' (its tests: $all)" ;;
		esac
	fi
	t_tier+=("$tier")
	t_tests+=("$test")
done

out=${out:-flake-report-$(date +%Y%m%d-%H%M%S)}
mkdir -p "$out/fail" || die "cannot make the report folder $out"
out=$(cd "$out" && pwd)
summary=$out/summary.txt
: >"$summary"
# failures: one line per failure, "TEST RUN LOAD"
fails=$out/.failures
: >"$fails"

# ---- load ----
load_pids=
load_dir=
load_start() {
	local l n i
	[ -n "$1" ] || return 0
	load_dir=$(mktemp -d /tmp/flake-load.XXXXXX)
	n=$(nproc)
	for l in $1; do
		case $l in
		cpu)
			for i in $(seq "$n"); do
				sh -c 'while :; do :; done' &
				load_pids="$load_pids $!"
			done
			;;
		build)
			# the tree's C files compiled over and over, nproc at a time
			(exec 2>/dev/null # ("Terminated" when load_stop ends it)
			while :; do
				find "$srcdir/common" "$srcdir/krexd" "$srcdir/libregion" "$srcdir/gate" -name '*.c' |
					xargs -P "$n" -I{} sh -c "cc -O2 -I'$builddir' -I'$srcdir/common' -I'$srcdir/include' -I'$srcdir/krexd' -I'$srcdir/gate' -I'$srcdir/topology' -c {} -o '$load_dir/o.\$\$.o' 2>/dev/null; rm -f '$load_dir/o.\$\$.o'"
			done) &
			load_pids="$load_pids $!"
			;;
		io)
			(exec 2>/dev/null
			while :; do
				dd if=/dev/zero of="$load_dir/io" bs=1M count=256 conv=fsync 2>/dev/null
				rm -f "$load_dir/io"
			done) &
			load_pids="$load_pids $!"
			;;
		esac
	done
}
load_stop() {
	local p
	for p in $load_pids; do
		pkill -P "$p" 2>/dev/null # the build loop's xargs and compilers
		kill "$p" 2>/dev/null
	done
	for p in $load_pids; do wait "$p" 2>/dev/null; done
	load_pids=
	[ -n "$load_dir" ] && rm -rf "$load_dir"
	load_dir=
}
trap 'load_stop' EXIT
trap 'load_stop; exit 130' INT TERM

# run_target RUN TIER TESTS LOAD: one make check; failing tests recorded.
run_target() {
	local run=$1 tier=$2 tests=$3 ld=$4 dir=$builddir/test/$2 t0 rc trs name res n=0 nf=0
	local -a mk=(make -C "$dir" check)
	[ -n "$tests" ] && mk+=("TESTS=$tests")
	# a stale result must not be read as this run's
	if [ -n "$tests" ]; then
		rm -f "$dir/${tests%.sh}.log" "$dir/${tests%.sh}.trs"
	else
		rm -f "$dir"/*.trs
	fi
	t0=$(date +%s)
	if [ "$tier" = slurm ]; then
		flock /tmp/krex-slurm.lock "${mk[@]}" >"$out/.make.out" 2>&1
	else
		"${mk[@]}" >"$out/.make.out" 2>&1
	fi
	rc=$?
	local -a trss=("$dir"/*.trs)
	if [ -n "$tests" ]; then
		trss=()
		for name in $tests; do trss+=("$dir/${name%.sh}.trs"); done
	fi
	for trs in "${trss[@]}"; do
		if [ ! -f "$trs" ]; then
			[ -n "$tests" ] || continue
			# asked for and not run: make stopped before it
			nf=$((nf + 1))
			echo "$tier/$(basename "$trs" .trs) $run ${ld:-none}" >>"$fails"
			continue
		fi
		name=$(basename "$trs" .trs)
		res=$(sed -n 's/^:global-test-result: //p' "$trs")
		n=$((n + 1))
		case $res in
		PASS | SKIP | XFAIL) ;;
		*)
			nf=$((nf + 1))
			echo "$tier/$name $run ${ld:-none}" >>"$fails"
			cp "${trs%.trs}.log" "$out/fail/run$run-$tier-$name.log" 2>/dev/null
			;;
		esac
	done
	if [ "$rc" != 0 ] && [ "$nf" = 0 ]; then
		# make itself failed (a build error): that is a failure too
		nf=1
		echo "$tier/(make) $run ${ld:-none}" >>"$fails"
		cp "$out/.make.out" "$out/fail/run$run-$tier-make.out"
	fi
	printf 'run %d  %-12s %-40s load %-14s %3d tests  %2d failed  %4d s\n' "$run" "$tier" \
		"${tests:-(all)}" "${ld:-none}" "$n" "$nf" $(($(date +%s) - t0)) | tee -a "$summary"
}

echo "flake-hunt: $runs run(s) of ${targets[*]}, load: ${loads:-none}${loads:+$([ $alternate = 1 ] && echo ' (every other run)')}; report in $out" |
	tee -a "$summary"
t_all=$(date +%s)
for run in $(seq "$runs"); do
	ld=$loads
	[ "$alternate" = 1 ] && [ $((run % 2)) = 1 ] && ld=
	load_start "$ld"
	for i in "${!t_tier[@]}"; do
		run_target "$run" "${t_tier[$i]}" "${t_tests[$i]}" "$ld"
	done
	load_stop
done
rm -f "$out/.make.out"

{
	echo
	echo "total: $(($(date +%s) - t_all)) s"
	if [ -s "$fails" ]; then
		echo "tests that failed at least once (of $runs runs):"
		cut -d' ' -f1 "$fails" | sort | uniq -c | sort -rn | while read -r c name; do
			echo "  $name: $c failure(s), runs/loads: $(awk -v n="$name" '$1 == n { printf "%s/%s ", $2, $3 }' "$fails")"
			tier=${name%%/*}
			t=${name#*/}
			for f in "$out"/fail/run*-"$tier-$t".log; do
				[ -f "$f" ] || continue
				grep -E '^(not ok|ERROR|Bail out)' "$f" | head -n 5 | sed "s|^|    $(basename "$f"): |"
			done
		done
	else
		echo "no test failed."
	fi
} | tee -a "$summary"
rm -f "$fails.tmp"
[ -s "$fails" ] && exit 1
exit 0
