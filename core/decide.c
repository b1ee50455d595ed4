/* Phase 4 of "Syntactic Clustering of the Web" (cluster.h): deciding the
 * candidate pairs by the policy, union-find, clusters.bin; the decider is
 * shared with the alternatives (alternatives.c) through run.h. */
#include "cluster.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "byteorder.h"
#include "extsort.h"
#include "pairest.h"
#include "parwork.h"
#include "run.h"
#include "unionfind.h"
#include "verifysets.h"

sh_status sh_decider_open(sh_decider *x, const char *dir, const sh_decide_config *c, int need_sigs,
                          sh_decide_stats *st, sh_error *err)
{
    sh_status s;
    size_t m;
    char path[4096];
    memset(x, 0, sizeof *x);
    x->c = c;
    x->st = st;
    memset(st, 0, sizeof *st);
    if ((s = sh_run_open(&x->r, dir, 1, c->verify, need_sigs, err)) != SH_OK) return s;
    x->r.mem = c->fullsets;
    m = sh_run_max_len(&x->r, 0);
    x->sa = (sh_sketch *)malloc(sizeof(sh_sketch) + m * 8);
    x->sb = (sh_sketch *)malloc(sizeof(sh_sketch) + m * 8);
    if (c->verify) {
        m = sh_run_max_len(&x->r, 1);
        x->fa = (sh_sketch *)malloc(sizeof(sh_sketch) + m * 8);
        x->fb = (sh_sketch *)malloc(sizeof(sh_sketch) + m * 8);
    }
    if (!x->sa || !x->sb || (c->verify && (!x->fa || !x->fb)) || sh_uf_new(&x->uf, x->r.n, err) != SH_OK)
        return sh_error_set(err, SH_ENOMEM, 0, "out of memory for %u documents", x->r.n);
    x->j.r = &x->r;
    x->j.c = c;
    x->j.fa = c->verify ? x->fa->v : NULL;
    x->j.fb = c->verify ? x->fb->v : NULL;
    sh_run_path(path, sizeof path, dir, "links.bin");
    return sh_recwriter_open(&x->links, path, SH_MAGIC_LINKS, sizeof(sh_linkrec), NULL, 0, err);
}

/* Whether the policy needs the resemblance to reach its score: then a pair
 * whose resemblance bound (sh_resemblance_bound) is below it fails without
 * its values being compared. */
static int needs_resemblance(const sh_decide_config *c)
{
    return !c->accept && (c->policy == SH_POLICY_RESEMBLANCE || c->policy == SH_POLICY_BOTH);
}

/* verdicts of judge_pair */
enum { NOT_CANDIDATE, DECIDED, FAILS };

/* Judge the pair (a, b). *verdict: NOT_CANDIDATE; DECIDED, *xe being what
 * decides (its exact estimate with verify) and l the link it would be (a, b,
 * the estimated scores, the exact ones or -1); FAILS, a candidate that
 * cannot pass by its bound (nothing else set). With verify a pair is a
 * candidate when its estimate passes the candidate score, or always with a
 * caller's policy (which decides on exact values); without, every pair. The
 * bounds leave the verdicts, the links and the counts as comparing every
 * value would (spec/decide_threads_spec.lua). */
