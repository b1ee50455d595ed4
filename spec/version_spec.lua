-- One version string (core/version.h), shown the same way everywhere.
local support = require "support"
local shingle = require "shingle"

local lua_cmd = support.shingle_cmd

local function header_version()
  local f = assert(io.open("core/version.h"))
  local s = f:read("*a")
  f:close()
  local str = s:match('#define SH_VERSION_STRING "([^"]+)"')
  local ma, mi, pa = s:match("SH_VERSION_MAJOR (%d+)"), s:match("SH_VERSION_MINOR (%d+)"), s:match("SH_VERSION_PATCH (%d+)")
  return str, ma .. "." .. mi .. "." .. pa
end

describe("shingle.version", function()
  it("is the string of core/version.h, MAJOR.MINOR.PATCH", function()
    local str, parts = header_version()
    assert.are.equal(parts, str)
    assert.are.equal(str, shingle.version)
    assert.are.equal(str, shingle._VERSION)
    assert.are.equal(str, shingle.core._VERSION)
  end)

  it("is printed by shingle --version, which exits 0", function()
    local out, code = support.run(lua_cmd() .. " --version")
    assert.are.equal(0, code, out)
    assert.are.equal("shingle " .. shingle.version .. "\n", out)
  end)

  it("is listed in the top-level help", function()
    local out, code = support.run(lua_cmd() .. " --help")
    assert.are.equal(0, code)
    assert.is_truthy(out:find("--version", 1, true), out)
  end)
end)
