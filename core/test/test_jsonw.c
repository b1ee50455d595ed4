/* core/jsonw.c: JSON text for the outputs (see jsonw.h). */
#include "jsonw.h"
#include "jsonl.h"
#include "canon.h"
#include "test.h"

#include <math.h>
#include <stdlib.h>

static int num_is(double x, const char *want)
{
    sh_textbuf b = { NULL, 0, 0 };
    int ok = sh_json_number(&b, x) && b.n == strlen(want) && memcmp(b.p, want, b.n) == 0;
    if (!ok) fprintf(stderr, "number %.17g gave '%.*s', not '%s'\n", x, (int)b.n, b.p ? b.p : "", want);
    sh_textbuf_free(&b);
    return ok;
}

static int str_is(const char *s, size_t n, const char *want)
{
    sh_textbuf b = { NULL, 0, 0 };
    int ok = sh_json_string(&b, s, n) && b.n == strlen(want) && memcmp(b.p, want, b.n) == 0;
    if (!ok) fprintf(stderr, "string gave '%.*s', not '%s'\n", (int)b.n, b.p ? b.p : "", want);
    sh_textbuf_free(&b);
    return ok;
}

static void writes_integer_values_as_digits(void)
{
    CHECK(num_is(67.0, "67"));
    CHECK(num_is(-3.0, "-3"));
    CHECK(num_is(0.0, "0"));
    CHECK(num_is(9007199254740992.0, "9007199254740992"));
    CHECK(num_is(123456789012345.0, "123456789012345"));
    CHECK(num_is(1e20, "1e+20"));
    {
        sh_textbuf b = { NULL, 0, 0 };
        CHECK(sh_json_integer(&b, INT64_MIN) && b.n == 20 && memcmp(b.p, "-9223372036854775808", 20) == 0);
        sh_textbuf_free(&b);
    }
}

static void writes_the_shortest_digits_that_read_back(void)
{
    static const double xs[] = { 0.1, 0.8333, 1.0 / 3, 2.0 / 3, 1e-300, 5e-324, 1.7976931348623157e308, -0.3, 123.456 };
    CHECK(num_is(0.1, "0.1"));
    CHECK(num_is(1.0 / 3, "0.3333333333333333"));
    CHECK(num_is(0.8333, "0.8333"));
    for (size_t i = 0; i < sizeof xs / sizeof xs[0]; i++) {
        sh_textbuf b = { NULL, 0, 0 };
        char t[40];
        CHECK(sh_json_number(&b, xs[i]) && b.n < sizeof t);
        memcpy(t, b.p, b.n);
        t[b.n] = 0;
        CHECK(strtod(t, NULL) == xs[i]);
        sh_textbuf_free(&b);
    }
}

static void writes_nan_and_infinities_as_null(void)
{
    CHECK(num_is(NAN, "null"));
    CHECK(num_is(INFINITY, "null"));
    CHECK(num_is(-INFINITY, "null"));
}

static void escapes_what_json_needs_and_not_the_slash(void)
{
    CHECK(str_is("http://a/b", 10, "\"http://a/b\""));
    CHECK(str_is("q\"b\\s\n\t\r\b\f\x01\x1f\x7f", 13, "\"q\\\"b\\\\s\\n\\t\\r\\b\\f\\u0001\\u001f\\u007f\""));
    CHECK(str_is("a\0b", 3, "\"a\\u0000b\""));
    CHECK(str_is("", 0, "\"\""));
}

static void replaces_bytes_that_are_not_utf8(void)
{
    CHECK(str_is("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", 14, "\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\""));
    CHECK(str_is("caf\xe9", 4, "\"caf\xef\xbf\xbd\""));
    CHECK(str_is("\xc0\xaf", 2, "\"\xef\xbf\xbd\xef\xbf\xbd\""));                       /* overlong */
    CHECK(str_is("\xed\xa0\x80", 3, "\"\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\""));       /* a surrogate */
    CHECK(str_is("\xe2\x82", 2, "\"\xef\xbf\xbd\xef\xbf\xbd\""));                       /* cut short */
    {
        sh_textbuf b = { NULL, 0, 0 };
        int changed = 0;
        CHECK(sh_json_utf8(&b, "x\xff\"", 3, &changed) && changed && b.n == 5 && memcmp(b.p, "x\xef\xbf\xbd\"", 5) == 0);
        sh_textbuf_free(&b);
        CHECK(sh_json_utf8(&b, "ok \xc3\xa9", 5, &changed) && !changed && b.n == 5);
        sh_textbuf_free(&b);
    }
}

/* Every string of up to three bytes from an alphabet of edge bytes, written
 * and read back by the JSON Lines parser (a strict reader): it must parse,
 * and give the input back whenever the input was UTF-8 with no control
 * character. */
static void what_it_writes_a_strict_reader_takes(void)
{
    static const unsigned char alpha[] = { 0x00, 0x1f, '"', '\\', '/', 'a', 0x7f, 0x80, 0xbf, 0xc2, 0xc3, 0xa9,
                                           0xe0, 0xed, 0xf0, 0xf4, 0xff };
    size_t na = sizeof alpha, bad = 0, lost = 0;
    for (size_t len = 0; len <= 3; len++) {
        size_t total = 1;
        for (size_t i = 0; i < len; i++) total *= na;
        for (size_t k = 0; k < total; k++) {
            char s[4], line[64];
            size_t v = k;
            for (size_t i = 0; i < len; i++) { s[i] = (char)alpha[v % na]; v /= na; }
            sh_textbuf b = { NULL, 0, 0 };
            sh_textbuf_put(&b, "{\"url\":\"u\",\"text\":", 18);
            sh_json_string(&b, s, len);
            sh_textbuf_put(&b, "}", 1);
            memcpy(line, b.p, b.n);
            line[b.n] = 0;
            sh_jsonl_doc d;
            sh_error err;
            if (sh_jsonl_parse(line, b.n, NULL, &d, &err) != SH_OK) bad++;
            else {
                sh_error e2;
                int clean = sh_utf8_check(s, len, &e2) == SH_OK;
                if (clean && (d.text.n != len || memcmp(d.text.p, s, len) != 0)) lost++;
            }
            sh_textbuf_free(&b);
        }
    }
    CHECK(bad == 0);
    CHECK(lost == 0);
}

int main(void)
{
    RUN(writes_integer_values_as_digits);
    RUN(writes_the_shortest_digits_that_read_back);
    RUN(writes_nan_and_infinities_as_null);
    RUN(escapes_what_json_needs_and_not_the_slash);
    RUN(replaces_bytes_that_are_not_utf8);
    RUN(what_it_writes_a_strict_reader_takes);
    return TEST_END();
}
