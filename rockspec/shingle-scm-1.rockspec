-- Build and install with: luarocks --lua-version=5.4 make rockspec/shingle-scm-1.rockspec [--tree DIR]
-- The C module is built by CMake in build/rock (nothing is written beside the
-- sources); the Lua dependencies are pulled by LuaRocks, or provided by the
-- system's packages (Debian: lua-argparse, lua-cjson, lua-filesystem).
-- (spec/rockspec_spec.lua checks that every Lua module of the repository is listed)
rockspec_format = "3.0"
package = "shingle"
version = "scm-1"
source = {
   url = "git+file:///dev/null", -- `luarocks make` builds the checkout it is run in
}
description = {
   summary = "Near-duplicate documents and mirrored collections, after Broder et al. (1997)",
   detailed = [[
Shingles, Rabin fingerprints, MIN_s / MOD_m sketches and their estimators of
resemblance and containment, clustering by external sort and union-find, with
a fast C core and a Lua scripting surface.]],
   license = "MIT",
}
dependencies = {
   "lua >= 5.1",
   "argparse >= 0.7",      -- the command line (shingle.cli)
   "lua-cjson >= 2.1",     -- reading JSON (outputs are written by shingle.writer)
   "luafilesystem >= 1.8", -- directories and files (lfs)
}
build_dependencies = {}
external_dependencies = {
   ZLIB = { header = "zlib.h", library = "z" },
   ZSTD = { header = "zstd.h", library = "zstd" },
   UTF8PROC = { header = "utf8proc.h", library = "utf8proc" },
   LMDB = { header = "lmdb.h", library = "lmdb" },
   XXHASH = { header = "xxhash.h", library = "xxhash" },
}
build = {
   -- CMake builds core.so (the same build as scripts/setup.sh: per-file flags,
   -- the sources found by CMake) against the Lua LuaRocks builds for, in
   -- build/rock, made afresh so that another Lua's build is never reused
   type = "command",
   build_command = [[rm -rf build/rock && cmake -S . -B build/rock -DCMAKE_BUILD_TYPE=Release -DSHINGLE_LUA=$(LUA_VERSION) ]]
      .. [[-DSHINGLE_LUA_INCDIR="$(LUA_INCDIR)" -DSHINGLE_MPI=OFF >/dev/null && cmake --build build/rock --target shingle_lua -j 2]],
   install = {
      lib = { ["shingle.core"] = "build/rock/lib/shingle/core.so" },
      lua = {
         ["shingle.cli"] = "lua/shingle/cli.lua",
         ["shingle.cmd.avoid"] = "lua/shingle/cmd/avoid.lua",
         ["shingle.cmd.cluster"] = "lua/shingle/cmd/cluster.lua",
         ["shingle.cmd.collections"] = "lua/shingle/cmd/collections.lua",
         ["shingle.cmd.common"] = "lua/shingle/cmd/common.lua",
         ["shingle.cmd.compare"] = "lua/shingle/cmd/compare.lua",
         ["shingle.cmd.dedup"] = "lua/shingle/cmd/dedup.lua",
         ["shingle.cmd.explain"] = "lua/shingle/cmd/explain.lua",
         ["shingle.cmd.index"] = "lua/shingle/cmd/index.lua",
         ["shingle.cmd.query"] = "lua/shingle/cmd/query.lua",
         ["shingle.cmd.recluster"] = "lua/shingle/cmd/recluster.lua",
         ["shingle.cmd.report"] = "lua/shingle/cmd/report.lua",
         ["shingle.cmd.rollup"] = "lua/shingle/cmd/rollup.lua",
         ["shingle.cmd.serve"] = "lua/shingle/cmd/serve.lua",
         ["shingle.cmd.sketch"] = "lua/shingle/cmd/sketch.lua",
         ["shingle.collections"] = "lua/shingle/collections.lua",
         ["shingle.dedup"] = "lua/shingle/dedup.lua",
         ["shingle.dist"] = "lua/shingle/dist.lua",
         ["shingle.explain"] = "lua/shingle/explain.lua",
         ["shingle.extractors.code"] = "lua/shingle/extractors/code.lua",
         ["shingle.extractors.fasta"] = "lua/shingle/extractors/fasta.lua",
         ["shingle.ffi"] = "lua/shingle/ffi.lua",
         ["shingle.extractors"] = "lua/shingle/extractors/init.lua",
         ["shingle.extractors.midi"] = "lua/shingle/extractors/midi.lua",
         ["shingle.html"] = "lua/shingle/html.lua",
         ["shingle.http"] = "lua/shingle/http.lua",
         ["shingle.http_writer"] = "lua/shingle/http_writer.lua",
         ["shingle.index"] = "lua/shingle/index.lua",
         ["shingle"] = "lua/shingle/init.lua",
         ["shingle.input"] = "lua/shingle/input.lua",
         ["shingle.lsh"] = "lua/shingle/lsh.lua",
         ["shingle.options"] = "lua/shingle/options.lua",
         ["shingle.pipeline"] = "lua/shingle/pipeline.lua",
         ["shingle.plot"] = "lua/shingle/plot.lua",
         ["shingle.progress"] = "lua/shingle/progress.lua",
         ["shingle.report"] = "lua/shingle/report.lua",
         ["shingle.report.cluster"] = "lua/shingle/report/cluster.lua",
         ["shingle.report.collections"] = "lua/shingle/report/collections.lua",
         ["shingle.report.sweeps"] = "lua/shingle/report/sweeps.lua",
         ["shingle.rules"] = "lua/shingle/rules.lua",
         ["shingle.serve"] = "lua/shingle/serve.lua",
         ["shingle.sketcher"] = "lua/shingle/sketcher.lua",
         ["shingle.sketches"] = "lua/shingle/sketches.lua",
         ["shingle.util"] = "lua/shingle/util.lua",
         ["shingle.worker"] = "lua/shingle/worker.lua",
         ["shingle.writer"] = "lua/shingle/writer.lua",
      },
      bin = { shingle = "bin/shingle" },
   },
}