static sh_status judge_pair(sh_judge *j, uint32_t a, uint32_t b, sh_linkrec *l, sh_estimate *e, sh_estimate *xe, int *verdict,
                            sh_error *err)
{
    const sh_decide_config *c = j->c;
    sh_sketch ha, hb;
    const uint64_t *va, *vb;
    sh_status s;
    int bound = needs_resemblance(c);
    *verdict = NOT_CANDIDATE;
    va = sh_run_values(j->r, a, &ha, 0, NULL, err);
    vb = sh_run_values(j->r, b, &hb, 0, NULL, err);
    if (bound && sh_resemblance_bound(&ha, va, &hb, vb) < (c->verify ? c->candidate : c->threshold)) {
        if (!c->verify) *verdict = FAILS;
        return SH_OK;
    }
    if ((s = sh_sketch_estimate_at(&ha, va, &hb, vb, e, err)) != SH_OK) return s;
    l->a = a; l->b = b;
    l->r = (float)e->resemblance; l->cab = (float)e->contain_ab; l->cba = (float)e->contain_ba;
    l->xr = l->xcab = l->xcba = -1.0f;
    if (!c->verify) {
        *verdict = DECIDED;
        *xe = *e;
        return SH_OK;
    }
    if (!c->accept && !sh_policy_passes(c->policy, c->candidate, e)) return SH_OK;
    /* the full sets' sizes bound the exact resemblance */
    if (bound && sh_resemblance_bound_sizes(j->r->d[a].full_n, j->r->d[b].full_n) < c->threshold) {
        *verdict = FAILS;
        return SH_OK;
    }
    *verdict = DECIDED;
    /* the pairs come sorted by a: its full set is read once for all of them */
    if (j->fa_doc != a + 1) {
        j->fa_doc = 0;
        if (!(j->fav = sh_run_values(j->r, a, &j->fah, 1, j->fa, err))) return err ? err->code : SH_EIO;
        j->fa_doc = a + 1;
    }
    if (!(vb = sh_run_values(j->r, b, &hb, 1, j->fb, err))) return err ? err->code : SH_EIO;
    if ((s = sh_sketch_estimate_at(&j->fah, j->fav, &hb, vb, xe, err)) != SH_OK) return s;
    l->xr = (float)xe->resemblance; l->xcab = (float)xe->contain_ab; l->xcba = (float)xe->contain_ba;
    return SH_OK;
}

/* Decide one candidate pair of representatives; link it if it passes. */
sh_status sh_decider_pair(sh_decider *x, uint32_t a, uint32_t b, sh_error *err)
{
    sh_estimate e, xe;
    sh_linkrec l;
    sh_status s;
    int verdict;
    x->st->pairs++;
    if ((s = judge_pair(&x->j, a, b, &l, &e, &xe, &verdict, err)) != SH_OK) return s;
    if (verdict == NOT_CANDIDATE) return SH_OK;
    x->st->candidates++;
    if (verdict == FAILS) return SH_OK;
    if (x->c->accept) {
        int ok = x->c->accept(x->c->accept_ud, a, b, (uint32_t)e.both, &xe, x->r.d[a].n_shingles, x->r.d[b].n_shingles);
        if (ok < 0) return sh_error_set(err, SH_EINVAL, 0, "the policy stopped phase 4 at the pair (%u, %u)", a + 1, b + 1);
        if (!ok) return SH_OK;
    } else if (!sh_policy_passes(x->c->policy, x->c->threshold, &xe)) {
        return SH_OK;
    }
    x->st->linked++;
    sh_uf_union(x->uf, a, b);
    return sh_recwriter_append(&x->links, &l, 1, err);
}

/* Identical documents join their representative's cluster; clusters.bin lists
 * the members of clusters of two or more documents, by cluster and doc. The
 * union-find holds the links; its cluster counts go into st. */
