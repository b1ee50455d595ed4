--- DNA or protein sequences in FASTA as the set of their k-mers: sequences
-- sharing most k-mers resemble each other, the way MinHash sketches compare
-- genomes. A k-mer and its reverse complement count as one for DNA.
--
-- The pipeline's threads run the same extraction in C (core/fasta.c, rolling
-- fingerprints of both strands); this Lua function is its reference.
--
-- The module is the extractor for k = 21; fasta.new{ k = 15 } makes another,
-- independent one (named "fasta:k=15", so that its sketches are not compared
-- with those of another k). By name: --extractor fasta or fasta:k=15.
local comp = { A = "T", C = "G", G = "C", T = "A", N = "N" }

local function canonical(kmer)
  local rc = kmer:reverse():gsub(".", comp)
  return rc < kmer and rc or kmer
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
      feats[#feats + 1] = dna and canonical(kmer) or kmer
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
  return {
    name = k == DEFAULT_K and "fasta" or ("fasta:k=" .. k),
    kind = "set",
    k = k,
    c = "fasta", -- the pipeline extracts in C (core/fasta.h): this extract is its reference
    new = new,
    extract = function(bytes, path) return extract(k, bytes, path) end,
  }
end

M = new()
return M
