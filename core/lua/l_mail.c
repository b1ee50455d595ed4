/* shingle.core bindings for email (core/mail.h): recognising messages and
 * mbox archives by content, rendering a message as what it says, reading
 * the messages of an mbox (plain or compressed) in batches. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "lshingle.h"
#include "mail.h"
#include "zio.h"

#define SHL_MBOX "shingle.Mbox"
#define SHL_SNIFF "shingle.MailSniff"

static const char *kind_name(sh_mail_kind k)
{
    return k == SH_MAIL_MBOX ? "mbox" : k == SH_MAIL_MESSAGE ? "message" : NULL;
}

/* core.mail_sniff(bytes) -> "message", "mbox" or nil */
static int l_sniff(lua_State *L)
{
    size_t n;
    const char *p = luaL_checklstring(L, 1, &n);
    const char *k = kind_name(sh_mail_sniff(p, n));
    if (k) lua_pushstring(L, k);
    else lua_pushnil(L);
    return 1;
}

/* core.mail_sniff_files(paths, i, j) -> { [k] = "mbox" | "message" } for the
 * files paths[i..j] that hold mail; compressed files are looked into. Reads
 * at most the first 4 KiB of each; a file that cannot be read is left out
 * (the reader reports it later). */
static int l_sniff_files(lua_State *L)
{
    lua_Integer i = luaL_checkinteger(L, 2), j = luaL_checkinteger(L, 3), k;
    char head[4096];
    luaL_checktype(L, 1, LUA_TTABLE);
    lua_newtable(L);
    for (k = i; k <= j; k++) {
        const char *path, *name;
        size_t got;
        sh_error err;
        sh_mail_kind kind = SH_MAIL_NONE;
        lua_rawgeti(L, 1, (int)k);
        path = lua_tostring(L, -1);
        if (!path) { lua_pop(L, 1); continue; }
        if (sh_zio_head(path, head, sizeof head, &got, &err) == SH_OK) kind = sh_mail_sniff(head, got);
        lua_pop(L, 1);
        name = kind_name(kind);
        if (name) {
            lua_pushstring(L, name);
            lua_rawseti(L, -2, (int)k);
        }
    }
    return 1;
}

/* ---- the same, on a thread of its own ----------------------------------------- */

/* core.mail_sniff_start(paths, i, j) -> a handle; h:wait() -> the table
 * core.mail_sniff_files(paths, i, j) gives. The files are read on a thread
 * while the caller goes on (shingle.input sniffs the next batch of a
 * directory while the pool sketches this one). The paths are copied when it
 * starts. */
typedef struct sniff {
    pthread_t tid;
    int started;          /* the thread runs (joined by wait or close) */
    char **paths;         /* paths[0..n), NULL where not a string */
    unsigned char *kinds; /* sh_mail_kind of each */
    size_t n;
    lua_Integer first;    /* the index of paths[0] in the caller's list */
} sniff;

static void *sniff_run(void *arg)
{
    sniff *s = (sniff *)arg;
    char head[4096];
    size_t k;
    for (k = 0; k < s->n; k++) {
        size_t got;
        sh_error err;
        s->kinds[k] = (unsigned char)SH_MAIL_NONE;
        if (s->paths[k] && sh_zio_head(s->paths[k], head, sizeof head, &got, &err) == SH_OK)
            s->kinds[k] = (unsigned char)sh_mail_sniff(head, got);
    }
    return NULL;
}

static void sniff_free(sniff *s)
{
    size_t k;
    if (s->started) pthread_join(s->tid, NULL);
    s->started = 0;
    if (s->paths)
        for (k = 0; k < s->n; k++) free(s->paths[k]);
    free(s->paths);
    free(s->kinds);
    s->paths = NULL;
    s->kinds = NULL;
    s->n = 0;
}

static int sniff_close(lua_State *L)
{
    sniff_free((sniff *)luaL_checkudata(L, 1, SHL_SNIFF));
    return 0;
}

