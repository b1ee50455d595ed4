/* core.json_encoder(array_mt, object_mt): the JSON encoder of the one output
 * writer (lua/shingle/writer.lua), over core/jsonw.c. The returned function
 * encode(v, rank) writes v as one JSON text:
 *   - a table is a list when its metatable is array_mt, or (unless it is
 *     object_mt) when t[1] is not nil or it is empty; a list is t[1..#t];
 *   - an object's keys: first those of rank[0] (a list of names), in that
 *     order, then the others (strings, or numbers written as JSON numbers)
 *     sorted by their bytes; rank[name] is not nil for the names of rank[0];
 *   - nil and a NULL light userdata (cjson.null) are null.
 * Values are read raw (no metamethod runs). Raises on what JSON cannot hold
 * (a function, a table key, nesting deeper than 100). The encoder keeps one
 * buffer between calls (in a box, so an error loses nothing). Also
 * core.utf8_clean(s): s with each byte that is not UTF-8 replaced by U+FFFD
 * (s itself when there is none). */
#include <stdlib.h>
#include <string.h>

#include "lshingle.h"
#include "jsonw.h"

#define MAX_DEPTH 100   /* as in the messages */

enum { UV_ARRAY = 1, UV_OBJECT, UV_BOX, UV_BUF };

static void free_textbuf(void *p)
{
    sh_textbuf_free((sh_textbuf *)p);
}

/* an error without a position: the message says what it is about */
static int fail(lua_State *L, const char *fmt, const char *arg)
{
    lua_pushfstring(L, fmt, arg);
    return lua_error(L);
}

static void oom(lua_State *L)
{
    fail(L, "shingle.writer: %s", "not enough memory");
}

static void put(lua_State *L, sh_textbuf *b, const char *s, size_t n)
{
    if (!sh_textbuf_put(b, s, n)) oom(L);
}

static void put_string(lua_State *L, sh_textbuf *b, int i)
{
    size_t n;
    const char *s = lua_tolstring(L, i, &n);
    if (!sh_json_string(b, s, n)) oom(L);
}

static void put_number(lua_State *L, sh_textbuf *b, int i)
{
#if LUA_VERSION_NUM >= 503
    if (lua_isinteger(L, i)) {
        if (!sh_json_integer(b, (int64_t)lua_tointeger(L, i))) oom(L);
        return;
    }
#endif
    if (!sh_json_number(b, (double)lua_tonumber(L, i))) oom(L);
}

/* whether the table at t has metatable upvalue uv */
static int has_mt(lua_State *L, int t, int uv)
{
    int r;
    if (!lua_getmetatable(L, t)) return 0;
    r = lua_rawequal(L, -1, lua_upvalueindex(uv));
    lua_pop(L, 1);
    return r;
}

static int is_list(lua_State *L, int t)
{
    int r;
    if (has_mt(L, t, UV_ARRAY)) return 1;
    if (has_mt(L, t, UV_OBJECT)) return 0;
    lua_rawgeti(L, t, 1);
    r = !lua_isnil(L, -1);
    lua_pop(L, 1);
    if (r) return 1;
    lua_pushnil(L);
    if (lua_next(L, t) == 0) return 1;
    lua_pop(L, 2);
    return 0;
}

typedef struct key { const char *s; size_t n; } key;

static int key_cmp(const void *a, const void *b)
{
    const key *x = (const key *)a, *y = (const key *)b;
    size_t n = x->n < y->n ? x->n : y->n;
    int c = memcmp(x->s, y->s, n);
    if (c) return c;
    return x->n < y->n ? -1 : x->n > y->n;
}

static void encode(lua_State *L, sh_textbuf *b, int v, int rank, int depth);

