-- The query commands and explain, end to end through bin/shingle.
local support = require "support"
local cjson = require "cjson"

local LUA = rawget(_G, "jit") and "luajit" or "lua" .. _VERSION:match("%d+%.%d+")
local SHINGLE = LUA .. " bin/shingle "

describe("shingle explain", function()
  it("shows the shared passages with the byte ranges of both documents", function()
    local out, code = support.run(SHINGLE .. "explain --json samples/docs/rabin-original.txt samples/docs/rabin-excerpt.txt")
    assert.are.equal(0, code, out)
    local e = cjson.decode(out)
    assert.are.equal(1, e.exact.contained) -- the excerpt is all inside the original
    assert.are.equal(1, #e.passages)
    local p = e.passages[1]
    local orig = io.open("samples/docs/rabin-original.txt"):read("*a")
    local excerpt = io.open("samples/docs/rabin-excerpt.txt"):read("*a")
    assert.are.equal(excerpt:sub(p.b_first, p.b_last), orig:sub(p.a_first, p.a_last))
    assert.is_true(p.b_last - p.b_first > 350)
  end)

  it("highlights passages in plain text with --no-color", function()
    local out, code = support.run(SHINGLE .. "explain --no-color samples/docs/unionfind.txt samples/docs/unionfind-blog.html")
    assert.are.equal(0, code, out)
    assert.is_truthy(out:find("resemblance  estimated", 1, true), out)
    assert.is_truthy(out:find("shared passage", 1, true), out)
    assert.is_falsy(out:find("\27[", 1, true))
  end)
end)

describe("shingle index add, similar, cluster-of, lost, changes", function()
  local db
  setup(function()
    db = os.tmpname()
    os.remove(db)
    local out, code = support.run(SHINGLE .. "index add " .. db .. " samples/docs --sweep 2026-11-01 -q")
    assert.are.equal(0, code, out)
  end)
  teardown(function() os.execute("rm -rf " .. db) end)

  it("finds the sample's near-duplicates of a document, as JSON lines", function()
    local out, code = support.run(SHINGLE .. "similar --json " .. db .. " samples/docs/rabin-original.txt")
    assert.are.equal(0, code, out)
    local urls = {}
    for line in out:gmatch("[^\n]+") do urls[cjson.decode(line).url] = true end
    assert.is_true(urls["samples/docs/rabin-original.txt"])
    assert.is_true(urls["samples/docs/RABIN-SHOUTED.TXT"])
    assert.is_nil(urls["samples/docs/weather.txt"])
  end)

  it("gives the cluster of a URL and the lost-and-found answer", function()
    local out, code = support.run(SHINGLE .. "cluster-of " .. db .. " samples/docs/unionfind.txt")
    assert.are.equal(0, code, out)
    assert.is_truthy(out:find("unionfind-blog.html", 1, true), out)
    local out2, code2 = support.run(SHINGLE .. "lost " .. db .. " samples/docs/unionfind.txt")
    assert.are.equal(0, code2, out2)
    assert.is_truthy(out2:find("most recent: samples/docs/unionfind-blog.html (sweep 2026-11-01)", 1, true), out2)
  end)

  it("reports changes between two sweeps as a table and as JSON", function()
    local code = select(2, support.run(SHINGLE .. "index add " .. db .. " samples/docs/rabin-original.txt samples/docs/weather.txt --sweep 2026-11-08 -q"))
    assert.are.equal(0, code)
    local out, c2 = support.run(SHINGLE .. "changes --json " .. db .. " --from 2026-11-01 --to 2026-11-08")
    assert.are.equal(0, c2, out)
    local r = cjson.decode(out)
    assert.are.equal(2, r.identical)
    assert.are.equal(6, r.died)
    assert.are.equal(0, r.born)
    local txt = support.run(SHINGLE .. "changes " .. db .. " --from 2026-11-01 --to 2026-11-08")
    assert.is_truthy(txt:find("identical%s+2"), txt)
  end)

  it("names an unknown sweep and a URL that is not indexed", function()
    local out, code = support.run(SHINGLE .. "changes " .. db .. " --from nope --to 2026-11-01")
    assert.are.equal(1, code)
    assert.is_truthy(out:find("has no sweep named 'nope'", 1, true), out)
    local out2, code2 = support.run(SHINGLE .. "lost " .. db .. " http://nowhere.example/")
    assert.are.equal(1, code2)
    assert.is_truthy(out2:find("http://nowhere.example/ is not in the index", 1, true), out2)
  end)
end)
