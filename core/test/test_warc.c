#include "warc.h"
#include "test.h"
#include "testbuf.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>
#include <zlib.h>

/* ---- building WARC files ------------------------------------------------- */

/* One record: version line, the usual fields (those given), Content-Length,
 * extra header lines (each ending in CRLF), the block and CRLF CRLF. */
static void record(bytes *b, const char *version, const char *type, const char *uri,
                   const char *ctype, const char *extra, const void *block, size_t blen)
{
    char line[256];
    static int serial;
    puts_(b, version);
    puts_(b, "\r\n");
    snprintf(line, sizeof line, "WARC-Type: %s\r\n", type);
    puts_(b, line);
    if (uri) {
        snprintf(line, sizeof line, "WARC-Target-URI: %s\r\n", uri);
        puts_(b, line);
    }
    puts_(b, "WARC-Date: 2024-05-01T12:00:00Z\r\n");
    snprintf(line, sizeof line, "WARC-Record-ID: <urn:uuid:00000000-0000-0000-0000-%012d>\r\n",
             ++serial);
    puts_(b, line);
    if (ctype) {
        snprintf(line, sizeof line, "Content-Type: %s\r\n", ctype);
        puts_(b, line);
    }
    if (extra)
        puts_(b, extra);
    snprintf(line, sizeof line, "Content-Length: %zu\r\n\r\n", blen);
    puts_(b, line);
    put(b, block, blen);
    puts_(b, "\r\n\r\n");
}

/* in[0..n) as one gzip member (wbits 31), or raw deflate (wbits -15), or zlib (15). */
static char tmpdir[] = "/tmp/shingle-test-warc-XXXXXX";

static const char *write_file(const char *name, const void *p, size_t n)
{
    static char path[4][300];
    static int k;
    FILE *f;
    char *out = path[k++ % 4];
    snprintf(out, 300, "%s/%s", tmpdir, name);
    f = fopen(out, "wb");
    if (!f || (n && fwrite(p, 1, n, f) != n) || fclose(f) != 0) {
        fprintf(stderr, "cannot write %s\n", out);
        exit(2);
    }
    return out;
}

/* A sample crawl: warcinfo, request, response (HTTP, html), resource. Each
 * record's start offset in the plain file is put in offs[]. */
#define NREC 4
static const char *const html_body = "<html><body>Hello, <b>world</b>.</body></html>";

static void sample_records(bytes *recs[NREC])
{
    char http[512];
    const char *info = "software: shingle-test\r\nformat: WARC File Format 1.0\r\n";
    const char *req = "GET /page.html HTTP/1.1\r\nHost: example.com\r\n\r\n";
    const char *res = "Plain resource text.";
    snprintf(http, sizeof http,
             "HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nServer: test\r\n"
             "X-Folded: first\r\n  second\r\nContent-Length: %zu\r\n\r\n%s",
             strlen(html_body), html_body);
    record(recs[0], "WARC/1.0", "warcinfo", NULL, "application/warc-fields",
           "WARC-Filename: sample.warc\r\n", info, strlen(info));
    record(recs[1], "WARC/1.0", "request", "<http://example.com/page.html>",
           "application/http; msgtype=request", NULL, req, strlen(req));
    record(recs[2], "WARC/1.0", "response", "http://example.com/page.html",
           "application/http; msgtype=response",
           "WARC-Payload-Digest: sha1:XYZ\r\nWARC-Folded: a\r\n\tb\r\n", http, strlen(http));
    record(recs[3], "WARC/1.1", "resource", "file:///tmp/res.txt", "text/plain", NULL, res,
           strlen(res));
}

static int streq(const char *a, const char *b) { return a && b && strcmp(a, b) == 0; }

static int payload_is(const sh_warc_record *r, const char *want)
{
    if (r->payload_len != strlen(want) || memcmp(r->payload, want, r->payload_len) != 0) {
        fprintf(stderr, "  payload \"%.*s\", want \"%s\"\n", (int)r->payload_len, r->payload, want);
        return 0;
    }
    return 1;
}

