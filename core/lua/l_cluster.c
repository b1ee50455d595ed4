/* shingle.core bindings for the clustering pipeline (core/cluster.h): a thread
 * pool that sketches documents in bulk, the phase-1 writer, and the phases as
 * single calls over an output directory. Document ids are 1-based here. */
#include <stdlib.h>
#include <string.h>
#include "lshingle.h"
#include "cluster.h"

#define SHL_POOL "shingle.Pool"
#define SHL_P1 "shingle.Phase1"

typedef struct shl_pool {
    sh_pool *pool;
    sh_pool_config cfg;
    int ref_text, ref_html;   /* keep the shinglers alive */
} shl_pool;

typedef struct shl_p1 {
    sh_p1 p1;
    int open;
} shl_p1;

static int field_int(lua_State *L, int t, const char *k, lua_Integer def)
{
    lua_Integer v;
    lua_getfield(L, t, k);
    v = lua_isnil(L, -1) ? def : luaL_checkinteger(L, -1);
    lua_pop(L, 1);
    return (int)v;
}

static double field_num(lua_State *L, int t, const char *k, double def)
{
    double v;
    lua_getfield(L, t, k);
    v = lua_isnil(L, -1) ? def : luaL_checknumber(L, -1);
    lua_pop(L, 1);
    return v;
}

static int field_bool(lua_State *L, int t, const char *k, int def)
{
    int v;
    lua_getfield(L, t, k);
    v = lua_isnil(L, -1) ? def : lua_toboolean(L, -1);
    lua_pop(L, 1);
    return v;
}

static const char *field_str(lua_State *L, int t, const char *k)
{
    const char *v;
    lua_getfield(L, t, k);
    v = lua_isnil(L, -1) ? NULL : luaL_checkstring(L, -1);
    lua_pop(L, 1); /* the string stays alive in the table */
    return v;
}

/* core.pool(text_shingler, html_shingler, { threads, full, sig_k, skip_binary, max_bytes }) */
static int pool_new(lua_State *L)
{
    shl_shingler *t = (shl_shingler *)luaL_checkudata(L, 1, SHL_SHINGLER);
    shl_shingler *h = (shl_shingler *)luaL_checkudata(L, 2, SHL_SHINGLER);
    shl_pool *u;
    sh_error err;
    luaL_checktype(L, 3, LUA_TTABLE);
    if (memcmp(&t->sp, &h->sp, sizeof t->sp) != 0)
        return luaL_error(L, "the text and HTML shinglers must make the same kind of sketch with the same rules");
    u = (shl_pool *)shl_newuserdata(L, sizeof *u);
    memset(u, 0, sizeof *u);
    u->ref_text = u->ref_html = LUA_NOREF;
    luaL_getmetatable(L, SHL_POOL);
    lua_setmetatable(L, -2);
    u->cfg.text = &t->sh;
    u->cfg.html = &h->sh;
    u->cfg.params = t->sp;
    u->cfg.threads = field_int(L, 3, "threads", 1);
    u->cfg.want_full = field_bool(L, 3, "full", 0);
    u->cfg.sig_k = (uint32_t)field_int(L, 3, "sig_k", 0);
    u->cfg.skip_binary = field_bool(L, 3, "skip_binary", 1);
    u->cfg.max_bytes = (size_t)field_num(L, 3, "max_bytes", 0);
    luaL_argcheck(L, u->cfg.sig_k <= 4096, 3, "sig_k must be 0 to 4096");
    if (sh_pool_new(&u->pool, &u->cfg, &err) != SH_OK) return shl_raise(L, &err);
    lua_pushvalue(L, 1);
    u->ref_text = luaL_ref(L, LUA_REGISTRYINDEX);
    lua_pushvalue(L, 2);
    u->ref_html = luaL_ref(L, LUA_REGISTRYINDEX);
    return 1;
}

static int pool_gc(lua_State *L)
{
    shl_pool *u = (shl_pool *)luaL_checkudata(L, 1, SHL_POOL);
    if (u->pool) { sh_pool_free(u->pool); u->pool = NULL; }
    luaL_unref(L, LUA_REGISTRYINDEX, u->ref_text);
    luaL_unref(L, LUA_REGISTRYINDEX, u->ref_html);
    u->ref_text = u->ref_html = LUA_NOREF;
    return 0;
}

/* Read a Lua list of { text = s | path = p, html = bool } into ins; the strings
 * stay referenced by the list during the call. */
