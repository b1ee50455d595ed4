/* shingle.core bindings for the persistent index (core/index.h). Document and
 * cluster ids are 1-based here, as everywhere in Lua. */
#include <stdlib.h>
#include <string.h>
#include "lshingle.h"
#include "index.h"
#include "policy.h"

#define SHL_INDEX "shingle.Index"
#define SHL_ADDER "shingle.IndexAdder"
#define SHL_AIDS "shingle.IndexAids"

/* aids: a registry reference to the shingle.IndexAids the index uses
 * (ix:filter_use), kept until it is closed */
typedef struct shl_index { sh_index *ix; int aids; } shl_index;
typedef struct shl_aids { sh_index_aids *a; } shl_aids;
typedef struct shl_adder { sh_index_adder *a; int ref; } shl_adder;

static shl_index *check_ix(lua_State *L, int i)
{
    shl_index *u = (shl_index *)luaL_checkudata(L, i, SHL_INDEX);
    luaL_argcheck(L, u->ix != NULL, i, "the index is closed");
    return u;
}

static uint32_t check_id(lua_State *L, int i)
{
    lua_Integer id = luaL_checkinteger(L, i);
    luaL_argcheck(L, id >= 1 && id <= (lua_Integer)UINT32_MAX - 1, i, "ids start at 1");
    return (uint32_t)(id - 1);
}

/* core.index(path [, { readonly, create, map_size }]) -> index, or nil, err, code */
static int ix_open(lua_State *L)
{
    const char *path = luaL_checkstring(L, 1);
    int readonly = 0, create = 1;
    size_t map = 0;
    shl_index *u;
    sh_error err;
    if (lua_istable(L, 2)) {
        readonly = shl_opt_bool(L, 2, "readonly", 0);
        create = shl_opt_bool(L, 2, "create", 1);
        map = (size_t)shl_opt_num(L, 2, "map_size", 0);
    }
    u = (shl_index *)shl_newuserdata(L, sizeof *u);
    u->ix = NULL;
    u->aids = LUA_NOREF;
    luaL_getmetatable(L, SHL_INDEX);
    lua_setmetatable(L, -2);
    if (sh_index_open(&u->ix, path, readonly, create, map, &err) != SH_OK) return shl_fail(L, &err);
    return 1;
}

/* ix:close() (and __gc, __close): idempotent. */
static int ix_close(lua_State *L)
{
    shl_index *u = (shl_index *)luaL_checkudata(L, 1, SHL_INDEX);
    if (u->ix) { sh_index_close(u->ix); u->ix = NULL; }
    luaL_unref(L, LUA_REGISTRYINDEX, u->aids);
    u->aids = LUA_NOREF;
    return 0;
}

/* ix:filter_take() -> aids, or nil, err: waits for the filter and cache
 * (ix:filter_start) and takes them from ix (sh_index_aids_take), for other
 * handles of the index: in this process, or in processes forked from it */
static int ix_filter_take(lua_State *L)
{
    shl_index *u = check_ix(L, 1);
    shl_aids *a = (shl_aids *)shl_newuserdata(L, sizeof *a);
    sh_error err;
    a->a = NULL;
    luaL_getmetatable(L, SHL_AIDS);
    lua_setmetatable(L, -2);
    if (!(a->a = sh_index_aids_take(u->ix, &err))) return shl_fail(L, &err);
    return 1;
}

/* ix:filter_use(aids) -> true, or nil, err: ix's queries use them
 * (sh_index_aids_use); ix keeps them alive until it is closed */
static int ix_filter_use(lua_State *L)
{
    shl_index *u = check_ix(L, 1);
    shl_aids *a = (shl_aids *)luaL_checkudata(L, 2, SHL_AIDS);
    sh_error err;
    luaL_argcheck(L, a->a != NULL, 2, "the aids were freed");
    if (sh_index_aids_use(u->ix, a->a, &err) != SH_OK) return shl_fail(L, &err);
    lua_pushvalue(L, 2);
    u->aids = luaL_ref(L, LUA_REGISTRYINDEX);
    lua_pushboolean(L, 1);
    return 1;
}

