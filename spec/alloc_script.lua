-- The script core/test/alloc_lua.c runs with an allocator that fails the
-- n-th allocation, for every n (docs/robustness.md, "Memory"): a tour of the
-- API, returning a digest of what it computed. Called as ("prepare", dir)
-- once to make its files, then ("run", dir).
local mode, dir = ...
local shingle = require "shingle"
local core = require "shingle.core"
local index = require "shingle.index"
local input = require "shingle.input"

local texts = {
  "the quick brown fox jumps over the lazy dog and runs away into the woods",
  "the quick brown fox jumps over the lazy cat and runs away into the woods",
  "<html><body><p>Caf&eacute; &amp; cr&egrave;me: the <b>quick</b> brown fox</p></body></html>",
}

if mode == "prepare" then
  local f = assert(io.open(dir .. "/in.jsonl", "w"))
  for i, t in ipairs(texts) do f:write(require("cjson").encode({ url = "http://a.example/" .. i, text = t }), "\n") end
  f:write('{"url":5.5,"text":"bad"}\n')
  f:close()
  local ix = assert(index.open(dir .. "/idx"))
  assert(ix:add({ dir .. "/in.jsonl" }, { sweep = "s1", threads = 1 }))
  ix:close()
  return "prepared"
end

local out = {}
local function put(x) out[#out + 1] = tostring(x) end

local sh = shingle.new{ w = 3, sketch = "min", s = 20 }
local a, b = sh:sketch(texts[1]), sh:sketch(texts[2])
put(("%.4f %.4f"):format(a:resemblance(b), a:containment(b)))
local c = assert(shingle.load(a:serialize()))
put(c == a)
put(table.concat(sh:tokens("Hello, World! Caf\195\169"), ","))
for _, fp, first, last in sh:shingles("one two three four five") do put(first .. ":" .. last .. ":" .. core.tohex(fp)) end
local mod = shingle.new{ w = 2, sketch = "mod", m = 2, floor = 0 }
put(#mod:sketch(texts[1]))
local html = shingle.new{ w = 2, html = true, sketch = "full" }
put(#html:sketch(texts[3]))
put(("%.4f"):format(shingle.exact(texts[1], texts[2], { w = 3 }).resemblance))
put(table.concat(core.links('<a href="x/y.html">y</a><a href="../z">z</a>', "http://a.example/d/p.html"), " "))
put(core.text("http://a.example/caf\233"))
put(core.crc32("abc"))
local r = assert(core.jsonl(dir .. "/in.jsonl"))
local docs, errors = r:batch(10)
r:close()
put(#docs .. "/" .. #errors .. ":" .. docs[2].url)
local n = 0
for d in input.documents({ dir .. "/in.jsonl" }) do n = n + #d.text end
put(n)
local ix = assert(index.open(dir .. "/idx", { readonly = true }))
local hits = assert(ix:similar(texts[2], { threshold = 0.1 }))
put(#hits .. ":" .. hits[1].url)
put(#assert(ix:cluster_of("http://a.example/1")))
put(ix:count())
ix:close()
return table.concat(out, ";")
