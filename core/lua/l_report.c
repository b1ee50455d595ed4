/* shingle.core bindings for the ends of a cluster run: the report
 * (lua/shingle/pipeline.lua, M:report): pairs.jsonl written in bulk from
 * links.bin, the same bytes the output writer (lua/shingle/writer.lua over
 * core/jsonw.c) makes record by record; and its start: a directory's entries
 * with their kinds, sizes and times in one call (shingle.input's walk).
 * Document ids are 1-based here. */
#define _DEFAULT_SOURCE 1 /* d_type, dirfd, fstatat */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "lshingle.h"
#include "cluster.h"
#include "outdir.h"
#include "jsonw.h"
#include "recfile.h"

static void close_recfile(void *p)
{
    sh_recfile_close((sh_recfile *)p);
}

/* core.link_ends(dir, wanted) -> wanted, with wanted[id] = true for both ends of every link */
static int c_link_ends(lua_State *L)
{
    const char *dir = luaL_checkstring(L, 1);
    sh_recfile *f;
    const sh_linkrec *r;
    size_t n, i;
    sh_error err;
    luaL_checktype(L, 2, LUA_TTABLE);
    f = (sh_recfile *)shl_newbox(L, sizeof(sh_recfile), close_recfile);
    if (sh_run_links(f, dir, &r, &n, &err) != SH_OK) return shl_fail(L, &err);
    for (i = 0; i < n; i++) {
        lua_pushboolean(L, 1);
        lua_rawseti(L, 2, (lua_Integer)r[i].a + 1);
        lua_pushboolean(L, 1);
        lua_rawseti(L, 2, (lua_Integer)r[i].b + 1);
    }
    shl_box_done(L, -1);
    lua_pushvalue(L, 2);
    return 1;
}

/* scores are stored as 32-bit floats: four decimals is what they carry
 * (pipeline.lua's r4: floor(x * 10000 + 0.5) / 10000) */
static int put_score(sh_textbuf *b, const char *key, size_t kn, float x)
{
    double k = floor((double)x * 10000 + 0.5);
    if (!sh_textbuf_put(b, key, kn)) return 0;
    if (k >= 1 && k <= 9999) {
        /* k / 10000 in (0, 1): sh_json_number's shortest round trip is
         * "0." and k's four digits without trailing zeros (made here without
         * printf and strtod, the bulk of the time) */
        char t[6];
        int d = (int)k, len = 6;
        t[0] = '0'; t[1] = '.';
        t[2] = (char)('0' + d / 1000); t[3] = (char)('0' + d / 100 % 10);
        t[4] = (char)('0' + d / 10 % 10); t[5] = (char)('0' + d % 10);
        while (t[len - 1] == '0') len--;
        return sh_textbuf_put(b, t, (size_t)len);
    }
    return sh_json_number(b, k / 10000);
}

#define KEY(b, s) sh_textbuf_put((b), (s), sizeof(s) - 1)
#define SCORE(b, key, x) put_score((b), (key), sizeof(key) - 1, (x))

/* Each document's URL as a JSON string, made once (a document is the end
 * of many links): at[id] = 1 + where it starts in t (its end: at[id + 1]'s
 * start is not it, so len[id] keeps it), 0 not made yet, NO_URL none. */
#define NO_URL UINT64_MAX
typedef struct url_cache {
    uint64_t *at;
    uint32_t *len;
    size_t n;
    sh_textbuf t;
} url_cache;

static void free_url_cache(void *p)
{
    url_cache *c = (url_cache *)p;
    free(c->at);
    free(c->len);
    sh_textbuf_free(&c->t);
    memset(c, 0, sizeof *c);
}

static int put_url(lua_State *L, sh_textbuf *b, url_cache *c, int urls, uint32_t id, const char *key, size_t kn)
{
    if (c->at[id] == 0) {
        size_t start = c->t.n;
        c->at[id] = NO_URL;
        lua_rawgeti(L, urls, (lua_Integer)id + 1);
        if (lua_type(L, -1) == LUA_TSTRING) {
            size_t n;
            const char *s = lua_tolstring(L, -1, &n);
            if (!sh_json_string(&c->t, s, n) || c->t.n - start > UINT32_MAX) { lua_pop(L, 1); return 0; }
            c->at[id] = (uint64_t)start + 1;
            c->len[id] = (uint32_t)(c->t.n - start);
        }
        lua_pop(L, 1);
    }
    if (c->at[id] == NO_URL) return 1;
    return sh_textbuf_put(b, key, kn) && sh_textbuf_put(b, c->t.p + (c->at[id] - 1), c->len[id]);
}

