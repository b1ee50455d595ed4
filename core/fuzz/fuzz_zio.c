/* Transparent decompression (core/zio.c): whole documents, streams, lines.
 * The first input byte picks what is done with the rest: taken as it is
 * (gzip, zstd, plain or damaged bytes), or compressed here first with gzip
 * or zstd, as one member/frame or split in two, with zero padding after a
 * gzip member (which the reader must skip). Invariants:
 *   - data compressed here decompresses to exactly the input, of that kind;
 *   - plain data comes back as it is;
 *   - the limit: max = the size decompresses; max = size - 1 is SH_ELIMIT;
 *   - a stream read in chunks of any size gives the same bytes as the whole
 *     document, fails where it fails (never a clean end with other bytes),
 *     and its position is the bytes handed out; a peek is a prefix of them;
 *   - lines: with a large limit, the lines joined by "\n" are the bytes
 *     (the last "\n" optional); with a small one, no line handed out is
 *     longer than the limit and line numbers only grow;
 *   - reading the bytes from a file (the pool's path) gives the same. */
#include <fcntl.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>
#include "fuzz.h"
#include "zio.h"

static char path[64];

/* the scratch file goes when the fuzzer exits (a crash leaves it: it is
 * then next to the crash input's story) */
static void remove_path(void)
{
    if (path[0]) unlink(path);
}

/* gzip members of in[0..n) split at cut (two members when 0 < cut < n),
 * then pad zero bytes: into out (malloc'ed), its size returned. */
static size_t gzip_of(const unsigned char *in, size_t n, size_t cut, size_t pad, int level, unsigned char **out)
{
    size_t cap = 2 * (n + 64) + pad + 64, len = 0, part;
    unsigned char *o = (unsigned char *)malloc(cap);
    FUZZ_CHECK(o != NULL);
    for (part = 0; part < 2; part++) {
        size_t a = part == 0 ? 0 : cut, b = part == 0 ? cut : n;
        z_stream z;
        if (part == 1 && (cut == 0 || cut >= n)) break;
        if (part == 0 && (cut == 0 || cut >= n)) b = n;
        memset(&z, 0, sizeof z);
        FUZZ_CHECK(deflateInit2(&z, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) == Z_OK);
        z.next_in = (Bytef *)(size_t)(in + a);
        z.avail_in = (uInt)(b - a);
        z.next_out = o + len;
        z.avail_out = (uInt)(cap - len);
        FUZZ_CHECK(deflate(&z, Z_FINISH) == Z_STREAM_END);
        len = cap - z.avail_out;
        deflateEnd(&z);
    }
    memset(o + len, 0, pad);
    *out = o;
    return len + pad;
}

