-- bench/lib/gen.lua: the synthetic corpus generator with planted near-duplicates.
local gen = require "gen"
local shingle = require "shingle"
local support = require "support"
local tmpdir = support.tmpdir


local function rmrf(path) os.execute("rm -rf '" .. path .. "'") end

local function slurp(path)
  local f = assert(io.open(path, "rb"))
  local s = f:read("*a")
  f:close()
  return s
end

local function lines(path)
  local out = {}
  for line in io.lines(path) do out[#out + 1] = line end
  return out
end

local function has(cmd) return select(2, support.run("command -v " .. cmd)) == 0 end

-- One corpus shared by the property checks: small documents, many families.
local docs = gen.list{ docs = 240, seed = 3, size = 1500, families = 0.6 }
local byid = {}
for _, d in ipairs(docs) do byid[d.id] = d end

local function of_kind(kind)
  local out = {}
  for _, d in ipairs(docs) do
    if d.kind == kind then out[#out + 1] = d end
  end
  return out
end

describe("bench/lib/gen.lua", function()
  describe("corpus()", function()
    it("gives the same documents for the same seed, on every Lua", function()
      local a = gen.list{ docs = 40, seed = 13, size = 600 }
      local b = gen.list{ docs = 40, seed = 13, size = 600 }
      assert.same(a, b)
      -- Known answers: Lua 5.3 and 5.4 integers and LuaJIT doubles agree.
      assert.equal("Ton ba jadevin nesen wajer. Vot jedar zan zalawur sedi", a[1].text:sub(1, 54))
      assert.equal("http://host1.example/path/1.html", a[1].url)
      assert.equal("2026-05-27T19:47:30Z", a[1].date)
      assert.equal("mun zit, fecut wohin. Dovodel ", a[40].text:sub(-30))
      local kinds, bytes = {}, 0
      for i = 1, 40 do
        kinds[i] = a[i].kind:sub(1, 3)
        bytes = bytes + #a[i].text
      end
      assert.equal("noi noi noi ori ori noi noi ori noi noi noi noi ori noi ori edi exa con noi noi " ..
                   "for noi noi noi noi edi noi noi noi ori edi edi exa tru con edi edi con for tru",
                   table.concat(kinds, " "))
      assert.equal(22210, bytes)
    end)

    it("gives other documents for another seed", function()
      local a = gen.list{ docs = 5, seed = 1, size = 600 }
      local b = gen.list{ docs = 5, seed = 2, size = 600 }
      assert.are_not.equal(a[1].text, b[1].text)
    end)

    it("numbers documents 1..N with URLs and dates of the documented form", function()
      for i, d in ipairs(docs) do
        assert.equal(i, d.id)
        assert.truthy(d.url:match("^http://host%d+%.example/path/" .. i .. "%.html$")
                      or d.url:match("^http://host%d+%.example/path/" .. i .. "%.txt$"), d.url)
        assert.truthy(d.date:match("^2026%-%d%d%-%d%dT%d%d:%d%d:%d%dZ$"), d.date)
      end
    end)

    it("makes documents of about the asked size", function()
      local total = 0
      for d in gen.corpus{ docs = 200, seed = 5, size = 3000, families = 0 } do total = total + #d.text end
      assert.is_true(math.abs(total / 200 - 3000) < 300, "mean size " .. total / 200)
    end)

    it("puts about the asked fraction of documents in families, originals first", function()
      local fam = 0
      for _, d in ipairs(docs) do
        if d.family then fam = fam + 1 end
        if d.parent then
          local p = byid[d.parent]
          assert.is_true(d.parent < d.id)
          assert.equal("original", p.kind)
          assert.equal(p.family, d.family)
        end
        if d.kind == "noise" then assert.is_nil(d.family) end
      end
      assert.is_true(math.abs(fam / #docs - 0.6) < 0.12, "family fraction " .. fam / #docs)
      for _, kind in ipairs{ "exact", "format", "edit", "insert", "truncate", "boilerplate", "contained" } do
        assert.is_true(#of_kind(kind) > 0, "no " .. kind .. " variant")
      end
    end)

    it("errors on an unknown option, naming the known ones", function()
      assert.has_error(function() gen.corpus{ doc = 3 } end,
        "unknown option 'doc'; known options are: docs, families, hosts, seed, size, txt, vocab, zipf")
    end)

    it("errors on an out-of-range option", function()
      assert.has_error(function() gen.corpus{ families = 2 } end,
        "option 'families' is 2; use a number from 0 to 1")
      assert.has_error(function() gen.corpus{ docs = 1.5 } end,
        "option 'docs' is 1.5; use a whole number from 0 to 1099511627776")
    end)
  end)

  describe("planted resemblance", function()
    local function exact(a, b) return assert(shingle.exact(a, b)) end

    it("gives exact copies resemblance 1", function()
      for _, d in ipairs(of_kind("exact")) do
        assert.equal(byid[d.parent].text, d.text)
        assert.equal(1, exact(d.text, byid[d.parent].text).resemblance)
      end
    end)

    it("gives formatting-only copies resemblance 1 though their bytes differ", function()
      for _, d in ipairs(of_kind("format")) do
        assert.are_not.equal(byid[d.parent].text, d.text)
        assert.equal(1, exact(d.text, byid[d.parent].text).resemblance)
      end
    end)

    it("gives truncations and excerpts containment 1 in their original", function()
      local n = 0
      for _, kind in ipairs{ "truncate", "contained" } do
        for _, d in ipairs(of_kind(kind)) do
          local e = exact(d.text, byid[d.parent].text)
          assert.equal(1, e.containment)
          assert.is_true(e.resemblance < 1)
          n = n + 1
        end
      end
      assert.is_true(n > 0)
    end)

    it("keeps the original whole inside a boilerplate variant", function()
      for _, d in ipairs(of_kind("boilerplate")) do
        local e = exact(byid[d.parent].text, d.text)
        assert.equal(1, e.containment)
        assert.is_true(e.resemblance > 0.5 and e.resemblance < 1)
      end
    end)

    it("gives edits at rate e a resemblance that decreases with e, near the expected", function()
      local g = gen.new{ seed = 9 }
      local c = g:words(2000)
      local text = g:text(c)
      local last = 1
      for _, e in ipairs{ 0.002, 0.01, 0.03, 0.05, 0.08, 0.12 } do
        local r = exact(text, g:text(g:edit(c, e))).resemblance
        assert.is_true(r < last, ("rate %g: resemblance %g not below %g"):format(e, r, last))
        assert.is_true(math.abs(r - gen.expected(e)) < 0.1,
                       ("rate %g: resemblance %g, expected %g"):format(e, r, gen.expected(e)))
        last = r
      end
    end)

    it("spreads the corpus's edits over 0.3..0.99, many near 0.5 on both sides", function()
      local below, above, lo, hi = 0, 0, 1, 0
      for _, d in ipairs(of_kind("edit")) do
        local r = exact(d.text, byid[d.parent].text).resemblance
        assert.is_true(math.abs(r - d.expected) < 0.12, ("id %d: %g vs expected %g"):format(d.id, r, d.expected))
        if r >= 0.4 and r < 0.5 then below = below + 1 end
        if r >= 0.5 and r < 0.6 then above = above + 1 end
        lo, hi = math.min(lo, r), math.max(hi, r)
      end
      assert.is_true(below > 0 and above > 0, ("%d just below 0.5, %d just above"):format(below, above))
      assert.is_true(lo < 0.45 and hi > 0.75, ("range %g..%g"):format(lo, hi))
    end)

    it("gives noise documents resemblance below 0.1 with every other document", function()
      local sh = shingle.new{ sketch = "full" }
      local sk = {}
      for i, d in ipairs(docs) do sk[i] = assert(sh:sketch(d.text)) end
      for i, d in ipairs(docs) do
        if d.kind == "noise" then
          for j = 1, #docs do
            if j ~= i then
              local r = sk[i]:resemblance(sk[j])
              assert.is_true(r < 0.1, ("noise %d and %d: %g"):format(i, j, r))
            end
          end
        end
      end
    end)
  end)

  describe("writers", function()
    local small = gen.list{ docs = 30, seed = 4, size = 800, families = 0.5 }

    it("write_jsonl() writes one object a line and the truth beside it", function()
      local dir = tmpdir()
      local n = assert(gen.write_jsonl(small, dir .. "/c.jsonl", { truth = dir .. "/t.jsonl" }))
      assert.equal(30, n)
      local l = lines(dir .. "/c.jsonl")
      assert.equal(30, #l)
      local d = small[1]
      local head = ('{"id":1,"url":"%s","date":"%s","text":'):format(d.url, d.date)
      assert.equal(head, l[1]:sub(1, #head))
      assert.equal(gen.json_string(d.text) .. "}", l[1]:sub(#head + 1))
      local t = lines(dir .. "/t.jsonl")
      assert.equal(30, #t)
      for i, line in ipairs(t) do
        local dd = small[i]
        assert.truthy(line:find('"kind":"' .. dd.kind .. '"', 1, true))
        assert.truthy(line:find('"parent":' .. (dd.parent and tostring(dd.parent) or "null"), 1, true))
        assert.truthy(line:find('"family":' .. (dd.family and tostring(dd.family) or "null"), 1, true))
      end
      assert.equal(slurp(dir .. "/t.jsonl"), (function()
        assert(gen.truth(small, dir .. "/t2.jsonl"))
        return slurp(dir .. "/t2.jsonl")
      end)())
      rmrf(dir)
    end)

    it("json_string() escapes quotes, backslashes and control characters", function()
      assert.equal([["a\"b\\c\nd\te\u0001"]], gen.json_string('a"b\\c\nd\te\1'))
    end)

    it("returns nil and a message when it cannot write", function()
      local n, err = gen.write_jsonl(small, "/nonexistent/dir/c.jsonl")
      assert.is_nil(n)
      assert.truthy(err:find("cannot write /nonexistent/dir/c.jsonl", 1, true), err)
    end)

    it("write_dir() writes a file per document at its URL's path; HTML pages give the text's shingles", function()
      local dir = tmpdir()
      assert.equal(30, assert(gen.write_dir(small, dir)))
      local html, plain = shingle.new{ html = true, sketch = "full" }, shingle.new{ sketch = "full" }
      local seen = {}
      for _, d in ipairs(small) do
        local body = slurp(dir .. "/" .. d.url:match("^http://(.*)$"))
        local ext = d.url:match("%.(%a+)$")
        seen[ext] = true
        if ext == "html" then
          assert.truthy(body:find("<p>", 1, true))
          assert.equal(1, html:sketch(body):resemblance(plain:sketch(d.text)))
        else
          assert.equal(d.text, body)
        end
      end
      assert.is_true(seen.html and seen.txt)
      rmrf(dir)
    end)

    it("write_warc() writes WARC/1.0 response records with the URL, date and HTTP headers", function()
      local dir = tmpdir()
      assert.equal(30, assert(gen.write_warc(small, dir .. "/c.warc")))
      local s = slurp(dir .. "/c.warc")
      -- walk the records by their Content-Length
      local pos, n = 1, 0
      while pos <= #s do
        local head_end = assert(s:find("\r\n\r\n", pos, true))
        local head = s:sub(pos, head_end + 1)
        assert.equal("WARC/1.0\r\n", head:sub(1, 10))
        local len = tonumber(head:match("\r\nContent%-Length: (%d+)\r\n"))
        local block = s:sub(head_end + 4, head_end + 3 + len)
        assert.equal("\r\n\r\n", s:sub(head_end + 4 + len, head_end + 7 + len))
        if head:find("WARC-Type: response", 1, true) then
          n = n + 1
          local d = small[n]
          assert.truthy(head:find("WARC-Target-URI: " .. d.url .. "\r\n", 1, true))
          assert.truthy(head:find("WARC-Date: " .. d.date .. "\r\n", 1, true))
          assert.equal("HTTP/1.1 200 OK\r\n", block:sub(1, 17))
          assert.equal(gen.body(d), block:sub(block:find("\r\n\r\n", 1, true) + 4))
        end
        pos = head_end + 8 + len
      end
      assert.equal(30, n)
      rmrf(dir)
    end)

    it("write_warc{gzip = true} writes one gzip member per record", function()
      if not has("gzip") then
        pending("gzip is not installed")
        return
      end
      local dir = tmpdir()
      assert(gen.write_warc(small, dir .. "/c.warc"))
      assert(gen.write_warc(small, dir .. "/c.warc.gz", { gzip = true }))
      local gz = slurp(dir .. "/c.warc.gz")
      assert.equal("\31\139", gz:sub(1, 2))
      local _, members = gz:gsub("\31\139\8\0\0\0\0\0", "")
      assert.equal(31, members) -- warcinfo + 30 (gzip -n: no name, no time)
      local out, code = support.run("gzip -dc '" .. dir .. "/c.warc.gz' | cmp - '" .. dir .. "/c.warc'")
      assert.equal(0, code, out)
      local core = shingle.core
      if core.warc then -- the WARC reader of the C core, where it is built
        local r = assert(core.warc(dir .. "/c.warc.gz"))
        local got, errs = r:batch(100)
        assert.same({}, errs)
        assert.equal(30, #got)
        assert.equal(small[7].url, got[7].url)
        assert.equal(gen.body(small[7]), got[7].text)
      end
      rmrf(dir)
    end)
  end)

  describe("bench/gen.c", function()
    it("writes the same JSON Lines and truth as the Lua module for the same options", function()
      if not has("cc") then
        pending("no C compiler")
        return
      end
      local dir = tmpdir()
      local out, code = support.run(("cc -O2 -std=c99 -o '%s/gen' bench/gen.c -lm"):format(dir))
      assert.equal(0, code, out)
      out, code = support.run(("'%s/gen' --docs 150 --size 1200 --seed 8 --families 0.7 --out '%s/c.jsonl' --truth '%s/t.jsonl'")
        :format(dir, dir, dir))
      assert.equal(0, code, out)
      local it = gen.corpus{ docs = 150, size = 1200, seed = 8, families = 0.7 }
      assert(gen.write_jsonl(it, dir .. "/l.jsonl", { truth = dir .. "/lt.jsonl" }))
      assert.is_true(slurp(dir .. "/c.jsonl") == slurp(dir .. "/l.jsonl"), "corpus differs")
      assert.is_true(slurp(dir .. "/t.jsonl") == slurp(dir .. "/lt.jsonl"), "truth differs")
      rmrf(dir)
    end)
  end)
end)
