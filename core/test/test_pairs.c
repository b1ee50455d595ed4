/* Pair formation (core/pairs.h) against counting every pair by hand, for
 * 8- and 4-byte keys; the common-key cutoff at exactly max_df and max_df + 1
 * ids; stars into a union-find; phase 3 in memory against the pair sorter
 * (the same pairs.bin); and the one policy test (core/policy.h). */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include "../pairs.h"
#include "../policy.h"
#include "../recfile.h"
#include "test.h"

#define NDOC 60

static uint64_t rng = 99;

/* A random <key, id> list: keys shared by 1 to 12 ids (some by many). */
static size_t make_keys(uint64_t *key, uint32_t *id, size_t cap)
{
    size_t n = 0;
    while (n < cap) {
        uint64_t k = sh_splitmix_next(&rng);
        uint32_t g = (uint32_t)(sh_splitmix_next(&rng) % 12) + 1, j, first = (uint32_t)(sh_splitmix_next(&rng) % NDOC);
        for (j = 0; j < g && n < cap; j++) {
            key[n] = k;
            id[n] = (first + 7 * j) % NDOC;   /* distinct ids within a key while g < NDOC / 7 + 1 */
            n++;
        }
    }
    return n;
}

/* The shared-key count of every pair, by hand: pairs sharing a key of at most max_df ids. */
static void brute(const uint64_t *key, const uint32_t *id, size_t n, uint32_t max_df, uint64_t keymask,
                  uint32_t count[NDOC][NDOC], uint64_t *groups, uint64_t *dropped)
{
    size_t i, j;
    unsigned char *seen = (unsigned char *)calloc(n, 1);
    memset(count, 0, sizeof(uint32_t) * NDOC * NDOC);
    *groups = *dropped = 0;
    for (i = 0; i < n; i++) {
        size_t g = 0, a, b;
        uint32_t ids[64];
        if (seen[i]) continue;
        for (j = i; j < n; j++)
            if ((key[j] & keymask) == (key[i] & keymask)) { seen[j] = 1; ids[g++] = id[j]; }
        (*groups)++;
        if (max_df && g > max_df) { (*dropped)++; continue; }
        for (a = 0; a < g; a++)
            for (b = a + 1; b < g; b++) {
                uint32_t x = ids[a] < ids[b] ? ids[a] : ids[b], y = ids[a] < ids[b] ? ids[b] : ids[a];
                if (x != y) count[x][y]++;
            }
    }
    free(seen);
}

static sh_extsort *sorted_keys(const uint64_t *key, const uint32_t *id, size_t n, size_t ks)
{
    sh_extsort *s;
    sh_error err;
    unsigned char rec[12];
    size_t i;
    if (sh_extsort_open(&s, ks + 4, ks, 0, NULL, NULL, &err) != SH_OK) return NULL;
    for (i = 0; i < n; i++) {
        sh_key_record(rec, ks, key[i], id[i]);
        sh_extsort_add(s, rec, 1, &err);
    }
    sh_extsort_finish(s, &err);
    return s;
}

static void pairs_and_counts_equal_counting_by_hand(void)
{
    static uint64_t key[3000];
    static uint32_t id[3000], want[NDOC][NDOC], got[NDOC][NDOC];
    const uint32_t max_dfs[] = { 0, 2, 5, 9 };
    size_t n = make_keys(key, id, 3000), ki, mi;
    for (ki = 0; ki < 2; ki++)
        for (mi = 0; mi < 4; mi++) {
            size_t ks = ki ? 4 : 8, m, i;
            uint64_t groups, dropped;
            sh_extsort *keys = sorted_keys(key, id, n, ks), *pairs;
            sh_form_config c;
            sh_form_stats st;
            sh_error err;
            unsigned char buf[SH_PAIR_RECORD * 256];
            brute(key, id, n, max_dfs[mi], ks == 8 ? UINT64_MAX : 0xffffffffULL, want, &groups, &dropped);
            CHECK(keys != NULL && sh_pairsort_open(&pairs, 0, NULL, &err) == SH_OK);
            memset(&c, 0, sizeof c);
            memset(&st, 0, sizeof st);
            c.key_size = ks;
            c.max_df = max_dfs[mi];
            c.pairs = pairs;
            CHECK(sh_form_pairs(keys, &c, &st, &err) == SH_OK);
            CHECK(st.records == n && st.keys == groups && st.dropped == dropped);
            CHECK(sh_extsort_finish(pairs, &err) == SH_OK);
            memset(got, 0, sizeof got);
            while (sh_extsort_read(pairs, buf, 256, &m, &err) == SH_OK && m > 0)
                for (i = 0; i < m; i++) {
                    const unsigned char *r = buf + SH_PAIR_RECORD * i;
                    CHECK(sh_pair_a(r) < sh_pair_b(r) && sh_pair_b(r) < NDOC);
                    got[sh_pair_a(r)][sh_pair_b(r)] += sh_pair_count(r);
                }
            CHECK(memcmp(got, want, sizeof got) == 0);
            sh_extsort_free(keys);
            sh_extsort_free(pairs);
        }
}

