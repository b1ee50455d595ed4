/* The postings cache's lookups on their own (core/ixcache.c; a benchmark,
 * not a test; docs/benchmarks.md, "Serving"):
 *   cc -O2 -Icore bench/ixcache_bench.c core/ixcache.c core/clock.c -o /tmp/ixcache_bench && /tmp/ixcache_bench [KEYS] [BATCH] [ROUNDS]
 * KEYS (32,000,000, as the 1M-document serve index) random multiples of 25
 * (what a MOD_25 sketch keeps), one document each and every tenth key three;
 * queries of BATCH values (36: a 5 KB document's MOD_25 sketch), all keys
 * (an edited copy's) or none (a new document's). Nanoseconds per value,
 * median of ROUNDS rounds of 100,000 queries, against the obvious slow
 * lookup in the same run: a bisection of the sorted keys one value at a time. */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "clock.h"
#include "ixcache.h"
#include "rabin.h"

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* the slow obvious lookup: bisection over the sorted keys */
static size_t bisect(const uint64_t *k, size_t n, uint64_t v)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (k[mid] < v) lo = mid + 1;
        else hi = mid;
    }
    return lo < n && k[lo] == v ? lo : SIZE_MAX;
}

int main(int argc, char **argv)
{
    size_t nk = argc > 1 ? strtoull(argv[1], NULL, 10) : 32000000, batch = argc > 2 ? strtoull(argv[2], NULL, 10) : 36;
    int rounds = argc > 3 ? atoi(argv[3]) : 5, r, present;
    size_t nq = 100000, i, j, total_docs = 0;
    uint64_t st = 42, *keys = (uint64_t *)malloc(nk * 8), *q = (uint64_t *)malloc(batch * 8);
    const uint32_t **dp = (const uint32_t **)malloc(batch * sizeof *dp);
    uint32_t *cnt = (uint32_t *)malloc(batch * 4), docs[3] = { 1, 2, 3 };
    sh_ixcache *c;
    double t0, *fast = (double *)malloc(rounds * sizeof(double)), *slow = (double *)malloc(rounds * sizeof(double));
    volatile size_t sink = 0;
    if (!keys || !q || !dp || !cnt || !fast || !slow) return 1;
    for (i = 0; i < nk; i++) keys[i] = 25 * (sh_splitmix_next(&st) >> 8);
    qsort(keys, nk, 8, cmp_u64);
    for (i = j = 0; i < nk; i++)
        if (j == 0 || keys[i] != keys[j - 1]) keys[j++] = keys[i];
    nk = j;
    t0 = sh_now();
    if (!(c = sh_ixcache_new(nk, nk * 2))) return 1;
    for (i = 0; i < nk; i++) {
        if (sh_ixcache_append(c, keys[i], docs, i % 10 == 0 ? 3 : 1) != 0) return 1;
        total_docs += i % 10 == 0 ? 3 : 1;
    }
    if (sh_ixcache_finish(c) != 0) return 1;
    printf("# postings cache lookups: %zu keys, %zu postings, %.0f MB, built in %.2f s; batches of %zu values\n", nk, total_docs,
           (double)sh_ixcache_bytes(c) / 1048576.0, sh_now() - t0, batch);
    for (present = 1; present >= 0; present--) {
        for (r = 0; r < rounds; r++) {
            uint64_t qs = 7 + (uint64_t)r;
            size_t k;
            double a = sh_now();
            for (k = 0; k < nq; k++) {
                for (j = 0; j < batch; j++) q[j] = present ? keys[sh_splitmix_next(&qs) % nk] : 25 * (sh_splitmix_next(&qs) >> 8) + 1;
                sh_ixcache_find_many(c, q, batch, NULL, dp, cnt);
                for (j = 0; j < batch; j++) sink += cnt[j];
            }
            fast[r] = (sh_now() - a) * 1e9 / (double)(nq * batch);
            qs = 7 + (uint64_t)r;
            a = sh_now();
            for (k = 0; k < nq; k++) {
                for (j = 0; j < batch; j++) q[j] = present ? keys[sh_splitmix_next(&qs) % nk] : 25 * (sh_splitmix_next(&qs) >> 8) + 1;
                for (j = 0; j < batch; j++) sink += bisect(keys, nk, q[j]) != SIZE_MAX;
            }
            slow[r] = (sh_now() - a) * 1e9 / (double)(nq * batch);
        }
        qsort(fast, (size_t)rounds, sizeof(double), cmp_d);
        qsort(slow, (size_t)rounds, sizeof(double), cmp_d);
        printf("%-28s cache %6.1f ns a value; bisection of the sorted keys %6.1f ns (x%.1f)\n",
               present ? "values that are keys" : "values that are not", fast[rounds / 2], slow[rounds / 2], slow[rounds / 2] / fast[rounds / 2]);
    }
    sh_ixcache_free(c);
    free(keys); free(q); free(dp); free(cnt); free(fast); free(slow);
    return sink == 0;
}
