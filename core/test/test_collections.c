/* Chunk fingerprints, the web graph builder and cluster growing (Cho et al.
 * 2000) on small graphs, through the C API alone. */
#include "chunks.h"
#include "collections.h"
#include "collview.h"
#include "links.h"
#include "test.h"
#include "webgraph.h"

#include <stdlib.h>
#include <unistd.h>

static char dir[256];

static void make_dir(void)
{
    snprintf(dir, sizeof dir, "/tmp/shingle_coll_XXXXXX");
    if (!mkdtemp(dir)) { perror("mkdtemp"); exit(1); }
}

static void remove_dir(void)
{
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
}

static void test_chunks_schemes(void)
{
    sh_chunker c;
    sh_chunks ch;
    sh_error err;
    const char *t = "one a\ntwo b\nthree c\nfour d\nfive e\n";
    memset(&ch, 0, sizeof ch);
    sh_chunker_init(&c, 0, 0);
    CHECK(sh_chunks_compute(&c, t, strlen(t), 0, &ch, &err) == SH_OK);
    CHECK(ch.n_lines == 5);
    CHECK(ch.n[SH_CHUNK_WHOLE] == 1);
    CHECK(ch.n[SH_CHUNK_LINES4] == 2);
    CHECK(ch.n[SH_CHUNK_LINES2] == 3);
    {
        uint32_t whole = ch.fp[SH_CHUNK_WHOLE][0], l2 = ch.fp[SH_CHUNK_LINES2][0];
        const char *h = "<p>ONE  a</p><br>Two <i>b</i><div>three c</div>four d\nfive e";
        CHECK(sh_chunks_compute(&c, h, strlen(h), 1, &ch, &err) == SH_OK);
        CHECK(ch.n_lines == 5);
        CHECK_EQ_U64(ch.fp[SH_CHUNK_WHOLE][0], whole);   /* markup and case do not count */
        CHECK_EQ_U64(ch.fp[SH_CHUNK_LINES2][0], l2);
    }
    CHECK(sh_chunks_compute(&c, "<html><script>x</script></html>", 31, 1, &ch, &err) == SH_OK);
    CHECK(ch.n_tokens == 0 && ch.n[SH_CHUNK_WHOLE] == 0);
    CHECK(sh_chunk_scheme("lines4") == SH_CHUNK_LINES4 && sh_chunk_scheme("x") == -1);
    sh_chunks_free(&ch);
}

/* A header line shifts fixed 4-line chunks, anchored ones only near it. */
static void test_chunks_anchored(void)
{
    sh_chunker fixed, anch;
    sh_chunks a, b;
    sh_error err;
    char text[4096], with[4200];
    size_t i, j, shared_fixed = 0, shared_anch = 0;
    int n = 0;
    memset(&a, 0, sizeof a);
    memset(&b, 0, sizeof b);
    for (i = 0; i < 60; i++) n += snprintf(text + n, sizeof text - (size_t)n, "line %zu of text w%zu\n", i, i * 7);
    snprintf(with, sizeof with, "a mirror header\n%s", text);
    sh_chunker_init(&fixed, 1, 0);
    sh_chunker_init(&anch, 1, 1);
    CHECK(sh_chunks_compute(&fixed, text, strlen(text), 0, &a, &err) == SH_OK);
    CHECK(sh_chunks_compute(&fixed, with, strlen(with), 0, &b, &err) == SH_OK);
    for (i = 0; i < a.n[1]; i++) for (j = 0; j < b.n[1]; j++) if (a.fp[1][i] == b.fp[1][j]) shared_fixed++;
    CHECK(sh_chunks_compute(&anch, text, strlen(text), 0, &a, &err) == SH_OK);
    CHECK(sh_chunks_compute(&anch, with, strlen(with), 0, &b, &err) == SH_OK);
    for (i = 0; i < a.n[1]; i++) for (j = 0; j < b.n[1]; j++) if (a.fp[1][i] == b.fp[1][j]) shared_anch++;
    CHECK(shared_fixed == 0);
    CHECK(shared_anch + 1 >= a.n[1]);
    sh_chunks_free(&a);
    sh_chunks_free(&b);
}

static void test_url_site(void)
{
    char out[256];
    const char *u = "http://Host.example:80/a/b/c.html";
    char norm[256];
    size_t len;
    CHECK(sh_url_normalize(u, strlen(u), norm, sizeof norm, &len, NULL) == SH_OK);
    norm[len] = '\0';
    CHECK(sh_url_site(norm, len, 1, out, sizeof out) > 0 && strcmp(out, "http://host.example") == 0);
    CHECK(sh_url_site(norm, len, 2, out, sizeof out) > 0 && strcmp(out, "http://host.example/a/") == 0);
    CHECK(sh_url_site(norm, len, 3, out, sizeof out) > 0 && strcmp(out, "http://host.example/a/b/") == 0);
    CHECK(sh_url_site("nourl", 5, 1, out, sizeof out) == 0);
}

static void add_page(sh_webgraph *g, const char *url, const char *html)
{
    sh_page_in p;
    sh_error err;
    uint8_t st;
    memset(&p, 0, sizeof p);
    p.url = url;
    p.url_len = strlen(url);
    p.data = html;
    p.len = strlen(html);
    p.html = 1;
    CHECK(sh_webgraph_add(g, &p, 1, &st, NULL, &err) == SH_OK);
}

/* Figure 6 in HTML: three sites with a -> b -> c, a -> d (relative links,
 * "..", fragments), t on two sites. */
