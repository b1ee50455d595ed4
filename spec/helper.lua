-- Loaded by busted before the specs: point package.cpath at the C module
-- built for the Lua that runs the specs (scripts/setup.sh builds all three
-- into build/<version>; SHINGLE_BUILD names another build, e.g. build/asan).
local v = rawget(_G, "jit") and "jit" or _VERSION:match("%d+%.%d+")
local dir = os.getenv("SHINGLE_BUILD") or ("build/" .. v)
package.cpath = dir .. "/lib/?.so;" .. package.cpath
