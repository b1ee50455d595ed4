-- Build and install with: luarocks make rockspec/shingle-scm-1.rockspec [--tree DIR]
-- (a spec checks that every C source and Lua module of the repository is listed)
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
   type = "builtin",
   modules = {
      ["shingle.core"] = {
         sources = {
            "core/alternatives.c", "core/canon.c", "core/capi.c", "core/chunks.c", "core/clmul.c", "core/clock.c", "core/cluster.c",
            "core/codetok.c", "core/collections.c", "core/collview.c", "core/decide.c", "core/dist.c",
            "core/document.c", "core/error.c", "core/estimate.c", "core/exchange.c", "core/extsort.c",
            "core/fasta.c", "core/hashtab.c", "core/http.c", "core/index.c", "core/ixcheck.c", "core/jsonl.c",
            "core/links.c", "core/lsh.c", "core/mail.c", "core/midi.c", "core/outdir.c", "core/pairs.c",
            "core/policy.c", "core/pool.c", "core/rabin.c", "core/recfile.c", "core/run.c", "core/shingler.c",
            "core/simd.c", "core/sketch.c", "core/sketchfile.c", "core/sort.c", "core/transport_threads.c",
            "core/tweet.c", "core/unionfind.c", "core/warc.c", "core/webgraph.c", "core/zio.c", "core/lua/l_aux.c",
            "core/lua/l_cluster.c", "core/lua/l_collections.c", "core/lua/l_core.c", "core/lua/l_guard.c",
            "core/lua/l_index.c", "core/lua/l_io.c", "core/lua/l_ixcheck.c", "core/lua/l_json.c", "core/lua/l_jsonl.c",
            "core/lua/l_lsh.c", "core/lua/l_mail.c", "core/lua/l_outdir.c", "core/lua/l_proc.c",
            "core/lua/l_runopts.c", "core/lua/l_shingler.c", "core/lua/l_sketch.c", "core/lua/l_sketchfile.c",
            "core/lua/l_util.c", "core/lua/l_worker.c", "core/lua/l_zio.c",
         },
         incdirs = { "core", "$(ZLIB_INCDIR)", "$(ZSTD_INCDIR)", "$(UTF8PROC_INCDIR)", "$(LMDB_INCDIR)", "$(XXHASH_INCDIR)" },
         libdirs = { "$(ZLIB_LIBDIR)", "$(ZSTD_LIBDIR)", "$(UTF8PROC_LIBDIR)", "$(LMDB_LIBDIR)", "$(XXHASH_LIBDIR)" },
         libraries = { "z", "zstd", "utf8proc", "lmdb", "xxhash", "pthread", "m" },
         defines = { "_POSIX_C_SOURCE=200809L" },
      },
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
      ["shingle.extractors"] = "lua/shingle/extractors/init.lua",
      ["shingle.ffi"] = "lua/shingle/ffi.lua",
      ["shingle.extractors.midi"] = "lua/shingle/extractors/midi.lua",
      ["shingle.html"] = "lua/shingle/html.lua",
      ["shingle.http"] = "lua/shingle/http.lua",
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
   install = {
      bin = { shingle = "bin/shingle" },
   },
}
