-- A custom extractor or rule set that raises on a document: the command
-- stops with "extractor NAME failed on PATH: message" (not an internal
-- error with a stack trace), or with --on-error skip skips the document and
-- counts it; nothing is left beside an earlier result.
local support = require "support"
local cjson = require "cjson"

local lua = rawget(_G, "jit") and "luajit" or "lua" .. _VERSION:match("%d+%.%d+")
local shingle_cmd = lua .. " bin/shingle "

local function listing(dir)
  local names = {}
  local p = io.popen("ls -A " .. dir)
  for n in p:lines() do names[#names + 1] = n end
  p:close()
  table.sort(names)
  return table.concat(names, " ")
end

describe("an extractor that raises", function()
  local dir
  setup(function()
    dir = support.tmpdir()
    os.execute("mkdir -p " .. dir .. "/in " .. dir .. "/work")
    support.write(dir .. "/in/a.txt", "one two three four five six seven eight nine ten eleven twelve")
    support.write(dir .. "/in/b.txt", "one two three four five six seven eight nine ten eleven twelve thirteen")
    support.write(dir .. "/in/bad.txt", "this one cannot be parsed by the extractor")
    support.write(dir .. "/picky.lua", [[
return { name = "picky", kind = "sequence", extract = function(bytes, path)
  if path:find("bad", 1, true) then error("no header in this file", 0) end
  local t = {}
  for w in bytes:gmatch("%S+") do t[#t + 1] = w end
  return t
end }]])
  end)
  teardown(function() support.rmdir(dir) end)

  local function fails(args)
    local text, code = support.run(shingle_cmd .. args)
    assert.are_not.equal(0, code, text)
    assert.is_falsy(text:find("internal error", 1, true), text)
    assert.is_falsy(text:find("traceback", 1, true), text)
    assert.is_truthy(text:find("extractor picky failed on " .. dir .. "/in/bad.txt: no header in this file", 1, true), text)
    return text
  end

  it("stops cluster naming the extractor, the document and the message, leaving the earlier run as it was", function()
    local out = dir .. "/work/out"
    local text, code = support.run(shingle_cmd .. "cluster -q " .. dir .. "/in/a.txt " .. dir .. "/in/b.txt -o " .. out
      .. " --extractor " .. dir .. "/picky.lua")
    assert.are.equal(0, code, text)
    local before = listing(dir .. "/work")
    local clusters = support.read(out .. "/clusters.jsonl")
    fails("cluster -q " .. dir .. "/in -o " .. out .. " --extractor " .. dir .. "/picky.lua")
    assert.are.equal(before, listing(dir .. "/work"))
    assert.are.equal(clusters, support.read(out .. "/clusters.jsonl"))
    local tmp = io.popen("find " .. dir .. "/work -name '*.tmp'"):read("a")
    assert.are.equal("", tmp)
  end)

  it("skips the document with --on-error skip, counted in the summary", function()
    local out = dir .. "/work/skip"
    local text, code = support.run(shingle_cmd .. "cluster -q " .. dir .. "/in -o " .. out .. " --extractor "
      .. dir .. "/picky.lua --on-error skip")
    assert.are.equal(0, code, text)
    local sum = cjson.decode(support.read(out .. "/summary.json"))
    assert.are.equal(3, sum.documents)
    assert.are.equal(1, sum.skipped)
  end)

  it("stops compare, index add and sketch the same way", function()
    fails("compare --extractor " .. dir .. "/picky.lua " .. dir .. "/in/a.txt " .. dir .. "/in/bad.txt")
    fails("index add -q " .. dir .. "/work/db " .. dir .. "/in --sweep s1 --extractor " .. dir .. "/picky.lua")
    fails("sketch -q " .. dir .. "/in -o " .. dir .. "/work/x.sks --extractor " .. dir .. "/picky.lua")
    assert.is_nil(io.open(dir .. "/work/x.sks"))
  end)
end)

describe("a rule set whose Lua step raises", function()
  it("stops naming the rule set and the document", function()
    local dir = support.tmpdir()
    os.execute("mkdir -p " .. dir .. "/in")
    support.write(dir .. "/in/a.txt", "alpha beta gamma delta epsilon zeta eta theta iota kappa")
    support.write(dir .. "/rules.lua", [[
return { "lowercase", { name = "boom", text = function(s) error("step exploded", 0) end } }]])
    local text, code = support.run(shingle_cmd .. "cluster -q " .. dir .. "/in -o " .. dir .. "/out --rules "
      .. dir .. "/rules.lua")
    assert.are_not.equal(0, code, text)
    assert.is_falsy(text:find("internal error", 1, true), text)
    assert.is_truthy(text:find("failed on " .. dir .. "/in/a.txt: step exploded", 1, true), text)
    support.rmdir(dir)
  end)
end)
