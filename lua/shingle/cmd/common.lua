--- The command-line options the subcommands share, declared once, and the
-- helpers they share. Commands depend on this module, never on each other.
--
-- The shingler's defaults on the command line are shingle.pipeline's (the
-- Lua API that `shingle cluster` calls, and the paper's clustering run):
-- w = 10, MOD_25 sketches (--sketch mod) with floor 20, 64-bit fingerprints,
-- invalid UTF-8 read as Latin-1. Every command that shingles (cluster,
-- compare, explain, index add) takes them from there, so two commands
-- sketch a document alike unless told otherwise; shingle.new{} in Lua has
-- the same defaults (docs/api.md, "One set of options").
local pipeline_defaults = require("shingle.pipeline").defaults

local M = {}

local function default(v) return v ~= nil and tostring(v) or nil end

--- A seed from the command line: a whole number, decimal or 0x-hex (64
-- bits; where Lua integers are not 64-bit, up to 2^53). nil, message
-- naming the option otherwise.
function M.parse_seed(s)
  local core = require "shingle.core"
  s = tostring(s)
  local hex = s:match("^0[xX](%x+)$")
  if hex and #hex <= 16 then
    if core.int64 then
      local v = 0
      for i = 1, #hex do v = v * 16 + tonumber(hex:sub(i, i), 16) end -- wraps like the unsigned value
      return v
    end
    local v = tonumber(hex, 16)
    if v < 2 ^ 53 then return v end
  elseif s:match("^%d+$") then
    local v = math.tointeger and math.tointeger(tonumber(s)) or tonumber(s)
    if v and (core.int64 or v < 2 ^ 53) and tostring(v) == s then return v end
  end
  return nil, ("--seed: '%s' is not a seed; use a whole number, decimal or 0x-hex, of at most 64 bits%s"):format(s,
    core.int64 and "" or " (2^53 under LuaJIT)")
end

-- The command-line names of the Lua API's options, for its messages.
M.cli_names = {
  w = "-w/--width", sketch = "--sketch", m = "-m/--modulus", s = "-s/--size", floor = "--floor", k = "-k/--degree",
  seed = "--seed", option = "--option", invalid = "--invalid", fold = "--fold", punctuation = "--punctuation",
  numbers = "--no-numbers", policy = "--policy", threshold = "-t/--threshold", verify = "--verify",
  candidate = "--candidate", max_df = "--max-df", threads = "--threads", memory = "--memory", temp_dir = "--temp-dir",
  max_bytes = "--max-bytes", method = "--method", bands = "--bands", rows = "--rows", canon = "--rules",
  extractor = "--extractor", format = "--format", keep = "--keep", files = "--files",
}

--- A message of the Lua API (an error it raised on a bad option) as the
-- command line says it: no "file.lua:12: " position, and each option by
-- the name the user typed ("option 'w' is 0" -> "-w/--width is 0").
function M.api_message(err)
  local msg = tostring(err):gsub("^[^\n:]-%.lua:%d+: ", "")
  msg = msg:gsub("option '([%w_]+)'", function(k) return M.cli_names[k] end)
  return msg
end

--- Whether an error the Lua API raised is about the options it was given
-- (misuse: the command line reports it as a usage error, exit 2).
function M.is_usage_error(err)
  local msg = M.api_message(err)
  return msg:find("^unknown [%w ]*option") or msg:find("^%-[%w/-]+ is ") or msg:find("^%-[%w/-]+ must ")
    or msg:find("^%-%-[%w-]+ is ") or msg:find("^give either") or msg:find("^unknown method") ~= nil
end

--- Report a command's failure: a usage error (exit 2, pointing at the
-- command's help) when it is about an option, else exit 1.
function M.fail_run(err, command)
  if M.is_usage_error(err) then
    io.stderr:write("shingle: ", M.api_message(err), "\n", ("Run 'shingle %s --help' for usage.\n"):format(command))
    return 2
  end
  io.stderr:write("shingle: ", tostring(err), "\n")
  return 1
end

--- Declare the shingler's options, with shingle.pipeline's defaults.
-- opts.defaults = false: no defaults (the command's Lua API decides: an
-- index keeps the parameters it was made with, collections have their
-- own); opts.prefix: said before every help text; opts.index: only the
-- options an index stores (no --floor).
function M.shingler_options(c, opts)
  opts = opts or {}
  local d = opts.defaults == false and {} or pipeline_defaults
  local pre = opts.prefix or ""
  c:option("-w --width", pre .. "Shingle width in tokens (the paper: 10).", default(d.w)):convert(tonumber)
  c:option("--sketch", pre .. "Sketch kind: mod (MOD_m, the paper's clustering run), min (MIN_s), minmod or class.",
    default(d.sketch)):choices({ "mod", "min", "minmod", "class" })
  c:option("-m --modulus", pre .. "MOD_m modulus (the paper: 25).", default(d.m)):convert(tonumber)
  c:option("-s --size", pre .. "MIN_s sample size.", default(d.s)):convert(tonumber)
  if not opts.index then
    c:option("--floor", pre .. "MOD_m: shorter documents use a smaller modulus of m's chain to keep about this many "
      .. "values; 0: plain MOD_m.", default(d.floor)):convert(tonumber)
  end
  c:option("-k --degree", pre .. "Fingerprint polynomial degree (64; 40 as the paper).", default(d.k)):convert(tonumber)
  c:option("--seed", pre .. "Seed of the random functions, the polynomials and the permutation (decimal or 0x-hex, "
    .. "64 bits; default: a fixed one, so runs compare). Another seed repeats an experiment with other random "
    .. "functions.")
    :convert(M.parse_seed)
  c:option("--option", pre .. "B: the set of shingles; A: the labelled bag.", default(d.option)):choices({ "A", "B" })
  c:option("--invalid", pre .. "Invalid UTF-8: error, skip or latin1.", default(d.invalid))
    :choices({ "error", "skip", "latin1" })
  c:flag("--fold", pre .. "Fold Unicode (NFKC, case fold, strip accents).")
  c:flag("--punctuation", pre .. "Keep punctuation as tokens.")
  c:flag("--no-numbers", pre .. "Drop tokens made only of digits.")
end

--- Declare --rules and --extractor (opts.extractor = false: --rules only;
-- opts.prefix: said before each help text).
function M.feature_options(c, opts)
  opts = opts or {}
  local pre = opts.prefix or ""
  c:option("--rules --canon", pre .. "Canonicalization rule set: html, text, code, tweet, or a Lua file returning one "
    .. "(canon in Lua).")
  if opts.extractor ~= false then
    c:option("--extractor", pre .. "Feature extractor for objects that are not text: midi, code, fasta (fasta:k=N), "
      .. "or a Lua file.")
  end
  if opts.on_error ~= false then
    c:option("--on-error", "When an extractor or a rule set's Lua code raises on a document: stop (naming the "
      .. "extractor, the document and the message) or skip the document (counted with the skipped ones).", "stop")
      :choices({ "stop", "skip" })
  end
end

--- Declare the output options of a command that prints records: --json
-- (JSON Lines) and --output-format (table, jsonl, json, csv, tsv).
function M.output_options(c, json_help)
  c:flag("--json", json_help or "JSON Lines output (the same as --output-format jsonl).")
  c:option("--output-format", "table (for people), jsonl (a JSON object a line), json (one list), csv or tsv "
    .. "(a header line, then a row a record).", "table"):choices({ "table", "jsonl", "json", "csv", "tsv" })
end

--- Declare --output-format for a command that writes files of records
-- (NAME.jsonl always; NAME.csv, .tsv or .json as well). what: the outputs;
-- rows: what a CSV row is; opts.keep: no default (recluster keeps the run's).
function M.file_format_option(c, what, rows, opts)
  opts = opts or {}
  c:option("--output-format", ("Also write %s as NAME.csv or NAME.tsv (%s) or NAME.json (one list); the .jsonl files "
    .. "are always written.%s"):format(what, rows, opts.keep and " Default: the run's." or ""),
    not opts.keep and "jsonl" or nil):choices({ "jsonl", "json", "csv", "tsv" })
end

--- The writer format of --json / --output-format, or nil for the table.
function M.output_format(a)
  if a.output_format and a.output_format ~= "table" then return a.output_format end
  if a.json then return "jsonl" end
  return nil
end

--- Write records (a list) to stdout in a writer format with shape.
function M.write_records(fmt, records, shape)
  local w = require("shingle.writer").new(io.stdout, fmt, shape)
  for _, r in ipairs(records) do w:write(r) end
  w:finish()
end

--- The shingler configuration from parsed arguments (nil where an option
-- was not given and has no default), with overrides.
function M.shingler_config(a, over)
  local cfg = {
    w = a.width, sketch = a.sketch, s = a.size, m = a.modulus, floor = a.floor, k = a.degree, seed = a.seed,
    option = a.option, invalid = a.invalid, fold = a.fold or nil, punctuation = a.punctuation or nil,
  }
  if a.no_numbers then cfg.numbers = false end -- (not "a and false or nil": that is always nil)
  for k, v in pairs(over or {}) do cfg[k] = v end
  return cfg
end

--- Declare --html and --text.
function M.html_options(c)
  c:flag("--html", "Treat every input as HTML (default: a file by its name, .html .htm .xhtml .shtml; "
    .. "a text without a name by its content).")
  c:flag("--text", "Treat every input as plain text.")
end

--- The HTML choice of --html and --text: true, false, or nil (each document
-- by shingle.input's rule).
function M.forced_html(a)
  if a.html then return true end
  if a.text then return false end
  return nil
end

--- Declare the input options: --format, the JSON Lines fields, --html,
-- --text, --strict, --quiet.
function M.input_options(c)
  c:option("--format", "Input format (auto: by the name and content of each input; any of them may be gzip or zstd "
    .. "compressed).", "auto"):choices({ "auto", "dir", "list", "jsonl", "warc", "mbox", "file" })
  c:option("--text-field", "JSON Lines: the field with the text.", "text")
  c:option("--url-field", "JSON Lines: the field with the URL.", "url")
  c:option("--id-field", "JSON Lines: the field with the id (used when there is no URL).", "id")
  c:option("--date-field", "JSON Lines: the field with the date.", "date")
  M.html_options(c)
  c:flag("--strict", "Stop at the first unreadable input, broken record or unreadable document "
    .. "(default: warn, count and skip it).")
  c:flag("-q --quiet", "No progress or warnings on stderr.")
end

--- The input configuration from parsed arguments.
function M.input_config(a)
  return { format = a.format, html = M.forced_html(a), strict = a.strict, quiet = a.quiet,
    fields = { text = a.text_field, url = a.url_field, id = a.id_field, date = a.date_field } }
end

--- Declare the resource options; which: a list of "memory", "temp_dir",
-- "threads", "max_bytes" (default: all four; max_bytes brings --max-shingles).
function M.resource_options(c, which)
  local want = {}
  for _, k in ipairs(which or { "memory", "temp_dir", "threads", "max_bytes" }) do want[k] = true end
  if want.memory then c:option("--memory", "Memory budget for the external sorts, e.g. 512M, 1G.", "1G") end
  if want.temp_dir then c:option("--temp-dir", "Directory for sort runs (default: the output directory).") end
  if want.threads then c:option("--threads", "Sketching threads (default: all cores)."):convert(tonumber) end
  if want.max_bytes then
    c:option("--max-bytes", "Skip documents larger than this.", "64M")
    c:option("--max-shingles", "Skip documents with more shingles than this (bounds the memory one document takes; "
      .. "0: no limit).", "16M")
  end
end

--- A size as the options take it ("512M", "4G", "100k", "1000"): bytes, or
-- nil and a message.
function M.size(s)
  local n, u = tostring(s):match("^(%d+%.?%d*)%s*([kKmMgGtT]?)[bB]?$")
  if not n then return nil, ("'%s' is not a size; use e.g. 512M or 4G"):format(s) end
  local mult = ({ [""] = 1, k = 1024, m = 1024 ^ 2, g = 1024 ^ 3, t = 1024 ^ 4 })[u:lower()]
  return math.floor(tonumber(n) * mult)
end

--- The resource configuration from parsed arguments, or nil, message.
function M.resource_config(a)
  local cfg = { temp_dir = a.temp_dir, threads = a.threads }
  for _, k in ipairs({ "memory", "max_bytes", "max_shingles" }) do
    if a[k] ~= nil then
      local v, err = M.size(a[k])
      if not v then return nil, "--" .. k:gsub("_", "-") .. ": " .. err end
      cfg[k] = v
    end
  end
  if cfg.max_shingles == 0 then cfg.max_shingles = false end
  return cfg
end

--- Declare the options of phase 4. opts.index: only --policy and
-- --threshold, without defaults (they apply to a new index only);
-- opts.threshold: another default threshold (shingle dedup's 0.8).
-- opts.index: for a new index (no defaults shown: the index's own);
-- opts.keep: for recluster (no defaults: an option not given keeps the run's
-- value); opts.threshold: another default threshold (dedup's).
function M.decision_options(c, opts)
  opts = opts or {}
  local d = (opts.index or opts.keep) and {} or pipeline_defaults
  local pre = opts.index and "A new index: " or ""
  local post = opts.keep and " Default: the run's." or ""
  c:option("--policy", pre .. "Link a pair when its resemblance, containment (either direction), either or both reach the threshold."
    .. post, default(d.policy)):choices({ "resemblance", "containment", "either", "both" })
  c:option("-t --threshold", pre .. (opts.threshold and "Threshold for the policy." or "Threshold for the policy (the paper: 0.5).")
    .. post, default(opts.threshold or d.threshold)):convert(tonumber)
  if opts.index then return end
  c:option("--verify", (opts.keep and "exact: recompute every candidate pair from full shingle sets; none: decide on estimates."
    or "exact: recompute every candidate pair from full shingle sets (default); none: decide on estimates.") .. post)
    :choices({ "none", "exact" })
  c:option("--candidate", "With --verify exact: the estimated score a pair needs to be verified (default: threshold - 0.2"
    .. (opts.keep and ", or the value the run was given)." or ")."))
    :convert(tonumber)
end

--- The decision a run used, for the summary: "policy P, threshold T,
-- verify exact (candidates from C)".
function M.describe_decision(sum)
  local v = sum.verify and "verify exact" or "verify none"
  if sum.verify and sum.candidate then v = v .. (" (candidates from %s)"):format(M.num(sum.candidate)) end
  return ("%s%s, threshold %s, %s"):format(sum.method and sum.method ~= "shingles" and ("method " .. sum.method .. ", ") or "",
    "policy " .. tostring(sum.policy), M.num(sum.threshold), v)
end

--- A number as a person writes it: 0.7, not 0.69999999999999996.
function M.num(x)
  if x == nil then return "?" end
  return (("%.6g"):format(x))
end

--- Print the summary and phase table of a cluster run.
function M.print_cluster_summary(p, sum, out)
  out = out or io.stdout
  out:write(("documents %d (skipped %d)\n"):format(sum.documents or 0, sum.skipped or 0))
  out:write(("identical documents: %d exact, %d lexically equivalent, %d shingle equivalent\n"):format(
    sum.exact_duplicates or 0, sum.lexical_duplicates or 0, sum.shingle_duplicates or 0))
  out:write(("clusters %d with %d documents: %d of identical documents only, %d mixed\n"):format(
    sum.clusters or 0, sum.documents_in_clusters or 0, sum.clusters_of_identical_documents_only or 0, sum.mixed_clusters or 0))
  out:write(("pairs considered %d, linked %d\n"):format(sum.pairs_considered or 0, sum.pairs_linked or 0))
  out:write(("decided by %s%s\n\n"):format(M.describe_decision(sum), sum.reclustered and " (reclustered)" or ""))
  out:write(p:phase_table(), "\n")
end

--- Say what went wrong on standard error ("shingle: ..." and a newline) and
-- return the exit status: `return common.fail(1, err)`.
function M.fail(status, ...)
  io.stderr:write("shingle: ", ...)
  io.stderr:write("\n")
  return status
end

--- Read a whole document, decompressed if it is gzip or zstd (core/zio.h);
-- nil, message naming the file on failure.
function M.read_document(path)
  return require("shingle.core").zread(path)
end

--- s cut to its last n characters, marked with "...".
function M.short(s, n)
  if #s <= n then return s end
  return "..." .. s:sub(-(n - 3))
end

return M
