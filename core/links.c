#include "links.h"

#include <stdlib.h>
#include <string.h>

/* ---- small character helpers (ASCII only, locale-independent) ------------ */

static int is_alpha(unsigned char c) { return (c | 0x20) >= 'a' && (c | 0x20) <= 'z'; }
static int is_digit(unsigned char c) { return c >= '0' && c <= '9'; }
static int is_alnum(unsigned char c) { return is_alpha(c) || is_digit(c); }
static int is_hex(unsigned char c) { return is_digit(c) || ((c | 0x20) >= 'a' && (c | 0x20) <= 'f'); }
static int hex_val(unsigned char c) { return is_digit(c) ? c - '0' : (c | 0x20) - 'a' + 10; }
static unsigned char to_lower(unsigned char c) { return (c >= 'A' && c <= 'Z') ? (unsigned char)(c + 32) : c; }
static unsigned char to_upper(unsigned char c) { return (c >= 'a' && c <= 'z') ? (unsigned char)(c - 32) : c; }
static int is_html_space(unsigned char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f'; }

/* a[0..n) equals the lowercase NUL-terminated word w, ignoring ASCII case */
static int eq_nocase(const char *a, size_t n, const char *w)
{
    size_t i;
    for (i = 0; i < n; i++)
        if (w[i] == '\0' || to_lower((unsigned char)a[i]) != (unsigned char)w[i])
            return 0;
    return w[n] == '\0';
}

/* ---- URL splitting (RFC 3986 appendix B) --------------------------------- */

static int valid_scheme(const char *s, size_t n)
{
    size_t i;
    if (n == 0 || !is_alpha((unsigned char)s[0]))
        return 0;
    for (i = 1; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (!is_alnum(c) && c != '+' && c != '-' && c != '.')
            return 0;
    }
    return 1;
}

sh_status sh_url_split(const char *url, size_t n, sh_url_parts *p, sh_error *err)
{
    size_t i = 0, j, k;
    memset(p, 0, sizeof *p);

    for (j = 0; j < n && !strchr(":/?#", url[j]); j++)
        ;
    /* strchr matches the terminating NUL too: a NUL byte ends the scan here */
    if (j < n && url[j] == ':' && valid_scheme(url, j)) {
        p->has_scheme = 1;
        p->scheme_off = 0;
        p->scheme_len = j;
        i = j + 1;
    }
    if (n - i >= 2 && url[i] == '/' && url[i + 1] == '/') {
        size_t a = i + 2, at, h, e;
        for (k = a; k < n && url[k] != '/' && url[k] != '?' && url[k] != '#'; k++)
            ;
        p->has_auth = 1;
        p->auth_off = a;
        p->auth_len = k - a;
        e = k;
        h = a;
        for (at = a; at < e; at++)      /* userinfo ends at the last '@' */
            if (url[at] == '@')
                h = at + 1;
        p->host_off = h;
        if (h < e && url[h] == '[') {
            size_t r = h;
            while (r < e && url[r] != ']')
                r++;
            if (r == e)
                return sh_error_set(err, SH_EFORMAT, h,
                                    "URL host at byte %zu has an unclosed '[' (IPv6 literal)", h);
            j = r + 1;
            if (j < e && url[j] != ':')
                return sh_error_set(err, SH_EFORMAT, j,
                                    "URL has unexpected bytes after the IPv6 literal at byte %zu", j);
        } else {
            for (j = h; j < e && url[j] != ':'; j++)
                ;
        }
        p->host_len = j - h;
        if (j < e) {                     /* url[j] == ':' */
            size_t d;
            p->has_port = 1;
            p->port_off = j + 1;
            p->port_len = e - j - 1;
            for (d = j + 1; d < e; d++)
                if (!is_digit((unsigned char)url[d]))
                    return sh_error_set(err, SH_EFORMAT, d,
                                        "URL port is not a number (byte %zu)", d);
        }
        i = k;
    }
    for (k = i; k < n && url[k] != '?' && url[k] != '#'; k++)
        ;
    p->path_off = i;
    p->path_len = k - i;
    i = k;
    if (i < n && url[i] == '?') {
        for (k = i + 1; k < n && url[k] != '#'; k++)
            ;
        p->has_query = 1;
        p->query_off = i + 1;
        p->query_len = k - i - 1;
        i = k;
    }
    if (i < n && url[i] == '#') {
        p->has_frag = 1;
        p->frag_off = i + 1;
        p->frag_len = n - i - 1;
    }
    return SH_OK;
}

/* ---- resolution (RFC 3986 5.2) ------------------------------------------- */

static int starts(const char *s, size_t n, const char *w)
{
    size_t m = strlen(w);
    return n >= m && memcmp(s, w, m) == 0;
}

/* remove_dot_segments (RFC 3986 5.2.4), in place. The output never grows past
 * what has been read, so the write index w never overtakes the read index r;
 * "replace the prefix with '/'" is done by stepping r onto a byte and making
 * it a '/'. */
static size_t remove_dots(char *p, size_t n)
{
    size_t r = 0, w = 0;
    while (r < n) {
        const char *s = p + r;
        size_t m = n - r;
        if (starts(s, m, "../")) {
            r += 3;
        } else if (starts(s, m, "./")) {
            r += 2;
        } else if (starts(s, m, "/./")) {
            r += 2;
        } else if (m == 2 && s[0] == '/' && s[1] == '.') {
            r += 1;
            p[r] = '/';
        } else if (starts(s, m, "/../") || (m == 3 && starts(s, m, "/.."))) {
            if (m == 3) {
                r += 2;
                p[r] = '/';
            } else {
                r += 3;
            }
            while (w > 0 && p[w - 1] != '/')
                w--;
            if (w > 0)
                w--;
        } else if ((m == 1 && s[0] == '.') || (m == 2 && s[0] == '.' && s[1] == '.')) {
            r = n;
        } else {
            if (p[r] == '/')
                p[w++] = p[r++];
            while (r < n && p[r] != '/')
                p[w++] = p[r++];
        }
    }
    return w;
}

static int is_unreserved(unsigned char c)
{
    return is_alnum(c) || c == '-' || c == '.' || c == '_' || c == '~';
}

/* RFC 3986 6.2.2.1/6.2.2.2 in place: "%7e" -> "~", "%2f" -> "%2F". */
static size_t pct_normalize(char *p, size_t n)
{
    size_t r = 0, w = 0;
    while (r < n) {
        if (p[r] == '%' && r + 2 < n && is_hex((unsigned char)p[r + 1])
            && is_hex((unsigned char)p[r + 2])) {
            unsigned char c = (unsigned char)(hex_val((unsigned char)p[r + 1]) * 16
                                              + hex_val((unsigned char)p[r + 2]));
            /* decoding a hex digit right after a stray '%' (one that starts
             * no escape) would make a new escape ("%%66" -> "%f6"), and a
             * second normalization would read it: such an escape stays as it
             * is, so that normalizing is idempotent (fuzz_links found it) */
            int stray = is_hex(c) && ((w >= 1 && p[w - 1] == '%') ||
                                      (w >= 2 && p[w - 2] == '%' && is_hex((unsigned char)p[w - 1])));
            if (is_unreserved(c) && !stray) {
                p[w++] = (char)c;
            } else {
                p[w++] = '%';
                p[w++] = (char)to_upper((unsigned char)p[r + 1]);
                p[w++] = (char)to_upper((unsigned char)p[r + 2]);
            }
            r += 3;
        } else {
            p[w++] = p[r++];
        }
    }
    return w;
}

typedef struct span { const char *p; size_t n; } span;

static int is_default_port(span scheme, span port)
{
    if (port.n == 0)
        return 1;
    if (eq_nocase(scheme.p, scheme.n, "http") && port.n == 2 && memcmp(port.p, "80", 2) == 0)
        return 1;
    if (eq_nocase(scheme.p, scheme.n, "https") && port.n == 3 && memcmp(port.p, "443", 3) == 0)
        return 1;
    return 0;
}

sh_status sh_url_resolve(const char *base, size_t blen, const char *ref, size_t rlen,
                         unsigned flags, char *out, size_t cap, size_t *out_len,
                         sh_error *err)
{
    sh_url_parts R, B;
    const char *asrc;          /* the string the authority comes from */
    const sh_url_parts *A;     /* ... and its parts */
    span scheme, query = { NULL, 0 };
    int has_query, dots = 1;
    size_t w = 0, path_start;
    sh_status st;
    int norm = (flags & SH_URL_NORMALIZE) != 0;

    *out_len = 0;
    if (!base)
        blen = 0;
    if (cap < SH_URL_OUT_MAX(blen, rlen))
        return sh_error_set(err, SH_EINVAL, 0,
                            "sh_url_resolve: output capacity %zu is below SH_URL_OUT_MAX (%zu)",
                            cap, (size_t)SH_URL_OUT_MAX(blen, rlen));
    if ((st = sh_url_split(ref, rlen, &R, err)) != SH_OK)
        return st;
    if (R.has_scheme) {
        scheme.p = ref + R.scheme_off;
        scheme.n = R.scheme_len;
        asrc = ref;
        A = &R;
    } else {
        if (!base)
            return sh_error_set(err, SH_EFORMAT, 0,
                                "relative URL reference with no base URL to resolve it against");
        if ((st = sh_url_split(base, blen, &B, err)) != SH_OK)
            return st;
        if (!B.has_scheme)
            return sh_error_set(err, SH_EFORMAT, 0,
                                "base URL \"%.*s\" is not absolute (it has no scheme)",
                                (int)(blen > 200 ? 200 : blen), base);
        scheme.p = base + B.scheme_off;
        scheme.n = B.scheme_len;
        if (R.has_auth) {
            asrc = ref;
            A = &R;
        } else {
            asrc = base;
            A = &B;
        }
    }

    /* scheme ":" */
    memcpy(out + w, scheme.p, scheme.n);
    if (norm) {
        size_t i;
        for (i = 0; i < scheme.n; i++)
            out[w + i] = (char)to_lower((unsigned char)out[w + i]);
    }
    w += scheme.n;
    out[w++] = ':';

    /* "//" authority */
    if (A->has_auth) {
        out[w++] = '/';
        out[w++] = '/';
        if (!norm) {
            memcpy(out + w, asrc + A->auth_off, A->auth_len);
            w += A->auth_len;
        } else {
            size_t i, ui = A->host_off - A->auth_off;   /* userinfo and its '@' */
            span port;
            memcpy(out + w, asrc + A->auth_off, ui);
            w += ui;
            for (i = 0; i < A->host_len; i++)
                out[w++] = (char)to_lower((unsigned char)asrc[A->host_off + i]);
            port.p = asrc + A->port_off;
            port.n = A->port_len;
            if (A->has_port && !is_default_port(scheme, port)) {
                out[w++] = ':';
                memcpy(out + w, port.p, port.n);
                w += port.n;
            }
        }
    }

    /* path (built in place, then dot segments removed in place) */
    path_start = w;
    if (R.has_scheme || R.has_auth) {
        memcpy(out + w, ref + R.path_off, R.path_len);
        w += R.path_len;
        has_query = R.has_query;
        query.p = ref + R.query_off;
        query.n = R.query_len;
    } else if (R.path_len == 0) {
        memcpy(out + w, base + B.path_off, B.path_len);
        w += B.path_len;
        dots = norm;   /* 5.2.2: T.path = Base.path, as is */
        if (R.has_query) {
            has_query = 1;
            query.p = ref + R.query_off;
            query.n = R.query_len;
        } else {
            has_query = B.has_query;
            query.p = base + B.query_off;
            query.n = B.query_len;
        }
    } else {
        if (ref[R.path_off] != '/') {
            /* merge (5.2.3) */
            if (B.has_auth && B.path_len == 0) {
                out[w++] = '/';
            } else {
                size_t keep = B.path_len;
                while (keep > 0 && base[B.path_off + keep - 1] != '/')
                    keep--;
                memcpy(out + w, base + B.path_off, keep);
                w += keep;
            }
        }
        memcpy(out + w, ref + R.path_off, R.path_len);
        w += R.path_len;
        has_query = R.has_query;
        query.p = ref + R.query_off;
        query.n = R.query_len;
    }
    if (norm)
        w = path_start + pct_normalize(out + path_start, w - path_start);
    if (dots)
        w = path_start + remove_dots(out + path_start, w - path_start);
    if (norm && A->has_auth && w == path_start)
        out[w++] = '/';
    if (!A->has_auth && w - path_start >= 2 && out[path_start] == '/' && out[path_start + 1] == '/') {
        /* removing dot segments can leave a path that starts with "//" where
         * there is no authority ("s:/..//h/p"): written as it is, it would
         * read back as an authority. "/." in front keeps it a path (as the
         * WHATWG URL standard serializes it); the slack of SH_URL_OUT_MAX
         * has room, as no "//" was written for an authority. */
        memmove(out + path_start + 2, out + path_start, w - path_start);
        out[path_start] = '/';
        out[path_start + 1] = '.';
        w += 2;
    }

    if (has_query) {
        size_t q;
        out[w++] = '?';
        q = w;
        memcpy(out + w, query.p, query.n);
        w += query.n;
        if (norm)
            w = q + pct_normalize(out + q, w - q);
    }
    if (R.has_frag && !(flags & SH_URL_DROP_FRAGMENT)) {
        out[w++] = '#';
        memcpy(out + w, ref + R.frag_off, R.frag_len);
        w += R.frag_len;
    }
    *out_len = w;
    return SH_OK;
}

sh_status sh_url_normalize(const char *url, size_t n, char *out, size_t cap,
                           size_t *out_len, sh_error *err)
{
    return sh_url_resolve(NULL, 0, url, n, SH_URL_NORMALIZE | SH_URL_DROP_FRAGMENT,
                          out, cap, out_len, err);
}

/* ---- HTML attribute values --------------------------------------------- */

static size_t put_utf8(char *o, unsigned long c)
{
    if (c == 0 || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF))
        c = 0xFFFD;
    if (c < 0x80) {
        o[0] = (char)c;
        return 1;
    }
    if (c < 0x800) {
        o[0] = (char)(0xC0 | (c >> 6));
        o[1] = (char)(0x80 | (c & 0x3F));
        return 2;
    }
    if (c < 0x10000) {
        o[0] = (char)(0xE0 | (c >> 12));
        o[1] = (char)(0x80 | ((c >> 6) & 0x3F));
        o[2] = (char)(0x80 | (c & 0x3F));
        return 3;
    }
    o[0] = (char)(0xF0 | (c >> 18));
    o[1] = (char)(0x80 | ((c >> 12) & 0x3F));
    o[2] = (char)(0x80 | ((c >> 6) & 0x3F));
    o[3] = (char)(0x80 | (c & 0x3F));
    return 4;
}

