/* shingle.core.exec: replace the running program, so that `shingle serve`
 * becomes the nginx master process it starts (its pid, its signals: SIGINT
 * or SIGTERM stop nginx directly, nothing is left behind). */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "lshingle.h"

/* core.exec(file, { arg0, arg1, ... }) -> does not return, or nil, err */
static int p_exec(lua_State *L)
{
    const char *file = luaL_checkstring(L, 1);
    size_t n, i;
    const char **argv;
    luaL_checktype(L, 2, LUA_TTABLE);
    n = shl_rawlen(L, 2);
    luaL_argcheck(L, n >= 1, 2, "give at least the program name as arg0");
    argv = (const char **)lua_newuserdata(L, (n + 1) * sizeof *argv);
    for (i = 0; i < n; i++) {
        lua_rawgeti(L, 2, (int)(i + 1));
        luaL_argcheck(L, lua_type(L, -1) == LUA_TSTRING, 2, "arguments must be strings");
        argv[i] = lua_tostring(L, -1);
        lua_pop(L, 1); /* still referenced by the table */
    }
    argv[n] = NULL;
    fflush(NULL);
    execvp(file, (char *const *)(uintptr_t)argv);
    lua_pushnil(L);
    lua_pushfstring(L, "cannot run %s: %s", file, strerror(errno));
    return 2;
}

void shl_open_proc(lua_State *L)
{
    static const luaL_Reg funcs[] = { { "exec", p_exec }, { NULL, NULL } };
    shl_setfuncs(L, funcs);
}
