/* shingle.core bindings for mirrored collections: the web graph builder
 * (core/webgraph.h), trivial clusters and cluster growing over its files, and
 * a view of the results (core/collections.h, core/collview.h). Page and cluster ids are
 * 1-based here. */
#include <stdlib.h>
#include <string.h>
#include "lshingle.h"
#include "chunks.h"
#include "collections.h"
#include "collview.h"
#include "webgraph.h"

#define SHL_WEBGRAPH "shingle.WebGraph"
#define SHL_COLLVIEW "shingle.CollectionsView"

typedef struct shl_webgraph { sh_webgraph *g; } shl_webgraph;
typedef struct shl_collview { sh_coll_view *v; } shl_collview;

/* ---- the web graph builder ---------------------------------------------- */

/* core.webgraph(dir, { memory, temp_dir, site_depth, seed, anchored, max_bytes }) -> builder, or nil, err */
static int wg_new(lua_State *L)
{
    sh_webgraph_config c;
    shl_webgraph *u;
    sh_error err;
    memset(&c, 0, sizeof c);
    c.dir = luaL_checkstring(L, 1);
    luaL_checktype(L, 2, LUA_TTABLE);
    c.memory = (size_t)shl_opt_num(L, 2, "memory", 256.0 * 1024 * 1024);
    c.temp_dir = shl_opt_str(L, 2, "temp_dir", NULL);
    c.site_depth = (unsigned)shl_opt_num(L, 2, "site_depth", 1);
    c.seed = shl_opt_u64(L, 2, "seed", 0);
    c.anchored = shl_opt_bool(L, 2, "anchored", 0);
    c.max_bytes = (size_t)shl_opt_num(L, 2, "max_bytes", 0);
    luaL_argcheck(L, c.site_depth >= 1 && c.site_depth <= 64, 2, "site_depth must be 1 to 64");
    u = (shl_webgraph *)shl_newhandle(L, sizeof *u, SHL_WEBGRAPH);
    if (sh_webgraph_new(&u->g, &c, &err) != SH_OK) return shl_fail(L, &err);
    return 1;
}

static shl_webgraph *check_wg(lua_State *L)
{
    shl_webgraph *u = (shl_webgraph *)luaL_checkudata(L, 1, SHL_WEBGRAPH);
    luaL_argcheck(L, u->g != NULL, 1, "the web graph builder is closed");
    return u;
}

static const char *const page_status[] = { "ok", "empty", "unreadable", "duplicate" };

/* g:add(pages) -> problems: pages as { url, text | path, html }; problems
 * { [i] = { status = "empty" | "unreadable" | "duplicate", error = msg } }
 * for the pages that were not fingerprinted. Or nil, err. */
static int wg_add(lua_State *L)
{
    shl_webgraph *u = check_wg(L);
    size_t n, i;
    sh_page_in *in;
    uint8_t *status;
    char (*msg)[200];
    sh_error err;
    sh_status st;
    luaL_checktype(L, 2, LUA_TTABLE);
    n = shl_rawlen(L, 2);
    /* scratch owned by the Lua state, so a raise below leaks nothing */
    in = (sh_page_in *)lua_newuserdata(L, (n ? n : 1) * (sizeof *in + 1 + 200));
    status = (uint8_t *)(in + (n ? n : 1));
    msg = (char (*)[200])(void *)(status + (n ? n : 1));
    for (i = 0; i < n; i++) {
        int t;
        lua_rawgeti(L, 2, (int)(i + 1));
        t = lua_gettop(L);
        if (!lua_istable(L, t)) return luaL_error(L, "page %d is not a table", (int)(i + 1));
        memset(&in[i], 0, sizeof in[i]);
        lua_getfield(L, t, "url");
        if (lua_type(L, -1) != LUA_TSTRING) return luaL_error(L, "page %d has no url string", (int)(i + 1));
        in[i].url = lua_tolstring(L, -1, &in[i].url_len);
        lua_pop(L, 1);
        lua_getfield(L, t, "text");
        if (!lua_isnil(L, -1)) in[i].data = luaL_checklstring(L, -1, &in[i].len);
        lua_pop(L, 1);
        in[i].path = shl_opt_str(L, t, "path", NULL);
        in[i].html = shl_opt_bool(L, t, "html", 0);
        if (!in[i].data && !in[i].path) return luaL_error(L, "page %d has neither text nor path", (int)(i + 1));
        lua_pop(L, 1);
    }
    st = sh_webgraph_add(u->g, in, n, status, msg, &err);
    if (st != SH_OK) return shl_fail(L, &err);
    lua_newtable(L);
    for (i = 0; i < n; i++) {
        if (status[i] == SH_PAGE_OK) continue;
        lua_createtable(L, 0, 2);
        lua_pushstring(L, page_status[status[i] & 3]);
        lua_setfield(L, -2, "status");
        if (msg[i][0]) { lua_pushstring(L, msg[i]); lua_setfield(L, -2, "error"); }
        lua_rawseti(L, -2, (int)(i + 1));
    }
    return 1;
}

