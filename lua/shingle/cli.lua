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
  return p
end

function M.main(argv)
  local args = {}
  for i = 1, #argv do args[i] = argv[i] end
  local p = M.parser()
  local ok, parsed = p:pparse(args)
  if not ok then
    io.stderr:write("shingle: ", parsed, "\n", "Run 'shingle --help' for usage.\n")
    return 2
  end
  -- a fault in C (a damaged index can make LMDB touch a bad page) ends the
  -- command with a sentence saying what it was reading, not a core dump
  require("shingle.core").crash_guard()
  local cmd = require("shingle.cmd." .. module_of(parsed.command))
  local ok2, status = xpcall(cmd.run, debug.traceback, parsed)
  if not ok2 then
    io.stderr:write("shingle: internal error: ", tostring(status), "\n")
    return 70
  end
  return status or 0
end

return M
