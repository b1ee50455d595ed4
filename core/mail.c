#include "mail.h"

#include <errno.h>
#include <iconv.h>
#include <stdlib.h>
#include <string.h>

/* ---- small helpers ------------------------------------------------------------ */

typedef struct buf {
    char *p;
    size_t len, cap;
} buf;

static int buf_reserve(buf *b, size_t more)
{
    size_t nc;
    char *p;
    if (b->cap - b->len >= more) return 1;
    nc = b->cap ? b->cap : 4096;
    while (nc - b->len < more) {
        if (nc > ((size_t)-1) / 2) return 0;
        nc *= 2;
    }
    p = (char *)realloc(b->p, nc);
    if (!p) return 0;
    b->p = p;
    b->cap = nc;
    return 1;
}

static int buf_add(buf *b, const void *s, size_t n)
{
    if (!buf_reserve(b, n + 1)) return 0;
    if (n) memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = '\0';
    return 1;
}

static int lower(int c) { return c >= 'A' && c <= 'Z' ? c + 32 : c; }

static int ieq(const char *a, size_t n, const char *lit)
{
    size_t i;
    for (i = 0; i < n; i++)
        if (lit[i] == '\0' || lower((unsigned char)a[i]) != lit[i]) return 0;
    return lit[n] == '\0';
}

static int is_wsp(int c) { return c == ' ' || c == '\t'; }

/* The end of the line starting at i (the index of its '\n', or n). */
static size_t line_end(const char *p, size_t i, size_t n)
{
    const char *nl = (const char *)memchr(p + i, '\n', n - i);
    return nl ? (size_t)(nl - p) : n;
}

/* Whether p[i..e) (a line without its "\n"; a "\r" before it allowed) is empty. */
static int blank_line(const char *p, size_t i, size_t e)
{
    return e == i || (e == i + 1 && p[i] == '\r');
}

/* The length of a header field name at p[i..e) followed by ':', or 0. */
static size_t field_name(const char *p, size_t i, size_t e)
{
    size_t j = i;
    while (j < e && (unsigned char)p[j] > 32 && (unsigned char)p[j] < 127 && p[j] != ':') j++;
    if (j == i || j >= e || p[j] != ':') return 0;
    return j - i;
}

/* ---- sniffing --------------------------------------------------------------------- */

static const char *const core_fields[] = { "from", "to", "subject", "date", "message-id", "received",
                                           "return-path", "mime-version", "delivered-to", NULL };

/* Header lines from i: 1 if p[i..n) starts with a header block of at least
 * two fields, two of them distinct core fields, that ends with an empty line
 * or runs to the end of the window (then at least four fields). */
static int header_block(const char *p, size_t i, size_t n)
{
    int fields = 0, core = 0;
    unsigned seen = 0;
    while (i < n) {
        size_t e = line_end(p, i, n), k;
        if (blank_line(p, i, e)) return fields >= 2 && core >= 2;
        if (is_wsp((unsigned char)p[i])) {
            if (fields == 0) return 0; /* a continuation with nothing to continue */
        } else {
            size_t nl = field_name(p, i, e);
            if (!nl) return 0;
            fields++;
            for (k = 0; core_fields[k]; k++) {
                if (!(seen & (1u << k)) && ieq(p + i, nl, core_fields[k])) {
                    seen |= 1u << k;
                    core++;
                }
            }
        }
        if (e == n) break;
        i = e + 1;
    }
    return fields >= 4 && core >= 2;
}

sh_mail_kind sh_mail_sniff(const char *p, size_t n)
{
    if (n > 65536) n = 65536;
    if (n >= 5 && memcmp(p, "From ", 5) == 0) {
        size_t e = line_end(p, 0, n);
        if (e < n && header_block(p, e + 1, n)) return SH_MAIL_MBOX;
        return SH_MAIL_NONE;
    }
    return header_block(p, 0, n) ? SH_MAIL_MESSAGE : SH_MAIL_NONE;
}

/* ---- the context ------------------------------------------------------------------- */

struct sh_mail {
    buf out;                /* the rendering */
    buf dec;                /* a part's decoded bytes */
    buf conv;               /* ... converted to UTF-8 */
    buf hdr;                /* an unfolded header value */
    buf subject, message_id, date;
    char cs_name[64];       /* the charset the cached descriptor converts from */
    iconv_t cd;
    size_t max_out;
    int parts, left_out, html_parts, over;
    const char *warning;
    char warn[160];
};

sh_status sh_mail_new(sh_mail **out, sh_error *err)
{
    sh_mail *m = (sh_mail *)calloc(1, sizeof *m);
    *out = NULL;
    if (!m) return sh_error_set(err, SH_ENOMEM, 0, "out of memory for a mail parser");
    m->cd = (iconv_t)-1;
    *out = m;
    return SH_OK;
}

