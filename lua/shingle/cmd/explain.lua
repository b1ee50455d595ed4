--- shingle explain A B: why two documents were judged similar.
local explain = require "shingle.explain"
local common = require "shingle.cmd.common"
local core = require "shingle.core"

local M = {}

function M.configure(parser)
  local c = parser:command("explain", "Resemblance, containment and the shared passages of two documents.")
  c:argument("a", "First document.")
  c:argument("b", "Second document.")
  common.shingler_options(c)
  common.feature_options(c, { extractor = false, on_error = false })
  common.html_options(c)
  c:flag("--no-color", "No highlighting.")
  c:flag("--json", "JSON output.")
end

function M.run(a)
  local ta, err = common.read_document(a.a)
  if not ta then return common.fail(1, err) end
  local tb, err2 = common.read_document(a.b)
  if not tb then return common.fail(1, err2) end
  local o = common.shingler_config(a, { canon = a.rules })
  o.html, o.names = common.forced_html(a), { a.a, a.b }
  local e, xerr = explain.explain(ta, tb, o)
  if not e then return common.fail(1, xerr) end
  if a.json then io.stdout:write(require("shingle.writer").json(e, explain.order), "\n") return 0 end
  -- colour only on a terminal, and never when NO_COLOR is set (no-color.org)
  local no_color = a.no_color or (os.getenv("NO_COLOR") or "") ~= ""
  io.stdout:write(explain.render(e, ta, not no_color and core.isatty(1)))
  return 0
end

return M
