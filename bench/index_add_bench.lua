-- Benchmark of `index add` alone, beside a reference tree in the same run
-- (not a test): a base sweep into a new index, then a later sweep on top, for
-- this tree and for REF (another checkout of shingle with its own build/5.4,
-- e.g. main's: `git worktree add /tmp/ref main && (cd /tmp/ref && cmake -S .
-- -B build/5.4 -DSHINGLE_LUA=5.4 && cmake --build build/5.4)`), each add in a
-- process of its own. Prints per add: wall seconds, CPU seconds of the
-- process (its sketching threads included), CPU seconds of its main thread
-- (the one that writes LMDB: on an idle 2-core machine the wall time is
-- about the larger of it and half the process's), documents per CPU second,
-- data.mdb's size.
-- Usage: lua5.4 bench/index_add_bench.lua [--docs 100000] [--sweep 30000] [--ref DIR] [--dir /tmp/shingle-index-add-bench]
-- Corpora come from bench/gen.c (5 KB documents; seed 1 the base, seed 2 the sweep).
local opt = { docs = 100000, sweep = 30000, dir = "/tmp/shingle-index-add-bench" }
for i = 1, #arg, 2 do opt[arg[i]:gsub("^%-%-", "")] = tonumber(arg[i + 1]) or arg[i + 1] end

if opt.child then
  -- one add, in this process: --child TREE --db DB --file FILE --sweepname NAME [--fresh 1]
  local tree = opt.child
  package.path = tree .. "/lua/?.lua;" .. tree .. "/lua/?/init.lua;" .. package.path
  package.cpath = tree .. "/build/5.4/lib/?.so;" .. package.cpath
  local index, core = require "shingle.index", require "shingle.core"
  local function thread_cpu()
    local f = assert(io.open("/proc/thread-self/stat"))
    local fields = {}
    for x in f:read("a"):match("%) (.*)$"):gmatch("%S+") do fields[#fields + 1] = x end
    f:close()
    return (tonumber(fields[12]) + tonumber(fields[13])) / 100 -- utime, stime in clock ticks (USER_HZ 100)
  end
  if opt.fresh then os.execute("rm -rf " .. opt.db) end
  local ix = assert(index.open(opt.db))
  local m0, t0, c0 = thread_cpu(), core.now(), os.clock()
  local st = assert(ix:add({ opt.file }, { sweep = opt.sweepname, threads = core.cpus() }))
  local t, c, m = core.now() - t0, os.clock() - c0, thread_cpu() - m0
  ix:close()
  local f = assert(io.open(opt.db .. "/data.mdb", "rb"))
  local size = f:seek("end")
  f:close()
  print(("%d documents: %.1f s wall, %.2f CPU s (main thread %.2f), %.0f documents per CPU second; %d identical, %d linked, %d candidates; data.mdb %.1f MB")
    :format(st.documents, t, c, m, st.documents / c, st.identical, st.linked, st.candidates, size / 1e6))
  return
end

local function sh(cmd)
  if not os.execute(cmd) then error("failed: " .. cmd) end
end
package.path = "bench/lib/?.lua;" .. package.path
sh("mkdir -p " .. opt.dir)
local gen = opt.dir .. "/gen"
sh(("cc -O2 -o %s bench/gen.c -lm"):format(gen))
local base = ("%s/base-%d.jsonl"):format(opt.dir, opt.docs)
local later = ("%s/sweep-%d.jsonl"):format(opt.dir, opt.sweep)
if not io.open(base) then sh(("%s --docs %d --size 5000 --seed 1 --out %s"):format(gen, opt.docs, base)) end
if not io.open(later) then sh(("%s --docs %d --size 5000 --seed 2 --out %s"):format(gen, opt.sweep, later)) end

print("# index add benchmark, " .. os.date("!%Y-%m-%d %H:%M UTC"))
print("machine: " .. require("machine").line())
print("load: " .. io.popen("uptime"):read("*l"))
local trees = { { name = "this tree", dir = "." } }
if opt.ref then table.insert(trees, 1, { name = "reference " .. opt.ref, dir = opt.ref }) end
for _, t in ipairs(trees) do
  local db = opt.dir .. "/db"
  local function run(file, name, fresh)
    local p = assert(io.popen(("lua5.4 bench/index_add_bench.lua --child %s --db %s --file %s --sweepname %s%s"):format(
      t.dir, db, file, name, fresh and " --fresh 1" or "")))
    local out = p:read("a")
    p:close()
    return out:gsub("\n$", "")
  end
  print(("%s: base, %s"):format(t.name, run(base, "s1", true)))
  print(("%s: sweep on top, %s"):format(t.name, run(later, "s2", false)))
  sh("rm -rf " .. db)
end
print("load: " .. io.popen("uptime"):read("*l"))
