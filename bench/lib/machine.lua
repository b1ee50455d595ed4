--- The machine line every benchmark prints with its figures (docs/benchmarks.md
-- quotes it): CPU model, cores, memory, kernel. The shell benchmarks print the
-- same line from `lscpu`, `nproc`, `free` and `uname`.
return function()
  local f = io.open("/proc/cpuinfo")
  local model = f and f:read("*a"):match("model name%s*:%s*([^\n]+)") or "?"
  if f then f:close() end
  local p = io.popen("uname -sr; nproc; free -g | awk '/Mem:/{print $2}'")
  local kernel, cores, mem = p:read("*l"), p:read("*l"), p:read("*l")
  p:close()
  return ("%s, %s cores, %s GiB, %s"):format(model, cores, mem, kernel)
end
