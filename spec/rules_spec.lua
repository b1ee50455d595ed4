local shingle = require "shingle"
local rules = require "shingle.rules"

describe("rule sets (shingle.new{ canon = ... })", function()
  it("built-in steps configure the C tokenizer and give the same sketches as the equivalent options", function()
    local a = shingle.new{ canon = { "strip_html", "lowercase", "drop_punctuation" }, sketch = "full" }
    local b = shingle.new{ html = true, sketch = "full" }
    local doc = "<p>Hello, <b>World</b>! 42 times</p>"
    assert.is_true(a:sketch(doc) == b:sketch(doc))
    assert.are.equal(a:params().rules, b:params().rules)
  end)

  it("a rule set of built-in steps is the C shingler itself, with no Lua in the loop", function()
    local sh = shingle.new{ canon = "html" }
    assert.are.equal(sh, shingle.unwrap(sh))
    assert.is_truthy(tostring(sh):find("shingle.Shingler(w=", 1, true))
  end)

  it("each built-in step does what its name says", function()
    local function toks(r, s) return (shingle.new{ canon = r }:tokens(s)) end
    assert.are.same({ "A", "b", ",", "42" }, toks({}, "A b, 42"))
    assert.are.same({ "a", "b", ",", "42" }, toks({ "lowercase" }, "A b, 42"))
    assert.are.same({ "A", "b", "42" }, toks({ "drop_punctuation" }, "A b, 42"))
    assert.are.same({ "A", "b", "," }, toks({ "drop_numbers" }, "A b, 42"))
    assert.are.same({ "ecole", "," }, toks({ "fold" }, "École,"))
    assert.are.same({ "hi" }, toks({ "strip_html", "drop_punctuation" }, "<i>hi</i>!"))
    assert.are.same({ "a", "b" }, toks({ "collapse_whitespace" }, "a \t\n b"))
  end)

  it("runs Lua text steps, then the tokenizer, then Lua token steps", function()
    local order = {}
    local sh = shingle.new{ w = 2, canon = {
      { name = "no-signature", text = function(s) order[#order + 1] = "text"; return (s:gsub("\n%-%- \n.*$", "")) end },
      "lowercase", "drop_punctuation",
      { name = "stop-words", tokens = function(t)
        order[#order + 1] = "tokens"
        local out = {}
        for _, w in ipairs(t) do if w ~= "the" and w ~= "a" then out[#out + 1] = w end end
        return out
      end },
    } }
    assert.are.same({ "cat", "sat", "on", "mat" }, sh:tokens("The cat sat on a mat.\n-- \nBob, sent from a phone"))
    assert.are.same({ "text", "tokens" }, order)
    local a = sh:sketch("The cat sat on a mat.\n-- \nAlice")
    local b = sh:sketch("cat sat on the mat!\n-- \nBob")
    assert.are.equal(1, a:resemblance(b))
  end)

  it("normalises numbers and dates to placeholders with a token step", function()
    local sh = shingle.new{ w = 3, canon = { "lowercase", "drop_punctuation",
      { name = "numbers", tokens = function(t)
        for i, w in ipairs(t) do if w:match("^%d+$") then t[i] = "#" end end
        return t
      end } } }
    assert.are.equal(1, sh:sketch("invoice 1234 due 2026 11 30"):resemblance(sh:sketch("Invoice 9876 due 2027 01 15")))
  end)

  it("makes the rule set part of every sketch's identity, refusing sketches from other rules", function()
    local plain = shingle.new{ w = 2 }
    local ruled = shingle.new{ w = 2, canon = { "lowercase", "drop_punctuation", { name = "x", tokens = function(t) return t end } } }
    local renamed = shingle.new{ w = 2, canon = { "lowercase", "drop_punctuation", { name = "y", tokens = function(t) return t end } } }
    assert.has_error(function() plain:sketch("a b c"):resemblance(ruled:sketch("a b c")) end)
    assert.has_error(function() ruled:sketch("a b c"):resemblance(renamed:sketch("a b c")) end)
    assert.are.equal(1, ruled:sketch("a b c"):resemblance(ruled:sketch("A b, c")))
  end)

  it("errors on malformed rule sets, naming the step at fault", function()
    assert.has_error(function() shingle.new{ canon = { "lower" } } end,
      "step 1 of the rule set is 'lower'; built-in steps are: collapse_whitespace, drop_numbers, drop_punctuation, fold, keep_punctuation, lowercase, strip_html")
    assert.has_error(function() shingle.new{ canon = { { text = function(s) return s end } } } end,
      "step 1 of the rule set has no name: a Lua step needs one, since the names identify the rules a sketch was made with")
    assert.has_error(function() shingle.new{ canon = { { name = "t", tokens = function(t) return t end }, { name = "x", text = function(s) return s end } } } end,
      "step 2 (x): text steps must come before the tokenizer and token steps")
    assert.has_error(function() shingle.new{ canon = "htm" } end, "unknown rule set 'htm'; the named sets are: code, html, text, tweet")
    assert.has_error(function() shingle.new{ canon = "html", fold = true } end,
      "give either a rule set (canon) or the option 'fold', not both: the rule set decides canonicalization")
  end)

  it("returns nil and an error when a Lua step returns the wrong type", function()
    local sh = shingle.new{ canon = { { name = "bad", text = function() return 42 end } } }
    local s, err = sh:sketch("x")
    assert.is_nil(s)
    assert.are.equal("a text step of the rule set returned a number, not a string", err)
  end)
end)

describe("the named rule sets", function()
  it("code: renamed identifiers and changed literals do not hide a copy", function()
    local sh = shingle.new{ canon = "code", w = 6, sketch = "full" }
    local a = [[
      int sum(int *v, int n) { int total = 0; for (int i = 0; i < n; i++) total += v[i]; return total; } // adds]]
    local b = [[
      /* renamed */ int add_all(int *xs, int count) {
        int acc = 0;
        for (int k = 0; k < count; k++) acc += xs[k];
        return acc; }]]
    assert.are.equal(1, sh:sketch(a):resemblance(sh:sketch(b)))
    assert.are.same({ "int", "ID", "(", "ID", ")", "{", "return", "STR", ";", "}" }, rules.code_tokens('int f(x) { return "s"; }'))
  end)

  it("code: reads identifiers with UTF-8 letters and control characters without failing", function()
    local toks = shingle.rules.code_tokens("caf\xc3\xa9 = r\xc3\xa9sum\xc3\xa9 + 1;\1\127 \xff\xfe x")
    assert.are.same({ "ID", "=", "ID", "+", "NUM", ";", "ID", "ID" }, toks)
  end)

  it("tweet: retweet markers, mentions and URLs are dropped", function()
    local sh = shingle.new{ canon = "tweet", w = 3, sketch = "full" }
    local a = sh:sketch("phpnw09: 1 Week 'til #phpnw09 - let me hear you say w00t!")
    local b = sh:sketch("RT @phpnw09: 1 Week 'til #phpnw09 - let me hear you say w00t! http://t.co/x")
    assert.are.equal(1, a:resemblance(b))
  end)

  it("html equals the paper's canonicalization: tags, case and punctuation ignored", function()
    local sh = shingle.new{ canon = "html", sketch = "full", w = 3 }
    assert.are.equal(1, sh:sketch("<h1>A Rose</h1><p>is a rose, is a rose.</p>"):resemblance(sh:sketch("a rose is a rose is a rose")))
  end)
end)

local function lcg(seed)
  local s = seed
  return function(n)
    s = (s * 16807) % 2147483647
    return s % n + 1
  end
end

describe("the code rule set in C", function()
  it("tokenizes as rules.code_tokens does, token for token, on real and odd source", function()
    local sh = shingle.new{ canon = "code" }
    local srcs = {}
    for _, f in ipairs({ "core/canon.c", "core/codetok.c", "lua/shingle/rules.lua", "spec/simd_corpus.lua",
      "scripts/test.sh" }) do
      local h = assert(io.open(f, "rb"))
      srcs[#srcs + 1] = h:read("a")
      h:close()
    end
    local r = lcg(5)
    local bits = { "a", "_x9", "if", "IF", "0x1F", "3.14e-2", "..", "...", "<<=", "!==", "->", "::", "--", "//", "/*",
      "*/", "#", "\"s\\\"t\"", "'c'", "\"", "'", "\\", "\n", " ", "\t", "\1", "\127", "\xc3\xa9", "\xff", "(", ")",
      "{", "}", ";", ",", "=", "+", "-", "*", "/", "%", "&&", "||", "^", "~", "?", "@", "$", "`", "return",
      "implements", "interface", "function", "elseif", "x1", "1x", "_", "\r", "\v", "\f", "long_identifier_1",
      "a_much_longer_identifier_than_sixteen", "0.5e10", "Implements" }
    for _ = 1, 400 do
      local t = {}
      for i = 1, r(60) do t[i] = bits[r(#bits)] end
      srcs[#srcs + 1] = table.concat(t, r(2) == 1 and " " or "")
    end
    -- strings that end in an escape or at the end of the input
    for _, src in ipairs{ '"abc\\', "'\\", '"\\"', 'x = "a\\\\" + y', '"\\\\\\"q" z', "s = 'it\\'s' + t", '"',
      -- runs of identifier characters and of white space across 64-byte blocks
      ("a"):rep(130) .. (" "):rep(70) .. ("b1_"):rep(30) .. "\t\n" .. ("\xc3\xa9x"):rep(40) .. "+" .. ("9"):rep(65) } do
      srcs[#srcs + 1] = src
    end
    for i, src in ipairs(srcs) do
      assert.are.same(rules.code_tokens(src), (sh:tokens(src)), "source " .. i)
    end
    -- every scanner level (those the processor lacks give the best it has),
    -- with tokens at every offset of the 64-byte blocks
    local long = {}
    for k = 1, 300 do long[k] = bits[(k * 7) % #bits + 1] .. (k % 5 == 0 and "\n" or " ") end
    srcs[#srcs + 1] = table.concat(long)
    local lua = shingle.new{ canon = { { name = "code", tokenize = rules.code_tokens } }, sketch = "full", w = 3 }
    for _, level in ipairs({ "portable", "sse2", "avx2", "avx512" }) do
      local shl = shingle.new{ canon = "code", simd = level }
      local full = shingle.new{ canon = "code", simd = level, sketch = "full", w = 3 }
      for i = #srcs - 50, #srcs do
        assert.are.equal(lua:sketch(srcs[i]):serialize(), full:sketch(srcs[i]):serialize(), level .. " sketch " .. i)
      end
      for k = 0, 70 do
        local src = ("x"):rep(k) .. " " .. srcs[#srcs]
        assert.are.same(rules.code_tokens(src), (shl:tokens(src)), level .. " offset " .. k)
      end
      for i = #srcs - 50, #srcs do
        assert.are.same(rules.code_tokens(srcs[i]), (shl:tokens(srcs[i])), level .. " source " .. i)
      end
    end
  end)

  it("keeps the identity of the code rule set's sketches", function()
    local lua = shingle.new{ canon = { { name = "code", tokenize = rules.code_tokens } }, sketch = "full" }
    local c = shingle.new{ canon = "code", sketch = "full" }
    assert.are.equal(lua:params().rules, c:params().rules)
    local src = "for (int i = 0; i < n; i++) total += v[i]; return total;"
    assert.are.equal(lua:sketch(src):serialize(), c:sketch(src):serialize())
  end)
end)

describe("the tweet rule set in C", function()
  -- the reference: the same rule set with the text step in Lua
  local function lua_set() return { { name = "tweet", text = rules.tweet_text }, "lowercase", "drop_punctuation" } end

  local r = lcg(11)
  local bits = { "RT", "rt", "RT:", "xRT", "RTx", "RT1", "_RT", "@", "@a", "@a_1:", "@@b", "@:", "http://", "https://",
    "http:// ", "https", "http", "://", "ftp://x", "x.co/a?b=c", "hTTp://", "user:", "u_1:", " ", "  ", "\t", "\n",
    "\r", "\v", "\f", ":", "::", "a", "b1", "_", "-", "'", "#tag", "\xc3\xa9", "caf\xc3\xa9", "\xe6\x97\xa5",
    "\xf0\x9f\x98\x80", "\xff", "\xc3", "\0", "W00T", "R", "T", "@R", "RT@x" }
  local texts = {
    "", "RT", "RT:", "RT @phpnw09: 1 Week 'til #phpnw09 http://t.co/x",
    "phpnw09: 1 Week 'til #phpnw09 - let me hear you say w00t!",
    "   bob_1: hi", "bob:hi", "bob: ", "bob:", "@bob: RT: see https://a.b/c?d=e#f and http://x", "http://",
    "https://x", "xhttp://y z", "RTRT RT RT", "a@b.c @ @_ @x:y", "user: RT @x: http://y",
  }
  for _ = 1, 600 do
    local t = {}
    for i = 1, r(40) do t[i] = bits[r(#bits)] end
    texts[#texts + 1] = table.concat(t, r(3) == 1 and "" or " ")
  end

  it("gives the tokens and sketches of rules.tweet_text in Lua, on real and odd text, under each invalid-UTF-8 policy", function()
    for _, invalid in ipairs({ "error", "skip", "latin1" }) do
      local c = shingle.new{ canon = "tweet", invalid = invalid, w = 3, sketch = "full" }
      local lua = shingle.new{ canon = lua_set(), invalid = invalid, w = 3, sketch = "full" }
      assert.are.equal(c, shingle.unwrap(c)) -- all in C
      assert.are_not.equal(lua, shingle.unwrap(lua))
      for i, s in ipairs(texts) do
        local ct = c:tokens(s)
        local lt = lua:tokens(s)
        assert.are.same(lt, ct, invalid .. " text " .. i)
        if ct then
          assert.are.equal(lua:sketch(s):serialize(), c:sketch(s):serialize(), invalid .. " text " .. i)
        end
      end
    end
  end)

  it("keeps byte offsets of the original text (the dropped spans become spaces)", function()
    local c = shingle.new{ canon = "tweet", w = 1 }
    local s = "RT @x: hello http://t.co/y world"
    local spans = {}
    for _, _, a, b in c:shingles(s) do spans[#spans + 1] = s:sub(a, b) end
    assert.are.same({ "hello", "world" }, spans)
  end)

  it("keeps the identity of the tweet rule set's sketches", function()
    local lua = shingle.new{ canon = lua_set(), sketch = "full" }
    local c = shingle.new{ canon = "tweet", sketch = "full" }
    assert.are.equal(lua:params().rules, c:params().rules)
  end)

  it("refuses a C text step it does not have", function()
    assert.has_error(function() shingle.new{ canon = { { name = "x", text = rules.tweet_text, c = "nope" } } } end,
      "step 1 (x): c = 'nope' names no C text step; the C text steps are: tweet")
  end)
end)
