-- JSON Lines input (core/jsonl.c): values are checked, lines are bounded,
-- and nothing reaches docs.jsonl that is not faithful JSON text. Regression
-- tests for defect 9 of issue 11.
local core = require "shingle.core"
local support = require "support"
local tmpdir, read, write = support.tmpdir, support.read, support.write
local cjson = require "cjson"

local lua = rawget(_G, "jit") and "luajit" or "lua" .. _VERSION:match("%d+%.%d+")
local shingle_cmd = lua .. " bin/shingle "

-- Whether s is well-formed UTF-8 (Unicode table 3-7), in plain Lua.
local function utf8_ok(s)
  local i, n = 1, #s
  while i <= n do
    local c = s:byte(i)
    local k, lo, hi = 0, 0x80, 0xBF
    if c < 0x80 then k = 1
    elseif c >= 0xC2 and c <= 0xDF then k = 2
    elseif c >= 0xE0 and c <= 0xEF then k = 3; if c == 0xE0 then lo = 0xA0 elseif c == 0xED then hi = 0x9F end
    elseif c >= 0xF0 and c <= 0xF4 then k = 4; if c == 0xF0 then lo = 0x90 elseif c == 0xF4 then hi = 0x8F end
    else return false end
    if k > 1 then
      local b = s:byte(i + 1)
      if not b or b < lo or b > hi then return false end
      for j = i + 2, i + k - 1 do
        local x = s:byte(j)
        if not x or x < 0x80 or x > 0xBF then return false end
      end
    end
    i = i + k
  end
  return true
end

local text = "the same words make the same shingles in every document of this test"

