--- shingle cluster INPUT... -o OUTDIR: clusters of syntactically similar
-- documents (Broder et al. 1997, "The clustering algorithm").
local pipeline = require "shingle.pipeline"
local common = require "shingle.cmd.common"

local M = {}

function M.configure(parser)
  local c = parser:command("cluster", "Cluster a collection of documents by resemblance (the paper's four phases).")
  c:argument("inputs", "Directories, files, JSON Lines (.jsonl), WARC (.warc, .warc.gz), mbox archives, or - for "
    .. "standard input; any of them gzip or zstd compressed."):args("+")
  c:option("-o --output", "Output directory."):count(1)
  common.file_format_option(c, "clusters and pairs", "a row a cluster member, a row a pair")
  common.input_options(c)
  c:option("--method", "shingles (the paper's phases), supershingle, lsh or greedy.", "shingles")
    :choices({ "shingles", "supershingle", "lsh", "greedy" })
  common.shingler_options(c)
  common.resource_options(c)
  c:option("--max-df", "Drop shingles shared by more documents than this (the paper: 1000).", "1000"):convert(tonumber)
  common.decision_options(c)
  c:flag("--keep-sets", "With --verify exact: keep every document's full shingle set in the output directory (as large "
    .. "as the input, or larger), so that recluster does not read the inputs again.")
  c:option("--bands", "LSH: bands (default: chosen for the threshold).")
    :convert(tonumber)
  c:option("--rows", "LSH: rows per band."):convert(tonumber)
  c:flag("--meta", "Super shingles: Broder 1997's meta-sketch instead of 6 x 14 (2 of 6).")
  c:flag("--no-check", "Super shingles and LSH: link every candidate without checking it with the estimator.")
  common.feature_options(c)
  c:flag("--resume", "Skip phase 1 if a finished one over the same inputs and options is in the output directory.")
  c:flag("--mpi", "Run across the ranks of an MPI job: mpirun -np N shingle cluster ... --mpi (docs/scale-out.md).")
  c:flag("--mpi-collect", "With --mpi: also gather sketches.bin, shingles.bin and pairs.bin into the output directory, "
    .. "so that recluster can start from it.")
  c:option("--mpi-timeout", "With --mpi: end the job when a rank waits this many seconds for the others between two "
    .. "phases (a rank stuck alive; default: no limit).")
    :convert(tonumber)
  c:option("--index", "Also add the documents to this index (made if absent), with the same parameters and policy.")
  c:option("--sweep", "With --index: the sweep name (default: today's date).")
end

--- The pipeline configuration from parsed arguments, or nil, message.
function M.config(a)
  local res, err = common.resource_config(a)
  if not res then return nil, err end
  local cfg = {
    outdir = a.output, method = a.method, max_df = a.max_df,
    policy = a.policy, threshold = a.threshold, verify = a.verify ~= "none", candidate = a.candidate,
    bands = a.bands, rows = a.rows, meta = a.meta, check = not a.no_check,
    canon = a.rules, extractor = a.extractor, resume = a.resume, output_format = a.output_format, on_error = a.on_error,
    keep_sets = a.keep_sets or nil,
  }
  for _, part in ipairs({ res, common.input_config(a), common.shingler_config(a) }) do
    for k, v in pairs(part) do cfg[k] = v end
  end
  return cfg
end

-- the options of a new index made by --index: the run's shingler and policy
local index_keys = { "w", "sketch", "m", "s", "k", "seed", "option", "invalid", "fold", "punctuation", "numbers",
  "policy", "threshold", "canon", "extractor", "format", "html", "fields", "threads", "strict" }

--- cluster --mpi: every rank runs this; rank 0 prints the summary.
function M.run_mpi(a, cfg)
  if a.index then return common.fail(2, "--index is not available with --mpi: add to the index after the run") end
  if a.resume then return common.fail(2, "--resume is not available with --mpi") end
  cfg.mpi_collect, cfg.mpi_timeout = a.mpi_collect, a.mpi_timeout
  local sum, run = require("shingle.dist").run(cfg, a.inputs)
  if not sum then return common.fail(1, run) end
  if type(run) == "table" then common.print_cluster_summary(run, sum) end
  return 0
end

function M.run(a)
  local cfg, err = M.config(a)
  if not cfg then return common.fail(2, err) end
  local ok, p = pcall(pipeline.new, cfg)
  if not ok then return common.fail(2, common.api_message(p)) end
  if a.mpi then return M.run_mpi(a, cfg) end
  if a.mpi_collect or a.mpi_timeout then return common.fail(2, "--mpi-collect and --mpi-timeout go with --mpi") end
  -- --index: keep each document's URL by id, so the index takes the
  -- sketches the run makes instead of sketching every document again
  local urls, nurls = {}, 0
  if a.index then
    p.on_batch = function(docs, _, first)
      for i, d in ipairs(docs) do urls[first + i - 1] = d.url ~= nil and tostring(d.url) or nil end
      nurls = first + #docs - 1
    end
  end
  local sum, rerr = p:run(a.inputs)
  if not sum then return common.fail_run(rerr, a.command) end
  common.print_cluster_summary(p, sum)
  if a.index then
    local index = require "shingle.index"
    local ix, ierr = index.open(a.index)
    if not ix then return common.fail(1, ierr) end
    local o = { sweep = a.sweep or os.date("!%Y-%m-%d"), max_df = 0 }
    for _, k in ipairs(index_keys) do o[k] = cfg[k] end
    local st, aerr
    if nurls > 0 and nurls == p.stats.documents then
      st, aerr = ix:add_run(cfg.outdir, urls, nurls, o)
    else
      -- phase 1 was not run here (--resume reused it): sketch the inputs
      st, aerr = ix:add(a.inputs, o)
    end
    if not st then return common.fail(1, aerr) end
    io.stdout:write(("\nindex %s: added %d documents\n"):format(a.index, st.documents))
  end
  return 0
end

return M