static sh_doc_in *read_docs(lua_State *L, int t, size_t *n_out)
{
    size_t n = shl_rawlen(L, t), i;
    sh_doc_in *ins = (sh_doc_in *)lua_newuserdata(L, (n ? n : 1) * sizeof *ins); /* freed by the GC */
    for (i = 0; i < n; i++) {
        lua_rawgeti(L, t, (int)(i + 1));
        if (lua_type(L, -1) != LUA_TTABLE) luaL_error(L, "document %d is not a table", (int)(i + 1));
        memset(&ins[i], 0, sizeof ins[i]);
        lua_getfield(L, -1, "text");
        if (!lua_isnil(L, -1)) ins[i].data = luaL_checklstring(L, -1, &ins[i].len);
        lua_pop(L, 1);
        ins[i].path = field_str(L, lua_gettop(L), "path");
        ins[i].html = field_bool(L, lua_gettop(L), "html", 0);
        if (!ins[i].data && !ins[i].path) luaL_error(L, "document %d has neither text nor path", (int)(i + 1));
        lua_pop(L, 1);
    }
    *n_out = n;
    return ins;
}

/* pool:sketch(docs) -> list of { sketch = , raw = , canonical = , set = , tokens = } or { error = msg } */
static int pool_sketch(lua_State *L)
{
    shl_pool *u = (shl_pool *)luaL_checkudata(L, 1, SHL_POOL);
    size_t n, i;
    sh_doc_in *ins;
    sh_doc_out *outs;
    sh_error err;
    luaL_checktype(L, 2, LUA_TTABLE);
    ins = read_docs(L, 2, &n);
    outs = (sh_doc_out *)calloc(n ? n : 1, sizeof *outs);
    if (!outs) return luaL_error(L, "out of memory");
    if (sh_pool_run(u->pool, ins, outs, n, &err) != SH_OK) { free(outs); return shl_raise(L, &err); }
    /* lua_createtable may raise on memory errors: the C results would leak
     * then, an accepted cost for an out-of-memory state */
    lua_createtable(L, (int)n, 0);
    for (i = 0; i < n; i++) {
        lua_createtable(L, 0, 5);
        if (outs[i].status == SH_OK) {
            shl_pushsketch(L, outs[i].sketch); lua_setfield(L, -2, "sketch");
            shl_pushu64(L, outs[i].raw_fp); lua_setfield(L, -2, "raw");
            shl_pushu64(L, outs[i].canon_fp); lua_setfield(L, -2, "canonical");
            shl_pushu64(L, outs[i].set_fp); lua_setfield(L, -2, "set");
            lua_pushinteger(L, (lua_Integer)outs[i].n_tokens); lua_setfield(L, -2, "tokens");
        } else {
            lua_pushstring(L, outs[i].err); lua_setfield(L, -2, "error");
        }
        lua_rawseti(L, -2, (int)(i + 1));
    }
    sh_pool_release(outs, n);
    free(outs);
    return 1;
}

/* core.phase1(dir, pool) -> writer */
static int p1_new(lua_State *L)
{
    const char *dir = luaL_checkstring(L, 1);
    shl_pool *pool = (shl_pool *)luaL_checkudata(L, 2, SHL_POOL);
    shl_p1 *u = (shl_p1 *)shl_newuserdata(L, sizeof *u);
    sh_sketch_params id;
    sh_error err;
    memset(u, 0, sizeof *u);
    luaL_getmetatable(L, SHL_P1);
    lua_setmetatable(L, -2);
    id = pool->cfg.params;
    id.option = (uint8_t)pool->cfg.text->c.option;
    id.k = (uint8_t)pool->cfg.text->c.k;
    id.tokens = (uint8_t)pool->cfg.text->c.tokens;
    id.w = (uint32_t)pool->cfg.text->c.w;
    id.seed = pool->cfg.text->c.seed;
    id.poly = pool->cfg.text->c.poly;
    id.idpoly = pool->cfg.text->c.idpoly;
    if (sh_p1_open(&u->p1, dir, &pool->cfg, &id, &err) != SH_OK) return shl_fail(L, &err);
    u->open = 1;
    return 1;
}

