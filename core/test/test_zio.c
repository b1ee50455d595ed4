/* core/zio.h: gzip and zstd read transparently, by magic bytes; bounds on
 * decompressed size and line length; errors that name the place. */
#include "zio.h"
#include "test.h"
#include "testbuf.h"

#include <stdlib.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

/* in[0..n) appended to out as one zstd frame */
static void zstd_to(bytes *out, const void *in, size_t n)
{
    size_t cap = ZSTD_compressBound(n), got;
    void *buf = malloc(cap);
    if (!buf) exit(2);
    got = ZSTD_compress(buf, cap, in, n, 3);
    if (ZSTD_isError(got)) exit(2);
    put(out, buf, got);
    free(buf);
}

static const char text[] = "The resemblance of two documents is the size of the intersection of their shingle sets "
                           "over the size of the union.\n";

static void test_kinds_by_magic(void)
{
    CHECK(sh_zio_kind("\x1f\x8b\x08\x00", 4) == SH_Z_GZIP);
    CHECK(sh_zio_kind("\x28\xb5\x2f\xfd\x00", 5) == SH_Z_ZSTD);
    CHECK(sh_zio_kind("\x50\x2a\x4d\x18\x00", 5) == SH_Z_ZSTD); /* skippable frame */
    CHECK(sh_zio_kind("\xfd" "7zXZ\0", 6) == SH_Z_XZ);
    CHECK(sh_zio_kind("BZh91AY", 7) == SH_Z_BZIP2);
    CHECK(sh_zio_kind("BZh", 3) == SH_Z_PLAIN);
    CHECK(sh_zio_kind("<html>", 6) == SH_Z_PLAIN);
    CHECK(sh_zio_kind("\x1f", 1) == SH_Z_PLAIN);
    CHECK(strcmp(sh_zio_kind_name(SH_Z_ZSTD), "zstd") == 0);
}

static void test_decompress_round_trips(void)
{
    bytes g = { 0 }, z = { 0 };
    sh_zbuf out = { 0 };
    sh_zkind k;
    sh_error err;
    deflate_to(&g, text, sizeof text - 1, 31);
    CHECK(sh_zio_decompress(g.p, g.n, 0, "t.gz", &out, &k, &err) == SH_OK);
    CHECK(k == SH_Z_GZIP);
    CHECK(out.len == sizeof text - 1 && memcmp(out.p, text, out.len) == 0);
    /* two members and zero padding (as tar leaves it) are one stream */
    deflate_to(&g, text, sizeof text - 1, 31);
    put(&g, "\0\0\0\0", 4);
    CHECK(sh_zio_decompress(g.p, g.n, 0, "t.gz", &out, &k, &err) == SH_OK);
    CHECK(out.len == 2 * (sizeof text - 1) && memcmp(out.p + out.len / 2, text, out.len / 2) == 0);
    zstd_to(&z, text, sizeof text - 1);
    zstd_to(&z, text, sizeof text - 1);
    CHECK(sh_zio_decompress(z.p, z.n, 0, "t.zst", &out, &k, &err) == SH_OK);
    CHECK(k == SH_Z_ZSTD);
    CHECK(out.len == 2 * (sizeof text - 1) && memcmp(out.p, text, sizeof text - 1) == 0);
    CHECK(sh_zio_decompress(text, sizeof text - 1, 0, "t.txt", &out, &k, &err) == SH_OK);
    CHECK(k == SH_Z_PLAIN && out.len == sizeof text - 1);
    free(g.p);
    free(z.p);
    free(out.p);
}

