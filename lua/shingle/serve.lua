--- `shingle serve`: the handlers of shingle.http on a real nginx. Checks the
-- index (a missing, corrupt, foreign or empty index refuses to start), gives
-- the unprivileged workers what they need to open it, writes an nginx
-- configuration into a prefix directory, and becomes the nginx master process
-- (daemon off): SIGINT or SIGTERM stop it, SIGQUIT stops it gracefully, and
-- the logs are in the prefix's logs/.
--
--   local serve = require "shingle.serve"
--   local plan = assert(serve.prepare{ index = "crawl.idx", listen = "127.0.0.1:8080" })
--   serve.run(plan)   -- does not return unless nginx cannot be started
local index = require "shingle.index"
local http = require "shingle.http"

local M = {}

M.defaults = {
  listen = "127.0.0.1:8080",
  workers = 2,
  prefix = nil,           -- default: INDEX.serve beside the index
  user = "nobody",        -- the workers' user when started as root (nginx's own default)
  readonly = false,
  max_body = http.defaults.max_body,
  batch_delay = http.defaults.batch_delay,
  batch_max = http.defaults.batch_max,
  max_df = nil,           -- /similar's common-value cutoff (nil: the index's query default)
  sweep = nil,
  invalid = "index",
  binding = nil,          -- "ffi" or "classic" for /similar (nil: the FFI when it can)
  writer = nil,           -- "thread" or "loop" for POST /documents (nil: a thread when it can)
  filter = true,          -- each worker keeps the index's postings filter (shingle.http's filter)
  cache = nil,            -- and the postings cache when it fits in these bytes (nil: shingle.http's default; 0: none)
  access_log = true,
  lua_cpath = nil,        -- a directory holding shingle/core.so built for LuaJIT
  nginx = nil,            -- the nginx binary
  connections = 1024,
  server_conf = nil,      -- a file of nginx directives included in the server block (more locations, access rules)
}

local function sh_quote(s)
  return "'" .. tostring(s):gsub("'", "'\\''") .. "'"
end

local function run(cmd)
  local ok, how, code = os.execute(cmd)
  if type(ok) == "number" then return ok == 0 end -- Lua 5.1
  return ok == true and how == "exit" and code == 0
end

local function read_cmd(cmd) -- its standard output; add 2>&1 to cmd for its errors too
  local p = io.popen(cmd:find("2>&1", 1, true) and cmd or cmd .. " 2>/dev/null")
  if not p then return nil end
  local out = p:read("*a")
  p:close()
  return out
end

local function exists(path)
  local f = io.open(path, "rb")
  if f then f:close() return true end
  return false
end

local function is_dir(path)
  local lfs = require "lfs"
  return lfs.attributes(path, "mode") == "directory"
end

local function absolute(path)
  if path:sub(1, 1) == "/" then return path end
  local lfs = require "lfs"
  local cwd = assert(lfs.currentdir())
  path = path:gsub("^%./", "")
  return (cwd == "/" and "" or cwd) .. "/" .. path
end

local function dirname(path)
  return path:match("^(.*)/[^/]*$") or "."
end

-- Characters an nginx directive argument or a Lua string in the generated
-- configuration cannot carry as they are.
local function plain_path(what, path)
  if path:find("[%c\"'\\;{}$#%s]") then
    return nil, ("%s %s has a character nginx's configuration cannot carry (quote, backslash, ;, {, }, $, # or space): "
      .. "use a plain path"):format(what, path)
  end
  return path
end