#define URL(b, key, id) put_url(L, (b), cache, 3, (id), (key), sizeof(key) - 1)

/* core.links_jsonl(dir, path, urls [, name]) -> the number of lines, or nil, err
 * ("cannot write NAME: reason"; name defaults to path): pairs.jsonl of the run
 * in dir written to path (made or truncated), one
 * line per link, as M.order.pairs puts the record { a, b, url_a, url_b,
 * resemblance, containment_ab, containment_ba, exact = { resemblance,
 * containment_ab, containment_ba } } (urls[id]: a string or nil; exact only
 * for verified links; scores rounded to four decimals). */
static int c_links_jsonl(lua_State *L)
{
    const char *dir = luaL_checkstring(L, 1);
    const char *path = luaL_checkstring(L, 2);
    const char *name = luaL_optstring(L, 4, path);
    sh_recfile *rf;
    const sh_linkrec *r;
    size_t n, i;
    sh_error err;
    sh_textbuf b = { NULL, 0, 0 };
    url_cache *cache;
    FILE *f;
    int ok = 1, e = 0;
    uint64_t written = 0, synced = 0;
    luaL_checktype(L, 3, LUA_TTABLE);
    rf = (sh_recfile *)shl_newbox(L, sizeof(sh_recfile), close_recfile);
    if (sh_run_links(rf, dir, &r, &n, &err) != SH_OK) return shl_fail(L, &err);
    cache = (url_cache *)shl_newbox(L, sizeof *cache, free_url_cache);
    memset(cache, 0, sizeof *cache);
    for (i = 0; i < n; i++) {
        if (r[i].a >= cache->n) cache->n = (size_t)r[i].a + 1;
        if (r[i].b >= cache->n) cache->n = (size_t)r[i].b + 1;
    }
    cache->at = (uint64_t *)calloc(cache->n + 1, sizeof *cache->at);
    cache->len = (uint32_t *)calloc(cache->n + 1, sizeof *cache->len);
    if (!cache->at || !cache->len) return luaL_error(L, "out of memory");
    f = fopen(path, "wb");
    if (!f) {
        e = errno;
        shl_box_done(L, -1);
        shl_box_done(L, -2);
        lua_pushnil(L);
        lua_pushfstring(L, "cannot write %s: %s", name, strerror(e));
        return 2;
    }
    for (i = 0; i < n && ok; i++) {
        const sh_linkrec *l = &r[i];
        ok = KEY(&b, "{\"a\":") && sh_json_integer(&b, (int64_t)l->a + 1) &&
             KEY(&b, ",\"b\":") && sh_json_integer(&b, (int64_t)l->b + 1) &&
             URL(&b, ",\"url_a\":", l->a) && URL(&b, ",\"url_b\":", l->b) &&
             SCORE(&b, ",\"resemblance\":", l->r) &&
             SCORE(&b, ",\"containment_ab\":", l->cab) &&
             SCORE(&b, ",\"containment_ba\":", l->cba);
        if (ok && l->xr >= 0)
            ok = SCORE(&b, ",\"exact\":{\"resemblance\":", l->xr) &&
                 SCORE(&b, ",\"containment_ab\":", l->xcab) &&
                 SCORE(&b, ",\"containment_ba\":", l->xcba) && KEY(&b, "}");
        ok = ok && KEY(&b, "}\n");
        if (!ok) { e = ENOMEM; break; }
        if (b.n >= ((size_t)1 << 20) || i + 1 == n) {
            if (fwrite(b.p, 1, b.n, f) != b.n) { e = errno ? errno : EIO; ok = 0; }
            written += b.n;
            b.n = 0;
            /* to the disk as it is written: the output's fsync (util.output) then has little to wait for */
            if (ok && written - synced >= SH_WRITEBACK_BYTES) {
                if (fflush(f) != 0) { e = errno ? errno : EIO; ok = 0; }
                else sh_writeback(fileno(f), synced, 0);
                synced = written;
            }
        }
    }
    sh_textbuf_free(&b);
    shl_box_done(L, -1);
    shl_box_done(L, -2);
    if (fclose(f) != 0 && ok) { e = errno ? errno : EIO; ok = 0; }
    if (!ok) {
        lua_pushnil(L);
        lua_pushfstring(L, "cannot write %s: %s", name, strerror(e));
        return 2;
    }
    lua_pushinteger(L, (lua_Integer)n);
    return 1;
}

/* ---- directories -------------------------------------------------------------- */

typedef struct entries {
    DIR *d;
    char **names;
    size_t n, cap;
} entries;

