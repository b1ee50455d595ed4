/* shingle.core binding for JSON Lines input (core/jsonl.h): a streaming,
 * bounded reader that hands out documents in batches. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "jsonl.h"
#include "lshingle.h"
#include "zio.h"

#define SHL_JSONL "shingle.JsonlReader"

typedef struct shl_jsonl {
    sh_jsonl_reader *r;
    sh_jsonl_fields f;
    char names[4][256];
    sh_zstream *zs;     /* a compressed input (core/zio.h): owned unless ref holds its userdata */
    int ref;
    int path_ref;       /* a plain file: its path, given to each document as `source` (LUA_NOREF: none) */
} shl_jsonl;

/* sh_read_fn over a zio stream: decompressed bytes */
static ssize_t zs_read(void *ctx, void *buf, size_t n)
{
    size_t got;
    sh_error err;
    if (sh_zstream_read((sh_zstream *)ctx, buf, n, &got, &err) != SH_OK) {
        errno = err.sys_errno ? err.sys_errno : EIO;
        return -1;
    }
    return (ssize_t)got;
}

static void field_name(lua_State *L, int t, const char *key, shl_jsonl *u, int k, const char **slot)
{
    const char *s;
    size_t n;
    lua_getfield(L, t, key);
    if (lua_isnil(L, -1)) { lua_pop(L, 1); return; }
    s = lua_tolstring(L, -1, &n);
    luaL_argcheck(L, s != NULL && n > 0 && n < sizeof u->names[k], 2, "a field name must be a string of 1 to 255 bytes");
    memcpy(u->names[k], s, n + 1);
    *slot = u->names[k];
    lua_pop(L, 1);
}

/* core.jsonl(path | stream [, { fields = { text, url, id, date }, max_line
 * = bytes, start, stop, line } [, name]]) -> reader, or nil, err. path "-"
 * reads standard input; a gzip or zstd file, standard input and a
 * core.zopen stream are read decompressed (core/zio.h). start and stop
 * (byte offsets, start at a line's first byte) read a piece of a plain
 * file, whose first line is number `line`; a compressed file is read whole
 * (a piece from 0), and cannot be cut elsewhere. */
static int jsonl_open(lua_State *L)
{
    const char *path = lua_isuserdata(L, 1) ? NULL : luaL_checkstring(L, 1);
    size_t max_line = 0;
    shl_jsonl *u;
    sh_error err;
    sh_status s;
    int compressed = 0;
    u = (shl_jsonl *)shl_newhandle(L, sizeof *u, SHL_JSONL);
    u->ref = LUA_NOREF;
    u->path_ref = LUA_NOREF;
    if (lua_istable(L, 2)) {
        lua_Number m = shl_opt_num(L, 2, "max_line", 0);
        luaL_argcheck(L, m == 0 || (m >= 1 && m <= 1e15), 2, "max_line must be a positive number of bytes");
        max_line = (size_t)m;
        lua_getfield(L, 2, "fields");
        if (lua_istable(L, -1)) {
            int t = lua_gettop(L);
            field_name(L, t, "text", u, 0, &u->f.text);
            field_name(L, t, "url", u, 1, &u->f.url);
            field_name(L, t, "id", u, 2, &u->f.id);
            field_name(L, t, "date", u, 3, &u->f.date);
        }
        lua_pop(L, 1);
    }
    if (!path) {
        /* a stream the caller opened (standard input, after looking at its start) */
        u->zs = shl_checkzstream(L, 1);
        lua_pushvalue(L, 1);
        u->ref = luaL_ref(L, LUA_REGISTRYINDEX);
        s = sh_jsonl_open_fn(zs_read, u->zs, luaL_optstring(L, 3, "standard input"), max_line, &u->r, &err);
        compressed = 1;
    } else {
        const char *p;
        size_t n = 0;
        int is_stdin = strcmp(path, "-") == 0;
        s = is_stdin ? sh_zstream_open_fd(STDIN_FILENO, "standard input", &u->zs, &err) : sh_zstream_open(path, &u->zs, &err);
        if (s == SH_OK) s = sh_zstream_peek(u->zs, 6, &p, &n, &err);
        if (s != SH_OK && is_stdin) return shl_fail(L, &err);
        /* a file that cannot be looked into (a directory, ...) is the reader's to refuse, in its words */
        compressed = s == SH_OK && (is_stdin || sh_zstream_kind(u->zs) != SH_Z_PLAIN);
        if (compressed) {
            s = sh_jsonl_open_fn(zs_read, u->zs, strcmp(path, "-") == 0 ? "standard input" : path, max_line, &u->r, &err);
        } else {
            /* a plain file is read by the reader itself (it can seek for a piece) */
            sh_zstream_close(u->zs);
            u->zs = NULL;
            s = sh_jsonl_open(path, max_line, &u->r, &err);
            if (s == SH_OK) {
                lua_pushvalue(L, 1);
                u->path_ref = luaL_ref(L, LUA_REGISTRYINDEX);
            }
        }
    }
    if (s != SH_OK) return shl_fail(L, &err);
    if (lua_istable(L, 2) && compressed) {
        lua_getfield(L, 2, "start");
        if (!lua_isnil(L, -1) && luaL_checknumber(L, -1) > 0)
            return luaL_error(L, "%s is compressed: it is read whole, a piece cannot start at byte %f",
                              path ? path : "the stream", (double)lua_tonumber(L, -1));
        lua_pop(L, 1);
    } else if (lua_istable(L, 2)) {
        lua_Number start, stop, line;
        lua_getfield(L, 2, "start");
        lua_getfield(L, 2, "stop");
        lua_getfield(L, 2, "line");
        if (!lua_isnil(L, -3)) {
            start = luaL_checknumber(L, -3);
            stop = luaL_checknumber(L, -2);
            line = luaL_optnumber(L, -1, 1);
            luaL_argcheck(L, start >= 0 && stop >= start && line >= 1, 2, "a piece needs 0 <= start <= stop and line >= 1");
            if (sh_jsonl_range(u->r, (uint64_t)start, (uint64_t)stop, (uint64_t)line, &err) != SH_OK) return shl_fail(L, &err);
        }
        lua_pop(L, 3);
    }
    return 1;
}