static void test_damaged_data_is_refused_naming_the_place(void)
{
    bytes g = { 0 }, z = { 0 };
    sh_zbuf out = { 0 };
    sh_error err;
    deflate_to(&g, text, sizeof text - 1, 31);
    /* truncated */
    CHECK(sh_zio_decompress(g.p, g.n - 10, 0, "t.gz", &out, NULL, &err) == SH_EFORMAT);
    CHECK(strstr(err.msg, "t.gz is truncated") != NULL);
    /* trailing garbage */
    put(&g, "garbage", 7);
    CHECK(sh_zio_decompress(g.p, g.n, 0, "t.gz", &out, NULL, &err) == SH_EFORMAT);
    CHECK(strstr(err.msg, "unexpected bytes after the gzip data") != NULL);
    {
        /* one trailing byte, in a buffer of exactly that size (the check for
         * another member read one byte past it; fuzz_sketchfile) */
        unsigned char *exact = malloc(g.n - 6);
        memcpy(exact, g.p, g.n - 6);
        CHECK(sh_zio_decompress(exact, g.n - 6, 0, "t.gz", &out, NULL, &err) == SH_EFORMAT);
        CHECK(strstr(err.msg, "unexpected bytes after the gzip data") != NULL);
        free(exact);
    }
    /* corrupt: flip bytes of the deflate data */
    g.n -= 7;
    g.p[12] ^= 0xff;
    g.p[13] ^= 0xff;
    CHECK(sh_zio_decompress(g.p, g.n, 0, "t.gz", &out, NULL, &err) == SH_EFORMAT);
    CHECK(strstr(err.msg, "t.gz") != NULL);
    zstd_to(&z, text, sizeof text - 1);
    CHECK(sh_zio_decompress(z.p, z.n - 3, 0, "t.zst", &out, NULL, &err) == SH_EFORMAT);
    CHECK(strstr(err.msg, "truncated") != NULL);
    CHECK(sh_zio_decompress("\xfd" "7zXZ\0\0\0\0", 10, 0, "t.xz", &out, NULL, &err) == SH_EFORMAT);
    CHECK(strstr(err.msg, "xz-compressed") != NULL);
    free(g.p);
    free(z.p);
    free(out.p);
}

/* A gzip bomb: 256 MiB of zeros in about 256 KB; with a 1 MiB limit it is
 * refused after decoding little more than the limit. */
static void test_a_compression_bomb_stops_at_the_limit(void)
{
    size_t n = (size_t)256 << 20;
    char *zeros = calloc(1, n);
    bytes g = { 0 }, z = { 0 };
    sh_zbuf out = { 0 };
    sh_error err;
    const char *path;
    if (!zeros) exit(2);
    deflate_to(&g, zeros, n, 31);
    zstd_to(&z, zeros, n);
    free(zeros);
    CHECK(g.n < n / 500);
    CHECK(sh_zio_decompress(g.p, g.n, (size_t)1 << 20, "bomb.gz", &out, NULL, &err) == SH_ELIMIT);
    CHECK(strstr(err.msg, "bomb.gz decompresses to more than the limit of 1048576 bytes") != NULL);
    CHECK(out.cap <= (size_t)4 << 20); /* it stopped early */
    CHECK(sh_zio_decompress(z.p, z.n, (size_t)1 << 20, "bomb.zst", &out, NULL, &err) == SH_ELIMIT);
    path = tmpfile_with(&g);
    CHECK(sh_zio_read_file(path, (size_t)1 << 20, &out, NULL, &err) == SH_ELIMIT);
    CHECK(strstr(err.msg, "decompresses to more than the limit") != NULL);
    unlink(path);
    free(g.p);
    free(z.p);
    free(out.p);
}

