/* JSON text for the outputs: see jsonw.h. */
#include "jsonw.h"

#include <inttypes.h>
#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "canon.h"
#include "grow.h"

int sh_textbuf_reserve(sh_textbuf *b, size_t extra)
{
    if (extra > SIZE_MAX - b->n) return 0;
    return sh_grow((void **)&b->p, &b->cap, b->n + extra, 1, 256);
}

int sh_textbuf_put(sh_textbuf *b, const char *s, size_t n)
{
    if (!sh_textbuf_reserve(b, n)) return 0;
    if (n) memcpy(b->p + b->n, s, n);
    b->n += n;
    return 1;
}

void sh_textbuf_free(sh_textbuf *b)
{
    free(b->p);
    b->p = NULL;
    b->n = b->cap = 0;
}

static const char hex[] = "0123456789abcdef";

/* The bytes of s[0..n) as they go into a JSON string (escape) or a cell
 * (only the UTF-8 repair). Worst case 6 bytes out per byte in. */
static int put_text(sh_textbuf *b, const char *s, size_t n, int escape, int *changed)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t i = 0, run = 0;
    if (n > (SIZE_MAX - 2) / 6 || !sh_textbuf_reserve(b, 6 * n + 2)) return 0;
    char *o = b->p + b->n;
    while (i < n) {
        unsigned c = p[i];
        if (c >= 0x20 && c < 0x7f && (!escape || (c != '"' && c != '\\'))) {
            i++;
            run++;
            continue;
        }
        if (run) {
            memcpy(o, p + i - run, run);
            o += run;
            run = 0;
        }
        if (c >= 0x80) {
            size_t len = sh_utf8_seq((const char *)p + i, n - i);
            if (len) {
                memcpy(o, p + i, len);
                o += len;
                i += len;
            } else {
                memcpy(o, "\xef\xbf\xbd", 3);   /* U+FFFD */
                o += 3;
                i++;
                if (changed) *changed = 1;
            }
            continue;
        }
        i++;
        if (!escape) {
            *o++ = (char)c;
            continue;
        }
        *o++ = '\\';
        switch (c) {
        case '"': *o++ = '"'; break;
        case '\\': *o++ = '\\'; break;
        case '\b': *o++ = 'b'; break;
        case '\f': *o++ = 'f'; break;
        case '\n': *o++ = 'n'; break;
        case '\r': *o++ = 'r'; break;
        case '\t': *o++ = 't'; break;
        default:
            *o++ = 'u'; *o++ = '0'; *o++ = '0';
            *o++ = hex[c >> 4];
            *o++ = hex[c & 15];
        }
    }
    if (run) {
        memcpy(o, p + i - run, run);
        o += run;
    }
    b->n = (size_t)(o - b->p);
    return 1;
}

int sh_json_string(sh_textbuf *b, const char *s, size_t n)
{
    if (!sh_textbuf_reserve(b, 1)) return 0;
    b->p[b->n++] = '"';
    if (!put_text(b, s, n, 1, NULL)) return 0;
    if (!sh_textbuf_reserve(b, 1)) return 0;
    b->p[b->n++] = '"';
    return 1;
}

int sh_json_utf8(sh_textbuf *b, const char *s, size_t n, int *changed)
{
    if (changed) *changed = 0;
    return put_text(b, s, n, 0, changed);
}

int sh_json_integer(sh_textbuf *b, int64_t v)
{
    char t[24];
    int k = snprintf(t, sizeof t, "%" PRId64, v);
    return sh_textbuf_put(b, t, (size_t)k);
}

int sh_json_number(sh_textbuf *b, double x)
{
    char t[40];
    int k, prec;
    if (isnan(x) || isinf(x)) return sh_textbuf_put(b, "null", 4);
    if (x == floor(x) && x > -9223372036854775808.0 && x < 9223372036854775808.0)
        return sh_json_integer(b, (int64_t)x);
    /* printf's %g and strtod use the locale's decimal point (a host program
     * may have set LC_NUMERIC) alike; JSON's is '.', put in at the end */
    for (prec = 15; prec < 17; prec++) {
        snprintf(t, sizeof t, "%.*g", prec, x);
        if (strtod(t, NULL) == x) break;
    }
    k = snprintf(t, sizeof t, "%.*g", prec, x);
    {
        const char *dp = localeconv()->decimal_point;
        size_t dn = dp ? strlen(dp) : 0;
        char *at = dn && strcmp(dp, ".") != 0 ? strstr(t, dp) : NULL;
        if (at) {
            *at = '.';
            memmove(at + 1, at + dn, strlen(at + dn) + 1);
            k -= (int)dn - 1;
        }
    }
    return sh_textbuf_put(b, t, (size_t)k);
}