/* w:add(pool, docs) -> ok count, { [i] = error message } for skipped documents */
static int p1_add(lua_State *L)
{
    shl_p1 *u = (shl_p1 *)luaL_checkudata(L, 1, SHL_P1);
    shl_pool *pool = (shl_pool *)luaL_checkudata(L, 2, SHL_POOL);
    size_t n, i, ok = 0;
    sh_doc_in *ins;
    sh_doc_out *outs;
    sh_error err;
    sh_status st;
    luaL_checktype(L, 3, LUA_TTABLE);
    luaL_argcheck(L, u->open, 1, "the phase-1 writer is closed");
    if (pool->cfg.want_full != u->p1.want_full || pool->cfg.sig_k != u->p1.sig_k)
        return luaL_error(L, "the pool must be the one the writer was opened with");
    ins = read_docs(L, 3, &n);
    outs = (sh_doc_out *)calloc(n ? n : 1, sizeof *outs);
    if (!outs) return luaL_error(L, "out of memory");
    sh_pool_run(pool->pool, ins, outs, n, &err);
    st = sh_p1_add(&u->p1, outs, n, &err);
    if (st != SH_OK) {
        sh_pool_release(outs, n);
        free(outs);
        sh_p1_abort(&u->p1);
        u->open = 0;
        return shl_fail(L, &err);
    }
    lua_newtable(L);
    for (i = 0; i < n; i++) {
        if (outs[i].status == SH_OK) { ok++; continue; }
        lua_pushstring(L, outs[i].err);
        lua_rawseti(L, -2, (int)(i + 1));
    }
    sh_pool_release(outs, n);
    free(outs);
    lua_pushinteger(L, (lua_Integer)ok);
    lua_insert(L, -2);
    return 2;
}

static int p1_commit(lua_State *L)
{
    shl_p1 *u = (shl_p1 *)luaL_checkudata(L, 1, SHL_P1);
    sh_error err;
    luaL_argcheck(L, u->open, 1, "the phase-1 writer is closed");
    u->open = 0;
    if (sh_p1_commit(&u->p1, &err) != SH_OK) return shl_fail(L, &err);
    lua_pushinteger(L, (lua_Integer)u->p1.n_docs);
    return 1;
}

static int p1_gc(lua_State *L)
{
    shl_p1 *u = (shl_p1 *)luaL_checkudata(L, 1, SHL_P1);
    if (u->open) { sh_p1_abort(&u->p1); u->open = 0; }
    return 0;
}

#define SETI(k, v) (lua_pushinteger(L, (lua_Integer)(v)), lua_setfield(L, -2, k))
#define SETN(k, v) (lua_pushnumber(L, (lua_Number)(v)), lua_setfield(L, -2, k))

static int c_dedupe(lua_State *L)
{
    const char *dir = luaL_checkstring(L, 1);
    sh_dedupe_stats st;
    sh_error err;
    if (sh_dedupe(dir, &st, &err) != SH_OK) return shl_fail(L, &err);
    lua_createtable(L, 0, 6);
    SETI("docs", st.docs); SETI("skipped", st.skipped); SETI("exact", st.exact);
    SETI("lexical", st.lexical); SETI("shingle", st.shingle); SETI("representatives", st.representatives);
    return 1;
}

static void push_pairs_stats(lua_State *L, const sh_pairs_stats *st)
{
    lua_createtable(L, 0, 9);
    SETI("records", st->records); SETI("shingles", st->shingles); SETI("common_dropped", st->common_dropped);
    SETI("pair_records", st->pair_records); SETI("pairs", st->pairs); SETI("disk_peak", st->disk_peak);
    SETN("t_merge", st->t_merge); SETN("t_form", st->t_form); SETN("t_pairmerge", st->t_pairmerge);
}

static void push_decide_stats(lua_State *L, const sh_decide_stats *st)
{
    lua_createtable(L, 0, 7);
    SETI("pairs", st->pairs); SETI("candidates", st->candidates); SETI("linked", st->linked);
    SETI("clusters", st->clusters); SETI("clustered_docs", st->clustered_docs);
    SETI("identical_only_clusters", st->identical_only_clusters); SETI("mixed_clusters", st->mixed_clusters);
}

static int c_pairs(lua_State *L)
{
    const char *dir = luaL_checkstring(L, 1);
    sh_pairs_config c;
    sh_pairs_stats st;
    sh_error err;
    luaL_checktype(L, 2, LUA_TTABLE);
    c.memory = (size_t)field_num(L, 2, "memory", 256.0 * 1024 * 1024);
    c.max_df = (uint32_t)field_int(L, 2, "max_df", 1000);
    c.temp_dir = field_str(L, 2, "temp_dir");
    luaL_argcheck(L, c.max_df >= 2, 2, "max_df must be at least 2");
    if (sh_pairs(dir, &c, &st, &err) != SH_OK) return shl_fail(L, &err);
    push_pairs_stats(L, &st);
    return 1;
}

