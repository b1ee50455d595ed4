/* shingle.mpi: the MPI layer under Lua (a module of its own, so that
 * shingle.core never links libmpi; built only when MPI is found). It binds
 * core/mpi/transport_mpi.h (the world: rank, size, collectives), the record
 * exchange of core/exchange.h and the distributed phases of core/dist.h;
 * lua/shingle/dist.lua orchestrates them.
 *
 *   local mpi = require "shingle.mpi"
 *   local world = mpi.world()        -- MPI_Init on first call; every rank calls it
 *   world:rank(), world:size(), world:barrier(), world:allreduce{...}, ...
 *   local d = world:dist(dir, { memory = ..., temp_dir = ..., progress = fn })
 *   d:dedupe(); d:pairs{...}; d:decide{...}; d:collect(0, outdir, {...})
 *   world:finalize()                 -- every rank, at the end
 *   world:abort(code)                -- a rank that failed: ends every rank
 *
 * Environmental failures return nil, message (naming the rank); after one the
 * caller must abort, as its peers may wait for it in a collective call. */
#define _GNU_SOURCE 1 /* mkostemps */
#include <dlfcn.h>
#include <errno.h>
#include <dirent.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../lrunopts.h"
#include "dist.h"
#include "exchange.h"
#include "recfile.h"
#include "transport_mpi.h"

#define SHL_WORLD "shingle.mpi.World"
#define SHL_DIST "shingle.mpi.Dist"

typedef struct world {
    sh_mpi *mpi;
    sh_comm comm;
    int finalized;
} world;

typedef struct dist {
    sh_dist d;
    int open;
    int ref_world;   /* keeps the world alive */
} dist;

#if defined(__GNUC__)
__attribute__((visibility("default")))
#endif
int luaopen_shingle_mpi(lua_State *L);

static world *check_world(lua_State *L, int i)
{
    world *w = (world *)luaL_checkudata(L, i, SHL_WORLD);
    luaL_argcheck(L, !w->finalized, i, "MPI was finalized");
    return w;
}

/* ---- the world ------------------------------------------------------------- */

/* mpi.world([{ round_bytes }]) -> the world (one per process) */
static int m_world(lua_State *L)
{
    world *w;
    sh_transport t;
    sh_error err;
    size_t round = 0;
    if (lua_istable(L, 1)) round = (size_t)shl_opt_num(L, 1, "round_bytes", 0);
    lua_getfield(L, LUA_REGISTRYINDEX, SHL_WORLD ".instance");
    if (!lua_isnil(L, -1)) return 1;
    lua_pop(L, 1);
    w = (world *)shl_newhandle(L, sizeof *w, SHL_WORLD);
    w->finalized = 1;
    if (sh_mpi_open(&w->mpi, &err) != SH_OK) return shl_fail(L, &err);
    w->finalized = 0;
    sh_mpi_transport(&t, w->mpi);
    sh_comm_init(&w->comm, &t, round);
    lua_pushvalue(L, -1);
    lua_setfield(L, LUA_REGISTRYINDEX, SHL_WORLD ".instance");
    return 1;
}

static int w_rank(lua_State *L) { lua_pushinteger(L, sh_mpi_rank(check_world(L, 1)->mpi)); return 1; }
static int w_size(lua_State *L) { lua_pushinteger(L, sh_mpi_size(check_world(L, 1)->mpi)); return 1; }
static int w_local_size(lua_State *L) { lua_pushinteger(L, sh_mpi_local_size(check_world(L, 1)->mpi)); return 1; }
static int w_local_rank(lua_State *L) { lua_pushinteger(L, sh_mpi_local_rank(check_world(L, 1)->mpi)); return 1; }
static int w_host(lua_State *L) { lua_pushstring(L, sh_mpi_host(check_world(L, 1)->mpi)); return 1; }
static int w_library(lua_State *L) { lua_pushstring(L, sh_mpi_library(check_world(L, 1)->mpi)); return 1; }

static int w_barrier(lua_State *L)
{
    world *w = check_world(L, 1);
    sh_error err;
    if (sh_comm_barrier(&w->comm, &err) != SH_OK) return shl_fail(L, &err);
    lua_pushboolean(L, 1);
    return 1;
}

