--- What a worker thread of the C pool runs in its own Lua state
-- (core/lua/l_worker.c): from a sketcher configuration (shingle.sketcher
-- .shinglers takes it; its rule set or extractor by name or file), the
-- function a document goes through, giving the token list (or, for an
-- extractor of sets, the feature list and true), or nil and a message.
-- The main thread's path (sketcher's lua_batch) does the same per document.
local sketcher = require "shingle.sketcher"
local rules = require "shingle.rules"
local shingle = require "shingle"

return function(cfg)
  local sh, _, ex = sketcher.shinglers(cfg)
  if ex then
    local set = ex.kind == "set"
    return function(bytes, path)
      -- user code that raises is named, as on the main thread (sketcher.failed)
      local ok, feats, err = pcall(ex.extract, bytes, path)
      if not ok then return nil, sketcher.failed("extractor", ex.name, path, feats) end
      if not feats then return nil, err end
      return feats, set
    end
  end
  local c, compiled = shingle.unwrap(sh)
  return function(bytes, path)
    local ok, toks, err = pcall(rules.tokens, compiled, c, bytes)
    if not ok then return nil, sketcher.failed("rule set", compiled and compiled.signature or "?", path, toks) end
    if not toks then return nil, err end
    return toks, false
  end
end
