-- Faults from outside (docs/robustness.md, "Fault tests"): `shingle cluster`
-- and `shingle index add` killed with SIGKILL at random points, with and
-- without an earlier result, and a full disk (a small tmpfs) at every phase.
-- After each fault the output is one complete run or absent, the index is
-- exactly as before or after the add, and a re-run succeeds.
local support = require "support"
local tmpdir, read = support.tmpdir, support.read
local cjson = require "cjson"

local lua = rawget(_G, "jit") and "luajit" or "lua" .. _VERSION:match("%d+%.%d+")
local shingle_cmd = lua .. " bin/shingle "
local is_root = support.run("id -u"):match("^0%s*$") ~= nil

local function exists(path) return require("lfs").attributes(path, "mode") ~= nil end

-- n documents in families of `family` (5) near-duplicates, as JSON Lines.
local function corpus(path, n, seed, family)
  local rand = support.rng(seed)
  local f = assert(io.open(path, "w"))
  local base
  for i = 1, n do
    if (i - 1) % (family or 5) == 0 then base = support.words(rand, 150, 20000) end
    local words = {}
    for j, w in ipairs(base) do words[j] = rand(100) <= 4 and ("x" .. rand(99999)) or w end
    f:write(cjson.encode({ url = ("http://h%d.example/%d"):format(seed, i), text = table.concat(words, " ") }), "\n")
  end
  f:close()
end