void sh_mail_free(sh_mail *m)
{
    if (!m) return;
    if (m->cd != (iconv_t)-1) iconv_close(m->cd);
    free(m->out.p);
    free(m->dec.p);
    free(m->conv.p);
    free(m->hdr.p);
    free(m->subject.p);
    free(m->message_id.p);
    free(m->date.p);
    free(m);
}

static void warn(sh_mail *m, const char *what, const char *detail, size_t dn)
{
    /* renderable() walks parts without a parser (m NULL): nothing to report
     * (a nested multipart without its closing delimiter; found by fuzz_mail) */
    if (!m || m->warning) return;
    snprintf(m->warn, sizeof m->warn, "%s%.*s", what, (int)(dn > 60 ? 60 : dn), detail ? detail : "");
    m->warning = m->warn;
}

/* ---- headers ------------------------------------------------------------------------- */

typedef struct part {
    const char *p;          /* the whole part: header block and body */
    size_t n;
    size_t body;            /* offset of the body in p */
    /* values found in the header block (pointers into p, folded) */
    const char *ctype, *cte, *cdisp, *subject, *msgid, *date;
    size_t ctype_n, cte_n, cdisp_n, subject_n, msgid_n, date_n;
} part;

/* Find the header block of p[0..n) and the fields we use. A part that does
 * not start with a field is all body (a part may have no headers at all). */
static void parse_headers(part *h, const char *p, size_t n)
{
    size_t i = 0;
    const char **slot = NULL;
    size_t *slot_n = NULL;
    memset(h, 0, sizeof *h);
    h->p = p;
    h->n = n;
    if (n >= 5 && memcmp(p, "From ", 5) == 0) { /* an mbox separator left in an .eml file */
        size_t e = line_end(p, 0, n);
        i = e < n ? e + 1 : n;
    }
    while (i < n) {
        size_t e = line_end(p, i, n), nl;
        if (blank_line(p, i, e)) { h->body = e < n ? e + 1 : n; return; }
        if (is_wsp((unsigned char)p[i])) {
            if (slot) *slot_n = (e < n ? e : n) - (size_t)(*slot - p); /* extend the folded value */
        } else if ((nl = field_name(p, i, e)) != 0) {
            const char *v = p + i + nl + 1;
            slot = NULL;
            if (ieq(p + i, nl, "content-type")) { slot = &h->ctype; slot_n = &h->ctype_n; }
            else if (ieq(p + i, nl, "content-transfer-encoding")) { slot = &h->cte; slot_n = &h->cte_n; }
            else if (ieq(p + i, nl, "content-disposition")) { slot = &h->cdisp; slot_n = &h->cdisp_n; }
            else if (ieq(p + i, nl, "subject")) { slot = &h->subject; slot_n = &h->subject_n; }
            else if (ieq(p + i, nl, "message-id")) { slot = &h->msgid; slot_n = &h->msgid_n; }
            else if (ieq(p + i, nl, "date")) { slot = &h->date; slot_n = &h->date_n; }
            if (slot) {
                if (*slot) slot = NULL; /* the first occurrence counts */
                else { *slot = v; *slot_n = (size_t)((p + e) - v); }
            }
        } else {
            /* not a header line: the part has no header block (or it is broken);
             * what we have read so far is taken as headers only if we found a field */
            if (i == 0) { h->body = 0; return; }
            h->body = i;
            return;
        }
        if (e == n) break;
        i = e + 1;
    }
    h->body = n; /* headers to the end: no body */
}

/* v[0..n) unfolded (line breaks and the whitespace after them become one
 * space), trimmed, into b. */
static int unfold(buf *b, const char *v, size_t n)
{
    size_t i = 0;
    b->len = 0;
    if (!buf_reserve(b, n + 1)) return 0;
    while (i < n && (is_wsp((unsigned char)v[i]) || v[i] == '\r' || v[i] == '\n')) i++;
    for (; i < n; i++) {
        char c = v[i];
        if (c == '\r' || c == '\n') {
            while (i + 1 < n && (v[i + 1] == '\r' || v[i + 1] == '\n' || is_wsp((unsigned char)v[i + 1]))) i++;
            c = ' ';
        }
        b->p[b->len++] = c;
    }
    while (b->len > 0 && is_wsp((unsigned char)b->p[b->len - 1])) b->len--;
    b->p[b->len] = '\0';
    return 1;
}

/* The media type of a Content-Type value: type and subtype, lowercase, into t. */
static void media_type(const char *v, size_t n, char *t, size_t tcap)
{
    size_t i = 0, k = 0;
    while (i < n && (is_wsp((unsigned char)v[i]) || v[i] == '\r' || v[i] == '\n')) i++;
    while (i < n && v[i] != ';' && !is_wsp((unsigned char)v[i]) && v[i] != '\r' && v[i] != '\n' && k + 1 < tcap)
        t[k++] = (char)lower((unsigned char)v[i++]);
    t[k] = '\0';
}

/* A parameter of a structured header value (Content-Type, Content-Disposition):
 * name=value or name="quoted \"value\"", into out (NUL-terminated); 0 if absent. */
