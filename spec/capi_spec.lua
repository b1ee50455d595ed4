-- The C library as its users get it: `cmake --install` into a scratch prefix,
-- examples/capi_similar.c compiled against the installed header with
-- pkg-config and linked to the installed libshingle, run against an index
-- made by the command line: the same answers as `shingle similar` and as the
-- binding's estimates.
local support = require "support"
local cjson = require "cjson"
local shingle = require "shingle"
local abi = require "abi"

local LUA = rawget(_G, "jit") and "luajit" or "lua" .. _VERSION:match("%d+%.%d+")
local function run(cmd) return support.run("unset LD_PRELOAD; " .. cmd) end

describe("the installed C library", function()
  local dir, pc, flags
  setup(function()
    dir = run("mktemp -d"):match("%S+")
    local out, code = run(("cmake --install build/5.4 --prefix %s"):format(dir))
    assert(code == 0, out)
    pc = ("PKG_CONFIG_PATH=%s/lib/pkgconfig"):format(dir)
    flags = run(pc .. " pkg-config --cflags --libs shingle"):gsub("\n", " ")
  end)
  teardown(function() os.execute("rm -rf " .. dir) end)

  it("builds a program with pkg-config that answers as the command line does", function()
    local out, code
    assert.is_truthy(io.open(dir .. "/include/shingle.h"), "the header is installed")
    assert.is_truthy(flags:find("-lshingle", 1, true), flags)
    local inc = flags:match("%-I(%S+)")
    assert.is_truthy(io.open(inc .. "/shingle.h"), "the Cflags name the installed header's directory: " .. flags)
    out, code = run(("cc -std=c99 -Wall -Wextra -Werror examples/capi_similar.c %s -Wl,-rpath,%s/lib -o %s/capi_similar")
      :format(flags, dir, dir))
    assert.are.equal(0, code, out)
    -- nothing but the public API is exported
    local syms = run("nm -D --defined-only " .. dir .. "/lib/libshingle.so | awk '{print $3}'")
    for s in syms:gmatch("%S+") do assert.is_truthy(s:match("^shingle_"), s .. " is exported") end
    out, code = run(("%s bin/shingle index add %s/idx samples/docs --sweep 2026-11-01 -q"):format(LUA, dir))
    assert.are.equal(0, code, out)
    local files = { "samples/docs/rabin-edited.txt", "samples/docs/unionfind-blog.html", "samples/docs/weather.txt" }
    -- the index's shingler: these options and shingle.new's default floor (an index does not store it)
    local floor = require("shingle.options").defaults.floor
    out, code = run(("%s/capi_similar %s/idx 'w=10 sketch=mod m=25 floor=%d invalid=latin1' %s"):format(dir, dir, floor,
      table.concat(files, " ")))
    assert.are.equal(0, code, out)
    local got, pairs_ = {}, {}
    for line in out:gmatch("[^\n]+") do
      local f = {}
      for x in line:gmatch("[^\t]+") do f[#f + 1] = x end
      if f[1] == "pair" then pairs_[#pairs_ + 1] = f else got[f[1]] = got[f[1]] or {}; table.insert(got[f[1]], f) end
    end
    for _, file in ipairs(files) do
      local cli, c2 = run(("%s bin/shingle similar --json %s/idx %s"):format(LUA, dir, file))
      assert.are.equal(0, c2, cli)
      local k = 0
      for line in cli:gmatch("[^\n]+") do
        k = k + 1
        local h, c = cjson.decode(line), got[file][k]
        assert.is_table(c, file .. ": fewer hits from C")
        assert.are.equal(h.id, tonumber(c[2]))
        -- the command line's JSON has 14 significant digits, the C program prints 17
        assert.is_true(math.abs(h.resemblance - tonumber(c[3])) < 1e-12)
        assert.is_true(math.abs(h.containment - tonumber(c[4])) < 1e-12)
        assert.is_true(math.abs(h.contained - tonumber(c[5])) < 1e-12)
        assert.are.equal(h.shared, tonumber(c[6]))
        assert.are.equal(h.sweep, c[7])
        assert.are.equal(h.url, c[8])
      end
      assert.is_true(k >= 1, file) -- each finds itself at least
      assert.are.equal(k, #got[file])
    end
    -- the pair estimates equal the binding's
    local sh = shingle.new{ w = 10, sketch = "mod", m = 25, invalid = "latin1" }
    local htm = shingle.new{ w = 10, sketch = "mod", m = 25, invalid = "latin1", html = true }
    assert.are.equal(3, #pairs_)
    for _, p in ipairs(pairs_) do
      local function sk(f) return ((f:match("%.html$") and htm or sh):sketch(io.open(f, "rb"):read("*a"))) end
      local e = sk(p[2]):estimate(sk(p[3]))
      assert.are.equal(e.resemblance, tonumber(p[4]))
      assert.are.equal(e.containment, tonumber(p[5]))
      assert.are.equal(e.contained, tonumber(p[6]))
    end
  end)
  it("adds documents from C as `shingle index add` does: the same index, byte for byte", function()
    local out, code
    for _, e in ipairs({ "capi_add", "capi_similar" }) do
      out, code = run(("cc -std=c99 -Wall -Wextra -Werror examples/%s.c %s -Wl,-rpath,%s/lib -o %s/%s"):format(e, flags, dir,
        dir, e))
      assert.are.equal(0, code, out)
    end
    local files = {}
    for f in run("ls samples/docs/*"):gmatch("%S+") do files[#files + 1] = f end
    -- the command line adds a directory's files in name order, with their paths as URLs
    out, code = run(("%s/capi_add %s/cidx 2026-11-01 - %s"):format(dir, dir, table.concat(files, " ")))
    assert.are.equal(0, code, out)
    local k = 0
    for line in out:gmatch("[^\n]+") do
      k = k + 1
      assert.are.equal(files[k] .. "\t" .. k .. "\tOK: no error", line)
    end
    assert.are.equal(#files, k)
    out, code = run(("%s bin/shingle index add %s/lidx samples/docs --sweep 2026-11-01 -q"):format(LUA, dir))
    assert.are.equal(0, code, out)
    for _, db in ipairs({ "meta", "docs", "postings", "urls", "raw", "canon", "cluster", "members", "sweeps", "sweepdocs" }) do
      local a = run(("mdb_dump -p -s %s %s/cidx"):format(db, dir))
      local b = run(("mdb_dump -p -s %s %s/lidx"):format(db, dir))
      if db == "meta" then
        -- the same configuration, in another key order: decoded
        local function conf(dump) return cjson.decode(dump:match(" user%.config\n (%b{})\n")) end
        assert.are.equal(a:gsub(" user%.config\n %b{}\n", ""), (b:gsub(" user%.config\n %b{}\n", "")))
        assert.are.same(conf(b), conf(a))
        assert.are.equal(20, conf(a).floor)
      else
        assert.are.equal(b, a, db)
      end
    end
    -- a second add keeps the index's options and the ids of the same URLs
    out, code = run(("%s/capi_add %s/cidx 2026-11-01 - %s"):format(dir, dir, files[2]))
    assert.are.equal(0, code, out)
    assert.are.equal(files[2] .. "\t2\tOK: no error\n", out)
    out, code = run(("%s/capi_add %s/cidx 2026-11-02 'w=3' %s"):format(dir, dir, files[2]))
    assert.are.equal(1, code)
    assert.is_truthy(out:find("keeps its own options", 1, true), out)
    -- the index's own shinglers (shingle_index_shingler) answer as the command line does
    out, code = run(("%s/capi_similar %s/cidx - %s"):format(dir, dir, table.concat(files, " ")))
    assert.are.equal(0, code, out)
    local lines = {}
    for line in out:gmatch("[^\n]+") do
      if not line:find("^pair") then lines[#lines + 1] = line end
    end
    local n = 0
    for _, f in ipairs(files) do
      local cli = run(("%s bin/shingle similar --json %s/cidx %s"):format(LUA, dir, f))
      for line in cli:gmatch("[^\n]+") do
        n = n + 1
        local h = cjson.decode(line)
        local c = {}
        for x in lines[n]:gmatch("[^\t]+") do c[#c + 1] = x end
        assert.are.equal(f, c[1])
        assert.are.equal(h.id, tonumber(c[2]))
        assert.are.equal(h.shared, tonumber(c[6]))
        assert.are.equal(h.url, c[8])
      end
    end
    assert.are.equal(#lines, n)
  end)

  it("sketches with floor 8 for an index that does not record its floor (made before it was recorded)", function()
    local index = require "shingle.index"
    local core = require "shingle.core"
    local path = dir .. "/old"
    -- an index as versions before 2026-11-23 made it: the configuration without floor, sketches with floor 8
    local sh8 = shingle.new{ w = 10, sketch = "mod", m = 25, floor = 8, invalid = "latin1" }
    local ix = assert(core.index(path, { create = true }))
    local adder = assert(ix:begin("s1", shingle.unwrap(sh8), { policy = "resemblance", threshold = 0.5 }))
    local c = {}
    for k, v in pairs(index.defaults) do c[k] = v end
    c.floor = nil
    adder:set("user.config", cjson.encode(c))
    local short = "a short page of a few dozen words, too short for a MOD_25 sample of twenty values, " ..
      "but long enough for eight of them at its own modulus, which is what the floor decides for it here and now"
    local d = require("shingle.sketcher").new(sh8, sh8, { config = c }):batch({ { text = short, url = "u1" } })[1]
    assert(d.sketch, d.error)
    assert(adder:add({ { url = "u1", sketch = d.sketch, raw = d.raw, canonical = d.canonical } }))
    assert(adder:commit())
    ix:close()
    local old = assert(index.open(path, { readonly = true }))
    assert.are.equal(8, old.config.floor)
    local text = old:shinglers()
    assert.are.equal(8, shingle.unwrap(text):params().floor)
    local hits = assert(old:similar(short, { threshold = 1 }))
    assert.are.equal(1, #hits)
    assert.are.equal(#d.sketch, #shingle.unwrap(text):sketch(short))
    old:close()
    -- the C API's shingler of that index: floor 8, the stored sketch's values
    local f = assert(io.open(dir .. "/short.txt", "wb"))
    f:write(short)
    f:close()
    local out, code = run(("%s/capi_similar %s - %s/short.txt"):format(dir, path, dir))
    assert.are.equal(0, code, out)
    assert.is_truthy(out:find("\t1\t1\t1\t1\t" .. #d.sketch .. "\t", 1, true), out)
  end)
  -- The stability story (docs/capi.md): the installed header, library and
  -- pkg-config file against core/include/shingle.abi, the recorded ABI of the
  -- major version.
  it("keeps the recorded ABI: prototypes, constants, struct layouts, SONAME and version", function()
    local rec = abi.record()
    local header = support.read(dir .. "/include/shingle.h")
    -- every function of the header is recorded with this very prototype, and the other way round
    assert.are.same(rec.functions, abi.prototypes(header))
    -- constants and layouts as a program built against the installed header sees them
    local out, code = run(("cc -std=c99 -Wall -Wextra -Werror core/test/capi/abi.c %s -o %s/abi"):format(flags, dir))
    assert.are.equal(0, code, out)
    out, code = run(dir .. "/abi")
    assert.are.equal(0, code, out)
    local got = {}
    for line in out:gmatch("[^\n]+") do got[#got + 1] = line end
    assert.are.same(rec.layout, got)
    -- abi.c covers every public struct and constant of the header
    local structs, consts = abi.header_names(header)
    local text = table.concat(got, "\n") .. "\n"
    for _, s in ipairs(structs) do assert.is_truthy(text:find("size " .. s .. " ", 1, true), s .. " is not in abi.c") end
    for _, c in ipairs(consts) do
      if c ~= "SHINGLE_VERSION_MINOR" and c ~= "SHINGLE_VERSION_PATCH" then
        assert.is_truthy(text:find("const " .. c .. " ", 1, true), c .. " is not in abi.c")
      end
    end
    -- the library: its SONAME carries the major version, it exports the recorded functions and nothing else
    local lib = dir .. "/lib/libshingle.so"
    assert.are.equal(rec.soname, run("objdump -p " .. lib .. " | awk '/SONAME/ { print $2 }'"):match("%S+"))
    local names = {}
    for _, f in ipairs(rec.functions) do names[#names + 1] = f:match("(shingle_[%w_]+)%(") end
    table.sort(names)
    local syms = {}
    for s in run("nm -D --defined-only " .. lib .. " | awk '{ print $3 }'"):gmatch("%S+") do syms[#syms + 1] = s end
    table.sort(syms)
    assert.are.same(names, syms)
    -- one version: the header's macros, the .pc file and the library's file name agree
    local major, minor, patch = header:match("SHINGLE_VERSION_MAJOR (%d+).-SHINGLE_VERSION_MINOR (%d+).-SHINGLE_VERSION_PATCH (%d+)")
    local v = major .. "." .. minor .. "." .. patch
    assert.are.equal('"' .. v .. '"', header:match("#define SHINGLE_VERSION_STRING (%S+)"))
    assert.are.equal(v, run(pc .. " pkg-config --modversion shingle"):match("%S+"))
    assert.is_truthy(io.open(lib .. "." .. v), "libshingle.so." .. v)
    assert.are.equal("soname libshingle.so." .. major, "soname " .. rec.soname)
  end)
end)
