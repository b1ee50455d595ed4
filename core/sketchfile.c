#include "sketchfile.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "byteorder.h"
#include "formats.h"
#include "zio.h"

/* Record layout after its u32 length (docs/formats.md): u8 key type, 3 zero
 * bytes, u32 key length, the key, u32 s, u32 size class, u64 m, u64 shingles,
 * u64 tokens, u32 n, n u64 values, u32 crc32 of everything after the length. */
#define REC_FIXED (4u + 4u + 4u + 4u + 8u + 8u + 8u + 4u + 4u)
#define HDR_FIXED 24u
#define TRAILER_MARK 0xffffffffu
#define MAX_RECORD 0x7fffffffu   /* 2 GiB: 268 million values */

struct sh_skfile_writer {
    FILE *f;
    char *path, *tmp;
    int started;
    sh_sketch params;      /* the file's (n = 0) */
    char *meta;
    size_t meta_n;
    uint64_t count;
    unsigned char *buf;
    size_t cap;
};

static sh_status io_fail(sh_error *err, const char *what, const char *path)
{
    int e = errno;
    sh_status st = sh_error_set(err, SH_EIO, 0, "cannot %s %s: %s", what, path, strerror(e));
    if (err) err->sys_errno = e;
    return st;
}

sh_status sh_skfile_create(const char *path, sh_skfile_writer **out, sh_error *err)
{
    sh_skfile_writer *w = (sh_skfile_writer *)calloc(1, sizeof *w);
    size_t n = strlen(path);
    *out = NULL;
    if (!w) return sh_error_set(err, SH_ENOMEM, 0, "out of memory");
    w->path = (char *)malloc(n + 1);
    w->tmp = (char *)malloc(n + 5);
    if (!w->path || !w->tmp) { free(w->path); free(w->tmp); free(w); return sh_error_set(err, SH_ENOMEM, 0, "out of memory"); }
    memcpy(w->path, path, n + 1);
    memcpy(w->tmp, path, n);
    memcpy(w->tmp + n, ".tmp", 5);
    w->f = fopen(w->tmp, "wb");
    if (!w->f) {
        sh_status st = io_fail(err, "write", w->tmp);
        free(w->path);
        free(w->tmp);
        free(w);
        return st;
    }
    setvbuf(w->f, NULL, _IOFBF, 1 << 20);
    *out = w;
    return SH_OK;
}

static int reserve(unsigned char **b, size_t *cap, size_t n)
{
    unsigned char *p;
    size_t nc;
    if (n <= *cap) return 1;
    nc = *cap ? *cap : 4096;
    while (nc < n) nc *= 2;
    p = (unsigned char *)realloc(*b, nc);
    if (!p) return 0;
    *b = p;
    *cap = nc;
    return 1;
}

sh_status sh_skfile_set_meta(sh_skfile_writer *w, const void *p, size_t n, sh_error *err)
{
    char *m;
    if (w->started) return sh_error_set(err, SH_EINVAL, 0, "the meta bytes of a sketch file come before its first sketch");
    if (n > SH_SKFILE_MAX_META) return sh_error_set(err, SH_EINVAL, 0, "%zu meta bytes: at most %u", n, (unsigned)SH_SKFILE_MAX_META);
    m = (char *)malloc(n ? n : 1);
    if (!m) return sh_error_set(err, SH_ENOMEM, 0, "out of memory");
    if (n) memcpy(m, p, n);
    free(w->meta);
    w->meta = m;
    w->meta_n = n;
    return SH_OK;
}

static sh_status write_header(sh_skfile_writer *w, const sh_sketch *params, sh_error *err)
{
    unsigned char h[HDR_FIXED + SH_SKETCH_PARAMS_SIZE];
    unsigned char c[4];
    size_t psize = params ? SH_SKETCH_PARAMS_SIZE : 0;
    uLong crc;
    memcpy(h, SH_SKFILE_MAGIC, 8);
    sh_store_le32(h + 8, SH_SKFILE_VERSION);
    sh_store_le32(h + 12, SH_SKFILE_BOM);
    sh_store_le32(h + 16, (uint32_t)psize);
    sh_store_le32(h + 20, (uint32_t)w->meta_n);
    if (params) sh_sketch_serialize(params, h + HDR_FIXED);
    crc = crc32(0L, h, (uInt)(HDR_FIXED + psize));
    if (w->meta_n) crc = crc32(crc, (const unsigned char *)w->meta, (uInt)w->meta_n);
    sh_store_le32(c, (uint32_t)crc);
    if (fwrite(h, 1, HDR_FIXED + psize, w->f) != HDR_FIXED + psize ||
        (w->meta_n && fwrite(w->meta, 1, w->meta_n, w->f) != w->meta_n) || fwrite(c, 1, 4, w->f) != 4)
        return io_fail(err, "write", w->tmp);
    w->started = 1;
    return SH_OK;
}

