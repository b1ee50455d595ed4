/* bench/extsort_bench.c: external sort throughput of 20 million 12-byte
 * <u64 key, u32 value> records (the pairs phase's record) with a 64 MB budget,
 * and the in-memory radix sort against qsort on 2 million records: the
 * figures core/test/test_extsort.c used to print inside the tests
 * (benchmarks are not tests). Run with
 *   bash bench/run_micro.sh
 * which builds it against build/5.4/libshingle_core.a and prints the machine.
 * Sort runs go to $TMPDIR (or /tmp). */
#include "extsort.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static uint64_t splitmix(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15u);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
    return z ^ (z >> 31);
}

static void make_record(unsigned char *r, uint64_t i, uint64_t *seed)
{
    uint64_t k = splitmix(seed);
    int b;
    for (b = 0; b < 8; b++) r[b] = (unsigned char)(k >> (56 - 8 * b));
    for (b = 0; b < 4; b++) r[8 + b] = (unsigned char)(i >> (24 - 8 * b));
}

static int cmp12(const void *a, const void *b) { return memcmp(a, b, 12); }

static int fail(const char *what, const sh_error *err)
{
    fprintf(stderr, "extsort_bench: %s: %s\n", what, err->msg);
    return 1;
}

int main(void)
{
    const size_t n = 20000000, chunk = 65536, m = 2000000;
    unsigned char *buf = malloc(chunk * 12), *a = malloc(m * 12), *b = malloc(m * 12), *aux = malloc(m * 12);
    sh_extsort_config c;
    sh_extsort_stats st;
    sh_extsort *s;
    sh_error err;
    uint64_t seed = 2024;
    size_t i, k, got, total = 0;
    double t = 0, t0, t_radix, t_qsort;
    if (!buf || !a || !b || !aux) {
        fprintf(stderr, "extsort_bench: out of memory\n");
        return 1;
    }
    memset(&c, 0, sizeof c);
    c.record_size = 12;
    c.key_size = 8;
    c.memory_budget = (size_t)64 << 20;
    if (sh_extsort_new(&s, &c, &err) != SH_OK) return fail("new", &err);
    for (i = 0; i < n; i += k) {
        size_t j;
        k = n - i < chunk ? n - i : chunk;
        for (j = 0; j < k; j++) make_record(buf + 12 * j, i + j, &seed);
        t0 = now_s();
        if (sh_extsort_add(s, buf, k, &err) != SH_OK) return fail("add", &err);
        t += now_s() - t0;
    }
    t0 = now_s();
    if (sh_extsort_finish(s, &err) != SH_OK) return fail("finish", &err);
    do {
        if (sh_extsort_read(s, buf, chunk, &got, &err) != SH_OK) return fail("read", &err);
        total += got;
    } while (got > 0);
    t += now_s() - t0;
    sh_extsort_get_stats(s, &st);
    sh_extsort_free(s);
    if (total != n) {
        fprintf(stderr, "extsort_bench: read back %zu of %zu records\n", total, n);
        return 1;
    }
    printf("external sort: %zu 12-byte records, 64 MB budget: %.2f s, %.1f M records/s "
           "(%llu runs; time in add, finish and read calls)\n",
           n, t, (double)n / t / 1e6, (unsigned long long)st.runs_spilled);
    seed = 1;
    for (i = 0; i < m; i++) make_record(a + 12 * i, i, &seed);
    memcpy(b, a, m * 12);
    t0 = now_s();
    sh_radix_sort(a, aux, m, 12, 8);
    t_radix = now_s() - t0;
    t0 = now_s();
    qsort(b, m, 12, cmp12);
    t_qsort = now_s() - t0;
    if (memcmp(a, b, m * 12) != 0) {
        fprintf(stderr, "extsort_bench: the radix sort differs from qsort\n");
        return 1;
    }
    printf("in memory, %zu records: radix %.1f M records/s, qsort %.1f M records/s (ratio %.1f)\n",
           m, (double)m / t_radix / 1e6, (double)m / t_qsort / 1e6, t_qsort / t_radix);
    free(buf);
    free(a);
    free(b);
    free(aux);
    return 0;
}
