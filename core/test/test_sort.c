/* The in-memory sorts against qsort on random, sorted, reversed and
 * repetitive inputs of many sizes, and on keys that all share the 16 bits
 * the counting passes sort by (the insertion sort after them gives up and
 * the quicksort finishes: a quadratic sort would not end in time). */
#include <stdlib.h>
#include "../rabin.h"
#include "../sort.h"
#include "test.h"

static int cmp(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static void sorts_like_qsort_on_every_shape(void)
{
    static const size_t sizes[] = { 0, 1, 2, 3, 31, 32, 33, 47, 48, 63, 64, 65, 100, 1000, 1024, 1025, 5000, 30000, 65535, 65536, 200000 };
    uint64_t st = 3, differ = 0;
    size_t si;
    int shape;
    for (si = 0; si < sizeof sizes / sizeof *sizes; si++)
        for (shape = 0; shape < 5; shape++) {
            size_t n = sizes[si], i;
            uint64_t *a = (uint64_t *)malloc((n + 1) * 8), *b = (uint64_t *)malloc((n + 1) * 8);
            for (i = 0; i < n; i++) {
                uint64_t r = sh_splitmix_next(&st);
                a[i] = shape == 0 ? r : shape == 1 ? i : shape == 2 ? n - i : shape == 3 ? r % 5 : (UINT64_C(1) << 63) | (r >> 34);
            }
            memcpy(b, a, n * 8);
            sh_sort_u64(a, n);
            qsort(b, n, 8, cmp);
            if (n && memcmp(a, b, n * 8) != 0) { differ++; fprintf(stderr, "differs from qsort: n=%zu shape=%d\n", n, shape); }
            free(a);
            free(b);
        }
    CHECK_EQ_U64(differ, 0);
}

int main(void)
{
    RUN(sorts_like_qsort_on_every_shape);
    return TEST_END();
}
