/* Message headers and HTTP responses as web archives hold them.
 *
 * Header fields: "Name: value" lines as WARC (ISO 28500) and HTTP (RFC 9112)
 * both write them, folded continuation lines joined with one space, names
 * compared without regard to ASCII case.
 *
 * Responses: an HTTP response as a WARC response record's block holds it
 * (application/http): the status line (interim 1xx responses skipped), the
 * headers, and the body de-chunked (Transfer-Encoding: chunked) and decoded
 * (Content-Encoding: gzip, x-gzip, deflate, zlib-wrapped or raw), because that
 * body is the document to shingle. Damage is not an error: what cannot be
 * de-chunked or decoded is kept as far as it goes, and a warning says so.
 * A parser owns its buffers and reuses them; no global state. */
#ifndef SHINGLE_HTTP_H
#define SHINGLE_HTTP_H

#include <stddef.h>
#include "error.h"

/* A header field; name and value are NUL-terminated, the value trimmed. */
typedef struct sh_header_field {
    const char *name;
    const char *value;
} sh_header_field;

/* Parse the header lines in buf[start..end) in place (buf has one spare byte
 * at end), up to an empty line, into (*fields)[0..*n) (grown as needed, *cap
 * its capacity). A line without a colon is an error when strict (its offset
 * + 1 goes into *bad), else ignored; *bad is 0 otherwise. Returns 0 when out
 * of memory, else 1. */
int sh_header_parse(char *buf, size_t start, size_t end, sh_header_field **fields, size_t *cap, size_t *n, int strict,
                    size_t *bad);
/* The value of the first field called name (ASCII case-insensitive), or NULL. */
const char *sh_header_get(const sh_header_field *fields, size_t n, const char *name);
/* 1 if a and b are equal but for ASCII case. */
int sh_header_eq(const char *a, const char *b);
/* The first place in hay where the lower-case needle starts, ASCII case
 * ignored, or NULL. */
const char *sh_header_find(const char *hay, const char *needle);

/* A parsed response; valid until the parser's next call. */
typedef struct sh_http_response {
    int status;                      /* 0 when the block is not a response this parser reads */
    const char *content_type;        /* the Content-Type, or NULL */
    const sh_header_field *fields;   /* the header fields, in order */
    size_t nfields;
    const char *headers;             /* the raw status line and headers, within the block */
    size_t headers_len;
    const char *payload;             /* the body, de-chunked and decoded; "" when there is none */
    size_t payload_len;
    const char *warning;             /* what could not be done ("; "-separated), or NULL */
} sh_http_response;

typedef struct sh_http sh_http;

sh_status sh_http_new(sh_http **out, sh_error *err);
void sh_http_free(sh_http *h);

/* Parse the response in block[0..n); a decoded body longer than max_body is
 * cut there (with a warning). SH_OK whatever the block holds (see status and
 * warning), SH_ENOMEM (err says for what) when the headers do not fit in
 * memory. */
sh_status sh_http_parse(sh_http *h, const char *block, size_t n, size_t max_body, sh_http_response *r, sh_error *err);

#endif
