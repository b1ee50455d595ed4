#include "sort.h"

#include <stdlib.h>
#include <string.h>

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
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

void sh_sort_u64(uint64_t *v, size_t n)
{
    size_t i;
    if (n < 48) {
        for (i = 1; i < n; i++) {
            uint64_t x = v[i];
            size_t j = i;
            while (j > 0 && v[j - 1] > x) { v[j] = v[j - 1]; j--; }
            v[j] = x;
        }
        return;
    }
    if (n >= 65536 && radix(v, n)) return;
    qsort(v, n, sizeof *v, cmp_u64);
}
