#include "links.h"
#include "test.h"

#include <stdlib.h>

/* Resolve ref against base with flags; compare with want (NULL: expect an error). */
static int resolves(const char *base, const char *ref, unsigned flags, const char *want)
{
    char out[512];
    size_t len = 0;
    sh_error err;
    sh_status st = sh_url_resolve(base, base ? strlen(base) : 0, ref, strlen(ref), flags,
                                  out, sizeof out, &len, &err);
    if (!want)
        return st != SH_OK;
    if (st != SH_OK) {
        fprintf(stderr, "  resolve(%s, %s): %s\n", base ? base : "NULL", ref, err.msg);
        return 0;
    }
    if (len != strlen(want) || memcmp(out, want, len) != 0) {
        fprintf(stderr, "  resolve(%s, %s) = \"%.*s\", want \"%s\"\n", base ? base : "NULL",
                ref, (int)len, out, want);
        return 0;
    }
    return 1;
}

static int normalizes(const char *url, const char *want)
{
    char out[512];
    size_t len = 0;
    sh_error err;
    sh_status st = sh_url_normalize(url, strlen(url), out, sizeof out, &len, &err);
    if (!want)
        return st != SH_OK;
    if (st != SH_OK) {
        fprintf(stderr, "  normalize(%s): %s\n", url, err.msg);
        return 0;
    }
    if (len != strlen(want) || memcmp(out, want, len) != 0) {
        fprintf(stderr, "  normalize(%s) = \"%.*s\", want \"%s\"\n", url, (int)len, out, want);
        return 0;
    }
    return 1;
}

static const char *const rfc_normal[][2] = {
    { "g:h", "g:h" }, { "g", "http://a/b/c/g" }, { "./g", "http://a/b/c/g" },
    { "g/", "http://a/b/c/g/" }, { "/g", "http://a/g" }, { "//g", "http://g" },
    { "?y", "http://a/b/c/d;p?y" }, { "g?y", "http://a/b/c/g?y" },
    { "#s", "http://a/b/c/d;p?q#s" }, { "g#s", "http://a/b/c/g#s" },
    { "g?y#s", "http://a/b/c/g?y#s" }, { ";x", "http://a/b/c/;x" },
    { "g;x", "http://a/b/c/g;x" }, { "g;x?y#s", "http://a/b/c/g;x?y#s" },
    { "", "http://a/b/c/d;p?q" }, { ".", "http://a/b/c/" }, { "./", "http://a/b/c/" },
    { "..", "http://a/b/" }, { "../", "http://a/b/" }, { "../g", "http://a/b/g" },
    { "../..", "http://a/" }, { "../../", "http://a/" }, { "../../g", "http://a/g" },
};

static const char *const rfc_abnormal[][2] = {
    { "../../../g", "http://a/g" }, { "../../../../g", "http://a/g" },
    { "/./g", "http://a/g" }, { "/../g", "http://a/g" }, { "g.", "http://a/b/c/g." },
    { ".g", "http://a/b/c/.g" }, { "g..", "http://a/b/c/g.." }, { "..g", "http://a/b/c/..g" },
    { "./../g", "http://a/b/g" }, { "./g/.", "http://a/b/c/g/" },
    { "g/./h", "http://a/b/c/g/h" }, { "g/../h", "http://a/b/c/h" },
    { "g;x=1/./y", "http://a/b/c/g;x=1/y" }, { "g;x=1/../y", "http://a/b/c/y" },
    { "g?y/./x", "http://a/b/c/g?y/./x" }, { "g?y/../x", "http://a/b/c/g?y/../x" },
    { "g#s/./x", "http://a/b/c/g#s/./x" }, { "g#s/../x", "http://a/b/c/g#s/../x" },
    { "http:g", "http:g" },
};

#define RFC_BASE "http://a/b/c/d;p?q"

static void url_resolve_gives_the_rfc3986_5_4_1_normal_examples(void)
{
    size_t i;
    for (i = 0; i < sizeof rfc_normal / sizeof rfc_normal[0]; i++)
        CHECK(resolves(RFC_BASE, rfc_normal[i][0], 0, rfc_normal[i][1]));
}

