-- wrk script of bench/serve.sh (wrk from Debian runs it under LuaJIT):
--   wrk -t2 -c16 -d10s -s bench/serve_wrk.lua http://127.0.0.1:PORT -- LIST PATH [RATE] [URLS]
-- LIST: a file naming one body file per line; each request POSTs the next
-- body to PATH. RATE > 0: requests per second of each thread, paced (each
-- connection waits for the thread's next free slot), for a latency at a given
-- load; 0 or absent: as fast as the connections go.
-- URLS = "url": append &url=bench/<thread>/<n> (a fresh URL per request, for
-- POST /documents). done() prints one line of JSON with the figures.
local ffi = require "ffi"
ffi.cdef [[
  typedef struct { long tv_sec; long tv_nsec; } shingle_timespec;
  int clock_gettime(int clk, shingle_timespec *ts);
]]
local ts = ffi.new("shingle_timespec")
local function now_ms()
  ffi.C.clock_gettime(1, ts) -- CLOCK_MONOTONIC
  return tonumber(ts.tv_sec) * 1000 + tonumber(ts.tv_nsec) / 1e6
end

local nthreads = 0

function setup(thread)
  nthreads = nthreads + 1
  thread:set("id", nthreads)
end

local bodies, path, interval, urls, k, slot = {}, "/", 0, false, 0, 0

function init(args)
  local list = assert(args[1], "give the list of body files")
  path = args[2] or "/"
  local rate = tonumber(args[3] or "0") or 0
  urls = args[4] == "url"
  for line in io.lines(list) do
    local f = assert(io.open(line, "rb"))
    bodies[#bodies + 1] = f:read("*a")
    f:close()
  end
  assert(#bodies > 0, "no bodies in " .. list)
  if rate > 0 then interval = 1000 / rate end
  k = (tonumber(id) or 1) * 7919 % #bodies
  slot = now_ms()
end

function delay()
  if interval == 0 then return 0 end
  local now = now_ms()
  slot = math.max(slot + interval, now)
  return slot - now
end

function request()
  k = k % #bodies + 1
  local p = path
  if urls then
    p = p .. (p:find("?", 1, true) and "&" or "?") .. ("url=bench/%s/%d/%d"):format(tostring(id), math.floor(now_ms()), k)
  end
  return wrk.format("POST", p, { ["Content-Type"] = "text/plain" }, bodies[k])
end

function done(summary, latency, requests)
  local e = summary.errors
  io.write(('{"requests":%d,"seconds":%.3f,"rps":%.1f,"p50_ms":%.3f,"p90_ms":%.3f,"p99_ms":%.3f,"max_ms":%.3f,'
    .. '"non2xx":%d,"connect_errors":%d,"read_errors":%d,"write_errors":%d,"timeouts":%d}\n'):format(
    summary.requests, summary.duration / 1e6, summary.requests / (summary.duration / 1e6),
    latency:percentile(50) / 1000, latency:percentile(90) / 1000, latency:percentile(99) / 1000, latency.max / 1000,
    e.status, e.connect, e.read, e.write, e.timeout))
end
