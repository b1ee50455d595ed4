/* The postings cache (core/ixcache.c) against the obvious slow lookup (a
 * bisection over an array of (key, documents) records): every key, every
 * absent value near and far from the keys, in batches of every size across
 * the prefetching stages, for keys that are uniform, multiples of 25 (what a
 * MOD_25 sketch keeps), all in one bucket (the bisection path), consecutive,
 * 0 and all ones; keys with one document, with many, and documents of 2^31
 * and above (which cannot be stored inline). Misuse is refused. */
#include <errno.h>
#include <stdlib.h>
#include "../ixcache.h"
#include "../rabin.h"
#include "test.h"

typedef struct { uint64_t key; uint32_t n, off; } rec;

static int by_key(const void *a, const void *b)
{
    uint64_t x = ((const rec *)a)->key, y = ((const rec *)b)->key;
    return x < y ? -1 : x > y;
}

static const rec *slow_find(const rec *r, size_t n, uint64_t v)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (r[mid].key < v) lo = mid + 1;
        else hi = mid;
    }
    return lo < n && r[lo].key == v ? &r[lo] : NULL;
}

static uint64_t key_of(int shape, size_t i, uint64_t *st)
{
    switch (shape) {
    case 0: return sh_splitmix_next(st);
    case 1: return 25 * (sh_splitmix_next(st) >> 8);
    case 2: return UINT64_C(0x7000000000000000) + (sh_splitmix_next(st) >> 40); /* one bucket */
    default: return (uint64_t)i * 3;
    }
}

static void same_as_slow_lookup(void)
{
    static const size_t sizes[] = { 0, 1, 7, 1000, 200000 };
    size_t si;
    int shape;
    for (si = 0; si < sizeof sizes / sizeof *sizes; si++)
        for (shape = 0; shape < 4; shape++) {
            size_t n = sizes[si] + (shape == 3 ? 0 : 2), i, nk = 0, np = 0, wrong = 0;
            uint64_t st = 7 + 31 * n + (uint64_t)shape;
            rec *r = (rec *)malloc((n + 1) * sizeof *r);
            uint32_t *docs = (uint32_t *)malloc((n * 8 + 8) * 4);
            sh_ixcache *c;
            for (i = 0; i < n; i++) r[i].key = i == 0 && shape != 3 ? 0 : i == 1 && shape != 3 ? UINT64_MAX : key_of(shape, i, &st);
            qsort(r, n, sizeof *r, by_key);
            for (i = 0; i < n; i++) {
                uint32_t m, j;
                if (nk && r[nk - 1].key == r[i].key) continue;
                /* most keys have one document; some many; some past 2^31 */
                m = (sh_splitmix_next(&st) % 5 == 0) ? 1 + (uint32_t)(sh_splitmix_next(&st) % 7) : 1;
                r[nk] = r[i];
                r[nk].n = m;
                r[nk].off = (uint32_t)np;
                for (j = 0; j < m; j++) {
                    uint32_t d = (uint32_t)(sh_splitmix_next(&st) % 5000) + 5000 * j;
                    if (sh_splitmix_next(&st) % 11 == 0) d |= UINT32_C(0x80000000);
                    docs[np++] = d;
                }
                /* increasing documents within the key */
                for (j = 1; j < m; j++) {
                    uint32_t k = j, x = docs[r[nk].off + j];
                    while (k > 0 && docs[r[nk].off + k - 1] > x) { docs[r[nk].off + k] = docs[r[nk].off + k - 1]; k--; }
                    docs[r[nk].off + k] = x;
                }
                nk++;
            }
            c = sh_ixcache_new(nk, np);
            CHECK(c != NULL);
            if (!c) { free(r); free(docs); continue; }
            for (i = 0; i < nk; i++) CHECK(sh_ixcache_append(c, r[i].key, docs + r[i].off, r[i].n) == 0);
            CHECK(sh_ixcache_finish(c) == 0);
            CHECK(sh_ixcache_keys(c) == nk);
            CHECK(sh_ixcache_postings(c) == np);
            CHECK(sh_ixcache_bytes(c) <= sh_ixcache_bytes_for(nk, np));
            {
                /* queries: every key, its neighbours, random values, in batches of 1..97 */
                size_t nq = 3 * nk + 500, q = 0, b;
                uint64_t *v = (uint64_t *)malloc(nq * 8);
                unsigned char *keep = (unsigned char *)malloc(nq);
                const uint32_t **dp = (const uint32_t **)malloc(nq * sizeof *dp);
                uint32_t *cnt = (uint32_t *)malloc(nq * 4);
                for (i = 0; i < nk; i++) {
                    v[q++] = r[i].key;
                    v[q++] = r[i].key + 1;
                    v[q++] = r[i].key - 1;
                }
                for (; q < nq; q++) v[q] = key_of(shape, q, &st);
                for (i = 0; i < nq; i++) keep[i] = (unsigned char)(sh_splitmix_next(&st) % 4 != 0);
                for (b = 0, i = 0; i < nq; i += b) {
                    size_t j;
                    b = 1 + (i * 7) % 97;
                    if (b > nq - i) b = nq - i;
                    sh_ixcache_find_many(c, v + i, b, (i / 97) % 2 ? keep + i : NULL, dp + i, cnt + i);
                    for (j = i; j < i + b; j++) {
                        const rec *x = slow_find(r, nk, v[j]);
                        int asked = (i / 97) % 2 ? keep[j] : 1;
                        if (!asked || !x) { wrong += cnt[j] != 0; continue; }
                        if (cnt[j] != x->n || !dp[j] || memcmp(dp[j], docs + x->off, 4 * (size_t)x->n) != 0) wrong++;
                    }
                }
                CHECK(wrong == 0);
                free(v); free(keep); free(dp); free(cnt);
            }
            sh_ixcache_free(c);
            free(r);
            free(docs);
        }
}

static void refuses_misuse(void)
{
    uint32_t d[3] = { 1, 2, 3 };
    sh_ixcache *c = sh_ixcache_new(2, 3);
    const uint32_t *dp;
    uint32_t cnt;
    uint64_t v = 10;
    CHECK(c != NULL);
    if (!c) return;
    CHECK(sh_ixcache_append(c, 10, d, 0) == EINVAL);        /* a key without documents */
    CHECK(sh_ixcache_append(c, 10, d, 1) == 0);
    CHECK(sh_ixcache_append(c, 10, d, 1) == EINVAL);        /* not increasing */
    CHECK(sh_ixcache_append(c, 5, d, 1) == EINVAL);
    CHECK(sh_ixcache_append(c, 11, d, 3) == ERANGE);        /* 3 documents more than the room for 3 in all */
    CHECK(sh_ixcache_append(c, 11, d, 2) == 0);
    CHECK(sh_ixcache_append(c, 12, d, 1) == ERANGE);        /* a third key in room for two */
    CHECK(sh_ixcache_finish(c) == 0);
    CHECK(sh_ixcache_append(c, 13, d, 1) == EINVAL);        /* finished */
    sh_ixcache_find_many(c, &v, 1, NULL, &dp, &cnt);
    CHECK(cnt == 1 && dp && dp[0] == 1);
    v = 11;
    sh_ixcache_find_many(c, &v, 1, NULL, &dp, &cnt);
    CHECK(cnt == 2 && dp && dp[0] == 1 && dp[1] == 2);
    sh_ixcache_free(c);
    CHECK(sh_ixcache_new((size_t)UINT32_MAX + 1, 1) == NULL); /* offsets are 32 bits */
}

int main(void)
{
    RUN(same_as_slow_lookup);
    RUN(refuses_misuse);
    return TEST_END();
}