/* __gc of aids: no handle uses them any more (each holds a reference) */
static int aids_gc(lua_State *L)
{
    shl_aids *a = (shl_aids *)luaL_checkudata(L, 1, SHL_AIDS);
    sh_index_aids_free(a->a);
    a->a = NULL;
    return 0;
}

/* ix:params() -> { sketch params..., policy, threshold } or nil for an empty index */
static int ix_params(lua_State *L)
{
    shl_index *u = check_ix(L, 1);
    sh_sketch_params p;
    sh_policy pol = SH_POLICY_RESEMBLANCE;
    double thr = 0;
    int present;
    sh_error err;
    sh_sketch e;
    if (sh_index_params(u->ix, &p, &present, &pol, &thr, &err) != SH_OK) return shl_fail(L, &err);
    if (!present) { lua_pushnil(L); return 1; }
    memset(&e, 0, sizeof e);
    e.p = p;
    shl_pushsketch(L, &e);
    lua_getfield(L, -1, "params");
    lua_pushvalue(L, -2);
    lua_call(L, 1, 1);
    lua_pushstring(L, sh_policy_name(pol)); lua_setfield(L, -2, "policy");
    SHL_SETN(L, "threshold", thr);
    return 1;
}

/* ix:begin(sweep, shingler, { policy, threshold, max_df, chunk, counts, check_counts, pairs_sorted, pairs_small, merge, prelook }) -> adder:
 * one transaction (chunk: sh_index_set_chunk, for tests of the chunks' boundaries; counts = false,
 * check_counts, pairs_sorted: sh_index_set_test, for tests of how the pairs are decided; merge =
 * "always" or "never": whether the commit merges delta into the postings, for tests of both layouts;
 * prelook: the postings searched ahead on a thread whatever the batch's size, in small blocks) */
static int ix_begin(lua_State *L)
{
    shl_index *u = check_ix(L, 1);
    const char *sweep = luaL_checkstring(L, 2);
    shl_shingler *sh = shl_checkshingler(L, 3);
    sh_sketch_params id;
    sh_policy pol = SH_POLICY_RESEMBLANCE;
    double thr = 0.5;
    lua_Integer max_df = 0, chunk = 0;
    int test = 0;
    shl_adder *a;
    sh_error err;
    if (lua_istable(L, 4)) {
        pol = (sh_policy)shl_opt_policy(L, 4, "policy", SH_POLICY_RESEMBLANCE);
        thr = shl_opt_num(L, 4, "threshold", 0.5);
        max_df = shl_opt_int(L, 4, "max_df", 0);
        chunk = shl_opt_int(L, 4, "chunk", 0);
        if (!shl_opt_bool(L, 4, "counts", 1)) test |= SH_INDEX_NO_COUNTS;
        if (shl_opt_bool(L, 4, "check_counts", 0)) test |= SH_INDEX_CHECK_COUNTS;
        if (shl_opt_bool(L, 4, "pairs_sorted", 0)) test |= SH_INDEX_PAIRS_SORTED;
        if (shl_opt_bool(L, 4, "pairs_small", 0)) test |= SH_INDEX_PAIRS_SMALL;
        if (shl_opt_bool(L, 4, "prelook", 0)) test |= SH_INDEX_PRELOOK;
        lua_getfield(L, 4, "merge");
        if (!lua_isnil(L, -1)) {
            static const char *const when[] = { "always", "never", NULL };
            test |= luaL_checkoption(L, -1, NULL, when) == 0 ? SH_INDEX_MERGE_ALWAYS : SH_INDEX_MERGE_NEVER;
        }
        lua_pop(L, 1);
    }
    luaL_argcheck(L, chunk >= 0, 4, "chunk must be 0 (the default) or more");
    luaL_argcheck(L, thr >= 0 && thr <= 1, 4, "threshold must be between 0 and 1");
    luaL_argcheck(L, max_df >= 0 && max_df <= (lua_Integer)UINT32_MAX, 4, "max_df must be 0 (no limit) or more");
    sh_sketch_identity(&sh->sh, &sh->sp, 0, &id);
    a = (shl_adder *)shl_newuserdata(L, sizeof *a);
    a->a = NULL;
    a->ref = LUA_NOREF;
    luaL_getmetatable(L, SHL_ADDER);
    lua_setmetatable(L, -2);
    if (sh_index_begin(u->ix, sweep, &id, pol, thr, (uint32_t)max_df, &a->a, &err) != SH_OK) return shl_fail(L, &err);
    if (chunk) sh_index_set_chunk(a->a, (size_t)chunk);
    if (test) sh_index_set_test(a->a, test);
    lua_pushvalue(L, 1);
    a->ref = luaL_ref(L, LUA_REGISTRYINDEX); /* the index outlives its adder */
    return 1;
}

