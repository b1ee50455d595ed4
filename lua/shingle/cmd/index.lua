--- shingle index add DB INPUT... --sweep DATE: add a crawl sweep to an index
-- (made on first use), linking its documents into the existing clusters.
local index = require "shingle.index"
local common = require "shingle.cmd.common"
local progress = require "shingle.progress"

local M = {}

function M.configure(parser)
  local c = parser:command("index", "Build and update a persistent index (LMDB).")
  c:command_target("index_command")
  local add = c:command("add", "Add documents as one crawl sweep, all or nothing.")
  add:argument("db", "The index directory (made if absent).")
  add:argument("inputs", "Directories, files, JSON Lines, WARC, or - for standard input."):args("+")
  add:option("--sweep", "Name of the sweep, e.g. its crawl date (sweeps sort by name)."):count(1)
  common.input_options(add)
  common.resource_options(add, { "threads" })
  common.decision_options(add, { index = true })
  common.shingler_options(add, { defaults = false, prefix = "A new index: ", index = true })
  common.feature_options(add, { prefix = "A new index: " })
  local info = c:command("info", "Show an index's parameters and sweeps.")
  info:argument("db", "The index directory.")
  local check = c:command("check", "Read every record of an index and report damage (in a child process).")
  check:argument("db", "The index directory.")
  local merge = c:command("merge", "Merge the postings and fingerprints of the adds since the last merge (the delta tables) "
    .. "into the main tables now; adds do it once they hold a quarter as many, and until then a lookup without the "
    .. "postings cache searches both.")
  merge:argument("db", "The index directory.")
end

-- shingle index check DB: the walk runs in a child process (core/ixcheck.c),
-- so LMDB stopping on a damaged page is a line of the report.
local function check(a)
  local core = require "shingle.core"
  local lfs = require "lfs"
  if lfs.attributes(a.db, "mode") ~= "directory" then
    io.stderr:write("shingle: ", a.db, ": no index there\n")
    return 1
  end
  local r, err = core.index_check(a.db)
  if not r then return common.fail(1, err) end
  local out = io.stdout
  for _, l in ipairs(r.lines) do
    if l.kind == "table" then
      local name, n = l.text:match("^(.-) (%d+)$")
      out:write(("  %-12s %12s records\n"):format(name or l.text, n or "?"))
    elseif l.kind == "lmdb" then
      out:write("  LMDB: ", l.text, "\n")
    else
      out:write("  ", l.kind == "crash" and "stopped: " or "problem: ", l.text, "\n")
    end
  end
  if r.problems == 0 then
    out:write(("%s reads whole: every table read, no problem found\n"):format(a.db))
    return 0
  end
  out:write(("%s is damaged: %d problem%s. Keep a copy of it as it is; then recover what can be read with\n"
    .. "  mdb_copy -c %s NEW   (lmdb-utils), and check NEW,\n"
    .. "or restore a backup, or rebuild it from the inputs of its sweeps with shingle index add\n"
    .. "(docs/robustness.md, \"Index\")\n"):format(a.db, r.problems, r.problems == 1 and "" or "s", a.db))
  return 1
end

function M.run(a)
  if a.index_command == "check" then return check(a) end
  if a.index_command == "merge" then
    local lfs = require "lfs"
    if lfs.attributes(a.db, "mode") ~= "directory" then return common.fail(1, a.db .. ": no index there") end
    local ix, err = index.open(a.db)
    if not ix then return common.fail(1, err) end
    local r, merr = ix:merge()
    ix:close()
    if not r then return common.fail(1, merr) end
    io.stdout:write(("%s: merged %d postings and %d fingerprint entries\n"):format(a.db, r.postings, r.fingerprints))
    return 0
  end
  if a.index_command == "info" then
    local ix, err = index.open(a.db, { readonly = true })
    if not ix then return common.fail(1, err) end
    local c = ix.config
    if not c then
      io.stdout:write(("%s: empty (no sweep added yet)\n"):format(a.db))
      return 0
    end
    -- numbers read back from JSON are floats: whole ones are shown as integers
    local function v(x) return type(x) == "number" and x == math.floor(x) and ("%d"):format(x) or tostring(x) end
    io.stdout:write(("%s: %d documents\n"):format(a.db, ix:count()))
    io.stdout:write(("w = %s, sketch = %s, m = %s, floor = %s, s = %s, policy = %s >= %s, max_df = %s\n"):format(v(c.w),
      v(c.sketch), v(c.m), v(c.floor), v(c.s), v(c.policy), v(c.threshold), v(ix:query_max_df())))
    for _, s in ipairs(ix:sweeps()) do io.stdout:write(("sweep %-24s %d documents\n"):format(s.name, s.documents)) end
    return 0
  end
  -- a missing input is refused before the index is made or opened for writing
  local ok, ierr = require("shingle.input").check_exist(a.inputs)
  if not ok then return common.fail(1, ierr) end
  local existed = require("lfs").attributes(a.db, "mode") ~= nil
  local ix, err = index.open(a.db)
  if not ix then return common.fail(1, err) end
  local bar = progress.new("indexing", nil, "docs", a.quiet)
  local o = { sweep = a.sweep, threads = a.threads, policy = a.policy, threshold = a.threshold, canon = a.rules,
    extractor = a.extractor, on_error = a.on_error, progress = function(n) bar:update(n) end }
  for _, part in ipairs({ common.input_config(a), common.shingler_config(a) }) do
    for k, v in pairs(part) do o[k] = v end
  end
  local st, aerr = ix:add(a.inputs, o)
  local t = bar:done()
  if not st then
    io.stderr:write("shingle: ", aerr, "\n")
    if not existed and not ix.config then
      -- a first add that failed leaves no empty index behind
      ix:close()
      require("shingle.util").remove_tree(a.db)
    end
    return 1
  end
  if not a.quiet then for _, e in ipairs(st.errors) do io.stderr:write("shingle: ", e, "\n") end end
  io.stdout:write(("added %d documents to sweep %s in %.1f s (%.0f docs/s): %d identical to earlier ones, %d pairs linked, %d skipped\n")
    :format(st.documents, a.sweep, t, st.documents / math.max(t, 1e-9), st.identical, st.linked, st.skipped))
  if (st.already or 0) > 0 then
    io.stdout:write(("%d documents were already in sweep %s with the same content (not added again)\n"):format(st.already, a.sweep))
  end
  return 0
end

return M
