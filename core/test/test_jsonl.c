#include "jsonl.h"
#include "test.h"

#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

/* Parse a copy of s (the parser decodes in place). */
static sh_status parse(const char *s, sh_jsonl_doc *d, char *copy, sh_error *err)
{
    size_t n = strlen(s);
    memcpy(copy, s, n + 1);
    return sh_jsonl_parse(copy, n, NULL, d, err);
}

static int span_is(sh_span s, const char *want)
{
    return s.p && s.n == strlen(want) && memcmp(s.p, want, s.n) == 0;
}

static void takes_text_url_and_date_of_a_line(void)
{
    char buf[512];
    sh_jsonl_doc d;
    sh_error err;
    CHECK(parse("{\"url\":\"http://a.example/x\",\"text\":\"some words\",\"date\":\"2026-11-01\",\"other\":[1,{\"k\":null}]}", &d,
                buf, &err) == SH_OK);
    CHECK(span_is(d.text, "some words"));
    CHECK(span_is(d.url, "http://a.example/x"));
    CHECK(span_is(d.date, "2026-11-01"));
    /* id stands for a missing url; null is absent */
    CHECK(parse(" { \"id\" : 17 , \"text\" : \"\" , \"url\" : null } ", &d, buf, &err) == SH_OK);
    CHECK(span_is(d.url, "17"));
    CHECK(d.text.p != NULL && d.text.n == 0);
    CHECK(d.date.p == NULL);
    /* an integer date is taken as its digits */
    CHECK(parse("{\"text\":\"x\",\"date\":20261101}", &d, buf, &err) == SH_OK);
    CHECK(span_is(d.date, "20261101"));
    CHECK(d.url.p == NULL);
}

static void decodes_escapes_and_surrogate_pairs_in_place(void)
{
    char buf[512];
    sh_jsonl_doc d;
    sh_error err;
    CHECK(parse("{\"text\":\"a\\\"b\\\\c\\/d\\n\\t\\u00e9\\u20ac\\ud83d\\ude00 \\ud800x\"}", &d, buf, &err) == SH_OK);
    CHECK(span_is(d.text, "a\"b\\c/d\n\t\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80 \xef\xbf\xbdx"));
    CHECK(parse("{\"text\":\"\\u0000nul\"}", &d, buf, &err) == SH_OK);
    CHECK(d.text.n == 4 && d.text.p[0] == 0 && memcmp(d.text.p + 1, "nul", 3) == 0);
    /* raw bytes that are not UTF-8 stay in a text, for the shingler's policy */
    CHECK(parse("{\"text\":\"caf\xe9\"}", &d, buf, &err) == SH_OK);
    CHECK(span_is(d.text, "caf\xe9"));
}

static void refuses_values_that_are_not_faithful_text(void)
{
    static const struct { const char *line, *msg; } bad[] = {
        { "{\"text\":\"x\",\"date\":[1]}", "column 20: the date 'date' is an array; it must be a string or an integer" },
        { "{\"text\":\"x\",\"url\":5.0}", "column 19: the URL 'url' is a number with a fraction or an exponent (5.0); give it as a string" },
        { "{\"text\":\"x\",\"date\":1e999}", "column 20: the date 'date' is a number with a fraction or an exponent (1e999); give it as a string" },
        { "{\"text\":\"x\",\"url\":\"http://a/\xff\"}", "column 19: the URL 'url' is not valid UTF-8 text; give it in UTF-8 (or percent-encoded)" },
        { "{\"text\":\"x\",\"url\":\"\\udc00\"}", "column 19: the URL 'url' is not valid UTF-8 text; give it in UTF-8 (or percent-encoded)" },
        { "{\"text\":\"x\",\"url\":\"a\\tb\"}", "column 19: the URL 'url' holds a control character" },
        { "{\"text\":\"x\",\"url\":true}", "column 19: the URL 'url' is a boolean; it must be a string or an integer" },
        { "{\"text\":5}", "column 9: the text field 'text' is a number; it must be a string" },
        { "{\"text\":{\"a\":1}}", "column 9: the text field 'text' is an object; it must be a string" },
        { "{\"url\":\"u\"}", "no string field 'text' (set the text field with --text-field)" },
        { "{\"text\":null}", "no string field 'text' (set the text field with --text-field)" },
        { "[1,2]", "column 1: a JSON value that is not an object; each line must be one object" },
        { "{ broken", "column 3: an object member without a quoted name" },
        { "{\"text\":\"x\"} {}", "column 14: more after the object; each line must hold one object" },
        { "{\"text\":\"x\"", "column 12: an object that is not closed (a missing ',' or '}')" },
        { "{\"text\":\"a\tb\"}", "column 11: a control character (0x09) inside a string; JSON needs it escaped (\\n, \\t, \\u0009)" },
        { "{\"text\":\"x\\q\"}", "column 11: an unknown escape '\\q' in a string" },
        { "{\"text\":\"x\\u12\"}", "column 11: a \\u escape without four hex digits" },
        { "{\"text\":\"x\",\"n\":-}", "column 17: a number without digits" },
        { "{\"text\":\"x\",\"n\":1.}", "column 19: a number with no digits after its decimal point" },
        { "{\"text\":\"x\",\"n\":tru}", "column 17: 't' where a value should be" },
        { "{\"text\":\"x", "column 9: a string that does not end (a missing '\"')" },
    };
    size_t i;
    for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char buf[512];
        sh_jsonl_doc d;
        sh_error err;
        sh_status s = parse(bad[i].line, &d, buf, &err);
        CHECK(s == SH_EFORMAT);
        if (s == SH_EFORMAT && strcmp(err.msg, bad[i].msg) != 0)
            TEST_FAIL_AT_("%s\n  got:  %s\n  want: %s", bad[i].line, err.msg, bad[i].msg);
    }
}

