--- shingle cluster INPUT... -o OUTDIR: clusters of syntactically similar
-- documents (Broder et al. 1997, "The clustering algorithm").
local pipeline = require "shingle.pipeline"

local M = {}

local function size(s)
  local n, u = tostring(s):match("^(%d+%.?%d*)%s*([kKmMgGtT]?)[bB]?$")
  if not n then return nil, ("'%s' is not a size; use e.g. 512M or 4G"):format(s) end
  local mult = ({ [""] = 1, k = 1024, m = 1024 ^ 2, g = 1024 ^ 3, t = 1024 ^ 4 })[u:lower()]
  return math.floor(tonumber(n) * mult)
end
M.size = size

function M.decision_options(c)
  c:option("--policy", "Link a pair when its resemblance, containment (either direction), either or both reach the threshold.",
    "resemblance"):choices({ "resemblance", "containment", "either", "both" })
  c:option("-t --threshold", "Threshold for the policy (the paper: 0.5).", "0.5"):convert(tonumber)
  c:option("--verify", "exact: recompute every candidate pair from full shingle sets (default); none: decide on estimates.")
    :choices({ "none", "exact" })
  c:option("--candidate", "With --verify exact: the estimated score a pair needs to be verified (default: threshold - 0.2).")
    :convert(tonumber)
end

function M.configure(parser)
  local c = parser:command("cluster", "Cluster a collection of documents by resemblance (the paper's four phases).")
  c:argument("inputs", "Directories, files, JSON Lines (.jsonl), WARC (.warc, .warc.gz), or - for standard input."):args("+")
  c:option("-o --output", "Output directory."):count(1)
  c:option("--format", "Input format (default: by name).", "auto"):choices({ "auto", "dir", "list", "jsonl", "warc", "file" })
  c:option("--text-field", "JSON Lines: the field with the text.", "text")
  c:option("--url-field", "JSON Lines: the field with the URL.", "url")
  c:option("--id-field", "JSON Lines: the field with the id (used when there is no URL).", "id")
  c:option("--date-field", "JSON Lines: the field with the date.", "date")
  c:option("--method", "shingles (the paper's phases), supershingle, lsh or greedy.", "shingles")
    :choices({ "shingles", "supershingle", "lsh", "greedy" })
  c:option("-w --width", "Shingle width in tokens.", "10"):convert(tonumber)
  c:option("--sketch", "Sketch kind: mod (the paper), min, minmod or class.", "mod"):choices({ "mod", "min", "minmod", "class" })
  c:option("-m --modulus", "MOD_m modulus (the paper: 25).", "25"):convert(tonumber)
  c:option("-s --size", "MIN_s sample size.", "200"):convert(tonumber)
  c:option("--floor", "MOD_m: shorter documents use a smaller modulus of m's chain to keep about this many values; 0: plain MOD_m.",
    "8"):convert(tonumber)
  c:option("-k --degree", "Fingerprint degree (64; 40 as the paper).", "64"):convert(tonumber)
  c:option("--memory", "Memory budget for the external sorts, e.g. 512M, 1G.", "1G")
  c:option("--temp-dir", "Directory for sort runs (default: the output directory).")
  c:option("--threads", "Sketching threads (default: all cores)."):convert(tonumber)
  c:option("--max-df", "Drop shingles shared by more documents than this (the paper: 1000).", "1000"):convert(tonumber)
  c:option("--max-bytes", "Skip documents larger than this.", "64M")
  M.decision_options(c)
  c:option("--bands", "LSH: bands (default: chosen for the threshold).")
    :convert(tonumber)
  c:option("--rows", "LSH: rows per band."):convert(tonumber)
  c:flag("--meta", "Super shingles: Broder 1997's meta-sketch instead of 6 x 14 (2 of 6).")
  c:flag("--no-check", "Super shingles and LSH: link every candidate without checking it with the estimator.")
  c:option("--rules", "Canonicalization rule set: html, text, code, tweet, or a Lua file returning one.")
  c:option("--extractor", "Feature extractor for objects that are not text: midi, code, fasta, or a Lua file.")
  c:flag("--html", "Treat every input as HTML (default: by name and content).")
  c:flag("--text", "Treat every input as plain text.")
  c:flag("--fold", "Fold Unicode (NFKC, case fold, strip accents).")
  c:flag("--strict", "Stop at the first unreadable document or broken record.")
  c:flag("--resume", "Skip phase 1 if a finished one over the same inputs and options is in the output directory.")
  c:flag("-q --quiet", "No progress or warnings on stderr.")
  c:flag("--mpi", "Run across the ranks of an MPI job: mpirun -np N shingle cluster ... --mpi (docs/scale-out.md).")
  c:flag("--mpi-collect", "With --mpi: also gather sketches.bin, shingles.bin and pairs.bin into the output directory, "
    .. "so that recluster can start from it.")
  c:option("--index", "Also add the documents to this index (made if absent), with the same parameters and policy.")
  c:option("--sweep", "With --index: the sweep name (default: today's date).")
