-- The Lua API and the command line have one set of defaults
-- (docs/api.md, "One set of options"): shingle.new{}, shingle.pipeline,
-- shingle.index and every command's options agree, and a document
-- sketched by a script and by the command line gives the same sketch.
local shingle = require "shingle"
local options = require "shingle.options"
local pipeline = require "shingle.pipeline"
local index = require "shingle.index"
local support = require "support"

local lua = rawget(_G, "jit") and "luajit" or "lua" .. _VERSION:match("%d+%.%d+")

local keys = { "w", "sketch", "m", "s", "floor", "k", "option", "invalid", "fold", "punctuation", "numbers" }
local cli_names = { w = "--width", sketch = "--sketch", m = "--modulus", s = "--size", floor = "--floor", k = "--degree",
  option = "--option", invalid = "--invalid" }

describe("one set of defaults", function()
  it("in shingle.new, shingle.pipeline and shingle.index", function()
    for _, k in ipairs(keys) do
      assert.are.equal(options.defaults[k], pipeline.defaults[k], k)
      if k ~= "floor" then assert.are.equal(options.defaults[k], index.defaults[k], k) end
    end
  end)

  it("on the command line of every command that sketches", function()
    local p = require("shingle.cli").parser()
    for _, c in ipairs(p._commands) do
      if ({ cluster = true, compare = true, explain = true, dedup = true, sketch = true })[c._name] then
        for k, name in pairs(cli_names) do
          for _, o in ipairs(c._options) do
            for _, alias in ipairs(o._aliases) do
              if alias == name then
                assert.are.equal(tostring(options.defaults[k]), o._default, c._name .. " " .. name)
              end
            end
          end
        end
      end
    end
  end)

  it("give the same sketch from a script and from the command line", function()
    local dir = support.tmpdir()
    local text = support.read("samples/docs/rabin-original.txt") .. " caf\xe9 au lait" -- a Latin-1 byte too
    support.write(dir .. "/doc.txt", text)
    local out, code = support.run(lua .. " bin/shingle sketch " .. dir .. "/doc.txt -o " .. dir .. "/d.sks")
    assert.are.equal(0, code, out)
    local s = assert(require("shingle.sketches").open(dir .. "/d.sks")):read()
    assert.is_true(s == shingle.new{}:sketch(text))
    support.rmdir(dir)
  end)

  it("cluster --index makes the index with every shingling option of the run", function()
    local dir = support.tmpdir()
    local out, code = support.run(lua .. " bin/shingle cluster samples/docs -q -o " .. dir .. "/out --fold -k 40 "
      .. "--sketch min -s 50 --seed 7 --punctuation --invalid skip --no-numbers -w 8 --index " .. dir .. "/db")
    assert.are.equal(0, code, out)
    local ix = assert(index.open(dir .. "/db", { readonly = true }))
    local c = ix.config
    assert.are.same({ 8, "min", 50, 40, 7, true, true, false, "skip" },
      { c.w, c.sketch, c.s, c.k, c.seed, c.fold, c.punctuation, c.numbers, c.invalid })
    ix:close()
    support.rmdir(dir)
  end)

  it("takes a switch that turns a default off (--no-numbers, --merge strict)", function()
    local dir = support.tmpdir()
    -- the same words, other numbers: the same document once numbers are dropped
    support.write(dir .. "/a.txt", "alpha 1 beta 2 gamma 3 delta 4 epsilon 5 zeta 6 eta 7 theta")
    support.write(dir .. "/b.txt", "alpha 9 beta 8 gamma 7 delta 6 epsilon 5 zeta 4 eta 3 theta")
    local cmd = lua .. " bin/shingle compare --json --sketch min -w 2 " .. dir .. "/a.txt " .. dir .. "/b.txt"
    assert.is_falsy(support.run(cmd):find('"resemblance":1,', 1, true))
    local out = support.run(cmd .. " --no-numbers")
    assert.is_truthy(out:find('"resemblance":1,', 1, true), out)
    local text, code = support.run(lua .. " bin/shingle collections samples/docs -q --merge strict -o " .. dir .. "/c")
    assert.are.equal(0, code, text)
    assert.is_truthy(support.read(dir .. "/c/summary.json"):find('"extended":false', 1, true))
    support.rmdir(dir)
  end)
end)
