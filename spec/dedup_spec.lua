-- shingle dedup: one document kept per cluster of near-duplicates, written
-- in the format it came in (JSON Lines and WARC records byte for byte), and
-- a map of every removed document to the one kept.
local dedup = require "shingle.dedup"
local core = require "shingle.core"
local cjson = require "cjson"
local support = require "support"
local tmpdir, read, write = support.tmpdir, support.read, support.write

local function lines(s)
  local t = {}
  for l in s:gmatch("([^\n]*)\n") do t[#t + 1] = l end
  return t
end

local function jsonl(path)
  local t = {}
  for _, l in ipairs(lines(read(path))) do t[#t + 1] = cjson.decode(l) end
  return t
end

local lua_cmd = support.shingle_cmd

-- Four families (an original, a copy with a few words changed, a longer
-- version, an exact copy) and four unrelated documents.
local rand = support.rng(21)
local family, texts = {}, {}
for f = 1, 4 do
  local base = support.words(rand, 400, 30000)
  local edited = {}
  for i, w in ipairs(base) do edited[i] = (i % 97 == 0) and "edited" or w end
  local longer = {}
  for i, w in ipairs(base) do longer[i] = w end
  for i = 1, 30 do longer[#longer + 1] = "appendix" .. i end
  for _, t in ipairs({ base, edited, longer, base }) do
    texts[#texts + 1] = table.concat(t, " ")
    family[#texts] = f
  end
end
for _ = 1, 4 do texts[#texts + 1] = table.concat(support.words(rand, 300, 30000), " ") end

-- JSON Lines written by hand in several styles (key order, spacing, escapes),
-- so that "byte for byte" can be told from "re-encoded"
local function record(i)
  local date = ("2024-%02d-%02dT10:00:00Z"):format((i * 5) % 12 + 1, i % 27 + 1)
  local style = i % 3
  if style == 0 then
    return ('{"url": "doc-%d", "text": %s, "date": "%s"}'):format(i, cjson.encode(texts[i]), date)
  elseif style == 1 then
    return ('{ "date":"%s","text":%s ,"url":"doc-%d" ,"extra":[1, 2.50, "\\u00e9"] }'):format(date, cjson.encode(texts[i]), i)
  end
  return ('{"text":%s,"url":"doc-%d","date":"%s"}\r'):format(cjson.encode(texts[i]), i, date)
end

describe("shingle dedup", function()
  local dir
  setup(function()
    dir = tmpdir()
    local t = {}
    for i = 1, #texts do
      t[#t + 1] = record(i)
      if i == 5 then t[#t + 1] = "{ not json" end
      if i == 9 then t[#t + 1] = "" end
    end
    write(dir .. "/docs.jsonl", table.concat(t, "\n") .. "\n")
  end)
  teardown(function() os.execute("rm -rf " .. dir) end)

  local function run(out, opts, inputs)
    opts = opts or {}
    opts.outdir, opts.quiet, opts.threads = dir .. "/" .. out, true, 2
    local d = dedup.new(opts)
    local sum = assert(d:run(inputs or { dir .. "/docs.jsonl" }))
    return sum, d
  end

  it("keeps one document of each family and writes the kept lines byte for byte", function()
    local sum = run("first")
    assert.are.equal(20, sum.documents)
    assert.are.equal(8, sum.kept)
    assert.are.equal(12, sum.removed)
    local kept = lines(read(dir .. "/first/docs.jsonl"))
    local want = {}
    for _, f in ipairs({ 1, 5, 9, 13, 17, 18, 19, 20 }) do want[#want + 1] = record(f) end
    assert.are.same(want, kept)
  end)

  it("maps each removed document to the kept one, with estimated and exact resemblance", function()
    local removed = jsonl(dir .. "/first/removed.jsonl")
    assert.are.equal(12, #removed)
    local err = 0
    for _, r in ipairs(removed) do
      local a, b = tonumber(r.removed:match("%d+")), tonumber(r.kept:match("%d+"))
      assert.are.equal(family[a], family[b])
      assert.are.equal((family[a] - 1) * 4 + 1, b) -- keep first: the family's first document
      assert.is_true(r.exact.resemblance >= 0.8, cjson.encode(r))
      assert.is_true(r.resemblance >= 0 and r.resemblance <= 1)
      err = err + math.abs(r.resemblance - r.exact.resemblance)
      assert.are.equal(a % 4 == 0 and "exact" or "similar", r.relation)
    end
    -- MOD_25 estimates from about 16 values each: right on average
    assert.is_true(err / #removed < 0.1, err / #removed)
  end)

  it("keeps the longest, or the newest, when asked", function()
    run("longest", { keep = "longest" })
    local kept = {}
    for _, l in ipairs(lines(read(dir .. "/longest/docs.jsonl"))) do kept[#kept + 1] = l:match('"url": ?"(doc%-%d+)"') end
    assert.are.same({ "doc-3", "doc-7", "doc-11", "doc-15", "doc-17", "doc-18", "doc-19", "doc-20" }, kept)
    run("newest", { keep = "newest" })
    local newest = {}
    for _, l in ipairs(lines(read(dir .. "/newest/docs.jsonl"))) do newest[#newest + 1] = tonumber(l:match('doc%-(%d+)')) end
    for f = 1, 4 do
      local best
      for i = (f - 1) * 4 + 1, f * 4 do
        local d = record(i):match("2024%-%d%d%-%d%d")
        if not best or d > best.d then best = { i = i, d = d } end
      end
      assert.are.equal(best.i, newest[f])
    end
  end)

  it("reads gzip JSON Lines and writes the kept lines uncompressed", function()
    assert(os.execute("gzip -c " .. dir .. "/docs.jsonl > " .. dir .. "/docs2.jsonl.gz"))
    run("gz", nil, { dir .. "/docs2.jsonl.gz" })
    assert.are.equal(read(dir .. "/first/docs.jsonl"), read(dir .. "/gz/docs2.jsonl"))
  end)

  it("keeps the cluster run, so recluster works on it", function()
    local out, code = support.run(lua_cmd() .. " recluster -q " .. dir .. "/first/run --threshold 0.95")
    assert.are.equal(0, code, out)
  end)

  it("copies the kept WARC records byte for byte (gzip members as they were)", function()
    local members = {}
    for i = 1, #texts do
      local body = "<html><body><p>" .. texts[i] .. "</p></body></html>"
      local http = "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n" .. body
      local rec = "WARC/1.0\r\nWARC-Type: response\r\nWARC-Target-URI: http://example.com/" .. i
        .. "\r\nWARC-Date: 2024-01-01T00:00:00Z\r\nWARC-Record-ID: <urn:uuid:" .. i .. ">\r\n"
        .. "Content-Type: application/http; msgtype=response\r\nContent-Length: " .. #http .. "\r\n\r\n" .. http .. "\r\n\r\n"
      write(dir .. "/rec.warc", rec)
      assert(os.execute("gzip -c -n " .. dir .. "/rec.warc > " .. dir .. "/rec.warc.gz"))
      members[i] = read(dir .. "/rec.warc.gz")
    end
    write(dir .. "/crawl.warc.gz", table.concat(members))
    local sum = run("warc", nil, { dir .. "/crawl.warc.gz" })
    assert.are.equal(8, sum.kept)
    local want = {}
    for _, i in ipairs({ 1, 5, 9, 13, 17, 18, 19, 20 }) do want[#want + 1] = members[i] end
    assert.are.equal(table.concat(want), read(dir .. "/warc/crawl.warc.gz"))
  end)

  it("lists the kept files of a directory, and copies or links them into a tree", function()
    assert(os.execute("mkdir -p " .. dir .. "/tree/sub"))
    for i = 1, #texts do write(("%s/tree/%s%02d.txt"):format(dir, i % 2 == 0 and "sub/" or "", i), texts[i]) end
    run("dir", { files = "copy" }, { dir .. "/tree" })
    local kept = lines(read(dir .. "/dir/kept.txt"))
    assert.are.equal(8, #kept)
    for _, p in ipairs(kept) do
      local rel = p:sub(#dir + 2) -- tree/...
      assert.are.equal(read(p), read(dir .. "/dir/files/" .. rel))
    end
    run("dirlink", { files = "link" }, { dir .. "/tree" })
    local a = require("lfs").attributes(dir .. "/dirlink/files/tree/01.txt")
    assert.are.equal(2, a.nlink)
  end)

  it("writes the kept messages of an mbox as an mbox", function()
    local parts = {}
    for i = 1, #texts do
      parts[#parts + 1] = ("From sender%d@example.org Mon Jan  1 10:00:%02d 2024\nFrom: sender%d@example.org\nSubject: note %d\n\n%s\n%s\n")
        :format(i, i, i, i, texts[i], i == 1 and ">From the archive: escaped\n" or "")
    end
    write(dir .. "/mail.mbox", table.concat(parts, "\n"))
    run("mbox", nil, { dir .. "/mail.mbox" })
    local r = assert(core.mbox(dir .. "/mbox/mail.mbox"))
    local docs = r:batch(100)
    assert.are.equal(8, #docs)
    assert.are.equal("From sender1@example.org Mon Jan  1 10:00:01 2024", docs[1].from_line)
    assert.is_truthy(docs[1].text:find("\nFrom the archive: escaped", 1, true))
  end)

  it("runs from the command line on standard input", function()
    local out, code = support.run("gzip -c " .. dir .. "/docs.jsonl | " .. lua_cmd() .. " dedup -q - -o " .. dir .. "/cli")
    assert.are.equal(0, code, out)
    assert.is_truthy(out:find("kept 8, removed 12 (4 exact, 0 lexically equal, 0 shingle-equal, 8 similar)", 1, true), out)
    assert.are.equal(read(dir .. "/first/docs.jsonl"), read(dir .. "/cli/stdin.jsonl"))
  end)

  it("rejects an unknown keep policy", function()
    assert.has_error(function() dedup.new{ outdir = dir .. "/x", keep = "oldest" } end,
      "unknown keep 'oldest'; use first, longest or newest")
  end)

  it("orders dates of every common form", function()
    local k = dedup.date_key
    assert.is_true(k("2024-03-01") > k("2024-02-29T23:59:59Z"))
    assert.is_true(k("Mon, 4 Mar 2024 10:00:00 +0100") > k("2024-03-03"))
    assert.is_true(k("Mon Jan  1 10:00:00 2024") < k("Tue Jan  2 00:00:00 2024"))
    assert.is_true(k(1700000000) < k("2024-01-01"))
    assert.is_nil(k("yesterday"))
  end)
end)