sh_status sh_write_clusters(const sh_run *r, sh_unionfind *uf, const char *dir, sh_decide_stats *st, sh_error *err)
{
    uint32_t n = r->n, i;
    uint32_t *label = (uint32_t *)malloc(((size_t)n + 1) * 4), *size = (uint32_t *)calloc((size_t)n + 1, 4);
    unsigned char *mixed = (unsigned char *)calloc((size_t)n + 1, 1);
    sh_clusterrec *recs = (sh_clusterrec *)malloc(((size_t)n + 1) * sizeof *recs);
    sh_recwriter w;
    char path[4096];
    size_t m = 0;
    sh_status s;
    memset(&w, 0, sizeof w);
    if (!label || !size || !mixed || !recs) { s = sh_error_set(err, SH_ENOMEM, 0, "out of memory"); goto done; }
    for (i = 0; i < n; i++)
        if (r->d[i].rep != i) sh_uf_union(uf, i, r->d[i].rep);
    sh_uf_labels(uf, label, SH_UF_LABEL_MIN);
    for (i = 0; i < n; i++) size[label[i]]++;
    /* a cluster is "identical only" when no member differs from its
     * representative by more than exact identity and no link was needed */
    for (i = 0; i < n; i++) {
        const sh_docrec *d = &r->d[i];
        if (d->rep == i && label[i] != i) mixed[label[i]] = 1;
        if (d->dup != SH_DUP_NONE && d->dup != SH_DUP_EXACT) mixed[label[i]] = 1;
    }
    for (i = 0; i < n; i++) {
        if (size[label[i]] < 2) continue;
        recs[m].cluster = label[i];
        recs[m].doc = i;
        m++;
        st->clustered_docs++;
        if (label[i] == i) {
            st->clusters++;
            if (mixed[i]) st->mixed_clusters++;
            else st->identical_only_clusters++;
        }
    }
    /* members are added in doc order, and a cluster's label is its smallest
     * member, so sorting by cluster keeps docs in order within each */
    {
        unsigned char *k = (unsigned char *)malloc(m * 8 + 8), *ka = (unsigned char *)malloc(m * 8 + 8);
        size_t j;
        if (!k || !ka) { free(k); free(ka); s = sh_error_set(err, SH_ENOMEM, 0, "out of memory"); goto done; }
        for (j = 0; j < m; j++) { sh_store_be32(k + 8 * j, recs[j].cluster); sh_store_be32(k + 8 * j + 4, recs[j].doc); }
        sh_radix_sort(k, ka, m, 8, 8);
        for (j = 0; j < m; j++) { recs[j].cluster = sh_load_be32(k + 8 * j); recs[j].doc = sh_load_be32(k + 8 * j + 4); }
        free(k);
        free(ka);
    }
    sh_run_path(path, sizeof path, dir, "clusters.bin");
    if ((s = sh_recwriter_open(&w, path, SH_MAGIC_CLUSTERS, sizeof(sh_clusterrec), NULL, 0, err)) != SH_OK) goto done;
    if ((s = sh_recwriter_append(&w, recs, m, err)) != SH_OK) goto done;
    s = sh_recwriter_commit(&w, err);
done:
    if (s != SH_OK) sh_recwriter_abort(&w);
    free(label);
    free(size);
    free(mixed);
    free(recs);
    return s;
}

sh_status sh_decider_finish(sh_decider *x, const char *dir, sh_error *err)
{
    sh_status s = sh_recwriter_commit(&x->links, err);
    if (s != SH_OK) return s;
    return sh_write_clusters(&x->r, x->uf, dir, x->st, err);
}

void sh_decider_close(sh_decider *x)
{
    sh_recwriter_abort(&x->links);
    sh_uf_free(x->uf);
    free(x->sa);
    free(x->sb);
    free(x->fa);
    free(x->fb);
    sh_run_close(&x->r);
}

/* pairs.bin is judged in rounds of ROUND_CHUNKS chunks of chunk_pairs pairs
 * (CHUNK_PAIRS unless the caller says) on the threads (parwork.h); the links
 * of a round's chunks are then linked and written in pair order, as one
 * thread would. A round bounds the links held in memory. */
#define CHUNK_PAIRS 8192u
#define ROUND_CHUNKS 128u

typedef struct chunk_out {
    sh_linkrec *links;
    size_t n, cap;
    uint64_t candidates;
} chunk_out;

typedef struct round_job {
    const sh_pairrec *p;
    uint64_t count, first;     /* pairs in all; the round's first */
    uint64_t chunk;            /* pairs per chunk */
    uint32_t n_docs;
    const char *path;
    chunk_out *out;            /* ROUND_CHUNKS */
    unsigned char *flag;       /* sh_candidates: per pair of the round, 1 if a candidate */
    const unsigned char *cand; /* sh_decide: per pair of the run, 0 if sh_candidates found it no candidate
                                * (with the same options, for the sets in memory), or NULL */
    const sh_pairest *pe;      /* sh_candidates: the estimates from the shared counts, or NULL */
} round_job;

typedef struct worker {
    round_job *job;
    sh_judge j;
} worker;

