--- shingle.http: the handlers of `shingle serve`, for nginx with the Lua
-- module (Debian's libnginx-mod-http-lua or OpenResty; LuaJIT 2.1). Mount
-- them in your own server (examples/nginx.conf):
--
--   lua_shared_dict shingle_stats 1m;             # optional: counters across workers
--   init_worker_by_lua_block {
--     require("shingle.http").init{ index = "/srv/crawl.idx", stats = "shingle_stats" }
--   }
--   location /dedup/ { content_by_lua_block { require("shingle.http").route{ prefix = "/dedup" } } }
--   location = /spam-check { content_by_lua_block { require("shingle.http").similar() } }
--
-- Each nginx worker opens the LMDB index once (init, in init_worker: an LMDB
-- environment must not cross a fork) and every request reads in its own read
-- transaction, so readers never wait for a writer. POST /documents queues the
-- document in its worker; a timer a few milliseconds later adds everything
-- queued in one write transaction (LMDB serializes the writers of all
-- workers). Answers and errors are JSON: { "error": message } with a status
-- that fits. The endpoints are described in docs/serve.md.
local cjson = require "cjson.safe"
local writer = require "shingle.writer"
local core = require "shingle.core"
local index = require "shingle.index"
local input = require "shingle.input"

local ngx = ngx -- luacheck: ignore
local M = {}

M.defaults = {
  index = nil,            -- the index directory (required)
  name = "default",       -- several indexes in one server: one name each, passed to the handlers
  readonly = false,       -- true: POST /documents answers 403 and the index is opened read-only
  max_body = 256 * 1024,  -- bytes: a larger body gets 413 before it is sketched
  sweep = nil,            -- sweep of POST /documents without ?sweep= (nil: the UTC date, YYYY-MM-DD)
  batch_delay = 0.002,    -- seconds a POST /documents waits for others to share its transaction
  batch_max = 256,        -- documents in one write transaction at most
  add_timeout = 30,       -- seconds a POST /documents waits for its transaction
  max_top = 1000,         -- the largest ?top= of /similar
  max_df = nil,           -- /similar's common-value cutoff without ?max_df= (nil: the index's own,
                          -- Index:query_max_df(), as `shingle similar`); 0: none
  max_members = 1000,     -- members listed per cluster in answers (the size is always given)
  stats = nil,            -- name of a lua_shared_dict for request counters across workers
  binding = nil,          -- "ffi": sketch and query /similar through shingle.ffi; "classic": the Lua
                          -- binding; nil: the FFI where LuaJIT's ffi is there and the index needs no Lua rules
  invalid = "index",      -- bodies that are not UTF-8: "index" reads them by the index's rule (its
                          -- invalid option: latin1 by default, or refused when it is "error"); "error" refuses them
  writer = nil,           -- "thread": POST /documents' batches are added in one of nginx's worker threads
                          -- (shingle.http_writer, at a lower priority), the event loop serving readers meanwhile;
                          -- "loop": in the event loop (which the commit holds up); nil: a thread where it can
  thread_pool = "shingle_writer", -- nginx's thread pool of the writer (`thread_pool shingle_writer threads=1;`
                          -- in nginx.conf's main context; without it, the event loop adds)
  writer_nice = 0,        -- the writer thread's nice, over the worker's (0: the same priority)
  filter = true,          -- keep the index's postings filter in each worker (Index:filter_start: ~1.6 bytes a
                          -- posting, built in a thread at start): /similar skips values no document has
  cache = 1024 * 1024 * 1024, -- with the filter, the postings cache when it fits in these bytes (at most ~13 a
                          -- posting; 0: none): /similar finds the documents of its values in memory
}

-- every option, those without a default included
local known = { index = true, name = true, readonly = true, max_body = true, sweep = true, batch_delay = true,
  batch_max = true, add_timeout = true, max_top = true, max_members = true, stats = true, invalid = true,
  binding = true, max_df = true, writer = true, thread_pool = true, writer_nice = true, filter = true, cache = true }

local services = {}
-- index path -> the postings filter and cache shingle.http.preload built in
-- nginx's master, which every worker forked from it shares
local preloaded = {}

