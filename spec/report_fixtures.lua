-- Small runs of each kind for the report's spec and for the browser check
-- (scripts/browser/check.sh): a cluster run, a collections run and an index
-- with three sweeps, each with hostile documents whose names, URLs and text
-- carry markup and script that a report must show as text, never run.
local support = require "support"
local write = support.write
local gen = require "gen"
local cjson = require "cjson"

local M = {}

M.hostile = {
  -- file names (no slash), URLs and text
  file_a = "<img src=x onerror=alert(1)>.txt",
  file_b = "\"'><svg onload=alert(2)>.txt",
  url_js = "javascript:alert(3)",
  url_tag = "http://evil.example/\"><script>alert(4)</script>",
  text = "</pre><script>alert(\"pwned\")</script> <b onclick=\"alert(5)\">bold</b> & &amp; \1\2 \255\254 ]]> <!-- -->",
}

local function mkdir(p) assert(require("shingle.util").mkdir_p(p)) end

local function words(doc_text, n)
  local w = {}
  for x in doc_text:gmatch("%S+") do
    w[#w + 1] = x
    if n and #w >= n then break end
  end
  return w
end

-- a text of about n words with the hostile string in its middle, and an edit of it
local function hostile_texts(seed, n)
  local d = gen.list({ docs = 1, seed = seed, families = 0 })[1]
  local w = words(d.text, n)
  local mid = math.floor(#w / 2)
  local a = table.concat(w, " ", 1, mid) .. "\n" .. M.hostile.text .. "\n" .. table.concat(w, " ", mid + 1)
  for i = 5, #w, 80 do w[i] = "edited" .. i end
  local b = table.concat(w, " ", 1, mid) .. "\n" .. M.hostile.text .. "\n" .. table.concat(w, " ", mid + 1)
  return a, b
end

--- A cluster run over generated documents (files, so pairs can be shown
-- side by side) and hostile ones. Returns the output directory and the run's summary.
function M.cluster(dir)
  local docs = dir .. "/docs"
  mkdir(docs)
  assert(gen.write_dir(gen.corpus({ docs = 240, seed = 3, families = 0.5, hosts = 6 }), docs))
  local a, b = hostile_texts(11, 400)
  write(docs .. "/" .. M.hostile.file_a, a)
  write(docs .. "/" .. M.hostile.file_b, b)
  local c, d = hostile_texts(12, 300)
  local jl = dir .. "/hostile.jsonl"
  write(jl, cjson.encode({ url = M.hostile.url_js, text = c }) .. "\n" .. cjson.encode({ url = M.hostile.url_tag, text = d }) .. "\n")
  local out = dir .. "/out"
  local p = require("shingle.pipeline").new({ outdir = out, quiet = true, threads = 2, memory = 64 * 1024 * 1024 })
  local sum = assert(p:run({ docs, jl }))
  return out, sum
end

-- a small site: an index linking to every page, each page to its neighbours
local function site(root, host, pages, opts)
  opts = opts or {}
  mkdir(root .. "/" .. host)
  for i = 0, #pages do
    local links = {}
    if i == 0 then
      for k = 1, #pages do links[#links + 1] = ('<li><a href="p%d.html">page %d</a></li>'):format(k, k) end
    else
      links[#links + 1] = '<a href="index.html">index</a>'
      if i > 1 then links[#links + 1] = ('<a href="p%d.html">previous</a>'):format(i - 1) end
      if i < #pages then
        local target = ("p%d.html"):format(i + 1)
        if opts.back and i + 1 > opts.back.from then target = opts.back.base .. target end
        links[#links + 1] = ('<a href="%s">next</a>'):format(target)
      end
    end
    if not (opts.only and i > opts.only) then
      local text = i == 0 and "Index of the manual. " .. table.concat(words(pages[1], 60), " ") or pages[i]
      local body = ("<html><head><title>%s</title></head><body>%s<p>%s</p><ul>%s</ul></body></html>")
        :format(i == 0 and "index" or ("page " .. i), opts.banner or "", text:gsub("\n\n", "</p><p>"), table.concat(links, " "))
      write(("%s/%s/%s"):format(root, host, i == 0 and "index.html" or ("p%d.html"):format(i)), body)
    end
  end
end

--- A collections run: a manual of 12 pages on a primary site, two full
-- mirrors (one with a banner), a partial mirror of its first 6 pages whose
-- links to the others point back at the primary, a second replicated
-- collection of 4 pages on three sites, unrelated pages, and hostile URLs
-- given as JSON Lines pages with an edge list. Returns the output directory
-- and the summary.
function M.collections(dir)
  local web = dir .. "/web"
  local texts = {}
  for _, d in ipairs(gen.list({ docs = 30, seed = 5, families = 0 })) do texts[#texts + 1] = d.text end
  local manual = { (table.unpack or unpack)(texts, 1, 12) }
  site(web, "www.primary.example", manual)
  site(web, "mirror-a.example", manual, { banner = "<div>Mirrored by mirror-a, updated daily</div>" })
  site(web, "mirror-b.example", manual)
  site(web, "partial-c.example", manual, { only = 6, back = { from = 6, base = "http://www.primary.example/" } })
  local faq = { texts[13], texts[14], texts[15], texts[16] }
  for _, h in ipairs({ "faq.example", "faq-mirror1.example", "faq-mirror2.example" }) do site(web, h, faq) end
  mkdir(web .. "/noise.example")
  for i = 19, 30 do
    write(("%s/noise.example/n%d.html"):format(web, i), "<html><body><p>" .. texts[i] .. "</p></body></html>")
  end
  -- hostile: two sites of two linked pages each, copies of each other
  local x, y = texts[17], texts[18]
  local pages = {
    { url = "http://evil.example/a<script>alert(6)</script>.html", text = x },
    { url = "http://evil.example/b\"onmouseover=\"alert(7).html", text = y },
    { url = "http://evil2.example/a<script>alert(6)</script>.html", text = x },
    { url = "http://evil2.example/b\"onmouseover=\"alert(7).html", text = y },
  }
  local jl, edges = dir .. "/pages.jsonl", dir .. "/edges.jsonl"
  local lines, elines = {}, {}
  for _, p in ipairs(pages) do lines[#lines + 1] = cjson.encode(p) end
  for _, e in ipairs({ { 1, 2 }, { 2, 1 }, { 3, 4 }, { 4, 3 } }) do
    elines[#elines + 1] = cjson.encode({ src = pages[e[1]].url, dst = pages[e[2]].url })
  end
  write(jl, table.concat(lines, "\n") .. "\n")
  write(edges, table.concat(elines, "\n") .. "\n")
  local out = dir .. "/out"
  local c = require("shingle.collections").new({ outdir = out, similarity = "shingles", threshold = 0.8, extended = true,
    quiet = true, threads = 2, memory = 64 * 1024 * 1024, edges = { edges }, avoid_min_size = 3 })
  local sum = assert(c:run({ web, jl }))
  return out, sum
end

--- An index with three sweeps: documents that stay, change a little or a
-- lot, move within and between servers, die and are born, hostile URLs
-- among them. Returns the index path and the expected counts per sweep
-- (added, gone, moved, changed) as the fixture planted them.
function M.index(dir)
  local texts = {}
  for _, d in ipairs(gen.list({ docs = 60, seed = 9, families = 0 })) do texts[#texts + 1] = d.text end
  local function edit(t, every)
    local w = words(t)
    for i = 3, #w, every do w[i] = "changed" .. i end
    return table.concat(w, " ")
  end
  local function url(k, host) return ("http://%s/page%d.html"):format(host or "site.example", k) end
  local sweeps = {}
  -- sweep 1: 30 documents, two with hostile URLs
  local s1 = {}
  for k = 1, 28 do s1[#s1 + 1] = { url = url(k), text = texts[k] } end
  s1[#s1 + 1] = { url = M.hostile.url_tag, text = texts[29] }
  s1[#s1 + 1] = { url = M.hostile.url_js, text = texts[30] }
  sweeps[1] = { name = "2026-01-01", docs = s1, expect = { added = 30, gone = 0, moved = 0, changed = 0 } }
  -- sweep 2: 1-10 stay, 11-14 change a little, 15-16 a lot, 17-19 move within the server,
  -- 20-21 move to another server, 22-25 die, 26-28 stay, the hostile ones: one stays, one dies;
  -- five new
  local s2 = {}
  for k = 1, 10 do s2[#s2 + 1] = { url = url(k), text = texts[k] } end
  for k = 11, 14 do s2[#s2 + 1] = { url = url(k), text = edit(texts[k], 40) } end
  for k = 15, 16 do s2[#s2 + 1] = { url = url(k), text = edit(texts[k], 2) } end
  for k = 17, 19 do s2[#s2 + 1] = { url = url(k + 100), text = texts[k] } end
  for k = 20, 21 do s2[#s2 + 1] = { url = url(k, "elsewhere.example"), text = texts[k] } end
  for k = 26, 28 do s2[#s2 + 1] = { url = url(k), text = texts[k] } end
  s2[#s2 + 1] = { url = M.hostile.url_tag, text = texts[29] }
  for k = 31, 35 do s2[#s2 + 1] = { url = url(k), text = texts[k] } end
  -- 22-25 and the javascript: URL die, but 22's content lives on at a near-copy elsewhere
  s2[#s2 + 1] = { url = url(22, "copies.example"), text = edit(texts[22], 50) }
  sweeps[2] = { name = "2026-02-01", docs = s2, expect = { added = 6, gone = 5, moved = 5, changed = 6 } }
  -- sweep 3: everything of sweep 2 stays but 1-5 and the hostile URL (gone; a near copy
  -- of 1 appears on another server, so lost and found finds it), 6 (moves) and 31
  -- (changes a lot); 3 new
  local s3 = {}
  for _, d in ipairs(s2) do
    local k = tonumber(d.url:match("page(%d+)%.html$"))
    local home = d.url:find("//site.example/", 1, true)
    if k == 31 then s3[#s3 + 1] = { url = d.url, text = edit(d.text, 2) }
    elseif k == 6 and home then s3[#s3 + 1] = { url = url(106), text = d.text }
    elseif not (k and k <= 5 and home) and d.url ~= M.hostile.url_tag then s3[#s3 + 1] = d end
  end
  s3[#s3 + 1] = { url = url(1, "copies.example"), text = edit(texts[1], 50) }
  for k = 36, 38 do s3[#s3 + 1] = { url = url(k), text = texts[k] } end
  sweeps[3] = { name = "2026-03-01", docs = s3, expect = { added = 4, gone = 6, moved = 1, changed = 1 } }
  mkdir(dir)
  local db = dir .. "/index"
  local ix = assert(require("shingle.index").open(db))
  for i, s in ipairs(sweeps) do
    local path = ("%s/sweep%d.jsonl"):format(dir, i)
    local lines = {}
    for _, d in ipairs(s.docs) do lines[#lines + 1] = cjson.encode(d) end
    write(path, table.concat(lines, "\n") .. "\n")
    assert(ix:add({ path }, { sweep = s.name, threads = 2 }))
  end
  ix:close()
  return db, sweeps
end

--- All three under dir: { cluster = out, collections = out, index = db }.
function M.all(dir)
  return { cluster = (M.cluster(dir .. "/cluster")), collections = (M.collections(dir .. "/collections")),
    index = (M.index(dir .. "/index")) }
end

return M
