--- Adversarial inputs for the SIMD fast paths (core/simd.h): every byte
-- value, every UTF-8 length with invalid sequences among them, tokens of
-- every length at every offset around the 16-, 32- and 64-byte block
-- boundaries and at the end of the buffer, HTML tags, comments, script and
-- entities straddling them, and a long page. Used by spec/simd_spec.lua
-- (every level against the portable one in one process) and, as a script,
-- by scripts/test.sh to compare the sketches of the default build with
-- those of a build without SIMD (-DSHINGLE_SIMD=OFF):
--   lua5.4 spec/simd_corpus.lua      prints one digest line per configuration
local M = {}

-- A small deterministic generator (Park and Miller's: exact in doubles, so
-- the same on every Lua).
local function rng(seed)
  local s = seed
  return function(n)
    s = (s * 16807) % 2147483647
    return s % n + 1
  end
end

local pieces = {
  "a", "Q", "7", "2024", "abcdefghij", "ABCDEFGHIJKLMNOPQRSTU", "x9y8", " ", "  ", "\n", "\t", ", ", ".", "-",
  "'", "\"", "=", ";", "#", "/", "\127", "\31", "\0",
  "\xc3\xa9", "\xc3\x89", "\xd0\x96", "\xc2\xa0", "\xe2\x80\x94", "\xe2\x80\x9c", "\xe2\x80\x99", "\xe6\x9d\xb1",
  "\xe3\x81\x82", "\xcc\x81", "\xf0\x9f\x98\x80", "\xf0\x90\x8c\xb0", "\xef\xbc\xa1",
  "\x80", "\xbf", "\xc0\xaf", "\xc3", "\xe2\x80", "\xf0\x9f\x98", "\xed\xa0\x80", "\xf4\x90\x80\x80", "\xff", "\xfe",
  "<", ">", "&", "<i>", "</B>", "<b >", "<br>", "<br/>", "<p>", "</p>", "<div class=\"a>b\">", "<p class='x>y'>",
  "<a href=x>", "<a title = \"q\">", "<img alt=\"it's\" src='a\"b'>", "<x y=z\"w>", "<!-- c -->", "<!---->",
  "<!DOCTYPE html>", "<?xml v?>", "<![CDATA[ab]]>", "<![CDATA[x", "<!-- open", "<script>a<b</script>",
  "<style>p{}</STYLE >", "<script", "</script>", "<span>", "</span>", "<acronym>", "<strike>", "<abcdefghij>",
  "< p>", "<1>", "<=>", "&amp;", "&nbsp;", "&eacute;", "&Eacute;", "&#65;", "&#x39;", "&#x1F600;", "&#0;",
  "&#xD800;", "&copy2020", "&amplifier", "&mdash;", "&lt;", "&gt", "&bogus;", "&#", "&#x", "&;",
  -- tags the block scanner finds from its masks, or leaves to the tag path
  "<a b=\"c>d\">", "<a b=c\"d>e\">", "<a\"b>", "<a b=\">\">", "<a b='\"' c=\"'\">", "<span-x>", "</>",
  "<a b=\"x\"y=\"z\">", "<SPAN class=\"k\">", "<a b=\"c>",
}