static sh_status check_pair(const round_job *jb, uint64_t i, sh_error *err)
{
    const sh_pairrec *p = jb->p + i;
    if (p->a < jb->n_docs && p->b < jb->n_docs) return SH_OK;
    return sh_error_set(err, SH_EFORMAT, (size_t)(sizeof *p * i), "%s names document %u of only %u: it belongs to another run",
                        jb->path, p->a > p->b ? p->a : p->b, jb->n_docs);
}

static void chunk_range(const round_job *jb, size_t c, uint64_t *lo, uint64_t *hi)
{
    *lo = jb->first + (uint64_t)c * jb->chunk;
    *hi = *lo + jb->chunk < jb->count ? *lo + jb->chunk : jb->count;
}

/* a chunk of phase 4 by the policy: its candidates counted, its links kept */
static sh_status decide_chunk(void *ctx, size_t c, sh_error *err)
{
    worker *w = (worker *)ctx;
    round_job *jb = w->job;
    chunk_out *o = &jb->out[c];
    uint64_t i, lo, hi;
    sh_status s;
    chunk_range(jb, c, &lo, &hi);
    o->n = 0;
    o->candidates = 0;
    for (i = lo; i < hi; i++) {
        sh_estimate e, xe;
        sh_linkrec l;
        int verdict;
        if ((s = check_pair(jb, i, err)) != SH_OK) return s;
        if (jb->cand && !jb->cand[i]) continue;
        if ((s = judge_pair(&w->j, jb->p[i].a, jb->p[i].b, &l, &e, &xe, &verdict, err)) != SH_OK) return s;
        if (verdict == NOT_CANDIDATE) continue;
        o->candidates++;
        if (verdict == FAILS || !sh_policy_passes(w->j.c->policy, w->j.c->threshold, &xe)) continue;
        if (o->n == o->cap) {
            size_t nc = o->cap ? 2 * o->cap : 256;
            sh_linkrec *nl = (sh_linkrec *)realloc(o->links, nc * sizeof *nl);
            if (!nl) return sh_error_set(err, SH_ENOMEM, 0, "out of memory");
            o->links = nl;
            o->cap = nc;
        }
        o->links[o->n++] = l;
    }
    return SH_OK;
}

/* a chunk of sh_candidates: which pairs exact verification decides */
static sh_status candidate_chunk(void *ctx, size_t c, sh_error *err)
{
    worker *w = (worker *)ctx;
    round_job *jb = w->job;
    uint64_t i, lo, hi;
    sh_status s;
    chunk_range(jb, c, &lo, &hi);
    jb->out[c].candidates = 0;
    for (i = lo; i < hi; i++) {
        sh_sketch ha, hb;
        const uint64_t *va, *vb;
        sh_estimate e;
        unsigned char f = 1;
        if ((s = check_pair(jb, i, err)) != SH_OK) return s;
        if (jb->pe && !w->j.c->accept) {
            /* the same estimate from the counts (pairest.h); no bound needed:
             * the resemblance is at most the bound, so the verdict is the same */
            sh_pairest_estimate(jb->pe, &jb->p[i], &e);
            f = (unsigned char)sh_policy_passes(w->j.c->policy, w->j.c->candidate, &e);
        } else if (!w->j.c->accept) {
            va = sh_run_values(w->j.r, jb->p[i].a, &ha, 0, NULL, err);
            vb = sh_run_values(w->j.r, jb->p[i].b, &hb, 0, NULL, err);
            if (needs_resemblance(w->j.c) && sh_resemblance_bound(&ha, va, &hb, vb) < w->j.c->candidate) {
                f = 0;
            } else {
                if ((s = sh_sketch_estimate_at(&ha, va, &hb, vb, &e, err)) != SH_OK) return s;
                f = (unsigned char)sh_policy_passes(w->j.c->policy, w->j.c->candidate, &e);
            }
        }
        jb->flag[i - jb->first] = f;
        jb->out[c].candidates += f;
    }
    return SH_OK;
}

