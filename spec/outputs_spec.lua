-- Outputs that appear whole (docs/robustness.md, "Outputs"): a run's output
-- directory holds the previous finished run or the new one, never a mix; a
-- missing or empty input touches nothing; two runs into one output are kept
-- apart by a lock that names its holder; docs.jsonl is checked on read.
-- Regression tests for defects 2, 3, 4 and 6 of issue 11.
local support = require "support"
local tmpdir, read, write = support.tmpdir, support.read, support.write
local core = require "shingle.core"
local util = require "shingle.util"
local pipeline = require "shingle.pipeline"
local cjson = require "cjson"

local lua = rawget(_G, "jit") and "luajit" or "lua" .. _VERSION:match("%d+%.%d+")
local build = os.getenv("SHINGLE_BUILD") or ("build/" .. (rawget(_G, "jit") and "jit" or _VERSION:match("%d+%.%d+")))
local env = "LUA_PATH='lua/?.lua;lua/?/init.lua;spec/?.lua;;' LUA_CPATH='" .. build .. "/lib/?.so;;' "
local shingle_cmd = lua .. " bin/shingle "

-- Every file of a directory with its size and CRC-32: equal snapshots, equal contents.
local function snapshot(dir)
  local lfs = require "lfs"
  local t = {}
  if not lfs.attributes(dir) then return nil end
  for name in lfs.dir(dir) do
    if name ~= "." and name ~= ".." then t[name] = core.crc32(read(dir .. "/" .. name) or "") end
  end
  return t
end

-- n documents in families of near-duplicates, as JSON Lines.
local function corpus(path, n, seed)
  local rand = support.rng(seed)
  local lines = {}
  local base
  for i = 1, n do
    if i % 5 == 1 then base = support.words(rand, 120, 20000) end
    local words = {}
    for j, w in ipairs(base) do words[j] = rand(100) <= 3 and ("x" .. rand(99999)) or w end
    lines[i] = cjson.encode({ url = ("http://h%d.example/%d"):format(seed, i), text = table.concat(words, " ") })
  end
  write(path, table.concat(lines, "\n") .. "\n")
end