static void url_resolve_gives_the_rfc3986_5_4_2_abnormal_examples(void)
{
    size_t i;
    for (i = 0; i < sizeof rfc_abnormal / sizeof rfc_abnormal[0]; i++)
        CHECK(resolves(RFC_BASE, rfc_abnormal[i][0], 0, rfc_abnormal[i][1]));
}

/* The same examples normalized and without fragments: equal to the RFC's
 * answer with its "#..." cut off (they are already lowercase, no ports). */
static void url_resolve_normalized_matches_the_rfc_examples_without_fragment(void)
{
    size_t i;
    for (i = 0; i < sizeof rfc_normal / sizeof rfc_normal[0]; i++) {
        char want[128];
        const char *h;
        strcpy(want, rfc_normal[i][1]);
        if ((h = strchr(want, '#')) != NULL)
            want[h - want] = '\0';
        if (strcmp(want, "http://g") == 0)
            strcpy(want, "http://g/");   /* an empty path with an authority becomes "/" */
        CHECK(resolves(RFC_BASE, rfc_normal[i][0], SH_URL_NORMALIZE | SH_URL_DROP_FRAGMENT, want));
    }
    for (i = 0; i < sizeof rfc_abnormal / sizeof rfc_abnormal[0]; i++) {
        char want[128];
        const char *h;
        strcpy(want, rfc_abnormal[i][1]);
        if ((h = strchr(want, '#')) != NULL)
            want[h - want] = '\0';
        CHECK(resolves(RFC_BASE, rfc_abnormal[i][0], SH_URL_NORMALIZE | SH_URL_DROP_FRAGMENT, want));
    }
}

static void url_resolve_rejects_relative_references_without_an_absolute_base(void)
{
    CHECK(resolves(NULL, "g", 0, NULL));
    CHECK(resolves("/a/b", "g", 0, NULL));
    CHECK(resolves(NULL, "http://x/y", 0, "http://x/y"));
}

static void url_resolve_rejects_a_too_small_output_buffer(void)
{
    char out[8];
    size_t len;
    sh_error err;
    CHECK(sh_url_resolve("http://a/", 9, "g", 1, 0, out, sizeof out, &len, &err) == SH_EINVAL);
    CHECK(err.code == SH_EINVAL);
}

static void url_normalize_lowercases_scheme_and_host_and_drops_default_ports(void)
{
    CHECK(normalizes("HTTP://WWW.Example.COM:80/A/B?Q=X#Frag", "http://www.example.com/A/B?Q=X"));
    CHECK(normalizes("https://Example.com:443", "https://example.com/"));
    CHECK(normalizes("https://example.com:80/", "https://example.com:80/"));
    CHECK(normalizes("http://example.com:443/", "http://example.com:443/"));
    CHECK(normalizes("http://example.com:/x", "http://example.com/x"));
    CHECK(normalizes("http://User:Pw@Host:8080/", "http://User:Pw@host:8080/"));
    CHECK(normalizes("http://[::1]:80/a", "http://[::1]/a"));
}

static void url_normalize_fixes_percent_escapes_and_dot_segments(void)
{
    CHECK(normalizes("http://a/%7euser/%2fx%3a", "http://a/~user/%2Fx%3A"));
    CHECK(normalizes("http://a/b/../../c/./d", "http://a/c/d"));
    CHECK(normalizes("http://a/%2E%2E/x", "http://a/x"));
    CHECK(normalizes("http://a/x%", "http://a/x%"));
    CHECK(normalizes("http://a/x%4", "http://a/x%4"));
    CHECK(normalizes("mailto:Joe@Example.COM", "mailto:Joe@Example.COM"));
}

static void url_normalize_rejects_relative_and_malformed_urls(void)
{
    CHECK(normalizes("/just/a/path", NULL));
    CHECK(normalizes("http://a:8x/", NULL));
    CHECK(normalizes("http://[::1/", NULL));
    CHECK(normalizes("1http://a/", NULL));   /* not a scheme: relative */
}

