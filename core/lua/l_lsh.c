/* shingle.core bindings for the in-memory LSH index (core/lsh.h). The engine
 * knows documents by small integer ids; this binding maps them to the
 * user's keys (any string or number) with two Lua tables held in the
 * registry: id + 1 -> key, key -> id + 1. */
#include <stdlib.h>
#include <string.h>
#include "lshingle.h"
#include "lsh.h"
#include "sketchfile.h"

#define SHL_LSH "shingle.LSHIndex"

typedef struct shl_lsh {
    sh_lsh *ix;
    int keys;   /* registry ref: id + 1 -> key */
    int ids;    /* registry ref: key -> id + 1 */
} shl_lsh;

static shl_lsh *check(lua_State *L)
{
    shl_lsh *u = (shl_lsh *)luaL_checkudata(L, 1, SHL_LSH);
    luaL_argcheck(L, u->ix != NULL, 1, "the LSH index is closed");
    return u;
}

/* core.lsh_index(params_sketch, { bands, rows, cbands, seed }) -> index */
static int l_new(lua_State *L)
{
    sh_sketch *p = shl_checksketch(L, 1);
    sh_lsh_config c;
    shl_lsh *u;
    sh_error err;
    lua_Integer b, r, cb;
    luaL_checktype(L, 2, LUA_TTABLE);
    b = shl_opt_int(L, 2, "bands", 0);
    r = shl_opt_int(L, 2, "rows", 0);
    cb = shl_opt_int(L, 2, "cbands", 0);
    luaL_argcheck(L, b >= 1 && b <= 4096 && r >= 1 && r <= 4096, 2, "bands and rows must be whole numbers from 1 to 4096");
    luaL_argcheck(L, cb >= 0 && cb <= 4096, 2, "cbands must be a whole number from 0 to 4096");
    memset(&c, 0, sizeof c);
    c.bands = (uint32_t)b;
    c.rows = (uint32_t)r;
    c.cbands = (uint32_t)cb;
    c.seed = shl_opt_u64(L, 2, "seed", 0x4c5348u);
    u = (shl_lsh *)shl_newhandle(L, sizeof *u, SHL_LSH);
    u->keys = u->ids = LUA_NOREF;
    lua_newtable(L);
    u->keys = luaL_ref(L, LUA_REGISTRYINDEX);
    lua_newtable(L);
    u->ids = luaL_ref(L, LUA_REGISTRYINDEX);
    if (sh_lsh_new(&c, p, &u->ix, &err) != SH_OK) return shl_raise(L, &err);
    return 1;
}

static int l_gc(lua_State *L)
{
    shl_lsh *u = (shl_lsh *)luaL_checkudata(L, 1, SHL_LSH);
    sh_lsh_free(u->ix);
    u->ix = NULL;
    luaL_unref(L, LUA_REGISTRYINDEX, u->keys);
    luaL_unref(L, LUA_REGISTRYINDEX, u->ids);
    u->keys = u->ids = LUA_NOREF;
    return 0;
}

/* The id of the key at index k, or -1. */
static long long id_of(lua_State *L, shl_lsh *u, int k)
{
    long long id = -1;
    lua_rawgeti(L, LUA_REGISTRYINDEX, u->ids);
    lua_pushvalue(L, k);
    lua_rawget(L, -2);
    if (!lua_isnil(L, -1)) id = (long long)lua_tointeger(L, -1) - 1;
    lua_pop(L, 2);
    return id;
}

static void forget(lua_State *L, shl_lsh *u, int k, long long id)
{
    sh_lsh_remove(u->ix, (uint32_t)id);
    lua_rawgeti(L, LUA_REGISTRYINDEX, u->ids);
    lua_pushvalue(L, k);
    lua_pushnil(L);
    lua_rawset(L, -3);
    lua_pop(L, 1);
    lua_rawgeti(L, LUA_REGISTRYINDEX, u->keys);
    lua_pushnil(L);
    lua_rawseti(L, -2, (int)(id + 1));
    lua_pop(L, 1);
}

static void check_key(lua_State *L, int k)
{
    int t = lua_type(L, k);
    luaL_argcheck(L, t == LUA_TSTRING || t == LUA_TNUMBER, k, "a key is a string or a number");
    if (t == LUA_TNUMBER) {
        lua_Number d = lua_tonumber(L, k);
        luaL_argcheck(L, d == d, k, "a key cannot be NaN");
    }
}