static shl_adder *check_adder(lua_State *L)
{
    shl_adder *a = (shl_adder *)luaL_checkudata(L, 1, SHL_ADDER);
    luaL_argcheck(L, a->a != NULL, 1, "this add was already committed or abandoned");
    return a;
}

static void adder_release(lua_State *L, shl_adder *a)
{
    luaL_unref(L, LUA_REGISTRYINDEX, a->ref);
    a->ref = LUA_NOREF;
    a->a = NULL;
}

/* adder:add({ { url, sketch, raw, canonical }, ... }) -> ids, or nil, err (the add is then abandoned).
 * A document whose URL is already in the sweep is not added: its entry is
 * the id of that document when the content is the same, false when it is
 * not (core/index.h); the commit's stats count them (already, refused). */
static int adder_add(lua_State *L)
{
    shl_adder *a = check_adder(L);
    size_t n, i;
    sh_index_doc *docs;
    uint32_t *ids;
    sh_error err;
    luaL_checktype(L, 2, LUA_TTABLE);
    n = shl_rawlen(L, 2);
    docs = (sh_index_doc *)lua_newuserdata(L, (n ? n : 1) * (sizeof *docs + 4));
    ids = (uint32_t *)(void *)(docs + (n ? n : 1));
    for (i = 0; i < n; i++) {
        lua_rawgeti(L, 2, (int)(i + 1));
        luaL_argcheck(L, lua_istable(L, -1), 2, "each document is a table { url, sketch, raw, canonical }");
        lua_getfield(L, -1, "url"); docs[i].url = luaL_checklstring(L, -1, &docs[i].url_len); lua_pop(L, 1);
        lua_getfield(L, -1, "sketch"); docs[i].sketch = shl_checksketch(L, lua_gettop(L)); lua_pop(L, 1);
        lua_getfield(L, -1, "raw"); docs[i].raw_fp = shl_checku64(L, lua_gettop(L)); lua_pop(L, 1);
        lua_getfield(L, -1, "canonical"); docs[i].canon_fp = shl_checku64(L, lua_gettop(L)); lua_pop(L, 1);
        lua_pop(L, 1); /* the strings and sketches stay referenced by the list */
    }
    if (sh_index_add(a->a, docs, n, ids, &err) != SH_OK) {
        sh_index_abort(a->a);
        adder_release(L, a);
        return shl_fail(L, &err);
    }
    lua_createtable(L, (int)n, 0);
    for (i = 0; i < n; i++) {
        if (ids[i] == SH_INDEX_REFUSED) lua_pushboolean(L, 0);
        else lua_pushinteger(L, (lua_Integer)ids[i] + 1);
        lua_rawseti(L, -2, (int)(i + 1));
    }
    return 1;
}

/* adder:add_run(dir, urls, n) -> count added: the documents 1..n of the
 * finished cluster run in dir that urls (a table by id) names, with the
 * sketches the run made (sh_index_add_run), or nil, err (the add is then
 * abandoned). */
