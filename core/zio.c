/* fopencookie is a GNU (and musl) extension: the one non-POSIX call here */
#define _GNU_SOURCE 1
#include "zio.h"

#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#define IN_SIZE ((size_t)256 << 10)
#define OUT_STEP ((size_t)256 << 10)
/* libzstd's own default: a frame asking for a larger window is refused */
#define ZSTD_WINDOW_LOG_MAX 27

sh_zkind sh_zio_kind(const void *head, size_t n)
{
    const unsigned char *b = (const unsigned char *)head;
    if (n >= 2 && b[0] == 0x1f && b[1] == 0x8b) return SH_Z_GZIP;
    if (n >= 4 && b[0] == 0x28 && b[1] == 0xb5 && b[2] == 0x2f && b[3] == 0xfd) return SH_Z_ZSTD;
    /* a skippable frame (magic 0x184D2A5?, little-endian) starts some zstd files */
    if (n >= 4 && (b[0] & 0xf0) == 0x50 && b[1] == 0x2a && b[2] == 0x4d && b[3] == 0x18) return SH_Z_ZSTD;
    if (n >= 6 && memcmp(b, "\xfd" "7zXZ\0", 6) == 0) return SH_Z_XZ;
    if (n >= 4 && b[0] == 'B' && b[1] == 'Z' && b[2] == 'h' && b[3] >= '1' && b[3] <= '9') return SH_Z_BZIP2;
    return SH_Z_PLAIN;
}

const char *sh_zio_kind_name(sh_zkind k)
{
    switch (k) {
    case SH_Z_PLAIN: return "plain";
    case SH_Z_GZIP: return "gzip";
    case SH_Z_ZSTD: return "zstd";
    case SH_Z_XZ: return "xz";
    case SH_Z_BZIP2: return "bzip2";
    }
    return "unknown";
}

struct sh_zstream {
    int fd;                  /* -1: the input is all in `in` (memory) */
    char name[256];
    sh_zkind kind;
    int started;             /* the kind has been decided */
    int mid_file;            /* opened at an offset: only plain data can be read from there */
    int eof_in;              /* no more raw bytes */
    int done;                /* no more decompressed bytes */
    sh_status dead;          /* a sticky failure */
    sh_error fail;
    const unsigned char *in; /* raw bytes in[in_pos..in_len) not yet decoded */
    unsigned char *in_own;   /* the buffer `in` points to when it is ours */
    size_t in_pos, in_len;
    uint64_t in_base;        /* offset in the file of in[0] */
    z_stream z;
    int z_init, z_between;   /* gzip: at a member boundary */
    ZSTD_DStream *zd;
    size_t z_ret;            /* zstd: 0 at a frame boundary */
    char *out;               /* decoded bytes out[out_pos..out_len) not yet consumed */
    uint64_t out_base;       /* decoded bytes consumed before out[0] */
    size_t out_pos, out_len, out_cap;
    size_t scan;             /* bytes after out_pos known to hold no newline */
    uint64_t lineno;
};

static sh_status zfail(sh_zstream *zs, sh_error *err, sh_status st, uint64_t off, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 5, 6)))
#endif
    ;

static sh_status zfail(sh_zstream *zs, sh_error *err, sh_status st, uint64_t off, const char *fmt, ...)
{
    va_list ap;
    zs->dead = st;
    zs->fail.code = st;
    zs->fail.offset = (size_t)off;
    zs->fail.sys_errno = 0;
    va_start(ap, fmt);
    vsnprintf(zs->fail.msg, sizeof zs->fail.msg, fmt, ap);
    va_end(ap);
    if (err) *err = zs->fail;
    return st;
}

static sh_status sticky(const sh_zstream *zs, sh_error *err)
{
    if (err) *err = zs->fail;
    return zs->dead;
}

