--- Small helpers the orchestration modules share (shingle.pipeline,
-- shingle.collections): atomic writes, making directories, options over
-- defaults, a log for warnings, the phase table. Nothing here keeps state
-- between calls.
local M = {}

--- Write path through fn(f) atomically: into path .. ".tmp", then renamed
-- over path, so a reader sees the old file or the whole new one, never a
-- part. Returns true, or nil and a message naming the file.
function M.atomic_write(path, fn)
  local tmp = path .. ".tmp"
  local f, err = io.open(tmp, "wb")
  if not f then return nil, ("cannot write %s: %s"):format(tmp, err) end
  local ok, werr = pcall(fn, f)
  local cok, cerr = f:close()
  if not ok or not cok then
    os.remove(tmp)
    return nil, ("cannot write %s: %s"):format(path, tostring(ok and cerr or werr))
  end
  local rok, rerr = os.rename(tmp, path)
  if not rok then return nil, ("cannot rename %s: %s"):format(tmp, rerr) end
  return true
end

--- Make a directory and its parents; nil, err naming the one that failed.
function M.mkdir_p(dir)
  local lfs = require "lfs"
  local path = dir:sub(1, 1) == "/" and "/" or ""
  for part in dir:gmatch("[^/]+") do
    path = path .. part
    if not lfs.attributes(path, "mode") then
      local ok, err = lfs.mkdir(path)
      if not ok then return nil, ("cannot create %s: %s"):format(path, err) end
    end
    path = path .. "/"
  end
  return true
end

--- Defaults overlaid with cfg. An unknown option (neither in defaults nor
-- in the set `optional`, the options whose default is nil) or a missing
-- outdir raises at the given stack level, naming it; `what` names the
-- module in the message ("pipeline", "collections").
function M.merge_options(defaults, optional, cfg, what, level)
  local c = {}
  for k, v in pairs(defaults) do c[k] = v end
  for k, v in pairs(cfg or {}) do
    if defaults[k] == nil and not optional[k] then error(("unknown %s option '%s'"):format(what, tostring(k)), level) end
    c[k] = v
  end
  if not c.outdir then error(("%s needs an output directory (outdir)"):format(what), level) end
  return c
end

--- The log of a run: cfg.log if given, else standard error unless cfg.quiet.
function M.logger(cfg)
  return cfg.log or function(msg) if not cfg.quiet then io.stderr:write(msg, "\n") end end
end

--- A phase table: one line per phase of names that has a time, and the
-- total (the "Status" section of Broder et al. reports its phases so).
function M.format_phases(names, times)
  local lines = { ("%-24s %10s"):format("phase", "seconds") }
  local total = 0
  for _, name in ipairs(names) do
    local t = times[name]
    if t then
      lines[#lines + 1] = ("%-24s %10.3f"):format((name:gsub("_", " ")), t)
      total = total + t
    end
  end
  lines[#lines + 1] = ("%-24s %10.3f"):format("total", total)
  return table.concat(lines, "\n")
end

return M
