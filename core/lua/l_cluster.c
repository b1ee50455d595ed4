/* shingle.core bindings for the clustering pipeline (core/cluster.h): a thread
 * pool that sketches documents in bulk, the phase-1 writer, and the phases as
 * single calls over an output directory. Document ids are 1-based here. */
#include <stdlib.h>
#include <string.h>
#include "lshingle.h"
#include "clock.h"
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

/* w:add_sketches({ { sketch, full, raw, canonical } | { error = msg }, ... })
 * -> ok count: documents sketched in Lua (rule sets with Lua steps, feature
 * extractors), appended like a pool batch. With a signature length set, the
 * min-hashes are taken over the full sketch's values. */
static int p1_add_sketches(lua_State *L)
{
    shl_p1 *u = (shl_p1 *)luaL_checkudata(L, 1, SHL_P1);
    size_t n, i, ok = 0;
    sh_doc_out *outs;
    sh_error err;
    sh_status st;
    luaL_checktype(L, 2, LUA_TTABLE);
    luaL_argcheck(L, u->open, 1, "the phase-1 writer is closed");
    n = shl_rawlen(L, 2);
    outs = (sh_doc_out *)lua_newuserdata(L, (n ? n : 1) * sizeof *outs);
    memset(outs, 0, (n ? n : 1) * sizeof *outs);
    for (i = 0; i < n; i++) {
        sh_doc_out *o = &outs[i];
        lua_rawgeti(L, 2, (int)(i + 1));
        luaL_argcheck(L, lua_istable(L, -1), 2, "each entry is { sketch, full, raw, canonical } or { error = msg }");
        lua_getfield(L, -1, "error");
        if (!lua_isnil(L, -1)) {
            o->status = SH_EFORMAT;
            snprintf(o->err, sizeof o->err, "%s", luaL_checkstring(L, -1));
            lua_pop(L, 2);
            continue;
        }
        lua_pop(L, 1);
        lua_getfield(L, -1, "sketch"); o->sketch = shl_checksketch(L, lua_gettop(L)); lua_pop(L, 1);
        lua_getfield(L, -1, "raw"); o->raw_fp = shl_checku64(L, lua_gettop(L)); lua_pop(L, 1);
        lua_getfield(L, -1, "canonical"); o->canon_fp = shl_checku64(L, lua_gettop(L)); lua_pop(L, 1);
        lua_getfield(L, -1, "full");
        if (!lua_isnil(L, -1)) {
            sh_sketch *f = shl_checksketch(L, lua_gettop(L));
            o->full = f->v;
            o->n_full = f->n;
        }
        lua_pop(L, 1);
        if ((u->p1.want_full || u->p1.sig_k) && !o->full)
            return luaL_error(L, "entry %d needs its full sketch (verification or a min-hash method is on)", (int)(i + 1));
        if (u->p1.sig_k) {
            o->sig = (uint64_t *)lua_newuserdata(L, u->p1.sig_k * 8); /* kept alive on the stack */
            sh_minhash(o->full, o->n_full, o->sketch->p.seed ^ 0x243f6a8885a308d3ULL, u->p1.sig_k, o->sig);
            lua_insert(L, -2);
        }
        o->n_tokens = o->sketch->n_tokens;
        {
            /* the shingle-set fingerprint: any fold works, as long as one run
             * uses one (a run sketches all documents on one path) */
            size_t j;
            uint64_t f = 0x9e3779b97f4a7c15ULL;
            if (u->p1.want_full) /* the full set when it is kept, as the pool does */
                for (j = 0; j < o->n_full; j++) f = sh_mix(f ^ o->full[j]);
            else
                for (j = 0; j < o->sketch->n; j++) f = sh_mix(f ^ o->sketch->v[j]);
            o->set_fp = f;
        }
        lua_pop(L, 1);
        ok++;
    }
    st = sh_p1_add(&u->p1, outs, n, &err);
    if (st != SH_OK) {
        sh_p1_abort(&u->p1);
        u->open = 0;
        return shl_fail(L, &err);
    }
    lua_pushinteger(L, (lua_Integer)ok);
    return 1;
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

/* Progress callbacks into Lua: the function is at a known stack index; an
 * error in it is ignored (it only draws a bar), so it never unwinds through
 * the engine's frames. */
typedef struct lua_progress { lua_State *L; int fn; } lua_progress;

static void progress_lua(void *ud, const char *step, uint64_t done, uint64_t total)
{
    lua_progress *p = (lua_progress *)ud;
    lua_pushvalue(p->L, p->fn);
    lua_pushstring(p->L, step);
    lua_pushnumber(p->L, (lua_Number)done);
    lua_pushnumber(p->L, (lua_Number)total);
    if (lua_pcall(p->L, 3, 0, 0) != 0) lua_pop(p->L, 1);
}

/* The `progress` field of an options table, kept at the top of the stack. */
static int get_progress(lua_State *L, int t, lua_progress *p, sh_progress_fn *fn, void **ud)
{
    lua_getfield(L, t, "progress");
    if (lua_isfunction(L, -1)) {
        p->L = L;
        p->fn = lua_gettop(L);
        *fn = progress_lua;
        *ud = p;
        return 1;
    }
    lua_pop(L, 1);
    *fn = NULL;
    *ud = NULL;
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
    lua_progress lp;
    luaL_checktype(L, 2, LUA_TTABLE);
    get_progress(L, 2, &lp, &c.progress, &c.progress_ud);
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
    c->accept = NULL;
    c->accept_ud = NULL;
    c->progress = NULL;
    c->progress_ud = NULL;
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

/* The trampoline for a Lua predicate: the function is at stack index 3 of
 * the c_decide call; an error in it is kept and ends phase 4. */
typedef struct lua_accept { lua_State *L; int fn; int failed; } lua_accept;

static int accept_lua(void *ud, uint32_t a, uint32_t b, uint32_t shared, const sh_estimate *e, uint32_t na, uint32_t nb)
{
    lua_accept *x = (lua_accept *)ud;
    lua_State *L = x->L;
    int ok;
    lua_pushvalue(L, x->fn);
    lua_createtable(L, 0, 8);
    lua_pushinteger(L, (lua_Integer)a + 1); lua_setfield(L, -2, "a");
    lua_pushinteger(L, (lua_Integer)b + 1); lua_setfield(L, -2, "b");
    lua_pushinteger(L, shared); lua_setfield(L, -2, "shared");
    lua_pushnumber(L, e->resemblance); lua_setfield(L, -2, "resemblance");
    lua_pushnumber(L, e->contain_ab); lua_setfield(L, -2, "containment_ab");
    lua_pushnumber(L, e->contain_ba); lua_setfield(L, -2, "containment_ba");
    lua_pushinteger(L, na); lua_setfield(L, -2, "size_a");
    lua_pushinteger(L, nb); lua_setfield(L, -2, "size_b");
    if (lua_pcall(L, 1, 1, 0) != 0) {
        x->failed = 1; /* the message stays on the stack for c_decide */
        return -1;
    }
    ok = lua_toboolean(L, -1);
    lua_pop(L, 1);
    return ok;
}

/* core.decide(dir, { policy, threshold, candidate, verify } [, predicate]) */
static int c_decide(lua_State *L)
{
    const char *dir = luaL_checkstring(L, 1);
    sh_decide_config c;
    sh_decide_stats st;
    sh_error err;
    lua_accept x;
    lua_progress lp;
    luaL_checktype(L, 2, LUA_TTABLE);
    read_decide(L, 2, &c);
    c.accept = NULL;
    c.accept_ud = NULL;
    if (!lua_isnoneornil(L, 3)) luaL_checktype(L, 3, LUA_TFUNCTION);
    lua_settop(L, 3);
    get_progress(L, 2, &lp, &c.progress, &c.progress_ud);
    if (!lua_isnil(L, 3)) {
        x.L = L;
        x.fn = 3;
        x.failed = 0;
        c.accept = accept_lua;
        c.accept_ud = &x;
    }
    if (sh_decide(dir, &c, &st, &err) != SH_OK) {
        if (c.accept && x.failed) {
            lua_pushnil(L);
            lua_pushfstring(L, "the policy function failed: %s", lua_tostring(L, -2));
            return 2;
        }
        return shl_fail(L, &err);
    }
    push_decide_stats(L, &st);
    return 1;
}

static void read_alt(lua_State *L, int t, sh_alt_config *c, lua_progress *lp)
{
    memset(c, 0, sizeof *c);
    read_decide(L, t, &c->decide);
    get_progress(L, t, lp, &c->decide.progress, &c->decide.progress_ud);
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

/* The alternatives to phases 2-4 share their arguments and results. */
static int run_alt(lua_State *L, int method)
{
    sh_alt_config c;
    lua_progress lp;
    sh_decide_stats st;
    sh_pairs_stats ps;
    sh_error err;
    sh_status s;
    const char *dir = luaL_checkstring(L, 1);
    luaL_checktype(L, 2, LUA_TTABLE);
    read_alt(L, 2, &c, &lp);
    if (method == 0) s = sh_supershingle(dir, &c, &st, &ps, &err);
    else if (method == 1) s = sh_lsh(dir, &c, &st, &ps, &err);
    else return alt_result(L, sh_greedy(dir, &c, &st, &err), &err, &st, NULL);
    return alt_result(L, s, &err, &st, &ps);
}

static int c_supershingle(lua_State *L) { return run_alt(L, 0); }
static int c_lsh(lua_State *L) { return run_alt(L, 1); }
static int c_greedy(lua_State *L) { return run_alt(L, 2); }

/* core.read_clusters(dir) -> cluster ids, doc ids (parallel lists, 1-based) */
static int c_read_clusters(lua_State *L)
{
    char path[4096];
    sh_recfile f;
    sh_error err;
    uint64_t i;
    snprintf(path, sizeof path, "%s/clusters.bin", luaL_checkstring(L, 1));
    if (sh_recfile_open(&f, path, SH_MAGIC_CLUSTERS, sizeof(sh_clusterrec), 1, &err) != SH_OK) return shl_fail(L, &err);
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
    if (sh_recfile_open(&f, path, SH_MAGIC_LINKS, sizeof(sh_linkrec), 1, &err) != SH_OK) return shl_fail(L, &err);
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
    if (sh_recfile_open(&f, path, SH_MAGIC_DOCS, sizeof(sh_docrec), 1, &err) != SH_OK) return shl_fail(L, &err);
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
    static const luaL_Reg p1_m[] = { { "add", p1_add }, { "add_sketches", p1_add_sketches }, { "commit", p1_commit }, { "abort", p1_gc }, { NULL, NULL } };
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