/* More raw bytes into `in`: 1 if some were added, 0 at the end of the file. */
static int fill_raw(sh_zstream *zs, sh_error *err, sh_status *st)
{
    ssize_t got;
    *st = SH_OK;
    if (zs->fd < 0 || zs->eof_in) { zs->eof_in = 1; return 0; }
    if (zs->in_pos > 0) {
        memmove(zs->in_own, zs->in + zs->in_pos, zs->in_len - zs->in_pos);
        zs->in_base += zs->in_pos;
        zs->in_len -= zs->in_pos;
        zs->in_pos = 0;
    }
    if (zs->in_len == IN_SIZE) return 1;
    do got = read(zs->fd, zs->in_own + zs->in_len, IN_SIZE - zs->in_len);
    while (got < 0 && errno == EINTR);
    if (got < 0) {
        int e = errno;
        *st = zfail(zs, err, SH_EIO, zs->in_base + zs->in_len, "cannot read %s: %s", zs->name, strerror(e));
        zs->fail.sys_errno = e;
        if (err) err->sys_errno = e;
        return 0;
    }
    if (got == 0) { zs->eof_in = 1; return 0; }
    zs->in_len += (size_t)got;
    return 1;
}

static sh_status decide_kind(sh_zstream *zs, sh_error *err)
{
    sh_status st;
    while (zs->in_len - zs->in_pos < 6 && fill_raw(zs, err, &st)) {}
    if (zs->dead) return sticky(zs, err);
    zs->kind = sh_zio_kind(zs->in + zs->in_pos, zs->in_len - zs->in_pos);
    zs->started = 1;
    if (zs->mid_file) {
        /* the piece starts inside the file: the file's own first bytes decide */
        unsigned char head[6];
        ssize_t got = pread(zs->fd, head, sizeof head, 0);
        zs->kind = SH_Z_PLAIN;
        if (got > 0 && sh_zio_kind(head, (size_t)got) != SH_Z_PLAIN)
            return zfail(zs, err, SH_EFORMAT, zs->in_base, "%s is %s-compressed: it can be read whole, not from byte %llu on",
                         zs->name, sh_zio_kind_name(sh_zio_kind(head, (size_t)got)), (unsigned long long)zs->in_base);
    }
    if (zs->kind == SH_Z_XZ || zs->kind == SH_Z_BZIP2)
        return zfail(zs, err, SH_EFORMAT, 0, "%s is %s-compressed, which shingle does not read: decompress it first, "
                     "or recompress it with gzip or zstd", zs->name, sh_zio_kind_name(zs->kind));
    if (zs->kind == SH_Z_GZIP) {
        memset(&zs->z, 0, sizeof zs->z);
        if (inflateInit2(&zs->z, 15 + 16) != Z_OK)
            return zfail(zs, err, SH_ENOMEM, 0, "%s: cannot start the gzip decoder", zs->name);
        zs->z_init = 1;
    } else if (zs->kind == SH_Z_ZSTD) {
        zs->zd = ZSTD_createDStream();
        if (!zs->zd || ZSTD_isError(ZSTD_initDStream(zs->zd)) ||
            ZSTD_isError(ZSTD_DCtx_setParameter(zs->zd, ZSTD_d_windowLogMax, ZSTD_WINDOW_LOG_MAX)))
            return zfail(zs, err, SH_ENOMEM, 0, "%s: cannot start the zstd decoder", zs->name);
    }
    return SH_OK;
}