static int param(const char *v, size_t n, const char *name, char *out, size_t cap)
{
    size_t i = 0, nl = strlen(name);
    int inq = 0;
    while (i < n) {
        /* find the next ';' outside quotes */
        if (v[i] == '"') inq = !inq;
        if (v[i] == ';' && !inq) {
            size_t j = i + 1;
            while (j < n && (is_wsp((unsigned char)v[j]) || v[j] == '\r' || v[j] == '\n')) j++;
            if (j + nl <= n) {
                size_t a;
                int match = 1;
                for (a = 0; a < nl; a++)
                    if (lower((unsigned char)v[j + a]) != name[a]) { match = 0; break; }
                if (match) {
                    size_t k = j + nl, o = 0;
                    while (k < n && is_wsp((unsigned char)v[k])) k++;
                    if (k < n && v[k] == '=') {
                        k++;
                        while (k < n && is_wsp((unsigned char)v[k])) k++;
                        if (k < n && v[k] == '"') {
                            k++;
                            while (k < n && v[k] != '"') {
                                if (v[k] == '\\' && k + 1 < n) k++;
                                if (v[k] != '\r' && v[k] != '\n' && o + 1 < cap) out[o++] = v[k];
                                k++;
                            }
                        } else {
                            while (k < n && v[k] != ';' && !is_wsp((unsigned char)v[k]) && v[k] != '\r' && v[k] != '\n') {
                                if (o + 1 < cap) out[o++] = v[k];
                                k++;
                            }
                        }
                        out[o] = '\0';
                        return 1;
                    }
                }
            }
        }
        i++;
    }
    return 0;
}

/* ---- transfer encodings ---------------------------------------------------------------- */

static int hexv(int c)
{
    if (c >= '0' && c <= '9') return c - '0';
    c = lower(c);
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
}

/* Quoted-printable (RFC 2045 6.7): "=XX" is a byte, "=" at the end of a line
 * (trailing whitespace allowed) a soft line break; a "=" that is neither is
 * kept as it is. */
static int qp_decode(buf *b, const char *s, size_t n)
{
    size_t i = 0;
    b->len = 0;
    if (!buf_reserve(b, n + 1)) return 0;
    while (i < n) {
        char c = s[i];
        if (c == '=') {
            size_t j = i + 1;
            int h1, h2;
            while (j < n && is_wsp((unsigned char)s[j])) j++;
            if (j < n && s[j] == '\r') j++;
            if (j == n || s[j] == '\n') { i = j < n ? j + 1 : n; continue; } /* soft line break */
            if (i + 2 < n && (h1 = hexv((unsigned char)s[i + 1])) >= 0 && (h2 = hexv((unsigned char)s[i + 2])) >= 0) {
                b->p[b->len++] = (char)(h1 * 16 + h2);
                i += 3;
                continue;
            }
        }
        b->p[b->len++] = c;
        i++;
    }
    b->p[b->len] = '\0';
    return 1;
}

static int b64v(int c)
{
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+' || c == '-') return 62;  /* '-' and '_': the URL-safe alphabet, seen in the wild */
    if (c == '/' || c == '_') return 63;
    return -1;
}

/* Base64 (RFC 2045 6.8): characters outside the alphabet (line breaks) are
 * ignored; decoding stops at the first '='. */
static int b64_decode(buf *b, const char *s, size_t n)
{
    size_t i;
    unsigned acc = 0;
    int bits = 0;
    b->len = 0;
    if (!buf_reserve(b, n / 4 * 3 + 4)) return 0;
    for (i = 0; i < n; i++) {
        int v;
        if (s[i] == '=') break;
        v = b64v((unsigned char)s[i]);
        if (v < 0) continue;
        acc = (acc << 6) | (unsigned)v;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            b->p[b->len++] = (char)((acc >> bits) & 0xff);
        }
    }
    b->p[b->len] = '\0';
    return 1;
}

/* ---- charsets ------------------------------------------------------------------------------ */

static const char repl[] = "\xef\xbf\xbd"; /* U+FFFD */

/* The iconv name for a MIME charset, or NULL when the bytes are taken as
 * they are (UTF-8, US-ASCII, none). Latin-1 and ASCII labels are read as
 * windows-1252, a superset every mail client applies (the WHATWG Encoding
 * standard does the same). */
static const char *iconv_name(const char *cs)
{
    static const char *const same[] = { "", "utf-8", "utf8", "us-ascii", "ascii", "unknown-8bit", "x-unknown", NULL };
    static const char *const w1252[] = { "iso-8859-1", "iso8859-1", "iso_8859-1", "latin1", "latin-1", "l1",
                                         "windows-1252", "cp1252", "x-cp1252", "iso-8859-1:1987", NULL };
    int k;
    for (k = 0; same[k]; k++) if (strcmp(cs, same[k]) == 0) return NULL;
    for (k = 0; w1252[k]; k++) if (strcmp(cs, w1252[k]) == 0) return "WINDOWS-1252";
    return cs;
}

