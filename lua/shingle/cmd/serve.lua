--- shingle serve INDEX: the index over HTTP, on nginx with its Lua module
-- (docs/serve.md). Checks the index and the workers' access to it, writes
-- PREFIX/nginx.conf and becomes the nginx master process.
local serve = require "shingle.serve"
local common = require "shingle.cmd.common"
local size = common.size

local M = {}

function M.configure(parser)
  local c = parser:command("serve", "Serve an index over HTTP with nginx: similar, documents, cluster, lost, changes, explain, health, stats.")
  c:argument("db", "The index directory.")
  c:option("--listen", "Address and port to listen on.", serve.defaults.listen)
  c:option("--workers", "nginx worker processes.", tostring(serve.defaults.workers)):convert(tonumber)
  c:option("--prefix", "Directory for nginx.conf, logs/ and tmp/ (default: INDEX.serve).")
  c:option("--max-body", "Largest request body; larger ones get 413 before they are sketched.", "256K")
  c:flag("--read-only", "Refuse POST /documents; open the index read-only.")
  c:option("--sweep", "Sweep of documents added by POST /documents without ?sweep= (default: the UTC date).")
  c:option("--batch-delay", "Milliseconds a POST /documents waits for others to share its write transaction.", "2")
    :convert(tonumber)
  c:option("--batch-max", "Documents in one write transaction at most (1: a commit per POST /documents).",
    tostring(serve.defaults.batch_max)):convert(tonumber)
  c:option("--max-df", "POST /similar does not look up sketch values held by more than N documents (very common "
    .. "shingles; bounds a query's cost, may miss documents sharing only those); 0: none (default: as `shingle similar`).")
    :convert(tonumber)
  c:option("--invalid", "Bodies that are not UTF-8: read by the index's rule (index), or refused with 400 (error).", "index")
    :choices({ "index", "error" })
  c:option("--binding", "How /similar reaches the engine: ffi (LuaJIT's FFI over the C API) or classic (the Lua binding); "
    .. "default: ffi when the index allows it.")
    :choices({ "ffi", "classic" })
  c:option("--writer", "Where POST /documents' batches are added: thread (one of nginx's worker threads, while the "
    .. "worker's event loop serves readers) or loop (in the worker's event loop, which the commit holds up); "
    .. "default: thread when the FFI path is used.")
    :choices({ "thread", "loop" })
  c:option("--user", "The workers' user when started as root.", serve.defaults.user)
  c:option("--lua-cpath", "Directory holding shingle/core.so built for LuaJIT (default: the checkout's build/jit).")
  c:option("--nginx", "The nginx binary (default: /usr/sbin/nginx).")
  c:option("--server-conf", "A file of nginx directives to include in the server block (more locations, allow/deny, auth).")
  c:flag("--no-filter", "Workers keep no postings filter (by default each builds one at start, ~1.6 bytes a posting, "
    .. "so that /similar skips from memory the values no document has).")
  c:option("--cache", "Each worker also keeps the postings cache when it fits in this many MB (at most ~13 bytes a "
    .. "posting: ~480 MB for a million 5 KB documents), so that /similar finds the documents of its values in memory; "
    .. "0: none.", "1024")
    :convert(tonumber)
  c:flag("--no-access-log", "Do not write logs/access.log.")
  c:flag("--check", "Check and write the configuration, print the command that runs it, and exit.")
end

function M.run(a)
  local max_body, err = size(a.max_body)
  if not max_body then io.stderr:write("shingle: --max-body: ", err, "\n") return 2 end
  if not a.batch_delay or a.batch_delay < 0 or a.batch_delay > 1000 then
    return common.fail(2, "--batch-delay: give milliseconds from 0 to 1000")
  end
  if not a.batch_max or a.batch_max < 1 or a.batch_max > 100000 or a.batch_max % 1 ~= 0 then
    return common.fail(2, "--batch-max: give a whole number of documents from 1 to 100000")
  end
  if not a.cache or a.cache < 0 or a.cache % 1 ~= 0 or a.cache > 1048576 then
    return common.fail(2, "--cache: give a whole number of MB from 0 to 1048576")
  end
  if a.max_df and (a.max_df < 0 or a.max_df % 1 ~= 0 or a.max_df > 4294967295) then
    return common.fail(2, "--max-df: give a whole number of documents (0: no cutoff)")
  end
  local plan, perr = serve.prepare{ index = a.db, listen = a.listen, workers = a.workers, prefix = a.prefix,
    max_body = max_body, readonly = a.read_only, sweep = a.sweep, invalid = a.invalid, binding = a.binding, writer = a.writer, batch_delay = a.batch_delay / 1000,
    batch_max = a.batch_max, max_df = a.max_df, user = a.user,
    lua_cpath = a.lua_cpath, nginx = a.nginx, access_log = not a.no_access_log, filter = not a.no_filter, cache = a.cache * 1048576, server_conf = a.server_conf,
    log = function(msg) io.stderr:write("shingle serve: ", msg, "\n") end }
  if not plan then return common.fail(1, perr) end
  local cmd = table.concat(plan.argv, " ")
  if a.check then
    io.stdout:write(("configuration %s is good; run it with:\n  %s\n"):format(plan.conf_path, cmd))
    return 0
  end
  io.stderr:write(("shingle serve: %s (%d documents) on http://%s/ with %d workers%s; logs in %s/logs; stop with Ctrl-C or SIGTERM\n")
    :format(plan.index, plan.documents, plan.opts.listen, plan.opts.workers, plan.user and (" as " .. plan.user) or "",
      plan.prefix))
  local _, xerr = serve.run(plan)
  io.stderr:write("shingle: ", tostring(xerr), "\n")
  return 1
end

return M