local function check_conf(conf)
  if type(conf) ~= "table" then error("shingle.http.init expects a table of options", 3) end
  local c = {}
  for k, v in pairs(M.defaults) do c[k] = v end
  for k, v in pairs(conf) do
    if not known[k] then
      error(("shingle.http.init: unknown option '%s'"):format(tostring(k)), 3)
    end
    c[k] = v
  end
  if type(c.index) ~= "string" or c.index == "" then error("shingle.http.init: give the index directory as index = path", 3) end
  if type(c.cache) ~= "number" or c.cache < 0 or c.cache % 1 ~= 0 then
    error("shingle.http.init: cache must be a whole number of bytes >= 0", 3)
  end
  for _, k in ipairs({ "max_body", "batch_delay", "batch_max", "add_timeout", "max_top", "max_members" }) do
    if type(c[k]) ~= "number" or c[k] < 0 then error(("shingle.http.init: %s must be a number >= 0"):format(k), 3) end
  end
  if c.max_df ~= nil and (type(c.max_df) ~= "number" or c.max_df < 0 or c.max_df ~= math.floor(c.max_df)) then
    error("shingle.http.init: max_df must be a whole number >= 0", 3)
  end
  if c.binding ~= nil and c.binding ~= "ffi" and c.binding ~= "classic" then
    error("shingle.http.init: binding is \"ffi\" or \"classic\"", 3)
  end
  if c.writer ~= nil and c.writer ~= "thread" and c.writer ~= "loop" then
    error("shingle.http.init: writer is \"thread\" or \"loop\"", 3)
  end
  if c.invalid ~= "index" and c.invalid ~= "error" then error("shingle.http.init: invalid is \"index\" or \"error\"", 3) end
  return c
end

--- preload{ index = path, cache = bytes }: in init_by_lua* (nginx's master,
-- before it forks the workers). Builds the index's postings filter and cache
-- (as each worker's init would: Index:filter_start; a few seconds for a
-- million documents, during which the master waits) and keeps them for the
-- workers' init of the same index path, which use them instead of building
-- their own: the workers share one copy of the memory (copy-on-write; the
-- cache is never written again). true, or nil, err (logged; each worker
-- then builds its own).
function M.preload(conf)
  if type(conf) ~= "table" or type(conf.index) ~= "string" or conf.index == "" then
    error("shingle.http.preload: give the index directory as index = path", 2)
  end
  local cache = conf.cache == nil and M.defaults.cache or conf.cache
  if type(cache) ~= "number" or cache < 0 or cache % 1 ~= 0 then
    error("shingle.http.preload: cache must be a whole number of bytes >= 0", 2)
  end
  local function failed(err)
    if ngx then ngx.log(ngx.WARN, "shingle: no shared postings filter for ", conf.index, ": ", err) end
    return nil, err
  end
  local ix, err = index.open(conf.index, { readonly = true, create = false })
  if not ix then return failed(err) end
  if not ix.config then
    ix:close()
    return failed("the index is empty")
  end
  local ok, ferr = ix:filter_start{ cache = cache }
  local aids
  if ok then aids, ferr = ix:filter_take() end
  ix:close()
  if not aids then return failed(ferr) end
  preloaded[conf.index] = aids
  return true
end

--- init{ index = path, ... }: in init_worker_by_lua*. Opens the index for
-- this worker. A failure to open it is logged and answered with 503 by every
-- handler (`shingle serve` checks the index before it starts nginx).
function M.init(conf)
  local c = check_conf(conf)
  local svc = { conf = c, queue = {}, scheduled = false, started = ngx and ngx.now() or os.time(), counts = {} }
  local ix, err = index.open(c.index, { readonly = c.readonly, create = false })
  if ix and not ix.config then
    ix:close()
    ix, err = nil, c.index .. " is empty: add documents with `shingle index add` first"
  end
  if ix then
    local ok, e = pcall(ix.shinglers, ix)
    if not ok then ix:close(); ix, err = nil, tostring(e) end
  end
  if not ix then
    svc.error = err
    if ngx then ngx.log(ngx.ERR, "shingle: cannot serve ", c.index, ": ", err) end
  end
  svc.ix = ix
  if ix and c.filter then
    local ok, ferr
    if preloaded[c.index] and c.cache > 0 then
      ok, ferr = ix:filter_use(preloaded[c.index])
      if not ok and ngx then ngx.log(ngx.WARN, "shingle: cannot use the preloaded postings cache of ", c.index, ": ", ferr) end
    end
    if not ok then
      ok, ferr = ix:filter_start{ cache = c.cache }
      if not ok and ngx then ngx.log(ngx.WARN, "shingle: no postings filter for ", c.index, ": ", ferr) end
    end
  end
  if ix and c.binding ~= "classic" then
    local fast, ferr = M.fast_path(ix)
    if fast then svc.fast = fast
    elseif c.binding == "ffi" then error("shingle.http.init: binding = \"ffi\": " .. tostring(ferr), 2) end
  end
  -- the writer thread adds through this worker's index handle, given by its address
  if svc.fast and not c.readonly and c.writer ~= "loop" and ngx and ngx.run_worker_thread then
    local ffi = require "ffi"
    svc.writer = tonumber(ffi.cast("uintptr_t", svc.fast.ix.h))
  elseif c.writer == "thread" then
    error("shingle.http.init: writer = \"thread\" needs the FFI path (LuaJIT, an index without Lua rules), "
      .. "a writable index and ngx.run_worker_thread (lua-nginx-module 0.10.21 or later)", 2)
  end
  if c.stats and ngx then
    svc.dict = ngx.shared[c.stats]
    if not svc.dict then error(("shingle.http.init: no lua_shared_dict named '%s'"):format(c.stats), 2) end
  end
  services[c.name] = svc
  return svc
