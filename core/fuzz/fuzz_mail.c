/* Email (core/mail.c): one message rendered, or an mbox archive split into
 * messages that are each rendered. The first input byte picks the mode and
 * the limits. Invariants:
 *   - rendering fails only for the output limit (SH_ELIMIT): damaged MIME is
 *     rendered as far as it goes; the rendering is at most max_out bytes and
 *     NUL-terminated, as are subject, message id and date;
 *   - the limit is exact: max_out = the rendering's size renders the same,
 *     one byte less is SH_ELIMIT;
 *   - rendering is deterministic (the same message twice in one parser,
 *     with other messages between, gives the same bytes and counts);
 *   - a message without HTML parts renders to escaped text: every '<' is
 *     one of the "<p>" separators, and no NUL byte is left;
 *   - mbox: messages are numbered 1, 2, ... (over-long ones included), none
 *     is longer than the limit, and together they are no longer than the
 *     archive (unescaping only removes bytes); the reader ends. */
#include "fuzz.h"
#include "mail.h"
#include "zio.h"

static sh_mail *parser;

static void check_render(const char *in, size_t n, size_t max_out)
{
    sh_mail_result r, r2;
    sh_error err;
    sh_status st;
    char *copy;
    size_t i;
    st = sh_mail_render(parser, in, n, max_out, &r, &err);
    if (st != SH_OK) {
        FUZZ_CHECK(st == SH_ELIMIT && max_out > 0);
        return;
    }
    FUZZ_CHECK(r.text != NULL && r.text[r.len] == '\0');
    FUZZ_CHECK(max_out == 0 || r.len <= max_out);
    FUZZ_CHECK(r.subject && r.message_id && r.date);
    FUZZ_CHECK(r.parts >= 0 && r.left_out >= 0 && r.html_parts >= 0 && r.html_parts <= r.parts);
    if (r.html_parts == 0) {
        for (i = 0; i < r.len; i++) {
            FUZZ_CHECK(r.text[i] != '\0');
            if (r.text[i] == '<') FUZZ_CHECK(i + 3 <= r.len && memcmp(r.text + i, "<p>", 3) == 0);
            if (r.text[i] == '>') FUZZ_CHECK(i >= 2 && memcmp(r.text + i - 2, "<p>", 3) == 0);
        }
    }
    copy = (char *)malloc(r.len + 1);
    memcpy(copy, r.text, r.len + 1);
    {
        int parts = r.parts, left = r.left_out, html = r.html_parts;
        size_t len = r.len;
        /* something else in between, then the same message again */
        static const char other[] = "Subject: x\r\nContent-Type: text/plain; charset=koi8-r\r\n\r\n\xc1\xc2";
        FUZZ_CHECK(sh_mail_render(parser, other, sizeof other - 1, 0, &r2, &err) == SH_OK);
        FUZZ_CHECK(sh_mail_render(parser, in, n, 0, &r2, &err) == SH_OK);
        FUZZ_CHECK(r2.len == len && memcmp(r2.text, copy, len) == 0);
        FUZZ_CHECK(r2.parts == parts && r2.left_out == left && r2.html_parts == html);
        if (len > 0) {
            FUZZ_CHECK(sh_mail_render(parser, in, n, len, &r2, &err) == SH_OK && r2.len == len);
            if (len > 1) FUZZ_CHECK(sh_mail_render(parser, in, n, len - 1, &r2, &err) == SH_ELIMIT);
        }
    }
    free(copy);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    unsigned sel;
    const char *in;
    size_t n;
    sh_error err;
    if (size == 0) return 0;
    if (!parser) FUZZ_CHECK(sh_mail_new(&parser, &err) == SH_OK);
    sel = data[0];
    in = (const char *)data + 1;
    n = size - 1;
    (void)sh_mail_sniff(in, n);
    if (!(sel & 1)) {
        check_render(in, n, (sel & 2) ? (sel >> 2) * 4 : 0);
    } else {
        sh_zstream *zs;
        sh_mbox *mb;
        const char *msg, *from;
        size_t len, total = 0, max = (sel & 2) ? 1 + (sel >> 2) * 8 : 0;
        uint64_t number, expect = 1;
        size_t rounds = 0;
        FUZZ_CHECK(sh_zstream_open_mem(in, n, "fuzz", &zs, &err) == SH_OK);
        FUZZ_CHECK(sh_mbox_open(zs, max, &mb, &err) == SH_OK);
        for (;;) {
            sh_status st = sh_mbox_next(mb, &msg, &len, &from, &number, &err);
            FUZZ_CHECK(++rounds <= n + 2);
            if (st == SH_ELIMIT) {
                FUZZ_CHECK(max > 0);
                if (sh_zstream_failed(zs) != SH_OK) break;
                expect++;
                continue;
            }
            if (st != SH_OK) {
                /* only a damaged compressed archive ends a read */
                FUZZ_CHECK(st == SH_EFORMAT && sh_zio_kind(in, n) != SH_Z_PLAIN);
                break;
            }
            if (!msg) break;
            FUZZ_CHECK(number == expect);
            expect++;
            FUZZ_CHECK(max == 0 || len <= max);
            FUZZ_CHECK(from != NULL && strlen(from) <= n);
            total += len;
            if (sh_zio_kind(in, n) == SH_Z_PLAIN) FUZZ_CHECK(total <= n);
            check_render(msg, len, 0);
        }
        /* the end is sticky */
        FUZZ_CHECK(sh_mbox_next(mb, &msg, &len, &from, &number, &err) != SH_OK || msg == NULL);
        sh_mbox_close(mb);
        sh_zstream_close(zs);
    }
    return 0;
}
