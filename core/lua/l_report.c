/* shingle.core bindings for the report of a cluster run (lua/shingle/pipeline.lua,
 * M:report): pairs.jsonl written in bulk from links.bin, the same bytes the
 * output writer (lua/shingle/writer.lua over core/jsonw.c) makes record by
 * record. Document ids are 1-based here. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "lshingle.h"
#include "cluster.h"
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

static int put_url(lua_State *L, sh_textbuf *b, int urls, uint32_t id, const char *key, size_t kn)
{
    int ok = 1;
    lua_rawgeti(L, urls, (lua_Integer)id + 1);
    if (lua_type(L, -1) == LUA_TSTRING) {
        size_t n;
        const char *s = lua_tolstring(L, -1, &n);
        ok = sh_textbuf_put(b, key, kn) && sh_json_string(b, s, n);
    }
    lua_pop(L, 1);
    return ok;
}

#define URL(b, key, id) put_url(L, (b), 3, (id), (key), sizeof(key) - 1)

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
    FILE *f;
    int ok = 1, e = 0;
    luaL_checktype(L, 3, LUA_TTABLE);
    rf = (sh_recfile *)shl_newbox(L, sizeof(sh_recfile), close_recfile);
    if (sh_run_links(rf, dir, &r, &n, &err) != SH_OK) return shl_fail(L, &err);
    f = fopen(path, "wb");
    if (!f) {
        e = errno;
        shl_box_done(L, -1);
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
            b.n = 0;
        }
    }
    sh_textbuf_free(&b);
    shl_box_done(L, -1);
    if (fclose(f) != 0 && ok) { e = errno ? errno : EIO; ok = 0; }
    if (!ok) {
        lua_pushnil(L);
        lua_pushfstring(L, "cannot write %s: %s", name, strerror(e));
        return 2;
    }
    lua_pushinteger(L, (lua_Integer)n);
    return 1;
}

void shl_open_report(lua_State *L)
{
    static const luaL_Reg funcs[] = { { "link_ends", c_link_ends }, { "links_jsonl", c_links_jsonl }, { NULL, NULL } };
    shl_setfuncs(L, funcs);
}
