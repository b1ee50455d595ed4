/* shingle.Sketch: a sketch as a Lua value (values inline in the userdata). */
#include <stdlib.h>
#include <string.h>
#include "lshingle.h"

sh_sketch *shl_checksketch(lua_State *L, int i)
{
    return (sh_sketch *)luaL_checkudata(L, i, SHL_SKETCH);
}

sh_sketch *shl_newsketch(lua_State *L, size_t n)
{
    sh_sketch *u = (sh_sketch *)shl_newuserdata(L, sizeof *u + n * sizeof(uint64_t));
    memset(u, 0, sizeof *u);
    u->n = n;
    luaL_getmetatable(L, SHL_SKETCH);
    lua_setmetatable(L, -2);
    return u;
}

void shl_pushsketch(lua_State *L, const sh_sketch *a)
{
    sh_sketch *u = shl_newsketch(L, a->n);
    memcpy(u, a, sizeof *a + a->n * sizeof(uint64_t));
}

static const char *kind_names[] = { "?", "min", "mod", "minmod", "class", "full" };

/* Raise err, a failed comparison of a and b. When the rules differ, the
 * message says which of their parts differ (fold, invalid, the rule set or
 * the extractor with its parameters) rather than two fingerprints: the
 * function shingle.options keeps in the registry under "shingle.rules_diff"
 * knows the description of every rules fingerprint it made. */
static int compare_failed(lua_State *L, const sh_sketch *a, const sh_sketch *b, const sh_error *err)
{
    if (err->code == SH_EMISMATCH && a->p.rules != b->p.rules && a->p.w == b->p.w && a->p.k == b->p.k &&
        a->p.seed == b->p.seed && a->p.poly == b->p.poly && a->p.kind == b->p.kind) {
        lua_getfield(L, LUA_REGISTRYINDEX, "shingle.rules_diff");
        if (lua_isfunction(L, -1)) {
            shl_pushu64(L, a->p.rules);
            shl_pushu64(L, b->p.rules);
            if (lua_pcall(L, 2, 1, 0) == 0 && lua_isstring(L, -1)) return lua_error(L);
        }
        lua_pop(L, 1);
    }
    return shl_raise(L, err);
}

/* a:estimate(b) -> { resemblance, containment (a in b), contained (b in a), both, sample } */
static int sk_estimate(lua_State *L)
{
    sh_sketch *a = shl_checksketch(L, 1), *b = shl_checksketch(L, 2);
    sh_estimate e;
    sh_error err;
    if (sh_sketch_estimate(a, b, &e, &err) != SH_OK) return compare_failed(L, a, b, &err);
    lua_createtable(L, 0, 5);
    lua_pushnumber(L, e.resemblance); lua_setfield(L, -2, "resemblance");
    lua_pushnumber(L, e.contain_ab); lua_setfield(L, -2, "containment");
    lua_pushnumber(L, e.contain_ba); lua_setfield(L, -2, "contained");
    lua_pushinteger(L, (lua_Integer)e.both); lua_setfield(L, -2, "both");
    lua_pushinteger(L, (lua_Integer)e.sample); lua_setfield(L, -2, "sample");
    return 1;
}

static int sk_resemblance(lua_State *L)
{
    sh_sketch *a = shl_checksketch(L, 1), *b = shl_checksketch(L, 2);
    sh_estimate e;
    sh_error err;
    if (sh_sketch_estimate(a, b, &e, &err) != SH_OK) return compare_failed(L, a, b, &err);
    lua_pushnumber(L, e.resemblance);
    return 1;
}

/* a:containment(b): the estimated containment of a in b */
static int sk_containment(lua_State *L)
{
    sh_sketch *a = shl_checksketch(L, 1), *b = shl_checksketch(L, 2);
    sh_estimate e;
    sh_error err;
    if (sh_sketch_estimate(a, b, &e, &err) != SH_OK) return compare_failed(L, a, b, &err);
    lua_pushnumber(L, e.contain_ab);
    return 1;
}

static int sk_serialize(lua_State *L)
{
    sh_sketch *a = shl_checksketch(L, 1);
    size_t n = sh_sketch_serialized_size(a);
    luaL_Buffer b;
    unsigned char *p;
#if LUA_VERSION_NUM >= 502
    p = (unsigned char *)luaL_buffinitsize(L, &b, n);
    sh_sketch_serialize(a, p);
    luaL_pushresultsize(&b, n);
#else
    p = (unsigned char *)lua_newuserdata(L, n);   /* scratch the collector owns */
    sh_sketch_serialize(a, p);
    lua_pushlstring(L, (const char *)p, n);
    (void)b;
#endif
    return 1;
}

static int sk_values(lua_State *L)
{
    sh_sketch *a = shl_checksketch(L, 1);
    size_t i;
    lua_createtable(L, (int)a->n, 0);
    for (i = 0; i < a->n; i++) {
        shl_pushu64(L, a->v[i]);
        lua_rawseti(L, -2, (int)(i + 1));
    }
    return 1;
}