/* HTML maps numeric references 0x80..0x9F through windows-1252. */
static const unsigned short cp1252[32] = {
    0x20AC, 0x81, 0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021, 0x02C6, 0x2030, 0x0160,
    0x2039, 0x0152, 0x8D, 0x017D, 0x8F, 0x90, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022,
    0x2013, 0x2014, 0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, 0x9D, 0x017E, 0x0178
};

static const struct { const char *name; unsigned long cp; int legacy; } entities[] = {
    { "amp", '&', 1 }, { "lt", '<', 1 }, { "gt", '>', 1 }, { "quot", '"', 1 },
    { "apos", '\'', 0 }, { "nbsp", 0xA0, 1 },
    { "AMP", '&', 1 }, { "LT", '<', 1 }, { "GT", '>', 1 }, { "QUOT", '"', 1 }
};

/* Decode character references in an attribute value s[0..n) into o (which has
 * room for n bytes: a reference never decodes to more bytes than it spans).
 * Named references need their ';' except the legacy ones, which in attribute
 * values are still left alone before an alphanumeric or '=' (HTML "named
 * character reference state"), so "?a=1&copy=2" keeps its "&copy". */
static size_t decode_attr(const char *s, size_t n, char *o)
{
    size_t i = 0, w = 0;
    while (i < n) {
        if (s[i] != '&') {
            o[w++] = s[i++];
            continue;
        }
        if (i + 1 < n && s[i + 1] == '#') {
            size_t j = i + 2, d0;
            unsigned long c = 0;
            int hex = j < n && (s[j] == 'x' || s[j] == 'X');
            if (hex)
                j++;
            d0 = j;
            while (j < n && (hex ? is_hex((unsigned char)s[j]) : is_digit((unsigned char)s[j]))) {
                if (c <= 0x10FFFF)
                    c = c * (hex ? 16 : 10) + (unsigned long)hex_val((unsigned char)s[j]);
                j++;
            }
            if (j == d0) {      /* "&#" with no digits: literal */
                o[w++] = s[i++];
                continue;
            }
            if (j < n && s[j] == ';')
                j++;
            if (c >= 0x80 && c <= 0x9F)
                c = cp1252[c - 0x80];
            w += put_utf8(o + w, c);
            i = j;
            continue;
        } else {
            size_t j = i + 1, e, len;
            int done = 0;
            while (j < n && is_alnum((unsigned char)s[j]))
                j++;
            len = j - i - 1;
            for (e = 0; e < sizeof entities / sizeof entities[0]; e++) {
                if (strlen(entities[e].name) != len || memcmp(s + i + 1, entities[e].name, len) != 0)
                    continue;
                if (j < n && s[j] == ';') {
                    w += put_utf8(o + w, entities[e].cp);
                    i = j + 1;
                    done = 1;
                } else if (entities[e].legacy && !(j < n && s[j] == '=')) {
                    w += put_utf8(o + w, entities[e].cp);
                    i = j;
                    done = 1;
                }
                break;
            }
            if (!done)
                o[w++] = s[i++];
        }
    }
    return w;
}

