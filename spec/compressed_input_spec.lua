-- Compressed inputs are read transparently (core/zio.h): gzip and zstd files
-- in a directory, .jsonl.gz / .jsonl.zst, .warc.zst, and standard input,
-- recognised by magic bytes; a compression bomb is refused, not read.
local input = require "shingle.input"
local pipeline = require "shingle.pipeline"
local core = require "shingle.core"
local cjson = require "cjson"
local support = require "support"
local tmpdir, read, write = support.tmpdir, support.read, support.write

local lua_cmd = support.shingle_cmd

local function sh(cmd) assert(os.execute(cmd), cmd) end

local function run_cluster(inputs, outdir, extra)
  local cfg = { outdir = outdir, quiet = true, threads = 2, threshold = 0.5 }
  for k, v in pairs(extra or {}) do cfg[k] = v end
  local msgs = {}
  cfg.log = function(m) msgs[#msgs + 1] = m end
  local p = pipeline.new(cfg)
  local sum = assert(p:run(inputs))
  local clusters = {}
  for c in p:clusters() do clusters[#clusters + 1] = c end
  return sum, clusters, msgs
end

local function urls_of(cluster)
  local u = {}
  for _, m in ipairs(cluster.members) do u[#u + 1] = m.url:match("[^/]+$") end
  table.sort(u)
  return u
end

local rand = support.rng(14)
local base = table.concat(support.words(rand, 400, 20000), " ")
local other = table.concat(support.words(rand, 400, 20000), " ")

describe("compressed documents in a directory", function()
  local dir
  setup(function()
    dir = tmpdir()
    sh("mkdir -p " .. dir .. "/in")
    write(dir .. "/in/a.txt", base)
    write(dir .. "/b.txt", base .. " and a few words more at the end")
    sh("gzip -c " .. dir .. "/b.txt > " .. dir .. "/in/b.txt.gz")
    write(dir .. "/c.txt", "a preface " .. base)
    sh("zstd -q -c " .. dir .. "/c.txt > " .. dir .. "/in/c.txt.zst")
    write(dir .. "/in/d.txt", other)
    write(dir .. "/e.html", "<html><body><p>" .. other:gsub(" ", " <b>x</b> ", 30) .. "</p></body></html>")
    sh("gzip -c " .. dir .. "/e.html > " .. dir .. "/in/e.html.gz")
  end)
  teardown(function() os.execute("rm -rf " .. dir) end)

  it("decompresses .gz and .zst documents and clusters them with their plain near-copies", function()
    local sum, clusters = run_cluster({ dir .. "/in" }, dir .. "/out")
    assert.are.equal(5, sum.documents)
    assert.are.equal(0, sum.skipped)
    table.sort(clusters, function(x, y) return x.size > y.size end)
    assert.are.same({ "a.txt", "b.txt.gz", "c.txt.zst" }, urls_of(clusters[1]))
  end)

  it("takes page.html.gz as HTML by its name without the compression suffix", function()
    assert.is_true(input.is_html(dir .. "/in/e.html.gz"))
    assert.is_true(input.html_by_name("x/PAGE.HTM.ZST"))
    assert.are.equal("pages.jsonl", input.bare_name("pages.jsonl.gz"))
    -- stripped of markup, the page is the plain text d.txt with 30 extra words
    local _, clusters = run_cluster({ dir .. "/in" }, dir .. "/out2", { threshold = 0.4 })
    local found
    for _, c in ipairs(clusters) do
      local u = urls_of(c)
      if u[1] == "d.txt" then found = u end
    end
    assert.are.same({ "d.txt", "e.html.gz" }, found)
  end)

  it("reads the same bytes through core.zread as the plain file holds", function()
    local text, kind = core.zread(dir .. "/in/c.txt.zst")
    assert.are.equal("zstd", kind)
    assert.are.equal(read(dir .. "/c.txt"), text)
    local t2, k2 = core.zread(dir .. "/in/a.txt")
    assert.are.equal("plain", k2)
    assert.are.equal(base, t2)
  end)
end)

describe("compressed JSON Lines and WARC", function()
  local dir
  setup(function()
    dir = tmpdir()
    local lines = {}
    for i = 1, 300 do
      lines[#lines + 1] = cjson.encode({ url = "u" .. i, text = (i % 3 == 0) and base or (other .. " variant " .. i) })
    end
    write(dir .. "/docs.jsonl", table.concat(lines, "\n") .. "\n")
    sh("gzip -c " .. dir .. "/docs.jsonl > " .. dir .. "/docs.jsonl.gz")
    sh("zstd -q -c " .. dir .. "/docs.jsonl > " .. dir .. "/docs.jsonl.zst")
    local warc = {}
    for i = 1, 3 do
      local body = "<html><body><p>" .. base .. " page " .. i .. "</p></body></html>"
      local http = "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: " .. #body .. "\r\n\r\n" .. body
      warc[#warc + 1] = "WARC/1.0\r\nWARC-Type: response\r\nWARC-Target-URI: http://example.com/" .. i
        .. "\r\nWARC-Date: 2024-01-01T00:00:00Z\r\nWARC-Record-ID: <urn:uuid:" .. i .. ">\r\n"
        .. "Content-Type: application/http; msgtype=response\r\nContent-Length: " .. #http .. "\r\n\r\n" .. http .. "\r\n\r\n"
    end
    write(dir .. "/crawl.warc", table.concat(warc))
    sh("zstd -q -c " .. dir .. "/crawl.warc > " .. dir .. "/crawl.warc.zst")
  end)
  teardown(function() os.execute("rm -rf " .. dir) end)

  it("gives the same clusters for .jsonl, .jsonl.gz and .jsonl.zst", function()
    local results = {}
    for _, name in ipairs({ "docs.jsonl", "docs.jsonl.gz", "docs.jsonl.zst" }) do
      local sum, clusters = run_cluster({ dir .. "/" .. name }, dir .. "/out-" .. name)
      assert.are.equal(300, sum.documents)
      local sizes = {}
      for _, c in ipairs(clusters) do sizes[#sizes + 1] = c.size end
      table.sort(sizes)
      results[#results + 1] = sizes
    end
    assert.are.same(results[1], results[2])
    assert.are.same(results[1], results[3])
    assert.are.same({ 100, 200 }, results[1])
  end)

  it("reads a zstd-compressed WARC file", function()
    local docs = {}
    for d in input.documents(dir .. "/crawl.warc.zst") do docs[#docs + 1] = d end
    assert.are.equal(3, #docs)
    assert.are.equal("http://example.com/2", docs[2].url)
    assert.is_truthy(docs[2].text:find("page 2", 1, true))
  end)

  it("reads gzip JSON Lines from standard input, recognised by magic bytes and content", function()
    local out, code = support.run(lua_cmd() .. " cluster -q - -o " .. dir .. "/stdin-out < " .. dir .. "/docs.jsonl.gz")
    assert.are.equal(0, code, out)
    assert.is_truthy(out:find("documents 300 (skipped 0)", 1, true), out)
  end)

  it("reads a zstd WARC from standard input", function()
    local out, code = support.run(lua_cmd() .. " cluster -q - -o " .. dir .. "/stdin-warc < " .. dir .. "/crawl.warc.zst")
    assert.are.equal(0, code, out)
    assert.is_truthy(out:find("documents 3 (skipped 0)", 1, true), out)
    local urls = {}
    for line in read(dir .. "/stdin-warc/docs.jsonl"):gmatch("[^\n]+") do urls[#urls + 1] = cjson.decode(line).url end
    assert.are.same({ "http://example.com/1", "http://example.com/2", "http://example.com/3" }, urls)
  end)

  it("takes plain text on standard input as one document", function()
    local out, code = support.run("printf 'just one short document of plain words' | " .. lua_cmd()
      .. " cluster -q - -o " .. dir .. "/stdin-text")
    assert.are.equal(0, code, out)
    assert.is_truthy(out:find("documents 1 (skipped 0)", 1, true), out)
  end)
end)

describe("damaged and hostile compressed input", function()
  local dir
  setup(function()
    dir = tmpdir()
    sh("mkdir -p " .. dir .. "/in")
    write(dir .. "/in/ok.txt", base)
    -- 50 MB of zeros is a 50 KB gzip file: with --max-bytes 1M it is refused
    sh("head -c 50000000 /dev/zero | gzip -c > " .. dir .. "/in/bomb.txt.gz")
    write(dir .. "/t.txt", base)
    sh("gzip -c " .. dir .. "/t.txt | head -c 300 > " .. dir .. "/in/truncated.txt.gz")
    sh("printf 'x' | xz -c > " .. dir .. "/in/packed.txt.xz 2>/dev/null || printf '\\3757zXZ\\0\\0\\0' > " .. dir .. "/in/packed.txt.xz")
  end)
  teardown(function() os.execute("rm -rf " .. dir) end)

  it("refuses a gzip bomb, a truncated file and an xz file, each named, and goes on", function()
    local t0 = os.clock()
    local sum, _, msgs = run_cluster({ dir .. "/in" }, dir .. "/out", { max_bytes = 1024 * 1024 })
    assert.is_true(os.clock() - t0 < 5)
    assert.are.equal(4, sum.documents)
    assert.are.equal(3, sum.skipped)
    local all = table.concat(msgs, "\n")
    assert.is_truthy(all:find("bomb.txt.gz decompresses to more than the limit of 1048576 bytes", 1, true), all)
    assert.is_truthy(all:find("truncated.txt.gz is truncated", 1, true), all)
    assert.is_truthy(all:find("packed.txt.xz is xz-compressed", 1, true), all)
  end)

  it("skips an over-long line of compressed JSON Lines and reads the lines after it", function()
    local long = cjson.encode({ url = "long", text = ("word "):rep(300000) })
    write(dir .. "/lines.jsonl", cjson.encode({ url = "a", text = base }) .. "\n" .. long .. "\n"
      .. cjson.encode({ url = "b", text = base }) .. "\n")
    sh("gzip -f " .. dir .. "/lines.jsonl")
    local docs, errs = {}, {}
    local src = assert(input.source(dir .. "/lines.jsonl.gz", { max_bytes = 100000 }))
    repeat
      local d, e, done = src:batch(10)
      for _, x in ipairs(d) do docs[#docs + 1] = x.url end
      for _, x in ipairs(e) do errs[#errs + 1] = x end
    until done
    assert.are.same({ "a", "b" }, docs)
    assert.are.equal(1, #errs)
    assert.is_truthy(errs[1]:find("lines.jsonl.gz: line 2: longer than the limit of 100000 bytes", 1, true), errs[1])
  end)

  it("refuses a JSON Lines bomb (one endless line) without keeping it, and reads on", function()
    sh("(printf '{\"url\":\"a\",\"text\":\"x\"}\\n'; head -c 40000000 /dev/zero) | gzip -c > " .. dir .. "/bomb.jsonl.gz")
    local t0 = os.clock()
    local src = assert(input.source(dir .. "/bomb.jsonl.gz", { max_bytes = 1000000 }))
    local n, errs = 0, {}
    repeat
      local d, e, done = src:batch(10)
      n = n + #d
      for _, x in ipairs(e) do errs[#errs + 1] = x end
    until done
    assert.are.equal(1, n)
    assert.is_truthy(errs[1] and errs[1]:find("bomb.jsonl.gz: line 2: longer than the limit of 1000000 bytes", 1, true),
      errs[1])
    assert.is_true(os.clock() - t0 < 5)
  end)
end)
