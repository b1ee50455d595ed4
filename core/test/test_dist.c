/* The clustering phases across ranks (core/dist.h) give the single process's
 * files byte for byte: the same corpus through sh_p1/sh_dedupe/sh_pairs/
 * sh_decide in one directory, and split over 1 to 4 ranks (threads of this
 * process, core/transport_threads.h) through sh_dist_*, collected and
 * finished at rank 0. The corpus has exact copies, copies that differ in
 * case only, edits, truncations, boilerplate shared by more documents than
 * max_df, empty and binary (skipped) documents, and a rank with none. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cluster.h"
#include "dist.h"
#include "test.h"
#include "transport_threads.h"

#define NDOCS 420
#define MAXR 4

static char *texts[NDOCS];
static size_t lens[NDOCS];
static sh_shingler shingler;
static sh_sketch_params params;
static char root[256];

static uint64_t rng = 0x243f6a8885a308d3ULL;
static uint32_t next(void)
{
    rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17;
    return (uint32_t)(rng >> 11);
}

static char *words(const uint32_t *w, size_t n, int upper)
{
    char *s = (char *)malloc(n * 8 + 2), *o = s;
    size_t i;
    for (i = 0; i < n; i++) o += sprintf(o, upper ? "W%u " : "w%u ", w[i]);
    *o = 0;
    return s;
}

static void make_corpus(void)
{
    static uint32_t base[60][300];
    size_t i, k;
    for (i = 0; i < 60; i++)
        for (k = 0; k < 300; k++) base[i][k] = next() % 3000;
    for (i = 0; i < NDOCS; i++) {
        uint32_t w[400];
        size_t n = 300, b = next() % 60;
        int kind = (int)(next() % 8), upper = 0;
        memcpy(w, base[b], sizeof base[b]);
        if (kind == 1) upper = 1;                                        /* lexically equal */
        else if (kind == 2) { for (k = 0; k < 20; k++) w[next() % 300] = next() % 3000; }   /* edited */
        else if (kind == 3) n = 150;                                     /* truncated */
        else if (kind == 4) { for (k = 0; k < 300; k++) w[k] = next() % 3000; }            /* unrelated */
        /* boilerplate: in 21 distinct documents (over max_df 20: dropped), in 20 (kept) */
        if (i % 20 == 3 || (i % 20 == 11 && i < 400)) {
            for (k = 0; k < 300; k++) w[k] = next() % 3000;
            for (k = 0; k < 30; k++) w[300 + k] = (i % 20 == 3 ? 7000 : 8000) + (uint32_t)k;
            n = 330;
            upper = 0;
        }
        if (i % 50 == 7) { for (k = 0; k < 30 + i / 50 * 3; k++) w[k] = 9000 + (uint32_t)(k % 3); n = 30 + i / 50 * 3; }
        /* ^ a period of 3 words: one shingle set, other texts (shingle-equivalent) */
        texts[i] = words(w, n, upper);
        lens[i] = strlen(texts[i]);
    }
    /* an empty document, a binary one (skipped), a short one */
    texts[17][0] = 0; lens[17] = 0;
    texts[99][5] = 0; /* a NUL byte in the first 8 KiB: binary */
    texts[200][30] = 0; lens[200] = 30;
}

static int setup(void)
{
    sh_shingler_config cfg;
    sh_error err;
    memset(&cfg, 0, sizeof cfg);
    cfg.w = 5;
    cfg.k = 64;
    cfg.seed = 42;
    cfg.tokens = SH_TOKENS_RABIN;
    cfg.option = SH_OPTION_B;
    cfg.canon.flags = SH_CANON_DEFAULT_FLAGS;
    cfg.canon.invalid = SH_UTF8_LATIN1;
    if (sh_shingler_init(&shingler, &cfg, &err) != SH_OK) { fprintf(stderr, "%s\n", err.msg); return 0; }
    memset(&params, 0, sizeof params);
    params.kind = SH_SKETCH_MOD;
    params.m = 5;
    params.floor = 8;
    params.option = SH_OPTION_B;
    params.k = 64;
    params.tokens = SH_TOKENS_RABIN;
    params.w = 5;
    params.seed = shingler.c.seed;
    params.poly = shingler.c.poly;
    params.idpoly = shingler.c.idpoly;
    snprintf(root, sizeof root, "/tmp/shingle-test-dist-XXXXXX");
    return mkdtemp(root) != NULL;
}