static void url_split_names_every_component(void)
{
    const char *u = "https://joe@Host.example:8443/p/a/t/h?query=1#frag";
    sh_url_parts p;
    CHECK(sh_url_split(u, strlen(u), &p, NULL) == SH_OK);
    CHECK(p.has_scheme && p.scheme_len == 5 && memcmp(u + p.scheme_off, "https", 5) == 0);
    CHECK(p.has_auth && p.auth_len == strlen("joe@Host.example:8443"));
    CHECK(p.host_len == 12 && memcmp(u + p.host_off, "Host.example", 12) == 0);
    CHECK(p.has_port && p.port_len == 4 && memcmp(u + p.port_off, "8443", 4) == 0);
    CHECK(p.path_len == 8 && memcmp(u + p.path_off, "/p/a/t/h", 8) == 0);
    CHECK(p.has_query && p.query_len == 7 && memcmp(u + p.query_off, "query=1", 7) == 0);
    CHECK(p.has_frag && p.frag_len == 4 && memcmp(u + p.frag_off, "frag", 4) == 0);

    CHECK(sh_url_split("a/b?", 4, &p, NULL) == SH_OK);
    CHECK(!p.has_scheme && !p.has_auth && p.path_len == 3 && p.has_query && p.query_len == 0);
    CHECK(!p.has_frag);
    CHECK(sh_url_split("", 0, &p, NULL) == SH_OK);
    CHECK(!p.has_scheme && p.path_len == 0 && !p.has_query);
}

/* ---- extraction ----------------------------------------------------------- */

static int link_is(const sh_links *L, size_t i, const char *want)
{
    if (i >= L->n) {
        fprintf(stderr, "  link %zu missing (have %zu), want %s\n", i, L->n, want);
        return 0;
    }
    if (L->v[i].len != strlen(want) || memcmp(L->text + L->v[i].off, want, L->v[i].len) != 0) {
        fprintf(stderr, "  link %zu = \"%.*s\", want \"%s\"\n", i, (int)L->v[i].len,
                L->text + L->v[i].off, want);
        return 0;
    }
    return 1;
}

static sh_status extract(sh_links *L, const char *html, const char *page)
{
    return sh_links_extract(html, strlen(html), page, page ? strlen(page) : 0, L, NULL);
}

static void links_resolves_relative_absolute_and_protocol_relative_hrefs(void)
{
    sh_links L = { 0 };
    const char *page = "http://www.Example.com/dir/page.html?x=1";
    const char *html =
        "<html><body><a href=\"other.html\">o</a> <a href='../up.html'>u</a>\n"
        "<a href=\"/root.html\">r</a><a href=\"//cdn.example.net/x.js\">c</a>"
        "<a href=\"HTTPS://Secure.Example.com:443/s\">s</a>"
        "<a href=\"?q=2\">q</a><a href=\"sub/./a/../b.html#part\">f</a></body></html>";
    CHECK(extract(&L, html, page) == SH_OK);
    CHECK_EQ_U64(L.n, 7);
    CHECK(link_is(&L, 0, "http://www.example.com/dir/other.html"));
    CHECK(link_is(&L, 1, "http://www.example.com/up.html"));
    CHECK(link_is(&L, 2, "http://www.example.com/root.html"));
    CHECK(link_is(&L, 3, "http://cdn.example.net/x.js"));
    CHECK(link_is(&L, 4, "https://secure.example.com/s"));
    CHECK(link_is(&L, 5, "http://www.example.com/dir/page.html?q=2"));
    CHECK(link_is(&L, 6, "http://www.example.com/dir/sub/b.html"));
    /* offsets point at the tag and the raw value in the page */
    CHECK_EQ_U64(L.v[0].tag_off, strstr(html, "<a href=\"other") - html);
    CHECK_EQ_U64(L.v[0].val_off, strstr(html, "other.html") - html);
    CHECK_EQ_U64(L.v[0].val_len, 10);
    CHECK(L.v[0].tag == SH_LINK_A);
    sh_links_free(&L);
}