static int sk_params(lua_State *L)
{
    sh_sketch *a = shl_checksketch(L, 1);
    lua_createtable(L, 0, 14);
    lua_pushstring(L, kind_names[a->p.kind]); lua_setfield(L, -2, "kind");
    lua_pushstring(L, a->p.option ? "A" : "B"); lua_setfield(L, -2, "option");
    lua_pushinteger(L, a->p.k); lua_setfield(L, -2, "k");
    lua_pushstring(L, a->p.tokens ? "pad8" : "rabin"); lua_setfield(L, -2, "tokens");
    lua_pushinteger(L, a->p.w); lua_setfield(L, -2, "w");
    if (a->p.s) { lua_pushinteger(L, a->p.s); lua_setfield(L, -2, "s"); }
    if (a->p.m) { lua_pushinteger(L, (lua_Integer)a->p.m); lua_setfield(L, -2, "m"); }
    if (a->p.kind == SH_SKETCH_MOD) { lua_pushinteger(L, a->p.floor); lua_setfield(L, -2, "floor"); }
    if (a->p.kind == SH_SKETCH_CLASS) { lua_pushinteger(L, a->p.cls); lua_setfield(L, -2, "class"); }
    shl_pushu64(L, a->p.seed); lua_setfield(L, -2, "seed");
    shl_pushu64(L, a->p.poly); lua_setfield(L, -2, "poly");
    shl_pushu64(L, a->p.idpoly); lua_setfield(L, -2, "idpoly");
    shl_pushu64(L, a->p.rules); lua_setfield(L, -2, "rules");
    lua_pushinteger(L, (lua_Integer)a->n_shingles); lua_setfield(L, -2, "shingles");
    lua_pushinteger(L, (lua_Integer)a->n_tokens); lua_setfield(L, -2, "tokens_count");
    return 1;
}

static int sk_shingles(lua_State *L)
{
    lua_pushinteger(L, (lua_Integer)shl_checksketch(L, 1)->n_shingles);
    return 1;
}

static int sk_len(lua_State *L)
{
    lua_pushinteger(L, (lua_Integer)shl_checksketch(L, 1)->n);
    return 1;
}

/* a:reduce(j): a size-class sketch V_i reduced to V_j, j >= i (section 4.1) */
static int sk_reduce(lua_State *L)
{
    sh_sketch *a = shl_checksketch(L, 1), **r;
    lua_Integer j = luaL_checkinteger(L, 2);
    sh_error err;
    luaL_argcheck(L, j >= 0 && j <= 63, 2, "class must be 0 to 63");
    r = (sh_sketch **)shl_newptrbox(L);
    if (sh_sketch_reduce(a, (uint32_t)j, r, &err) != SH_OK) return shl_raise(L, &err);
    shl_pushsketch(L, *r);
    shl_box_done(L, -2);
    return 1;
}

static int sk_tostring(lua_State *L)
{
    sh_sketch *a = shl_checksketch(L, 1);
    lua_pushfstring(L, "shingle.Sketch(%s, %d values of %d shingles)", kind_names[a->p.kind],
                    (int)a->n, (int)a->n_shingles);
    return 1;
}

static int sk_eq(lua_State *L)
{
    sh_sketch *a = shl_checksketch(L, 1), *b = shl_checksketch(L, 2);
    lua_pushboolean(L, memcmp(&a->p, &b->p, sizeof a->p) == 0 && a->n == b->n &&
                       a->n_shingles == b->n_shingles && memcmp(a->v, b->v, a->n * sizeof(uint64_t)) == 0);
    return 1;
}

/* core.load(str) -> sketch, or nil, message, code for a truncated, corrupt or foreign string */
static int sk_load(lua_State *L)
{
    size_t n;
    const char *s = luaL_checklstring(L, 1, &n);
    sh_sketch **a = (sh_sketch **)shl_newptrbox(L);
    sh_error err;
    if (sh_sketch_deserialize((const unsigned char *)s, n, a, &err) != SH_OK) return shl_fail(L, &err);
    shl_pushsketch(L, *a);
    shl_box_done(L, -2);
    return 1;
}

static int sk_is(lua_State *L)
{
    lua_pushboolean(L, shl_testudata(L, 1, SHL_SKETCH) != NULL);
    return 1;
}

void shl_open_sketch(lua_State *L)
{
    static const luaL_Reg methods[] = {
        { "estimate", sk_estimate }, { "resemblance", sk_resemblance }, { "containment", sk_containment },
        { "serialize", sk_serialize }, { "values", sk_values }, { "params", sk_params },
        { "shingles", sk_shingles }, { "reduce", sk_reduce }, { NULL, NULL }
    };
    static const luaL_Reg meta[] = {
        { "__len", sk_len }, { "__tostring", sk_tostring }, { "__eq", sk_eq }, { NULL, NULL }
    };
    static const luaL_Reg funcs[] = { { "load", sk_load }, { "is_sketch", sk_is }, { NULL, NULL } };
    luaL_newmetatable(L, SHL_SKETCH);
    shl_setfuncs(L, meta);
    lua_newtable(L);
    shl_setfuncs(L, methods);
    lua_pushvalue(L, -1);
    lua_setfield(L, -4, "Sketch");   /* module.Sketch: the method table, for the facade to extend */
    lua_setfield(L, -2, "__index");
    lua_pop(L, 1);
    shl_setfuncs(L, funcs);
}