static void refuses_nesting_deeper_than_the_limit(void)
{
    char line[4 * SH_JSONL_MAX_DEPTH + 64];
    sh_jsonl_doc d;
    sh_error err;
    size_t n = 0, k;
    n += (size_t)sprintf(line, "{\"text\":\"x\",\"a\":");
    for (k = 0; k < SH_JSONL_MAX_DEPTH - 1; k++) line[n++] = '[';
    for (k = 0; k < SH_JSONL_MAX_DEPTH - 1; k++) line[n++] = ']';
    line[n++] = '}';
    CHECK(sh_jsonl_parse(line, n, NULL, &d, &err) == SH_OK);
    n = (size_t)sprintf(line, "{\"text\":\"x\",\"a\":");
    for (k = 0; k < SH_JSONL_MAX_DEPTH; k++) line[n++] = '[';
    for (k = 0; k < SH_JSONL_MAX_DEPTH; k++) line[n++] = ']';
    line[n++] = '}';
    CHECK(sh_jsonl_parse(line, n, NULL, &d, &err) == SH_EFORMAT);
    CHECK(strstr(err.msg, "nested deeper than 64") != NULL);
}

static void takes_the_fields_the_caller_names(void)
{
    char buf[256];
    sh_jsonl_doc d;
    sh_error err;
    sh_jsonl_fields f = { "body", "link", "key", "when" };
    const char *s = "{\"text\":\"no\",\"body\":\"yes\",\"key\":\"k1\",\"when\":\"now\"}";
    memcpy(buf, s, strlen(s) + 1);
    CHECK(sh_jsonl_parse(buf, strlen(s), &f, &d, &err) == SH_OK);
    CHECK(span_is(d.text, "yes") && span_is(d.url, "k1") && span_is(d.date, "now"));
    /* one name for two fields */
    f.url = "id";
    f.id = "id";
    s = "{\"body\":\"b\",\"id\":\"same\"}";
    memcpy(buf, s, strlen(s) + 1);
    CHECK(sh_jsonl_parse(buf, strlen(s), &f, &d, &err) == SH_OK);
    CHECK(span_is(d.url, "same"));
}

/* ---- the reader ---------------------------------------------------------- */

typedef struct feed {
    const char *s;
    size_t n, off, step;
    size_t most_asked;
} feed;

/* hands out at most step bytes a call, to cross every buffer boundary */
static ssize_t feed_read(void *ctx, void *buf, size_t n)
{
    feed *f = (feed *)ctx;
    size_t k = f->n - f->off;
    if (n > f->most_asked) f->most_asked = n;
    if (k > n) k = n;
    if (k > f->step) k = f->step;
    memcpy(buf, f->s + f->off, k);
    f->off += k;
    return (ssize_t)k;
}

static void streams_lines_with_numbers_skipping_blank_ones(void)
{
    const char *in = "\xEF\xBB\xBF{\"text\":\"one\"}\r\n\n   \n{\"text\":\"two\",\"url\":\"u2\"}\n{ broken\n{\"text\":\"last\"}";
    size_t steps[] = { 1, 2, 7, 1000 };
    size_t k;
    for (k = 0; k < 4; k++) {
        feed f = { in, strlen(in), 0, steps[k], 0 };
        sh_jsonl_reader *r;
        sh_jsonl_doc d;
        sh_error err;
        uint64_t line = 0;
        CHECK(sh_jsonl_open_fn(feed_read, &f, "in.jsonl", 0, &r, &err) == SH_OK);
        CHECK(sh_jsonl_next(r, NULL, &d, &line, &err) == SH_OK && span_is(d.text, "one") && line == 1);
        CHECK(sh_jsonl_next(r, NULL, &d, &line, &err) == SH_OK && span_is(d.text, "two") && span_is(d.url, "u2") && line == 4);
        CHECK(sh_jsonl_next(r, NULL, &d, &line, &err) == SH_EFORMAT && line == 5);
        CHECK(strcmp(err.msg, "in.jsonl: line 5: column 3: an object member without a quoted name; skipped") == 0);
        CHECK(sh_jsonl_next(r, NULL, &d, &line, &err) == SH_OK && span_is(d.text, "last") && line == 6);
        CHECK(sh_jsonl_next(r, NULL, &d, &line, &err) == SH_OK && d.text.p == NULL);
        CHECK(sh_jsonl_offset(r) == strlen(in));
        sh_jsonl_close(r);
    }
}

