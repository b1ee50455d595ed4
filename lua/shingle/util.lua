--- Small helpers the orchestration modules share (shingle.pipeline,
-- shingle.collections): atomic writes, making directories, options over
-- defaults, a log for warnings, the phase table. Nothing here keeps state
-- between calls.
local M = {}

--- Write path through fn(f) atomically: into path .. ".tmp", then renamed
-- over path, so a reader sees the old file or the whole new one, never a
-- part. Returns true, or nil and a message naming the file.
--- The reason in an error of io.open or os.rename, without the path it
-- starts with ("x.txt: No such file or directory" -> "No such file or
-- directory"), for a message that names the path once.
function M.reason(err, path)
  err = tostring(err)
  if path and err:sub(1, #path + 2) == path .. ": " then return err:sub(#path + 3) end
  return err
end

function M.atomic_write(path, fn)
  local tmp = path .. ".tmp"
  local f, err = io.open(tmp, "wb")
  if not f then return nil, ("cannot write %s: %s"):format(tmp, M.reason(err, tmp)) end
  local ok, werr = pcall(fn, f)
  local cok, cerr = f:close()
  if not ok or not cok then
    os.remove(tmp)
    return nil, ("cannot write %s: %s"):format(path, tostring(ok and cerr or werr))
  end
  local rok, rerr = os.rename(tmp, path)
  if not rok then return nil, ("cannot rename %s: %s"):format(tmp, M.reason(rerr, tmp)) end
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

--- Remove a file, or a directory and everything below it (symbolic links
-- are removed, never followed). True, or nil and a message naming the path.
function M.remove_tree(path)
  local lfs = require "lfs"
  local mode = lfs.symlinkattributes(path, "mode")
  if not mode then return true end
  if mode == "directory" then
    local ok, names = pcall(function()
      local t = {}
      for name in lfs.dir(path) do if name ~= "." and name ~= ".." then t[#t + 1] = name end end
      return t
    end)
    if not ok then return nil, ("cannot remove %s: %s"):format(path, tostring(names)) end
    for _, name in ipairs(names) do
      local rok, rerr = M.remove_tree(path .. "/" .. name)
      if not rok then return nil, rerr end
    end
    local rok, rerr = lfs.rmdir(path)
    if not rok then return nil, ("cannot remove %s: %s"):format(path, rerr) end
    return true
  end
  local rok, rerr = os.remove(path)
  if not rok then return nil, ("cannot remove %s: %s"):format(path, rerr) end
  return true
end

-- The parent directory and the name of an output directory, following a
-- symbolic link at OUT to the directory it names (a few levels).
local function output_place(outdir)
  local lfs = require "lfs"
  local path = outdir
  for _ = 1, 8 do
    local d = path:gsub("/+$", "")
    if d == "" then return nil, "the output directory cannot be /" end
    local parent, name = d:match("^(.*)/([^/]+)$")
    if not parent then parent, name = ".", d elseif parent == "" then parent = "/" end
    if name == "." or name == ".." then
      return nil, ("give the output directory by its name, not as '%s' (it is replaced as a whole)"):format(outdir)
    end
    local a = lfs.symlinkattributes(d)
    if not (a and a.mode == "link") then return parent, name end
    local target = a.target or lfs.symlinkattributes(d, "target")
    if not target then return parent, name end
    path = target:sub(1, 1) == "/" and target or (parent .. "/" .. target)
  end
  return nil, ("%s: too many levels of symbolic links"):format(outdir)
end

--- A description of this process for lock files: the command and its arguments.
function M.holder()
  local a = rawget(_G, "arg")
  if type(a) ~= "table" then return "a Lua program" end
  local parts = {}
  for i = 1, #a do parts[i] = tostring(a[i]) end
  local s = "shingle " .. table.concat(parts, " ")
  return #s > 200 and (s:sub(1, 197) .. "...") or s
end

local Output = {}
Output.__index = Output

--- An output directory that appears whole (docs/robustness.md, "Outputs").
-- OUT always holds one complete result, the old one or the new one:
--   local o = assert(util.output(outdir, { kind = "cluster run", marker = "run.json" }))
--   ... write everything into o.dir ...   -- a fresh directory beside OUT
--   o:commit()   -- or o:abort() after a failure (OUT is left as it was)
-- It takes the lock PARENT/.NAME.lock (SH_EBUSY naming the holder's pid, host
-- and start time when another run has it), finishes or undoes a swap an
-- earlier run was killed in, and refuses an OUT that is neither empty nor an
-- earlier output of the same kind (holding opts.marker), so a mistyped -o
-- never replaces someone's directory. The marker is the file the run writes
-- last; a directory without it is an unfinished run. opts: kind, marker,
-- keep (true: hard-link every file of the current OUT except the marker into
-- o.dir, for a run that redoes only the last steps; or a list of names),
-- keep_unfinished (a list of names: files of an unfinished run, killed or
-- failed, that are kept for this one to resume from; without it an
-- unfinished run is removed), must_exist (OUT must hold a finished output), holder (text for the lock
-- file; util.holder() by default), log (a function of a message about a
-- recovered swap). Returns the output, or nil, message.
function M.output(outdir, opts)
  local lfs = require "lfs"
  local core = require "shingle.core"
  opts = opts or {}
  local kind, marker = opts.kind or "output", opts.marker or "run.json"
  local parent, name = output_place(outdir)
  if not parent then return nil, name end
  local ok, err = M.mkdir_p(parent)
  if not ok then return nil, err end
  local base = parent .. "/." .. name
  local lock, lerr = core.lock(base .. ".lock", outdir, opts.holder or M.holder())
  if not lock then return nil, lerr end
  local o = setmetatable({ outdir = outdir, path = parent .. "/" .. name, parent = parent, dir = base .. ".new",
    old = base .. ".old", lock = lock, marker = marker, kind = kind }, Output)
  local function fail(msg) lock:release(); return nil, msg end
  ok, err = o:recover(opts.log, opts.keep_unfinished)
  if not ok then return fail(err) end
  local mode = lfs.attributes(o.path, "mode")
  if mode and mode ~= "directory" then return fail(("%s exists and is not a directory"):format(outdir)) end
  local finished = mode and lfs.attributes(o.path .. "/" .. marker, "mode") == "file"
  if opts.must_exist and not finished then
    return fail(("%s is not a finished %s (no %s)"):format(outdir, kind, marker))
  end
  if mode and not finished then
    for entry in lfs.dir(o.path) do
      if entry ~= "." and entry ~= ".." then
        return fail(("%s is not empty and holds no finished %s (no %s; it has %s): a run replaces its output "
          .. "directory as a whole, so choose a new or empty one, or remove it"):format(outdir, kind, marker, entry))
      end
    end
  end
  if lfs.attributes(o.dir, "mode") ~= "directory" then
    local mok, merr = lfs.mkdir(o.dir)
    if not mok then return fail(("cannot create %s: %s"):format(o.dir, merr)) end
  end
  if opts.keep and finished then
    local names = opts.keep
    if names == true then
      names = {}
      for entry in lfs.dir(o.path) do
        if entry ~= marker and lfs.symlinkattributes(o.path .. "/" .. entry, "mode") == "file" then names[#names + 1] = entry end
      end
    end
    for _, n in ipairs(names) do
      local from, to = o.path .. "/" .. n, o.dir .. "/" .. n
      if n ~= marker and lfs.attributes(from, "mode") == "file" and not lfs.attributes(to, "mode") then
        -- hard links: every writer replaces a file by rename, never in place
        local lok = lfs.link(from, to)
        if not lok then
          local cok, cerr = M.copy_file(from, to)
          if not cok then M.remove_tree(o.dir); return fail(cerr) end
        end
      end
    end
  end
  return o
end

--- Finish or undo a swap of outdir that a killed run left (under its lock):
-- true, or nil, message (EBUSY naming the holder while a run is writing it).
-- opts: kind, marker, log (as for M.output).
function M.settle(outdir, opts)
  local lfs = require "lfs"
  local parent, name = output_place(outdir)
  if not parent then return nil, name end
  local base = parent .. "/." .. name
  if not lfs.attributes(base .. ".new", "mode") and not lfs.attributes(base .. ".old", "mode") then return true end
  local lock, lerr = require("shingle.core").lock(base .. ".lock", outdir, opts.holder or M.holder())
  if not lock then return nil, lerr end
  local o = setmetatable({ outdir = outdir, path = parent .. "/" .. name, parent = parent, dir = base .. ".new",
    old = base .. ".old", lock = lock, marker = opts.marker or "run.json" }, Output)
  local ok, err = o:recover(opts.log)
  lock:release()
  return ok, err
end

--- Copy a file (for filesystems without hard links).
function M.copy_file(from, to)
  local src, err = io.open(from, "rb")
  if not src then return nil, ("cannot read %s: %s"):format(from, M.reason(err, from)) end
  return M.atomic_write(to, function(f)
    while true do
      local b = src:read(1048576)
      if not b then break end
      assert(f:write(b))
    end
    src:close()
  end)
end

--- Finish or undo a swap an earlier run was killed in (the lock is held):
-- .NAME.old beside OUT is the previous output during a swap, .NAME.new the
-- new one (complete when it holds the marker) or an unfinished run.
function Output:recover(log, keep_unfinished)
  local lfs = require "lfs"
  local function exists(p) return lfs.symlinkattributes(p, "mode") ~= nil end
  local complete = exists(self.dir .. "/" .. self.marker)
  if not exists(self.path) and (exists(self.old) or complete) then
    local from = complete and self.dir or self.old
    local ok, err = os.rename(from, self.path)
    if not ok then return nil, ("%s: cannot finish an interrupted swap (%s)"):format(self.outdir, err) end
    if log then
      log(("%s: %s"):format(self.outdir, complete and "finished the swap of a completed run that was interrupted"
        or "restored the previous output after an interrupted swap"))
    end
  end
  local ok, err = M.remove_tree(self.old)
  if not ok then return nil, err end
  if keep_unfinished and lfs.attributes(self.dir, "mode") == "directory" then
    -- an unfinished run whose first steps a resumed run may reuse: keep those files only
    local wanted = {}
    for _, n in ipairs(keep_unfinished) do wanted[n] = true end
    for entry in lfs.dir(self.dir) do
      if entry ~= "." and entry ~= ".." and not wanted[entry] then
        ok, err = M.remove_tree(self.dir .. "/" .. entry)
        if not ok then return nil, err end
      end
    end
    return true
  end
  return M.remove_tree(self.dir)
end

--- Make the new output durable and put it in place of OUT; releases the
-- lock. True, or nil, message (OUT is then as it was before the run).
function Output:commit()
  local core = require "shingle.core"
  local lfs = require "lfs"
  local function fail(msg) self:abort(); return nil, msg end
  if lfs.attributes(self.dir .. "/" .. self.marker, "mode") ~= "file" then
    return fail(("%s: the %s wrote no %s, so it is not complete"):format(self.outdir, self.kind, self.marker))
  end
  local ok, err = core.sync_tree(self.dir)
  if not ok then return fail(err) end
  local had = lfs.symlinkattributes(self.path, "mode") ~= nil
  if had then
    ok, err = os.rename(self.path, self.old)
    if not ok then return fail(("cannot move %s aside: %s"):format(self.path, err)) end
  end
  ok, err = os.rename(self.dir, self.path)
  if not ok then
    if had then os.rename(self.old, self.path) end
    return fail(("cannot rename %s to %s: %s"):format(self.dir, self.path, err))
  end
  core.sync(self.parent)
  if had then M.remove_tree(self.old) end
  self.lock:release()
  return true
end

--- A message about a file of o.dir as the user knows it: naming the
-- output directory rather than the directory beside it the run wrote into.
function M.unstage(msg, o)
  if type(msg) ~= "string" then return msg end
  local i, j = msg:find(o.dir, 1, true)
  while i do
    msg = msg:sub(1, i - 1) .. o.outdir .. msg:sub(j + 1)
    i, j = msg:find(o.dir, i + #o.outdir, true)
  end
  return msg
end

--- Abandon the new output: OUT stays as it was; releases the lock.
function Output:abort()
  M.remove_tree(self.dir)
  self.lock:release()
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

--- The keys of a table, sorted, as "a, b, c" (for messages that say what would work).
function M.sorted_keys(t)
  local out = {}
  for k in pairs(t) do out[#out + 1] = tostring(k) end
  table.sort(out)
  return table.concat(out, ", ")
end

--- The log of a run: cfg.log if given, else standard error unless cfg.quiet.
function M.logger(cfg)
  -- through shingle.progress, so that a warning never lands inside a bar's line
  return cfg.log or function(msg) if not cfg.quiet then require("shingle.progress").message(msg) end end
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
