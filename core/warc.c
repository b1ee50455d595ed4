#include "warc.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>
#define ZLIB_CONST
#include <zlib.h>

#include "grow.h"

/* Three layers:
 *   raw     bytes of the file, in raw[] (raw_base = file offset of raw[0]);
 *   logical the WARC byte stream, in out[]: raw bytes for a plain file, the
 *           inflated concatenation of the gzip members for a compressed one;
 *   records parsed from the logical stream.
 * A failure below the record layer (corrupt or truncated gzip member, I/O
 * error) is sticky in src_st: reads see end-of-data, and the record layer
 * reports it when it actually needs the missing bytes, so a corrupt member
 * after a good record is reported on the next call, not on this one.
 *
 * To give each record the offset of the gzip member it starts in, memb[]
 * remembers, for the members whose output is still in out[], where in the
 * logical stream their output begins. */

#define RAW_SIZE 65536
#define OUT_SIZE 65536
#define NMEMB 32

struct memb {
    uint64_t lpos;   /* logical offset of the member's first output byte */
    uint64_t raw;    /* file offset of the member */
};

struct sh_warc {
    FILE *fp;
    int own;
    char name[256];
    size_t max_record, max_header;
    int raw_http;
    int gz, seekable, dead;

    unsigned char raw[RAW_SIZE];
    size_t raw_pos, raw_len;
    uint64_t raw_base;
    int raw_eof;

    z_stream z;
    int z_ok;
    int in_member, member_has_entry;
    uint64_t member_off;
    struct memb memb[NMEMB];
    size_t nmemb;
    int have_ended;
    uint64_t ended_off, ended_end;

    unsigned char out[OUT_SIZE];
    size_t out_pos, out_len;
    uint64_t out_base;

    sh_status src_st;
    uint64_t src_off;
    int src_errno;
    char src_msg[400];

    int resync, resync_raw;
    uint64_t resync_at;

    char *hbuf;  size_t hcap;    /* WARC header, parsed in place */
    char *block; size_t bcap;
    sh_warc_field *wf; size_t wfcap;
    sh_http *http;               /* application/http blocks, made when first needed */
    char warning[512];
    sh_warc_record rec;
};

/* ---- messages ------------------------------------------------------------ */

