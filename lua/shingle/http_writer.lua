--- The writer of `shingle serve` (shingle.http's POST /documents) in one of
-- nginx's worker threads (ngx.run_worker_thread): a batch of documents added
-- to the index with the C API (shingle_index_add: sketched, decided and
-- committed, fsync included) while the worker's event loop goes on serving
-- readers, which a write transaction would otherwise hold up for the whole
-- commit. The thread has a Lua state of its own (LuaJIT's, with its ffi); it
-- adds through the worker's index handle (one LMDB environment per process),
-- given as its address, and runs at a lower CPU priority than the readers
-- (nice + 10 for the thread alone), so that adding does not take their cores.
local ffi = require "ffi"
local sf = require "shingle.ffi"

local M = {}
local C = sf.C

ffi.cdef [[
int setpriority(int which, unsigned int who, int prio);
int getpriority(int which, unsigned int who);
long syscall(long number, ...);
]]

local niced = false
-- nice added to the thread's priority once (PRIO_PROCESS of its thread id: Linux's per-thread nice)
local function lower_priority(nice)
  if niced or not nice or nice <= 0 then return end
  niced = true
  if ffi.os ~= "Linux" or ffi.arch ~= "x64" then return end
  local tid = tonumber(ffi.C.syscall(186)) -- SYS_gettid on x86-64
  if not tid or tid <= 0 then return end
  ffi.C.setpriority(0, tid, math.min(19, ffi.C.getpriority(0, tid) + nice))
end

local errmsg = ffi.new("char *[1]")

--- add(address, sweep, docs, nice): docs = { { url, text, html (1, 0, -1) }, ... };
-- the thread's priority is lowered by nice the first time.
-- Returns { ids = {...}, statuses = {...} } (per document: its id, 0 when it
-- was not added, and the C API's status), or { error = message, code = status }.
function M.add(address, sweep, docs, nice)
  lower_priority(nice)
  local n = #docs
  local ix = ffi.cast("shingle_index *", address)
  local input = ffi.new("shingle_input[?]", n)
  local out = ffi.new("shingle_added[?]", n)
  local keep = {} -- the strings stay alive during the call
  for i, d in ipairs(docs) do
    local e = input[i - 1]
    keep[#keep + 1] = d.url
    keep[#keep + 1] = d.text
    e.url, e.url_len, e.text, e.len, e.html = d.url, #d.url, d.text, #d.text, d.html or -1
  end
  local rc = C.shingle_index_add(ix, sweep, nil, input, n, out, errmsg)
  if rc ~= 0 then
    return { error = errmsg[0] ~= nil and ffi.string(errmsg[0]) or ffi.string(C.shingle_strerror(rc)), code = rc }
  end
  local ids, statuses = {}, {}
  for i = 1, n do
    ids[i] = tonumber(out[i - 1].id)
    statuses[i] = tonumber(out[i - 1].status)
  end
  return { ids = ids, statuses = statuses, kept = #keep }
end

return M