/* the object at t: the ranked keys in order, then the rest sorted */
static void encode_object(lua_State *L, sh_textbuf *b, int t, int rank, int depth)
{
    int first = 1, order, rest = 0;
    size_t i, no, nr = 0;
    put(L, b, "{", 1);
    lua_rawgeti(L, rank, 0);
    order = lua_gettop(L);
    no = lua_istable(L, order) ? shl_rawlen(L, order) : 0;
    for (i = 1; i <= no; i++) {
        lua_rawgeti(L, order, (lua_Integer)i);     /* name */
        lua_pushvalue(L, -1);
        lua_rawget(L, t);                          /* name, value */
        if (!lua_isnil(L, -1)) {
            if (!first) put(L, b, ",", 1);
            first = 0;
            put_string(L, b, -2);
            put(L, b, ":", 1);
            encode(L, b, lua_gettop(L), rank, depth + 1);
        }
        lua_pop(L, 2);
    }
    /* the other keys, sorted by their bytes: string keys straight from t
     * (which holds them); when a number key is among them, every other key
     * goes through rest[text] = value, the text anchored there */
    {
        key small[16], *keys = small;
        size_t cap = 16;
        int numeric = 0;
        lua_pushnil(L);
        while (lua_next(L, t) != 0) {             /* k, v */
            int kt = lua_type(L, -2);
            lua_pop(L, 1);
            if (kt == LUA_TSTRING) {
                lua_pushvalue(L, -1);
                lua_rawget(L, rank);
                int ranked = !lua_isnil(L, -1);
                lua_pop(L, 1);
                if (ranked) continue;
            } else if (kt == LUA_TNUMBER) {
                numeric = 1;
            } else {
                fail(L, "shingle.writer: an object key must be a string or a number, not a %s", lua_typename(L, kt));
            }
            if (nr == cap) {
                key *more = (key *)shl_newuserdata(L, 2 * cap * sizeof(key));
                memcpy(more, keys, nr * sizeof(key));
                keys = more;
                cap *= 2;
                lua_replace(L, order);             /* anchored in the order's slot, which is done with */
            }
            if (kt == LUA_TSTRING) keys[nr].s = lua_tolstring(L, -1, &keys[nr].n);
            else keys[nr].s = NULL;
            nr++;
        }
        if (numeric) {
            /* rest[text] = value for every other key, then keys from rest */
            lua_newtable(L);
            rest = lua_gettop(L);
            lua_pushnil(L);
            while (lua_next(L, t) != 0) {
                int kt = lua_type(L, -2);
                if (kt == LUA_TSTRING) {
                    lua_pushvalue(L, -2);
                    lua_rawget(L, rank);
                    int ranked = !lua_isnil(L, -1);
                    lua_pop(L, 1);
                    if (ranked) { lua_pop(L, 1); continue; }
                    lua_pushvalue(L, -2);
                } else {
                    sh_textbuf nb = { NULL, 0, 0 };
                    char tmp[48];
                    size_t n;
                    int ok;
#if LUA_VERSION_NUM >= 503
                    if (lua_isinteger(L, -2)) ok = sh_json_integer(&nb, (int64_t)lua_tointeger(L, -2));
                    else
#endif
                        ok = sh_json_number(&nb, (double)lua_tonumber(L, -2));
                    n = ok && nb.n < sizeof tmp ? nb.n : 0;
                    if (n) memcpy(tmp, nb.p, n);
                    sh_textbuf_free(&nb);
                    if (!ok) oom(L);
                    lua_pushlstring(L, tmp, n);
                }
                lua_pushvalue(L, -2);              /* k, v, text, v */
                lua_rawset(L, rest);
                lua_pop(L, 1);
            }
            nr = 0;
            lua_pushnil(L);
            while (lua_next(L, rest) != 0) {
                lua_pop(L, 1);
                keys[nr].s = lua_tolstring(L, -1, &keys[nr].n);   /* held by rest */
                nr++;
            }
        }
        qsort(keys, nr, sizeof(key), key_cmp);
        for (i = 0; i < nr; i++) {
            if (!first) put(L, b, ",", 1);
            first = 0;
            if (!sh_json_string(b, keys[i].s, keys[i].n)) oom(L);
            put(L, b, ":", 1);
            lua_pushlstring(L, keys[i].s, keys[i].n);
            lua_rawget(L, rest ? rest : t);
            encode(L, b, lua_gettop(L), rank, depth + 1);
            lua_pop(L, 1);
        }
        if (rest) lua_pop(L, 1);
    }
    lua_pop(L, 1);   /* the order list, or the keys' storage */
    put(L, b, "}", 1);
}