/* world:allreduce({ integers }, "sum" | "max" | "min") -> { reduced } */
static int w_allreduce(lua_State *L)
{
    static const char *const ops[] = { "sum", "max", "min", NULL };
    world *w = check_world(L, 1);
    int op = luaL_checkoption(L, 3, "sum", ops), i, n;
    uint64_t *v;
    sh_error err;
    sh_status s;
    luaL_checktype(L, 2, LUA_TTABLE);
    n = (int)shl_rawlen(L, 2);
    v = (uint64_t *)lua_newuserdata(L, ((size_t)n + 1) * sizeof *v);
    for (i = 0; i < n; i++) {
        lua_Number x;
        lua_rawgeti(L, 2, i + 1);
        x = luaL_checknumber(L, -1);
        luaL_argcheck(L, x >= 0 && x < 9007199254740992.0, 2, "values must be integers from 0 to 2^53");
        v[i] = (uint64_t)x;
        lua_pop(L, 1);
    }
    if ((s = sh_comm_allreduce(&w->comm, v, (size_t)n, (sh_reduce)op, &err)) != SH_OK) return shl_fail(L, &err);
    lua_createtable(L, n, 0);
    for (i = 0; i < n; i++) {
        lua_pushinteger(L, (lua_Integer)v[i]);
        lua_rawseti(L, -2, i + 1);
    }
    return 1;
}

/* What a collective receives, one malloc'ed buffer per rank, kept in a box
 * (lshingle.h) until it is pushed as Lua strings, so a Lua error while
 * pushing leaks nothing. */
struct buf { char *p; size_t len, cap; };
typedef struct bytes { size_t n; struct buf b[]; } bytes;

static void bytes_free(void *ud)
{
    bytes *x = (bytes *)ud;
    size_t i;
    for (i = 0; i < x->n; i++) { free(x->b[i].p); x->b[i].p = NULL; }
}

static bytes *new_bytes(lua_State *L, size_t n)
{
    bytes *x = (bytes *)shl_newbox(L, sizeof(bytes) + n * sizeof(struct buf), bytes_free);
    x->n = n;
    return x;
}

static sh_status bytes_sink(void *ud, int src, const void *data, size_t n, sh_error *err)
{
    struct buf *b = &((bytes *)ud)->b[src];
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        char *q;
        while (cap < b->len + n) cap *= 2;
        if (!(q = (char *)realloc(b->p, cap))) return sh_error_set(err, SH_ENOMEM, 0, "out of memory");
        b->p = q;
        b->cap = cap;
    }
    memcpy(b->p + b->len, data, n);
    b->len += n;
    return SH_OK;
}

/* world:alltoall({ [r] = string for rank r - 1 }) -> { [r] = string from
 * rank r - 1 }: strings of any length (a plan's shares, small records),
 * exchanged in bounded rounds */
static int w_alltoall(lua_State *L)
{
    world *w = check_world(L, 1);
    int p = w->comm.size, r;
    uint64_t *counts;
    luaL_Buffer send;
    bytes *got;
    sh_error err;
    luaL_checktype(L, 2, LUA_TTABLE);
    counts = (uint64_t *)lua_newuserdata(L, (size_t)p * sizeof *counts);
    got = new_bytes(L, (size_t)p);
    luaL_buffinit(L, &send);
    for (r = 0; r < p; r++) {
        size_t k = 0;
        lua_rawgeti(L, 2, r + 1);
        if (lua_isnil(L, -1)) { lua_pop(L, 1); lua_pushliteral(L, ""); }
        if (!lua_isstring(L, -1)) return luaL_error(L, "alltoall: entry %d is a %s, not a string", r + 1, luaL_typename(L, -1));
        lua_tolstring(L, -1, &k);
        counts[r] = k;
        luaL_addvalue(&send);
    }
    luaL_pushresult(&send);
    if (sh_comm_exchange(&w->comm, lua_tostring(L, -1), counts, 1, bytes_sink, got, &err) != SH_OK) return shl_fail(L, &err);
    lua_createtable(L, p, 0);
    for (r = 0; r < p; r++) {
        lua_pushlstring(L, got->b[r].p ? got->b[r].p : "", got->b[r].len);
        lua_rawseti(L, -2, r + 1);
    }
    return 1;
}

