/* shingle.core bindings for output directories that appear whole
 * (core/outdir.h): a lock beside the output, fsync of a file or a tree. */
#include "lshingle.h"
#include "outdir.h"

#define SHL_LOCK "shingle.Lock"

typedef struct shl_lock {
    sh_lock *l;
} shl_lock;

/* core.lock(path, what [, holder]) -> lock, or nil, message, "EBUSY"/"EIO" */
static int o_lock(lua_State *L)
{
    const char *path = luaL_checkstring(L, 1);
    const char *what = luaL_checkstring(L, 2);
    const char *holder = luaL_optstring(L, 3, "");
    shl_lock *u = (shl_lock *)shl_newhandle(L, sizeof *u, SHL_LOCK); /* released until the lock is taken */
    sh_error err;
    if (sh_lock_acquire(path, what, holder, &u->l, &err) != SH_OK) return shl_fail(L, &err);
    return 1;
}

/* lock:release(): idempotent; also __gc and __close */
static int o_release(lua_State *L)
{
    shl_lock *u = (shl_lock *)luaL_checkudata(L, 1, SHL_LOCK);
    sh_lock_release(u->l);
    u->l = NULL;
    return 0;
}

static int o_held(lua_State *L)
{
    shl_lock *u = (shl_lock *)luaL_checkudata(L, 1, SHL_LOCK);
    lua_pushboolean(L, u->l != NULL);
    return 1;
}

/* core.sync(path) -> true, or nil, message */
static int o_sync(lua_State *L)
{
    sh_error err;
    if (sh_sync_path(luaL_checkstring(L, 1), &err) != SH_OK) return shl_fail(L, &err);
    lua_pushboolean(L, 1);
    return 1;
}

/* core.sync_tree(dir) -> true, or nil, message */
static int o_sync_tree(lua_State *L)
{
    sh_error err;
    if (sh_sync_tree(luaL_checkstring(L, 1), &err) != SH_OK) return shl_fail(L, &err);
    lua_pushboolean(L, 1);
    return 1;
}

void shl_open_outdir(lua_State *L)
{
    static const luaL_Reg m[] = { { "release", o_release }, { "held", o_held }, { NULL, NULL } };
    static const luaL_Reg funcs[] = { { "lock", o_lock }, { "sync", o_sync }, { "sync_tree", o_sync_tree }, { NULL, NULL } };
    shl_newclass(L, SHL_LOCK, m, NULL, o_release);
    shl_setfuncs(L, funcs);
}