/* Phase 1 over documents [lo, hi) into dir. */
static uint32_t sig_k; /* the min-hash signature phase 1 keeps (for the alternatives) */

static int phase1(const char *dir, size_t lo, size_t hi, int full)
{
    sh_pool_config pc;
    sh_pool *pool;
    sh_p1 w;
    sh_doc_in in[NDOCS];
    sh_doc_out out[NDOCS];
    sh_error err;
    size_t i;
    int ok;
    mkdir(dir, 0777);
    memset(&pc, 0, sizeof pc);
    pc.text = pc.html = &shingler;
    pc.params = params;
    pc.threads = 1;
    pc.want_full = full;
    pc.sig_k = sig_k;
    pc.skip_binary = 1;
    if (sh_pool_new(&pool, &pc, &err) != SH_OK) return 0;
    if (sh_p1_open(&w, dir, &pc, &params, &err) != SH_OK) { sh_pool_free(pool); return 0; }
    memset(in, 0, sizeof in);
    for (i = lo; i < hi; i++) { in[i - lo].data = texts[i]; in[i - lo].len = lens[i]; in[i - lo].path = "doc"; }
    ok = sh_pool_run(pool, in, out, hi - lo, &err) == SH_OK && sh_p1_add(&w, out, hi - lo, &err) == SH_OK &&
         sh_p1_commit(&w, &err) == SH_OK;
    if (!ok) fprintf(stderr, "phase 1: %s\n", err.msg);
    sh_pool_release(out, hi - lo);
    sh_pool_free(pool);
    return ok;
}

typedef struct result {
    sh_dedupe_stats dd;
    sh_pairs_stats ps;
    sh_decide_stats ds;
} result;

static sh_decide_config decide_config(int verify)
{
    sh_decide_config dc;
    memset(&dc, 0, sizeof dc);
    dc.policy = SH_POLICY_RESEMBLANCE;
    dc.threshold = 0.5;
    dc.candidate = verify ? 0.3 : 0.5;
    dc.verify = verify;
    return dc;
}

static int single(const char *dir, int verify, result *r)
{
    sh_pairs_config pc;
    sh_decide_config dc = decide_config(verify);
    sh_error err;
    memset(&pc, 0, sizeof pc);
    pc.memory = 1 << 20;
    pc.max_df = 20;
    if (!phase1(dir, 0, NDOCS, verify)) return 0;
    if (sh_dedupe(dir, &r->dd, &err) != SH_OK || sh_pairs(dir, &pc, &r->ps, &err) != SH_OK || sh_decide(dir, &dc, &r->ds, &err) != SH_OK) {
        fprintf(stderr, "single: %s\n", err.msg);
        return 0;
    }
    return 1;
}

/* A rank's start: its transport and comm, its phase 1 over [lo, hi), its
 * part of the run open. 0 (after ending the job) on failure. */
static int start_rank(sh_threads_world *w, int rank, size_t round, const char *dir, size_t lo, size_t hi, int verify,
                      sh_transport *t, sh_comm *c, sh_dist *d, sh_error *err)
{
    sh_dist_config cfg;
    sh_threads_transport(t, w, rank);
    sh_comm_init(c, t, round);
    memset(&cfg, 0, sizeof cfg);
    cfg.memory = 1 << 20;
    if (!phase1(dir, lo, hi, verify)) { sh_comm_abort(c, 1); return 0; }
    if (sh_dist_open(d, c, dir, &cfg, err) != SH_OK) {
        fprintf(stderr, "rank %d: %s\n", rank, err->msg);
        sh_comm_abort(c, 1);
        return 0;
    }
    return 1;
}

typedef struct rank_job {
    sh_threads_world *w;
    int rank, size, verify;
    size_t lo, hi;
    char dir[300], out[300];
    result r;
    int ok;
} rank_job;

