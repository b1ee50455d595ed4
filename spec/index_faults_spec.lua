-- A damaged index (issue 11, defect 1): LMDB keeps no page checksums, so a
-- damaged page is found when it is read. `shingle index check` walks every
-- table in a child process and reports; the other commands end with a
-- sentence naming the index and the check (exit 1 or 70), never killed by
-- a signal.
local support = require "support"
local tmpdir = support.tmpdir
local cjson = require "cjson"

local lua = rawget(_G, "jit") and "luajit" or "lua" .. _VERSION:match("%d+%.%d+")
local shingle_cmd = lua .. " bin/shingle "

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

describe("a damaged index #faults", function()
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

local queries = {} -- the first document of each corpus, for state()

-- n documents as JSON Lines, URLs under host h.
local function corpus(path, n, seed, h)
  local rand = support.rng(seed)
  local f = assert(io.open(path, "w"))
  local base
  for i = 1, n do
    if i % 4 == 1 then base = support.words(rand, 120, 5000) end
    local words = {}
    for j, w in ipairs(base) do words[j] = rand(100) <= 5 and ("y" .. rand(9999)) or w end
    f:write(cjson.encode({ url = ("http://%s.example/%d"):format(h, i), text = table.concat(words, " ") }), "\n")
    if i == 1 then
      local q = assert(io.open(path .. ".q.txt", "w"))
      q:write(table.concat(words, " "))
      q:close()
      queries[#queries + 1] = path .. ".q.txt"
    end
  end
  f:close()
end

-- What an index holds, as text (its path left out): its info and the
-- results of queries for the first document of each corpus made here.
local function state(idx)
  local info, code = support.run(shingle_cmd .. "index info " .. idx)
  if code ~= 0 then return nil, info end
  local parts = { info }
  for _, q in ipairs(queries) do
    local hits = {}
    for line in support.run(shingle_cmd .. "similar --json -t 0.3 " .. idx .. " " .. q):gmatch("[^\n]+") do
      local ok, h = pcall(cjson.decode, line)
      hits[#hits + 1] = ok and (h.url .. " " .. h.sweep .. (" %.4f"):format(h.resemblance)) or line
    end
    table.sort(hits)
    parts[#parts + 1] = table.concat(hits, "\n")
  end
  local s = table.concat(parts, "\n")
  local i, j = s:find(idx, 1, true)
  while i do s = s:sub(1, i - 1) .. "IDX" .. s:sub(j + 1); i, j = s:find(idx, 1, true) end
  return s
end

describe("index commands", function()
  local dir
  before_each(function() dir = tmpdir(); queries = {} end)
  after_each(function() os.execute("rm -rf " .. dir) end)

  it("refuse a truncated data.mdb naming it, instead of dying of SIGBUS", function()
    local idx = dir .. "/idx"
    corpus(dir .. "/a.jsonl", 300, 1, "a")
    assert.are.equal(0, select(2, support.run(shingle_cmd .. "index add -q " .. idx .. " " .. dir .. "/a.jsonl --sweep s1")))
    local size = file_size(idx .. "/data.mdb")
    assert(os.execute(("truncate -s %d %s/data.mdb"):format(math.floor(size / 2), idx)))
    for _, cmd in ipairs({ "similar " .. idx .. " samples/docs/weather.txt", "index info " .. idx, "cluster-of " .. idx .. " http://a.example/1",
      "index add -q " .. idx .. " samples/docs --sweep s2", "index check " .. idx }) do
      local out, code = support.run(shingle_cmd .. cmd)
      assert.are.equal(1, code, cmd .. "\n" .. out)
      assert.is_truthy(out:find(idx .. "/data.mdb is truncated: it has " .. math.floor(size / 2) .. " bytes", 1, true), out)
    end
  end)

  it("add the same sweep twice without doubling a document, and refuse the same URL with other content", function()
    local idx = dir .. "/idx"
    corpus(dir .. "/a.jsonl", 200, 2, "a")
    local out, code = support.run(shingle_cmd .. "index add -q " .. idx .. " " .. dir .. "/a.jsonl --sweep s1")
    assert.are.equal(0, code, out)
    local before = state(idx)
    out, code = support.run(shingle_cmd .. "index add -q " .. idx .. " " .. dir .. "/a.jsonl --sweep s1")
    assert.are.equal(0, code, out)
    assert.is_truthy(out:find("added 0 documents", 1, true), out)
    assert.is_truthy(out:find("200 documents were already in sweep s1", 1, true), out)
    assert.are.equal(before, state(idx))
    -- one URL of the sweep with new content: refused, the rest skipped
    local f = assert(io.open(dir .. "/b.jsonl", "w"))
    f:write(cjson.encode({ url = "http://a.example/3", text = "other words entirely, not what the sweep held for this URL" }), "\n")
    f:close()
    out, code = support.run(shingle_cmd .. "index add " .. idx .. " " .. dir .. "/a.jsonl " .. dir .. "/b.jsonl --sweep s1")
    assert.are.equal(0, code, out)
    assert.is_truthy(out:find("http://a.example/3 is already in sweep s1 with other content", 1, true), out)
    assert.is_truthy(out:find("1 skipped", 1, true), out)
    out, code = support.run(shingle_cmd .. "index add --strict -q " .. idx .. " " .. dir .. "/b.jsonl --sweep s1")
    assert.are.equal(1, code, out)
    assert.are.equal(before, state(idx))
    -- the same URLs in a new sweep are new versions
    out, code = support.run(shingle_cmd .. "index add -q " .. idx .. " " .. dir .. "/a.jsonl --sweep s2")
    assert.are.equal(0, code, out)
    assert.is_truthy(out:find("added 200 documents", 1, true), out)
  end)

  it("leave no index behind when the first add has a missing input or no documents", function()
    local out, code = support.run(shingle_cmd .. "index add " .. dir .. "/idx /nonexistent/in --sweep s1")
    assert.are.equal(1, code, out)
    assert.is_truthy(out:find("cannot read input /nonexistent/in", 1, true), out)
    assert.is_nil(io.open(dir .. "/idx"))
    assert(os.execute("mkdir " .. dir .. "/empty"))
    out, code = support.run(shingle_cmd .. "index add " .. dir .. "/idx " .. dir .. "/empty --sweep s1")
    assert.are.equal(1, code, out)
    assert.is_truthy(out:find("no documents to add in " .. dir .. "/empty", 1, true), out)
    assert.is_nil(io.open(dir .. "/idx"))
    -- an index made empty through the API says so
    local ix = assert(require("shingle.index").open(dir .. "/api"))
    ix:close()
    out, code = support.run(shingle_cmd .. "index info " .. dir .. "/api")
    assert.are.equal(0, code, out)
    assert.are.equal(dir .. "/api: empty (no sweep added yet)\n", out)
  end)

  it("similar refuses a binary file and says when nothing resembles the document", function()
    local idx = dir .. "/idx"
    assert.are.equal(0, select(2, support.run(shingle_cmd .. "index add -q " .. idx .. " samples/docs --sweep s1")))
    local out, code = support.run(shingle_cmd .. "similar " .. idx .. " /bin/sh")
    assert.are.equal(1, code, out)
    assert.is_truthy(out:find("/bin/sh looks binary (a NUL byte at offset", 1, true), out)
    local f = assert(io.open(dir .. "/q.txt", "w"))
    f:write("tomatoes and cucumbers grow in the summer garden next to the old fence by the river\n")
    f:close()
    out, code = support.run(shingle_cmd .. "similar " .. idx .. " " .. dir .. "/q.txt")
    assert.are.equal(0, code, out)
    assert.are.equal(("shingle: no document of %s resembles %s/q.txt at resemblance 0.5\n"):format(idx, dir), out)
  end)
end)

describe("index add killed with SIGKILL at random points #faults", function()
  it("leaves the index exactly as before or after the sweep, and a re-run adds nothing twice", function()
    local dir = tmpdir()
    queries = {}
    local idx = dir .. "/idx"
    corpus(dir .. "/a.jsonl", 400, 3, "a")
    corpus(dir .. "/b.jsonl", 6000, 4, "b")
    assert.are.equal(0, select(2, support.run(shingle_cmd .. "index add -q " .. idx .. " " .. dir .. "/a.jsonl --sweep s1")))
    local before = assert(state(idx))
    assert(os.execute("cp -r " .. idx .. " " .. dir .. "/after"))
    local t0 = os.clock()
    local out, code = support.run("/usr/bin/time -f '@%e' " .. shingle_cmd .. "index add -q " .. dir .. "/after " .. dir
      .. "/b.jsonl --sweep s2")
    assert.are.equal(0, code, out)
    local t = tonumber(out:match("@([%d.]+)%s*$")) or (os.clock() - t0)
    local after = assert(state(dir .. "/after"))
    assert.are_not.equal(before, after)
    local rand = support.rng(9)
    local seen = { before = 0, after = 0 }
    for k = 1, 8 do
      local w = dir .. "/k" .. k
      assert(os.execute("cp -r " .. idx .. " " .. w))
      local delay = t * (rand(1000) - 1) / 1000 * 1.2
      support.run(("(%sindex add -q %s %s/b.jsonl --sweep s2) >/dev/null 2>&1 & pid=$!; sleep %.3f; kill -9 $pid 2>/dev/null; "
        .. "wait $pid 2>/dev/null; true"):format(shingle_cmd, w, dir, delay))
      local now = state(w)
      if now == before then seen.before = seen.before + 1
      else
        assert.are.equal(after, now, ("killed after %.3f s: the index is neither before nor after"):format(delay))
        seen.after = seen.after + 1
      end
      assert.are.equal(0, select(2, support.run(shingle_cmd .. "index check " .. w)))
      out, code = support.run(shingle_cmd .. "index add -q " .. w .. " " .. dir .. "/b.jsonl --sweep s2")
      assert.are.equal(0, code, out)
      assert.are.equal(after, state(w))
      os.execute("rm -rf " .. w)
    end
    assert.is_true(seen.before > 0, cjson.encode(seen))
    os.execute("rm -rf " .. dir)
  end)
end)

describe("index add on a full disk #faults", function()
  it("says 'no space left on device' naming data.mdb, leaves the index as it was and does not grow data.mdb", function()
    queries = {}
    assert.is_true(support.run("id -u"):match("^0%s*$") ~= nil, "this test mounts a small tmpfs and needs root (CI runs as root)")
    local dir = tmpdir()
    corpus(dir .. "/a.jsonl", 300, 5, "a")
    corpus(dir .. "/b.jsonl", 3000, 6, "b")
    local m = dir .. "/m"
    assert(os.execute("mkdir " .. m))
    assert(os.execute("mount -t tmpfs -o size=4m tmpfs " .. m))
    local ok, err = pcall(function()
      local idx = m .. "/idx"
      assert.are.equal(0, select(2, support.run(shingle_cmd .. "index add -q " .. idx .. " " .. dir .. "/a.jsonl --sweep s1")))
      local before = assert(state(idx))
      local size = file_size(idx .. "/data.mdb")
      -- fill the disk but for a little room
      support.run("dd if=/dev/zero of=" .. m .. "/ballast bs=64k 2>/dev/null; rm -f " .. m .. "/ballast; "
        .. "dd if=/dev/zero of=" .. m .. "/ballast bs=4k count=$(( $(stat -f -c %a " .. m .. ") - 64 )) 2>/dev/null")
      local out, code = support.run(shingle_cmd .. "index add -q " .. idx .. " " .. dir .. "/b.jsonl --sweep s2")
      assert.are.equal(1, code, out)
      assert.is_truthy(out:find(idx .. "/data.mdb: ", 1, true) and out:find("no space left on device", 1, true), out)
      assert.are.equal(size, file_size(idx .. "/data.mdb"))
      assert.are.equal(before, state(idx))
      assert.are.equal(0, select(2, support.run(shingle_cmd .. "index check " .. idx)))
      -- room again: the add goes through
      os.remove(m .. "/ballast")
      out, code = support.run(shingle_cmd .. "index add -q " .. idx .. " " .. dir .. "/b.jsonl --sweep s2")
      assert.are.equal(0, code, out)
    end)
    os.execute("umount " .. m)
    os.execute("rm -rf " .. dir)
    assert(ok, err)
  end)
end)

describe("an add's sort directory inside the index", function()
  it("is removed by the next add when a killed add left it, and nothing else there is touched", function()
    local dir = tmpdir()
    local idx = dir .. "/idx"
    corpus(dir .. "/a.jsonl", 50, 3, "a")
    corpus(dir .. "/b.jsonl", 50, 4, "b")
    assert.are.equal(0, select(2, support.run(shingle_cmd .. "index add -q " .. idx .. " " .. dir .. "/a.jsonl --sweep s1")))
    -- what a killed add into a new index leaves when its postings spilled: a run directory with its files
    assert(os.execute("mkdir -p " .. idx .. "/shingle-sort-Ab12Cd && head -c 4096 /dev/urandom > " .. idx
      .. "/shingle-sort-Ab12Cd/run-000001 && echo keep > " .. idx .. "/notes.txt"))
    local before = assert(state(idx))
    local out, code = support.run(shingle_cmd .. "index add -q " .. idx .. " " .. dir .. "/b.jsonl --sweep s2")
    assert.are.equal(0, code, out)
    assert.is_nil(io.open(idx .. "/shingle-sort-Ab12Cd/run-000001"))
    assert.are.equal("", support.run("ls -a " .. idx .. " | grep shingle-sort- || true"))
    local f = assert(io.open(idx .. "/notes.txt"))
    assert.are.equal("keep\n", f:read("a"))
    f:close()
    assert.are_not.equal(before, state(idx))
    assert.are.equal(0, select(2, support.run(shingle_cmd .. "index check " .. idx)))
    os.execute("rm -rf " .. dir)
  end)
end)