/* Decode into out[out_len..out_cap): adds at least one byte, or sets done. */
static sh_status decode(sh_zstream *zs, sh_error *err)
{
    sh_status st;
    if (zs->dead) return sticky(zs, err);
    if (!zs->started && (st = decide_kind(zs, err)) != SH_OK) return st;
    for (;;) {
        size_t room = zs->out_cap - zs->out_len, avail = zs->in_len - zs->in_pos;
        uint64_t at = zs->in_base + zs->in_pos;
        if (zs->kind == SH_Z_PLAIN) {
            if (avail == 0) {
                if (!fill_raw(zs, err, &st)) { if (st) return st; zs->done = 1; return SH_OK; }
                continue;
            }
            if (avail > room) avail = room;
            memcpy(zs->out + zs->out_len, zs->in + zs->in_pos, avail);
            zs->in_pos += avail;
            zs->out_len += avail;
            return SH_OK;
        }
        if (zs->kind == SH_Z_GZIP) {
            int ret;
            if (zs->z_between) {
                /* after a member: another member, zero padding, or the end */
                while (zs->in_pos < zs->in_len && zs->in[zs->in_pos] == 0) zs->in_pos++;
                if (zs->in_len - zs->in_pos < 2) {
                    if (fill_raw(zs, err, &st)) continue;
                    if (st) return st;
                    if (zs->in_pos == zs->in_len) { zs->done = 1; return SH_OK; }
                }
                /* one byte left at the end cannot start a member (and in[in_pos + 1]
                 * would be past the data: found by fuzz_sketchfile on a .gz file) */
                if (zs->in_len - zs->in_pos < 2 || zs->in[zs->in_pos] != 0x1f || zs->in[zs->in_pos + 1] != 0x8b)
                    return zfail(zs, err, SH_EFORMAT, zs->in_base + zs->in_pos,
                                 "%s: unexpected bytes after the gzip data at byte %llu (not another gzip member)", zs->name,
                                 (unsigned long long)(zs->in_base + zs->in_pos));
                if (inflateReset(&zs->z) != Z_OK)
                    return zfail(zs, err, SH_EFORMAT, at, "%s: cannot reset the gzip decoder", zs->name);
                zs->z_between = 0;
                continue;
            }
            if (avail == 0) {
                if (fill_raw(zs, err, &st)) continue;
                if (st) return st;
                return zfail(zs, err, SH_EFORMAT, at, "%s is truncated: the gzip data ends at byte %llu before its end",
                             zs->name, (unsigned long long)at);
            }
            zs->z.next_in = (Bytef *)(size_t)(zs->in + zs->in_pos); /* zlib's API is not const */
            zs->z.avail_in = (uInt)(avail > 0x40000000u ? 0x40000000u : avail);
            zs->z.next_out = (Bytef *)zs->out + zs->out_len;
            zs->z.avail_out = (uInt)(room > 0x40000000u ? 0x40000000u : room);
            ret = inflate(&zs->z, Z_NO_FLUSH);
            zs->in_pos = (size_t)((const unsigned char *)zs->z.next_in - zs->in);
            zs->out_len = (size_t)((char *)zs->z.next_out - zs->out);
            if (ret == Z_STREAM_END) zs->z_between = 1;
            else if (ret != Z_OK && ret != Z_BUF_ERROR)
                return zfail(zs, err, SH_EFORMAT, zs->in_base + zs->in_pos, "%s: corrupt gzip data near byte %llu (%s)",
                             zs->name, (unsigned long long)(zs->in_base + zs->in_pos), zs->z.msg ? zs->z.msg : "inflate failed");
            if (zs->out_len > zs->out_cap - room) return SH_OK;
            continue;
        }
        { /* zstd */
            ZSTD_inBuffer ib;
            ZSTD_outBuffer ob;
            size_t ret;
            if (avail == 0) {
                if (fill_raw(zs, err, &st)) continue;
                if (st) return st;
                if (zs->z_ret != 0)
                    return zfail(zs, err, SH_EFORMAT, at, "%s is truncated: the zstd data ends at byte %llu inside a frame",
                                 zs->name, (unsigned long long)at);
                zs->done = 1;
                return SH_OK;
            }
            ib.src = zs->in + zs->in_pos;
            ib.size = avail;
            ib.pos = 0;
            ob.dst = zs->out + zs->out_len;
            ob.size = room;
            ob.pos = 0;
            ret = ZSTD_decompressStream(zs->zd, &ob, &ib);
            zs->in_pos += ib.pos;
            zs->out_len += ob.pos;
            if (ZSTD_isError(ret))
                return zfail(zs, err, SH_EFORMAT, zs->in_base + zs->in_pos, "%s: corrupt zstd data near byte %llu (%s)",
                             zs->name, (unsigned long long)(zs->in_base + zs->in_pos), ZSTD_getErrorName(ret));
            zs->z_ret = ret;
            if (ob.pos > 0) return SH_OK;
        }
    }
}

/* Room for at least `need` more decoded bytes after out_len (moving the
 * unconsumed bytes to the front first). */
