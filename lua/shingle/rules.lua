--- Canonicalization rule sets (Broder 1997: "documents that differ only in
-- formatting or other information that we chose to ignore ... will be reduced
-- to the same sequence"). A rule set is an ordered list of steps:
--
--   "strip_html" "lowercase" "fold" "drop_numbers" "drop_punctuation"
--   "keep_punctuation" "collapse_whitespace"      built-in steps: they configure
--                                                 the C tokenizer
--   { name = "n", text = function(s) return s end }       a Lua step over the text
--   { name = "n", tokenize = function(s) return list end } a Lua tokenizer in place of C's
--   { name = "n", tokens = function(list) return list end } a Lua step over the tokens
--
-- A rule set of one step that also names a C tokenizer (c = "code") runs
-- that tokenizer in C instead of its Lua function, which stays the
-- reference the specs compare it with; the rules' identity is the same.
-- Likewise a text step that names a C text step (c = "tweet"), when it is
-- the rule set's only Lua step.
--
-- Text steps run first, in order, on the raw text; then the tokenizer (C,
-- configured by the built-in steps, or a Lua one); then token steps, in order.
-- A rule set of built-in steps only runs entirely in C. Every Lua step has a
-- name: the names are part of the rules' identity, which every sketch carries,
-- so sketches made under other rules are refused.
local M = {}

-- the tokenizers of C a one-step rule set may name (c = ...), as the
-- shingler options that select them
local ctokenizers = { code = { code = true } }
-- the text steps of C (c = ...), as the shingler options that select them
local ctexts = { tweet = { tweet = true } }

local builtin = {
  strip_html = { html = true },
  lowercase = { lowercase = true },
  fold = { fold = true, lowercase = true },
  drop_numbers = { numbers = false },
  drop_punctuation = { punctuation = false },
  keep_punctuation = { punctuation = true },
  collapse_whitespace = {}, -- the tokenizer splits on any run of white space already
}
M.builtin = builtin

local names = require("shingle.util").sorted_keys

--- compile(rules) -> { flags = {...}, text = {fn}, tokenize = fn, tokens = {fn}, signature = string, lua = bool }
-- Raises on a malformed rule set, naming the step at fault.
function M.compile(rules, level)
  level = (level or 1) + 1
  if type(rules) == "string" then
    local named = M.sets[rules]
    if not named then error(("unknown rule set '%s'; the named sets are: %s"):format(rules, names(M.sets)), level) end
    rules = named
  end
  if type(rules) ~= "table" then error("a rule set is a list of steps or the name of a rule set", level) end
  -- a rule set starts from the tokens as they are, and each step changes that
  local c = { flags = { html = false, lowercase = false, fold = false, numbers = true, punctuation = true },
    text = {}, tokens = {}, parts = {} }
  local stage = 0 -- 0: text steps, 1: tokenizer chosen, 2: token steps
  for i, step in ipairs(rules) do
    if type(step) == "string" then
      local b = builtin[step]
      if not b then
        error(("step %d of the rule set is '%s'; built-in steps are: %s"):format(i, step, names(builtin)), level)
      end
      for k, v in pairs(b) do c.flags[k] = v end
      c.parts[#c.parts + 1] = step
    elseif type(step) == "table" then
      if type(step.name) ~= "string" or step.name == "" then
        error(("step %d of the rule set has no name: a Lua step needs one, since the names identify the rules a sketch was made with"):format(i), level)
      end
      local kinds = 0
      for _, k in ipairs({ "text", "tokenize", "tokens" }) do
        if step[k] ~= nil then
          if type(step[k]) ~= "function" then error(("step %d (%s): %s must be a function"):format(i, step.name, k), level) end
          kinds = kinds + 1
        end
      end
      if kinds ~= 1 then
        error(("step %d (%s) must have exactly one of text, tokenize or tokens"):format(i, step.name), level)
      end
      if step.text then
        if stage > 0 then error(("step %d (%s): text steps must come before the tokenizer and token steps"):format(i, step.name), level) end
        c.text[#c.text + 1] = step.text
        c.parts[#c.parts + 1] = "text:" .. step.name
      elseif step.tokenize then
        if stage > 0 then error(("step %d (%s): only one tokenizer, before the token steps"):format(i, step.name), level) end
        c.tokenize = step.tokenize
        stage = 1
        c.parts[#c.parts + 1] = "tokenize:" .. step.name
      else
        c.tokens[#c.tokens + 1] = step.tokens
        stage = 2
        c.parts[#c.parts + 1] = "tokens:" .. step.name
      end
    else
      error(("step %d of the rule set is a %s; use a built-in name or { name = ..., text | tokenize | tokens = function }")
        :format(i, type(step)), level)
    end
  end
  c.lua = #c.text > 0 or c.tokenize ~= nil or #c.tokens > 0
  c.signature = c.lua and table.concat(c.parts, ";") or nil
  local only = rules[1]
  if #rules == 1 and type(only) == "table" and only.c ~= nil and not only.text then
    if not ctokenizers[only.c] then
      error(("step 1 (%s): c = '%s' names no C tokenizer; the C tokenizers are: %s"):format(only.name, tostring(only.c),
        names(ctokenizers)), level)
    end
    for k, v in pairs(ctokenizers[only.c]) do c.flags[k] = v end
    c.lua = false
  elseif #c.text == 1 and not c.tokenize and #c.tokens == 0 then
    for i, step in ipairs(rules) do
      if type(step) == "table" and step.c ~= nil then
        if not ctexts[step.c] then
          error(("step %d (%s): c = '%s' names no C text step; the C text steps are: %s"):format(i, step.name,
            tostring(step.c), names(ctexts)), level)
        end
        for k, v in pairs(ctexts[step.c]) do c.flags[k] = v end
        c.lua = false
      end
    end
  end
  return c
end

--- Apply the Lua parts of compiled rules c to text, with the C shingler sh
-- for tokenizing. Returns the token list, or nil, err.
function M.tokens(c, sh, text)
  for _, f in ipairs(c.text) do
    text = f(text)
    if type(text) ~= "string" then return nil, "a text step of the rule set returned a " .. type(text) .. ", not a string" end
  end
  local toks, err
  if c.tokenize then toks = c.tokenize(text) else toks, err = sh:tokens(text) end
  if not toks then return nil, err end
  for _, f in ipairs(c.tokens) do
    toks = f(toks)
    if type(toks) ~= "table" then return nil, "a token step of the rule set returned a " .. type(toks) .. ", not a list" end
  end
  return toks
end

--- A rule set by name (html, text, code, tweet) or from a Lua file that
-- returns one: what the command line's --rules takes.
function M.load(spec)
  if type(spec) ~= "string" then return spec end
  if M.sets[spec] then return spec end
  if spec:find("/", 1, true) or spec:match("%.lua$") then
    local chunk, err = loadfile(spec)
    if not chunk then error(("cannot load the rule set %s: %s"):format(spec, err), 0) end
    local ok, r = pcall(chunk)
    if not ok then error(("the rule set %s failed to load: %s"):format(spec, tostring(r)), 0) end
    return r
  end
  return spec -- compile() names the known sets in its error
end

-- ---- named rule sets -------------------------------------------------------

local code_keywords = {}
for w in ([[and break do else elseif end false for function goto if in local nil not or repeat return then true until while
  auto case char const continue default double enum extern float int long register short signed sizeof static struct
  switch typedef union unsigned void volatile class def elif except finally from import is lambda pass raise try with yield
  public private protected new this throw throws catch var let package interface extends implements]]):gmatch("%a+") do
  code_keywords[w] = true
end

--- Tokens of source code with identifiers, numbers and strings normalised, so
-- renaming variables does not hide copied code ("Intellectual property and
-- plagiarism"). Comments are dropped.
function M.code_tokens(src)
  local toks, i, n = {}, 1, #src
  while i <= n do
    local c = src:sub(i, i)
    local two = src:sub(i, i + 1)
    if c:match("%s") then i = i + 1
    elseif two == "//" or c == "#" or two == "--" then -- line comments (and C preprocessor lines)
      local e = src:find("\n", i, true) or n
      i = e + 1
    elseif two == "/*" then
      local _, e = src:find("*/", i + 2, true)
      i = (e or n) + 1
    elseif c == '"' or c == "'" then
      local j = i + 1
      while j <= n and src:sub(j, j) ~= c do
        if src:sub(j, j) == "\\" then j = j + 1 end
        j = j + 1
      end
      toks[#toks + 1] = "STR"
      i = j + 1
    elseif c:match("[%a_\128-\255]") then -- identifiers, UTF-8 letters included
      local w = src:match("^[%w_\128-\255]+", i)
      toks[#toks + 1] = code_keywords[w] and w or "ID"
      i = i + #w
    elseif c:match("%d") then
      local num = src:match("^[%w_.]+", i)
      toks[#toks + 1] = "NUM"
      i = i + #num
    elseif not c:match("%p") then -- a control character: a separator
      i = i + 1
    else
      local op = src:match("^[%p]+", i)
      -- operators of up to three characters, one token each
      op = op:sub(1, 3):match("^[=!<>+%-*/%%&|^~:.]*[=<>&|+%-:.]?") or op:sub(1, 1)
      if op == "" then op = c end
      toks[#toks + 1] = op
      i = i + #op
    end
  end
  return toks
end

--- The text of a tweet without the retweet markers, @mentions and URLs that
-- differ between copies of the same message (the 2009 shingling post).
function M.tweet_text(s)
  s = s:gsub("https?://%S+", " ")
  s = s:gsub("%f[%w]RT%f[%W]:?", " ")
  s = s:gsub("@[%w_]+:?", " ")
  s = s:gsub("^%s*[%w_]+:%s", " ") -- a leading "user:" as timelines print it
  return s
end

M.sets = {
  -- the paper's canonicalization for web pages: formatting and case ignored
  html = { "strip_html", "lowercase", "drop_punctuation" },
  text = { "lowercase", "drop_punctuation" },
  code = { { name = "code", tokenize = M.code_tokens, c = "code" } },
  tweet = { { name = "tweet", text = M.tweet_text, c = "tweet" }, "lowercase", "drop_punctuation" },
}

return M