static void *rank_main(void *ud)
{
    rank_job *j = (rank_job *)ud;
    sh_transport t;
    sh_comm c;
    sh_dist d;
    sh_pairs_config pc;
    sh_decide_config dc = decide_config(j->verify);
    sh_error err;
    size_t joined;
    unsigned what = SH_COLLECT_SKETCHES | SH_COLLECT_PAIRS | SH_COLLECT_LINKS | (j->verify ? SH_COLLECT_FULL : 0);
    memset(&pc, 0, sizeof pc);
    pc.max_df = 20;
    j->ok = 0;
    /* small rounds: many of them */
    if (!start_rank(j->w, j->rank, 2048, j->dir, j->lo, j->hi, j->verify, &t, &c, &d, &err)) return NULL;
    if (sh_dist_dedupe(&d, &j->r.dd, &err) != SH_OK || sh_dist_pairs(&d, &pc, &j->r.ps, &err) != SH_OK ||
        sh_dist_decide(&d, &dc, &j->r.ds, &err) != SH_OK || sh_dist_collect(&d, 0, j->out, what, &err) != SH_OK) {
        sh_dist_close(&d);
        goto fail;
    }
    sh_dist_close(&d);
    if (j->rank == 0 && sh_finish_clusters(j->out, NULL, 0, &j->r.ds, &joined, &err) != SH_OK) goto fail;
    j->ok = 1;
    return NULL;
fail:
    fprintf(stderr, "rank %d of %d: %s\n", j->rank, j->size, err.msg);
    sh_comm_abort(&c, 1);
    return NULL;
}

static int same_file(const char *a, const char *b)
{
    FILE *f = fopen(a, "rb"), *g = fopen(b, "rb");
    int same = f && g, x, y;
    while (same) {
        x = fgetc(f);
        y = fgetc(g);
        if (x != y) same = 0;
        if (x == EOF || y == EOF) break;
    }
    if (f) fclose(f);
    if (g) fclose(g);
    if (!same) fprintf(stderr, "%s and %s differ\n", a, b);
    return same;
}

static void remove_dir(const char *dir)
{
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
}

static void check_split(int size, int verify, const size_t *cuts)
{
    char sdir[300], path[400], path2[400];
    sh_threads_world *w;
    pthread_t th[MAXR];
    rank_job jobs[MAXR];
    result s;
    sh_error err;
    int r, all = 1;
    const char *files[] = { "docs.bin", "sketches.bin", "pairs.bin", "links.bin", "clusters.bin", "shingles.bin" };
    size_t f;
    memset(&s, 0, sizeof s);
    snprintf(sdir, sizeof sdir, "%s/single-%d-%d", root, size, verify);
    CHECK(single(sdir, verify, &s));
    CHECK(sh_threads_world_new(&w, size, &err) == SH_OK);
    for (r = 0; r < size; r++) {
        memset(&jobs[r], 0, sizeof jobs[r]);
        jobs[r].w = w; jobs[r].rank = r; jobs[r].size = size; jobs[r].verify = verify;
        jobs[r].lo = cuts[r]; jobs[r].hi = cuts[r + 1];
        snprintf(jobs[r].dir, sizeof jobs[r].dir, "%s/rank-%d-%d-%d", root, size, verify, r);
        snprintf(jobs[r].out, sizeof jobs[r].out, "%s/out-%d-%d", root, size, verify);
        if (r == 0) mkdir(jobs[r].out, 0777);
        pthread_create(&th[r], NULL, rank_main, &jobs[r]);
    }
    for (r = 0; r < size; r++) { pthread_join(th[r], NULL); if (!jobs[r].ok) all = 0; }
    sh_threads_world_free(w);
    CHECK(all);
    if (!all) return;
    for (f = 0; f < sizeof files / sizeof *files; f++) {
        if (!verify && f == 5) continue;
        snprintf(path, sizeof path, "%s/%s", sdir, files[f]);
        snprintf(path2, sizeof path2, "%s/%s", jobs[0].out, files[f]);
        CHECK(same_file(path, path2));
    }
    /* every rank has the totals; rank 0 the clusters too */
    for (r = 0; r < size; r++) {
        CHECK(memcmp(&jobs[r].r.dd, &s.dd, sizeof s.dd) == 0);
        CHECK_EQ_U64(jobs[r].r.ps.records, s.ps.records);
        CHECK_EQ_U64(jobs[r].r.ps.shingles, s.ps.shingles);
        CHECK_EQ_U64(jobs[r].r.ps.common_dropped, s.ps.common_dropped);
        CHECK_EQ_U64(jobs[r].r.ps.pair_records, s.ps.pair_records);
        CHECK_EQ_U64(jobs[r].r.ps.pairs, s.ps.pairs);
        CHECK_EQ_U64(jobs[r].r.ds.pairs, s.ds.pairs);
        CHECK_EQ_U64(jobs[r].r.ds.candidates, s.ds.candidates);
        CHECK_EQ_U64(jobs[r].r.ds.linked, s.ds.linked);
    }
    CHECK(memcmp(&jobs[0].r.ds, &s.ds, sizeof s.ds) == 0);
    /* the corpus exercises what it should */
    CHECK(s.dd.exact > 0 && s.dd.lexical > 0 && s.dd.shingle > 0 && s.dd.skipped > 0);
    CHECK(s.ps.common_dropped > 0 && s.ds.linked > 0 && s.ds.clusters > 0 && s.ds.mixed_clusters > 0);
    if (verify) CHECK(s.ds.candidates < s.ds.pairs);
}