static int adder_add_run(lua_State *L)
{
    shl_adder *a = check_adder(L);
    const char *dir = luaL_checkstring(L, 2);
    lua_Integer n = luaL_checkinteger(L, 4);
    const char **urls;
    size_t *lens, added = 0;
    lua_Integer i;
    sh_error err;
    luaL_checktype(L, 3, LUA_TTABLE);
    luaL_argcheck(L, n >= 0 && n <= (lua_Integer)UINT32_MAX, 4, "a count of documents");
    urls = (const char **)lua_newuserdata(L, (size_t)(n ? n : 1) * (sizeof *urls + sizeof *lens));
    lens = (size_t *)(void *)(urls + (n ? n : 1));
    for (i = 0; i < n; i++) {
        lua_rawgeti(L, 3, (int)(i + 1));
        if (lua_type(L, -1) == LUA_TSTRING) {
            urls[i] = lua_tolstring(L, -1, &lens[i]); /* the table keeps it */
        } else {
            urls[i] = NULL;
            lens[i] = 0;
        }
        lua_pop(L, 1);
    }
    if (sh_index_add_run(a->a, dir, urls, lens, (uint32_t)n, &added, &err) != SH_OK) {
        sh_index_abort(a->a);
        adder_release(L, a);
        return shl_fail(L, &err);
    }
    lua_pushinteger(L, (lua_Integer)added);
    return 1;
}

/* adder:set(key, value): a user value ("user.*") stored with this add */
static int adder_set(lua_State *L)
{
    shl_adder *a = check_adder(L);
    size_t n;
    const char *k = luaL_checkstring(L, 2), *v = luaL_checklstring(L, 3, &n);
    sh_error err;
    luaL_argcheck(L, strncmp(k, "user.", 5) == 0, 2, "keys must start with \"user.\"");
    if (sh_index_meta_put(a->a, k, v, n, &err) != SH_OK) return shl_fail(L, &err);
    lua_pushboolean(L, 1);
    return 1;
}

/* ix:get(key) -> the user value, or nil */
static int ix_get(lua_State *L)
{
    shl_index *u = check_ix(L, 1);
    const char *key = luaL_checkstring(L, 2);
    char **d = (char **)shl_newptrbox(L);
    size_t n;
    sh_error err;
    if (sh_index_meta_get(u->ix, key, d, &n, &err) != SH_OK) return shl_fail(L, &err);
    if (!*d) lua_pushnil(L);
    else lua_pushlstring(L, *d, n);
    shl_box_done(L, -2);
    return 1;
}

static int adder_commit(lua_State *L)
{
    shl_adder *a = check_adder(L);
    sh_index_add_stats st;
    sh_error err;
    sh_status s = sh_index_commit(a->a, &st, &err);
    adder_release(L, a);
    if (s != SH_OK) return shl_fail(L, &err);
    lua_createtable(L, 0, 8);
    SHL_SETI(L, "added", st.added);
    SHL_SETI(L, "identical", st.identical);
    SHL_SETI(L, "candidates", st.candidates);
    SHL_SETI(L, "linked", st.linked);
    SHL_SETI(L, "merges", st.merges);
    SHL_SETI(L, "already", st.already);
    SHL_SETI(L, "refused", st.refused);
    SHL_SETI(L, "from_counts", st.from_counts);
    SHL_SETI(L, "postings_merged", st.postings_merged);
    return 1;
}

static int adder_abort(lua_State *L)
{
    shl_adder *a = (shl_adder *)luaL_checkudata(L, 1, SHL_ADDER);
    if (a->a) { sh_index_abort(a->a); adder_release(L, a); }
    return 0;
}

/* ix:similar(sketch [, { threshold, top, policy, containment, max_df }]) -> hits.
 * policy (resemblance, containment, either, both) decides which documents
 * pass threshold, containment ranks by the larger containment; without a
 * policy, containment also filters by it. */
