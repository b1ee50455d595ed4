local support = require "support"

local lua_cmd = support.shingle_cmd

describe("shingle compare", function()
  it("compares the sample documents pairwise, estimated and exact", function()
    local out, code = support.run(lua_cmd() .. " compare --exact samples/docs/rabin-original.txt samples/docs/rabin-mirror.html samples/docs/weather.txt")
    assert.are.equal(0, code, out)
    local lines = {}
    for l in out:gmatch("[^\n]+") do lines[#lines + 1] = l end
    assert.are.equal(4, #lines, out)
    -- the mirror wraps the original in navigation and a footer: it contains all of it
    local r, cab, cba, xr, xab, xba = lines[2]:match("([%d.]+)%s+([%d.]+)%s+([%d.]+)%s+([%d.]+)%s+([%d.]+)%s+([%d.]+)%s*$")
    assert.is_true(tonumber(r) > 0.85, lines[2])
    assert.are.equal("1.000", xab)
    assert.is_true(tonumber(xba) < 1)
    assert.is_truthy(lines[3]:match("0%.000%s+0%.000%s+0%.000"), lines[3])
  end)

  it("writes JSON lines with --json", function()
    local out, code = support.run(lua_cmd() .. " compare --json samples/docs/unionfind.txt samples/docs/unionfind-blog.html")
    assert.are.equal(0, code, out)
    local pair = require("cjson").decode(out)
    assert.are.equal("samples/docs/unionfind.txt", pair.a)
    assert.is_true(pair.resemblance > 0.4 and pair.resemblance < 0.7)
  end)

  it("names a file it cannot read", function()
    local out, code = support.run(lua_cmd() .. " compare samples/docs/weather.txt /nonexistent/file.txt")
    assert.are.equal(1, code)
    assert.is_truthy(out:find("cannot read /nonexistent/file.txt", 1, true), out)
  end)

  it("explains a bad option and exits 2", function()
    local out, code = support.run(lua_cmd() .. " compare --sketch minhash a b")
    assert.are.equal(2, code)
    assert.is_truthy(out:find("--sketch", 1, true) and out:find("minmod", 1, true), out)
  end)

  it("has --help for every command", function()
    local out, code = support.run(lua_cmd() .. " compare --help")
    assert.are.equal(0, code)
    assert.is_truthy(out:find("--exact", 1, true))
  end)
end)

describe("the command-line option declarations", function()
  local cli = require "shingle.cli"
  local function parse(args)
    local ok, parsed = cli.parser():pparse(args)
    assert.is_true(ok, tostring(parsed))
    return parsed
  end
  local shingler = { "width", "sketch", "modulus", "size", "floor", "degree", "seed", "option", "invalid", "fold",
    "punctuation", "no_numbers" }

  it("gives every command that shingles the same shingler options with one set of defaults, the pipeline's", function()
    local defaults = require("shingle.pipeline").defaults
    local ref = parse({ "cluster", "in", "-o", "out" })
    assert.are.same({ defaults.w, defaults.sketch, defaults.m, defaults.s, defaults.floor, defaults.k, defaults.invalid },
      { ref.width, ref.sketch, ref.modulus, ref.size, ref.floor, ref.degree, ref.invalid })
    assert.are.equal("mod", ref.sketch)
    for _, args in ipairs({ { "compare", "a", "b" }, { "explain", "a", "b" } }) do
      local o = parse(args)
      for _, k in ipairs(shingler) do assert.are.equal(ref[k], o[k], args[1] .. " " .. k) end
    end
    -- the same names everywhere, a new index's without defaults (the index keeps its own)
    local given = { "-w", "4", "--sketch", "min", "-m", "5", "-s", "50", "-k", "40", "--seed", "7", "--option", "A",
      "--invalid", "skip", "--fold", "--punctuation", "--no-numbers" }
    local ix = parse({ "index", "add", "db", "in", "--sweep", "s1" })
    for _, k in ipairs(shingler) do assert.is_nil(ix[k], "index add " .. k) end
    for _, head in ipairs({ { "cluster", "in", "-o", "out" }, { "compare", "a", "b" }, { "explain", "a", "b" },
      { "index", "add", "db", "in", "--sweep", "s1" }, { "collections", "in", "-o", "out" } }) do
      local args = {}
      for _, x in ipairs(head) do args[#args + 1] = x end
      for _, x in ipairs(given) do args[#args + 1] = x end
      local o = parse(args)
      assert.are.same({ 4, "min", 5, 50, 40, 7, "A", "skip", true, true, true },
        { o.width, o.sketch, o.modulus, o.size, o.degree, o.seed, o.option, o.invalid, o.fold, o.punctuation, o.no_numbers },
        head[1])
    end
  end)

  it("maps the parsed options onto the configuration of the shingler, the inputs and the resources", function()
    local common = require "shingle.cmd.common"
    local a = parse({ "cluster", "in", "-o", "out", "-w", "4", "--sketch", "min", "-s", "50", "--seed", "7", "--fold",
      "--punctuation", "--no-numbers", "--invalid", "skip", "--memory", "2M", "--text", "--strict" })
    local s = common.shingler_config(a)
    assert.are.same({ 4, "min", 50, 7, true, true, false, "skip" },
      { s.w, s.sketch, s.s, s.seed, s.fold, s.punctuation, s.numbers, s.invalid })
    local defaults = common.shingler_config(parse({ "cluster", "in", "-o", "out" }))
    assert.are.same({ nil, nil, nil }, { defaults.fold, defaults.punctuation, defaults.numbers }) -- the pipeline's defaults
    assert.are.equal(2 * 1024 * 1024, common.resource_config(a).memory)
    local i = common.input_config(a)
    assert.are.same({ false, true }, { i.html, i.strict })
    local cfg = require("shingle.cmd.cluster").config(a)
    assert.are.same({ 4, "min", false, 2 * 1024 * 1024, false }, { cfg.w, cfg.sketch, cfg.numbers, cfg.memory, cfg.html })
  end)

  it("gives the commands that read inputs the same input and resource options", function()
    for _, head in ipairs({ { "cluster", "in", "-o", "out" }, { "collections", "in", "-o", "out" },
      { "index", "add", "db", "in", "--sweep", "s1" } }) do
      local args = {}
      for _, x in ipairs(head) do args[#args + 1] = x end
      for _, x in ipairs({ "--format", "jsonl", "--text-field", "body", "--url-field", "u", "--text", "--strict", "-q",
        "--threads", "3" }) do args[#args + 1] = x end
      local o = parse(args)
      assert.are.same({ "jsonl", "body", "u", true, true, true, 3 },
        { o.format, o.text_field, o.url_field, o.text, o.strict, o.quiet, o.threads }, head[1])
    end
  end)

  it("has the commands depend on cmd/common.lua, never on each other", function()
    local seen = {}
    for _, name in ipairs(cli.commands) do
      local f = assert(io.open("lua/shingle/cmd/" .. name .. ".lua"))
      local src = f:read("*a")
      f:close()
      seen[#seen + 1] = name
      for dep in src:gmatch("shingle%.cmd%.([%w_]+)") do
        assert.are.equal("common", dep, name .. ".lua requires shingle.cmd." .. dep)
      end
    end
    assert.is_true(#seen >= 9)
  end)
end)
