-- Bounded cost on hostile input (docs/robustness.md, "Limits"): pathological
-- inputs made on the fly and streamed through a pipe where they can be; the
-- time and the peak resident memory of the whole command (/usr/bin/time -v)
-- must stay within the bounds stated here.
local support = require "support"

local lua = rawget(_G, "jit") and "luajit" or "lua" .. _VERSION:match("%d+%.%d+")
local shingle_cmd = lua .. " bin/shingle "

local function tmpdir()
  local p = os.tmpname()
  os.remove(p)
  assert(os.execute("mkdir -p " .. p))
  return p
end

-- Run a shell command under /usr/bin/time -v: output, exit code, seconds, peak RSS in MiB.
local function measured(cmd)
  local out = support.run("/usr/bin/time -v sh -c '" .. cmd:gsub("'", "'\\''") .. "'")
  local code = tonumber(out:match("Exit status: (%d+)"))
  local m, s = out:match("Elapsed %(wall clock%) time %(h:mm:ss or m:ss%): (%d+):([%d.]+)")
  local rss = tonumber(out:match("Maximum resident set size %(kbytes%): (%d+)"))
  if os.getenv("LIMITS_VERBOSE") then print(("%.1f s, %.0f MiB: %s"):format(tonumber(m) * 60 + tonumber(s), rss / 1024, cmd:sub(1, 90))) end
  return out, code, tonumber(m) * 60 + tonumber(s), rss / 1024
end