static int ix_similar(lua_State *L)
{
    shl_index *u = check_ix(L, 1);
    sh_sketch *q = shl_checksketch(L, 2);
    double thr = 0.5;
    lua_Integer top = 10, max_df = 0;
    int by_c = 0, pol = -1;
    sh_index_hit **hb, *h;
    size_t n, i;
    sh_error err;
    if (lua_istable(L, 3)) {
        thr = shl_opt_num(L, 3, "threshold", 0.5);
        top = shl_opt_int(L, 3, "top", 10);
        by_c = shl_opt_bool(L, 3, "containment", 0);
        pol = shl_opt_policy(L, 3, "policy", -1);
        max_df = shl_opt_int(L, 3, "max_df", 0);
    }
    luaL_argcheck(L, top >= 0 && max_df >= 0 && top <= (lua_Integer)UINT32_MAX && max_df <= (lua_Integer)UINT32_MAX, 3,
                  "top and max_df are not negative");
    if (pol < 0) pol = by_c ? SH_POLICY_CONTAINMENT : SH_POLICY_RESEMBLANCE;
    hb = (sh_index_hit **)shl_newptrbox(L);
    if (sh_index_similar(u->ix, q, thr, (sh_policy)pol, by_c, (uint32_t)top, (uint32_t)max_df, hb, &n, &err) != SH_OK)
        return shl_fail(L, &err);
    h = *hb;
    lua_createtable(L, (int)n, 0);
    for (i = 0; i < n; i++) {
        lua_createtable(L, 0, 5);
        SHL_SETI(L, "id", (lua_Integer)h[i].doc + 1);
        SHL_SETN(L, "resemblance", h[i].r);
        SHL_SETN(L, "containment", h[i].cab);
        SHL_SETN(L, "contained", h[i].cba);
        SHL_SETI(L, "shared", h[i].shared);
        lua_rawseti(L, -2, (int)(i + 1));
    }
    shl_box_done(L, -2);
    return 1;
}

static const char *const relations[] = { "original", "exact", "lexical", "shingle" };

/* ix:doc(id) -> { id, url, sweep, cluster, raw, canonical, shingles, tokens, relation }, sketch */
static int ix_doc(lua_State *L)
{
    shl_index *u = check_ix(L, 1);
    uint32_t id = check_id(L, 2);
    sh_ixdoc d;
    sh_sketch **sk = (sh_sketch **)shl_newptrbox(L);
    char url[8192], sweep[256];
    sh_error err;
    if (sh_index_doc_get(u->ix, id, &d, sk, url, sizeof url, sweep, sizeof sweep, &err) != SH_OK) return shl_fail(L, &err);
    lua_createtable(L, 0, 9);
    SHL_SETI(L, "id", (lua_Integer)id + 1);
    lua_pushstring(L, url); lua_setfield(L, -2, "url");
    lua_pushstring(L, sweep); lua_setfield(L, -2, "sweep");
    SHL_SETI(L, "cluster", (lua_Integer)d.cluster + 1);
    shl_pushu64(L, d.raw_fp); lua_setfield(L, -2, "raw");
    shl_pushu64(L, d.canon_fp); lua_setfield(L, -2, "canonical");
    SHL_SETI(L, "shingles", d.n_shingles);
    SHL_SETI(L, "tokens", d.n_tokens);
    lua_pushstring(L, relations[d.dup < 4 ? d.dup : 0]); lua_setfield(L, -2, "relation");
    shl_pushsketch(L, *sk);
    shl_box_done(L, -3);
    return 2;
}

/* The list *ids (held by the box on top) as 1-based ids, or the failure. */
static int push_ids(lua_State *L, sh_status s, const sh_error *err, uint32_t *const *slot, size_t n)
{
    const uint32_t *ids = *slot;
    size_t i;
    if (s != SH_OK) return shl_fail(L, err);
    lua_createtable(L, (int)n, 0);
    for (i = 0; i < n; i++) {
        lua_pushinteger(L, (lua_Integer)ids[i] + 1);
        lua_rawseti(L, -2, (int)(i + 1));
    }
    shl_box_done(L, -2);
    return 1;
}