static void read_decide(lua_State *L, int t, sh_decide_config *c)
{
    static const char *const policies[] = { "resemblance", "containment", "either", "both", NULL };
    const char *p;
    int i;
    c->threshold = field_num(L, t, "threshold", 0.5);
    c->verify = field_bool(L, t, "verify", 0);
    c->candidate = field_num(L, t, "candidate", c->threshold);
    p = field_str(L, t, "policy");
    c->policy = SH_POLICY_RESEMBLANCE;
    if (p) {
        for (i = 0; policies[i] && strcmp(policies[i], p) != 0; i++) {}
        if (!policies[i]) luaL_error(L, "policy '%s'; use resemblance, containment, either or both", p);
        c->policy = (sh_policy)i;
    }
    luaL_argcheck(L, c->threshold >= 0 && c->threshold <= 1, t, "threshold must be between 0 and 1");
}

static int c_decide(lua_State *L)
{
    const char *dir = luaL_checkstring(L, 1);
    sh_decide_config c;
    sh_decide_stats st;
    sh_error err;
    luaL_checktype(L, 2, LUA_TTABLE);
    read_decide(L, 2, &c);
    if (sh_decide(dir, &c, &st, &err) != SH_OK) return shl_fail(L, &err);
    push_decide_stats(L, &st);
    return 1;
}

static void read_alt(lua_State *L, int t, sh_alt_config *c)
{
    memset(c, 0, sizeof *c);
    read_decide(L, t, &c->decide);
    c->memory = (size_t)field_num(L, t, "memory", 256.0 * 1024 * 1024);
    c->temp_dir = field_str(L, t, "temp_dir");
    c->check = field_bool(L, t, "check", 0);
    c->bands = (uint32_t)field_int(L, t, "bands", 9);
    c->rows = (uint32_t)field_int(L, t, "rows", 13);
    c->meta = field_bool(L, t, "meta", 0);
    c->meta_w = (uint32_t)field_int(L, t, "meta_w", 4);
    luaL_argcheck(L, c->meta_w >= 1, t, "meta_w must be at least 1");
}

static int alt_result(lua_State *L, sh_status s, const sh_error *err, const sh_decide_stats *st, const sh_pairs_stats *ps)
{
    if (s != SH_OK) return shl_fail(L, err);
    push_decide_stats(L, st);
    if (ps) { push_pairs_stats(L, ps); return 2; }
    return 1;
}

static int c_supershingle(lua_State *L)
{
    sh_alt_config c;
    sh_decide_stats st;
    sh_pairs_stats ps;
    sh_error err;
    const char *dir = luaL_checkstring(L, 1);
    luaL_checktype(L, 2, LUA_TTABLE);
    read_alt(L, 2, &c);
    return alt_result(L, sh_supershingle(dir, &c, &st, &ps, &err), &err, &st, &ps);
}

static int c_lsh(lua_State *L)
{
    sh_alt_config c;
    sh_decide_stats st;
    sh_pairs_stats ps;
    sh_error err;
    const char *dir = luaL_checkstring(L, 1);
    luaL_checktype(L, 2, LUA_TTABLE);
    read_alt(L, 2, &c);
    return alt_result(L, sh_lsh(dir, &c, &st, &ps, &err), &err, &st, &ps);
}

static int c_greedy(lua_State *L)
{
    sh_alt_config c;
    sh_decide_stats st;
    sh_error err;
    const char *dir = luaL_checkstring(L, 1);
    luaL_checktype(L, 2, LUA_TTABLE);
    read_alt(L, 2, &c);
    return alt_result(L, sh_greedy(dir, &c, &st, &err), &err, &st, NULL);
}

/* core.read_clusters(dir) -> cluster ids, doc ids (parallel lists, 1-based) */
static int c_read_clusters(lua_State *L)
{
    char path[4096];
    sh_recfile f;
    sh_error err;
    uint64_t i;
    snprintf(path, sizeof path, "%s/clusters.bin", luaL_checkstring(L, 1));
    if (sh_recfile_open(&f, path, "SHCLUST\0", 1, &err) != SH_OK) return shl_fail(L, &err);
    lua_createtable(L, (int)f.count, 0);
    lua_createtable(L, (int)f.count, 0);
    for (i = 0; i < f.count; i++) {
        const sh_clusterrec *r = (const sh_clusterrec *)(const void *)(f.records + 8 * i);
        lua_pushinteger(L, (lua_Integer)r->cluster + 1);
        lua_rawseti(L, -3, (int)(i + 1));
        lua_pushinteger(L, (lua_Integer)r->doc + 1);
        lua_rawseti(L, -2, (int)(i + 1));
    }
    sh_recfile_close(&f);
    return 2;
}

