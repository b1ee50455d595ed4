-- Every script in examples/ runs and says what it should, so none rots.
local support = require "support"

local LUA = rawget(_G, "jit") and "luajit" or "lua" .. _VERSION:match("%d+%.%d+")
local build = os.getenv("SHINGLE_BUILD") or ("build/" .. (rawget(_G, "jit") and "jit" or _VERSION:match("%d+%.%d+")))
local ENV = "LUA_PATH='lua/?.lua;lua/?/init.lua;;' LUA_CPATH='" .. build .. "/lib/?.so;;' "

local function run(script, args)
  local out, code = support.run(ENV .. LUA .. " examples/" .. script .. " " .. (args or ""))
  assert.are.equal(0, code, out)
  return out
end

describe("examples/", function()
  it("compare.lua prints estimated and exact values for two documents", function()
    local out = run("compare.lua", "samples/docs/rabin-original.txt samples/docs/rabin-mirror.html")
    local est, exact = out:match("resemblance%s+estimated ([%d.]+)%s+exact ([%d.]+)")
    assert.is_true(math.abs(tonumber(est) - tonumber(exact)) < 0.1, out)
    assert.is_truthy(out:find("containment   estimated %d%.%d+   exact 1%.000"), out)
  end)

  it("cluster_dir.lua clusters the sample directory", function()
    local out = run("cluster_dir.lua", "samples/docs")
    assert.is_truthy(out:find("8 documents, 2 clusters", 1, true), out)
    assert.is_truthy(out:find("rabin-original.txt  lexical", 1, true), out)
    assert.is_falsy(out:find("weather", 1, true))
  end)

  it("tweets.lua finds the retweets of a message and not the unrelated tweets", function()
    local out = run("tweets.lua")
    assert.is_truthy(out:find("5 near-duplicates", 1, true), out)
    assert.is_falsy(out:find("ximena", 1, true))
    local out2 = run("tweets.lua", "samples/tweets/tweets.txt \"ximena: @bob Well I've booked train tickets for saturday now (despite the website's best efforts to stop me), see you there #luaconf26\"")
    assert.is_truthy(out2:find("^0 near%-duplicates"), out2)
  end)

  it("custom_rules.lua makes the two mails equal under its rules and refuses mixing rule sets", function()
    local out = run("custom_rules.lua")
    assert.is_truthy(out:find("resemblance with the rules: 1.00", 1, true), out)
    assert.is_truthy(out:find("cannot compare sketches made with different canonicalization rules", 1, true), out)
  end)

  it("custom_extractor.lua compares CSV tables by their rows", function()
    local out = run("custom_extractor.lua")
    assert.is_truthy(out:find("resemblance 0.60, containment of A in B 0.75", 1, true), out)
  end)

  it("custom_pipeline.lua runs the phases one by one with its own source and policy", function()
    local dir = os.tmpname()
    os.remove(dir)
    local out = run("custom_pipeline.lua", dir)
    os.execute("rm -rf " .. dir)
    local pairs_, linked, clusters = out:match("(%d+) candidate pairs, (%d+) linked, (%d+) clusters")
    assert.is_truthy(pairs_, out)
    -- each of the first four texts with its edited copy and its first half
    -- (contained in it: the predicate's 90%), nothing else
    assert.are.equal("4", clusters, out)
    for i = 1, 4 do
      assert.is_truthy(out:find(("3  doc%d doc%d%%-edited doc%d%%-first%%-half\n"):format(i, i, i)), out)
    end
    assert.is_falsy(out:find("doc5", 1, true), out)
  end)

  it("midi_melodies.lua matches a transposed melody fully and another tune not at all", function()
    local out = run("midi_melodies.lua")
    assert.is_truthy(out:find("transposed up a fourth   resemblance 1.00", 1, true), out)
    assert.is_truthy(out:find("another tune             resemblance 0.0", 1, true), out)
  end)

  it("code_plagiarism.lua sees through renamed variables where plain shingles do not", function()
    local out = run("code_plagiarism.lua")
    assert.is_truthy(out:find("copied with renames:  resemblance 1.00", 1, true), out)
    local plain = tonumber(out:match("plain text shingles see the copy as: ([%d.]+)"))
    assert.is_true(plain < 0.2, out)
  end)

  it("dna_kmers.lua estimates k-mer Jaccard falling with the mutation rate", function()
    local out = run("dna_kmers.lua")
    local v = {}
    for x in out:gmatch("estimated Jaccard ([%d.]+)") do v[#v + 1] = tonumber(x) end
    assert.are.equal(4, #v, out)
    assert.is_true(v[1] > 0.9 and v[1] > v[2] and v[2] > v[3] and v[4] < 0.01, out)
  end)
end)
