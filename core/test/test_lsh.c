/* core/lsh.h: banding parameters as datasketch chooses them, and an index
 * whose answers agree with a brute-force scan of the same sketches. */
#include "lsh.h"
#include "shingler.h"
#include "test.h"

#include <math.h>
#include <stdlib.h>

static sh_shingler sh;
static sh_work work;

static uint64_t rng = 88172645463325252ULL;
static uint32_t rnd(uint32_t n)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)(rng % n);
}

static sh_sketch *sketch_words(const uint32_t *w, size_t n, uint8_t kind, uint32_t s)
{
    static char buf[1 << 20];
    size_t i, k = 0;
    sh_sketch_params p;
    sh_sketch *out = NULL;
    sh_error err;
    for (i = 0; i < n; i++) k += (size_t)snprintf(buf + k, sizeof buf - k, "w%u ", w[i]);
    memset(&p, 0, sizeof p);
    p.kind = kind;
    p.s = s;
    p.m = 4;
    if (sh_shingle_text(&sh, &work, buf, k, &err) != SH_OK) exit(2);
    if (sh_sketch_build(&sh, &work, &p, 0, work.toks.n, &out, &err) != SH_OK) exit(2);
    return out;
}

/* The known answers of text-dedup's optimal_param (its doctests, the same
 * integrals as datasketch's _optimal_param): (0.75, 256) gives (b, r) =
 * (21, 12), and with weights 0.1 / 0.9 (28, 9). docs/vectors.md. */
static void test_shape_as_datasketch_chooses_it(void)
{
    uint32_t b, r;
    sh_lsh_shape(0.75, 256, 0.5, 0.5, &b, &r);
    CHECK(b == 21 && r == 12);
    sh_lsh_shape(0.75, 256, 0.1, 0.9, &b, &r);
    CHECK(b == 28 && r == 9);
    CHECK_NEAR(sh_lsh_probability(0.5, 1, 1), 0.5, 1e-12);
    CHECK_NEAR(sh_lsh_probability(0.8, 2, 2), 1 - (1 - 0.64) * (1 - 0.64), 1e-12);
}

static void test_areas_against_a_fine_riemann_sum(void)
{
    double fp, fn, rf = 0, rn = 0;
    int i, n = 200000;
    sh_lsh_areas(0.7, 10, 6, &fp, &fn);
    for (i = 0; i < n; i++) {
        double x = (i + 0.5) / n, p = sh_lsh_probability(x, 10, 6);
        if (x < 0.7) rf += p / n; else rn += (1 - p) / n;
    }
    CHECK_NEAR(fp, rf, 1e-4);
    CHECK_NEAR(fn, rn, 1e-4);
}

/* Families of near-duplicates; the index's answers, for every query, are
 * exactly the brute-force answers among the candidates its bands give, and
 * the bands miss few of the brute-force answers above the threshold. */
static void test_queries_agree_with_brute_force(void)
{
    enum { FAM = 40, PER = 5, N = FAM * PER, LEN = 300 };
    static uint32_t base[FAM][LEN], doc[LEN];
    sh_sketch *sk[N];
    sh_lsh *ix;
    sh_lsh_config c;
    sh_error err;
    uint32_t ids[N], i, j, f;
    size_t want = 0, found = 0, extra = 0;
    for (f = 0; f < FAM; f++)
        for (j = 0; j < LEN; j++) base[f][j] = rnd(100000);
    for (i = 0; i < N; i++) {
        f = i / PER;
        for (j = 0; j < LEN; j++) doc[j] = rnd(1000) < (i % PER) * 8 ? rnd(100000) : base[f][j];
        sk[i] = sketch_words(doc, LEN, SH_SKETCH_MIN, 200);
    }
    memset(&c, 0, sizeof c);
    sh_lsh_shape(0.7, 100, 0.1, 0.9, &c.bands, &c.rows); /* shingle's default weights */
    c.cbands = 32;
    c.seed = 11;
    CHECK(sh_lsh_new(&c, sk[0], &ix, &err) == SH_OK);
    for (i = 0; i < N; i++) CHECK(sh_lsh_insert(ix, sk[i], &ids[i], &err) == SH_OK);
    CHECK(sh_lsh_count(ix) == N);
    for (i = 0; i < N; i++) {
        sh_lsh_hit *h;
        size_t n, k;
        CHECK(sh_lsh_query(ix, sk[i], SH_LSH_RESEMBLANCE, 0.7, 0, &h, &n, NULL, &err) == SH_OK);
        for (j = 0; j < N; j++) {
            sh_estimate e;
            int hit = 0;
            sh_sketch_estimate(sk[i], sk[j], &e, &err);
            for (k = 0; k < n; k++) if (h[k].id == ids[j]) { hit = 1; CHECK_NEAR(h[k].resemblance, e.resemblance, 1e-12); }
            if (e.resemblance >= 0.7) { want++; found += (size_t)hit; }
            else extra += (size_t)hit;
        }
        for (k = 1; k < n; k++) CHECK(h[k - 1].resemblance >= h[k].resemblance);
        free(h);
    }
    CHECK(extra == 0);          /* nothing below the threshold is returned */
    CHECK(found * 100 >= want * 95); /* and few above it are missed */
    fprintf(stderr, "lsh C test: %zu of %zu pairs at estimated resemblance >= 0.7 found (b = %u, r = %u)\n", found, want,
            c.bands, c.rows);
    /* removal: a removed sketch is never returned again, its id is reused */
    CHECK(sh_lsh_remove(ix, ids[3]) == 1);
    CHECK(sh_lsh_remove(ix, ids[3]) == 0);
    {
        sh_lsh_hit *h;
        size_t n, k;
        uint32_t again;
        CHECK(sh_lsh_query(ix, sk[3], SH_LSH_RESEMBLANCE, -1, 0, &h, &n, NULL, &err) == SH_OK);
        for (k = 0; k < n; k++) CHECK(h[k].id != ids[3]);
        free(h);
        CHECK(sh_lsh_insert(ix, sk[3], &again, &err) == SH_OK && again == ids[3]);
    }
    sh_lsh_free(ix);
    for (i = 0; i < N; i++) free(sk[i]);
}