/* ---- link extraction ---------------------------------------------------- */

static sh_status grow(void **p, size_t *cap, size_t need, size_t elem, sh_error *err)
{
    size_t c = *cap ? *cap : 16;
    void *q;
    if (need <= *cap)
        return SH_OK;
    while (c < need) {
        if (c > ((size_t)-1) / 2 / elem)
            return sh_error_set(err, SH_ENOMEM, 0, "link buffer size overflow");
        c *= 2;
    }
    q = realloc(*p, c * elem);
    if (!q)
        return sh_error_set(err, SH_ENOMEM, 0, "out of memory growing a link buffer to %zu bytes",
                            c * elem);
    *p = q;
    *cap = c;
    return SH_OK;
}

/* Position of the first case-insensitive "</name" at or after i, else n. */
static size_t find_end_tag(const char *h, size_t n, size_t i, const char *name)
{
    size_t m = strlen(name);
    for (; i + 2 + m <= n; i++)
        if (h[i] == '<' && h[i + 1] == '/' && eq_nocase(h + i + 2, m, name))
            return i;
    return n;
}

static int skipped_scheme(const char *v, size_t n)
{
    static const char *const bad[] = { "javascript", "mailto", "data", "tel", "vbscript" };
    size_t k, i;
    for (i = 0; i < n && v[i] != ':'; i++)
        if (v[i] == '/' || v[i] == '?' || v[i] == '#')
            return 0;
    if (i == n)
        return 0;
    for (k = 0; k < sizeof bad / sizeof bad[0]; k++)
        if (eq_nocase(v, i, bad[k]))
            return 1;
    return 0;
}