sh_status sh_skfile_put(sh_skfile_writer *w, const sh_skkey *key, const sh_sketch *s, sh_error *err)
{
    size_t klen = 0, len, i;
    unsigned char *p;
    sh_status st;
    if (!w->started) {
        /* the parameters alone: a sketch of no values, of no document */
        w->params = *s;
        w->params.n = 0;
        w->params.n_shingles = 0;
        w->params.n_tokens = 0;
        if ((st = write_header(w, &w->params, err)) != SH_OK) return st;
    } else if (s->p.kind != w->params.p.kind || (st = sh_sketch_compatible(&w->params, s, err)) != SH_OK) {
        if (s->p.kind != w->params.p.kind)
            return sh_error_set(err, SH_EMISMATCH, 0, "%s: sketch %llu is of another kind than the file's first sketch: a sketch "
                                "file holds sketches made with one configuration", w->path, (unsigned long long)w->count + 1);
        {
            char msg[sizeof err->msg];
            snprintf(msg, sizeof msg, "%s", err->msg);
            return sh_error_set(err, SH_EMISMATCH, 0, "%s: sketch %llu cannot be stored with the file's sketches (%.300s)",
                                w->path, (unsigned long long)w->count + 1, msg);
        }
    }
    switch (key ? key->type : SH_SKKEY_NONE) {
    case SH_SKKEY_STRING: klen = key->len; break;
    case SH_SKKEY_INTEGER: case SH_SKKEY_NUMBER: klen = 8; break;
    default: klen = 0; break;
    }
    if (klen > SH_SKFILE_MAX_KEY)
        return sh_error_set(err, SH_EINVAL, 0, "a key of %zu bytes is longer than the %u a sketch file allows", klen,
                            (unsigned)SH_SKFILE_MAX_KEY);
    len = REC_FIXED + klen + 8 * s->n;
    if (!reserve(&w->buf, &w->cap, 4 + len)) return sh_error_set(err, SH_ENOMEM, 0, "out of memory");
    p = w->buf;
    sh_store_le32(p, (uint32_t)len);
    p[4] = (unsigned char)(key ? key->type : SH_SKKEY_NONE);
    p[5] = p[6] = p[7] = 0;
    sh_store_le32(p + 8, (uint32_t)klen);
    p += 12;
    if (key && key->type == SH_SKKEY_STRING) memcpy(p, key->s, klen);
    else if (key && key->type == SH_SKKEY_INTEGER) sh_store_le64(p, (uint64_t)key->i);
    else if (key && key->type == SH_SKKEY_NUMBER) {
        uint64_t bits;
        memcpy(&bits, &key->d, 8);
        sh_store_le64(p, bits);
    }
    p += klen;
    {
        /* what varies between documents of the kind; a field the kind does
         * not use is written as the header's (the reader checks it is), so
         * comparable sketches whose unused fields differ still store */
        const sh_sketch_params *fp = &w->params.p;
        int uses_s = fp->kind == SH_SKETCH_MIN || fp->kind == SH_SKETCH_MINMOD;
        int uses_m = fp->kind == SH_SKETCH_MOD || fp->kind == SH_SKETCH_MINMOD;
        sh_store_le32(p, uses_s ? s->p.s : fp->s);
        sh_store_le32(p + 4, fp->kind == SH_SKETCH_CLASS ? s->p.cls : fp->cls);
        sh_store_le64(p + 8, uses_m ? s->p.m : fp->m);
    }
    sh_store_le64(p + 16, s->n_shingles);
    sh_store_le64(p + 24, s->n_tokens);
    sh_store_le32(p + 32, (uint32_t)s->n);
    p += 36;
    for (i = 0; i < s->n; i++) sh_store_le64(p + 8 * i, s->v[i]);
    p += 8 * s->n;
    sh_store_le32(p, (uint32_t)crc32(0L, w->buf + 4, (uInt)(len - 4)));
    if (fwrite(w->buf, 1, 4 + len, w->f) != 4 + len) return io_fail(err, "write", w->tmp);
    w->count++;
    return SH_OK;
}

