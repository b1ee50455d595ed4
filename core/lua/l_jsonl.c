/* shingle.core binding for JSON Lines input (core/jsonl.h): a streaming,
 * bounded reader that hands out documents in batches. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "jsonl.h"
#include "lshingle.h"
#include "zio.h"

#define SHL_JSONL "shingle.JsonlReader"

/* ---- reading ahead --------------------------------------------------------
 * A plain file is read and its lines parsed (sh_jsonl_next: the JSON decoded
 * and checked, in C) by a thread of the reader's own, one batch ahead of
 * r:batch: while the caller sketches a batch on the pool and writes it,
 * the next one is being read and decoded on the other core. Each batch is
 * what r:batch would have made at that point (the same documents, errors and
 * end), copied into an arena; r:batch only makes the Lua values. */
typedef struct pf_doc {
    size_t text, text_n, url, url_n, date, date_n;   /* offsets into the arena */
    uint64_t line, at;
    size_t at_len;
    unsigned char has_url, has_date;
} pf_doc;

typedef struct pf_batch {
    char *arena;
    size_t used, cap;
    pf_doc *docs;
    size_t nd, capd, pos;      /* documents, and how many r:batch has handed out */
    size_t *errs;              /* offsets of NUL-ended messages */
    size_t ne, cape;
    int done, full, errs_out;  /* the input ended; filled, not yet taken; errors handed out */
    uint64_t offset;           /* sh_jsonl_offset after it */
} pf_batch;

typedef struct pf {
    pthread_t tid;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    pf_batch b[2];
    int take, stop, finished;  /* the batch r:batch reads from; stop the thread; r:batch saw the end */
    size_t n;                  /* documents per batch */
    sh_jsonl_reader *r;
    const sh_jsonl_fields *f;
    uint64_t offset;           /* of the batches handed out */
} pf;

typedef struct shl_jsonl {
    sh_jsonl_reader *r;
    sh_jsonl_fields f;
    char names[4][256];
    sh_zstream *zs;     /* a compressed input (core/zio.h): owned unless ref holds its userdata */
    int ref;
    int path_ref;       /* a plain file: its path, given to each document as `source` (LUA_NOREF: none) */
    pf *ahead;          /* the reading-ahead thread, once started (plain files) */
    int no_ahead;       /* option ahead = false: read on the calling thread */
} shl_jsonl;

/* room for k more bytes in b's arena; 0 when memory is out */
static int pf_room(pf_batch *b, size_t k)
{
    if (b->used + k <= b->cap) return 1;
    {
        size_t nc = b->cap ? b->cap : (size_t)1 << 20;
        char *a;
        while (nc < b->used + k) nc *= 2;
        if (!(a = (char *)realloc(b->arena, nc))) return 0;
        b->arena = a;
        b->cap = nc;
    }
    return 1;
}

static size_t pf_put(pf_batch *b, const char *p, size_t n)
{
    size_t at = b->used;
    memcpy(b->arena + at, p, n);
    b->used += n;
    return at;
}

static int pf_error(pf_batch *b, const char *msg)
{
    size_t k = strlen(msg) + 1;
    if (b->ne == b->cape) {
        size_t nc = b->cape ? 2 * b->cape : 16;
        size_t *e = (size_t *)realloc(b->errs, nc * sizeof *e);
        if (!e) return 0;
        b->errs = e;
        b->cape = nc;
    }
    if (!pf_room(b, k)) return 0;
    b->errs[b->ne++] = pf_put(b, msg, k);
    return 1;
}

/* one batch, as jsonl_batch reads it on the calling thread */
static void pf_fill(pf *a, pf_batch *b)
{
    b->used = b->nd = b->ne = b->pos = 0;
    b->done = b->errs_out = 0;
    while (b->nd < a->n) {
        sh_jsonl_doc d;
        uint64_t line = 0;
        sh_error err;
        sh_status st = sh_jsonl_next(a->r, a->f, &d, &line, &err);
        pf_doc *x;
        if (st != SH_OK) {
            if (!pf_error(b, err.msg)) { b->done = 1; break; }
            if (st == SH_EIO || st == SH_ENOMEM) { b->done = 1; break; }
            continue;
        }
        if (!d.text.p) { b->done = 1; break; }
        if (b->nd == b->capd) {
            size_t nc = b->capd ? 2 * b->capd : 64;
            pf_doc *nd = (pf_doc *)realloc(b->docs, nc * sizeof *nd);
            if (!nd) { pf_error(b, "out of memory reading ahead"); b->done = 1; break; }
            b->docs = nd;
            b->capd = nc;
        }
        if (!pf_room(b, d.text.n + d.url.n + d.date.n + 3)) { pf_error(b, "out of memory reading ahead"); b->done = 1; break; }
        x = &b->docs[b->nd++];
        memset(x, 0, sizeof *x);
        x->text = pf_put(b, d.text.p, d.text.n);
        x->text_n = d.text.n;
        if (d.url.p) { x->has_url = 1; x->url = pf_put(b, d.url.p, d.url.n); x->url_n = d.url.n; }
        if (d.date.p) { x->has_date = 1; x->date = pf_put(b, d.date.p, d.date.n); x->date_n = d.date.n; }
        x->line = line;
        x->at = sh_jsonl_line_offset(a->r, &x->at_len);
    }
    b->offset = sh_jsonl_offset(a->r);
}

