/* core/mail.h: messages reduced to what they say. Real-shaped messages:
 * multipart/alternative, quoted-printable soft line breaks, base64 wrapped at
 * 76 columns, ISO-8859-1, windows-1252 and UTF-8, RFC 2047 subjects, an
 * mbox with From_ lines and >From escaping. */
#include "mail.h"
#include "test.h"

#include <stdlib.h>

static sh_mail *m;

static const char *render(const char *msg, sh_mail_result *r)
{
    sh_error err;
    if (sh_mail_render(m, msg, strlen(msg), 0, r, &err) != SH_OK) {
        fprintf(stderr, "render failed: %s\n", err.msg);
        return "";
    }
    return r->text;
}

static void test_sniff_messages_mboxes_and_lookalikes(void)
{
    const char *eml = "Return-Path: <a@example.org>\r\nReceived: from x by y\r\nFrom: A <a@example.org>\r\n"
                      "Subject: hello\r\n\r\nbody\r\n";
    const char *mbox = "From a@example.org Thu Jan  1 00:00:00 2024\nFrom: a@example.org\nTo: b@example.org\n"
                       "Subject: x\n\nbody\n";
    const char *control = "Package: shingle\nVersion: 1.0\nDate: today\nDepends: lua\n\nDescription\n";
    const char *prose = "Note: this is a text file.\nSubject: it mentions a subject line.\n\nAnd goes on.\n";
    const char *html = "<html><body>From: nobody</body></html>";
    CHECK(sh_mail_sniff(eml, strlen(eml)) == SH_MAIL_MESSAGE);
    CHECK(sh_mail_sniff(mbox, strlen(mbox)) == SH_MAIL_MBOX);
    CHECK(sh_mail_sniff(control, strlen(control)) == SH_MAIL_NONE); /* only one field every mail has */
    CHECK(sh_mail_sniff(prose, strlen(prose)) == SH_MAIL_NONE);
    CHECK(sh_mail_sniff(html, strlen(html)) == SH_MAIL_NONE);
    CHECK(sh_mail_sniff("From here on, we talk.\nNothing else.\n", 37) == SH_MAIL_NONE);
    CHECK(sh_mail_sniff("", 0) == SH_MAIL_NONE);
}

/* A typical newsletter: text and HTML alternatives; the HTML one (the last)
 * is rendered, as a mail reader shows it; the subject in two encoded words. */
static void test_multipart_alternative_renders_the_last_alternative(void)
{
    const char *msg =
        "From: Shop <news@shop.example>\r\n"
        "To: you@example.org\r\n"
        "Subject: =?UTF-8?B?V2Vla2x5IGRlYWxz?= =?ISO-8859-1?Q?_f=FCr_Sie?=\r\n"
        "Message-ID: <1234@shop.example>\r\n"
        "Date: Tue, 2 Jan 2024 10:00:00 +0100\r\n"
        "MIME-Version: 1.0\r\n"
        "Content-Type: multipart/alternative;\r\n"
        "\tboundary=\"==b1==\"\r\n"
        "\r\n"
        "This is a multi-part message in MIME format.\r\n"
        "--==b1==\r\n"
        "Content-Type: text/plain; charset=iso-8859-1\r\n"
        "Content-Transfer-Encoding: quoted-printable\r\n"
        "\r\n"
        "Gr=FC=DFe! This line is long enough that it was broken with a soft line b=\r\n"
        "reak in the middle of a word.\r\n"
        "--==b1==\r\n"
        "Content-Type: text/html; charset=utf-8\r\n"
        "Content-Transfer-Encoding: base64\r\n"
        "\r\n"
        /* "<html><body><p>Gr\xc3\xbc\xc3\x9f""e! <b>Deals</b> of the week &amp; more.</p></body></html>" */
        "PGh0bWw+PGJvZHk+PHA+R3LDvMOfZSEgPGI+RGVhbHM8L2I+IG9mIHRoZSB3ZWVrICZhbXA7IG1v\r\n"
        "cmUuPC9wPjwvYm9keT48L2h0bWw+\r\n"
        "--==b1==--\r\n";
    sh_mail_result r;
    const char *t = render(msg, &r);
    CHECK(strcmp(r.subject, "Weekly deals f\xc3\xbcr Sie") == 0);
    CHECK(strcmp(r.message_id, "<1234@shop.example>") == 0);
    CHECK(strcmp(r.date, "Tue, 2 Jan 2024 10:00:00 +0100") == 0);
    CHECK(strstr(t, "Weekly deals f\xc3\xbcr Sie") == t);
    CHECK(strstr(t, "<p>Gr\xc3\xbc\xc3\x9f" "e! <b>Deals</b> of the week &amp; more.</p>") != NULL);
    CHECK(strstr(t, "soft line") == NULL); /* the plain alternative is left out */
    CHECK(strstr(t, "news@shop.example") == NULL); /* headers are set aside */
    CHECK(strstr(t, "multi-part message") == NULL); /* the preamble is not a part */
    CHECK(r.parts == 1 && r.html_parts == 1 && r.left_out == 1);
}

