--- shingle report: one self-contained HTML page with plots for the output
-- directory of a `shingle cluster` run (shingle.report.cluster), of a
-- `shingle collections` run (shingle.report.collections), or for an index
-- and its sweeps (shingle.report.sweeps). Nothing in the page is fetched:
-- styles, plots (inline SVG from shingle.plot) and a little script to sort
-- and filter tables are all in the file, and a Content-Security-Policy lets
-- nothing else load or run. Large runs are read from their summary files and
-- streamed, keeping only samples of the large tables, so the page stays
-- small and memory stays bounded.
--
--   local report = require "shingle.report"
--   local page = assert(report.render("out"))          -- the kind is detected
--   assert(report.write("out/report.html", page))
local html = require "shingle.html"

local M = {}

M.defaults = {
  top = 10,             -- largest clusters shown with their members
  sample = 10,          -- mid-size clusters sampled
  members = 25,         -- members listed per cluster
  pairs = 3,            -- pairs shown side by side
  doc_bytes = 256 * 1024, -- largest document compared side by side
  show_bytes = 12 * 1024, -- bytes of each document shown side by side
  lost = 50,            -- rows of the lost-and-found table
  sweeps = 24,          -- the latest sweeps compared with the one before each
  seed = 1,             -- for the samples: the same run gives the same page
  cwd = nil,            -- where relative document paths are (default: the current directory)
  inputs = nil,         -- the run's inputs, to read documents that are not local files from
}

--- Options over the defaults; an unknown option raises.
function M.options(opts)
  local o = {}
  for k, v in pairs(M.defaults) do o[k] = v end
  for k, v in pairs(opts or {}) do
    if M.defaults[k] == nil and k ~= "cwd" and k ~= "inputs" and k ~= "now" and k ~= "nonce" then
      error(("unknown report option '%s'"):format(tostring(k)), 3)
    end
    o[k] = v
  end
  if not o.cwd then o.cwd = require("lfs").currentdir() end
  return o
end

--- A small deterministic generator (Park and Miller), the same on every Lua:
-- rand(n) gives an integer in [1, n].
function M.rng(seed)
  local x = (seed or 1) % 2147483647
  if x <= 0 then x = x + 2147483646 end
  return function(n)
    x = (x * 16807) % 2147483647
    return x % n + 1
  end
end

