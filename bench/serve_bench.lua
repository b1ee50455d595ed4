-- Benchmark of `shingle serve` (not a test): wrk (Debian) posting real 5 KB
-- documents to POST /similar of a 1M-document index served by 2 nginx
-- workers, on 127.0.0.1 only, each run bounded in time:
--   * a bare nginx endpoint (`return 200`) and a bare Lua endpoint (reads the
--     body, answers {}) in the same nginx, same run: the references;
--   * /similar: peak requests/s, then p50/p99 latency at 80% of that peak;
--     the ratio to the bare endpoint again as the median of alternating
--     runs of the two (--ratio-rounds of --ratio-duration s);
--   * the same with a concurrent writer adding documents (POST /documents)
--     at a steady rate (100 a second from 16 clients by default): how much it
--     slows the readers, with the writer thread (the default) and, as the
--     reference, with the event loop adding (--writer loop);
--   * the largest accepted body (max_body, 256 KiB): how long it holds a worker
--     (one connection), and its rate with 4 connections;
--   * POST /documents as fast as 16 connections go: adds/s with the batched
--     writer (the default --batch-max 256) against a server that commits each
--     request alone (--batch-max 1), same run;
--   * the FFI path against the classic binding inside nginx (when the server
--     has both: `shingle serve --binding`);
--   * /similar with the common-value cutoff (`--max-df 1000`) against the
--     index's default (no cutoff).
-- Every answer must be 2xx (wrk counts the others).
--
--   lua5.4 bench/serve_bench.lua [--docs 1000000] [--duration 10] [--connections 16]
--       [--write-rate 100] [--write-connections 16] [--rounds 5] [--dir /tmp/shingle-serve-bench] [--rebuild 1]
--       [--ratio-rounds 5] [--ratio-duration 6]
--
-- The corpus (bench/gen.c, 5 GB for 1M documents) and the index are made in
-- --dir on the first run and reused; the writer's documents go to a sweep of
-- their own, so the index grows by write-rate x 2 x duration documents a run
-- plus the POST /documents peaks (a few thousand).
package.path = "lua/?.lua;lua/?/init.lua;bench/lib/?.lua;" .. package.path
local stats = require "stats" -- bench/lib/stats.lua
local median = stats.median
package.cpath = "build/5.4/lib/?.so;" .. package.cpath
local cjson = require "cjson"
local index = require "shingle.index"

local opt = { docs = 1000000, dir = "/tmp/shingle-serve-bench", duration = 10, connections = 16, threads = 2,
  write_rate = 100, write_connections = 16, queries = 2000, rebuild = 0, workers = 2, rounds = 5,
  ratio_rounds = 5, ratio_duration = 6 }
for i = 1, #arg, 2 do
  local k = arg[i]:gsub("^%-%-", ""):gsub("%-", "_")
  if opt[k] == nil then error("unknown option " .. arg[i]) end
  opt[k] = tonumber(arg[i + 1]) or arg[i + 1]
end

local function sh(cmd)
  local ok = os.execute(cmd)
  if not ok or ok ~= true and ok ~= 0 then error("failed: " .. cmd) end
end

local function read_cmd(cmd)
  local p = assert(io.popen(cmd))
  local s = p:read("*a")
  p:close()
  return s
end

local function exists(p)
  local f = io.open(p)
  if f then f:close() return true end
  return false
end

local machine = require("machine").line -- bench/lib/machine.lua

local function uptime() return (read_cmd("uptime"):gsub("^%s+", ""):gsub("\n", "")) end

-- ---- corpus, index, request bodies ------------------------------------------

local D = opt.dir
sh("mkdir -p " .. D)
local gen = D .. "/gen"
sh(("cc -O2 -std=c99 -o %s bench/gen.c -lm"):format(gen))
local base = D .. "/base.jsonl"
if not exists(base) or opt.rebuild == 1 then
  sh(("%s --docs %d --size 5000 --seed 1 --out %s"):format(gen, opt.docs, base))