static void test_read_file_plain_gzip_zstd(void)
{
    bytes plain = { 0 }, g = { 0 }, z = { 0 };
    sh_zbuf out = { 0 };
    sh_zkind k;
    sh_error err;
    const char *path;
    int i;
    /* larger than one read and than the decoder's input buffer */
    for (i = 0; i < 8000; i++) put(&plain, text, sizeof text - 1);
    deflate_to(&g, plain.p, plain.n, 31);
    zstd_to(&z, plain.p, plain.n);
    path = tmpfile_with(&plain);
    CHECK(sh_zio_read_file(path, 0, &out, &k, &err) == SH_OK);
    CHECK(k == SH_Z_PLAIN && out.len == plain.n && memcmp(out.p, plain.p, plain.n) == 0);
    CHECK(sh_zio_read_file(path, 1000, &out, &k, &err) == SH_ELIMIT);
    CHECK(strstr(err.msg, "is larger than the limit of 1000 bytes") != NULL);
    unlink(path);
    path = tmpfile_with(&g);
    CHECK(sh_zio_read_file(path, 0, &out, &k, &err) == SH_OK);
    CHECK(k == SH_Z_GZIP && out.len == plain.n && memcmp(out.p, plain.p, plain.n) == 0);
    unlink(path);
    path = tmpfile_with(&z);
    CHECK(sh_zio_read_file(path, plain.n, &out, &k, &err) == SH_OK);
    CHECK(k == SH_Z_ZSTD && out.len == plain.n && memcmp(out.p, plain.p, plain.n) == 0);
    unlink(path);
    CHECK(sh_zio_read_file("/nonexistent/x.gz", 0, &out, &k, &err) == SH_EIO);
    CHECK(strstr(err.msg, "cannot read /nonexistent/x.gz") != NULL);
    /* an empty file is an empty plain document */
    plain.n = 0;
    path = tmpfile_with(&plain);
    CHECK(sh_zio_read_file(path, 10, &out, &k, &err) == SH_OK && out.len == 0 && k == SH_Z_PLAIN);
    unlink(path);
    free(plain.p);
    free(g.p);
    free(z.p);
    free(out.p);
}

/* Lines across buffer boundaries, a last line without newline, an over-long
 * line passed over, compared with a plain split of the same bytes. */
static void test_stream_lines(void)
{
    bytes plain = { 0 }, g = { 0 };
    sh_zstream *zs;
    sh_error err;
    const char *line, *path;
    size_t len;
    int i, bad = 0, n = 0, too_long = 0;
    char l[64];
    for (i = 0; i < 30000; i++) {
        int m = snprintf(l, sizeof l, "{\"id\": %d, \"text\": \"line %d\"}\n", i, i);
        put(&plain, l, (size_t)m);
        if (i == 20000) { /* one line of 5000 bytes */
            int j;
            for (j = 0; j < 5000; j++) put(&plain, "x", 1);
            put(&plain, "\n", 1);
        }
    }
    put(&plain, "last", 4);
    deflate_to(&g, plain.p, plain.n, 31);
    path = tmpfile_with(&g);
    CHECK(sh_zstream_open(path, &zs, &err) == SH_OK);
    for (;;) {
        sh_status st = sh_zstream_line(zs, 1000, &line, &len, &err);
        if (st == SH_ELIMIT) {
            too_long++;
            CHECK(strstr(err.msg, "line 20002 is longer than the limit of 1000 bytes") != NULL);
            continue;
        }
        CHECK(st == SH_OK);
        if (st != SH_OK || !line) break;
        if (n < 30000) {
            int m = snprintf(l, sizeof l, "{\"id\": %d, \"text\": \"line %d\"}", n, n);
            if ((size_t)m != len || memcmp(l, line, len) != 0) bad++;
        } else if (len != 4 || memcmp(line, "last", 4) != 0) bad++;
        n++;
    }
    CHECK(n == 30001 && bad == 0 && too_long == 1);
    CHECK(sh_zstream_kind(zs) == SH_Z_GZIP);
    CHECK(sh_zstream_in_bytes(zs) == g.n);
    CHECK(sh_zstream_lineno(zs) == 30002);
    sh_zstream_close(zs);
    unlink(path);
    free(plain.p);
    free(g.p);
}

/* A line that never ends (a bomb of zeros): the stream gives up after 16
 * times the line limit instead of decoding everything. */