describe("core.jsonl()", function()
  local dir
  before_each(function() dir = tmpdir() end)
  after_each(function() os.execute("rm -rf " .. dir) end)

  it("reads documents in batches, with the line number, and names NAME:LINE a document without url or id", function()
    write(dir .. "/a.jsonl", '{"url":"u1","text":"one","date":"2026"}\n\n{"id":7,"text":"two"}\n{"text":"three"}\n')
    local r = assert(core.jsonl(dir .. "/a.jsonl"))
    local docs, errors, done = r:batch(2)
    -- a plain file's documents say where their line is (exact verification reads it again)
    local src = dir .. "/a.jsonl"
    assert.are.same({ { url = "u1", text = "one", date = "2026", line = 1, source = src, at = 0, at_len = 39 },
      { url = "7", text = "two", line = 3, source = src, at = 41, at_len = 21 } }, docs)
    assert.are.same({}, errors)
    assert.is_false(done)
    docs, errors, done = r:batch(10)
    assert.are.same({ { url = dir .. "/a.jsonl:4", text = "three", line = 4, source = src, at = 63, at_len = 16 } }, docs)
    assert.is_true(done)
    r:close()
  end)

  it("refuses values that are not faithful text, naming the input, line, column and field", function()
    local lines = {
      '{"url":"u","text":"t","date":[1]}',
      '{"url":5.0,"text":"t"}',
      '{"url":"u","text":"t","date":1e999}',
      '{"url":"http://a.example/\255","text":"t"}',
      '{"url":"ok","text":"t"}',
    }
    write(dir .. "/v.jsonl", table.concat(lines, "\n") .. "\n")
    local r = assert(core.jsonl(dir .. "/v.jsonl"))
    local docs, errors = r:batch(10)
    assert.are.equal(1, #docs)
    assert.are.equal("ok", docs[1].url)
    local name = dir .. "/v.jsonl"
    assert.are.same({
      name .. ": line 1: column 30: the date 'date' is an array; it must be a string or an integer; skipped",
      name .. ": line 2: column 8: the URL 'url' is a number with a fraction or an exponent (5.0); give it as a string; skipped",
      name .. ": line 3: column 30: the date 'date' is a number with a fraction or an exponent (1e999); give it as a string; skipped",
      name .. ": line 4: column 8: the URL 'url' is not valid UTF-8 text; give it in UTF-8 (or percent-encoded); skipped",
    }, errors)
  end)

  it("refuses a line over max_line without reading it whole, and goes on", function()
    write(dir .. "/big.jsonl", '{"text":"a"}\n{"text":"' .. ("x"):rep(5000) .. '"}\n{"text":"b"}\n')
    local r = assert(core.jsonl(dir .. "/big.jsonl", { max_line = 1000 }))
    local docs, errors = r:batch(10)
    assert.are.equal(2, #docs)
    assert.are.equal(1, #errors)
    assert.is_truthy(errors[1]:find("line 2: longer than the limit of 1000 bytes (5011 bytes", 1, true), errors[1])
  end)
end)

describe("core.text()", function()
  it("percent-encodes bytes that are not UTF-8 and control characters, and leaves good text alone", function()
    assert.are.equal("http://a.example/caf%E9?x=%FF%FE", core.text("http://a.example/caf\233?x=\255\254"))
    assert.are.equal("tab%09here%0A", core.text("tab\there\n"))
    local s = "http://b.example/caf\195\169/\226\130\172"
    assert.are.equal(s, core.text(s))
    assert.are.equal("%ED%A0%80", core.text("\237\160\128")) -- an encoded surrogate is not UTF-8
  end)
end)

describe("shingle cluster over JSON Lines", function()
  local dir
  before_each(function() dir = tmpdir() end)
  after_each(function() os.execute("rm -rf " .. dir) end)

  it("skips records with bad values with a warning each, and writes docs.jsonl as valid UTF-8 JSON", function()
    local lines = {
      cjson.encode({ url = "http://a.example/1", text = text, date = "2026-11-01" }),
      '{"url":"http://a.example/2","text":"' .. text .. '","date":[1]}',
      '{"url":5,"text":"' .. text .. ' five","date":20261101}',
      '{"url":5.5,"text":"' .. text .. '"}',
      '{"url":"http://a.example/3","text":"' .. text .. '","date":1e999}',
      '{"url":"http://a.example/\255","text":"' .. text .. '"}',
    }
    write(dir .. "/in.jsonl", table.concat(lines, "\n") .. "\n")
    local out, code = support.run(shingle_cmd .. "cluster " .. dir .. "/in.jsonl -o " .. dir .. "/out")
    assert.are.equal(0, code, out)
    assert.is_truthy(out:find("documents 2 (skipped 4)", 1, true), out)
    for _, l in ipairs({ 2, 4, 5, 6 }) do
      assert.is_truthy(out:find(dir .. "/in.jsonl: line " .. l .. ": column ", 1, true), out)
    end
    local docs = read(dir .. "/out/docs.jsonl")
    assert.is_true(utf8_ok(docs))
    assert.is_nil(docs:find("table: 0x", 1, true))
    local seen = {}
    for line in docs:gmatch("[^\n]+") do
      local d = cjson.decode(line)
      seen[#seen + 1] = { d.url, d.date }
    end
    assert.are.same({ { "http://a.example/1", "2026-11-01" }, { "5", "20261101" } }, seen)
  end)

  it("writes file names that are not UTF-8 percent-encoded in docs.jsonl and clusters.jsonl", function()
    assert(os.execute("mkdir " .. dir .. "/in"))
    write(dir .. "/in/caf\233.txt", text)
    write(dir .. "/in/copy.txt", text .. " again")
    local out, code = support.run(shingle_cmd .. "cluster -q " .. dir .. "/in -o " .. dir .. "/out")
    assert.are.equal(0, code, out)
    local want = dir .. "/in/caf%E9.txt"
    for _, f in ipairs({ "docs.jsonl", "clusters.jsonl" }) do
      local s = read(dir .. "/out/" .. f)
      assert.is_true(utf8_ok(s), f)
      local found = false
      for line in s:gmatch("[^\n]+") do
        local d = cjson.decode(line)
        for _, m in ipairs(d.members or { d }) do found = found or m.url == want end
      end
      assert.is_true(found, s)
    end
  end)

  it("refuses a line longer than --max-bytes before reading it whole", function()
    local f = assert(io.open(dir .. "/in.jsonl", "wb"))
    f:write(cjson.encode({ url = "a", text = text }), "\n", '{"url":"big","text":"', ("w "):rep(600 * 1024), '"}\n',
      cjson.encode({ url = "b", text = text .. " b" }), "\n")
    f:close()
    local out, code = support.run(shingle_cmd .. "cluster --max-bytes 512K " .. dir .. "/in.jsonl -o " .. dir .. "/out")
    assert.are.equal(0, code, out)
    assert.is_truthy(out:find("in.jsonl: line 2: longer than the limit of 524288 bytes", 1, true), out)
    assert.is_truthy(out:find("documents 2 (skipped 1)", 1, true), out)
  end)
end)
