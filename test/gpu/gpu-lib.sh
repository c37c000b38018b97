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

# gpu_out NAME: OUT (absolute; ./NAME when unset) and its work dir W, made;
# MOCK from KREX_GPU_MOCK; on EXIT, gpu_cleanup.
gpu_out() {
	OUT=${OUT:-$PWD/$1}
	mkdir -p "$OUT/work" && OUT=$(cd "$OUT" && pwd) || exit 1
	W=$OUT/work
	MOCK=${KREX_GPU_MOCK:-0}
	trap gpu_cleanup EXIT
	trap 'exit 130' INT TERM
}
# gpu_cleanup: stop_all, krexd_down, and the mock's simulated GPU.
gpu_cleanup() {
	stop_all
	krexd_down
	[ "$MOCK" = 1 ] && rm -f "/dev/shm${KREX_MOCK_GPU:-/none}"
}
# gpu_need_torch: unless KREX_GPU_MOCK=1, exit 0 with a SKIP line where no
# NVIDIA GPU or no torch with CUDA is.
gpu_need_torch() {
	[ "${KREX_GPU_MOCK:-0}" = 1 ] && return 0
	if ! command -v nvidia-smi >/dev/null || ! nvidia-smi -L >/dev/null 2>&1; then
		echo "SKIP: no NVIDIA GPU here (nvidia-smi -L failed)"
		exit 0
	fi
	python3 -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null ||
		{ echo "SKIP: no torch with CUDA"; exit 0; }
}
# krexd_up LOG ARGS...: $B's krexd -F ARGS in the background (KD), logging to
# LOG; waits 5 s for $KREX_SOCKET, else a FAIL line and exit 1.  Its cgroup
# subtree is this run's own unless ARGS name one (a later -o wins).
krexd_up() {
	local log=$1
	shift
	rm -f "$KREX_SOCKET"
	"$B/krexd/krexd" -F -o "cgroup_subtree=krex-gpu-$$" "$@" >"$log" 2>&1 &
	KD=$!
	for _ in $(seq 50); do [ -S "$KREX_SOCKET" ] && return 0; sleep 0.1; done
	echo "FAIL: krexd did not start (see $log)"
	exit 1
}

# gpu_build DIR LOGDIR: set B to a built tree: DIR if it has krexd, else a
# build from .gpu/'s dist tarball (scripts/gpu-build.sh), else ./configure &&
# make in the source tree ($src).  Logs under LOGDIR.  Returns 1 without one.
gpu_build() {
	local hw
	B=$1
	if [ ! -x "$B/krexd/krexd" ]; then
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
	[ -x "$B/krexd/krexd" ] || return 1
	B=$(cd "$B" && pwd)
}

# gpu_krex_env NAME: the environment of a one-call run against $B (krexd's
# socket under $W/run, GPU 0); with MOCK=1 also the mock NVML (script
# $W/nvml.txt, read log $W/nvml.log) and the mock CUDA driver (TEST DOUBLES),
# and a MOCK RUN line.
gpu_krex_env() {
	export KREX_GATE_LIB=$B/gate/.libs/libkrexgate.so
	export KREX_LIBREGION=$B/libregion/.libs/libkrexregion.so.1
	export KREX_SOCKET=$W/run/krexd.sock
	export KREX_GPUS=0
	[ "$MOCK" = 1 ] || return 0
	echo "MOCK RUN: mock NVML and mock CUDA driver, no GPU; the timings mean nothing"
	export KREX_MOCK_NVML=$W/nvml.txt KREX_MOCK_NVML_LOG=$W/nvml.log KREX_MOCK_GPU=/krex-$1-$$
	export LD_LIBRARY_PATH=$B/test/mock/nvml/.libs:$B/test/mock/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
	printf 'max=1980 app=1980\n0 sm=1980 reasons=0 temp=40\n' >"$KREX_MOCK_NVML"
}
# gpu_clocks: a line of the GPU's clock state, read only (nvidia-smi; the
# mock's script line under MOCK).
gpu_clocks() {
	[ "$MOCK" = 1 ] && { echo "mock: $(tail -n 1 "$KREX_MOCK_NVML")"; return; }
	local q=clocks.sm,clocks.max.sm,power.draw,power.limit,temperature.gpu out
	out=$(nvidia-smi --query-gpu=$q,clocks_event_reasons.active --format=csv,noheader 2>/dev/null) ||
		out=$(nvidia-smi --query-gpu=$q,clocks_throttle_reasons.active --format=csv,noheader 2>/dev/null)
	echo "$out" | head -1
}
# gpu_start [BUILDDIR]: the common start of a one-call run: a SKIP exit
# without a GPU and torch (unless MOCK), the build in B ($KREX_BUILDDIR, else
# the source tree; a FAIL exit without one), KREX the CLI.
gpu_start() {
	gpu_need_torch
	gpu_build "${1:-${KREX_BUILDDIR:-$src}}" "$W" || { echo "FAIL: no build (see $W/*.log)"; exit 1; }
	KREX=$B/krex/krex
}

# gpu_munge_key: a munge user, directories and key where the machine has none
# (the GPU machine has no munge package; Debian 12's munged is carried).
gpu_munge_key() {
	id munge >/dev/null 2>&1 || useradd -r -M -s /usr/sbin/nologin munge
	install -d -o munge -g munge -m 0700 /etc/munge
	install -d -o munge -g munge -m 0755 /var/lib/munge /var/log/munge /run/munge
	if [ ! -s /etc/munge/munge.key ]; then
		dd if=/dev/urandom of=/etc/munge/munge.key bs=1024 count=1 2>/dev/null
		chown munge:munge /etc/munge/munge.key
		chmod 0400 /etc/munge/munge.key
	fi
}

# gpu_rows: start a table of checks ($W/rows, fails 0); gpu_row CHECK EXPECTED
# GOT adds a line, PASS when GOT matches EXPECTED (a regex); gpu_table NAME
# prints the table (also to $OUT/table.md) and a PASS or FAIL line, and
# returns 1 when a check failed.
gpu_rows() {
	ROWS=$W/rows
	: >"$ROWS"
	fails=0
}
gpu_row() {
	local v=FAIL
	printf '%s\n' "$3" | grep -Eq "^($2)\$" && v=PASS
	[ "$v" = PASS ] || fails=$((fails + 1))
	printf '| %s | %s | %s | %s |\n' "$1" "$2" "$3" "$v" >>"$ROWS"
}
gpu_table() {
	{
		echo "| ${2:-check} | expected | got | |"
		echo "|---|---|---|---|"
		cat "$ROWS"
	} | tee "$OUT/table.md"
	[ "$fails" = 0 ] && echo "PASS: $1 ($(wc -l <"$ROWS") checks)" ||
		echo "FAIL: $1 ($fails of $(wc -l <"$ROWS") checks)"
	[ "$fails" = 0 ]
}
