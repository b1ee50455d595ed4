/* shingle.core bindings for sketch files (core/sketchfile.h): a writer that
 * takes sketches one by one or a batch of documents sketched on the pool's
 * threads, and a reader that hands out one record (or one batch) at a time. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "lshingle.h"
#include "pool.h"
#include "sketchfile.h"

#define SHL_SKW "shingle.SketchWriter"
#define SHL_SKR "shingle.SketchReader"

typedef struct shl_skw {
    sh_skfile_writer *w;
} shl_skw;

typedef struct shl_skr {
    sh_skfile_reader *r;
} shl_skr;

/* A Lua key: a string, a number (an integer where it is one), or nil/false
 * for none. Raises for other types. */
void shl_tokey(lua_State *L, int i, sh_skkey *k)
{
    memset(k, 0, sizeof *k);
    switch (lua_type(L, i)) {
    case LUA_TNONE: case LUA_TNIL: k->type = SH_SKKEY_NONE; break;
    case LUA_TBOOLEAN:
        luaL_argcheck(L, !lua_toboolean(L, i), i, "a key is a string, a number, or nil/false for none");
        k->type = SH_SKKEY_NONE;
        break;
    case LUA_TSTRING: k->type = SH_SKKEY_STRING; k->s = lua_tolstring(L, i, &k->len); break;
    case LUA_TNUMBER:
#if LUA_VERSION_NUM >= 503
        if (lua_isinteger(L, i)) { k->type = SH_SKKEY_INTEGER; k->i = (int64_t)lua_tointeger(L, i); break; }
#endif
        k->d = lua_tonumber(L, i);
        luaL_argcheck(L, k->d == k->d, i, "a key cannot be NaN");
        if (k->d == floor(k->d) && fabs(k->d) < 9007199254740992.0) { k->type = SH_SKKEY_INTEGER; k->i = (int64_t)k->d; }
        else k->type = SH_SKKEY_NUMBER;
        break;
    default:
        luaL_argerror(L, i, "a key is a string, a number, or nil/false for none");
    }
}

/* Push a key (nil for none). */
void shl_pushkey(lua_State *L, const sh_skkey *k)
{
    switch (k->type) {
    case SH_SKKEY_STRING: lua_pushlstring(L, k->s, k->len); break;
    case SH_SKKEY_INTEGER: lua_pushinteger(L, (lua_Integer)k->i); break;
    case SH_SKKEY_NUMBER: lua_pushnumber(L, k->d); break;
    default: lua_pushnil(L); break;
    }
}

/* core.sketch_writer(path [, meta]) -> writer, or nil, err, code */
static int w_new(lua_State *L)
{
    const char *path = luaL_checkstring(L, 1);
    size_t mn = 0;
    const char *meta = luaL_optlstring(L, 2, NULL, &mn);
    shl_skw *u = (shl_skw *)shl_newhandle(L, sizeof *u, SHL_SKW);
    sh_error err;
    if (sh_skfile_create(path, &u->w, &err) != SH_OK) return shl_fail(L, &err);
    if (meta && sh_skfile_set_meta(u->w, meta, mn, &err) != SH_OK) return shl_raise(L, &err);
    return 1;
}

static shl_skw *check_w(lua_State *L)
{
    shl_skw *u = (shl_skw *)luaL_checkudata(L, 1, SHL_SKW);
    luaL_argcheck(L, u->w != NULL, 1, "the sketch file writer is closed");
    return u;
}

sh_skfile_writer *shl_checkskwriter(lua_State *L, int i)
{
    shl_skw *u = (shl_skw *)luaL_checkudata(L, i, SHL_SKW);
    luaL_argcheck(L, u->w != NULL, i, "the sketch file writer is closed");
    return u->w;
}

/* w:put(key, sketch) -> true, or nil, err, code (EMISMATCH, EIO) */
static int w_put(lua_State *L)
{
    shl_skw *u = check_w(L);
    sh_skkey k;
    sh_sketch *s = shl_checksketch(L, 3);
    sh_error err;
    shl_tokey(L, 2, &k);
    if (sh_skfile_put(u->w, &k, s, &err) != SH_OK) return shl_fail(L, &err);
    lua_pushboolean(L, 1);
    return 1;
}

/* w:put_pool(pool, docs [, field]) -> count written, { [i] = error } : the
 * documents sketched on the pool's threads, each written under docs[i][field]
 * (default "url"); sketches never become Lua values. */
static int w_put_pool(lua_State *L)
{
    shl_skw *u = check_w(L);
    sh_pool *pool = shl_checkpool(L, 2);
    const char *field = luaL_optstring(L, 4, "url");
    size_t n, i, ok = 0;
    sh_doc_in *ins;
    sh_doc_out *outs;
    sh_error err;
    luaL_checktype(L, 3, LUA_TTABLE);
    ins = shl_read_docs(L, 3, &n);
    outs = (sh_doc_out *)calloc(n ? n : 1, sizeof *outs);
    if (!outs) return luaL_error(L, "out of memory");
    sh_pool_run(pool, ins, outs, n, &err);
    lua_newtable(L);
    for (i = 0; i < n; i++) {
        sh_skkey k;
        if (outs[i].status != SH_OK) {
            lua_pushstring(L, outs[i].err);
            lua_rawseti(L, -2, (int)(i + 1));
            continue;
        }
        lua_rawgeti(L, 3, (int)(i + 1));
        lua_getfield(L, -1, field);
        if (lua_type(L, -1) != LUA_TSTRING && lua_type(L, -1) != LUA_TNUMBER) { lua_pop(L, 1); lua_pushnil(L); }
        shl_tokey(L, lua_gettop(L), &k);
        if (sh_skfile_put(u->w, &k, outs[i].sketch, &err) != SH_OK) {
            sh_pool_release(outs, n);
            free(outs);
            return shl_fail(L, &err);
        }
        lua_pop(L, 2);
        ok++;
    }
    sh_pool_release(outs, n);
    free(outs);
    lua_pushinteger(L, (lua_Integer)ok);
    lua_insert(L, -2);
    return 2;
}