--- The nginx binary, its dynamic modules, and whether its Lua module is built in (OpenResty).
function M.find_nginx(explicit)
  local candidates = explicit and { explicit } or { "/usr/sbin/nginx", "/usr/local/openresty/nginx/sbin/nginx", "/usr/local/sbin/nginx" }
  local bin
  for _, c in ipairs(candidates) do if exists(c) then bin = c break end end
  if not bin and not explicit then
    local w = read_cmd("command -v nginx openresty")
    bin = w and w:match("[^\n]+")
  end
  if not bin then
    return nil, "nginx is not installed: on Debian, apt-get install nginx libnginx-mod-http-lua (scripts/setup.sh does)"
  end
  local v = read_cmd(sh_quote(bin) .. " -V 2>&1") or ""
  local builtin = v:find("lua%-nginx%-module") ~= nil or v:lower():find("openresty") ~= nil
  local modules
  if not builtin then
    for _, d in ipairs({ v:match("%-%-modules%-path=(%S+)") or "/usr/lib/nginx/modules", "/usr/lib/nginx/modules",
      "/usr/share/nginx/modules" }) do
      if exists(d .. "/ngx_http_lua_module.so") then modules = d break end
    end
    if not modules then
      return nil, ("%s has no Lua module: on Debian, apt-get install libnginx-mod-http-lua (scripts/setup.sh does)"):format(bin)
    end
  end
  local ndk = modules and exists(modules .. "/ndk_http_module.so")
  return { bin = bin, modules = modules, ndk = ndk, version = v:match("nginx version: (%S+)") }
end