static void check_sample(sh_warc *w, const uint64_t offs[NREC], const uint64_t lens[NREC])
{
    const sh_warc_record *r;
    sh_error err;
    CHECK(sh_warc_next(w, &r, &err) == SH_OK && r);
    if (!r)
        return;
    CHECK(streq(r->version, "WARC/1.0"));
    CHECK(streq(r->type, "warcinfo"));
    CHECK(r->target_uri == NULL);
    CHECK(streq(r->content_type, "application/warc-fields"));
    CHECK(streq(r->date, "2024-05-01T12:00:00Z"));
    CHECK(r->record_id && strncmp(r->record_id, "<urn:uuid:", 10) == 0);
    CHECK(streq(sh_header_get(r->fields, r->nfields, "warc-filename"), "sample.warc"));
    CHECK_EQ_U64(r->offset, offs[0]);
    CHECK_EQ_U64(r->length, lens[0]);
    CHECK(r->http_status == 0 && r->warning == NULL && !r->skipped);
    CHECK(payload_is(r, "software: shingle-test\r\nformat: WARC File Format 1.0\r\n"));
    CHECK(r->block == r->payload && r->block_len == r->content_length);

    CHECK(sh_warc_next(w, &r, &err) == SH_OK && r);
    if (!r)
        return;
    CHECK(streq(r->type, "request"));
    CHECK(streq(r->target_uri, "http://example.com/page.html"));   /* <> removed */
    CHECK_EQ_U64(r->offset, offs[1]);
    CHECK_EQ_U64(r->length, lens[1]);
    CHECK(r->http_status == 0);   /* requests are not parsed */
    CHECK(payload_is(r, "GET /page.html HTTP/1.1\r\nHost: example.com\r\n\r\n"));

    CHECK(sh_warc_next(w, &r, &err) == SH_OK && r);
    if (!r)
        return;
    CHECK(streq(r->type, "response"));
    CHECK(streq(r->target_uri, "http://example.com/page.html"));
    CHECK(streq(r->content_type, "application/http; msgtype=response"));
    CHECK(streq(sh_header_get(r->fields, r->nfields, "WARC-Payload-Digest"), "sha1:XYZ"));
    CHECK(streq(sh_header_get(r->fields, r->nfields, "WARC-Folded"), "a b"));
    CHECK_EQ_U64(r->offset, offs[2]);
    CHECK_EQ_U64(r->length, lens[2]);
    CHECK(r->http_status == 200);
    CHECK(streq(r->http_content_type, "text/html; charset=utf-8"));
    CHECK(streq(sh_header_get(r->http_fields, r->http_nfields, "server"), "test"));
    CHECK(streq(sh_header_get(r->http_fields, r->http_nfields, "X-Folded"), "first second"));
    CHECK(r->http_headers == r->block && strncmp(r->http_headers, "HTTP/1.1 200 OK\r\n", 17) == 0);
    CHECK(r->http_headers_len + 2 + strlen(html_body) == r->block_len);
    CHECK(payload_is(r, html_body));
    CHECK(r->warning == NULL);

    CHECK(sh_warc_next(w, &r, &err) == SH_OK && r);
    if (!r)
        return;
    CHECK(streq(r->version, "WARC/1.1"));
    CHECK(streq(r->type, "resource"));
    CHECK(streq(r->target_uri, "file:///tmp/res.txt"));
    CHECK_EQ_U64(r->offset, offs[3]);
    CHECK_EQ_U64(r->length, lens[3]);
    CHECK(payload_is(r, "Plain resource text."));

    CHECK(sh_warc_next(w, &r, &err) == SH_OK && r == NULL);
    CHECK(sh_warc_next(w, &r, &err) == SH_OK && r == NULL);   /* end stays the end */
}

/* The sample as a plain file and as one gzip member per record. */
static void build_sample(bytes *plain, bytes *gz, uint64_t poffs[NREC], uint64_t plens[NREC],
                         uint64_t goffs[NREC], uint64_t glens[NREC])
{
    bytes r[NREC];
    bytes *rp[NREC];
    int i;
    memset(r, 0, sizeof r);
    for (i = 0; i < NREC; i++)
        rp[i] = &r[i];
    sample_records(rp);
    for (i = 0; i < NREC; i++) {
        poffs[i] = plain->n;
        plens[i] = r[i].n;
        put(plain, r[i].p, r[i].n);
        goffs[i] = gz->n;
        deflate_to(gz, r[i].p, r[i].n, 31);
        glens[i] = gz->n - goffs[i];
        free(r[i].p);
    }
}

/* Read everything, count records and errors; never more than limit calls. */
static int drain(sh_warc *w, size_t *nrec, size_t *nerr, size_t limit)
{
    size_t calls = 0;
    *nrec = *nerr = 0;
    while (calls++ < limit) {
        const sh_warc_record *r;
        sh_error err;
        sh_status st = sh_warc_next(w, &r, &err);
        if (st != SH_OK) {
            (*nerr)++;
            if (err.code != st || err.msg[0] == '\0')
                return 0;
            continue;
        }
        if (!r)
            return 1;
        if (r->payload == NULL || (r->block && r->block_len != r->content_length))
            return 0;
        (*nrec)++;
    }
    return 0;   /* did not reach the end: a hang */
}

/* ---- tests ------------------------------------------------------------------ */

static void reads_every_field_of_a_plain_warc(void)
{
    bytes plain = { 0 }, gz = { 0 };
    uint64_t po[NREC], pl[NREC], go[NREC], gl[NREC];
    sh_warc *w;
    sh_error err;
    build_sample(&plain, &gz, po, pl, go, gl);
    CHECK(sh_warc_open(write_file("plain.warc", plain.p, plain.n), NULL, &w, &err) == SH_OK);
    CHECK(!sh_warc_is_gzip(w));
    check_sample(w, po, pl);
    sh_warc_close(w);
    free(plain.p);
    free(gz.p);
}

/* Records of many sizes (empty, exactly one buffer, several buffers) so that
 * headers, blocks and gzip members straddle the reader's 64 KiB buffers. */
#define NMANY 40

static size_t many_size(int i)
{
    static const size_t fixed[] = { 0, 1, 65535, 65536, 65537, 300000 };
    if (i < 6)
        return fixed[i];
    return ((size_t)i * (size_t)i * 7919u) % 180000u;
}

static void fill_block(unsigned char *p, size_t n, int i)
{
    size_t k;
    for (k = 0; k < n; k++)
        p[k] = (unsigned char)('a' + (k * 31 + (size_t)i * 17) % 26);
}