/* "Common shingles": a key shared by exactly max_df ids makes its pairs, one
 * shared by max_df + 1 makes none and counts as dropped. */
static void a_key_of_max_df_ids_is_kept_and_of_one_more_dropped(void)
{
    uint64_t key[7 + 8];
    uint32_t id[7 + 8], i;
    sh_extsort *keys, *pairs;
    sh_form_config c;
    sh_form_stats st;
    sh_error err;
    size_t m;
    unsigned char buf[SH_PAIR_RECORD * 64];
    for (i = 0; i < 7; i++) { key[i] = 1; id[i] = i; }           /* 7 ids: kept at max_df 7 */
    for (i = 0; i < 8; i++) { key[7 + i] = 2; id[7 + i] = 10 + i; } /* 8 ids: dropped */
    keys = sorted_keys(key, id, 15, 8);
    CHECK(keys != NULL && sh_pairsort_open(&pairs, 0, NULL, &err) == SH_OK);
    memset(&c, 0, sizeof c);
    memset(&st, 0, sizeof st);
    c.key_size = 8;
    c.max_df = 7;
    c.pairs = pairs;
    CHECK(sh_form_pairs(keys, &c, &st, &err) == SH_OK);
    CHECK(st.keys == 2 && st.dropped == 1 && st.pair_records == 21);
    CHECK(sh_extsort_finish(pairs, &err) == SH_OK);
    CHECK(sh_extsort_read(pairs, buf, 64, &m, &err) == SH_OK && m == 21);
    for (i = 0; i < m; i++) CHECK(sh_pair_b(buf + SH_PAIR_RECORD * i) < 7 && sh_pair_count(buf + SH_PAIR_RECORD * i) == 1);
    sh_extsort_free(keys);
    sh_extsort_free(pairs);
}

/* Without a pair sorter, the ids of each key are joined: the components are
 * those of "share a key of at most max_df ids". */
static void stars_join_what_pairs_would_link(void)
{
    static uint64_t key[800];
    static uint32_t id[800], want[NDOC][NDOC];
    uint32_t la[NDOC], lb[NDOC], a, b;
    size_t n = make_keys(key, id, 800);
    uint64_t groups, dropped;
    sh_unionfind *u1, *u2;
    sh_extsort *keys = sorted_keys(key, id, n, 8);
    sh_form_config c;
    sh_form_stats st;
    sh_error err;
    brute(key, id, n, 6, UINT64_MAX, want, &groups, &dropped);
    CHECK(sh_uf_new(&u1, NDOC, &err) == SH_OK && sh_uf_new(&u2, NDOC, &err) == SH_OK);
    for (a = 0; a < NDOC; a++)
        for (b = a + 1; b < NDOC; b++)
            if (want[a][b]) sh_uf_union(u1, a, b);
    memset(&c, 0, sizeof c);
    memset(&st, 0, sizeof st);
    c.key_size = 8;
    c.max_df = 6;
    c.uf = u2;
    CHECK(sh_form_pairs(keys, &c, &st, &err) == SH_OK);
    CHECK(st.pair_records == 0 && st.dropped == dropped);
    sh_uf_labels(u1, la, SH_UF_LABEL_MIN);
    sh_uf_labels(u2, lb, SH_UF_LABEL_MIN);
    CHECK(memcmp(la, lb, sizeof la) == 0);
    sh_uf_free(u1);
    sh_uf_free(u2);
    sh_extsort_free(keys);
}

static void the_policy_test_at_its_thresholds(void)
{
    sh_estimate e;
    sh_policy p;
    memset(&e, 0, sizeof e);
    e.resemblance = 0.5; e.contain_ab = 0.9; e.contain_ba = 0.3;
    CHECK(sh_policy_passes(SH_POLICY_RESEMBLANCE, 0.5, &e) && !sh_policy_passes(SH_POLICY_RESEMBLANCE, 0.51, &e));
    CHECK(sh_policy_passes(SH_POLICY_CONTAINMENT, 0.9, &e) && !sh_policy_passes(SH_POLICY_CONTAINMENT, 0.91, &e));
    e.contain_ab = 0.3; e.contain_ba = 0.9;   /* either direction */
    CHECK(sh_policy_passes(SH_POLICY_CONTAINMENT, 0.9, &e));
    CHECK(sh_policy_passes(SH_POLICY_EITHER, 0.7, &e) && !sh_policy_passes(SH_POLICY_BOTH, 0.7, &e));
    CHECK(sh_policy_passes(SH_POLICY_BOTH, 0.5, &e) && !sh_policy_passes(SH_POLICY_EITHER, 0.95, &e));
    CHECK(!sh_policy_passes((sh_policy)7, 0, &e));
    CHECK(sh_policy_parse("either", &p) && p == SH_POLICY_EITHER && !sh_policy_parse("Either", &p));
    CHECK(strcmp(sh_policy_name(SH_POLICY_BOTH), "both") == 0 && strcmp(sh_policy_name((sh_policy)9), "?") == 0);
}

