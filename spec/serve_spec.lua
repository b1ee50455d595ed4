-- `shingle serve` on a real nginx (Debian's nginx + libnginx-mod-http-lua):
-- a small index with two sweeps, every endpoint against the command line's
-- answer, every bad input, the refusals to start, the workers' permissions,
-- and a clean stop that leaves no nginx running. Requests go through curl to
-- 127.0.0.1 on a free port.
local support = require "support"
local write, read = support.write, support.read
local cjson = require "cjson"

-- Every command without the sanitizer preload of the asan run (curl and ps
-- deadlock in setlocale under it, and nginx need not carry it).
local function run(cmd) return support.run("unset LD_PRELOAD; " .. cmd) end
local function exec(cmd) return os.execute("unset LD_PRELOAD; " .. cmd) end

local LUA = rawget(_G, "jit") and "luajit" or "lua" .. _VERSION:match("%d+%.%d+")
local SHINGLE = LUA .. " bin/shingle "
local CURL = "curl --max-time 60 "

local function tmpdir()
  local out = run("mktemp -d")
  local d = out:match("%S+")
  assert(exec("chmod 755 " .. d)) -- nginx's workers run as nobody and must enter it
  return d
end


local function alive(pid)
  if not pid then return false end
  local r = exec("kill -0 " .. pid .. " 2>/dev/null")
  return r == true or r == 0 -- Lua 5.2+ or 5.1
end

local function children(pid)
  local out = run("ps -o pid= --ppid " .. pid)
  local t = {}
  for p in out:gmatch("%d+") do t[#t + 1] = p end
  return t
end

-- One request: status, decoded JSON (or nil), raw body, headers.
local function request(base, method, path, opts)
  opts = opts or {}
  local dir = opts.dir
  local bodyfile = dir .. "/req.body"
  local cmd = { CURL .. "-s -S -o", dir .. "/resp.body", "-D", dir .. "/resp.head", "-w '%{http_code}'", "-X", method }
  if opts.body then
    write(bodyfile, opts.body)
    cmd[#cmd + 1] = "--data-binary @" .. bodyfile
  end
  for _, h in ipairs(opts.headers or {}) do cmd[#cmd + 1] = "-H '" .. h .. "'" end
  cmd[#cmd + 1] = "'" .. base .. path .. "'"
  local out, code = run(table.concat(cmd, " "))
  assert(code == 0, "curl failed: " .. out)
  local raw = read(dir .. "/resp.body") or ""
  local ok, json = pcall(cjson.decode, raw)
  return tonumber(out:match("(%d+)%s*$")), ok and json or nil, raw, read(dir .. "/resp.head") or ""
end

-- Deep equality of decoded JSON, numbers to 1e-12.
local function same(a, b, path)
  path = path or "$"
  if type(a) == "number" and type(b) == "number" then
    assert(math.abs(a - b) <= 1e-12, ("%s: %s ~= %s"):format(path, a, b))
    return
  end
  assert(type(a) == type(b), ("%s: %s vs %s"):format(path, type(a), type(b)))
  if type(a) ~= "table" then
    assert(a == b, ("%s: %s vs %s"):format(path, tostring(a), tostring(b)))
    return
  end
  for k, v in pairs(a) do same(v, b[k], path .. "." .. tostring(k)) end
  for k in pairs(b) do assert(a[k] ~= nil, path .. "." .. tostring(k) .. " is missing") end
end

local function cli_json(args)
  -- stdout only ("no document resembles ..." goes to stderr)
  local out, code = run("{ " .. SHINGLE .. args .. " 2>/dev/null; }")
  assert(code == 0, code == 0 or run(SHINGLE .. args))
  return out
end

local function jsonl(out)
  local t = {}
  for line in out:gmatch("[^\n]+") do t[#t + 1] = cjson.decode(line) end
  return t
end

-- Start a server in the background on a free port (another one if the port
-- turns out to be taken): command(port, log) is the shell command; wait until
-- GET health answers 200.
local function launch(dir, command, health)
  -- seeded from /dev/urandom: runs started in the same second (two test
  -- suites on one machine) must not try the same ports, or one would take
  -- the other's server for its own
  local f = assert(io.open("/dev/urandom", "rb"))
  local b1, b2, b3 = f:read(3):byte(1, 3)
  f:close()
  local rand = support.rng(b1 * 65536 + b2 * 256 + b3 + 1)
  for _ = 1, 8 do
    local port = 20000 + rand(40000)
    while run("ss -Htln 'sport = :" .. port .. "'"):match("%S") do port = 20000 + rand(40000) end
    local log = dir .. "/serve.log"
    local out = run(command(port, log) .. " > " .. log .. " 2>&1 & echo $!")
    local pid = out:match("(%d+)")
    local base = "http://127.0.0.1:" .. port
    for _ = 1, 100 do
      if not alive(pid) then break end
      local s = run((CURL .. "-s -o /dev/null -w '%%{http_code}' %s%s"):format(base, health))
      -- ours only if it is still alive and did not fail to bind (another server may answer on the port)
      if s:match("200") and alive(pid) and not (read(log) or ""):find("Address already in use", 1, true) then
        return { pid = pid, base = base, port = port, log = log }
      end
      run("sleep 0.1")
    end
    local text = (read(log) or "") .. (read(dir .. "/srv/logs/error.log") or "")
    if alive(pid) then exec("kill " .. pid) end
    if not text:find("Address already in use", 1, true) then error("the server did not start:\n" .. text) end
  end
  error("no free port found")
end

-- `shingle serve db` with extra options, its prefix in dir/srv.
local function start(db, dir, extra)
  local srv = launch(dir, function(port)
    return ("%s serve %s --listen 127.0.0.1:%d --workers 2 --prefix %s/srv %s"):format(SHINGLE, db, port, dir, extra or "")
  end, "/health")
  srv.prefix = dir .. "/srv"
  return srv
end

-- Stop with signal and wait; returns whether the master and its workers are gone.
local function stop(srv, signal)
  if not srv or not alive(srv.pid) then return true end
  local workers = children(srv.pid)
  exec(("kill -%s %s"):format(signal or "TERM", srv.pid))
  for _ = 1, 100 do
    local any = alive(srv.pid)
    for _, w in ipairs(workers) do any = any or alive(w) end
    if not any then return true end
    run("sleep 0.1")
  end
  exec("kill -KILL " .. srv.pid)
  for _, w in ipairs(workers) do exec("kill -KILL " .. w .. " 2>/dev/null") end
  return false
end

local function is_root()
  return run("id -u"):match("^0") ~= nil
end

-- Two sweeps: sweep 2 keeps, edits, moves and adds pages of sweep 1.
local function corpus(dir)
  local rand = support.rng(12)
  local function text(n) return table.concat(support.words(rand, n, 30000), " ") end
  local s1, s2 = {}, {}
  local kept = {}
  for i = 1, 30 do
    local t = text(300)
    s1[#s1 + 1] = { url = ("http://a.example/p%d.html"):format(i), text = t }
    if i % 3 == 0 then
      s2[#s2 + 1] = { url = ("http://a.example/p%d.html"):format(i), text = t }
    elseif i % 3 == 1 then
      s2[#s2 + 1] = { url = ("http://a.example/p%d.html"):format(i), text = t:gsub("w1", "edited", 3) }
    else
      s2[#s2 + 1] = { url = ("http://b.example/moved%d.html"):format(i), text = t }
    end
    kept[i] = t
  end
  for i = 1, 5 do s2[#s2 + 1] = { url = ("http://c.example/new%d"):format(i), text = text(250) } end
  local function jl(path, docs)
    local f = assert(io.open(path, "w"))
    for _, d in ipairs(docs) do f:write(cjson.encode(d), "\n") end
    f:close()
  end
  jl(dir .. "/s1.jsonl", s1)
  jl(dir .. "/s2.jsonl", s2)
  return kept
end

describe("shingle serve", function()
  local dir, db, srv, texts

  setup(function()
    dir = tmpdir()
    db = dir .. "/idx"
    texts = corpus(dir)
    local out, code = run(SHINGLE .. "index add " .. db .. " samples/docs " .. dir .. "/s1.jsonl --sweep 2026-11-01 -q")
    assert(code == 0, out)
    out, code = run(SHINGLE .. "index add " .. db .. " " .. dir .. "/s2.jsonl --sweep 2026-11-08 -q")
    assert(code == 0, out)
    local ok, err = pcall(function()
      srv = start(db, dir, "--max-body 64K --invalid error --batch-delay 300 --batch-max 64")
    end)
    if not ok then stop(srv) error(err, 0) end
  end)

  teardown(function()
    local ok = stop(srv)
    exec("rm -rf " .. dir)
    assert(ok, "nginx did not stop on SIGTERM")
  end)

  local function req(method, path, opts)
    opts = opts or {}
    opts.dir = dir
    return request(srv.base, method, path, opts)
  end

  describe("the processes", function()
    it("is the nginx master itself (exec), with two workers", function()
      assert.are.equal("nginx", (read("/proc/" .. srv.pid .. "/comm") or ""):match("%S+"))
      assert.are.equal(2, #children(srv.pid))
    end)

    it("runs its workers unprivileged, or as the user who started it", function()
      for _, w in ipairs(children(srv.pid)) do
        local user = run("ps -o user= -p " .. w):match("%S+")
        if is_root() then assert.are.equal("nobody", user) else assert.are_not.equal("root", user) end
      end
    end)

    it("writes its configuration and logs into the prefix", function()
      local conf = read(srv.prefix .. "/nginx.conf")
      assert.is_truthy(conf:find("listen 127.0.0.1:" .. srv.port .. ";", 1, true))
      assert.is_truthy(conf:find("client_max_body_size 65536;", 1, true))
      assert.is_truthy(conf:find("/build/jit/lib/?.so", 1, true), "LuaJIT's build of core.so on lua_package_cpath")
      assert.is_truthy(read(srv.prefix .. "/logs/error.log"):find("start worker process", 1, true))
      assert.are.equal(is_root(), conf:find("\nuser nobody ", 1, true) ~= nil)
    end)
  end)

  describe("GET /health and /stats", function()
    it("answers ok with the number of documents", function()
      local status, j = req("GET", "/health")
      assert.are.equal(200, status)
      assert.are.equal("ok", j.status)
      assert.are.equal(8 + 30 + 35, j.documents)
    end)

    it("gives the index's sweeps and parameters and counts requests across workers", function()
      for _ = 1, 3 do req("GET", "/health") end
      local status, j = req("GET", "/stats")
      assert.are.equal(200, status)
      assert.are.equal(73, j.index.documents)
      assert.are.equal(2, #j.index.sweeps)
      assert.are.equal("2026-11-01", j.index.sweeps[1].name)
      assert.are.equal(38, j.index.sweeps[1].documents)
      assert.are.equal("mod", j.index.parameters.sketch)
      assert.are.equal(10, j.index.parameters.w)
      assert.are.equal("all workers", j.requests.scope)
      assert.is_true(j.requests.endpoints["/health"].total >= 4)
      assert.are.equal(65536, j.limits.max_body)
      assert.are.equal(0.3, j.limits.batch_delay)
      assert.are.equal(64, j.limits.batch_max)
      assert.are.equal(2, j.worker.count)
      assert.are.equal("ffi", j.worker.binding) -- nginx's LuaJIT: /similar goes through shingle.ffi
      assert.are.equal("thread", j.worker.writer) -- and POST /documents adds in a worker thread
      assert.is_true(j.worker.filter.started) -- each worker keeps a postings filter (--no-filter: none)
      assert.is_nil(j.worker.filter.error)
      -- and with it the postings cache (--cache 0: none), once built: a few milliseconds here
      local f
      for _ = 1, 100 do
        local _, s = req("GET", "/stats")
        f = s.worker.filter
        if f.ready then break end
        os.execute("sleep 0.05")
      end
      assert.is_true(f.ready)
      assert.is_table(f.cache)
      assert.is_nil(f.cache.note)
      assert.are.equal(j.index.documents, f.cache.covers)
      assert.is_true(f.cache.keys > 0)
      assert.is_true(f.cache.shared) -- built in nginx's master, shared by the workers
    end)
  end)

  describe("POST /similar", function()
    local files = { "samples/docs/rabin-original.txt", "samples/docs/rabin-edited.txt", "samples/docs/unionfind-blog.html",
      "samples/docs/weather.txt", "samples/docs/rabin-excerpt.txt" }
    local variants = {
      { q = "", args = "" },
      { q = "?threshold=0.2&top=2", args = "-t 0.2 --top 2" },
      { q = "?containment=true&threshold=0.6", args = "--containment -t 0.6" },
      { q = "?policy=either&threshold=0.7", args = "--policy either -t 0.7" },
      { q = "?policy=both&containment=1", args = "--policy both --containment" },
      { q = "?max_df=1&threshold=0.1&policy=either", args = "--max-df 1 -t 0.1 --policy either" },
      { q = "?threshold=0.1&policy=either", args = "-t 0.1 --policy either" },
    }
    it("gives the same hits as `shingle similar --json` for every document and option", function()
      local nonempty, cut = 0, 0
      for _, f in ipairs(files) do
        local n = {}
        for _, v in ipairs(variants) do
          local status, j = req("POST", "/similar" .. v.q, { body = read(f) })
          assert.are.equal(200, status, f .. v.q)
          local cli = jsonl(cli_json("similar --json " .. v.args .. " " .. db .. " " .. f))
          same(cli, j.hits, f .. v.q)
          if #cli > 0 then nonempty = nonempty + 1 end
          n[#n + 1] = #cli
        end
        -- the common-value cutoff (max_df = 1: values two documents hold) finds fewer than no cutoff
        assert.is_true(n[#n - 1] <= n[#n])
        if n[#n - 1] < n[#n] then cut = cut + 1 end
      end
      assert.is_true(nonempty >= 20)
      assert.is_true(cut >= 2)
    end)

    it("finds a document of the second sweep from an edited copy", function()
      local status, j = req("POST", "/similar", { body = texts[1]:gsub("w2", "again", 2) })
      assert.are.equal(200, status)
      local urls = {}
      for _, h in ipairs(j.hits) do urls[h.url] = h end
      assert.is_truthy(urls["http://a.example/p1.html"])
      assert.is_true(urls["http://a.example/p1.html"].resemblance > 0.5)
    end)

    it("answers an empty list as [] when nothing resembles the document", function()
      local status, j, raw = req("POST", "/similar", { body = "entirely unrelated words that appear in no indexed page at all, none" })
      assert.are.equal(200, status)
      assert.are.equal(0, #j.hits)
      assert.is_truthy(raw:find('"hits":[]', 1, true), raw)
    end)
  end)

  describe("GET /cluster, /lost, /changes and POST /explain", function()
    it("answer as cluster-of, lost, changes and explain do on the command line", function()
      for _, url in ipairs({ "samples/docs/unionfind.txt", "http://a.example/p3.html", "http://a.example/p2.html" }) do
        local status, j = req("GET", "/cluster?url=" .. url)
        assert.are.equal(200, status, url)
        same(cjson.decode(cli_json("cluster-of --json " .. db .. " " .. url)), j.clusters, url)
        local status2, j2 = req("GET", "/lost?url=" .. url)
        assert.are.equal(200, status2, url)
        same(cjson.decode(cli_json("lost --json " .. db .. " " .. url)), j2.found, url)
      end
      local status, j = req("GET", "/changes?from=2026-11-01&to=2026-11-08&small=0.6")
      assert.are.equal(200, status)
      same(cjson.decode(cli_json("changes --json " .. db .. " --from 2026-11-01 --to 2026-11-08 --small 0.6")), j)
      assert.are.equal(10, j.moved_between_servers)
      local a, b = "samples/docs/rabin-original.txt", "samples/docs/rabin-excerpt.txt"
      local status3, e = req("POST", "/explain?w=8", { body = cjson.encode({ a = read(a), b = read(b) }) })
      assert.are.equal(200, status3)
      same(cjson.decode(cli_json("explain --json -w 8 " .. a .. " " .. b)), e)
      assert.are.equal(1, e.exact.contained)
    end)
  end)

  describe("POST /documents", function()
    it("adds a document, answers with its cluster, and the command line sees it", function()
      local text = texts[4]:gsub("w3", "changed", 2)
      local status, j = req("POST", "/documents?url=http://d.example/copy4&sweep=2026-11-15", { body = text })
      assert.are.equal(201, status)
      assert.are.equal("http://d.example/copy4", j.url)
      assert.are.equal("2026-11-15", j.sweep)
      local urls = {}
      for _, m in ipairs(j.members) do urls[m.url] = true end
      assert.is_true(urls["http://a.example/p4.html"])
      assert.are.equal(j.size, #j.members)
      local cli = cjson.decode(cli_json("cluster-of --json " .. db .. " http://d.example/copy4"))
      assert.are.equal(j.cluster, cli[1].cluster)
      assert.are.equal(#j.members, #cli[1].members)
      local _, h = req("GET", "/health")
      assert.are.equal(74, h.documents)
    end)

    it("adds documents posted together in one write transaction", function()
      local _, before = req("GET", "/stats")
      local parts = {}
      for i = 1, 12 do
        local f = ("%s/post%d"):format(dir, i)
        write(f, texts[10 + i] .. " batch " .. i)
        parts[#parts + 1] = ("-o /dev/null -w '%%{http_code}\\n' --data-binary @%s '%s/documents?url=http://e.example/%d&sweep=2026-11-22'")
          :format(f, srv.base, i)
      end
      local out, code = run(CURL .. "-s -Z --parallel-immediate --parallel-max 12 " .. table.concat(parts, " --next "))
      assert.are.equal(0, code, out)
      local created = 0
      for s in out:gmatch("%d%d%d") do if s == "201" then created = created + 1 end end
      assert.are.equal(12, created, out)
      local _, after = req("GET", "/stats")
      assert.are.equal(12, after.writes.documents - before.writes.documents)
      local tx = after.writes.transactions - before.writes.transactions
      -- two workers, each flushing its queue 300 ms after its first document
      assert.is_true(tx >= 1 and tx <= 4, "transactions: " .. tx)
      local _, h = req("GET", "/health")
      assert.are.equal(86, h.documents)
    end)

    it("adds in the event loop with --writer loop, answering alike", function()
      local d2 = tmpdir()
      local s2
      local ok, err = pcall(function()
        local out, code = run(SHINGLE .. "index add " .. d2 .. "/idx samples/docs --sweep s -q")
        assert(code == 0, out)
        s2 = start(d2 .. "/idx", d2, "--writer loop --no-access-log")
        local _, st = request(s2.base, "GET", "/stats", { dir = d2 })
        assert.are.equal("loop", st.worker.writer)
        local status, j = request(s2.base, "POST", "/documents?url=http://f.example/1&sweep=s2",
          { dir = d2, body = read("samples/docs/rabin-edited.txt") })
        assert.are.equal(201, status)
        local cli = cjson.decode(cli_json("cluster-of --json " .. d2 .. "/idx http://f.example/1"))
        assert.are.equal(j.cluster, cli[1].cluster)
        assert.are.equal(#j.members, #cli[1].members)
        -- the same URL with other content in the same sweep: refused, as by the thread writer
        local status2, j2 = request(s2.base, "POST", "/documents?url=http://f.example/1&sweep=s2",
          { dir = d2, body = read("samples/docs/weather.txt") })
        assert.are.equal(400, status2)
        assert.is_truthy(j2.error:find("already in sweep s2 with other content", 1, true), j2.error)
      end)
      if s2 then stop(s2, "KILL") end
      exec("rm -rf " .. d2)
      assert(ok, err)
    end)

    it("refuses a URL the sweep has with other content (the writer thread)", function()
      local status, j = req("POST", "/documents?url=http://e.example/1&sweep=2026-11-22", { body = texts[2] })
      assert.are.equal(400, status)
      assert.is_truthy(j.error:find("already in sweep 2026-11-22 with other content", 1, true), j.error)
      local _, h = req("GET", "/health")
      assert.are.equal(86, h.documents)
    end)
  end)

  describe("bad requests", function()
    local big = ("word "):rep(20000) -- 100,000 bytes > 64K
    local cases = {
      { "POST", "/similar", nil, 400, "the body is empty" },
      { "POST", "/similar", { body = big }, 413, "larger than this server takes" },
      { "POST", "/similar", { body = big, headers = { "Transfer-Encoding: chunked" } }, 413, "larger than this server takes" },
      { "POST", "/documents?url=x", { body = big }, 413, "larger than" },
      { "POST", "/similar", { body = "caf\xe9 au lait, not UTF-8" }, 400, "not UTF-8" },
      { "POST", "/similar?bogus=1", { body = "text" }, 400, "unknown parameter 'bogus' for /similar" },
      { "POST", "/similar?threshold=2", { body = "text" }, 400, "parameter 'threshold' is 2" },
      { "POST", "/similar?top=0", { body = "text" }, 400, "parameter 'top' is 0" },
      { "POST", "/similar?top=1&top=2", { body = "text" }, 400, "given 2 times" },
      { "POST", "/similar?policy=most", { body = "text" }, 400, "use one of resemblance, containment, either, both" },
      { "POST", "/similar?containment=maybe", { body = "text" }, 400, "use true or false" },
      { "POST", "/similar?max_df=-1", { body = "text" }, 400, "parameter 'max_df' is -1; use a whole number from 0" },
      { "POST", "/similar", { body = "!!! ??? ... --- ***" }, 400, "no shingles to look up" },
      { "GET", "/similar", nil, 405, "/similar takes POST, not GET" },
      { "DELETE", "/documents?url=x", nil, 405, "takes POST" },
      { "POST", "/documents", { body = "text" }, 400, "/documents needs the parameter 'url'" },
      { "POST", "/documents?url=", { body = "text" }, 400, "parameter 'url' needs a value" },
      { "GET", "/cluster?url=http://nowhere.example/", nil, 404, "http://nowhere.example/ is not in the index" },
      { "GET", "/cluster", nil, 400, "/cluster needs the parameter 'url'" },
      { "GET", "/lost?url=http://nowhere.example/", nil, 404, "is not in the index" },
      { "POST", "/lost?url=samples/docs/weather.txt", nil, 405, "takes GET" },
      { "GET", "/changes?from=2026-11-01&to=1999", nil, 404, "no sweep named '1999'" },
      { "GET", "/changes?from=2026-11-01", nil, 400, "needs the parameter 'to'" },
      { "POST", "/explain", { body = "not json" }, 400, "JSON object" },
      { "POST", "/explain", { body = '{"a": "text", "b": 3}' }, 400, "two strings" },
      { "POST", "/explain", { body = '{"a": "x", "b": "y", "c": "z"}' }, 400, "unknown field 'c'" },
      { "GET", "/health?verbose=1", nil, 400, "unknown parameter 'verbose' for /health; it takes none" },
      { "GET", "/nothing/here", nil, 404, "no endpoint /nothing/here" },
    }
    it("get a fitting 4xx status and a JSON message", function()
      for _, c in ipairs(cases) do
        local status, j, raw, head = req(c[1], c[2], c[3])
        local what = c[1] .. " " .. c[2]
        assert.are.equal(c[4], status, what .. ": " .. raw)
        assert.is_table(j, what .. ": not JSON: " .. raw)
        assert.is_string(j.error, what)
        assert.is_truthy(j.error:find(c[5], 1, true), what .. ": " .. j.error)
        assert.is_truthy(head:lower():find("content-type: application/json", 1, true), what)
        if status == 405 then assert.is_truthy(head:find("Allow: ", 1, true), what) end
      end
    end)

    it("leave the server answering (no worker crashed, nothing logged as a Lua error)", function()
      local status = req("GET", "/health")
      assert.are.equal(200, status)
      local log = read(srv.prefix .. "/logs/error.log")
      assert.is_nil(log:find("internal error", 1, true))
      assert.is_nil(log:find("lua entry thread aborted", 1, true))
      assert.is_nil(log:find("exited on signal", 1, true))
    end)
  end)
end)

describe("shingle serve refuses to start", function()
  local dir
  setup(function() dir = tmpdir() end)
  teardown(function() exec("rm -rf " .. dir) end)

  local function check(db, extra)
    local out, code = run(SHINGLE .. "serve " .. db .. " --check --prefix " .. dir .. "/srv " .. (extra or ""))
    return out, code
  end

  it("on a missing index", function()
    local out, code = check(dir .. "/none")
    assert.are.equal(1, code)
    assert.is_truthy(out:find("does not exist: make an index with `shingle index add", 1, true), out)
  end)

  it("on a directory that holds no index", function()
    exec("mkdir -p " .. dir .. "/plain")
    local out, code = check(dir .. "/plain")
    assert.are.equal(1, code)
    assert.is_truthy(out:find("holds no index (no data.mdb)", 1, true), out)
  end)

  it("on a corrupt index", function()
    exec("mkdir -p " .. dir .. "/corrupt")
    write(dir .. "/corrupt/data.mdb", ("not an LMDB file\n"):rep(1000))
    local out, code = check(dir .. "/corrupt")
    assert.are.equal(1, code)
    assert.is_truthy(out:find("the index is corrupt or not a shingle index", 1, true), out)
  end)

  it("on another program's LMDB environment", function()
    exec("mkdir -p " .. dir .. "/foreign")
    local out, code = run("printf 'VERSION=3\\nformat=bytevalue\\ntype=btree\\nHEADER=END\\n 666f6f\\n 626172\\nDATA=END\\n' | mdb_load "
      .. dir .. "/foreign")
    assert.are.equal(0, code, out)
    out, code = check(dir .. "/foreign")
    assert.are.equal(1, code)
    assert.is_truthy(out:find("is an LMDB environment but not a shingle index", 1, true), out)
  end)

  it("on an empty index", function()
    local ix = assert(require("shingle.index").open(dir .. "/empty"))
    ix:close()
    local out, code = check(dir .. "/empty")
    assert.are.equal(1, code)
    assert.is_truthy(out:find("is empty: add documents", 1, true), out)
  end)

  it("on a bad --listen or --workers", function()
    local out, code = check("samples", "--listen nowhere")
    assert.are.equal(1, code)
    assert.is_truthy(out:find("--listen nowhere: give HOST:PORT", 1, true), out)
  end)

  it("on a --batch-delay or --batch-max out of range", function()
    local out, code = check("samples", "--batch-max 0")
    assert.are.equal(2, code)
    assert.is_truthy(out:find("--batch-max: give a whole number of documents from 1 to 100000", 1, true), out)
    out, code = check("samples", "--batch-delay 5000")
    assert.are.equal(2, code)
    assert.is_truthy(out:find("--batch-delay: give milliseconds from 0 to 1000", 1, true), out)
    out, code = check("samples", "--cache 1.5")
    assert.are.equal(2, code)
    assert.is_truthy(out:find("--cache: give a whole number of MB from 0 to 1048576", 1, true), out)
  end)
end)

describe("shingle serve, the workers' access to the index", function()
  local dir, db
  setup(function()
    dir = tmpdir()
    db = dir .. "/idx"
    local out, code = run(SHINGLE .. "index add " .. db .. " samples/docs --sweep s -q")
    assert(code == 0, out)
    exec("chmod 600 " .. db .. "/data.mdb " .. db .. "/lock.mdb; chmod 700 " .. db)
  end)
  teardown(function() exec("rm -rf " .. dir) end)

  local function mode(path)
    return run("stat -c '%A %G' " .. path):match("^(%S+ %S+)")
  end

  it("is given through the group of the index files when started as root, or needs nothing", function()
    local out, code = run(SHINGLE .. "serve " .. db .. " --check --prefix " .. dir .. "/srv")
    assert.are.equal(0, code, out)
    if is_root() then
      local g = run("id -gn nobody"):match("%S+")
      assert.are.equal("-rw-rw---- " .. g, mode(db .. "/data.mdb"))
      assert.are.equal("-rw-rw---- " .. g, mode(db .. "/lock.mdb"))
      assert.are.equal("drwx--x--- " .. g, mode(db))
      assert.is_truthy(out:find("the workers run as nobody: gave group " .. g .. " rw access to " .. db .. "/lock.mdb", 1, true), out)
      -- read-only serving asks for no more than reading data.mdb
      exec("chmod 600 " .. db .. "/data.mdb")
      out, code = run(SHINGLE .. "serve " .. db .. " --read-only --check --prefix " .. dir .. "/srv")
      assert.are.equal(0, code, out)
      assert.are.equal("-rw-r----- " .. g, mode(db .. "/data.mdb"))
    else
      assert.are.equal("-rw-------", mode(db .. "/data.mdb"):match("%S+"))
    end
  end)

  it("is refused with the exact change to make when a parent directory is closed to the workers", function()
    if not is_root() then
      local out, code = run(SHINGLE .. "serve " .. db .. " --check --prefix " .. dir .. "/srv")
      assert.are.equal(0, code, out) -- the workers are this user: nothing to change
      return
    end
    exec("mkdir -p " .. dir .. "/closed && chmod 700 " .. dir .. "/closed && cp -r " .. db .. " " .. dir .. "/closed/idx")
    local out, code = run(SHINGLE .. "serve " .. dir .. "/closed/idx --check --prefix " .. dir .. "/srv2")
    assert.are.equal(1, code, out)
    assert.is_truthy(out:find("nginx's workers run as nobody and cannot enter " .. dir .. "/closed (mode rwx------)", 1, true), out)
    assert.is_truthy(out:find("run `chmod o+x " .. dir .. "/closed`", 1, true), out)
  end)
end)

describe("shingle serve stops", function()
  it("on SIGINT, read-only (refusing additions with 403), classic binding, with the user's own directives included", function()
    local dir = tmpdir()
    local srv
    local ok, err = pcall(function()
      local out, code = run(SHINGLE .. "index add " .. dir .. "/idx samples/docs --sweep s -q")
      assert(code == 0, out)
      write(dir .. "/extra.conf", "location = /ping { return 200 'pong'; }\n")
      srv = start(dir .. "/idx", dir, "--read-only --no-access-log --no-filter --binding classic --server-conf " .. dir .. "/extra.conf")
      local _, st = request(srv.base, "GET", "/stats", { dir = dir })
      assert.are.equal("classic", st.worker.binding)
      assert.is_false(st.worker.filter.started)
      for _, f in ipairs({ "samples/docs/rabin-edited.txt", "samples/docs/unionfind-blog.html" }) do
        local _, j = request(srv.base, "POST", "/similar?threshold=0.3", { dir = dir, body = read(f) })
        same(jsonl(cli_json("similar --json -t 0.3 " .. dir .. "/idx " .. f)), j.hits, f)
      end
      local _, _, pong = request(srv.base, "GET", "/ping", { dir = dir })
      assert.are.equal("pong", pong)
      local status, j = request(srv.base, "POST", "/documents?url=x", { dir = dir, body = "some text to add here" })
      assert.are.equal(403, status)
      assert.is_truthy(j.error:find("read-only", 1, true))
      local status2 = request(srv.base, "POST", "/similar", { dir = dir, body = read("samples/docs/weather.txt") })
      assert.are.equal(200, status2)
      assert.is_true(stop(srv, "INT"), "nginx did not stop on SIGINT")
      assert.is_truthy(read(srv.prefix .. "/logs/error.log"):find("signal 2 (SIGINT) received", 1, true))
      assert.is_nil(read(srv.prefix .. "/logs/access.log"))
    end)
    stop(srv, "KILL")
    exec("rm -rf " .. dir)
    assert(ok, err)
  end)
end)

describe("examples/nginx.conf", function()
  it("mounts the handlers in a stand-alone nginx once its two paths are replaced", function()
    local dir = tmpdir()
    local srv
    local ok, err = pcall(function()
      local out, code = run(SHINGLE .. "index add " .. dir .. "/idx samples/docs --sweep s -q")
      assert(code == 0, out)
      -- what docs/serve.md tells users: --check sets up the workers' access to the index
      out, code = run(SHINGLE .. "serve " .. dir .. "/idx --check --prefix " .. dir .. "/srv")
      assert(code == 0, out)
      local root = run("pwd"):match("[^\n]+")
      local conf = assert(read("examples/nginx.conf"))
      exec("mkdir -p " .. dir .. "/ex/logs " .. dir .. "/ex/tmp")
      srv = launch(dir, function(port)
        local c = conf:gsub("/opt/shingle", root):gsub("/srv/crawl%.idx", dir .. "/idx"):gsub("127%.0%.0%.1:8080", "127.0.0.1:" .. port)
        write(dir .. "/ex/nginx.conf", c)
        return ("env -u LD_PRELOAD nginx -p %s/ex/ -c %s/ex/nginx.conf -e %s/ex/logs/error.log"):format(dir, dir, dir)
      end, "/shingle/health")
      local status, j = request(srv.base, "POST", "/comments/check", { dir = dir, body = read("samples/docs/rabin-edited.txt") })
      assert.are.equal(200, status)
      assert.is_true(#j.hits >= 2)
      same(jsonl(cli_json("similar --json " .. dir .. "/idx samples/docs/rabin-edited.txt")), j.hits)
      local status2, j2 = request(srv.base, "GET", "/shingle/cluster?url=samples/docs/unionfind.txt", { dir = dir })
      assert.are.equal(200, status2)
      assert.is_true(#j2.clusters[1].members >= 2)
      local status3, j3 = request(srv.base, "GET", "/shingle/nothing", { dir = dir })
      assert.are.equal(404, status3)
      assert.is_truthy(j3.error:find("/shingle/similar", 1, true))
      assert.is_true(stop(srv), "nginx did not stop")
    end)
    stop(srv, "KILL")
    exec("rm -rf " .. dir)
    assert(ok, err)
  end)
end)