--- Where the workers find the Lua modules and shingle's C module built for
-- LuaJIT (nginx's Lua): { lua = dir, cpath = dir }.
function M.find_modules(lua_cpath)
  local file = package.searchpath("shingle.http", package.path)
  if not file then return nil, "cannot find the module shingle.http on package.path" end
  local luadir = absolute(file):gsub("/shingle/http%.lua$", "")
  local cdir
  if lua_cpath then
    cdir = absolute(lua_cpath)
    if not exists(cdir .. "/shingle/core.so") then
      return nil, ("%s/shingle/core.so does not exist: give --lua-cpath the directory that holds shingle/core.so built for LuaJIT"):format(cdir)
    end
  else
    local root = dirname(luadir)
    for _, d in ipairs({ root .. "/build/jit/lib", "/usr/local/lib/lua/5.1", "/usr/lib/x86_64-linux-gnu/lua/5.1", "/usr/lib/lua/5.1" }) do
      if exists(d .. "/shingle/core.so") then cdir = d break end
    end
    if not cdir then
      return nil, "nginx runs LuaJIT, and shingle's C module is not built for it: in a checkout run bash scripts/setup.sh "
        .. "(it builds build/jit); installed, build it with cmake -DSHINGLE_LUA=jit and give --lua-cpath DIR (the directory holding shingle/core.so)"
    end
  end
  return { lua = luadir, cpath = cdir }
end

--- Check that the index can be served: it exists, is a shingle index of
-- this format, is not empty, and its rule set or extractor can be loaded.
function M.check_index(path)
  if not is_dir(path) then
    if exists(path) then return nil, ("%s is not an index directory (an index is a directory holding data.mdb)"):format(path) end
    return nil, ("%s does not exist: make an index with `shingle index add %s DOCS --sweep NAME`"):format(path, path)
  end
  if not exists(path .. "/data.mdb") then
    return nil, ("%s holds no index (no data.mdb): make one with `shingle index add %s DOCS --sweep NAME`"):format(path, path)
  end
  local ix, err = index.open(path, { readonly = true, create = false })
  if not ix then return nil, err end
  if not ix.config then
    ix:close()
    return nil, ("%s is empty: add documents with `shingle index add %s DOCS --sweep NAME` first"):format(path, path)
  end
  local ok, serr = pcall(ix.shinglers, ix)
  local n = ix:count()
  ix:close()
  if not ok then return nil, ("%s cannot be served: %s"):format(path, tostring(serr)) end
  return { documents = n }
end

-- ---- the workers' user ---------------------------------------------------------

local function is_root()
  local id = read_cmd("id -u")
  return id and tonumber(id) == 0
end

local function can(user, path, flags)
  for f in flags:gmatch(".") do
    if not run(("runuser -u %s -- test -%s %s >/dev/null 2>&1"):format(sh_quote(user), f, sh_quote(path))) then return false end
  end
  return true
end

local function mode_of(path)
  local lfs = require "lfs"
  return lfs.attributes(path, "permissions") or "?"
end

--- When started as root, nginx's workers run as an unprivileged user. Give
-- it what it needs of the index (enter the directory, read data.mdb, read and
-- write lock.mdb, and write data.mdb unless read-only) through the group of
-- the files; refuse with the exact change to make for what shingle serve
-- should not change itself (a parent directory it cannot enter, module
-- files it cannot read). Returns the list of changes made, or nil, err.
function M.grant(user, paths, log)
  local g = read_cmd("id -gn " .. sh_quote(user))
  g = g and g:match("%S+")
  if not g then return nil, ("there is no user %s to run nginx's workers as: choose one with --user"):format(user) end
  local changes = {}
  local function fix(path, perm)
    if can(user, path, perm) then return true end
    local gperm = perm
    if not (run(("chgrp %s %s"):format(sh_quote(g), sh_quote(path))) and run(("chmod g+%s %s"):format(gperm, sh_quote(path)))) then
      return nil, ("cannot give group %s access to %s"):format(g, path)
    end
    changes[#changes + 1] = ("%s: group %s, g+%s"):format(path, g, gperm)
    if log then log(("the workers run as %s: gave group %s %s access to %s"):format(user, g, perm, path)) end
    return true
  end
  -- parent directories: not ours to change
  for _, p in ipairs(paths) do
    local dir = p.path
    if p.kind ~= "dir" then dir = dirname(dir) end
    local d = dir
    while d ~= "" and d ~= "/" do
      local parent = dirname(d)
      if parent == "" then parent = "/" end
      if not can(user, parent, "x") then
        return nil, ("nginx's workers run as %s and cannot enter %s (mode %s), on the way to %s: run `chmod o+x %s`, "
          .. "or move the files under a directory they can enter, or choose another worker user with --user")
          :format(user, parent, mode_of(parent), p.path, parent)
      end
      d = parent
    end
  end
  for _, p in ipairs(paths) do
    if p.fix then
      local ok, err = fix(p.path, p.perm)
      if not ok then return nil, err end
    elseif not can(user, p.path, p.perm) then
      return nil, ("nginx's workers run as %s and cannot %s %s (mode %s): make it readable for them (chmod o+r), or choose another worker user with --user")
        :format(user, p.perm:find("w") and "write" or "read", p.path, mode_of(p.path))
    end
  end
  return changes
end

-- ---- the configuration -----------------------------------------------------------

local function lua_string(s) return ("%q"):format(s) end

--- The nginx configuration for plan (prepare's result), as a string.
function M.config(plan)
  local o, prefix = plan.opts, plan.prefix
  local init = {
    ("index = %s"):format(lua_string(plan.index)),
    ("max_body = %d"):format(o.max_body),
    ("batch_delay = %s"):format(tostring(o.batch_delay)),
    ("batch_max = %d"):format(o.batch_max),
    ("readonly = %s"):format(tostring(o.readonly)),
    ("invalid = %s"):format(lua_string(o.invalid)),
    'stats = "shingle_stats"',
  }
  if o.sweep then init[#init + 1] = ("sweep = %s"):format(lua_string(o.sweep)) end
  if o.max_df then init[#init + 1] = ("max_df = %d"):format(o.max_df) end
  if o.binding then init[#init + 1] = ("binding = %s"):format(lua_string(o.binding)) end
  if o.writer then init[#init + 1] = ("writer = %s"):format(lua_string(o.writer)) end
  if o.filter == false then init[#init + 1] = "filter = false" end
  if o.cache then init[#init + 1] = ("cache = %d"):format(o.cache) end
  local L = {}
  local function line(s, ...) L[#L + 1] = select("#", ...) > 0 and s:format(...) or s end
  line("# Written by `shingle serve` (%s); it is written again at every start.", os.date("!%Y-%m-%d %H:%M UTC"))
  line("# Run by hand: %s -p %s/ -c %s/nginx.conf -e %s/logs/error.log", plan.nginx.bin, prefix, prefix, prefix)
  if plan.nginx.modules then
    if plan.nginx.ndk then line("load_module %s/ndk_http_module.so;", plan.nginx.modules) end
    line("load_module %s/ngx_http_lua_module.so;", plan.nginx.modules)
  end
  line("daemon off;")
  line("master_process on;")
  line("worker_processes %d;", o.workers)
  if plan.user then line("user %s %s;", plan.user, plan.group) end
  line("pid %s/logs/nginx.pid;", prefix)
  line("error_log %s/logs/error.log notice;", prefix)
  line("events { worker_connections %d; }", o.connections)
  line("# POST /documents' batches are added in this pool's thread of each worker (shingle.http_writer)")
  line("thread_pool shingle_writer threads=1 max_queue=65536;")
  line("http {")
  line("    default_type application/json;")
  if o.access_log then line("    access_log %s/logs/access.log;", prefix) else line("    access_log off;") end
  for _, t in ipairs({ "client_body", "proxy", "fastcgi", "uwsgi", "scgi" }) do
    line("    %s_temp_path %s/tmp/%s;", t, prefix, t)
  end
  line("    # bodies over max_body get 413 before they are read or sketched; smaller ones stay in memory")
  line("    client_max_body_size %d;", o.max_body)
  line("    client_body_buffer_size %d;", o.max_body)
  line("    keepalive_requests 100000;")
  line("    server_tokens off;")
  line('    lua_package_path "%s/?.lua;%s/?/init.lua;;";', plan.modules.lua, plan.modules.lua)
  line('    lua_package_cpath "%s/?.so;;";', plan.modules.cpath)
  line("    lua_shared_dict shingle_stats 1m;")
  if o.filter ~= false and o.cache ~= 0 then
    -- the postings filter and cache, built once in the master: the workers forked from it share them
    line("    init_by_lua_block {")
    line("        require(\"shingle.http\").preload{ index = %s%s }", lua_string(plan.index),
      o.cache and (", cache = %d"):format(o.cache) or "")
    line("    }")
  end
  line("    init_worker_by_lua_block {")
  line("        require(\"shingle.http\").init{ %s }", table.concat(init, ", "))
  line("    }")
  line("    server {")
  line("        listen %s;", o.listen)
  if plan.server_conf then line("        include %s;", plan.server_conf) end
  line("        error_page 400 404 405 408 411 413 414 494 500 502 503 504 @shingle_error;")
  line("        location / { content_by_lua_block { require(\"shingle.http\").route() } }")
  line("        location @shingle_error { content_by_lua_block { require(\"shingle.http\").error_page() } }")
  line("    }")
  line("}")
  return table.concat(L, "\n") .. "\n"
end

local function parse_listen(s)
  local host, port = s:match("^%[?([%w%.:]-)%]?:(%d+)$")
  if not host then port = s:match("^(%d+)$"); host = port and "127.0.0.1" end
  port = tonumber(port)
  if not port or port < 1 or port > 65535 or host == "" then
    return nil, ("--listen %s: give HOST:PORT, e.g. 127.0.0.1:8080"):format(s)
  end
  return host:find(":") and ("[%s]:%d"):format(host, port) or ("%s:%d"):format(host, port)
end

--- Check everything and set it up; returns the plan serve.run executes, or
-- nil, err. opts: index (required) and M.defaults; log(msg) for what changed.
function M.prepare(opts)
  local o = {}
  for k, v in pairs(M.defaults) do o[k] = v end
  for k, v in pairs(opts) do o[k] = v end
  if type(o.index) ~= "string" then error("serve.prepare needs index = path", 2) end
  if type(o.workers) ~= "number" or o.workers < 1 or o.workers ~= math.floor(o.workers) or o.workers > 64 then
    return nil, ("--workers %s: give a whole number from 1 to 64"):format(tostring(o.workers))
  end
  if type(o.max_body) ~= "number" or o.max_body < 1 then return nil, "--max-body must be a positive size" end
  local listen, lerr = parse_listen(o.listen)
  if not listen then return nil, lerr end
  o.listen = listen
  local ngx, nerr = M.find_nginx(o.nginx)
  if not ngx then return nil, nerr end
  local mods, merr = M.find_modules(o.lua_cpath)
  if not mods then return nil, merr end
  local ipath = absolute(o.index):gsub("/+$", "")
  local info, ierr = M.check_index(ipath)
  if not info then return nil, ierr end
  local prefix = absolute(o.prefix or (ipath .. ".serve")):gsub("/+$", "")
  local server_conf
  if o.server_conf then
    server_conf = absolute(o.server_conf)
    if not exists(server_conf) then return nil, ("--server-conf %s: no such file"):format(o.server_conf) end
    local ok, perr = plain_path("--server-conf", server_conf)
    if not ok then return nil, perr end
  end
  for what, p in pairs({ ["the index"] = ipath, ["the prefix"] = prefix, ["the Lua modules' directory"] = mods.lua,
    ["the C module's directory"] = mods.cpath }) do
    local ok, perr = plain_path(what, p)
    if not ok then return nil, perr end
  end
  if not (run("mkdir -p " .. sh_quote(prefix .. "/logs")) and run("mkdir -p " .. sh_quote(prefix .. "/tmp"))) then
    return nil, ("cannot make the prefix directory %s: choose another with --prefix"):format(prefix)
  end
  local plan = { opts = o, index = ipath, prefix = prefix, nginx = ngx, modules = mods, documents = info.documents,
    server_conf = server_conf }
  if is_root() then
    plan.user = o.user
    local g = read_cmd("id -gn " .. sh_quote(o.user))
    plan.group = g and g:match("%S+")
    if plan.user ~= "root" then
      local paths = {
        { path = ipath, kind = "dir", perm = "x", fix = true },
        { path = ipath .. "/data.mdb", perm = o.readonly and "r" or "rw", fix = true },
        { path = ipath .. "/lock.mdb", perm = "rw", fix = true },
        { path = prefix .. "/tmp", kind = "dir", perm = "x", fix = true },
        { path = mods.lua .. "/shingle/http.lua", perm = "r" },
        { path = mods.cpath .. "/shingle/core.so", perm = "r" },
      }
      local changes, gerr = M.grant(o.user, paths, o.log)
      if not changes then return nil, gerr end
      plan.changes = changes
    end
  end
  local conf = M.config(plan)
  plan.conf_path = prefix .. "/nginx.conf"
  local tmp = plan.conf_path .. ".tmp"
  local f, ferr = io.open(tmp, "w")
  if not f then return nil, ("cannot write %s: %s"):format(tmp, require("shingle.util").reason(ferr, tmp)) end
  f:write(conf)
  f:close()
  local ok, rerr = os.rename(tmp, plan.conf_path)
  if not ok then return nil, rerr end
  plan.argv = { plan.nginx.bin, "-p", prefix .. "/", "-c", plan.conf_path, "-e", prefix .. "/logs/error.log" }
  -- nginx's own check of the configuration (modules, user, paths)
  local out = read_cmd(("%s -t -q -p %s -c %s -e %s 2>&1; echo \"exit $?\""):format(sh_quote(plan.nginx.bin),
    sh_quote(prefix .. "/"), sh_quote(plan.conf_path), sh_quote(prefix .. "/logs/error.log"))) or ""
  if not out:match("exit 0%s*$") then
    return nil, ("nginx refuses the configuration %s:\n%s"):format(plan.conf_path, (out:gsub("exit %d+%s*$", "")))
  end
  return plan
end

--- Become the nginx master process (does not return), or nil, err.
function M.run(plan)
  return require("shingle.core").exec(plan.argv[1], plan.argv)
end

return M
