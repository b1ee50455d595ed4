/* The one place that knows Lua versions apart (LUA_VERSION_NUM): 5.4 is the
 * primary target; 5.3 and LuaJIT 2.1 (5.1 API) are kept building. Shims use
 * private names so they never clash with a host's own compat code. */
#ifndef SHINGLE_LUA_COMPAT_H
#define SHINGLE_LUA_COMPAT_H

#include <stdint.h>
#include <lua.h>
#include <lauxlib.h>
#include "byteorder.h"

#if LUA_VERSION_NUM >= 503
#define SHL_INT64 1            /* fingerprints are Lua integers */
#else
#define SHL_INT64 0            /* fingerprints are 8-byte big-endian strings */
#endif

#if LUA_VERSION_NUM >= 504
#define shl_newuserdata(L, n) lua_newuserdatauv((L), (n), 0)
#else
#define shl_newuserdata(L, n) lua_newuserdata((L), (n))
#endif

#if LUA_VERSION_NUM < 502
#define shl_rawlen(L, i) lua_objlen((L), (i))
#define shl_setfuncs(L, l) luaL_register((L), NULL, (l))
static inline void *shl_testudata(lua_State *L, int i, const char *tname)
{
    void *p = lua_touserdata(L, i);
    if (p && lua_getmetatable(L, i)) {
        luaL_getmetatable(L, tname);
        if (!lua_rawequal(L, -1, -2)) p = NULL;
        lua_pop(L, 2);
        return p;
    }
    return NULL;
}
#else
#define shl_rawlen(L, i) lua_rawlen((L), (i))
#define shl_setfuncs(L, l) luaL_setfuncs((L), (l), 0)
#define shl_testudata(L, i, t) luaL_testudata((L), (i), (t))
#endif

/* The number at index i as an integer, into *out: 1, or 0 when it is not a
 * number with an integral value (5.1 has no integer subtype). */
static inline int shl_tointeger(lua_State *L, int i, lua_Integer *out)
{
    if (lua_type(L, i) != LUA_TNUMBER) return 0;
#if LUA_VERSION_NUM >= 503
    {
        int ok;
        *out = lua_tointegerx(L, i, &ok);
        return ok;
    }
#else
    {
        lua_Number d = lua_tonumber(L, i);
        if (!(d >= -9007199254740992.0 && d <= 9007199254740992.0)) return 0;
        *out = (lua_Integer)d;
        return (lua_Number)*out == d;
    }
#endif
}

/* Push a 64-bit fingerprint: an integer on 5.3+ (two's complement, so values
 * of 2^63 and above read as negative), else 8 bytes, most significant first. */
static inline void shl_pushu64(lua_State *L, uint64_t v)
{
#if SHL_INT64
    lua_pushinteger(L, (lua_Integer)v);
#else
    char b[8];
    sh_store_be64(b, v);
    lua_pushlstring(L, b, 8);
#endif
}

/* Read a 64-bit value: an integer (5.3+), a non-negative integral number below
 * 2^53, or an 8-byte big-endian string (any version). Raises on anything else. */
static inline uint64_t shl_checku64(lua_State *L, int i)
{
    if (lua_type(L, i) == LUA_TSTRING) {
        size_t n;
        const char *s = lua_tolstring(L, i, &n);
        if (n != 8) luaL_argerror(L, i, "a fingerprint string must be 8 bytes (most significant first)");
        return sh_load_be64(s);
    }
#if SHL_INT64
    if (lua_isinteger(L, i)) return (uint64_t)lua_tointeger(L, i);
#endif
    {
        lua_Number d = luaL_checknumber(L, i);
        if (!(d >= 0 && d < 9007199254740992.0 && d == (lua_Number)(uint64_t)d))
            luaL_argerror(L, i, "expected an integer from 0 to 2^53 or an 8-byte string");
        return (uint64_t)d;
    }
}

#endif
