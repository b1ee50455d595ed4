-- A custom rule set: drop e-mail signatures (a Lua text step), the paper's
-- canonicalization (built-in C steps), then stop words and numbers as
-- placeholders (Lua token steps). The rule set is part of the sketches'
-- identity: sketches made under other rules are refused.
--   lua5.4 examples/custom_rules.lua
local shingle = require "shingle"

local stop = { the = true, a = true, an = true, of = true, to = true, ["and"] = true }
local rules = {
  { name = "no-signature", text = function(s) return (s:gsub("\n%-%-%s*\n.*$", "")) end },
  "lowercase", "drop_punctuation",
  { name = "stop-words", tokens = function(t)
    local out = {}
    for _, w in ipairs(t) do if not stop[w] then out[#out + 1] = w end end
    return out
  end },
  { name = "numbers", tokens = function(t)
    for i, w in ipairs(t) do if w:match("^%d+$") then t[i] = "<num>" end end
    return t
  end },
}

local sh = shingle.new{ w = 4, sketch = "full", canon = rules }
local a = "Your order 1234 of the blue lamp ships on Monday.\n-- \nAlice, Shop Inc."
local b = "YOUR ORDER 9876 of a blue lamp ships on Monday!\n--\nBob from the warehouse"
print("tokens:", table.concat(sh:tokens(a), " "))
print(("resemblance with the rules: %.2f"):format(sh:sketch(a):resemblance(sh:sketch(b))))
print(("resemblance without:        %.2f"):format(shingle.exact(a, b, { w = 4 }).resemblance))
local ok, err = pcall(function() return sh:sketch(a):resemblance(shingle.new{ w = 4, sketch = "full" }:sketch(b)) end)
print("comparing across rule sets:", ok and "allowed?!" or err)