/* g:edges(srcs, dsts) -> true, or nil, err: links given as URL pairs */
static int wg_edges(lua_State *L)
{
    shl_webgraph *u = check_wg(L);
    size_t n, i;
    const char **s, **d;
    size_t *sl, *dl;
    sh_error err;
    luaL_checktype(L, 2, LUA_TTABLE);
    luaL_checktype(L, 3, LUA_TTABLE);
    n = shl_rawlen(L, 2);
    luaL_argcheck(L, shl_rawlen(L, 3) == n, 3, "the lists of sources and destinations must be as long");
    s = (const char **)lua_newuserdata(L, (n ? n : 1) * 2 * (sizeof(char *) + sizeof(size_t)));
    d = s + (n ? n : 1);
    sl = (size_t *)(void *)(d + (n ? n : 1));
    dl = sl + (n ? n : 1);
    for (i = 0; i < n; i++) {
        lua_rawgeti(L, 2, (int)(i + 1));
        s[i] = luaL_checklstring(L, -1, &sl[i]);
        lua_rawgeti(L, 3, (int)(i + 1));
        d[i] = luaL_checklstring(L, -1, &dl[i]);
        lua_pop(L, 2);   /* the strings stay alive in the lists */
    }
    if (sh_webgraph_add_edges(u->g, s, sl, d, dl, n, &err) != SH_OK) return shl_fail(L, &err);
    lua_pushboolean(L, 1);
    return 1;
}

static void push_wg_stats(lua_State *L, const sh_webgraph_stats *st)
{
    lua_createtable(L, 0, 20);
    SHL_SETI(L, "pages", st->pages); SHL_SETI(L, "ok", st->ok); SHL_SETI(L, "empty", st->empty); SHL_SETI(L, "unreadable", st->unreadable);
    SHL_SETI(L, "duplicate_urls", st->duplicate_urls); SHL_SETI(L, "bad_urls", st->bad_urls); SHL_SETI(L, "bytes", st->bytes);
    SHL_SETI(L, "sites", st->sites); SHL_SETI(L, "links_found", st->links_found); SHL_SETI(L, "links", st->links);
    SHL_SETI(L, "links_nowhere", st->links_nowhere); SHL_SETI(L, "self_links", st->self_links);
    SHL_SETI(L, "duplicate_links", st->duplicate_links); SHL_SETI(L, "edges_unknown_source", st->edges_unknown_source);
    SHL_SETI(L, "chunks_whole", st->chunks[0]); SHL_SETI(L, "chunks_lines4", st->chunks[1]); SHL_SETI(L, "chunks_lines2", st->chunks[2]);
    SHL_SETN(L, "t_pages", st->t_pages); SHL_SETN(L, "t_links", st->t_links);
}

/* g:finish() -> stats, or nil, err */
static int wg_finish(lua_State *L)
{
    shl_webgraph *u = check_wg(L);
    sh_webgraph_stats st;
    sh_error err;
    sh_status s = sh_webgraph_finish(u->g, &st, &err);
    sh_webgraph_free(u->g);
    u->g = NULL;
    if (s != SH_OK) return shl_fail(L, &err);
    push_wg_stats(L, &st);
    return 1;
}