--- The inputs: a list of strings.
function M.inputs()
  local out = {}
  -- every byte value, at offsets across a block boundary, inside and after words
  for b = 0, 255 do
    for _, off in ipairs({ 0, 1, 15, 16, 31, 32, 62, 63, 64, 65, 127 }) do
      local pre = ("ab cd efg "):rep(13):sub(1, off)
      out[#out + 1] = pre .. string.char(b) .. "xY 1\xc3\xa9 end"
      out[#out + 1] = pre .. "w" .. string.char(b)
    end
  end
  -- a token of every length at every offset, the end of the buffer right after it
  for off = 0, 130, 3 do
    for len = 1, 140, (off % 2 == 0) and 1 or 7 do
      local word = ("abcdefghijklmnopqrstuvwxyz"):rep(6):sub(1 + off % 26, off % 26 + len)
      local pre = off > 0 and (("B "):rep(off)):sub(1, off - 1) .. " " or ""
      out[#out + 1] = pre .. word
      out[#out + 1] = pre .. word:upper() .. " q"
    end
  end
  -- markup and multibyte characters straddling the 64-byte boundary
  local marks = { "<b>", "</p>", "<a href=\"x y\" title='z'>", "<!-- a b -->", "&nbsp;", "&eacute;", "&#x41;",
    "<script>var a = '<p>';</script>", "\xe2\x80\x94", "\xc3\xa9", "<![CDATA[in side]]>", "\xf0\x9f\x98\x80",
    "<p class=\"a\" id=b data-x = 'c>d'>", "\xc3" }
  for _, m in ipairs(marks) do
    for at = 40, 140, 1 do
      local pre = ("kkkkk "):rep(30):sub(1, at - 1)
      out[#out + 1] = pre .. (at % 2 == 1 and " " or "z") .. m .. (at % 3 ~= 0 and "tail word" or " tail")
    end
  end
  -- CJK ideographs at and around the ends of the range the block scanners
  -- take without utf8proc (U+4E00..U+9FA5, core/canon.c's cjk_at), followed
  -- by what ends them, continues them or leaves them to the general scanner
  -- (and, for the masks that find them a block at a time, canon_blocks.h:
  -- followers at the edges of their rules, and CDATA)
  local after = { "", " ", "a", "\xcc\x81", "<b>", "&amp;", "\xe3\x81\x82", "\xc3\xa9", "\xe4\xb8", ".", "\x80",
    "\xe3\x80\xa9", "\xe3\x80\xaa", "\xef\xbc\x8c", "\xef\xbd\xbf", "\xef\xbe\x80", "\xef\xb8\x80", "<![CDATA[x]]>" }
  local function utf8(cp)
    return string.char(0xE0 + math.floor(cp / 4096), 0x80 + math.floor(cp / 64) % 64, 0x80 + cp % 64) -- (LuaJIT: no bit operators)
  end
  for k, cp in ipairs({ 0x4DFF, 0x4E00, 0x4E01, 0x7684, 0x9FA4, 0x9FA5, 0x9FA6, 0x9FFF }) do
    for j, a in ipairs(after) do
      local pre = ("w "):rep(40):sub(1, 55 + (k + j) % 12)
      out[#out + 1] = pre .. utf8(cp) .. a .. utf8(0x6771) .. " end"
      out[#out + 1] = pre .. utf8(cp) .. a
      out[#out + 1] = pre .. "<![CDATA[" .. utf8(cp) .. a .. utf8(cp) .. "]]>\xcc\x81 " .. utf8(cp) .. a .. "y"
    end
  end
  -- several tags and words in one block (the block scanner takes the words
  -- after all its tags)
  for pad = 0, 66, 3 do
    local pre = ("cc "):rep(30):sub(1, pad)
    out[#out + 1] = pre .. "ab<p>cd<b>ef</b> gh<br>ij<i>kl</i>mn</p>op<span class=\"n\">q</span>.r"
    out[#out + 1] = pre .. "a<script>x<y</script>b<style>p{}</style>c</script>d<b>\xe4\xb8\x80</b>\xe9\xbe\xa5<p>e"
    -- and the character references read without html_entity (entity_fast)
    out[#out + 1] = pre .. "a&lt;b&gt;c &amp;d&quot;e&#39;f&#52;g&#65;h&#00;i&#123;j&quot k&LT;l&#9x;m&lt"
  end
  -- random mixtures of the pieces
  local r = rng(2026)
  for _ = 1, 1500 do
    local t, len = {}, r(300)
    local n = 0
    while n < len do
      local p = pieces[r(#pieces)]
      t[#t + 1] = p
      n = n + #p
    end
    out[#out + 1] = table.concat(t)
  end
  -- a long page of realistic markup
  local parts = { "<p>The <b>quick</b> brown fox &amp; the lazy dog.</p>\n", "<li><a href=\"/x/y.html\">Link text</a></li>\n",
    "<td class=\"num\">1,234</td><td>caf\xc3\xa9 \xe2\x80\x94 na\xc3\xafve</td>\n", "<!-- a comment with <tags> inside -->\n",
    "<pre>int main(void) { return 0; }</pre>\n", "Plain text with \xe2\x80\x9cquotes\xe2\x80\x9d and it\xe2\x80\x99s done.  ",
    "&nbsp;&nbsp;&mdash;&#8212;", "<span class=\"pre\">shingle</span>", "\xe6\x9d\xb1\xe4\xba\xac\xe3\x81\xaf",
    "<script>if (a < b) x();</script>" }
  local t = {}
  for i = 1, 3000 do t[i] = parts[r(#parts)] end
  out[#out + 1] = table.concat(t)
  return out
end

--- The configurations compared: options of shingle.new.
M.configs = {
  { name = "text MIN_200", opts = { w = 10, invalid = "latin1" } },
  { name = "html MIN_200", opts = { w = 10, html = true, invalid = "latin1" } },
  { name = "text MOD_25", opts = { w = 10, sketch = "mod", invalid = "skip" } },
  { name = "html MOD_25", opts = { w = 4, html = true, sketch = "mod", m = 5, invalid = "skip" } },
  { name = "text full, w 3", opts = { w = 3, sketch = "full" } },
  { name = "html full, punctuation, fold", opts = { w = 2, html = true, sketch = "full", punctuation = true, fold = true,
    invalid = "latin1" } },
  { name = "text full, no numbers, no lowercase", opts = { w = 1, sketch = "full", numbers = false, lowercase = false,
    invalid = "skip" } },
}

--- What a shingler makes of an input, as one string: the sketch (serialized)
-- or the error, and the tokens with their spans.
function M.outcome(sh, input)
  local sk, err = sh:sketch(input)
  local toks, firsts, lasts = sh:tokens(input)
  local parts = { sk and sk:serialize() or ("error: " .. tostring(err)) }
  if toks then
    for i = 1, #toks do parts[#parts + 1] = toks[i] .. "@" .. firsts[i] .. "-" .. lasts[i] end
  end
  return table.concat(parts, "\0")
end

--- A digest of all outcomes of a configuration (an AUG Rabin fingerprint).
function M.digest(shingle, opts)
  local sh = shingle.new(opts)
  local parts = {}
  for i, input in ipairs(M.inputs()) do parts[i] = M.outcome(sh, input) end
  return shingle.core.tohex(sh:fingerprint(table.concat(parts, "\1")))
end

if arg and arg[0] and arg[0]:match("simd_corpus%.lua$") then
  local root = arg[0]:match("^(.-)/?spec/simd_corpus%.lua$")
  root = root ~= "" and root or "."
  local build = os.getenv("SHINGLE_BUILD") or (root .. "/build/5.4")
  package.path = root .. "/lua/?.lua;" .. root .. "/lua/?/init.lua;" .. package.path
  package.cpath = build .. "/lib/?.so;" .. package.cpath
  local shingle = require "shingle"
  for _, c in ipairs(M.configs) do print(c.name, M.digest(shingle, c.opts)) end
end

return M