/* Convert s[0..n) from charset cs (lowercase) to UTF-8 into m->conv. 0 only
 * for lack of memory; an unknown charset copies the bytes and warns. */
static int to_utf8(sh_mail *m, const char *cs, const char *s, size_t n, buf *out)
{
    const char *name = iconv_name(cs);
    char *in;
    size_t inleft;
    out->len = 0;
    if (!name) return buf_add(out, s, n);
    if (m->cd == (iconv_t)-1 || strcmp(m->cs_name, name) != 0) {
        if (m->cd != (iconv_t)-1) iconv_close(m->cd);
        m->cd = iconv_open("UTF-8", name);
        m->cs_name[0] = '\0';
        if (m->cd == (iconv_t)-1) {
            warn(m, "unknown charset ", cs, strlen(cs));
            return buf_add(out, s, n);
        }
        snprintf(m->cs_name, sizeof m->cs_name, "%s", name);
    } else {
        iconv(m->cd, NULL, NULL, NULL, NULL); /* back to the initial state */
    }
    in = (char *)(size_t)s; /* iconv's API is not const */
    inleft = n;
    if (!buf_reserve(out, n * 2 + 16)) return 0;
    while (inleft > 0) {
        char *o = out->p + out->len;
        size_t oleft = out->cap - out->len - 1, r;
        r = iconv(m->cd, &in, &inleft, &o, &oleft);
        out->len = (size_t)(o - out->p);
        if (r != (size_t)-1) break;
        if (errno == E2BIG) {
            if (!buf_reserve(out, inleft * 4 + 64)) return 0;
        } else if (errno == EILSEQ || errno == EINVAL) {
            /* a byte that does not convert (or a sequence cut at the end) */
            if (!buf_reserve(out, 4 + inleft * 2)) return 0;
            memcpy(out->p + out->len, repl, 3);
            out->len += 3;
            in++;
            inleft--;
            iconv(m->cd, NULL, NULL, NULL, NULL);
        } else {
            break;
        }
    }
    if (!buf_reserve(out, 1)) return 0;
    out->p[out->len] = '\0';
    return 1;
}

/* ---- output ---------------------------------------------------------------------------------- */

static int emit(sh_mail *m, const char *s, size_t n)
{
    if (m->max_out && m->out.len + n > m->max_out) { m->over = 1; return 0; }
    return buf_add(&m->out, s, n);
}

/* Plain text, escaped for the HTML canonicalizer; NUL bytes become spaces. */
static int emit_text(sh_mail *m, const char *s, size_t n)
{
    size_t i, start = 0;
    for (i = 0; i < n; i++) {
        const char *rep = NULL;
        switch (s[i]) {
        case '&': rep = "&amp;"; break;
        case '<': rep = "&lt;"; break;
        case '>': rep = "&gt;"; break;
        case '\0': rep = " "; break;
        default: continue;
        }
        if (!emit(m, s + start, i - start) || !emit(m, rep, strlen(rep))) return 0;
        start = i + 1;
    }
    return emit(m, s + start, n - start);
}

/* ---- RFC 2047 encoded words ---------------------------------------------------------------- */

/* Decode a header value: encoded words =?charset?Q|B?text?= become UTF-8,
 * whitespace between two encoded words is dropped, other bytes stay. */