typedef struct rounds {
    round_job job;
    worker *w;
    void **ctx;
    sh_status *status;
    int threads;
} rounds;

/* workers over run r, with full-set scratch of `full` values each (0: none) */
static sh_status rounds_open(rounds *R, const sh_run *r, const sh_decide_config *c, const sh_recfile *pf, const char *path,
                             size_t full, int with_flags, sh_error *err)
{
    int t;
    memset(R, 0, sizeof *R);
    R->threads = c->threads < 1 ? 1 : c->threads > 64 ? 64 : c->threads;
    R->job.p = (const sh_pairrec *)(const void *)pf->records;
    R->job.count = pf->count;
    R->job.n_docs = r->n;
    R->job.path = path;
    R->job.chunk = c->chunk_pairs ? c->chunk_pairs : CHUNK_PAIRS;
    R->job.out = (chunk_out *)calloc(ROUND_CHUNKS, sizeof *R->job.out);
    R->job.flag = with_flags ? (unsigned char *)malloc((size_t)(ROUND_CHUNKS * R->job.chunk)) : NULL;
    R->w = (worker *)calloc((size_t)R->threads, sizeof *R->w);
    R->ctx = (void **)calloc((size_t)R->threads, sizeof *R->ctx);
    R->status = (sh_status *)calloc(ROUND_CHUNKS, sizeof *R->status);
    if (!R->job.out || (with_flags && !R->job.flag) || !R->w || !R->ctx || !R->status)
        return sh_error_set(err, SH_ENOMEM, 0, "out of memory");
    for (t = 0; t < R->threads; t++) {
        worker *w = &R->w[t];
        w->job = &R->job;
        w->j.r = r;
        w->j.c = c;
        if (full) {
            w->j.fa = (uint64_t *)malloc(full * 8);
            w->j.fb = (uint64_t *)malloc(full * 8);
            if (!w->j.fa || !w->j.fb) return sh_error_set(err, SH_ENOMEM, 0, "out of memory");
        }
        R->ctx[t] = w;
    }
    return SH_OK;
}

static void rounds_close(rounds *R)
{
    size_t k;
    int t;
    if (R->w)
        for (t = 0; t < R->threads; t++) { free(R->w[t].j.fa); free(R->w[t].j.fb); }
    if (R->job.out)
        for (k = 0; k < ROUND_CHUNKS; k++) free(R->job.out[k].links);
    free(R->job.out);
    free(R->job.flag);
    free(R->w);
    free(R->ctx);
    free(R->status);
}

/* run fn over the round starting at pair `first`; its number of chunks into *nc */
static sh_status round_run(rounds *R, uint64_t first, sh_chunk_fn fn, size_t *nc, sh_error *err)
{
    uint64_t left = R->job.count - first, round = ROUND_CHUNKS * R->job.chunk;
    R->job.first = first;
    *nc = (size_t)(((left < round ? left : round) + R->job.chunk - 1) / R->job.chunk);
    return sh_par_chunks(R->threads, *nc, fn, R->ctx, R->status, err);
}

/* Phase 4: "We examine each <ID, ID, count> triplet and decide if the document
 * pair exceeds our threshold ... If it does, we add a link between the two
 * documents in a union-find algorithm. The connected components ... form the
 * final clusters." The estimate is made from the two stored sketches (the
 * count alone does not give the MIN_s estimator), or exactly with verify.
 * The pairs are judged on cfg->threads threads; a caller's policy (a Lua
 * function) decides them one at a time on this thread. */
