-- --seed on every command that sketches: the same seed repeats a run bit
-- for bit, another one draws other random functions (polynomials and
-- permutation), so an experiment can be repeated with them.
local cjson = require "cjson"
local support = require "support"
local tmpdir, read, write = support.tmpdir, support.read, support.write

local lua_cmd = support.shingle_cmd

local function sh(args)
  local out, code = support.run(lua_cmd() .. " " .. args)
  assert.are.equal(0, code, out)
  return out
end

describe("--seed", function()
  local dir
  setup(function()
    dir = tmpdir()
    assert(os.execute("mkdir -p " .. dir .. "/docs"))
    local rand = support.rng(8)
    local base = support.words(rand, 300, 5000)
    for i = 1, 6 do
      local w = {}
      for j, x in ipairs(base) do w[j] = rand(100) <= i * 6 and ("x" .. rand(5000)) or x end
      write(("%s/docs/d%d.txt"):format(dir, i), table.concat(w, " "))
    end
  end)
  teardown(function() os.execute("rm -rf " .. dir) end)

  -- a command run with seeds a, a and b: the outputs of the first two are
  -- equal and differ from the third
  local function check(run)
    local a1, a2, b = run(7, "a1"), run(7, "a2"), run("0x2a", "b")
    assert.are.equal(a1, a2)
    assert.are_not.equal(a1, b)
  end

  it("on cluster: other sketches, the same with the same seed", function()
    check(function(seed, tag)
      sh(("cluster -q --seed %s %s/docs -o %s/c-%s"):format(seed, dir, dir, tag))
      return read(("%s/c-%s/sketches.bin"):format(dir, tag))
    end)
    assert.are.equal(42, cjson.decode(read(dir .. "/c-b/run.json")).config.seed)
  end)

  it("on dedup", function()
    check(function(seed, tag)
      sh(("dedup -q --seed %s %s/docs -o %s/d-%s"):format(seed, dir, dir, tag))
      return read(("%s/d-%s/run/sketches.bin"):format(dir, tag))
    end)
  end)

  it("on collections (the chunk fingerprints and the shingler)", function()
    check(function(seed, tag)
      sh(("collections -q --threads 1 --seed %s %s/docs -o %s/m-%s"):format(seed, dir, dir, tag))
      return read(("%s/m-%s/chunks-lines4.bin"):format(dir, tag)) .. read(("%s/m-%s/shingles/sketches.bin"):format(dir, tag))
    end)
  end)

  it("on index add: the new index keeps its seed, and refuses another", function()
    check(function(seed, tag)
      sh(("index add -q --seed %s --sweep s1 %s/idx-%s %s/docs"):format(seed, dir, tag, dir))
      local ix = assert(require("shingle.index").open(("%s/idx-%s"):format(dir, tag), { readonly = true }))
      local s = ix.config.seed
      ix:close()
      return tostring(s)
    end)
    local out, code = support.run(lua_cmd() .. (" index add -q --seed 8 --sweep s2 %s/idx-a1 %s/docs"):format(dir, dir))
    assert.are.equal(1, code)
    assert.is_truthy(out:find("seed = 7", 1, true), out)
  end)

  it("on compare and explain: other estimates", function()
    check(function(seed)
      local p = cjson.decode(sh(("compare --json --seed %s %s/docs/d1.txt %s/docs/d2.txt"):format(seed, dir, dir)))
      return ("%.6f %.6f %.6f"):format(p.resemblance, p.containment_ab, p.containment_ba)
    end)
    check(function(seed)
      local e = cjson.decode(sh(("explain --json --seed %s %s/docs/d1.txt %s/docs/d2.txt"):format(seed, dir, dir)))
      return ("%.6f"):format(e.estimate.resemblance)
    end)
  end)

  it("on sketch: the file's sketches carry it", function()
    check(function(seed, tag)
      sh(("sketch -q --seed %s %s/docs -o %s/s-%s.sks"):format(seed, dir, dir, tag))
      local p = assert(require("shingle.sketches").open(("%s/s-%s.sks"):format(dir, tag))):params():params()
      return require("shingle").tohex(p.seed)
    end)
  end)

  it("refuses a seed that is not a whole number, naming the option", function()
    local out, code = support.run(lua_cmd() .. " cluster --seed abc " .. dir .. "/docs -o " .. dir .. "/bad")
    assert.are.equal(2, code)
    assert.is_truthy(out:find("--seed", 1, true) and out:find("'abc' is not a seed", 1, true), out)
  end)
end)