static void free_entries(void *p)
{
    entries *e = (entries *)p;
    size_t i;
    if (e->d) closedir(e->d);
    e->d = NULL;
    for (i = 0; i < e->n; i++) free(e->names[i]);
    free(e->names);
    e->names = NULL;
    e->n = e->cap = 0;
}

/* names after their one-byte kind, by their bytes (strcmp, as table.sort in the C locale) */
static int cmp_kind_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a + 1, *(char *const *)b + 1);
}

/* core.dir_entries(dir) -> names, kinds, sizes, mtimes (parallel lists, the
 * names sorted by their bytes, without "." and ".."; kind "directory", "file"
 * or "other" (a symbolic link is "other": not followed); sizes and mtimes
 * (seconds) of files, 0 for the others), or nil, the reason (strerror) when
 * the directory cannot be read. As lfs.dir and lfs.symlinkattributes give
 * them, in one call: readdir's d_type, lstat only when it is unknown. */
static int c_dir_entries(lua_State *L)
{
    const char *dir = luaL_checkstring(L, 1);
    entries *e = (entries *)shl_newbox(L, sizeof(entries), free_entries);
    int box = lua_gettop(L), fd;
    struct dirent *de;
    size_t i;
    e->d = opendir(dir);
    if (!e->d) {
        int en = errno;
        lua_pushnil(L);
        lua_pushstring(L, strerror(en));
        return 2;
    }
    fd = dirfd(e->d);
    while ((errno = 0, de = readdir(e->d)) != NULL) {
        size_t len = strlen(de->d_name);
        char *copy;
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0) continue;
        if (e->n == e->cap) {
            size_t cap = e->cap ? 2 * e->cap : 64;
            char **p = (char **)realloc(e->names, cap * sizeof *p);
            if (!p) return luaL_error(L, "out of memory");
            e->names = p;
            e->cap = cap;
        }
        /* the kind as one byte before the name: d_type, known here or by lstat below */
        copy = (char *)malloc(len + 2);
        if (!copy) return luaL_error(L, "out of memory");
        copy[0] = de->d_type == DT_DIR ? 'd' : de->d_type == DT_REG ? 'f' : de->d_type == DT_UNKNOWN ? '?' : 'o';
        memcpy(copy + 1, de->d_name, len + 1);
        e->names[e->n++] = copy;
    }
    if (errno != 0) {
        int en = errno;
        lua_pushnil(L);
        lua_pushstring(L, strerror(en));
        return 2;
    }
    {
        /* sorted by name (the byte after the kind) */
        char **v = e->names;
        for (i = 0; i < e->n; i++) v[i][0] = (char)(v[i][0] == 'd' ? 1 : v[i][0] == 'f' ? 2 : v[i][0] == '?' ? 3 : 4);
        /* compare names only: shift the kind out of the way */
        if (e->n > 1) qsort(v, e->n, sizeof *v, cmp_kind_name); /* v is NULL for an empty directory */
    }
    lua_createtable(L, (int)e->n, 0);
    lua_createtable(L, (int)e->n, 0);
    lua_createtable(L, (int)e->n, 0);
    lua_createtable(L, (int)e->n, 0);
    for (i = 0; i < e->n; i++) {
        const char *name = e->names[i] + 1;
        int kind = e->names[i][0];
        struct stat st;
        int have = 0;
        if (kind == 3 || kind == 2) {
            /* size and time of a file (lstat: a link is not followed) */
            if (fstatat(fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
                have = 1;
                kind = S_ISDIR(st.st_mode) ? 1 : S_ISREG(st.st_mode) ? 2 : 4;
            } else kind = 4; /* gone since readdir: not listed, as lfs.symlinkattributes has it */
        }
        lua_pushstring(L, name);
        lua_rawseti(L, box + 1, (lua_Integer)i + 1);
        lua_pushstring(L, kind == 1 ? "directory" : kind == 2 ? "file" : "other");
        lua_rawseti(L, box + 2, (lua_Integer)i + 1);
        lua_pushinteger(L, have && kind == 2 ? (lua_Integer)st.st_size : 0);
        lua_rawseti(L, box + 3, (lua_Integer)i + 1);
        lua_pushinteger(L, have && kind == 2 ? (lua_Integer)st.st_mtime : 0);
        lua_rawseti(L, box + 4, (lua_Integer)i + 1);
    }
    shl_box_done(L, box);
    return 4;
}

void shl_open_report(lua_State *L)
{
    static const luaL_Reg funcs[] = { { "link_ends", c_link_ends }, { "links_jsonl", c_links_jsonl },
                                      { "dir_entries", c_dir_entries }, { NULL, NULL } };
    shl_setfuncs(L, funcs);
}