uint64_t sh_skfile_written(const sh_skfile_writer *w) { return w->count; }

static void writer_free(sh_skfile_writer *w)
{
    free(w->meta);
    free(w->path);
    free(w->tmp);
    free(w->buf);
    free(w);
}

void sh_skfile_abort(sh_skfile_writer *w)
{
    if (!w) return;
    if (w->f) fclose(w->f);
    remove(w->tmp);
    writer_free(w);
}

sh_status sh_skfile_commit(sh_skfile_writer *w, uint64_t *count, sh_error *err)
{
    unsigned char t[4 + 8 + 8 + 4];
    sh_status st;
    if (!w->started && (st = write_header(w, NULL, err)) != SH_OK) { sh_skfile_abort(w); return st; }
    sh_store_le32(t, TRAILER_MARK);
    sh_store_le64(t + 4, w->count);
    memcpy(t + 12, SH_SKFILE_END, 8);
    sh_store_le32(t + 20, (uint32_t)crc32(0L, t + 4, 16));
    if (fwrite(t, 1, sizeof t, w->f) != sizeof t || fflush(w->f) != 0 || fsync(fileno(w->f)) != 0) {
        st = io_fail(err, "write", w->tmp);
        sh_skfile_abort(w);
        return st;
    }
    if (fclose(w->f) != 0) {
        w->f = NULL;
        st = io_fail(err, "write", w->tmp);
        sh_skfile_abort(w);
        return st;
    }
    w->f = NULL;
    if (rename(w->tmp, w->path) != 0) {
        st = io_fail(err, "rename to", w->path);
        sh_skfile_abort(w);
        return st;
    }
    if (count) *count = w->count;
    writer_free(w);
    return SH_OK;
}

/* ---- reading ---------------------------------------------------------------------- */

struct sh_skfile_reader {
    sh_zstream *zs;
    char name[512];
    sh_sketch *params;     /* NULL for an empty file */
    char *meta;
    size_t meta_n;
    uint64_t count, offset; /* records read; bytes (decompressed) consumed */
    int done;
    unsigned char *buf;
    size_t cap;
    sh_sketch *sk;         /* the current record's sketch */
    size_t sk_cap;         /* values it has room for */
};

/* Exactly n bytes, or SH_EFORMAT for a file that ends before them. */
static sh_status read_exact(sh_skfile_reader *r, void *p, size_t n, const char *what, sh_error *err)
{
    size_t got = 0, k;
    while (got < n) {
        sh_status st = sh_zstream_read(r->zs, (char *)p + got, n - got, &k, err);
        if (st != SH_OK) return st;
        if (k == 0)
            return sh_error_set(err, SH_EFORMAT, (size_t)(r->offset + got), "%s is truncated: it ends at byte %llu inside %s "
                                "(after %llu complete records); the writer did not finish it", r->name,
                                (unsigned long long)(r->offset + got), what, (unsigned long long)r->count);
        got += k;
    }
    r->offset += n;
    return SH_OK;
}