static int l_sniff_start(lua_State *L)
{
    lua_Integer i = luaL_checkinteger(L, 2), j = luaL_checkinteger(L, 3), k;
    sniff *s;
    luaL_checktype(L, 1, LUA_TTABLE);
    s = (sniff *)shl_newhandle(L, sizeof(sniff), SHL_SNIFF);
    s->first = i;
    if (j < i) return 1;
    s->paths = (char **)calloc((size_t)(j - i + 1), sizeof *s->paths);
    s->kinds = (unsigned char *)calloc((size_t)(j - i + 1), 1);
    if (!s->paths || !s->kinds) { sniff_free(s); return luaL_error(L, "out of memory"); }
    s->n = (size_t)(j - i + 1);
    for (k = i; k <= j; k++) {
        size_t len;
        const char *path;
        lua_rawgeti(L, 1, (int)k);
        path = lua_type(L, -1) == LUA_TSTRING ? lua_tolstring(L, -1, &len) : NULL;
        if (path) {
            char *c = (char *)malloc(len + 1);
            if (!c) { lua_pop(L, 1); sniff_free(s); return luaL_error(L, "out of memory"); }
            memcpy(c, path, len + 1);
            s->paths[k - i] = c;
        }
        lua_pop(L, 1);
    }
    if (pthread_create(&s->tid, NULL, sniff_run, s) == 0) s->started = 1;
    else sniff_run(s); /* no thread: sniffed here */
    return 1;
}

static int sniff_wait(lua_State *L)
{
    sniff *s = (sniff *)luaL_checkudata(L, 1, SHL_SNIFF);
    size_t k;
    if (s->started) pthread_join(s->tid, NULL);
    s->started = 0;
    lua_newtable(L);
    for (k = 0; k < s->n; k++) {
        const char *name = kind_name((sh_mail_kind)s->kinds[k]);
        if (name) {
            lua_pushstring(L, name);
            lua_rawseti(L, -2, (int)(s->first + (lua_Integer)k));
        }
    }
    sniff_free(s);
    return 1;
}

/* A parser context in a box, so its buffers are freed if Lua unwinds. */
static void free_mail(void *p)
{
    sh_mail_free(*(sh_mail **)p);
}

/* core.mail_render(bytes [, max]) -> the rendering (HTML, UTF-8) and
 * { subject, message_id, date, parts, left_out, html_parts, warning }; or
 * nil, err, code (ELIMIT beyond max bytes). */
static int l_render(lua_State *L)
{
    size_t n;
    const char *p = luaL_checklstring(L, 1, &n);
    lua_Number max = luaL_optnumber(L, 2, 0);
    sh_mail **m = (sh_mail **)shl_newbox(L, sizeof *m, free_mail);
    sh_mail_result r;
    sh_error err;
    if (sh_mail_new(m, &err) != SH_OK) return shl_raise(L, &err);
    if (sh_mail_render(*m, p, n, max > 0 ? (size_t)max : 0, &r, &err) != SH_OK) return shl_fail(L, &err);
    lua_pushlstring(L, r.text, r.len);
    lua_createtable(L, 0, 7);
    lua_pushstring(L, r.subject); lua_setfield(L, -2, "subject");
    lua_pushstring(L, r.message_id); lua_setfield(L, -2, "message_id");
    lua_pushstring(L, r.date); lua_setfield(L, -2, "date");
    lua_pushinteger(L, r.parts); lua_setfield(L, -2, "parts");
    lua_pushinteger(L, r.left_out); lua_setfield(L, -2, "left_out");
    lua_pushinteger(L, r.html_parts); lua_setfield(L, -2, "html_parts");
    if (r.warning) { lua_pushstring(L, r.warning); lua_setfield(L, -2, "warning"); }
    shl_box_done(L, -3);
    return 2;
}

typedef struct shl_mbox {
    sh_zstream *zs;      /* owned when opened from a path */
    sh_mbox *mb;
    int ref;             /* the core.zopen stream it reads, kept alive */
    char name[512];
} shl_mbox;

static int mbox_close(lua_State *L)
{
    shl_mbox *u = (shl_mbox *)luaL_checkudata(L, 1, SHL_MBOX);
    sh_mbox_close(u->mb);
    u->mb = NULL;
    if (u->ref == LUA_NOREF) sh_zstream_close(u->zs);
    u->zs = NULL;
    luaL_unref(L, LUA_REGISTRYINDEX, u->ref);
    u->ref = LUA_NOREF;
    return 0;
}

