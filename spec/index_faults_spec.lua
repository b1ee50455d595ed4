-- A damaged index (issue 11, defect 1): LMDB keeps no page checksums, so a
-- damaged page is found when it is read. `shingle index check` walks every
-- table in a child process and reports; the other commands end with a
-- sentence naming the index and the check (exit 1 or 70), never killed by
-- a signal.
local support = require "support"
local cjson = require "cjson"

local lua = rawget(_G, "jit") and "luajit" or "lua" .. _VERSION:match("%d+%.%d+")
local shingle_cmd = lua .. " bin/shingle "

local function tmpdir()
  local p = os.tmpname()
  os.remove(p)
  assert(os.execute("mkdir -p " .. p))
  return p
end

local function file_size(path)
  local f = assert(io.open(path, "rb"))
  local n = f:seek("end")
  f:close()
  return n
end

-- Overwrite page `page` (4096 bytes) of path with bytes from rand.
local function damage(path, page, rand)
  local f = assert(io.open(path, "r+b"))
  f:seek("set", page * 4096)
  local b = {}
  for i = 1, 4096 do b[i] = string.char(rand(256) - 1) end
  f:write(table.concat(b))
  f:close()
end

describe("a damaged index", function()
  local dir, idx, doc
  setup(function()
    dir = tmpdir()
    idx = dir .. "/idx"
    local rand = support.rng(5)
    local lines = {}
    for i = 1, 150 do
      lines[i] = cjson.encode({ url = "http://a.example/" .. i, text = table.concat(support.words(rand, 150, 3000), " ") })
    end
    local f = assert(io.open(dir .. "/in.jsonl", "w"))
    f:write(table.concat(lines, "\n"), "\n")
    f:close()
    doc = dir .. "/q.txt"
    f = assert(io.open(doc, "w"))
    f:write(cjson.decode(lines[1]).text)
    f:close()
    local out, code = support.run(shingle_cmd .. "index add -q " .. idx .. " " .. dir .. "/in.jsonl --sweep s1")
    assert.are.equal(0, code, out)
  end)
  teardown(function() os.execute("rm -rf " .. dir) end)

  it("reads whole when undamaged: index check says so and exits 0", function()
    local out, code = support.run(shingle_cmd .. "index check " .. idx)
    assert.are.equal(0, code, out)
    assert.is_truthy(out:find(idx .. " reads whole", 1, true), out)
    assert.is_truthy(out:find("docs%s+150 records"), out)
  end)

  it("with any one page overwritten: no command dies of a signal, and a failure points at index check", function()
    local pages = math.floor(file_size(idx .. "/data.mdb") / 4096)
    local rand = support.rng(17)
    local found = 0
    for page = 2, pages - 1 do
      local copy = dir .. "/c" .. page
      assert(os.execute("rm -rf " .. copy .. " && cp -r " .. idx .. " " .. copy))
      damage(copy .. "/data.mdb", page, rand)
      local failed = false
      for _, cmd in ipairs({ "similar " .. copy .. " " .. doc, "index info " .. copy,
        "index add -q " .. copy .. " " .. dir .. "/in.jsonl --sweep s2" }) do
        local out, code = support.run(shingle_cmd .. cmd)
        assert.is_truthy(code == 0 or code == 1 or code == 70, ("page %d, %s: exit %d\n%s"):format(page, cmd, code, out))
        if code == 70 then
          assert.is_truthy(out:find("shingle index check " .. copy, 1, true), out)
          failed = true
        end
      end
      local out, code = support.run(shingle_cmd .. "index check " .. copy)
      assert.is_truthy(code == 0 or code == 1, ("page %d: index check exit %d\n%s"):format(page, code, out))
      if code == 1 then
        found = found + 1
        assert.is_truthy(out:find("is damaged", 1, true) and out:find("mdb_copy -c", 1, true), out)
      end
      if failed then assert.are.equal(1, code, ("page %d: a command failed on it, the check must see it\n%s"):format(page, out)) end
      os.execute("rm -rf " .. copy)
    end
    assert.is_true(found > 0)
  end)
end)
