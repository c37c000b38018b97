# SPDX-License-Identifier: BSD-3-Clause
# krexd-topo-lib.sh - sourced by the krexd_*.sh isolation tests after
# test/lib.sh and test/integration/krexd-lib.sh: what they need of the host,
# and how they read a process's CPUs.

# need_isolation_host [freezer]: root, the test client built, a cgroup v1
# cpuset (and a v1 freezer when asked) and 2 CPUs; else the test skips.
need_isolation_host() {
	need_root
	[ -x "$CLIENT" ] || skip_all "krex-testclient not built"
	grep -qs ' - cgroup .*cpuset' /proc/self/mountinfo || skip_all "no cgroup v1 cpuset"
	if [ "${1:-}" = freezer ]; then
		grep -qs ' - cgroup .*freezer' /proc/self/mountinfo || skip_all "no cgroup v1 freezer"
	fi
	[ "$(nproc)" -ge 2 ] || skip_all "needs 2 CPUs"
}

# cpus_of PID: the CPUs PID may run on; cpuset_dir PID: its v1 cpuset
# cgroup; cg_cpus PID: that cgroup's cpuset.cpus.
cpus_of() { sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' "/proc/$1/status"; }
cpuset_dir() { echo "/sys/fs/cgroup/cpuset$(cat "/proc/$1/cpuset")"; }
cg_cpus() { cat "$(cpuset_dir "$1")/cpuset.cpus"; }
