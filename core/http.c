/* Message headers and HTTP responses: see http.h. */
#include "http.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#define ZLIB_CONST
#include <zlib.h>

#include "grow.h"

struct sh_http {
    size_t max_body;
    char *hh;    size_t hhcap;    /* a copy of the header lines, parsed in place */
    char *body;  size_t bodycap;  /* the de-chunked body */
    char *body2; size_t body2cap; /* the decoded body */
    sh_header_field *hf; size_t hfcap;
    z_stream hz;
    int hz_ok;
    char warning[512];
};

/* ---- header fields ------------------------------------------------------- */

int sh_header_eq(const char *a, const char *b)
{
    for (; *a && *b; a++, b++) {
        int x = (unsigned char)*a, y = (unsigned char)*b;
        if (x >= 'A' && x <= 'Z') x += 32;
        if (y >= 'A' && y <= 'Z') y += 32;
        if (x != y)
            return 0;
    }
    return *a == *b;
}

const char *sh_header_get(const sh_header_field *f, size_t n, const char *name)
{
    size_t i;
    for (i = 0; i < n; i++)
        if (sh_header_eq(f[i].name, name))
            return f[i].value;
    return NULL;
}

static int is_ws(char c) { return c == ' ' || c == '\t'; }

/* Folded lines (leading space or tab) continue the previous value. */
int sh_header_parse(char *buf, size_t start, size_t end, sh_header_field **fa, size_t *fcap, size_t *nf, int strict,
                    size_t *bad)
{
    size_t i = start, o = start, n = 0;
    size_t *pos = NULL;   /* pairs of (name offset, value offset), pointers made at the end */
    size_t k, poscap = 0;
    *bad = 0;
    while (i < end) {
        size_t e = i, le;
        while (e < end && buf[e] != '\n')
            e++;
        le = e;
        if (le > i && buf[le - 1] == '\r')
            le--;
        if (le == i)
            break;
        if (is_ws(buf[i])) {
            size_t a = i, b = le;
            while (a < b && is_ws(buf[a])) a++;
            while (b > a && is_ws(buf[b - 1])) b--;
            if (n > 0 && b > a) {
                buf[o - 1] = ' ';
                memmove(buf + o, buf + a, b - a);
                o += b - a;
                buf[o++] = '\0';
            }
        } else {
            char *colon = memchr(buf + i, ':', le - i);
            if (colon) {
                /* a field name is a token: not empty, no space or control
                 * byte (a NUL made a field without a name; fuzz_warc) */
                size_t c = (size_t)(colon - buf), q;
                int ok = c > i;
                for (q = i; ok && q < c; q++) ok = (unsigned char)buf[q] > 0x20 && buf[q] != 0x7F;
                if (!ok) colon = NULL;
            }
            if (!colon) {
                if (strict) {
                    free(pos);
                    *bad = i + 1;
                    *nf = 0;
                    return 1;
                }
            } else {
                size_t c = (size_t)(colon - buf), ne = c, a = c + 1, b = le, no;
                while (ne > i && is_ws(buf[ne - 1])) ne--;
                while (a < b && is_ws(buf[a])) a++;
                while (b > a && is_ws(buf[b - 1])) b--;
                if (2 * (n + 1) > poscap) {
                    size_t nc = poscap ? poscap * 2 : 64;
                    size_t *q = realloc(pos, nc * sizeof *q);
                    if (!q) {
                        free(pos);
                        return 0;
                    }
                    pos = q;
                    poscap = nc;
                }
                no = o;
                memmove(buf + o, buf + i, ne - i);
                o += ne - i;
                buf[o++] = '\0';
                pos[2 * n] = no;
                pos[2 * n + 1] = o;
                memmove(buf + o, buf + a, b - a);
                o += b - a;
                buf[o++] = '\0';
                n++;
            }
        }
        i = e < end ? e + 1 : end;
    }
    if (n > *fcap) {
        sh_header_field *q = realloc(*fa, n * sizeof *q);
        if (!q) {
            free(pos);
            return 0;
        }
        *fa = q;
        *fcap = n;
    }
    for (k = 0; k < n; k++) {
        (*fa)[k].name = buf + pos[2 * k];
        (*fa)[k].value = buf + pos[2 * k + 1];
    }
    *nf = n;
    free(pos);
    return 1;
}

/* ---- responses ------------------------------------------------------------ */

#define add_warning(w, ...) sh_msg_append((w)->warning, sizeof (w)->warning, __VA_ARGS__)

sh_status sh_http_new(sh_http **out, sh_error *err)
{
    *out = (sh_http *)calloc(1, sizeof **out);
    return *out ? SH_OK : sh_error_set(err, SH_ENOMEM, 0, "out of memory for an HTTP parser");
}

void sh_http_free(sh_http *h)
{
    if (!h) return;
    if (h->hz_ok) inflateEnd(&h->hz);
    free(h->hh);
    free(h->body);
    free(h->body2);
    free(h->hf);
    free(h);
}

