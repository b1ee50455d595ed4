--- shingle.ffi: the C API (core/include/shingle.h) through LuaJIT's FFI,
-- the lua-resty-core way: plain C entry points (buffer, length, out buffer,
-- char **errmsg) declared with ffi.cdef, buffers reused for the life of the
-- Lua state (one nginx worker), nil, err on failure, and no Lua userdata or
-- table made per call beyond the answer.
--
--   local sf = require "shingle.ffi"                 -- LuaJIT only
--   local sh = assert(sf.shingler{ w = 10, sketch = "mod", m = 25 })
--   local sk = assert(sh:sketch(text))               -- or sh:sketch(text, sk) to reuse sk
--   sk:serialize()  sk:estimate(other)  #sk
--   local fx = sf.index(ix)                          -- over a shingle.index (or core.Index) handle
--   fx:similar(sk, { threshold = 0.5, top = 10 })    -- hits with url, sweep and cluster
--
-- The library is the C module of the classic binding (shingle/core.so, which
-- exports the same API) when it is on package.cpath, else libshingle: so in
-- an nginx worker the FFI and the binding share one copy of the engine and
-- one LMDB environment per index (an environment must be opened once per
-- process).
local ok, ffi = pcall(require, "ffi")
if not ok then
  error("shingle.ffi needs LuaJIT's ffi (nginx's Lua, or luajit); use the classic binding (require \"shingle\") elsewhere", 2)
end

ffi.cdef [[
typedef struct shingle_shingler shingle_shingler;
typedef struct shingle_sketch shingle_sketch;
typedef struct shingle_index shingle_index;
typedef struct shingle_estimate { double resemblance, containment, contained; size_t both, sample; } shingle_estimate;
typedef struct shingle_hit { uint32_t id, shared; double resemblance, containment, contained; } shingle_hit;
typedef struct shingle_document { uint32_t id, cluster; uint64_t shingles, tokens; int relation; size_t url_len, sweep_len; } shingle_document;
int shingle_version_number(void);
const char *shingle_version(void);
const char *shingle_strerror(int code);
int shingle_utf8_check(const char *buf, size_t len, size_t *bad, char **errmsg);
int shingle_shingler_new(const char *options, shingle_shingler **out, char **errmsg);
void shingle_shingler_free(shingle_shingler *sh);
int shingle_sketch_new(shingle_sketch **out, char **errmsg);
void shingle_sketch_free(shingle_sketch *sk);
int shingle_sketch_text(shingle_shingler *sh, const char *buf, size_t len, shingle_sketch *sk, char **errmsg);
size_t shingle_sketch_size(const shingle_sketch *sk);
const uint64_t *shingle_sketch_values(const shingle_sketch *sk);
uint64_t shingle_sketch_shingles(const shingle_sketch *sk);
uint64_t shingle_sketch_tokens(const shingle_sketch *sk);
size_t shingle_sketch_serialized_size(const shingle_sketch *sk);
int shingle_sketch_serialize(const shingle_sketch *sk, unsigned char *out, size_t cap, size_t *len, char **errmsg);
int shingle_sketch_load(const unsigned char *buf, size_t len, shingle_sketch *sk, char **errmsg);
int shingle_estimate_sketches(const shingle_sketch *a, const shingle_sketch *b, shingle_estimate *out, char **errmsg);
int shingle_index_open(const char *path, int flags, shingle_index **out, char **errmsg);
void shingle_index_close(shingle_index *ix);
int shingle_index_count(shingle_index *ix, uint32_t *n, char **errmsg);
int shingle_index_read_begin(shingle_index *ix, char **errmsg);
void shingle_index_read_end(shingle_index *ix);
int shingle_index_filter_start(shingle_index *ix, char **errmsg);
int shingle_index_cache_start(shingle_index *ix, size_t max_bytes, char **errmsg);
int shingle_index_similar(shingle_index *ix, const shingle_sketch *q, double threshold, int policy, int by_containment,
                          uint32_t top, uint32_t max_df, shingle_hit *hits, size_t cap, size_t *n, char **errmsg);
int shingle_index_document(shingle_index *ix, uint32_t id, shingle_document *doc, char *url, size_t url_cap,
                           char *sweep, size_t sweep_cap, char **errmsg);
int shingle_index_url_docs(shingle_index *ix, const char *url, size_t len, uint32_t *ids, size_t cap, size_t *n, char **errmsg);
int shingle_index_cluster_docs(shingle_index *ix, uint32_t cluster, uint32_t *ids, size_t cap, size_t *n, char **errmsg);
int shingle_index_shingler(shingle_index *ix, int html, shingle_shingler **out, char **errmsg);
typedef struct shingle_input { const char *url; size_t url_len; const char *text; size_t len; int html; } shingle_input;
typedef struct shingle_added { uint32_t id; int status; } shingle_added;
int shingle_index_add(shingle_index *ix, const char *sweep, const char *options, const shingle_input *docs, size_t n,
                      shingle_added *out, char **errmsg);
]]

