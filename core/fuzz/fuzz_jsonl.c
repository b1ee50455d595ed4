/* JSON Lines (core/jsonl.c). Invariants:
 * - the streaming reader, fed in chunks of sizes taken from the input, gives
 *   the same documents and refusals as parsing each line of the input alone;
 * - a parsed document's spans lie inside the line; URL and date are UTF-8
 *   without control characters;
 * - the decoded fields, written back as JSON, parse to the same fields. */
#include "fuzz.h"
#include "jsonl.h"

typedef struct feed { const uint8_t *p; size_t n, off, k; } feed;

static ssize_t feed_read(void *ctx, void *buf, size_t n)
{
    feed *f = (feed *)ctx;
    size_t k = f->n - f->off, step = 1 + (f->k++ * 7 + f->p[f->off % (f->n ? f->n : 1)]) % 97;
    if (k > n) k = n;
    if (k > step) k = step;
    memcpy(buf, f->p + f->off, k);
    f->off += k;
    return (ssize_t)k;
}

/* JSON string of s[0..n) into out (6n + 2 bytes at most) */
static size_t enc(const char *s, size_t n, char *out)
{
    size_t i, w = 0;
    out[w++] = '"';
    for (i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\') { out[w++] = '\\'; out[w++] = (char)c; }
        else if (c < 0x20) w += (size_t)sprintf(out + w, "\\u%04x", c);
        else out[w++] = (char)c;
    }
    out[w++] = '"';
    return w;
}

static int same(sh_span a, sh_span b)
{
    if (!a.p || !b.p) return !a.p && !b.p;
    return a.n == b.n && memcmp(a.p, b.p, a.n) == 0;
}

static void check_doc(const char *line, size_t n, const sh_jsonl_doc *d)
{
    FUZZ_CHECK(d->text.p && d->text.p >= line && d->text.p + d->text.n <= line + n);
    if (d->url.p) {
        size_t i;
        FUZZ_CHECK(d->url.p >= line && d->url.p + d->url.n <= line + n);
        FUZZ_CHECK(fuzz_utf8_ok((const unsigned char *)d->url.p, d->url.n));
        for (i = 0; i < d->url.n; i++) FUZZ_CHECK((unsigned char)d->url.p[i] >= 0x20 && d->url.p[i] != 0x7F);
    }
    if (d->date.p) {
        FUZZ_CHECK(d->date.p >= line && d->date.p + d->date.n <= line + n);
        FUZZ_CHECK(fuzz_utf8_ok((const unsigned char *)d->date.p, d->date.n));
    }
    {
        /* written back and parsed again: the same fields */
        char *j = (char *)malloc(6 * n + 64), *cp;
        size_t w = 0;
        sh_jsonl_doc e;
        sh_error err;
        w += (size_t)sprintf(j + w, "{\"text\":");
        w += enc(d->text.p, d->text.n, j + w);
        if (d->url.p) { w += (size_t)sprintf(j + w, ",\"url\":"); w += enc(d->url.p, d->url.n, j + w); }
        if (d->date.p) { w += (size_t)sprintf(j + w, ",\"date\":"); w += enc(d->date.p, d->date.n, j + w); }
        j[w++] = '}';
        cp = (char *)malloc(w);
        memcpy(cp, j, w);
        FUZZ_CHECK(sh_jsonl_parse(cp, w, NULL, &e, &err) == SH_OK);
        /* a lone surrogate came in as an escape and is U+FFFD now: the text compares after it */
        FUZZ_CHECK(same(e.text, d->text) && same(e.url, d->url) && same(e.date, d->date));
        free(cp);
        free(j);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    feed f = { data, size, 0, 0 };
    sh_jsonl_reader *r;
    sh_error err;
    size_t max_line = 1 + (size ? data[0] : 0) * 4, pos = 0;
    uint64_t expect_line = 0;
    if (sh_jsonl_open_fn(feed_read, &f, "fuzz", max_line, &r, &err) != SH_OK) return 0;
    for (;;) {
        sh_jsonl_doc d;
        uint64_t line = 0;
        sh_status s = sh_jsonl_next(r, NULL, &d, &line, &err);
        /* the same line, cut from the input by hand */
        char *own;
        size_t start, end, len;
        sh_jsonl_doc o;
        sh_error oerr;
        sh_status os;
        if (s == SH_OK && !d.text.p) {
            /* the end: only blank lines may be left */
            for (; pos < size; pos++) FUZZ_CHECK(data[pos] == ' ' || data[pos] == '\t' || data[pos] == '\r' || data[pos] == '\n' ||
                                                 (pos < 3 && expect_line == 0));
            break;
        }
        FUZZ_CHECK(s == SH_OK || s == SH_EFORMAT || s == SH_ELIMIT);
        FUZZ_CHECK(line > expect_line);
        /* advance pos to that line */
        while (expect_line + 1 < line) { while (pos < size && data[pos] != '\n') pos++; pos++; expect_line++; }
        start = pos;
        while (pos < size && data[pos] != '\n') pos++;
        end = pos;
        pos++;
        expect_line = line;
        len = end - start;
        /* an over-long line is beyond a configured limit (SH_ELIMIT), not malformed */
        if (len > max_line) { FUZZ_CHECK(s == SH_ELIMIT); continue; }
        FUZZ_CHECK(s != SH_ELIMIT);
        if (len > 0 && data[end - 1] == '\r') len--;
        if (line == 1 && len >= 3 && memcmp(data + start, "\xEF\xBB\xBF", 3) == 0) { start += 3; len -= 3; }
        own = (char *)malloc(len ? len : 1);
        memcpy(own, data + start, len);
        os = sh_jsonl_parse(own, len, NULL, &o, &oerr);
        FUZZ_CHECK(os == s);
        if (s == SH_OK) {
            FUZZ_CHECK(same(o.text, d.text) && same(o.url, d.url) && same(o.date, d.date));
            check_doc(own, len, &o);
        }
        free(own);
    }
    FUZZ_CHECK(sh_jsonl_offset(r) == size);
    sh_jsonl_close(r);
    return 0;
}
