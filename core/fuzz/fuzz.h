/* Shared by the libFuzzer targets (core/fuzz/fuzz_*.c, docs/robustness.md):
 * each checks invariants of one reader of outside bytes, not only that it
 * does not crash; FUZZ_CHECK aborts with the failed condition, which
 * libFuzzer reports as a crash and saves the input. */
#ifndef SHINGLE_FUZZ_H
#define SHINGLE_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FUZZ_CHECK(cond) do { if (!(cond)) { \
    fprintf(stderr, "%s:%d: invariant failed: %s\n", __FILE__, __LINE__, #cond); abort(); } } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Whether s[0..n) is well-formed UTF-8 (Unicode table 3-7). */
static inline int fuzz_utf8_ok(const unsigned char *s, size_t n)
{
    size_t i = 0;
    while (i < n) {
        unsigned c = s[i], lo = 0x80, hi = 0xBF;
        size_t k, j;
        if (c < 0x80) { i++; continue; }
        if (c >= 0xC2 && c <= 0xDF) k = 2;
        else if (c >= 0xE0 && c <= 0xEF) { k = 3; if (c == 0xE0) lo = 0xA0; if (c == 0xED) hi = 0x9F; }
        else if (c >= 0xF0 && c <= 0xF4) { k = 4; if (c == 0xF0) lo = 0x90; if (c == 0xF4) hi = 0x8F; }
        else return 0;
        if (i + k > n || s[i + 1] < lo || s[i + 1] > hi) return 0;
        for (j = 2; j < k; j++) if ((s[i + j] & 0xC0) != 0x80) return 0;
        i += k;
    }
    return 1;
}

#endif
