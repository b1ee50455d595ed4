-- One-line mutants: bugs of the kind a slip of the hand makes, each applied
-- alone to a scratch copy of the tree, which is rebuilt and tested with the
-- tests that should catch it. A mutant the tests do not catch (it
-- "survives") marks a gap in the suite. Run through scripts/mutants.sh;
-- docs/architecture.md says where this fits.
--
-- A mutant names a fragment of source text, not a file and line, so it
-- survives refactorings: the fragment is looked for in every source file
-- (core/*.c, core/*.h, core/lua/*.c, lua/shingle/**.lua) and must occur
-- exactly once; when it does not (the code changed), the mutant is reported
-- as stale, to be updated. Tests: "c:NAME" runs build/5.4/NAME, "spec:FILE"
-- runs busted on spec/FILE under Lua 5.4; the first one that fails kills it.

local M = {}

M.mutants = {
  -- sketches and estimators (Broder 1997, Theorem 1)
  { id = "min-s-minus-1", what = "MIN_s keeps s - 1 values",
    from = "if (nv > p.s) { smallest(v, nv, p.s); keep = p.s; }",
    to = "if (nv > p.s) { smallest(v, nv, p.s); keep = p.s - 1; }",
    tests = { "c:test_shingler", "c:test_simd", "spec:estimator_spec.lua" } },
  { id = "mod-path-strict", what = "the default MOD_m path drops values at the bound of the divisibility test",
    from = "uint64_t x = sh_permute(p.seed, fps[i]);\n        v[k] = x;\n        k += ((x & low) == 0) & (x * inv <= lim);",
    to = "uint64_t x = sh_permute(p.seed, fps[i]);\n        v[k] = x;\n        k += ((x & low) == 0) & (x * inv < lim);",
    -- the portable loop: the reference every SIMD level is compared with
    tests = { "c:test_shingler", "c:test_simd", "spec:estimator_spec.lua" } },
  { id = "mod-select-strict", what = "MOD_m of a full set (and of features) drops values at the bound of the divisibility test",
    from = "uint64_t x = v[i];\n        v[k] = x;\n        k += ((x & low) == 0) & (x * inv <= lim);",
    to = "uint64_t x = v[i];\n        v[k] = x;\n        k += ((x & low) == 0) & (x * inv < lim);",
    tests = { "c:test_shingler", "spec:estimator_spec.lua" } },
  { id = "mod-floor", what = "the MOD_m floor steps down one modulus too early",
    from = "while (least && m > 1 && n / m < least)", to = "while (least && m > 1 && n / m <= least)",
    tests = { "c:test_shingler", "spec:estimator_spec.lua" } },
  { id = "min-merge-one-more", what = "the merged MIN_s estimator looks at s + 1 values of the union",
    from = "while (taken < s && (i < na || j < nb))", to = "while (taken <= s && (i < na || j < nb))",
    tests = { "c:test_shingler", "spec:estimator_spec.lua", "spec:paper_examples_spec.lua" } },
  -- canonicalization
  { id = "entity-rsquo", what = "&rsquo; is no longer decoded",
    from = '{"rsquo", 0x2019}', to = '{"rsqou", 0x2019}',
    tests = { "c:test_canon" } },
  -- the clustering phases
  { id = "max-df-drops-max-df", what = "phase 3 drops a shingle shared by exactly max_df documents",
    from = "if (f->c->max_df && f->g == f->c->max_df) {", to = "if (f->c->max_df && f->g + 1 == f->c->max_df) {",
    tests = { "spec:cluster_spec.lua" } },
  { id = "max-df-keeps-max-df-plus-1", what = "phase 3 keeps a shingle shared by max_df + 1 documents",
    from = "if (f->c->max_df && f->g == f->c->max_df) {", to = "if (f->c->max_df && f->g == f->c->max_df + 1) {",
    tests = { "spec:cluster_spec.lua" } },
  { id = "policy-strict", what = "a pair whose resemblance equals the threshold is not linked",
    from = "case SH_POLICY_RESEMBLANCE: return e->resemblance >= t;",
    to = "case SH_POLICY_RESEMBLANCE: return e->resemblance > t;",
    tests = { "spec:cluster_spec.lua" } },
  { id = "dedupe-lexical", what = "lexically equal documents are reported as shingle-equivalent",
    from = "p->canon_fp == d.canon_fp ? SH_DUP_LEXICAL : SH_DUP_SHINGLE",
    to = "p->canon_fp != d.canon_fp ? SH_DUP_LEXICAL : SH_DUP_SHINGLE",
    tests = { "spec:cluster_spec.lua" } },
  { id = "extsort-unstable", what = "the merge takes equal keys from the later run first",
    from = "return c < 0 || (c == 0 && a < b);", to = "return c < 0 || (c == 0 && a > b);",
    tests = { "c:test_extsort" } },
  -- the index
  { id = "index-max-df-drops-max-df", what = "the index skips a value shared by exactly max_df documents",
    from = "cnt > max_df) continue;", to = "cnt >= max_df) continue;",
    tests = { "spec:index_spec.lua" } },
  { id = "index-max-df-keeps-plus-1", what = "the index uses a value shared by max_df + 1 documents",
    from = "cnt > max_df) continue;", to = "cnt > max_df + 1) continue;",
    tests = { "spec:index_spec.lua" } },
  { id = "index-skips-posting", what = "an index add skips the first posting of a batch",
    from = "for (j = 0; j < m && rc == 0; j++) rc = put_dup(",
    to = "for (j = 1; j < m && rc == 0; j++) rc = put_dup(",
    tests = { "spec:index_spec.lua" } },
  -- collections (Cho et al. 2000)
  { id = "chunks-threshold-strict", what = "pages sharing exactly T chunks are not similar",
    from = "if (sh_pair_count(rec) >= cfg->threshold) {", to = "if (sh_pair_count(rec) > cfg->threshold) {",
    tests = { "spec:collections_spec.lua" } },
  -- the Lua side
  { id = "shtml-not-html", what = "a .shtml file is not taken as HTML",
    from = 'return l:match("%.x?html?$") ~= nil or l:match("%.shtml$") ~= nil',
    to = 'return l:match("%.x?html?$") ~= nil',
    tests = { "spec:input_spec.lua" } },
  { id = "strict-ignored", what = "strict does not stop a run at a broken record",
    from = "if self.opts.strict then", to = "if false then",
    tests = { "spec:input_spec.lua", "spec:cluster_spec.lua" } },
  { id = "skipped-records-only", what = "the pipeline counts only broken records as skipped",
    from = "self.stats.skipped = r:total_skipped()", to = "self.stats.skipped = r.skipped.records",
    tests = { "spec:cluster_spec.lua", "spec:input_spec.lua" } },
  { id = "html-twin-unstripped", what = "the HTML shingler of a pair does not strip HTML",
    from = "o.html = true\n  return text, shingle.new(o), ex", to = "o.html = false\n  return text, shingle.new(o), ex",
    tests = { "spec:cli_spec.lua", "spec:cluster_spec.lua" } },
  { id = "fasta-one-strand", what = "the FASTA extractor no longer takes a k-mer and its reverse complement as one",
    from = "return rc < kmer and rc or kmer", to = "return kmer",
    tests = { "spec:extractors_spec.lua" } },
  { id = "code-keeps-names", what = "the code rule set keeps identifiers' names",
    from = 'toks[#toks + 1] = code_keywords[w] and w or "ID"', to = "toks[#toks + 1] = w",
    tests = { "spec:rules_spec.lua" } },
  { id = "explain-passages-split", what = "explain no longer merges overlapping shared shingles into one passage",
    from = "if cur and firsta[i] <= cur.a_last + 1 then", to = "if cur and firsta[i] > cur.a_last + 1 then",
    tests = { "spec:query_cli_spec.lua" } },
  { id = "index-add-ignores-seed", what = "an add to an existing index ignores a different seed instead of refusing it",
    from = '"numbers", "invalid", "seed", "canon", "extractor" }) do', to = '"numbers", "invalid", "canon", "extractor" }) do',
    tests = { "spec:index_spec.lua" } },
  { id = "cli-no-numbers-lost", what = "--no-numbers does not reach the shingler",
    from = "if a.no_numbers then cfg.numbers = false end", to = "if a.no_numbers then cfg.numbers = nil end",
    tests = { "spec:cli_spec.lua" } },
  { id = "collections-json-escaped-slash", what = "collections.jsonl writes URLs with cjson's escaped slashes",
    from = '(require("cjson").encode(s):gsub("\\\\/", "/"))', to = '(require("cjson").encode(s))',
    tests = { "spec:collections_spec.lua" } },
  { id = "collections-ignores-seed", what = "collections' shingler ignores the configured seed",
    from = 'local shingler_keys = { "w", "sketch", "s", "m", "k", "seed",',
    to = 'local shingler_keys = { "w", "sketch", "s", "m", "k",',
    tests = { "spec:collections_spec.lua" } },
}

-- ---------------------------------------------------------------------------

local function sh(cmd) -- run a shell command quietly; true if it exits 0
  local ok = os.execute(cmd .. " >/dev/null 2>&1")
  return ok == true or ok == 0
end

local function read(path)
  local f = assert(io.open(path, "rb"))
  local s = f:read("a")
  f:close()
  return s
end

local function write(path, s)
  local f = assert(io.open(path, "wb"))
  f:write(s)
  f:close()
end

local function quote(s) return "'" .. s:gsub("'", "'\\''") .. "'" end

local function source_files(dir)
  local out = {}
  local p = io.popen("cd " .. quote(dir) .. " && ls core/*.c core/*.h core/lua/*.c 2>/dev/null; "
    .. "find lua/shingle -name '*.lua' | sort")
  for line in p:lines() do out[#out + 1] = line end
  p:close()
  return out
end

-- where the fragment occurs: file, count of occurrences in all files
local function locate(dir, files, fragment)
  local where, count = nil, 0
  for _, f in ipairs(files) do
    local s, i = read(dir .. "/" .. f), 1
    while true do
      local a, b = s:find(fragment, i, true)
      if not a then break end
      count = count + 1
      where = f
      i = b + 1
    end
  end
  return where, count
end

local function run_test(dir, t)
  local kind, name = t:match("^(%a+):(.+)$")
  if kind == "c" then
    return sh(("cd %s && timeout 600 build/5.4/%s"):format(quote(dir), name))
  elseif kind == "spec" then
    return sh(("cd %s && timeout 900 busted --lua=lua5.4 -o plainTerminal spec/%s"):format(quote(dir), name))
  end
  error("unknown test " .. t)
end

function M.main(args)
  local root, scratch, only = args[1], args[2], args[3]
  local build = ("cmake --build %s/build/5.4 -j2"):format(quote(scratch))
  io.write("mutants: building the scratch copy in ", scratch, "\n")
  assert(sh(("cmake -S %s -B %s/build/5.4 -DSHINGLE_LUA=5.4"):format(quote(scratch), quote(scratch))) and sh(build),
    "the unmutated tree does not build")
  local files = source_files(scratch)
  -- the tests must pass before any mutation, or a "kill" means nothing
  local needed, order = {}, {}
  for _, m in ipairs(M.mutants) do
    for _, t in ipairs(m.tests) do if not needed[t] then needed[t] = true; order[#order + 1] = t end end
  end
  for _, t in ipairs(order) do
    if not run_test(scratch, t) then
      io.write("mutants: ", t, " fails on the unmutated tree; fix that first\n")
      return 2
    end
  end
  local results, killed, survived, stale = {}, 0, 0, 0
  for _, m in ipairs(M.mutants) do
    if not only or m.id:find(only, 1, true) then
      local file, count = locate(scratch, files, m.from)
      local status, detail
      if count ~= 1 then
        status, detail = "STALE", ("the fragment occurs %d times (the code changed: update the mutant)"):format(count)
        stale = stale + 1
      else
        local path = scratch .. "/" .. file
        local original = read(path)
        local a, b = original:find(m.from, 1, true)
        write(path, original:sub(1, a - 1) .. m.to .. original:sub(b + 1))
        if file:match("%.[ch]$") and not sh(build) then
          status, detail = "INVALID", "does not compile"
        else
          for _, t in ipairs(m.tests) do
            if not run_test(scratch, t) then status, detail = "killed", "by " .. t; break end
          end
          if not status then status, detail = "SURVIVED", "by " .. table.concat(m.tests, ", "); survived = survived + 1
          else killed = killed + 1 end
        end
        write(path, original)
        detail = file .. ": " .. detail
      end
      local line = ("%-9s %-28s %s (%s)"):format(status, m.id, m.what, detail)
      results[#results + 1] = line
      io.write(line, "\n")
      io.flush()
    end
  end
  sh(build)
  io.write(("mutants: %d killed, %d survived, %d stale, of %d\n"):format(killed, survived, stale, #results))
  return (survived + stale > 0) and 1 or 0
end

if arg and arg[0] and arg[0]:match("mutants%.lua$") then os.exit(M.main(arg)) end
return M