/* Insert s under the key at index k (replacing what the key had): SH_OK or the engine's status. */
static sh_status put(lua_State *L, shl_lsh *u, int k, const sh_sketch *s, sh_error *err)
{
    uint32_t id;
    long long old = id_of(L, u, k);
    sh_status st;
    if (old >= 0) forget(L, u, k, old);
    if ((st = sh_lsh_insert(u->ix, s, &id, err)) != SH_OK) return st;
    lua_rawgeti(L, LUA_REGISTRYINDEX, u->ids);
    lua_pushvalue(L, k);
    lua_pushinteger(L, (lua_Integer)id + 1);
    lua_rawset(L, -3);
    lua_pop(L, 1);
    lua_rawgeti(L, LUA_REGISTRYINDEX, u->keys);
    lua_pushvalue(L, k);
    lua_rawseti(L, -2, (int)id + 1);
    lua_pop(L, 1);
    return SH_OK;
}

/* ix:insert(key, sketch): raises for a sketch that cannot be compared with
 * the index's (naming the parameter) */
static int l_insert(lua_State *L)
{
    shl_lsh *u = check(L);
    sh_sketch *s = shl_checksketch(L, 3);
    sh_error err;
    check_key(L, 2);
    if (put(L, u, 2, s, &err) != SH_OK) return shl_raise(L, &err);
    return 0;
}

/* ix:insert_file(reader) -> records inserted, or nil, err, code. Records
 * without a key get their record number. */
static int l_insert_file(lua_State *L)
{
    shl_lsh *u = check(L);
    sh_skfile_reader *r = shl_checkskreader(L, 2);
    lua_Integer n = 0;
    for (;;) {
        sh_skkey k;
        const sh_sketch *s;
        sh_error err;
        if (sh_skfile_next(r, &k, &s, &err) != SH_OK) return shl_fail(L, &err);
        if (!s) break;
        if (k.type == SH_SKKEY_NONE) lua_pushinteger(L, (lua_Integer)sh_skfile_read_count(r));
        else shl_pushkey(L, &k);
        if (lua_type(L, -1) == LUA_TNUMBER && lua_tonumber(L, -1) != lua_tonumber(L, -1))
            return luaL_error(L, "record %d has a NaN key", (int)sh_skfile_read_count(r));
        if (put(L, u, lua_gettop(L), s, &err) != SH_OK) return shl_fail(L, &err);
        lua_pop(L, 1);
        n++;
    }
    lua_pushinteger(L, n);
    return 1;
}

static int l_remove(lua_State *L)
{
    shl_lsh *u = check(L);
    long long id;
    check_key(L, 2);
    id = id_of(L, u, 2);
    if (id >= 0) forget(L, u, 2, id);
    lua_pushboolean(L, id >= 0);
    return 1;
}

static int l_get(lua_State *L)
{
    shl_lsh *u = check(L);
    long long id;
    check_key(L, 2);
    id = id_of(L, u, 2);
    if (id < 0) return 0;
    shl_pushsketch(L, sh_lsh_get(u->ix, (uint32_t)id));
    return 1;
}

static int l_count(lua_State *L)
{
    lua_pushinteger(L, (lua_Integer)sh_lsh_count(check(L)->ix));
    return 1;
}

/* ix:query(sketch, kind, t, max) -> { { key, resemblance, containment,
 * contained }, ... } best first, and the number of candidates estimated.
 * kind: "resemblance", "containing" (documents the query is contained in),
 * "contained" (documents contained in the query); t < 0: every candidate. */
static int l_query(lua_State *L)
{
    static const char *const kinds[] = { "resemblance", "containing", "contained", NULL };
    shl_lsh *u = check(L);
    sh_sketch *q = shl_checksketch(L, 2);
    int kind = luaL_checkoption(L, 3, "resemblance", kinds);
    lua_Number t = luaL_optnumber(L, 4, -1);
    lua_Integer max = luaL_optinteger(L, 5, 0);
    sh_lsh_hit *hits, **hb;
    size_t n, cand, i;
    sh_error err;
    luaL_argcheck(L, max >= 0, 5, "the most hits must be 0 (all) or more");
    /* the hits live in a box while the result is built: a failed Lua
     * allocation there loses nothing (found by alloc_lua under LSan) */
    hb = (sh_lsh_hit **)shl_newptrbox(L);
    if (sh_lsh_query(u->ix, q, (sh_lsh_query_kind)kind, t, (size_t)max, &hits, &n, &cand, &err) != SH_OK)
        return shl_raise(L, &err);
    *hb = hits;
    lua_createtable(L, (int)n, 0);
    lua_rawgeti(L, LUA_REGISTRYINDEX, u->keys);
    for (i = 0; i < n; i++) {
        lua_createtable(L, 0, 4);
        lua_rawgeti(L, -2, (int)hits[i].id + 1);
        lua_setfield(L, -2, "key");
        lua_pushnumber(L, hits[i].resemblance);
        lua_setfield(L, -2, "resemblance");
        lua_pushnumber(L, hits[i].contain_qd);
        lua_setfield(L, -2, "containment");
        lua_pushnumber(L, hits[i].contain_dq);
        lua_setfield(L, -2, "contained");
        lua_rawseti(L, -3, (int)(i + 1));
    }
    lua_pop(L, 1);
    shl_box_done(L, -2);
    lua_pushinteger(L, (lua_Integer)cand);
    return 2;
}

