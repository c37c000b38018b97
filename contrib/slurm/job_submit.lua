--[[
 job_submit.lua for KREX: a job that asks for --krex-shared (or has
 KREX_SHARED in its environment) but for no GPU gets one shard, so that it
 lands on a GPU it shares; a job that asks for whole GPUs is left alone
 (a whole GPU is not shared, so KREX has nothing to quiet).

 How the option reaches slurmctld: sbatch and salloc send SPANK options in
 the job's spank environment as _SLURM_SPANK_OPTION_krex_krex_shared.
 Not exercised by the test suite; check on your Slurm release.
--]]

local SHARE_GRES = "gres/shard:1"

local function wants_krex(job_desc)
	local env = job_desc.spank_job_env or {}
	for _, kv in ipairs(env) do
		if string.find(kv, "_SLURM_SPANK_OPTION_krex_krex_shared", 1, true) then
			return true
		end
	end
	local e = job_desc.environment or {}
	local v = e["KREX_SHARED"]
	return v ~= nil and v ~= "" and v ~= "0" and v ~= "no" and v ~= "off"
end

local function asks_gpu(job_desc)
	local t = (job_desc.tres_per_node or "") .. (job_desc.tres_per_job or "") ..
		(job_desc.tres_per_task or "") .. (job_desc.tres_per_socket or "")
	return string.find(t, "gpu", 1, true) or string.find(t, "shard", 1, true)
end

function slurm_job_submit(job_desc, part_list, submit_uid)
	if wants_krex(job_desc) and not asks_gpu(job_desc) then
		job_desc.tres_per_node = SHARE_GRES
		slurm.log_info("krex: job of uid %u gets %s", submit_uid, SHARE_GRES)
	end
	return slurm.SUCCESS
end

function slurm_job_modify(job_desc, job_rec, part_list, modify_uid)
	return slurm.SUCCESS
end

slurm.log_info("krex: job_submit.lua loaded")
return slurm.SUCCESS