end

function M.config(a)
  local memory, err = size(a.memory)
  if not memory then return nil, "--memory: " .. err end
  local max_bytes, err2 = size(a.max_bytes)
  if not max_bytes then return nil, "--max-bytes: " .. err2 end
  return {
    outdir = a.output, format = a.format, method = a.method, w = a.width, sketch = a.sketch, m = a.modulus, s = a.size,
    floor = a.floor,
    k = a.degree, memory = memory, temp_dir = a.temp_dir, threads = a.threads, max_df = a.max_df, max_bytes = max_bytes,
    policy = a.policy, threshold = a.threshold, verify = a.verify ~= "none", candidate = a.candidate,
    bands = a.bands, rows = a.rows, meta = a.meta, check = not a.no_check, fold = a.fold,
    html = a.html and true or (a.text and false or nil), strict = a.strict, quiet = a.quiet,
    canon = a.rules, extractor = a.extractor, resume = a.resume,
    fields = { text = a.text_field, url = a.url_field, id = a.id_field, date = a.date_field },
  }
end

function M.print_summary(p, sum, out)
  out = out or io.stdout
  out:write(("documents %d (skipped %d)\n"):format(sum.documents or 0, sum.skipped or 0))
  out:write(("identical documents: %d exact, %d lexically equivalent, %d shingle equivalent\n"):format(
    sum.exact_duplicates or 0, sum.lexical_duplicates or 0, sum.shingle_duplicates or 0))
  out:write(("clusters %d with %d documents: %d of identical documents only, %d mixed\n"):format(
    sum.clusters or 0, sum.documents_in_clusters or 0, sum.clusters_of_identical_documents_only or 0, sum.mixed_clusters or 0))
  out:write(("pairs considered %d, linked %d\n\n"):format(sum.pairs_considered or 0, sum.pairs_linked or 0))
  out:write(p:phase_table(), "\n")
end

--- cluster --mpi: every rank runs this; rank 0 prints the summary.
function M.run_mpi(a, cfg)
  if a.index then io.stderr:write("shingle: --index is not available with --mpi: add to the index after the run\n") return 2 end
  if a.resume then io.stderr:write("shingle: --resume is not available with --mpi\n") return 2 end
  cfg.mpi_collect = a.mpi_collect
  local sum, run = require("shingle.dist").run(cfg, a.inputs)
  if not sum then io.stderr:write("shingle: ", run, "\n") return 1 end
  if type(run) == "table" then M.print_summary(run, sum) end
  return 0
end

function M.run(a)
  local cfg, err = M.config(a)
  if not cfg then io.stderr:write("shingle: ", err, "\n") return 2 end
  local ok, p = pcall(pipeline.new, cfg)
  if not ok then io.stderr:write("shingle: ", tostring(p), "\n") return 2 end
  if a.mpi then return M.run_mpi(a, cfg) end
  if a.mpi_collect then io.stderr:write("shingle: --mpi-collect goes with --mpi\n") return 2 end
  local sum, rerr = p:run(a.inputs)
  if not sum then io.stderr:write("shingle: ", rerr, "\n") return 1 end
  M.print_summary(p, sum)
  if a.index then
    local index = require "shingle.index"
    local ix, ierr = index.open(a.index)
    if not ix then io.stderr:write("shingle: ", ierr, "\n") return 1 end
    local st, aerr = ix:add(a.inputs, { sweep = a.sweep or os.date("!%Y-%m-%d"), format = cfg.format, html = cfg.html,
      fields = cfg.fields, threads = cfg.threads, w = cfg.w, sketch = cfg.sketch, m = cfg.m, s = cfg.s,
      policy = cfg.policy, threshold = cfg.threshold, max_df = 0, canon = cfg.canon, extractor = cfg.extractor })
    if not st then io.stderr:write("shingle: ", aerr, "\n") return 1 end
    io.stdout:write(("\nindex %s: added %d documents\n"):format(a.index, st.documents))
  end
  return 0
end

return M
