/* Lua on the thread pool's workers: rule sets with Lua steps and feature
 * extractors written in Lua run in one Lua state per worker, so that they
 * sketch on every core instead of on the main thread alone. The engine sees
 * an sh_extractor (core/pool.h); each worker's state is made the first time
 * it runs one, from a configuration the main state serialized: its rule
 * set or extractor by name or file and the shingler's options, read by
 * lua/shingle/worker.lua, which returns the function a document goes
 * through. The states share nothing: the results are those of the main
 * thread's path (spec/worker_spec.lua compares them). */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <lualib.h>
#include "lshingle.h"

typedef struct worker_arg {
    const sh_shingler *sh;   /* token ids: the pool's shingler */
    char *config, *path, *cpath;
    sh_extractor ex;
} worker_arg;

typedef struct worker_ctx {
    lua_State *L;
    const sh_shingler *sh;
    int fn;                  /* registry: function(bytes, path) -> list, features | nil, err */
} worker_ctx;

static void *worker_init(void *arg, sh_error *err)
{
    worker_arg *a = (worker_arg *)arg;
    worker_ctx *c = (worker_ctx *)calloc(1, sizeof *c);
    lua_State *L;
    if (!c || !(L = luaL_newstate())) {
        free(c);
        sh_error_set(err, SH_ENOMEM, 0, "out of memory for a worker's Lua state");
        return NULL;
    }
    c->L = L;
    c->sh = a->sh;
    luaL_openlibs(L);
    lua_getglobal(L, "package");
    lua_pushstring(L, a->path);
    lua_setfield(L, -2, "path");
    lua_pushstring(L, a->cpath);
    lua_setfield(L, -2, "cpath");
    lua_pop(L, 1);
    /* require("shingle.worker")(config) -> function */
    lua_getglobal(L, "require");
    lua_pushstring(L, "shingle.worker");
    if (lua_pcall(L, 1, 1, 0) != 0 || (luaL_loadstring(L, a->config) != 0) || lua_pcall(L, 0, 1, 0) != 0 ||
        lua_pcall(L, 1, 1, 0) != 0 || !lua_isfunction(L, -1)) {
        sh_error_set(err, SH_EINVAL, 0, "a worker thread could not load the rule set or extractor: %s",
                     lua_isstring(L, -1) ? lua_tostring(L, -1) : "not a function");
        lua_close(L);
        free(c);
        return NULL;
    }
    c->fn = luaL_ref(L, LUA_REGISTRYINDEX);
    return c;
}

static void worker_close(void *ctx)
{
    worker_ctx *c = (worker_ctx *)ctx;
    if (!c) return;
    lua_close(c->L);
    free(c);
}

/* In the worker's state, as a protected call: the list at 1 into w (a
 * light userdata at 2), ids made with the shingler at 3. */
static int to_ids(lua_State *L)
{
    sh_work *w = (sh_work *)lua_touserdata(L, 2);
    const sh_shingler *sh = (const sh_shingler *)lua_touserdata(L, 3);
    luaL_checktype(L, 1, LUA_TTABLE);
    shl_ids_from_list(L, 1, sh, w);
    return 0;
}

static sh_status worker_extract(void *ctx, const char *data, size_t len, const char *path, sh_work *w, int *features,
                                sh_error *err)
{
    worker_ctx *c = (worker_ctx *)ctx;
    lua_State *L = c->L;
    sh_status st = SH_OK;
    int top = lua_gettop(L);
    lua_rawgeti(L, LUA_REGISTRYINDEX, c->fn);
    lua_pushlstring(L, data, len);
    if (path) lua_pushstring(L, path); else lua_pushnil(L);
    if (lua_pcall(L, 2, 2, 0) != 0) {
        st = sh_error_set(err, SH_EINVAL, 0, "%s", lua_tostring(L, -1));
    } else if (!lua_istable(L, -2)) {
        st = sh_error_set(err, SH_EFORMAT, 0, "%s", lua_isstring(L, -1) ? lua_tostring(L, -1) : "no tokens or features");
    } else {
        *features = lua_toboolean(L, -1);
        lua_pushcfunction(L, to_ids);
        lua_pushvalue(L, -3);
        lua_pushlightuserdata(L, w);
        lua_pushlightuserdata(L, (void *)(uintptr_t)c->sh);
        if (lua_pcall(L, 3, 0, 0) != 0) st = sh_error_set(err, SH_EINVAL, 0, "%s", lua_tostring(L, -1));
    }
    lua_settop(L, top);
    return st;
}

/* A copy of the string field k of the table at t, or NULL. */
static char *dupfield(lua_State *L, int t, const char *k)
{
    size_t n;
    const char *s;
    char *d = NULL;
    lua_getfield(L, t, k);
    s = lua_tolstring(L, -1, &n);
    if (s && (d = (char *)malloc(n + 1)) != NULL) memcpy(d, s, n + 1);
    lua_pop(L, 1);
    return d;
}

sh_extractor *shl_worker_extractor(lua_State *L, int o, const sh_shingler *sh)
{
    worker_arg *a;
    int t;
    lua_getfield(L, o, "lua");
    if (lua_isnil(L, -1)) {
        lua_pop(L, 1);
        return NULL;
    }
    luaL_checktype(L, -1, LUA_TTABLE);
    t = lua_gettop(L);
    a = (worker_arg *)calloc(1, sizeof *a);
    if (!a) luaL_error(L, "out of memory");
    a->ex.arg = a;
    a->sh = sh;
    a->config = dupfield(L, t, "config");
    a->path = dupfield(L, t, "path");
    a->cpath = dupfield(L, t, "cpath");
    lua_pop(L, 1);
    if (!a->config || !a->path || !a->cpath) {
        shl_worker_free(&a->ex);
        luaL_error(L, "the pool's lua option needs the strings config, path and cpath");
    }
    a->ex.extract = worker_extract;
    a->ex.init = worker_init;
    a->ex.free = worker_close;
    return &a->ex;
}

void shl_worker_free(sh_extractor *ex)
{
    worker_arg *a;
    if (!ex) return;
    a = (worker_arg *)ex->arg;
    free(a->config);
    free(a->path);
    free(a->cpath);
    free(a);
}