/* world:gather(string, root) -> at root { [r] = string of rank r - 1 }; elsewhere true */
static int w_gather(lua_State *L)
{
    world *w = check_world(L, 1);
    size_t n;
    const char *s = luaL_checklstring(L, 2, &n);
    int root = (int)luaL_optinteger(L, 3, 0), r;
    sh_buffer_source b;
    bytes *got;
    sh_error err;
    luaL_argcheck(L, root >= 0 && root < w->comm.size, 3, "not a rank");
    got = new_bytes(L, (size_t)w->comm.size);
    b.data = (const unsigned char *)s; b.size = n; b.pos = 0;
    if (sh_comm_gather(&w->comm, root, 1, sh_buffer_produce, &b, bytes_sink, got, &err) != SH_OK) return shl_fail(L, &err);
    if (w->comm.rank != root) { lua_pushboolean(L, 1); return 1; }
    lua_createtable(L, w->comm.size, 0);
    for (r = 0; r < w->comm.size; r++) {
        lua_pushlstring(L, got->b[r].p ? got->b[r].p : "", got->b[r].len);
        lua_rawseti(L, -2, r + 1);
    }
    return 1;
}

/* world:bcast(string at root | nil elsewhere, root) -> the root's string */
static int w_bcast(lua_State *L)
{
    world *w = check_world(L, 1);
    int root = (int)luaL_optinteger(L, 3, 0);
    uint64_t n = 0;
    size_t len = 0;
    const char *s = NULL;
    char *buf;
    sh_error err;
    luaL_argcheck(L, root >= 0 && root < w->comm.size, 3, "not a rank");
    if (w->comm.rank == root) { s = luaL_checklstring(L, 2, &len); n = len; }
    if (sh_comm_bcast(&w->comm, root, &n, sizeof n, &err) != SH_OK) return shl_fail(L, &err);
    if (w->comm.rank == root) {
        if (sh_comm_bcast(&w->comm, root, (void *)(uintptr_t)s, (size_t)n, &err) != SH_OK) return shl_fail(L, &err);
        lua_pushvalue(L, 2);
        return 1;
    }
    buf = (char *)lua_newuserdata(L, (size_t)n + 1);
    if (sh_comm_bcast(&w->comm, root, buf, (size_t)n, &err) != SH_OK) return shl_fail(L, &err);
    lua_pushlstring(L, buf, (size_t)n);
    return 1;
}

/* world:gather_file(path | nil, root_path, root) -> bytes written (at root) or true */
static int w_gather_file(lua_State *L)
{
    world *w = check_world(L, 1);
    const char *path = luaL_optstring(L, 2, NULL);
    const char *out = luaL_optstring(L, 3, NULL);
    int root = (int)luaL_optinteger(L, 4, 0);
    uint64_t written = 0;
    sh_error err;
    luaL_argcheck(L, root >= 0 && root < w->comm.size, 4, "not a rank");
    luaL_argcheck(L, w->comm.rank != root || out, 3, "the root needs the path to write");
    if (sh_dist_gather_file(&w->comm, root, path, out, &written, &err) != SH_OK) return shl_fail(L, &err);
    if (w->comm.rank == root) lua_pushinteger(L, (lua_Integer)written);
    else lua_pushboolean(L, 1);
    return 1;
}

/* world:counters() -> bytes sent to, bytes received from other ranks; exchange rounds */
static int w_counters(lua_State *L)
{
    world *w = check_world(L, 1);
    lua_pushinteger(L, (lua_Integer)w->comm.sent);
    lua_pushinteger(L, (lua_Integer)w->comm.received);
    lua_pushinteger(L, (lua_Integer)w->comm.rounds);
    return 3;
}

/* world:set_timeout(seconds): the longest one collective call waits for the
 * other ranks before it fails (0: no limit) */
static int w_set_timeout(lua_State *L)
{
    world *w = check_world(L, 1);
    lua_Number t = luaL_checknumber(L, 2);
    luaL_argcheck(L, t >= 0, 2, "a timeout is 0 (none) or a number of seconds");
    sh_mpi_set_timeout(w->mpi, (double)t);
    return 0;
}

/* world:abort([code]): end every rank of the job now (MPI_Abort). */
static int w_abort(lua_State *L)
{
    world *w = (world *)luaL_checkudata(L, 1, SHL_WORLD);
    int code = (int)luaL_optinteger(L, 2, 1);
    sh_mpi_abort(w->finalized ? NULL : w->mpi, code);
    return 0;
}