static void test_an_endless_line_is_abandoned(void)
{
    size_t n = (size_t)64 << 20;
    char *zeros = calloc(1, n);
    bytes g = { 0 };
    sh_zstream *zs;
    sh_error err;
    const char *line, *path;
    size_t len;
    if (!zeros) exit(2);
    put(&g, "", 0);
    deflate_to(&g, "{\"a\": 1}\n", 9, 31);
    deflate_to(&g, zeros, n, 31);
    free(zeros);
    path = tmpfile_with(&g);
    CHECK(sh_zstream_open(path, &zs, &err) == SH_OK);
    CHECK(sh_zstream_line(zs, 1 << 16, &line, &len, &err) == SH_OK && len == 8);
    CHECK(sh_zstream_line(zs, 1 << 16, &line, &len, &err) == SH_ELIMIT);
    CHECK(strstr(err.msg, "goes on for more than") != NULL);
    CHECK(sh_zstream_in_bytes(zs) < g.n); /* it did not decode the whole bomb */
    CHECK(sh_zstream_line(zs, 1 << 16, &line, &len, &err) == SH_ELIMIT); /* and stays stopped */
    sh_zstream_close(zs);
    unlink(path);
    free(g.p);
}

static void test_peek_then_read_the_same_bytes(void)
{
    bytes z = { 0 };
    sh_zstream *zs;
    sh_error err;
    const char *p, *path;
    size_t n, got;
    char buf[sizeof text];
    zstd_to(&z, text, sizeof text - 1);
    path = tmpfile_with(&z);
    CHECK(sh_zstream_open(path, &zs, &err) == SH_OK);
    CHECK(sh_zstream_peek(zs, 3, &p, &n, &err) == SH_OK && n == 3 && memcmp(p, "The", 3) == 0);
    CHECK(sh_zstream_read(zs, buf, sizeof buf, &got, &err) == SH_OK && got == sizeof text - 1);
    CHECK(memcmp(buf, text, got) == 0);
    CHECK(sh_zstream_read(zs, buf, sizeof buf, &got, &err) == SH_OK && got == 0);
    sh_zstream_close(zs);
    unlink(path);
    free(z.p);
}

/* The first bytes of a file, decompressed: what sniffing a file sees. */
static void test_head_of_plain_and_compressed_files(void)
{
    bytes plain = { 0 }, g = { 0 }, z = { 0 };
    char head[4096];
    size_t n;
    sh_error err;
    const char *path;
    int i;
    for (i = 0; i < 200; i++) put(&plain, text, sizeof text - 1);
    deflate_to(&g, plain.p, plain.n, 31);
    zstd_to(&z, plain.p, plain.n);
    path = tmpfile_with(&plain);
    CHECK(sh_zio_head(path, head, sizeof head, &n, &err) == SH_OK && n == sizeof head && memcmp(head, plain.p, n) == 0);
    unlink(path);
    path = tmpfile_with(&g);
    CHECK(sh_zio_head(path, head, sizeof head, &n, &err) == SH_OK && n == sizeof head && memcmp(head, plain.p, n) == 0);
    unlink(path);
    path = tmpfile_with(&z);
    CHECK(sh_zio_head(path, head, 100, &n, &err) == SH_OK && n == 100 && memcmp(head, plain.p, n) == 0);
    unlink(path);
    /* shorter than cap: the whole file */
    plain.n = 10;
    path = tmpfile_with(&plain);
    CHECK(sh_zio_head(path, head, sizeof head, &n, &err) == SH_OK && n == 10 && memcmp(head, text, 10) == 0);
    unlink(path);
    CHECK(sh_zio_head("/nonexistent/x", head, sizeof head, &n, &err) == SH_EIO && n == 0);
    CHECK(strstr(err.msg, "cannot read /nonexistent/x") != NULL);
    free(plain.p);
    free(g.p);
    free(z.p);
}

int main(void)
{
    RUN(test_kinds_by_magic);
    RUN(test_decompress_round_trips);
    RUN(test_damaged_data_is_refused_naming_the_place);
    RUN(test_a_compression_bomb_stops_at_the_limit);
    RUN(test_read_file_plain_gzip_zstd);
    RUN(test_head_of_plain_and_compressed_files);
    RUN(test_stream_lines);
    RUN(test_an_endless_line_is_abandoned);
    RUN(test_peek_then_read_the_same_bytes);
    return TEST_END();
}