static sh_status out_room(sh_zstream *zs, size_t need, sh_error *err)
{
    if (zs->out_pos > 0) {
        zs->out_base += zs->out_pos;
        memmove(zs->out, zs->out + zs->out_pos, zs->out_len - zs->out_pos);
        zs->out_len -= zs->out_pos;
        zs->out_pos = 0;
    }
    if (zs->out_cap - zs->out_len < need) {
        size_t nc = zs->out_cap ? zs->out_cap : OUT_STEP;
        char *p;
        while (nc - zs->out_len < need) nc *= 2;
        p = (char *)realloc(zs->out, nc);
        if (!p) return zfail(zs, err, SH_ENOMEM, 0, "out of memory reading %s", zs->name);
        zs->out = p;
        zs->out_cap = nc;
    }
    return SH_OK;
}

static sh_status zs_new(int fd, const char *name, const void *mem, size_t n, sh_zstream **out, sh_error *err)
{
    sh_zstream *zs = (sh_zstream *)calloc(1, sizeof *zs);
    *out = NULL;
    if (!zs) return sh_error_set(err, SH_ENOMEM, 0, "out of memory opening %s", name);
    zs->fd = fd;
    snprintf(zs->name, sizeof zs->name, "%s", name ? name : "(stream)");
    if (fd >= 0) {
        zs->in_own = (unsigned char *)malloc(IN_SIZE);
        if (!zs->in_own) { free(zs); return sh_error_set(err, SH_ENOMEM, 0, "out of memory opening %s", name); }
        zs->in = zs->in_own;
    } else {
        zs->in = (const unsigned char *)mem;
        zs->in_len = n;
        zs->eof_in = 1;
    }
    *out = zs;
    return SH_OK;
}

/* The file at path opened for reading (through EINTR); -1 with err set
 * (SH_EIO, naming the file and the system's reason) when it cannot be. */
static int open_read(const char *path, sh_error *err)
{
    int fd;
    do fd = open(path, O_RDONLY);
    while (fd < 0 && errno == EINTR);
    if (fd < 0) {
        int e = errno;
        sh_error_set(err, SH_EIO, 0, "cannot read %s: %s", path, strerror(e));
        if (err) err->sys_errno = e;
    }
    return fd;
}

/* read(2) through EINTR; on failure the file is closed and err set (SH_EIO,
 * naming it), and -1 returned. */
static ssize_t read_or_close(int fd, void *buf, size_t n, const char *path, sh_error *err)
{
    ssize_t got;
    do got = read(fd, buf, n);
    while (got < 0 && errno == EINTR);
    if (got < 0) {
        int e = errno;
        close(fd);
        sh_error_set(err, SH_EIO, 0, "cannot read %s: %s", path, strerror(e));
        if (err) err->sys_errno = e;
    }
    return got;
}

sh_status sh_zstream_open(const char *path, sh_zstream **out, sh_error *err)
{
    int fd;
    sh_status st;
    *out = NULL;
    if ((fd = open_read(path, err)) < 0) return SH_EIO;
    st = zs_new(fd, path, NULL, 0, out, err);
    if (st != SH_OK) { close(fd); return st; }
    return SH_OK;
}

sh_status sh_zstream_open_at(const char *path, uint64_t offset, sh_zstream **out, sh_error *err)
{
    sh_status st = sh_zstream_open(path, out, err);
    if (st != SH_OK || offset == 0) return st;
    if (lseek((*out)->fd, (off_t)offset, SEEK_SET) < 0) {
        int e = errno;
        sh_zstream_close(*out);
        *out = NULL;
        sh_error_set(err, SH_EIO, 0, "cannot seek to byte %llu of %s: %s", (unsigned long long)offset, path, strerror(e));
        if (err) err->sys_errno = e;
        return SH_EIO;
    }
    (*out)->in_base = offset;
    (*out)->mid_file = 1;
    return SH_OK;
}

sh_status sh_zstream_open_fd(int fd, const char *name, sh_zstream **out, sh_error *err)
{
    int d = dup(fd);
    sh_status st;
    *out = NULL;
    if (d < 0) {
        int e = errno;
        sh_error_set(err, SH_EIO, 0, "cannot read %s: %s", name ? name : "(stream)", strerror(e));
        if (err) err->sys_errno = e;
        return SH_EIO;
    }
    st = zs_new(d, name, NULL, 0, out, err);
    if (st != SH_OK) { close(d); return st; }
    return SH_OK;
}

