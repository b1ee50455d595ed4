-- A test bed of real mirrors for `shingle collections` (used by
-- spec/collections_mirrors_spec.lua and bench/collections_mirrors.lua): the
-- rsyslog manual (Debian's rsyslog-doc, 318 linked HTML pages, installed by
-- scripts/setup.sh) on its primary site and three copies:
--
--   www.rsyslog.example/doc/    the primary
--   mirror.example.net/rsyslog/ a full mirror that adds a banner to every page
--   partial.example.org/        a partial mirror of 60% of the pages (whole
--                               sections), whose links to pages it lacks point
--                               back at the primary
--   old.example.com/doc/        an older copy: 15% of the pages edited
--
-- The files are local mirrors as `wget -m` leaves them: ROOT/HOST/PATH.
local support = require "support"
local read = support.read
local lfs = require "lfs"

local M = {}

M.source = "/usr/share/doc/rsyslog-doc/html"
M.primary = "www.rsyslog.example/doc"
M.mirror = "mirror.example.net/rsyslog"
M.partial = "partial.example.org"
M.old = "old.example.com/doc"

function M.available() return lfs.attributes(M.source, "mode") == "directory" end

-- A deterministic generator (the Park-Miller one of spec/support.lua).
local function rng(seed)
  local x = seed
  return function(n)
    x = (x * 16807) % 2147483647
    return x % n + 1
  end
end

local function put(path, text)
  local dir = path:match("^(.*)/")
  local parts = ""
  for seg in dir:gmatch("[^/]+") do
    parts = parts .. "/" .. seg
    if not lfs.attributes(parts, "mode") then assert(lfs.mkdir(parts)) end
  end
  local f = assert(io.open(path, "wb"))
  f:write(text)
  f:close()
end

-- every HTML page of the manual, relative to its root, sorted
local function pages()
  local out = {}
  local function walk(dir, rel)
    local names = {}
    for n in lfs.dir(dir) do if n ~= "." and n ~= ".." then names[#names + 1] = n end end
    table.sort(names)
    for _, n in ipairs(names) do
      local p, r = dir .. "/" .. n, rel == "" and n or (rel .. "/" .. n)
      local mode = lfs.attributes(p, "mode")
      if mode == "directory" then walk(p, r)
      elseif n:match("%.html$") then out[#out + 1] = r end
    end
  end
  walk(M.source, "")
  return out
end

-- "a/b/../c/./d.html" -> "a/c/d.html"
local function normalize(path)
  local out = {}
  for seg in path:gmatch("[^/]+") do
    if seg == ".." then out[#out] = nil elseif seg ~= "." then out[#out + 1] = seg end
  end
  return table.concat(out, "/")
end

--- Build the test bed under root. Returns { pages, partial = n, edited = n,
-- files = { rel, ... }, in_partial = { [rel] = true }, edited_pages = { [rel] = true } }.
function M.build(root)
  local rels = pages()
  local n = #rels
  local rand = rng(2000)
  -- the partial mirror: whole sections (top-level directories and files), in
  -- name order, until 60% of the pages
  local sections, order = {}, {}
  for _, r in ipairs(rels) do
    local top = r:match("^([^/]+)/") or r
    if not sections[top] then sections[top] = {}; order[#order + 1] = top end
    table.insert(sections[top], r)
  end
  local in_partial, count = {}, 0
  -- the largest sections first, then the others, so the 60% is reached in sections
  table.sort(order, function(a, b)
    if #sections[a] ~= #sections[b] then return #sections[a] > #sections[b] end
    return a < b
  end)
  for _, top in ipairs(order) do
    if count + #sections[top] <= math.floor(0.6 * n + 0.5) then
      for _, r in ipairs(sections[top]) do in_partial[r] = true end
      count = count + #sections[top]
    end
  end
  -- 15% of the pages edited in the older copy: every page whose draw falls under it
  local edited, n_edited = {}, 0
  for _, r in ipairs(rels) do
    if rand(1000) <= 150 then edited[r] = true; n_edited = n_edited + 1 end
  end
  for i, r in ipairs(rels) do
    local html = read(M.source .. "/" .. r)
    put(root .. "/" .. M.primary .. "/" .. r, html)
    local banner = ('<div class="mirror-banner">This page is mirrored by mirror.example.net as a service to '
      .. 'its users: page %d of the rsyslog manual, fetched %d minutes ago from its primary site.</div>')
      :format(i, rand(900))
    put(root .. "/" .. M.mirror .. "/" .. r, (html:gsub("(<[bB][oO][dD][yY][^>]*>)", "%1" .. banner, 1)))
    if in_partial[r] then
      local dir = r:match("^(.*)/") or ""
      local rewritten = html:gsub('href="([^"#:]+%.html)(#?[^"]*)"', function(target, frag)
        local abs = normalize((dir ~= "" and dir .. "/" or "") .. target)
        if in_partial[abs] then return nil end -- kept as it is
        return ('href="http://%s/%s%s"'):format(M.primary, abs, frag)
      end)
      put(root .. "/" .. M.partial .. "/" .. r, rewritten)
    end
    local old = html
    if edited[r] then
      -- the older release said something else in its first paragraph, and had no last one
      old = old:gsub("(<p>)", "%1In the previous release of rsyslog this was documented differently, and some of "
        .. "the options described below did not exist yet; ", 1)
      old = old:gsub("<p>[^<]*</p>(%s*</div>%s*</div>%s*</div>)", "%1", 1)
    end
    put(root .. "/" .. M.old .. "/" .. r, old)
  end
  return { pages = n, partial = count, edited = n_edited, files = rels, in_partial = in_partial, edited_pages = edited }
end

--- Score a collections run against the test bed: the largest cluster's
-- cardinality and size, the manual's pages it holds in each copy, and the
-- precision of its rows (every collection of a row holds the same file of
-- the manual).
function M.score(clusters, bed)
  local best
  for _, cl in ipairs(clusters) do
    if not best or cl.cardinality * cl.size > best.cardinality * best.size then best = cl end
  end
  local out = { clusters = #clusters, cardinality = 0, size = 0, right = 0, cells = 0, pages = 0 }
  if not best then return out end
  out.cardinality, out.size = best.cardinality, best.size
  local pages = {}
  for k = 1, best.size do
    local rels = {}
    for _, co in ipairs(best.collections) do
      local u = co.urls[k]
      if u then
        local rel = u:match("^http://" .. M.primary:gsub("%p", "%%%0") .. "/(.*)$")
          or u:match("^http://" .. M.mirror:gsub("%p", "%%%0") .. "/(.*)$")
          or u:match("^http://" .. M.partial:gsub("%p", "%%%0") .. "/(.*)$")
          or u:match("^http://" .. M.old:gsub("%p", "%%%0") .. "/(.*)$")
        rels[#rels + 1] = rel or u
      end
    end
    local same = true
    for j = 2, #rels do if rels[j] ~= rels[1] then same = false end end
    out.cells = out.cells + #rels
    if same then out.right = out.right + #rels; pages[rels[1]] = true end
  end
  for _ in pairs(pages) do out.pages = out.pages + 1 end
  out.precision = out.cells > 0 and out.right / out.cells or 0
  return out
end

return M
