#!/bin/bash
# Device call 3 of session 13 (issue 18): call 2 found one region per sample
# at 0.1 ms +4-5 % (event p95) over back to back with ANY sibling mix, even
# busy CPU loops alone (no GPU sibling, a 1.9 ms entry), against +1 % for
# alone-gapped.  Right after the GRANT krexd reads NVML (edge counters, the
# first clock sample; every 20 ms after): do those reads slow the owner's
# first kernels?  krexd with NVML against krexd whose dlopen of
# libnvidia-ml fails (an LD_PRELOAD shim, this call only), alternated
# A B A B: fidelity.py, 0.1 and 1 ms, every sibling, one region per sample
# and batch, settle off (it needs NVML; the sample mixes' settle was 0).
. notebook/gpu-call-prologue.sh
{ date -u; uname -a; nvidia-smi --query-gpu=name,driver_version,clocks.sm,power.draw,temperature.gpu --format=csv; } >"$O/env.txt" 2>&1
cat >/tmp/o/nonvml.c <<'C'
#define _GNU_SOURCE
#include <dlfcn.h>
#include <string.h>
void *dlopen(const char *f, int fl)
{
	static void *(*real)(const char *, int);
	if (f && strstr(f, "nvidia-ml"))
		return NULL;
	if (!real)
		real = (void *(*)(const char *, int))dlsym(RTLD_NEXT, "dlopen");
	return real(f, fl);
}
C
timeout 30 gcc -shared -fPIC -o /tmp/o/nonvml.so /tmp/o/nonvml.c -ldl || { echo "shim build failed"; exit 1; }
mv "$B/krexd/krexd" "$B/krexd/krexd.real"
run() {
	local name=$1 nvml=$2
	if [ "$nvml" = on ]; then
		cp "$B/krexd/krexd.real" "$B/krexd/krexd"
	else
		printf '#!/bin/sh\nLD_PRELOAD=/tmp/o/nonvml.so exec %s "$@"\n' "$B/krexd/krexd.real" >"$B/krexd/krexd"
		chmod +x "$B/krexd/krexd"
	fi
	st "fidelity $name"
	timeout -k 5 110 python3 test/perf/fidelity.py --full --builddir "$B" \
		--srcdir "$PWD" --out "/tmp/o/$name" --sizes 0.1,1 --samples 0.1:400,1:300 --mixes all \
		--sample-mixes all --modes alone,krex,alone-gapped --regions sample,batch --budget-s 100 \
		--krexd-opt settle=off >"/tmp/o/$name.txt" 2>&1
	echo "rc=$?" >>"/tmp/o/$name.txt"
	{ echo "==== $name (krexd NVML $nvml)"; sed -n '/^| size_ms/,/^$/p' /tmp/o/$name/fidelity.md | head -14; } >>"$O/fidelity.md"
	{ echo "==== $name"; sed -n '/^| size_ms/,/^$/p' /tmp/o/$name/fidelity-entry.md | head -8; } >>"$O/entry.md"
	grep -h "nvml\|NVML" /tmp/o/$name/*krexd.log 2>/dev/null | head -3 >>"$O/entry.md"
}
run a1-nvml on
run b1-nonvml off
run a2-nvml on
run b2-nonvml off
st done
tar czf "$O/detail.tgz" -C /tmp/o --exclude='*.fatbin' --exclude='*.jsonl' a1-nvml b1-nonvml a2-nvml b2-nonvml 2>/dev/null
cat "$O/fidelity.md"; cut -c1-200 "$O/entry.md"; cat "$O/steps.txt"