/* world:finalize(): every rank, at the end (MPI_Finalize). */
static int w_finalize(lua_State *L)
{
    world *w = (world *)luaL_checkudata(L, 1, SHL_WORLD);
    sh_error err;
    sh_status s = SH_OK;
    if (!w->finalized) {
        w->finalized = 1;
        s = sh_mpi_close(w->mpi, &err);
        w->mpi = NULL;
    }
    if (s != SH_OK) return shl_fail(L, &err);
    lua_pushboolean(L, 1);
    return 1;
}

/* ---- the distributed phases -------------------------------------------------- */

static dist *check_dist(lua_State *L, int i)
{
    dist *d = (dist *)luaL_checkudata(L, i, SHL_DIST);
    luaL_argcheck(L, d->open, i, "the distributed run is closed");
    return d;
}

/* The progress function of options table t for this call (lshingle.h): the
 * dist's steps report through it. */
static void set_progress(lua_State *L, dist *d, int t, shl_progress *lp)
{
    shl_get_progress(L, t, lp, &d->d.progress, &d->d.progress_ud);
}

/* world:dist(dir, { memory, temp_dir }) -> this rank's part of a distributed run */
static int w_dist(lua_State *L)
{
    world *w = check_world(L, 1);
    const char *dir = luaL_checkstring(L, 2);
    sh_dist_config cfg;
    dist *d;
    sh_error err;
    luaL_checktype(L, 3, LUA_TTABLE);
    memset(&cfg, 0, sizeof cfg);
    cfg.memory = (size_t)shl_opt_num(L, 3, "memory", 256.0 * 1024 * 1024);
    cfg.temp_dir = shl_opt_str(L, 3, "temp_dir", NULL);
    d = (dist *)shl_newhandle(L, sizeof *d, SHL_DIST);
    d->ref_world = LUA_NOREF;
    if (sh_dist_open(&d->d, &w->comm, dir, &cfg, &err) != SH_OK) return shl_fail(L, &err);
    d->open = 1;
    lua_pushvalue(L, 1);
    d->ref_world = luaL_ref(L, LUA_REGISTRYINDEX);
    return 1;
}

static int d_close(lua_State *L)
{
    dist *d = (dist *)luaL_checkudata(L, 1, SHL_DIST);
    if (d->open) { sh_dist_close(&d->d); d->open = 0; }
    luaL_unref(L, LUA_REGISTRYINDEX, d->ref_world);
    d->ref_world = LUA_NOREF;
    return 0;
}

#define SETI(k, v) SHL_SETI(L, k, v)
#define SETN(k, v) SHL_SETN(L, k, v)

/* d:steps([from]) -> { { name, seconds, sent, received }, ... } of the steps
 * after the first `from` (0: all kept) */
static int d_steps(lua_State *L)
{
    dist *d = check_dist(L, 1);
    int from = (int)luaL_optinteger(L, 2, 0), i, k = 0;
    lua_createtable(L, d->d.n_steps, 0);
    for (i = from < 0 ? 0 : from; i < d->d.n_steps; i++) {
        const sh_dist_step *s = &d->d.steps[i];
        lua_createtable(L, 0, 4);
        lua_pushstring(L, s->name); lua_setfield(L, -2, "name");
        SETN("seconds", s->seconds); SETI("sent", s->sent); SETI("received", s->received);
        lua_rawseti(L, -2, ++k);
    }
    lua_pushinteger(L, d->d.n_steps);
    return 2;
}

/* d:info() -> { documents (this rank's), first (its first id, 1-based), total } */
static int d_info(lua_State *L)
{
    dist *d = check_dist(L, 1);
    lua_createtable(L, 0, 3);
    SETI("documents", d->d.n);
    SETI("first", (uint64_t)d->d.first + 1);
    SETI("total", d->d.firsts[d->d.comm->size]);
    return 1;
}

static int d_dedupe(lua_State *L)
{
    dist *d = check_dist(L, 1);
    sh_dedupe_stats st;
    sh_error err;
    if (sh_dist_dedupe(&d->d, &st, &err) != SH_OK) return shl_fail(L, &err);
    shl_push_dedupe_stats(L, &st);
    return 1;
}

