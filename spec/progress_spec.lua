-- Progress bars: drawn only on a terminal and not when quiet; a rate and an
-- ETA only once there is time to measure them; one line per bar (a second
-- bar never redraws the first one's line); a message clears the line
-- first; NO_COLOR turns explain's highlighting off even on a terminal.
local core = require "shingle.core"
local progress = require "shingle.progress"
local support = require "support"

describe("progress", function()
  local clock, saved, out, path

  before_each(function()
    clock = 0
    saved = { now = core.now, isatty = core.isatty, stderr = io.stderr }
    core.now = function() return clock end
    core.isatty = function() return true end
    path = os.tmpname()
    out = assert(io.open(path, "w+b"))
    io.stderr = out
  end)

  after_each(function()
    core.now, core.isatty, io.stderr = saved.now, saved.isatty, saved.stderr
    out:close()
    os.remove(path)
  end)

  local function written()
    out:flush()
    out:seek("set", 0)
    return out:read("a")
  end

  it("shows no rate before a second has passed, then a sensible one", function()
    local b = progress.new("sketching", nil, "docs")
    clock = 1e-6
    b:update(5)
    assert.are.equal("", written()) -- nothing in the first 0.2 s
    clock = 0.3
    b:update(900)
    local s = written()
    assert.is_truthy(s:find("900 docs  --/s", 1, true), s)
    clock = 2
    b:update(30000)
    s = written()
    assert.is_truthy(s:find("30000 docs  15k/s", 1, true), s)
    b:done()
    assert.is_truthy(written():find("sketching%s+30000 docs in 2.0 s\27%[K\n$"))
  end)

  it("gives an ETA from the measured rate", function()
    local b = progress.new("pairs", 1000, "pairs")
    clock = 0.5
    b:update(100)
    assert.is_truthy(written():find("ETA --:--", 1, true))
    clock = 2
    b:update(400)
    assert.is_truthy(written():find("200/s  ETA 0:03", 1, true), written())
    b:done()
  end)

  it("never draws two bars on one line", function()
    local a, b = progress.new("first", nil), progress.new("second", nil)
    clock = 0.5
    a:update(1)
    b:update(2)
    a:update(3)
    local lines = {}
    for l in written():gmatch("[^\n]*") do lines[#lines + 1] = l end
    -- every line redraws (\r) one bar only
    for _, l in ipairs(lines) do
      assert.is_false(l:find("first", 1, true) ~= nil and l:find("second", 1, true) ~= nil, l)
    end
    a:done(); b:done()
  end)

  it("clears its line before a message", function()
    local b = progress.new("sketching", nil)
    clock = 0.5
    b:update(10)
    progress.message("shingle: a.txt: skipped")
    assert.is_truthy(written():find("\r\27%[Kshingle: a.txt: skipped\n$"), written())
    b:done()
  end)

  it("draws nothing when quiet or when stderr is not a terminal", function()
    local q = progress.new("quiet", nil, "docs", true)
    clock = 1
    q:update(10)
    q:done()
    core.isatty = function() return false end
    local p = progress.new("piped", nil)
    clock = 3
    p:update(10)
    p:done()
    assert.are.equal("", written())
  end)
end)

describe("NO_COLOR", function()
  local lua = rawget(_G, "jit") and "luajit" or "lua" .. _VERSION:match("%d+%.%d+")
  -- script(1) runs the command on a pseudo-terminal, as a user's shell would
  local function on_tty(env, args)
    return support.run(("%s script -qec %q /dev/null"):format(env, lua .. " bin/shingle " .. args))
  end

  it("turns explain's highlighting off on a terminal", function()
    local args = "explain samples/docs/rabin-original.txt samples/docs/rabin-edited.txt"
    local colored = on_tty("env -u NO_COLOR", args)
    assert.is_truthy(colored:find("\27[", 1, true), "explain should highlight on a terminal")
    local plain = on_tty("NO_COLOR=1", args)
    assert.is_falsy(plain:find("\27[", 1, true), plain)
  end)
end)
