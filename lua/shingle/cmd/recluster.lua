--- shingle recluster OUTDIR: phase 4 again with another policy, from the
-- files a cluster run kept (no sketching, no sorting).
local pipeline = require "shingle.pipeline"
local common = require "shingle.cmd.common"

local M = {}

function M.configure(parser)
  local c = parser:command("recluster", "Redo the final phase of a cluster run with another policy or threshold.")
  c:argument("dir", "The output directory of a `shingle cluster` run.")
  -- no defaults: an option not given keeps the run's value
  common.decision_options(c, { keep = true })
  common.file_format_option(c, "clusters and pairs", "a row a cluster member, a row a pair", { keep = true })
  c:flag("-q --quiet", "No progress or warnings on stderr.")
end

function M.run(a)
  local over = { policy = a.policy, threshold = a.threshold, quiet = a.quiet, candidate = a.candidate,
    output_format = a.output_format }
  if a.verify == "exact" then over.verify = true elseif a.verify == "none" then over.verify = false end
  local p, err = pipeline.load(a.dir, over)
  if not p then return common.fail_run(err, "recluster") end
  local ok, derr = p:rerun()
  if not ok then return common.fail_run(derr, "recluster") end
  common.print_cluster_summary(p, p:summary())
  return 0
end

return M
