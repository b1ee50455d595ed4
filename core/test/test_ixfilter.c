/* The postings filter (core/ixfilter.c): a value added is always found
 * (random values, multiples of 25 as a MOD_25 sketch keeps, consecutive
 * values, 0 and all ones), and values never added are found rarely: at most
 * 2% at the load the filter was sized for (its documented ~1%), and far less
 * below it. */
#include <stdlib.h>
#include "../ixfilter.h"
#include "../rabin.h"
#include "test.h"

static double fp_rate(const sh_ixfilter *f, uint64_t seed, size_t trials)
{
    size_t i, hits = 0;
    for (i = 0; i < trials; i++) hits += sh_ixfilter_test(f, sh_splitmix_next(&seed));
    return (double)hits / (double)trials;
}

static void finds_every_value_added(void)
{
    static const size_t sizes[] = { 1, 1000, 100000, 2000000 };
    size_t si;
    for (si = 0; si < sizeof sizes / sizeof *sizes; si++) {
        size_t n = sizes[si], i, missed = 0;
        int shape;
        for (shape = 0; shape < 3; shape++) {
            sh_ixfilter *f = sh_ixfilter_new(n);
            uint64_t st = 11 + n + (uint64_t)shape;
            CHECK(f != NULL);
            if (!f) continue;
            CHECK(sh_ixfilter_capacity(f) >= n);
            for (i = 0; i < n; i++) {
                uint64_t v = shape == 0 ? sh_splitmix_next(&st) : shape == 1 ? 25 * (sh_splitmix_next(&st) >> 8) : i;
                sh_ixfilter_add(f, v);
            }
            sh_ixfilter_add(f, 0);
            sh_ixfilter_add(f, UINT64_MAX);
            st = 11 + n + (uint64_t)shape;
            for (i = 0; i < n; i++) {
                uint64_t v = shape == 0 ? sh_splitmix_next(&st) : shape == 1 ? 25 * (sh_splitmix_next(&st) >> 8) : i;
                missed += !sh_ixfilter_test(f, v);
            }
            missed += !sh_ixfilter_test(f, 0) + !sh_ixfilter_test(f, UINT64_MAX);
            sh_ixfilter_free(f);
        }
        CHECK(missed == 0);
    }
}

static void few_false_positives(void)
{
    size_t n = 1000000, i;
    sh_ixfilter *f = sh_ixfilter_new(n), *g = sh_ixfilter_new(n);
    uint64_t st = 5;
    double full, tenth, mod;
    CHECK(f && g);
    if (!f || !g) return;
    for (i = 0; i < n / 10; i++) sh_ixfilter_add(f, sh_splitmix_next(&st));
    tenth = fp_rate(f, 77, 1000000);
    for (; i < sh_ixfilter_capacity(f); i++) sh_ixfilter_add(f, sh_splitmix_next(&st));
    full = fp_rate(f, 77, 1000000);
    /* a MOD_25 sketch's values: multiples of 25, tested against other multiples */
    for (i = 0; i < sh_ixfilter_capacity(g); i++) sh_ixfilter_add(g, 25 * (sh_splitmix_next(&st) >> 8));
    {
        size_t hits = 0;
        uint64_t s2 = 1234;
        for (i = 0; i < 1000000; i++) hits += sh_ixfilter_test(g, 25 * (sh_splitmix_next(&s2) >> 8));
        mod = (double)hits / 1e6;
    }
    fprintf(stderr, "false positives: %.4f%% at a tenth of capacity, %.3f%% full, %.3f%% full of multiples of 25\n",
            100 * tenth, 100 * full, 100 * mod);
    CHECK(full > 0.0 && full < 0.02);
    CHECK(mod > 0.0 && mod < 0.02);
    CHECK(tenth < full / 10);
    sh_ixfilter_free(f);
    sh_ixfilter_free(g);
}

/* the batch test answers as the single one, for batches across its 64-value steps */
static void testing_many_answers_as_testing_each(void)
{
    sh_ixfilter *f = sh_ixfilter_new(1000);
    uint64_t st = 9, v[300];
    unsigned char keep[300];
    size_t i, n, kept, want, differ = 0;
    CHECK(f != NULL);
    if (!f) return;
    for (i = 0; i < 1000; i++) sh_ixfilter_add(f, 25 * i);
    for (n = 0; n <= 300; n += 37) {
        for (i = 0; i < n; i++) v[i] = (i & 1) ? 25 * (sh_splitmix_next(&st) % 2000) : sh_splitmix_next(&st);
        kept = sh_ixfilter_test_many(f, v, n, keep);
        for (i = 0, want = 0; i < n; i++) {
            want += (size_t)sh_ixfilter_test(f, v[i]);
            differ += keep[i] != (unsigned char)sh_ixfilter_test(f, v[i]);
        }
        CHECK(kept == want);
    }
    CHECK(differ == 0);
    /* a filter built by the batch add answers as one built value by value */
    {
        sh_ixfilter *g = sh_ixfilter_new(1000);
        uint64_t vals[1000], probe = 31;
        CHECK(g != NULL);
        if (g) {
            for (i = 0; i < 1000; i++) vals[i] = 25 * i;
            sh_ixfilter_add_many(g, vals, 1000);
            for (i = 0, differ = 0; i < 200000; i++) {
                uint64_t x = (i & 1) ? 25 * (i % 3000) : sh_splitmix_next(&probe);
                differ += sh_ixfilter_test(f, x) != sh_ixfilter_test(g, x);
            }
            CHECK(differ == 0);
            sh_ixfilter_free(g);
        }
    }
    sh_ixfilter_free(f);
}

int main(void)
{
    RUN(finds_every_value_added);
    RUN(few_false_positives);
    RUN(testing_many_answers_as_testing_each);
    return TEST_END();
}