/* A line over the limit is refused having kept at most the limit (plus a
 * read chunk) in memory: the feed sees reads no larger than that. */
static void refuses_a_line_over_the_limit_without_keeping_it(void)
{
    size_t big = 3u << 20, limit = 1u << 20, n = 0;
    char *in = (char *)malloc(big + 100);
    feed f;
    sh_jsonl_reader *r;
    sh_jsonl_doc d;
    sh_error err;
    uint64_t line = 0;
    n += (size_t)sprintf(in, "{\"text\":\"a\"}\n{\"text\":\"");
    memset(in + n, 'x', big);
    n += big;
    n += (size_t)sprintf(in + n, "\"}\n{\"text\":\"b\"}\n");
    f.s = in; f.n = n; f.off = 0; f.step = 1u << 20; f.most_asked = 0;
    CHECK(sh_jsonl_open_fn(feed_read, &f, "big.jsonl", limit, &r, &err) == SH_OK);
    CHECK(sh_jsonl_next(r, NULL, &d, &line, &err) == SH_OK && span_is(d.text, "a"));
    CHECK(sh_jsonl_next(r, NULL, &d, &line, &err) == SH_ELIMIT);
    CHECK(strstr(err.msg, "big.jsonl: line 2: longer than the limit of 1048576 bytes") != NULL);
    CHECK(sh_jsonl_next(r, NULL, &d, &line, &err) == SH_OK && span_is(d.text, "b") && line == 3);
    CHECK(sh_jsonl_next(r, NULL, &d, &line, &err) == SH_OK && d.text.p == NULL);
    CHECK(f.most_asked <= limit + (1u << 16) + 1);
    CHECK(sh_jsonl_offset(r) == n);
    sh_jsonl_close(r);
    /* a line of exactly the limit is taken */
    n = (size_t)sprintf(in, "{\"text\":\"");
    memset(in + n, 'y', limit - n - 2);
    n = limit - 2;
    n += (size_t)sprintf(in + n, "\"}");
    f.s = in; f.n = n; f.off = 0; f.step = 4096;
    CHECK(sh_jsonl_open_fn(feed_read, &f, "exact.jsonl", limit, &r, &err) == SH_OK);
    CHECK(sh_jsonl_next(r, NULL, &d, &line, &err) == SH_OK && d.text.n == limit - 11);
    sh_jsonl_close(r);
    free(in);
}

static ssize_t failing_read(void *ctx, void *buf, size_t n)
{
    (void)ctx; (void)buf; (void)n;
    errno = EIO;
    return -1;
}

static void names_the_input_on_a_read_error_and_a_directory(void)
{
    sh_jsonl_reader *r;
    sh_jsonl_doc d;
    sh_error err;
    uint64_t line;
    CHECK(sh_jsonl_open_fn(failing_read, NULL, "disk.jsonl", 0, &r, &err) == SH_OK);
    CHECK(sh_jsonl_next(r, NULL, &d, &line, &err) == SH_EIO);
    CHECK(strcmp(err.msg, "cannot read disk.jsonl: Input/output error") == 0);
    CHECK(sh_jsonl_next(r, NULL, &d, &line, &err) == SH_OK && d.text.p == NULL);
    sh_jsonl_close(r);
    CHECK(sh_jsonl_open("/", 0, &r, &err) == SH_EIO);
    CHECK(strcmp(err.msg, "cannot read /: it is a directory, not a JSON Lines file") == 0);
    CHECK(sh_jsonl_open("/nonexistent/x.jsonl", 0, &r, &err) == SH_EIO);
    CHECK(strcmp(err.msg, "cannot read /nonexistent/x.jsonl: No such file or directory") == 0);
}

int main(void)
{
    RUN(takes_text_url_and_date_of_a_line);
    RUN(decodes_escapes_and_surrogate_pairs_in_place);
    RUN(refuses_values_that_are_not_faithful_text);
    RUN(refuses_nesting_deeper_than_the_limit);
    RUN(takes_the_fields_the_caller_names);
    RUN(streams_lines_with_numbers_skipping_blank_ones);
    RUN(refuses_a_line_over_the_limit_without_keeping_it);
    RUN(names_the_input_on_a_read_error_and_a_directory);
    return TEST_END();
}