describe("pathological inputs #faults", function()
  local dir
  setup(function() dir = tmpdir() end)
  teardown(function() os.execute("rm -rf " .. dir) end)

  it("a 1 GB JSON Lines line on standard input is refused after --max-bytes, in bounded memory", function()
    -- a line that never ends: 1 GiB of "a" after an opening {"text":" (head -c stops it)
    local out, code, secs, rss = measured("{ printf '{\"text\":\"'; head -c 1073741824 /dev/zero | tr '\\0' a; } | "
      .. shingle_cmd .. "cluster - --format jsonl --max-bytes 64M -o " .. dir .. "/o1")
    assert.are.equal(1, code, out)
    assert.is_truthy(out:find("standard input: line 1: longer than the limit of 67108864 bytes", 1, true), out)
    assert.is_truthy(out:find("no documents to cluster", 1, true), out)
    assert.is_true(rss < 200, ("peak RSS %.0f MiB, bound 200 MiB"):format(rss))
    assert.is_true(secs < 60, ("%.1f s, bound 60 s"):format(secs))
  end)

  it("a gzip bomb in a WARC (1 GiB in one record, 1 MB compressed) is skipped in bounded memory", function()
    local bomb = dir .. "/bomb.warc.gz"
    -- written by gzip from a stream: no 1 GiB file on disk
    assert(os.execute(("{ printf 'WARC/1.0\\r\\nWARC-Type: resource\\r\\nWARC-Target-URI: file:///bomb\\r\\n"
      .. "Content-Type: text/plain\\r\\nContent-Length: 1073741824\\r\\n\\r\\n'; head -c 1073741824 /dev/zero | tr '\\0' a; "
      .. "printf '\\r\\n\\r\\n'; } | gzip -1 > %s"):format(bomb)))
    local out, code, secs, rss = measured(shingle_cmd .. "cluster " .. bomb .. " -o " .. dir .. "/o2")
    assert.are.equal(1, code, out)
    assert.is_truthy(out:find("is larger than max_record, the limit of 67108864 bytes (raise --max-bytes to include it); skipped", 1, true), out)
    assert.is_true(rss < 100, ("peak RSS %.0f MiB, bound 100 MiB"):format(rss))
    assert.is_true(secs < 60, ("%.1f s, bound 60 s"):format(secs))
  end)

  it("a 63 MB document of one repeated word is refused past --max-shingles, in bounded memory", function()
    -- 31.5 million one-letter tokens: tokenizing stops at the default limit (16 Mi shingles)
    local d = dir .. "/one-word"
    assert(os.execute("mkdir -p " .. d))
    assert(os.execute(("head -c 31500000 /dev/zero | sed 's/\\x0/a /g' > %s/a.txt"):format(d)))
    assert(os.execute(("printf 'a short document beside it, of a few words\\n' > %s/b.txt"):format(d)))
    local out, code, secs, rss = measured(shingle_cmd .. "cluster " .. d .. " --memory 64M -o " .. dir .. "/o4")
    assert.are.equal(0, code, out)
    assert.is_truthy(out:find("a.txt: has more than 16777216 shingles, the limit (max_shingles); raise --max-shingles", 1, true), out)
    assert.is_truthy(out:find("documents 2 (skipped 1)", 1, true), out)
    -- tokens in blocks (core/stream.h): its bytes, its canonical text and one
    -- distinct shingle; was 2.3 GB, then 865 MiB at 48 bytes a token
    assert.is_true(rss < 250, ("peak RSS %.0f MiB, bound 250 MiB"):format(rss))
    assert.is_true(secs < 60, ("%.1f s, bound 60 s"):format(secs))
    -- a lower limit, a smaller bound
    out, code, secs, rss = measured(shingle_cmd .. "cluster " .. d .. " --max-shingles 1M -o " .. dir .. "/o5")
    assert.are.equal(0, code, out)
    assert.is_truthy(out:find("has more than 1048576 shingles", 1, true), out)
    assert.is_true(rss < 250, ("peak RSS %.0f MiB, bound 250 MiB"):format(rss))
  end)

  it("a file larger than --max-bytes is refused by its size, not read", function()
    -- a sparse file of 1 TiB: nothing on disk, and reading it would take hours
    local d = dir .. "/sparse"
    assert(os.execute("mkdir -p " .. d .. " && truncate -s 1T " .. d .. "/huge.txt"))
    assert(os.execute(("printf 'a short document beside it, of a few words\n' > %s/b.txt"):format(d)))
    local out, code, secs, rss = measured(shingle_cmd .. "cluster " .. d .. " -o " .. dir .. "/o9")
    assert.are.equal(0, code, out)
    assert.is_truthy(out:find("huge.txt is larger than the limit of 67108864 bytes; raise --max-bytes to include it", 1, true), out)
    assert.is_true(rss < 60, ("peak RSS %.0f MiB, bound 60 MiB"):format(rss))
    assert.is_true(secs < 30, ("%.1f s, bound 30 s"):format(secs))
  end)

  it("a document accepted whole takes a small constant times its size", function()
    -- 63 MB of random words (about 10 M tokens, nearly every shingle
    -- distinct): its bytes, its canonical text, a set of 8-byte slots at
    -- most 70% full and the full set made in place; was 717 MiB (11 x)
    local d = dir .. "/words"
    assert(os.execute("mkdir -p " .. d))
    assert(os.execute(("head -c 47250000 /dev/urandom | base64 -w 0 | tr '0-9+/' '            ' > %s/a.txt"):format(d)))
    assert(os.execute(("printf 'a short document beside it, of a few words\n' > %s/b.txt"):format(d)))
    local out, code, secs, rss = measured(shingle_cmd .. "cluster " .. d .. " --memory 64M -o " .. dir .. "/o6")
    assert.are.equal(0, code, out)
    assert.is_truthy(out:find("documents 2 (skipped 0)", 1, true), out)
    assert.is_true(rss < 6 * 63, ("peak RSS %.0f MiB, bound 6 x 63 MiB"):format(rss))
    assert.is_true(secs < 60, ("%.1f s, bound 60 s"):format(secs))
    -- without the full set (--verify none) only the MOD_m sample grows with it
    out, code, secs, rss = measured(shingle_cmd .. "cluster " .. d .. " --verify none -o " .. dir .. "/o7")
    assert.are.equal(0, code, out)
    assert.is_true(rss < 3 * 63, ("peak RSS %.0f MiB, bound 3 x 63 MiB"):format(rss))
  end)

  it("a 300 MB document through a pipe is sketched in a small constant times its size", function()
    -- standard input as one document, --max-bytes raised past it, no shingle
    -- limit: 45 M tokens of a 5-word sentence; was 4.5 GB for 300 MB
    local out, code, secs, rss = measured("yes 'the quick brown fox jumps' | head -c 300000000 | "
      .. shingle_cmd .. "cluster - --max-bytes 400M --max-shingles 0 -o " .. dir .. "/o8")
    assert.is_truthy(out:find("documents 1 (skipped 0)", 1, true), out)
    assert.is_true(code == 0 or code == 1, out) -- one document: nothing to cluster is not an error here
    assert.is_true(rss < 3 * 300, ("peak RSS %.0f MiB, bound 900 MiB"):format(rss))
    assert.is_true(secs < 120, ("%.1f s, bound 120 s"):format(secs))
  end)

  it("10^6 tiny documents are clustered within --memory plus a bounded overhead", function()
    local input = dir .. "/tiny.jsonl"
    -- a million one-line documents, every thousandth a copy of the one before
    assert(os.execute(("awk 'BEGIN { for (i = 1; i <= 1000000; i++) { w = (i %% 1000 == 0) ? i - 1 : i; "
      .. "printf \"{\\\"url\\\":\\\"u%%d\\\",\\\"text\\\":\\\"tiny doc %%d of the set\\\"}\\n\", i, w } }' > %s"):format(input)))
    local out, code, secs, rss = measured(shingle_cmd .. "cluster -q --memory 256M " .. input .. " -o " .. dir .. "/o3")
    assert.are.equal(0, code, out)
    assert.is_truthy(out:find("documents 1000000 (skipped 0)", 1, true), out)
    assert.is_truthy(out:find("clusters 1000 with 2000 documents", 1, true), out)
    assert.is_true(rss < 1024, ("peak RSS %.0f MiB, bound 1024 MiB"):format(rss))
    assert.is_true(secs < 300, ("%.1f s, bound 300 s"):format(secs))
  end)
end)

describe("max_shingles through the Lua paths", function()
  local shingle = require "shingle"
  local sketcher = require "shingle.sketcher"

  it("a token list with more shingles than the limit gives nil and a message, not an error", function()
    local c = shingle.unwrap(shingle.new{ w = 2, sketch = "min", s = 4 })
    local toks = { "a", "b", "c", "d", "e" } -- 4 shingles of 2
    local r = c:sketch_doc("a b c d e", toks, { max_shingles = 4 })
    assert.is_table(r)
    local none, msg = c:sketch_doc("a b c d e", toks, { max_shingles = 3 })
    assert.is_nil(none)
    assert.is_truthy(msg:find("more than 3 shingles", 1, true), msg)
    -- the limit is per call: the next document without one is sketched
    assert.is_table(c:sketch_doc("a b c d e", toks))
  end)

  it("a rule set's document over the limit is a document problem, on the pool's threads and in Lua", function()
    local text, html = sketcher.shinglers{ canon = "code", w = 2 }
    for _, main_thread in ipairs({ false, true }) do
      local sk = sketcher.new(text, html, { threads = 1, max_shingles = 3, main_thread = main_thread })
      local out = sk:batch({ { text = "x = y + z * w", url = "u1" }, { text = "a b", url = "u2" } })
      assert.is_truthy(out[1].error and out[1].error:find("u1: has more than 3 shingles", 1, true), tostring(out[1].error))
      assert.is_truthy(out[2].sketch)
    end
  end)

  it("the pool skips a document over the limit and sketches the next", function()
    local text, html = sketcher.shinglers{ w = 2 }
    local sk = sketcher.new(text, html, { threads = 2, max_shingles = 3 })
    local out = sk:batch({ { text = "one two three four five", url = "u1" }, { text = "one two three", url = "u2" } })
    assert.is_truthy(out[1].error and out[1].error:find("has more than 3 shingles", 1, true), tostring(out[1].error))
    assert.is_nil(out[2].error)
  end)
end)

describe("a large document sketched in blocks by the pool (core/stream.h)", function()
  it("gets the sketch the binding makes from its whole arrays", function()
    local shingle = require "shingle"
    local sketcher = require "shingle.sketcher"
    -- 1.5 million tokens: 23 blocks of 64 Ki tokens
    local words, rand = {}, require("support").rng(7)
    for i = 1, 1500000 do words[i] = "w" .. rand(5000) end
    local text = table.concat(words, " ")
    for _, kind in ipairs({ "min", "mod" }) do
      local opts = { w = 4, sketch = kind, s = 50, m = 8 }
      local t, h = sketcher.shinglers(opts)
      local sk = sketcher.new(t, h, { threads = 2 })
      local out = sk:batch({ { text = text, url = "big" }, { text = text, url = "again" } })
      local ref = shingle.new(opts):sketch(text)
      assert.is_nil(out[1].error)
      assert.are.equal(ref:serialize(), out[1].sketch:serialize())
      assert.are.equal(ref:serialize(), out[2].sketch:serialize())
      assert.are.equal(1500000, out[1].tokens)
    end
  end)
end)