static int decode_words(sh_mail *m, const char *v, size_t n, buf *out)
{
    size_t i = 0, lit = 0;
    int prev_word = 0;
    buf raw = { 0 }, conv = { 0 };
    out->len = 0;
    if (!buf_add(out, "", 0)) return 0;
    while (i < n) {
        if (v[i] == '=' && i + 1 < n && v[i + 1] == '?') {
            /* =?charset?enc?text?= */
            size_t c0 = i + 2, c1, e1, t1;
            const char *q1 = (const char *)memchr(v + c0, '?', n - c0);
            if (q1) {
                c1 = (size_t)(q1 - v);
                if (c1 + 2 < n && v[c1 + 2] == '?') {
                    const char *end;
                    e1 = c1 + 1;
                    end = NULL;
                    {
                        size_t k;
                        for (k = e1 + 2; k + 1 < n; k++)
                            if (v[k] == '?' && v[k + 1] == '=') { end = v + k; break; }
                    }
                    if (end) {
                        char cs[64];
                        size_t k, cl = c1 - c0, o = 0;
                        int enc = lower((unsigned char)v[e1]);
                        t1 = (size_t)(end - v);
                        /* charset, without an RFC 2231 language (*en) */
                        for (k = 0; k < cl && o + 1 < sizeof cs && v[c0 + k] != '*'; k++) cs[o++] = (char)lower((unsigned char)v[c0 + k]);
                        cs[o] = '\0';
                        if (enc == 'q' || enc == 'b') {
                            /* whitespace between two encoded words is not text */
                            if (!(prev_word && lit < i)) {
                                if (!buf_add(out, v + lit, i - lit)) goto oom;
                            } else {
                                size_t k2;
                                int all_ws = 1;
                                for (k2 = lit; k2 < i; k2++)
                                    if (!is_wsp((unsigned char)v[k2]) && v[k2] != '\r' && v[k2] != '\n') all_ws = 0;
                                if (!all_ws && !buf_add(out, v + lit, i - lit)) goto oom;
                            }
                            raw.len = 0;
                            if (enc == 'b') {
                                if (!b64_decode(&raw, v + e1 + 2, t1 - (e1 + 2))) goto oom;
                            } else {
                                size_t k3;
                                if (!buf_reserve(&raw, t1 - e1 + 1)) goto oom;
                                for (k3 = e1 + 2; k3 < t1; k3++) {
                                    int h1, h2;
                                    if (v[k3] == '_') raw.p[raw.len++] = ' ';
                                    else if (v[k3] == '=' && k3 + 2 < t1 && (h1 = hexv((unsigned char)v[k3 + 1])) >= 0 &&
                                             (h2 = hexv((unsigned char)v[k3 + 2])) >= 0) {
                                        raw.p[raw.len++] = (char)(h1 * 16 + h2);
                                        k3 += 2;
                                    } else raw.p[raw.len++] = v[k3];
                                }
                            }
                            if (!to_utf8(m, cs, raw.p ? raw.p : "", raw.len, &conv)) goto oom;
                            if (!buf_add(out, conv.p, conv.len)) goto oom;
                            i = t1 + 2;
                            lit = i;
                            prev_word = 1;
                            continue;
                        }
                    }
                }
            }
        }
        if (!is_wsp((unsigned char)v[i]) && v[i] != '\r' && v[i] != '\n') prev_word = 0;
        i++;
    }
    if (!buf_add(out, v + lit, n - lit)) goto oom;
    free(raw.p);
    free(conv.p);
    return 1;
oom:
    free(raw.p);
    free(conv.p);
    return 0;
}

/* ---- MIME ---------------------------------------------------------------------------------------- */

typedef enum { R_SKIP, R_TEXT, R_HTML, R_MULTI, R_MESSAGE } rkind;

static rkind kind_of(const part *h, char *type, size_t tcap)
{
    if (h->ctype) media_type(h->ctype, h->ctype_n, type, tcap);
    else snprintf(type, tcap, "text/plain");
    if (h->cdisp) {
        char d[32];
        media_type(h->cdisp, h->cdisp_n, d, sizeof d);
        if (strcmp(d, "attachment") == 0) return R_SKIP;
    }
    if (strncmp(type, "multipart/", 10) == 0) return R_MULTI;
    if (strcmp(type, "message/rfc822") == 0 || strcmp(type, "message/global") == 0) return R_MESSAGE;
    if (strcmp(type, "text/html") == 0 || strcmp(type, "application/xhtml+xml") == 0) return R_HTML;
    if (strncmp(type, "text/", 5) == 0 && strcmp(type, "text/calendar") != 0 && strcmp(type, "text/x-vcard") != 0 &&
        strcmp(type, "text/vcard") != 0 && strcmp(type, "text/rfc822-headers") != 0)
        return R_TEXT;
    if (type[0] == '\0') return R_TEXT; /* an empty or broken Content-Type: text/plain (RFC 2045 5.2) */
    return R_SKIP;
}

/* The parts of a multipart body b[0..n) with the given boundary: calls
 * fn(ctx, part bytes, len) for each; returns the number of parts, -1 on a
 * failure of fn. A missing close delimiter ends the last part at n. */
typedef int (*part_fn)(void *ctx, const char *p, size_t n);

static int each_part(sh_mail *m, const char *b, size_t n, const char *boundary, part_fn fn, void *ctx)
{
    size_t bl = strlen(boundary), i = 0, start = 0;
    int in_part = 0, count = 0;
    if (bl == 0) return 0;
    while (i < n) {
        size_t e = line_end(b, i, n);
        if (e - i >= bl + 2 && b[i] == '-' && b[i + 1] == '-' && memcmp(b + i + 2, boundary, bl) == 0) {
            size_t k = i + 2 + bl;
            int close = k + 1 < e + 1 && k + 1 <= e && e - k >= 2 && b[k] == '-' && b[k + 1] == '-';
            size_t j = close ? k + 2 : k;
            int ok = 1;
            while (j < e) { if (!is_wsp((unsigned char)b[j]) && b[j] != '\r') { ok = 0; break; } j++; }
            if (ok) {
                if (in_part) {
                    /* the line break before the delimiter belongs to it */
                    size_t pe = i;
                    if (pe > start && b[pe - 1] == '\n') pe--;
                    if (pe > start && b[pe - 1] == '\r') pe--;
                    if (++count > SH_MAIL_MAX_PARTS) return count;
                    if (fn(ctx, b + start, pe - start) < 0) return -1;
                }
                if (close) return count;
                in_part = 1;
                start = e < n ? e + 1 : n;
            }
        }
        if (e == n) break;
        i = e + 1;
    }
    if (in_part && start < n) {
        warn(m, "a multipart body without its closing delimiter", NULL, 0);
        count++;
        if (fn(ctx, b + start, n - start) < 0) return -1;
    }
    return count;
}