/* A document contained in a much larger one is found by a containment query. */
static void test_containment_query_finds_the_container(void)
{
    enum { BIG = 3000, SMALL = 400 };
    static uint32_t big[BIG];
    sh_sketch *b, *s, *other;
    sh_lsh *ix;
    sh_lsh_config c;
    sh_error err;
    sh_lsh_hit *h;
    size_t n;
    uint32_t id_b, id_o, i;
    for (i = 0; i < BIG; i++) big[i] = rnd(100000);
    b = sketch_words(big, BIG, SH_SKETCH_MOD, 0);
    s = sketch_words(big + 1000, SMALL, SH_SKETCH_MOD, 0);
    for (i = 0; i < BIG; i++) big[i] = rnd(100000);
    other = sketch_words(big, BIG, SH_SKETCH_MOD, 0);
    memset(&c, 0, sizeof c);
    c.bands = 8;
    c.rows = 4;
    c.cbands = 48;
    CHECK(sh_lsh_new(&c, b, &ix, &err) == SH_OK);
    CHECK(sh_lsh_insert(ix, b, &id_b, &err) == SH_OK);
    CHECK(sh_lsh_insert(ix, other, &id_o, &err) == SH_OK);
    CHECK(sh_lsh_query(ix, s, SH_LSH_CONTAINING, 0.8, 0, &h, &n, NULL, &err) == SH_OK);
    CHECK(n == 1 && h[0].id == id_b && h[0].contain_qd >= 0.8);
    free(h);
    /* no resemblance: the small one is a seventh of the big one */
    CHECK(sh_lsh_query(ix, s, SH_LSH_RESEMBLANCE, 0.5, 0, &h, &n, NULL, &err) == SH_OK && n == 0);
    free(h);
    /* and the big one contains it the other way round */
    CHECK(sh_lsh_query(ix, b, SH_LSH_CONTAINED, 0.8, 0, &h, &n, NULL, &err) == SH_OK && n == 1 && h[0].id == id_b);
    free(h);
    sh_lsh_free(ix);
    free(b);
    free(s);
    free(other);
}

static void test_misuse_is_refused(void)
{
    uint32_t w[50], i, id;
    sh_sketch *a, *m;
    sh_lsh *ix;
    sh_lsh_config c;
    sh_error err;
    sh_lsh_hit *h;
    size_t n;
    for (i = 0; i < 50; i++) w[i] = i;
    a = sketch_words(w, 50, SH_SKETCH_MIN, 100);
    m = sketch_words(w, 50, SH_SKETCH_MOD, 0);
    memset(&c, 0, sizeof c);
    c.bands = 4;
    c.rows = 2;
    CHECK(sh_lsh_new(&c, a, &ix, &err) == SH_OK);
    CHECK(sh_lsh_insert(ix, m, &id, &err) == SH_EMISMATCH);
    CHECK(sh_lsh_query(ix, a, SH_LSH_CONTAINING, 0.5, 0, &h, &n, NULL, &err) == SH_EINVAL);
    CHECK(strstr(err.msg, "containment = true") != NULL);
    sh_lsh_free(ix);
    c.bands = 0;
    CHECK(sh_lsh_new(&c, a, &ix, &err) == SH_EINVAL);
    free(a);
    free(m);
}

int main(void)
{
    sh_shingler_config c;
    sh_error err;
    memset(&c, 0, sizeof c);
    c.w = 5;
    c.k = 64;
    c.seed = 3;
    c.canon.flags = SH_CANON_DEFAULT_FLAGS;
    if (sh_shingler_init(&sh, &c, &err) != SH_OK) return 2;
    RUN(test_shape_as_datasketch_chooses_it);
    RUN(test_areas_against_a_fine_riemann_sum);
    RUN(test_queries_agree_with_brute_force);
    RUN(test_containment_query_finds_the_container);
    RUN(test_misuse_is_refused);
    sh_work_free(&work);
    return TEST_END();
}
