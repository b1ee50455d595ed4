/* The clustering pipeline's options and counters (l_runopts.c), shared by
 * shingle.core's phases (l_cluster.c) and shingle.mpi's distributed ones
 * (mpi/l_mpi.c). A header of its own: cluster.h names sh_lsh (the LSH
 * clustering run), which lsh.h (in-memory LSH) also names, so lshingle.h,
 * included by every binding, must not pull it in. */
#ifndef SHINGLE_LRUNOPTS_H
#define SHINGLE_LRUNOPTS_H

#include "cluster.h"
#include "lshingle.h"

/* A progress callback into Lua: shl_get_progress reads the `progress` field
 * of options table t; a function stays on top of the stack for the call and
 * *fn, *ud are set (an error in it is dropped); otherwise both are NULL. */
typedef struct shl_progress {
    lua_State *L;
    int fn;
    const char *step;
    uint64_t done, total;
} shl_progress;
void shl_get_progress(lua_State *L, int t, shl_progress *p, sh_progress_fn *fn, void **ud);
/* policy, threshold, verify, candidate (callbacks left NULL) */
void shl_read_decide(lua_State *L, int t, sh_decide_config *c);
/* those and memory, temp_dir, check, bands, rows, meta, meta_w, progress */
void shl_read_alt(lua_State *L, int t, sh_alt_config *c, shl_progress *lp);
void shl_push_dedupe_stats(lua_State *L, const sh_dedupe_stats *st);
void shl_push_pairs_stats(lua_State *L, const sh_pairs_stats *st);
void shl_push_decide_stats(lua_State *L, const sh_decide_stats *st);

#endif