static int render_part(sh_mail *m, const char *p, size_t n, int depth, int top);

/* Whether a part would render anything (for choosing among alternatives). */
static int renderable(const char *p, size_t n, int depth);

typedef struct multi_ctx {
    sh_mail *m;
    int depth;
    int alternative;
    const char *best; /* alternative: the last renderable part */
    size_t best_n;
    int seen;
} multi_ctx;

static int on_part(void *c, const char *p, size_t n)
{
    multi_ctx *x = (multi_ctx *)c;
    x->seen++;
    if (x->alternative) {
        if (renderable(p, n, x->depth + 1)) {
            if (x->best) x->m->left_out++;
            x->best = p;
            x->best_n = n;
        } else {
            x->m->left_out++;
        }
        return 0;
    }
    return render_part(x->m, p, n, x->depth + 1, 0) ? 0 : -1;
}

static int on_part_check(void *c, const char *p, size_t n)
{
    multi_ctx *x = (multi_ctx *)c;
    if (!x->seen && renderable(p, n, x->depth + 1)) x->seen = 1;
    return 0;
}

static int renderable(const char *p, size_t n, int depth)
{
    part h;
    char type[128], boundary[256];
    rkind k;
    if (depth > SH_MAIL_MAX_DEPTH) return 0;
    parse_headers(&h, p, n);
    k = kind_of(&h, type, sizeof type);
    if (k == R_TEXT || k == R_HTML || k == R_MESSAGE) return 1;
    if (k == R_MULTI && h.ctype && param(h.ctype, h.ctype_n, "boundary", boundary, sizeof boundary)) {
        multi_ctx x;
        memset(&x, 0, sizeof x);
        x.depth = depth;
        each_part(NULL, p + h.body, n - h.body, boundary, on_part_check, &x);
        return x.seen;
    }
    return 0;
}

/* Decode a leaf part's body into m->dec (by its transfer encoding), then to
 * UTF-8 into m->conv; the result is m->conv. */
static int decode_body(sh_mail *m, const part *h)
{
    char cte[32] = "", cs[64] = "";
    const char *b = h->p + h->body;
    size_t bn = h->n - h->body;
    if (h->cte) media_type(h->cte, h->cte_n, cte, sizeof cte);
    if (h->ctype && param(h->ctype, h->ctype_n, "charset", cs, sizeof cs)) {
        size_t k;
        for (k = 0; cs[k]; k++) cs[k] = (char)lower((unsigned char)cs[k]);
    }
    if (strcmp(cte, "quoted-printable") == 0) {
        if (!qp_decode(&m->dec, b, bn)) return 0;
    } else if (strcmp(cte, "base64") == 0) {
        if (!b64_decode(&m->dec, b, bn)) return 0;
    } else {
        m->dec.len = 0;
        if (!buf_add(&m->dec, b, bn)) return 0;
    }
    return to_utf8(m, cs, m->dec.p ? m->dec.p : "", m->dec.len, &m->conv);
}

static int render_headers(sh_mail *m, const part *h, int top)
{
    /* Subject is text; the rest of the header block is set aside */
    if (h->subject) {
        if (!unfold(&m->hdr, h->subject, h->subject_n)) return 0;
        if (top) {
            if (!decode_words(m, m->hdr.p, m->hdr.len, &m->subject)) return 0;
            if (!emit_text(m, m->subject.p, m->subject.len) || !emit(m, "\n<p>\n", 5)) return 0;
        } else {
            buf s = { 0 };
            int ok = decode_words(m, m->hdr.p, m->hdr.len, &s) && emit_text(m, s.p, s.len) && emit(m, "\n<p>\n", 5);
            free(s.p);
            if (!ok) return 0;
        }
    }
    if (top) {
        if (h->msgid) { if (!unfold(&m->message_id, h->msgid, h->msgid_n)) return 0; }
        if (h->date) { if (!unfold(&m->date, h->date, h->date_n)) return 0; }
    }
    return 1;
}

/* Render one part (a whole message when top); 0 on failure (memory, or the
 * output limit: m->over). */