/* ix:save(writer): every key and sketch, in id order, into a sketch file
 * writer (the caller commits it) -> count, or nil, err, code */
static int l_save(lua_State *L)
{
    shl_lsh *u = check(L);
    sh_skfile_writer *w = shl_checkskwriter(L, 2);
    uint32_t id, lim = sh_lsh_id_limit(u->ix);
    lua_Integer n = 0;
    lua_rawgeti(L, LUA_REGISTRYINDEX, u->keys);
    for (id = 0; id < lim; id++) {
        const sh_sketch *s = sh_lsh_get(u->ix, id);
        sh_skkey k;
        sh_error err;
        if (!s) continue;
        lua_rawgeti(L, -1, (int)id + 1);
        shl_tokey(L, lua_gettop(L), &k);
        if (sh_skfile_put(w, &k, s, &err) != SH_OK) return shl_fail(L, &err);
        lua_pop(L, 1);
        n++;
    }
    lua_pushinteger(L, n);
    return 1;
}

/* ix:keys() -> a list of every key, in id order */
static int l_keys(lua_State *L)
{
    shl_lsh *u = check(L);
    uint32_t id, lim = sh_lsh_id_limit(u->ix);
    int k = 0;
    lua_newtable(L);
    lua_rawgeti(L, LUA_REGISTRYINDEX, u->keys);
    for (id = 0; id < lim; id++) {
        if (!sh_lsh_get(u->ix, id)) continue;
        lua_rawgeti(L, -1, (int)id + 1);
        lua_rawseti(L, -3, ++k);
    }
    lua_pop(L, 1);
    return 1;
}

/* core.lsh_shape(t, budget, wfp, wfn) -> bands, rows */
static int l_shape(lua_State *L)
{
    lua_Number t = luaL_checknumber(L, 1);
    lua_Integer budget = luaL_checkinteger(L, 2);
    lua_Number wfp = luaL_optnumber(L, 3, 0.5), wfn = luaL_optnumber(L, 4, 0.5);
    uint32_t b, r;
    luaL_argcheck(L, t > 0 && t < 1, 1, "the threshold must lie between 0 and 1");
    luaL_argcheck(L, budget >= 1 && budget <= 4096, 2, "the budget (bands x rows) must be 1 to 4096");
    luaL_argcheck(L, wfp >= 0 && wfn >= 0 && wfp + wfn > 0, 3, "the weights must be non-negative, not both 0");
    sh_lsh_shape(t, (uint32_t)budget, wfp, wfn, &b, &r);
    lua_pushinteger(L, (lua_Integer)b);
    lua_pushinteger(L, (lua_Integer)r);
    return 2;
}

/* core.lsh_probability(j, b, r); core.lsh_areas(t, b, r) -> fp, fn */
static int l_probability(lua_State *L)
{
    lua_pushnumber(L, sh_lsh_probability(luaL_checknumber(L, 1), (uint32_t)luaL_checkinteger(L, 2),
                                         (uint32_t)luaL_checkinteger(L, 3)));
    return 1;
}

static int l_areas(lua_State *L)
{
    double fp, fn;
    sh_lsh_areas(luaL_checknumber(L, 1), (uint32_t)luaL_checkinteger(L, 2), (uint32_t)luaL_checkinteger(L, 3), &fp, &fn);
    lua_pushnumber(L, fp);
    lua_pushnumber(L, fn);
    return 2;
}

void shl_open_lsh(lua_State *L)
{
    static const luaL_Reg m[] = { { "insert", l_insert }, { "insert_file", l_insert_file }, { "remove", l_remove },
                                  { "get", l_get }, { "count", l_count }, { "query", l_query }, { "keys", l_keys },
                                  { "save", l_save }, { NULL, NULL } };
    static const luaL_Reg funcs[] = { { "lsh_index", l_new }, { "lsh_shape", l_shape }, { "lsh_probability", l_probability },
                                      { "lsh_areas", l_areas }, { NULL, NULL } };
    shl_newclass(L, SHL_LSH, m, NULL, l_gc);
    shl_setfuncs(L, funcs);
}
