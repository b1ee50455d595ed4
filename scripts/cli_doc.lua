-- Write docs/cli.md, the command-line reference, from the parser itself:
--   lua5.4 scripts/cli_doc.lua > docs/cli.md
-- spec/cli_docs_spec.lua checks that every option a command accepts is in
-- it, and that every option it (and the guide, the README) names exists.
package.path = "lua/?.lua;lua/?/init.lua;" .. package.path
local cli = require "shingle.cli"

local M = {}

--- The commands of a parser as { path = "shingle index add", parser = p },
-- depth first.
function M.commands(p, path, out)
  out = out or {}
  path = path or "shingle"
  for _, c in ipairs(p._commands or {}) do
    local cp = path .. " " .. c._name
    if not c._commands or #c._commands == 0 then out[#out + 1] = { path = cp, parser = c } end
    M.commands(c, cp, out)
  end
  return out
end

--- The options a command accepts, each { names = { "-s", "--size" }, default, choices, description, flag }.
function M.options(c)
  local out = {}
  for _, o in ipairs(c._options or {}) do
    local names = {}
    for _, a in ipairs(o._public_aliases or o._aliases) do names[#names + 1] = a end
    if names[1] ~= "-h" then
      out[#out + 1] = { names = names, default = o._default, choices = o._choices, description = o._description or "",
        flag = (o._maxargs or 0) == 0 }
    end
  end
  return out
end

local function cell(s) return (tostring(s):gsub("|", "\\|"):gsub("\n", " ")) end

function M.render()
  local p = cli.parser()
  local lines = {
    "# Command-line reference",
    "",
    "Every command and every option it accepts, with its default. Written from the",
    "parser by `lua5.4 scripts/cli_doc.lua > docs/cli.md`; `spec/cli_docs_spec.lua`",
    "checks that it, docs/guide.md and README.md name no option that does not exist",
    "and leave none out. `shingle COMMAND --help` says the same.",
    "",
  }
  for _, cmd in ipairs(M.commands(p)) do
    local c = cmd.parser
    lines[#lines + 1] = ("## `%s`"):format(cmd.path)
    lines[#lines + 1] = ""
    if c._description then lines[#lines + 1] = cell(c._description) lines[#lines + 1] = "" end
    local args = {}
    for _, a in ipairs(c._arguments or {}) do
      local n = a._name:upper():gsub("-", "_")
      if (a._maxargs or 1) > 1 then n = n .. "..." end
      if (a._minargs or 1) == 0 then n = "[" .. n .. "]" end
      args[#args + 1] = n
    end
    lines[#lines + 1] = ("`%s %s[options]`"):format(cmd.path, #args > 0 and table.concat(args, " ") .. " " or "")
    lines[#lines + 1] = ""
    for _, a in ipairs(c._arguments or {}) do
      lines[#lines + 1] = ("- `%s`: %s"):format(a._name:upper():gsub("-", "_"), cell(a._description or ""))
    end
    if #(c._arguments or {}) > 0 then lines[#lines + 1] = "" end
    local opts = M.options(c)
    if #opts > 0 then
      lines[#lines + 1] = "| option | default | what it does |"
      lines[#lines + 1] = "| --- | --- | --- |"
      for _, o in ipairs(opts) do
        local names = {}
        for i, n in ipairs(o.names) do names[i] = "`" .. n .. "`" end
        local d = o.flag and "off" or (o.default ~= nil and ("`" .. tostring(o.default) .. "`") or "")
        local desc = cell(o.description)
        if o.choices then desc = desc .. " One of: " .. table.concat(o.choices, ", ") .. "." end
        lines[#lines + 1] = ("| %s | %s | %s |"):format(table.concat(names, " "), d, desc)
      end
      lines[#lines + 1] = ""
    end
  end
  return table.concat(lines, "\n")
end

if arg and arg[0] and arg[0]:match("cli_doc%.lua$") then io.write(M.render()) end

return M