end
local db = D .. "/db"
local marker = db .. "/built"
local built = exists(marker) and tonumber(read_cmd("cat " .. marker)) or nil
if built ~= opt.docs or opt.rebuild == 1 then
  sh("rm -rf " .. db)
  local t0 = os.time()
  sh(("lua5.4 bin/shingle index add %s %s --sweep 2026-01 -q"):format(db, base))
  sh(("echo %d > %s"):format(opt.docs, marker))
  print(("index of %d documents built in %d s"):format(opt.docs, os.time() - t0))
end

-- /similar bodies: half edited copies of indexed documents (they find their
-- near-duplicates), half new documents (seed 3), about 5 KB each
local function bodies(name, seed, n, edit_from)
  local dir = ("%s/%s"):format(D, name)
  local list = dir .. ".list"
  if exists(list) then return list end
  sh("mkdir -p " .. dir)
  local names = {}
  local src = edit_from and io.open(edit_from) or io.popen(("%s --docs %d --size 5000 --seed %d --out /dev/stdout"):format(gen, n, seed))
  local i = 0
  for line in src:lines() do
    i = i + 1
    local text = cjson.decode(line).text
    if edit_from then text = text:gsub("(%a+) (%a+) (%a+)", "%3 %2 %1", 3) end
    local p = ("%s/%05d.txt"):format(dir, i)
    local f = assert(io.open(p, "wb"))
    f:write(text)
    f:close()
    names[#names + 1] = p
    if i >= n then break end
  end
  src:close()
  local f = assert(io.open(list, "w"))
  f:write(table.concat(names, "\n"), "\n")
  f:close()
  return list
end

local edited = bodies("edited", nil, opt.queries // 2, base)
local fresh = bodies("fresh", 3, opt.queries // 2)
local queries = D .. "/queries.list"
sh(("cat %s %s > %s"):format(edited, fresh, queries))
local writes = bodies("writes", 4, 2000)
-- the largest body the default limit takes: 256 KiB of documents
local big = D .. "/big.list"
if not exists(big) then
  local parts, n = {}, 0
  for line in io.lines(fresh) do
    local f = assert(io.open(line, "rb"))
    local s = f:read("*a")
    f:close()
    if n + #s + 1 > 262144 then break end
    parts[#parts + 1] = s
    n = n + #s + 1
  end
  local p = D .. "/big.txt"
  local f = assert(io.open(p, "wb"))
  f:write(table.concat(parts, "\n"))
  f:close()
  f = assert(io.open(big, "w"))
  f:write(p, "\n")
  f:close()
end
local body_sizes = {}
for line in io.lines(queries) do
  local f = io.open(line, "rb"); body_sizes[#body_sizes + 1] = f:seek("end"); f:close()
end
table.sort(body_sizes)
local ix = assert(index.open(db, { readonly = true }))
local ndocs = ix:count()
ix:close()

-- ---- the server ---------------------------------------------------------------

local bare = D .. "/bare.conf"
local f = assert(io.open(bare, "w"))
f:write([[
location = /bare { return 200 '{"hits":[]}\n'; }
location = /bare-lua { content_by_lua_block { ngx.req.read_body(); ngx.print('{"hits":[]}\n') } }
]])
f:close()

local function free_port()
  local used = read_cmd("ss -Htln")
  for _ = 1, 100 do
    local p = 20000 + math.random(40000)
    if not used:find(":" .. p .. " ", 1, true) then return p end
  end
  error("no free port")
end
math.randomseed(os.time())

local function start(binding, more, name)
  local port = free_port()
  local extra = (binding and ("--binding " .. binding) or "") .. " " .. (more or "")
  name = name or "srv"
  local pid = read_cmd(("lua5.4 bin/shingle serve %s --listen 127.0.0.1:%d --workers %d --prefix %s/%s --no-access-log "
    .. "--server-conf %s %s > %s/%s.log 2>&1 & echo $!"):format(db, port, opt.workers, D, name, bare, extra, D, name)):match("%d+")
  local url = "http://127.0.0.1:" .. port
  for _ = 1, 100 do
    if read_cmd(("curl -s -o /dev/null -w '%%{http_code}' %s/health"):format(url)) == "200" then
      -- measure once every worker's postings filter is built (a few seconds
      -- of a thread in each worker, which would otherwise take CPU from the
      -- first runs)
      local ready = {}
      for _ = 1, 600 do
        local ok, st = pcall(cjson.decode, read_cmd(("curl -s %s/stats"):format(url)))
        local w = ok and type(st) == "table" and st.worker
        if w and (w.filter.ready or not w.filter.started) then ready[w.id] = true end
        local n = 0
        for _ in pairs(ready) do n = n + 1 end
        if n >= opt.workers then return { pid = pid, url = url } end
        os.execute("sleep 0.1")
      end
      error("the workers' postings filters were not built in 60 s")
    end
    os.execute("sleep 0.1")
  end
  os.execute("kill " .. pid)
  error("the server did not start: " .. read_cmd("cat " .. D .. "/" .. name .. ".log"))
end

local function stop(srv)
  os.execute("kill -TERM " .. srv.pid)
  for _ = 1, 100 do
    if not os.execute("kill -0 " .. srv.pid .. " 2>/dev/null") then return end
    os.execute("sleep 0.1")
  end
  os.execute("kill -KILL " .. srv.pid)
end

local function wrk(srv, list, path, o)
  o = o or {}
  local threads, conns = o.threads or opt.threads, o.connections or opt.connections
  local rate = o.rate and (o.rate / threads) or 0
  local cmd = ("wrk -t%d -c%d -d%ds --timeout 10s -s bench/serve_wrk.lua %s -- %s '%s' %s %s"):format(
    threads, conns, o.duration or opt.duration, srv.url, list, path, tostring(rate), o.urls and "url" or "")
  local p = assert(io.popen(cmd .. " 2>&1"))
  return p
end

local function result(p)
  local out = p:read("*a")
  p:close()
  local line = out:match("(%b{})%s*$")
  if not line then error("wrk said:\n" .. out) end
  local r = cjson.decode(line)
  r.bad = r.non2xx + r.connect_errors + r.read_errors + r.write_errors + r.timeouts
  return r
end

-- CPU seconds of the server's workers so far (utime + stime of the master's children, /proc)
local CLK = tonumber(read_cmd("getconf CLK_TCK")) or 100
local function workers_cpu(srv)
  local total = 0
  for pid in read_cmd("ps --ppid " .. srv.pid .. " -o pid= 2>/dev/null"):gmatch("%d+") do
    local f = io.open("/proc/" .. pid .. "/stat")
    if f then
      local st = f:read("*a")
      f:close()
      local fields = {}
      for x in st:gsub("^.-%) ", ""):gmatch("%S+") do fields[#fields + 1] = x end
      total = total + (tonumber(fields[12]) or 0) + (tonumber(fields[13]) or 0) -- utime, stime (fields 14, 15)
    end
  end
  return total / CLK
end

-- a run, with the workers' CPU time per answered request (repeatable on a busy machine, unlike requests/s)
-- the machine's idle and total jiffies so far (/proc/stat's cpu line)
local function machine_idle()
  local f = assert(io.open("/proc/stat"))
  local line = f:read("l")
  f:close()
  local t, total = {}, 0
  for x in line:gmatch("%d+") do t[#t + 1] = tonumber(x); total = total + tonumber(x) end
  return t[4] + (t[5] or 0), total -- idle + iowait
end

local function run(srv, list, path, o)
  local c0 = workers_cpu(srv)
  local i0, t0 = machine_idle()
  local r = result(wrk(srv, list, path, o))
  local i1, t1 = machine_idle()
  r.cpu_us = r.requests > 0 and (workers_cpu(srv) - c0) * 1e6 / r.requests or 0
  r.idle = t1 > t0 and 100 * (i1 - i0) / (t1 - t0) or 0
  return r
end

-- ---- the measurements ------------------------------------------------------------

print("# shingle serve benchmark, " .. os.date("!%Y-%m-%d %H:%M UTC"))
print("machine: " .. machine())
print("load before: " .. uptime())
print(("index: %d documents (%s); /similar bodies: %d, median %d bytes; %d workers; wrk %d threads x %d connections, %d s a run")
  :format(ndocs, db, #body_sizes, body_sizes[#body_sizes // 2 + 1], opt.workers, opt.threads, opt.connections, opt.duration))

local rows = {}
local function report(name, r, note)
  rows[#rows + 1] = { name = name, r = r, note = note }
  print(("%-44s %9.0f req/s  p50 %7.3f ms  p99 %7.3f ms  %6.1f us CPU/req  idle %3.0f%%  non-2xx/errors %d%s"):format(name, r.rps,
    r.p50_ms, r.p99_ms, r.cpu_us or 0, r.idle or 0, r.bad,
    note and ("  " .. note) or ""))
end

local function measure(binding)
  local srv = start(binding)
  local tag = binding and (" [" .. binding .. "]") or ""
  local ok, res = pcall(function()
    run(srv, queries, "/similar", { duration = 3 }) -- warm the page cache and the workers
    local out = {}
    out.bare = run(srv, queries, "/bare")
    report("bare nginx endpoint (return 200)" .. tag, out.bare)
    out.bare_lua = run(srv, queries, "/bare-lua")
    report("bare Lua endpoint (read body, answer {})" .. tag, out.bare_lua)
    out.peak = run(srv, queries, "/similar")
    report("/similar, peak" .. tag, out.peak, ("%.2f of bare nginx, %.2f of bare Lua"):format(out.peak.rps / out.bare.rps,
      out.peak.rps / out.bare_lua.rps))
    out.at80 = run(srv, queries, "/similar", { rate = 0.8 * out.peak.rps })
    report("/similar at 80% of its peak" .. tag, out.at80)
    if not binding or binding == "ffi" then
      -- the ratio again, from alternating runs of the bare endpoint and
      -- /similar: one 10 s run of each is at the mercy of the machine
      local ratios, cpus, bares, peaks = {}, {}, {}, {}
      for i = 1, opt.ratio_rounds do
        local b = run(srv, queries, "/bare", { duration = opt.ratio_duration })
        local p = run(srv, queries, "/similar", { duration = opt.ratio_duration })
        if b.bad + p.bad > 0 then error("non-2xx answers in the ratio rounds") end
        ratios[i], cpus[i], bares[i], peaks[i] = p.rps / b.rps, p.cpu_us, b.rps, p.rps
      end
      out.ratio = { median = stats.median(ratios), min = math.min(table.unpack(ratios)), max = math.max(table.unpack(ratios)),
        cpu = stats.median(cpus), bare = stats.median(bares), peak = stats.median(peaks) }
      print(("/similar / bare nginx, %d alternating rounds of %d s: median %.3f (%.3f-%.3f); medians %.0f vs %.0f req/s, "
        .. "%.1f us CPU/req"):format(opt.ratio_rounds, opt.ratio_duration, out.ratio.median, out.ratio.min, out.ratio.max,
        out.ratio.peak, out.ratio.bare, out.ratio.cpu))

      -- a writer at a steady rate during the readers' runs
      local wp = wrk(srv, writes, "/documents?sweep=bench-" .. os.date("!%Y%m%d%H%M%S"), { threads = 1,
        connections = opt.write_connections, rate = opt.write_rate, urls = true, duration = opt.duration * 2 + 2 })
      os.execute("sleep 1")
      out.peak_w = run(srv, queries, "/similar")
      report("/similar, peak, with a writer" .. tag, out.peak_w, ("%.1f%% slower than without"):format(
        100 * (1 - out.peak_w.rps / out.peak.rps)))
      out.at80_w = run(srv, queries, "/similar", { rate = 0.8 * out.peak.rps })
      report("/similar at 80% of peak, with a writer" .. tag, out.at80_w)
      out.writer = result(wp)
      report(("writer: POST /documents at %d/s"):format(opt.write_rate) .. tag, out.writer)
      out.big = run(srv, big, "/similar", { threads = 1, connections = 1, duration = 5 })
      report("/similar, the largest body (256 KiB), one at a time" .. tag, out.big)
      out.big4 = run(srv, big, "/similar", { threads = 2, connections = 4, duration = 5 })
      report("/similar, the largest body (256 KiB), 4 connections" .. tag, out.big4)
      out.adds = run(srv, writes, "/documents?sweep=bench-peak-" .. os.date("!%Y%m%d%H%M%S"), { urls = true })
      report("POST /documents, peak, batched (--batch-max 256)" .. tag, out.adds)
    end
    return out
  end)
  stop(srv)
  if not ok then error(res, 0) end
  return res
end

-- the reference for the writer thread: the event loop adds (--writer loop),
-- the readers' peak alone and with the same writer
local function measure_loop_writer()
  local srv = start(nil, "--writer loop", "srv-loop")
  local ok, res = pcall(function()
    local out = {}
    run(srv, queries, "/similar", { duration = 3 })
    out.peak = run(srv, queries, "/similar")
    report("/similar, peak [--writer loop]", out.peak)
    local wp = wrk(srv, writes, "/documents?sweep=bench-loop-" .. os.date("!%Y%m%d%H%M%S"), { threads = 1,
      connections = opt.write_connections, rate = opt.write_rate, urls = true, duration = opt.duration + 2 })
    os.execute("sleep 1")
    out.peak_w = run(srv, queries, "/similar")
    report("/similar, peak, with a writer [--writer loop]", out.peak_w, ("%.1f%% slower than without"):format(
      100 * (1 - out.peak_w.rps / out.peak.rps)))
    out.writer = result(wp)
    report(("writer: POST /documents at %d/s [--writer loop]"):format(opt.write_rate), out.writer)
    return out
  end)
  stop(srv)
  if not ok then error(res, 0) end
  return res
end

-- adds committed one request at a time: the reference for the batched writer
local function measure_unbatched()
  local srv = start(nil, "--batch-max 1")
  local ok, res = pcall(function()
    local out = {}
    out.adds = run(srv, writes, "/documents?sweep=bench-one-" .. os.date("!%Y%m%d%H%M%S"), { urls = true })
    report("POST /documents, peak, a commit each (--batch-max 1)", out.adds)
    return out
  end)
  stop(srv)
  if not ok then error(res, 0) end
  return res
end

-- the same /similar with the common-value cutoff (--max-df 1000: sketch
-- values held by more than 1000 documents are not looked up)
local function measure_cutoff()
  local srv = start(nil, "--max-df 1000")
  local ok, res = pcall(function()
    local out = {}
    run(srv, queries, "/similar", { duration = 3 })
    out.peak = run(srv, queries, "/similar")
    report("/similar, peak, --max-df 1000", out.peak)
    out.at80 = run(srv, queries, "/similar", { rate = 0.8 * out.peak.rps })
    report("/similar at 80% of its peak, --max-df 1000", out.at80)
    out.big = run(srv, big, "/similar", { threads = 1, connections = 1, duration = 5 })
    report("/similar, the largest body, one at a time, --max-df 1000", out.big)
    return out
  end)
  stop(srv)
  if not ok then error(res, 0) end
  return res
end

-- FFI against the classic binding inside nginx: two servers over the same
-- index, one per binding, measured in alternating rounds (the machine's
-- noise falls on both alike); medians of the rounds
local function measure_bindings()
  local a = start("ffi", nil, "srv-ffi")
  local ok, res = pcall(function()
    local b = start("classic", nil, "srv-classic")
    local ok2, res2 = pcall(function()
      run(a, queries, "/similar", { duration = 3 })
      run(b, queries, "/similar", { duration = 3 })
      local got = { ffi = { rps = {}, p50 = {}, p99 = {} }, classic = { rps = {}, p50 = {}, p99 = {} } }
      for _ = 1, opt.rounds do
        for _, which in ipairs({ { "ffi", a }, { "classic", b } }) do
          local r = run(which[2], queries, "/similar", { duration = 5 })
          rows[#rows + 1] = { name = "binding round", r = r }
          local g = got[which[1]]
          g.rps[#g.rps + 1], g.p50[#g.p50 + 1], g.p99[#g.p99 + 1] = r.rps, r.p50_ms, r.p99_ms
        end
      end
      local out = {}
      for k, g in pairs(got) do
        out[k] = { rps = median(g.rps), p50_ms = median(g.p50), p99_ms = median(g.p99), bad = 0 }
        report(("/similar, peak, --binding %s (median of %d rounds)"):format(k, opt.rounds), out[k])
      end
      return out
    end)
    stop(b)
    if not ok2 then error(res2, 0) end
    return res2
  end)
  stop(a)
  if not ok then error(res, 0) end
  return res
end

local has_binding = read_cmd("lua5.4 bin/shingle serve --help"):find("--binding", 1, true) ~= nil
local main = measure(has_binding and "ffi" or nil)
local classic
if has_binding then classic = measure_bindings() end
local loop_writer = measure_loop_writer()
local unbatched = measure_unbatched()
local cutoff = measure_cutoff()
print("load after: " .. uptime())

local bad = 0
for _, r in ipairs(rows) do bad = bad + r.r.bad end
print()
print("## summary")
print(("/similar peak / bare nginx: %.3f (target >= 0.25); / bare Lua: %.3f"):format(main.peak.rps / main.bare.rps,
  main.peak.rps / main.bare_lua.rps))
print(("/similar peak / bare nginx, median of %d alternating rounds: %.3f (%.3f-%.3f)"):format(opt.ratio_rounds,
  main.ratio.median, main.ratio.min, main.ratio.max))
print(("nginx workers' CPU per request: bare nginx %.1f us, bare Lua %.1f us, /similar %.1f us (%.1f us more than bare Lua)")
  :format(main.bare.cpu_us, main.bare_lua.cpu_us, main.peak.cpu_us, main.peak.cpu_us - main.bare_lua.cpu_us))
print(("/similar p99 at 80%% of peak: %.3f ms (target < 5 ms); with a writer: %.3f ms"):format(main.at80.p99_ms, main.at80_w.p99_ms))
print(("the writer (%d docs/s from %d clients; %.0f/s done) slows the readers' peak by %.1f%% (target < 20%%); "
  .. "with the event loop adding (--writer loop): %.1f%% (%.0f/s done)"):format(opt.write_rate, opt.write_connections,
  main.writer.rps, 100 * (1 - main.peak_w.rps / main.peak.rps), 100 * (1 - loop_writer.peak_w.rps / loop_writer.peak.rps),
  loop_writer.writer.rps))
print(("the largest body: p50 %.2f ms, p99 %.2f ms per request one at a time; %.0f req/s with 4 connections"):format(
  main.big.p50_ms, main.big.p99_ms, main.big4.rps))
print(("POST /documents: %.0f adds/s batched, %.0f a commit each (x%.2f); p99 %.1f vs %.1f ms"):format(main.adds.rps,
  unbatched.adds.rps, main.adds.rps / unbatched.adds.rps, main.adds.p99_ms, unbatched.adds.p99_ms))
if classic then
  print(("FFI / classic binding inside nginx: peak %.0f vs %.0f req/s (x%.3f), p50 %.3f vs %.3f ms (medians of %d rounds)")
    :format(classic.ffi.rps, classic.classic.rps, classic.ffi.rps / classic.classic.rps, classic.ffi.p50_ms,
      classic.classic.p50_ms, opt.rounds))
end
print(("with --max-df 1000: peak %.3f of bare nginx, p99 at 80%% %.3f ms, the largest body p50 %.2f ms"):format(
  cutoff.peak.rps / main.bare.rps, cutoff.at80.p99_ms, cutoff.big.p50_ms))
print(("answers that were not 2xx, or errors: %d"):format(bad))
if bad > 0 then os.exit(1) end
