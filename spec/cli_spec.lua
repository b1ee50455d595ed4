local support = require "support"

local function lua_cmd()
  local v = rawget(_G, "jit") and "luajit" or "lua" .. _VERSION:match("%d+%.%d+")
  return v .. " bin/shingle"
end

describe("shingle compare", function()
  it("compares the sample documents pairwise, estimated and exact", function()
    local out, code = support.run(lua_cmd() .. " compare --exact samples/docs/rabin-original.txt samples/docs/rabin-mirror.html samples/docs/weather.txt")
    assert.are.equal(0, code, out)
    local lines = {}
    for l in out:gmatch("[^\n]+") do lines[#lines + 1] = l end
    assert.are.equal(4, #lines, out)
    -- the mirror wraps the original in navigation and a footer: it contains all of it
    local r, cab, cba, xr, xab, xba = lines[2]:match("([%d.]+)%s+([%d.]+)%s+([%d.]+)%s+([%d.]+)%s+([%d.]+)%s+([%d.]+)%s*$")
    assert.is_true(tonumber(r) > 0.85, lines[2])
    assert.are.equal("1.000", xab)
    assert.is_true(tonumber(xba) < 1)
    assert.is_truthy(lines[3]:match("0%.000%s+0%.000%s+0%.000"), lines[3])
  end)

  it("writes JSON lines with --json", function()
    local out, code = support.run(lua_cmd() .. " compare --json samples/docs/unionfind.txt samples/docs/unionfind-blog.html")
    assert.are.equal(0, code, out)
    local pair = require("cjson").decode(out)
    assert.are.equal("samples/docs/unionfind.txt", pair.a)
    assert.is_true(pair.resemblance > 0.4 and pair.resemblance < 0.7)
  end)

  it("names a file it cannot read", function()
    local out, code = support.run(lua_cmd() .. " compare samples/docs/weather.txt /nonexistent/file.txt")
    assert.are.equal(1, code)
    assert.is_truthy(out:find("cannot read /nonexistent/file.txt", 1, true), out)
  end)

  it("explains a bad option and exits 2", function()
    local out, code = support.run(lua_cmd() .. " compare --sketch minhash a b")
    assert.are.equal(2, code)
    assert.is_truthy(out:find("--sketch", 1, true) and out:find("minmod", 1, true), out)
  end)

  it("has --help for every command", function()
    local out, code = support.run(lua_cmd() .. " compare --help")
    assert.are.equal(0, code)
    assert.is_truthy(out:find("--exact", 1, true))
  end)
end)
