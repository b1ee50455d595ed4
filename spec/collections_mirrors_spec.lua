-- `shingle collections` with its default options finds real mirrors: the
-- test bed of spec/mirrors.lua (the rsyslog manual from Debian's
-- rsyslog-doc, 318 pages; a full mirror with a banner on every page, a 60%
-- partial mirror linking back to the primary, an older copy with 15% of
-- the pages edited). The paper's settings stay one switch away (--paper).
local mirrors = require "mirrors"
local collections = require "shingle.collections"
local cjson = require "cjson"
local support = require "support"

local function read_jsonl(path)
  local t = {}
  for line in io.lines(path) do t[#t + 1] = cjson.decode(line) end
  return t
end

describe("collections on a real manual and its mirrors (rsyslog-doc)", function()
  local dir, bed
  setup(function()
    if not mirrors.available() then return end
    dir = os.tmpname()
    os.remove(dir)
    assert(os.execute("mkdir -p " .. dir))
    bed = mirrors.build(dir .. "/web")
  end)
  teardown(function() if dir then os.execute("rm -rf " .. dir) end end)

  local function run(name, cfg)
    cfg.outdir, cfg.quiet, cfg.memory, cfg.threads = dir .. "/" .. name, true, 128 * 1024 * 1024, 2
    local c = collections.new(cfg)
    local sum = assert(c:run({ dir .. "/web" }))
    return mirrors.score(read_jsonl(c.dir .. "/collections.jsonl"), bed), sum, c
  end

  it("builds the test bed: 318 pages, a 60% partial mirror, 15% of pages edited", function()
    if not bed then pending("rsyslog-doc is not installed (scripts/setup.sh installs it)") return end
    assert.are.equal(318, bed.pages)
    assert.is_true(math.abs(bed.partial - 0.6 * bed.pages) <= 0.02 * bed.pages, bed.partial)
    assert.is_true(math.abs(bed.edited - 0.15 * bed.pages) <= 0.05 * bed.pages, bed.edited)
  end)

  it("finds the manual in all four copies with the default options", function()
    if not bed then pending("rsyslog-doc is not installed") return end
    local sc, sum, c = run("default", {})
    io.stderr:write(("\n[collections] rsyslog-doc test bed, defaults (%s, %s condition): largest %d x %d, %d of %d pages, "
      .. "precision %.4f\n"):format(c.cfg.similarity, c.cfg.extended and "extended" or "strict", sc.cardinality, sc.size,
      sc.pages, bed.pages, sc.precision))
    assert.are.equal("shingles", sum.similarity)
    assert.is_true(sum.extended)
    assert.are.equal(4, sc.cardinality)
    assert.is_true(sc.pages >= 0.8 * bed.pages, sc.pages)
    assert.is_true(sc.precision >= 0.99)
  end)

  it("with --paper uses the paper's settings, which miss the mirror with a banner", function()
    if not bed then pending("rsyslog-doc is not installed") return end
    local sc, sum, c = run("paper", { paper = true })
    io.stderr:write(("[collections] --paper (%s, T = %d, strict): largest %d x %d, %d of %d pages\n"):format(
      c.cfg.similarity, sum.trivial.lines4.threshold, sc.cardinality, sc.size, sc.pages, bed.pages))
    assert.are.equal("lines4", sum.similarity)
    assert.is_false(sum.extended)
    assert.is_false(sum.anchored)
    assert.are.equal(15, sum.trivial.lines4.threshold)
    assert.is_true(sc.cardinality < 4 or sc.pages < 0.5 * bed.pages)
  end)

  it("runs with the defaults from the command line, and says so with --paper", function()
    if not bed then pending("rsyslog-doc is not installed") return end
    local out, code = support.run("bin/shingle collections -q --threads 2 " .. dir .. "/web -o " .. dir .. "/cli")
    assert.are.equal(0, code, out)
    assert.is_truthy(out:find("trivial clusters (shingles, threshold 0.5)", 1, true), out)
    assert.is_truthy(out:find("(extended condition)", 1, true), out)
    local out2, code2 = support.run("bin/shingle collections -q --paper --threads 2 " .. dir .. "/web -o " .. dir .. "/cli2")
    assert.are.equal(0, code2, out2)
    assert.is_truthy(out2:find("the paper's settings (--paper)", 1, true), out2)
    assert.is_truthy(out2:find("trivial clusters (lines4, threshold 15)", 1, true), out2)
    assert.is_truthy(out2:find("(strict condition)", 1, true), out2)
  end)
end)