static void test_one_rank_equals_single(void)
{
    size_t cuts[] = { 0, NDOCS };
    check_split(1, 1, cuts);
}

static void test_two_ranks_equal_single(void)
{
    size_t cuts[] = { 0, 150, NDOCS };
    check_split(2, 1, cuts);
    check_split(2, 0, cuts);
}

static void test_four_uneven_ranks_equal_single(void)
{
    size_t cuts[] = { 0, 10, 10, 300, NDOCS }; /* rank 1 has no document */
    check_split(4, 1, cuts);
    check_split(4, 0, cuts);
}

static void test_three_ranks_equal_single(void)
{
    size_t cuts[] = { 0, 140, 280, NDOCS };
    check_split(3, 1, cuts);
}

/* ---- the alternatives: super shingles and LSH, with and without a check ---- */

typedef struct alt_job {
    sh_threads_world *w;
    int rank, size, lsh;
    sh_alt_config cfg;
    size_t lo, hi;
    char dir[300], out[300];
    sh_pairs_stats ps;
    sh_decide_stats ds;
    int ok;
} alt_job;

static void *alt_main(void *ud)
{
    alt_job *j = (alt_job *)ud;
    sh_transport t;
    sh_comm c;
    sh_dist d;
    sh_dedupe_stats dd;
    sh_error err;
    size_t joined = 0;
    j->ok = 0;
    memset(&j->ds, 0, sizeof j->ds);
    if (!start_rank(j->w, j->rank, 4096, j->dir, j->lo, j->hi, j->cfg.decide.verify, &t, &c, &d, &err)) return NULL;
    if (sh_dist_dedupe(&d, &dd, &err) != SH_OK || sh_dist_keys(&d, &j->cfg, j->lsh, &j->ps, &err) != SH_OK ||
        (j->cfg.check && sh_dist_decide(&d, &j->cfg.decide, &j->ds, &err) != SH_OK) ||
        sh_dist_collect(&d, 0, j->out, SH_COLLECT_LINKS, &err) != SH_OK) {
        sh_dist_close(&d);
        goto fail;
    }
    if (j->rank == 0) {
        if (sh_dist_finish(&d, j->out, &j->ds, &joined, &err) != SH_OK) { sh_dist_close(&d); goto fail; }
        if (!j->cfg.check) j->ds.linked = joined;
    }
    sh_dist_close(&d);
    j->ok = 1;
    return NULL;
fail:
    fprintf(stderr, "rank %d of %d: %s\n", j->rank, j->size, err.msg);
    sh_comm_abort(&c, 1);
    return NULL;
}

