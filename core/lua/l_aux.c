/* What the binding files share (lshingle.h): errors, option readers, boxes,
 * handle classes. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lshingle.h"
#include "policy.h"

/* The boxes' class. l_aux.c is compiled into core.so and into mpi.so: each
 * module has a class of its own (CMake gives mpi.so "shingle.mpi.Box"), so
 * that requiring shingle.mpi never sets core's boxes' __gc to a copy in
 * mpi.so, which Lua 5.1 and LuaJIT may unload before they finalize core's
 * boxes at lua_close. */
#ifndef SHL_BOX
#define SHL_BOX "shingle.Box"
#endif

int shl_raise(lua_State *L, const sh_error *err)
{
    return luaL_error(L, "%s", err->msg);
}

int shl_fail(lua_State *L, const sh_error *err)
{
    lua_pushnil(L);
    lua_pushstring(L, err->msg);
    lua_pushstring(L, sh_status_name(err->code));
    return 3;
}

/* ---- options ------------------------------------------------------------------ */

/* Push field k of table t; 0 (nothing pushed) when it is nil. */
static int field(lua_State *L, int t, const char *k)
{
    lua_getfield(L, t, k);
    if (!lua_isnil(L, -1)) return 1;
    lua_pop(L, 1);
    return 0;
}

static int bad_option(lua_State *L, const char *k, const char *what)
{
    return luaL_error(L, "option '%s' must be %s, not a %s", k, what, luaL_typename(L, -1));
}

lua_Integer shl_opt_int(lua_State *L, int t, const char *k, lua_Integer def)
{
    lua_Integer v;
    if (!field(L, t, k)) return def;
    if (!shl_tointeger(L, -1, &v)) {
        if (lua_type(L, -1) == LUA_TNUMBER) return luaL_error(L, "option '%s' must be an integer", k);
        return bad_option(L, k, "an integer");
    }
    lua_pop(L, 1);
    return v;
}

lua_Number shl_opt_num(lua_State *L, int t, const char *k, lua_Number def)
{
    lua_Number v;
    if (!field(L, t, k)) return def;
    if (lua_type(L, -1) != LUA_TNUMBER) return bad_option(L, k, "a number");
    v = lua_tonumber(L, -1);
    lua_pop(L, 1);
    return v;
}

int shl_opt_bool(lua_State *L, int t, const char *k, int def)
{
    int v;
    if (!field(L, t, k)) return def;
    v = lua_toboolean(L, -1);
    lua_pop(L, 1);
    return v;
}

const char *shl_opt_str(lua_State *L, int t, const char *k, const char *def)
{
    const char *v;
    if (!field(L, t, k)) return def;
    if (lua_type(L, -1) != LUA_TSTRING) { bad_option(L, k, "a string"); return NULL; }
    v = lua_tostring(L, -1);
    lua_pop(L, 1); /* the string stays alive in the table */
    return v;
}

uint64_t shl_opt_u64(lua_State *L, int t, const char *k, uint64_t def)
{
    uint64_t v;
    if (!field(L, t, k)) return def;
    v = shl_checku64(L, lua_gettop(L));
    lua_pop(L, 1);
    return v;
}

int shl_opt_enum(lua_State *L, int t, const char *k, const char *def, const char *const names[])
{
    const char *v = shl_opt_str(L, t, k, def);
    int i;
    for (i = 0; v && names[i]; i++)
        if (strcmp(names[i], v) == 0) return i;
    {
        char list[256];
        size_t n = 0;
        list[0] = '\0';
        for (i = 0; names[i]; i++)
            if (names[i][0] && n < sizeof list)
                n += (size_t)snprintf(list + n, sizeof list - n, "%s%s", n ? ", " : "", names[i]);
        return luaL_error(L, "option '%s' is '%s'; use one of %s", k, v ? v : "nil", list);
    }
}

int shl_opt_policy(lua_State *L, int t, const char *k, int def)
{
    const char *v = shl_opt_str(L, t, k, NULL);
    sh_policy p;
    if (!v) return def;
    if (!sh_policy_parse(v, &p)) return luaL_error(L, "policy '%s'; use resemblance, containment, either or both", v);
    return (int)p;
}

