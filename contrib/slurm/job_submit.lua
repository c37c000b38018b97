-- SPDX-License-Identifier: BSD-3-Clause
--[[
 job_submit.lua for KREX: a job that asks for --krex-shared (or has
 KREX_SHARED in its environment) and for whole GPUs (--gres=gpu:N) is turned
 into a request for N shards, so that it lands on a GPU it shares with other
 --krex-shared jobs; one that asks for no GPU gets one shard.  Jobs without
 the option are left alone.  Install it beside slurm.conf with
 JobSubmitPlugins=lua (test/slurm/job-submit.sh checks it on Slurm 22.05
 and 25.11).

 How the option reaches slurmctld: sbatch and salloc send SPANK options in
 the job's spank environment as _SLURM_SPANK_OPTION_krex_krex_shared.
--]]

-- A TRES request is a comma list of "gres:NAME[:TYPE][:COUNT]" (Slurm 22.05)
-- or "gres/NAME[:TYPE][:COUNT]" (23.02 and later: what 25.11 hands over).
-- What this script writes keeps the form of the request it was given; where
-- there is none, it sets job_desc.gres, which Slurm completes in its own form.
local SHARE = "shard:1"

-- KREX_SHARED=VALUE says yes unless VALUE is empty, 0, no or off.
local function yes(v)
	return v ~= nil and v ~= "" and v ~= "0" and v ~= "no" and v ~= "off"
end

local function wants_krex(job_desc)
	-- spank_job_env is indexed from 0 (22.05 to 25.11): walk it with pairs().
	-- environment answers a lookup by name (25.11 lists nothing to pairs();
	-- the walk below is for a Slurm that hands over a plain table).
	for _, kv in pairs(job_desc.spank_job_env or {}) do
		if string.find(kv, "_SLURM_SPANK_OPTION_krex_krex_shared", 1, true) then
			return true
		end
	end
	local e = job_desc.environment or {}
	if yes(e["KREX_SHARED"]) then
		return true
	end
	for _, kv in pairs(e) do
		if type(kv) == "string" and string.sub(kv, 1, 12) == "KREX_SHARED=" then
			return yes(string.sub(kv, 13))
		end
	end
	return false
end

local function asks_gpu(job_desc)
	local t = (job_desc.tres_per_node or "") .. (job_desc.tres_per_job or "") ..
		(job_desc.tres_per_task or "") .. (job_desc.tres_per_socket or "")
	return string.find(t, "gpu", 1, true) or string.find(t, "shard", 1, true)
end

-- "gres/gpu:2" -> "gres/shard:2", "gres:gpu:h200:2" -> "gres:shard:2" (the
-- type goes: shards are untyped), "gres/gpu" -> "gres/shard:1"; the other
-- entries of the list are kept.  nil when the list has no gpu entry.
local function gpus_to_shards(tres)
	local out, found = {}, false
	for entry in string.gmatch(tres, "[^,]+") do
		local sep, rest = string.match(entry, "^gres([:/])gpu(.*)$")
		if sep and (rest == "" or string.sub(rest, 1, 1) == ":") then
			local n = string.match(rest, ":(%d+)$") or "1"
			entry = "gres" .. sep .. "shard:" .. n
			found = true
		end
		table.insert(out, entry)
	end
	if not found then
		return nil
	end
	return table.concat(out, ",")
end

function slurm_job_submit(job_desc, part_list, submit_uid)
	if not wants_krex(job_desc) then
		return slurm.SUCCESS
	end
	local tres = job_desc.tres_per_node or ""
	local shards = gpus_to_shards(tres)
	if shards then
		job_desc.tres_per_node = shards
		slurm.log_info("krex: job of uid %u: %s becomes %s", submit_uid, tres, shards)
	elseif not asks_gpu(job_desc) then
		local sep = string.match(tres, "^gres([:/])")
		if sep then
			job_desc.tres_per_node = tres .. ",gres" .. sep .. SHARE
		else
			job_desc.gres = SHARE
		end
		slurm.log_info("krex: job of uid %u gets %s: %s", submit_uid, SHARE, job_desc.tres_per_node or "")
	end
	return slurm.SUCCESS
end

function slurm_job_modify(job_desc, job_rec, part_list, modify_uid)
	return slurm.SUCCESS
end

slurm.log_info("krex: job_submit.lua loaded")
return slurm.SUCCESS