static void test_grow_figure6(void)
{
    sh_webgraph_config c;
    sh_webgraph *g;
    sh_webgraph_stats ws;
    sh_trivial_config tc;
    sh_trivial_stats ts;
    sh_grow_config gc;
    sh_grow_stats gs;
    sh_coll_view *v;
    sh_error err;
    const char *sites[] = { "http://x.org", "http://y.org", "http://z.org" };
    char url[128], html[512];
    int s;
    make_dir();
    memset(&c, 0, sizeof c);
    c.dir = dir;
    c.memory = 1 << 20;
    c.site_depth = 1;
    CHECK(sh_webgraph_new(&g, &c, &err) == SH_OK);
    for (s = 0; s < 3; s++) {
        snprintf(url, sizeof url, "%s/doc/index.html", sites[s]);
        snprintf(html, sizeof html, "<p>page a about things</p><a href='b/b.html#x'>b</a><a href=\"./d.html\">d</a>%s",
                 s < 2 ? "<a href=t.html></a>" : "");
        add_page(g, url, html);
        snprintf(url, sizeof url, "%s/doc/b/b.html", sites[s]);
        add_page(g, url, "<p>page b about other things</p><a href='../c.html'>c</a><a href='b.html'>self</a>");
        snprintf(url, sizeof url, "%s/doc/c.html", sites[s]);
        add_page(g, url, "<p>page c</p><a href='/doc/'>home</a><a href='gone.html'>gone</a>");
        snprintf(url, sizeof url, "%s/doc/d.html", sites[s]);
        add_page(g, url, "<p>page d</p>");
        if (s < 2) {
            snprintf(url, sizeof url, "%s/doc/t.html", sites[s]);
            add_page(g, url, "<p>page t</p>");
        }
    }
    add_page(g, "http://z.org/empty.html", "<html><head></head></html>");
    CHECK(sh_webgraph_finish(g, &ws, &err) == SH_OK);
    sh_webgraph_free(g);
    CHECK(ws.pages == 15);
    CHECK(ws.empty == 1);
    CHECK(ws.self_links == 3);
    CHECK(ws.links_nowhere == 3);
    CHECK(ws.links == 3 * 4 + 2);   /* a->b, a->d, b->c, c->a (the directory URL) + a->t twice */
    memset(&tc, 0, sizeof tc);
    tc.name = "whole";
    tc.scheme = SH_CHUNK_WHOLE;
    tc.threshold = 1;
    tc.memory = 1 << 20;
    CHECK(sh_coll_trivial(dir, &tc, &ts, &err) == SH_OK);
    CHECK(ts.clusters == 5);
    CHECK(ts.hist[2] == 12 && ts.hist[1] == 2);
    memset(&gc, 0, sizeof gc);
    gc.trivial = "whole";
    gc.min_cardinality = 2;
    gc.min_size = 1;
    gc.memory = 1 << 20;
    CHECK(sh_coll_grow(dir, &gc, &gs, &err) == SH_OK);
    CHECK(gs.clusters == 2);
    CHECK(gs.n_top == 2 && gs.top[0].cardinality == 3 && gs.top[0].size == 4);
    CHECK(gs.top[1].cardinality == 2 && gs.top[1].size == 1);
    CHECK(gs.unmatched == 0);
    CHECK(sh_coll_view_open(&v, dir, &err) == SH_OK);
    {
        const char *u = "HTTP://y.org:80/doc/b/../c.html";
        uint32_t p = sh_coll_view_find(v, u, strlen(u)), coll, size;
        CHECK(p != UINT32_MAX);
        CHECK(sh_coll_view_cluster(v, p, &coll) == 1 && coll == 1);
        sh_coll_view_trivial(v, p, &size);
        CHECK(size == 3);
        CHECK(sh_coll_view_find(v, "http://nowhere/", 15) == UINT32_MAX);
    }
    {
        size_t n;
        const sh_collrec *cr = sh_coll_view_colls(v, &n);
        CHECK(n == 5);
        CHECK(cr[0].flags & SH_COLL_KEPT);
        CHECK(cr[1].avoid_pages == 4 && cr[0].avoid_pages == 0);
        CHECK(cr[1].prefix_len == strlen("http://y.org/doc/"));
    }
    sh_coll_view_close(v);
    remove_dir();
}

static void test_errors(void)
{
    sh_webgraph_config c;
    sh_webgraph *g;
    sh_grow_config gc;
    sh_grow_stats gs;
    sh_error err;
    memset(&c, 0, sizeof c);
    c.dir = "/nonexistent/dir";
    c.site_depth = 1;
    c.memory = 1 << 20;
    CHECK(sh_webgraph_new(&g, &c, &err) == SH_EIO);
    CHECK(strstr(err.msg, "/nonexistent/dir") != NULL);
    c.site_depth = 0;
    CHECK(sh_webgraph_new(&g, &c, &err) == SH_EINVAL);
    memset(&gc, 0, sizeof gc);
    gc.trivial = "whole";
    gc.min_cardinality = 2;
    gc.min_size = 1;
    CHECK(sh_coll_grow("/nonexistent/dir", &gc, &gs, &err) == SH_EIO);
    CHECK(strstr(err.msg, "pages.bin") != NULL);
}

int main(void)
{
    RUN(test_chunks_schemes);
    RUN(test_chunks_anchored);
    RUN(test_url_site);
    RUN(test_grow_figure6);
    RUN(test_errors);
    return TEST_END();
}
