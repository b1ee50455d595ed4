-- The recorded ABI of the C library (core/include/shingle.abi) and the
-- helpers that read the same facts from C text: spec/capi_spec.lua compares
-- the installed header, libshingle and a program built against them with the
-- record; spec/ffi_spec.lua compares shingle.ffi's declarations with it.
local M = {}

--- The function declarations of a C text, one normalized line each
-- ("int shingle_sketch_new(shingle_sketch **out, char **errmsg);"), in order.
function M.prototypes(text)
  text = text:gsub("/%*.-%*/", " "):gsub("\n%s*#[^\n]*", "\n"):gsub("SHINGLE_API", " ")
  local out = {}
  for decl in text:gmatch("[^;{}]+;") do
    decl = decl:gsub("%s+", " "):gsub("^ ", "")
    if decl:match("^[%w_ %*]+shingle_[%w_]+ ?%b() ?;$") and not decl:match("^typedef") then
      decl = decl:gsub(" ?(%*+) ?", " %1"):gsub(" ?([(),;]) ?", "%1"):gsub(",", ", ")
      out[#out + 1] = decl
    end
  end
  return out
end

--- The names of the public structs and of the constants of enums and
-- #defines (SHINGLE_*) other than the version's own, in a header's text.
function M.header_names(text)
  local structs, consts = {}, {}
  text = text:gsub("/%*.-%*/", " ")
  for name in text:gmatch("typedef struct (shingle_[%w_]+) {") do structs[#structs + 1] = name end
  for body in text:gmatch("enum%s*(%b{})") do
    for name in body:gmatch("(SHINGLE_[%w_]+)%s*=") do consts[#consts + 1] = name end
  end
  for name, value in text:gmatch("#define (SHINGLE_[%w_]+) (%-?%d+)\n") do consts[#consts + 1] = name end
  return structs, consts
end

--- The record: { soname = "...", functions = { lines }, layout = { lines } }
-- (layout: the "const", "size" and "field" lines abi.c prints).
function M.record(path)
  local r = { functions = {}, layout = {} }
  for line in io.lines(path or "core/include/shingle.abi") do
    if line:match("^soname ") then r.soname = line:match("^soname (%S+)")
    elseif line:match("^function ") then r.functions[#r.functions + 1] = line:match("^function (.*)$")
    elseif line:match("^const ") or line:match("^size ") or line:match("^field ") then r.layout[#r.layout + 1] = line
    elseif not line:match("^#") and line:match("%S") then error("shingle.abi: a line I do not know: " .. line) end
  end
  return r
end

return M