static sh_status open_common(sh_skfile_reader *r, sh_skfile_reader **out, sh_error *err)
{
    unsigned char h[HDR_FIXED + SH_SKETCH_PARAMS_SIZE + 4];
    uint32_t psize, msize;
    uLong crc;
    sh_status st;
    if ((st = read_exact(r, h, HDR_FIXED, "the header", err)) != SH_OK) goto fail;
    if (memcmp(h, SH_SKFILE_MAGIC, 8) != 0) {
        st = sh_error_set(err, SH_EFORMAT, 0, "%s is not a sketch file: it does not start with \"SHSKFILE\"", r->name);
        goto fail;
    }
    if (sh_load_le32(h + 8) != SH_SKFILE_VERSION) {
        st = sh_error_set(err, SH_EFORMAT, 8, "%s: sketch file version %u is not supported (this build reads version %u)",
                          r->name, sh_load_le32(h + 8), SH_SKFILE_VERSION);
        goto fail;
    }
    if (sh_load_le32(h + 12) != SH_SKFILE_BOM) {
        st = sh_error_set(err, SH_EFORMAT, 12, "%s: the byte-order mark is 0x%08x, not 0x%08x: corrupt", r->name,
                          sh_load_le32(h + 12), SH_SKFILE_BOM);
        goto fail;
    }
    psize = sh_load_le32(h + 16);
    msize = sh_load_le32(h + 20);
    if (psize != 0 && psize != SH_SKETCH_PARAMS_SIZE) {
        st = sh_error_set(err, SH_EFORMAT, 16, "%s: a parameter block of %u bytes (expected %u): corrupt", r->name, psize,
                          SH_SKETCH_PARAMS_SIZE);
        goto fail;
    }
    if (msize > SH_SKFILE_MAX_META) {
        st = sh_error_set(err, SH_EFORMAT, 20, "%s: %u meta bytes, more than a writer makes: corrupt", r->name, msize);
        goto fail;
    }
    if ((st = read_exact(r, h + HDR_FIXED, psize, "the header", err)) != SH_OK) goto fail;
    r->meta = (char *)malloc(msize + 1);
    if (!r->meta) { st = sh_error_set(err, SH_ENOMEM, 0, "out of memory"); goto fail; }
    if ((st = read_exact(r, r->meta, msize, "the header", err)) != SH_OK) goto fail;
    r->meta[msize] = '\0';
    r->meta_n = msize;
    if ((st = read_exact(r, h + HDR_FIXED + psize, 4, "the header", err)) != SH_OK) goto fail;
    crc = crc32(0L, h, (uInt)(HDR_FIXED + psize));
    if (msize) crc = crc32(crc, (const unsigned char *)r->meta, (uInt)msize);
    if (sh_load_le32(h + HDR_FIXED + psize) != (uint32_t)crc) {
        st = sh_error_set(err, SH_EFORMAT, HDR_FIXED + psize + msize, "%s: header checksum mismatch: the file is corrupt",
                          r->name);
        goto fail;
    }
    if (psize) {
        sh_error e2;
        if ((st = sh_sketch_deserialize(h + HDR_FIXED, psize, &r->params, &e2)) != SH_OK) {
            st = sh_error_set(err, st, HDR_FIXED, "%s: the parameters in the header: %.300s", r->name, e2.msg);
            goto fail;
        }
    }
    *out = r;
    return SH_OK;
fail:
    sh_skfile_close(r);
    return st;
}

static sh_status reader_new(sh_skfile_reader **r, const char *name, sh_error *err)
{
    *r = (sh_skfile_reader *)calloc(1, sizeof **r);
    if (!*r) return sh_error_set(err, SH_ENOMEM, 0, "out of memory");
    snprintf((*r)->name, sizeof (*r)->name, "%s", name);
    return SH_OK;
}

sh_status sh_skfile_open(const char *path, sh_skfile_reader **out, sh_error *err)
{
    sh_skfile_reader *r;
    sh_status st;
    *out = NULL;
    if ((st = reader_new(&r, path, err)) != SH_OK) return st;
    if ((st = sh_zstream_open(path, &r->zs, err)) != SH_OK) { sh_skfile_close(r); return st; }
    return open_common(r, out, err);
}

sh_status sh_skfile_open_mem(const void *p, size_t n, const char *name, sh_skfile_reader **out, sh_error *err)
{
    sh_skfile_reader *r;
    sh_status st;
    *out = NULL;
    if ((st = reader_new(&r, name ? name : "sketch file", err)) != SH_OK) return st;
    if ((st = sh_zstream_open_mem(p, n, r->name, &r->zs, err)) != SH_OK) { sh_skfile_close(r); return st; }
    return open_common(r, out, err);
}

const sh_sketch *sh_skfile_params(const sh_skfile_reader *r) { return r->params; }

