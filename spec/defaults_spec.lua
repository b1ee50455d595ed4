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
end)
