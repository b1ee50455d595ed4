-- The rockspec must list every C source and Lua module, or `luarocks make`
-- builds a module that fails at load time (a lesson from Kong's spec suite).
describe("rockspec/shingle-scm-1.rockspec", function()
  local env = {}
  local chunk = assert(loadfile("rockspec/shingle-scm-1.rockspec", "t", env))
  if setfenv then setfenv(chunk, env) end
  chunk()
  local listed = {}
  for _, src in ipairs(env.build.modules["shingle.core"].sources) do listed[src] = true end
  local lua_listed = {}
  for name, path in pairs(env.build.modules) do
    if type(path) == "string" then lua_listed[path] = name end
  end

  local function files(pattern)
    local out = {}
    local f = io.popen("ls " .. pattern .. " 2>/dev/null")
    for line in f:lines() do out[#out + 1] = line end
    f:close()
    return out
  end

  -- each glob must find the files it is about, or the loops below check nothing
  it("lists every C source of the engine and the binding", function()
    local engine, binding = files("core/*.c"), files("core/lua/*.c")
    assert.is_true(#engine >= 15 and #binding >= 5, ("found %d engine and %d binding sources"):format(#engine, #binding))
    for _, p in ipairs(engine) do assert.is_true(listed[p] == true, p .. " is not in the rockspec") end
    for _, p in ipairs(binding) do assert.is_true(listed[p] == true, p .. " is not in the rockspec") end
  end)

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
    for src in pairs(listed) do assert.is_truthy(io.open(src), src); n = n + 1 end
    for path in pairs(lua_listed) do
      assert.is_truthy(io.open(path), path)
      assert.is_truthy(path:match("^lua/shingle/"), path .. " is not a module of the library")
      n = n + 1
    end
    assert.is_true(n >= 40, ("the rockspec lists %d files"):format(n))
  end)
end)
