--- Feature extractors: objects that are not text, as feature sets or
-- sequences the same sketch, estimator, clustering and index machinery takes
-- ("Our general technique only depends on the ability to extract a set of
-- features from objects", Broder et al. 1997).
--
-- An extractor is a table:
--   name     identifies it (part of the rules' identity of its sketches)
--   kind     "sequence" (shingled with width w) or "set" (sketched as is)
--   extract  function(bytes, path) -> list of strings or integers, or nil, err
-- The built-in code and fasta extractors also name their C equivalent
-- (tokenizer = "code", c = "fasta", c = "midi"), which the pipeline runs instead; an
-- extractor in Lua given by name or file runs on the pipeline's worker
-- threads, one Lua state each (shingle.worker).
-- Ship your own as a Lua file returning such a table: --extractor ./mine.lua
local M = {}

M.builtin = { midi = true, code = true, fasta = true }

--- The extractor for a name (midi, code, fasta), a name with options
-- ("fasta:k=15": options of the extractor's new(), whole numbers), or a
-- path to a Lua file.
function M.get(spec)
  if type(spec) == "table" then return M.check(spec, "the extractor") end
  if M.builtin[spec] then return require("shingle.extractors." .. spec) end
  local name, params = spec:match("^(%a+):(.+)$")
  if name and M.builtin[name] then
    local ex = require("shingle.extractors." .. name)
    if not ex.new then return nil, ("the extractor '%s' takes no options (in '%s')"):format(name, spec) end
    local o = {}
    for item in params:gmatch("[^,]+") do
      local k, v = item:match("^%s*([%a_]+)%s*=%s*(%d+)%s*$")
      if not k then return nil, ("'%s' in '%s' is not an option; write name:key=number,key=number"):format(item, spec) end
      o[k] = tonumber(v)
    end
    local ok, made = pcall(ex.new, o)
    if not ok then return nil, (tostring(made):gsub("^[^:]*:%d+: ", "")) end
    return made
  end
  if spec:find("/", 1, true) or spec:match("%.lua$") then
    local chunk, err = loadfile(spec)
    if not chunk then return nil, ("cannot load the extractor %s: %s"):format(spec, err) end
    local ok, ex = pcall(chunk)
    if not ok then return nil, ("the extractor %s failed to load: %s"):format(spec, tostring(ex)) end
    return M.check(ex, spec)
  end
  return nil, ("unknown extractor '%s'; use midi, code, fasta (fasta:k=N) or the path of a Lua file"):format(spec)
end

function M.check(ex, where)
  if type(ex) ~= "table" or type(ex.extract) ~= "function" or type(ex.name) ~= "string" then
    return nil, where .. " must return a table { name = string, kind = 'sequence' | 'set', extract = function(bytes, path) }"
  end
  if ex.kind ~= "sequence" and ex.kind ~= "set" then
    return nil, ("%s: kind is '%s'; use 'sequence' or 'set'"):format(where, tostring(ex.kind))
  end
  return ex
end

--- Sketch one object with a shingler: a sequence is shingled, a set is
-- sketched as is. nil, message when the extractor returns nil, err or
-- raises ("extractor NAME failed on PATH: message").
function M.sketch(ex, sh, bytes, path, kind)
  local ok, feats, err = pcall(ex.extract, bytes, path)
  if not ok then return nil, ("extractor %s failed on %s: %s"):format(ex.name, tostring(path), tostring(feats)) end
  if not feats then return nil, err end
  if ex.kind == "sequence" then return sh:sketch_tokens(feats, kind) end
  return sh:sketch_features(feats, kind)
end

return M
