/* shingle.core bindings for reading inputs: WARC files (core/warc.h) and the
 * links of HTML pages (core/links.h). */
#include <stdlib.h>
#include <string.h>
#include "lshingle.h"
#include "links.h"
#include "warc.h"
#include "zio.h"

#define SHL_WARC "shingle.WarcReader"

typedef struct shl_warc {
    sh_warc *w;
    FILE *over;      /* over a core.zopen stream: the stdio view of its bytes */
    int ref;         /* and the stream, kept alive */
    char name[1024];
    size_t max_record; /* the limit in force, for messages */
} shl_warc;

/* core.warc(path | stream [, { max_record = bytes }]) -> reader, or nil, err.
 * A stream (core.zopen) is read from its current position, decompressed:
 * standard input or a .warc.zst file. */
static int warc_open(lua_State *L)
{
    const char *path = lua_isuserdata(L, 1) ? NULL : luaL_checkstring(L, 1);
    sh_warc_opts o;
    shl_warc *u;
    sh_error err;
    memset(&o, 0, sizeof o);
    if (lua_istable(L, 2)) o.max_record = (size_t)shl_opt_num(L, 2, "max_record", 0);
    u = (shl_warc *)shl_newhandle(L, sizeof *u, SHL_WARC);
    u->ref = LUA_NOREF;
    u->max_record = o.max_record ? o.max_record : SH_WARC_DEFAULT_MAX_RECORD;
    if (!path) {
        struct sh_zstream *zs = shl_checkzstream(L, 1);
        const char *name = luaL_optstring(L, 3, "stream");
        snprintf(u->name, sizeof u->name, "%s", name);
        u->over = sh_zstream_file(zs);
        if (!u->over) return luaL_error(L, "cannot make a stdio stream over %s", name);
        lua_pushvalue(L, 1);
        u->ref = luaL_ref(L, LUA_REGISTRYINDEX);
        if (sh_warc_open_stream(u->over, u->name, &o, &u->w, &err) != SH_OK) return shl_fail(L, &err);
        return 1;
    }
    snprintf(u->name, sizeof u->name, "%s", path);
    if (strcmp(path, "-") == 0) {
        if (sh_warc_open_stream(stdin, "standard input", &o, &u->w, &err) != SH_OK) return shl_fail(L, &err);
    } else if (sh_warc_open(path, &o, &u->w, &err) != SH_OK) {
        return shl_fail(L, &err);
    }
    return 1;
}

static shl_warc *check_warc(lua_State *L)
{
    shl_warc *u = (shl_warc *)luaL_checkudata(L, 1, SHL_WARC);
    luaL_argcheck(L, u->w != NULL, 1, "the WARC reader is closed");
    return u;
}

static int is_html(const char *ct)
{
    return ct && (strstr(ct, "html") != NULL);
}

/* r:batch(n) -> docs, errors: up to n documents (response, resource and
 * conversion records) as { url, date, text, html, offset, length }; records that
 * could not be read as error messages naming the file and byte offset. An
 * empty docs list and no errors means the end. */
static int warc_batch(lua_State *L)
{
    shl_warc *u = check_warc(L);
    lua_Integer max = luaL_optinteger(L, 2, 256);
    int nd = 0, ne = 0;
    lua_newtable(L);
    lua_newtable(L);
    while (nd < max) {
        const sh_warc_record *r;
        sh_error err;
        sh_status st = sh_warc_next(u->w, &r, &err);
        if (st != SH_OK) {
            lua_pushstring(L, err.msg);
            lua_rawseti(L, -2, ++ne);
            if (st != SH_EFORMAT) break; /* I/O or memory: the reader is finished */
            continue;
        }
        if (!r) break;
        if (!r->type || (strcmp(r->type, "response") != 0 && strcmp(r->type, "resource") != 0 &&
                         strcmp(r->type, "conversion") != 0))
            continue;
        if (r->skipped) {
            char msg[1300];
            snprintf(msg, sizeof msg, "%s: record at byte %llu is larger than max_record, the limit of %zu bytes "
                     "(raise --max-bytes to include it); skipped", u->name, (unsigned long long)r->offset, u->max_record);
            lua_pushstring(L, msg);
            lua_rawseti(L, -2, ++ne);
            continue;
        }
        lua_createtable(L, 0, 5);
        lua_pushstring(L, r->target_uri ? r->target_uri : "");
        lua_setfield(L, -2, "url");
        if (r->date) { lua_pushstring(L, r->date); lua_setfield(L, -2, "date"); }
        lua_pushlstring(L, r->payload ? r->payload : "", r->payload ? r->payload_len : 0);
        lua_setfield(L, -2, "text");
        lua_pushboolean(L, is_html(r->http_content_type ? r->http_content_type : r->content_type));
        lua_setfield(L, -2, "html");
        lua_pushinteger(L, (lua_Integer)r->offset);
        lua_setfield(L, -2, "offset");
        lua_pushinteger(L, (lua_Integer)r->length); /* bytes in the file; 0 when not known */
        lua_setfield(L, -2, "length");
        lua_rawseti(L, -3, ++nd);
    }
    return 2;
}

/* r:close() (and __gc, __close): idempotent. */
static int warc_close(lua_State *L)
{
    shl_warc *u = (shl_warc *)luaL_checkudata(L, 1, SHL_WARC);
    if (u->w) { sh_warc_close(u->w); u->w = NULL; }
    if (u->over) { fclose(u->over); u->over = NULL; }
    luaL_unref(L, LUA_REGISTRYINDEX, u->ref);
    u->ref = LUA_NOREF;
    return 0;
}

static void free_links(void *p)
{
    sh_links_free((sh_links *)p);
}

/* core.links(html, page_url) -> list of absolute URLs (fragments dropped) */
static int links(lua_State *L)
{
    size_t n, un, i;
    const char *html = luaL_checklstring(L, 1, &n);
    const char *url = luaL_checklstring(L, 2, &un);
    sh_links *ls = (sh_links *)shl_newbox(L, sizeof *ls, free_links);
    sh_error err;
    if (sh_links_extract(html, n, url, un, ls, &err) != SH_OK) return shl_fail(L, &err);
    lua_createtable(L, (int)ls->n, 0);
    for (i = 0; i < ls->n; i++) {
        lua_pushlstring(L, ls->text + ls->v[i].off, ls->v[i].len);
        lua_rawseti(L, -2, (int)(i + 1));
    }
    shl_box_done(L, -2);
    return 1;
}

void shl_open_io(lua_State *L)
{
    static const luaL_Reg m[] = { { "batch", warc_batch }, { NULL, NULL } };
    static const luaL_Reg funcs[] = { { "warc", warc_open }, { "links", links }, { NULL, NULL } };
    shl_newclass(L, SHL_WARC, m, NULL, warc_close);
    shl_setfuncs(L, funcs);
}
