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

/* Insertion sort that gives up after budget moves (leaving v a
 * permutation of what it was): 0 then, else 1. */
static int insertion_bounded(uint64_t *v, size_t n, size_t budget)
{
    size_t i;
    for (i = 1; i < n; i++) {
        uint64_t x = v[i];
        size_t j = i;
        while (j > 0 && v[j - 1] > x) {
            v[j] = v[j - 1];
            j--;
            if (budget-- == 0) {
                v[j] = x;
                return 0;
            }
        }
        v[j] = x;
    }
    return 1;
}

/* Up to 65,536 values: two counting passes (least significant digit
 * first) on the 2 D bits below the highest bit any of them has, then
 * insertion sort, which on the result (in order but for values that share
 * those bits, a handful for uniform keys) is linear. Taking the bits
 * below the highest one in use spreads keys drawn from a part of the range
 * (the candidates of a MIN_s sketch lie below a small fraction of it) over
 * all the buckets. Keys that are not spread out (many sharing those bits)
 * would make the insertion sort quadratic: it stops after 8 moves per value
 * on average and the quicksort finishes. tmp holds n values. D is 8 bits
 * (256 buckets a pass), or 4 for up to 64 values, which 256 buckets in all
 * spread as well, and whose counts cost 16 buckets to clear and sum a pass,
 * not 256 (a MOD_m sketch of a short text sorts a few dozen values). */
static inline __attribute__((always_inline)) void radix2(uint64_t *v, size_t n, uint64_t *tmp, const unsigned D)
{
    const unsigned B = 1u << D, mask = B - 1;
    uint64_t any = 0;
    uint32_t lo[257], hi[257];
    unsigned shift, top;
    size_t i;
    for (i = 0; i < n; i++) any |= v[i];
    for (top = 1; top < 64 && (any >> top) != 0; top++) {}
    shift = top > 2 * D ? top - 2 * D : 0;
    memset(lo, 0, (B + 1) * sizeof *lo);
    memset(hi, 0, (B + 1) * sizeof *hi);
    for (i = 0; i < n; i++) {
        const unsigned d = (unsigned)(v[i] >> shift);
        lo[(d & mask) + 1]++;
        hi[((d >> D) & mask) + 1]++;
    }
    for (i = 1; i <= B; i++) {
        lo[i] += lo[i - 1];
        hi[i] += hi[i - 1];
    }
    for (i = 0; i < n; i++) tmp[lo[(v[i] >> shift) & mask]++] = v[i];
    for (i = 0; i < n; i++) v[hi[(tmp[i] >> (shift + D)) & mask]++] = tmp[i];
    if (!insertion_bounded(v, n, 8 * n)) quick(v, n);
}

static void small(uint64_t *v, size_t n, uint64_t *tmp)
{
    if (n <= 64) radix2(v, n, tmp, 4);
    else radix2(v, n, tmp, 8);
}

void sh_sort_u64(uint64_t *v, size_t n)
{
    if (n >= 65536 && radix(v, n)) return;
    if (n > 32 && n <= 1024) {
        uint64_t tmp[1024];
        small(v, n, tmp);
        return;
    }
    if (n > 1024) {
        uint64_t *tmp = (uint64_t *)malloc(n * sizeof *tmp);
        if (tmp) {
            small(v, n, tmp);
            free(tmp);
            return;
        }
    }
    quick(v, n);
}