static void links_takes_area_link_frame_and_iframe_and_ignores_other_tags(void)
{
    sh_links L = { 0 };
    const char *html =
        "<map><area shape=rect href=\"map.html\"></map><link rel=stylesheet href=s.css>"
        "<frameset><frame src=\"f.html\"></frameset><iframe src='i.html'></iframe>"
        "<img src=\"img.png\"><script src=\"x.js\"></script><form action=\"/post\">"
        "<frame href=\"not-a-frame-attr.html\"><a name=top>anchor</a>";
    CHECK(extract(&L, html, "http://h/d/") == SH_OK);
    CHECK_EQ_U64(L.n, 4);
    CHECK(link_is(&L, 0, "http://h/d/map.html") && L.v[0].tag == SH_LINK_AREA);
    CHECK(link_is(&L, 1, "http://h/d/s.css") && L.v[1].tag == SH_LINK_LINK);
    CHECK(link_is(&L, 2, "http://h/d/f.html") && L.v[2].tag == SH_LINK_FRAME);
    CHECK(link_is(&L, 3, "http://h/d/i.html") && L.v[3].tag == SH_LINK_IFRAME);
    sh_links_free(&L);
}

static void links_honours_the_first_base_href_wherever_it_appears(void)
{
    sh_links L = { 0 };
    const char *html = "<a href=before.html>b</a><head><BASE HREF=\"../other/\">"
                       "<base href=\"http://ignored/\"></head><a href=x.html>x</a>"
                       "<a href=\"/abs\">a</a>";
    CHECK(extract(&L, html, "http://host/a/b/page.html") == SH_OK);
    CHECK_EQ_U64(L.n, 3);
    CHECK(link_is(&L, 0, "http://host/a/other/before.html"));
    CHECK(link_is(&L, 1, "http://host/a/other/x.html"));
    CHECK(link_is(&L, 2, "http://host/abs"));

    /* an absolute base works without a page URL */
    CHECK(extract(&L, "<base href='http://B.org/p/q'><a href=r>", NULL) == SH_OK);
    CHECK_EQ_U64(L.n, 1);
    CHECK(link_is(&L, 0, "http://b.org/p/r"));
    sh_links_free(&L);
}

static void links_skips_script_mail_data_tel_links_and_same_page_fragments(void)
{
    sh_links L = { 0 };
    const char *html =
        "<a href=\"javascript:void(0)\">j</a><a href=\" JavaScript:go()\">j</a>"
        "<a href=\"java&#x0A;script:x\">j</a><a href=\"mailto:a@b\">m</a>"
        "<a href=\"data:text/html,hi\">d</a><a href=\"tel:+1555\">t</a><a href=\"#top\">t</a>"
        "<a href=\"\">e</a><a href>n</a><a href=\"ftp://f.org/x#y\">f</a><a href=\"tel/x\">r</a>";
    CHECK(extract(&L, html, "http://h/") == SH_OK);
    CHECK_EQ_U64(L.n, 2);
    CHECK(link_is(&L, 0, "ftp://f.org/x"));
    CHECK(link_is(&L, 1, "http://h/tel/x"));
    sh_links_free(&L);
}

static void links_clamps_dot_dot_beyond_the_root(void)
{
    sh_links L = { 0 };
    CHECK(extract(&L, "<a href=\"../../../../x/../y\">", "http://h/a/b") == SH_OK);
    CHECK_EQ_U64(L.n, 1);
    CHECK(link_is(&L, 0, "http://h/y"));
    sh_links_free(&L);
}