static int wg_stats(lua_State *L)
{
    shl_webgraph *u = check_wg(L);
    sh_webgraph_stats st;
    sh_webgraph_get_stats(u->g, &st);
    push_wg_stats(L, &st);
    return 1;
}

static int wg_close(lua_State *L)
{
    shl_webgraph *u = (shl_webgraph *)luaL_checkudata(L, 1, SHL_WEBGRAPH);
    if (u->g) { sh_webgraph_free(u->g); u->g = NULL; }
    return 0;
}

/* ---- trivial clusters and growing ------------------------------------------ */

static void push_hist(lua_State *L, const uint64_t *h)
{
    int i;
    lua_createtable(L, SH_REPLICA_BINS, 0);
    for (i = 0; i < SH_REPLICA_BINS; i++) {
        lua_pushinteger(L, (lua_Integer)h[i]);
        lua_rawseti(L, -2, i + 1);
    }
}

/* core.coll_trivial(dir, { name, scheme | clusters, threshold, max_df, memory, temp_dir }) -> stats, or nil, err */
static int c_trivial(lua_State *L)
{
    const char *dir = luaL_checkstring(L, 1);
    sh_trivial_config c;
    sh_trivial_stats st;
    sh_error err;
    const char *scheme;
    lua_Number t;
    memset(&c, 0, sizeof c);
    luaL_checktype(L, 2, LUA_TTABLE);
    c.name = shl_opt_str(L, 2, "name", NULL);
    scheme = shl_opt_str(L, 2, "scheme", NULL);
    c.clusters = shl_opt_str(L, 2, "clusters", NULL);
    c.scheme = scheme ? sh_chunk_scheme(scheme) : -1;
    if (!c.clusters && c.scheme < 0)
        return luaL_error(L, "scheme '%s'; use whole, lines4 or lines2 (or give clusters)", scheme ? scheme : "nil");
    if (!c.name) c.name = scheme;
    luaL_argcheck(L, c.name != NULL, 2, "a name is needed with clusters");
    t = shl_opt_num(L, 2, "threshold", 1);
    luaL_argcheck(L, t >= 1 && t <= 4294967295.0, 2, "threshold must be at least 1");
    c.threshold = (uint32_t)t;
    c.max_df = (uint32_t)shl_opt_num(L, 2, "max_df", 0);
    c.memory = (size_t)shl_opt_num(L, 2, "memory", 256.0 * 1024 * 1024);
    c.temp_dir = shl_opt_str(L, 2, "temp_dir", NULL);
    if (sh_coll_trivial(dir, &c, &st, &err) != SH_OK) return shl_fail(L, &err);
    lua_createtable(L, 0, 12);
    SHL_SETI(L, "chunk_records", st.chunk_records); SHL_SETI(L, "distinct_chunks", st.distinct_chunks);
    SHL_SETI(L, "common_dropped", st.common_dropped); SHL_SETI(L, "pair_records", st.pair_records); SHL_SETI(L, "pairs", st.pairs);
    SHL_SETI(L, "similar_pairs", st.similar_pairs); SHL_SETI(L, "clusters", st.clusters);
    SHL_SETI(L, "pages_in_clusters", st.pages_in_clusters); SHL_SETI(L, "largest", st.largest); SHL_SETN(L, "seconds", st.seconds);
    push_hist(L, st.hist);
    lua_setfield(L, -2, "replicas");
    return 1;
}

/* core.coll_grow(dir, { trivial, extended, single_site, start = "inlinks" | "first",
 * min_cardinality, min_size, memory, temp_dir }) -> stats (top: the largest clusters), or nil, err */