/* d:pairs{ max_df, progress } */
static int d_pairs(lua_State *L)
{
    dist *d = check_dist(L, 1);
    sh_pairs_config c;
    sh_pairs_stats st;
    shl_progress lp;
    sh_error err;
    luaL_checktype(L, 2, LUA_TTABLE);
    memset(&c, 0, sizeof c);
    c.max_df = (uint32_t)shl_opt_num(L, 2, "max_df", 1000);
    luaL_argcheck(L, c.max_df >= 2, 2, "max_df must be at least 2");
    set_progress(L, d, 2, &lp);
    if (sh_dist_pairs(&d->d, &c, &st, &err) != SH_OK) return shl_fail(L, &err);
    shl_push_pairs_stats(L, &st);
    return 1;
}

/* d:decide{ policy, threshold, verify, candidate, progress } -> pairs,
 * candidates, linked (the cluster counts are d:finish's) */
static int d_decide(lua_State *L)
{
    dist *d = check_dist(L, 1);
    sh_decide_config c;
    sh_decide_stats st;
    shl_progress lp;
    sh_error err;
    luaL_checktype(L, 2, LUA_TTABLE);
    shl_read_decide(L, 2, &c);
    set_progress(L, d, 2, &lp);
    c.progress = d->d.progress;
    c.progress_ud = d->d.progress_ud;
    if (sh_dist_decide(&d->d, &c, &st, &err) != SH_OK) return shl_fail(L, &err);
    shl_push_decide_stats(L, &st);
    return 1;
}

/* d:keys{ method = "lsh" | "supershingle", bands, rows, meta, meta_w, check,
 * progress }: the alternatives' phases 2-3 (pairs.bin to decide, or joins) */
static int d_keys(lua_State *L)
{
    static const char *const methods[] = { "supershingle", "lsh", NULL };
    dist *d = check_dist(L, 1);
    sh_alt_config c;
    sh_pairs_stats st;
    shl_progress lp;
    sh_error err;
    int lsh;
    luaL_checktype(L, 2, LUA_TTABLE);
    lsh = shl_opt_enum(L, 2, "method", NULL, methods);
    shl_read_alt(L, 2, &c, &lp);
    d->d.progress = c.decide.progress;
    d->d.progress_ud = c.decide.progress_ud;
    if (sh_dist_keys(&d->d, &c, lsh, &st, &err) != SH_OK) return shl_fail(L, &err);
    shl_push_pairs_stats(L, &st);
    return 1;
}

/* d:finish(outdir) -> the cluster counts and the joins that joined: rank 0's
 * clusters.bin from outdir's docs.bin and links.bin and the joins of d:keys */
static int d_finish(lua_State *L)
{
    dist *d = check_dist(L, 1);
    const char *dir = luaL_checkstring(L, 2);
    sh_decide_stats st;
    size_t joined = 0;
    sh_error err;
    memset(&st, 0, sizeof st);
    if (sh_dist_finish(&d->d, dir, &st, &joined, &err) != SH_OK) return shl_fail(L, &err);
    lua_createtable(L, 0, 5);
    SETI("clusters", st.clusters); SETI("clustered_docs", st.clustered_docs);
    SETI("identical_only_clusters", st.identical_only_clusters); SETI("mixed_clusters", st.mixed_clusters);
    SETI("joined", joined);
    return 1;
}

/* d:collect(root, outdir, { sketches, full, sigs, pairs, links }) */
static int d_collect(lua_State *L)
{
    dist *d = check_dist(L, 1);
    int root = (int)luaL_checkinteger(L, 2);
    const char *out = luaL_optstring(L, 3, NULL);
    unsigned what = 0;
    sh_error err;
    luaL_argcheck(L, root >= 0 && root < d->d.comm->size, 2, "not a rank");
    luaL_argcheck(L, d->d.comm->rank != root || out, 3, "the root needs the output directory");
    if (lua_istable(L, 4)) {
        if (shl_opt_bool(L, 4, "sketches", 0)) what |= SH_COLLECT_SKETCHES;
        if (shl_opt_bool(L, 4, "full", 0)) what |= SH_COLLECT_FULL;
        if (shl_opt_bool(L, 4, "sigs", 0)) what |= SH_COLLECT_SIGS;
        if (shl_opt_bool(L, 4, "pairs", 0)) what |= SH_COLLECT_PAIRS;
        if (shl_opt_bool(L, 4, "links", 0)) what |= SH_COLLECT_LINKS;
    }
    if (sh_dist_collect(&d->d, root, out ? out : "", what, &err) != SH_OK) return shl_fail(L, &err);
    lua_pushboolean(L, 1);
    return 1;
}

