#include "jsonl.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- the parser of one line ------------------------------------------------ */

typedef struct parser {
    char *s;
    size_t n, i;
    sh_error *err;
} parser;

/* What a decoded string held that some fields do not accept. */
enum { STR_BAD_UTF8 = 1, STR_SURROGATE = 2, STR_CONTROL = 4 };

static sh_status fail(parser *p, size_t at, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

static sh_status fail(parser *p, size_t at, const char *fmt, ...)
{
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return sh_error_set(p->err, SH_EFORMAT, at, "column %zu: %s", at + 1, msg);
}

static void skip_ws(parser *p)
{
    while (p->i < p->n && (p->s[p->i] == ' ' || p->s[p->i] == '\t' || p->s[p->i] == '\n' || p->s[p->i] == '\r')) p->i++;
}

/* Length of the well-formed UTF-8 sequence at s[0..n) (Unicode 15, table
 * 3-7: no overlong forms, no surrogates, at most U+10FFFF), 0 if there is none. */
static size_t utf8_len(const unsigned char *s, size_t n)
{
    unsigned c = s[0];
    if (c < 0x80) return 1;
    if (c >= 0xC2 && c <= 0xDF) return n >= 2 && (s[1] & 0xC0) == 0x80 ? 2 : 0;
    if (c >= 0xE0 && c <= 0xEF) {
        unsigned lo = c == 0xE0 ? 0xA0 : 0x80, hi = c == 0xED ? 0x9F : 0xBF;
        return n >= 3 && s[1] >= lo && s[1] <= hi && (s[2] & 0xC0) == 0x80 ? 3 : 0;
    }
    if (c >= 0xF0 && c <= 0xF4) {
        unsigned lo = c == 0xF0 ? 0x90 : 0x80, hi = c == 0xF4 ? 0x8F : 0xBF;
        return n >= 4 && s[1] >= lo && s[1] <= hi && (s[2] & 0xC0) == 0x80 && (s[3] & 0xC0) == 0x80 ? 4 : 0;
    }
    return 0;
}

static int hex4(const char *s, unsigned *v)
{
    int k;
    *v = 0;
    for (k = 0; k < 4; k++) {
        char c = s[k];
        unsigned d;
        if (c >= '0' && c <= '9') d = (unsigned)(c - '0');
        else if (c >= 'a' && c <= 'f') d = (unsigned)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F') d = (unsigned)(c - 'A' + 10);
        else return 0;
        *v = *v << 4 | d;
    }
    return 1;
}

static size_t put_utf8(char *o, unsigned cp)
{
    if (cp < 0x80) { o[0] = (char)cp; return 1; }
    if (cp < 0x800) { o[0] = (char)(0xC0 | cp >> 6); o[1] = (char)(0x80 | (cp & 0x3F)); return 2; }
    if (cp < 0x10000) {
        o[0] = (char)(0xE0 | cp >> 12); o[1] = (char)(0x80 | ((cp >> 6) & 0x3F)); o[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    o[0] = (char)(0xF0 | cp >> 18); o[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    o[2] = (char)(0x80 | ((cp >> 6) & 0x3F)); o[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

/* The string at p->i (its opening quote), decoded in place: *out, *len span
 * the decoded bytes, *flags what it held. Every escape is at least as long as
 * the bytes it stands for, so the write position never passes the read one. */
/* Whether any of the 8 bytes in u needs more than copying: '"', '\\', a
 * control character (< 0x20 or 0x7F) or a byte of a multibyte sequence
 * (>= 0x80). Exact (bit twiddling's haszero/hasless, n <= 128). */
static inline uint64_t special8(uint64_t u)
{
    const uint64_t lo = 0x0101010101010101ULL, hi = 0x8080808080808080ULL;
    uint64_t q = u ^ (lo * 0x22), b = u ^ (lo * 0x5C), d = u ^ (lo * 0x7F);
    return (((u - lo * 0x20) & ~u) | u | ((q - lo) & ~q) | ((b - lo) & ~b) | ((d - lo) & ~d)) & hi;
}

static sh_status string_at(parser *p, char **out, size_t *len, int *flags)
{
    size_t start = p->i + 1, r = start, w = start;
    char *s = p->s;
    *flags = 0;
    for (;;) {
        unsigned char c;
        /* runs of plain ASCII 8 bytes at a time (what the rest copies byte by byte) */
        while (r + 8 <= p->n) {
            uint64_t u;
            memcpy(&u, s + r, 8);
            if (special8(u)) break;
            if (w != r) memmove(s + w, s + r, 8);
            r += 8;
            w += 8;
        }
        if (r >= p->n) return fail(p, p->i, "a string that does not end (a missing '\"')");
        c = (unsigned char)s[r];
        if (c == '"') break;
        if (c < 0x20)
            return fail(p, r, "a control character (0x%02x) inside a string; JSON needs it escaped (\\n, \\t, \\u00%02x)", c, c);
        if (c == '\\') {
            char e;
            if (r + 1 >= p->n) return fail(p, r, "a string that ends in a lone backslash");
            e = s[r + 1];
            switch (e) {
            case '"': case '\\': case '/': s[w++] = e; r += 2; break;
            case 'b': s[w++] = '\b'; r += 2; *flags |= STR_CONTROL; break;
            case 'f': s[w++] = '\f'; r += 2; *flags |= STR_CONTROL; break;
            case 'n': s[w++] = '\n'; r += 2; *flags |= STR_CONTROL; break;
            case 'r': s[w++] = '\r'; r += 2; *flags |= STR_CONTROL; break;
            case 't': s[w++] = '\t'; r += 2; *flags |= STR_CONTROL; break;
            case 'u': {
                unsigned cp, lo;
                if (r + 6 > p->n || !hex4(s + r + 2, &cp)) return fail(p, r, "a \\u escape without four hex digits");
                r += 6;
                if (cp >= 0xD800 && cp <= 0xDBFF && r + 6 <= p->n && s[r] == '\\' && s[r + 1] == 'u' && hex4(s + r + 2, &lo) &&
                    lo >= 0xDC00 && lo <= 0xDFFF) {
                    cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                    r += 6;
                } else if (cp >= 0xD800 && cp <= 0xDFFF) {
                    cp = 0xFFFD; /* a lone surrogate stands for no character */
                    *flags |= STR_SURROGATE;
                }
                if (cp < 0x20 || cp == 0x7F) *flags |= STR_CONTROL;
                w += put_utf8(s + w, cp);
                break;
            }
            default:
                return fail(p, r, "an unknown escape '\\%c' in a string", e >= 0x20 && e < 0x7F ? e : '?');
            }
            continue;
        }
        if (c == 0x7F) *flags |= STR_CONTROL;
        if (c >= 0x80) {
            size_t k = utf8_len((const unsigned char *)s + r, p->n - r);
            if (k == 0) { *flags |= STR_BAD_UTF8; k = 1; }
            memmove(s + w, s + r, k);
            w += k;
            r += k;
            continue;
        }
        s[w++] = (char)c;
        r++;
    }
    *out = s + start;
    *len = w - start;
    p->i = r + 1;
    return SH_OK;
}

/* The number at p->i: *integer whether it has neither fraction nor exponent. */
static sh_status number_at(parser *p, int *integer)
{
    size_t i = p->i, d;
    const char *s = p->s;
    *integer = 1;
    if (i < p->n && s[i] == '-') i++;
    if (i >= p->n || s[i] < '0' || s[i] > '9') return fail(p, p->i, "a number without digits");
    if (s[i] == '0') i++;
    else while (i < p->n && s[i] >= '0' && s[i] <= '9') i++;
    if (i < p->n && s[i] == '.') {
        *integer = 0;
        d = ++i;
        while (i < p->n && s[i] >= '0' && s[i] <= '9') i++;
        if (i == d) return fail(p, i, "a number with no digits after its decimal point");
    }
    if (i < p->n && (s[i] == 'e' || s[i] == 'E')) {
        *integer = 0;
        i++;
        if (i < p->n && (s[i] == '+' || s[i] == '-')) i++;
        d = i;
        while (i < p->n && s[i] >= '0' && s[i] <= '9') i++;
        if (i == d) return fail(p, i, "a number with no digits in its exponent");
    }
    p->i = i;
    return SH_OK;
}

static int literal_at(parser *p, const char *lit)
{
    size_t k = strlen(lit);
    if (p->n - p->i >= k && memcmp(p->s + p->i, lit, k) == 0) { p->i += k; return 1; }
    return 0;
}

static const char *kind_at(const parser *p)
{
    switch (p->s[p->i]) {
    case '[': return "an array";
    case '{': return "an object";
    case 't': case 'f': return "a boolean";
    default: return "not a value";
    }
}

/* Any value, checked and passed over; depth counts the enclosing containers. */
static sh_status skip_value(parser *p, int depth)
{
    char c;
    sh_status s;
    skip_ws(p);
    if (p->i >= p->n) return fail(p, p->i, "the line ends where a value should be");
    c = p->s[p->i];
    if (c == '"') {
        char *o;
        size_t l;
        int fl;
        return string_at(p, &o, &l, &fl);
    }
    if (c == '-' || (c >= '0' && c <= '9')) {
        int integer;
        return number_at(p, &integer);
    }
    if (literal_at(p, "true") || literal_at(p, "false") || literal_at(p, "null")) return SH_OK;
    if (c != '[' && c != '{') return fail(p, p->i, "'%c' where a value should be", c >= 0x20 && c < 0x7F ? c : '?');
    if (depth >= SH_JSONL_MAX_DEPTH)
        return fail(p, p->i, "arrays and objects nested deeper than %d", SH_JSONL_MAX_DEPTH);
    p->i++;
    skip_ws(p);
    if (p->i < p->n && p->s[p->i] == (c == '[' ? ']' : '}')) { p->i++; return SH_OK; }
    for (;;) {
        if (c == '{') {
            char *o;
            size_t l;
            int fl;
            skip_ws(p);
            if (p->i >= p->n || p->s[p->i] != '"') return fail(p, p->i, "an object member without a quoted name");
            if ((s = string_at(p, &o, &l, &fl)) != SH_OK) return s;
            skip_ws(p);
            if (p->i >= p->n || p->s[p->i] != ':') return fail(p, p->i, "a member name without ':' after it");
            p->i++;
        }
        if ((s = skip_value(p, depth + 1)) != SH_OK) return s;
        skip_ws(p);
        if (p->i < p->n && p->s[p->i] == ',') { p->i++; continue; }
        if (p->i < p->n && p->s[p->i] == (c == '[' ? ']' : '}')) { p->i++; return SH_OK; }
        return fail(p, p->i, "%s that is not closed (a missing ',' or '%c')", c == '[' ? "an array" : "an object",
                    c == '[' ? ']' : '}');
    }
}

enum { F_TEXT, F_URL, F_ID, F_DATE, F_N };

/* A field of the document: a string (checked as the field needs) or an
 * integer (its digits), null (absent); anything else is refused. */
static sh_status field_at(parser *p, int which, const char *name, sh_span *out)
{
    size_t at = p->i;
    char c = p->s[at];
    if (c == '"') {
        char *o;
        size_t l;
        int fl;
        sh_status s = string_at(p, &o, &l, &fl);
        if (s != SH_OK) return s;
        if (which != F_TEXT) {
            if (fl & (STR_BAD_UTF8 | STR_SURROGATE))
                return fail(p, at, "the %s '%s' is not valid UTF-8 text; give it in UTF-8 (or percent-encoded)",
                            which == F_DATE ? "date" : "URL", name);
            if (fl & STR_CONTROL)
                return fail(p, at, "the %s '%s' holds a control character", which == F_DATE ? "date" : "URL", name);
        }
        out->p = o;
        out->n = l;
        return SH_OK;
    }
    if (c == '-' || (c >= '0' && c <= '9')) {
        int integer;
        sh_status s = number_at(p, &integer);
        if (s != SH_OK) return s;
        if (which == F_TEXT) return fail(p, at, "the text field '%s' is a number; it must be a string", name);
        if (!integer)
            return fail(p, at, "the %s '%s' is a number with a fraction or an exponent (%.*s); give it as a string", which == F_DATE ? "date" : "URL",
                        name, (int)(p->i - at > 40 ? 40 : p->i - at), p->s + at);
        out->p = p->s + at;
        out->n = p->i - at;
        return SH_OK;
    }
    if (literal_at(p, "null")) { out->p = NULL; out->n = 0; return SH_OK; }
    return fail(p, at, "the %s '%s' is %s; it must be a string%s", which == F_TEXT ? "text field" : which == F_DATE ? "date" : "URL",
                name, kind_at(p), which == F_TEXT ? "" : " or an integer");
}

sh_status sh_jsonl_parse(char *line, size_t n, const sh_jsonl_fields *f, sh_jsonl_doc *doc, sh_error *err)
{
    static const char *const defaults[F_N] = { "text", "url", "id", "date" };
    const char *names[F_N];
    size_t lens[F_N];
    sh_span v[F_N];
    parser p;
    sh_status s;
    int k;
    memset(doc, 0, sizeof *doc);
    memset(v, 0, sizeof v);
    names[F_TEXT] = f && f->text ? f->text : defaults[F_TEXT];
    names[F_URL] = f && f->url ? f->url : defaults[F_URL];
    names[F_ID] = f && f->id ? f->id : defaults[F_ID];
    names[F_DATE] = f && f->date ? f->date : defaults[F_DATE];
    for (k = 0; k < F_N; k++) lens[k] = strlen(names[k]);
    p.s = line;
    p.n = n;
    p.i = 0;
    p.err = err;
    skip_ws(&p);
    if (p.i >= n || line[p.i] != '{') {
        if (p.i < n && (line[p.i] == '[' || line[p.i] == '"' || line[p.i] == '-' || (line[p.i] >= '0' && line[p.i] <= '9')))
            return fail(&p, p.i, "a JSON value that is not an object; each line must be one object");
        return fail(&p, p.i, "not a JSON object (it does not start with '{')");
    }
    p.i++;
    skip_ws(&p);
    if (p.i < n && line[p.i] == '}') {
        p.i++;
    } else {
        for (;;) {
            char *key;
            size_t kl;
            int fl;
            skip_ws(&p);
            if (p.i >= n || line[p.i] != '"') return fail(&p, p.i, "an object member without a quoted name");
            if ((s = string_at(&p, &key, &kl, &fl)) != SH_OK) return s;
            skip_ws(&p);
            if (p.i >= n || line[p.i] != ':') return fail(&p, p.i, "a member name without ':' after it");
            p.i++;
            skip_ws(&p);
            if (p.i >= n) return fail(&p, p.i, "the line ends where a value should be");
            /* one name may stand for several fields (--url-field id) */
            for (k = 0; k < F_N; k++)
                if (kl == lens[k] && memcmp(key, names[k], kl) == 0) break;
            if (k < F_N) {
                int which = k;
                if ((s = field_at(&p, which, names[which], &v[which])) != SH_OK) return s;
                for (k = which + 1; k < F_N; k++)
                    if (kl == lens[k] && memcmp(key, names[k], kl) == 0) v[k] = v[which];
            } else if ((s = skip_value(&p, 1)) != SH_OK) {
                return s;
            }
            skip_ws(&p);
            if (p.i < n && line[p.i] == ',') { p.i++; continue; }
            if (p.i < n && line[p.i] == '}') { p.i++; break; }
            return fail(&p, p.i, "an object that is not closed (a missing ',' or '}')");
        }
    }
    skip_ws(&p);
    if (p.i < n) return fail(&p, p.i, "more after the object; each line must hold one object");
    if (!v[F_TEXT].p) {
        p.i = 0;
        return sh_error_set(err, SH_EFORMAT, 0, "no string field '%s' (set the text field with --text-field)", names[F_TEXT]);
    }
    doc->text = v[F_TEXT];
    doc->url = v[F_URL].p ? v[F_URL] : v[F_ID];
    doc->date = v[F_DATE];
    return SH_OK;
}

/* ---- the reader ------------------------------------------------------------ */

#define CHUNK ((size_t)1 << 16)

struct sh_jsonl_reader {
    sh_read_fn fn;
    void *ctx;
    int fd, own_fd;
    char *buf;
    size_t cap, start, end, scan, max_line;
    uint64_t lineno, consumed;
    uint64_t base;             /* the byte of the input where reading started (sh_jsonl_range) */
    uint64_t line_at;          /* the byte of the input where the last line handed out starts */
    size_t line_len;           /* and its length (without its newline) */
    uint64_t left;             /* bytes still to read (UINT64_MAX: to the end) */
    int eof, done;
    char name[512];
};

static ssize_t fd_read(void *ctx, void *buf, size_t n)
{
    return read(*(int *)ctx, buf, n);
}

static sh_status make(sh_read_fn fn, void *ctx, int fd, int own, const char *name, size_t max_line, sh_jsonl_reader **out,
                      sh_error *err)
{
    sh_jsonl_reader *r = (sh_jsonl_reader *)calloc(1, sizeof *r);
    *out = NULL;
    if (!r) { if (own) close(fd); return sh_error_set(err, SH_ENOMEM, 0, "out of memory"); }
    r->max_line = max_line ? max_line : SH_JSONL_MAX_LINE;
    r->cap = CHUNK;
    r->buf = (char *)malloc(r->cap);
    if (!r->buf) { free(r); if (own) close(fd); return sh_error_set(err, SH_ENOMEM, 0, "out of memory"); }
    r->fd = fd;
    r->own_fd = own;
    r->left = UINT64_MAX;
    r->fn = fn ? fn : fd_read;
    r->ctx = fn ? ctx : (void *)&r->fd;
    snprintf(r->name, sizeof r->name, "%s", name ? name : "JSON Lines input");
    *out = r;
    return SH_OK;
}

sh_status sh_jsonl_open(const char *path, size_t max_line, sh_jsonl_reader **out, sh_error *err)
{
    struct stat st;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    *out = NULL;
    if (fd < 0) {
        int e = errno;
        sh_error_set(err, SH_EIO, 0, "cannot read %s: %s", path, strerror(e));
        if (err) err->sys_errno = e;
        return SH_EIO;
    }
    if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
        close(fd);
        sh_error_set(err, SH_EIO, 0, "cannot read %s: it is a directory, not a JSON Lines file", path);
        if (err) err->sys_errno = EISDIR;
        return SH_EIO;
    }
    return make(NULL, NULL, fd, 1, path, max_line, out, err);
}

sh_status sh_jsonl_open_fd(int fd, const char *name, size_t max_line, sh_jsonl_reader **out, sh_error *err)
{
    return make(NULL, NULL, fd, 0, name, max_line, out, err);
}

sh_status sh_jsonl_open_fn(sh_read_fn fn, void *ctx, const char *name, size_t max_line, sh_jsonl_reader **out,
                           sh_error *err)
{
    return make(fn, ctx, -1, 0, name, max_line, out, err);
}

/* Read more into buf[end..cap): the bytes read, 0 at the end, -1 on failure. */
static ssize_t fill(sh_jsonl_reader *r, sh_error *err)
{
    for (;;) {
        size_t room = r->cap - r->end;
        ssize_t got;
        if (r->left < room) room = (size_t)r->left;
        if (room == 0) { r->eof = 1; return 0; }
        got = r->fn(r->ctx, r->buf + r->end, room);
        if (got > 0) {
            r->end += (size_t)got;
            if (r->left != UINT64_MAX) r->left -= (uint64_t)got;
            return got;
        }
        if (got == 0) { r->eof = 1; return 0; }
        if (errno == EINTR) continue;
        {
            int e = errno;
            sh_error_set(err, SH_EIO, 0, "cannot read %s: %s", r->name, strerror(e));
            if (err) err->sys_errno = e;
        }
        r->done = 1;
        return -1;
    }
}

/* A line over the limit: read past its end without keeping it. */
static sh_status skip_long_line(sh_jsonl_reader *r, sh_error *err)
{
    uint64_t line = ++r->lineno, bytes = r->end - r->start;
    r->start = r->end = r->scan = 0;
    for (;;) {
        char *nl;
        ssize_t got;
        if (r->eof) break;
        if ((got = fill(r, err)) < 0) return SH_EIO;
        nl = (char *)memchr(r->buf, '\n', r->end);
        if (nl) {
            size_t k = (size_t)(nl - r->buf);
            bytes += k;
            r->start = r->scan = k + 1;
            break;
        }
        bytes += r->end;
        r->end = 0;
    }
    r->consumed += bytes + (r->eof && r->start == 0 ? 0 : 1);
    return sh_error_set(err, SH_ELIMIT, 0, "%s: line %llu: longer than the limit of %zu bytes (%llu bytes; the largest "
                        "document, --max-bytes); skipped", r->name, (unsigned long long)line, r->max_line,
                        (unsigned long long)bytes);
}

sh_status sh_jsonl_next_line(sh_jsonl_reader *r, char **line, size_t *n, uint64_t *lineno, sh_error *err)
{
    *line = NULL;
    *n = 0;
    for (;;) {
        char *nl = NULL, *s;
        size_t len, k;
        int last = 0;
        if (r->done) return SH_OK;
        if (r->scan < r->end) nl = (char *)memchr(r->buf + r->scan, '\n', r->end - r->scan);
        if (!nl) {
            r->scan = r->end;
            if (r->end - r->start > r->max_line) {
                sh_status st = skip_long_line(r, err);
                *lineno = r->lineno;
                return st;
            }
            if (!r->eof) {
                if (r->start > 0 && r->end - r->start < r->cap / 2) { /* make room at the front */
                    memmove(r->buf, r->buf + r->start, r->end - r->start);
                    r->end -= r->start;
                    r->scan -= r->start;
                    r->start = 0;
                }
                if (r->end == r->cap) {
                    size_t nc = r->cap * 2, most = r->max_line + CHUNK + 1;
                    char *b;
                    if (nc > most) nc = most;
                    if (nc <= r->cap) nc = r->cap + CHUNK;
                    b = (char *)realloc(r->buf, nc);
                    if (!b) { r->done = 1; return sh_error_set(err, SH_ENOMEM, 0, "out of memory reading %s", r->name); }
                    r->buf = b;
                    r->cap = nc;
                }
                if (fill(r, err) < 0) return SH_EIO;
                continue;
            }
            if (r->start == r->end) { r->done = 1; return SH_OK; }
            last = 1; /* the last line has no newline */
        }
        s = r->buf + r->start;
        len = last ? r->end - r->start : (size_t)(nl - s);
        r->line_at = r->base + r->consumed;
        r->start += len + (last ? 0 : 1);
        r->scan = r->start;
        r->consumed += len + (last ? 0 : 1);
        r->lineno++;
        if (len > r->max_line) {
            *lineno = r->lineno;
            return sh_error_set(err, SH_ELIMIT, 0, "%s: line %llu: longer than the limit of %zu bytes (%zu bytes; the "
                                "largest document, --max-bytes); skipped", r->name, (unsigned long long)r->lineno,
                                r->max_line, len);
        }
        if (len > 0 && s[len - 1] == '\r') len--;
        if (r->lineno == 1 && len >= 3 && memcmp(s, "\xEF\xBB\xBF", 3) == 0) { s += 3; len -= 3; r->line_at += 3; } /* a byte order mark */
        for (k = 0; k < len && (s[k] == ' ' || s[k] == '\t' || s[k] == '\r'); k++) {}
        if (k == len) continue; /* blank */
        *line = s;
        *n = len;
        *lineno = r->lineno;
        r->line_len = len;
        return SH_OK;
    }
}

sh_status sh_jsonl_next(sh_jsonl_reader *r, const sh_jsonl_fields *f, sh_jsonl_doc *doc, uint64_t *lineno, sh_error *err)
{
    char *line;
    size_t n;
    sh_status s;
    memset(doc, 0, sizeof *doc);
    if ((s = sh_jsonl_next_line(r, &line, &n, lineno, err)) != SH_OK || !line) return s;
    if ((s = sh_jsonl_parse(line, n, f, doc, err)) != SH_OK) {
        char msg[sizeof err->msg];
        size_t at = err ? err->offset : 0;
        snprintf(msg, sizeof msg, "%s", err ? err->msg : "");
        memset(doc, 0, sizeof *doc);
        sh_error_set(err, s, at, "%.200s: line %llu: %.280s; skipped", r->name, (unsigned long long)*lineno, msg);
        return s;
    }
    return SH_OK;
}

sh_status sh_jsonl_range(sh_jsonl_reader *r, uint64_t start, uint64_t stop, uint64_t line, sh_error *err)
{
    if (r->fd < 0 || stop < start || lseek(r->fd, (off_t)start, SEEK_SET) < 0) {
        int e = errno;
        sh_error_set(err, SH_EIO, 0, "cannot read %s from byte %llu: %s", r->name, (unsigned long long)start,
                     stop < start ? "the piece ends before it starts" : strerror(e));
        return SH_EIO;
    }
    r->left = stop - start;
    r->base = start;
    r->lineno = line > 0 ? line - 1 : 0;
    return SH_OK;
}

uint64_t sh_jsonl_offset(const sh_jsonl_reader *r) { return r->consumed; }

uint64_t sh_jsonl_line_offset(const sh_jsonl_reader *r, size_t *len)
{
    if (len) *len = r->line_len;
    return r->line_at;
}

const char *sh_jsonl_name(const sh_jsonl_reader *r) { return r->name; }

void sh_jsonl_close(sh_jsonl_reader *r)
{
    if (!r) return;
    if (r->own_fd && r->fd >= 0) close(r->fd);
    free(r->buf);
    free(r);
}

size_t sh_text_escape_invalid(const char *s, size_t n, char *out)
{
    static const char hex[] = "0123456789ABCDEF";
    const unsigned char *u = (const unsigned char *)s;
    size_t i = 0, w = 0;
    while (i < n) {
        size_t k = utf8_len(u + i, n - i);
        if (k == 0 || u[i] < 0x20 || u[i] == 0x7F) {
            out[w++] = '%';
            out[w++] = hex[u[i] >> 4];
            out[w++] = hex[u[i] & 15];
            i++;
            continue;
        }
        memcpy(out + w, s + i, k);
        w += k;
        i += k;
    }
    return w;
}