static void links_decodes_entities_in_attribute_values(void)
{
    sh_links L = { 0 };
    const char *html =
        "<a href=\"p?a=1&amp;b=2&#38;c=3&#x26;d=4\">1</a>"
        "<a href=\"p?a=1&amp=2&copy=3&ampx\">2</a>"
        "<a href=\"q?x=&quot;&lt;&gt;&#0;\">3</a>"
        "<a href=\"&#104;ttp://e.org/&#x7E;u\">4</a>";
    CHECK(extract(&L, html, "http://h/") == SH_OK);
    CHECK_EQ_U64(L.n, 4);
    CHECK(link_is(&L, 0, "http://h/p?a=1&b=2&c=3&d=4"));
    CHECK(link_is(&L, 1, "http://h/p?a=1&amp=2&copy=3&ampx"));
    CHECK(link_is(&L, 2, "http://h/q?x=\"<>\xEF\xBF\xBD"));
    CHECK(link_is(&L, 3, "http://e.org/~u"));
    sh_links_free(&L);
}

static void links_reads_uppercase_tags_unquoted_values_and_odd_spacing(void)
{
    sh_links L = { 0 };
    const char *html =
        "<A HREF=one.html>1</A><a\nclass=x\thref = two.html >2</a>"
        "<a href=three.html/>3</a><a title='x>y' href=\"four.html\">4</a>"
        "<a href=\"  five.html\n\">5</a><a href=\"six\n.html\">6</a>"
        "<a href=first.html href=second.html>7</a>";
    CHECK(extract(&L, html, "http://h/") == SH_OK);
    CHECK_EQ_U64(L.n, 7);
    CHECK(link_is(&L, 0, "http://h/one.html"));
    CHECK(link_is(&L, 1, "http://h/two.html"));
    CHECK(link_is(&L, 2, "http://h/three.html/"));
    CHECK(link_is(&L, 3, "http://h/four.html"));
    CHECK(link_is(&L, 4, "http://h/five.html"));
    CHECK(link_is(&L, 5, "http://h/six.html"));
    CHECK(link_is(&L, 6, "http://h/first.html"));
    sh_links_free(&L);
}

static void links_ignores_comments_scripts_and_styles(void)
{
    sh_links L = { 0 };
    const char *html =
        "<!-- <a href=c1.html> --><script>document.write('<a href=s.html>')</script>"
        "<style>a[href=\"<a href=st.html>\"]{}</style><SCRIPT>x='</scr'</SCRIPT>"
        "<!DOCTYPE html><?xml x?><a href=real.html>r</a><!-- unterminated <a href=u.html>";
    CHECK(extract(&L, html, "http://h/") == SH_OK);
    CHECK_EQ_U64(L.n, 1);
    CHECK(link_is(&L, 0, "http://h/real.html"));
    sh_links_free(&L);
}

static void links_without_page_url_keeps_only_absolute_links(void)
{
    sh_links L = { 0 };
    CHECK(extract(&L, "<a href=rel.html><a href=\"HTTP://X.org\">", NULL) == SH_OK);
    CHECK_EQ_U64(L.n, 1);
    CHECK(link_is(&L, 0, "http://x.org/"));
    sh_links_free(&L);
}

static void links_drops_unterminated_tags_and_quotes_without_crashing(void)
{
    sh_links L = { 0 };
    CHECK(extract(&L, "<a href=ok.html>x</a><a href=\"never-closed.html>text", "http://h/") == SH_OK);
    CHECK_EQ_U64(L.n, 1);
    CHECK(link_is(&L, 0, "http://h/ok.html"));
    CHECK(extract(&L, "<a href=ok.html>x</a><a href=x.html", "http://h/") == SH_OK);
    CHECK_EQ_U64(L.n, 1);
    CHECK(extract(&L, "<", "http://h/") == SH_OK && L.n == 0);
    CHECK(extract(&L, "<a", "http://h/") == SH_OK && L.n == 0);
    CHECK(extract(&L, "<a href=", "http://h/") == SH_OK && L.n == 0);
    CHECK(extract(&L, "<a href='", "http://h/") == SH_OK && L.n == 0);
    CHECK(extract(&L, "<!--", "http://h/") == SH_OK && L.n == 0);
    CHECK(extract(&L, "<script>", "http://h/") == SH_OK && L.n == 0);
    CHECK(extract(&L, "", "http://h/") == SH_OK && L.n == 0);
    CHECK(extract(&L, "<a href=\"&#\">", "http://h/") == SH_OK && L.n == 1);
    CHECK(extract(&L, "<a href=\"&#x110000;&#99999999999999999999;&\">", "http://h/") == SH_OK);
    CHECK(extract(&L, "<a href=\"http://[::1/\">", "http://h/") == SH_OK && L.n == 0);
    sh_links_free(&L);
}