/* mpi.candidates(dir, { policy, threshold, candidate }) -> a string of one
 * byte per pair of dir/pairs.bin, "\1" where the pair is a candidate of exact
 * verification (bench/mpi_model.lua replays the fetches of phase 4 with it) */
static int m_candidates(lua_State *L)
{
    const char *dir = luaL_checkstring(L, 1);
    sh_decide_config c;
    sh_recfile pf;
    sh_error err;
    char path[4096];
    unsigned char *flags;
    uint64_t n;
    luaL_checktype(L, 2, LUA_TTABLE);
    memset(&c, 0, sizeof c);
    c.threshold = shl_opt_num(L, 2, "threshold", 0.5);
    c.candidate = shl_opt_num(L, 2, "candidate", c.threshold);
    c.policy = (sh_policy)shl_opt_policy(L, 2, "policy", SH_POLICY_RESEMBLANCE);
    snprintf(path, sizeof path, "%s/pairs.bin", dir);
    if (sh_recfile_open(&pf, path, SH_MAGIC_PAIRS, sizeof(sh_pairrec), 0, &err) != SH_OK) return shl_fail(L, &err);
    n = pf.count;
    sh_recfile_close(&pf);
    flags = (unsigned char *)lua_newuserdata(L, (size_t)n + 1);
    if (sh_candidates(dir, &c, NULL, flags, NULL, NULL, &err) != SH_OK) return shl_fail(L, &err);
    lua_pushlstring(L, (const char *)flags, (size_t)n);
    return 1;
}

/* mpi.line_start(path, offset) -> the offset of the first line at or after offset */
static int m_line_start(lua_State *L)
{
    const char *path = luaL_checkstring(L, 1);
    lua_Number off = luaL_checknumber(L, 2);
    uint64_t pos;
    sh_error err;
    luaL_argcheck(L, off >= 0, 2, "offsets are not negative");
    if (sh_dist_line_start(path, (uint64_t)off, &pos, &err) != SH_OK) return shl_fail(L, &err);
    lua_pushinteger(L, (lua_Integer)pos);
    return 1;
}

/* mpi.count_lines(path, start, stop) -> newlines in bytes [start, stop) */
static int m_count_lines(lua_State *L)
{
    const char *path = luaL_checkstring(L, 1);
    lua_Number a = luaL_checknumber(L, 2), b = luaL_checknumber(L, 3);
    uint64_t n;
    sh_error err;
    luaL_argcheck(L, a >= 0 && b >= a, 3, "need 0 <= start <= stop");
    if (sh_dist_count_lines(path, (uint64_t)a, (uint64_t)b, &n, &err) != SH_OK) return shl_fail(L, &err);
    lua_pushinteger(L, (lua_Integer)n);
    return 1;
}

/* A rank's own directory (mpi.workdir) and its lock. The descriptor of the
 * lock stays open for the process's life: the kernel drops the lock when the
 * process ends, however it ends, so another run can tell a live rank's
 * directory from one a killed rank left behind (mpi.sweep). Process-wide
 * state by necessity: the signal handler below has no other way to find it. */
static char cleanup_dir[4096], cleanup_lock[4200];
static int work_lock_fd = -1;

/* A rank killed by mpirun because another rank failed (SIGTERM, then SIGKILL
 * after a grace period) cannot run Lua to clean up: its handler starts
 * `rm -rf DIR DIR.lock` in a new session (so the job's kill does not reach
 * it) and dies of the signal as it would have. The child keeps a duplicate
 * of the lock's descriptor (dup clears close-on-exec), so the directory stays
 * locked while rm works: a sweep of the next run leaves it to rm instead of
 * racing it. */
static void on_signal(int sig)
{
    if (cleanup_dir[0]) {
        pid_t pid = fork();
        if (pid == 0) {
            setsid();
            if (work_lock_fd >= 0) {
                int held = dup(work_lock_fd);  /* open in rm: the lock lasts until rm is done */
                (void)held;
            }
            execl("/bin/rm", "rm", "-rf", "--", cleanup_dir, cleanup_lock, (char *)NULL);
            _exit(127);
        }
    }
    signal(sig, SIG_DFL);
    raise(sig);
}

/* mpi.remove_on_signal(dir | nil): remove dir (and dir.lock) if SIGTERM,
 * SIGINT or SIGHUP ends this process (nil: no longer) */