/* core.read_links(dir) -> list of { a, b, r, cab, cba [, xr, xcab, xcba] } */
static int c_read_links(lua_State *L)
{
    char path[4096];
    sh_recfile f;
    sh_error err;
    uint64_t i;
    snprintf(path, sizeof path, "%s/links.bin", luaL_checkstring(L, 1));
    if (sh_recfile_open(&f, path, "SHLINKS\0", 1, &err) != SH_OK) return shl_fail(L, &err);
    lua_createtable(L, (int)f.count, 0);
    for (i = 0; i < f.count; i++) {
        sh_linkrec r;
        memcpy(&r, f.records + sizeof r * i, sizeof r);
        lua_createtable(L, 8, 0);
        lua_pushinteger(L, (lua_Integer)r.a + 1); lua_rawseti(L, -2, 1);
        lua_pushinteger(L, (lua_Integer)r.b + 1); lua_rawseti(L, -2, 2);
        lua_pushnumber(L, r.r); lua_rawseti(L, -2, 3);
        lua_pushnumber(L, r.cab); lua_rawseti(L, -2, 4);
        lua_pushnumber(L, r.cba); lua_rawseti(L, -2, 5);
        if (r.xr >= 0) {
            lua_pushnumber(L, r.xr); lua_rawseti(L, -2, 6);
            lua_pushnumber(L, r.xcab); lua_rawseti(L, -2, 7);
            lua_pushnumber(L, r.xcba); lua_rawseti(L, -2, 8);
        }
        lua_rawseti(L, -2, (int)(i + 1));
    }
    sh_recfile_close(&f);
    return 1;
}

/* core.read_docs(dir) -> reps, dups, statuses (parallel lists, 1-based ids) */
static int c_read_docs(lua_State *L)
{
    char path[4096];
    sh_recfile f;
    sh_error err;
    uint64_t i;
    snprintf(path, sizeof path, "%s/docs.bin", luaL_checkstring(L, 1));
    if (sh_recfile_open(&f, path, "SHDOCS\0\0", 1, &err) != SH_OK) return shl_fail(L, &err);
    lua_createtable(L, (int)f.count, 0);
    lua_createtable(L, (int)f.count, 0);
    lua_createtable(L, (int)f.count, 0);
    for (i = 0; i < f.count; i++) {
        sh_docrec r;
        memcpy(&r, f.records + sizeof r * i, sizeof r);
        lua_pushinteger(L, (lua_Integer)r.rep + 1); lua_rawseti(L, -4, (int)(i + 1));
        lua_pushinteger(L, r.dup); lua_rawseti(L, -3, (int)(i + 1));
        lua_pushinteger(L, r.status); lua_rawseti(L, -2, (int)(i + 1));
    }
    sh_recfile_close(&f);
    return 3;
}

static int c_now(lua_State *L)
{
    lua_pushnumber(L, sh_now());
    return 1;
}

void shl_open_cluster(lua_State *L)
{
    static const luaL_Reg pool_m[] = { { "sketch", pool_sketch }, { NULL, NULL } };
    static const luaL_Reg p1_m[] = { { "add", p1_add }, { "commit", p1_commit }, { "abort", p1_gc }, { NULL, NULL } };
    static const luaL_Reg funcs[] = {
        { "pool", pool_new }, { "phase1", p1_new }, { "dedupe", c_dedupe }, { "pairs", c_pairs },
        { "decide", c_decide }, { "supershingle", c_supershingle }, { "lsh", c_lsh }, { "greedy", c_greedy },
        { "read_clusters", c_read_clusters }, { "read_links", c_read_links }, { "read_docs", c_read_docs },
        { "now", c_now }, { NULL, NULL }
    };
    luaL_newmetatable(L, SHL_POOL);
    lua_pushcfunction(L, pool_gc); lua_setfield(L, -2, "__gc");
    lua_newtable(L); shl_setfuncs(L, pool_m); lua_setfield(L, -2, "__index");
    lua_pop(L, 1);
    luaL_newmetatable(L, SHL_P1);
    lua_pushcfunction(L, p1_gc); lua_setfield(L, -2, "__gc");
    lua_newtable(L); shl_setfuncs(L, p1_m); lua_setfield(L, -2, "__index");
    lua_pop(L, 1);
    shl_setfuncs(L, funcs);
}
