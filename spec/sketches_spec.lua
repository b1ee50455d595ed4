-- shingle.sketches: many sketches in one streamed, checksummed file, so that
-- a corpus is sketched once and experiments run on the file.
local shingle = require "shingle"
local sketches = require "shingle.sketches"
local cjson = require "cjson"
local support = require "support"
local tmpdir, write = support.tmpdir, support.write

local lua_cmd = support.shingle_cmd

describe("shingle.sketches", function()
  local dir, texts
  setup(function()
    dir = tmpdir()
    local rand = support.rng(3)
    texts = {}
    assert(os.execute("mkdir -p " .. dir .. "/docs"))
    for i = 1, 40 do
      texts[i] = table.concat(support.words(rand, 50 + rand(400), 20000), " ")
      if i <= 30 then
        write(("%s/docs/d%02d.txt"):format(dir, i), texts[i])
      end
    end
    local lines = {}
    for i = 31, 40 do lines[#lines + 1] = cjson.encode({ url = "u" .. i, text = texts[i] }) end
    write(dir .. "/more.jsonl", table.concat(lines, "\n") .. "\n")
  end)
  teardown(function() os.execute("rm -rf " .. dir) end)

  it("sketches a corpus on the pool's threads into the sketches shingle.new makes one by one", function()
    local st = assert(sketches.sketch({ dir .. "/docs", dir .. "/more.jsonl" }, dir .. "/c.sks", { w = 6, s = 64, threads = 2 }))
    assert.are.same({ documents = 40, sketched = 40, skipped = 0 }, st)
    local sh = shingle.new{ w = 6, s = 64 }
    local r = assert(sketches.open(dir .. "/c.sks"))
    local n = 0
    for s, key in r:records() do
      n = n + 1
      local i = n <= 30 and n or tonumber(key:match("^u(%d+)$"))
      if n <= 30 then assert.are.equal(("%s/docs/d%02d.txt"):format(dir, n), key) end
      assert.is_true(s == sh:sketch(texts[i]), key)
    end
    assert.are.equal(40, n)
  end)

  it("writes and reads keys of every kind, and tables of sketches", function()
    local sh = shingle.new{ w = 3, sketch = "mod", m = 2 }
    local t = { alpha = sh:sketch(texts[1]), [7] = sh:sketch(texts[2]), [2.5] = sh:sketch(texts[3]) }
    assert.are.equal(3, sketches.save(dir .. "/t.sks", t))
    local back = assert(sketches.load(dir .. "/t.sks"))
    assert.is_true(back.alpha == t.alpha and back[7] == t[7] and back[2.5] == t[2.5])
    local w = assert(sketches.create(dir .. "/nokey.sks"))
    assert(w:write(nil, t.alpha))
    assert.are.equal(1, w:close())
    local s, k = assert(sketches.open(dir .. "/nokey.sks")):read()
    assert.is_true(s == t.alpha)
    assert.is_nil(k)
  end)

  it("streams a large file: a record at a time, the count checked against the trailer", function()
    local sh = shingle.new{ w = 2, s = 16 }
    local w = assert(sketches.create(dir .. "/big.sks"))
    local one = sh:sketch(texts[5])
    for i = 1, 20000 do assert(w:write(i, one)) end
    assert.are.equal(20000, w:close())
    local r = assert(sketches.open(dir .. "/big.sks"))
    local n, sum = 0, 0
    while true do
      local ss, kk = r:batch(1000)
      assert.is_table(ss)
      if #ss == 0 then break end
      n = n + #ss
      sum = sum + kk[#kk]
    end
    assert.are.equal(20000, n)
    assert.are.equal(20000 * 21 / 2, sum)
  end)

  it("reads a gzip- or zstd-compressed sketch file", function()
    assert(os.execute(("gzip -c %s/t.sks > %s/t.sks.gz && zstd -q -c %s/t.sks > %s/t.sks.zst"):format(dir, dir, dir, dir)))
    local a = assert(sketches.load(dir .. "/t.sks"))
    assert.is_true(assert(sketches.load(dir .. "/t.sks.gz")).alpha == a.alpha)
    assert.is_true(assert(sketches.load(dir .. "/t.sks.zst"))[7] == a[7])
  end)

  it("refuses a sketch made with other parameters, naming the parameter and the file", function()
    local w = assert(sketches.create(dir .. "/mix.sks"))
    assert(w:write("a", shingle.new{ w = 3 }:sketch(texts[1])))
    local ok, err = w:write("b", shingle.new{ w = 4 }:sketch(texts[1]))
    assert.is_nil(ok)
    assert.is_truthy(err:find("mix.sks: sketch 2", 1, true) and err:find("shingle widths", 1, true), err)
    w:abort()
    assert.is_nil(io.open(dir .. "/mix.sks"))
  end)

  it("refuses a truncated or damaged file, naming the record and the byte", function()
    local f = assert(io.open(dir .. "/t.sks", "rb"))
    local bytes = f:read("*a")
    f:close()
    write(dir .. "/cut.sks", bytes:sub(1, #bytes - 30))
    local t, err = sketches.load(dir .. "/cut.sks")
    assert.is_nil(t)
    assert.is_truthy(err:find("cut.sks is truncated", 1, true), err)
    write(dir .. "/flip.sks", bytes:sub(1, 200) .. string.char((bytes:byte(201) + 1) % 256) .. bytes:sub(202))
    local t2, err2 = sketches.load(dir .. "/flip.sks")
    assert.is_nil(t2)
    assert.is_truthy(err2:find("flip.sks: record", 1, true) and err2:find("at byte", 1, true), err2)
    local t3, err3 = sketches.load(dir .. "/docs/d01.txt")
    assert.is_nil(t3)
    assert.is_truthy(err3:find("is not a sketch file", 1, true), err3)
  end)

  it("is written by shingle sketch and described by shingle sketch --info", function()
    local out, code = support.run(lua_cmd() .. " sketch " .. dir .. "/docs -o " .. dir .. "/cli.sks --sketch min -w 6 -s 64 --seed 99")
    assert.are.equal(0, code, out)
    assert.is_truthy(out:find("30 sketches of 30 documents (0 skipped)", 1, true), out)
    local sh = shingle.new{ w = 6, sketch = "min", s = 64, seed = 99 }
    local s = assert(sketches.open(dir .. "/cli.sks")):read()
    assert.is_true(s == sh:sketch(texts[1]))
    local info, code2 = support.run(lua_cmd() .. " sketch --info " .. dir .. "/cli.sks")
    assert.are.equal(0, code2, info)
    assert.is_truthy(info:find("min sketches, w = 6", 1, true) and info:find("30 sketches, first keys", 1, true), info)
  end)

  it("feeds an LSH index in bulk", function()
    local ix = shingle.lsh{ threshold = 0.5 }
    assert.are.equal(40, ix:insert_file(dir .. "/c.sks"))
    local sh = shingle.new{ w = 6, s = 64 }
    local hits = ix:query(sh:sketch(texts[33]))
    assert.are.equal("u33", hits[1].key)
  end)
end)
