--- shingle avoid OUTDIR: the crawler's avoid list from a collections run
-- (Cho et al. 2000, section 5.1).
local collections = require "shingle.collections"
local common = require "shingle.cmd.common"

local M = {}

function M.configure(parser)
  local c = parser:command("avoid", "List the mirrors a crawler can skip, from a 'shingle collections' output.")
  c:argument("dir", "The output directory of shingle collections.")
  c:option("--min-size", "Only collections of at least this many pages (the paper's noise is smaller).", "10")
    :convert(tonumber)
  c:option("--min-cardinality", "Only clusters of at least this many collections.", "2"):convert(tonumber)
  common.output_options(c)
end

function M.run(a)
  local entries, total = collections.avoid_list(a.dir, { min_size = a.min_size, min_cardinality = a.min_cardinality })
  if not entries then return common.fail(1, total) end
  local fmt = common.output_format(a)
  if fmt then
    common.write_records(fmt, entries, { order = collections.order.avoid, columns = collections.order.avoid })
    return 0
  end
  for _, e in ipairs(entries) do
    io.stdout:write(("%s%s\t%d pages\t%d bytes\tmirror of %s\n"):format(e.prefix, e.whole_site and " (whole site)" or "",
      e.pages, e.bytes, e.mirror_of))
  end
  io.stdout:write(("%d mirrors, %d pages, %d of %d bytes (%.1f%%) saved\n"):format(total.entries, total.pages,
    total.bytes, total.crawled_bytes, total.crawled_bytes > 0 and 100 * total.bytes / total.crawled_bytes or 0))
  return 0
end

return M
