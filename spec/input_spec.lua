-- shingle.input: the one rule for HTML and the one policy for problems, the
-- same for the clustering pipeline, the collections and the index.
local support = require "support"
local tmpdir, write = support.tmpdir, support.write
local input = require "shingle.input"
local cjson = require "cjson"



describe("input.is_html()", function()
  it("takes a file as HTML by its name: .html, .htm, .xhtml and .shtml, in any case", function()
    for _, p in ipairs({ "a.html", "a.htm", "A.HTML", "x/y.xhtml", "page.shtml", "PAGE.SHTML" }) do
      assert.is_true(input.is_html(p), p)
    end
    for _, p in ipairs({ "a.txt", "a.html.txt", "html", "a.shtm", "a.md" }) do
      assert.is_false(input.is_html(p), p)
    end
  end)

  it("takes a text without a name as HTML by its content", function()
    assert.is_true(input.is_html(nil, "<!DOCTYPE html><html><body>x</body></html>"))
    assert.is_true(input.is_html(nil, "  <p>a paragraph</p>"))
    assert.is_false(input.is_html(nil, "a < b and <p> later"))
    assert.is_false(input.is_html(nil, nil))
  end)

  it("lets --html and --text decide over name and content", function()
    assert.is_false(input.is_html("a.html", "<html>", false))
    assert.is_true(input.is_html("a.txt", "plain", true))
  end)

  it("is the rule the sources apply to every document", function()
    local dir = tmpdir()
    write(dir .. "/a.shtml", "<p>x</p>")
    write(dir .. "/b.txt", "<html><body>looks like HTML, named text</body></html>")
    write(dir .. "/c.jsonl", cjson.encode({ url = "u1", text = "<html><body>x</body></html>" }) .. "\n"
      .. cjson.encode({ url = "u2.html", text = "plain words" }) .. "\n")
    local html = {}
    for d in input.documents({ dir .. "/a.shtml", dir .. "/b.txt", dir .. "/c.jsonl" }) do html[#html + 1] = d.html end
    assert.are.same({ true, false, true, false }, html)
    os.execute("rm -rf " .. dir)
  end)
end)

describe("input.reader()", function()
  local dir
  setup(function()
    dir = tmpdir()
    write(dir .. "/good.jsonl", cjson.encode({ url = "a", text = "one two three four five six seven" }) .. "\n"
      .. "{ broken\n" .. cjson.encode({ url = "b", text = "eight nine ten eleven twelve" }) .. "\n")
    -- an input that exists and cannot be read as JSON Lines, even by root
    assert(os.execute("mkdir " .. dir .. "/unreadable.jsonl"))
  end)
  teardown(function() os.execute("rm -rf " .. dir) end)

  it("warns about and counts an unreadable input, a broken record and a rejected document, and goes on", function()
    local msgs, seen = {}, 0
    local r = input.reader{ format = "jsonl", warn = function(m) msgs[#msgs + 1] = m end }
    assert.is_true(r:each({ dir .. "/unreadable.jsonl", dir .. "/good.jsonl" }, function(docs)
      seen = seen + #docs
      return r:problem("documents", "doc b: rejected")
    end))
    assert.are.equal(2, seen)
    assert.are.same({ inputs = 1, records = 1, documents = 1 }, r.skipped)
    assert.are.equal(3, r:total_skipped())
    assert.is_truthy(msgs[1]:find("unreadable.jsonl: it is a directory", 1, true) and msgs[1]:find("; skipped$"), msgs[1])
    assert.is_truthy(msgs[2]:find("good.jsonl: line 2:", 1, true), msgs[2])
    assert.are.equal("doc b: rejected", msgs[3])
  end)

  it("stops at the first problem with strict, naming it", function()
    local r = input.reader{ strict = true }
    local ok, err = r:each({ dir .. "/good.jsonl" }, function() return true end)
    assert.is_nil(ok)
    assert.is_truthy(err:find("good.jsonl: line 2:", 1, true) and err:find("--strict makes it fatal", 1, true), err)
    local ok2, err2 = input.reader{ strict = true, format = "jsonl" }:each({ dir .. "/unreadable.jsonl" },
      function() return true end)
    assert.is_nil(ok2)
    assert.is_truthy(err2:find("unreadable.jsonl", 1, true), err2)
  end)

  it("refuses an input that does not exist before reading anything, with or without strict", function()
    for _, strict in ipairs({ false, true }) do
      local called = false
      local ok, err = input.reader{ strict = strict }:each({ dir .. "/good.jsonl", dir .. "/missing.jsonl" },
        function() called = true; return true end)
      assert.is_nil(ok)
      assert.are.equal("cannot read input " .. dir .. "/missing.jsonl: No such file or directory", err)
      assert.is_false(called)
    end
  end)


  it("reads Lua functions as inputs, one document per call", function()
    local n = 0
    local function gen() n = n + 1; if n <= 3 then return { url = "f" .. n, text = "x" } end end
    local urls = {}
    assert.is_true(input.reader{ batch = 2 }:each({ gen }, function(docs)
      for _, d in ipairs(docs) do urls[#urls + 1] = d.url end
      return true
    end))
    assert.are.same({ "f1", "f2", "f3" }, urls)
  end)
end)

-- The same unreadable input in the three places that read inputs: a warning
-- and a count without strict (the index used to abandon the add), the
-- add or run stopped with strict.
describe("an unreadable input", function()
  local dir, docs
  setup(function()
    dir = tmpdir()
    docs = dir .. "/docs.jsonl"
    write(docs, cjson.encode({ url = "http://a.example/1", text = "the first document has some words in it" }) .. "\n")
    assert(os.execute("mkdir " .. dir .. "/unreadable.jsonl")) -- exists, and is no JSON Lines file
  end)
  teardown(function() os.execute("rm -rf " .. dir) end)

  local runners = {
    pipeline = function(out, strict, log)
      local p = require("shingle.pipeline").new{ outdir = out, quiet = true, strict = strict, log = log, format = "jsonl" }
      local sum, err = p:run({ dir .. "/unreadable.jsonl", docs })
      return sum and sum.skipped, err
    end,
    collections = function(out, strict, log)
      local c = require("shingle.collections").new{ outdir = out, quiet = true, strict = strict, log = log,
        memory = 16 * 1024 * 1024, format = "jsonl" }
      local sum, err = c:run({ dir .. "/unreadable.jsonl", docs })
      return sum and sum.graph.skipped_inputs, err
    end,
    index = function(out, strict, log)
      local ix = assert(require("shingle.index").open(out))
      local st, err = ix:add({ dir .. "/unreadable.jsonl", docs }, { sweep = "s1", strict = strict, threads = 1,
        format = "jsonl" })
      if st then for _, e in ipairs(st.errors) do log("shingle: " .. e) end end
      ix:close()
      return st and st.skipped, err
    end,
  }
  for _, name in ipairs({ "pipeline", "collections", "index" }) do
    it("is skipped with a warning and counted by the " .. name .. ", and stops it with strict", function()
      local msgs = {}
      local skipped, err = runners[name](dir .. "/" .. name, false, function(m) msgs[#msgs + 1] = m end)
      assert.are.equal(1, skipped, tostring(err))
      assert.is_truthy(msgs[1] and msgs[1]:find("unreadable.jsonl", 1, true) and msgs[1]:find("skipped", 1, true),
        tostring(msgs[1]))
      local none, serr = runners[name](dir .. "/" .. name .. "-strict", true, function() end)
      assert.is_nil(none)
      assert.is_truthy(serr:find("unreadable.jsonl", 1, true), serr)
    end)
  end
end)
