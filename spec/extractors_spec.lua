local shingle = require "shingle"
local extractors = require "shingle.extractors"
local midi = require "shingle.extractors.midi"
local fasta = require "shingle.extractors.fasta"

describe("the MIDI extractor", function()
  local melody = { 60, 62, 64, 65, 67, 65, 64, 62, 60, 67, 72, 71, 69, 67, 65, 64, 62, 64, 60 }
  local sh = shingle.new{ w = 4, sketch = "full" }

  it("reads the notes of a Standard MIDI File", function()
    local notes = assert(midi.notes(midi.encode({ 60, 64, 67 })))
    assert.are.equal(3, #notes)
    assert.are.same({ 60, 64, 67 }, { notes[1][2], notes[2][2], notes[3][2] })
    assert.is_true(notes[2][1] > notes[1][1])
  end)

  it("matches a transposed melody fully, and a different one hardly", function()
    local up = {}
    for i, p in ipairs(melody) do up[i] = p + 7 end
    local other = { 60, 60, 67, 67, 69, 69, 67, 65, 65, 64, 64, 62, 62, 60, 67, 67, 65, 65, 64 }
    local a = extractors.sketch(midi, sh, midi.encode(melody))
    assert.are.equal(1, a:resemblance(extractors.sketch(midi, sh, midi.encode(up))))
    assert.is_true(a:resemblance(extractors.sketch(midi, sh, midi.encode(other))) < 0.2)
  end)

  it("rejects what is not MIDI, and truncated tracks, with the place", function()
    local s, err = midi.extract("GIF89a...........", "x.mid")
    assert.is_nil(s)
    assert.are.equal("x.mid: not a MIDI file (no MThd header at byte 0)", err)
    local bytes = midi.encode(melody)
    local t, terr = midi.extract(bytes:sub(1, 20), "y.mid")
    assert.is_nil(t)
    assert.is_truthy(terr:find("y.mid: truncated before a track header", 1, true), terr)
  end)
end)

describe("the code extractor", function()
  it("sees through renamed variables", function()
    local ex = assert(extractors.get("code"))
    local sh = shingle.new{ w = 5, sketch = "full" }
    local a = extractors.sketch(ex, sh, "def area(r):\n    return 3.14 * r * r\n")
    local b = extractors.sketch(ex, sh, "def surface(radius):\n    return 3.1416 * radius * radius  # circle\n")
    assert.are.equal(1, a:resemblance(b))
  end)
end)

describe("the FASTA extractor", function()
  local function seq(n, seed)
    local x, t = seed, {}
    for i = 1, n do x = (x * 16807) % 2147483647; t[i] = ("ACGT"):sub(x % 4 + 1, x % 4 + 1) end
    return table.concat(t)
  end

  it("compares sequences by their k-mer sets, strand-independently", function()
    local s = seq(2000, 3)
    local comp = { A = "T", C = "G", G = "C", T = "A" }
    local rc = s:reverse():gsub(".", comp)
    local sh = shingle.new{ sketch = "min", s = 200 }
    local a = extractors.sketch(fasta, sh, ">a\n" .. s:sub(1, 1000) .. "\n" .. s:sub(1001) .. "\n")
    local b = extractors.sketch(fasta, sh, ">b reverse strand\n" .. rc .. "\n")
    assert.are.equal(1, a:resemblance(b))
    local c = extractors.sketch(fasta, sh, ">c\n" .. seq(2000, 99) .. "\n")
    assert.is_true(a:resemblance(c) < 0.05)
    assert.are.equal(0, a:params().w) -- a feature set, not a shingled text
  end)

  it("makes independent extractors for other k, named by their k, from new() and by name", function()
    local s = ">a\n" .. seq(100, 5) .. "\n"
    local k15 = fasta.new{ k = 15 }
    assert.are.equal(100 - 21 + 1, #fasta.extract(s))
    assert.are.equal(100 - 15 + 1, #k15.extract(s))
    assert.are.equal(100 - 21 + 1, #fasta.extract(s)) -- the default extractor is untouched
    assert.are.equal("fasta", fasta.name)
    assert.are.equal("fasta:k=15", k15.name)
    local byname = assert(extractors.get("fasta:k=15"))
    assert.are.equal(15, byname.k)
    assert.are.equal("fasta:k=15", byname.name)
    local _, err = extractors.get("fasta:k=0")
    assert.are.equal("the FASTA extractor's k is 0; use a whole number from 1 to 1000", err)
    local _, err2 = extractors.get("midi:k=3")
    assert.are.equal("the extractor 'midi' takes no options (in 'midi:k=3')", err2)
    assert.has_error(function() fasta.new{ kmer = 3 } end, "unknown FASTA extractor option 'kmer'; the option is k")
  end)

  it("gives sketches of two k different rules identities, so they are never compared", function()
    local sketcher = require "shingle.sketcher"
    local s = ">a\n" .. seq(500, 7) .. "\n"
    local sh21, _, ex21 = sketcher.shinglers{ extractor = "fasta", sketch = "min", s = 50 }
    local sh15, _, ex15 = sketcher.shinglers{ extractor = "fasta:k=15", sketch = "min", s = 50 }
    local a = extractors.sketch(ex21, shingle.unwrap(sh21), s)
    local b = extractors.sketch(ex15, shingle.unwrap(sh15), s)
    assert.has_error(function() return a:resemblance(b) end)
    assert.are.equal(1, a:resemblance(extractors.sketch(ex21, shingle.unwrap(sh21), s)))
  end)

  -- the slow obvious definition of version 2's features, written anew here:
  -- every k-mer of a record's sequence; for DNA (only A, C, G, T, N) none
  -- with an N, the smaller of it and its reverse complement, and for k <= 32
  -- its bases as 2-bit codes (A 0, C 1, G 2, T 3) packed four to a byte,
  -- first base highest, the last byte filled with zero bits
  local function reference(seqs, k)
    local out = {}
    for _, s in ipairs(seqs) do
      local dna = not s:find("[^ACGTN]")
      for i = 1, #s - k + 1 do
        local kmer = s:sub(i, i + k - 1)
        if not dna then
          out[#out + 1] = kmer
        elseif not kmer:find("N") then
          local rc = {}
          for j = k, 1, -1 do rc[#rc + 1] = ({ A = "T", C = "G", G = "C", T = "A" })[kmer:sub(j, j)] end
          rc = table.concat(rc)
          local c = rc < kmer and rc or kmer
          if k <= 32 then
            local bits = {}
            for j = 1, k do bits[#bits + 1] = ({ A = "00", C = "01", G = "10", T = "11" })[c:sub(j, j)] end
            local b = table.concat(bits)
            b = b .. ("0"):rep((8 - #b % 8) % 8)
            c = b:gsub("%d%d%d%d%d%d%d%d", function(byte) return string.char(tonumber(byte, 2)) end)
          end
          out[#out + 1] = c
        end
      end
    end
    return out
  end

  it("makes version 2's features: N-free canonical k-mers, 2-bit packed up to k = 32", function()
    assert.are.same({ "\x1b", "\x1b" }, fasta.new{ k = 4 }.extract(">a\nACGTNACGT\n")) -- ACGT: 00 01 10 11
    assert.are.same({ "\x6c" }, fasta.new{ k = 4 }.extract(">a\nCGTA\n"))              -- its complement TACG is larger
    assert.are.same({ "\0\0" }, fasta.new{ k = 5 }.extract(">a\nTTTTT\n"))           -- AAAAA, two bytes
    assert.are.same({ "AXC", "XCG" }, fasta.new{ k = 3 }.extract(">p\naxcg\n"))     -- a protein: letters as they are
    local r = 0
    local function base(alpha) r = (r * 16807 + 11) % 2147483647; local i = r % #alpha + 1; return alpha:sub(i, i) end
    for _, k in ipairs({ 1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 21, 31, 32, 33, 40 }) do
      for round = 1, 6 do
        local seqs, lines = {}, {}
        for rec = 1, 1 + round % 3 do
          local alpha = (round + rec) % 4 == 0 and "ACDEFGHIKLMNPQRSTVWY" or ((round % 2 == 0) and "ACGTN" or "ACGT")
          local t = {}
          for i = 1, 20 + r % 150 do t[i] = base(alpha) end
          seqs[rec] = table.concat(t)
          lines[#lines + 1] = ">r" .. rec
          for i = 1, #seqs[rec], 50 do lines[#lines + 1] = seqs[rec]:sub(i, i + 49):lower() end
        end
        assert.are.same(reference(seqs, k), fasta.new{ k = k }.extract(table.concat(lines, "\n")), "k = " .. k)
      end
    end
  end)

  it("rejects data before the first header", function()
    local f, err = fasta.extract("ACGT\n>x\nACGT\n", "g.fa")
    assert.is_nil(f)
    assert.are.equal("g.fa: line 1: sequence data before the first '>' header: not FASTA", err)
  end)
end)

describe("extractors by name or file", function()
  it("loads a user's extractor from a Lua file and checks its shape", function()
    local path = os.tmpname() .. ".lua"
    local f = io.open(path, "w")
    f:write("return { name = 'lines', kind = 'set', extract = function(b) local t = {} for l in b:gmatch('[^\\n]+') do t[#t + 1] = l end return t end }")
    f:close()
    local ex = assert(extractors.get(path))
    local sh = shingle.new{ sketch = "full" }
    assert.are.equal(1, extractors.sketch(ex, sh, "a\nb\nc"):resemblance(extractors.sketch(ex, sh, "c\nb\na")))
    f = io.open(path, "w"); f:write("return { name = 'bad' }"); f:close()
    local bad, err = extractors.get(path)
    assert.is_nil(bad)
    assert.is_truthy(err:find("must return a table", 1, true))
    os.remove(path)
    local none, nerr = extractors.get("mp3")
    assert.is_nil(none)
    assert.are.equal("unknown extractor 'mp3'; use midi, code, fasta (fasta:k=N) or the path of a Lua file", nerr)
  end)

  it("clusters MIDI files with shingle cluster --extractor midi", function()
    local dir = os.tmpname()
    os.remove(dir)
    os.execute("mkdir -p " .. dir .. "/in")
    local mel = { 60, 62, 64, 65, 67, 69, 71, 72, 71, 69, 67, 65, 64, 62, 60, 64, 67, 72, 67, 64, 60 }
    local up = {}
    for i, p in ipairs(mel) do up[i] = p + 3 end
    local function w(name, ps) local f = io.open(dir .. "/in/" .. name, "wb"); f:write(midi.encode(ps)); f:close() end
    w("a.mid", mel); w("b.mid", up); w("c.mid", { 50, 52, 50, 55, 57, 59, 50, 48, 45, 43, 50, 52, 54, 56, 58, 60, 59, 58, 57 })
    local p = require("shingle.pipeline").new{ outdir = dir .. "/out", extractor = "midi", w = 4, sketch = "full", quiet = true }
    local sum = assert(p:run({ dir .. "/in" }))
    assert.are.equal(1, sum.clusters)
    local c = p:clusters()()
    assert.are.equal(2, c.size)
    os.execute("rm -rf " .. dir)
  end)
end)