static int ix_url_docs(lua_State *L)
{
    shl_index *u = check_ix(L, 1);
    size_t len, n;
    const char *url = luaL_checklstring(L, 2, &len);
    uint32_t **ids = (uint32_t **)shl_newptrbox(L);
    sh_error err;
    sh_status s = sh_index_url_docs(u->ix, url, len, ids, &n, &err);
    return push_ids(L, s, &err, ids, n);
}

static int ix_cluster_docs(lua_State *L)
{
    shl_index *u = check_ix(L, 1);
    uint32_t c = check_id(L, 2), **ids = (uint32_t **)shl_newptrbox(L);
    size_t n;
    sh_error err;
    sh_status s = sh_index_cluster_docs(u->ix, c, ids, &n, &err);
    return push_ids(L, s, &err, ids, n);
}

static int ix_sweep_docs(lua_State *L)
{
    shl_index *u = check_ix(L, 1);
    const char *sweep = luaL_checkstring(L, 2);
    uint32_t **ids = (uint32_t **)shl_newptrbox(L);
    size_t n;
    sh_error err;
    sh_status s = sh_index_sweep_docs(u->ix, sweep, ids, &n, &err);
    return push_ids(L, s, &err, ids, n);
}

/* ix:sweeps() -> { { name, documents }, ... } in name order */
static int ix_sweeps(lua_State *L)
{
    shl_index *u = check_ix(L, 1);
    char **names = (char **)shl_newptrbox(L);
    uint32_t **counts = (uint32_t **)shl_newptrbox(L);
    size_t n, i, off = 0;
    sh_error err;
    if (sh_index_sweeps(u->ix, names, counts, &n, &err) != SH_OK) return shl_fail(L, &err);
    lua_createtable(L, (int)n, 0);
    for (i = 0; i < n; i++) {
        lua_createtable(L, 0, 2);
        lua_pushstring(L, *names + off); lua_setfield(L, -2, "name");
        SHL_SETI(L, "documents", (*counts)[i]);
        off += strlen(*names + off) + 1;
        lua_rawseti(L, -2, (int)(i + 1));
    }
    shl_box_done(L, -2);
    shl_box_done(L, -3);
    return 1;
}

/* ix:read_begin() -> true, or nil, err: the queries until ix:read_end() read one snapshot */
static int ix_read_begin(lua_State *L)
{
    shl_index *u = check_ix(L, 1);
    sh_error err;
    if (sh_index_read_begin(u->ix, &err) != SH_OK) return shl_fail(L, &err);
    lua_pushboolean(L, 1);
    return 1;
}

static int ix_read_end(lua_State *L)
{
    sh_index_read_end(check_ix(L, 1)->ix);
    return 0;
}

/* ix:handle() -> lightuserdata: the engine's index, which is also the C API's
 * shingle_index (core/include/shingle.h), for shingle.ffi to share this
 * LMDB environment instead of opening it a second time in the process. */
static int ix_handle(lua_State *L)
{
    lua_pushlightuserdata(L, check_ix(L, 1)->ix);
    return 1;
}

static int ix_count(lua_State *L)
{
    shl_index *u = check_ix(L, 1);
    uint32_t n;
    sh_error err;
    if (sh_index_count(u->ix, &n, &err) != SH_OK) return shl_fail(L, &err);
    lua_pushinteger(L, n);
    return 1;
}

/* ix:merge() -> { postings, fingerprints }, or nil, err: the delta tables
 * merged into their tables now (sh_index_merge) */
static int ix_merge(lua_State *L)
{
    shl_index *u = check_ix(L, 1);
    uint64_t p, f;
    sh_error err;
    if (sh_index_merge(u->ix, &p, &f, &err) != SH_OK) return shl_fail(L, &err);
    lua_createtable(L, 0, 2);
    SHL_SETI(L, "postings", p);
    SHL_SETI(L, "fingerprints", f);
    return 1;
}

