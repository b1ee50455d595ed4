/* shingle.core bindings for compressed input (core/zio.h): a stream that
 * decompresses gzip and zstd by their magic bytes and splits lines in C, and
 * a whole-document read with a bound on the decompressed size. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "lshingle.h"
#include "zio.h"

typedef struct shl_zstream {
    sh_zstream *zs;
} shl_zstream;

struct sh_zstream *shl_checkzstream(lua_State *L, int i)
{
    shl_zstream *u = (shl_zstream *)luaL_checkudata(L, i, SHL_ZSTREAM);
    luaL_argcheck(L, u->zs != NULL, i, "the stream is closed");
    return u->zs;
}

/* core.zopen(path [, offset]) -> stream, or nil, err, code; "-" is
 * standard input; offset: read a plain file from that byte on */
static int z_open(lua_State *L)
{
    const char *path = luaL_checkstring(L, 1);
    lua_Number off = luaL_optnumber(L, 2, 0);
    shl_zstream *u = (shl_zstream *)shl_newhandle(L, sizeof *u, SHL_ZSTREAM);
    sh_error err;
    sh_status st;
    if (strcmp(path, "-") == 0) st = sh_zstream_open_fd(STDIN_FILENO, "standard input", &u->zs, &err);
    else st = sh_zstream_open_at(path, off > 0 ? (uint64_t)off : 0, &u->zs, &err);
    if (st != SH_OK) return shl_fail(L, &err);
    return 1;
}

/* s:line(max) -> the next line (without "\n"); nil at the end; false, msg for
 * a line over max bytes (passed over: call again); nil, msg, code when the
 * stream cannot go on. */
static int z_line(lua_State *L)
{
    sh_zstream *zs = shl_checkzstream(L, 1);
    lua_Number max = luaL_checknumber(L, 2);
    const char *line;
    size_t len;
    sh_error err;
    sh_status st;
    luaL_argcheck(L, max >= 1, 2, "the line limit must be at least 1 byte");
    st = sh_zstream_line(zs, (size_t)max, &line, &len, &err);
    if (st == SH_ELIMIT && sh_zstream_failed(zs) == SH_OK) {
        lua_pushboolean(L, 0);
        lua_pushstring(L, err.msg);
        return 2;
    }
    if (st != SH_OK) return shl_fail(L, &err);
    if (!line) { lua_pushnil(L); return 1; }
    lua_pushlstring(L, line, len);
    return 1;
}

/* s:peek(n) -> up to n decompressed bytes from the current position, not consumed */
static int z_peek(lua_State *L)
{
    sh_zstream *zs = shl_checkzstream(L, 1);
    lua_Integer n = luaL_checkinteger(L, 2);
    const char *p;
    size_t got;
    sh_error err;
    luaL_argcheck(L, n >= 0 && n <= (1 << 20), 2, "peek at most 1 MiB");
    if (sh_zstream_peek(zs, (size_t)n, &p, &got, &err) != SH_OK) return shl_fail(L, &err);
    lua_pushlstring(L, p ? p : "", got);
    return 1;
}

/* s:read(n) -> up to n bytes ("" at the end), or nil, err, code. Read into
 * one malloc'ed buffer (in a box: freed if a Lua error unwinds) that grows
 * by realloc, then made a string: a large read (standard input as one
 * document, up to --max-bytes) peaks at twice its size, where a luaL_Buffer
 * under LuaJIT concatenates pieces into several copies (1.4 GB for 300 MB). */
static int z_read(lua_State *L)
{
    sh_zstream *zs = shl_checkzstream(L, 1);
    lua_Integer n = luaL_checkinteger(L, 2);
    void **slot;
    char *buf = NULL;
    size_t len = 0, cap = 0, got;
    sh_error err;
    luaL_argcheck(L, n >= 0 && n <= ((lua_Integer)1 << 30), 2, "read at most 1 GiB at a time");
    slot = shl_newptrbox(L);
    while ((size_t)n > len) {
        size_t want = (size_t)n - len;
        if (len == cap) {
            size_t nc = cap ? cap * 2 : 65536;
            char *q;
            if (nc > (size_t)n) nc = (size_t)n;
            if (!(q = (char *)realloc(buf, nc))) return luaL_error(L, "out of memory reading %d bytes", (int)nc);
            *slot = buf = q;
            cap = nc;
        }
        if (want > cap - len) want = cap - len;
        if (sh_zstream_read(zs, buf + len, want, &got, &err) != SH_OK) return shl_fail(L, &err);
        if (got == 0) break;
        len += got;
    }
    lua_pushlstring(L, buf ? buf : "", len);
    shl_box_done(L, -2);
    return 1;
}

