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
  -- the readers of issue 14: a gzip file, an mbox archive
  assert(os.execute("gzip -c " .. dir .. "/in.jsonl > " .. dir .. "/in.jsonl.gz"))
  f = assert(io.open(dir .. "/box.mbox", "w"))
  f:write("From a@example.org Mon Jan  1 10:00:00 2024\nFrom: a@example.org\nSubject: one\n\nfirst body\n\n",
    "From b@example.org Mon Jan  1 11:00:00 2024\nFrom: b@example.org\nSubject: two\n",
    "Content-Type: text/html; charset=iso-8859-1\nContent-Transfer-Encoding: quoted-printable\n\n<p>caf=E9</p>\n")
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
-- compressed input, email, sketch files, the in-memory LSH index (issue 14's bindings)
local z = assert(core.zopen(dir .. "/in.jsonl.gz"))
local line = z:line(1000)
put(z:kind() .. ":" .. #line)
z:close()
put(#assert(core.zread(dir .. "/in.jsonl.gz", 1 << 20)))
local html_text, info = core.mail_render("Subject: =?utf-8?q?caf=C3=A9?=\nFrom: x@example.org\n"
  .. "Content-Type: multipart/alternative; boundary=b\n\n--b\nContent-Type: text/plain\n\nplain\n--b\n"
  .. "Content-Type: text/html\n\n<b>rich</b>\n--b--\n")
put(#html_text .. ":" .. info.subject .. ":" .. info.parts)
local mb = assert(core.mbox(dir .. "/box.mbox", 1 << 20, "box"))
local msgs = mb:batch(10)
mb:close()
put(#msgs)
local sketches = require "shingle.sketches"
local w = assert(sketches.create(dir .. "/s.sks"))
w:write("a", a)
w:write(7, b)
assert(w:close())
local rd = assert(sketches.open(dir .. "/s.sks"))
local s1, k1 = rd:read()
put(tostring(k1) .. ":" .. tostring(s1 == a))
rd:close()
local lsh = require("shingle.lsh").new{ sketch = sh, threshold = 0.5 }
lsh:insert("one", texts[1])
lsh:insert("two", texts[2])
put(#lsh:query(texts[1]))
local ix = assert(index.open(dir .. "/idx", { readonly = true }))
local hits = assert(ix:similar(texts[2], { threshold = 0.1 }))
put(#hits .. ":" .. hits[1].url)
put(#assert(ix:cluster_of("http://a.example/1")))
put(ix:count())
ix:close()
return table.concat(out, ";")
