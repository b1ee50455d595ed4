--- Safe HTML (and SVG) text: everything a report shows that comes from a
-- document or a URL goes through escape() or href(), so a report of hostile
-- pages cannot inject markup or script. Numbers and small tables too.
local M = {}

-- Bytes that are not text: C0 controls but tab, newline and carriage return,
-- and DEL. XML 1.0 forbids most of them, so an inline SVG holding one would
-- no longer parse.
local control = "[%z\1-\8\11\12\14-\31\127]"
local suspicious = "[%z\1-\8\11\12\14-\31\127-\255]"

--- The longest valid UTF-8 sequence at s[i] (its length), or 0.
local function utf8_len(s, i)
  local c = s:byte(i)
  local n, min
  if c < 0xC2 then return 0
  elseif c < 0xE0 then n, min = 2, 0x80
  elseif c < 0xF0 then n, min = 3, 0x800
  elseif c < 0xF5 then n, min = 4, 0x10000
  else return 0 end
  local cp = c % (2 ^ (7 - n))
  for k = 1, n - 1 do
    local b = s:byte(i + k)
    if not b or b < 0x80 or b > 0xBF then return 0 end
    cp = cp * 64 + b % 64
  end
  if cp < min or cp > 0x10FFFF or (cp >= 0xD800 and cp <= 0xDFFF) then return 0 end
  return n
end

