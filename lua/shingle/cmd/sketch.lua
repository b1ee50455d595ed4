--- shingle sketch INPUT... -o FILE: sketch a corpus once into a sketch file
-- (docs/formats.md), for scripts that run many experiments on it
-- (shingle.sketches, shingle.lsh); shingle sketch --info FILE describes one.
local common = require "shingle.cmd.common"

local M = {}

function M.configure(parser)
  local c = parser:command("sketch", "Sketch documents into a sketch file, or describe one (--info).")
  c:argument("inputs", "Directories, files, JSON Lines, WARC, mbox, or - for standard input (compressed or not); "
    .. "with --info, sketch files."):args("+")
  c:option("-o --output", "The sketch file to write.")
  c:flag("--info", "Describe sketch files: parameters, number of sketches, first keys.")
  common.input_options(c)
  common.shingler_options(c)
  common.resource_options(c, { "threads", "max_bytes" })
  common.feature_options(c)
end

local function info(path)
  local sketches = require "shingle.sketches"
  local r, err = sketches.open(path)
  if not r then return nil, err end
  local p = r:params()
  io.stdout:write(path, ":\n")
  if p then
    local q = p:params()
    io.stdout:write(("  %s sketches, w = %d, k = %d, option %s, s = %d, m = %s, seed %s\n"):format(q.kind, q.w, q.k,
      q.option, q.s, tostring(q.m), require("shingle").tohex(q.seed)))
  end
  local n, first = 0, {}
  while true do
    local s, k = r:read()
    if s == nil then
      if k ~= nil then return nil, k end
      break
    end
    n = n + 1
    if n <= 3 then first[#first + 1] = tostring(k) end
  end
  io.stdout:write(("  %d sketches%s\n"):format(n, #first > 0 and (", first keys: " .. table.concat(first, ", ")) or ""))
  return true
end

function M.run(a)
  if a.info then
    for _, path in ipairs(a.inputs) do
      local ok, err = info(path)
      if not ok then return common.fail(1, err) end
    end
    return 0
  end
  if not a.output then return common.fail(2, "sketch needs -o FILE (or --info to describe sketch files)") end
  local res, err = common.resource_config(a)
  if not res then return common.fail(2, err) end
  local cfg = common.shingler_config(a, { canon = a.rules, extractor = a.extractor, on_error = a.on_error })
  for _, part in ipairs({ res, common.input_config(a) }) do
    for k, v in pairs(part) do cfg[k] = v end
  end
  cfg.warn = function(msg) if not a.quiet then io.stderr:write("shingle: ", msg, "\n") end end
  local ok, st, serr = pcall(require("shingle.sketches").sketch, a.inputs, a.output, cfg)
  if not ok then return common.fail(2, common.api_message(st)) end
  if not st then return common.fail(1, serr) end
  io.stdout:write(("%s: %d sketches of %d documents (%d skipped)\n"):format(a.output, st.sketched, st.documents, st.skipped))
  return 0
end

return M