static int m_remove_on_signal(lua_State *L)
{
    size_t n = 0;
    const char *dir = luaL_optlstring(L, 1, NULL, &n);
    static int installed;
    luaL_argcheck(L, !dir || (n > 1 && n < sizeof cleanup_dir && dir[0] == '/'), 1, "an absolute path");
    if (!dir) { cleanup_dir[0] = 0; return 0; }
    memcpy(cleanup_dir, dir, n + 1);
    snprintf(cleanup_lock, sizeof cleanup_lock, "%s.lock", dir);
    if (!installed) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_signal;
        sigemptyset(&sa.sa_mask);
        sigaction(SIGTERM, &sa, NULL);
        sigaction(SIGINT, &sa, NULL);
        sigaction(SIGHUP, &sa, NULL);
        installed = 1;
    }
    return 0;
}

/* mpi.workdir(base, prefix) -> a new directory BASE/PREFIX-XXXXXX, or nil, err.
 * Its lock file BASE/PREFIX-XXXXXX.lock is locked (flock) from the moment it
 * has that name: it is made and locked under a hidden name first, then
 * linked to it. (Made and locked in place, a sweep running at the same time
 * on another rank could find it unlocked between the two calls and remove
 * it: the directory made next would then have no lock and outlive its rank.)
 * Lost races with such a sweep are retried with a new name. */
static int m_workdir(lua_State *L)
{
    const char *base = luaL_checkstring(L, 1), *prefix = luaL_checkstring(L, 2);
    size_t n = strlen(base) + strlen(prefix) + 14;
    char *hidden = (char *)lua_newuserdata(L, n + 1), *lock = (char *)lua_newuserdata(L, n + 1);
    char *dir = (char *)lua_newuserdata(L, n + 1);
    int fd = -1, e = 0, attempt;
    for (attempt = 0; attempt < 100; attempt++) {
        size_t len;
        snprintf(hidden, n + 1, "%s/.%s-XXXXXX.lock", base, prefix);
        fd = mkostemps(hidden, 5, O_CLOEXEC);
        if (fd < 0) goto fail;
        len = strlen(hidden);
        /* the visible names: the hidden one without the dot */
        snprintf(lock, n + 1, "%s/%s", base, hidden + strlen(base) + 2);
        memcpy(dir, lock, len - 1 - 5);
        dir[len - 1 - 5] = 0;
        if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
            e = errno;
            close(fd);   /* a sweep holds it and removes it */
            if (e == EWOULDBLOCK) continue;
            errno = e;
            goto fail;
        }
        if (link(hidden, lock) != 0) {
            e = errno;
            close(fd);
            unlink(hidden);
            if (e == EEXIST || e == ENOENT) continue;  /* taken, or swept before the link */
            errno = e;
            goto fail;
        }
        unlink(hidden);
        if (mkdir(dir, 0700) != 0) { e = errno; unlink(lock); close(fd); errno = e; goto fail; }
        if (work_lock_fd >= 0) close(work_lock_fd);  /* an earlier directory's (tests make several) */
        work_lock_fd = fd;
        lua_pushstring(L, dir);
        return 1;
    }
    errno = EAGAIN;
fail:
    e = errno;
    lua_pushnil(L);
    lua_pushfstring(L, "cannot make a directory in %s: %s (set --temp-dir to a writable directory)", base, strerror(e));
    return 2;
}

/* nftw callback: remove what is there; what vanished meanwhile is no error */
static int remove_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    (void)ftw;
    if (flag == FTW_DP || flag == FTW_D || flag == FTW_DNR) (void)rmdir(path);
    else (void)unlink(path);
    return 0;
}

/* PREFIX<digits>-XXXXXX.lock, optionally with a leading dot */
static int rank_lock_name(const char *name, const char *prefix, int *hidden)
{
    size_t pl = strlen(prefix), n;
    *hidden = name[0] == '.';
    name += *hidden;
    n = strlen(name);
    if (strncmp(name, prefix, pl) != 0 || n != pl + strspn(name + pl, "0123456789") + 1 + 6 + 5) return 0;
    if (n == pl + 12 || name[n - 12] != '-') return 0;
    return strcmp(name + n - 5, ".lock") == 0;
}