sh_status sh_zstream_open_mem(const void *p, size_t n, const char *name, sh_zstream **out, sh_error *err)
{
    return zs_new(-1, name, p, n, out, err);
}

sh_status sh_zstream_peek(sh_zstream *zs, size_t want, const char **p, size_t *n, sh_error *err)
{
    sh_status st;
    *p = NULL;
    *n = 0;
    if (zs->dead) return sticky(zs, err);
    while (zs->out_len - zs->out_pos < want && !zs->done) {
        if ((st = out_room(zs, want, err)) != SH_OK) return st;
        if ((st = decode(zs, err)) != SH_OK) return st;
    }
    *p = zs->out + zs->out_pos;
    *n = zs->out_len - zs->out_pos;
    if (*n > want) *n = want;
    return SH_OK;
}

sh_status sh_zstream_read(sh_zstream *zs, void *buf, size_t n, size_t *got, sh_error *err)
{
    sh_status st;
    *got = 0;
    if (zs->dead) return sticky(zs, err);
    while (zs->out_len == zs->out_pos && !zs->done) {
        if ((st = out_room(zs, OUT_STEP, err)) != SH_OK) return st;
        if ((st = decode(zs, err)) != SH_OK) return st;
    }
    if (n > zs->out_len - zs->out_pos) n = zs->out_len - zs->out_pos;
    if (n) memcpy(buf, zs->out + zs->out_pos, n);
    zs->out_pos += n;
    zs->scan = 0;
    *got = n;
    return SH_OK;
}

static sh_status over_limit(sh_zstream *zs, size_t max, sh_error *err)
{
    return sh_error_set(err, SH_ELIMIT, 0, "%s: line %llu is longer than the limit of %zu bytes; skipped (raise --max-bytes "
                        "to read it)", zs->name, (unsigned long long)zs->lineno, max);
}

sh_status sh_zstream_line(sh_zstream *zs, size_t max, const char **line, size_t *len, sh_error *err)
{
    sh_status st;
    *line = NULL;
    *len = 0;
    if (zs->dead) return sticky(zs, err);
    if (max == 0 || max > (size_t)-1 / 32) max = (size_t)-1 / 32;
    for (;;) {
        size_t have = zs->out_len - zs->out_pos;
        /* no buffer yet before the first decode (an empty input never gets one) */
        const char *start = zs->out ? zs->out + zs->out_pos : NULL;
        const char *nl = have > zs->scan ? (const char *)memchr(start + zs->scan, '\n', have - zs->scan) : NULL;
        if (nl) {
            size_t l = (size_t)(nl - start);
            zs->out_pos += l + 1;
            zs->scan = 0;
            zs->lineno++;
            if (l > max) return over_limit(zs, max, err);
            *line = start;
            *len = l;
            return SH_OK;
        }
        zs->scan = have;
        if (have > max) break;
        if (zs->done) {
            if (have == 0) return SH_OK;
            zs->out_pos = zs->out_len;
            zs->scan = 0;
            zs->lineno++;
            *line = start;
            *len = have;
            return SH_OK;
        }
        if ((st = out_room(zs, OUT_STEP, err)) != SH_OK) return st;
        if ((st = decode(zs, err)) != SH_OK) return st;
    }
    /* an unterminated line already longer than max: pass over the rest of it,
     * keeping nothing, for at most 16 * max bytes */
    {
        uint64_t passed = zs->out_len - zs->out_pos;
        zs->lineno++;
        zs->out_base += zs->out_len;
        zs->out_pos = zs->out_len = 0;
        zs->scan = 0;
        while (!zs->done) {
            const char *nl;
            if ((st = out_room(zs, OUT_STEP, err)) != SH_OK) return st;
            if ((st = decode(zs, err)) != SH_OK) return st;
            nl = (const char *)memchr(zs->out, '\n', zs->out_len);
            if (nl) {
                zs->out_pos = (size_t)(nl - zs->out) + 1;
                break;
            }
            passed += zs->out_len;
            zs->out_base += zs->out_len;
            zs->out_len = 0;
            if (passed > (uint64_t)max * 16)
                return zfail(zs, err, SH_ELIMIT, zs->in_base + zs->in_pos,
                             "%s: line %llu goes on for more than %llu bytes without a line end (a compression bomb, or "
                             "not line-oriented data?); the rest of the input is skipped", zs->name,
                             (unsigned long long)zs->lineno, (unsigned long long)passed);
        }
        return over_limit(zs, max, err);
    }
}

