-- The rockspec must install every Lua module (or `luarocks make` installs a
-- command that fails at load time: a lesson from Kong's spec suite), build
-- the C module with CMake out of the source tree, and declare the Lua
-- libraries the command needs, so that LuaRocks pulls them.
describe("rockspec/shingle-scm-1.rockspec", function()
  local env = {}
  local chunk = assert(loadfile("rockspec/shingle-scm-1.rockspec", "t", env))
  if setfenv then setfenv(chunk, env) end
  chunk()
  local lua_listed = {}
  for name, path in pairs(env.build.install.lua) do lua_listed[path] = name end

  local function files(pattern)
    local out = {}
    local f = io.popen("ls " .. pattern .. " 2>/dev/null")
    for line in f:lines() do out[#out + 1] = line end
    f:close()
    return out
  end

  it("lists every Lua module under its require name", function()
    local mods = files("lua/shingle/*.lua lua/shingle/*/*.lua")
    assert.is_true(#mods >= 20, ("found %d Lua modules"):format(#mods))
    for _, p in ipairs(mods) do
      local name = p:gsub("^lua/", ""):gsub("%.lua$", ""):gsub("/init$", ""):gsub("/", ".")
      assert.are.equal(name, lua_listed[p], p .. " is not listed as " .. name)
    end
  end)

  it("lists nothing that does not exist, and nothing outside the library", function()
    local n = 0
    for path in pairs(lua_listed) do
      assert.is_truthy(io.open(path), path)
      assert.is_truthy(path:match("^lua/shingle/"), path .. " is not a module of the library")
      n = n + 1
    end
    assert.is_true(n >= 40, ("the rockspec lists %d files"):format(n))
    assert.is_truthy(io.open(env.build.install.bin.shingle), "bin/shingle")
  end)

  it("builds core.so with CMake under build/, installed as shingle.core", function()
    assert.are.equal("command", env.build.type)
    assert.is_truthy(env.build.build_command:find("-B build/rock", 1, true))
    assert.is_truthy(env.build.build_command:find("$(LUA_INCDIR)", 1, true))
    assert.are.equal("build/rock/lib/shingle/core.so", env.build.install.lib["shingle.core"])
  end)

  it("declares the Lua libraries the command requires", function()
    local deps = {}
    for _, d in ipairs(env.dependencies) do deps[d:match("^(%S+)")] = true end
    -- each require of a library outside shingle, in the library, is a dependency
    local needed = { argparse = "argparse", cjson = "lua-cjson", lfs = "luafilesystem" }
    for _, p in ipairs(files("lua/shingle/*.lua lua/shingle/*/*.lua")) do
      local f = assert(io.open(p))
      local src = f:read("*a")
      f:close()
      for mod in src:gmatch('require%s*%(?%s*"([%w_%.]+)"') do
        local top = mod:match("^[^%.]+")
        -- (ngx.*: OpenResty's own modules, there only inside nginx: shingle.http; ffi: LuaJIT's own)
        if top ~= "shingle" and top ~= "ngx" and top ~= "ffi" and top ~= "jit" then
          assert.is_truthy(needed[top], p .. " requires " .. mod .. ", which is neither shingle's nor a declared dependency")
          assert.is_true(deps[needed[top]], needed[top] .. " is not among the rockspec's dependencies")
        end
      end
    end
  end)
end)
