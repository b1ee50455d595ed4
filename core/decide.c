/* Phase 4 of "Syntactic Clustering of the Web" (cluster.h): deciding the
 * candidate pairs by the policy, union-find, clusters.bin; the decider is
 * shared with the alternatives (alternatives.c) through run.h. */
#include "cluster.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "byteorder.h"
#include "extsort.h"
#include "run.h"
#include "unionfind.h"

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
    sh_run_path(path, sizeof path, dir, "links.bin");
    return sh_recwriter_open(&x->links, path, SH_MAGIC_LINKS, sizeof(sh_linkrec), NULL, 0, err);
}

/* Decide one candidate pair of representatives; link it if it passes. */
sh_status sh_decider_pair(sh_decider *x, uint32_t a, uint32_t b, sh_error *err)
{
    sh_estimate e, xe;
    sh_linkrec l;
    sh_status s;
    x->st->pairs++;
    if ((s = sh_sketch_estimate(sh_run_view(&x->r, a, x->sa, 0, NULL), sh_run_view(&x->r, b, x->sb, 0, NULL), &e, err)) != SH_OK) return s;
    l.a = a; l.b = b;
    l.r = (float)e.resemblance; l.cab = (float)e.contain_ab; l.cba = (float)e.contain_ba;
    l.xr = l.xcab = l.xcba = -1.0f;
    if (x->c->verify) {
        if (!x->c->accept && !sh_policy_passes(x->c->policy, x->c->candidate, &e)) return SH_OK;
        x->st->candidates++;
        /* the pairs come sorted by a: its full set is read once for all of them */
        if (x->fa_doc != a + 1) {
            x->fa_doc = 0;
            if (!sh_run_view(&x->r, a, x->fa, 1, err)) return err ? err->code : SH_EIO;
            x->fa_doc = a + 1;
        }
        if (!sh_run_view(&x->r, b, x->fb, 1, err)) return err ? err->code : SH_EIO;
        if ((s = sh_sketch_estimate(x->fa, x->fb, &xe, err)) != SH_OK) return s;
        l.xr = (float)xe.resemblance; l.xcab = (float)xe.contain_ab; l.xcba = (float)xe.contain_ba;
    } else {
        x->st->candidates++;
        xe = e;
    }
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

/* Phase 4: "We examine each <ID, ID, count> triplet and decide if the document
 * pair exceeds our threshold ... If it does, we add a link between the two
 * documents in a union-find algorithm. The connected components ... form the
 * final clusters." The estimate is made from the two stored sketches (the
 * count alone does not give the MIN_s estimator), or exactly with verify. */
sh_status sh_decide(const char *dir, const sh_decide_config *cfg, sh_decide_stats *st, sh_error *err)
{
    sh_decider x;
    sh_recfile pf;
    char path[4096];
    sh_status s;
    uint64_t i;
    if ((s = sh_decider_open(&x, dir, cfg, 0, st, err)) != SH_OK) { sh_decider_close(&x); return s; }
    sh_run_path(path, sizeof path, dir, "pairs.bin");
    if ((s = sh_recfile_open(&pf, path, SH_MAGIC_PAIRS, sizeof(sh_pairrec), 1, err)) != SH_OK) { sh_decider_close(&x); return s; }
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
 * caller's policy, which decides on exact values). */
sh_status sh_candidates(const char *dir, const sh_decide_config *cfg, unsigned char *mark, unsigned char *pair_mark,
                        uint64_t *n_pairs, sh_error *err)
{
    sh_run r;
    sh_recfile pf;
    sh_sketch *sa = NULL, *sb = NULL;
    char path[4096];
    sh_status s;
    uint64_t i, k = 0;
    size_t m;
    if ((s = sh_run_open(&r, dir, 1, 0, 0, err)) != SH_OK) return s;
    sh_run_path(path, sizeof path, dir, "pairs.bin");
    if ((s = sh_recfile_open(&pf, path, SH_MAGIC_PAIRS, sizeof(sh_pairrec), 1, err)) != SH_OK) { sh_run_close(&r); return s; }
    m = sh_run_max_len(&r, 0);
    sa = (sh_sketch *)malloc(sizeof(sh_sketch) + m * 8);
    sb = (sh_sketch *)malloc(sizeof(sh_sketch) + m * 8);
    if (!sa || !sb) { s = sh_error_set(err, SH_ENOMEM, 0, "out of memory"); goto done; }
    if (mark) memset(mark, 0, r.n);
    for (i = 0; i < pf.count; i++) {
        const sh_pairrec *p = (const sh_pairrec *)(const void *)(pf.records + i * sizeof(sh_pairrec));
        sh_estimate e;
        if (p->a >= r.n || p->b >= r.n) {
            s = sh_error_set(err, SH_EFORMAT, (size_t)(i * sizeof(sh_pairrec)), "%s names document %u of only %u: it belongs to another run",
                             path, p->a > p->b ? p->a : p->b, r.n);
            goto done;
        }
        if (pair_mark) pair_mark[i] = 0;
        if (!cfg->accept) {
            if ((s = sh_sketch_estimate(sh_run_view(&r, p->a, sa, 0, NULL), sh_run_view(&r, p->b, sb, 0, NULL), &e, err)) != SH_OK) goto done;
            if (!sh_policy_passes(cfg->policy, cfg->candidate, &e)) continue;
        }
        if (pair_mark) pair_mark[i] = 1;
        if (mark) mark[p->a] = mark[p->b] = 1;
        k++;
    }
    if (n_pairs) *n_pairs = k;
done:
    free(sa);
    free(sb);
    sh_recfile_close(&pf);
    sh_run_close(&r);
    return s;
}

