-- shingle cluster --mpi (lua/shingle/dist.lua, core/dist.c over Open MPI):
-- the same result as one process for any number of ranks, and a failed rank
-- ends the whole job with a message naming it, leaving nothing that looks
-- finished. The whole spec runs under the primary Lua (5.4); the other Luas
-- and the sanitizer build run one small job each, so that the module is
-- known to load and work there too.
local support = require "support"
local tmpdir, write, read = support.tmpdir, support.write, support.read
local cjson = require "cjson"

local v = rawget(_G, "jit") and "jit" or _VERSION:match("%d+%.%d+")
local lua = v == "jit" and "luajit" or "lua" .. v
local build = os.getenv("SHINGLE_BUILD") or ("build/" .. v)
local function exists(p) local f = io.open(p) if f then f:close() end return f ~= nil end
local have_mpi = exists(build .. "/lib/shingle/mpi.so") and os.execute("command -v mpirun >/dev/null 2>&1")
local full = v == "5.4" and not os.getenv("SHINGLE_BUILD")

-- without the sanitizer run's preload: the ranks run bin/shingle with the plain build (as the CLI specs do), and
-- Open MPI's own allocations at exit are not ours to report
local MPIRUN = "env -u LD_PRELOAD OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 mpirun --oversubscribe"