sh_status sh_decide(const char *dir, const sh_decide_config *cfg, sh_decide_stats *st, sh_error *err)
{
    sh_decider x;
    sh_recfile pf;
    rounds R;
    char path[4096];
    sh_status s;
    uint64_t i;
    memset(&R, 0, sizeof R);
    if ((s = sh_decider_open(&x, dir, cfg, 0, st, err)) != SH_OK) { sh_decider_close(&x); return s; }
    sh_run_path(path, sizeof path, dir, "pairs.bin");
    {
        /* sh_candidates verified pairs.bin's checksum when it made the verdicts
         * kept with the sets (sh_verify_sets, just before): not again when the
         * file has their count */
        const int checked = cfg->verify && cfg->fullsets && cfg->fullsets->pair_cand;
        if ((s = sh_recfile_open(&pf, path, SH_MAGIC_PAIRS, sizeof(sh_pairrec), !checked, err)) != SH_OK) { sh_decider_close(&x); return s; }
        if (checked && pf.count != cfg->fullsets->n_pairs) {
            sh_recfile_close(&pf);
            if ((s = sh_recfile_open(&pf, path, SH_MAGIC_PAIRS, sizeof(sh_pairrec), 1, err)) != SH_OK) { sh_decider_close(&x); return s; }
        }
    }
    if (cfg->accept) {
        for (i = 0; i < pf.count && s == SH_OK; i++) {
            const sh_pairrec *p = (const sh_pairrec *)(const void *)pf.records + i;
            if (cfg->progress && i % 262144 == 0) cfg->progress(cfg->progress_ud, "cluster formation", i, pf.count);
            if (p->a >= x.r.n || p->b >= x.r.n) {
                s = sh_error_set(err, SH_EFORMAT, (size_t)(sizeof *p * i), "%s names document %u of only %u: it belongs to another run",
                                 path, p->a > p->b ? p->a : p->b, x.r.n);
                break;
            }
            s = sh_decider_pair(&x, p->a, p->b, err);
        }
    } else if ((s = rounds_open(&R, &x.r, cfg, &pf, path, cfg->verify ? sh_run_max_len(&x.r, 1) : 0, 0, err)) == SH_OK) {
        /* the verdicts of sh_candidates when it kept them for these pairs */
        if (cfg->verify && cfg->fullsets && cfg->fullsets->pair_cand && cfg->fullsets->n_pairs == pf.count &&
            cfg->fullsets->cand_policy == cfg->policy && cfg->fullsets->cand_score == cfg->candidate)
            R.job.cand = cfg->fullsets->pair_cand;
        for (i = 0; i < pf.count && s == SH_OK; i += ROUND_CHUNKS * R.job.chunk) {
            size_t nc, c, k;
            if (cfg->progress) cfg->progress(cfg->progress_ud, "cluster formation", i, pf.count);
            if ((s = round_run(&R, i, decide_chunk, &nc, err)) != SH_OK) break;
            for (c = 0; c < nc && s == SH_OK; c++) {
                const chunk_out *o = &R.job.out[c];
                uint64_t lo, hi;
                chunk_range(&R.job, c, &lo, &hi);
                st->pairs += hi - lo;
                st->candidates += o->candidates;
                st->linked += o->n;
                for (k = 0; k < o->n; k++) sh_uf_union(x.uf, o->links[k].a, o->links[k].b);
                s = sh_recwriter_append(&x.links, o->links, o->n, err);
            }
        }
    }
    rounds_close(&R);
    if (cfg->progress && s == SH_OK) cfg->progress(cfg->progress_ud, "cluster formation", pf.count, pf.count);
    sh_recfile_close(&pf);
    if (s == SH_OK) s = sh_decider_finish(&x, dir, err);
    sh_decider_close(&x);
    return s;
}

/* The clusters of a decision made elsewhere (by the ranks of a distributed
 * run): the links of links.bin and the extra joins, each identical document
 * with its representative, as phase 4 forms them. */
