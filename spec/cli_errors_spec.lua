-- The command line's errors: a bad option value names the option, a
-- subcommand's error points at that subcommand's help, an option the Lua
-- API refuses is a usage error said with the option's command-line name
-- (exit 2), never "internal error" with a stack trace.
local support = require "support"

local lua = rawget(_G, "jit") and "luajit" or "lua" .. _VERSION:match("%d+%.%d+")
local shingle_cmd = lua .. " bin/shingle "

local function fails(args, code)
  local text, c = support.run(shingle_cmd .. args)
  assert.are.equal(code or 2, c, text)
  assert.is_falsy(text:find("internal error", 1, true), text)
  assert.is_falsy(text:find("stack traceback", 1, true), text)
  assert.is_falsy(text:find("%.lua:%d+:"), text)
  return text
end

describe("command-line errors", function()
  local dir
  setup(function() dir = support.tmpdir() end)
  teardown(function() support.rmdir(dir) end)

  it("name the option whose value is not a number", function()
    local text = fails("cluster samples/docs -o " .. dir .. "/o -s abc")
    assert.is_truthy(text:find("-s/--size: 'abc' is not a number", 1, true), text)
    text = fails("similar " .. dir .. "/db samples/docs/rabin-original.txt -t high")
    assert.is_truthy(text:find("-t/--threshold: 'high' is not a number", 1, true), text)
    text = fails("collections samples/docs -o " .. dir .. "/c --min-size many")
    assert.is_truthy(text:find("--min-size: 'many' is not a number", 1, true), text)
  end)

  it("point at the help of the subcommand they are about", function()
    local text = fails("cluster samples/docs -o " .. dir .. "/o --bogus")
    assert.is_truthy(text:find("unknown option '--bogus'", 1, true), text)
    assert.is_truthy(text:find("Run 'shingle cluster --help' for usage.", 1, true), text)
    text = fails("index add " .. dir .. "/db --no-such-thing samples/docs")
    assert.is_truthy(text:find("Run 'shingle index add --help' for usage.", 1, true), text)
    text = fails("no-such-command")
    assert.is_truthy(text:find("Run 'shingle --help' for usage.", 1, true), text)
  end)

  it("say a value the Lua API refuses with the option's command-line name", function()
    local text = fails("cluster samples/docs -o " .. dir .. "/o -w 0")
    assert.is_truthy(text:find("-w/--width is 0; use a whole number from 1 to 1024", 1, true), text)
    assert.is_truthy(text:find("Run 'shingle cluster --help' for usage.", 1, true), text)
    assert.is_nil(require("lfs").attributes(dir .. "/o"))
    text = fails("compare --sketch min -s 0 samples/docs/rabin-original.txt samples/docs/rabin-edited.txt")
    assert.is_truthy(text:find("-s/--size is 0", 1, true), text)
    assert.is_truthy(text:find("Run 'shingle compare --help' for usage.", 1, true), text)
  end)

  it("name a path once", function()
    local function count(text, what)
      local n, i = 0, 1
      while true do
        local _, j = text:find(what, i, true)
        if not j then return n end
        n, i = n + 1, j + 1
      end
    end
    local cases = {
      { "rollup " .. dir .. "/nodir " .. dir .. "/results.txt", dir .. "/results.txt" },
      { "recluster " .. dir .. "/nodir", dir .. "/nodir" },
      { "compare " .. dir .. "/missing.txt samples/docs/weather.txt", dir .. "/missing.txt" },
      { "cluster " .. dir .. "/missing -o " .. dir .. "/o", dir .. "/missing" },
      { "similar " .. dir .. "/nodb samples/docs/weather.txt", dir .. "/nodb" },
    }
    for _, c in ipairs(cases) do
      local text, code = support.run(shingle_cmd .. c[1])
      assert.are_not.equal(0, code, text)
      assert.are.equal(1, count(text, c[2]), text)
    end
  end)
end)