end

--- The FFI path of /similar for ix (shingle.ffi over the same LMDB
-- environment): its shinglers, index handle and a sketch reused by every
-- request of the worker; nil, why not (no LuaJIT ffi, or an index whose
-- rule set or extractor runs in Lua).
function M.fast_path(ix)
  local ok, sf = pcall(require, "shingle.ffi")
  if not ok then return nil, tostring(sf) end
  local c = ix.config
  if c.canon or c.extractor then return nil, "the index's rule set or extractor runs in Lua" end
  -- the index's own shinglers, made by the C API from its stored configuration
  local fx = sf.index(ix)
  local text, err = fx:shingler(false)
  if not text then return nil, err end
  local html, herr = fx:shingler(true)
  if not html then return nil, herr end
  local sk, serr = sf.sketch()
  if not sk then return nil, serr end
  return { text = text, html = html, ix = fx, sk = sk }
end

-- ---- answers ---------------------------------------------------------------

--- Mark t as a JSON array (an empty table is one anyway; writer.object marks an empty object).
M.array = writer.array

--- JSON as every output of shingle writes it (shingle.writer: the answers
-- equal the command line's --json output), keys sorted.
function M.encode(v)
  return writer.json(v)
end

-- "endpoint status" keys, made once
local count_keys = setmetatable({}, { __index = function(t, endpoint)
  local by = setmetatable({}, { __index = function(u, status)
    local k = endpoint .. " " .. status
    u[status] = k
    return k
  end })
  t[endpoint] = by
  return by
end })

local function count(svc, endpoint, status)
  local key = count_keys[endpoint][status]
  svc.counts[key] = (svc.counts[key] or 0) + 1
  if svc.dict then svc.dict:incr(key, 1, 0) end
end

local function tally(svc, key, n)
  svc.counts[key] = (svc.counts[key] or 0) + n
  if svc.dict then svc.dict:incr(key, n, 0) end
end

local function tallied(svc, key)
  if svc.dict then return svc.dict:get(key) or 0 end
  return svc.counts[key] or 0
end

local Abort = {} -- raised by fail() to end a handler with its answer sent

local function send(svc, endpoint, status, body, headers)
  ngx.status = status
  ngx.header["Content-Type"] = "application/json"
  if headers then
    for k, v in pairs(headers) do ngx.header[k] = v end
  end
  ngx.print(type(body) == "string" and body or M.encode(body), "\n")
  if svc then count(svc, endpoint, status) end
end

local function fail(status, msg, headers)
  error({ Abort, status = status, msg = msg, headers = headers }, 0)
end

-- ---- requests --------------------------------------------------------------

local function truthy(name, v)
  if v == true or v == "1" or v == "true" or v == "yes" or v == "" then return true end
  if v == "0" or v == "false" or v == "no" then return false end
  fail(400, ("parameter '%s' is %s; use true or false"):format(name, tostring(v)))
end

local function number_in(lo, hi, whole)
  return function(name, v)
    local x = tonumber(v)
    if not x or x ~= x or x < lo or x > hi or (whole and x ~= math.floor(x)) then
      fail(400, ("parameter '%s' is %s; use a %s from %s to %s"):format(name, tostring(v),
        whole and "whole number" or "number", tostring(lo), tostring(hi)))
    end
    return x
  end
end

local function one_of(...)
  local set, list = {}, { ... }
  for _, v in ipairs(list) do set[v] = true end
  return function(name, v)
    if not set[v] then fail(400, ("parameter '%s' is %s; use one of %s"):format(name, tostring(v), table.concat(list, ", "))) end
    return v
  end
end

local function text(maxlen)
  return function(name, v)
    if type(v) ~= "string" or v == "" then fail(400, ("parameter '%s' needs a value"):format(name)) end
    if #v > maxlen then fail(400, ("parameter '%s' is longer than %d bytes"):format(name, maxlen)) end
    return v
  end
end

-- a spec's parameter names, sorted, and its required ones, made once per spec table
local spec_info = setmetatable({}, { __mode = "k", __index = function(t, spec)
  local names, required = {}, {}
  for k in pairs(spec) do names[#names + 1] = k end
  table.sort(names)
  for _, k in ipairs(names) do
    if spec[k][2] then required[#required + 1] = k end
  end
  local info = { names = names, required = required }
  t[spec] = info
  return info
end })

-- The query parameters of a request, checked against spec: { name = { check, required } }.
-- A request without any runs no loop (a loop would end the handler's compiled trace).
local function params(endpoint, spec)
  local info = spec_info[spec]
  local out = {}
  local q = ngx.var.args
  if q and q ~= "" then
    local args, err = ngx.req.get_uri_args(100)
    if err == "truncated" then fail(400, "too many query parameters") end
    for k, v in pairs(args) do
      if not spec[k] then
        fail(400, ("unknown parameter '%s' for %s; it takes %s"):format(tostring(k), endpoint,
          #info.names > 0 and table.concat(info.names, ", ") or "none"))
      end
      if type(v) == "table" then fail(400, ("parameter '%s' is given %d times; give it once"):format(k, #v)) end
      out[k] = spec[k][1](k, v)
    end
  end
  local required = info.required
  if #required > 0 then
    for _, k in ipairs(required) do
      if out[k] == nil then fail(400, ("%s needs the parameter '%s'"):format(endpoint, k)) end
    end
  end
  return out
end

local function method(endpoint, want)
  local m = ngx.req.get_method()
  if m ~= want then
    fail(405, ("%s takes %s, not %s"):format(endpoint, want, m), { Allow = want })
  end
end

-- The request body, refused (413) when larger than the limit: nginx's
-- client_max_body_size refuses it before it is read when the client sends a
-- Content-Length; this check holds wherever the handlers are mounted.
local function body(svc)
  local limit = svc.conf.max_body
  local declared = tonumber(ngx.var.http_content_length)
  if declared and declared > limit then
    fail(413, ("the body has %d bytes; this server takes at most %d (max_body)"):format(declared, limit))
  end
  ngx.req.read_body()
  local data = ngx.req.get_body_data()
  if not data then
    local file = ngx.req.get_body_file() -- a body larger than client_body_buffer_size
    if file then
      local f = io.open(file, "rb")
      if f then data = f:read(limit + 1); f:close() end
    end
  end
  if not data or data == "" then fail(400, "the body is empty: send the document as the request body") end
  if #data > limit then fail(413, ("the body has more than %d bytes, the most this server takes (max_body)"):format(limit)) end
  return data
end

-- A document body: refused when it is not UTF-8 and the server says so.
local function document(svc)
  local data = body(svc)
  if svc.conf.invalid == "error" then
    local ok, msg = core.utf8_check(data)
    if not ok then fail(400, ("the body is not UTF-8 (%s): this server takes UTF-8 text only"):format(msg)) end
  end
  return data
end

local function html_of(p, data)
  if p.html ~= nil then return p.html end
  local ct = ngx.var.content_type
  if ct and ct:lower():find("text/html", 1, true) then return true end
  return input.is_html(nil, data)
end

local function service(name)
  local svc = services[name or "default"]
  if not svc then
    fail(500, ("shingle.http: no index named '%s' was opened: call shingle.http.init{ name = ..., index = ... } in init_worker_by_lua")
      :format(tostring(name or "default")))
  end
  return svc
end

local function usable(svc)
  if not svc.ix then fail(503, "the index cannot be used: " .. tostring(svc.error)) end
  return svc.ix
end

-- Run handler f for endpoint: its answer, or the JSON error it failed with;
-- an unexpected Lua error is logged and answered with 500.
local function caught(e)
  if type(e) == "table" and e[1] == Abort then return e end
  return { msg = tostring(e), trace = debug.traceback() }
end

local function run(endpoint, name, f)
  local svc = service(name)
  local status, answer, headers = f(svc)
  send(svc, endpoint, status, answer, headers)
end

local function handle(endpoint, name, f)
  local ok, err = xpcall(run, caught, endpoint, name, f) -- no closure per request
  if ok then return end
  local svc = services[name or "default"]
  if err.status then
    send(svc, endpoint, err.status, { error = err.msg }, err.headers)
  else
    ngx.log(ngx.ERR, "shingle: ", endpoint, ": ", err.msg, "\n", err.trace)
    send(svc, endpoint, 500, { error = "internal error: " .. err.msg })
  end
end

-- ---- the endpoints -----------------------------------------------------------

local function threshold() return number_in(0, 1) end

-- /similar through shingle.ffi: the body sketched into the worker's reused
-- sketch, looked up with the C API; the same hits as Index:similar.
local function fast_similar(fast, data, opts)
  local sk, err = (opts.html and fast.html or fast.text):sketch(data, fast.sk)
  if not sk then return nil, err end
  if #sk == 0 then
    return nil, "the document has no shingles to look up (it is empty, or shorter than the sketch samples): nothing to compare"
  end
  return fast.ix:similar(sk, opts)
end

-- the handler of /similar, made once (a closure per request would keep LuaJIT from compiling the path)
local function similar(svc)
  method("/similar", "POST")
  svc.similar_params = svc.similar_params or { threshold = { threshold() },
    top = { number_in(1, svc.conf.max_top, true) }, policy = { one_of("resemblance", "containment", "either", "both") },
    containment = { truthy }, html = { truthy }, max_df = { number_in(0, 4294967295, true) } }
  local p = params("/similar", svc.similar_params)
  local ix = usable(svc)
  local data = document(svc)
  local opts = { threshold = p.threshold or 0.5, top = p.top or 10, policy = p.policy, containment = p.containment,
    html = html_of(p, data), max_df = p.max_df or svc.conf.max_df or ix:query_max_df(),
    docs = true }
  local hits, err
  local fast = svc.fast
  if fast then
    -- one snapshot for the lookups and the hits' documents, pinned through
    -- the FFI (Index:read's varargs and the binding's C functions would keep
    -- LuaJIT from compiling the handler)
    local ok, e = fast.ix:read_begin()
    if not ok then fail(503, e) end
    ok, hits, err = pcall(fast_similar, fast, data, opts)
    fast.ix:read_end()
    if not ok then error(hits, 0) end
  else hits, err = ix:read(ix.similar, ix, data, opts) end
  if not hits then fail(400, err) end
  -- the hot path: the hits are flat objects, cjson writes them (an empty list as [])
  if #hits == 0 then return 200, '{"hits":[]}' end
  return 200, '{"hits":' .. cjson.encode(hits) .. "}"
end

--- POST /similar?threshold=&top=&policy=&containment=&html=&max_df=  body: a document.
function M.similar(name)
  handle("/similar", name, similar)
end

local function today()
  return os.date("!%Y-%m-%d")
end

-- One sweep's batch added in the event loop (Index:add_documents).
local function looped_add(svc, g)
  local docs = {}
  for i, item in ipairs(g) do docs[i] = { url = item.url, text = item.text, html = item.html } end
  local ok, res, st = pcall(svc.ix.add_documents, svc.ix, docs, { sweep = g[1].sweep, threads = 1 })
  if ok and res then
    tally(svc, "writes transactions", 1)
    tally(svc, "writes documents", st.added)
  end
  for i, item in ipairs(g) do
    if not ok then item.status, item.error = 500, tostring(res)
    elseif not res then item.status, item.error = 503, tostring(st)
    elseif res[i].error then item.status, item.error = 400, res[i].error
    else item.id = res[i].id end
    item.sema:post(1)
  end
  if not ok then ngx.log(ngx.ERR, "shingle: adding documents: ", tostring(res)) end
end

-- The statuses of shingle.h a document of a batch can get
local SHINGLE_EUTF8, SHINGLE_EMISMATCH, SHINGLE_ELIMIT = 3, 5, 10

-- One sweep's batch added by the C API in one of nginx's worker threads
-- (shingle.http_writer): the event loop serves readers meanwhile, and the
-- thread runs at a lower priority. The answers as Index:add_documents gives them.
local function threaded_add(svc, g)
  local docs = {}
  for i, item in ipairs(g) do docs[i] = { url = item.url, text = item.text, html = item.html and 1 or 0 } end
  local sweep = g[1].sweep
  local ok, res = ngx.run_worker_thread(svc.conf.thread_pool, "shingle.http_writer", "add", svc.writer, sweep, docs,
    svc.conf.writer_nice)
  if not ok and tostring(res):find("thread pool .* not found") and svc.conf.writer ~= "thread" then
    -- nginx.conf has no such thread_pool: add in the event loop from now on
    ngx.log(ngx.WARN, "shingle: ", tostring(res), ": POST /documents adds in the event loop (declare `thread_pool ",
      svc.conf.thread_pool, " threads=1;` in nginx.conf's main context for a writer thread)")
    svc.writer = nil
    return looped_add(svc, g)
  end
  if ok and not res.error then
    tally(svc, "writes transactions", 1)
    local added = 0
    for i = 1, #g do if res.statuses[i] == 0 then added = added + 1 end end
    tally(svc, "writes documents", added)
  end
  for i, item in ipairs(g) do
    if not ok then item.status, item.error = 500, tostring(res)
    elseif res.error then item.status, item.error = 503, res.error
    elseif res.statuses[i] == 0 then item.id = res.ids[i]
    elseif res.statuses[i] == SHINGLE_EMISMATCH then
      item.status, item.error = 400, ("%s is already in sweep %s with other content; a sweep holds "
        .. "one version of a URL: add it to another sweep"):format(item.url, sweep)
    elseif res.statuses[i] == SHINGLE_EUTF8 then
      item.status, item.error = 400, "the body is not UTF-8, and the index was made to refuse such documents"
    elseif res.statuses[i] == SHINGLE_ELIMIT then
      item.status, item.error = 400, "the document is beyond the index's limits (too many shingles)"
    else
      item.status, item.error = 400, "the document could not be added (status " .. tostring(res.statuses[i]) .. ")"
    end
    item.sema:post(1)
  end
  if not ok then ngx.log(ngx.ERR, "shingle: adding documents in a worker thread: ", tostring(res)) end
end

-- Add what is queued: one transaction per sweep, in the order of arrival, at
-- most batch_max documents each.
local function add_queued(svc)
  local queue = svc.queue
  svc.queue = {}
  local groups, order = {}, {}
  for _, item in ipairs(queue) do
    local g = groups[item.sweep]
    if not g or #g >= svc.conf.batch_max then
      g = {}
      groups[item.sweep] = g
      order[#order + 1] = g
    end
    g[#g + 1] = item
  end
  for _, g in ipairs(order) do
    if svc.writer then threaded_add(svc, g) else looped_add(svc, g) end
  end
end

-- One add in flight per worker: documents posted while the writer thread
-- commits wait for it and go together in the next transaction (the batch
-- grows with the load, and the commits, each an fsync, do not).
local function flush(premature, svc)
  svc.scheduled = false
  if svc.writing then return end
  svc.writing = true
  local ok, err = true, nil
  while ok and #svc.queue > 0 do ok, err = pcall(add_queued, svc) end
  svc.writing = false
  if not ok then ngx.log(ngx.ERR, "shingle: adding documents: ", tostring(err)) end
  if premature then return end
end

-- the handler of POST /documents, made once (a closure per request would
-- keep LuaJIT from compiling it)
local semaphore
local function documents(svc)
  method("/documents", "POST")
  svc.documents_params = svc.documents_params or { url = { text(8000), true }, sweep = { text(255) }, html = { truthy } }
  local p = params("/documents", svc.documents_params)
  local ix = usable(svc)
  if svc.conf.readonly then fail(403, "this server serves the index read-only: start it without --read-only to add documents") end
  local data = document(svc)
  semaphore = semaphore or require("ngx.semaphore")
  local item = { url = p.url, text = data, html = html_of(p, data), sweep = p.sweep or svc.conf.sweep or today(),
    sema = semaphore.new() }
  local q = svc.queue
  q[#q + 1] = item
  if #q >= svc.conf.batch_max then
    flush(false, svc)
  elseif not svc.scheduled then
    local ok = ngx.timer.at(svc.conf.batch_delay, flush, svc)
    if ok then svc.scheduled = true else flush(false, svc) end
  end
  if not item.id and not item.error then
    local ok, err = item.sema:wait(svc.conf.add_timeout)
    if not ok then fail(503, "the write transaction did not finish in time (" .. tostring(err) .. "); the document may still be added") end
  end
  if item.error then fail(item.status, item.error) end
  local c = ix:read(ix.document_cluster, ix, item.id, svc.conf.max_members)
  c.id, c.url, c.sweep = item.id, item.url, item.sweep
  c.members = M.array(c.members)
  return 201, c
end

--- POST /documents?url=&sweep=&html=  body: the document. Adds it to the index
-- (incremental clustering, as `shingle index add`) and answers with its cluster.
function M.documents(name)
  handle("/documents", name, documents)
end

local function known_url(ix, url)
  if not ix:has_url(url) then fail(404, ("%s is not in the index"):format(url)) end
end

--- GET /cluster?url=: the clusters of the stored versions of url (as `shingle cluster-of --json`).
function M.cluster(name)
  handle("/cluster", name, function(svc)
    method("/cluster", "GET")
    local p = params("/cluster", { url = { text(8000), true } })
    local ix = usable(svc)
    local cl, err = ix:read(function()
      known_url(ix, p.url)
      return ix:cluster_of(p.url)
    end)
    if not cl then fail(500, err) end
    for _, c in ipairs(cl) do M.array(c.members) end
    return 200, { url = p.url, clusters = M.array(cl) }
  end)
end

--- GET /lost?url=: where the content of a gone or changed URL lives now (as `shingle lost --json`).
function M.lost(name)
  handle("/lost", name, function(svc)
    method("/lost", "GET")
    local p = params("/lost", { url = { text(8000), true } })
    local ix = usable(svc)
    local found, err = ix:read(function()
      known_url(ix, p.url)
      return ix:lost(p.url)
    end)
    if not found then fail(500, err) end
    return 200, { url = p.url, found = M.array(found) }
  end)
end

--- GET /changes?from=&to=&small=: how pages changed between two sweeps (as `shingle changes --json`).
function M.changes(name)
  handle("/changes", name, function(svc)
    method("/changes", "GET")
    local p = params("/changes", { from = { text(255), true }, to = { text(255), true }, small = { threshold() } })
    local ix = usable(svc)
    local r, err = ix:read(function()
      local known = {}
      for _, sw in ipairs(ix:sweeps()) do known[sw.name] = true end
      for _, k in ipairs({ "from", "to" }) do
        if not known[p[k]] then fail(404, ("the index has no sweep named '%s'"):format(p[k])) end
      end
      return ix:changes(p.from, p.to, { small = p.small })
    end)
    if not r then fail(500, err) end
    M.array(r.moves)
    M.array(r.changed)
    return 200, r
  end)
end

--- POST /explain?w=  body: { "a": text, "b": text }: resemblance, containment
-- and shared passages of two documents (as `shingle explain --json`).
function M.explain(name)
  handle("/explain", name, function(svc)
    method("/explain", "POST")
    local p = params("/explain", { w = { number_in(1, 1024, true) } })
    local data = body(svc)
    local doc, err = cjson.decode(data)
    if type(doc) ~= "table" then
      fail(400, "the body must be a JSON object { \"a\": text, \"b\": text }" .. (err and (": " .. err) or ""))
    end
    for k in pairs(doc) do
      if k ~= "a" and k ~= "b" then fail(400, ("unknown field '%s' in the body; it takes a and b"):format(tostring(k))) end
    end
    if type(doc.a) ~= "string" or type(doc.b) ~= "string" then
      fail(400, "the body must be a JSON object with two strings, { \"a\": text, \"b\": text }")
    end
    -- the command line's shingler (shingle.pipeline's defaults), as `shingle explain` uses
    local o = require("shingle.sketcher").options(require("shingle.pipeline").defaults)
    o.w = p.w or o.w
    local e, xerr = require("shingle.explain").explain(doc.a, doc.b, o)
    if not e then fail(400, xerr) end
    M.array(e.passages)
    return 200, e
  end)
end

--- GET /health: 200 { status = "ok", documents } when the index can be read, else 503.
function M.health(name)
  handle("/health", name, function(svc)
    method("/health", "GET")
    params("/health", {})
    if not svc.ix then return 503, { status = "unavailable", error = tostring(svc.error) } end
    local ok, n = pcall(svc.ix.count, svc.ix)
    if not ok then return 503, { status = "unavailable", error = tostring(n) } end
    return 200, { status = "ok", documents = n }
  end)
end

local function counters(svc)
  local out = {}
  local function add(key, n)
    local endpoint, status = key:match("^(%S+) (%d+)$")
    if endpoint then
      local e = out[endpoint] or { total = 0, statuses = {} }
      out[endpoint] = e
      e.total = e.total + n
      e.statuses[status] = (e.statuses[status] or 0) + n
    end
  end
  if svc.dict then
    for _, k in ipairs(svc.dict:get_keys(0)) do add(k, svc.dict:get(k) or 0) end
  else
    for k, n in pairs(svc.counts) do add(k, n) end
  end
  local total = 0
  for _, e in pairs(out) do total = total + e.total end
  return out, total
end

--- GET /stats: the index (documents, sweeps, parameters) and the requests served.
function M.stats(name)
  handle("/stats", name, function(svc)
    method("/stats", "GET")
    params("/stats", {})
    local ix = usable(svc)
    local by, total = counters(svc)
    local size
    local lfs_ok, lfs = pcall(require, "lfs")
    if lfs_ok then size = lfs.attributes(svc.conf.index .. "/data.mdb", "size") end
    local n, sweeps = ix:read(function() return ix:count(), ix:sweeps() end)
    return 200, {
      index = { path = svc.conf.index, documents = n, sweeps = M.array(sweeps), parameters = ix.config,
        bytes = size, readonly = svc.conf.readonly },
      requests = { total = total, endpoints = writer.object(by), scope = svc.dict and "all workers" or "this worker" },
      writes = { transactions = tallied(svc, "writes transactions"), documents = tallied(svc, "writes documents") },
      limits = { max_body = svc.conf.max_body, max_top = svc.conf.max_top, batch_delay = svc.conf.batch_delay,
        batch_max = svc.conf.batch_max, max_df = svc.conf.max_df or (svc.ix and svc.ix:query_max_df()) },
      worker = { id = ngx.worker.id(), count = ngx.worker.count(), pid = ngx.worker.pid(),
        uptime = ngx.now() - svc.started, binding = svc.fast and "ffi" or "classic",
        writer = svc.writer and "thread" or "loop", filter = ix:filter() },
    }
  end)
end

M.endpoints = {
  ["/similar"] = M.similar, ["/documents"] = M.documents, ["/cluster"] = M.cluster, ["/lost"] = M.lost,
  ["/changes"] = M.changes, ["/explain"] = M.explain, ["/health"] = M.health, ["/stats"] = M.stats,
}

-- route's 404, a function of its own: route itself must make no closure over
-- its locals (that would keep LuaJIT from compiling every request's path)
local function no_endpoint(uri, name, prefix)
  handle(uri, name, function()
    local names = {}
    for k in pairs(M.endpoints) do names[#names + 1] = prefix .. k end
    table.sort(names)
    fail(404, ("no endpoint %s; this server has %s"):format(ngx.var.uri, table.concat(names, ", ")))
  end)
end

--- route{ name =, prefix = }: every endpoint under one location; the path
-- after prefix picks the handler; anything else gets 404.
function M.route(opts)
  opts = opts or {}
  local uri = ngx.var.uri
  local prefix = opts.prefix or ""
  if prefix ~= "" and uri:sub(1, #prefix) == prefix then uri = uri:sub(#prefix + 1) end
  local h = M.endpoints[uri]
  if h then return h(opts.name) end
  no_endpoint(uri, opts.name, prefix)
end

local reasons = {
  [400] = "bad request", [404] = "not found", [405] = "method not allowed", [408] = "the request took too long to arrive",
  [411] = "a body needs a Content-Length", [414] = "the URL is too long", [494] = "request headers too large",
  [500] = "internal error", [502] = "bad gateway", [503] = "unavailable", [504] = "gateway timeout",
}

--- For nginx's own errors (error_page ... @shingle_error): the same JSON
-- answer as the handlers give, e.g. 413 for a body over client_max_body_size.
function M.error_page(opts)
  opts = opts or {}
  local status = ngx.status
  local svc = services[opts.name or "default"]
  local msg
  if status == 413 then
    msg = ("the body is larger than this server takes (%s bytes, max_body)"):format(svc and tostring(svc.conf.max_body) or "client_max_body_size")
  else
    msg = reasons[status] or ("HTTP " .. tostring(status))
  end
  send(svc, "error", status, { error = msg })
end

return M