--- s as valid UTF-8 text: invalid bytes become U+FFFD, controls (but tab,
-- newline, carriage return) are dropped.
function M.clean(s)
  s = tostring(s)
  if not s:find(suspicious) then return s end
  local out, i, n = {}, 1, #s
  while i <= n do
    local j = s:find(suspicious, i)
    if not j then out[#out + 1] = s:sub(i); break end
    if j > i then out[#out + 1] = s:sub(i, j - 1) end
    local c = s:byte(j)
    if c < 0x80 then
      i = j + 1 -- a control: dropped
    else
      local len = utf8_len(s, j)
      if len > 0 then
        out[#out + 1] = s:sub(j, j + len - 1)
        i = j + len
      else
        out[#out + 1] = "\239\191\189"
        i = j + 1
      end
    end
  end
  return table.concat(out)
end

local entities = { ["&"] = "&amp;", ["<"] = "&lt;", [">"] = "&gt;", ['"'] = "&quot;", ["'"] = "&#39;" }

--- At most n bytes of s, cut before a character, with an ellipsis when cut.
function M.truncate(s, n)
  s = tostring(s)
  if #s <= n then return s end
  local i = n
  while i > 0 and (s:byte(i + 1) or 0) >= 0x80 and (s:byte(i + 1) or 0) < 0xC0 do i = i - 1 end
  return s:sub(1, i) .. "…"
end

--- Text for an HTML or SVG element or a quoted attribute value.
function M.escape(s)
  return (M.clean(s):gsub("[&<>\"']", entities))
end
M.control = control

-- schemes a report may link to: nothing that runs (javascript:, data:, vbscript:)
local safe_scheme = { http = true, https = true, ftp = true, file = true }

--- An href for a document's URL or path, or nil when it should not be a
-- link: a URL of a scheme that cannot run script, or a path to an existing
-- local file (made absolute against cwd). exists(path) tells whether a path
-- is a readable file (default: lfs).
function M.href(u, cwd, exists)
  if type(u) ~= "string" or u == "" or u:find(control) then return nil end
  local scheme = u:match("^(%a[%w+.-]*):")
  if scheme and #scheme > 1 then
    if not safe_scheme[scheme:lower()] then return nil end
    return M.escape((u:gsub("[%s<>\"]", function(ch) return ("%%%02X"):format(ch:byte()) end)))
  end
  exists = exists or function(p) return require("lfs").attributes(p, "mode") == "file" end
  local path = u
  if path:sub(1, 1) ~= "/" then
    if not cwd then return nil end
    path = cwd .. "/" .. path
  end
  if not exists(path) then return nil end
  -- a file URL: percent-encode what is not unreserved or a path separator
  return "file://" .. M.escape((path:gsub("[^%w%-%._~/]", function(ch) return ("%%%02X"):format(ch:byte()) end)))
end

--- A document's URL or path as a link when href() allows one, else as
-- text; text (default: the URL itself) is what is shown.
function M.link(url, cwd, text)
  if type(url) ~= "string" then return "" end
  local href = M.href(url, cwd)
  if href then return ('<a class="url" href="%s">%s</a>'):format(href, M.escape(text or url)) end
  return ('<span class="url">%s</span>'):format(M.escape(text or url))
end

--- An integer with thousands separators (1,234,567); other numbers with
-- `decimals` places (default 3).
function M.num(x, decimals)
  if x == nil then return "–" end
  if type(x) ~= "number" then return M.escape(x) end
  if x ~= x then return "–" end
  if x == math.floor(x) and math.abs(x) < 2 ^ 53 and not decimals then
    local s = ("%.0f"):format(math.abs(x))
    s = s:reverse():gsub("(%d%d%d)", "%1,"):reverse():gsub("^,", "")
    return (x < 0 and "-" or "") .. s
  end
  return ("%." .. (decimals or 3) .. "f"):format(x)
end

--- A percentage with one decimal, of a part in a whole (0 when the whole is).
function M.pct(part, whole)
  if not whole or whole == 0 then return "0.0%" end
  return ("%.1f%%"):format(100 * part / whole)
end

--- A byte count in KiB, MiB, GiB.
function M.bytes(n)
  if not n then return "–" end
  local units = { "B", "KiB", "MiB", "GiB", "TiB" }
  local u = 1
  while n >= 1024 and u < #units do n = n / 1024; u = u + 1 end
  return u == 1 and ("%d B"):format(n) or ("%.1f %s"):format(n, units[u])
end

--- A table. cols: { { "title", num = bool (right-aligned, sorts as a
-- number) } }; rows: lists of cells, each already HTML (escape text first)
-- or a number (formatted by num); opts: class, caption (HTML), sortable,
-- filter (a filter box is added by the page's script), id.
function M.table(cols, rows, opts)
  opts = opts or {}
  local b = {}
  local classes = { opts.class }
  if opts.sortable then classes[#classes + 1] = "sortable" end
  if opts.filter then classes[#classes + 1] = "filterable" end
  b[#b + 1] = ("<div class=\"scroll\"><table%s%s>"):format(
    #classes > 0 and (' class="%s"'):format(table.concat(classes, " ")) or "",
    opts.id and (' id="%s"'):format(M.escape(opts.id)) or "")
  if opts.caption then b[#b + 1] = "<caption>" .. opts.caption .. "</caption>" end
  b[#b + 1] = "<thead><tr>"
  for _, c in ipairs(cols) do
    b[#b + 1] = ("<th%s scope=\"col\">%s</th>"):format(c.num and ' class="num"' or "", M.escape(c[1]))
  end
  b[#b + 1] = "</tr></thead><tbody>"
  for _, r in ipairs(rows) do
    b[#b + 1] = "<tr>"
    for i, c in ipairs(cols) do
      local v = r[i]
      local sort = ""
      if type(v) == "number" then
        if v == v then sort = (' data-v="%s"'):format(("%.17g"):format(v)) end
        v = M.num(v, c.decimals)
      end
      b[#b + 1] = ("<td%s%s>%s</td>"):format(c.num and ' class="num"' or "", sort, v == nil and "" or v)
    end
    b[#b + 1] = "</tr>"
  end
  b[#b + 1] = "</tbody></table></div>"
  return table.concat(b)
end

--- A two-column table of name, value pairs (a definition list reads badly
-- on paper): pairs = { { "name", value-or-HTML } }.
function M.facts(pairs, caption)
  local b = { '<div class="scroll"><table class="facts">' }
  if caption then b[#b + 1] = "<caption>" .. caption .. "</caption>" end
  b[#b + 1] = "<tbody>"
  for _, p in ipairs(pairs) do
    local v = p[2]
    if type(v) == "boolean" then v = v and "yes" or "no" end
    if type(v) == "number" then v = M.num(v, p.decimals) elseif v == nil then v = "–" end
    b[#b + 1] = ('<tr><th scope="row">%s</th><td class="num">%s</td></tr>'):format(M.escape(p[1]), v)
  end
  b[#b + 1] = "</tbody></table></div>"
  return table.concat(b)
end

return M
