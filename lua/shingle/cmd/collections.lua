--- shingle collections INPUT... -o OUTDIR: similar clusters of mirrored
-- collections (Cho, Shivakumar and Garcia-Molina 2000, sections 2-4).
local collections = require "shingle.collections"
local common = require "shingle.cmd.common"

local M = {}

function M.configure(parser)
  local c = parser:command("collections", "Find mirrored collections of hyperlinked pages (Cho et al. 2000).")
  c:argument("inputs", "Local mirrors (directories: the first path component is the site), WARC files, "
    .. "JSON Lines pages (with --edges for the links)."):args("+")
  c:option("-o --output", "Output directory."):count(1)
  c:option("--edges", "An edge list: lines 'SRC_URL DST_URL' or JSON {\"src\":..,\"dst\":..}."):count("*")
  common.file_format_option(c, "collections.jsonl and avoid.jsonl", "a row a collection, a row a mirror")
  common.input_options(c)
  c:flag("--paper", "The paper's settings: similarity lines4 (T = 15), the strict merge condition, fixed chunks "
    .. "(options given as well still apply).")
  c:option("--similarity", "Page similarity: shingles (default), or chunk fingerprints of the whole document, 4 lines "
    .. "(the paper's), 2 lines.")
    :choices({ "whole", "lines4", "lines2", "shingles" })
  c:option("-T --threshold", "Chunks two pages must share (default: 1, 15, 25), or the resemblance for shingles (0.5).")
    :convert(tonumber)
  c:flag("--anchored", "Chunk boundaries anchored on line content, so an added header shifts only the first chunk.")
  c:option("--max-df", "Drop chunks shared by more pages than this.", "1000"):convert(tonumber)
  c:option("--merge", "Merge condition: extended, a = s >= d = b, which also merges partial mirrors (section 4; the "
    .. "default), or strict, a = s = d = b (the paper's first).")
    :choices({ "extended", "strict" })
  c:flag("--extended", "The same as --merge extended (with --paper, whose condition is strict).")
  c:flag("--single-site", "Only collections within a single site.")
  c:option("--start", "Start point of a component: inlinks (most links from other sites, Figure 7) or first.",
    "inlinks"):choices({ "inlinks", "first" })
  c:option("--site-depth", "The site: the host plus this many path segments, minus one.", "1"):convert(tonumber)
  c:option("--min-cardinality", "Report clusters of at least this many collections.", "2"):convert(tonumber)
  c:option("--min-size", "Report clusters of at least this many pages per collection.", "1"):convert(tonumber)
  c:option("--avoid-min-size", "Avoid list: collections of at least this many pages (the paper's noise is smaller).",
    "10"):convert(tonumber)
  common.shingler_options(c, { defaults = false,
    prefix = "--similarity shingles (default: MIN_100 of 8-token shingles, the Lua API's): " })
  common.resource_options(c)
  c:flag("--no-figure11", "Compute trivial clusters for the chosen similarity only.")
end

--- The collections configuration from parsed arguments, or nil, message.
function M.config(a)
  local res, err = common.resource_config(a)
  if not res then return nil, err end
  if a.site_depth < 1 then return nil, "--site-depth must be at least 1" end
  local cfg = {
    outdir = a.output, edges = a.edges, similarity = a.similarity, threshold = a.threshold,
    anchored = a.anchored or nil, max_df = a.max_df, single_site = a.single_site, start = a.start, paper = a.paper,
    site_depth = a.site_depth, min_cardinality = a.min_cardinality, min_size = a.min_size,
    avoid_min_size = a.avoid_min_size, figure11 = not a.no_figure11, output_format = a.output_format,
  }
  -- (not `x and false or nil`, which is always nil: --merge strict was ignored)
  if a.extended or a.merge == "extended" then cfg.extended = true
  elseif a.merge == "strict" then cfg.extended = false end
  for _, part in ipairs({ res, common.input_config(a), common.shingler_config(a) }) do
    for k, v in pairs(part) do cfg[k] = v end
  end
  return cfg
end

local function pct(a, b) return b > 0 and 100 * a / b or 0 end

function M.print_summary(c, out)
  out = out or io.stdout
  local g, gr, av = c.stats.graph, c.stats.grow, c.stats.avoid
  local t = c.stats.trivial[c.cfg.similarity]
  out:write(("pages %d on %d sites: %d fingerprinted, %d without text, %d unreadable, %d duplicate URLs, %d other files skipped\n")
    :format(g.pages, g.sites, g.ok, g.empty, g.unreadable, g.duplicate_urls, g.skipped_files or 0))
  out:write(("links %d between pages (%d found): %d to nowhere, %d self-links, %d duplicates%s\n"):format(g.links,
    g.links_found, g.links_nowhere, g.self_links, g.duplicate_links,
    g.edges_unknown_source > 0 and (", %d edges from unknown pages"):format(g.edges_unknown_source) or ""))
  if (g.bad_records or 0) + (g.bad_edges or 0) + (g.skipped_inputs or 0) > 0 then
    out:write(("bad input: %d records, %d edge lines, %d inputs skipped\n"):format(g.bad_records, g.bad_edges, g.skipped_inputs))
  end
  if c.cfg.paper then out:write("the paper's settings (--paper)\n") end
  out:write(("trivial clusters (%s, threshold %s): %d with %d pages, the largest %d\n"):format(c.cfg.similarity,
    tostring(t.threshold), t.clusters, t.pages_in_clusters, t.largest))
  out:write(("LinkSummary %d rows, %d merge edges (%s condition), %d components\n"):format(gr.summary_rows,
    gr.merge_edges, c.cfg.extended and "extended" or "strict", gr.components))
  out:write(("similar clusters %d: %d collections, %d pages (%d shared by several collections)%s\n"):format(gr.clusters,
    gr.collections, gr.distinct_pages, gr.shared_pages,
    gr.split_components > 0 and (", %d components split"):format(gr.split_components) or ""))
  out:write(("crawler: skipping %d mirrors saves %d pages, %d of %d bytes (%.1f%%)\n\n"):format(av.entries, av.pages,
    av.bytes, av.crawled_bytes, pct(av.bytes, av.crawled_bytes)))
  out:write("largest clusters by cardinality (Table 2):\n", c:table2(5), "\n\n")
  out:write("pages by number of similar pages (Figure 11):\n", c:figure11(), "\n\n")
  out:write(c:phase_table(), "\n")
end

function M.run(a)
  local cfg, err = M.config(a)
  if not cfg then return common.fail(2, err) end
  local ok, c = pcall(collections.new, cfg)
  if not ok then return common.fail(2, common.api_message(c)) end
  local sum, rerr = c:run(a.inputs)
  if not sum then return common.fail_run(rerr, a.command) end
  M.print_summary(c)
  return 0
end

return M