static int render_part(sh_mail *m, const char *p, size_t n, int depth, int top)
{
    part h;
    char type[128], boundary[256];
    rkind k;
    if (depth > SH_MAIL_MAX_DEPTH) {
        warn(m, "MIME parts nested too deep; the innermost left out", NULL, 0);
        m->left_out++;
        return 1;
    }
    parse_headers(&h, p, n);
    if (top && !render_headers(m, &h, 1)) return 0;
    k = kind_of(&h, type, sizeof type);
    switch (k) {
    case R_SKIP:
        m->left_out++;
        return 1;
    case R_TEXT:
    case R_HTML:
        if (!decode_body(m, &h)) return 0;
        if (k == R_HTML) {
            m->html_parts++;
            if (!emit(m, m->conv.p ? m->conv.p : "", m->conv.len)) return 0;
        } else if (!emit_text(m, m->conv.p ? m->conv.p : "", m->conv.len)) {
            return 0;
        }
        m->parts++;
        return emit(m, "\n<p>\n", 5);
    case R_MESSAGE: {
        char cte[32] = "";
        if (h.cte) media_type(h.cte, h.cte_n, cte, sizeof cte);
        if (strcmp(cte, "base64") == 0 || strcmp(cte, "quoted-printable") == 0) {
            /* rare: an encoded enclosed message, decoded into a buffer of its own */
            buf d = { 0 };
            part inner;
            int ok = strcmp(cte, "base64") == 0 ? b64_decode(&d, p + h.body, n - h.body) : qp_decode(&d, p + h.body, n - h.body);
            if (ok) {
                parse_headers(&inner, d.p, d.len);
                ok = render_headers(m, &inner, 0) && render_part(m, d.p, d.len, depth + 1, 0);
            }
            free(d.p);
            return ok;
        } else {
            part inner;
            parse_headers(&inner, p + h.body, n - h.body);
            if (!render_headers(m, &inner, 0)) return 0;
            return render_part(m, p + h.body, n - h.body, depth + 1, 0);
        }
    }
    case R_MULTI: {
        multi_ctx x;
        int r;
        if (!h.ctype || !param(h.ctype, h.ctype_n, "boundary", boundary, sizeof boundary) || boundary[0] == '\0') {
            /* no boundary: nothing can be split; read the body as text */
            warn(m, "a multipart part without a boundary", NULL, 0);
            if (!decode_body(m, &h) || !emit_text(m, m->conv.p ? m->conv.p : "", m->conv.len)) return 0;
            m->parts++;
            return emit(m, "\n<p>\n", 5);
        }
        memset(&x, 0, sizeof x);
        x.m = m;
        x.depth = depth;
        x.alternative = strcmp(type, "multipart/alternative") == 0;
        r = each_part(m, p + h.body, n - h.body, boundary, on_part, &x);
        if (r < 0) return 0;
        if (r > SH_MAIL_MAX_PARTS) warn(m, "more parts than the limit; the rest left out", NULL, 0);
        if (x.alternative && x.best) return render_part(m, x.best, x.best_n, depth + 1, 0);
        if (r == 0) {
            /* the boundary never occurs: a broken message; its body is its text */
            warn(m, "a multipart body in which the boundary never occurs", NULL, 0);
            if (!emit_text(m, p + h.body, n - h.body)) return 0;
            m->parts++;
            return emit(m, "\n<p>\n", 5);
        }
        return 1;
    }
    }
    return 1;
}

sh_status sh_mail_render(sh_mail *m, const char *in, size_t n, size_t max_out, sh_mail_result *res, sh_error *err)
{
    int ok;
    memset(res, 0, sizeof *res);
    m->out.len = 0;
    m->subject.len = m->message_id.len = m->date.len = 0;
    if (!buf_add(&m->out, "", 0) || !buf_add(&m->subject, "", 0) || !buf_add(&m->message_id, "", 0) ||
        !buf_add(&m->date, "", 0))
        return sh_error_set(err, SH_ENOMEM, 0, "out of memory parsing a message");
    m->max_out = max_out;
    m->parts = m->left_out = m->html_parts = m->over = 0;
    m->warning = NULL;
    ok = render_part(m, in, n, 0, 1);
    if (!ok) {
        if (m->over)
            return sh_error_set(err, SH_ELIMIT, 0, "the message renders to more than the limit of %zu bytes", max_out);
        return sh_error_set(err, SH_ENOMEM, 0, "out of memory parsing a message");
    }
    res->text = m->out.p;
    res->len = m->out.len;
    res->subject = m->subject.p;
    res->message_id = m->message_id.p;
    res->date = m->date.p;
    res->parts = m->parts;
    res->left_out = m->left_out;
    res->html_parts = m->html_parts;
    res->warning = m->warning;
    return SH_OK;
}

/* ---- mbox ------------------------------------------------------------------------------------------ */

struct sh_mbox {
    sh_zstream *zs;
    size_t max;
    buf msg;            /* the message being read */
    buf from;           /* its separator line (without "From ") */
    buf pending;        /* the separator of the next message, once read */
    int have_pending, in_msg, over, at_end;
    uint64_t number;
};

sh_status sh_mbox_open(sh_zstream *zs, size_t max_message, sh_mbox **out, sh_error *err)
{
    sh_mbox *mb = (sh_mbox *)calloc(1, sizeof *mb);
    *out = NULL;
    if (!mb) return sh_error_set(err, SH_ENOMEM, 0, "out of memory for an mbox reader");
    mb->zs = zs;
    mb->max = max_message;
    *out = mb;
    return SH_OK;
}

void sh_mbox_close(sh_mbox *mb)
{
    if (!mb) return;
    free(mb->msg.p);
    free(mb->from.p);
    free(mb->pending.p);
    free(mb);
}

