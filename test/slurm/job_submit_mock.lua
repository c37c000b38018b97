-- SPDX-License-Identifier: BSD-3-Clause
--[[
 job_submit_mock.lua - run contrib/slurm/job_submit.lua's slurm_job_submit()
 on one made-up job, without Slurm, and print the job's tres_per_node.

	lua5.4 job_submit_mock.lua SCRIPT SEP TRES KREX

 SEP: ":" (Slurm 22.05's "gres:NAME:N") or "/" (23.02 and later, "gres/NAME:N").
 TRES: the job's tres_per_node ("-" for none).  KREX: "option" (the SPANK
 option in spank_job_env), "env=VALUE" (KREX_SHARED=VALUE) or "none".

 The job descriptor behaves as job_submit_lua.c's does: fields read and
 written as they are, except "gres", whose setter prefixes each entry with
 "gres" .. SEP (gres_prepend_tres_type()); "environment" answers by name and
 lists nothing, spank_job_env is a table indexed from 0.
--]]
local script, sep, tres, krex = arg[1], arg[2], arg[3], arg[4]

slurm = {
	SUCCESS = 0,
	ERROR = -1,
	log_info = function() end,
	log_error = function() end,
	log_user = function() end,
}

local fields = {}
if tres ~= "-" then
	fields.tres_per_node = tres
end
local env = {}
if krex == "option" then
	fields.spank_job_env = { [0] = "_SLURM_SPANK_OPTION_krex_krex_shared=" }
elseif string.sub(krex, 1, 4) == "env=" then
	env.KREX_SHARED = string.sub(krex, 5)
end
fields.environment = setmetatable({}, { __index = function(_, k) return env[k] end })

local function prepend(s)
	local out = {}
	for entry in string.gmatch(s, "[^,]+") do
		entry = string.gsub(entry, "^gres[:/]", "")
		table.insert(out, "gres" .. sep .. entry)
	end
	return table.concat(out, ",")
end

local job_desc = setmetatable({}, {
	__index = function(_, k)
		if k == "gres" then
			return fields.tres_per_node
		end
		return fields[k]
	end,
	__newindex = function(_, k, v)
		if k == "gres" then
			fields.tres_per_node = prepend(v)
		else
			fields[k] = v
		end
	end,
})

dofile(script)
local rc = slurm_job_submit(job_desc, {}, 1000)
if rc ~= slurm.SUCCESS then
	print("rc=" .. tostring(rc))
	os.exit(1)
end
print(fields.tres_per_node or "-")