static int c_grow(lua_State *L)
{
    const char *dir = luaL_checkstring(L, 1);
    sh_grow_config c;
    sh_grow_stats st;
    sh_error err;
    const char *start;
    size_t i;
    memset(&c, 0, sizeof c);
    luaL_checktype(L, 2, LUA_TTABLE);
    c.trivial = shl_opt_str(L, 2, "trivial", NULL);
    luaL_argcheck(L, c.trivial != NULL, 2, "trivial (the name of the trivial clusters) is needed");
    c.extended = shl_opt_bool(L, 2, "extended", 0);
    c.single_site = shl_opt_bool(L, 2, "single_site", 0);
    start = shl_opt_str(L, 2, "start", NULL);
    if (!start || strcmp(start, "inlinks") == 0) c.start = SH_START_INLINKS;
    else if (strcmp(start, "first") == 0) c.start = SH_START_FIRST;
    else return luaL_error(L, "start '%s'; use inlinks or first", start);
    c.min_cardinality = (uint32_t)shl_opt_num(L, 2, "min_cardinality", 2);
    c.min_size = (uint32_t)shl_opt_num(L, 2, "min_size", 1);
    luaL_argcheck(L, c.min_cardinality >= 1 && c.min_size >= 1, 2, "min_cardinality and min_size must be at least 1");
    c.memory = (size_t)shl_opt_num(L, 2, "memory", 256.0 * 1024 * 1024);
    c.temp_dir = shl_opt_str(L, 2, "temp_dir", NULL);
    if (sh_coll_grow(dir, &c, &st, &err) != SH_OK) return shl_fail(L, &err);
    lua_createtable(L, 0, 24);
    SHL_SETI(L, "trivial_clusters", st.trivial_clusters); SHL_SETI(L, "links_considered", st.links_considered);
    SHL_SETI(L, "summary_rows", st.summary_rows); SHL_SETI(L, "merge_edges", st.merge_edges); SHL_SETI(L, "components", st.components);
    SHL_SETI(L, "clusters", st.clusters); SHL_SETI(L, "collections", st.collections);
    SHL_SETI(L, "pages_in_collections", st.pages_in_collections); SHL_SETI(L, "distinct_pages", st.distinct_pages);
    SHL_SETI(L, "shared_pages", st.shared_pages); SHL_SETI(L, "small_clusters", st.small_clusters);
    SHL_SETI(L, "split_components", st.split_components); SHL_SETI(L, "unmatched", st.unmatched);
    SHL_SETI(L, "bytes_total", st.bytes_total); SHL_SETI(L, "bytes_avoidable", st.bytes_avoidable);
    SHL_SETI(L, "pages_avoidable", st.pages_avoidable);
    SHL_SETN(L, "t_summary", st.t_summary); SHL_SETN(L, "t_regain", st.t_regain); SHL_SETN(L, "t_report", st.t_report);
    lua_createtable(L, (int)st.n_top, 0);
    for (i = 0; i < st.n_top; i++) {
        lua_createtable(L, 0, 4);
        SHL_SETI(L, "cluster", st.top[i].cluster); SHL_SETI(L, "cardinality", st.top[i].cardinality);
        SHL_SETI(L, "size", st.top[i].size); SHL_SETI(L, "root", (lua_Integer)st.top[i].root + 1);
        lua_rawseti(L, -2, (int)(i + 1));
    }
    lua_setfield(L, -2, "top");
    return 1;
}

/* ---- the view ----------------------------------------------------------------- */

/* core.coll_view(dir) -> view, or nil, err */
static int v_open(lua_State *L)
{
    const char *dir = luaL_checkstring(L, 1);
    shl_collview *u = (shl_collview *)shl_newhandle(L, sizeof *u, SHL_COLLVIEW);
    sh_error err;
    if (sh_coll_view_open(&u->v, dir, &err) != SH_OK) return shl_fail(L, &err);
    return 1;
}

static sh_coll_view *check_view(lua_State *L)
{
    shl_collview *u = (shl_collview *)luaL_checkudata(L, 1, SHL_COLLVIEW);
    luaL_argcheck(L, u->v != NULL, 1, "the collections view is closed");
    return u->v;
}

/* Push a table describing page p (0-based). */
static void push_page(lua_State *L, const sh_coll_view *v, uint32_t p)
{
    const sh_pagerec *r = sh_coll_view_page(v, p);
    size_t len;
    const char *url = sh_coll_view_url(v, p, &len);
    uint32_t tsize, coll, t = sh_coll_view_trivial(v, p, &tsize), cl = sh_coll_view_cluster(v, p, &coll);
    lua_createtable(L, 0, 10);
    SHL_SETI(L, "page", (lua_Integer)p + 1);
    lua_pushlstring(L, url, len); lua_setfield(L, -2, "url");
    lua_pushstring(L, sh_coll_view_site(v, r->site)); lua_setfield(L, -2, "site");
    SHL_SETI(L, "bytes", r->bytes);
    lua_pushstring(L, page_status[r->status & 3]); lua_setfield(L, -2, "status");
    SHL_SETI(L, "trivial", (lua_Integer)t + 1);
    SHL_SETI(L, "replicas", tsize ? tsize - 1 : 0);
    SHL_SETI(L, "ext_in", r->ext_in);
    if (cl) { SHL_SETI(L, "cluster", cl); SHL_SETI(L, "collection", (lua_Integer)coll + 1); }
}

