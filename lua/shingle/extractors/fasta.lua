--- DNA or protein sequences in FASTA as the set of their k-mers: sequences
-- sharing most k-mers resemble each other, the way MinHash sketches compare
-- genomes. A k-mer and its reverse complement count as one for DNA.
--
-- A sequence of only A, C, G, T and N is DNA. Version 2 (2026-11-23): a DNA
-- k-mer with an N in it is no feature (as Mash and sourmash skip them), and
-- for k <= 32 the feature of a canonical k-mer is its bases packed 2 bits
-- each (A 0, C 1, G 2, T 3; the first base in the high bits of the first
-- byte; ceil(k / 4) bytes), which C rolls in a 64-bit word. Sketches made by
-- version 1 (N a base, the k-mer's letters as the feature) are refused in
-- comparisons with version 2's, which say so: the identity is "fasta@2".
--
-- The pipeline's threads run the same extraction in C (core/fasta.c, 2-bit
-- codes of both strands rolled, or rolling fingerprints for k > 32 and
-- proteins); this Lua function is its reference.
--
-- The module is the extractor for k = 21; fasta.new{ k = 15 } makes another,
-- independent one (named "fasta:k=15", so that its sketches are not compared
-- with those of another k). By name: --extractor fasta or fasta:k=15.
local comp = { A = "T", C = "G", G = "C", T = "A", N = "N" }

local function canonical(kmer)
  local rc = kmer:reverse():gsub(".", comp)
  return rc < kmer and rc or kmer
end

local two = { [65] = 0, [67] = 1, [71] = 2, [84] = 3 } -- A C G T by byte

-- The bases of a k-mer of A, C, G, T packed 2 bits each, four to a byte,
-- the first in the high bits, the last byte filled up with zero bits.
local function pack(kmer)
  local bytes = {}
  for i = 1, #kmer, 4 do
    local a, b, c, d = kmer:byte(i, i + 3)
    bytes[#bytes + 1] = string.char(((two[a] * 4 + (two[b] or 0)) * 4 + (two[c] or 0)) * 4 + (two[d] or 0))
  end
  return table.concat(bytes)
end

local DEFAULT_K = 21

local function extract(k, bytes, path)
  local seqs, cur = {}, nil
  local n = 0
  for line in bytes:gmatch("[^\r\n]+") do
    n = n + 1
    if line:sub(1, 1) == ">" then
      cur = {}
      seqs[#seqs + 1] = cur
    elseif line:sub(1, 1) ~= ";" then
      if not cur then return nil, ("%s: line %d: sequence data before the first '>' header: not FASTA"):format(path or "input", n) end
      cur[#cur + 1] = line:upper():gsub("%s", "")
    end
  end
  if #seqs == 0 then return nil, (path or "input") .. ": no FASTA record (a line starting with '>')" end
  local feats = {}
  for _, parts in ipairs(seqs) do
    local s = table.concat(parts)
    local dna = not s:find("[^ACGTN]")
    for i = 1, #s - k + 1 do
      local kmer = s:sub(i, i + k - 1)
      if not dna then
        feats[#feats + 1] = kmer
      elseif not kmer:find("N", 1, true) then
        local c = canonical(kmer)
        feats[#feats + 1] = k <= 32 and pack(c) or c
      end
    end
  end
  return feats
end

local M

--- fasta.new{ k = 21 } -> an extractor of k-mers (k from 1 to 1000).
local function new(opts)
  opts = opts or {}
  local k = opts.k or DEFAULT_K
  for key in pairs(opts) do
    if key ~= "k" then error(("unknown FASTA extractor option '%s'; the option is k"):format(tostring(key)), 2) end
  end
  if type(k) ~= "number" or k ~= math.floor(k) or k < 1 or k > 1000 then
    error(("the FASTA extractor's k is %s; use a whole number from 1 to 1000"):format(tostring(k)), 2)
  end
  local name = k == DEFAULT_K and "fasta" or ("fasta:k=" .. k)
  return {
    name = name,
    identity = name .. "@2", -- version 2: N-free k-mers, 2-bit packed (above)
    retired = { name },      -- version 1's identity: refused, saying so
    kind = "set",
    k = k,
    c = "fasta", -- the pipeline extracts in C (core/fasta.h): this extract is its reference
    new = new,
    extract = function(bytes, path) return extract(k, bytes, path) end,
  }
end

M = new()
return M