local M = {}

local function library(path)
  if path then return ffi.load(path) end
  local so = package.searchpath("shingle.core", package.cpath)
  if so then return ffi.load(so) end
  return ffi.load("shingle")
end

local C = library(os.getenv("SHINGLE_FFI_LIB"))
M.C = C
M.version = ffi.string(C.shingle_version())

-- scratch of this Lua state, reused by every call
local errmsg = ffi.new("char *[1]")
local size_out = ffi.new("size_t[1]")
local u32_out = ffi.new("uint32_t[1]")
local est = ffi.new("shingle_estimate")
local doc = ffi.new("shingle_document")
local ser_cap, ser_buf = 0, nil
local hits_cap, hits_buf = 0, nil
local url_cap, url_buf = 8192, ffi.new("char[8192]")
local sweep_buf = ffi.new("char[256]")

local function err(code)
  local msg = errmsg[0] ~= nil and ffi.string(errmsg[0]) or ffi.string(C.shingle_strerror(code))
  return nil, msg, code
end

-- ---- shinglers and sketches ----------------------------------------------------

-- A sketch is the C handle itself (a cdata pointer with methods and #sk:
-- LuaJIT honours __len on cdata, not on tables).
local Sketch = {}
ffi.metatype("shingle_sketch", { __index = Sketch, __len = function(self) return tonumber(C.shingle_sketch_size(self)) end })

local sketch_out = ffi.new("shingle_sketch *[1]")
local function new_sketch()
  local rc = C.shingle_sketch_new(sketch_out, errmsg)
  if rc ~= 0 then return err(rc) end
  return ffi.gc(sketch_out[0], C.shingle_sketch_free)
end
M.sketch = new_sketch