/* Every prefix of a page, and random bytes, are handled (run under ASan). */
static void links_survives_every_prefix_and_random_bytes(void)
{
    sh_links L = { 0 };
    const char *html =
        "<html><BASE href='http://b/x/'><a href=\"a&amp;b.html\">x</a><!-- c --><area href=y>"
        "<script>'<a href=z>'</script><iframe src='//i/f'><a href=../../../q?r#s>";
    size_t n = strlen(html), i, ok = 1;
    unsigned seed = 12345;
    char buf[300];
    for (i = 0; i <= n; i++) {
        char *copy = malloc(i ? i : 1);   /* exact size: ASan catches overreads */
        memcpy(copy, html, i);
        if (sh_links_extract(copy, i, "http://p/q", 10, &L, NULL) != SH_OK)
            ok = 0;
        free(copy);
    }
    CHECK(ok);
    CHECK(extract(&L, html, "http://p/") == SH_OK);
    CHECK_EQ_U64(L.n, 4);
    for (i = 0; i < 2000; i++) {
        size_t len = 0, k;
        char *copy;
        while (len < sizeof buf) {
            static const char alpha[] = "<>a hrefsrc=\"'&#;x/.:?!-base";
            seed = seed * 1103515245u + 12345u;
            if ((seed >> 16) % 64 == 0)
                break;
            buf[len++] = alpha[(seed >> 16) % (sizeof alpha - 1)];
        }
        copy = malloc(len ? len : 1);
        memcpy(copy, buf, len);
        if (sh_links_extract(copy, len, "http://p/q", 10, &L, NULL) != SH_OK)
            ok = 0;
        for (k = 0; k < L.n; k++)
            if (L.v[k].off + L.v[k].len > L.text_len || L.v[k].val_off + L.v[k].val_len > len)
                ok = 0;
        free(copy);
    }
    CHECK(ok);
    sh_links_free(&L);
}

int main(void)
{
    RUN(url_resolve_gives_the_rfc3986_5_4_1_normal_examples);
    RUN(url_resolve_gives_the_rfc3986_5_4_2_abnormal_examples);
    RUN(url_resolve_normalized_matches_the_rfc_examples_without_fragment);
    RUN(url_resolve_rejects_relative_references_without_an_absolute_base);
    RUN(url_resolve_rejects_a_too_small_output_buffer);
    RUN(url_normalize_lowercases_scheme_and_host_and_drops_default_ports);
    RUN(url_normalize_fixes_percent_escapes_and_dot_segments);
    RUN(url_normalize_rejects_relative_and_malformed_urls);
    RUN(url_split_names_every_component);
    RUN(links_resolves_relative_absolute_and_protocol_relative_hrefs);
    RUN(links_takes_area_link_frame_and_iframe_and_ignores_other_tags);
    RUN(links_honours_the_first_base_href_wherever_it_appears);
    RUN(links_skips_script_mail_data_tel_links_and_same_page_fragments);
    RUN(links_clamps_dot_dot_beyond_the_root);
    RUN(links_decodes_entities_in_attribute_values);
    RUN(links_reads_uppercase_tags_unquoted_values_and_odd_spacing);
    RUN(links_ignores_comments_scripts_and_styles);
    RUN(links_without_page_url_keeps_only_absolute_links);
    RUN(links_drops_unterminated_tags_and_quotes_without_crashing);
    RUN(links_survives_every_prefix_and_random_bytes);
    return TEST_END();
}
