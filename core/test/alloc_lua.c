/* The Lua bindings under allocation failure (docs/robustness.md, "Memory").
 * A Lua 5.4 state whose allocator fails from the n-th allocation on runs a script of
 * the API (spec/alloc_script.lua) for n = 1, 2, ... until a run makes no
 * allocation fail. Every run must end in one of two ways: a Lua error (the
 * failure reported as such), or the script's normal result, equal to the
 * result of a run without failure (a failure that raised nothing must have
 * changed nothing). After each run the state is used again (a sketch is
 * made and compared) and closed; under AddressSanitizer, LeakSanitizer then
 * finds anything a failure left allocated.
 *
 *   alloc_lua CPATH LPATH SCRIPT
 *
 * CPATH and LPATH become package.cpath and package.path. The script is
 * called once as SCRIPT("prepare", DIR) to make its files in a fresh
 * directory DIR (not counted), then as SCRIPT("run", DIR), which returns a
 * string (its digest), for every n. The modules are loaded
 * before counting starts, so the failures fall in the bindings and the
 * modules' functions, not in the Lua parser. Prints one line
 * "N passed, N failed" (runs) like the other C tests. */
#define _GNU_SOURCE 1 /* RTLD_NODELETE */
#include <dlfcn.h>
#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct counter {
    long count, fail_at, failed;
} counter;

static void *alloc(void *ud, void *ptr, size_t osize, size_t nsize)
{
    counter *c = (counter *)ud;
    (void)osize;
    if (nsize == 0) { free(ptr); return NULL; }
    /* from the n-th on, every allocation fails until the run returns: Lua
     * 5.4 retries a failed one after an emergency collection, so failing
     * only one would never reach the code that handles the failure */
    if (c->fail_at > 0 && ++c->count >= c->fail_at) { c->failed++; return NULL; }
    return realloc(ptr, nsize);
}

/* A fresh state with the modules loaded and the script compiled: the
 * script's function is left on the stack. */
static lua_State *setup(counter *c, const char *cpath, const char *lpath, const char *script)
{
    lua_State *L = lua_newstate(alloc, c);
    if (!L) return NULL;
    luaL_openlibs(L);
    /* ahead of the defaults, where cjson and lfs are */
    lua_getglobal(L, "package");
    lua_pushstring(L, cpath);
    lua_pushliteral(L, ";");
    lua_getfield(L, -3, "cpath");
    lua_concat(L, 3);
    lua_setfield(L, -2, "cpath");
    lua_pushstring(L, lpath);
    lua_pushliteral(L, ";");
    lua_getfield(L, -3, "path");
    lua_concat(L, 3);
    lua_setfield(L, -2, "path");
    lua_pop(L, 1);
    if (luaL_dostring(L, "require 'shingle'; require 'shingle.index'; require 'shingle.input'; require 'cjson'") != LUA_OK ||
        luaL_loadfile(L, script) != LUA_OK) {
        fprintf(stderr, "alloc_lua: %s\n", lua_tostring(L, -1));
        lua_close(L);
        return NULL;
    }
    return L;
}

/* Call the script on the stack with args; returns its digest (malloc'ed) or
 * NULL with *err set to the Lua error (malloc'ed). */
static char *run(lua_State *L, int argc, char **argv, char **err, counter *c, long fail_at)
{
    int i, rc;
    char *out = NULL;
    *err = NULL;
    for (i = 0; i < argc; i++) lua_pushstring(L, argv[i]);
    /* armed only inside the protected call: outside one, a failure is a panic */
    c->count = 0;
    c->fail_at = fail_at;
    /* The incremental collector is stopped while allocations fail: a
     * finalizer it would run then cannot be called (Lua 5.4 needs memory to
     * call a __gc; it drops the call with a warning) and the object's C
     * memory would be lost by Lua, not by us. Emergency collections still
     * run (they call no finalizers); garbage is finalized at lua_close, with
     * a working allocator, where LeakSanitizer then sees what we leaked. */
    lua_gc(L, LUA_GCSTOP, 0); /* the third argument: Lua 5.3 takes one */
    rc = lua_pcall(L, argc, 1, 0);
    lua_gc(L, LUA_GCRESTART, 0);
    c->fail_at = 0;
    if (rc != LUA_OK) {
        const char *m = lua_tostring(L, -1);
        *err = strdup(m ? m : "(an error that is not a string)");
    } else {
        const char *d = lua_tostring(L, -1);
        out = strdup(d ? d : "(no digest)");
    }
    lua_pop(L, 1);
    return out;
}

