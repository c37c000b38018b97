# gpu-call-mps.sh - sourced by a device call script after
# gpu-call-prologue.sh (from session 25 on; sessions 16's calls wrote it out
# each time): mps_start starts an NVIDIA MPS control daemon of the call's own
# (private pipe and log directories under /tmp/mps; the call ends, exit 0,
# with a line saying so when there is no control program or it does not
# start) and stops it when the call exits; mps_stop stops it, after which
# CUDA programs run without MPS again.  No GPU setting is changed (the
# compute mode stays Default).
mps_stop() {
	echo quit | timeout 10 nvidia-cuda-mps-control >/dev/null 2>&1
	sleep 1
	pkill -KILL -f nvidia-cuda-mps 2>/dev/null
	unset CUDA_MPS_PIPE_DIRECTORY CUDA_MPS_LOG_DIRECTORY
	trap - EXIT
	return 0
}
mps_start() {
	command -v nvidia-cuda-mps-control >/dev/null || { echo "no nvidia-cuda-mps-control"; exit 0; }
	export CUDA_MPS_PIPE_DIRECTORY=/tmp/mps/pipe CUDA_MPS_LOG_DIRECTORY=/tmp/mps/log
	mkdir -p "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY"
	trap mps_stop EXIT
	st "mps start"
	timeout 10 nvidia-cuda-mps-control -d || { echo "MPS control daemon did not start"; exit 0; }
}
