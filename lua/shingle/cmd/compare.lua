--- shingle compare FILE...: resemblance and containment of every pair of
-- documents, estimated from sketches and (with --exact) computed exactly.
local common = require "shingle.cmd.common"
local input = require "shingle.input"
local sketcher = require "shingle.sketcher"
local writer = require "shingle.writer"

local M = {}

-- the key order of --json
M.order = { "a", "b", "resemblance", "containment_ab", "containment_ba", "exact" }

function M.configure(parser)
  local c = parser:command("compare", "Resemblance and containment of every pair of documents.")
  c:argument("files", "Documents (text or HTML; HTML is recognised by extension or --html)."):args("2+")
  common.shingler_options(c)
  common.feature_options(c, { on_error = false })
  common.html_options(c)
  c:flag("--exact", "Also compute the exact values from the full shingle sets.")
  common.output_options(c)
  c:option("--threshold", "Show only pairs with estimated resemblance or containment at least this.", "0"):convert(tonumber)
end

-- CSV and TSV: one row a pair, the exact values in columns of their own
local columns = { "a", "b", "resemblance", "containment_ab", "containment_ba", "exact_resemblance",
  "exact_containment_ab", "exact_containment_ba" }
local function rows(rec)
  local x = rec.exact or {}
  return { { a = rec.a, b = rec.b, resemblance = rec.resemblance, containment_ab = rec.containment_ab,
    containment_ba = rec.containment_ba, exact_resemblance = x.resemblance, exact_containment_ab = x.containment_ab,
    exact_containment_ba = x.containment_ba } }
end

function M.run(a)
  local cfg = common.shingler_config(a, { canon = a.rules, extractor = a.extractor })
  local ok, text_sh, html_sh, ex = pcall(sketcher.shinglers, cfg)
  if not ok then return common.fail_run(text_sh, "compare") end
  local exact = {}
  if a.exact then
    cfg.sketch = "full"
    exact.text, exact.html = sketcher.shinglers(cfg)
  end
  local function sketch(sh, text, path)
    if ex then
      local s, err = require("shingle.extractors").sketch(ex, sh, text, path)
      if not s then return nil, ("extractor %s failed on %s: %s"):format(ex.name, path, tostring(err)) end
      return s
    end
    local s, err = sh:sketch(text)
    if not s then return nil, path .. ": " .. tostring(err) end
    return s
  end
  local docs = {}
  for i, path in ipairs(a.files) do
    local text, err = common.read_document(path)
    if not text then return common.fail(1, err) end
    local html = input.is_html(path, nil, common.forced_html(a))
    local s, serr = sketch(html and html_sh or text_sh, text, path)
    if not s then return common.fail(1, serr) end
    local x
    if a.exact then
      x, serr = sketch(html and exact.html or exact.text, text, path)
      if not x then return common.fail(1, serr) end
    end
    docs[i] = { path = path, sketch = s, full = x }
  end
  local out = io.stdout
  local fmt = common.output_format(a)
  local w = fmt and writer.new(out, fmt, { order = M.order, columns = columns, rows = rows })
  -- the table: columns as wide as the longest path (paths are never cut)
  local wa, wb = 1, 1
  for i, d in ipairs(docs) do
    if i < #docs then wa = math.max(wa, #d.path) end
    if i > 1 then wb = math.max(wb, #d.path) end
  end
  local row = "%-" .. wa .. "s  %-" .. wb .. "s %7s %7s %7s"
  if not w then
    out:write(row:format("A", "B", "r", "c(A,B)", "c(B,A)"), a.exact and "  exact r  c(A,B)  c(B,A)" or "", "\n")
  end
  for i = 1, #docs do
    for j = i + 1, #docs do
      local A, B = docs[i], docs[j]
      local e = A.sketch:estimate(B.sketch)
      if math.max(e.resemblance, e.containment, e.contained) >= a.threshold then
        local x = a.exact and A.full:estimate(B.full)
        if w then
          w:write({ a = A.path, b = B.path, resemblance = e.resemblance, containment_ab = e.containment,
            containment_ba = e.contained,
            exact = x and { resemblance = x.resemblance, containment_ab = x.containment, containment_ba = x.contained } or nil })
        else
          out:write(row:format(A.path, B.path, ("%.3f"):format(e.resemblance), ("%.3f"):format(e.containment),
            ("%.3f"):format(e.contained)))
          if x then out:write(("  %7.3f %7.3f %7.3f"):format(x.resemblance, x.containment, x.contained)) end
          out:write("\n")
        end
      end
    end
  end
  if w then w:finish() end
  return 0
end

return M
