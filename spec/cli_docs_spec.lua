-- Every command's options against the docs: docs/cli.md documents every
-- option each command accepts and no other; the guide, the README and the
-- other pages name no option that does not exist, and an option given on a
-- `shingle COMMAND ...` line belongs to that command.
package.path = "scripts/?.lua;" .. package.path
local cli_doc = require "cli_doc"
local cli = require "shingle.cli"

-- options of other programs the docs show (luarocks, mpirun, Slurm, curl,
-- text-dedup, the benchmark scripts, scripts/fuzz.sh)
local foreign = {
  ["--tree"] = true, ["--lua-version"] = true, ["--allow-run-as-root"] = true, ["--oversubscribe"] = true,
  ["--mca"] = true, ["--nodes"] = true, ["--kill-on-bad-exit"] = true, ["--data-binary"] = true,
  ["--ngram"] = true, ["--path"] = true, ["--extra"] = true, ["--only"] = true, ["--reuse"] = true,
  ["--docs"] = true, ["--files0-from"] = true, ["--queries"] = true, ["--runs"] = true, ["--regress"] = true,
}

local function read(path)
  local f = assert(io.open(path, "rb"))
  local s = f:read("a")
  f:close()
  return s
end

local parser = cli.parser()
local commands = cli_doc.commands(parser)

local function option_set(c)
  local set = { ["-h"] = true, ["--help"] = true }
  for _, o in ipairs(cli_doc.options(c)) do for _, n in ipairs(o.names) do set[n] = true end end
  return set
end

-- docs/cli.md's sections: "## `shingle NAME`" -> the options in its table's first column
local function documented()
  local sections, cur = {}, nil
  for line in io.lines("docs/cli.md") do
    local path = line:match("^## `(shingle[^`]*)`")
    if path then
      cur = {}
      sections[path] = cur
    elseif cur and line:match("^| `") then
      local first = line:match("^| ([^|]*) |")
      for n in first:gmatch("`(%-[^`]+)`") do cur[n] = true end
    end
  end
  return sections
end

describe("the command-line reference, docs/cli.md", function()
  local docs = documented()

  it("has a section for every command and no other", function()
    local paths = {}
    for _, c in ipairs(commands) do
      paths[c.path] = true
      assert.is_truthy(docs[c.path], c.path .. " has no section in docs/cli.md (lua5.4 scripts/cli_doc.lua > docs/cli.md)")
    end
    for path in pairs(docs) do assert.is_truthy(paths[path], "docs/cli.md documents " .. path .. ", which is no command") end
  end)

  for _, c in ipairs(commands) do
    it("documents every option of " .. c.path .. ", and only those", function()
      local set, doc = option_set(c.parser), docs[c.path] or {}
      for _, o in ipairs(cli_doc.options(c.parser)) do
        for _, n in ipairs(o.names) do
          assert.is_truthy(doc[n], ("%s accepts %s, which docs/cli.md does not document"):format(c.path, n))
        end
      end
      for n in pairs(doc) do
        assert.is_truthy(set[n], ("docs/cli.md documents %s for %s, which does not accept it"):format(n, c.path))
      end
    end)

    it("has --help for " .. c.path .. " that lists every option", function()
      local help = c.parser:get_help()
      for _, o in ipairs(cli_doc.options(c.parser)) do
        for _, n in ipairs(o.names) do
          assert.is_truthy(help:find(n, 1, true), c.path .. " --help does not show " .. n)
        end
      end
    end)
  end
end)

describe("the options the docs name", function()
  local any = {}
  for _, c in ipairs(commands) do for n in pairs(option_set(c.parser)) do any[n] = true end end
  for _, o in ipairs(parser._options) do for _, n in ipairs(o._aliases) do any[n] = true end end
  local by_path = {}
  for _, c in ipairs(commands) do by_path[c.path] = option_set(c.parser) end

  for _, file in ipairs({ "README.md", "docs/guide.md", "docs/collections.md", "docs/serve.md", "docs/scale-out.md",
    "docs/accuracy.md", "docs/robustness.md", "docs/benchmarks.md", "docs/api.md", "docs/formats.md" }) do
    it("exist, in " .. file, function()
      local text = read(file)
      for line in text:gmatch("[^\n]+") do
        -- a line that runs another program (a benchmark or script, luarocks, mpirun, curl) has its options
        local other = line:find("bench/", 1, true) or line:find("scripts/", 1, true) or line:find("luarocks", 1, true)
          or line:find("mpirun", 1, true) or line:find("curl ", 1, true) or line:find("python", 1, true)
        if not other then
          for t in line:gmatch("%f[%w%-]%-%-[a-z][a-z0-9%-]*") do
            assert.is_truthy(any[t] or foreign[t], ("%s names %s, which no shingle command accepts"):format(file, t))
          end
        end
      end
      -- on a line that runs a command, its options are that command's
      for line in text:gmatch("[^\n]+") do
        local pos = 1
        while true do
          local a, b, words = line:find("shingle ([%w%-]+ ?[%w%-]*)", pos)
          if not a then break end
          local set = by_path["shingle " .. words] or by_path["shingle " .. words:match("^[%w%-]+")]
          if set then
            local rest = line:sub(b + 1):match("^[^`|#;&(]*") or ""
            for t in rest:gmatch("%f[%w%-]%-%-?%a[%w%-]*") do
              assert.is_truthy(set[t] or foreign[t],
                ("%s: `shingle %s ... %s`: the command does not accept %s"):format(file, words, t, t))
            end
          end
          pos = b + 1
        end
      end
    end)
  end
end)

describe("the docs as files", function()
  local files = { "README.md" }
  local p = io.popen("ls docs/*.md")
  for f in p:lines() do files[#files + 1] = f end
  p:close()

  for _, file in ipairs(files) do
    it("have tables whose rows have as many cells as their header, in " .. file, function()
      -- GitHub's tables split cells at every | not escaped as \|, code spans included
      local n, in_code, lineno = nil, false, 0
      for line in io.lines(file) do
        lineno = lineno + 1
        if line:match("^```") then in_code = not in_code end
        if not in_code and line:match("^|") then
          local s = line:gsub("\\|", "x"):gsub("^|", ""):gsub("|%s*$", "")
          local _, bars = s:gsub("|", "")
          if not n then n = bars
          else assert.are.equal(n, bars, ("%s line %d: %d cells, the header has %d"):format(file, lineno, bars + 1, n + 1)) end
        else
          n = nil
        end
      end
    end)

    it("name files of the repository that exist, in " .. file, function()
      local text = read(file)
      for path in text:gmatch("`([%w]+/[%w_%./%-]+)`") do
        local top = path:match("^([%w]+)/")
        if ({ core = 1, lua = 1, spec = 1, docs = 1, scripts = 1, bench = 1, examples = 1, rockspec = 1, samples = 1,
          bin = 1 })[top] and not path:find("TARGET", 1, true) then
          local f = io.open(path)
          assert.is_truthy(f, file .. " names " .. path .. ", which is not in the repository")
          if f then f:close() end
        end
      end
    end)
  end
end)