const char *sh_skfile_meta(const sh_skfile_reader *r, size_t *n)
{
    *n = r->meta_n;
    return r->meta;
}
uint64_t sh_skfile_read_count(const sh_skfile_reader *r) { return r->count; }
uint64_t sh_skfile_offset(const sh_skfile_reader *r) { return sh_zstream_in_bytes(r->zs); }

static sh_status bad(sh_skfile_reader *r, sh_error *err, uint64_t at, const char *what)
{
    r->done = 1;
    return sh_error_set(err, SH_EFORMAT, (size_t)at, "%s: record %llu at byte %llu %s", r->name,
                        (unsigned long long)r->count + 1, (unsigned long long)at, what);
}

sh_status sh_skfile_next(sh_skfile_reader *r, sh_skkey *key, const sh_sketch **sketch, sh_error *err)
{
    unsigned char lb[4], *p;
    uint32_t len, klen, n, i;
    uint64_t at = r->offset;
    sh_status st;
    const sh_sketch_params *fp;
    sh_sketch_params rp;
    memset(key, 0, sizeof *key);
    *sketch = NULL;
    if (r->done) return SH_OK;
    if ((st = read_exact(r, lb, 4, "a record's length", err)) != SH_OK) { r->done = 1; return st; }
    len = sh_load_le32(lb);
    if (len == TRAILER_MARK) {
        unsigned char t[20];
        size_t extra;
        char one;
        if ((st = read_exact(r, t, sizeof t, "the trailer", err)) != SH_OK) { r->done = 1; return st; }
        r->done = 1;
        if (memcmp(t + 8, SH_SKFILE_END, 8) != 0 || sh_load_le32(t + 16) != (uint32_t)crc32(0L, t, 16))
            return sh_error_set(err, SH_EFORMAT, (size_t)at, "%s: the trailer at byte %llu is corrupt", r->name,
                                (unsigned long long)at);
        if (sh_load_le64(t) != r->count)
            return sh_error_set(err, SH_EFORMAT, (size_t)at, "%s: the trailer counts %llu records, the file holds %llu: corrupt",
                                r->name, (unsigned long long)sh_load_le64(t), (unsigned long long)r->count);
        if ((st = sh_zstream_read(r->zs, &one, 1, &extra, err)) != SH_OK) return st;
        if (extra)
            return sh_error_set(err, SH_EFORMAT, (size_t)r->offset, "%s: bytes after the trailer at byte %llu: corrupt",
                                r->name, (unsigned long long)r->offset);
        return SH_OK;
    }
    if (!r->params) return bad(r, err, at, "follows a header without parameters (a file of no sketches): corrupt");
    if (len < REC_FIXED || len > MAX_RECORD) return bad(r, err, at, "has an impossible length: corrupt");
    {
        /* the buffer grows with the bytes that arrive, not with the length a
         * record claims: a damaged length costs no more memory than the file
         * has (found by core/fuzz/fuzz_sketchfile: 30 bytes asked for 2 GiB) */
        size_t got = 0;
        while (got < len) {
            size_t piece = len - got < ((size_t)1 << 20) ? len - got : ((size_t)1 << 20);
            if (!reserve(&r->buf, &r->cap, got + piece)) { r->done = 1; return sh_error_set(err, SH_ENOMEM, 0, "out of memory"); }
            if ((st = read_exact(r, r->buf + got, piece, "a record", err)) != SH_OK) { r->done = 1; return st; }
            got += piece;
        }
    }
    p = r->buf;
    if (sh_load_le32(p + len - 4) != (uint32_t)crc32(0L, p, (uInt)(len - 4)))
        return bad(r, err, at, "fails its checksum: the file is corrupt");
    klen = sh_load_le32(p + 4);
    if (p[0] > SH_SKKEY_NUMBER || p[1] || p[2] || p[3] || klen > SH_SKFILE_MAX_KEY || (uint64_t)klen + REC_FIXED > len ||
        ((p[0] == SH_SKKEY_INTEGER || p[0] == SH_SKKEY_NUMBER) && klen != 8) || (p[0] == SH_SKKEY_NONE && klen != 0))
        return bad(r, err, at, "has a malformed key: corrupt");
    n = sh_load_le32(p + 8 + klen + 32);
    if ((uint64_t)REC_FIXED + klen + 8 * (uint64_t)n != len) return bad(r, err, at, "has a value count that does not fit its length");
    key->type = (sh_skkey_type)p[0];
    if (key->type == SH_SKKEY_STRING) { key->s = (const char *)p + 8; key->len = klen; }
    else if (key->type == SH_SKKEY_INTEGER) key->i = (int64_t)sh_load_le64(p + 8);
    else if (key->type == SH_SKKEY_NUMBER) { uint64_t b = sh_load_le64(p + 8); memcpy(&key->d, &b, 8); }
    fp = &r->params->p;
    rp = *fp;
    p += 8 + klen;
    rp.s = sh_load_le32(p);
    rp.cls = sh_load_le32(p + 4);
    rp.m = sh_load_le64(p + 8);
    /* what varies between documents must still be what a writer could make */
    if ((fp->kind == SH_SKETCH_MIN || fp->kind == SH_SKETCH_MINMOD) && (rp.s == 0 || n > rp.s))
        return bad(r, err, at, "holds more values than its MIN size, or a size of 0: corrupt");
    if (fp->kind == SH_SKETCH_MINMOD && rp.m != fp->m) return bad(r, err, at, "has another modulus than the file: corrupt");
    if (fp->kind == SH_SKETCH_MOD && (rp.m == 0 || sh_mod_steps(fp->m > rp.m ? fp->m : rp.m, fp->m > rp.m ? rp.m : fp->m) == UINT32_MAX))
        return bad(r, err, at, "has a modulus that is not on the file's chain: corrupt");
    if (fp->kind == SH_SKETCH_CLASS && rp.cls > 63) return bad(r, err, at, "has a size class above 63: corrupt");
    /* a field the kind does not use is the header's, as the writer copies it */
    if ((fp->kind != SH_SKETCH_MIN && fp->kind != SH_SKETCH_MINMOD && rp.s != fp->s) ||
        (fp->kind != SH_SKETCH_MOD && fp->kind != SH_SKETCH_MINMOD && rp.m != fp->m) ||
        (fp->kind != SH_SKETCH_CLASS && rp.cls != fp->cls))
        return bad(r, err, at, "sets a field its kind does not use (s, class or modulus) unlike the header: corrupt");
    /* the writer makes the header from the first sketch */
    if (r->count == 0 && (rp.s != fp->s || rp.m != fp->m || rp.cls != fp->cls))
        return bad(r, err, at, "is the first, and its s, class or modulus is not the header's: corrupt");
    if (n > r->sk_cap || !r->sk) {
        size_t nc = n > 16 ? n : 16;
        sh_sketch *s = (sh_sketch *)realloc(r->sk, sizeof *s + nc * sizeof(uint64_t));
        if (!s) { r->done = 1; return sh_error_set(err, SH_ENOMEM, 0, "out of memory for a sketch of %u values", n); }
        r->sk = s;
        r->sk_cap = nc;
    }
    r->sk->p = rp;
    r->sk->n_shingles = sh_load_le64(p + 16);
    r->sk->n_tokens = sh_load_le64(p + 24);
    r->sk->n = n;
    p += 36;
    for (i = 0; i < n; i++) {
        r->sk->v[i] = sh_load_le64(p + 8 * (size_t)i);
        if (i > 0 && r->sk->v[i] <= r->sk->v[i - 1]) return bad(r, err, at, "has values out of order: corrupt");
    }
    {
        /* every field as sh_sketch_deserialize (shingle.load) checks it: a
         * record is a sketch a writer could have made (e.g. MOD values that
         * are multiples of the modulus; found by core/fuzz/fuzz_sketchfile) */
        sh_error e2;
        if (sh_sketch_check(r->sk, &e2) != SH_OK) {
            r->done = 1;
            return sh_error_set(err, SH_EFORMAT, (size_t)at, "%s: record %llu at byte %llu: %.300s: corrupt", r->name,
                                (unsigned long long)r->count + 1, (unsigned long long)at, e2.msg);
        }
    }
    r->count++;
    *sketch = r->sk;
    return SH_OK;
}

void sh_skfile_close(sh_skfile_reader *r)
{
    if (!r) return;
    sh_zstream_close(r->zs);
    free(r->meta);
    free(r->params);
    free(r->buf);
    free(r->sk);
    free(r);
}