/* v:lookup(urls) -> list with, for each URL, a page table or false */
static int v_lookup(lua_State *L)
{
    sh_coll_view *v = check_view(L);
    size_t n, i;
    luaL_checktype(L, 2, LUA_TTABLE);
    n = shl_rawlen(L, 2);
    lua_createtable(L, (int)n, 0);
    for (i = 0; i < n; i++) {
        size_t len;
        const char *u;
        uint32_t p;
        lua_rawgeti(L, 2, (int)(i + 1));
        u = luaL_checklstring(L, -1, &len);
        p = sh_coll_view_find(v, u, len);
        lua_pop(L, 1);
        if (p == UINT32_MAX) lua_pushboolean(L, 0);
        else push_page(L, v, p);
        lua_rawseti(L, -2, (int)(i + 1));
    }
    return 1;
}

/* v:page(id) -> page table */
static int v_page(lua_State *L)
{
    sh_coll_view *v = check_view(L);
    lua_Integer p = luaL_checkinteger(L, 2);
    luaL_argcheck(L, p >= 1 && p <= (lua_Integer)sh_coll_view_npages(v), 2, "no such page");
    push_page(L, v, (uint32_t)(p - 1));
    return 1;
}

/* v:collections() -> list of { cluster, index, root, root_url, site, prefix, pages,
 * bytes, avoid_pages, avoid_bytes, kept, whole_site, cluster_size } */
static int v_collections(lua_State *L)
{
    sh_coll_view *v = check_view(L);
    size_t n, i, len;
    const sh_collrec *c = sh_coll_view_colls(v, &n);
    lua_createtable(L, (int)n, 0);
    for (i = 0; i < n; i++) {
        const char *url;
        lua_createtable(L, 0, 12);
        SHL_SETI(L, "cluster", c[i].cluster); SHL_SETI(L, "index", (lua_Integer)c[i].index + 1);
        SHL_SETI(L, "root", (lua_Integer)c[i].root + 1);
        url = sh_coll_view_url(v, c[i].root, &len);
        lua_pushlstring(L, url, len); lua_setfield(L, -2, "root_url");
        lua_pushstring(L, sh_coll_view_site(v, c[i].site)); lua_setfield(L, -2, "site");
        url = sh_coll_view_url(v, c[i].prefix_page, &len);
        lua_pushlstring(L, url, c[i].prefix_len <= len ? c[i].prefix_len : len); lua_setfield(L, -2, "prefix");
        SHL_SETI(L, "pages", c[i].pages); SHL_SETI(L, "bytes", c[i].bytes);
        SHL_SETI(L, "avoid_pages", c[i].avoid_pages); SHL_SETI(L, "avoid_bytes", c[i].avoid_bytes);
        SHL_SETI(L, "cluster_size", c[i].cluster_size);
        lua_pushboolean(L, (c[i].flags & SH_COLL_KEPT) != 0); lua_setfield(L, -2, "kept");
        lua_pushboolean(L, (c[i].flags & SH_COLL_WHOLE_SITE) != 0); lua_setfield(L, -2, "whole_site");
        lua_rawseti(L, -2, (int)(i + 1));
    }
    return 1;
}

