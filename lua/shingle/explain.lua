--- Why two documents were judged similar: their resemblance and containment,
-- estimated and exact, and the passages of text they share, located with the
-- byte ranges the tokenizer keeps for every shingle.
local input = require "shingle.input"
local options = require "shingle.options"
local sketcher = require "shingle.sketcher"

local M = {}

-- The key order of explain's JSON (shingle.writer).
M.order = { "estimate", "exact", "passages", "resemblance", "containment", "contained", "both", "sample",
  "a_first", "a_last", "b_first", "b_last" }

--- explain(a, b [, opts]) -> { estimate, exact, passages = { { a_first, a_last, b_first, b_last } } }
-- opts: the shingler options (w, sketch, s, m, ...; invalid defaults to
-- latin1), canon, html (true or false; nil: shingle.input's rule, each
-- document by its name if opts.names = { name_a, name_b } gives one, else
-- by its content).
function M.explain(a, b, opts)
  opts = opts or {}
  local o = {}
  for k, v in pairs(opts) do
    if k ~= "html" and k ~= "names" then
      if options.defaults[k] == nil and k ~= "canon" then
        error(("unknown option '%s'; explain takes the shingler's options and html"):format(tostring(k)), 2)
      end
      o[k] = v
    end
  end
  o.invalid = o.invalid or "latin1"
  local text, html = sketcher.shinglers(o)
  o.sketch = "full"
  local ftext, fhtml = sketcher.shinglers(o)
  local names = opts.names or {}
  local ha, hb = input.is_html(names[1], a, opts.html), input.is_html(names[2], b, opts.html)
  local ea, err = (ha and html or text):sketch(a)
  if not ea then return nil, "first document: " .. err end
  local eb, err2 = (hb and html or text):sketch(b)
  if not eb then return nil, "second document: " .. err2 end
  local sa, sb = ha and fhtml or ftext, hb and fhtml or ftext
  local xa, xb = sa:sketch(a), sb:sketch(b)
  local fa, firsta, lasta = sa:shingle_list(a)
  local fb, firstb, lastb = sb:shingle_list(b)
  local in_b = {}
  for i, fp in ipairs(fb) do
    if not in_b[fp] then in_b[fp] = i end
  end
  -- shared shingles in A's order; overlapping ones (consecutive shingles
  -- share w - 1 tokens) merge into one passage
  local passages, cur = {}, nil
  for i, fp in ipairs(fa) do
    local j = in_b[fp]
    if j then
      if cur and firsta[i] <= cur.a_last + 1 then
        cur.a_last = math.max(cur.a_last, lasta[i])
        cur.b_last = math.max(cur.b_last, lastb[j])
      else
        cur = { a_first = firsta[i], a_last = lasta[i], b_first = firstb[j], b_last = lastb[j] }
        passages[#passages + 1] = cur
      end
    end
  end
  return { estimate = ea:estimate(eb), exact = xa:estimate(xb), passages = passages }
end

--- Render an explanation for a terminal (color) or plain text.
function M.render(e, a, color, width)
  width = width or 400
  local out = {}
  local function line(s) out[#out + 1] = s end
  line(("resemblance  estimated %.3f  exact %.3f"):format(e.estimate.resemblance, e.exact.resemblance))
  line(("containment of A in B  estimated %.3f  exact %.3f"):format(e.estimate.containment, e.exact.containment))
  line(("containment of B in A  estimated %.3f  exact %.3f"):format(e.estimate.contained, e.exact.contained))
  line(("%d shared passage%s"):format(#e.passages, #e.passages == 1 and "" or "s"))
  for k, p in ipairs(e.passages) do
    local text = a:sub(p.a_first, p.a_last):gsub("%s+", " ")
    if #text > width then text = text:sub(1, math.floor(width / 2)) .. " ... " .. text:sub(-math.floor(width / 2)) end
    local before = a:sub(math.max(1, p.a_first - 40), p.a_first - 1):gsub("%s+", " ")
    local after = a:sub(p.a_last + 1, p.a_last + 40):gsub("%s+", " ")
    line("")
    line(("[%d] A bytes %d-%d, B bytes %d-%d"):format(k, p.a_first, p.a_last, p.b_first, p.b_last))
    if color then
      line("  \27[2m..." .. before .. "\27[0m\27[1;33m" .. text .. "\27[0m\27[2m" .. after .. "...\27[0m")
    else
      line("  " .. text)
    end
  end
  return table.concat(out, "\n") .. "\n"
end

return M