-- What a finished run found, independent of timings and key order: the
-- sorted lines "url url ..." of its clusters, and its documents.
local function result(out)
  local s = read(out .. "/clusters.jsonl")
  if not s or not exists(out .. "/run.json") then return nil end
  local lines = {}
  for line in s:gmatch("[^\n]+") do
    local urls = {}
    for _, m in ipairs(cjson.decode(line).members) do urls[#urls + 1] = m.url end
    table.sort(urls)
    lines[#lines + 1] = table.concat(urls, " ")
  end
  table.sort(lines)
  return table.concat(lines, "\n") .. "\n" .. #read(out .. "/docs.jsonl")
end

-- The entries of dir other than the lock file: what a run left beside OUT.
local function leftovers(dir)
  local t = {}
  for name in require("lfs").dir(dir) do
    if name:match("^%.out%.") and name ~= ".out.lock" then t[#t + 1] = name end
  end
  table.sort(t)
  return t
end

-- Start cmd in the background, kill -9 it after `delay` seconds; true if it
-- was still running then.
local function kill_after(cmd, delay)
  local out = support.run(("(%s) >/dev/null 2>&1 & pid=$!; sleep %.3f; if kill -9 $pid 2>/dev/null; then echo killed; fi; "
    .. "wait $pid 2>/dev/null; true"):format(cmd, delay))
  return out:find("killed", 1, true) ~= nil
end

local function seconds(cmd)
  local t0 = os.time()
  local c0 = os.clock()
  local out, code = support.run("/usr/bin/time -f '@%e' " .. cmd)
  assert.are.equal(0, code, out)
  return tonumber(out:match("@([%d.]+)%s*$")) or (os.time() - t0 + os.clock() - c0)
end

describe("shingle cluster killed with SIGKILL at random points #faults", function()
  local dir, a_res, b_res, t_b
  setup(function()
    dir = tmpdir()
    -- big enough that a run takes a good fraction of a second to kill into
    corpus(dir .. "/a.jsonl", 4000, 1)
    corpus(dir .. "/b.jsonl", 20000, 2)
    assert.are.equal(0, select(2, support.run(shingle_cmd .. "cluster -q " .. dir .. "/a.jsonl -o " .. dir .. "/ra")))
    t_b = seconds(shingle_cmd .. "cluster -q " .. dir .. "/b.jsonl -o " .. dir .. "/rb")
    a_res, b_res = result(dir .. "/ra"), result(dir .. "/rb")
    assert.is_truthy(a_res and b_res and a_res ~= b_res)
  end)
  teardown(function() os.execute("rm -rf " .. dir) end)

  for _, earlier in ipairs({ true, false }) do
    it(("leaves one complete run or nothing, %s an earlier result, and a re-run succeeds"):format(earlier and "over" or "without"),
      function()
        local rand = support.rng(earlier and 41 or 42)
        local seen = { old = 0, new = 0, none = 0 }
        for k = 1, 8 do
          local w = ("%s/k%d"):format(dir, k)
          assert(os.execute("mkdir " .. w))
          local out = w .. "/out"
          if earlier then assert(os.execute("cp -r " .. dir .. "/ra " .. out)) end
          local delay = t_b * (rand(1000) - 1) / 1000 * 1.2
          kill_after(shingle_cmd .. "cluster -q " .. dir .. "/b.jsonl -o " .. out, delay)
          local r = result(out)
          if r == nil then
            assert.is_false(earlier and exists(out) or false, "an earlier result may not vanish")
            seen.none = seen.none + 1
          elseif r == b_res then
            seen.new = seen.new + 1
          else
            assert.are.equal(a_res, r, ("killed after %.3f s: OUT is neither run"):format(delay))
            seen.old = seen.old + 1
          end
          if exists(out) then
            local text, code = support.run(shingle_cmd .. "recluster -q " .. out)
            assert.are.equal(0, code, text)
          end
          local text, code = support.run(shingle_cmd .. "cluster -q " .. dir .. "/b.jsonl -o " .. out)
          assert.are.equal(0, code, text)
          assert.are.equal(b_res, result(out))
          assert.are.same({}, leftovers(w))
          os.execute("rm -rf " .. w)
        end
        -- the delays span the run: some kills came before the swap
        if os.getenv("FAULTS_VERBOSE") then print(cjson.encode(seen), t_b) end
        assert.is_true(seen.old + seen.none > 0, cjson.encode(seen))
      end)
  end
end)

describe("shingle cluster on a full disk #faults", function()
  -- the files of a run in the order a run writes them, grouped by phase
  local phases = {
    { "phase 1", { "docs.bin", "sketches.bin", "shingles.bin", "sources.bin", "srcnames.bin", "docs.jsonl", "phase1.json" } },
    { "duplicate elimination", { "docs.bin" } },
    { "pairs", { "pairs.bin" } },
    { "cluster formation", { "links.bin", "clusters.bin" } },
    { "report", { "clusters.jsonl", "pairs.jsonl", "summary.json", "run.json" } },
  }
  local function phase_of(file)
    if file:find("shingle%-sort") or file:find("/run%-") then return "pairs" end
    local name = file:gsub("^.*/", ""):gsub("%.tmp$", "")
    for k = #phases, 1, -1 do
      for _, f in ipairs(phases[k][2]) do if f == name then return phases[k][1] end end
    end
    return name
  end

  it("fails at every phase with 'No space left on device' naming the file, leaving an earlier run whole", function()
    assert.is_true(is_root, "this test mounts a small tmpfs and needs root (CI runs as root)")
    local dir = tmpdir()
    corpus(dir .. "/a.jsonl", 300, 3)
    -- large families: many pairs, so the files after duplicate elimination
    -- (pairs, links, the JSON reports) outgrow the peak of phase 1
    corpus(dir .. "/b.jsonl", 2000, 4, 40)
    assert.are.equal(0, select(2, support.run(shingle_cmd .. "cluster -q " .. dir .. "/a.jsonl -o " .. dir .. "/ra")))
    assert.are.equal(0, select(2, support.run(shingle_cmd .. "cluster -q " .. dir .. "/b.jsonl -o " .. dir .. "/rb")))
    local a_res, b_res = result(dir .. "/ra"), result(dir .. "/rb")
    local lfs = require "lfs"
    local function pages(path) return math.ceil((lfs.attributes(path, "size") or 0) / 4096) end
    local old = 0
    for name in lfs.dir(dir .. "/ra") do if name ~= "." and name ~= ".." then old = old + pages(dir .. "/ra/" .. name) end end
    -- a disk that fills in the middle of each file of the new run, in turn
    -- (and a few pages around: the sort's runs and directories take some)
    local sizes, used = {}, old + 4
    for i, ph in ipairs(phases) do
      for _, f in ipairs(ph[2]) do
        local n = pages(dir .. "/rb/" .. f)
        for d = -2, 2 do sizes[#sizes + 1] = used + math.floor(n / 2) + d end
        -- duplicate elimination rewrites docs.bin: the old one is gone after it
        if i ~= 2 then used = used + n end
      end
    end
    local m = dir .. "/m"
    assert(os.execute("mkdir " .. m))
    local failed_in = {}
    local function try(p, check)
      assert(os.execute(("mount -t tmpfs -o size=%d tmpfs %s"):format(p * 4096, m)), "mount a tmpfs")
      local ok, err = pcall(function()
        assert(os.execute("cp -r " .. dir .. "/ra " .. m .. "/out"))
        local text, code = support.run(shingle_cmd .. "cluster -q " .. dir .. "/b.jsonl -o " .. m .. "/out")
        if check then check(text, code) end
        return code
      end)
      os.execute("umount " .. m)
      assert(ok, err)
      return err
    end
    -- the smallest disk the run fits on; the late phases fail on the few pages below it
    local lo, hi = old, used * 2
    while lo + 1 < hi do
      local mid = math.floor((lo + hi) / 2)
      if try(mid) == 0 then hi = mid else lo = mid end
    end
    for k = 1, 64, 3 do sizes[#sizes + 1] = hi - k end
    for _, p in ipairs(sizes) do
      assert(os.execute(("mount -t tmpfs -o size=%d tmpfs %s"):format(p * 4096, m)), "mount a tmpfs")
      local ok, err = pcall(function()
        assert(os.execute("cp -r " .. dir .. "/ra " .. m .. "/out"))
        local text, code = support.run(shingle_cmd .. "cluster -q " .. dir .. "/b.jsonl -o " .. m .. "/out")
        if os.getenv("FAULTS_VERBOSE") then print(p, code, (text:gsub("\n", " "))) end
        if code == 0 then
          assert.are.equal(b_res, result(m .. "/out"))
        else
          assert.are.equal(1, code, text)
          assert.is_truthy(text:find("No space left on device", 1, true), text)
          local file = text:match("(%S+): No space left on device") or ""
          assert.is_truthy(file:find(m .. "/out", 1, true), text)
          failed_in[phase_of(file)] = true
          assert.are.equal(a_res, result(m .. "/out"), "the earlier run stays whole")
          assert.are.same({}, leftovers(m))
        end
      end)
      os.execute("umount " .. m)
      assert(ok, err)
    end
    local names = {}
    for k in pairs(failed_in) do names[#names + 1] = k end
    table.sort(names)
    if os.getenv("FAULTS_VERBOSE") then print("disk full in: " .. table.concat(names, ", ")) end
    assert.are.same({ "cluster formation", "duplicate elimination", "pairs", "phase 1", "report" }, names)
    os.execute("rm -rf " .. dir)
  end)
end)