sh_status sh_finish_clusters(const char *dir, const uint32_t *joins, size_t n_joins, sh_decide_stats *st, size_t *joined,
                             sh_error *err)
{
    sh_run r;
    sh_recfile lf;
    sh_unionfind *uf = NULL;
    char path[4096];
    sh_status s;
    uint64_t i;
    size_t j, k = 0;
    st->clusters = st->clustered_docs = st->identical_only_clusters = st->mixed_clusters = 0;
    if ((s = sh_run_open(&r, dir, 0, 0, 0, err)) != SH_OK) return s;
    sh_run_path(path, sizeof path, dir, "links.bin");
    if ((s = sh_recfile_open(&lf, path, SH_MAGIC_LINKS, sizeof(sh_linkrec), 1, err)) != SH_OK) { sh_run_close(&r); return s; }
    if ((s = sh_uf_new(&uf, r.n, err)) != SH_OK) goto done;
    for (i = 0; i < lf.count; i++) {
        const sh_linkrec *l = (const sh_linkrec *)(const void *)(lf.records + i * sizeof(sh_linkrec));
        if (l->a >= r.n || l->b >= r.n) {
            s = sh_error_set(err, SH_EFORMAT, (size_t)(i * sizeof(sh_linkrec)), "%s names document %u of only %u: it belongs to another run",
                             path, l->a > l->b ? l->a : l->b, r.n);
            goto done;
        }
        sh_uf_union(uf, l->a, l->b);
    }
    for (j = 0; j < n_joins; j++) {
        if (joins[2 * j] >= r.n || joins[2 * j + 1] >= r.n) {
            s = sh_error_set(err, SH_EINVAL, 0, "a join names document %u of only %u", joins[2 * j] > joins[2 * j + 1] ? joins[2 * j] : joins[2 * j + 1], r.n);
            goto done;
        }
        if (sh_uf_union(uf, joins[2 * j], joins[2 * j + 1]) == 1) k++;
    }
    if (joined) *joined = k;
    s = sh_write_clusters(&r, uf, dir, st, err);
done:
    sh_uf_free(uf);
    sh_recfile_close(&lf);
    sh_run_close(&r);
    return s;
}

/* The documents exact verification would read: both ends of every pair of
 * pairs.bin whose estimate passes cfg's candidate score (every pair with a
 * caller's policy, which decides on exact values); judged on cfg->threads
 * threads. */
sh_status sh_candidates(const char *dir, const sh_decide_config *cfg, unsigned char *mark, unsigned char *pair_mark,
                        uint64_t *n_pairs, int *from_counts, sh_error *err)
{
    sh_run r;
    sh_recfile pf;
    sh_pairest pe;
    rounds R;
    char path[4096];
    sh_status s;
    uint64_t i, k = 0;
    int usable = 0;
    memset(&R, 0, sizeof R);
    memset(&pe, 0, sizeof pe);
    if (from_counts) *from_counts = 0;
    if ((s = sh_run_open(&r, dir, 1, 0, 0, err)) != SH_OK) return s;
    sh_run_path(path, sizeof path, dir, "pairs.bin");
    if ((s = sh_recfile_open(&pf, path, SH_MAGIC_PAIRS, sizeof(sh_pairrec), 1, err)) != SH_OK) { sh_run_close(&r); return s; }
    if (mark) memset(mark, 0, r.n);
    if ((s = rounds_open(&R, &r, cfg, &pf, path, 0, 1, err)) != SH_OK) goto done;
    if (cfg->shared_counts && !cfg->accept) {
        if ((s = sh_pairest_open(&pe, &r, R.job.p, pf.count, cfg->max_df, &usable, err)) != SH_OK) goto done;
        if (usable) R.job.pe = &pe;
        if (from_counts) *from_counts = usable;
    }
    for (i = 0; i < pf.count; i += ROUND_CHUNKS * R.job.chunk) {
        size_t nc, c;
        uint64_t q, end;
        if ((s = round_run(&R, i, candidate_chunk, &nc, err)) != SH_OK) goto done;
        for (c = 0; c < nc; c++) k += R.job.out[c].candidates;
        end = i + ROUND_CHUNKS * R.job.chunk < pf.count ? i + ROUND_CHUNKS * R.job.chunk : pf.count;
        for (q = i; q < end; q++) {
            unsigned char f = R.job.flag[q - i];
            if (pair_mark) pair_mark[q] = f;
            if (f && mark) mark[R.job.p[q].a] = mark[R.job.p[q].b] = 1;
        }
    }
    if (n_pairs) *n_pairs = k;
done:
    rounds_close(&R);
    sh_pairest_free(&pe);
    sh_recfile_close(&pf);
    sh_run_close(&r);
    return s;
}