static void reads_many_records_across_buffer_boundaries(void)
{
    bytes plain = { 0 }, gz = { 0 }, one = { 0 };
    uint64_t po[NMANY], pl[NMANY], go[NMANY], gl[NMANY];
    unsigned char *blk = malloc(300000);
    size_t bad_at;
    char uri[64];
    int i, pass, ok = 1;
    sh_warc *w;
    sh_error err;
    const sh_warc_record *r;
    for (i = 0; i < NMANY; i++) {
        size_t n = many_size(i);
        fill_block(blk, n, i);
        snprintf(uri, sizeof uri, "http://many/%d", i);
        one.n = 0;
        record(&one, "WARC/1.0", "resource", uri, "text/plain", NULL, blk, n);
        po[i] = plain.n;
        pl[i] = one.n;
        put(&plain, one.p, one.n);
        go[i] = gz.n;
        deflate_to(&gz, one.p, one.n, 31);
        gl[i] = gz.n - go[i];
    }
    for (pass = 0; pass < 2; pass++) {
        const char *path = pass ? write_file("many.warc.gz", gz.p, gz.n)
                                : write_file("many.warc", plain.p, plain.n);
        CHECK(sh_warc_open(path, NULL, &w, &err) == SH_OK);
        for (i = 0; i < NMANY; i++) {
            size_t n = many_size(i);
            if (sh_warc_next(w, &r, &err) != SH_OK || !r) {
                fprintf(stderr, "  record %d: %s\n", i, err.msg);
                ok = 0;
                break;
            }
            fill_block(blk, n, i);
            snprintf(uri, sizeof uri, "http://many/%d", i);
            if (r->payload_len != n || memcmp(r->payload, blk, n) != 0 || !streq(r->target_uri, uri) ||
                r->offset != (pass ? go[i] : po[i]) || r->length != (pass ? gl[i] : pl[i])) {
                fprintf(stderr, "  record %d differs (pass %d)\n", i, pass);
                ok = 0;
            }
        }
        CHECK(sh_warc_next(w, &r, &err) == SH_OK && r == NULL);
        sh_warc_close(w);
    }
    CHECK(ok);

    /* A 300000-byte record (5) whose Content-Length is 8 too many: the error
     * comes long after its start left the buffer, so the plain reader seeks
     * back to resynchronize and finds record 6 inside the swallowed bytes. */
    {
        char *cl = strstr((char *)plain.p + po[5], "Content-Length: 300000\r\n");
        CHECK(cl != NULL);
        if (cl)
            memcpy(cl, "Content-Length: 300008", 22);
        bad_at = (size_t)po[5];
        CHECK(sh_warc_open(write_file("many-bad.warc", plain.p, plain.n), NULL, &w, &err) == SH_OK);
        for (i = 0; i < 5; i++)
            CHECK(sh_warc_next(w, &r, &err) == SH_OK && r);
        CHECK(sh_warc_next(w, &r, &err) == SH_EFORMAT && strstr(err.msg, "not followed by CRLF CRLF"));
        CHECK_EQ_U64(err.offset, bad_at);
        CHECK(sh_warc_next(w, &r, &err) == SH_OK && r && streq(r->target_uri, "http://many/6"));
        if (r)
            CHECK_EQ_U64(r->offset, po[6]);
        sh_warc_close(w);
    }
    free(blk);
    free(plain.p);
    free(gz.p);
    free(one.p);
}

static void reads_a_per_record_gzip_warc_with_member_offsets(void)
{
    bytes plain = { 0 }, gz = { 0 };
    uint64_t po[NREC], pl[NREC], go[NREC], gl[NREC];
    sh_warc *w;
    sh_error err;
    build_sample(&plain, &gz, po, pl, go, gl);
    /* the name says nothing: detection is by magic bytes */
    CHECK(sh_warc_open(write_file("compressed.warc", gz.p, gz.n), NULL, &w, &err) == SH_OK);
    CHECK(sh_warc_is_gzip(w));
    CHECK(go[0] == 0 && go[1] > 0);
    check_sample(w, go, gl);
    sh_warc_close(w);
    free(plain.p);
    free(gz.p);
}

static void reads_a_whole_file_gzip_stream_with_unknown_lengths(void)
{
    bytes plain = { 0 }, gz = { 0 }, one = { 0 };
    uint64_t po[NREC], pl[NREC], go[NREC], gl[NREC], zero[NREC] = { 0 };
    sh_warc *w;
    sh_error err;
    build_sample(&plain, &gz, po, pl, go, gl);
    deflate_to(&one, plain.p, plain.n, 31);
    CHECK(sh_warc_open(write_file("one-member.warc.gz", one.p, one.n), NULL, &w, &err) == SH_OK);
    /* every record starts in member 0, which holds all four: no length is known */
    check_sample(w, zero, zero);
    sh_warc_close(w);
    free(plain.p);
    free(gz.p);
    free(one.p);
}

static void reads_from_an_fd_and_a_stream_at_their_current_position(void)
{
    bytes plain = { 0 }, gz = { 0 };
    uint64_t po[NREC], pl[NREC], go[NREC], gl[NREC], po2[NREC];
    const char *path;
    sh_warc *w;
    sh_error err;
    FILE *f;
    int fd, i;
    build_sample(&plain, &gz, po, pl, go, gl);
    path = write_file("fd.warc", plain.p, plain.n);
    fd = open(path, O_RDONLY);
    CHECK(fd >= 0);
    CHECK(sh_warc_open_fd(fd, "fd.warc", NULL, &w, &err) == SH_OK);
    check_sample(w, po, pl);
    sh_warc_close(w);
    CHECK(close(fd) == 0);   /* still ours */

    /* a stream with 7 bytes of junk before the WARC: offsets are file positions */
    f = tmpfile();
    CHECK(f != NULL);
    if (!f)
        return;
    fwrite("JUNK!!\n", 1, 7, f);
    fwrite(gz.p, 1, gz.n, f);
    fseek(f, 7, SEEK_SET);
    for (i = 0; i < NREC; i++)
        po2[i] = go[i] + 7;
    CHECK(sh_warc_open_stream(f, "tmpfile", NULL, &w, &err) == SH_OK);
    CHECK(sh_warc_is_gzip(w));
    check_sample(w, po2, gl);
    sh_warc_close(w);
    fclose(f);
    free(plain.p);
    free(gz.p);
}

