/* The WARC reader (core/warc.c), plain and gzip: the first input byte picks
 * the form (even: the rest as it is; odd: the rest gzip-compressed, in one
 * member, or in one member per 512 bytes) and the record limit. Invariants:
 * the reader ends (a record or an error per call, then the end); offsets do
 * not go back; a block and a payload are never longer than max_record, a
 * skipped record has no block; every header field is NUL-terminated and
 * named; a payload is never NULL; an I/O or memory error ends the reader. */
#include <zlib.h>
#include "fuzz.h"
#include "warc.h"

static unsigned char *gzip(const unsigned char *in, size_t n, size_t member, size_t *out_n)
{
    size_t cap = n + n / 2 + 64 * (n / (member ? member : 1) + 2) + 64, w = 0, off = 0;
    unsigned char *out = (unsigned char *)malloc(cap);
    do {
        z_stream z;
        size_t take = member && n - off > member ? member : n - off;
        memset(&z, 0, sizeof z);
        FUZZ_CHECK(deflateInit2(&z, 1, Z_DEFLATED, 31, 8, Z_DEFAULT_STRATEGY) == Z_OK);
        z.next_in = (Bytef *)(uintptr_t)(in + off);
        z.avail_in = (uInt)take;
        z.next_out = out + w;
        z.avail_out = (uInt)(cap - w);
        FUZZ_CHECK(deflate(&z, Z_FINISH) == Z_STREAM_END);
        w = cap - z.avail_out;
        deflateEnd(&z);
        off += take;
    } while (off < n);
    *out_n = w;
    return out;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    sh_warc_opts o;
    sh_warc *w;
    sh_error err;
    unsigned char *buf = NULL;
    size_t n, i, calls = 0;
    FILE *fp;
    uint64_t last = 0;
    if (size == 0) return 0;
    memset(&o, 0, sizeof o);
    o.max_record = 64 + (size_t)(data[0] >> 2) * 97;
    if (data[0] & 1) {
        buf = gzip(data + 1, size - 1, data[0] & 2 ? 512 : 0, &n);
    } else {
        n = size - 1;
        buf = (unsigned char *)malloc(n ? n : 1);
        memcpy(buf, data + 1, n);
    }
    fp = n ? fmemopen(buf, n, "rb") : NULL;
    if (!fp) { free(buf); return 0; }
    FUZZ_CHECK(sh_warc_open_stream(fp, "fuzz.warc", &o, &w, &err) == SH_OK);
    for (;;) {
        const sh_warc_record *r;
        sh_status s = sh_warc_next(w, &r, &err);
        FUZZ_CHECK(++calls <= 4 * size + 16);   /* it ends */
        if (s == SH_EFORMAT) continue;
        if (s != SH_OK) {
            FUZZ_CHECK(s == SH_EIO || s == SH_ENOMEM);
            FUZZ_CHECK(sh_warc_next(w, &r, &err) == SH_OK && r == NULL);
            break;
        }
        if (!r) break;
        FUZZ_CHECK(r->offset >= last);
        last = r->offset;
        FUZZ_CHECK(r->payload != NULL);
        FUZZ_CHECK(r->payload_len <= o.max_record);
        if (r->skipped) FUZZ_CHECK(r->block == NULL);
        else FUZZ_CHECK(r->block != NULL && r->block_len <= o.max_record && r->block[r->block_len] == 0);
        for (i = 0; i < r->nfields; i++) FUZZ_CHECK(r->fields[i].name && r->fields[i].name[0] && r->fields[i].value);
        for (i = 0; i < r->http_nfields; i++) FUZZ_CHECK(r->http_fields[i].name && r->http_fields[i].value);
        if (r->http_headers) FUZZ_CHECK(r->block && r->http_headers >= r->block && r->http_headers + r->http_headers_len <= r->block + r->block_len);
    }
    sh_warc_close(w);
    fclose(fp);
    free(buf);
    return 0;
}