static void check_alternative(const char *name, int lsh, int check, int meta, int size, const size_t *cuts)
{
    char sdir[300], path[400], path2[400];
    sh_threads_world *w;
    pthread_t th[MAXR];
    alt_job jobs[MAXR];
    sh_alt_config cfg;
    sh_decide_stats sds;
    sh_pairs_stats sps;
    sh_error err;
    int r, all = 1;
    memset(&cfg, 0, sizeof cfg);
    cfg.memory = 1 << 20;
    cfg.decide = decide_config(0);
    cfg.check = check;
    cfg.meta = meta;
    cfg.meta_w = 4;
    cfg.bands = 16;
    cfg.rows = 4;
    sig_k = meta ? 0 : (lsh ? 64 : 84);
    snprintf(sdir, sizeof sdir, "%s/%s-single", root, name);
    CHECK(phase1(sdir, 0, NDOCS, 0));
    CHECK(sh_dedupe(sdir, &(sh_dedupe_stats){ 0 }, &err) == SH_OK);
    CHECK((lsh ? sh_lsh(sdir, &cfg, &sds, &sps, &err) : sh_supershingle(sdir, &cfg, &sds, &sps, &err)) == SH_OK);
    CHECK(sh_threads_world_new(&w, size, &err) == SH_OK);
    for (r = 0; r < size; r++) {
        memset(&jobs[r], 0, sizeof jobs[r]);
        jobs[r].w = w; jobs[r].rank = r; jobs[r].size = size; jobs[r].lsh = lsh; jobs[r].cfg = cfg;
        jobs[r].lo = cuts[r]; jobs[r].hi = cuts[r + 1];
        snprintf(jobs[r].dir, sizeof jobs[r].dir, "%s/%s-rank%d", root, name, r);
        snprintf(jobs[r].out, sizeof jobs[r].out, "%s/%s-out", root, name);
        if (r == 0) mkdir(jobs[r].out, 0777);
        pthread_create(&th[r], NULL, alt_main, &jobs[r]);
    }
    for (r = 0; r < size; r++) { pthread_join(th[r], NULL); if (!jobs[r].ok) all = 0; }
    sh_threads_world_free(w);
    sig_k = 0;
    CHECK(all);
    if (!all) return;
    snprintf(path, sizeof path, "%s/links.bin", sdir);
    snprintf(path2, sizeof path2, "%s/links.bin", jobs[0].out);
    CHECK(same_file(path, path2));
    snprintf(path, sizeof path, "%s/clusters.bin", sdir);
    snprintf(path2, sizeof path2, "%s/clusters.bin", jobs[0].out);
    CHECK(same_file(path, path2));
    CHECK_EQ_U64(jobs[0].ds.linked, sds.linked);
    CHECK_EQ_U64(jobs[0].ds.pairs, sds.pairs);
    CHECK_EQ_U64(jobs[0].ds.candidates, sds.candidates);
    CHECK_EQ_U64(jobs[0].ds.clusters, sds.clusters);
    CHECK_EQ_U64(jobs[0].ds.mixed_clusters, sds.mixed_clusters);
    CHECK_EQ_U64(jobs[0].ps.records, sps.records);
    CHECK_EQ_U64(jobs[0].ps.shingles, sps.shingles);
    CHECK_EQ_U64(jobs[0].ps.pairs, sps.pairs);
    CHECK(sds.linked > 0 && sds.clusters > 0);
}

static void test_alternatives_across_ranks_equal_single(void)
{
    size_t cuts3[] = { 0, 140, 280, NDOCS }, cuts2[] = { 0, 210, NDOCS };
    check_alternative("lsh", 1, 1, 0, 3, cuts3);
    check_alternative("lsh-nocheck", 1, 0, 0, 2, cuts2);
    check_alternative("super", 0, 1, 0, 3, cuts3);
    check_alternative("super-nocheck", 0, 0, 0, 3, cuts3);
    check_alternative("meta", 0, 1, 1, 2, cuts2);
}

int main(void)
{
    int i;
    make_corpus();
    if (!setup()) { fprintf(stderr, "setup failed\n"); return 1; }
    RUN(test_one_rank_equals_single);
    RUN(test_two_ranks_equal_single);
    RUN(test_four_uneven_ranks_equal_single);
    RUN(test_three_ranks_equal_single);
    RUN(test_alternatives_across_ranks_equal_single);
    remove_dir(root);
    for (i = 0; i < NDOCS; i++) free(texts[i]);
    return TEST_END();
}