static void dechunks_and_decompresses_http_bodies(void)
{
    bytes f = { 0 }, http = { 0 }, z = { 0 }, zl = { 0 };
    const char *text = "<p>Compressed and chunked text, long enough to be split in chunks.</p>";
    sh_warc *w;
    sh_error err;
    const sh_warc_record *r;
    char line[64];
    size_t half;

    /* 1: chunked, with an extension and a trailer */
    puts_(&http, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Type: text/plain\r\n\r\n"
                 "5;name=x\r\nHello\r\n7\r\n, world\r\n0\r\nX-Trailer: t\r\n\r\n");
    record(&f, "WARC/1.0", "response", "http://a/1", "application/http;msgtype=response", NULL,
           http.p, http.n);
    /* 2: gzip content-encoding */
    http.n = 0;
    deflate_to(&z, text, strlen(text), 31);
    snprintf(line, sizeof line, "Content-Length: %zu\r\n\r\n", z.n);
    puts_(&http, "HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\n");
    puts_(&http, line);
    put(&http, z.p, z.n);
    record(&f, "WARC/1.0", "response", "http://a/2", "application/http", NULL, http.p, http.n);
    /* 3: gzip body sent chunked, in two chunks */
    http.n = 0;
    half = z.n / 2;
    puts_(&http, "HTTP/1.1 200 OK\r\nContent-Encoding: x-gzip\r\nTransfer-Encoding: Chunked\r\n\r\n");
    snprintf(line, sizeof line, "%zx\r\n", half);
    puts_(&http, line);
    put(&http, z.p, half);
    snprintf(line, sizeof line, "\r\n%zX\r\n", z.n - half);
    puts_(&http, line);
    put(&http, z.p + half, z.n - half);
    puts_(&http, "\r\n0\r\n\r\n");
    record(&f, "WARC/1.0", "response", "http://a/3", "application/http", NULL, http.p, http.n);
    /* 4: deflate, zlib-wrapped; 5: deflate, raw */
    http.n = 0;
    deflate_to(&zl, text, strlen(text), 15);
    puts_(&http, "HTTP/1.0 200 OK\r\nContent-Encoding: deflate\r\n\r\n");
    put(&http, zl.p, zl.n);
    record(&f, "WARC/1.0", "response", "http://a/4", "application/http", NULL, http.p, http.n);
    http.n = 0;
    zl.n = 0;
    deflate_to(&zl, text, strlen(text), -15);
    puts_(&http, "HTTP/1.0 200 OK\r\nContent-Encoding: deflate\r\n\r\n");
    put(&http, zl.p, zl.n);
    record(&f, "WARC/1.0", "response", "http://a/5", "application/http", NULL, http.p, http.n);
    /* 6: a 100 Continue before the real response; LF-only line ends */
    http.n = 0;
    puts_(&http, "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 404 Not Found\nContent-Type: text/html\n\nGone");
    record(&f, "WARC/1.0", "response", "http://a/6", "application/http", NULL, http.p, http.n);
    /* 7: "chunked" declared but stored de-chunked; gzip declared but stored decoded */
    http.n = 0;
    puts_(&http, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Encoding: gzip\r\n\r\nplain");
    record(&f, "WARC/1.0", "response", "http://a/7", "application/http", NULL, http.p, http.n);
    /* 8: truncated chunked body; 9: brotli; 10: not HTTP at all */
    http.n = 0;
    puts_(&http, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n10\r\nonly part");
    record(&f, "WARC/1.0", "response", "http://a/8", "application/http", NULL, http.p, http.n);
    http.n = 0;
    puts_(&http, "HTTP/1.1 200 OK\r\nContent-Encoding: br\r\n\r\n\x8b\x01");
    record(&f, "WARC/1.0", "response", "http://a/9", "application/http", NULL, http.p, http.n);
    record(&f, "WARC/1.0", "response", "http://a/10", "application/http", NULL, "garbage", 7);

    CHECK(sh_warc_open(write_file("http.warc", f.p, f.n), NULL, &w, &err) == SH_OK);
    CHECK(sh_warc_next(w, &r, &err) == SH_OK && r);
    if (!r)
        goto out;
    CHECK(r->http_status == 200 && streq(r->http_content_type, "text/plain"));
    CHECK(payload_is(r, "Hello, world") && r->warning == NULL);
    CHECK(sh_warc_next(w, &r, &err) == SH_OK && r);
    if (!r)
        goto out;
    CHECK(payload_is(r, text) && r->warning == NULL && r->http_content_type == NULL);
    CHECK(sh_warc_next(w, &r, &err) == SH_OK && r);
    if (!r)
        goto out;
    CHECK(payload_is(r, text) && r->warning == NULL);
    CHECK(sh_warc_next(w, &r, &err) == SH_OK && r);
    if (!r)
        goto out;
    CHECK(payload_is(r, text) && r->warning == NULL);
    CHECK(sh_warc_next(w, &r, &err) == SH_OK && r);
    if (!r)
        goto out;
    CHECK(payload_is(r, text) && r->warning == NULL);
    CHECK(sh_warc_next(w, &r, &err) == SH_OK && r);
    if (!r)
        goto out;
    CHECK(r->http_status == 404 && streq(r->http_content_type, "text/html") && payload_is(r, "Gone"));
    CHECK(strncmp(r->http_headers, "HTTP/1.1 404", 12) == 0);
    CHECK(sh_warc_next(w, &r, &err) == SH_OK && r);
    if (!r)
        goto out;
    CHECK(payload_is(r, "plain"));
    CHECK(sh_warc_next(w, &r, &err) == SH_OK && r);
    if (!r)
        goto out;
    CHECK(payload_is(r, "only part") && r->warning && strstr(r->warning, "truncated"));
    CHECK(sh_warc_next(w, &r, &err) == SH_OK && r);
    if (!r)
        goto out;
    CHECK(payload_is(r, "\x8b\x01") && r->warning && strstr(r->warning, "\"br\""));
    CHECK(sh_warc_next(w, &r, &err) == SH_OK && r);
    if (!r)
        goto out;
    CHECK(r->http_status == 0 && r->payload_len == 0 && r->block_len == 7 && r->warning);
    CHECK(sh_warc_next(w, &r, &err) == SH_OK && r == NULL);
    sh_warc_close(w);
    {   /* raw_http: the block is the payload, nothing parsed */
        sh_warc_opts o = { 0 };
        o.raw_http = 1;
        CHECK(sh_warc_open(write_file("http.warc", f.p, f.n), &o, &w, &err) == SH_OK);
        CHECK(sh_warc_next(w, &r, &err) == SH_OK && r);
        if (r)
            CHECK(r->http_status == 0 && r->payload == r->block && r->payload_len == r->block_len);
    }
out:
    sh_warc_close(w);
    free(f.p);
    free(http.p);
    free(z.p);
    free(zl.p);
}

static void keeps_a_corrupt_gzip_body_prefix_with_a_warning(void)
{
    bytes f = { 0 }, http = { 0 }, z = { 0 };
    char big[5000];
    sh_warc_opts o = { 0 };
    sh_warc *w;
    sh_error err;
    const sh_warc_record *r;
    size_t i;
    for (i = 0; i < sizeof big; i++)
        big[i] = (char)('a' + (i * 7919) % 26);
    deflate_to(&z, big, sizeof big, 31);
    puts_(&http, "HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\n\r\n");
    put(&http, z.p, z.n - 12);   /* cut off the end */
    record(&f, "WARC/1.0", "response", "http://a/", "application/http", NULL, http.p, http.n);
    http.n = 0;
    puts_(&http, "HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\n\r\n");
    put(&http, z.p, z.n);        /* a bomb for max_record 1000 */
    record(&f, "WARC/1.0", "response", "http://b/", "application/http", NULL, http.p, http.n);
    CHECK(sh_warc_open(write_file("badbody.warc", f.p, f.n), NULL, &w, &err) == SH_OK);
    CHECK(sh_warc_next(w, &r, &err) == SH_OK && r);
    if (r) {
        CHECK(r->payload_len > 0 && r->payload_len < sizeof big);
        CHECK(memcmp(r->payload, big, r->payload_len) == 0);
        CHECK(r->warning && strstr(r->warning, "gzip body is truncated"));
    }
    sh_warc_close(w);
    o.max_record = 1000;
    CHECK(sh_warc_open(write_file("badbody.warc", f.p, f.n), &o, &w, &err) == SH_OK);
    CHECK(sh_warc_next(w, &r, &err) == SH_OK && r);
    CHECK(sh_warc_next(w, &r, &err) == SH_OK && r);
    if (r) {
        CHECK_EQ_U64(r->payload_len, 1000);
        CHECK(memcmp(r->payload, big, 1000) == 0);
        CHECK(r->warning && strstr(r->warning, "max_record"));
    }
    sh_warc_close(w);
    free(f.p);
    free(http.p);
    free(z.p);
}

static void skips_records_larger_than_max_record_with_a_warning(void)
{
    bytes f = { 0 }, gz = { 0 };
    char big[3000];
    sh_warc_opts o = { 0 };
    sh_warc *w;
    sh_error err;
    const sh_warc_record *r;
    int pass;
    memset(big, 'x', sizeof big);
    record(&f, "WARC/1.0", "resource", "http://a/small", "text/plain", NULL, "small", 5);
    record(&f, "WARC/1.0", "resource", "http://a/big", "text/plain", NULL, big, sizeof big);
    record(&f, "WARC/1.0", "resource", "http://a/after", "text/plain", NULL, "after", 5);
    {   /* the gzip version, one member per record */
        bytes one = { 0 };
        record(&one, "WARC/1.0", "resource", "http://a/small", "text/plain", NULL, "small", 5);
        deflate_to(&gz, one.p, one.n, 31);
        one.n = 0;
        record(&one, "WARC/1.0", "resource", "http://a/big", "text/plain", NULL, big, sizeof big);
        deflate_to(&gz, one.p, one.n, 31);
        one.n = 0;
        record(&one, "WARC/1.0", "resource", "http://a/after", "text/plain", NULL, "after", 5);
        deflate_to(&gz, one.p, one.n, 31);
        free(one.p);
    }
    o.max_record = 1000;
    for (pass = 0; pass < 2; pass++) {
        const char *path = pass ? write_file("big.warc.gz", gz.p, gz.n)
                                : write_file("big.warc", f.p, f.n);
        CHECK(sh_warc_open(path, &o, &w, &err) == SH_OK);
        CHECK(sh_warc_next(w, &r, &err) == SH_OK && r && payload_is(r, "small") && !r->skipped);
        CHECK(sh_warc_next(w, &r, &err) == SH_OK && r);
        if (r) {
            CHECK(r->skipped && r->block == NULL && r->payload_len == 0);
            CHECK(streq(r->target_uri, "http://a/big"));
            CHECK_EQ_U64(r->content_length, sizeof big);
            CHECK(r->warning && strstr(r->warning, "max_record"));
        }
        CHECK(sh_warc_next(w, &r, &err) == SH_OK && r && payload_is(r, "after") && !r->warning);
        CHECK(sh_warc_next(w, &r, &err) == SH_OK && r == NULL);
        sh_warc_close(w);
    }
    free(f.p);
    free(gz.p);
}

static void reports_a_truncated_last_record_with_file_and_offset(void)
{
    bytes plain = { 0 }, gz = { 0 };
    uint64_t po[NREC], pl[NREC], go[NREC], gl[NREC];
    const char *path;
    char want[400];
    sh_warc *w;
    sh_error err;
    const sh_warc_record *r;
    int i;
    build_sample(&plain, &gz, po, pl, go, gl);

    /* plain: cut inside the last block */
    path = write_file("trunc.warc", plain.p, plain.n - 10);
    CHECK(sh_warc_open(path, NULL, &w, &err) == SH_OK);
    for (i = 0; i < NREC - 1; i++)
        CHECK(sh_warc_next(w, &r, &err) == SH_OK && r);
    CHECK(sh_warc_next(w, &r, &err) == SH_EFORMAT && r == NULL);
    snprintf(want, sizeof want, "%s: record at byte %" PRIu64 ": truncated", path, po[3]);
    CHECK(strstr(err.msg, want) != NULL);
    CHECK_EQ_U64(err.offset, po[3]);
    CHECK(err.code == SH_EFORMAT);
    CHECK(sh_warc_next(w, &r, &err) == SH_OK && r == NULL);
    sh_warc_close(w);

    /* plain: cut inside the last header */
    path = write_file("trunc2.warc", plain.p, po[3] + 20);
    CHECK(sh_warc_open(path, NULL, &w, &err) == SH_OK);
    for (i = 0; i < NREC - 1; i++)
        CHECK(sh_warc_next(w, &r, &err) == SH_OK && r);
    CHECK(sh_warc_next(w, &r, &err) == SH_EFORMAT && strstr(err.msg, "inside the WARC header"));
    CHECK(sh_warc_next(w, &r, &err) == SH_OK && r == NULL);
    sh_warc_close(w);

    /* gzip: cut inside the last member */
    path = write_file("trunc.warc.gz", gz.p, gz.n - 5);
    CHECK(sh_warc_open(path, NULL, &w, &err) == SH_OK);
    for (i = 0; i < NREC - 1; i++)
        CHECK(sh_warc_next(w, &r, &err) == SH_OK && r);
    CHECK(sh_warc_next(w, &r, &err) == SH_EFORMAT && r == NULL);
    snprintf(want, sizeof want, "gzip member at byte %" PRIu64 " is truncated", go[3]);
    CHECK(strstr(err.msg, path) && strstr(err.msg, want));
    CHECK(sh_warc_next(w, &r, &err) == SH_OK && r == NULL);
    sh_warc_close(w);
    free(plain.p);
    free(gz.p);
}

static void reports_a_corrupt_gzip_member_and_continues_with_the_next(void)
{
    bytes plain = { 0 }, gz = { 0 };
    uint64_t po[NREC], pl[NREC], go[NREC], gl[NREC];
    const char *path;
    char want[200];
    sh_warc *w;
    sh_error err;
    const sh_warc_record *r;
    size_t k;
    build_sample(&plain, &gz, po, pl, go, gl);
    /* damage the deflate data in the middle of member 2 (the response) */
    for (k = go[2] + 20; k < go[2] + 40; k++)
        gz.p[k] ^= 0x5a;
    path = write_file("corrupt.warc.gz", gz.p, gz.n);
    CHECK(sh_warc_open(path, NULL, &w, &err) == SH_OK);
    CHECK(sh_warc_next(w, &r, &err) == SH_OK && r && streq(r->type, "warcinfo"));
    CHECK(sh_warc_next(w, &r, &err) == SH_OK && r && streq(r->type, "request"));
    CHECK(sh_warc_next(w, &r, &err) == SH_EFORMAT);
    snprintf(want, sizeof want, "gzip member at byte %" PRIu64 " is corrupt", go[2]);
    CHECK(strstr(err.msg, path) && strstr(err.msg, want));
    CHECK(sh_warc_next(w, &r, &err) == SH_OK && r && streq(r->type, "resource"));
    if (r)
        CHECK_EQ_U64(r->offset, go[3]);
    CHECK(sh_warc_next(w, &r, &err) == SH_OK && r == NULL);
    sh_warc_close(w);

    /* a CRC mismatch (last 8 bytes of the member) is caught too */
    free(gz.p);
    memset(&gz, 0, sizeof gz);
    plain.n = 0;
    build_sample(&plain, &gz, po, pl, go, gl);
    gz.p[go[3] - 6] ^= 0xff;   /* in member 2's CRC32/ISIZE trailer */
    snprintf(want, sizeof want, "gzip member at byte %" PRIu64 " is corrupt", go[2]);
    CHECK(sh_warc_open(write_file("crc.warc.gz", gz.p, gz.n), NULL, &w, &err) == SH_OK);
    CHECK(sh_warc_next(w, &r, &err) == SH_OK && r);
    CHECK(sh_warc_next(w, &r, &err) == SH_OK && r);
    CHECK(sh_warc_next(w, &r, &err) == SH_EFORMAT);
    CHECK(strstr(err.msg, want) != NULL);
    CHECK(sh_warc_next(w, &r, &err) == SH_OK && r && streq(r->type, "resource"));
    CHECK(sh_warc_next(w, &r, &err) == SH_OK && r == NULL);
    sh_warc_close(w);

    /* garbage between two members */
    {
        bytes g2 = { 0 };
        put(&g2, gz.p, go[1]);
        puts_(&g2, "GARBAGE");
        put(&g2, gz.p + go[1], gz.n - go[1]);
        CHECK(sh_warc_open(write_file("gap.warc.gz", g2.p, g2.n), NULL, &w, &err) == SH_OK);
        CHECK(sh_warc_next(w, &r, &err) == SH_OK && r);
        CHECK(sh_warc_next(w, &r, &err) == SH_EFORMAT && strstr(err.msg, "expected a gzip member"));
        CHECK_EQ_U64(err.offset, go[1]);
        CHECK(sh_warc_next(w, &r, &err) == SH_OK && r && streq(r->type, "request"));
        sh_warc_close(w);
        free(g2.p);
    }
    free(plain.p);
    free(gz.p);
}

static void recovers_from_bad_content_lengths_and_headers(void)
{
    bytes f = { 0 };
    const char *path;
    sh_warc *w;
    sh_error err;
    const sh_warc_record *r;
    size_t r2, r3, r4;

    record(&f, "WARC/1.0", "resource", "http://a/1", "text/plain", NULL, "one", 3);
    r2 = f.n;
    /* Content-Length too long by 8: the block swallows the trailer and "WARC/1.0" */
    puts_(&f, "WARC/1.0\r\nWARC-Type: resource\r\nContent-Length: 13\r\n\r\ntwo\r\n\r\n");
    r3 = f.n;
    record(&f, "WARC/1.0", "resource", "http://a/3", "text/plain", NULL, "three", 5);
    r4 = f.n;
    puts_(&f, "WARC/0.17\r\nWARC-Type: resource\r\nContent-Length: 3\r\n\r\nsix\r\n\r\n");
    puts_(&f, "WARC/1.0\r\nWARC-Type: resource\r\nContent-Length: 12x\r\n\r\nfour\r\n\r\n");
    puts_(&f, "WARC/1.0\r\nWARC-Type: resource\r\n\r\nfive\r\n\r\n");
    puts_(&f, "WARC/1.0\r\nWARC-Type: resource\r\nno colon here\r\nContent-Length: 3\r\n\r\nsvn\r\n\r\n");
    record(&f, "WARC/1.1", "resource", "http://a/8", "text/plain", NULL, "eight", 5);
    path = write_file("badlen.warc", f.p, f.n);
    CHECK(sh_warc_open(path, NULL, &w, &err) == SH_OK);
    CHECK(sh_warc_next(w, &r, &err) == SH_OK && r && payload_is(r, "one"));
    CHECK(sh_warc_next(w, &r, &err) == SH_EFORMAT && strstr(err.msg, "not followed by CRLF CRLF"));
    CHECK_EQ_U64(err.offset, r2);
    CHECK(sh_warc_next(w, &r, &err) == SH_OK && r && payload_is(r, "three"));
    if (r)
        CHECK_EQ_U64(r->offset, r3);
    CHECK(sh_warc_next(w, &r, &err) == SH_EFORMAT && strstr(err.msg, "unsupported version line \"WARC/0.17\""));
    CHECK_EQ_U64(err.offset, r4);
    CHECK(sh_warc_next(w, &r, &err) == SH_EFORMAT && strstr(err.msg, "Content-Length \"12x\" is not a number"));
    CHECK(sh_warc_next(w, &r, &err) == SH_EFORMAT && strstr(err.msg, "no Content-Length"));
    CHECK(sh_warc_next(w, &r, &err) == SH_EFORMAT && strstr(err.msg, "has no ':'"));
    CHECK(sh_warc_next(w, &r, &err) == SH_OK && r && payload_is(r, "eight"));
    CHECK(sh_warc_next(w, &r, &err) == SH_OK && r == NULL);
    sh_warc_close(w);
    free(f.p);
}

static void reports_a_missing_version_line_and_resynchronizes(void)
{
    bytes f = { 0 };
    const char *path;
    sh_warc *w;
    sh_error err;
    const sh_warc_record *r;
    puts_(&f, "hello\nthis is not WARC/1.0 yet\n");
    record(&f, "WARC/1.0", "resource", "http://a/1", "text/plain", NULL, "one", 3);
    path = write_file("prefix.warc", f.p, f.n);
    CHECK(sh_warc_open(path, NULL, &w, &err) == SH_OK);
    CHECK(sh_warc_next(w, &r, &err) == SH_EFORMAT && r == NULL);
    CHECK(strstr(err.msg, path) && strstr(err.msg, "record at byte 0: expected a \"WARC/1.0\""));
    CHECK(strstr(err.msg, "found \"hello\\x0athis is no\""));
    CHECK(sh_warc_next(w, &r, &err) == SH_OK && r && payload_is(r, "one"));
    if (r)
        CHECK_EQ_U64(r->offset, 31);
    CHECK(sh_warc_next(w, &r, &err) == SH_OK && r == NULL);
    sh_warc_close(w);
    free(f.p);
}

static void accepts_lf_only_line_ends(void)
{
    const char *f = "WARC/1.1\nWARC-Type: resource\nWARC-Target-URI: http://lf/\n"
                    "Content-Length: 2\n\nok\n\nWARC/1.1\nWARC-Type: metadata\nContent-Length: 0\n\n\n\n";
    sh_warc *w;
    sh_error err;
    const sh_warc_record *r;
    CHECK(sh_warc_open(write_file("lf.warc", f, strlen(f)), NULL, &w, &err) == SH_OK);
    CHECK(sh_warc_next(w, &r, &err) == SH_OK && r && payload_is(r, "ok"));
    if (r)
        CHECK(streq(r->target_uri, "http://lf/") && r->length == 80);
    CHECK(sh_warc_next(w, &r, &err) == SH_OK && r && streq(r->type, "metadata") && r->payload_len == 0);
    CHECK(sh_warc_next(w, &r, &err) == SH_OK && r == NULL);
    sh_warc_close(w);
}

static void reads_an_empty_file_as_no_records(void)
{
    sh_warc *w;
    sh_error err;
    const sh_warc_record *r = (const sh_warc_record *)&err;
    CHECK(sh_warc_open(write_file("empty.warc", "", 0), NULL, &w, &err) == SH_OK);
    CHECK(sh_warc_next(w, &r, &err) == SH_OK && r == NULL);
    sh_warc_close(w);
    CHECK(sh_warc_open(write_file("blank.warc", "\r\n\r\n\n", 5), NULL, &w, &err) == SH_OK);
    CHECK(sh_warc_next(w, &r, &err) == SH_OK && r == NULL);
    sh_warc_close(w);
}

static void reports_a_missing_file_with_errno(void)
{
    sh_warc *w = (sh_warc *)&w;
    sh_error err;
    CHECK(sh_warc_open("/nonexistent/dir/x.warc", NULL, &w, &err) == SH_EIO);
    CHECK(w == NULL && err.sys_errno == ENOENT && strstr(err.msg, "/nonexistent/dir/x.warc"));
}

static void ends_on_garbage_files_without_hanging(void)
{
    unsigned char buf[20000];
    unsigned seed = 42;
    size_t i, nrec, nerr;
    sh_warc *w;
    sh_error err;
    int kind;
    for (kind = 0; kind < 3; kind++) {
        for (i = 0; i < sizeof buf; i++) {
            seed = seed * 1103515245u + 12345u;
            buf[i] = (unsigned char)(seed >> 16);
            if (kind == 2 && buf[i] < 40)
                buf[i] = '\n';
        }
        if (kind == 1) {   /* looks gzip at the start */
            buf[0] = 0x1f;
            buf[1] = 0x8b;
            buf[2] = 8;
            buf[3] = 0;
        }
        CHECK(sh_warc_open(write_file("garbage.warc", buf, sizeof buf), NULL, &w, &err) == SH_OK);
        CHECK(drain(w, &nrec, &nerr, 100000));
        CHECK(nrec == 0 && nerr >= 1);
        sh_warc_close(w);
    }
}

/* Property: every truncation and many random byte flips of a valid file, plain
 * and gzip, are read to the end in finitely many calls with no crash (the
 * sanitizer build checks memory), and an untouched prefix of whole records
 * gives back exactly those records. */
static void survives_random_truncations_and_corruptions(void)
{
    bytes plain = { 0 }, gz = { 0 };
    uint64_t po[NREC], pl[NREC], go[NREC], gl[NREC];
    size_t cut, nrec, nerr, ok = 1, complete_ok = 1;
    unsigned seed = 7;
    int pass, t;
    sh_warc *w;
    sh_error err;
    build_sample(&plain, &gz, po, pl, go, gl);
    for (pass = 0; pass < 2; pass++) {
        bytes *b = pass ? &gz : &plain;
        const uint64_t *offs = pass ? go : po;
        for (cut = 0; cut <= b->n; cut += (pass ? 1 : 3)) {
            int whole = 0, j;
            if (sh_warc_open(write_file("cut.warc", b->p, cut), NULL, &w, &err) != SH_OK) {
                ok = 0;
                continue;
            }
            if (!drain(w, &nrec, &nerr, 1000))
                ok = 0;
            for (j = 0; j < NREC; j++)
                if (cut >= offs[j] + (pass ? gl[j] : pl[j]))
                    whole = j + 1;
            if (nrec < (size_t)whole || nrec > (size_t)whole + 1)
                complete_ok = 0;
            sh_warc_close(w);
        }
        for (t = 0; t < 400; t++) {
            unsigned char *copy = malloc(b->n);
            int flips, k;
            memcpy(copy, b->p, b->n);
            seed = seed * 1103515245u + 12345u;
            flips = 1 + (int)((seed >> 16) % 4);
            for (k = 0; k < flips; k++) {
                seed = seed * 1103515245u + 12345u;
                copy[(seed >> 8) % b->n] ^= (unsigned char)(1 + (seed >> 24) % 255);
            }
            if (sh_warc_open(write_file("flip.warc", copy, b->n), NULL, &w, &err) == SH_OK) {
                if (!drain(w, &nrec, &nerr, 1000))
                    ok = 0;
                sh_warc_close(w);
            } else {
                ok = 0;
            }
            free(copy);
        }
    }
    CHECK(ok);
    CHECK(complete_ok);
    free(plain.p);
    free(gz.p);
}

/* Reading a pipe: nothing can seek, resynchronization goes forward only. */
static void reads_a_pipe_and_recovers_forward(void)
{
    bytes plain = { 0 }, gz = { 0 };
    uint64_t po[NREC], pl[NREC], go[NREC], gl[NREC];
    int fds[2];
    size_t nrec, nerr, k;
    sh_warc *w;
    sh_error err;
    build_sample(&plain, &gz, po, pl, go, gl);
    for (k = go[2] + 20; k < go[2] + 40; k++)
        gz.p[k] ^= 0x5a;
    CHECK(pipe(fds) == 0);
    /* the sample is small enough to fit in the pipe buffer */
    CHECK(write(fds[1], gz.p, gz.n) == (ssize_t)gz.n);
    close(fds[1]);
    CHECK(sh_warc_open_fd(fds[0], "pipe", NULL, &w, &err) == SH_OK);
    CHECK(drain(w, &nrec, &nerr, 100));
    CHECK(nrec == 3 && nerr == 1);
    sh_warc_close(w);
    close(fds[0]);
    free(plain.p);
    free(gz.p);
}

int main(void)
{
    char cmd[400];
    int rc;
    if (!mkdtemp(tmpdir)) {
        perror("mkdtemp");
        return 2;
    }
    RUN(reads_every_field_of_a_plain_warc);
    RUN(reads_a_per_record_gzip_warc_with_member_offsets);
    RUN(reads_a_whole_file_gzip_stream_with_unknown_lengths);
    RUN(reads_many_records_across_buffer_boundaries);
    RUN(reads_from_an_fd_and_a_stream_at_their_current_position);
    RUN(dechunks_and_decompresses_http_bodies);
    RUN(keeps_a_corrupt_gzip_body_prefix_with_a_warning);
    RUN(skips_records_larger_than_max_record_with_a_warning);
    RUN(reports_a_truncated_last_record_with_file_and_offset);
    RUN(reports_a_corrupt_gzip_member_and_continues_with_the_next);
    RUN(recovers_from_bad_content_lengths_and_headers);
    RUN(reports_a_missing_version_line_and_resynchronizes);
    RUN(accepts_lf_only_line_ends);
    RUN(reads_an_empty_file_as_no_records);
    RUN(reports_a_missing_file_with_errno);
    RUN(ends_on_garbage_files_without_hanging);
    RUN(survives_random_truncations_and_corruptions);
    RUN(reads_a_pipe_and_recovers_forward);
    rc = TEST_END();
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", tmpdir);
    return rc;
}