/* Whether a line is an mbox separator: "From ", a sender (no spaces), and a
 * date with a time (hh:mm) or a year after it, as every writer puts there
 * ("From alice@example.org Mon Jan  1 10:00:00 2024"). A body line "From
 * the start of ..." that a writer failed to escape is not one. */
static int digit(char c) { return c >= '0' && c <= '9'; }

static int is_separator(const char *l, size_t n)
{
    size_t i = 5, k;
    if (n < 5 || memcmp(l, "From ", 5) != 0) return 0;
    while (i < n && l[i] == ' ') i++;
    k = i;
    while (i < n && l[i] != ' ' && l[i] != '\t') i++;
    if (i == k) return 0;
    for (; i < n; i++) {
        if (i + 5 <= n && digit(l[i]) && digit(l[i + 1]) && l[i + 2] == ':' && digit(l[i + 3]) && digit(l[i + 4]))
            return 1; /* a time */
        if (i + 4 <= n && l[i - 1] == ' ' && (l[i] == '1' || l[i] == '2') && digit(l[i + 1]) && digit(l[i + 2]) &&
            digit(l[i + 3]) && (i + 4 == n || l[i + 4] == ' ' || l[i + 4] == '\r'))
            return 1; /* a year */
    }
    return 0;
}

static int set_from(buf *b, const char *l, size_t n)
{
    if (n > 0 && l[n - 1] == '\r') n--;
    b->len = 0;
    return buf_add(b, l + 5, n - 5);
}

static void start_message(sh_mbox *mb)
{
    mb->msg.len = 0;
    mb->over = 0;
    mb->in_msg = 1;
    mb->number++;
}

/* The message read: SH_OK with it, or SH_ELIMIT when it was too large. */
static sh_status finish_message(sh_mbox *mb, const char **msg, size_t *len, const char **from_line, uint64_t *number,
                                sh_error *err)
{
    mb->in_msg = 0;
    if (mb->over)
        return sh_error_set(err, SH_ELIMIT, 0, "message %llu of the mbox is larger than the limit of %zu bytes; skipped "
                            "(raise --max-bytes to read it)", (unsigned long long)mb->number, mb->max);
    /* the empty line before a separator belongs to the separator (RFC 4155) */
    if (mb->msg.len >= 2 && mb->msg.p[mb->msg.len - 1] == '\n' && mb->msg.p[mb->msg.len - 2] == '\n') mb->msg.len--;
    *msg = mb->msg.p ? mb->msg.p : "";
    *len = mb->msg.len;
    *from_line = mb->from.p ? mb->from.p : "";
    *number = mb->number;
    return SH_OK;
}

sh_status sh_mbox_next(sh_mbox *mb, const char **msg, size_t *len, const char **from_line, uint64_t *number,
                       sh_error *err)
{
    size_t line_max = mb->max ? mb->max : ((size_t)1 << 30);
    *msg = NULL;
    *len = 0;
    *from_line = "";
    *number = 0;
    if (mb->have_pending) {
        buf t = mb->from;
        mb->from = mb->pending;
        mb->pending = t;
        mb->have_pending = 0;
        start_message(mb);
    }
    while (!mb->at_end) {
        const char *l;
        size_t n;
        sh_status st = sh_zstream_line(mb->zs, line_max, &l, &n, err);
        if (st == SH_ELIMIT && sh_zstream_failed(mb->zs) == SH_OK) {
            mb->over = 1; /* a line longer than a whole message may be */
            continue;
        }
        if (st != SH_OK) { mb->at_end = 1; return st; }
        if (!l) {
            mb->at_end = 1;
            if (mb->in_msg) return finish_message(mb, msg, len, from_line, number, err);
            return SH_OK;
        }
        if (is_separator(l, n)) {
            if (mb->in_msg) {
                if (!set_from(&mb->pending, l, n)) return sh_error_set(err, SH_ENOMEM, 0, "out of memory reading an mbox");
                mb->have_pending = 1;
                return finish_message(mb, msg, len, from_line, number, err);
            }
            if (!set_from(&mb->from, l, n)) return sh_error_set(err, SH_ENOMEM, 0, "out of memory reading an mbox");
            start_message(mb);
            continue;
        }
        if (mb->in_msg && !mb->over) {
            /* mboxrd: one '>' less on lines ">From ", ">>From ", ... */
            const char *s = l;
            size_t k = n, q = 0;
            while (q < k && s[q] == '>') q++;
            if (q > 0 && k - q >= 5 && memcmp(s + q, "From ", 5) == 0) { s++; k--; }
            if (mb->max && mb->msg.len + k + 1 > mb->max) mb->over = 1;
            else if (!buf_add(&mb->msg, s, k) || !buf_add(&mb->msg, "\n", 1))
                return sh_error_set(err, SH_ENOMEM, 0, "out of memory reading an mbox");
        }
        /* lines before the first separator are not a message */
    }
    return SH_OK;
}