/* core.mbox(path | stream [, max_message, name]) -> reader, or nil, err, code */
static int l_mbox(lua_State *L)
{
    lua_Number max = luaL_optnumber(L, 2, 0);
    shl_mbox *u = (shl_mbox *)shl_newhandle(L, sizeof *u, SHL_MBOX);
    sh_error err;
    u->ref = LUA_NOREF;
    if (lua_isuserdata(L, 1)) {
        u->zs = shl_checkzstream(L, 1);
        lua_pushvalue(L, 1);
        u->ref = luaL_ref(L, LUA_REGISTRYINDEX);
        snprintf(u->name, sizeof u->name, "%s", luaL_optstring(L, 3, "stream"));
    } else {
        const char *path = luaL_checkstring(L, 1);
        snprintf(u->name, sizeof u->name, "%s", path);
        if (sh_zstream_open(path, &u->zs, &err) != SH_OK) return shl_fail(L, &err);
    }
    if (sh_mbox_open(u->zs, max > 0 ? (size_t)max : 0, &u->mb, &err) != SH_OK) return shl_fail(L, &err);
    return 1;
}

/* r:batch(n) -> docs { text, url = NAME#N, date, mbox = NAME, number = N,
 * from_line }, errors, done. A message
 * over the limit is an error naming it; a stream failure ends the reading. */
static int mbox_batch(lua_State *L)
{
    shl_mbox *u = (shl_mbox *)luaL_checkudata(L, 1, SHL_MBOX);
    lua_Integer want = luaL_optinteger(L, 2, 256);
    int nd = 0, ne = 0, done = 0;
    luaL_argcheck(L, u->mb != NULL, 1, "the mbox reader is closed");
    lua_newtable(L);
    lua_newtable(L);
    while (nd < want) {
        const char *msg, *from;
        size_t len;
        uint64_t num;
        sh_error err;
        sh_status st = sh_mbox_next(u->mb, &msg, &len, &from, &num, &err);
        if (st == SH_ELIMIT) {
            lua_pushfstring(L, "%s: %s", u->name, err.msg);
            lua_rawseti(L, -2, ++ne);
            continue;
        }
        if (st != SH_OK) {
            lua_pushstring(L, err.msg);
            lua_rawseti(L, -2, ++ne);
            done = 1;
            break;
        }
        if (!msg) { done = 1; break; }
        lua_createtable(L, 0, 6);
        lua_pushlstring(L, msg, len);
        lua_setfield(L, -2, "text");
        lua_pushfstring(L, "%s#%d", u->name, (int)num);
        lua_setfield(L, -2, "url");
        lua_pushstring(L, u->name);
        lua_setfield(L, -2, "mbox");
        lua_pushinteger(L, (lua_Integer)num);
        lua_setfield(L, -2, "number");
        lua_pushfstring(L, "From %s", from);
        lua_setfield(L, -2, "from_line");
        {
            /* the date of the separator line: what follows the sender */
            const char *sp = strchr(from, ' ');
            if (sp) {
                while (*sp == ' ') sp++;
                if (*sp) { lua_pushstring(L, sp); lua_setfield(L, -2, "date"); }
            }
        }
        lua_rawseti(L, -3, ++nd);
    }
    lua_pushboolean(L, done);
    return 3;
}

static const luaL_Reg mbox_methods[] = { { "batch", mbox_batch }, { "close", mbox_close }, { NULL, NULL } };

static const luaL_Reg funcs[] = {
    { "mail_sniff", l_sniff }, { "mail_sniff_files", l_sniff_files }, { "mail_sniff_start", l_sniff_start },
    { "mail_render", l_render }, { "mbox", l_mbox }, { NULL, NULL }
};

void shl_open_mail(lua_State *L)
{
    static const luaL_Reg sniff_methods[] = { { "wait", sniff_wait }, { NULL, NULL } };
    shl_newclass(L, SHL_MBOX, mbox_methods, NULL, mbox_close);
    shl_newclass(L, SHL_SNIFF, sniff_methods, NULL, sniff_close);
    shl_setfuncs(L, funcs);
}