/* ---- boxes ---------------------------------------------------------------------- */

typedef struct box {
    void (*fin)(void *);
    int done;
    union { void *p; double d; uint64_t u; } data[1];   /* the contents, aligned */
} box;

void *shl_newbox(lua_State *L, size_t size, void (*fin)(void *))
{
    box *b = (box *)shl_newuserdata(L, offsetof(box, data) + (size ? size : 1));
    b->fin = NULL;
    b->done = 0;
    memset(b->data, 0, size ? size : 1);
    luaL_getmetatable(L, SHL_BOX);
    lua_setmetatable(L, -2);
    b->fin = fin;   /* set last: a box without its metatable must not release anything */
    return b->data;
}

static void free_ptr(void *slot)
{
    free(*(void **)slot);
    *(void **)slot = NULL;
}

void **shl_newptrbox(lua_State *L)
{
    return (void **)shl_newbox(L, sizeof(void *), free_ptr);
}

static int box_done(lua_State *L)
{
    box *b = (box *)luaL_checkudata(L, 1, SHL_BOX);
    if (!b->done) {
        b->done = 1;
        if (b->fin) b->fin(b->data);
    }
    return 0;
}

void *shl_tobox(lua_State *L, int i)
{
    box *b = (box *)shl_testudata(L, i, SHL_BOX);
    return b && !b->done ? (void *)b->data : NULL;
}

void shl_box_done(lua_State *L, int i)
{
    box *b = (box *)luaL_checkudata(L, i, SHL_BOX);
    if (!b->done) {
        b->done = 1;
        if (b->fin) b->fin(b->data);
    }
}

/* ---- handle classes --------------------------------------------------------------- */

void shl_newclass(lua_State *L, const char *name, const luaL_Reg *methods, const luaL_Reg *meta, lua_CFunction close)
{
    luaL_newmetatable(L, name);
    if (meta) shl_setfuncs(L, meta);
    if (close) {
        lua_pushcfunction(L, close);
        lua_setfield(L, -2, "__gc");
#if LUA_VERSION_NUM >= 504
        lua_pushcfunction(L, close);
        lua_setfield(L, -2, "__close");
#endif
    }
    lua_newtable(L);
    if (methods) shl_setfuncs(L, methods);
    if (close) {
        lua_getfield(L, -1, "close");
        if (lua_isnil(L, -1)) {
            lua_pushcfunction(L, close);
            lua_setfield(L, -3, "close");
        }
        lua_pop(L, 1);
    }
    lua_setfield(L, -2, "__index");
    lua_pop(L, 1);
}

void shl_ids_from_list(lua_State *L, int t, const sh_shingler *sh, sh_work *w)
{
    size_t n = shl_rawlen(L, t), i;
    uint64_t *ids = sh_work_ids(w, n);
    if (!ids) luaL_error(L, "out of memory for %d tokens", (int)n);
    for (i = 0; i < n; i++) {
        lua_rawgeti(L, t, (int)(i + 1));
        if (lua_type(L, -1) == LUA_TSTRING) {
            size_t len;
            const char *s = lua_tolstring(L, -1, &len);
            ids[i] = sh_token_id(sh, s, len);
        } else if (lua_type(L, -1) == LUA_TNUMBER) {
            ids[i] = shl_checku64(L, lua_gettop(L));
        } else {
            luaL_error(L, "item %d of the list is a %s; tokens and features must be strings or integers",
                       (int)(i + 1), luaL_typename(L, -1));
        }
        lua_pop(L, 1);
    }
}

void *shl_newhandle(lua_State *L, size_t size, const char *name)
{
    void *u = shl_newuserdata(L, size);
    memset(u, 0, size);
    luaL_getmetatable(L, name);
    lua_setmetatable(L, -2);
    return u;
}

void shl_open_aux(lua_State *L)
{
    shl_newclass(L, SHL_BOX, NULL, NULL, box_done);
}