static void encode(lua_State *L, sh_textbuf *b, int v, int rank, int depth)
{
    switch (lua_type(L, v)) {
    case LUA_TSTRING: put_string(L, b, v); return;
    case LUA_TNUMBER: put_number(L, b, v); return;
    case LUA_TBOOLEAN:
        if (lua_toboolean(L, v)) put(L, b, "true", 4);
        else put(L, b, "false", 5);
        return;
    case LUA_TNIL: put(L, b, "null", 4); return;
    case LUA_TLIGHTUSERDATA:
        if (lua_touserdata(L, v) == NULL) { put(L, b, "null", 4); return; }
        break;
    case LUA_TTABLE:
        if (depth >= MAX_DEPTH) fail(L, "shingle.writer: tables nested more than %s deep (a cycle?)", "100");
        luaL_checkstack(L, 8, "shingle.writer: tables nested too deep");
        if (is_list(L, v)) {
            size_t i, n = shl_rawlen(L, v);
            put(L, b, "[", 1);
            for (i = 1; i <= n; i++) {
                if (i > 1) put(L, b, ",", 1);
                lua_rawgeti(L, v, (lua_Integer)i);
                encode(L, b, lua_gettop(L), rank, depth + 1);
                lua_pop(L, 1);
            }
            put(L, b, "]", 1);
        } else {
            encode_object(L, b, v, rank, depth);
        }
        return;
    default: break;
    }
    fail(L, "shingle.writer: cannot write a %s as JSON", luaL_typename(L, v));
}

/* encode(v [, rank]) -> string */
static int j_encode(lua_State *L)
{
    sh_textbuf *b = (sh_textbuf *)lua_touserdata(L, lua_upvalueindex(UV_BUF));
    lua_settop(L, 2);
    if (lua_isnil(L, 2)) {
        lua_newtable(L);
        lua_replace(L, 2);
    }
    luaL_checktype(L, 2, LUA_TTABLE);
    b->n = 0;
    encode(L, b, 1, 2, 0);
    lua_pushlstring(L, b->p, b->n);
    if (b->cap > ((size_t)1 << 20)) sh_textbuf_free(b);   /* keep no huge buffer */
    return 1;
}

static int j_encoder(lua_State *L)
{
    luaL_checktype(L, 1, LUA_TTABLE);
    luaL_checktype(L, 2, LUA_TTABLE);
    lua_settop(L, 2);
    /* the buffer lives in a box (freed when the encoder is collected); its
     * contents are reached through the light userdata */
    lua_pushlightuserdata(L, shl_newbox(L, sizeof(sh_textbuf), free_textbuf));
    lua_pushcclosure(L, j_encode, 4);
    return 1;
}

/* core.utf8_clean(s) -> s with bytes that are not UTF-8 replaced by U+FFFD */
static int j_utf8_clean(lua_State *L)
{
    size_t n;
    const char *s = luaL_checklstring(L, 1, &n);
    sh_textbuf *b;
    int changed = 0;
    size_t i;
    for (i = 0; i < n && (unsigned char)s[i] < 0x80; i++) {}
    if (i == n) {
        lua_settop(L, 1);
        return 1;
    }
    b = (sh_textbuf *)shl_newbox(L, sizeof(sh_textbuf), free_textbuf);
    if (!sh_json_utf8(b, s, n, &changed)) oom(L);
    if (changed) lua_pushlstring(L, b->p, b->n);
    else lua_pushvalue(L, 1);
    shl_box_done(L, -2);
    return 1;
}

void shl_open_json(lua_State *L)
{
    static const luaL_Reg funcs[] = {
        { "json_encoder", j_encoder }, { "utf8_clean", j_utf8_clean },
        { NULL, NULL }
    };
    shl_setfuncs(L, funcs);
}