static shl_jsonl *check_reader(lua_State *L)
{
    shl_jsonl *u = (shl_jsonl *)luaL_checkudata(L, 1, SHL_JSONL);
    luaL_argcheck(L, u->r != NULL, 1, "the JSON Lines reader is closed");
    return u;
}

/* r:batch(n) -> docs, errors, done: up to n documents { text, url, date,
 * line [, source, at, at_len] } (a document without url or id gets
 * NAME:LINE; source, at and at_len, for a plain file, are its path and where
 * the line is in it: what exact verification reads again), the messages for
 * lines that were skipped (each naming the input, the line and the column),
 * and whether the input is exhausted. */
static int jsonl_batch(lua_State *L)
{
    shl_jsonl *u = check_reader(L);
    lua_Integer max = luaL_optinteger(L, 2, 256);
    int nd = 0, ne = 0, done = 0;
    lua_newtable(L);
    lua_newtable(L);
    while (nd < max) {
        sh_jsonl_doc d;
        uint64_t line = 0;
        sh_error err;
        sh_status st = sh_jsonl_next(u->r, &u->f, &d, &line, &err);
        if (st != SH_OK) {
            /* a compressed input that failed says why (corrupt data, a bomb), not just EIO */
            const char *zmsg = u->zs ? sh_zstream_message(u->zs) : NULL;
            lua_pushstring(L, st == SH_EIO && zmsg ? zmsg : err.msg);
            lua_rawseti(L, -2, ++ne);
            if (st == SH_EIO || st == SH_ENOMEM) { done = 1; break; } /* the reader is finished */
            continue;
        }
        if (!d.text.p) { done = 1; break; }
        lua_createtable(L, 0, 4);
        lua_pushlstring(L, d.text.p, d.text.n);
        lua_setfield(L, -2, "text");
        if (d.url.p) lua_pushlstring(L, d.url.p, d.url.n);
        else {
            char num[24];
            snprintf(num, sizeof num, "%llu", (unsigned long long)line);
            lua_pushfstring(L, "%s:%s", sh_jsonl_name(u->r), num);
        }
        lua_setfield(L, -2, "url");
        if (d.date.p) { lua_pushlstring(L, d.date.p, d.date.n); lua_setfield(L, -2, "date"); }
        lua_pushinteger(L, (lua_Integer)line);
        lua_setfield(L, -2, "line");
        if (u->path_ref != LUA_NOREF) {
            size_t line_len;
            uint64_t at = sh_jsonl_line_offset(u->r, &line_len);
            lua_rawgeti(L, LUA_REGISTRYINDEX, u->path_ref);
            lua_setfield(L, -2, "source");
            lua_pushinteger(L, (lua_Integer)at);
            lua_setfield(L, -2, "at");
            lua_pushinteger(L, (lua_Integer)line_len);
            lua_setfield(L, -2, "at_len");
        }
        lua_rawseti(L, -3, ++nd);
    }
    lua_pushboolean(L, done);
    return 3;
}

/* r:offset() -> bytes read so far */
static int jsonl_offset(lua_State *L)
{
    lua_pushnumber(L, (lua_Number)sh_jsonl_offset(check_reader(L)->r));
    return 1;
}

/* r:close(): idempotent; also __gc and __close */
static int jsonl_close(lua_State *L)
{
    shl_jsonl *u = (shl_jsonl *)luaL_checkudata(L, 1, SHL_JSONL);
    sh_jsonl_close(u->r);
    u->r = NULL;
    if (u->ref == LUA_NOREF) sh_zstream_close(u->zs);
    u->zs = NULL;
    luaL_unref(L, LUA_REGISTRYINDEX, u->ref);
    u->ref = LUA_NOREF;
    luaL_unref(L, LUA_REGISTRYINDEX, u->path_ref);
    u->path_ref = LUA_NOREF;
    return 0;
}

/* core.text(s) -> s, or a copy with every byte that is not well-formed UTF-8
 * (and every control character) as %XX: a URL or date fit for JSON output. */
static int text_escape(lua_State *L)
{
    size_t n, w;
    const char *s = luaL_checklstring(L, 1, &n);
    char *out;
    luaL_argcheck(L, n <= ((size_t)1 << 40), 1, "too long");
    out = (char *)shl_newuserdata(L, 3 * n + 1);
    w = sh_text_escape_invalid(s, n, out);
    if (w == n) lua_pushvalue(L, 1);
    else lua_pushlstring(L, out, w);
    return 1;
}

void shl_open_jsonl(lua_State *L)
{
    static const luaL_Reg m[] = { { "batch", jsonl_batch }, { "offset", jsonl_offset }, { NULL, NULL } };
    static const luaL_Reg funcs[] = { { "jsonl", jsonl_open }, { "text", text_escape }, { NULL, NULL } };
    shl_newclass(L, SHL_JSONL, m, NULL, jsonl_close);
    shl_setfuncs(L, funcs);
}