static ssize_t cookie_read(void *c, char *buf, size_t n)
{
    size_t got;
    sh_error err;
    if (sh_zstream_read((sh_zstream *)c, buf, n, &got, &err) != SH_OK) {
        errno = err.code == SH_EIO && err.sys_errno ? err.sys_errno : EIO;
        return -1;
    }
    return (ssize_t)got;
}

FILE *sh_zstream_file(sh_zstream *zs)
{
    cookie_io_functions_t io;
    memset(&io, 0, sizeof io);
    io.read = cookie_read;
    return fopencookie(zs, "rb", io);
}

sh_status sh_zstream_failed(const sh_zstream *zs) { return zs->dead; }
const char *sh_zstream_message(const sh_zstream *zs) { return zs->dead ? zs->fail.msg : NULL; }
uint64_t sh_zstream_pos(const sh_zstream *zs) { return zs->out_base + zs->out_pos; }
uint64_t sh_zstream_in_bytes(const sh_zstream *zs) { return zs->in_base + zs->in_pos; }
uint64_t sh_zstream_lineno(const sh_zstream *zs) { return zs->lineno; }
sh_zkind sh_zstream_kind(const sh_zstream *zs) { return zs->kind; }

void sh_zstream_close(sh_zstream *zs)
{
    if (!zs) return;
    if (zs->z_init) inflateEnd(&zs->z);
    if (zs->zd) ZSTD_freeDStream(zs->zd);
    if (zs->fd >= 0) close(zs->fd);
    free(zs->in_own);
    free(zs->out);
    free(zs);
}

/* ---- whole documents ------------------------------------------------------------ */

static sh_status too_big(const char *name, size_t max, int compressed, sh_error *err)
{
    if (compressed)
        return sh_error_set(err, SH_ELIMIT, 0, "%s decompresses to more than the limit of %zu bytes (a compression bomb?); "
                            "raise --max-bytes to read it", name, max);
    return sh_error_set(err, SH_ELIMIT, 0, "%s is larger than the limit of %zu bytes; raise --max-bytes to include it", name, max);
}

/* Decode the rest of zs into out (replacing its content), at most max bytes. */
static sh_status drain(sh_zstream *zs, size_t max, sh_zbuf *out, sh_error *err)
{
    sh_status st;
    /* the stream decodes straight into the caller's buffer */
    zs->out = out->p;
    zs->out_cap = out->cap;
    zs->out_len = zs->out_pos = 0;
    for (;;) {
        if (zs->out_cap - zs->out_len < OUT_STEP / 4) {
            size_t nc = zs->out_cap ? zs->out_cap * 2 : OUT_STEP;
            char *p = (char *)realloc(zs->out, nc);
            if (!p) { st = sh_error_set(err, SH_ENOMEM, 0, "out of memory reading %s", zs->name); goto out; }
            zs->out = p;
            zs->out_cap = nc;
        }
        if ((st = decode(zs, err)) != SH_OK) goto out;
        if (max && zs->out_len > max) { st = too_big(zs->name, max, 1, err); goto out; }
        if (zs->done) break;
    }
    st = SH_OK;
out:
    out->p = zs->out;
    out->cap = zs->out_cap;
    out->len = st == SH_OK ? zs->out_len : 0;
    zs->out = NULL;
    zs->out_cap = zs->out_len = 0;
    return st;
}

