# gpu-call-prologue.sh - sourced by a device call script (notebook/h200-session-*/callN.sh,
# from session 8 on), run on the GPU machine from the carried tree: $O (the
# device tool's $OUT), /tmp/o for what stays there, st() (a timed step line in
# $O/steps.txt), and $B, the build from the `make dist` tarball
# (scripts/gpu-build.sh); the call stops when the build fails; tables(),
# tables of a run for a summary in $O (from session 25 on).
set -u
O=${OUT:?}
mkdir -p /tmp/o
t0=$(date +%s)
st() { echo "== $(($(date +%s) - t0)) s: $*" | tee -a "$O/steps.txt"; }
st build
B=$(timeout 90 bash scripts/gpu-build.sh 2>"$O/build.err" | tail -1)
[ -x "$B/krexd/krexd" ] || { echo "BUILD FAILED"; tail -30 "$O/build.err"; exit 1; }
# tables DIR FILE...: each DIR/FILE that exists, under a "==== FILE" line.
tables() {
	local d=$1 f
	shift
	for f; do
		[ -f "$d/$f" ] && { echo "==== $f"; cat "$d/$f"; }
	done
	return 0
}
