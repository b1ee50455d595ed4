-- pairs.bin is fsynced on its own unless the run writes into a staged
-- output, whose whole tree util.output syncs before putting it in place
-- (then core.pairs gets sync_later). A script calling p:pairs() on a
-- directory of its own must keep the fsync.
local support = require "support"
local pipeline = require "shingle.pipeline"
local core = require "shingle.core"

describe("pairs.bin's fsync", function()
  local dir, seen, orig
  setup(function()
    dir = support.tmpdir()
    assert(os.execute("mkdir -p '" .. dir .. "/in'"))
    local rand = support.rng(5)
    local base = support.words(rand, 300, 2000)
    for i = 1, 6 do
      local v = {}
      for k, w in ipairs(base) do v[k] = rand(100) <= 3 * i and ("x" .. rand(9999)) or w end
      support.write(("%s/in/d%d.txt"):format(dir, i), table.concat(v, " "))
    end
    orig = core.pairs
    core.pairs = function(d, o)
      seen[#seen + 1] = { dir = d, sync_later = o.sync_later }
      return orig(d, o)
    end
  end)
  teardown(function()
    core.pairs = orig
    support.rmdir(dir)
  end)
  before_each(function() seen = {} end)

  it("is left to the tree's sync in a whole run (staged), and the run is the same", function()
    local p = pipeline.new { outdir = dir .. "/run", quiet = true }
    assert(p:run({ dir .. "/in" }))
    assert.are.equal(1, #seen)
    assert.is_true(seen[1].sync_later)
    assert.are_not.equal(dir .. "/run", seen[1].dir) -- it wrote beside OUT, into the staged directory
    assert.is_nil(p.staging)
    local st = assert(pipeline.load(dir .. "/run", { quiet = true })).stats
    assert.is_true(st.pairs.pairs > 0)
  end)

  it("is kept when a script runs the steps itself", function()
    local p = pipeline.new { outdir = dir .. "/steps", quiet = true }
    assert(p:sketch({ dir .. "/in" }))
    assert(p:dedupe())
    assert(p:pairs())
    assert.are.equal(1, #seen)
    assert.is_nil(seen[1].sync_later)
    assert.are.equal(support.read(dir .. "/run/pairs.bin"), support.read(dir .. "/steps/pairs.bin"))
  end)
end)
