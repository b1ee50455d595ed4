--- Options and helpers shared by the subcommands.
local M = {}

--- Declare the shingler options on an argparse command.
function M.shingler_options(c)
  c:option("-w --width", "Shingle width in tokens.", "10"):convert(tonumber)
  c:option("--sketch", "Sketch kind: min, mod, minmod, class or full.", "min")
    :choices({ "min", "mod", "minmod", "class", "full" })
  c:option("-s --size", "MIN_s sample size.", "200"):convert(tonumber)
  c:option("-m --modulus", "MOD_m modulus.", "25"):convert(tonumber)
  c:option("-k --degree", "Fingerprint polynomial degree (64; 40 as the paper).", "64"):convert(tonumber)
  c:option("--seed", "Seed for the polynomials and the permutation.")
    :convert(tonumber)
  c:option("--option", "B: the set of shingles; A: the labelled bag.", "B"):choices({ "A", "B" })
  c:option("--invalid", "Invalid UTF-8: error, skip or latin1.", "latin1"):choices({ "error", "skip", "latin1" })
  c:flag("--html", "Treat every input as HTML (default: by extension .html/.htm).")
  c:flag("--text", "Treat every input as plain text.")
  c:flag("--fold", "Fold Unicode (NFKC, case fold, strip accents).")
  c:flag("--punctuation", "Keep punctuation as tokens.")
  c:flag("--no-numbers", "Drop tokens made only of digits.")
end

--- The shingler configuration from parsed arguments, with overrides.
function M.shingler_config(a, over)
  local cfg = {
    w = a.width, sketch = a.sketch, s = a.size, m = a.modulus, k = a.degree, seed = a.seed,
    option = a.option, invalid = a.invalid, fold = a.fold, punctuation = a.punctuation,
    numbers = not a.no_numbers,
  }
  for k, v in pairs(over or {}) do cfg[k] = v end
  return cfg
end

--- The HTML choice of --html and --text: true, false, or nil (each document
-- by shingle.input's rule).
function M.forced_html(a)
  if a.html then return true end
  if a.text then return false end
  return nil
end

--- Read a whole file; nil, message naming the file on failure.
function M.read_document(path)
  local f, err = io.open(path, "rb")
  if not f then return nil, ("cannot read %s: %s"):format(path, err) end
  local s = f:read("*a")
  f:close()
  return s
end

function M.short(s, n)
  if #s <= n then return s end
  return "..." .. s:sub(-(n - 3))
end

return M