const char *sh_header_find(const char *hay, const char *needle)
{
    size_t m = strlen(needle);
    for (; *hay; hay++) {
        size_t i;
        for (i = 0; i < m; i++) {
            int x = (unsigned char)hay[i], y = (unsigned char)needle[i];
            if (x >= 'A' && x <= 'Z') x += 32;
            if (x != y)
                break;
        }
        if (i == m)
            return hay;
    }
    return NULL;
}

static int hexval(int c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* De-chunk in[0..n) into w->body. Returns the decoded length, or (size_t)-1
 * when the first chunk-size line is not one (the body was stored de-chunked). */
static size_t dechunk(sh_http *w, const char *in, size_t n)
{
    size_t i = 0, o = 0;
    int first = 1;
    if (!sh_grow((void **)&w->body, &w->bodycap, n + 1, 1, 4096)) {
        add_warning(w, "out of memory de-chunking the body; kept as stored");
        return (size_t)-1;
    }
    for (;;) {
        uint64_t size = 0;
        size_t d = i;
        while (i < n && hexval((unsigned char)in[i]) >= 0) {
            if (size > (UINT64_MAX >> 4)) {
                add_warning(w, "chunk size at body byte %zu overflows", d);
                return o;
            }
            size = size * 16 + (uint64_t)hexval((unsigned char)in[i]);
            i++;
        }
        if (i == d) {
            if (first)
                return (size_t)-1;
            if (i < n)
                add_warning(w, "malformed chunk size at body byte %zu; body cut there", d);
            else
                add_warning(w, "chunked body is truncated (no last chunk)");
            return o;
        }
        while (i < n && in[i] != '\n')   /* chunk extensions */
            i++;
        if (i == n) {
            add_warning(w, "chunked body is truncated in a chunk-size line");
            return o;
        }
        i++;
        first = 0;
        if (size == 0)
            return o;   /* trailers, if any, are not part of the body */
        if (size > n - i) {
            memcpy(w->body + o, in + i, n - i);
            o += n - i;
            add_warning(w, "chunked body is truncated (a chunk of %" PRIu64 " bytes has %zu)",
                        size, n - i);
            return o;
        }
        memcpy(w->body + o, in + i, (size_t)size);
        o += (size_t)size;
        i += (size_t)size;
        if (i < n && in[i] == '\r')
            i++;
        if (i < n && in[i] == '\n')
            i++;
    }
}

/* Inflate in[0..n) into w->body2 (wbits as for inflateInit2). Concatenated
 * gzip members are all decoded. Returns 0 on success, else 1 with a warning
 * (w->body2 then holds what could be decoded, *outlen long). */
static int inflate_body(sh_http *w, const char *in, size_t n, int wbits, size_t *outlen,
                        const char *what)
{
    size_t o = 0, i = 0, limit = w->max_body;
    int ret;
    *outlen = 0;
    if (!w->hz_ok) {
        memset(&w->hz, 0, sizeof w->hz);
        if (inflateInit2(&w->hz, wbits) != Z_OK) {
            add_warning(w, "cannot start a %s decoder", what);
            return 1;
        }
        w->hz_ok = 1;
    } else if (inflateReset2(&w->hz, wbits) != Z_OK) {
        add_warning(w, "cannot reset the %s decoder", what);
        return 1;
    }
    if (limit > ((size_t)-1) / 4)
        limit = ((size_t)-1) / 4;
    for (;;) {
        size_t room, used, made;
        uInt in0, out0;
        if (o == limit) {
            add_warning(w, "decoded %s body exceeds max_record (%zu bytes); cut there", what, limit);
            *outlen = o;
            return 1;
        }
        if (o + 1 >= w->body2cap) {   /* keep one spare byte; o < limit here */
            size_t want = w->body2cap < 4096 ? 4096 : w->body2cap * 2;
            if (want < 2 * n && n < limit)
                want = 2 * n;
            if (want > limit + 1)
                want = limit + 1;
            if (!sh_grow((void **)&w->body2, &w->body2cap, want, 1, 4096)) {
                add_warning(w, "out of memory decoding the %s body", what);
                *outlen = o;
                return 1;
            }
        }
        room = w->body2cap - 1 - o;
        if (room > limit - o)
            room = limit - o;
        if (room > (1u << 30))
            room = 1u << 30;
        w->hz.next_in = (const Bytef *)(in + i);
        w->hz.avail_in = in0 = (uInt)((n - i) > (1u << 30) ? (1u << 30) : (n - i));
        w->hz.next_out = (Bytef *)(w->body2 + o);
        w->hz.avail_out = out0 = (uInt)room;
        ret = inflate(&w->hz, Z_NO_FLUSH);
        used = in0 - w->hz.avail_in;
        made = out0 - w->hz.avail_out;
        i += used;
        o += made;
        if (ret == Z_STREAM_END) {
            if (wbits > 15 && n - i >= 2 && (unsigned char)in[i] == 0x1f &&
                (unsigned char)in[i + 1] == 0x8b && inflateReset(&w->hz) == Z_OK)
                continue;   /* another gzip member */
            *outlen = o;
            return 0;
        }
        if (ret == Z_OK && (used || made))
            continue;
        if (ret == Z_BUF_ERROR && i == n)
            add_warning(w, "%s body is truncated after %zu decoded bytes", what, o);
        else
            add_warning(w, "%s body is corrupt after %zu decoded bytes (%s)", what, o,
                        w->hz.msg ? w->hz.msg : zError(ret));
        *outlen = o;
        return 1;
    }
}

/* Status line, headers and body of an application/http response block. */
sh_status sh_http_parse(sh_http *w, const char *b, size_t n, size_t max_body, sh_http_response *r, sh_error *err)
{
    const char *body;
    size_t hs = 0, eol, he, bs, blen, bad, i;
    int status;
    const char *te, *ce;
    static const char empty[] = "";

    memset(r, 0, sizeof *r);
    r->payload = empty;
    w->warning[0] = '\0';
    w->max_body = max_body;
    for (;;) {
        const char *nl;
        status = 0;
        if (n - hs < 12 || memcmp(b + hs, "HTTP/", 5) != 0) {
            add_warning(w, "the application/http block does not start with an HTTP status line");
            r->warning = w->warning;
            return SH_OK;
        }
        nl = memchr(b + hs, '\n', n - hs);
        eol = nl ? (size_t)(nl - b) : n;
        for (i = hs + 5; i < eol && b[i] != ' '; i++)
            ;
        while (i < eol && b[i] == ' ')
            i++;
        /* a status code is three digits, 100 to 999 ("044" is none; fuzz_http) */
        if (i + 3 > eol || (unsigned)(b[i] - '1') > 8 || (unsigned)(b[i + 1] - '0') > 9 ||
            (unsigned)(b[i + 2] - '0') > 9 || (i + 3 < eol && b[i + 3] != ' ' && b[i + 3] != '\r')) {
            add_warning(w, "malformed HTTP status line");
            r->warning = w->warning;
            return SH_OK;
        }
        status = (b[i] - '0') * 100 + (b[i + 1] - '0') * 10 + (b[i + 2] - '0');
        /* end of headers: a line that is empty or "\r" */
        he = bs = n;
        for (i = eol; i < n; i++) {
            if (b[i] != '\n')
                continue;
            if (i + 1 < n && b[i + 1] == '\n') {
                he = i + 1;
                bs = i + 2;
                break;
            }
            if (i + 2 < n && b[i + 1] == '\r' && b[i + 2] == '\n') {
                he = i + 1;
                bs = i + 3;
                break;
            }
        }
        /* interim 1xx responses precede the real one */
        if (status >= 100 && status < 200 && status != 101 && bs < n && n - bs >= 5 &&
            memcmp(b + bs, "HTTP/", 5) == 0) {
            hs = bs;
            continue;
        }
        break;
    }
    r->status = status;
    r->headers = b + hs;
    r->headers_len = he - hs;

    /* a copy of the header lines, parsed in place */
    if (!sh_grow((void **)&w->hh, &w->hhcap, he - hs + 2, 1, 4096))
        return sh_error_set(err, SH_ENOMEM, 0, "out of memory for HTTP headers");
    i = eol < he ? eol + 1 : he;
    memcpy(w->hh, b + i, he - i);
    w->hh[he - i] = '\0';
    if (!sh_header_parse(w->hh, 0, he - i, &w->hf, &w->hfcap, &r->nfields, 0, &bad))
        return sh_error_set(err, SH_ENOMEM, 0, "out of memory for HTTP headers");
    r->fields = w->hf;
    r->content_type = sh_header_get(w->hf, r->nfields, "Content-Type");

    body = b + bs;
    blen = n - bs;
    te = sh_header_get(w->hf, r->nfields, "Transfer-Encoding");
    if (te && sh_header_find(te, "chunked")) {
        size_t d = dechunk(w, body, blen);
        if (d != (size_t)-1) {
            body = w->body;
            blen = d;
        }
    }
    ce = sh_header_get(w->hf, r->nfields, "Content-Encoding");
    if (ce && *ce && !sh_header_eq(ce, "identity")) {
        size_t o = 0;
        int bad_enc = 0;
        if (sh_header_eq(ce, "gzip") || sh_header_eq(ce, "x-gzip")) {
            if (blen >= 2 && (unsigned char)body[0] == 0x1f && (unsigned char)body[1] == 0x8b) {
                inflate_body(w, body, blen, 15 + 32, &o, "gzip");
                body = w->body2;
                blen = o;
            }
            /* else the crawler stored it decoded: keep it */
        } else if (sh_header_eq(ce, "deflate")) {
            size_t save = strlen(w->warning);
            if (inflate_body(w, body, blen, 15, &o, "deflate") && o == 0) {
                w->warning[save] = '\0';   /* not zlib-wrapped: try raw deflate */
                inflate_body(w, body, blen, -15, &o, "deflate");
            }
            body = w->body2;
            blen = o;
        } else {
            bad_enc = 1;
        }
        if (bad_enc)
            add_warning(w, "Content-Encoding \"%s\" is not decoded; the payload is the encoded body", ce);
    }
    r->payload = blen ? body : empty;
    r->payload_len = blen;
    r->warning = w->warning[0] ? w->warning : NULL;
    return SH_OK;
}