/* Decode, then clean as browsers do before parsing a URL: strip leading and
 * trailing C0 controls and spaces, drop tabs and newlines anywhere. Appends to
 * scratch; returns the new span in *off, *len. */
static sh_status add_value(sh_links *L, const char *v, size_t vn, size_t *off, size_t *len,
                           sh_error *err)
{
    sh_status st;
    char *d;
    size_t m, a, b, w, i;
    if ((st = grow((void **)&L->scratch, &L->scratch_cap, L->scratch_len + vn + 1, 1, err)) != SH_OK)
        return st;
    d = L->scratch + L->scratch_len;
    m = decode_attr(v, vn, d);
    a = 0;
    while (a < m && (unsigned char)d[a] <= 0x20)
        a++;
    b = m;
    while (b > a && (unsigned char)d[b - 1] <= 0x20)
        b--;
    for (w = 0, i = a; i < b; i++)
        if (d[i] != '\t' && d[i] != '\n' && d[i] != '\r')
            d[w++] = d[i];
    *off = L->scratch_len;
    *len = w;
    L->scratch_len += w;
    return SH_OK;
}

sh_status sh_links_extract(const char *html, size_t n, const char *page_url, size_t ulen,
                           sh_links *L, sh_error *err)
{
    size_t i = 0, k, kept;
    sh_status st;
    const char *base;
    size_t blen;

    L->n = 0;
    L->text_len = 0;
    L->scratch_len = 0;
    L->has_base = 0;

    while (i < n) {
        const char *lt = memchr(html + i, '<', n - i);
        size_t j, name_end, tag_off;
        int want = -1, is_base = 0, got = 0, closed = 0;
        size_t got_vo = 0, got_vn = 0;
        const char *raw_tag;

        if (!lt)
            break;
        i = tag_off = (size_t)(lt - html);
        if (n - i >= 4 && memcmp(html + i, "<!--", 4) == 0) {
            for (j = i + 4; j + 3 <= n && memcmp(html + j, "-->", 3) != 0; j++)
                ;
            i = j + 3 <= n ? j + 3 : n;
            continue;
        }
        if (i + 1 >= n)
            break;
        if (html[i + 1] == '!' || html[i + 1] == '?' || html[i + 1] == '/') {
            const char *gt = memchr(html + i + 1, '>', n - i - 1);
            i = gt ? (size_t)(gt - html) + 1 : n;
            continue;
        }
        if (!is_alpha((unsigned char)html[i + 1])) {
            i++;
            continue;
        }
        for (j = i + 1; j < n && !is_html_space((unsigned char)html[j]) && html[j] != '/' &&
                        html[j] != '>'; j++)
            ;
        name_end = j;
        raw_tag = html + i + 1;
        k = name_end - i - 1;
        if (eq_nocase(raw_tag, k, "a")) want = SH_LINK_A;
        else if (eq_nocase(raw_tag, k, "area")) want = SH_LINK_AREA;
        else if (eq_nocase(raw_tag, k, "link")) want = SH_LINK_LINK;
        else if (eq_nocase(raw_tag, k, "frame")) want = SH_LINK_FRAME;
        else if (eq_nocase(raw_tag, k, "iframe")) want = SH_LINK_IFRAME;
        else if (eq_nocase(raw_tag, k, "base")) is_base = 1;

        /* attributes, up to the closing '>' (an unterminated tag is dropped) */
        while (j < n) {
            size_t an, al, vo = 0, vn = 0;
            while (j < n && (is_html_space((unsigned char)html[j]) || html[j] == '/'))
                j++;
            if (j >= n)
                break;
            if (html[j] == '>') {
                closed = 1;
                j++;
                break;
            }
            an = j++;            /* a name may start with '=' */
            while (j < n && !is_html_space((unsigned char)html[j]) && html[j] != '/' &&
                   html[j] != '>' && html[j] != '=')
                j++;
            al = j - an;
            while (j < n && is_html_space((unsigned char)html[j]))
                j++;
            if (j < n && html[j] == '=') {
                j++;
                while (j < n && is_html_space((unsigned char)html[j]))
                    j++;
                if (j < n && (html[j] == '"' || html[j] == '\'')) {
                    const char *q = memchr(html + j + 1, html[j], n - j - 1);
                    if (!q) {
                        j = n;   /* unterminated quote: the rest is its value */
                        break;
                    }
                    vo = j + 1;
                    vn = (size_t)(q - html) - vo;
                    j = (size_t)(q - html) + 1;
                } else {
                    vo = j;
                    while (j < n && !is_html_space((unsigned char)html[j]) && html[j] != '>')
                        j++;
                    vn = j - vo;
                }
            }
            if (!got && ((want == SH_LINK_FRAME || want == SH_LINK_IFRAME)
                             ? eq_nocase(html + an, al, "src")
                             : (want >= 0 || is_base) && eq_nocase(html + an, al, "href"))) {
                got = 1;      /* the first of duplicate attributes wins */
                got_vo = vo;
                got_vn = vn;
            }
        }
        if (!closed)
            break;
        i = j;
        if (got && is_base && !L->has_base) {
            if ((st = add_value(L, html + got_vo, got_vn, &L->base_off, &L->base_len, err)) != SH_OK)
                return st;
            L->has_base = 1;
        } else if (got && want >= 0) {
            size_t off, len;
            if ((st = add_value(L, html + got_vo, got_vn, &off, &len, err)) != SH_OK)
                return st;
            if (len == 0 || L->scratch[off] == '#' || skipped_scheme(L->scratch + off, len)) {
                L->scratch_len = off;
            } else {
                sh_link *lk;
                if ((st = grow((void **)&L->v, &L->cap, L->n + 1, sizeof *L->v, err)) != SH_OK)
                    return st;
                lk = &L->v[L->n++];
                lk->off = off;
                lk->len = len;
                lk->tag_off = tag_off;
                lk->val_off = got_vo;
                lk->val_len = got_vn;
                lk->tag = (sh_link_tag)want;
            }
        }
        /* raw text elements: their content is not markup */
        if (eq_nocase(raw_tag, k, "script")) i = find_end_tag(html, n, i, "script");
        else if (eq_nocase(raw_tag, k, "style")) i = find_end_tag(html, n, i, "style");
        else if (eq_nocase(raw_tag, k, "textarea")) i = find_end_tag(html, n, i, "textarea");
        else if (eq_nocase(raw_tag, k, "title")) i = find_end_tag(html, n, i, "title");
    }

    /* The effective base: <base href> resolved against the page URL. It goes
     * at the end of scratch, grown first so the pointers below stay valid. */
    base = page_url && ulen ? page_url : NULL;
    blen = base ? ulen : 0;
    if (L->has_base) {
        size_t need = SH_URL_OUT_MAX(blen, L->base_len), bl;
        if ((st = grow((void **)&L->scratch, &L->scratch_cap, L->scratch_len + need, 1, err)) != SH_OK)
            return st;
        if (sh_url_resolve(base, blen, L->scratch + L->base_off, L->base_len,
                           SH_URL_NORMALIZE | SH_URL_DROP_FRAGMENT,
                           L->scratch + L->scratch_len, need, &bl, NULL) == SH_OK) {
            base = L->scratch + L->scratch_len;
            blen = bl;
            L->scratch_len += bl;
        }
    }
    for (k = kept = 0; k < L->n; k++) {
        sh_link lk = L->v[k];
        size_t need = SH_URL_OUT_MAX(blen, lk.len), rl;
        if ((st = grow((void **)&L->text, &L->text_cap, L->text_len + need, 1, err)) != SH_OK)
            return st;
        if (sh_url_resolve(base, blen, L->scratch + lk.off, lk.len,
                           SH_URL_NORMALIZE | SH_URL_DROP_FRAGMENT,
                           L->text + L->text_len, need, &rl, NULL) != SH_OK)
            continue;
        lk.off = L->text_len;
        lk.len = rl;
        L->text_len += rl;
        L->v[kept++] = lk;
    }
    L->n = kept;
    return SH_OK;
}

void sh_links_free(sh_links *l)
{
    if (!l)
        return;
    free(l->v);
    free(l->text);
    free(l->scratch);
    memset(l, 0, sizeof *l);
}
