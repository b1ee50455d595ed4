--- shingle report OUT [-o report.html] | --index DB: one self-contained HTML
-- page with plots for a cluster or collections run, or an index's sweeps.
local common = require "shingle.cmd.common"
local report = require "shingle.report"

local M = {}

function M.configure(parser)
  local c = parser:command("report", "Write one self-contained HTML page with plots for a cluster or collections "
    .. "run (OUT), or for an index and its sweeps (--index DB).")
  c:argument("out", "The output directory of shingle cluster or shingle collections."):args("?")
  c:option("--index", "An index: report its sweeps instead.")
  c:option("-o --output", "The HTML file to write (default: OUT/report.html, or DB.report.html beside the index).")
  c:option("--top", "Largest clusters shown with their members.", "10"):convert(tonumber)
  c:option("--sample", "Mid-size clusters sampled.", "10"):convert(tonumber)
  c:option("--members", "Members listed per cluster.", "25"):convert(tonumber)
  c:option("--pairs", "Pairs of documents shown side by side.", "3"):convert(tonumber)
  c:option("--lost", "Rows of the lost-and-found table (--index).", "50"):convert(tonumber)
  c:option("--sweeps", "The latest sweeps compared with the one before each (--index).", "24"):convert(tonumber)
  c:option("--seed", "Seed of the samples.", "1"):convert(tonumber)
  c:option("--input", "An input of the cluster run (repeat for each, in the run's order): pairs of documents "
    .. "that are not local files are read from there to be shown side by side."):count("*")
  c:flag("-q --quiet", "Print nothing but errors.")
end

local function default_output(a)
  if a.index then return (a.index:gsub("/+$", "")) .. ".report.html" end
  return (a.out:gsub("/+$", "")) .. "/report.html"
end

function M.run(a)
  if (a.out == nil) == (a.index == nil) then
    return common.fail(2, "report needs either OUT (a cluster or collections output directory) or --index DB")
  end
  for _, k in ipairs({ "top", "sample", "members", "pairs", "lost", "sweeps" }) do
    if not a[k] or a[k] < 0 or a[k] ~= math.floor(a[k]) then
      io.stderr:write(("shingle: --%s must be a whole number of at least 0\n"):format(k))
      return 2
    end
  end
  local core = require "shingle.core"
  local t0 = core.now()
  local page, err = report.render(a.index or a.out, { index = a.index and true or nil, top = a.top, sample = a.sample,
    members = a.members, pairs = a.pairs, lost = a.lost, sweeps = a.sweeps, seed = a.seed, inputs = #a.input > 0 and a.input or nil,
    now = os.date("!%Y-%m-%d %H:%M UTC") })
  if not page then return common.fail(1, err) end
  local out = a.output or default_output(a)
  local ok, werr = report.write(out, page)
  if not ok then return common.fail(1, werr) end
  if not a.quiet then
    io.stdout:write(("wrote %s (%.1f KiB) in %.2f s\n"):format(out, #page / 1024, core.now() - t0))
  end
  return 0
end

return M
