-- The one output writer (lua/shingle/writer.lua, core/jsonw.c, core/lua/l_json.c):
-- the same value gives the same bytes on every Lua and in every run, JSON
-- that every reader takes, CSV and TSV that spreadsheets and pandas read.
local writer = require "shingle.writer"
local cjson = require "cjson"
local support = require "support"

describe("shingle.writer", function()
  describe("json()", function()
    it("writes integer values as integers, a float with an integer value too", function()
      assert.equal('{"a":67,"b":67,"c":-3,"d":9007199254740992}', writer.json({ a = 67, b = 67.0, c = -3.0, d = 2 ^ 53 }))
      assert.equal("123456789012345", writer.json(123456789012345))   -- cjson: 1.2345678901234e+14
    end)

    it("writes other numbers with the fewest digits that read back as the same double", function()
      for _, x in ipairs({ 0.1, 1 / 3, 0.8333, 2 / 3, 1e-300, 123.456, 5e-324, 1.7976931348623157e308, -0.3 }) do
        local s = writer.json(x)
        assert.equal(x, tonumber(s))
        assert.is_true(#s <= 24, s)
      end
      assert.equal("0.1", writer.json(0.1))
      assert.equal("0.8333", writer.json(0.8333))
      assert.equal("0.3333333333333333", writer.json(1 / 3))
      assert.equal("1e+20", writer.json(1e20))
    end)

    it("writes NaN and the infinities as null", function()
      assert.equal("[null,null,null]", writer.json({ 0 / 0, math.huge, -math.huge }))
    end)

    it("leaves / unescaped and escapes what JSON needs", function()
      assert.equal('"http://a.example/b/c"', writer.json("http://a.example/b/c"))
      assert.equal('"q\\"b\\\\s\\n\\t\\r\\b\\f\\u0001\\u001f\\u007f"', writer.json('q"b\\s\n\t\r\b\f\1\31\127'))
    end)

    it("replaces each byte that is not UTF-8 by U+FFFD and keeps valid UTF-8 as it is", function()
      local rep = "\239\191\189"
      assert.equal('"caf' .. rep .. '"', writer.json("caf\233"))
      assert.equal('"é€😀"', writer.json("é€😀"))
      -- overlong, surrogate, above U+10FFFF, truncated, stray continuation
      assert.equal('"' .. rep:rep(2) .. '"', writer.json("\192\175"))
      assert.equal('"' .. rep:rep(3) .. '"', writer.json("\237\160\128"))
      assert.equal('"' .. rep:rep(4) .. '"', writer.json("\244\144\128\128"))
      assert.equal('"a' .. rep .. '"', writer.json("a\226\130"):gsub(rep .. rep, rep))
      assert.equal('"' .. rep .. 'x"', writer.json("\128x"))
      -- what it writes is UTF-8 that a strict reader takes
      local s = writer.json({ u = "\255\254 mixed é \192" })
      assert.truthy(require("shingle.core").utf8_check(s))
      assert.equal("table", type(cjson.decode(s)))
    end)

    it("writes an empty table as [], writer.object as {}, cjson.null as null", function()
      assert.equal('{"a":[],"b":{},"c":null}', writer.json({ a = {}, b = writer.object(), c = cjson.null }))
      assert.equal("[]", writer.json(writer.array()))
    end)

    it("orders keys: the given names first in their order at every depth, the others by their bytes", function()
      local v = { zeta = 1, b = 2, a = { y = 1, x = 2, B = 3 }, size = 3, cluster = 4 }
      assert.equal('{"cluster":4,"size":3,"a":{"x":2,"B":3,"y":1},"b":2,"zeta":1}',
        writer.json(v, { "cluster", "size", "x" }))
      assert.equal('{"a":{"B":3,"x":2,"y":1},"b":2,"cluster":4,"size":3,"zeta":1}', writer.json(v))
      assert.equal('{"1.5":2,"2":1,"a":3}', writer.json({ [2] = 1, [1.5] = 2, a = 3 }))
    end)

    it("gives the same bytes whatever order the table was built in", function()
      local rand = support.rng(11)
      local keys = {}
      for i = 1, 60 do keys[i] = ("k%03d_%d"):format(rand(999), i) end
      local first
      for _ = 1, 20 do
        local t = {}
        for i = #keys, 2, -1 do
          local j = rand(i)
          keys[i], keys[j] = keys[j], keys[i]
        end
        for _, k in ipairs(keys) do t[k] = { k, #k } end
        local s = writer.json(t, { "k500_1" })
        first = first or s
        assert.equal(first, s)
      end
    end)

    it("equals the Lua reference encoder on random values", function()
      local rand = support.rng(5)
      local pieces = { "a", "é", "\255", "/", '"', "\\", "\n", "\0", "x\226\130", "😀", "\127", " " }
      local function value(depth)
        local k = rand(depth > 3 and 4 or 7)
        if k == 1 then return rand(2000000) - 1000000 end
        if k == 2 then return (rand(2000000) - 1000000) / rand(1000) end
        if k == 3 then
          local p = {}
          for i = 1, rand(6) - 1 do p[i] = pieces[rand(#pieces)] end
          return table.concat(p)
        end
        if k == 4 then return rand(2) == 1 end
        local t = {}
        if k == 5 then
          for i = 1, rand(5) - 1 do t[i] = value(depth + 1) end
        else
          for _ = 1, rand(5) - 1 do t[tostring(value(9))] = value(depth + 1) end
        end
        return t
      end
      local order = { "a", "é", "/" }
      for _ = 1, 2000 do
        local v = value(0)
        assert.equal(writer.json_reference(v, order), writer.json(v, order))
        assert.equal(writer.json_reference(v), writer.json(v))
      end
    end)

    it("reads back with cjson as the value written", function()
      local v = { id = 7, url = "http://x.example/a?b=c&d", r = 0.8333, list = { 1, 2, 3 }, nested = { ok = true } }
      assert.same(v, cjson.decode(writer.json(v)))
    end)

    it("errors on what JSON cannot hold", function()
      assert.has_error(function() writer.json({ f = print }) end, "shingle.writer: cannot write a function as JSON")
      assert.has_error(function() writer.json({ [{}] = 1 }) end,
        "shingle.writer: an object key must be a string or a number, not a table")
      local t = {}
      t.self = t
      assert.has_error(function() writer.json(t) end, "shingle.writer: tables nested more than 100 deep (a cycle?)")
    end)

    it("writes '.' as the decimal point in a locale whose decimal point is ','", function()
      -- a German locale compiled into a scratch directory (glibc's localedef,
      -- sources from Debian's locales), used by a child process through LOCPATH
      local dir = support.tmpdir()
      assert(os.execute(("localedef -i de_DE -f UTF-8 %s/de_DE.UTF-8 >/dev/null 2>&1"):format(dir)))
      local lua = rawget(_G, "jit") and "luajit" or "lua" .. _VERSION:match("%d+%.%d+")
      local out = support.run(("LOCPATH=%s LUA_PATH='%s' LUA_CPATH='%s' %s -e 'assert(os.setlocale(\"de_DE.UTF-8\", \"numeric\")); "
        .. "io.write(require(\"shingle.writer\").json({ 0.25, 1 / 3, 1e-7 }))'")
        :format(dir, package.path, package.cpath, lua))
      support.rmdir(dir)
      assert.equal("[0.25,0.3333333333333333,1e-07]", out)
    end)
  end)

  describe("new() and write_file()", function()
    local function collect(fmt, shape, recs)
      local out = {}
      local f = { write = function(_, ...) for _, s in ipairs({ ... }) do out[#out + 1] = s end return true end }
      local w = writer.new(f, fmt, shape)
      for _, r in ipairs(recs) do w:write(r) end
      w:finish()
      return table.concat(out)
    end

    it("writes JSON Lines, one record a line", function()
      assert.equal('{"a":1,"b":"x"}\n{"a":2}\n', collect("jsonl", { order = { "a" } }, { { a = 1, b = "x" }, { a = 2 } }))
    end)

    it("writes JSON as one list, [] when there is no record", function()
      assert.equal('[\n{"a":1},\n{"a":2}\n]\n', collect("json", {}, { { a = 1 }, { a = 2 } }))
      assert.equal("[]\n", collect("json", {}, {}))
      assert.same({ { a = 1 }, { a = 2 } }, cjson.decode(collect("json", {}, { { a = 1 }, { a = 2 } })))
    end)

    it("writes CSV with a header, quoting what RFC 4180 asks", function()
      local s = collect("csv", { columns = { "a", "b", "c" } },
        { { a = "x,y", b = 'say "hi"', c = 0.5 }, { a = "two\nlines", c = { 1, 2 } }, { b = true } })
      assert.equal('a,b,c\n"x,y","say ""hi""",0.5\n"two\nlines",,"[1,2]"\n,true,\n', s)
      assert.equal("a,b\n", collect("csv", { columns = { "a", "b" } }, {}))
    end)

    it("writes TSV with a header, tab, newline and backslash escaped", function()
      local s = collect("tsv", { columns = { "a", "b" } }, { { a = "x\ty", b = "1\\2\n" }, { a = 3 } })
      assert.equal("a\tb\nx\\ty\t1\\\\2\\n\n3\t\n", s)
    end)

    it("turns a record into rows with shape.rows", function()
      local shape = { columns = { "cluster", "id" }, rows = function(r)
        local rows = {}
        for i, m in ipairs(r.members) do rows[i] = { cluster = r.cluster, id = m } end
        return rows
      end }
      assert.equal("cluster,id\n1,10\n1,11\n2,12\n", collect("csv", shape, { { cluster = 1, members = { 10, 11 } },
        { cluster = 2, members = { 12 } } }))
    end)

    it("replaces bytes that are not UTF-8 in CSV cells too", function()
      assert.equal("a\nx\239\191\189\n", collect("csv", { columns = { "a" } }, { { a = "x\255" } }))
    end)

    it("refuses an unknown format and CSV without columns", function()
      assert.has_error(function() writer.new(io.stdout, "xml") end,
        "shingle.writer: unknown format 'xml'; use jsonl, json, csv or tsv")
      assert.has_error(function() writer.new(io.stdout, "csv", {}) end, "shingle.writer: csv needs shape.columns")
    end)

    it("writes a file atomically and names it when it cannot", function()
      local dir = support.tmpdir()
      assert.is_true(writer.write_file(dir .. "/x.jsonl", "jsonl", {}, function(w) w:write({ a = 1 }) end))
      assert.equal('{"a":1}\n', support.read(dir .. "/x.jsonl"))
      local ok, err = writer.write_file(dir .. "/no/such/x.jsonl", "jsonl", {}, function(w) w:write({ a = 1 }) end)
      assert.is_nil(ok)
      assert.matches("cannot write " .. dir .. "/no/such/x.jsonl", err, 1, true)
      ok, err = writer.write_file(dir .. "/y.jsonl", "jsonl", {}, function(w) w:write({ f = print }) end)
      assert.is_nil(ok)
      assert.matches("cannot write " .. dir .. "/y.jsonl: shingle.writer: cannot write a function as JSON", err, 1, true)
      assert.is_nil(io.open(dir .. "/y.jsonl.tmp"))
      support.rmdir(dir)
    end)
  end)
end)
