--- Progress on stderr: a bar with count, rate and ETA, redrawn at most a few
-- times a second; silent when stderr is not a terminal or when quiet. One
-- line at a time: a bar that starts while another is on screen ends that
-- line first (no two bars redraw the same line), and a message written
-- through M.message (the log) clears the line before it. The rate and the
-- ETA are shown once there is a second's worth of progress to measure them
-- by (not 15382972298/s after a microsecond).
local core = require "shingle.core"

local M = {}
M.__index = M

local function fmt_time(s)
  if s ~= s or s == math.huge then return "--:--" end
  s = math.floor(s + 0.5)
  local h, m = math.floor(s / 3600), math.floor(s % 3600 / 60)
  if h > 0 then return ("%d:%02d:%02d"):format(h, m, s % 60) end
  return ("%d:%02d"):format(m, s % 60)
end

-- the bar whose line is on screen, if any
local shown = nil

-- a rate as people read it: 950/s, 12.3k/s, 4.56M/s
local function fmt_rate(r)
  if r >= 1e6 then return ("%.3gM/s"):format(r / 1e6) end
  if r >= 1e4 then return ("%.3gk/s"):format(r / 1e3) end
  return ("%.0f/s"):format(r)
end

--- progress.new(label, total, unit, quiet): total may be nil (unknown).
-- Nothing is drawn when quiet, when stderr is not a terminal, or for the
-- first 0.2 s (a step that ends at once leaves no line behind but its
-- summary).
function M.new(label, total, unit, quiet)
  local t0 = core.now()
  local self = setmetatable({ label = label, total = total, unit = unit or "docs", n = 0,
    t0 = t0, last = t0, on = not quiet and core.isatty(2) }, M)
  return self
end

--- Clear the line of the bar on screen (before a message is written).
function M.interrupt()
  if shown then
    io.stderr:write("\r\27[K")
    shown.drawn = false
    shown = nil
  end
end

--- Write a message line on stderr without mixing it into a bar.
function M.message(msg)
  M.interrupt()
  io.stderr:write(msg, "\n")
end

function M:update(n, total)
  self.n = n
  if total then self.total = total end
  if not self.on then return end
  local now = core.now()
  if now - self.last < 0.2 then return end
  self.last = now
  local el = now - self.t0
  -- a rate needs time to measure it: none before a second has passed
  local rate = el >= 1 and n / el or nil
  local rs = rate and fmt_rate(rate) or "--/s"
  local line
  if self.total and self.total > 0 then
    local f = math.min(1, n / self.total)
    local w = 24
    local fill = math.floor(f * w + 0.5)
    line = ("%-22s [%s%s] %5.1f%% %d/%d %s  %s  ETA %s"):format(self.label, ("#"):rep(fill), ("."):rep(w - fill),
      100 * f, n, self.total, self.unit, rs, fmt_time(rate and rate > 0 and (self.total - n) / rate or math.huge))
  else
    line = ("%-22s %d %s  %s  %s"):format(self.label, n, self.unit, rs, fmt_time(el))
  end
  -- another bar's line stays as it is: this one starts a line of its own
  if shown and shown ~= self then io.stderr:write("\n") end
  shown, self.drawn = self, true
  io.stderr:write("\r", line, "\27[K")
end

--- Finish the bar: its line says the count and the time (when it was
-- drawn at all); returns the elapsed seconds.
function M:done()
  local el = core.now() - self.t0
  if self.on and self.drawn then
    if shown ~= self then io.stderr:write("\n") end
    io.stderr:write(("\r%-22s %d %s in %.1f s\27[K\n"):format(self.label, self.n, self.unit, el))
  end
  if shown == self then shown = nil end
  self.drawn = false
  return el
end

return M
