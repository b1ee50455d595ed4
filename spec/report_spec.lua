-- shingle report: the plotting module's scales and ticks, safe HTML, and the
-- pages of a small run of each kind (cluster, collections, index sweeps):
-- sections present, numbers equal to the run's own files, every SVG and the
-- page's main content well-formed XML, hostile documents shown as text.
local support = require "support"
local tmpdir, read, write, run = support.tmpdir, support.read, support.write, support.run
local plot = require "shingle.plot"
local html = require "shingle.html"
local report = require "shingle.report"
local fixtures = require "report_fixtures"
local cjson = require "cjson"

local root = tmpdir()

local xml_n = 0
--- Whether s parses as XML (xmllint from libxml2-utils); the message if not.
local function xml_ok(s)
  xml_n = xml_n + 1
  local path = ("%s/doc%d.xml"):format(root, xml_n)
  write(path, s)
  local out, code = run("xmllint --noout '" .. path .. "'")
  return code == 0, out
end

local function svgs(page)
  local out = {}
  for s in page:gmatch("<svg.-</svg>") do out[#out + 1] = s end
  return out
end

-- the value cell of a facts row named name
local function fact(page, name)
  local esc = name:gsub("[%(%)%.%-%+%*%?%[%]%^%$%%]", "%%%0")
  local v = page:match('<th scope="row">' .. esc .. '</th><td class="num">([^<]*)</td>')
  return v and v:gsub(",", "")
end

local function count(s, pattern)
  return select(2, s:gsub(pattern, ""))
end

local function assert_well_formed(page)
  local list = svgs(page)
  assert.is_true(#list > 0, "no SVG in the page")
  for i, s in ipairs(list) do
    local ok, msg = xml_ok('<?xml version="1.0" encoding="UTF-8"?>\n' .. s)
    assert.is_true(ok, ("SVG %d is not well-formed XML: %s"):format(i, msg))
  end
  -- the generated content is XML-clean too: a stray < or & from a document would break it
  local main = page:match("<main>.*</main>")
  assert.is_truthy(main)
  local ok, msg = xml_ok('<?xml version="1.0" encoding="UTF-8"?>\n' .. main)
  assert.is_true(ok, "the main content is not well-formed: " .. tostring(msg))
end

-- nothing from the hostile fixtures reached the page as markup
local function assert_no_injection(page)
  assert.are.equal(1, count(page, "<script"), "only the page's own script")
  assert.is_nil(page:find("<img", 1, true))
  assert.is_nil(page:find("<svg onload", 1, true))
  assert.is_nil(page:find("<b onclick", 1, true))
  assert.is_nil(page:find("javascript:", 1, true) and page:find('href="javascript:', 1, true))
  assert.is_nil(page:find("[%z\1-\8\11\12\14-\31\127]"), "a control character")
  assert.is_nil(page:find("\255", 1, true), "an invalid UTF-8 byte")
end

describe("shingle.plot", function()

  describe("linear()", function()
    it("extends the range to ticks at 1, 2 or 5 times a power of ten", function()
      local s = plot.linear(0, 0.93)
      assert.are.same({ 0, 0.2, 0.4, 0.6, 0.8, 1 }, s.ticks)
      assert.are.equal(0, s.lo)
      assert.are.equal(1, s.hi)
      assert.are.same({ 0, 50000, 100000, 150000 }, plot.linear(0, 123456).ticks)
      assert.are.same({ -20, -10, 0, 10, 20, 30 }, plot.linear(-17, 28).ticks)
    end)

    it("gives ticks without floating-point noise", function()
      for _, v in ipairs(plot.linear(0.1, 0.7).ticks) do
        assert.are.equal(tonumber(("%.1f"):format(v)), v)
        assert.is_true(#plot.format(v) <= 3, plot.format(v))
      end
    end)

    it("keeps whole-number steps for counts", function()
      assert.are.same({ 0, 1, 2 }, plot.linear(0, 2, { integer = true }).ticks)
      assert.are.same({ 0, 0.5, 1, 1.5, 2 }, plot.linear(0, 2).ticks)
    end)

    it("makes a range around one value, zero, or no data at all", function()
      local one = plot.linear(5, 5)
      assert.is_true(one.lo < 5 and one.hi > 5)
      assert.are.same({ 0, 0.2, 0.4, 0.6, 0.8, 1 }, plot.linear(0, 0).ticks)
      assert.are.same({ 0, 0.2, 0.4, 0.6, 0.8, 1 }, plot.linear().ticks)
      assert.are.same({ 0, 0.2, 0.4, 0.6, 0.8, 1 }, plot.linear(0 / 0, 1 / 0).ticks)
      local z = plot.linear(3, 3, { zero = true })
      assert.are.equal(0, z.lo)
      assert.is_true(z.hi >= 3)
    end)

    it("maps its ends to 0 and 1", function()
      local s = plot.linear(0, 10)
      assert.are.equal(0, s:map(0))
      assert.are.equal(1, s:map(10))
      assert.are.equal(0.25, s:map(2.5))
    end)
  end)

  describe("log()", function()
    it("ticks the decades, with minor ticks at 2..9", function()
      local s = plot.log(3, 4200)
      assert.are.equal(1, s.lo)
      assert.are.equal(10000, s.hi)
      assert.are.same({ 1, 10, 100, 1000, 10000 }, s.ticks)
      assert.are.equal(4 * 8, #s.minor)
      assert.are.equal(2, s.minor[1])
      assert.are.equal(9000, s.minor[#s.minor])
    end)

    it("labels every other decade over twelve decades, the rest are minor ticks", function()
      local s = plot.log(1, 1e12)
      assert.are.same({ "1", "100", "10k", "1M", "100M", "10G", "1T" }, (function()
        local t = {}
        for i, v in ipairs(s.ticks) do t[i] = plot.format(v) end
        return t
      end)())
      assert.are.equal(6, #s.minor)
    end)

    it("ticks 1, 2 and 5 within a single decade", function()
      assert.are.same({ 1, 2, 5, 10 }, plot.log(2, 7).ticks)
    end)

    it("gives a decade for one value, for zero and for no data", function()
      assert.are.same({ 1, 2, 5, 10 }, plot.log(1, 1).ticks)
      assert.are.same({ 10, 20, 50, 100 }, plot.log(10, 10).ticks)
      assert.are.same({ 100, 200, 500, 1000 }, plot.log(0, 100).ticks)
      assert.are.same({ 1, 2, 5, 10 }, plot.log().ticks)
      assert.are.same({ 1, 2, 5, 10 }, plot.log(0, 0).ticks)
    end)

    it("reaches below one", function()
      assert.are.same({ 0.001, 0.01, 0.1, 1 }, plot.log(0.002, 0.5).ticks)
    end)

    it("maps a decade to equal lengths", function()
      local s = plot.log(1, 100)
      assert.are.equal(0, s:map(1))
      assert.is_true(math.abs(s:map(10) - 0.5) < 1e-12)
      assert.are.equal(-math.huge, s:map(0))
    end)
  end)

  describe("decade() and nice_step()", function()
    it("are exact at powers of ten", function()
      for e = -6, 15 do assert.are.equal(e, plot.decade(10 ^ e)) end
      assert.are.equal(2, plot.decade(999.999))
      assert.are.equal(0.2, (plot.nice_step(0.186)))
      assert.are.equal(50000, (plot.nice_step(24691.2)))
      assert.are.equal(10, (plot.nice_step(6)))
    end)
  end)

  describe("format()", function()
    it("writes large numbers with k, M, G and fractions with their digits", function()
      assert.are.equal("0", plot.format(0))
      assert.are.equal("5000", plot.format(5000))
      assert.are.equal("10k", plot.format(10000))
      assert.are.equal("1.5M", plot.format(1.5e6))
      assert.are.equal("0.25", plot.format(0.25))
      assert.are.equal("-20", plot.format(-20))
    end)
  end)

  describe("charts", function()
    local evil = "<script>alert(1)</script> & \"quotes\" \1"
    it("draw well-formed SVG with escaped labels, empty or not", function()
      local charts = {
        plot.histogram({ edges = { 0, 0.5, 1 }, counts = { 3, 7 }, x = { label = evil }, marks = { { x = 0.5, label = evil } } }),
        plot.histogram({ edges = {}, counts = {} }),
        plot.histogram({ edges = { 0, 1, 2 }, counts = { 0, 0 }, y = { log = true } }),
        plot.bars({ categories = { evil, "b" }, series = { { name = evil, values = { 1, 2 } }, { name = "x", values = { 0, 5 } } } }),
        plot.bars({ categories = {}, series = {} }),
        plot.scatter({ points = { { 1, 1 }, { 10, 1000, n = 5, label = evil, show_label = true } }, x = { log = true },
          y = { log = true, label = evil }, regions = { { 0, 10, label = evil } } }),
        plot.scatter({ points = {} }),
        plot.scatter({ points = { { 0, 5 }, { 3, 3 } }, x = { log = true }, y = { log = true } }),
      }
      for i, svg in ipairs(charts) do
        local ok, msg = xml_ok(svg)
        assert.is_true(ok, ("chart %d: %s"):format(i, tostring(msg)))
        assert.is_nil(svg:find("<script", 1, true), "chart " .. i)
      end
      assert.is_truthy(charts[1]:find("&lt;script&gt;alert(1)&lt;/script&gt; &amp; &quot;quotes&quot;", 1, true))
      assert.is_truthy(charts[2]:find("no data", 1, true))
      assert.is_truthy(charts[8]:find("1 point at zero or below is not shown", 1, true))
    end)

    it("draws one bar per non-empty bin and the threshold line", function()
      local svg = plot.histogram({ edges = { 0, 0.25, 0.5, 0.75, 1 }, counts = { 0, 4, 0, 9 }, marks = { { x = 0.5, label = "t" } } })
      assert.are.equal(2, count(svg, "<rect "))
      assert.are.equal(1, count(svg, 'stroke%-dasharray'))
    end)

    it("errors on edges that do not fit the counts", function()
      assert.has_error(function() plot.histogram({ edges = { 0, 1 }, counts = { 1, 2 } }) end)
    end)
  end)
end)

describe("report.field()", function()
  it("reads a top-level number without decoding, and gives up when the key is nested too", function()
    assert.are.equal(12, report.field([[{"cluster":3,"size":12,"members":[{"url":"a\",\"size\":9"}]}]], "size"))
    assert.is_nil(report.field('{"size":2,"collections":[{"size":5}]}', "size"))
    assert.is_nil(report.field('{"cluster":3}', "size"))
    assert.are.equal(2, report.occurrences('"a":"x","a":"x",', '"a":"x"'))
    assert.are.equal(0, report.occurrences("", "x"))
  end)

  it("is what the scan falls back from: a record whose size is nested too is decoded", function()
    local dir = os.tmpname()
    os.remove(dir)
    assert(os.execute("mkdir -p " .. dir))
    write(dir .. "/collections.jsonl", '{"collections":[{"size":99,"urls":[]}],"cluster":1,"cardinality":2,"size":7}\n')
    local scan = assert(require("shingle.report.collections").scan(dir, report.options({})))
    assert.are.same({ 2, 7 }, { scan.points[1][1], scan.points[1][2] })
    os.execute("rm -rf " .. dir)
  end)
end)

describe("shingle.html", function()
  it("escapes markup and quotes", function()
    assert.are.equal("&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;&amp;&lt;/a&gt;", html.escape([[<a href="x" title='y'>&</a>]]))
  end)

  it("replaces invalid UTF-8 and drops control characters", function()
    assert.are.equal("a\239\191\189b", html.clean("a\255b"))
    assert.are.equal("ab\tc\n", html.clean("a\1b\tc\n\127"))
    assert.are.equal("é€😀", html.clean("é€😀"))
    assert.are.equal("\239\191\189\239\191\189", html.clean("\237\160\128"):sub(1, 6)) -- a UTF-16 surrogate
    assert.are.equal("\239\191\189", html.clean("\192\175"):sub(1, 3))                 -- an overlong '/'
  end)

  it("cuts text before a character", function()
    assert.are.equal("ab…", html.truncate("abcdef", 2))
    assert.are.equal("a…", html.truncate("aé", 2))
    assert.are.equal("abc", html.truncate("abc", 3))
  end)

  it("links URLs of schemes that cannot run script, and existing local files", function()
    assert.are.equal("http://x.example/a?b=1&amp;c=%22", html.href('http://x.example/a?b=1&c="'))
    assert.is_nil(html.href("javascript:alert(1)"))
    assert.is_nil(html.href("JavaScript:alert(1)"))
    assert.is_nil(html.href("data:text/html,<script>alert(1)</script>"))
    assert.is_nil(html.href("vbscript:x"))
    assert.is_nil(html.href("http://x\1y"))
    assert.is_nil(html.href(nil))
    assert.are.equal("file:///tmp/a%20b%3C.txt", html.href("a b<.txt", "/tmp", function(p) return p == "/tmp/a b<.txt" end))
    assert.is_nil(html.href("missing.txt", "/tmp", function() return false end))
    assert.are.equal('<a class="url" href="http://x.example/">x</a>', html.link("http://x.example/", nil, "x"))
    assert.are.equal('<span class="url">javascript:alert(&quot;1&quot;)</span>', html.link('javascript:alert("1")'))
    assert.are.equal("", html.link(nil))
  end)

  it("formats numbers with thousands separators", function()
    assert.are.equal("1,234,567", html.num(1234567))
    assert.are.equal("-1,000", html.num(-1000))
    assert.are.equal("12", html.num(12.0))
    assert.are.equal("0.500", html.num(0.5))
    assert.are.equal("0.50", html.num(0.5, 2))
    assert.are.equal("12.5%", html.pct(1, 8))
    assert.are.equal("1.5 KiB", html.bytes(1536))
  end)
end)

describe("shingle report", function()
  teardown(function() if not os.getenv("SHINGLE_KEEP_TMP") then os.execute("rm -rf '" .. root .. "'") end end)
  local built = {}
  local function fixture(kind)
    if not built[kind] then
      local dir = root .. "/" .. kind
      built[kind] = { fixtures[kind](dir) }
    end
    return (table.unpack or unpack)(built[kind])
  end
  local function render(target, opts)
    opts = opts or {}
    opts.nonce = "0123456789abcdef0123456789abcdef"
    local page, err = report.render(target, opts)
    assert.is_truthy(page, err)
    return page
  end

  describe("of a cluster run", function()
    it("has the sections, plots and parameters", function()
      local out = fixture("cluster")
      local page = render(out)
      for _, id in ipairs({ "status", "sizes", "pairs", "parameters", "largest", "sample", "side-by-side" }) do
        assert.is_truthy(page:find('<section id="' .. id .. '">', 1, true), id)
      end
      assert.are.equal(3, #svgs(page)) -- the size distribution, resemblance, containment
    end)

    it("shows the numbers of the run's summary", function()
      local out, sum = fixture("cluster")
      local page = render(out)
      assert.are.equal(tostring(sum.documents), fact(page, "documents"))
      assert.are.equal(tostring(sum.clusters), fact(page, "clusters"))
      assert.are.equal(tostring(sum.documents_in_clusters), fact(page, "documents in clusters"))
      assert.are.equal(tostring(sum.pairs_linked), fact(page, "pairs linked"))
      assert.are.equal(tostring(sum.pairs_considered), fact(page, "pairs considered (sharing a shingle)"))
      assert.are.equal(tostring(sum.clusters_of_identical_documents_only), fact(page, "clusters of identical documents only"))
      assert.are.equal(tostring(sum.mixed_clusters), fact(page, "clusters mixing similar documents"))
    end)

    it("counts from clusters.jsonl and pairs.jsonl what the summary says", function()
      local out, sum = fixture("cluster")
      local o = report.options({})
      local st = assert(require("shingle.report.cluster").scan_clusters(out, o))
      assert.are.equal(sum.clusters, st.clusters)
      assert.are.equal(sum.documents_in_clusters, st.docs)
      assert.are.equal(sum.clusters_of_identical_documents_only, st.identical_only)
      local ps = assert(require("shingle.report.cluster").scan_pairs(out))
      assert.are.equal(sum.pairs_linked, ps.n)
      assert.are.equal(ps.n, ps.exact) -- verified run: exact scores
      local total = 0
      for _, c in ipairs(ps.res) do total = total + c end
      assert.are.equal(sum.pairs_linked, total)
      assert.is_true(ps.min >= sum.threshold)
      -- the size histogram of the page adds up to the clusters
      local by = 0
      for _, n in pairs(st.by_size) do by = by + n end
      assert.are.equal(sum.clusters, by)
    end)

    it("lists the largest clusters largest first and a sample of mid-size ones", function()
      local out, sum = fixture("cluster")
      local page = render(out, { top = 3, sample = 4 })
      local sizes = {}
      local largest = page:match('<section id="largest">(.-)</section>')
      for n in largest:gmatch("<h3>Cluster [%d,]+: ([%d,]+) documents</h3>") do sizes[#sizes + 1] = tonumber((n:gsub(",", ""))) end
      assert.are.equal(3, #sizes)
      assert.is_true(sizes[1] >= sizes[2] and sizes[2] >= sizes[3])
      local st = require("shingle.report.cluster").scan_clusters(out, report.options({ top = 3, sample = 4 }))
      assert.are.equal(st.largest, sizes[1])
      local sample = page:match('<section id="sample">(.-)</section>')
      assert.are.equal(4, count(sample, "<h3>Cluster"))
      assert.is_true(sum.clusters > 7)
    end)

    it("is well-formed and escapes hostile names, URLs and text", function()
      local out = fixture("cluster")
      local page = render(out, { top = 1000, pairs = 100 })
      assert_well_formed(page)
      assert_no_injection(page)
      assert.is_truthy(page:find("&lt;img src=x onerror=alert(1)&gt;.txt", 1, true))
      assert.is_truthy(page:find("javascript:alert(3)", 1, true)) -- as text
      assert.is_truthy(page:find("&lt;/pre&gt;&lt;script&gt;alert(&quot;pwned&quot;)&lt;/script&gt;", 1, true))
      assert.is_truthy(page:find('href="file://', 1, true))
      assert.is_truthy(page:find("<mark>", 1, true))
    end)

    it("shows pairs side by side with their shared passages", function()
      local out = fixture("cluster")
      local page = render(out, { pairs = 2 })
      local s = page:match('<section id="side%-by%-side">(.-)</section>')
      assert.are.equal(2, count(s, '<div class="pair">'))
      assert.are.equal(4, count(s, "<pre>"))
      assert.is_true(count(s, "<mark>") >= 2)
    end)

    it("reads pairs that are not local files from the run's inputs", function()
      local dir = root .. "/jsonl"
      assert(os.execute("mkdir -p " .. dir))
      local gen = require "gen"
      assert(gen.write_jsonl(gen.corpus({ docs = 120, seed = 4, families = 0.6 }), dir .. "/corpus.jsonl"))
      local p = require("shingle.pipeline").new({ outdir = dir .. "/out", quiet = true, threads = 2 })
      assert(p:run({ dir .. "/corpus.jsonl" }))
      local without = render(dir .. "/out", { pairs = 2 }):match('<section id="side%-by%-side">(.-)</section>')
      assert.is_truthy(without:find("--input", 1, true))
      assert.are.equal(0, count(without, '<div class="pair">'))
      local with = render(dir .. "/out", { pairs = 2, inputs = { dir .. "/corpus.jsonl" } })
      local s = with:match('<section id="side%-by%-side">(.-)</section>')
      assert.are.equal(2, count(s, '<div class="pair">'))
      assert.is_true(count(s, "<mark>") >= 2)
      assert.is_truthy(s:find("http://host", 1, true))
    end)

    it("gives the same page for the same run and seed", function()
      local out = fixture("cluster")
      assert.are.equal(render(out, { seed = 7 }), render(out, { seed = 7 }))
    end)
  end)

  describe("of a collections run", function()
    it("has Table 2, Figures 11 and 12, the collections and the avoid list", function()
      local out = fixture("collections")
      local page = render(out)
      for _, id in ipairs({ "summary", "table2", "figure11", "figure12", "collections", "avoid" }) do
        assert.is_truthy(page:find('<section id="' .. id .. '">', 1, true), id)
      end
      assert.are.equal(2, #svgs(page))
      assert_well_formed(page)
      assert_no_injection(page)
    end)

    it("shows the summary's numbers, Table 2 from collections.jsonl and Figure 11's counts", function()
      local out, sum = fixture("collections")
      local page = render(out)
      assert.are.equal(tostring(sum.graph.pages), fact(page, "pages"))
      assert.are.equal(tostring(sum.grow.clusters), fact(page, "similar clusters"))
      assert.are.equal(tostring(sum.grow.collections), fact(page, "collections in them"))
      local first = cjson.decode(read(out .. "/collections.jsonl"):match("^[^\n]+"))
      local t2 = page:match('<section id="table2">(.-)</section>')
      local card, size = t2:match('<td class="num" data%-v="1">1</td><td class="num" data%-v="(%d+)">[^<]*</td><td class="num" data%-v="(%d+)">')
      assert.are.equal(first.cardinality, tonumber(card))
      assert.are.equal(first.size, tonumber(size))
      local f11 = page:match('<section id="figure11">(.-)</section>')
      for _, scheme in ipairs({ "whole", "lines4", "lines2", "shingles" }) do
        local h = sum.trivial[scheme].replicas
        local all = 0
        for _, v in ipairs(h) do all = all + v end
        assert.is_truthy(f11:find(("%s (%s)"):format(html.num(h[2]), html.pct(h[2], all)), 1, true), scheme)
      end
    end)

    it("shows how complete each replica is: the partial mirror is less than whole", function()
      local out = fixture("collections")
      local page = render(out)
      local s = page:match('<section id="collections">(.-)</section>')
      local partial = s:match("partial%-c%.example.-</tr>")
      assert.is_truthy(partial, "the partial mirror is in a cluster")
      local pct = tonumber(partial:match("</span></span>([%d.]+)%%"))
      assert.is_true(pct > 0 and pct < 100, tostring(pct))
      assert.is_truthy(s:match("mirror%-b%.example.-</span></span>100%.0%%"))
    end)

    it("puts every cluster in Figure 12", function()
      local out, sum = fixture("collections")
      local scan = require("shingle.report.collections").scan(out, report.options({}))
      assert.are.equal(sum.grow.clusters, scan.clusters)
      assert.are.equal(sum.grow.collections, scan.collections)
      local n = 0
      for _, p in ipairs(scan.points) do n = n + p.n end
      assert.are.equal(scan.clusters, n)
      local page = render(out)
      local f12 = page:match('<section id="figure12">(.-)</section>')
      assert.are.equal(#scan.points, count(f12, "<circle "))
    end)
  end)

  describe("of an index with sweeps", function()
    it("counts what each sweep added, lost, moved and changed", function()
      local db, sweeps = fixture("index")
      local index = require "shingle.index"
      local ix = assert(index.open(db, { readonly = true }))
      local rows = assert(require("shingle.report.sweeps").per_sweep(ix))
      ix:close()
      assert.are.equal(#sweeps, #rows)
      for i, s in ipairs(sweeps) do
        assert.are.equal(s.name, rows[i].name)
        for k, v in pairs(s.expect) do assert.are.equal(v, rows[i][k], s.name .. " " .. k) end
      end
      local page = render(db, { index = true })
      for _, id in ipairs({ "index", "sweeps", "change", "lost" }) do
        assert.is_truthy(page:find('<section id="' .. id .. '">', 1, true), id)
      end
      local t = page:match('<section id="sweeps">(.-)</section>')
      assert.is_truthy(t:find('<td><span class="nowrap">2026%-02%-01</span></td><td class="num" data%-v="%d+">[%d,]+</td><td class="num" data%-v="6">6</td>'
        .. '<td class="num" data%-v="5">5</td><td class="num" data%-v="3">3</td><td class="num" data%-v="2">2</td>'))
      assert.are.equal(2, #svgs(page))
      assert_well_formed(page)
      assert_no_injection(page)
    end)

    it("compares only the latest sweeps when told to", function()
      local db = fixture("index")
      local ix = assert(require("shingle.index").open(db, { readonly = true }))
      local rows = assert(require("shingle.report.sweeps").per_sweep(ix, 1))
      ix:close()
      assert.are.equal(false, rows[1].compared)
      assert.are.equal(false, rows[2].compared)
      assert.are.equal(4, rows[3].added)
      local page = render(db, { index = true, sweeps = 2 })
      assert.is_truthy(page:find("The earliest sweep is not compared", 1, true))
    end)

    it("finds lost pages: moved ones at their new URL, dead ones through their cluster", function()
      local db = fixture("index")
      local page = render(db, { index = true })
      local s = page:match('<section id="lost">(.-)</section>')
      assert.is_truthy(s:find('href="http://site.example/page6.html".-href="http://site.example/page106.html"'))
      assert.is_truthy(s:find('href="http://site.example/page1.html".-href="http://copies.example/page1.html"'))
      assert.is_truthy(s:find("not found", 1, true))
      local small = render(db, { index = true, lost = 2 })
      assert.are.equal(2, count(small:match('<section id="lost">(.-)</section>'):match("<tbody>(.-)</tbody>"), "<tr>"))
    end)
  end)

  describe("the command", function()
    local bin = "bin/shingle"
    it("writes OUT/report.html, or the file given with -o", function()
      local out = fixture("cluster")
      local msg, code = run(("%s report '%s'"):format(bin, out))
      assert.are.equal(0, code, msg)
      assert.is_truthy(msg:match("^wrote .*/report.html"))
      local page = read(out .. "/report.html")
      assert.is_truthy(page:find("^<!DOCTYPE html>"))
      msg, code = run(("%s report '%s' -o '%s/r.html' -q"):format(bin, out, root))
      assert.are.equal(0, code, msg)
      assert.are.equal("", msg)
      local db = fixture("index")
      msg, code = run(("%s report --index '%s' -o '%s/ix.html'"):format(bin, db, root))
      assert.are.equal(0, code, msg)
      assert.is_truthy(read(root .. "/ix.html"):find("shingle index report", 1, true))
    end)

    it("names what is wrong with its input", function()
      local msg, code = run(("%s report '%s/nothing'"):format(bin, root))
      assert.are.equal(1, code)
      assert.is_truthy(msg:find("nothing is not a directory", 1, true), msg)
      msg, code = run(("%s report"):format(bin))
      assert.are.equal(2, code)
      assert.is_truthy(msg:find("either OUT", 1, true))
      msg, code = run(("%s report '%s' --index '%s'"):format(bin, root, root))
      assert.are.equal(2, code)
      local db = fixture("index")
      msg, code = run(("%s report '%s'"):format(bin, db))
      assert.are.equal(1, code)
      assert.is_truthy(msg:find("is an index: use shingle report --index", 1, true), msg)
      msg, code = run(("%s report --index '%s'"):format(bin, root))
      assert.are.equal(1, code)
      assert.is_truthy(msg:find("is not an index", 1, true), msg)
      msg, code = run(("%s report '%s' --top -1"):format(bin, root))
      assert.are.equal(2, code)
    end)

    it("names the file and line of a broken record, and leaves no page behind", function()
      local out = fixture("cluster")
      local broken = root .. "/broken"
      os.execute(("rm -rf '%s' && cp -r '%s' '%s'"):format(broken, out, broken))
      local lines = {}
      for l in io.lines(broken .. "/clusters.jsonl") do lines[#lines + 1] = l end
      lines[3] = '{"cluster": 3, "members": [ truncated'
      write(broken .. "/clusters.jsonl", table.concat(lines, "\n") .. "\n")
      os.remove(broken .. "/report.html")
      local msg, code = run(("%s report '%s'"):format(bin, broken))
      assert.are.equal(1, code)
      assert.is_truthy(msg:find("clusters.jsonl line 3: not a cluster record", 1, true), msg)
      assert.is_nil(io.open(broken .. "/report.html"))
      write(broken .. "/summary.json", "{ not json")
      msg, code = run(("%s report '%s'"):format(bin, broken))
      assert.are.equal(1, code)
      assert.is_truthy(msg:find("summary.json is not valid JSON", 1, true), msg)
    end)
  end)
end)