static size_t zstd_of(const unsigned char *in, size_t n, size_t cut, int level, unsigned char **out)
{
    size_t cap = 2 * ZSTD_compressBound(n) + 64, len = 0, r;
    unsigned char *o = (unsigned char *)malloc(cap);
    FUZZ_CHECK(o != NULL);
    if (cut > 0 && cut < n) {
        r = ZSTD_compress(o, cap, in, cut, level);
        FUZZ_CHECK(!ZSTD_isError(r));
        len = r;
        r = ZSTD_compress(o + len, cap - len, in + cut, n - cut, level);
    } else {
        r = ZSTD_compress(o, cap, in, n, level);
    }
    FUZZ_CHECK(!ZSTD_isError(r));
    *out = o;
    return len + r;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    unsigned sel;
    const unsigned char *in;
    unsigned char *made = NULL;
    size_t n, i;
    sh_zbuf whole, b2;
    sh_zkind kind;
    sh_error err;
    sh_status st;
    int mode;
    if (size < 2) return 0;
    sel = data[0] | (unsigned)data[1] << 8;
    in = data + 2;
    n = size - 2;
    mode = sel & 3;
    if (mode == 1) n = gzip_of(in, n, (sel >> 4) % (n + 1), (sel & 4) ? (sel >> 12) : 0, (int)((sel >> 2) % 10), &made);
    else if (mode == 2) n = zstd_of(in, n, (sel >> 4) % (n + 1), 1 + (int)((sel >> 2) % 5), &made);
    memset(&whole, 0, sizeof whole);
    memset(&b2, 0, sizeof b2);
    st = sh_zio_decompress(made ? made : in, n, 0, "fuzz", &whole, &kind, &err);
    if (made) {
        FUZZ_CHECK(st == SH_OK && kind == (mode == 1 ? SH_Z_GZIP : SH_Z_ZSTD));
        FUZZ_CHECK(whole.len == size - 2 && (whole.len == 0 || memcmp(whole.p, data + 2, whole.len) == 0));
        in = made;
    }
    if (st == SH_OK) {
        if (kind == SH_Z_PLAIN) FUZZ_CHECK(whole.len == n && (n == 0 || memcmp(whole.p, in, n) == 0));
        /* the bound on the decompressed size */
        FUZZ_CHECK(sh_zio_decompress(in, n, whole.len ? whole.len : 1, "fuzz", &b2, NULL, &err) == SH_OK);
        FUZZ_CHECK(b2.len == whole.len && (b2.len == 0 || memcmp(b2.p, whole.p, b2.len) == 0));
        if (whole.len > 1) {
            FUZZ_CHECK(sh_zio_decompress(in, n, whole.len - 1, "fuzz", &b2, NULL, &err) == SH_ELIMIT);
            FUZZ_CHECK(strstr(err.msg, "fuzz") != NULL);
        }
    } else {
        FUZZ_CHECK(st == SH_EFORMAT && strstr(err.msg, "fuzz") != NULL);
        FUZZ_CHECK(kind != SH_Z_PLAIN);
    }
    { /* a stream read in chunks, after a peek */
        sh_zstream *zs;
        size_t chunk = 1 + (sel >> 8) % 97, got, total = 0;
        const char *pk;
        size_t pn;
        char buf[97];
        sh_status s2;
        FUZZ_CHECK(sh_zstream_open_mem(in, n, "fuzz", &zs, &err) == SH_OK);
        s2 = sh_zstream_peek(zs, chunk, &pk, &pn, &err);
        if (s2 == SH_OK) {
            FUZZ_CHECK(pn <= chunk && (st != SH_OK || pn == (whole.len < chunk ? whole.len : chunk)));
            if (st == SH_OK && pn) FUZZ_CHECK(memcmp(pk, whole.p, pn) == 0);
            for (;;) {
                s2 = sh_zstream_read(zs, buf, chunk, &got, &err);
                if (s2 != SH_OK || got == 0) break;
                FUZZ_CHECK(got <= chunk);
                if (st == SH_OK) FUZZ_CHECK(total + got <= whole.len && memcmp(buf, whole.p + total, got) == 0);
                total += got;
                FUZZ_CHECK(sh_zstream_pos(zs) == total);
            }
        }
        if (st == SH_OK) FUZZ_CHECK(s2 == SH_OK && total == whole.len);
        else FUZZ_CHECK(s2 == SH_EFORMAT && sh_zstream_failed(zs) == SH_EFORMAT);
        sh_zstream_close(zs);
    }
    if (st == SH_OK) { /* lines */
        sh_zstream *zs;
        const char *line;
        size_t len, at = 0, max = 1 + (sel >> 10) % 16;
        uint64_t last = 0;
        FUZZ_CHECK(sh_zstream_open_mem(in, n, "fuzz", &zs, &err) == SH_OK);
        for (;;) {
            FUZZ_CHECK(sh_zstream_line(zs, 0, &line, &len, &err) == SH_OK);
            if (!line) break;
            FUZZ_CHECK(at + len <= whole.len && (len == 0 || memcmp(line, whole.p + at, len) == 0));
            at += len;
            FUZZ_CHECK(at == whole.len || whole.p[at] == '\n');
            if (at < whole.len) at++;
            FUZZ_CHECK(sh_zstream_lineno(zs) == ++last);
        }
        FUZZ_CHECK(at == whole.len);
        sh_zstream_close(zs);
        FUZZ_CHECK(sh_zstream_open_mem(in, n, "fuzz", &zs, &err) == SH_OK);
        last = 0;
        for (i = 0; i <= whole.len + 1; i++) {
            sh_status s3 = sh_zstream_line(zs, max, &line, &len, &err);
            if (s3 == SH_ELIMIT && sh_zstream_failed(zs)) break;
            FUZZ_CHECK(s3 == SH_OK || s3 == SH_ELIMIT);
            FUZZ_CHECK(sh_zstream_lineno(zs) >= last);
            last = sh_zstream_lineno(zs);
            if (s3 == SH_OK && !line) break;
            if (s3 == SH_OK) FUZZ_CHECK(len <= max);
        }
        FUZZ_CHECK(i <= whole.len + 1);
        sh_zstream_close(zs);
    }
    { /* the same bytes from a file */
        int fd;
        if (!path[0]) {
            snprintf(path, sizeof path, "/dev/shm/shingle-fuzz-zio-XXXXXX");
            fd = mkstemp(path);
            if (fd < 0) {
                snprintf(path, sizeof path, "/tmp/shingle-fuzz-zio-XXXXXX");
                fd = mkstemp(path);
            }
            FUZZ_CHECK(fd >= 0);
            close(fd);
            atexit(remove_path);
        }
        fd = open(path, O_WRONLY | O_TRUNC);
        FUZZ_CHECK(fd >= 0);
        FUZZ_CHECK(n == 0 || write(fd, in, n) == (ssize_t)n);
        close(fd);
        {
            sh_status s4 = sh_zio_read_file(path, 0, &b2, &kind, &err);
            FUZZ_CHECK(s4 == st);
            if (st == SH_OK) FUZZ_CHECK(b2.len == whole.len && (b2.len == 0 || memcmp(b2.p, whole.p, b2.len) == 0));
            if (st == SH_OK && whole.len > 1)
                FUZZ_CHECK(sh_zio_read_file(path, whole.len - 1, &b2, &kind, &err) == SH_ELIMIT);
        }
    }
    free(whole.p);
    free(b2.p);
    free(made);
    return 0;
}
