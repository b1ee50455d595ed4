/* JSON text as shingle's outputs write it (the one output writer,
 * lua/shingle/writer.lua, and the C API alike), the same bytes for the same
 * value on every platform and in every locale:
 *   - a number with an integer value (-2^63 < x < 2^63) as its digits; any
 *     other finite number as the shortest of %.15g, %.16g, %.17g that reads
 *     back as the same double, with '.' as the decimal point; NaN and the
 *     infinities as null (JSON has neither);
 *   - a string quoted, with only the escapes JSON needs: '"', '\\', \b \f \n
 *     \r \t, other control characters and DEL as \u00XX; '/' is left as it
 *     is; each byte that does not belong to a well-formed UTF-8 sequence
 *     (RFC 3629: shortest form, no surrogates, at most U+10FFFF) replaced by
 *     U+FFFD, so that what is written is always UTF-8 JSON text.
 * Appends to a growable buffer; functions return 1, or 0 when out of memory
 * (the buffer then holds what it held before the call, at least). */
#ifndef SHINGLE_JSONW_H
#define SHINGLE_JSONW_H

#include <stddef.h>
#include <stdint.h>

typedef struct sh_textbuf {
    char *p;
    size_t n, cap;
} sh_textbuf;

/* Room for extra more bytes: 1, or 0 when out of memory. */
int sh_textbuf_reserve(sh_textbuf *b, size_t extra);
/* Append n bytes. */
int sh_textbuf_put(sh_textbuf *b, const char *s, size_t n);
void sh_textbuf_free(sh_textbuf *b);

/* A JSON string: '"', s[0..n) escaped as above, '"'. */
int sh_json_string(sh_textbuf *b, const char *s, size_t n);
/* s[0..n) with the bytes that are not UTF-8 replaced by U+FFFD, no quoting
 * or escapes (a CSV or TSV cell); *changed (if not NULL) is set to whether
 * any byte was replaced. */
int sh_json_utf8(sh_textbuf *b, const char *s, size_t n, int *changed);
/* A number (a double). */
int sh_json_number(sh_textbuf *b, double x);
/* An integer. */
int sh_json_integer(sh_textbuf *b, int64_t v);

#endif
