/* shingle.core binding for checking an index (core/ixcheck.h). */
#include "ixcheck.h"
#include "lshingle.h"

typedef struct report { lua_State *L; int n; } report;

static void add_line(void *ctx, const char *kind, const char *text)
{
    report *r = (report *)ctx;
    lua_createtable(r->L, 0, 2);
    lua_pushstring(r->L, kind);
    lua_setfield(r->L, -2, "kind");
    lua_pushstring(r->L, text);
    lua_setfield(r->L, -2, "text");
    lua_rawseti(r->L, -2, ++r->n);
}

/* core.index_check(dir) -> { problems = n, lines = { { kind, text }, ... } },
 * or nil, err if the check could not run. The walk runs in a child process
 * (fork): call it from a process without other threads. */
static int ix_check(lua_State *L)
{
    const char *dir = luaL_checkstring(L, 1);
    report r;
    uint64_t problems = 0;
    sh_error err;
    lua_createtable(L, 0, 2);
    lua_newtable(L);
    r.L = L;
    r.n = 0;
    /* the callback adds to the table on top; it raises only on memory errors,
     * which leave the child to be reaped by the next wait of this process */
    if (sh_index_check(dir, add_line, &r, &problems, &err) != SH_OK) return shl_fail(L, &err);
    lua_setfield(L, -2, "lines");
    lua_pushinteger(L, (lua_Integer)problems);
    lua_setfield(L, -2, "problems");
    return 1;
}

/* core.index_check_file(dir) -> true, or nil, err: data.mdb is as long as its meta page says */
static int ix_check_file(lua_State *L)
{
    sh_error err;
    if (sh_index_check_file(luaL_checkstring(L, 1), NULL, &err) != SH_OK) return shl_fail(L, &err);
    lua_pushboolean(L, 1);
    return 1;
}

void shl_open_ixcheck(lua_State *L)
{
    static const luaL_Reg funcs[] = { { "index_check", ix_check }, { "index_check_file", ix_check_file }, { NULL, NULL } };
    shl_setfuncs(L, funcs);
}
