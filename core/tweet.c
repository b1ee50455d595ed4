/* The tweet rule set's text step (tweet.h). */
#include <string.h>
#include "tweet.h"

static int is_space(unsigned char b) { return b == ' ' || (b >= 9 && b <= 13); }
static int is_alnum(unsigned char b) { return (b >= '0' && b <= '9') || ((b | 0x20) >= 'a' && (b | 0x20) <= 'z'); }
static int is_word(unsigned char b) { return is_alnum(b) || b == '_'; }

/* https?://%S+: every match holds "://" 4 or 5 bytes after its start, so
 * the search goes from one "://" to the next. */
static void urls(unsigned char *s, size_t n)
{
    size_t pos = 0;
    while (pos + 3 <= n) {
        const unsigned char *c = (const unsigned char *)memchr(s + pos, ':', n - pos);
        size_t q, start, e;
        if (!c) return;
        q = (size_t)(c - s);
        if (q + 3 > n) return;
        if (s[q + 1] != '/' || s[q + 2] != '/') { pos = q + 1; continue; }
        if (q >= pos + 5 && memcmp(s + q - 5, "https", 5) == 0) start = q - 5;
        else if (q >= pos + 4 && memcmp(s + q - 4, "http", 4) == 0) start = q - 4;
        else { pos = q + 1; continue; }
        for (e = q + 3; e < n && !is_space(s[e]); e++) {}
        if (e == q + 3) { pos = q + 1; continue; } /* %S+ needs one byte */
        memset(s + start, ' ', e - start);
        pos = e;
    }
}

/* %f[%w]RT%f[%W]:? */
static void retweets(unsigned char *s, size_t n)
{
    size_t pos = 0;
    while (pos + 2 <= n) {
        const unsigned char *c = (const unsigned char *)memchr(s + pos, 'R', n - pos);
        size_t r, e;
        if (!c) return;
        r = (size_t)(c - s);
        if (r + 2 > n) return;
        if (s[r + 1] != 'T' || (r > 0 && is_alnum(s[r - 1])) || (r + 2 < n && is_alnum(s[r + 2]))) {
            pos = r + 1;
            continue;
        }
        e = r + 2;
        if (e < n && s[e] == ':') e++;
        memset(s + r, ' ', e - r);
        pos = e;
    }
}

/* @[%w_]+:? */
static void mentions(unsigned char *s, size_t n)
{
    size_t pos = 0;
    while (pos < n) {
        const unsigned char *c = (const unsigned char *)memchr(s + pos, '@', n - pos);
        size_t a, e;
        if (!c) return;
        a = (size_t)(c - s);
        for (e = a + 1; e < n && is_word(s[e]); e++) {}
        if (e == a + 1) { pos = a + 1; continue; }
        if (e < n && s[e] == ':') e++;
        memset(s + a, ' ', e - a);
        pos = e;
    }
}

/* ^%s*[%w_]+:%s (no backtracking changes the match: [%w_]+ cannot end
 * earlier and still be followed by ':') */
static void leading_user(unsigned char *s, size_t n)
{
    size_t i = 0, j;
    while (i < n && is_space(s[i])) i++;
    for (j = i; j < n && is_word(s[j]); j++) {}
    if (j > i && j + 1 < n && s[j] == ':' && is_space(s[j + 1])) memset(s, ' ', j + 2);
}

void sh_tweet_blank(char *s, size_t n)
{
    unsigned char *u = (unsigned char *)s;
    urls(u, n);
    retweets(u, n);
    mentions(u, n);
    leading_user(u, n);
}
