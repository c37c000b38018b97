# SPDX-License-Identifier: BSD-3-Clause
# gpu-lib.sh - process helpers of the one-call GPU scripts (run-gpu.sh,
# settle.sh); source it.  PIDS: background jobs (process trees) to stop;
# KD: the krexd started.
PIDS=
KD=
# kill_tree PID: CONT and TERM to PID and its descendants (a frozen one too).
kill_tree() {
	local c
	for c in $(pgrep -P "$1" 2>/dev/null); do kill_tree "$c"; done
	kill -CONT "$1" 2>/dev/null
	kill -TERM "$1" 2>/dev/null
}
# stop_all: every tree in PIDS, KILL after 0.5 s.
stop_all() {
	local p
	for p in $PIDS; do kill_tree "$p"; done
	sleep 0.5
	for p in $PIDS; do kill -KILL "$p" 2>/dev/null; done
	wait $PIDS 2>/dev/null
	PIDS=
}
# krexd_down: TERM krexd, KILL after 5 s.
krexd_down() {
	[ -n "$KD" ] || return 0
	kill "$KD" 2>/dev/null
	for _ in $(seq 50); do kill -0 "$KD" 2>/dev/null || break; sleep 0.1; done
	kill -KILL "$KD" 2>/dev/null
	wait "$KD" 2>/dev/null
	KD=
}

# gpu_build DIR LOGDIR: set B to a built tree: DIR if it has krexd, else a
# build from .gpu/'s dist tarball (scripts/gpu-build.sh), else ./configure &&
# make in the source tree ($src).  Logs under LOGDIR.  Returns 1 without one.
gpu_build() {
	local hw
	B=$1
	if [ ! -x "$B/coordinator/krexd" ]; then
		cd "$src" || return 1
		if ls .gpu/krex-*.tar.gz >/dev/null 2>&1 && [ -f scripts/gpu-build.sh ]; then
			B=$(timeout 300 bash scripts/gpu-build.sh | tail -1)
		elif [ -x ./configure ]; then
			# No libhwloc-dev pkg-config on the GPU image: hand configure the flags.
			hw=
			pkg-config --exists hwloc 2>/dev/null ||
				hw="HWLOC_CFLAGS= HWLOC_LIBS=$(ls /usr/lib/x86_64-linux-gnu/libhwloc.so* 2>/dev/null | head -1)"
			env $hw ./configure -q --with-cuda=/usr/local/cuda >"$2/configure.log" 2>&1 &&
				timeout 300 make -j"$(nproc)" >"$2/make.log" 2>&1
			B=$src
		fi
	fi
	[ -x "$B/coordinator/krexd" ] || return 1
	B=$(cd "$B" && pwd)
}
