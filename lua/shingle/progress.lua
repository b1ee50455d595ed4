--- Progress on stderr: a bar with count, rate and ETA, redrawn at most a few
-- times a second; silent when stderr is not a terminal or when quiet.
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

--- progress.new(label, total, unit, quiet): total may be nil (unknown).
function M.new(label, total, unit, quiet)
  local self = setmetatable({ label = label, total = total, unit = unit or "docs", n = 0,
    t0 = core.now(), last = 0, on = not quiet and core.isatty(2) }, M)
  return self
end

function M:update(n, total)
  self.n = n
  if total then self.total = total end
  if not self.on then return end
  local now = core.now()
  if now - self.last < 0.2 then return end
  self.last = now
  local el = now - self.t0
  local rate = el > 0 and n / el or 0
  local line
  if self.total and self.total > 0 then
    local f = math.min(1, n / self.total)
    local w = 24
    local fill = math.floor(f * w + 0.5)
    line = ("%-22s [%s%s] %5.1f%% %d/%d %s  %.0f/s  ETA %s"):format(self.label, ("#"):rep(fill), ("."):rep(w - fill),
      100 * f, n, self.total, self.unit, rate, fmt_time(rate > 0 and (self.total - n) / rate or math.huge))
  else
    line = ("%-22s %d %s  %.0f/s  %s"):format(self.label, n, self.unit, rate, fmt_time(el))
  end
  io.stderr:write("\r", line, "\27[K")
end

--- Finish the bar; returns the elapsed seconds.
function M:done()
  local el = core.now() - self.t0
  if self.on then
    io.stderr:write(("\r%-22s %d %s in %.1f s\27[K\n"):format(self.label, self.n, self.unit, el))
  end
  return el
end

return M