/* Phase 3 in memory writes the pairs.bin that the pair sorter and
 * sh_pairs_write make, with the same counters: keys of 1 to 150 ids drawn
 * with repeats (one id twice under a key), ids up to 300 (groups and lists
 * long enough for the radix sort), every max_df, 4- and 8-byte keys. */
static void pairs_in_memory_are_the_sorters_pairs(void)
{
    enum { CAP = 20000, IDS = 300 };
    static uint64_t key[CAP];
    static uint32_t id[CAP];
    const uint32_t max_dfs[] = { 0, 2, 40, 149 };
    char dir[] = "/tmp/test_pairs_XXXXXX", pa[64], pb[64];
    size_t n = 0, ki, mi;
    CHECK(mkdtemp(dir) != NULL);
    snprintf(pa, sizeof pa, "%s/a.bin", dir);
    snprintf(pb, sizeof pb, "%s/b.bin", dir);
    while (n < CAP) {
        uint64_t k = sh_splitmix_next(&rng);
        uint32_t g = (uint32_t)(sh_splitmix_next(&rng) % 150) + 1, j;
        if (sh_splitmix_next(&rng) % 4) g = g % 6 + 1; /* most keys small */
        for (j = 0; j < g && n < CAP; j++, n++) {
            key[n] = k;
            id[n] = (uint32_t)(sh_splitmix_next(&rng) % IDS);
        }
    }
    for (ki = 0; ki < 2; ki++)
        for (mi = 0; mi < 4; mi++) {
            size_t ks = ki ? 4 : 8;
            /* the counting on 1 to 4 threads, in chunks of every size down to one id */
            static const int threads[] = { 1, 2, 3, 2, 4 };
            static const uint32_t chunk_ids[] = { 0, 0, 7, 1, 13 };
            sh_extsort *k1 = sorted_keys(key, id, n, ks), *pairs;
            sh_form_config c;
            sh_form_stats s1;
            sh_recfile ra, rb;
            sh_error err;
            uint64_t c1 = 0;
            size_t ti;
            CHECK(k1 && sh_pairsort_open(&pairs, 0, NULL, &err) == SH_OK);
            memset(&c, 0, sizeof c);
            memset(&s1, 0, sizeof s1);
            c.key_size = ks;
            c.max_df = max_dfs[mi];
            c.pairs = pairs;
            CHECK(sh_form_pairs(k1, &c, &s1, &err) == SH_OK);
            CHECK(sh_extsort_finish(pairs, &err) == SH_OK);
            CHECK(sh_pairs_write(pa, pairs, 1, &c1, &err) == SH_OK);
            c.pairs = NULL;
            CHECK(sh_recfile_open(&ra, pa, SH_MAGIC_PAIRS, sizeof(sh_pairrec), 1, &err) == SH_OK);
            for (ti = 0; ti < sizeof threads / sizeof *threads; ti++) {
                sh_extsort *k2 = sorted_keys(key, id, n, ks);
                sh_form_stats s2;
                uint64_t c2 = 0;
                double t = 0;
                memset(&s2, 0, sizeof s2);
                c.threads = threads[ti];
                c.chunk_ids = chunk_ids[ti];
                CHECK(k2 && sh_form_pairs_memory(k2, &c, IDS, pb, &s2, &c2, &t, &err) == SH_OK);
                CHECK(s1.records == s2.records && s1.keys == s2.keys && s1.dropped == s2.dropped);
                CHECK(s1.pair_records == s2.pair_records && s1.pair_records > 0 && c1 == c2 && c1 > 0);
                CHECK(sh_recfile_open(&rb, pb, SH_MAGIC_PAIRS, sizeof(sh_pairrec), 1, &err) == SH_OK);
                CHECK(ra.count == rb.count && memcmp(ra.records, rb.records, ra.count * sizeof(sh_pairrec)) == 0);
                sh_recfile_close(&rb);
                sh_extsort_free(k2);
            }
            sh_recfile_close(&ra);
            sh_extsort_free(k1);
            sh_extsort_free(pairs);
        }
    unlink(pa);
    unlink(pb);
    rmdir(dir);
}

int main(void)
{
    RUN(pairs_and_counts_equal_counting_by_hand);
    RUN(a_key_of_max_df_ids_is_kept_and_of_one_more_dropped);
    RUN(stars_join_what_pairs_would_link);
    RUN(pairs_in_memory_are_the_sorters_pairs);
    RUN(the_policy_test_at_its_thresholds);
    return TEST_END();
}
