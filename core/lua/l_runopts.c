/* The clustering pipeline's options and counters as Lua tables: what the
 * bindings of the single process (l_cluster.c, shingle.core) and of the
 * distributed run (mpi/l_mpi.c, shingle.mpi) read and return alike, so the
 * two take the same options and give the same fields. */
#include <string.h>
#include "lrunopts.h"

/* Progress callbacks into Lua: the function is at a known stack index of
 * the binding's frame, and is passed on to a C function that pushes its
 * arguments and calls it: everything that could raise runs under lua_pcall,
 * and an error is dropped (the callback only draws a bar), so no Lua error
 * unwinds through the engine's frames. */
static int call_progress(lua_State *L)
{
    shl_progress *p = (shl_progress *)lua_touserdata(L, 2);
    lua_pushvalue(L, 1);
    lua_pushstring(L, p->step);
    lua_pushnumber(L, (lua_Number)p->done);
    lua_pushnumber(L, (lua_Number)p->total);
    lua_call(L, 3, 0);
    return 0;
}

static void progress_lua(void *ud, const char *step, uint64_t done, uint64_t total)
{
    shl_progress *p = (shl_progress *)ud;
    p->step = step;
    p->done = done;
    p->total = total;
    lua_pushcfunction(p->L, call_progress);
    lua_pushvalue(p->L, p->fn);
    lua_pushlightuserdata(p->L, p);
    if (lua_pcall(p->L, 2, 0, 0) != 0) lua_pop(p->L, 1);
}

void shl_get_progress(lua_State *L, int t, shl_progress *p, sh_progress_fn *fn, void **ud)
{
    lua_getfield(L, t, "progress");
    if (lua_isfunction(L, -1)) {
        p->L = L;
        p->fn = lua_gettop(L);
        *fn = progress_lua;
        *ud = p;
        return;
    }
    lua_pop(L, 1);
    *fn = NULL;
    *ud = NULL;
}

void shl_push_dedupe_stats(lua_State *L, const sh_dedupe_stats *st)
{
    lua_createtable(L, 0, 6);
    SHL_SETI(L, "docs", st->docs); SHL_SETI(L, "skipped", st->skipped); SHL_SETI(L, "exact", st->exact);
    SHL_SETI(L, "lexical", st->lexical); SHL_SETI(L, "shingle", st->shingle);
    SHL_SETI(L, "representatives", st->representatives);
}

void shl_push_pairs_stats(lua_State *L, const sh_pairs_stats *st)
{
    lua_createtable(L, 0, 9);
    SHL_SETI(L, "records", st->records); SHL_SETI(L, "shingles", st->shingles);
    SHL_SETI(L, "common_dropped", st->common_dropped); SHL_SETI(L, "pair_records", st->pair_records);
    SHL_SETI(L, "pairs", st->pairs); SHL_SETI(L, "disk_peak", st->disk_peak);
    SHL_SETN(L, "t_merge", st->t_merge); SHL_SETN(L, "t_form", st->t_form); SHL_SETN(L, "t_pairmerge", st->t_pairmerge);
}

void shl_push_decide_stats(lua_State *L, const sh_decide_stats *st)
{
    lua_createtable(L, 0, 7);
    SHL_SETI(L, "pairs", st->pairs); SHL_SETI(L, "candidates", st->candidates); SHL_SETI(L, "linked", st->linked);
    SHL_SETI(L, "clusters", st->clusters); SHL_SETI(L, "clustered_docs", st->clustered_docs);
    SHL_SETI(L, "identical_only_clusters", st->identical_only_clusters); SHL_SETI(L, "mixed_clusters", st->mixed_clusters);
}

void shl_read_decide(lua_State *L, int t, sh_decide_config *c)
{
    memset(c, 0, sizeof *c);
    c->threshold = shl_opt_num(L, t, "threshold", 0.5);
    c->verify = shl_opt_bool(L, t, "verify", 0);
    c->candidate = shl_opt_num(L, t, "candidate", c->threshold);
    c->policy = (sh_policy)shl_opt_policy(L, t, "policy", SH_POLICY_RESEMBLANCE);
    c->threads = (int)shl_opt_int(L, t, "threads", 1);
    c->chunk_pairs = (unsigned)shl_opt_int(L, t, "chunk_pairs", 0);
    /* phase 3's max_df given: pairs.bin's counts may give the candidates' estimates */
    lua_getfield(L, t, "max_df");
    c->shared_counts = !lua_isnil(L, -1);
    lua_pop(L, 1);
    if (c->shared_counts) {
        lua_Integer m = shl_opt_int(L, t, "max_df", 0);
        luaL_argcheck(L, m >= 0 && m <= (lua_Integer)UINT32_MAX, t, "max_df must be 0 to 2^32 - 1");
        c->max_df = (uint32_t)m;
    }
    luaL_argcheck(L, c->threshold >= 0 && c->threshold <= 1, t, "threshold must be between 0 and 1");
    luaL_argcheck(L, c->threads >= 1 && c->threads <= 256, t, "threads must be 1 to 256");
    luaL_argcheck(L, c->chunk_pairs <= (1u << 24), t, "chunk_pairs must be 0 to 2^24");
}

void shl_read_alt(lua_State *L, int t, sh_alt_config *c, shl_progress *lp)
{
    lua_Integer bands, rows, meta_w;
    memset(c, 0, sizeof *c);
    shl_read_decide(L, t, &c->decide);
    c->memory = (size_t)shl_opt_num(L, t, "memory", 256.0 * 1024 * 1024);
    c->temp_dir = shl_opt_str(L, t, "temp_dir", NULL);
    c->check = shl_opt_bool(L, t, "check", 0);
    bands = shl_opt_int(L, t, "bands", 9);
    rows = shl_opt_int(L, t, "rows", 13);
    c->meta = shl_opt_bool(L, t, "meta", 0);
    meta_w = shl_opt_int(L, t, "meta_w", 4);
    luaL_argcheck(L, bands >= 1 && bands <= 4096 && rows >= 1 && rows <= 4096, t, "bands and rows must be 1 to 4096");
    luaL_argcheck(L, meta_w >= 1 && meta_w <= 1000000, t, "meta_w must be at least 1");
    c->bands = (uint32_t)bands;
    c->rows = (uint32_t)rows;
    c->meta_w = (uint32_t)meta_w;
    shl_get_progress(L, t, lp, &c->decide.progress, &c->decide.progress_ud);
}