sh_status sh_zio_decompress(const void *in, size_t n, size_t max, const char *name, sh_zbuf *out, sh_zkind *kind,
                            sh_error *err)
{
    sh_zstream *zs;
    sh_status st;
    sh_zkind k = sh_zio_kind(in, n);
    if (kind) *kind = k;
    if (k == SH_Z_PLAIN) {
        if (max && n > max) return too_big(name ? name : "document", max, 0, err);
        if (out->cap < n + 1) {
            char *p = (char *)realloc(out->p, n + 1);
            if (!p) return sh_error_set(err, SH_ENOMEM, 0, "out of memory");
            out->p = p;
            out->cap = n + 1;
        }
        if (n) memcpy(out->p, in, n);
        out->len = n;
        return SH_OK;
    }
    if ((st = zs_new(-1, name ? name : "document", in, n, &zs, err)) != SH_OK) return st;
    st = decide_kind(zs, err);
    if (st == SH_OK) st = drain(zs, max, out, err);
    sh_zstream_close(zs);
    return st;
}

sh_status sh_zio_read_file(const char *path, size_t max, sh_zbuf *out, sh_zkind *kind, sh_error *err)
{
    int fd, decided = 0;
    size_t n = 0;
    sh_zkind k = SH_Z_PLAIN;
    struct stat sb;
    if (kind) *kind = SH_Z_PLAIN;
    out->len = 0;
    if ((fd = open_read(path, err)) < 0) return SH_EIO;
    /* plain files (the common case) are read straight into out; the first
     * bytes decide whether a decoder is needed */
    for (;;) {
        ssize_t got;
        size_t want;
        if (n == out->cap) {
            size_t nc = out->cap ? out->cap * 2 : 65536;
            char *p;
            /* never more room than the limit and the one byte that shows a
             * file is over it */
            if (max && max < SIZE_MAX && nc > max + 1 && max + 1 > n) nc = max + 1;
            p = (char *)realloc(out->p, nc);
            if (!p) { close(fd); return sh_error_set(err, SH_ENOMEM, 0, "out of memory reading %s", path); }
            out->p = p;
            out->cap = nc;
        }
        /* until the kind is known, read no more than a decoder's input buffer holds */
        want = out->cap - n;
        if (!decided && want > IN_SIZE - n) want = IN_SIZE - n;
        if ((got = read_or_close(fd, out->p + n, want, path, err)) < 0) return SH_EIO;
        n += (size_t)got;
        if (!decided && (n >= 6 || got == 0)) {
            decided = 1;
            k = sh_zio_kind(out->p, n);
            if (k != SH_Z_PLAIN) break;
            /* a plain file larger than the limit is refused by its size,
             * having read no more than its first bytes */
            if (max && fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) && (uint64_t)sb.st_size > (uint64_t)max) {
                close(fd);
                return too_big(path, max, 0, err);
            }
        }
        if (max && n > max) { close(fd); return too_big(path, max, 0, err); }
        if (got == 0) break;
    }
    if (kind) *kind = k;
    if (k == SH_Z_PLAIN) {
        close(fd);
        out->len = n;
        return SH_OK;
    }
    {
        sh_zstream *zs;
        sh_status st = zs_new(fd, path, NULL, 0, &zs, err);
        if (st != SH_OK) { close(fd); return st; }
        /* the bytes read so far are the start of the compressed data */
        memcpy(zs->in_own, out->p, n);
        zs->in_len = n;
        st = decide_kind(zs, err);
        if (st == SH_OK) st = drain(zs, max, out, err);
        sh_zstream_close(zs);
        return st;
    }
}

sh_status sh_zio_head(const char *path, char *buf, size_t cap, size_t *n, sh_error *err)
{
    int fd;
    ssize_t got;
    sh_status st;
    *n = 0;
    if ((fd = open_read(path, err)) < 0) return SH_EIO;
    if ((got = read_or_close(fd, buf, cap, path, err)) < 0) return SH_EIO;
    close(fd);
    /* a plain file (the common case) costs one read; a compressed one is
     * opened again as a stream and its first decompressed bytes taken */
    if (sh_zio_kind(buf, (size_t)got) == SH_Z_GZIP || sh_zio_kind(buf, (size_t)got) == SH_Z_ZSTD) {
        sh_zstream *zs;
        const char *p;
        size_t m = 0;
        if ((st = sh_zstream_open(path, &zs, err)) != SH_OK) return st;
        st = sh_zstream_peek(zs, cap, &p, &m, err);
        if (st == SH_OK) {
            memcpy(buf, p, m);
            *n = m;
        }
        sh_zstream_close(zs);
        return st;
    }
    *n = (size_t)got;
    return SH_OK;
}