/* v:members(cluster) -> list of { page, url, collection } in collection order */
static int v_members(lua_State *L)
{
    sh_coll_view *v = check_view(L);
    lua_Integer c = luaL_checkinteger(L, 2);
    size_t n = 0, i, len;
    const sh_memberrec *m = c >= 1 ? sh_coll_view_members(v, (uint32_t)c, &n) : NULL;
    lua_createtable(L, (int)n, 0);
    for (i = 0; i < n; i++) {
        const char *url = sh_coll_view_url(v, m[i].page, &len);
        lua_createtable(L, 0, 3);
        SHL_SETI(L, "page", (lua_Integer)m[i].page + 1);
        lua_pushlstring(L, url, len); lua_setfield(L, -2, "url");
        SHL_SETI(L, "collection", (lua_Integer)m[i].collection + 1);
        lua_rawseti(L, -2, (int)(i + 1));
    }
    return 1;
}

static int v_npages(lua_State *L)
{
    lua_pushinteger(L, (lua_Integer)sh_coll_view_npages(check_view(L)));
    return 1;
}

static int v_close(lua_State *L)
{
    shl_collview *u = (shl_collview *)luaL_checkudata(L, 1, SHL_COLLVIEW);
    if (u->v) { sh_coll_view_close(u->v); u->v = NULL; }
    return 0;
}

static void free_chunks(void *p)
{
    sh_chunks_free((sh_chunks *)p);
}

/* core.chunks(text, html [, { seed, anchored }]) -> { whole = {...}, lines4 = {...}, lines2 = {...}, tokens, lines } */
static int c_chunks(lua_State *L)
{
    size_t n;
    const char *text = luaL_checklstring(L, 1, &n);
    int html = lua_toboolean(L, 2), s;
    sh_chunker ck;
    sh_chunks *chp;
    sh_error err;
    uint64_t seed = 0;
    int anchored = 0;
    if (lua_istable(L, 3)) {
        seed = shl_opt_u64(L, 3, "seed", 0);
        anchored = shl_opt_bool(L, 3, "anchored", 0);
    }
    sh_chunker_init(&ck, seed, anchored);
    chp = (sh_chunks *)shl_newbox(L, sizeof *chp, free_chunks);
    if (sh_chunks_compute(&ck, text, n, html, chp, &err) != SH_OK) return shl_fail(L, &err);
    lua_createtable(L, 0, 5);
    for (s = 0; s < SH_CHUNK_SCHEMES; s++) {
        size_t i;
        lua_createtable(L, (int)chp->n[s], 0);
        for (i = 0; i < chp->n[s]; i++) {
            lua_pushinteger(L, (lua_Integer)chp->fp[s][i]);  /* 32 bits: exact in a double too */
            lua_rawseti(L, -2, (int)(i + 1));
        }
        lua_setfield(L, -2, sh_chunk_scheme_name(s));
    }
    SHL_SETI(L, "tokens", chp->n_tokens);
    SHL_SETI(L, "lines", chp->n_lines);
    shl_box_done(L, -2);
    return 1;
}

/* core.url_site(url, depth) -> site */
static int c_url_site(lua_State *L)
{
    size_t n, len;
    const char *url = luaL_checklstring(L, 1, &n);
    lua_Integer d = luaL_optinteger(L, 2, 1);
    char buf[2048];
    luaL_argcheck(L, d >= 1 && d <= 64, 2, "depth must be 1 to 64");
    len = sh_url_site(url, n, (unsigned)d, buf, sizeof buf);
    lua_pushlstring(L, buf, len);
    return 1;
}

void shl_open_collections(lua_State *L)
{
    static const luaL_Reg wg_m[] = { { "add", wg_add }, { "edges", wg_edges }, { "finish", wg_finish },
        { "stats", wg_stats }, { "close", wg_close }, { NULL, NULL } };
    static const luaL_Reg v_m[] = { { "lookup", v_lookup }, { "page", v_page }, { "collections", v_collections },
        { "members", v_members }, { "npages", v_npages }, { "close", v_close }, { NULL, NULL } };
    static const luaL_Reg funcs[] = { { "webgraph", wg_new }, { "coll_trivial", c_trivial }, { "coll_grow", c_grow },
        { "coll_view", v_open }, { "chunks", c_chunks }, { "url_site", c_url_site }, { NULL, NULL } };
    shl_newclass(L, SHL_WEBGRAPH, wg_m, NULL, wg_close);
    shl_newclass(L, SHL_COLLVIEW, v_m, NULL, v_close);
    shl_setfuncs(L, funcs);
}
