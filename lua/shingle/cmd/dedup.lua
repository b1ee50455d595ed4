--- shingle dedup INPUT... -o OUTDIR: keep one document per cluster of
-- near-duplicates and write the kept documents in the format they came in,
-- with a map of every removed document to the one kept (shingle.dedup).
local common = require "shingle.cmd.common"
local dedup = require "shingle.dedup"

local M = {}

function M.configure(parser)
  local c = parser:command("dedup", "Remove near-duplicates: keep one document per cluster, write the kept ones and a map "
    .. "of the removed ones.")
  c:argument("inputs", "Directories, files, JSON Lines, WARC, mbox archives, or - for standard input; any of them gzip or "
    .. "zstd compressed."):args("+")
  c:option("-o --output", "Output directory: the kept documents, removed.jsonl, summary.json, the cluster run in run/.")
    :count(1)
  c:option("--keep", "Which document of a cluster to keep: first (in input order), longest (most tokens) or newest "
    .. "(latest date: the date field, WARC-Date, the mbox date, a file's modification time).", "first")
    :choices({ "first", "longest", "newest" })
  c:option("--files", "Files of directories: list them in kept.txt, or also copy, link (hard links) or symlink them "
    .. "into OUTDIR/files/.", "list"):choices({ "list", "copy", "link", "symlink" })
  common.file_format_option(c, "removed.jsonl", "a row a removed document")
  common.input_options(c)
  common.shingler_options(c)
  common.resource_options(c)
  c:option("--max-df", "Drop shingles shared by more documents than this (the paper: 1000).", "1000"):convert(tonumber)
  common.decision_options(c, { threshold = dedup.defaults.threshold })
  common.feature_options(c)
end

--- The dedup configuration from parsed arguments, or nil, message.
function M.config(a)
  local res, err = common.resource_config(a)
  if not res then return nil, err end
  local cfg = { outdir = a.output, keep = a.keep, files = a.files, max_df = a.max_df, policy = a.policy,
    threshold = a.threshold, verify = a.verify ~= "none", candidate = a.candidate, canon = a.rules, extractor = a.extractor,
    on_error = a.on_error, output_format = a.output_format }
  for _, part in ipairs({ res, common.input_config(a), common.shingler_config(a) }) do
    for k, v in pairs(part) do cfg[k] = v end
  end
  return cfg
end

function M.run(a)
  local cfg, err = M.config(a)
  if not cfg then return common.fail(2, err) end
  local ok, d = pcall(dedup.new, cfg)
  if not ok then return common.fail(2, common.api_message(d)) end
  local sum, rerr = d:run(a.inputs)
  if not sum then return common.fail_run(rerr, a.command) end
  local rel = sum.removed_by_relation
  io.stdout:write(("documents %d (skipped %d): kept %d, removed %d (%d exact, %d lexically equal, %d shingle-equal, "
    .. "%d similar) in %d clusters\n"):format(sum.documents, sum.skipped, sum.kept, sum.removed, rel.exact or 0,
    rel.lexical or 0, rel.shingle or 0, rel.similar or 0, sum.clusters))
  local names = {}
  for name in pairs(sum.outputs) do names[#names + 1] = name end
  table.sort(names)
  for _, name in ipairs(names) do io.stdout:write(("  %s/%s: %d kept\n"):format(a.output, name, sum.outputs[name])) end
  io.stdout:write(("  %s/removed.jsonl: %d removed -> kept, with their resemblance\n"):format(a.output, sum.removed))
  return 0
end

return M
