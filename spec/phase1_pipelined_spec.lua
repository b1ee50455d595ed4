-- Phase 1 sketches batch k + 1 on the pool's threads while the main thread
-- appends batch k to the run's files and docs.jsonl (Phase1:push, the
-- writer's add_job). The files, the warnings and the ids given to on_batch
-- must be those of the obvious path, one batch sketched and appended at a
-- time (Phase1:add). Small batches over a directory with files that cannot
-- be sketched (binary, unreadable) make many batches and problems.
local support = require "support"
local pipeline = require "shingle.pipeline"

local function corpus(dir)
  local rand = support.rng(77)
  for i = 1, 60 do
    local name = ("%s/f%03d.%s"):format(dir, i, i % 7 == 0 and "html" or "txt")
    if i % 11 == 0 then
      support.write(name, "binary\0" .. table.concat(support.words(rand, 50, 500), " "))
    else
      local words = support.words(rand, 20 + rand(600), 3000)
      support.write(name, i % 7 == 0 and ("<p>" .. table.concat(words, " ") .. "</p>") or table.concat(words, " "))
    end
  end
end

describe("phase 1 pipelined", function()
  local dir
  setup(function()
    dir = support.tmpdir()
    assert(os.execute("mkdir -p '" .. dir .. "/in'"))
    corpus(dir .. "/in")
  end)
  teardown(function() support.rmdir(dir) end)

  -- phase 1 into out; with sequential, Phase1:push appends each batch as it
  -- comes (Phase1:add), the obvious path
  local function phase1(out, sequential, verify)
    local warnings, firsts = {}, {}
    local p = pipeline.new { outdir = out, quiet = true, threads = 2, batch = 4, verify = verify,
      log = function(msg) warnings[#warnings + 1] = msg end }
    p.on_batch = function(docs, _, first) firsts[#firsts + 1] = first .. ":" .. #docs end
    local w = assert(p:phase1())
    local mt = getmetatable(w)
    local push = mt.push
    if sequential then
      mt.push = function(self, docs, problem)
        if docs then return self:add(docs, problem) end
        return self.documents
      end
    end
    w:abort() -- only its class was wanted
    local ok, st = pcall(p.sketch, p, { dir .. "/in" })
    mt.push = push
    assert(ok, st)
    assert(st, "phase 1 failed")
    return st, warnings, firsts
  end

  for _, verify in ipairs({ true, false }) do
    it(("writes the files, warnings and ids of one batch at a time (verify %s)"):format(tostring(verify)), function()
      local st1, w1, f1 = phase1(dir .. "/seq", true, verify)
      local st2, w2, f2 = phase1(dir .. "/pipe", false, verify)
      assert.are.equal(60, st1.documents)
      assert.are.equal(5, st1.skipped) -- the binary files
      assert.are.equal(5, #w1)
      assert.are.same(w1, w2)
      assert.are.same(f1, f2)
      assert.are.equal(15, #f1)
      assert.are.equal(st1.sketched, st2.sketched)
      assert.are.equal(st1.skipped, st2.skipped)
      for _, f in ipairs({ "docs.bin", "sketches.bin", "docs.jsonl", "sources.bin", "srcnames.bin", "shingles.bin" }) do
        local a, b = support.read(dir .. "/seq/" .. f), support.read(dir .. "/pipe/" .. f)
        assert.are.equal(a ~= nil, b ~= nil, f)
        assert.is_true(a == b, f .. " differs")
      end
      assert.is_truthy(support.read(dir .. "/pipe/docs.bin"))
    end)
  end
end)
