--- Plots as SVG for the report: linear and log scales whose ticks read at a
-- glance (1, 2, 5 times a power of ten; decades on log scales), and the few
-- charts the papers' figures need: histograms (Broder et al.'s resemblance of
-- linked pairs), bars over categories or time (Cho et al.'s Figure 11, sweeps
-- of an index), scatter plots (cluster sizes, Cho et al.'s Figure 12). Each
-- chart is one well-formed, self-contained SVG string: no script, nothing
-- fetched, every text escaped.
--
--   local s = plot.linear(0, 0.93)          -- s.lo, s.hi (nice), s.ticks, s:map(v) in [0, 1]
--   local l = plot.log(3, 4200)             -- decades 1 .. 10000, minor ticks 2..9
--   plot.histogram{ edges = {...}, counts = {...}, x = { label = "resemblance" }, marks = { { x = 0.5, label = "threshold" } } }
local html = require "shingle.html"

local M = {}

local esc = html.escape
local LN10 = math.log(10)

--- floor(log10(x)) for x > 0, exact at powers of ten.
local function decade(x)
  local e = math.floor(math.log(x) / LN10 + 0.5)
  if 10 ^ e > x then
    e = e - 1
    while 10 ^ e > x do e = e - 1 end
  else
    while 10 ^ (e + 1) <= x do e = e + 1 end
  end
  return e
end
M.decade = decade

local function finite(v) return type(v) == "number" and v == v and v ~= math.huge and v ~= -math.huge end

--- The smallest of 1, 2, 5 times a power of ten at least raw (raw > 0);
-- also returns that power's exponent.
function M.nice_step(raw)
  local e = decade(raw)
  local p = 10 ^ e
  local f = raw / p
  for _, m in ipairs({ 1, 2, 5 }) do
    if f <= m * (1 + 1e-9) then return m * p, e end
  end
  return 10 * p, e + 1
end

-- v rounded to the decimals a step of 10^e carries (so 0.1 + 0.2 prints 0.3)
local function snap(v, e)
  if e >= 0 then return math.floor(v + 0.5) end
  return tonumber(("%." .. (-e) .. "f"):format(v))
end

--- A tick label: integers plainly up to 9999, then 10k, 2.5M, 1G; other
-- numbers with the digits they carry (0.25, 1e-05).
function M.format(v)
  if v == 0 then return "0" end
  local a = math.abs(v)
  if a >= 1e4 then
    for _, u in ipairs({ { 1e12, "T" }, { 1e9, "G" }, { 1e6, "M" }, { 1e3, "k" } }) do
      if a >= u[1] then return ("%.3g"):format(v / u[1]) .. u[2] end
    end
  end
  if v == math.floor(v) then return ("%.0f"):format(v) end
  return ("%.6g"):format(v)
end

local Scale = {}
Scale.__index = Scale

--- Where v falls on the scale, 0 at lo and 1 at hi (outside for values outside).
function Scale:map(v)
  local t
  if self.kind == "log" then
    if v <= 0 then return -math.huge end
    t = (math.log(v) - math.log(self.lo)) / (math.log(self.hi) - math.log(self.lo))
  else
    t = (v - self.lo) / (self.hi - self.lo)
  end
  local pad = self.pad or 0
  return pad + (1 - 2 * pad) * t
end

--- The (min, max) of the finite numbers of a list (positive ones only when
-- positive is true); nil when there is none.
function M.extent(values, positive)
  local lo, hi
  for _, v in ipairs(values) do
    if finite(v) and (not positive or v > 0) then
      if not lo or v < lo then lo = v end
      if not hi or v > hi then hi = v end
    end
  end
  return lo, hi
end

--- A linear scale over [lo, hi] extended to ticks at 1, 2 or 5 times a power
-- of ten (about n of them, 5 by default). opts: n, nice (false keeps lo and
-- hi), zero (include 0), integer (steps of at least 1: counts). No data (nil), one value or a zero range still make
-- a usable scale: [0, 1], or the value with half its size either side.
function M.linear(lo, hi, opts)
  opts = opts or {}
  if not finite(lo) or not finite(hi) then lo, hi = finite(lo) and lo or finite(hi) and hi or nil, nil end
  if lo and not hi then hi = lo end
  if not lo then lo, hi = 0, 1 end
  if lo > hi then lo, hi = hi, lo end
  if opts.zero then lo, hi = math.min(lo, 0), math.max(hi, 0) end
  if lo == hi then
    if lo == 0 then hi = 1
    else
      local p = math.abs(lo) / 2
      lo, hi = lo - p, hi + p
      if opts.zero then lo, hi = math.min(lo, 0), math.max(hi, 0) end
    end
  end
  local step, e = M.nice_step((hi - lo) / (opts.n or 5))
  if opts.integer and step < 1 then step, e = 1, 0 end
  if opts.nice ~= false then
    lo = snap(math.floor(lo / step + 1e-9) * step, e)
    hi = snap(math.ceil(hi / step - 1e-9) * step, e)
  end
  local ticks = {}
  for i = math.ceil(lo / step - 1e-9), math.floor(hi / step + 1e-9) do ticks[#ticks + 1] = snap(i * step, e) end
  return setmetatable({ kind = "linear", lo = lo, hi = hi, step = step, ticks = ticks, minor = {} }, Scale)
end

--- A log scale over [lo, hi] (lo > 0) extended to whole decades, ticks at
-- the decades (every k-th when there are more than opts.n, 8 by default),
-- minor ticks at 2..9 times each decade when there are at most 5 decades,
-- and within a single decade ticks at 1, 2 and 5 too. No positive data, or
-- one value, still give a decade.
function M.log(lo, hi, opts)
  opts = opts or {}
  if not (finite(lo) and lo > 0) then lo = finite(hi) and hi > 0 and hi or nil end
  if not (finite(hi) and hi > 0) then hi = lo end
  if not lo then lo, hi = 1, 10 end
  if lo > hi then lo, hi = hi, lo end
  local e0 = decade(lo)
  local e1 = decade(hi)
  if 10 ^ e1 < hi then e1 = e1 + 1 end
  if e1 == e0 then e1 = e0 + 1 end
  local span = e1 - e0
  local every = math.max(1, math.ceil(span / (opts.n or 8)))
  local ticks, minor = {}, {}
  for e = e0, e1 do
    local v = 10 ^ e
    if e < 0 then v = snap(v, e) end
    if (e - e0) % every == 0 then ticks[#ticks + 1] = v else minor[#minor + 1] = v end
    if e < e1 then
      if span == 1 then
        ticks[#ticks + 1] = snap(2 * v, e); ticks[#ticks + 1] = snap(5 * v, e)
        for _, m in ipairs({ 3, 4, 6, 7, 8, 9 }) do minor[#minor + 1] = snap(m * v, e) end
      elseif span <= 5 then
        for m = 2, 9 do minor[#minor + 1] = snap(m * v, e) end
      end
    end
  end
  table.sort(ticks)
  table.sort(minor)
  return setmetatable({ kind = "log", lo = 10 ^ e0, hi = 10 ^ e1, ticks = ticks, minor = minor }, Scale)
end

-- Okabe and Ito's colours, told apart by colour-blind readers too
M.colors = { "#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000" }
local MARK = "#D55E00"
local INK, GRID, MUTED, SHADE = "#222222", "#e3e3e3", "#666666", "#e8e8e8"

local function n2(v) return ("%.2f"):format(v):gsub("%.?0+$", "") end

-- A chart's frame: the SVG element, the plot area and the axes with their
-- ticks, grid and labels. o: width, height, title, desc, x (label), y
-- (label); xs, ys scales (xs may be nil for bars: categories draw their own).
local function frame(o, xs, ys)
  local W, H = o.width or 640, o.height or 300
  local m = { l = 62, r = 18, t = o.legend and 30 or 14, b = o.x and o.x.label and 46 or 30 }
  local f = { W = W, H = H, l = m.l, r = W - m.r, t = m.t, b = H - m.b, out = {} }
  function f.px(v) return f.l + xs:map(v) * (f.r - f.l) end
  function f.py(v) return f.b - ys:map(v) * (f.b - f.t) end
  local b = f.out
  b[#b + 1] = ('<svg xmlns="http://www.w3.org/2000/svg" class="plot" viewBox="0 0 %d %d" width="%d" height="%d" '
    .. 'role="img" font-family="system-ui, -apple-system, Segoe UI, Roboto, Helvetica, Arial, sans-serif" font-size="12">')
    :format(W, H, W, H)
  b[#b + 1] = "<title>" .. esc(o.title or "plot") .. "</title>"
  if o.desc then b[#b + 1] = "<desc>" .. esc(o.desc) .. "</desc>" end
  -- y grid, ticks and labels
  for _, v in ipairs(ys.minor) do
    local y = f.py(v)
    if y >= f.t - 0.5 and y <= f.b + 0.5 then
      b[#b + 1] = ('<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s" stroke-width="0.5"/>'):format(n2(f.l), n2(y), n2(f.r), n2(y), GRID)
    end
  end
  for _, v in ipairs(ys.ticks) do
    local y = f.py(v)
    b[#b + 1] = ('<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s"/>'):format(n2(f.l), n2(y), n2(f.r), n2(y), GRID)
    b[#b + 1] = ('<text x="%s" y="%s" text-anchor="end" dominant-baseline="middle" fill="%s">%s</text>')
      :format(n2(f.l - 6), n2(y), INK, esc(M.format(v)))
  end
  if xs then
    for _, v in ipairs(xs.minor) do
      local x = f.px(v)
      b[#b + 1] = ('<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s"/>'):format(n2(x), n2(f.b), n2(x), n2(f.b + 3), INK)
    end
    for _, v in ipairs(xs.ticks) do
      local x = f.px(v)
      b[#b + 1] = ('<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s"/>'):format(n2(x), n2(f.b), n2(x), n2(f.b + 5), INK)
      b[#b + 1] = ('<text x="%s" y="%s" text-anchor="middle" fill="%s">%s</text>'):format(n2(x), n2(f.b + 18), INK, esc(M.format(v)))
    end
  end
  if o.x and o.x.label then
    b[#b + 1] = ('<text x="%s" y="%s" text-anchor="middle" fill="%s">%s</text>'):format(n2((f.l + f.r) / 2), n2(H - 6), INK, esc(o.x.label))
  end
  if o.y and o.y.label then
    b[#b + 1] = ('<text transform="translate(14 %s) rotate(-90)" text-anchor="middle" fill="%s">%s</text>')
      :format(n2((f.t + f.b) / 2), INK, esc(o.y.label))
  end
  return f
end

local function close(f)
  local b = f.out
  -- the axes last, over the bars
  b[#b + 1] = ('<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s"/>'):format(n2(f.l), n2(f.b), n2(f.r), n2(f.b), INK)
  b[#b + 1] = ('<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s"/>'):format(n2(f.l), n2(f.t), n2(f.l), n2(f.b), INK)
  b[#b + 1] = "</svg>"
  return table.concat(b)
end

local function legend(f, series)
  local b, x = f.out, f.l
  for i, s in ipairs(series) do
    b[#b + 1] = ('<rect x="%s" y="8" width="12" height="12" fill="%s"/>'):format(n2(x), s.color or M.colors[i])
    b[#b + 1] = ('<text x="%s" y="18" fill="%s">%s</text>'):format(n2(x + 16), INK, esc(s.name))
    x = x + 16 + 7 * #tostring(s.name) + 18
  end
end

local function no_data(f, text)
  f.out[#f.out + 1] = ('<text x="%s" y="%s" text-anchor="middle" fill="%s">%s</text>')
    :format(n2((f.l + f.r) / 2), n2((f.t + f.b) / 2), MUTED, esc(text or "no data"))
end

-- vertical marks (a threshold) across the plot area, labelled at the top
local function marks(f, xs, list)
  local b = f.out
  for _, mk in ipairs(list or {}) do
    if finite(mk.x) and mk.x >= xs.lo and mk.x <= xs.hi then
      local x = f.px(mk.x)
      b[#b + 1] = ('<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s" stroke-width="1.5" stroke-dasharray="5 3"/>')
        :format(n2(x), n2(f.t), n2(x), n2(f.b), MARK)
      if mk.label then
        local right = x < (f.l + f.r) / 2
        b[#b + 1] = ('<text x="%s" y="%s" text-anchor="%s" fill="%s">%s</text>')
          :format(n2(x + (right and 4 or -4)), n2(f.t + 12), right and "start" or "end", MARK, esc(mk.label))
      end
    end
  end
end

local function y_scale(y, values)
  y = y or {}
  if y.log then
    local lo, hi = M.extent(values, true)
    return M.log(lo, hi)
  end
  local _, hi = M.extent(values)
  return M.linear(0, hi or 1, { zero = true, integer = y.integer ~= false })
end

--- A histogram: o.edges (n + 1 ascending bin edges) and o.counts (n counts);
-- o.x = { label, lo, hi } (the domain, default the edges), o.y = { label,
-- log }, o.marks = { { x, label } } (e.g. the threshold), o.title, o.desc,
-- o.color, o.width, o.height.
function M.histogram(o)
  local edges, counts = o.edges or {}, o.counts or {}
  assert(#edges == #counts + 1 or #counts == 0, "histogram: edges must be one more than counts")
  local x = o.x or {}
  local xs = M.linear(x.lo or edges[1], x.hi or edges[#edges], { nice = x.lo == nil })
  local ys = y_scale(o.y, counts)
  local f = frame(o, xs, ys)
  local b = f.out
  local total = 0
  for i, c in ipairs(counts) do
    total = total + c
    if c > 0 then
      local x0, x1 = f.px(edges[i]), f.px(edges[i + 1])
      local y = f.py(math.max(c, ys.lo))
      local h = math.max(f.b - y, 1) -- the bar of the least count on a log axis stays visible
      b[#b + 1] = ('<rect x="%s" y="%s" width="%s" height="%s" fill="%s"><title>%s–%s: %s</title></rect>')
        :format(n2(x0 + 0.5), n2(f.b - h), n2(math.max(x1 - x0 - 1, 0.5)), n2(h), o.color or M.colors[1],
          esc(M.format(edges[i])), esc(M.format(edges[i + 1])), html.num(c))
    end
  end
  if total == 0 then no_data(f) end
  marks(f, xs, o.marks)
  return close(f)
end

--- Bars over categories (or sweeps in time order): o.categories (labels),
-- o.series = { { name, values, color } } drawn side by side in each
-- category (a legend names them when there are several); o.y = { label,
-- log }, o.x = { label }, o.title, o.desc, o.width, o.height.
function M.bars(o)
  local cats, series = o.categories or {}, o.series or {}
  local all = {}
  for _, s in ipairs(series) do for _, v in ipairs(s.values) do all[#all + 1] = v end end
  local ys = y_scale(o.y, all)
  o.legend = #series > 1
  local f = frame(o, nil, ys)
  local b = f.out
  if o.legend then legend(f, series) end
  local n = math.max(#cats, 1)
  local band = (f.r - f.l) / n
  local inner = band * 0.8 / math.max(#series, 1)
  local every = math.max(1, math.ceil(#cats * 7 * 8 / (f.r - f.l))) -- labels of about 8 characters fit
  local any = false
  for i, cat in ipairs(cats) do
    local x0 = f.l + (i - 1) * band + band * 0.1
    for k, s in ipairs(series) do
      local v = s.values[i] or 0
      if v > 0 and (ys.kind ~= "log" or v >= ys.lo) then
        any = true
        local y = f.py(v)
        local h = math.max(f.b - y, 1)
        b[#b + 1] = ('<rect x="%s" y="%s" width="%s" height="%s" fill="%s"><title>%s, %s: %s</title></rect>')
          :format(n2(x0 + (k - 1) * inner), n2(f.b - h), n2(math.max(inner - 1, 0.5)), n2(h), s.color or M.colors[k],
            esc(cat), esc(s.name or ""), html.num(v))
      end
    end
    local cx = f.l + (i - 0.5) * band
    b[#b + 1] = ('<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s"/>'):format(n2(cx), n2(f.b), n2(cx), n2(f.b + 4), INK)
    if (i - 1) % every == 0 then
      local label = html.truncate(cat, 13)
      b[#b + 1] = ('<text x="%s" y="%s" text-anchor="middle" fill="%s">%s</text>'):format(n2(cx), n2(f.b + 17), INK, esc(label))
    end
  end
  if not any then no_data(f) end
  return close(f)
end

--- A scatter plot: o.points = { { x, y, n = multiplicity, label = text } };
-- o.x, o.y = { label, log }; o.regions = { { y0, y1, label } } shaded bands
-- (e.g. Cho et al.'s noise below 10 pages), named in a legend; o.title, o.desc, o.width,
-- o.height. On log axes points at or below zero cannot be drawn: they are
-- counted in the description instead.
function M.scatter(o)
  local pts = o.points or {}
  local xv, yv = {}, {}
  local x, y = o.x or {}, o.y or {}
  local shown, hidden = {}, 0
  for _, p in ipairs(pts) do
    if finite(p[1]) and finite(p[2]) and (not x.log or p[1] > 0) and (not y.log or p[2] > 0) then
      shown[#shown + 1] = p
      xv[#xv + 1], yv[#yv + 1] = p[1], p[2]
    else
      hidden = hidden + 1
    end
  end
  local function scale(ax, values)
    local lo, hi = M.extent(values)
    if ax.lo then lo = ax.lo end
    if ax.hi then hi = ax.hi end
    if ax.log then return M.log(lo, hi) end
    return M.linear(lo, hi)
  end
  local xs, ys = scale(x, xv), scale(y, yv)
  -- a margin inside the axes, so points at the ends of the range stay clear of them
  xs.pad, ys.pad = 0.03, 0.04
  if hidden > 0 then
    o.desc = (o.desc and o.desc .. " " or "") .. (hidden == 1 and "1 point at zero or below is not shown on the log scale."
      or ("%d points at zero or below are not shown on the log scale."):format(hidden))
  end
  local keyed = {}
  for _, r in ipairs(o.regions or {}) do if r.label then keyed[#keyed + 1] = { name = r.label, color = SHADE } end end
  o.legend = #keyed > 0
  local f = frame(o, xs, ys)
  local b = f.out
  if o.legend then legend(f, keyed) end
  for _, r in ipairs(o.regions or {}) do
    local y0, y1 = math.max(r[1], ys.lo), math.min(r[2], ys.hi)
    if y1 > y0 then
      -- a band open at an end of the range reaches the axis, across the margin
      local top = r[2] >= ys.hi and f.t or f.py(y1)
      local bottom = r[1] <= ys.lo and f.b or f.py(y0)
      b[#b + 1] = ('<rect x="%s" y="%s" width="%s" height="%s" fill="%s"/>'):format(n2(f.l), n2(top), n2(f.r - f.l),
        n2(bottom - top), SHADE)
    end
  end
  for _, p in ipairs(shown) do
    local r = 3.5 + 1.5 * math.log((p.n or 1)) / LN10
    b[#b + 1] = ('<circle cx="%s" cy="%s" r="%s" fill="%s" fill-opacity="0.65"><title>%s%s, %s%s</title></circle>')
      :format(n2(f.px(p[1])), n2(f.py(p[2])), n2(r), o.color or M.colors[1], p.label and esc(p.label) .. ": " or "",
        esc(M.format(p[1])), esc(M.format(p[2])), (p.n or 1) > 1 and (" (%s)"):format(html.num(p.n)) or "")
  end
  -- labels: placed greedily beside their point, moved up or down (with a
  -- leader line) until they overlap no label placed before
  local placed = {}
  local function clash(x0, x1, y)
    for _, q in ipairs(placed) do
      if x0 < q[2] and q[1] < x1 and math.abs(y - q[3]) < 12 then return true end
    end
    return false
  end
  for _, p in ipairs(shown) do
    if p.label and p.show_label then
      local px, py = f.px(p[1]), f.py(p[2])
      local right = px < f.l + (f.r - f.l) * 0.7
      local label = html.truncate(p.label, 27)
      local w = 6.2 * #label
      local x0 = right and px + 6 or px - 6 - w
      local y = py - 5
      for k = 1, 24 do
        if not clash(x0, x0 + w, y) then break end
        local step = math.ceil(k / 2) * 12
        y = py - 5 + (k % 2 == 1 and -step or step)
      end
      y = math.max(f.t + 10, math.min(f.b - 2, y))
      placed[#placed + 1] = { x0, x0 + w, y }
      if math.abs(y - (py - 5)) > 1 then
        b[#b + 1] = ('<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s" stroke-width="0.6"/>')
          :format(n2(px), n2(py), n2(right and x0 - 1 or x0 + w + 1), n2(y - 4), MUTED)
      end
      b[#b + 1] = ('<text x="%s" y="%s" text-anchor="%s" font-size="11" fill="%s">%s</text>')
        :format(n2(right and px + 6 or px - 6), n2(y), right and "start" or "end", INK, esc(label))
    end
  end
  if #shown == 0 then no_data(f) end
  return close(f)
end

return M
