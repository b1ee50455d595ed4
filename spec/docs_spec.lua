-- Every function exported by the C module and the Lua facade appears in the
-- API reference (docs/api.md), written as prefix .. name .. "(".
local shingle = require "shingle"

local f = assert(io.open("docs/api.md"))
local doc = f:read("*a")
f:close()

local function documented(prefixes, name)
  for _, p in ipairs(prefixes) do
    if doc:find("`" .. p .. name, 1, true) then return true end
  end
  return false
end

local function check(tbl, prefixes, what)
  local missing = {}
  for name, v in pairs(tbl) do
    if type(v) == "function" and not name:match("^__") and not documented(prefixes, name) then
      missing[#missing + 1] = what .. "." .. name
    end
  end
  table.sort(missing)
  assert.are.same({}, missing)
end

describe("docs/api.md", function()
  it("documents every function of the facade", function()
    check(shingle, { "shingle." }, "shingle")
  end)

  it("documents every function of the C module", function()
    check(shingle.core, { "core." }, "core")
  end)

  it("documents every method of the C module's objects", function()
    check(shingle.core.Shingler, { "Shingler:" }, "Shingler")
    check(shingle.core.Sketch, { "Sketch:" }, "Sketch")
    local reg = debug.getregistry()
    for mt, prefixes in pairs({ ["shingle.Pool"] = { "pool:" }, ["shingle.Phase1"] = { "w:" },
      ["shingle.Index"] = { "Index:" }, ["shingle.IndexAdder"] = { "adder:" }, ["shingle.WarcReader"] = { "reader:" },
      ["shingle.ZStream"] = { "s:" }, ["shingle.Mbox"] = { "r:" }, ["shingle.LSHIndex"] = { "ix:" },
      ["shingle.SketchWriter"] = { "w:" }, ["shingle.SketchReader"] = { "r:" } }) do
      assert.is_table(reg[mt], mt)
      check(reg[mt].__index, prefixes, mt)
    end
  end)

  it("documents every function and method of shingle.mpi, where it is built", function()
    local ok, mpi = pcall(require, "shingle.mpi")
    if not ok then return assert.is_truthy(tostring(mpi):find("shingle.mpi", 1, true)) end
    check(mpi, { "mpi." }, "mpi")
    local reg = debug.getregistry()
    check(reg["shingle.mpi.World"].__index, { "world:", ":" }, "World")
    check(reg["shingle.mpi.Dist"].__index, { "d:" }, "Dist")
  end)

  it("documents every function of the orchestration modules", function()
    check(require("shingle.pipeline"), { "pipeline.", "p:" }, "pipeline")
    check(require("shingle.index"), { "index." }, "index")
    check(require("shingle.collections"), { "collections.", "c:" }, "collections")
    check(require("shingle.input"), { "input." }, "input")
    check(require("shingle.util"), { "util." }, "util")
    check(require("shingle.rules"), { "rules." }, "rules")
    check(require("shingle.extractors"), { "extractors." }, "extractors")
    check(require("shingle.explain"), { "explain." }, "explain")
    check(require("shingle.sketcher"), { "sketcher.", "sk:" }, "sketcher")
    check(require("shingle.report"), { "report." }, "report")
    check(require("shingle.plot"), { "plot." }, "plot")
    check(require("shingle.html"), { "html." }, "html")
    check(require("shingle.dist"), { "dist." }, "dist")
    check(require("shingle.lsh"), { "shingle.lsh.", "ix:" }, "lsh")
    check(require("shingle.sketches"), { "sketches." }, "sketches")
    check(require("shingle.dedup"), { "dedup.", "d:" }, "dedup")
    for _, kind in ipairs({ "cluster", "collections", "sweeps" }) do
      check(require("shingle.report." .. kind), { ('require("shingle.report.%s").'):format(kind), "." }, "report." .. kind)
    end
    check(require("shingle.http"), { "http." }, "http")
    check(require("shingle.serve"), { "serve." }, "serve")
    if rawget(_G, "jit") then check(require("shingle.ffi"), { "ffi." }, "ffi") end
  end)
end)

-- The repository is self-contained: code, docs and tests cite files inside it
-- (docs/vectors.md holds the known-answer vectors, with their provenance).
describe("the repository", function()
  it("cites no file outside it (the team's shared notes)", function()
    local p = io.popen("grep -rlI --exclude-dir=.git --exclude-dir=build --exclude-dir=node_modules "
      .. "-e 'shared/FINGERPRINTS' -e 'FINGERPRINTS.md' -e '/work/shared' -e '\\.\\./shared/' . 2>/dev/null")
    local found = {}
    for f in p:lines() do
      f = f:gsub("^%./", "")
      if f ~= "docs/vectors.md" and f ~= "spec/docs_spec.lua" then found[#found + 1] = f end
    end
    p:close()
    assert.is_truthy(io.open("docs/vectors.md"), "run from the repository's root")
    assert.are.same({}, found)
  end)
end)