static void *pf_run(void *arg)
{
    pf *a = (pf *)arg;
    int k = 0;
    for (;;) {
        pf_batch *b = &a->b[k];
        pthread_mutex_lock(&a->mu);
        while (b->full && !a->stop) pthread_cond_wait(&a->cv, &a->mu);
        if (a->stop) { pthread_mutex_unlock(&a->mu); break; }
        pthread_mutex_unlock(&a->mu);
        pf_fill(a, b);
        pthread_mutex_lock(&a->mu);
        b->full = 1;
        pthread_cond_broadcast(&a->cv);
        pthread_mutex_unlock(&a->mu);
        if (b->done) break;
        k ^= 1;
    }
    return NULL;
}

static void pf_free(pf *a)
{
    int k;
    if (!a) return;
    pthread_mutex_lock(&a->mu);
    a->stop = 1;
    pthread_cond_broadcast(&a->cv);
    pthread_mutex_unlock(&a->mu);
    pthread_join(a->tid, NULL);
    pthread_mutex_destroy(&a->mu);
    pthread_cond_destroy(&a->cv);
    for (k = 0; k < 2; k++) {
        free(a->b[k].arena);
        free(a->b[k].docs);
        free(a->b[k].errs);
    }
    free(a);
}

/* start reading ahead in batches of n; NULL (read on this thread) if a thread cannot be had */
static pf *pf_start(sh_jsonl_reader *r, const sh_jsonl_fields *f, size_t n)
{
    pf *a = (pf *)calloc(1, sizeof *a);
    if (!a) return NULL;
    a->r = r;
    a->f = f;
    a->n = n;
    pthread_mutex_init(&a->mu, NULL);
    pthread_cond_init(&a->cv, NULL);
    if (pthread_create(&a->tid, NULL, pf_run, a) != 0) {
        pthread_mutex_destroy(&a->mu);
        pthread_cond_destroy(&a->cv);
        free(a);
        return NULL;
    }
    return a;
}

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
        u->no_ahead = !shl_opt_bool(L, 2, "ahead", 1);
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
static int jsonl_batch_ahead(lua_State *L, shl_jsonl *u, lua_Integer max)
{
    pf *a = u->ahead;
    pf_batch *b;
    int nd = 0, ne = 0, done = 0;
    size_t i;
    lua_newtable(L);
    lua_newtable(L);
    if (a->finished) { lua_pushboolean(L, 1); return 3; }
    b = &a->b[a->take];
    pthread_mutex_lock(&a->mu);
    while (!b->full) pthread_cond_wait(&a->cv, &a->mu);
    pthread_mutex_unlock(&a->mu);
    if (!b->errs_out) {
        for (i = 0; i < b->ne; i++) {
            lua_pushstring(L, b->arena + b->errs[i]);
            lua_rawseti(L, -2, ++ne);
        }
        b->errs_out = 1;
    }
    for (; b->pos < b->nd && nd < max; b->pos++) {
        const pf_doc *x = &b->docs[b->pos];
        lua_createtable(L, 0, 7);
        lua_pushlstring(L, b->arena + x->text, x->text_n);
        lua_setfield(L, -2, "text");
        if (x->has_url) lua_pushlstring(L, b->arena + x->url, x->url_n);
        else {
            char num[24];
            snprintf(num, sizeof num, "%llu", (unsigned long long)x->line);
            lua_pushfstring(L, "%s:%s", sh_jsonl_name(u->r), num);
        }
        lua_setfield(L, -2, "url");
        if (x->has_date) { lua_pushlstring(L, b->arena + x->date, x->date_n); lua_setfield(L, -2, "date"); }
        lua_pushinteger(L, (lua_Integer)x->line);
        lua_setfield(L, -2, "line");
        if (u->path_ref != LUA_NOREF) {
            lua_rawgeti(L, LUA_REGISTRYINDEX, u->path_ref);
            lua_setfield(L, -2, "source");
            lua_pushinteger(L, (lua_Integer)x->at);
            lua_setfield(L, -2, "at");
            lua_pushinteger(L, (lua_Integer)x->at_len);
            lua_setfield(L, -2, "at_len");
        }
        lua_rawseti(L, -3, ++nd);
    }
    if (b->pos == b->nd) {
        /* all of it handed out: the slot goes back to the thread */
        a->offset = b->offset;
        done = b->done;
        pthread_mutex_lock(&a->mu);
        b->full = 0;
        pthread_cond_broadcast(&a->cv);
        pthread_mutex_unlock(&a->mu);
        a->take ^= 1;
        if (done) a->finished = 1;
    }
    lua_pushboolean(L, done);
    return 3;
}

static int jsonl_batch(lua_State *L)
{
    shl_jsonl *u = check_reader(L);
    lua_Integer max = luaL_optinteger(L, 2, 256);
    int nd = 0, ne = 0, done = 0;
    if (!u->ahead && !u->zs && !u->no_ahead && max > 0) u->ahead = pf_start(u->r, &u->f, (size_t)max);
    if (u->ahead) return jsonl_batch_ahead(L, u, max);
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
    shl_jsonl *u = check_reader(L);
    lua_pushnumber(L, (lua_Number)(u->ahead ? u->ahead->offset : sh_jsonl_offset(u->r)));
    return 1;
}

/* r:close(): idempotent; also __gc and __close */
static int jsonl_close(lua_State *L)
{
    shl_jsonl *u = (shl_jsonl *)luaL_checkudata(L, 1, SHL_JSONL);
    pf_free(u->ahead); /* the thread stops before the reader it reads goes */
    u->ahead = NULL;
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