static void test_quoted_printable_soft_breaks_and_latin1(void)
{
    const char *msg =
        "From: a@example.org\n"
        "Subject: plain\n"
        "Content-Type: text/plain; charset=\"ISO-8859-1\"\n"
        "Content-Transfer-Encoding: quoted-printable\n"
        "\n"
        "Gr=FC=DFe! This line is long enough that it was broken with a soft line b=\n"
        "reak in the middle of a word, =3D signs, and a trailing soft break =  \n"
        "here. 5 < 6 & 7 > 3.\n";
    sh_mail_result r;
    const char *t = render(msg, &r);
    CHECK(strstr(t, "Gr\xc3\xbc\xc3\x9f" "e! This line") != NULL);
    CHECK(strstr(t, "soft line break in the middle") != NULL);
    CHECK(strstr(t, "= signs") != NULL);
    CHECK(strstr(t, "soft break here.") != NULL);
    CHECK(strstr(t, "5 &lt; 6 &amp; 7 &gt; 3.") != NULL); /* plain text escaped for the HTML canonicalizer */
    CHECK(r.parts == 1 && r.html_parts == 0);
}

/* Outlook's "smart quotes" under a windows-1252 label, and the same bytes
 * under an iso-8859-1 label (read as windows-1252, as clients do). */
static void test_windows_1252_quotes(void)
{
    const char *a = "From: a@example.org\nSubject: q\nContent-Type: text/plain; charset=windows-1252\n"
                    "Content-Transfer-Encoding: 8bit\n\n\x93quoted\x94 \x96 and \x80 5\n";
    const char *b = "From: a@example.org\nSubject: q\nContent-Type: text/plain; charset=iso-8859-1\n"
                    "Content-Transfer-Encoding: 8bit\n\n\x93quoted\x94 \x96 and \x80 5\n";
    sh_mail_result r;
    char first[256];
    snprintf(first, sizeof first, "%s", render(a, &r));
    CHECK(strstr(first, "\xe2\x80\x9cquoted\xe2\x80\x9d \xe2\x80\x93 and \xe2\x82\xac 5") != NULL);
    CHECK(strcmp(first, render(b, &r)) == 0);
}

static void test_base64_utf8_with_wrapped_lines_and_attachment_left_out(void)
{
    const char *msg =
        "From: a@example.org\n"
        "To: b@example.org\n"
        "Subject: report\n"
        "MIME-Version: 1.0\n"
        "Content-Type: multipart/mixed; boundary=XYZ\n"
        "\n"
        "--XYZ\n"
        "Content-Type: text/plain; charset=UTF-8\n"
        "Content-Transfer-Encoding: base64\n"
        "\n"
        /* "Caf\xc3\xa9 na\xc3\xafve r\xc3\xa9sum\xc3\xa9 \xe2\x80\x94 the report is attached.\n" */
        "Q2Fmw6kgbmHDr3ZlIHLDqXN1bcOp\n"
        "IOKAlCB0aGUgcmVwb3J0IGlzIGF0\n"
        "dGFjaGVkLgo=\n"
        "--XYZ\n"
        "Content-Type: application/pdf; name=report.pdf\n"
        "Content-Disposition: attachment; filename=report.pdf\n"
        "Content-Transfer-Encoding: base64\n"
        "\n"
        "JVBERi0xLjQKJcfs\n"
        "--XYZ\n"
        "Content-Type: text/plain\n"
        "Content-Disposition: attachment; filename=notes.txt\n"
        "\n"
        "attached notes are not the message\n"
        "--XYZ--\n";
    sh_mail_result r;
    const char *t = render(msg, &r);
    CHECK(strstr(t, "Caf\xc3\xa9 na\xc3\xafve r\xc3\xa9sum\xc3\xa9 \xe2\x80\x94 the report is attached.") != NULL);
    CHECK(strstr(t, "JVBER") == NULL && strstr(t, "attached notes") == NULL);
    CHECK(r.parts == 1 && r.left_out == 2);
}

static void test_forwarded_message_is_rendered(void)
{
    const char *msg =
        "From: a@example.org\nTo: b@example.org\nSubject: Fwd: minutes\nMIME-Version: 1.0\n"
        "Content-Type: multipart/mixed; boundary=\"outer\"\n\n"
        "--outer\nContent-Type: text/plain\n\nSee below.\n"
        "--outer\nContent-Type: message/rfc822\n\n"
        "From: c@example.org\nSubject: minutes of the meeting\nContent-Type: text/plain\n\n"
        "We agreed on everything.\n"
        "--outer--\n";
    sh_mail_result r;
    const char *t = render(msg, &r);
    CHECK(strstr(t, "Fwd: minutes") != NULL);
    CHECK(strstr(t, "See below.") != NULL);
    CHECK(strstr(t, "minutes of the meeting") != NULL);
    CHECK(strstr(t, "We agreed on everything.") != NULL);
    CHECK(strstr(t, "c@example.org") == NULL);
    CHECK(r.parts == 2);
}