describe("a cluster run's output directory", function()
  local dir
  before_each(function() dir = tmpdir() end)
  after_each(function() os.execute("rm -rf " .. dir) end)

  it("keeps an earlier finished run whole when a new run is killed after writing everything but run.json", function()
    corpus(dir .. "/a.jsonl", 300, 1)
    corpus(dir .. "/b.jsonl", 500, 2)
    local out = dir .. "/out"
    local text, code = support.run(shingle_cmd .. "cluster " .. dir .. "/a.jsonl -q -o " .. out)
    assert.are.equal(0, code, text)
    local before = snapshot(out)
    -- the second run writes every file, then hangs where run.json would come and is killed
    write(dir .. "/run.lua", [[
      local p = require("shingle.pipeline").new{ outdir = arg[1], quiet = true }
      local steps = { function() return p:sketch_or_resume({ arg[3] }) end }
      local rest = p:finish_steps()
      for i = 1, #rest - 1 do steps[#steps + 1] = rest[i] end
      steps[#steps + 1] = function() io.open(arg[2], "w"):close(); while true do end end
      p:staged(steps, {})]])
    local marker = dir .. "/hung"
    os.execute(env .. lua .. " " .. dir .. "/run.lua " .. out .. " " .. marker .. " " .. dir .. "/b.jsonl & pid=$!; "
      .. "while [ ! -e " .. marker .. " ]; do sleep 0.05; done; kill -9 $pid; wait $pid 2>/dev/null")
    assert.is_truthy(read(dir .. "/.out.new/clusters.jsonl"), "the killed run had written its clusters")
    assert.are.same(before, snapshot(out))
    -- recluster reads one run, the earlier one, and says so consistently
    text, code = support.run(shingle_cmd .. "recluster " .. out .. " -t 0.5")
    assert.are.equal(0, code, text)
    assert.is_truthy(text:find("documents 300 ", 1, true), text)
    local clustered = 0
    for line in io.lines(out .. "/clusters.jsonl") do
      for _, m in ipairs(cjson.decode(line).members) do
        clustered = clustered + 1
        assert.is_truthy(m.url:find("^http://h1%.example/"), m.url)
      end
    end
    assert.is_truthy(text:find(("with %d documents"):format(clustered), 1, true), text)
    assert.is_nil(read(dir .. "/.out.new/clusters.jsonl"), "the unfinished run is cleared away")
  end)

  it("is the new run once the swap is done, and a re-run after a killed run succeeds", function()
    corpus(dir .. "/a.jsonl", 100, 1)
    corpus(dir .. "/b.jsonl", 150, 2)
    local out = dir .. "/out"
    assert.are.equal(0, select(2, support.run(shingle_cmd .. "cluster " .. dir .. "/a.jsonl -q -o " .. out)))
    local text, code = support.run(shingle_cmd .. "cluster " .. dir .. "/b.jsonl -q -o " .. out)
    assert.are.equal(0, code, text)
    assert.is_truthy(text:find("documents 150 ", 1, true), text)
    assert.is_truthy(read(out .. "/docs.jsonl"):find("h2.example", 1, true))
    assert.is_nil(read(out .. "/docs.jsonl"):find("h1.example", 1, true))
    assert.is_nil(io.open(dir .. "/.out.old"))
    assert.is_nil(io.open(dir .. "/.out.new"))
  end)

  it("finishes a swap killed between its two renames, or undoes it, on the next use", function()
    corpus(dir .. "/a.jsonl", 60, 1)
    corpus(dir .. "/b.jsonl", 80, 2)
    local out = dir .. "/out"
    assert.are.equal(0, select(2, support.run(shingle_cmd .. "cluster " .. dir .. "/a.jsonl -q -o " .. out)))
    assert.are.equal(0, select(2, support.run(shingle_cmd .. "cluster " .. dir .. "/b.jsonl -q -o " .. dir .. "/b")))
    local a, b = snapshot(out), snapshot(dir .. "/b")
    -- killed after the old output was moved aside and before the complete new one was moved in
    assert(os.rename(out, dir .. "/.out.old"))
    assert(os.rename(dir .. "/b", dir .. "/.out.new"))
    local text, code = support.run(shingle_cmd .. "recluster " .. out)
    assert.are.equal(0, code, text)
    assert.is_truthy(text:find("finished the swap of a completed run", 1, true), text)
    assert.is_truthy(text:find("documents 80 ", 1, true), text)
    assert.are.same(b["docs.jsonl"], snapshot(out)["docs.jsonl"])
    assert.is_nil(io.open(dir .. "/.out.old"))
    -- killed the same way, but the new output was unfinished (no run.json): the old one comes back
    assert(os.rename(out, dir .. "/.out.old"))
    assert(os.execute("mkdir " .. dir .. "/.out.new && touch " .. dir .. "/.out.new/docs.bin.tmp"))
    text, code = support.run(shingle_cmd .. "recluster " .. out)
    assert.are.equal(0, code, text)
    assert.is_truthy(text:find("restored the previous output", 1, true), text)
    assert.is_truthy(text:find("documents 80 ", 1, true), text)
    assert.is_nil(io.open(dir .. "/.out.new"))
    assert.is_truthy(a) -- (the first run's files were replaced by b's above)
  end)

  it("is left as it was when an input does not exist, with an error", function()
    local out = dir .. "/out"
    assert.are.equal(0, select(2, support.run(shingle_cmd .. "cluster samples/docs -q -o " .. out)))
    local before = snapshot(out)
    local text, code = support.run(shingle_cmd .. "cluster /nonexistent/input -q -o " .. out)
    assert.are.equal(1, code, text)
    assert.is_truthy(text:find("cannot read input /nonexistent/input: No such file or directory", 1, true), text)
    assert.are.same(before, snapshot(out))
    text, code = support.run(shingle_cmd .. "cluster samples/docs /nonexistent/input -q -o " .. dir .. "/fresh")
    assert.are.equal(1, code, text)
    assert.is_nil(io.open(dir .. "/fresh"), "a failed first run leaves no output")
  end)

  it("is left as it was when the inputs hold no document, with an error", function()
    local out = dir .. "/out"
    assert.are.equal(0, select(2, support.run(shingle_cmd .. "cluster samples/docs -q -o " .. out)))
    local before = snapshot(out)
    assert(os.execute("mkdir " .. dir .. "/empty && : > " .. dir .. "/empty.jsonl"))
    for _, input in ipairs({ dir .. "/empty", dir .. "/empty.jsonl" }) do
      local text, code = support.run(shingle_cmd .. "cluster " .. input .. " -q -o " .. out)
      assert.are.equal(1, code, text)
      assert.is_truthy(text:find("no documents to cluster in " .. input, 1, true), text)
      assert.are.same(before, snapshot(out))
    end
  end)

  it("refuses a directory that is not empty and holds no earlier run, touching nothing", function()
    local out = dir .. "/mine"
    assert(os.execute("mkdir " .. out .. " && echo precious > " .. out .. "/notes.txt"))
    local text, code = support.run(shingle_cmd .. "cluster samples/docs -q -o " .. out)
    assert.are.equal(1, code, text)
    assert.is_truthy(text:find("is not empty and holds no finished cluster run", 1, true), text)
    assert.is_truthy(text:find("notes.txt", 1, true), text)
    assert.are.equal("precious\n", read(out .. "/notes.txt"))
  end)

  it("follows a symbolic link at the output to the directory it names", function()
    assert(os.execute("mkdir " .. dir .. "/real && ln -s real " .. dir .. "/link"))
    for _ = 1, 2 do
      local text, code = support.run(shingle_cmd .. "cluster samples/docs -q -o " .. dir .. "/link")
      assert.are.equal(0, code, text)
    end
    assert.is_truthy(read(dir .. "/real/run.json"))
    assert.are.equal("link", require("lfs").symlinkattributes(dir .. "/link", "mode"))
  end)
end)

describe("two runs into one output directory", function()
  it("are kept apart by a lock naming the holder's pid, host and start time", function()
    local dir = tmpdir()
    local out = dir .. "/out"
    write(dir .. "/hold.lua", [[
      local core = require "shingle.core"
      local l = assert(core.lock(arg[1], "x", "shingle cluster (the first run)"))
      io.open(arg[2], "w"):close()
      while true do end]])
    local marker = dir .. "/held"
    local pid = support.run(env .. lua .. " " .. dir .. "/hold.lua " .. dir .. "/.out.lock " .. marker
      .. " >/dev/null 2>&1 & echo $!; while [ ! -e " .. marker .. " ]; do sleep 0.05; done"):match("%d+")
    -- the holder spins until killed: kill it even when an assertion below fails
    finally(function() os.execute("kill -9 " .. pid .. " 2>/dev/null") end)
    local text, code = support.run(shingle_cmd .. "cluster samples/docs -q -o " .. out)
    assert.are.equal(1, code, text)
    local host = support.run("hostname"):gsub("%s+$", "")
    assert.is_truthy(text:find(out .. " is in use by pid " .. pid .. " on host " .. host .. " since ", 1, true), text)
    assert.is_truthy(text:find("Z: shingle cluster (the first run)", 1, true), text)
    assert.is_nil(io.open(out))
    os.execute("kill -9 " .. pid)
    os.execute("sleep 0.2")
    -- the kernel dropped the killed holder's lock: the next run goes ahead
    text, code = support.run(shingle_cmd .. "cluster samples/docs -q -o " .. out)
    assert.are.equal(0, code, text)
    os.execute("rm -rf " .. dir)
  end)

  it("end with one of them complete and the other refused, when started together", function()
    local dir = tmpdir()
    corpus(dir .. "/a.jsonl", 400, 1)
    corpus(dir .. "/b.jsonl", 400, 2)
    local out = dir .. "/out"
    local res = support.run("(" .. shingle_cmd .. "cluster " .. dir .. "/a.jsonl -q -o " .. out .. " >" .. dir
      .. "/a.log 2>&1; echo a:$? >>" .. dir .. "/codes) & (" .. shingle_cmd .. "cluster " .. dir .. "/b.jsonl -q -o "
      .. out .. " >" .. dir .. "/b.log 2>&1; echo b:$? >>" .. dir .. "/codes) & wait")
    assert.are.equal("", res)
    local codes = read(dir .. "/codes")
    local a, b = tonumber(codes:match("a:(%d+)")), tonumber(codes:match("b:(%d+)"))
    -- at least one finished; a refused one says why
    assert.is_true(a == 0 or b == 0, codes)
    for _, k in ipairs({ "a", "b" }) do
      local log = read(dir .. "/" .. k .. ".log")
      if (k == "a" and a or b) ~= 0 then assert.is_truthy(log:find("is in use by pid", 1, true), log) end
    end
    -- the output is one complete run: all its URLs come from the same input
    local doc = read(out .. "/docs.jsonl")
    assert.is_truthy(doc)
    assert.is_true((doc:find("h1.example", 1, true) == nil) ~= (doc:find("h2.example", 1, true) == nil))
    assert.are.equal(0, select(2, support.run(shingle_cmd .. "recluster " .. out)))
    os.execute("rm -rf " .. dir)
  end)
end)

describe("docs.jsonl of a finished run", function()
  local dir, out
  before_each(function()
    dir = tmpdir()
    out = dir .. "/out"
    assert.are.equal(0, select(2, support.run(shingle_cmd .. "cluster samples/docs -q -o " .. out)))
  end)
  after_each(function() os.execute("rm -rf " .. dir) end)

  local damages = {
    ["truncated"] = function(s) return s:sub(1, math.floor(#s / 2)) end,
    ["emptied"] = function() return "" end,
    ["changed in one URL byte"] = function(s) return (s:gsub("samples", "sampleZ", 1)) end,
    ["missing its last newline"] = function(s) return s:sub(1, -2) end,
  }
  for what, damage in pairs(damages) do
    it("is refused by recluster with a message naming it when " .. what, function()
      local path = out .. "/docs.jsonl"
      write(path, damage(read(path)))
      local text, code = support.run(shingle_cmd .. "recluster " .. out)
      assert.are.equal(1, code, text)
      assert.is_truthy(text:find(path .. " is truncated or corrupt", 1, true), text)
      assert.is_truthy(text:find("run shingle cluster again", 1, true), text)
    end)
  end

  it("is checked by p:documents() of a loaded run", function()
    local p = assert(pipeline.load(out))
    assert.is_truthy(p:documents())
    write(out .. "/docs.jsonl", "")
    local urls, err = p:documents()
    assert.is_nil(urls)
    assert.is_truthy(err:find("0 bytes in 0 lines", 1, true), err)
  end)
end)

describe("an unreadable subdirectory of an input directory", function()
  it("is a warning and a count, not an internal error, and stops the run only with --strict", function()
    local dir = tmpdir()
    assert(os.execute("mkdir -p " .. dir .. "/in/a " .. dir .. "/in/b && cp samples/docs/*.txt " .. dir .. "/in/a/ && "
      .. "echo hidden words > " .. dir .. "/in/b/x.txt && chmod 000 " .. dir .. "/in/b"))
    -- root reads any directory: drop the capabilities that let it
    local drop = support.run("id -u"):match("^0") and "setpriv --bounding-set=-dac_override,-dac_read_search " or ""
    local text, code = support.run(drop .. shingle_cmd .. "cluster " .. dir .. "/in -o " .. dir .. "/out")
    assert.are.equal(0, code, text)
    assert.is_truthy(text:find(dir .. "/in/b: cannot read the directory: Permission denied", 1, true), text)
    assert.is_truthy(text:find("(skipped 1)", 1, true), text)
    assert.is_nil(text:find("internal error", 1, true), text)
    text, code = support.run(drop .. shingle_cmd .. "cluster --strict " .. dir .. "/in -o " .. dir .. "/out2")
    assert.are.equal(1, code, text)
    assert.is_truthy(text:find("--strict makes it fatal", 1, true), text)
    os.execute("chmod 755 " .. dir .. "/in/b; rm -rf " .. dir)
  end)
end)

describe("an output directory inside the input directory", function()
  it("is not read as input, neither while the run writes it nor on the next run", function()
    local dir = tmpdir()
    assert(os.execute("mkdir -p " .. dir .. "/in && cp samples/docs/*.txt " .. dir .. "/in/"))
    local n = tonumber(support.run("ls " .. dir .. "/in | wc -l"):match("%d+"))
    -- the first run wrote its own files into in/.out.new while reading in/ (it read them too)
    local text, code = support.run(shingle_cmd .. "cluster --strict " .. dir .. "/in -o " .. dir .. "/in/out")
    assert.are.equal(0, code, text)
    assert.is_truthy(text:find(("documents %d (skipped 0)"):format(n), 1, true), text)
    assert.is_truthy(text:find(dir .. "/in/.out.new: the output directory of a shingle run", 1, true), text)
    text, code = support.run(shingle_cmd .. "cluster --strict " .. dir .. "/in -o " .. dir .. "/in/out")
    assert.are.equal(0, code, text)
    assert.is_truthy(text:find(("documents %d (skipped 0)"):format(n), 1, true), text)
    assert.is_truthy(text:find(dir .. "/in/out: the output directory of a shingle run", 1, true), text)
    os.execute("rm -rf " .. dir)
  end)
end)

describe("util.output()", function()
  it("refuses the name '.' and a file in the way", function()
    local dir = tmpdir()
    assert.are.equal("give the output directory by its name, not as '.' (it is replaced as a whole)",
      select(2, util.output(".")))
    write(dir .. "/f", "x")
    assert.are.equal(dir .. "/f exists and is not a directory", select(2, util.output(dir .. "/f")))
    os.execute("rm -rf " .. dir)
  end)

  it("hard-links the files a later step starts from, and the old output stays intact until the swap", function()
    local dir = tmpdir()
    local o = assert(util.output(dir .. "/out", { marker = "done" }))
    write(o.dir .. "/data", "first")
    write(o.dir .. "/done", "")
    assert(o:commit())
    local o2 = assert(util.output(dir .. "/out", { marker = "done", keep = true }))
    assert.are.equal("first", read(o2.dir .. "/data"))
    assert.is_nil(read(o2.dir .. "/done"), "the marker is not carried over: the new output is unfinished")
    util.atomic_write(o2.dir .. "/data", function(f) f:write("second") end)
    assert.are.equal("first", read(dir .. "/out/data"))
    o2:abort()
    assert.are.equal("first", read(dir .. "/out/data"))
    assert.is_nil(io.open(o2.dir))
    os.execute("rm -rf " .. dir)
  end)
end)