/* The state still works after a failure: make two sketches and compare. */
static int still_works(lua_State *L)
{
    int ok = luaL_dostring(L, "local s = require('shingle').new{ w = 2 }\n"
                              "local a, b = s:sketch('one two three four'), s:sketch('one two three five')\n"
                              "assert(a:resemblance(a) == 1 and b:resemblance(a) < 1)\ncollectgarbage()") == LUA_OK;
    if (!ok) fprintf(stderr, "alloc_lua: the state failed after the run: %s\n", lua_tostring(L, -1));
    return ok;
}

int main(int argc, char **argv)
{
    counter c = { 0, 0, 0 };
    lua_State *L;
    char *want, *err, *got, dir[] = "/tmp/shingle-alloc-XXXXXX", cmd[64];
    char *prep[2] = { "prepare", dir }, *args[2] = { "run", dir };
    long n, errors = 0, completed = 0, bad = 0, total;
    if (argc != 4) {
        fprintf(stderr, "usage: alloc_lua CPATH LPATH SCRIPT\n");
        return 2;
    }
    if (!mkdtemp(dir)) { perror("mkdtemp"); return 2; }
    {
        /* keep the C module mapped after each lua_close, so that a leak
         * report can name the functions that allocated */
        char so[1024];
        const char *q = strchr(argv[1], '?');
        if (q && strlen(argv[1]) + 16 < sizeof so) {
            snprintf(so, sizeof so, "%.*sshingle/core%s", (int)(q - argv[1]), argv[1], q + 1);
            if (!dlopen(so, RTLD_NOW | RTLD_NODELETE)) fprintf(stderr, "alloc_lua: %s\n", dlerror());
        }
        /* and the Lua libraries the modules use (ALLOC_LUA_PIN: paths separated by ':') */
        if (getenv("ALLOC_LUA_PIN")) {
            char *list = strdup(getenv("ALLOC_LUA_PIN")), *tok, *save = NULL;
            for (tok = strtok_r(list, ":", &save); tok; tok = strtok_r(NULL, ":", &save))
                if (!dlopen(tok, RTLD_NOW | RTLD_NODELETE)) fprintf(stderr, "alloc_lua: %s\n", dlerror());
            free(list);
        }
    }
    if (!(L = setup(&c, argv[1], argv[2], argv[3]))) return 2;
    got = run(L, 2, prep, &err, &c, 0);
    if (!got) { fprintf(stderr, "alloc_lua: the script's prepare failed: %s\n", err); return 2; }
    free(got);
    lua_close(L);
    /* the digest of a run without failure in a fresh state, and how many allocations it makes */
    if (!(L = setup(&c, argv[1], argv[2], argv[3]))) return 2;
    want = run(L, 2, args, &err, &c, 0x7fffffffL); /* counting, never failing */
    if (!want) { fprintf(stderr, "alloc_lua: the script fails without any failure: %s\n", err); return 2; }
    lua_close(L);
    total = c.count;
    for (n = 1;; n++) {
        c.count = 0;
        c.fail_at = 0;
        c.failed = 0;
        if (!(L = setup(&c, argv[1], argv[2], argv[3]))) return 2;
        got = run(L, 2, args, &err, &c, n);
        if (!c.failed) { /* no allocation left to fail: every one has been */
            free(got);
            free(err);
            lua_close(L);
            break;
        }
        if (got) {
            completed++;
            if (strcmp(got, want) != 0) {
                bad++;
                fprintf(stderr, "alloc_lua: allocation %ld failed, nothing was raised, and the result changed:\n  %s\n  want %s\n",
                        n, got, want);
            }
        } else {
            errors++;
        }
        if (!still_works(L)) bad++;
        free(got);
        free(err);
        lua_close(L);
    }
    printf("alloc_lua: %ld allocations in the script; failing from each on: %ld runs raised a Lua error, %ld finished with "
           "the same result, %ld went wrong\n", total, errors, completed, bad);
    printf("%ld passed, %ld failed\n", errors + completed, bad);
    free(want);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0) fprintf(stderr, "alloc_lua: could not remove %s\n", dir);
    return bad ? 1 : 0;
}
