--- shingle compare FILE...: resemblance and containment of every pair of
-- documents, estimated from sketches and (with --exact) computed exactly.
local common = require "shingle.cmd.common"
local input = require "shingle.input"
local sketcher = require "shingle.sketcher"

local M = {}

-- the key order of --json
M.order = { "a", "b", "resemblance", "containment_ab", "containment_ba", "exact" }

function M.configure(parser)
  local c = parser:command("compare", "Resemblance and containment of every pair of documents.")
  c:argument("files", "Documents (text or HTML; HTML is recognised by extension or --html)."):args("2+")
  common.shingler_options(c)
  common.html_options(c)
  c:flag("--exact", "Also compute the exact values from the full shingle sets.")
  c:flag("--json", "One JSON object per pair instead of a table.")
  c:option("--threshold", "Show only pairs with estimated resemblance or containment at least this.", "0"):convert(tonumber)
end

function M.run(a)
  local text_sh, html_sh = sketcher.shinglers(common.shingler_config(a))
  local exact = {}
  if a.exact then exact.text, exact.html = sketcher.shinglers(common.shingler_config(a, { sketch = "full" })) end
  local docs = {}
  for i, path in ipairs(a.files) do
    local text, err = common.read_document(path)
    if not text then return common.fail(1, err) end
    local html = input.is_html(path, nil, common.forced_html(a))
    local s, serr = (html and html_sh or text_sh):sketch(text)
    if not s then return common.fail(1, path, ": ", serr) end
    local x = a.exact and (html and exact.html or exact.text):sketch(text) or nil
    docs[i] = { path = path, sketch = s, full = x }
  end
  local out = io.stdout
  local json = a.json and require "shingle.writer"
  if not json then
    out:write(("%-28s %-28s %7s %7s %7s%s\n"):format("A", "B", "r", "c(A,B)", "c(B,A)",
      a.exact and "  exact r  c(A,B)  c(B,A)" or ""))
  end
  for i = 1, #docs do
    for j = i + 1, #docs do
      local A, B = docs[i], docs[j]
      local e = A.sketch:estimate(B.sketch)
      if math.max(e.resemblance, e.containment, e.contained) >= a.threshold then
        local x = a.exact and A.full:estimate(B.full)
        if json then
          out:write(json.json({ a = A.path, b = B.path, resemblance = e.resemblance,
            containment_ab = e.containment, containment_ba = e.contained,
            exact = x and { resemblance = x.resemblance, containment_ab = x.containment, containment_ba = x.contained } or nil }, M.order), "\n")
        else
          out:write(("%-28s %-28s %7.3f %7.3f %7.3f"):format(common.short(A.path, 28), common.short(B.path, 28),
            e.resemblance, e.containment, e.contained))
          if x then out:write(("  %7.3f %7.3f %7.3f"):format(x.resemblance, x.containment, x.contained)) end
          out:write("\n")
        end
      end
    end
  end
  return 0
end

return M
