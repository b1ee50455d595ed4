/* Email as documents: an RFC 5322 message (an .eml file, a message of an
 * mbox archive) reduced to what it says, so that templated mail with
 * different headers and different markup clusters by its text.
 *
 *   - the header block is set aside, except Subject (RFC 2047 encoded words
 *     decoded), which is kept as text;
 *   - MIME (RFC 2045-2049) is walked: multipart/mixed, related, ... render
 *     every text part; multipart/alternative renders its last part that can
 *     be rendered (RFC 2046 5.1.4: the last is the richest, what a reader
 *     shows); message/rfc822 renders the enclosed message; attachments
 *     (Content-Disposition: attachment) and non-text parts are left out;
 *   - bodies are decoded (quoted-printable with soft line breaks, base64
 *     across wrapped lines) and converted from their charset to UTF-8 with
 *     glibc's iconv (ISO-8859-1 and US-ASCII read as windows-1252, as mail
 *     clients do; a byte that does not convert becomes U+FFFD);
 *   - the result is HTML: plain-text parts escaped (& < >), HTML parts as
 *     they are, so that one pass of the HTML canonicalizer (core/canon.h)
 *     strips every part's markup and nothing else.
 *
 * mbox archives (RFC 4155): a message starts at a line "From SENDER DATE"
 * (the date with a time or a year, so that a body line "From the start ..."
 * that a writer failed to escape does not split a message); lines ">From ",
 * ">>From ", ... lose one ">" (mboxrd; this also undoes mboxo's escaping).
 *
 * Buffer in, buffer out: every function takes bytes and a length (no file
 * access), for fuzzing. Bounded: output by max_out, MIME nesting by
 * SH_MAIL_MAX_DEPTH, parts by SH_MAIL_MAX_PARTS. Reentrant; an sh_mail holds
 * the buffers and iconv descriptors of one thread. */
#ifndef SHINGLE_MAIL_H
#define SHINGLE_MAIL_H

#include <stddef.h>
#include <stdint.h>
#include "error.h"
#include "zio.h"

#define SH_MAIL_MAX_DEPTH 16
#define SH_MAIL_MAX_PARTS 4096

typedef enum sh_mail_kind { SH_MAIL_NONE = 0, SH_MAIL_MESSAGE = 1, SH_MAIL_MBOX = 2 } sh_mail_kind;

/* What the first bytes p[0..n) are: an mbox archive (a "From " line followed
 * by a header block), a message (a header block of at least two fields, two
 * of them fields every mail has: From, To, Subject, Date, Message-ID,
 * Received, Return-Path, MIME-Version, Delivered-To), or neither. Looks at
 * most at the first 64 KiB. */
sh_mail_kind sh_mail_sniff(const char *p, size_t n);

typedef struct sh_mail sh_mail;

sh_status sh_mail_new(sh_mail **out, sh_error *err);
void sh_mail_free(sh_mail *m);

typedef struct sh_mail_result {
    const char *text;       /* the rendering (HTML, UTF-8); valid until the next call on m */
    size_t len;
    const char *subject;    /* decoded, UTF-8, NUL-terminated; "" when absent */
    const char *message_id; /* as in the header, NUL-terminated; "" when absent */
    const char *date;       /* the Date header as written; "" when absent */
    int parts;              /* text parts rendered */
    int left_out;           /* parts not rendered: attachments, other alternatives, non-text */
    int html_parts;         /* of the parts rendered, how many were HTML */
    const char *warning;    /* NULL, or what was not quite right (an unknown charset, a
                             * truncated multipart), for the caller to report if it wants */
} sh_mail_result;

/* Render the message in[0..n). A leading mbox "From " line is skipped.
 * max_out (0: none) bounds the rendering: SH_ELIMIT beyond it. A message
 * without a header block is its body (plain text). Only SH_ENOMEM and
 * SH_ELIMIT are failures: damaged MIME is rendered as far as it goes, with a
 * warning. */
sh_status sh_mail_render(sh_mail *m, const char *in, size_t n, size_t max_out, sh_mail_result *res, sh_error *err);

/* ---- mbox ------------------------------------------------------------------ */

typedef struct sh_mbox sh_mbox;

/* Messages of an mbox read from zs (borrowed: it must outlive the reader).
 * max_message bounds one message (0: none). */
sh_status sh_mbox_open(sh_zstream *zs, size_t max_message, sh_mbox **out, sh_error *err);

/* The next message, unescaped, without its "From " line, in *msg (valid
 * until the next call), *len bytes; *msg = NULL at the end. *from_line: the
 * separator line (NUL-terminated, without "From "), *number: 1-based. A
 * message over max_message bytes is passed over with SH_ELIMIT naming it:
 * call again for the next. Stream errors (SH_EIO, SH_EFORMAT) end reading. */
sh_status sh_mbox_next(sh_mbox *mb, const char **msg, size_t *len, const char **from_line, uint64_t *number,
                       sh_error *err);

void sh_mbox_close(sh_mbox *mb);

#endif