/* ix:filter_start([cache_bytes]) -> true, or nil, err: build the postings
 * filter, and the postings cache when it fits in cache_bytes, in a thread of
 * their own (sh_index_filter_start) */
static int ix_filter_start(lua_State *L)
{
    sh_error err;
    lua_Integer cache = luaL_optinteger(L, 2, 0);
    if (cache < 0) return luaL_argerror(L, 2, "the cache's bytes must be >= 0");
    if (sh_index_filter_start(check_ix(L, 1)->ix, (size_t)cache, &err) != SH_OK) return shl_fail(L, &err);
    lua_pushboolean(L, 1);
    return 1;
}

/* ix:filter() -> { started, ready, bytes, capacity, covers, tested, skipped, error,
 *   cache = { bytes, keys, covers, found, looked_up, note } (when one was asked for) } */
static int ix_filter(lua_State *L)
{
    sh_index_filter_stats st;
    sh_index_filter_info(check_ix(L, 1)->ix, &st);
    lua_createtable(L, 0, 8);
    lua_pushboolean(L, st.started);
    lua_setfield(L, -2, "started");
    lua_pushboolean(L, st.ready);
    lua_setfield(L, -2, "ready");
    SHL_SETI(L, "bytes", st.bytes);
    SHL_SETI(L, "capacity", st.capacity);
    SHL_SETI(L, "covers", st.covers);
    SHL_SETI(L, "tested", st.tested);
    SHL_SETI(L, "skipped", st.skipped);
    if (st.error) {
        lua_pushstring(L, st.error);
        lua_setfield(L, -2, "error");
    }
    if (st.cache_keys || st.cache_note) {
        lua_createtable(L, 0, 6);
        SHL_SETI(L, "bytes", st.cache_bytes);
        SHL_SETI(L, "keys", st.cache_keys);
        SHL_SETI(L, "covers", st.cache_covers);
        SHL_SETI(L, "found", st.cache_found);
        SHL_SETI(L, "looked_up", st.cache_looked_up);
        if (st.cache_note) {
            lua_pushstring(L, st.cache_note);
            lua_setfield(L, -2, "note");
        }
        lua_pushboolean(L, st.shared);
        lua_setfield(L, -2, "shared");
        lua_setfield(L, -2, "cache");
    }
    return 1;
}

void shl_open_index(lua_State *L)
{
    static const luaL_Reg ixm[] = {
        { "params", ix_params }, { "begin", ix_begin }, { "similar", ix_similar }, { "doc", ix_doc },
        { "url_docs", ix_url_docs }, { "cluster_docs", ix_cluster_docs }, { "sweep_docs", ix_sweep_docs },
        { "sweeps", ix_sweeps }, { "count", ix_count }, { "merge", ix_merge }, { "filter_start", ix_filter_start }, { "filter", ix_filter },
        { "filter_take", ix_filter_take }, { "filter_use", ix_filter_use },
        { "read_begin", ix_read_begin }, { "read_end", ix_read_end }, { "handle", ix_handle }, { "get", ix_get }, { "close", ix_close }, { NULL, NULL }
    };
    static const luaL_Reg am[] = { { "add", adder_add }, { "add_run", adder_add_run }, { "set", adder_set }, { "commit", adder_commit }, { "abort", adder_abort }, { NULL, NULL } };
    static const luaL_Reg funcs[] = { { "index", ix_open }, { NULL, NULL } };
    shl_newclass(L, SHL_INDEX, ixm, NULL, ix_close);
    shl_newclass(L, SHL_ADDER, am, NULL, adder_abort);
    {
        /* no close: freed once no handle holds them (each holds a reference) */
        static const luaL_Reg aidmeta[] = { { "__gc", aids_gc }, { NULL, NULL } };
        shl_newclass(L, SHL_AIDS, NULL, aidmeta, NULL);
    }
    shl_setfuncs(L, funcs);
}