/* s:offset() -> compressed bytes read so far; s:lineno(); s:kind() */
static int z_offset(lua_State *L)
{
    lua_pushnumber(L, (lua_Number)sh_zstream_in_bytes(shl_checkzstream(L, 1)));
    return 1;
}

/* s:pos() -> decompressed bytes consumed so far */
static int z_pos(lua_State *L)
{
    lua_pushnumber(L, (lua_Number)sh_zstream_pos(shl_checkzstream(L, 1)));
    return 1;
}

static int z_lineno(lua_State *L)
{
    lua_pushinteger(L, (lua_Integer)sh_zstream_lineno(shl_checkzstream(L, 1)));
    return 1;
}

static int z_kind(lua_State *L)
{
    lua_pushstring(L, sh_zio_kind_name(sh_zstream_kind(shl_checkzstream(L, 1))));
    return 1;
}

static int z_close(lua_State *L)
{
    shl_zstream *u = (shl_zstream *)luaL_checkudata(L, 1, SHL_ZSTREAM);
    sh_zstream_close(u->zs);
    u->zs = NULL;
    return 0;
}

static void free_zbuf(void *p)
{
    free(((sh_zbuf *)p)->p);
}

/* core.zread(path [, max]) -> the whole document, decompressed if it is gzip
 * or zstd, and its kind ("plain", "gzip", "zstd"); or nil, err, code (EIO;
 * ELIMIT beyond max bytes; EFORMAT for damaged data). */
static int z_readfile(lua_State *L)
{
    const char *path = luaL_checkstring(L, 1);
    lua_Number max = luaL_optnumber(L, 2, 0);
    sh_zbuf *b;
    sh_zkind k;
    sh_error err;
    luaL_argcheck(L, max >= 0, 2, "the limit must be a number of bytes (0: none)");
    b = (sh_zbuf *)shl_newbox(L, sizeof *b, free_zbuf);
    if (sh_zio_read_file(path, (size_t)max, b, &k, &err) != SH_OK) return shl_fail(L, &err);
    lua_pushlstring(L, b->p ? b->p : "", b->len);
    shl_box_done(L, -2);
    lua_pushstring(L, sh_zio_kind_name(k));
    return 2;
}

/* core.zdecompress(bytes [, max, name]) -> the bytes decompressed (or as they are), kind */
static int z_decompress(lua_State *L)
{
    size_t n;
    const char *in = luaL_checklstring(L, 1, &n);
    lua_Number max = luaL_optnumber(L, 2, 0);
    const char *name = luaL_optstring(L, 3, "string");
    sh_zbuf *b;
    sh_zkind k;
    sh_error err;
    luaL_argcheck(L, max >= 0, 2, "the limit must be a number of bytes (0: none)");
    b = (sh_zbuf *)shl_newbox(L, sizeof *b, free_zbuf);
    if (sh_zio_decompress(in, n, (size_t)max, name, b, &k, &err) != SH_OK) return shl_fail(L, &err);
    lua_pushlstring(L, b->p ? b->p : "", b->len);
    shl_box_done(L, -2);
    lua_pushstring(L, sh_zio_kind_name(k));
    return 2;
}

static const luaL_Reg stream_methods[] = {
    { "line", z_line }, { "peek", z_peek }, { "read", z_read }, { "offset", z_offset }, { "pos", z_pos },
    { "lineno", z_lineno }, { "kind", z_kind }, { "close", z_close }, { NULL, NULL }
};

static const luaL_Reg funcs[] = {
    { "zopen", z_open }, { "zread", z_readfile }, { "zdecompress", z_decompress }, { NULL, NULL }
};

void shl_open_zio(lua_State *L)
{
    shl_newclass(L, SHL_ZSTREAM, stream_methods, NULL, z_close);
    shl_setfuncs(L, funcs);
}
