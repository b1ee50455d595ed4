--- The machine a benchmark ran on, for the lines printed with its figures
-- (docs/benchmarks.md quotes them). The shell benchmarks print the same
-- line from `lscpu`, `nproc`, `free` and `uname` (bench/lib/common.sh).
local M = {}

--- The CPU's model name, from /proc/cpuinfo.
function M.cpu()
  for line in io.lines("/proc/cpuinfo") do
    local m = line:match("^model name%s*:%s*(.*)")
    if m then return m end
  end
  return "unknown"
end

--- The load averages, as /proc/loadavg gives them.
function M.load()
  local f = io.open("/proc/loadavg")
  local s = f and f:read("l") or "unknown"
  if f then f:close() end
  return s
end

--- CPU model, cores, memory, kernel: "MODEL, N cores, M GiB, KERNEL".
function M.line()
  local p = io.popen("uname -sr; nproc; free -g | awk '/Mem:/{print $2}'")
  local kernel, cores, mem = p:read("l"), p:read("l"), p:read("l")
  p:close()
  return ("%s, %s cores, %s GiB, %s"):format(M.cpu(), cores, mem, kernel)
end

return M