/* mpi.sweep(base, prefix) -> the number of directories removed: those of
 * BASE/PREFIX<rank>-XXXXXX whose lock nobody holds (their rank was killed
 * outright: SIGKILL, a node lost), with their locks, and hidden locks left
 * half made. Each is removed while this process holds its lock, so ranks
 * sweeping the same directory at once never remove the same one together
 * (two removals of one tree interleaved could each stop at an entry the
 * other took, and leave the rest without a lock: never swept again). */
static int m_sweep(lua_State *L)
{
    const char *base = luaL_checkstring(L, 1), *prefix = luaL_checkstring(L, 2);
    DIR *d = opendir(base);
    struct dirent *e;
    lua_Integer removed = 0;
    luaL_Buffer b;
    if (!d) { lua_pushinteger(L, 0); return 1; }
    while ((e = readdir(d)) != NULL) {
        int hidden, fd;
        struct stat a, c;
        const char *path;
        if (!rank_lock_name(e->d_name, prefix, &hidden)) continue;
        luaL_buffinit(L, &b);
        luaL_addstring(&b, base);
        luaL_addchar(&b, '/');
        luaL_addstring(&b, e->d_name);
        luaL_pushresult(&b);
        path = lua_tostring(L, -1);
        fd = open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
        if (fd >= 0) {
            /* ours now, and still the file of that name (not one a sweep before us unlinked) */
            if (flock(fd, LOCK_EX | LOCK_NB) == 0 && fstat(fd, &a) == 0 && stat(path, &c) == 0 && a.st_ino == c.st_ino &&
                a.st_dev == c.st_dev) {
                if (!hidden) {
                    lua_pushlstring(L, path, strlen(path) - 5);
                    (void)nftw(lua_tostring(L, -1), remove_entry, 16, FTW_DEPTH | FTW_PHYS);
                    lua_pop(L, 1);
                    removed++;
                }
                unlink(path);
            }
            close(fd);
        }
        lua_pop(L, 1);
    }
    closedir(d);
    lua_pushinteger(L, removed);
    return 1;
}

static const luaL_Reg world_methods[] = {
    { "rank", w_rank }, { "size", w_size }, { "local_size", w_local_size }, { "local_rank", w_local_rank },
    { "host", w_host }, { "library", w_library }, { "barrier", w_barrier }, { "allreduce", w_allreduce },
    { "alltoall", w_alltoall }, { "gather", w_gather }, { "bcast", w_bcast }, { "gather_file", w_gather_file },
    { "counters", w_counters }, { "set_timeout", w_set_timeout }, { "abort", w_abort }, { "finalize", w_finalize }, { "dist", w_dist },
    { NULL, NULL }
};

static const luaL_Reg dist_methods[] = {
    { "info", d_info }, { "steps", d_steps }, { "dedupe", d_dedupe }, { "pairs", d_pairs }, { "decide", d_decide }, { "keys", d_keys },
    { "collect", d_collect }, { "finish", d_finish },
    { "close", d_close },
    { NULL, NULL }
};

int luaopen_shingle_mpi(lua_State *L)
{
    /* stay loaded until the process ends: Lua 5.1 and LuaJIT may unload a C
     * module at lua_close before the finalizers of its objects run, and MPI
     * libraries are not made to be unloaded and loaded again */
    Dl_info self;
    if (dladdr((void *)(uintptr_t)luaopen_shingle_mpi, &self) && self.dli_fname)
        (void)dlopen(self.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE);
    shl_open_aux(L);
    shl_newclass(L, SHL_WORLD, world_methods, NULL, NULL);  /* no __gc: MPI ends by finalize or abort, not by collection */
    shl_newclass(L, SHL_DIST, dist_methods, NULL, d_close);
    lua_newtable(L);
    lua_pushcfunction(L, m_world);
    lua_setfield(L, -2, "world");
    lua_pushcfunction(L, m_candidates);
    lua_setfield(L, -2, "candidates");
    lua_pushcfunction(L, m_line_start);
    lua_setfield(L, -2, "line_start");
    lua_pushcfunction(L, m_count_lines);
    lua_setfield(L, -2, "count_lines");
    lua_pushcfunction(L, m_remove_on_signal);
    lua_setfield(L, -2, "remove_on_signal");
    lua_pushcfunction(L, m_workdir);
    lua_setfield(L, -2, "workdir");
    lua_pushcfunction(L, m_sweep);
    lua_setfield(L, -2, "sweep");
    return 1;
}
