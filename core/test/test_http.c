/* Header fields and HTTP responses (core/http.h) on their own, without a
 * WARC around them (test_warc.c reads them through WARC records). */
#include <stdlib.h>
#include <zlib.h>
#include "../http.h"
#include "test.h"
#include "testbuf.h"

static int streq(const char *a, const char *b) { return a && b && strcmp(a, b) == 0; }

static void header_fields_fold_trim_and_ignore_case(void)
{
    char buf[] = "Host:  example.org \r\nX-Folded: first\r\n\tsecond  \r\nno colon here\r\nEmpty:\r\n\r\nAfter: ignored\r\n";
    char strict[] = "A: 1\r\nbroken\r\n";
    sh_header_field *f = NULL;
    size_t cap = 0, n, bad;
    CHECK(sh_header_parse(buf, 0, sizeof buf - 1, &f, &cap, &n, 0, &bad) == 1 && bad == 0);
    CHECK(n == 3);
    CHECK(streq(sh_header_get(f, n, "host"), "example.org"));
    CHECK(streq(sh_header_get(f, n, "X-FOLDED"), "first second"));
    CHECK(streq(sh_header_get(f, n, "empty"), ""));
    CHECK(sh_header_get(f, n, "After") == NULL);
    CHECK(sh_header_parse(strict, 0, sizeof strict - 1, &f, &cap, &n, 1, &bad) == 1 && bad == 7);
    CHECK(sh_header_eq("Content-Type", "content-TYPE") && !sh_header_eq("Content-Type", "Content-Typ"));
    CHECK(sh_header_find("text/HTML; charset=x", "html") != NULL && sh_header_find("text/plain", "html") == NULL);
    free(f);
}

/* a response block: headers (CRLF-ended lines), then body[0..blen) */
static size_t response(char *out, const char *headers, const void *body, size_t blen)
{
    size_t h = strlen(headers);
    memcpy(out, headers, h);
    memcpy(out + h, body, blen);
    return h + blen;
}

static void bodies_are_dechunked_and_decoded(void)
{
    static char block[8192];
    bytes z = { 0 };
    const char *text = "the document, which is the text to shingle, and nothing else";
    sh_http *h;
    sh_http_response r;
    sh_error err;
    size_t n;
    CHECK(sh_http_new(&h, &err) == SH_OK);
    /* chunked, after an interim 100 Continue */
    n = response(block, "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Type: text/html\r\n\r\n",
                 "7\r\nthe doc\r\n3;ext=1\r\nume\r\n0\r\n\r\n", 31);
    CHECK(sh_http_parse(h, block, n, 1 << 20, &r, &err) == SH_OK);
    CHECK(r.status == 200 && streq(r.content_type, "text/html") && r.warning == NULL);
    CHECK(r.payload_len == 10 && memcmp(r.payload, "the docume", 10) == 0);
    CHECK(r.headers_len > 0 && memcmp(r.headers, "HTTP/1.1 200", 12) == 0);
    /* gzip */
    z.n = 0;
    deflate_to(&z, text, strlen(text), 15 + 16);
    n = response(block, "HTTP/1.0 200 OK\r\nContent-Encoding: gzip\r\n\r\n", z.p, z.n);
    CHECK(sh_http_parse(h, block, n, 1 << 20, &r, &err) == SH_OK);
    CHECK(r.payload_len == strlen(text) && memcmp(r.payload, text, r.payload_len) == 0 && r.warning == NULL);
    /* raw deflate under "deflate" (no zlib wrapper): tried after the wrapped form, no warning left */
    z.n = 0;
    deflate_to(&z, text, strlen(text), -15);
    n = response(block, "HTTP/1.1 200 OK\r\nContent-Encoding: deflate\r\n\r\n", z.p, z.n);
    CHECK(sh_http_parse(h, block, n, 1 << 20, &r, &err) == SH_OK);
    CHECK(r.payload_len == strlen(text) && memcmp(r.payload, text, r.payload_len) == 0 && r.warning == NULL);
    /* a decoded body over max_body is cut, with a warning */
    z.n = 0;
    deflate_to(&z, text, strlen(text), 15 + 16);
    n = response(block, "HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\n\r\n", z.p, z.n);
    CHECK(sh_http_parse(h, block, n, 10, &r, &err) == SH_OK);
    CHECK(r.payload_len == 10 && r.warning && strstr(r.warning, "exceeds max_record") != NULL);
    /* an encoding it does not know: the body as stored, and why */
    n = response(block, "HTTP/1.1 200 OK\r\nContent-Encoding: br\r\n\r\n", "xyz", 3);
    CHECK(sh_http_parse(h, block, n, 1 << 20, &r, &err) == SH_OK);
    CHECK(r.payload_len == 3 && r.warning && strstr(r.warning, "\"br\" is not decoded") != NULL);
    /* not a response: no status, an empty payload, a warning; the next parse starts clean */
    CHECK(sh_http_parse(h, "GET / HTTP/1.1\r\n\r\n", 18, 1 << 20, &r, &err) == SH_OK);
    CHECK(r.status == 0 && r.payload_len == 0 && r.payload && r.warning && strstr(r.warning, "status line") != NULL);
    /* a truncated chunk keeps what there is */
    n = response(block, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", "10\r\nonly eight", 14);
    CHECK(sh_http_parse(h, block, n, 1 << 20, &r, &err) == SH_OK);
    CHECK(r.payload_len == 10 && r.warning && strstr(r.warning, "truncated") != NULL);
    sh_http_free(h);
    free(z.p);
}

int main(void)
{
    RUN(header_fields_fold_trim_and_ignore_case);
    RUN(bodies_are_dechunked_and_decoded);
    return TEST_END();
}
