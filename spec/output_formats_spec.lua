-- The commands' outputs through the one writer (shingle.writer): the same
-- bytes from one run to the next, integers as integers, '/' unescaped, and
-- CSV/TSV wherever records are written (cluster, recluster, compare, the
-- index queries, avoid, rollup); compare never cuts a path.
local support = require "support"
local cjson = require "cjson"

local lua = rawget(_G, "jit") and "luajit" or "lua" .. _VERSION:match("%d+%.%d+")
local shingle_cmd = lua .. " bin/shingle "

local function run(args)
  local text, code = support.run(shingle_cmd .. args)
  assert.are.equal(0, code, text)
  return text
end

-- RFC 4180 fields of one CSV line (no newlines inside fields here)
local function csv_fields(line)
  local out, i = {}, 1
  while i <= #line + 1 do
    if line:sub(i, i) == '"' then
      local j, buf = i + 1, {}
      while true do
        local c = line:sub(j, j)
        if c == '"' and line:sub(j + 1, j + 1) == '"' then buf[#buf + 1] = '"'; j = j + 2
        elseif c == '"' then break
        else buf[#buf + 1] = c; j = j + 1 end
      end
      out[#out + 1] = table.concat(buf)
      i = j + 2
    else
      local j = line:find(",", i, true) or #line + 1
      out[#out + 1] = line:sub(i, j - 1)
      i = j + 1
    end
  end
  return out
end

local function lines(s)
  local t = {}
  for l in s:gmatch("[^\n]+") do t[#t + 1] = l end
  return t
end

describe("outputs", function()
  local dir
  setup(function() dir = support.tmpdir() end)
  teardown(function() support.rmdir(dir) end)

  it("of two cluster runs are the same bytes, with integers as integers and '/' as it is", function()
    run("cluster samples/docs -q -o " .. dir .. "/r1")
    run("cluster samples/docs -q -o " .. dir .. "/r2")
    for _, f in ipairs({ "clusters.jsonl", "pairs.jsonl", "docs.jsonl" }) do
      local a, b = support.read(dir .. "/r1/" .. f), support.read(dir .. "/r2/" .. f)
      assert.are.equal(a, b, f)
      assert.is_falsy(a:find("\\/", 1, true), f)
      assert.is_falsy(a:find('"cluster":%d+%.0'), f)
      assert.is_falsy(a:find('"id":%d+%.0'), f)
    end
    local s1, s2 = cjson.decode(support.read(dir .. "/r1/summary.json")), cjson.decode(support.read(dir .. "/r2/summary.json"))
    s1.phases, s2.phases = nil, nil
    assert.are.same(s1, s2)
    -- the key order is fixed: cluster, size, members
    assert.is_truthy(support.read(dir .. "/r1/clusters.jsonl"):find('^{"cluster":1,"size":%d+,"members":%[{"id":'))
  end)

  it("of cluster --output-format csv: a row per member and per pair, as the JSON Lines say", function()
    run("cluster samples/docs -q --output-format csv -o " .. dir .. "/csv")
    local rows = lines(support.read(dir .. "/csv/clusters.csv"))
    assert.are.same({ "cluster", "size", "id", "url", "date", "relation", "copy_of" }, csv_fields(rows[1]))
    local want = {}
    for _, c in ipairs(support.read_jsonl(dir .. "/csv/clusters.jsonl")) do
      for _, m in ipairs(c.members) do
        want[#want + 1] = table.concat({ ("%d"):format(c.cluster), ("%d"):format(c.size), ("%d"):format(m.id), m.url, "",
          m.relation, m.copy_of and ("%d"):format(m.copy_of) or "" }, "|")
      end
    end
    local got = {}
    for i = 2, #rows do got[#got + 1] = table.concat(csv_fields(rows[i]), "|") end
    assert.are.same(want, got)
    local pairs_csv = lines(support.read(dir .. "/csv/pairs.csv"))
    assert.are.equal(#support.read_jsonl(dir .. "/csv/pairs.jsonl") + 1, #pairs_csv)
    -- recluster keeps the format and writes it again; another one replaces it
    run("recluster -q " .. dir .. "/csv -t 0.3 --output-format tsv")
    assert.is_nil(io.open(dir .. "/csv/clusters.csv"))
    local tsv = lines(support.read(dir .. "/csv/clusters.tsv"))
    assert.are.equal("cluster\tsize\tid\turl\tdate\trelation\tcopy_of", tsv[1])
  end)

  it("of compare: paths never cut, and as TSV and JSON", function()
    local long = dir .. "/a-directory-with-a-rather-long-name/and-a-document-with-a-long-name-too.txt"
    os.execute("mkdir -p " .. dir .. "/a-directory-with-a-rather-long-name")
    support.write(long, support.read("samples/docs/rabin-original.txt"))
    local text = run("compare " .. long .. " samples/docs/rabin-edited.txt")
    assert.is_truthy(text:find(long, 1, true), text)
    local tsv = lines(run("compare --output-format tsv --exact " .. long .. " samples/docs/rabin-edited.txt"))
    assert.are.equal("a\tb\tresemblance\tcontainment_ab\tcontainment_ba\texact_resemblance\texact_containment_ab\t"
      .. "exact_containment_ba", tsv[1])
    assert.are.equal(long, tsv[2]:match("^([^\t]+)"))
    local list = cjson.decode(run("compare --output-format json " .. long .. " samples/docs/rabin-edited.txt"))
    assert.are.equal(1, #list)
    assert.are.equal(long, list[1].a)
  end)

  it("of the index queries as CSV, and an empty list as []", function()
    local db = dir .. "/db"
    run("index add -q " .. db .. " samples/docs --sweep 2026-11-01")
    local rows = lines(run("similar --output-format csv -t 0.3 " .. db .. " samples/docs/rabin-edited.txt"))
    assert.are.equal("id,url,sweep,cluster,resemblance,containment,contained,shared", rows[1])
    assert.is_true(#rows >= 2)
    support.write(dir .. "/other.txt", "nothing in this text is found in any of the sample documents at all, "
      .. "not one shingle of ten words of it")
    local none = run("similar --output-format json " .. db .. " " .. dir .. "/other.txt")
    assert.is_truthy(none:find("\n%[%]\n$") or none == "[]\n", none) -- stderr says why, stdout is []
    rows = lines(run("cluster-of --output-format csv " .. db .. " samples/docs/rabin-edited.txt"))
    assert.are.equal("cluster,of,id,url,sweep,relation", rows[1])
    assert.is_true(#rows >= 3)
  end)

  it("of dedup and collections as CSV and TSV, a row a record", function()
    run("dedup samples/docs -q --output-format csv -o " .. dir .. "/dd")
    local rows = lines(support.read(dir .. "/dd/removed.csv"))
    assert.are.equal(#support.read_jsonl(dir .. "/dd/removed.jsonl") + 1, #rows)
    assert.are.equal("removed", csv_fields(rows[1])[1])
    run("collections samples/docs -q --output-format tsv -o " .. dir .. "/co")
    local n = 0
    for _, c in ipairs(support.read_jsonl(dir .. "/co/collections.jsonl")) do n = n + #c.collections end
    local tsv = lines(support.read(dir .. "/co/collections.tsv"))
    assert.are.equal(n + 1, #tsv)
    assert.is_truthy(tsv[1]:find("^cluster\tcardinality\tsize\troot"))
    assert.is_truthy(io.open(dir .. "/co/avoid.tsv"))
  end)
end)