static void src_fail(sh_warc *w, sh_status st, uint64_t off, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

static void src_fail(sh_warc *w, sh_status st, uint64_t off, const char *fmt, ...)
{
    va_list ap;
    if (w->src_st)
        return;
    w->src_st = st;
    w->src_off = off;
    va_start(ap, fmt);
    vsnprintf(w->src_msg, sizeof w->src_msg, fmt, ap);
    va_end(ap);
}

static sh_status rec_fail(sh_warc *w, sh_error *err, sh_status st, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

/* An error about the current record: "<file>: record at byte N: <what>". */
static sh_status rec_fail(sh_warc *w, sh_error *err, sh_status st, const char *fmt, ...)
{
    char what[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return sh_error_set(err, st, (size_t)w->rec.offset, "%s: record at byte %" PRIu64 ": %s",
                        w->name, w->rec.offset, what);
}

/* A warning about the current record (sh_warc_record.warning). */
#define add_warning(w, ...) \
    (sh_msg_append((w)->warning, sizeof (w)->warning, __VA_ARGS__), (w)->rec.warning = (w)->warning)

/* Up to 16 bytes, printable ASCII as is, others as \xHH. */
static void show_bytes(const unsigned char *p, size_t n, char *buf, size_t cap)
{
    size_t i, k = 0;
    if (n > 16)
        n = 16;
    for (i = 0; i < n && k + 5 < cap; i++) {
        if (p[i] >= 0x20 && p[i] < 0x7f && p[i] != '"' && p[i] != '\\')
            buf[k++] = (char)p[i];
        else
            k += (size_t)snprintf(buf + k, cap - k, "\\x%02x", p[i]);
    }
    buf[k] = '\0';
}

/* ---- raw layer ----------------------------------------------------------- */

/* Read more of the file into raw[], keeping the unread bytes. Returns the
 * number of bytes added; 0 at the end of the file or on a (sticky) error. */
static size_t raw_more(sh_warc *w)
{
    size_t got;
    if (w->raw_eof || w->src_st)
        return 0;
    if (w->raw_pos > 0) {
        memmove(w->raw, w->raw + w->raw_pos, w->raw_len - w->raw_pos);
        w->raw_base += w->raw_pos;
        w->raw_len -= w->raw_pos;
        w->raw_pos = 0;
    }
    if (w->raw_len == RAW_SIZE)
        return 0;
    got = fread(w->raw + w->raw_len, 1, RAW_SIZE - w->raw_len, w->fp);
    if (got == 0) {
        if (ferror(w->fp)) {
            int e = errno;
            src_fail(w, SH_EIO, w->raw_base + w->raw_len, "read error at byte %" PRIu64 ": %s",
                     w->raw_base + w->raw_len, strerror(e));
            w->src_errno = e;
        } else {
            w->raw_eof = 1;
        }
        return 0;
    }
    w->raw_len += got;
    return got;
}

static int raw_ensure(sh_warc *w, size_t k)
{
    while (w->raw_len - w->raw_pos < k)
        if (!raw_more(w))
            return 0;
    return 1;
}

/* Move the raw position to file offset pos; 0 if the file cannot seek. */
static int raw_seek(sh_warc *w, uint64_t pos)
{
    if (pos >= w->raw_base && pos <= w->raw_base + w->raw_len) {
        w->raw_pos = (size_t)(pos - w->raw_base);   /* still buffered: works on pipes too */
        return 1;
    }
    if (!w->seekable || pos > (uint64_t)INT64_MAX)
        return 0;
    if (fseeko(w->fp, (off_t)pos, SEEK_SET) != 0)
        return 0;
    clearerr(w->fp);
    w->raw_base = pos;
    w->raw_pos = w->raw_len = 0;
    w->raw_eof = 0;
    return 1;
}

/* ---- logical layer ------------------------------------------------------- */

static void add_memb(sh_warc *w, uint64_t lpos, uint64_t raw)
{
    if (w->nmemb == NMEMB) {
        memmove(w->memb, w->memb + 1, (NMEMB - 1) * sizeof w->memb[0]);
        w->nmemb--;
    }
    w->memb[w->nmemb].lpos = lpos;
    w->memb[w->nmemb].raw = raw;
    w->nmemb++;
}

/* The member holding logical byte lpos (the last one starting at or before it). */
static const struct memb *find_memb(const sh_warc *w, uint64_t lpos)
{
    size_t i = w->nmemb;
    while (i > 0) {
        i--;
        if (w->memb[i].lpos <= lpos)
            return &w->memb[i];
    }
    return w->nmemb ? &w->memb[0] : NULL;
}

static void out_compact(sh_warc *w)
{
    if (w->out_pos == 0)
        return;
    memmove(w->out, w->out + w->out_pos, w->out_len - w->out_pos);
    w->out_base += w->out_pos;
    w->out_len -= w->out_pos;
    w->out_pos = 0;
    while (w->nmemb >= 2 && w->memb[1].lpos <= w->out_base) {
        memmove(w->memb, w->memb + 1, (w->nmemb - 1) * sizeof w->memb[0]);
        w->nmemb--;
    }
}

static size_t fill_plain(sh_warc *w)
{
    size_t n;
    if (w->raw_pos == w->raw_len && !raw_more(w))
        return 0;
    n = w->raw_len - w->raw_pos;
    if (n > OUT_SIZE - w->out_len)
        n = OUT_SIZE - w->out_len;
    memcpy(w->out + w->out_len, w->raw + w->raw_pos, n);
    w->raw_pos += n;
    w->out_len += n;
    return n;
}

/* Inflate until some output appears; members are decoded one after the other
 * (each is checked for the gzip magic first, so garbage between members and
 * zlib-wrapped data are reported rather than guessed at). */
static size_t fill_gz(sh_warc *w)
{
    for (;;) {
        size_t used, made;
        uInt in0, out0;
        int ret;
        if (!w->in_member) {
            uint64_t at;
            if (!raw_ensure(w, 2)) {
                if (!w->src_st && w->raw_len > w->raw_pos)
                    src_fail(w, SH_EFORMAT, w->raw_base + w->raw_pos,
                             "stray byte at byte %" PRIu64 " at the end of the gzip file",
                             w->raw_base + w->raw_pos);
                return 0;
            }
            at = w->raw_base + w->raw_pos;
            if (w->raw[w->raw_pos] != 0x1f || w->raw[w->raw_pos + 1] != 0x8b) {
                char shown[80];
                show_bytes(w->raw + w->raw_pos, w->raw_len - w->raw_pos, shown, sizeof shown);
                src_fail(w, SH_EFORMAT, at,
                         "expected a gzip member at byte %" PRIu64 " but found \"%s\" "
                         "(garbage between records, or a damaged member before it)", at, shown);
                return 0;
            }
            if (inflateReset(&w->z) != Z_OK) {
                src_fail(w, SH_EFORMAT, at, "cannot reset the gzip decoder at byte %" PRIu64, at);
                return 0;
            }
            w->member_off = at;
            w->in_member = 1;
            w->member_has_entry = 0;
        }
        if (w->raw_pos == w->raw_len && !raw_more(w)) {
            src_fail(w, SH_EFORMAT, w->member_off,
                     "gzip member at byte %" PRIu64 " is truncated: the file ends inside it",
                     w->member_off);
            return 0;
        }
        w->z.next_in = w->raw + w->raw_pos;
        w->z.avail_in = in0 = (uInt)(w->raw_len - w->raw_pos);
        w->z.next_out = w->out + w->out_len;
        w->z.avail_out = out0 = (uInt)(OUT_SIZE - w->out_len);
        ret = inflate(&w->z, Z_NO_FLUSH);
        used = in0 - w->z.avail_in;
        made = out0 - w->z.avail_out;
        w->raw_pos += used;
        if (made) {
            if (!w->member_has_entry)
                add_memb(w, w->out_base + w->out_len, w->member_off);
            w->member_has_entry = 1;
            w->out_len += made;
        }
        if (ret == Z_STREAM_END) {
            w->in_member = 0;
            w->have_ended = 1;
            w->ended_off = w->member_off;
            w->ended_end = w->raw_base + w->raw_pos;
            if (made)
                return made;
            continue;
        }
        if (ret == Z_OK && (used || made)) {
            if (made)
                return made;
            continue;
        }
        src_fail(w, SH_EFORMAT, w->member_off, "gzip member at byte %" PRIu64 " is corrupt (%s)",
                 w->member_off, w->z.msg ? w->z.msg : zError(ret));
        return 0;
    }
}

/* Make more logical bytes available; returns how many were added. */
static size_t fill(sh_warc *w)
{
    out_compact(w);
    if (w->out_len == OUT_SIZE || w->src_st)
        return 0;
    return w->gz ? fill_gz(w) : fill_plain(w);
}

/* At least k (<= OUT_SIZE) unread logical bytes, or 0 at end/error. */
static int ensure(sh_warc *w, size_t k)
{
    while (w->out_len - w->out_pos < k)
        if (!fill(w))
            return 0;
    return 1;
}

static uint64_t lpos_now(const sh_warc *w) { return w->out_base + w->out_pos; }

/* ---- resynchronization ----------------------------------------------------- */

static void resync_gzip(sh_warc *w, uint64_t from)
{
    raw_seek(w, from);   /* if the file cannot seek, go on from where we are */
    w->in_member = 0;
    w->out_base += w->out_len;
    w->out_pos = w->out_len = 0;
    w->nmemb = 0;
    for (;;) {
        const unsigned char *p;
        if (!raw_ensure(w, 4)) {
            if (!w->src_st)
                w->raw_pos = w->raw_len;   /* too short to be a member */
            return;
        }
        p = w->raw + w->raw_pos;
        /* magic, method 8 (deflate), no reserved flag bits */
        if (p[0] == 0x1f && p[1] == 0x8b && p[2] == 8 && (p[3] & 0xe0) == 0)
            return;
        w->raw_pos++;
    }
}

static void resync_text(sh_warc *w, uint64_t from)
{
    int prev = 0;
    if (from >= w->out_base && from <= w->out_base + w->out_len) {
        w->out_pos = (size_t)(from - w->out_base);
    } else if (!w->gz && raw_seek(w, from)) {
        w->out_base = from;
        w->out_pos = w->out_len = 0;
    }
    for (;;) {
        int c;
        if (!ensure(w, 1))
            return;
        c = w->out[w->out_pos];
        if (prev == '\n' && c == 'W' && ensure(w, 7) &&
            memcmp(w->out + w->out_pos, "WARC/1.", 7) == 0)
            return;
        prev = c;
        w->out_pos++;
    }
}

/* ---- header fields ------------------------------------------------------- */

/* ---- records ------------------------------------------------------------- */

/* The HTTP response in the record's block: status, headers and the body
 * de-chunked and decoded as its payload (core/http.h). */
static sh_status read_http(sh_warc *w, sh_error *err)
{
    sh_http_response r;
    if (!w->http && sh_http_new(&w->http, err) != SH_OK)
        return rec_fail(w, err, SH_ENOMEM, "out of memory for an HTTP parser");
    if (sh_http_parse(w->http, w->rec.block, w->rec.block_len, w->max_record, &r, err) != SH_OK)
        return rec_fail(w, err, SH_ENOMEM, "out of memory for HTTP headers");
    w->rec.http_status = r.status;
    w->rec.http_content_type = r.content_type;
    w->rec.http_fields = r.fields;
    w->rec.http_nfields = r.nfields;
    w->rec.http_headers = r.headers;
    w->rec.http_headers_len = r.headers_len;
    w->rec.payload = r.payload;
    w->rec.payload_len = r.payload_len;
    if (r.warning) add_warning(w, "%s", r.warning);
    return SH_OK;
}

/* Parse one record starting at the current logical position lstart. */
static sh_status read_record(sh_warc *w, uint64_t lstart, int aligned, sh_error *err)
{
    size_t hlen = 0, line = 0, vlen, bad, nf;
    uint64_t cl = 0, left;
    const char *v;
    char *hb;
    int count;
    static const char empty[] = "";

    if (!ensure(w, 5) || memcmp(w->out + w->out_pos, "WARC/", 5) != 0) {
        char shown[80];
        if (w->src_st)
            return rec_fail(w, err, w->src_st, "%s", w->src_msg);
        show_bytes(w->out + w->out_pos, w->out_len - w->out_pos, shown, sizeof shown);
        return rec_fail(w, err, SH_EFORMAT,
                        "expected a \"WARC/1.0\" or \"WARC/1.1\" version line, found \"%s\"%s",
                        shown, w->out_len - w->out_pos < 5 ? " and the end of the data" : "");
    }

    /* header lines, up to and including the empty line */
    for (;;) {
        const unsigned char *nl;
        size_t avail, take;
        if (!ensure(w, 1)) {
            if (w->src_st)
                return rec_fail(w, err, w->src_st, "%s", w->src_msg);
            return rec_fail(w, err, SH_EFORMAT,
                            "truncated: the data ends inside the WARC header (after %zu bytes)", hlen);
        }
        avail = w->out_len - w->out_pos;
        nl = memchr(w->out + w->out_pos, '\n', avail);
        take = nl ? (size_t)(nl - (w->out + w->out_pos)) + 1 : avail;
        if (hlen + take > w->max_header)
            return rec_fail(w, err, SH_EFORMAT,
                            "the WARC header is longer than max_header (%zu bytes) or has no end",
                            w->max_header);
        if (!sh_grow((void **)&w->hbuf, &w->hcap, hlen + take + 1, 1, 4096))
            return rec_fail(w, err, SH_ENOMEM, "out of memory for the WARC header");
        memcpy(w->hbuf + hlen, w->out + w->out_pos, take);
        hlen += take;
        w->out_pos += take;
        if (nl) {
            size_t ll = hlen - line;
            if (line > 0 && (ll == 1 || (ll == 2 && w->hbuf[line] == '\r')))
                break;
            line = hlen;
        }
    }
    hb = w->hbuf;
    hb[hlen] = '\0';

    /* version line */
    vlen = 0;
    while (hb[vlen] != '\n')
        vlen++;
    {
        size_t e = vlen;
        while (e > 0 && (hb[e - 1] == '\r' || hb[e - 1] == ' ' || hb[e - 1] == '\t'))
            e--;
        hb[e] = '\0';
        if (strcmp(hb, "WARC/1.0") != 0 && strcmp(hb, "WARC/1.1") != 0) {
            char shown[80];
            show_bytes((const unsigned char *)hb, e, shown, sizeof shown);
            return rec_fail(w, err, SH_EFORMAT,
                            "unsupported version line \"%s\" (this reader knows WARC/1.0 and WARC/1.1)",
                            shown);
        }
    }
    w->rec.version = hb;
    if (!sh_header_parse(hb, vlen + 1, hlen, &w->wf, &w->wfcap, &nf, 1, &bad))
        return rec_fail(w, err, SH_ENOMEM, "out of memory for the WARC header");
    if (bad)
        return rec_fail(w, err, SH_EFORMAT,
                        "WARC header line %zu bytes into the record has no ':' (a corrupt header)",
                        bad - 1);
    w->rec.fields = w->wf;
    w->rec.nfields = nf;
    w->rec.type = sh_header_get(w->wf, nf, "WARC-Type");
    w->rec.date = sh_header_get(w->wf, nf, "WARC-Date");
    w->rec.record_id = sh_header_get(w->wf, nf, "WARC-Record-ID");
    w->rec.content_type = sh_header_get(w->wf, nf, "Content-Type");
    v = sh_header_get(w->wf, nf, "WARC-Target-URI");
    if (v) {
        size_t m = strlen(v);
        if (m >= 2 && v[0] == '<' && v[m - 1] == '>') {
            size_t k;
            hb[(size_t)(v - hb) + m - 1] = '\0';   /* v points into hb */
            for (k = 0; k < nf; k++)
                if (w->wf[k].value == v)
                    w->wf[k].value = v + 1;
            v++;
        }
    }
    w->rec.target_uri = v;

    v = sh_header_get(w->wf, nf, "Content-Length");
    if (!v)
        return rec_fail(w, err, SH_EFORMAT, "the WARC header has no Content-Length");
    if (!*v)
        return rec_fail(w, err, SH_EFORMAT, "Content-Length is empty");
    {
        const char *p;
        char shown[80];
        for (p = v; *p; p++) {
            if (*p < '0' || *p > '9' || cl > (UINT64_MAX - 9) / 10) {
                show_bytes((const unsigned char *)v, strlen(v), shown, sizeof shown);
                return rec_fail(w, err, SH_EFORMAT, "Content-Length \"%s\" is not a number", shown);
            }
            cl = cl * 10 + (uint64_t)(*p - '0');
        }
    }
    w->rec.content_length = cl;

    /* block */
    left = cl;
    if (cl > w->max_record) {
        w->rec.skipped = 1;
        add_warning(w, "block of %" PRIu64 " bytes skipped: larger than max_record (%zu)", cl,
                    w->max_record);
        while (left > 0) {
            size_t take;
            if (!ensure(w, 1)) {
                if (w->src_st)
                    return rec_fail(w, err, w->src_st, "%s", w->src_msg);
                return rec_fail(w, err, SH_EFORMAT,
                                "truncated: Content-Length is %" PRIu64 " but the data ends after %"
                                PRIu64 " block bytes", cl, cl - left);
            }
            take = w->out_len - w->out_pos;
            if ((uint64_t)take > left)
                take = (size_t)left;
            w->out_pos += take;
            left -= take;
        }
        w->rec.block = NULL;
        w->rec.block_len = 0;
    } else {
        size_t got = 0;
        if (!sh_grow((void **)&w->block, &w->bcap, (size_t)cl + 1, 1, 4096))
            return rec_fail(w, err, SH_ENOMEM, "out of memory for a block of %" PRIu64 " bytes", cl);
        while (got < (size_t)cl) {
            size_t take;
            if (!ensure(w, 1)) {
                if (w->src_st)
                    return rec_fail(w, err, w->src_st, "%s", w->src_msg);
                return rec_fail(w, err, SH_EFORMAT,
                                "truncated: Content-Length is %" PRIu64 " but the data ends after %zu "
                                "block bytes", cl, got);
            }
            take = w->out_len - w->out_pos;
            if (take > (size_t)cl - got)
                take = (size_t)cl - got;
            memcpy(w->block + got, w->out + w->out_pos, take);
            got += take;
            w->out_pos += take;
        }
        w->block[got] = '\0';
        w->rec.block = w->block;
        w->rec.block_len = got;
    }

    /* the record ends with CRLF CRLF; accept any 1..4 line ends */
    for (count = 0; count < 4 && ensure(w, 1); count++) {
        unsigned char c = w->out[w->out_pos];
        if (c != '\r' && c != '\n')
            break;
        w->out_pos++;
    }
    if (count == 0) {
        if (w->out_pos < w->out_len)
            return rec_fail(w, err, SH_EFORMAT,
                            "the block (Content-Length %" PRIu64 ") is not followed by CRLF CRLF; "
                            "the Content-Length is probably wrong", cl);
        if (w->src_st && (!w->gz || w->src_off == w->rec.offset))
            return rec_fail(w, err, w->src_st, "%s", w->src_msg);
        add_warning(w, "the record has no CRLF CRLF trailer (the file ends right after its block)");
    }

    /* length in the file, and (gzip) the member's CRC check when it ends here */
    if (!w->gz) {
        w->rec.length = lpos_now(w) - lstart;
    } else if (aligned) {
        const struct memb *m;
        if (w->out_pos == w->out_len && w->in_member && w->member_off == w->rec.offset) {
            fill(w);
            if (w->src_st && w->src_off == w->rec.offset)
                return rec_fail(w, err, w->src_st, "%s", w->src_msg);
        }
        m = w->out_pos < w->out_len ? find_memb(w, lpos_now(w)) : NULL;
        if (!(m && m->raw == w->rec.offset) && !(w->in_member && w->member_off == w->rec.offset) &&
            w->have_ended && w->ended_off == w->rec.offset)
            w->rec.length = w->ended_end - w->rec.offset;
    }

    w->rec.payload = w->rec.block ? w->rec.block : empty;
    w->rec.payload_len = w->rec.block_len;
    if (!w->raw_http && !w->rec.skipped && w->rec.type && sh_header_eq(w->rec.type, "response") &&
        w->rec.content_type && sh_header_find(w->rec.content_type, "application/http") == w->rec.content_type)
        return read_http(w, err);
    return SH_OK;
}

sh_status sh_warc_next(sh_warc *w, const sh_warc_record **rec, sh_error *err)
{
    uint64_t skip_start, lstart;
    int aligned = 1;
    sh_status st;

    *rec = NULL;
    if (w->dead)
        return SH_OK;
    if (w->resync) {
        w->resync = 0;
        w->src_st = SH_OK;
        if (w->resync_raw)
            resync_gzip(w, w->resync_at);
        else
            resync_text(w, w->resync_at);
    }
    memset(&w->rec, 0, sizeof w->rec);
    w->warning[0] = '\0';

    skip_start = lpos_now(w);
    while (ensure(w, 1) && (w->out[w->out_pos] == '\r' || w->out[w->out_pos] == '\n'))
        w->out_pos++;
    if (w->out_pos == w->out_len) {
        if (!w->src_st)
            return SH_OK;   /* end of file */
        st = sh_error_set(err, w->src_st, (size_t)w->src_off, "%s: %s", w->name, w->src_msg);
        if (err && st == SH_EIO)
            err->sys_errno = w->src_errno;
        if (st == SH_EIO) {
            w->dead = 1;
        } else {
            w->resync = 1;
            w->resync_raw = 1;
            w->resync_at = w->src_off + 1;
        }
        return st;
    }
    lstart = lpos_now(w);
    if (w->gz) {
        const struct memb *m = find_memb(w, lstart);
        w->rec.offset = m ? m->raw : w->member_off;
        aligned = m && m->lpos >= skip_start;
    } else {
        w->rec.offset = lstart;
    }

    st = read_record(w, lstart, aligned, err);
    if (st == SH_OK) {
        *rec = &w->rec;
        return SH_OK;
    }
    if (err && st == SH_EIO)
        err->sys_errno = w->src_errno;
    if (st == SH_EIO || st == SH_ENOMEM) {
        w->dead = 1;
    } else if (w->gz && w->src_st) {
        w->resync = 1;
        w->resync_raw = 1;
        w->resync_at = w->src_off + 1;
    } else if (w->gz && aligned) {
        w->resync = 1;
        w->resync_raw = 1;
        w->resync_at = w->rec.offset + 1;
    } else {
        w->resync = 1;
        w->resync_raw = 0;
        w->resync_at = lstart + 1;
    }
    return st;
}

/* ---- opening and closing ---------------------------------------------------- */

static sh_status open_common(FILE *fp, int own, const char *name, const sh_warc_opts *opts,
                             sh_warc **out, sh_error *err)
{
    sh_warc *w;
    off_t pos;
    *out = NULL;
    w = calloc(1, sizeof *w);
    if (!w) {
        if (own)
            fclose(fp);
        return sh_error_set(err, SH_ENOMEM, 0, "%s: out of memory for a WARC reader",
                            name ? name : "(stream)");
    }
    w->fp = fp;
    w->own = own;
    snprintf(w->name, sizeof w->name, "%s", name ? name : "(stream)");
    w->max_record = opts && opts->max_record ? opts->max_record : SH_WARC_DEFAULT_MAX_RECORD;
    w->max_header = opts && opts->max_header ? opts->max_header : SH_WARC_DEFAULT_MAX_HEADER;
    w->raw_http = opts ? opts->raw_http : 0;
    pos = ftello(fp);
    if (pos >= 0) {
        w->raw_base = (uint64_t)pos;
        w->seekable = fseeko(fp, pos, SEEK_SET) == 0;
    }
    w->out_base = w->raw_base;
    if (inflateInit2(&w->z, 15 + 32) != Z_OK) {
        sh_warc_close(w);
        return sh_error_set(err, SH_ENOMEM, 0, "%s: cannot start the gzip decoder", name ? name : "(stream)");
    }
    w->z_ok = 1;
    raw_ensure(w, 2);
    if (w->src_st == SH_EIO) {
        sh_status st = sh_error_set(err, SH_EIO, (size_t)w->src_off, "%s: %s", w->name, w->src_msg);
        if (err)
            err->sys_errno = w->src_errno;
        sh_warc_close(w);
        return st;
    }
    w->gz = w->raw_len - w->raw_pos >= 2 && w->raw[w->raw_pos] == 0x1f && w->raw[w->raw_pos + 1] == 0x8b;
    if (w->gz)
        w->out_base = 0;   /* logical offsets of a gzip file are internal */
    *out = w;
    return SH_OK;
}

sh_status sh_warc_open(const char *path, const sh_warc_opts *opts, sh_warc **out, sh_error *err)
{
    FILE *fp = fopen(path, "rb");
    if (!fp) {
        int e = errno;
        sh_status st = sh_error_set(err, SH_EIO, 0, "%s: cannot open: %s", path, strerror(e));
        if (err)
            err->sys_errno = e;
        *out = NULL;
        return st;
    }
    return open_common(fp, 1, path, opts, out, err);
}

sh_status sh_warc_open_fd(int fd, const char *name, const sh_warc_opts *opts, sh_warc **out,
                          sh_error *err)
{
    int d = dup(fd);
    FILE *fp;
    if (d < 0 || !(fp = fdopen(d, "rb"))) {
        int e = errno;
        sh_status st;
        if (d >= 0)
            close(d);
        st = sh_error_set(err, SH_EIO, 0, "%s: cannot read descriptor %d: %s",
                          name ? name : "(fd)", fd, strerror(e));
        if (err)
            err->sys_errno = e;
        *out = NULL;
        return st;
    }
    return open_common(fp, 1, name ? name : "(fd)", opts, out, err);
}

sh_status sh_warc_open_stream(FILE *fp, const char *name, const sh_warc_opts *opts, sh_warc **out,
                              sh_error *err)
{
    return open_common(fp, 0, name, opts, out, err);
}

int sh_warc_is_gzip(const sh_warc *w) { return w->gz; }

void sh_warc_close(sh_warc *w)
{
    if (!w)
        return;
    if (w->own && w->fp)
        fclose(w->fp);
    if (w->z_ok)
        inflateEnd(&w->z);
    sh_http_free(w->http);
    free(w->hbuf);
    free(w->block);
    free(w->wf);
    free(w);
}
