/* Building test inputs in memory, for the C tests that read files (WARC,
 * compressed input): a growable byte buffer, zlib compression of a piece
 * into it (gzip, zlib or raw deflate by window bits, as deflateInit2 takes
 * them), and a scratch file holding a buffer. Allocation failures end the
 * test program (exit 2): they are not what a test checks. */
#ifndef SHINGLE_TESTBUF_H
#define SHINGLE_TESTBUF_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

typedef struct bytes {
    unsigned char *p;
    size_t n, cap;
} bytes;

/* s[0..n) appended to b (one spare byte kept, so b->p can be NUL-ended) */
static inline void put(bytes *b, const void *s, size_t n)
{
    if (b->n + n + 1 > b->cap) {
        b->cap = (b->n + n + 1) * 2;
        b->p = (unsigned char *)realloc(b->p, b->cap);
        if (!b->p) {
            fprintf(stderr, "out of memory\n");
            exit(2);
        }
    }
    memcpy(b->p + b->n, s, n);
    b->n += n;
}

static inline void puts_(bytes *b, const char *s) { put(b, s, strlen(s)); }

/* in[0..n) appended to out compressed by zlib: wbits 31 a gzip member, 15 a
 * zlib stream, -15 raw deflate */
static inline void deflate_to(bytes *out, const void *in, size_t n, int wbits)
{
    z_stream z;
    unsigned char buf[65536];
    int ret;
    memset(&z, 0, sizeof z);
    if (deflateInit2(&z, 6, Z_DEFLATED, wbits, 8, Z_DEFAULT_STRATEGY) != Z_OK) exit(2);
    z.next_in = (Bytef *)(size_t)in; /* zlib's API is not const */
    z.avail_in = (uInt)n;
    do {
        z.next_out = buf;
        z.avail_out = sizeof buf;
        ret = deflate(&z, Z_FINISH);
        put(out, buf, sizeof buf - z.avail_out);
    } while (ret == Z_OK);
    deflateEnd(&z);
}

/* A new file under /tmp holding b's bytes; the caller unlinks it. The path
 * is kept until the next call. */
static inline const char *tmpfile_with(const bytes *b)
{
    static char path[64];
    int fd;
    snprintf(path, sizeof path, "/tmp/shingle-test-XXXXXX");
    fd = mkstemp(path);
    if (fd < 0) exit(2);
    if (b->n && write(fd, b->p, b->n) != (ssize_t)b->n) exit(2);
    close(fd);
    return path;
}

#endif
