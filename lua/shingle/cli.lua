--- The shingle command line: subcommands are Lua modules in shingle.cmd.*,
-- each with a `configure(parser)` that declares its arguments and a
-- `run(args)` that returns an exit status.
local argparse = require "argparse"

local M = {}

M.commands = { "cluster", "recluster", "index", "query", "explain", "compare", "collections", "avoid", "rollup", "report",
  "serve", "sketch", "dedup" }
-- modules that declare several commands list them in `names`
local function module_of(command)
  if command == "similar" or command == "cluster-of" or command == "lost" or command == "changes" then return "query" end
  return command
end

function M.parser()
  local p = argparse("shingle", "Near-duplicate documents and mirrored collections, after Broder et al. (1997).")
    :epilog("Run 'shingle COMMAND --help' for the options of a command.")
  p:command_target("command")
  p:flag("--version", "Print the version and exit."):action(function()
    io.stdout:write("shingle ", require("shingle").version, "\n")
    os.exit(0)
  end)
  for _, name in ipairs(M.commands) do
    require("shingle.cmd." .. name).configure(p)
  end
  M.name_numbers(p)
  return p
end

-- An option's names as a message says them: "-s/--size".
local function option_names(o)
  local names = {}
  for _, a in ipairs(o._public_aliases or o._aliases or {}) do names[#names + 1] = a end
  return table.concat(names, "/")
end
M.option_names = option_names

--- Every option a command converts with tonumber names itself when its
-- value is not a number ("-s/--size: 'abc' is not a number", not
-- "malformed argument 'abc'"); also records each command's name for
-- messages (p._shingle_path: "shingle index add").
function M.name_numbers(p, path)
  p._shingle_path = path or "shingle"
  for _, o in ipairs(p._options or {}) do
    if o._convert == tonumber then
      local names = option_names(o)
      o._convert = function(s)
        local v = tonumber(s)
        if v == nil or v ~= v then return nil, ("%s: '%s' is not a number"):format(names, s) end
        return v
      end
    end
  end
  for _, c in ipairs(p._commands or {}) do M.name_numbers(c, p._shingle_path .. " " .. c._name) end
end

--- Parse argv: true, args; or false, the message and the command whose
-- usage it is about ("shingle cluster").
function M.parse(p, args)
  local where
  local ok, result = pcall(function()
    return p:_parse(args, function(parser, err)
      where = parser
      error({ msg = err }, 0)
    end)
  end)
  if ok then return true, result end
  if type(result) == "table" and result.msg then return false, result.msg, where and where._shingle_path or "shingle" end
  error(result, 0)
end

function M.main(argv)
  local args = {}
  for i = 1, #argv do args[i] = argv[i] end
  local p = M.parser()
  local ok, parsed, where = M.parse(p, args)
  if not ok then
    io.stderr:write("shingle: ", parsed, "\n", ("Run '%s --help' for usage.\n"):format(where))
    return 2
  end
  -- a fault in C (a damaged index can make LMDB touch a bad page) ends the
  -- command with a sentence saying what it was reading, not a core dump
  require("shingle.core").crash_guard()
  local cmd = require("shingle.cmd." .. module_of(parsed.command))
  local usage
  local ok2, status = xpcall(cmd.run, function(e)
    -- the Lua API raised on an option it was given: a usage error, said
    -- with the option's command-line name, not an internal error
    local common = require "shingle.cmd.common"
    if type(e) == "string" and common.is_usage_error(e) then usage = common.api_message(e) return e end
    return debug.traceback(e, 2)
  end, parsed)
  if not ok2 and usage then
    io.stderr:write("shingle: ", usage, "\n", ("Run 'shingle %s --help' for usage.\n"):format(parsed.command))
    return 2
  end
  if not ok2 then
    io.stderr:write("shingle: internal error: ", tostring(status), "\n")
    return 70
  end
  return status or 0
end

return M