static void test_damaged_mime_renders_what_there_is(void)
{
    const char *no_close = "From: a@example.org\nSubject: s\nContent-Type: multipart/mixed; boundary=b\n\n"
                           "--b\nContent-Type: text/plain\n\nfirst part\n--b\n\nsecond part, never closed\n";
    const char *no_boundary = "From: a@example.org\nSubject: s\nContent-Type: multipart/mixed\n\njust text\n";
    const char *deep_open = "From: a@example.org\nSubject: s\nContent-Type: text/plain; charset=x-no-such-charset\n\nwords\n";
    sh_mail_result r;
    const char *t = render(no_close, &r);
    CHECK(strstr(t, "first part") && strstr(t, "second part, never closed"));
    CHECK(r.warning && strstr(r.warning, "closing delimiter"));
    t = render(no_boundary, &r);
    CHECK(strstr(t, "just text") != NULL && r.warning != NULL);
    t = render(deep_open, &r);
    CHECK(strstr(t, "words") != NULL && r.warning && strstr(r.warning, "unknown charset x-no-such-charset"));
}

/* A part nested deeper than the limit is left out, not followed. */
static void test_nesting_is_bounded(void)
{
    char *msg = malloc(100000), *p = msg;
    int i;
    sh_mail_result r;
    sh_error err;
    p += sprintf(p, "From: a@example.org\nSubject: deep\n");
    for (i = 0; i < 200; i++) p += sprintf(p, "Content-Type: multipart/mixed; boundary=b%d\n\n--b%d\n", i, i);
    p += sprintf(p, "Content-Type: text/plain\n\ninnermost\n");
    CHECK(sh_mail_render(m, msg, (size_t)(p - msg), 0, &r, &err) == SH_OK);
    CHECK(strstr(r.text, "innermost") == NULL);
    CHECK(r.left_out == 1 && r.parts == 0);
    CHECK(r.warning != NULL); /* the first problem met: an unclosed multipart, then the depth */
    /* and the output is bounded */
    CHECK(sh_mail_render(m, msg, (size_t)(p - msg), 5, &r, &err) == SH_ELIMIT);
    free(msg);
}

static void test_mbox_with_from_lines_and_escapes(void)
{
    const char *mbox =
        "From alice@example.org Mon Jan  1 10:00:00 2024\n"
        "From: alice@example.org\nSubject: one\n\n"
        "First message.\n>From here on it is quoted.\n>>From two levels.\n\n"
        "From bob@example.org Mon Jan  1 11:00:00 2024\n"
        "From: bob@example.org\nSubject: two\n\n"
        "From the start of a line, escaped by nobody (mboxo writers miss it),\nbut not after an empty line.\n\n"
        "From carol@example.org Mon Jan  1 12:00:00 2024\n"
        "From: carol@example.org\nSubject: three\n\nThird.";
    sh_zstream *zs;
    sh_mbox *mb;
    sh_error err;
    const char *msg, *from;
    size_t len;
    uint64_t num;
    CHECK(sh_zstream_open_mem(mbox, strlen(mbox), "test.mbox", &zs, &err) == SH_OK);
    CHECK(sh_mbox_open(zs, 0, &mb, &err) == SH_OK);
    CHECK(sh_mbox_next(mb, &msg, &len, &from, &num, &err) == SH_OK && msg && num == 1);
    CHECK(strcmp(from, "alice@example.org Mon Jan  1 10:00:00 2024") == 0);
    CHECK(len == strlen("From: alice@example.org\nSubject: one\n\nFirst message.\nFrom here on it is quoted.\n>From two levels.\n"));
    CHECK(memcmp(msg, "From: alice@example.org\nSubject: one\n\nFirst message.\nFrom here on it is quoted.\n>From two levels.\n",
                 len) == 0);
    CHECK(sh_mbox_next(mb, &msg, &len, &from, &num, &err) == SH_OK && msg && num == 2);
    CHECK(strncmp(from, "bob@", 4) == 0);
    /* an unescaped body line "From the start ..." has no date: not a separator */
    CHECK(len > 0 && strstr(msg, "From the start of a line") != NULL && strstr(msg, "not after an empty line.") != NULL);
    CHECK(sh_mbox_next(mb, &msg, &len, &from, &num, &err) == SH_OK && msg && num == 3);
    CHECK(len == strlen("From: carol@example.org\nSubject: three\n\nThird.\n"));
    CHECK(sh_mbox_next(mb, &msg, &len, &from, &num, &err) == SH_OK && msg == NULL);
    sh_mbox_close(mb);
    sh_zstream_close(zs);
}

int main(void)
{
    sh_error err;
    if (sh_mail_new(&m, &err) != SH_OK) return 2;
    RUN(test_sniff_messages_mboxes_and_lookalikes);
    RUN(test_multipart_alternative_renders_the_last_alternative);
    RUN(test_quoted_printable_soft_breaks_and_latin1);
    RUN(test_windows_1252_quotes);
    RUN(test_base64_utf8_with_wrapped_lines_and_attachment_left_out);
    RUN(test_forwarded_message_is_rendered);
    RUN(test_damaged_mime_renders_what_there_is);
    RUN(test_nesting_is_bounded);
    RUN(test_mbox_with_from_lines_and_escapes);
    sh_mail_free(m);
    return TEST_END();
}
