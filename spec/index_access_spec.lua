-- Opening an index as a reader that may not write its lock file (a web
-- server's worker running as another user) fails naming lock.mdb and the
-- fix, and works once the lock file is writable; ix:add and the pipeline take
-- a function, an iterator or documents in a table as their source.
local support = require "support"
local index = require "shingle.index"
local pipeline = require "shingle.pipeline"

local lua = rawget(_G, "jit") and "luajit" or "lua" .. _VERSION:match("%d+%.%d+")

local function is_root()
  local out = support.run("id -u")
  return out:match("^0%s") ~= nil
end

describe("an index opened read-only by a reader that cannot write lock.mdb", function()
  it("fails naming lock.mdb and the fix, and works once it is writable", function()
    -- the command, its modules and core.so copied where any user can read
    -- them (the checkout may be in a directory only its owner can enter)
    local dir = support.tmpdir()
    local v = rawget(_G, "jit") and "jit" or _VERSION:match("%d+%.%d+")
    local app = dir .. "/app"
    assert(os.execute(("mkdir -p %s/build/%s/lib/shingle %s/bin && cp -r lua %s/ && cp bin/shingle %s/bin/ && "
      .. "cp build/%s/lib/shingle/core.so %s/build/%s/lib/shingle/ && cp samples/docs/weather.txt %s/ && chmod -R a+rX %s")
      :format(app, v, app, app, app, v, app, v, dir, dir)))
    local db = dir .. "/db"
    local out, code = support.run(lua .. " bin/shingle index add -q " .. db .. " samples/docs --sweep s1")
    assert.are.equal(0, code, out)
    local lock = db .. "/lock.mdb"
    -- as root, another user; otherwise this user without write access to the lock file
    local as = ""
    if is_root() then
      as = "runuser -u nobody -- "
    else
      os.execute("chmod 444 " .. lock)
    end
    local query = as .. "env -u LUA_PATH -u LUA_CPATH " .. lua .. " " .. app .. "/bin/shingle similar " .. db .. " "
      .. dir .. "/weather.txt"
    local text, c = support.run(query)
    assert.are_not.equal(0, c, text)
    assert.is_truthy(text:find("cannot open " .. lock .. " for writing (permission denied)", 1, true), text)
    assert.is_truthy(text:find("chmod a+w " .. lock, 1, true), text)
    os.execute("chmod a+w " .. lock)
    text, c = support.run(query)
    assert.are.equal(0, c, text)
    assert.is_truthy(text:find("samples/docs/weather.txt", 1, true), text) -- the URL it was added under
    support.rmdir(dir)
  end)
end)

describe("sources given as Lua values", function()
  local texts = { "one two three four five six seven eight nine ten eleven twelve thirteen",
    "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi" }
  local dir
  before_each(function() dir = support.tmpdir() end)
  after_each(function() support.rmdir(dir) end)

  it("ix:add takes a function, a coroutine, documents in a table and io.lines", function()
    local ix = assert(index.open(dir .. "/db"))
    local i = 0
    local st = assert(ix:add(function()
      i = i + 1
      return texts[i] and { text = texts[i], url = "f" .. i }
    end, { sweep = "s1" }))
    assert.are.equal(2, st.documents)
    st = assert(ix:add(coroutine.wrap(function()
      for k, t in ipairs(texts) do coroutine.yield({ text = t, url = "c" .. k }) end
    end), { sweep = "s2" }))
    assert.are.equal(2, st.documents)
    st = assert(ix:add({ { text = texts[1], url = "t1" }, "samples/docs/weather.txt", { text = texts[2], url = "t2" } },
      { sweep = "s3" }))
    assert.are.equal(3, st.documents)
    -- lines are texts without URLs: the index says it needs them
    support.write(dir .. "/lines.txt", texts[1] .. "\n" .. texts[2] .. "\n")
    local ok, err = ix:add(io.lines(dir .. "/lines.txt"), { sweep = "s4" })
    assert.is_nil(ok)
    assert.is_truthy(err:find("no documents to add", 1, true), err)
    local hits = assert(ix:similar(texts[2], { threshold = 0.9 }))
    assert.is_true(#hits >= 3)
    ix:close()
  end)

  it("the pipeline clusters the texts a function returns", function()
    local i = 0
    local p = pipeline.new{ outdir = dir .. "/out", quiet = true }
    local sum = assert(p:run(function()
      i = i + 1
      if i <= 4 then return texts[(i - 1) % 2 + 1] end -- texts alone, each twice
    end))
    assert.are.equal(4, sum.documents)
    assert.are.equal(2, sum.clusters)
  end)
end)