static int w_count(lua_State *L)
{
    lua_pushinteger(L, (lua_Integer)sh_skfile_written(check_w(L)->w));
    return 1;
}

/* w:commit() -> count, or nil, err, code; the writer is closed either way */
static int w_commit(lua_State *L)
{
    shl_skw *u = check_w(L);
    uint64_t count;
    sh_error err;
    sh_skfile_writer *w = u->w;
    u->w = NULL;
    if (sh_skfile_commit(w, &count, &err) != SH_OK) return shl_fail(L, &err);
    lua_pushinteger(L, (lua_Integer)count);
    return 1;
}

static int w_abort(lua_State *L)
{
    shl_skw *u = (shl_skw *)luaL_checkudata(L, 1, SHL_SKW);
    sh_skfile_abort(u->w);
    u->w = NULL;
    return 0;
}

/* core.sketch_reader(path) -> reader, or nil, err, code */
static int r_new(lua_State *L)
{
    const char *path = luaL_checkstring(L, 1);
    shl_skr *u = (shl_skr *)shl_newhandle(L, sizeof *u, SHL_SKR);
    sh_error err;
    if (sh_skfile_open(path, &u->r, &err) != SH_OK) return shl_fail(L, &err);
    return 1;
}

sh_skfile_reader *shl_checkskreader(lua_State *L, int i)
{
    shl_skr *u = (shl_skr *)luaL_checkudata(L, i, SHL_SKR);
    luaL_argcheck(L, u->r != NULL, i, "the sketch file reader is closed");
    return u->r;
}

/* r:read() -> sketch, key; nothing at the end; nil, err, code */
static int r_read(lua_State *L)
{
    sh_skfile_reader *r = shl_checkskreader(L, 1);
    sh_skkey k;
    const sh_sketch *s;
    sh_error err;
    if (sh_skfile_next(r, &k, &s, &err) != SH_OK) return shl_fail(L, &err);
    if (!s) return 0;
    shl_pushsketch(L, s);
    shl_pushkey(L, &k);
    return 2;
}

/* r:batch(n) -> sketches, keys (false for none): up to n records, empty at
 * the end; or nil, err, code */
static int r_batch(lua_State *L)
{
    sh_skfile_reader *r = shl_checkskreader(L, 1);
    lua_Integer n = luaL_optinteger(L, 2, 1024), i;
    luaL_argcheck(L, n >= 1, 2, "a batch holds at least one record");
    lua_newtable(L);
    lua_newtable(L);
    for (i = 1; i <= n; i++) {
        sh_skkey k;
        const sh_sketch *s;
        sh_error err;
        if (sh_skfile_next(r, &k, &s, &err) != SH_OK) return shl_fail(L, &err);
        if (!s) break;
        shl_pushsketch(L, s);
        lua_rawseti(L, -3, (int)i);
        if (k.type == SH_SKKEY_NONE) lua_pushboolean(L, 0);
        else shl_pushkey(L, &k);
        lua_rawseti(L, -2, (int)i);
    }
    return 2;
}

/* r:params() -> a sketch of no values with the file's parameters, or nil */
static int r_params(lua_State *L)
{
    const sh_sketch *p = sh_skfile_params(shl_checkskreader(L, 1));
    if (!p) return 0;
    shl_pushsketch(L, p);
    return 1;
}

static int r_meta(lua_State *L)
{
    size_t n;
    const char *m = sh_skfile_meta(shl_checkskreader(L, 1), &n);
    lua_pushlstring(L, m ? m : "", n);
    return 1;
}

static int r_count(lua_State *L)
{
    lua_pushinteger(L, (lua_Integer)sh_skfile_read_count(shl_checkskreader(L, 1)));
    return 1;
}

static int r_offset(lua_State *L)
{
    lua_pushnumber(L, (lua_Number)sh_skfile_offset(shl_checkskreader(L, 1)));
    return 1;
}

static int r_close(lua_State *L)
{
    shl_skr *u = (shl_skr *)luaL_checkudata(L, 1, SHL_SKR);
    sh_skfile_close(u->r);
    u->r = NULL;
    return 0;
}

void shl_open_sketchfile(lua_State *L)
{
    /* the writer's close finishes the file; collected unfinished, it is abandoned */
    static const luaL_Reg wm[] = { { "put", w_put }, { "put_pool", w_put_pool }, { "count", w_count }, { "commit", w_commit },
                                   { "close", w_commit }, { "abort", w_abort }, { NULL, NULL } };
    static const luaL_Reg rm[] = { { "read", r_read }, { "batch", r_batch }, { "params", r_params }, { "meta", r_meta },
                                   { "count", r_count }, { "offset", r_offset }, { NULL, NULL } };
    static const luaL_Reg funcs[] = { { "sketch_writer", w_new }, { "sketch_reader", r_new }, { NULL, NULL } };
    shl_newclass(L, SHL_SKW, wm, NULL, w_abort);
    shl_newclass(L, SHL_SKR, rm, NULL, r_close);
    shl_setfuncs(L, funcs);
}
