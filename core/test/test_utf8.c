/* sh_utf8_check against a slow obvious oracle: Table 3-7 of the Unicode
 * Standard (well-formed UTF-8 byte sequences), byte range by byte range. */
#include "test.h"
#include "canon.h"
#include <stdint.h>
#include <stdlib.h>

/* Length of the well-formed sequence at p per Table 3-7, or 0. */
static size_t table37(const unsigned char *p, size_t n)
{
    static const struct { unsigned char lo[4], hi[4]; size_t len; } rows[] = {
        { { 0x00 }, { 0x7F }, 1 },
        { { 0xC2, 0x80 }, { 0xDF, 0xBF }, 2 },
        { { 0xE0, 0xA0, 0x80 }, { 0xE0, 0xBF, 0xBF }, 3 },
        { { 0xE1, 0x80, 0x80 }, { 0xEC, 0xBF, 0xBF }, 3 },
        { { 0xED, 0x80, 0x80 }, { 0xED, 0x9F, 0xBF }, 3 },
        { { 0xEE, 0x80, 0x80 }, { 0xEF, 0xBF, 0xBF }, 3 },
        { { 0xF0, 0x90, 0x80, 0x80 }, { 0xF0, 0xBF, 0xBF, 0xBF }, 4 },
        { { 0xF1, 0x80, 0x80, 0x80 }, { 0xF3, 0xBF, 0xBF, 0xBF }, 4 },
        { { 0xF4, 0x80, 0x80, 0x80 }, { 0xF4, 0x8F, 0xBF, 0xBF }, 4 },
    };
    size_t r, k;
    for (r = 0; r < sizeof rows / sizeof rows[0]; r++) {
        if (p[0] < rows[r].lo[0] || p[0] > rows[r].hi[0]) continue;
        if (n < rows[r].len) return 0;
        for (k = 1; k < rows[r].len; k++)
            if (p[k] < rows[r].lo[k] || p[k] > rows[r].hi[k]) return 0;
        return rows[r].len;
    }
    return 0;
}

/* The offset of the first byte that does not start a well-formed sequence, or n. */
static size_t oracle(const unsigned char *p, size_t n)
{
    size_t i = 0, len;
    while (i < n && (len = table37(p + i, n - i)) != 0) i += len;
    return i;
}

static int agrees(const unsigned char *p, size_t n)
{
    sh_error err;
    size_t want = oracle(p, n);
    sh_status s = sh_utf8_check((const char *)p, n, &err);
    if (want == n) return s == SH_OK;
    return s == SH_EUTF8 && err.offset == want;
}

static void every_sequence_of_up_to_three_bytes(void)
{
    unsigned char b[3];
    unsigned long bad = 0, x;
    for (x = 0; x < 256; x++) { b[0] = (unsigned char)x; bad += !agrees(b, 1); }
    for (x = 0; x < 65536; x++) { b[0] = (unsigned char)(x >> 8); b[1] = (unsigned char)x; bad += !agrees(b, 2); }
    for (x = 0; x < (1ul << 24); x++) {
        b[0] = (unsigned char)(x >> 16); b[1] = (unsigned char)(x >> 8); b[2] = (unsigned char)x;
        bad += !agrees(b, 3);
    }
    CHECK(bad == 0);
}

static void four_byte_sequences_around_every_boundary(void)
{
    /* every lead byte with second bytes across the whole range, the rest at their edges */
    static const unsigned char edge[] = { 0x00, 0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0, 0xFF };
    unsigned char b[4];
    unsigned long bad = 0, checks = 0;
    unsigned l, s, t, u;
    for (l = 0xE0; l < 0x100; l++)
        for (s = 0; s < 256; s++)
            for (t = 0; t < sizeof edge; t++)
                for (u = 0; u < sizeof edge; u++) {
                    b[0] = (unsigned char)l; b[1] = (unsigned char)s; b[2] = edge[t]; b[3] = edge[u];
                    bad += !agrees(b, 4);
                    checks++;
                }
    CHECK(checks > 300000);
    CHECK(bad == 0);
}

static void long_texts_with_one_bad_byte_anywhere(void)
{
    /* the word-at-a-time ASCII path must stop at a bad byte in any lane */
    unsigned char buf[200];
    size_t pos, n = sizeof buf;
    unsigned long bad = 0;
    sh_error err;
    for (pos = 0; pos < n; pos++) {
        memset(buf, 'a', n);
        buf[pos] = 0xFF;
        if (sh_utf8_check((const char *)buf, n, &err) != SH_EUTF8 || err.offset != pos) bad++;
        buf[pos] = 0xC3; /* a lead byte cut off at the end, or followed by 'a' */
        if (!agrees(buf, n)) bad++;
    }
    CHECK(bad == 0);
    memset(buf, 'a', n);
    CHECK(sh_utf8_check((const char *)buf, n, &err) == SH_OK);
    CHECK(sh_utf8_check("", 0, &err) == SH_OK);
    { static const char ok[] = "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"; CHECK(sh_utf8_check(ok, sizeof ok - 1, &err) == SH_OK); }
}

static void random_mixtures_agree_with_the_table(void)
{
    unsigned char buf[64];
    uint64_t x = 0x9E3779B97F4A7C15ULL;
    unsigned long bad = 0;
    int r;
    size_t i;
    for (r = 0; r < 200000; r++) {
        for (i = 0; i < sizeof buf; i++) {
            x ^= x << 13; x ^= x >> 7; x ^= x << 17;
            /* mostly ASCII and continuation bytes, so valid multibyte runs occur */
            buf[i] = (unsigned char)((x & 3) == 0 ? 0x80 | (x >> 8 & 0x3F) : (x & 3) == 1 ? 0xC2 + (x >> 8) % 0x33 : (x >> 8) & 0x7F);
        }
        bad += !agrees(buf, (size_t)(x >> 32) % sizeof buf);
    }
    CHECK(bad == 0);
}

int main(void)
{
    RUN(every_sequence_of_up_to_three_bytes);
    RUN(four_byte_sequences_around_every_boundary);
    RUN(long_texts_with_one_bad_byte_anywhere);
    RUN(random_mixtures_agree_with_the_table);
    return TEST_END();
}