--- The k best records offered (better(x, y): x ranks before y), best
-- first, in O(k) memory: t:offer(rec), t.list.
function M.top(k, better)
  local t = { list = {} }
  function t:offer(rec)
    local l = self.list
    if k <= 0 or (#l >= k and not better(rec, l[#l])) then return end
    local i = #l + 1
    while i > 1 and better(rec, l[i - 1]) do i = i - 1 end
    table.insert(l, i, rec)
    if #l > k then l[#l] = nil end
  end
  return t
end

--- A uniform sample of at most n records offered (reservoir sampling with
-- rand from M.rng): r:offer(rec), r.list.
function M.reservoir(n, rand)
  local r = { list = {}, seen = 0 }
  function r:offer(rec)
    self.seen = self.seen + 1
    if #self.list < n then self.list[#self.list + 1] = rec
    else
      local j = rand(self.seen)
      if j <= n then self.list[j] = rec end
    end
  end
  return r
end

--- Stream the lines of a JSON Lines file: fn(line, offset, lineno) for each
-- (offset: of the line's first byte, to read it again with read_at).
-- Returns true, or nil, err (fn may return nil, err to stop).
function M.each_line(path, fn, what)
  local f, err = io.open(path, "rb")
  if not f then
    return nil, ("cannot read %s: %s%s"):format(path, require("shingle.util").reason(err, path), what and (" (" .. what .. ")") or "")
  end
  local offset, lineno = 0, 0
  for line in f:lines() do
    lineno = lineno + 1
    local ok, ferr = fn(line, offset, lineno)
    if ok == nil and ferr then f:close(); return nil, ferr end
    offset = offset + #line + 1
  end
  f:close()
  return true
end

--- A whole number stored under key in a JSON Lines record, read without
-- decoding the line: a string value cannot hold an unescaped quote, so the
-- pattern matches keys only. nil when the key is absent or appears more than
-- once (a nested object has it too): decode the line then.
function M.field(line, key)
  local needle = '"' .. key .. '":'
  local init, value, found = 1, nil, false
  while true do
    local i, j = line:find(needle, init, true) -- a plain search: this runs over every line of a large run
    if not i then break end
    local before = line:byte(i - 1)
    if before == 123 or before == 44 then -- '{' or ','
      if found then return nil end
      found, value = true, line:match("^%d+", j + 1)
    end
    init = j + 1
  end
  return value and tonumber(value)
end

--- How many times a plain string occurs in s.
function M.occurrences(s, needle)
  local n, init = 0, 1
  while true do
    local _, j = s:find(needle, init, true)
    if not j then return n end
    n, init = n + 1, j + 1
  end
end

--- Decode the records at the places each_line gave: recs = { { offset,
-- length, lineno } }; check(rec) tells a record of the right kind.
function M.read_at(path, recs, check)
  local cjson = require "cjson"
  local f, err = io.open(path, "rb")
  if not f then return nil, ("cannot read %s: %s"):format(path, require("shingle.util").reason(err, path)) end
  local out = {}
  for _, r in ipairs(recs) do
    f:seek("set", r.offset)
    local line = f:read(r.length)
    local ok, v = pcall(cjson.decode, line or "")
    if not ok or type(v) ~= "table" or (check and not check(v)) then
      f:close()
      return nil, ("%s line %d: not the record read a moment ago (did the run change it?)"):format(path, r.lineno)
    end
    out[#out + 1] = M.nulls(v)
  end
  f:close()
  return out
end

--- Read a JSON file; nil, message naming it when it is missing or broken.
function M.read_json(path, what)
  local f, err = io.open(path, "rb")
  if not f then
    return nil, ("cannot read %s: %s%s"):format(path, require("shingle.util").reason(err, path), what and (" (" .. what .. ")") or "")
  end
  local s = f:read("*a")
  f:close()
  local ok, v = pcall(require("cjson").decode, s)
  if not ok or type(v) ~= "table" then
    return nil, ("%s is not valid JSON (%s): run the command that wrote it again"):format(path, ok and "not an object" or tostring(v))
  end
  return M.nulls(v)
end

--- A run's summary.json (sum itself when given).
function M.summary(dir, sum)
  if sum then return sum end
  return M.read_json(dir .. "/summary.json", "is the run finished?")
end

--- cjson's null as nil, in place, recursively.
function M.nulls(v)
  local null = require("cjson").null
  if type(v) == "table" then
    for k, x in pairs(v) do
      if x == null then v[k] = nil else M.nulls(x) end
    end
  end
  return v
end

-- A nonce for the page's one script: the Content-Security-Policy runs no
-- script without it, so markup smuggled into the page by a hostile document
-- (were escaping ever to miss one) could not run.
local function nonce()
  local f = io.open("/dev/urandom", "rb")
  local s = f and f:read(16)
  if f then f:close() end
  if not s or #s < 16 then s = tostring(os.time()) .. tostring(os.clock()) .. tostring({}) end
  return (s:gsub(".", function(c) return ("%02x"):format(c:byte()) end)):sub(1, 32)
end

M.css = [[
:root{--ink:#1f2328;--muted:#5c6370;--rule:#d8dadd;--accent:#0072B2;--mark:#ffe08a;--bg:#fff}
*{box-sizing:border-box}
html{-webkit-text-size-adjust:100%}
body{font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,Helvetica,Arial,sans-serif;color:var(--ink);background:var(--bg);margin:0 auto;max-width:74rem;padding:1rem 1.25rem 3rem}
h1{font-size:1.55rem;margin:.4rem 0 .2rem;line-height:1.25}
h2{font-size:1.2rem;margin:2.2rem 0 .6rem;padding-bottom:.2rem;border-bottom:1px solid var(--rule)}
h3{font-size:1rem;margin:1.4rem 0 .4rem}
p{margin:.4rem 0 .8rem;max-width:48rem}
a{color:var(--accent)}
.sub{color:var(--muted);margin:0 0 1rem}
nav.toc{font-size:.9rem;margin:.5rem 0 1rem}
nav.toc a{margin-right:.9rem;white-space:nowrap;display:inline-block}
.scroll{overflow-x:auto;max-width:100%}
table{border-collapse:collapse;font-variant-numeric:tabular-nums;margin:.4rem 0 1rem;font-size:.92rem}
caption{text-align:left;color:var(--muted);font-size:.88rem;padding:.2rem 0}
th,td{padding:.22rem .6rem;border-bottom:1px solid var(--rule);text-align:left;vertical-align:top}
thead th{border-bottom:2px solid var(--ink);white-space:nowrap}
.num{text-align:right;white-space:nowrap}
table.facts th{font-weight:normal;color:var(--muted);padding-right:1.5rem}
table.sortable thead th{cursor:pointer}
table.sortable thead th[aria-sort=ascending]::after{content:" \25B2";font-size:.7em}
table.sortable thead th[aria-sort=descending]::after{content:" \25BC";font-size:.7em}
.url{overflow-wrap:anywhere}
td .url{display:inline-block;min-width:8rem}
.muted{color:var(--muted)}
.nowrap{white-space:nowrap}
.share{display:inline-block;height:.65em;background:var(--accent);vertical-align:baseline;min-width:1px}
figure{margin:1rem 0 1.4rem}
figcaption{color:var(--muted);font-size:.88rem;max-width:48rem;margin-top:.3rem}
svg.plot{max-width:100%;height:auto;display:block}
.grid{display:grid;grid-template-columns:repeat(auto-fit,minmax(19rem,1fr));gap:0 1.25rem}
.cluster{margin:0 0 1rem}
.cluster h3{margin-bottom:.2rem}
.pair{display:grid;grid-template-columns:1fr 1fr;gap:.75rem;margin-bottom:1.5rem}
.pair h4{margin:.2rem 0;font-size:.9rem;font-weight:600}
.pair pre{white-space:pre-wrap;overflow-wrap:anywhere;font-size:.78rem;line-height:1.4;max-height:26rem;overflow:auto;border:1px solid var(--rule);padding:.5rem;margin:0;background:#fafafa}
mark{background:var(--mark);color:inherit}
.filter{margin:.3rem 0;padding:.25rem .4rem;font:inherit;font-size:.9rem;width:16rem;max-width:100%}
.complete{display:inline-block;width:5rem;height:.6em;background:#e6e6e6;margin-right:.4rem;vertical-align:baseline}
.complete>span{display:block;height:100%;background:#009E73}
details>summary{cursor:pointer;color:var(--accent);margin:.3rem 0}
@media (max-width:40rem){
 body{font-size:14px;padding:.6rem .7rem 2rem}
 h1{font-size:1.3rem}
 .pair{grid-template-columns:1fr}
 th,td{padding:.2rem .35rem}
 .grid{grid-template-columns:1fr}
}
@media print{
 body{max-width:none;font-size:9.5pt;padding:0}
 nav.toc,.filter{display:none}
 .grid{display:block}
 table{font-size:7.5pt}
 th,td{padding:.12rem .3rem}
 thead th{white-space:normal}
 td .url{min-width:0}
 .complete{width:2.5rem}
 .pair{grid-template-columns:1fr 1fr;font-size:7.5pt}
 h2{break-after:avoid}
 figure,.pair,.cluster,tr{break-inside:avoid}
 a{color:inherit;text-decoration:none}
 .pair pre{max-height:none;overflow:visible;background:none}
 .scroll{overflow:visible}
 .share,.complete>span,mark{-webkit-print-color-adjust:exact;print-color-adjust:exact}
}
]]

-- Sort a table by a column on a click on its header (numbers by their data-v
-- value), filter its rows by a text box, and open every <details> for print.
M.script = [[
(function(){
function key(td){return td?(td.hasAttribute("data-v")?parseFloat(td.getAttribute("data-v")):td.textContent.trim().toLowerCase()):"";}
document.querySelectorAll("table.sortable").forEach(function(t){
 t.querySelectorAll("thead th").forEach(function(th,i){
  th.tabIndex=0;
  function sort(){
   var asc=th.getAttribute("aria-sort")!=="ascending";
   t.querySelectorAll("thead th").forEach(function(h){h.removeAttribute("aria-sort");});
   th.setAttribute("aria-sort",asc?"ascending":"descending");
   var body=t.tBodies[0],rows=Array.prototype.slice.call(body.rows);
   rows.sort(function(a,b){var x=key(a.cells[i]),y=key(b.cells[i]);if(x===y)return 0;var r=(typeof x==="number"&&typeof y==="number")?x-y:(x<y?-1:1);return asc?r:-r;});
   rows.forEach(function(r){body.appendChild(r);});
  }
  th.addEventListener("click",sort);
  th.addEventListener("keydown",function(e){if(e.key==="Enter"||e.key===" "){e.preventDefault();sort();}});
 });
});
document.querySelectorAll("table.filterable").forEach(function(t){
 var box=document.createElement("input");
 box.type="search";box.className="filter";box.placeholder="filter rows";box.setAttribute("aria-label","filter rows");
 var wrap=t.parentNode;wrap.parentNode.insertBefore(box,wrap);
 box.addEventListener("input",function(){
  var q=box.value.toLowerCase();
  Array.prototype.forEach.call(t.tBodies[0].rows,function(r){r.hidden=q!==""&&r.textContent.toLowerCase().indexOf(q)<0;});
 });
});
window.addEventListener("beforeprint",function(){document.querySelectorAll("details").forEach(function(d){d.open=true;});});
})();
]]

--- The whole page: o.title, o.subtitle (HTML), o.sections = { { id, title,
-- body (HTML) } }, o.nonce (default: random).
function M.page(o)
  local n = o.nonce or nonce()
  local b = {
    "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n",
    "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n",
    ("<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; "
      .. "script-src 'nonce-%s'; img-src data:; base-uri 'none'; form-action 'none'\">\n"):format(n),
    "<meta name=\"generator\" content=\"shingle report\">\n",
    "<title>", html.escape(o.title), "</title>\n<style>", M.css, "</style>\n</head>\n<body>\n",
    "<header><h1>", html.escape(o.title), "</h1>", o.subtitle and ("<p class=\"sub\">" .. o.subtitle .. "</p>") or "",
    "<nav class=\"toc\" aria-label=\"sections\">",
  }
  for _, s in ipairs(o.sections) do
    b[#b + 1] = ("<a href=\"#%s\">%s</a>"):format(s.id, html.escape(s.title))
  end
  b[#b + 1] = "</nav></header>\n<main>\n"
  for _, s in ipairs(o.sections) do
    b[#b + 1] = ("<section id=\"%s\">\n<h2>%s</h2>\n%s\n</section>\n"):format(s.id, html.escape(s.title), s.body)
  end
  b[#b + 1] = "</main>\n<script nonce=\"" .. n .. "\">" .. M.script .. "</script>\n</body>\n</html>\n"
  return table.concat(b)
end

--- A figure: an SVG plot with its caption (HTML).
function M.figure(svg, caption)
  return "<figure>" .. svg .. (caption and ("<figcaption>" .. caption .. "</figcaption>") or "") .. "</figure>"
end

--- A phase table like Broder et al.'s in "Status": seconds, the share of the
-- total as a bar, and (paper = { name = share }) the share in the paper.
function M.phase_table(names, labels, times, paper)
  local total = 0
  for _, name in ipairs(names) do total = total + (times[name] or 0) end
  local cols = { { "phase" }, { "seconds", num = true, decimals = 3 }, { "share", num = true } }
  if paper then cols[#cols + 1] = { "share in the paper", num = true } end
  local rows = {}
  for _, name in ipairs(names) do
    local t = times[name]
    if t then
      local share = total > 0 and t / total or 0
      local r = { html.escape(labels[name] or name:gsub("_", " ")), t,
        ('<span class="share" style="width:%.1fpx"></span> %s'):format(60 * share, html.pct(t, total)) }
      if paper then r[4] = paper[name] and ("%.0f%%"):format(100 * paper[name]) or "–" end
      rows[#rows + 1] = r
    end
  end
  local r = { "<strong>total</strong>", total, "100.0%" }
  if paper then r[4] = "100%" end
  rows[#rows + 1] = r
  return html.table(cols, rows, { class = "phases" })
end

--- The sizes of the files of a run directory, largest first: { { name, bytes } }.
function M.files(dir)
  local lfs = require "lfs"
  local out = {}
  local ok, iter, state = pcall(lfs.dir, dir)
  if not ok then return out end
  for name in iter, state do
    if name ~= "." and name ~= ".." and not name:match("%.tmp$") then
      local a = lfs.attributes(dir .. "/" .. name)
      if a and a.mode == "file" then out[#out + 1] = { name, a.size } end
    end
  end
  table.sort(out, function(x, y) if x[2] ~= y[2] then return x[2] > y[2] end return x[1] < y[1] end)
  return out
end

--- Which kind of output directory dir is: "cluster", "collections", or nil, err.
function M.kind(dir)
  local lfs = require "lfs"
  if lfs.attributes(dir, "mode") ~= "directory" then
    return nil, ("%s is not a directory: give the output directory of shingle cluster or shingle collections, "
      .. "or --index DB for an index"):format(dir)
  end
  if lfs.attributes(dir .. "/data.mdb", "mode") == "file" then
    return nil, ("%s is an index: use shingle report --index %s"):format(dir, dir)
  end
  local sum, err = M.read_json(dir .. "/summary.json", "is it the output directory of a finished shingle cluster or collections run?")
  if not sum then return nil, err end
  if sum.graph and sum.grow then return "collections", sum end
  if sum.method or sum.clusters then return "cluster", sum end
  return nil, dir .. "/summary.json is neither a cluster nor a collections summary"
end

--- The page for an output directory (cluster or collections, detected) or,
-- with opts.index, for the index at target. Returns the HTML or nil, err.
function M.render(target, opts)
  opts = opts or {}
  local index = opts.index
  local o = {}
  for k, v in pairs(opts) do if k ~= "index" then o[k] = v end end
  if index then return require("shingle.report.sweeps").render(target, o) end
  local kind, sum = M.kind(target)
  if not kind then return nil, sum end
  return require("shingle.report." .. kind).render(target, o, sum)
end

--- Write a page atomically (a temporary file, then rename).
function M.write(path, page)
  return require("shingle.util").atomic_write(path, function(f) assert(f:write(page)) end)
end

return M
