#include "sort.h"

#include <stdlib.h>
#include <string.h>

static void insertion(uint64_t *v, size_t n)
{
    size_t i;
    for (i = 1; i < n; i++) {
        uint64_t x = v[i];
        size_t j = i;
        while (j > 0 && v[j - 1] > x) { v[j] = v[j - 1]; j--; }
        v[j] = x;
    }
}

/* Quicksort on the values themselves (qsort's comparison callback costs more
 * than the comparisons): median of three, recursion on the smaller side,
 * insertion sort below 32. Keys are uniform fingerprints, so the pivots are
 * good; depth stays logarithmic by recursing on the smaller part. */
static void quick(uint64_t *v, size_t n)
{
    while (n > 32) {
        uint64_t a = v[0], b = v[n / 2], c = v[n - 1], pivot, t;
        size_t i = 0, j = n - 1;
        pivot = a < b ? (b < c ? b : (a < c ? c : a)) : (a < c ? a : (b < c ? c : b));
        for (;;) {
            while (v[i] < pivot) i++;
            while (v[j] > pivot) j--;
            if (i >= j) break;
            t = v[i]; v[i] = v[j]; v[j] = t;
            i++;
            j--;
        }
        /* v[0..j] <= pivot <= v[j+1..n) */
        if (j + 1 < n - j - 1) { quick(v, j + 1); v += j + 1; n -= j + 1; }
        else { quick(v + j + 1, n - j - 1); n = j + 1; }
    }
    insertion(v, n);
}

/* Fingerprints are uniform, so four counting passes over 16-bit digits beat
 * comparison sorts once n is in the thousands. */
static int radix(uint64_t *v, size_t n)
{
    uint64_t *tmp = (uint64_t *)malloc(n * sizeof *tmp), *src = v, *dst;
    size_t *cnt = (size_t *)malloc(65536 * sizeof *cnt);
    int pass;
    if (!tmp || !cnt) { free(tmp); free(cnt); return 0; }
    dst = tmp;
    for (pass = 0; pass < 4; pass++) {
        const int shift = 16 * pass;
        size_t i, sum = 0;
        memset(cnt, 0, 65536 * sizeof *cnt);
        for (i = 0; i < n; i++) cnt[(src[i] >> shift) & 0xffff]++;
        for (i = 0; i < 65536; i++) { size_t c = cnt[i]; cnt[i] = sum; sum += c; }
        for (i = 0; i < n; i++) dst[cnt[(src[i] >> shift) & 0xffff]++] = src[i];
        { uint64_t *t = src; src = dst; dst = t; }
    }
    /* after an even number of passes the result is back in v */
    free(tmp);
    free(cnt);
    return 1;
}

/* Up to 1024 values: one counting pass on the top bits into about n buckets,
 * then insertion sort, which on the almost sorted result is linear for the
 * uniform values of sketches (and correct, if slower, for any input). */
static void small(uint64_t *v, size_t n)
{
    uint64_t tmp[1024];
    uint32_t cnt[1025];
    unsigned bits = 1, shift;
    size_t i;
    while (((size_t)1 << bits) < n) bits++;
    shift = 64 - bits;
    memset(cnt, 0, (((size_t)1 << bits) + 1) * sizeof *cnt);
    for (i = 0; i < n; i++) cnt[(v[i] >> shift) + 1]++;
    for (i = 1; i <= ((size_t)1 << bits); i++) cnt[i] += cnt[i - 1];
    for (i = 0; i < n; i++) tmp[cnt[v[i] >> shift]++] = v[i];
    memcpy(v, tmp, n * sizeof *v);
    insertion(v, n);
}

void sh_sort_u64(uint64_t *v, size_t n)
{
    if (n >= 65536 && radix(v, n)) return;
    if (n > 32 && n <= 1024) { small(v, n); return; }
    quick(v, n);
}