-- A JSON value with its keys sorted (cjson's order depends on the process).
local function canonical(x)
  if type(x) ~= "table" then return cjson.encode(x) end
  if #x > 0 or next(x) == nil then
    local t = {}
    for i, e in ipairs(x) do t[i] = canonical(e) end
    return "[" .. table.concat(t, ",") .. "]"
  end
  local keys = {}
  for k in pairs(x) do keys[#keys + 1] = k end
  table.sort(keys)
  local t = {}
  for _, k in ipairs(keys) do t[#t + 1] = cjson.encode(k) .. ":" .. canonical(x[k]) end
  return "{" .. table.concat(t, ",") .. "}"
end

-- A JSON or JSON Lines file, timing and MPI fields left out.
local function normalized(path)
  local s = read(path)
  assert(s, "missing " .. path)
  local out = {}
  for line in s:gmatch("[^\n]+") do
    local x = cjson.decode(line)
    if type(x) == "table" then x.phases, x.mpi = nil, nil end
    out[#out + 1] = canonical(x)
  end
  return table.concat(out, "\n")
end

-- (the ranks keep every full set in phase 1: a single process compared with
-- them byte for byte keeps them too, --keep-sets)
local function shingle(args)
  if args:match("^cluster ") then args = args .. " --keep-sets" end
  return support.run(lua .. " bin/shingle " .. args)
end
local function mpi(n, args) return support.run(MPIRUN .. " -np " .. n .. " " .. lua .. " bin/shingle " .. args) end

-- The outputs of two runs agree: clusters, links (pairs.jsonl), summary and
-- documents as JSON; docs.bin, links.bin and clusters.bin byte for byte.
local function assert_same(a, b)
  for _, f in ipairs({ "clusters.jsonl", "pairs.jsonl", "summary.json", "docs.jsonl" }) do
    assert.are.equal(normalized(a .. "/" .. f), normalized(b .. "/" .. f), f .. " differs between " .. a .. " and " .. b)
  end
  for _, f in ipairs({ "docs.bin", "links.bin", "clusters.bin" }) do
    local x, y = read(a .. "/" .. f), read(b .. "/" .. f)
    assert.is_truthy(x and y and x == y, f .. " differs between " .. a .. " and " .. b)
  end
end

-- Near-duplicate families: originals, exact copies, copies in capitals, edits,
-- excerpts; some records without a URL (their URL is FILE:LINE, whatever rank
-- reads the line), blank and broken lines (skipped records).
local function corpus(path, n, seed)
  local rand = support.rng(seed)
  local lines, bases = {}, {}
  for i = 1, n do
    local kind = rand(10)
    local words
    if kind <= 4 or #bases == 0 then
      words = support.words(rand, 80 + rand(120), 4000)
      bases[#bases + 1] = words
    else
      local b = bases[rand(#bases)]
      words = {}
      for j, w in ipairs(b) do words[j] = w end
      if kind == 6 then for j = 1, #words do words[j] = words[j]:upper() end
      elseif kind == 7 then for _ = 1, 8 do words[rand(#words)] = "e" .. rand(4000) end
      elseif kind == 8 then for j = #words, math.floor(#words * 0.6), -1 do words[j] = nil end end
    end
    local rec = { text = table.concat(words, " "), date = "2026-11-" .. (10 + rand(9)) }
    if rand(12) > 1 then rec.url = "http://example.org/" .. i end
    lines[#lines + 1] = cjson.encode(rec)
    if rand(60) == 1 then lines[#lines + 1] = "" end
    if rand(80) == 1 then lines[#lines + 1] = "{broken" end
  end
  write(path, table.concat(lines, "\n") .. "\n")
end

-- n small text files in dir/name (made), their paths in order.
local function texts(dir, name, n, seed)
  local rand, paths = support.rng(seed), {}
  os.execute("mkdir -p " .. dir .. "/" .. name)
  for i = 1, n do
    paths[i] = ("%s/%s/%03d.txt"):format(dir, name, i)
    write(paths[i], table.concat(support.words(rand, 60, 300), " "))
  end
  return paths
end

-- Every regular file of /usr/share/doc (text, HTML and the odd binary one,
-- which is skipped as binary), every k-th by name, at most n.
local function debian_docs(n)
  local f = io.popen("find /usr/share/doc -type f ! -name '*.gz' -size -100k 2>/dev/null | LC_ALL=C sort")
  local all = {}
  for p in f:lines() do all[#all + 1] = p end
  f:close()
  local out, k = {}, math.max(1, math.floor(#all / n))
  for i = 1, #all, k do out[#out + 1] = all[i] end
  return out
end

describe("shingle.dist.split", function()
  local dist = require "shingle.dist"
  -- where a line starts, the obvious way
  local function line_start(path, offset)
    if offset == 0 then return 0 end
    local s = read(path)
    local nl = s:find("\n", offset, true) -- byte offset - 1 in 1-based terms
    return nl and nl or #s
  end

  it("cuts a JSON Lines file at line starts into shares of about equal bytes, in order", function()
    local dir = tmpdir()
    local lines = {}
    for i = 1, 1000 do lines[i] = ('{"text":"%s"}'):format(("x"):rep(i % 37 + 1)) end
    local body = table.concat(lines, "\n") .. "\n"
    write(dir .. "/a.jsonl", body)
    for _, n in ipairs({ 1, 2, 3, 7 }) do
      local shares = dist.split({ { kind = "jsonl", path = dir .. "/a.jsonl", size = #body } }, n, line_start)
      local at, pieces = 0, 0
      for r = 1, n do
        for _, p in ipairs(shares[r]) do
          pieces = pieces + 1
          assert.are.equal(at, p.start)                       -- contiguous, in order
          assert.is_true(p.start == 0 or body:sub(p.start, p.start) == "\n") -- at a line start
          assert.is_true(math.abs((p.stop - p.start) - #body / n) < 60) -- within a line of equal
          assert.are.equal(n == 1, p.whole)
          at = p.stop
        end
      end
      assert.are.equal(#body, at)
      assert.are.equal(n, pieces)
    end
    os.execute("rm -rf '" .. dir .. "'")
  end)

  it("gives files whole, contiguous, balanced by bytes; more ranks than files leaves some shares empty", function()
    local units = {}
    for i = 1, 10 do units[i] = { kind = "path", path = "f" .. i, size = i == 5 and 100000 or 1000 } end
    units[11] = { kind = "warc", path = "w.warc", size = 50000 }
    local shares = dist.split(units, 3, function() error("no file is cut") end)
    local order = {}
    for r = 1, 3 do
      for _, p in ipairs(shares[r]) do
        if p.kind == "paths" then for _, x in ipairs(p.paths) do order[#order + 1] = x end
        else order[#order + 1] = p.path end
      end
    end
    assert.are.same({ "f1", "f2", "f3", "f4", "f5", "f6", "f7", "f8", "f9", "f10", "w.warc" }, order)
    -- each unit goes to the share its middle falls in: the large file opens the middle share
    assert.are.same({ "f1", "f2", "f3", "f4" }, shares[1][1].paths)
    assert.are.equal("f5", shares[2][1].paths[1])
    assert.are.equal("w.warc", shares[3][#shares[3]].path)
    local many = dist.split({ { kind = "path", path = "only", size = 10 } }, 4, line_start)
    local n = 0
    for r = 1, 4 do n = n + #many[r] end
    assert.are.equal(1, n)
  end)
end)

describe("shingle cluster --mpi", function()
  if not have_mpi then
    it("is not built here (no MPI found): --mpi says how to get it", function()
      local cli = require "shingle.cli"
      package.loaded["shingle.mpi"] = nil
      local out = tmpdir()
      local err = io.stderr
      local lines = {}
      io.stderr = { write = function(_, ...) for _, s in ipairs({ ... }) do lines[#lines + 1] = s end end }
      local code = cli.main({ "cluster", "samples/docs", "-o", out .. "/out", "--mpi", "-q" })
      io.stderr = err
      assert.are.equal(1, code)
      assert.is_truthy(table.concat(lines):find("openmpi-bin libopenmpi-dev", 1, true), table.concat(lines))
    end)
    return
  end

  local dir
  setup(function() dir = tmpdir() end)
  teardown(function() os.execute("rm -rf '" .. dir .. "'") end)

  it("gives the single process's result on the sample documents with 2 ranks", function()
    local o1, c1 = shingle("cluster samples/docs -q -o " .. dir .. "/s1")
    assert.are.equal(0, c1, o1)
    local o2, c2 = mpi(2, "cluster samples/docs -q --mpi -o " .. dir .. "/m1")
    assert.are.equal(0, c2, o2)
    assert_same(dir .. "/s1", dir .. "/m1")
  end)

  if not full then return end

  it("runs examples/slurm-cluster.sh outside Slurm with mpirun, with the single process's result", function()
    local out, code = support.run("PATH=\"$PWD/bin:$PATH\" RANKS=3 bash examples/slurm-cluster.sh samples/docs "
      .. dir .. "/slurm -q")
    assert.are.equal(0, code, out)
    assert_same(dir .. "/s1", dir .. "/slurm")
  end)

  it("leaves shingle.core free of libmpi: only shingle/mpi.so links it", function()
    local out = support.run("ldd " .. build .. "/lib/shingle/core.so")
    assert.is_falsy(out:find("libmpi", 1, true), out)
    out = support.run("ldd " .. build .. "/lib/shingle/mpi.so")
    assert.is_truthy(out:find("libmpi", 1, true), out)
  end)

  it("gives the single process's clusters, links and summary on planted near-duplicates for 1, 2 and 4 ranks", function()
    corpus(dir .. "/gen.jsonl", 2500, 7)
    local o, c = shingle("cluster " .. dir .. "/gen.jsonl -q -o " .. dir .. "/gen-1p")
    assert.are.equal(0, c, o)
    local sum = cjson.decode(read(dir .. "/gen-1p/summary.json"))
    -- the corpus has what it should: copies, near-duplicates, skipped records, clusters
    assert.is_true(sum.exact_duplicates > 50 and sum.lexical_duplicates > 50 and sum.pairs_linked > 50, cjson.encode(sum))
    assert.is_true(sum.skipped > 10 and sum.clusters > 50, cjson.encode(sum))
    for _, n in ipairs({ 1, 2, 4 }) do
      local out, code = mpi(n, "cluster " .. dir .. "/gen.jsonl --mpi -o " .. dir .. "/gen-" .. n .. "r")
      assert.are.equal(0, code, out)
      assert_same(dir .. "/gen-1p", dir .. "/gen-" .. n .. "r")
      -- the phase table shows the exchange and every rank
      assert.is_truthy(out:find("sent MiB", 1, true), out)
      for r = 0, n - 1 do assert.is_truthy(out:find("\n" .. r .. "%s+%S+%s+%d+"), out) end
      local s = cjson.decode(read(dir .. "/gen-" .. n .. "r/summary.json"))
      assert.are.equal(n, s.mpi.ranks)
      assert.are.equal(n, #s.mpi.per_rank)
      if n > 1 then assert.is_true(s.mpi.per_rank[2].phases.duplicate_elimination.sent > 0) end
    end
    -- the ranks read the file in pieces cut at lines: a URL-less record is FILE:LINE all the same
    -- (docs.jsonl is equal to one process's, and it has such records in the last rank's piece)
    local late = 0
    for line in read(dir .. "/gen-4r/docs.jsonl"):gmatch("[^\n]+") do
      local n = tonumber((cjson.decode(line).url or ""):match("gen%.jsonl:(%d+)$"))
      if n and n > 2000 then late = late + 1 end
    end
    assert.is_true(late > 5)
  end)

  it("gives a compressed JSON Lines file whole to one rank and cuts a plain one, with the single process's result", function()
    corpus(dir .. "/z.jsonl", 500, 13)
    assert.is_true(os.execute("gzip -k " .. dir .. "/z.jsonl && mv " .. dir .. "/z.jsonl " .. dir .. "/zp.jsonl"))
    local args = "cluster " .. dir .. "/z.jsonl.gz " .. dir .. "/zp.jsonl -q"
    local o, c = shingle(args .. " -o " .. dir .. "/z-1p")
    assert.are.equal(0, c, o)
    o, c = mpi(3, args .. " --mpi -o " .. dir .. "/z-3r")
    assert.are.equal(0, c, o)
    assert_same(dir .. "/z-1p", dir .. "/z-3r")
    local ranks = cjson.decode(read(dir .. "/z-3r/summary.json")).mpi.per_rank
    assert.is_true(ranks[1].documents > 0 and ranks[2].documents > 0 and ranks[3].documents > 0)
  end)

  it("reads email, mbox archives and compressed files in its share as one process does", function()
    local rand = support.rng(31)
    local base = {}
    for i = 1, 10 do base[i] = table.concat(support.words(rand, 120, 500), " ") end
    local d = dir .. "/mail"
    os.execute("mkdir -p " .. d)
    local box = {}
    for i = 1, 40 do
      local body = base[(i - 1) % 10 + 1]
      if i % 3 == 0 then body = body:gsub("^%S+", "edited", 1) end
      box[#box + 1] = ("From sender%d@example.org Mon Nov 23 10:00:00 2026\nFrom: s%d@example.org\nSubject: message %d\n"
        .. "Message-ID: <%d@example.org>\n\n%s\n"):format(i, i, i, i, body)
    end
    write(d .. "/box.mbox", table.concat(box, "\n"))
    for i = 1, 10 do
      write(("%s/t%02d.txt"):format(d, i), base[i] .. " tail")
      write(("%s/m%02d.eml"):format(d, i), ("From: a%d@example.org\nSubject: mail %d\nMessage-ID: <e%d@x>\n\n%s\n"):format(i, i, i, base[i]))
    end
    assert.is_true(os.execute("gzip -k " .. d .. "/t01.txt && gzip " .. d .. "/t02.txt && zstd -q --rm " .. d .. "/t03.txt"))
    local o, c = shingle("cluster " .. d .. " -q -o " .. dir .. "/mail-1p")
    assert.are.equal(0, c, o)
    local sum = cjson.decode(read(dir .. "/mail-1p/summary.json"))
    assert.are.equal(61, sum.documents) -- 40 messages, 10 emails, 11 files (one twice: plain and .gz)
    o, c = mpi(3, "cluster " .. d .. " -q --mpi -o " .. dir .. "/mail-3r")
    assert.are.equal(0, c, o)
    assert_same(dir .. "/mail-1p", dir .. "/mail-3r")
  end)

  it("gives the single process's result on real documents (Debian's text and HTML) from a list and a directory", function()
    local docs = debian_docs(1200)
    assert.is_true(#docs > 300, "too few documents in /usr/share/doc")
    write(dir .. "/docs.list", table.concat(docs, "\n") .. "\n")
    os.execute("mkdir -p " .. dir .. "/tree && cp " .. table.concat(docs, " ", 1, 200) .. " " .. dir .. "/tree/ 2>/dev/null")
    local args = "--format list " .. dir .. "/docs.list -q"
    local o, c = shingle("cluster " .. args .. " -o " .. dir .. "/deb-1p")
    assert.are.equal(0, c, o)
    for _, n in ipairs({ 2, 4 }) do
      local out, code = mpi(n, "cluster " .. args .. " --mpi -o " .. dir .. "/deb-" .. n .. "r")
      assert.are.equal(0, code, out)
      assert_same(dir .. "/deb-1p", dir .. "/deb-" .. n .. "r")
    end
    o, c = shingle("cluster " .. dir .. "/tree samples/docs -q --verify none -o " .. dir .. "/tree-1p")
    assert.are.equal(0, c, o)
    o, c = mpi(3, "cluster " .. dir .. "/tree samples/docs -q --verify none --mpi -o " .. dir .. "/tree-3r")
    assert.are.equal(0, c, o)
    assert_same(dir .. "/tree-1p", dir .. "/tree-3r")
  end)

  it("gives the single process's result with every method (LSH, super shingles, greedy), checked or not, and policies", function()
    corpus(dir .. "/m.jsonl", 800, 11)
    for _, opts in ipairs({ "--method lsh", "--method lsh --no-check", "--method supershingle",
      "--method supershingle --no-check", "--method supershingle --meta", "--method greedy",
      "--method greedy --verify none", "--policy containment -t 0.6", "--sketch min --verify none" }) do
      local tag = opts:gsub("%W", "")
      local o, c = shingle("cluster " .. dir .. "/m.jsonl -q " .. opts .. " -o " .. dir .. "/" .. tag .. "-1p")
      assert.are.equal(0, c, o)
      o, c = mpi(2, "cluster " .. dir .. "/m.jsonl -q --mpi " .. opts .. " -o " .. dir .. "/" .. tag .. "-2r")
      assert.are.equal(0, c, o)
      assert_same(dir .. "/" .. tag .. "-1p", dir .. "/" .. tag .. "-2r")
    end
  end)

  it("gathers the intermediate files with --mpi-collect, so recluster works from the output", function()
    corpus(dir .. "/r.jsonl", 600, 5)
    local o, c = shingle("cluster " .. dir .. "/r.jsonl -q -o " .. dir .. "/r-1p")
    assert.are.equal(0, c, o)
    o, c = mpi(2, "cluster " .. dir .. "/r.jsonl -q --mpi --mpi-collect -o " .. dir .. "/r-2r")
    assert.are.equal(0, c, o)
    for _, f in ipairs({ "sketches.bin", "shingles.bin", "pairs.bin" }) do
      assert.are.equal(read(dir .. "/r-1p/" .. f), read(dir .. "/r-2r/" .. f), f)
    end
    for _, d in ipairs({ "r-1p", "r-2r" }) do
      o, c = shingle("recluster " .. dir .. "/" .. d .. " -q --threshold 0.8")
      assert.are.equal(0, c, o)
    end
    assert_same(dir .. "/r-1p", dir .. "/r-2r")
  end)

  it("ends the whole job when a rank is killed mid-run: an error naming the rank, nothing that looks finished; a re-run succeeds", function()
    -- 400 documents; in rank 2's share (the third quarter) a named pipe that nobody writes: rank 2
    -- blocks reading it while the others finish sketching and wait for it in a collective call
    local docs = texts(dir, "kill", 400, 17)
    write(dir .. "/kill.list", table.concat(docs, "\n") .. "\n")
    assert(os.execute("mkfifo " .. dir .. "/kill/pipe"))
    docs[250] = dir .. "/kill/pipe"
    write(dir .. "/pipe.list", table.concat(docs, "\n") .. "\n")
    local tmp = dir .. "/killtmp"
    os.execute("mkdir -p " .. tmp)
    local out = dir .. "/killed"
    -- OUT holds an earlier finished run (one process's), which the killed job must leave whole
    local o, c = shingle("cluster --format list " .. dir .. "/kill.list -q -o " .. dir .. "/kill-1p")
    assert.are.equal(0, c, o)
    assert.is_true(os.execute("cp -a " .. dir .. "/kill-1p " .. out))
    local cmd = MPIRUN .. " -np 4 " .. lua .. " bin/shingle cluster --format list " .. dir .. "/pipe.list --mpi --temp-dir "
      .. tmp .. " -o " .. out .. " > " .. dir .. "/kill.log 2>&1; echo $? > " .. dir .. "/kill.rc"
    os.execute("(" .. cmd .. ") &")
    local victim
    for _ = 1, 600 do
      local f = io.popen("ls " .. tmp .. " 2>/dev/null | grep -c '^shingle-rank[0-9]-......$'")
      local n = tonumber(f:read("*l"))
      f:close()
      if n == 4 then
        local p = io.popen("grep -l -s -a -- '" .. tmp .. "' /proc/[0-9]*/cmdline | while read c; do d=${c%/cmdline}; "
          .. "grep -q -s -a OMPI_COMM_WORLD_RANK=2 $d/environ && head -c 3 $d/cmdline | grep -q lua && basename $d; done")
        victim = p:read("*l")
        p:close()
        if victim then break end
      end
      os.execute("sleep 0.05")
    end
    assert.is_truthy(victim, "rank 2 never started")
    os.execute("sleep 0.3")
    os.execute("kill -9 " .. victim)
    for _ = 1, 600 do
      if read(dir .. "/kill.rc") then break end
      os.execute("sleep 0.1")
    end
    local rc = tonumber(read(dir .. "/kill.rc"))
    local log = read(dir .. "/kill.log")
    assert.is_truthy(rc and rc ~= 0, log)
    assert.is_truthy(log:find("rank 2", 1, true) and log:find("signal 9", 1, true), log)
    -- OUT is the earlier run, whole: the killed job wrote only beside it (.killed.new)
    assert_same(dir .. "/kill-1p", out)
    assert.is_nil(cjson.decode(read(out .. "/summary.json")).mpi)
    -- a re-run (the pipe replaced by a document) succeeds, replaces OUT and sweeps what the killed ranks left:
    -- the directories of ranks killed outright (SIGKILL) by this run, those of ranks ended by SIGTERM by the
    -- rm each started then (asynchronous, and holding the directory's lock until it is done: wait for it)
    o, c = mpi(4, "cluster --format list " .. dir .. "/kill.list -q --mpi --temp-dir " .. tmp .. " -o " .. out)
    assert.are.equal(0, c, o)
    assert_same(dir .. "/kill-1p", out)
    assert.are.equal(4, cjson.decode(read(out .. "/summary.json")).mpi.ranks)
    assert.are.equal("directory", require("lfs").attributes(out, "mode"))
    assert.is_nil(require("lfs").attributes(dir .. "/.killed.new"))
    assert.is_nil(require("lfs").attributes(dir .. "/.killed.old"))
    local left
    for _ = 1, 100 do
      left = support.run("ls -A " .. tmp)
      if left == "" then break end
      os.execute("sleep 0.1")
    end
    assert.are.equal("", left)
  end)

  it("refuses a job into an output directory another run is writing, naming the holder, and leaves it alone", function()
    local util = require "shingle.util"
    local o = assert(util.output(dir .. "/busy", { kind = "cluster run", marker = "run.json" }))
    local out, code = mpi(2, "cluster samples/docs -q --mpi -o " .. dir .. "/busy")
    local held = require("lfs").attributes(o.dir, "mode")
    o:abort()
    assert.are_not.equal(0, code, out)
    assert.is_truthy(out:find("rank 0 of 2", 1, true) and out:find(dir .. "/busy is in use by", 1, true), out)
    assert.are.equal("directory", held) -- the holder's staging directory was not touched
  end)

  it("sweeps only the rank directories whose rank is gone, also when ranks sweep at once", function()
    local m = require "shingle.mpi"
    local base = dir .. "/sweep"
    os.execute("mkdir -p " .. base)
    -- a live rank's directory (this process holds its lock) and two that killed ranks left (lock free)
    local live = assert(m.workdir(base, "shingle-rank3"))
    write(live .. "/a.bin", "x")
    for r = 0, 1 do
      os.execute(("mkdir -p %s/shingle-rank%d-abcde%d/sub && touch %s/shingle-rank%d-abcde%d.lock %s/shingle-rank%d-abcde%d/sub/f")
        :format(base, r, r, base, r, r, base, r, r))
    end
    -- and a lock made half (killed between making and naming it), an unrelated file
    write(base .. "/.shingle-rank5-zzzzzz.lock", "")
    write(base .. "/shingle-rank-notmine", "keep")
    -- four sweepers at once over the same directory
    local lua_cmd = lua .. " -e 'package.cpath=\"" .. build .. "/lib/?.so;\" .. package.cpath; "
      .. "local m = require \"shingle.mpi\"; m.sweep(\"" .. base .. "\", \"shingle-rank\")'"
    assert.is_true(os.execute("for i in 1 2 3 4; do " .. lua_cmd .. " & done; wait"))
    assert.is_true(m.sweep(base, "shingle-rank") >= 0)
    local names = {}
    for name in require("lfs").dir(base) do if name ~= "." and name ~= ".." then names[#names + 1] = name end end
    table.sort(names)
    local lname = live:match("[^/]+$")
    local want = { lname, lname .. ".lock", "shingle-rank-notmine" }
    table.sort(want)
    assert.are.same(want, names)
    assert.are.equal("x", read(live .. "/a.bin"))
  end)

  it("ends the job when a rank is stuck alive and --mpi-timeout is given: the waiting rank names the wait", function()
    local docs = texts(dir, "stuck", 40, 23)
    assert(os.execute("mkfifo " .. dir .. "/stuck/pipe"))
    docs[35] = dir .. "/stuck/pipe" -- rank 1 blocks reading it, alive, and never joins the next step
    write(dir .. "/stuck.list", table.concat(docs, "\n") .. "\n")
    local t0 = os.time()
    local out, code = mpi(2, "cluster --format list " .. dir .. "/stuck.list --mpi --mpi-timeout 2 -o " .. dir .. "/stuck-out")
    assert.are_not.equal(0, code, out)
    assert.is_truthy(out:find("rank 0 of 2", 1, true) and out:find("for the other ranks", 1, true), out)
    assert.is_true(os.time() - t0 < 60)
    assert.is_nil(read(dir .. "/stuck-out/summary.json"))
  end)

  it("ends the job naming the rank and the file when a rank cannot read a document under --strict", function()
    local docs = texts(dir, "texts", 60, 5)
    docs[#docs] = dir .. "/no/such/file.txt" -- in the last rank's share
    write(dir .. "/bad.list", table.concat(docs, "\n") .. "\n")
    local out, code = mpi(2, "cluster --format list " .. dir .. "/bad.list --strict --mpi -o " .. dir .. "/strict")
    assert.are_not.equal(0, code, out)
    assert.is_truthy(out:find("rank 1 of 2", 1, true) and out:find(dir .. "/no/such/file.txt", 1, true), out)
    assert.is_nil(read(dir .. "/strict/summary.json"))
    -- without --strict the document is skipped and counted, as in one process
    out, code = mpi(2, "cluster --format list " .. dir .. "/bad.list -q --mpi -o " .. dir .. "/lenient")
    assert.are.equal(0, code, out)
    assert.is_true(cjson.decode(read(dir .. "/lenient/summary.json")).skipped >= 1)
  end)

  it("ends the job naming the rank and the cause when a rank's disk is full", function()
    corpus(dir .. "/full.jsonl", 3000, 9)
    -- rank 1 may write 256 KiB per file (ulimit -f), as a full disk refuses the rest
    local out, code = support.run(MPIRUN .. " -np 2 sh -c 'if [ \"$OMPI_COMM_WORLD_RANK\" = 1 ]; then ulimit -f 256; fi; " ..
      "trap \"\" XFSZ; exec " .. lua .. " bin/shingle cluster " .. dir .. "/full.jsonl -q --mpi -o " .. dir .. "/full'")
    assert.are_not.equal(0, code, out)
    assert.is_truthy(out:find("rank 1 of 2", 1, true) and out:find("File too large", 1, true), out)
    assert.is_nil(read(dir .. "/full/summary.json"))
  end)
end)