--- The serialized sketch (the same bytes as the classic binding's sketch:serialize()).
function Sketch:serialize()
  local need = tonumber(C.shingle_sketch_serialized_size(self))
  if need == 0 then return nil, "the sketch is empty" end
  if need > ser_cap then
    ser_cap = math.max(need, 2 * ser_cap)
    ser_buf = ffi.new("unsigned char[?]", ser_cap)
  end
  local rc = C.shingle_sketch_serialize(self, ser_buf, ser_cap, size_out, errmsg)
  if rc ~= 0 then return err(rc) end
  return ffi.string(ser_buf, size_out[0])
end

function Sketch:shingles() return tonumber(C.shingle_sketch_shingles(self)) end
function Sketch:tokens() return tonumber(C.shingle_sketch_tokens(self)) end

--- The i-th value (1-based) as a uint64_t cdata.
function Sketch:value(i)
  if i < 1 or i > #self then return nil end
  return C.shingle_sketch_values(self)[i - 1]
end

--- { resemblance, containment, contained, both, sample } as the classic sketch:estimate(other) gives.
function Sketch:estimate(other)
  local rc = C.shingle_estimate_sketches(self, other, est, errmsg)
  if rc ~= 0 then return err(rc) end
  return { resemblance = est.resemblance, containment = est.containment, contained = est.contained,
    both = tonumber(est.both), sample = tonumber(est.sample) }
end

function Sketch:resemblance(other)
  local rc = C.shingle_estimate_sketches(self, other, est, errmsg)
  if rc ~= 0 then return err(rc) end
  return est.resemblance
end

--- Load a serialized sketch (into sk when given).
function M.load(s, sk)
  sk = sk or assert(new_sketch())
  local rc = C.shingle_sketch_load(s, #s, sk, errmsg)
  if rc ~= 0 then return err(rc) end
  return sk
end

local Shingler = {}
local shingler_mt = { __index = Shingler }

local keys = { "w", "k", "seed", "poly", "idpoly", "sketch", "s", "m", "floor", "option", "tokens", "html", "lowercase",
  "numbers", "punctuation", "fold", "invalid" }
local known = {}
for _, k in ipairs(keys) do known[k] = true end

-- shingle.new's defaults (shingle.options, the one home of them): every
-- option the table leaves out is passed with the Lua default, so an FFI
-- shingler and a classic one made from the same table always agree
-- (without the classic binding installed, the C API's own defaults, the same values)
local have_options, options = pcall(require, "shingle.options")
local defaults = have_options and options.defaults or {}

--- The options string of the C API for a table of shingle.new's options.
function M.options(t)
  local parts = {}
  for k in pairs(t) do
    if not known[k] then error(("shingle.ffi: unknown option '%s' (rule sets and extractors need the classic binding)"):format(tostring(k)), 3) end
  end
  for _, k in ipairs(keys) do
    local v = t[k]
    if v == nil then v = defaults[k] end
    if v ~= nil then
      if type(v) == "boolean" then v = v and "1" or "0"
      elseif type(v) == "number" then v = ("%.0f"):format(v)
      elseif type(v) == "cdata" then v = tostring(v):gsub("U?LL$", "") end
      parts[#parts + 1] = k .. "=" .. tostring(v)
    end
  end
  return table.concat(parts, " ")
end

--- shingler(options): a C shingler from a table of shingle.new's options (or
-- the C API's options string); nil, err for a bad option.
function M.shingler(opts)
  local s = type(opts) == "string" and opts or M.options(opts or {})
  local p = ffi.new("shingle_shingler *[1]")
  local rc = C.shingle_shingler_new(s, p, errmsg)
  if rc ~= 0 then return err(rc) end
  return setmetatable({ h = ffi.gc(p[0], C.shingle_shingler_free), options = s }, shingler_mt)
end

--- sh:sketch(text [, sk]): the sketch of text, into sk (reused) or a new one;
-- nil, err for text the shingler refuses (invalid UTF-8 with invalid = "error").
function Shingler:sketch(text, sk)
  if not sk then
    local e
    sk, e = new_sketch()
    if not sk then return nil, e end
  end
  local rc = C.shingle_sketch_text(self.h, text, #text, sk, errmsg)
  if rc ~= 0 then return err(rc) end
  return sk
end

--- Whether s is UTF-8: true, or nil, message, 1-based offset of the first bad byte.
function M.utf8_check(s)
  local rc = C.shingle_utf8_check(s, #s, size_out, errmsg)
  if rc == 0 then return true end
  local _, msg = err(rc)
  return nil, msg, tonumber(size_out[0]) + 1
end

-- ---- the index ----------------------------------------------------------------------

local Index = {}
local index_mt = { __index = Index }
local relations = { [0] = "original", "exact", "lexical", "shingle" }

--- index(ix): the C API over an open index: a shingle.index object or a
-- core.Index (sharing its LMDB environment), or a path to open read-only.
function M.index(ix)
  if type(ix) == "string" then
    local p = ffi.new("shingle_index *[1]")
    local rc = C.shingle_index_open(ix, 1, p, errmsg)
    if rc ~= 0 then return err(rc) end
    return setmetatable({ h = ffi.gc(p[0], C.shingle_index_close) }, index_mt)
  end
  local core_ix = ix.ix or ix
  -- the binding's handle: the same engine object the C API's shingle_index is
  return setmetatable({ h = ffi.cast("shingle_index *", core_ix:handle()), owner = ix }, index_mt)
end

--- fx:shingler(html): the C shingler ix's documents were sketched with (its
-- stored configuration; floor 8 for an index that records none), for text
-- or, with html, for HTML; nil, err for an empty index or one whose rule set
-- or extractor runs in Lua.
function Index:shingler(html)
  local p = ffi.new("shingle_shingler *[1]")
  local rc = C.shingle_index_shingler(self.h, html and 1 or 0, p, errmsg)
  if rc ~= 0 then return err(rc) end
  return setmetatable({ h = ffi.gc(p[0], C.shingle_shingler_free) }, shingler_mt)
end

function Index:count()
  local rc = C.shingle_index_count(self.h, u32_out, errmsg)
  if rc ~= 0 then return err(rc) end
  return tonumber(u32_out[0])
end

function Index:read_begin()
  local rc = C.shingle_index_read_begin(self.h, errmsg)
  if rc ~= 0 then return err(rc) end
  return true
end

function Index:read_end() C.shingle_index_read_end(self.h) end

--- fx:filter_start([opts]): build the index's postings filter in a thread of
-- its own (shingle_index_filter_start), and with opts.cache = bytes the
-- postings cache when it fits in them (shingle_index_cache_start); true, or
-- nil, err.
function Index:filter_start(opts)
  local cache = opts and opts.cache or 0
  if type(cache) ~= "number" or cache < 0 or cache % 1 ~= 0 then
    error("fx:filter_start: cache must be a whole number of bytes >= 0", 2)
  end
  local rc = cache > 0 and C.shingle_index_cache_start(self.h, cache, errmsg) or C.shingle_index_filter_start(self.h, errmsg)
  if rc ~= 0 then return err(rc) end
  return true
end

--- A document: { id, url, sweep, cluster, shingles, tokens, relation }, or nil, err.
function Index:document(id)
  local rc = C.shingle_index_document(self.h, id, doc, url_buf, url_cap, sweep_buf, 256, errmsg)
  if rc ~= 0 then return err(rc) end
  if doc.url_len >= url_cap then -- a longer URL: grow and read again
    url_cap = tonumber(doc.url_len) + 1
    url_buf = ffi.new("char[?]", url_cap)
    return self:document(id)
  end
  return { id = id, url = ffi.string(url_buf, doc.url_len), sweep = ffi.string(sweep_buf), cluster = doc.cluster,
    shingles = tonumber(doc.shingles), tokens = tonumber(doc.tokens), relation = relations[doc.relation] }
end

local policies = { resemblance = 0, containment = 1, either = 2, both = 3 } -- SHINGLE_POLICY_*
M.policies = policies

--- fx:similar(sk, { threshold, top, policy, containment, max_df, docs }): the hits
-- { id, resemblance, containment, contained, shared } as core.Index:similar
-- gives them; with docs = true each also gets url, sweep and cluster.
function Index:similar(sk, opts)
  opts = opts or {}
  local top = opts.top or 10
  local cap = top > 0 and top or 65536
  if cap > hits_cap then
    hits_cap = cap
    hits_buf = ffi.new("shingle_hit[?]", cap)
  end
  local policy = policies[opts.policy or (opts.containment and "containment" or "resemblance")]
  if not policy then error("shingle.ffi: policy is resemblance, containment, either or both", 2) end
  local rc = C.shingle_index_similar(self.h, sk, opts.threshold or 0.5, policy, opts.containment and 1 or 0, top,
    opts.max_df or 0, hits_buf, cap, size_out, errmsg)
  if rc ~= 0 then return err(rc) end
  local out = {}
  for i = 0, tonumber(size_out[0]) - 1 do
    local h = hits_buf[i]
    local hit = { id = h.id, resemblance = h.resemblance, containment = h.containment, contained = h.contained,
      shared = h.shared }
    if opts.docs then -- straight into the hit (no table per document)
      local rc = C.shingle_index_document(self.h, h.id, doc, url_buf, url_cap, sweep_buf, 256, errmsg)
      if rc ~= 0 then return err(rc) end
      if doc.url_len >= url_cap then
        local d, derr = self:document(h.id) -- grows the URL buffer
        if not d then return nil, derr end
      end
      hit.url, hit.sweep, hit.cluster = ffi.string(url_buf, doc.url_len), ffi.string(sweep_buf), doc.cluster
    end
    out[i + 1] = hit
  end
  return out
end

return M
