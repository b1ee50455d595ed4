--- DNA or protein sequences in FASTA as the set of their k-mers (k = 21 by
-- default; set SHINGLE_KMER or M.k): sequences sharing most k-mers resemble
-- each other, the way MinHash sketches compare genomes. A k-mer and its
-- reverse complement count as one for DNA.
local M = { name = "fasta", kind = "set", k = tonumber(os.getenv("SHINGLE_KMER")) or 21 }

local comp = { A = "T", C = "G", G = "C", T = "A", N = "N" }

local function canonical(kmer)
  local rc = kmer:reverse():gsub(".", comp)
  return rc < kmer and rc or kmer
end

function M.extract(bytes, path)
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
  local feats, k = {}, M.k
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

return M
