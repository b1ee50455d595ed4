/* Similar clusters of collections: see collections.h for the contract. */
#include "collections.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "byteorder.h"
#include "chunks.h"
#include "clock.h"
#include "extsort.h"
#include "grow.h"
#include "links.h"
#include "pairs.h"
#include "recfile.h"
#include "unionfind.h"

#define CHUNK 65536

static void path_of(char *out, size_t cap, const char *dir, const char *name)
{
    snprintf(out, cap, "%s/%s", dir, name);
}


static sh_status nomem(sh_error *err, const char *what)
{
    return sh_error_set(err, SH_ENOMEM, 0, "out of memory for %s; lower --memory or split the input", what);
}

int sh_replica_bin(uint64_t r)
{
    if (r < 3) return (int)r;
    if (r < 10) return 3;
    if (r < 100) return 4;
    if (r < 1000) return 5;
    return 6;
}

/* ---- trivial clusters ------------------------------------------------------ */

/* Write the dense labels of uf as trivial-NAME.bin and fill the histogram. */
static sh_status write_trivial(const char *dir, const char *name, sh_unionfind *uf, const sh_recfile *pages,
                               sh_trivial_stats *st, sh_error *err)
{
    uint32_t n = (uint32_t)pages->count, i;
    uint32_t *label = (uint32_t *)malloc(((size_t)n + 1) * 4), *size = (uint32_t *)calloc((size_t)n + 1, 4);
    char path[4096], file[256];
    sh_recwriter w;
    sh_status s;
    memset(&w, 0, sizeof w);
    if (!label || !size) { free(label); free(size); return nomem(err, "the trivial clusters"); }
    sh_uf_labels(uf, label, SH_UF_LABEL_DENSE);
    for (i = 0; i < n; i++) size[label[i]]++;
    for (i = 0; i < n; i++) {
        const sh_pagerec *p = (const sh_pagerec *)(const void *)(pages->records + (size_t)i * sizeof(sh_pagerec));
        uint32_t z = size[label[i]];
        if (z >= 2) {
            st->pages_in_clusters++;
            if (z > st->largest) st->largest = z;
        }
        if (p->status == SH_PAGE_OK) st->hist[sh_replica_bin(z - 1)]++;
    }
    for (i = 0; i < n; i++)
        if (size[i] >= 2) st->clusters++;
    snprintf(file, sizeof file, "trivial-%s.bin", name);
    path_of(path, sizeof path, dir, file);
    if ((s = sh_recwriter_open(&w, path, SH_MAGIC_TRIVIAL, 4, NULL, 0, err)) == SH_OK &&
        (s = sh_recwriter_append(&w, label, n, err)) == SH_OK)
        s = sh_recwriter_commit(&w, err);
    if (s != SH_OK) sh_recwriter_abort(&w);
    free(label);
    free(size);
    return s;
}

/* The iceberg: sort <fp, page> unique, for each chunk shared by g pages
 * (2 <= g <= max_df) form the pairs, count them by a second sort (combine
 * adds the counts), and link the pairs counted at least T times. With T = 1
 * the pairs are not needed: the pages of a chunk are one group. */
static sh_status iceberg(const char *dir, const sh_trivial_config *cfg, uint32_t npages, sh_unionfind *uf,
                         sh_trivial_stats *st, sh_error *err)
{
    char path[4096], file[64];
    sh_recfile cf;
    sh_extsort *keys = NULL, *pairs = NULL;
    unsigned char *buf = (unsigned char *)malloc((size_t)CHUNK * SH_PAIR_RECORD);
    sh_form_config fc;
    sh_form_stats fs;
    size_t n, i;
    uint64_t r;
    sh_status s;
    const char *tmp = cfg->temp_dir ? cfg->temp_dir : dir;
    memset(&cf, 0, sizeof cf);
    if (!buf) { s = nomem(err, "the chunk sort"); goto done; }
    snprintf(file, sizeof file, "chunks-%s.bin", sh_chunk_scheme_name(cfg->scheme));
    path_of(path, sizeof path, dir, file);
    if ((s = sh_recfile_open(&cf, path, SH_MAGIC_CHUNKS, sizeof(sh_chunkrec), 0, err)) != SH_OK) goto done;
    /* <fp, page> unique: a chunk repeated within a page counts once */
    if ((s = sh_extsort_open(&keys, 8, 8, cfg->memory / 2, tmp, sh_extsort_keep_first, err)) != SH_OK) goto done;
    if (cfg->threshold > 1 && (s = sh_pairsort_open(&pairs, cfg->memory / 2, tmp, err)) != SH_OK) goto done;
    for (r = 0; r < cf.count;) {
        size_t k = cf.count - r < CHUNK ? (size_t)(cf.count - r) : CHUNK;
        for (i = 0; i < k; i++) {
            const sh_chunkrec *c = (const sh_chunkrec *)(const void *)cf.records + r + i;
            if (c->page >= npages) {
                s = sh_error_set(err, SH_EFORMAT, SH_RECFILE_HEADER + sizeof *c * (r + i), "%s: record %llu names page %u of %u; "
                                 "the file does not belong to this pages.bin: run the collections again",
                                 path, (unsigned long long)(r + i), c->page, npages);
                goto done;
            }
            sh_key_record(buf + 8 * i, 4, c->fp, c->page);
        }
        if ((s = sh_extsort_add(keys, buf, k, err)) != SH_OK) goto done;
        r += k;
    }
    sh_recfile_close(&cf);
    if ((s = sh_extsort_finish(keys, err)) != SH_OK) goto done;
    memset(&fc, 0, sizeof fc);
    memset(&fs, 0, sizeof fs);
    fc.key_size = 4;
    fc.max_df = cfg->max_df;
    fc.pairs = pairs;
    fc.uf = uf;     /* with T = 1: the pages of a chunk are one group */
    s = sh_form_pairs(keys, &fc, &fs, err);
    st->chunk_records += fs.records;
    st->distinct_chunks += fs.keys;
    st->common_dropped += fs.dropped;
    st->pair_records += fs.pair_records;
    if (s != SH_OK) goto done;
    if (pairs) {
        if ((s = sh_extsort_finish(pairs, err)) != SH_OK) goto done;
        for (;;) {
            if ((s = sh_extsort_read(pairs, buf, CHUNK, &n, err)) != SH_OK) goto done;
            if (n == 0) break;
            st->pairs += n;
            for (i = 0; i < n; i++) {
                const unsigned char *rec = buf + SH_PAIR_RECORD * i;
                if (sh_pair_count(rec) >= cfg->threshold) {
                    st->similar_pairs++;
                    sh_uf_union(uf, sh_pair_a(rec), sh_pair_b(rec));
                }
            }
        }
    }
    s = SH_OK;
done:
    sh_recfile_close(&cf);
    sh_extsort_free(keys);
    sh_extsort_free(pairs);
    free(buf);
    return s;
}

/* Trivial clusters from the shingle pipeline's clusters.bin (<cluster, doc>
 * LE, doc ids being page ids); pages without text are left out. */
static sh_status from_clusters(const char *path, const sh_recfile *pages, sh_unionfind *uf, sh_error *err)
{
    sh_recfile f;
    uint64_t i;
    uint32_t prev_c = UINT32_MAX, first = UINT32_MAX;
    sh_status s;
    if ((s = sh_recfile_open(&f, path, SH_MAGIC_CLUSTERS, sizeof(sh_clusterrec), 1, err)) != SH_OK) return s;
    for (i = 0; i < f.count; i++) {
        const sh_clusterrec *cr = (const sh_clusterrec *)(const void *)f.records + i;
        uint32_t c = cr->cluster, d = cr->doc;
        const sh_pagerec *p;
        if (d >= pages->count) {
            sh_recfile_close(&f);
            return sh_error_set(err, SH_EFORMAT, 24 + 8 * i, "%s: document %u is not a page (%llu pages): "
                                "the clustering was not run over the same pages", path, d,
                                (unsigned long long)pages->count);
        }
        p = (const sh_pagerec *)(const void *)(pages->records + (size_t)d * sizeof(sh_pagerec));
        if (p->status != SH_PAGE_OK) continue;
        if (c != prev_c) { prev_c = c; first = d; continue; }
        sh_uf_union(uf, first, d);
    }
    sh_recfile_close(&f);
    return SH_OK;
}

sh_status sh_coll_trivial(const char *dir, const sh_trivial_config *cfg, sh_trivial_stats *st, sh_error *err)
{
    char path[4096];
    sh_recfile pages;
    sh_unionfind *uf = NULL;
    sh_status s;
    double t0 = sh_now();
    memset(st, 0, sizeof *st);
    if (!cfg->name || (!cfg->clusters && sh_chunk_scheme_name(cfg->scheme) == NULL) || cfg->threshold < 1)
        return sh_error_set(err, SH_EINVAL, 0, "trivial clusters need a name, a chunk scheme (whole, lines4, lines2) "
                            "or a clusters.bin, and a threshold of at least 1");
    path_of(path, sizeof path, dir, "pages.bin");
    if ((s = sh_recfile_open(&pages, path, SH_MAGIC_PAGES, sizeof(sh_pagerec), 1, err)) != SH_OK) return s;
    if ((s = sh_uf_new(&uf, (uint32_t)pages.count, err)) != SH_OK) goto done;
    if (cfg->clusters) s = from_clusters(cfg->clusters, &pages, uf, err);
    else s = iceberg(dir, cfg, (uint32_t)pages.count, uf, st, err);
    if (s == SH_OK) s = write_trivial(dir, cfg->name, uf, &pages, st, err);
done:
    sh_uf_free(uf);
    sh_recfile_close(&pages);
    st->seconds = sh_now() - t0;
    return s;
}

/* ---- growing clusters -------------------------------------------------------- */

typedef struct edge {        /* a TCG edge Ri -> Rj with its links in ml[off .. off + n) */
    uint32_t ri, rj;
    size_t off, n;
} edge;

typedef struct gcluster {
    uint32_t start, n, m;    /* start trivial cluster, cardinality, size */
    size_t cells;            /* cells[cells + k * n + c]: page of node k in collection c */
    uint32_t first_page;
} gcluster;

typedef struct grow {
    const char *dir;
    const sh_grow_config *cfg;
    sh_grow_stats *st;
    sh_webgraph_files wf;               /* pages, URLs, sites */
    sh_recfile links, triv;
    const sh_pagerec *pg;               /* wf.pg */
    uint32_t np, nr;
    const uint32_t *rid;
    uint32_t *size, *r_off, *r_pages;   /* trivial clusters: sizes, pages (CSR, ascending) */
    uint64_t *score;
    edge *e;
    size_t ne, cap_e;
    uint32_t *ml;                       /* merge links <src, dst>, grouped by edge, sorted */
    size_t nml, cap_ml;
    uint32_t *out_off;                  /* CSR of edges by source */
    uint32_t *cells;
    size_t ncells, cap_cells;
    gcluster *cl;
    size_t ncl, cap_cl;
} grow;

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

/* Step [1]: the LinkSummary table, by an external sort of <Ri, Rj, src, dst>
 * over the links and one pass over its groups. Links that cannot satisfy the
 * condition (Ri = Rj, or |Ri| < |Rj|, or != under the strict condition) are
 * left out before the sort. Steps [2]-[4]: the rows meeting the condition are
 * the TCG's edges, kept with their links for regaining the collections. */
static sh_status link_summary(grow *g, sh_error *err)
{
    const sh_grow_config *cfg = g->cfg;
    sh_extsort *s = NULL;
    sh_recwriter ws, wt;
    unsigned char *buf = (unsigned char *)malloc((size_t)CHUNK * 16);
    uint32_t *dsts = NULL;
    size_t dcap = 0, nd = 0, n, i, gstart = 0;
    uint64_t r;
    uint32_t ci = UINT32_MAX, cj = UINT32_MAX, s_cnt = 0, last_src = UINT32_MAX;
    char path[4096];
    sh_status st;
    memset(&ws, 0, sizeof ws);
    memset(&wt, 0, sizeof wt);
    if (!buf) return nomem(err, "the LinkSummary");
    if ((st = sh_extsort_open(&s, 16, 16, cfg->memory, cfg->temp_dir ? cfg->temp_dir : g->dir, NULL, err)) != SH_OK) goto done;
    for (r = 0; r < g->links.count;) {
        size_t k = 0;
        for (; r < g->links.count && k < CHUNK; r++) {
            const sh_weblinkrec *l = (const sh_weblinkrec *)(const void *)g->links.records + r;
            uint32_t a = l->src, b = l->dst, ra, rb;
            if (a >= g->np || b >= g->np) {
                st = sh_error_set(err, SH_EFORMAT, 24 + 8 * r, "%s/links.bin: link %llu names a page past the "
                                  "last; the files are from different runs: run the collections again", g->dir,
                                  (unsigned long long)r);
                goto done;
            }
            ra = g->rid[a];
            rb = g->rid[b];
            if (ra == rb) continue;
            if (cfg->single_site && g->pg[a].site != g->pg[b].site) continue;
            if (cfg->extended ? g->size[ra] < g->size[rb] : g->size[ra] != g->size[rb]) continue;
            sh_store_be32(buf + 16 * k, ra);
            sh_store_be32(buf + 16 * k + 4, rb);
            sh_store_be32(buf + 16 * k + 8, a);
            sh_store_be32(buf + 16 * k + 12, b);
            k++;
        }
        g->st->links_considered += k;
        if (k && (st = sh_extsort_add(s, buf, k, err)) != SH_OK) goto done;
    }
    if ((st = sh_extsort_finish(s, err)) != SH_OK) goto done;
    path_of(path, sizeof path, g->dir, "linksummary.bin");
    if ((st = sh_recwriter_open(&ws, path, SH_MAGIC_SUMMARY, sizeof(sh_summaryrec), NULL, 0, err)) != SH_OK) goto done;
    path_of(path, sizeof path, g->dir, "tcg.bin");
    if ((st = sh_recwriter_open(&wt, path, SH_MAGIC_TCG, sizeof(sh_tcgrec), NULL, 0, err)) != SH_OK) goto done;
    for (;;) {
        if ((st = sh_extsort_read(s, buf, CHUNK, &n, err)) != SH_OK) goto done;
        for (i = 0; i <= n; i++) {
            int end = (n == 0);
            uint32_t ri = 0, rj = 0, src = 0, dst = 0;
            if (i == n && !end) break;
            if (!end) {
                ri = sh_load_be32(buf + 16 * i);
                rj = sh_load_be32(buf + 16 * i + 4);
                src = sh_load_be32(buf + 16 * i + 8);
                dst = sh_load_be32(buf + 16 * i + 12);
            }
            if (end || ri != ci || rj != cj) {
                if (ci != UINT32_MAX) {
                    /* close the group (ci, cj): d = distinct destinations */
                    uint32_t a = g->size[ci], b = g->size[cj], d = 0;
                    sh_summaryrec row;
                    sh_tcgrec edge_rec;
                    size_t x;
                    int merge;
                    qsort(dsts, nd, 4, cmp_u32);
                    for (x = 0; x < nd; x++)
                        if (x == 0 || dsts[x] != dsts[x - 1]) d++;
                    row.ri = ci; row.rj = cj; row.a = a; row.b = b; row.s = s_cnt; row.d = d;
                    if ((st = sh_recwriter_append(&ws, &row, 1, err)) != SH_OK) goto done;
                    g->st->summary_rows++;
                    merge = cfg->extended ? (a == s_cnt && d == b && s_cnt >= d) : (a == s_cnt && s_cnt == d && d == b);
                    if (merge) {
                        if (!sh_grow((void **)&g->e, &g->cap_e, g->ne + 1, sizeof *g->e, 1024)) { st = nomem(err, "the TCG"); goto done; }
                        g->e[g->ne].ri = ci;
                        g->e[g->ne].rj = cj;
                        g->e[g->ne].off = gstart;
                        g->e[g->ne].n = (g->nml - gstart) / 2;
                        g->ne++;
                        edge_rec.ri = ci;
                        edge_rec.rj = cj;
                        if ((st = sh_recwriter_append(&wt, &edge_rec, 1, err)) != SH_OK) goto done;
                    } else {
                        g->nml = gstart;  /* drop the group's links */
                    }
                }
                if (end) break;
                ci = ri;
                cj = rj;
                s_cnt = 0;
                nd = 0;
                last_src = UINT32_MAX;
                gstart = g->nml;
            }
            if (src != last_src) { s_cnt++; last_src = src; }
            if (nd == dcap) {
                size_t cap = dcap ? 2 * dcap : 256;
                uint32_t *p = (uint32_t *)realloc(dsts, cap * 4);
                if (!p) { st = nomem(err, "a LinkSummary group"); goto done; }
                dsts = p;
                dcap = cap;
            }
            dsts[nd++] = dst;
            if (!sh_grow((void **)&g->ml, &g->cap_ml, g->nml + 2, 4, 1024)) { st = nomem(err, "the merge links"); goto done; }
            g->ml[g->nml++] = src;
            g->ml[g->nml++] = dst;
        }
        if (n == 0) break;
    }
    g->st->merge_edges = g->ne;
    if ((st = sh_recwriter_commit(&ws, err)) != SH_OK) goto done;
    st = sh_recwriter_commit(&wt, err);
done:
    if (st != SH_OK) { sh_recwriter_abort(&ws); sh_recwriter_abort(&wt); }
    sh_extsort_free(s);
    free(buf);
    free(dsts);
    return st;
}

/* The children of page p along edge e: ml pairs with src == p. */
static const uint32_t *children(const grow *g, const edge *e, uint32_t p, size_t *n)
{
    const uint32_t *v = g->ml + e->off;
    size_t lo = 0, hi = e->n, a;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (v[2 * mid] < p) lo = mid + 1; else hi = mid;
    }
    a = lo;
    while (lo < e->n && v[2 * lo] == p) lo++;
    *n = lo - a;
    return v + 2 * a;
}

typedef struct regain {
    uint32_t *stamp;      /* per trivial cluster: BFS visit mark */
    uint32_t *pos;        /* per trivial cluster: index in the BFS order */
    uint32_t *avail;      /* per trivial cluster: 1 while unassigned in the current component */
    uint32_t *order, *parent_edge;
    uint32_t *used;       /* per page: mark of the node that took it */
    uint32_t mark, umark;
} regain;

/* BFS over TCG edges from start among available nodes; fills order (and
 * parent edges); returns how many nodes it reached. */
static uint32_t bfs(const grow *g, regain *x, uint32_t start)
{
    uint32_t head = 0, tail = 0;
    x->mark++;
    x->stamp[start] = x->mark;
    x->order[tail] = start;
    x->parent_edge[tail] = UINT32_MAX;
    x->pos[start] = tail++;
    while (head < tail) {
        uint32_t u = x->order[head++], k;
        for (k = g->out_off[u]; k < g->out_off[u + 1]; k++) {
            uint32_t v = g->e[k].rj;
            if (!x->avail[v] || x->stamp[v] == x->mark) continue;
            x->stamp[v] = x->mark;
            x->order[tail] = v;
            x->parent_edge[tail] = k;
            x->pos[v] = tail++;
        }
    }
    return tail;
}

/* Regain the collections of one BFS tree (order[0..m)): the start cluster's
 * pages are the roots, in page order; every other trivial cluster Rj reached
 * by an edge from Ri gives each collection the page its Ri page links to
 * (one not yet taken when |Rj| = n, so the mapping stays one-to-one). */
static sh_status build_cluster(grow *g, regain *x, uint32_t m, sh_error *err)
{
    uint32_t start = x->order[0], n = g->size[start], k, c;
    size_t base = g->ncells;
    gcluster *cl;
    if (!sh_grow((void **)&g->cells, &g->cap_cells, g->ncells + (size_t)n * m, 4, 1024)) return nomem(err, "the collections");
    if (!sh_grow((void **)&g->cl, &g->cap_cl, g->ncl + 1, sizeof *g->cl, 1024)) return nomem(err, "the clusters");
    for (c = 0; c < n; c++) g->cells[base + c] = g->r_pages[g->r_off[start] + c];
    for (k = 1; k < m; k++) {
        uint32_t v = x->order[k];
        const edge *e = &g->e[x->parent_edge[k]];
        uint32_t ku = x->pos[e->ri];
        int onto = g->size[v] == n;
        x->umark++;
        for (c = 0; c < n; c++) {
            uint32_t p = g->cells[base + (size_t)ku * n + c], q = UINT32_MAX;
            size_t nc = 0, j;
            const uint32_t *ch = p == UINT32_MAX ? NULL : children(g, e, p, &nc);
            for (j = 0; j < nc; j++) {
                uint32_t cand = ch[2 * j + 1];
                if (q == UINT32_MAX) q = cand;
                if (!onto || x->used[cand] != x->umark) { q = cand; break; }
            }
            if (q == UINT32_MAX) g->st->unmatched++;
            else x->used[q] = x->umark;
            g->cells[base + (size_t)k * n + c] = q;
        }
    }
    cl = &g->cl[g->ncl++];
    cl->start = start;
    cl->n = n;
    cl->m = m;
    cl->cells = base;
    cl->first_page = g->cells[base];
    g->ncells += (size_t)n * m;
    return SH_OK;
}

static int better(const grow *g, uint32_t a, uint32_t b)
{
    if (g->cfg->start == SH_START_INLINKS && g->score[a] != g->score[b]) return g->score[a] > g->score[b];
    return a < b;  /* dense labels: a smaller label holds an earlier page */
}

/* Step [5] and the merge of each component (section 3.1, Figure 7). */
static sh_status regain_all(grow *g, sh_error *err)
{
    sh_unionfind *uf = NULL;
    uint32_t *label = NULL, *c_off = NULL, *c_nodes = NULL, *cand = NULL;
    regain x;
    uint32_t r, nr = g->nr;
    size_t k;
    sh_status s;
    memset(&x, 0, sizeof x);
    if ((s = sh_uf_new(&uf, nr, err)) != SH_OK) return s;
    for (k = 0; k < g->ne; k++) sh_uf_union(uf, g->e[k].ri, g->e[k].rj);
    label = (uint32_t *)malloc(((size_t)nr + 1) * 4);
    c_off = (uint32_t *)calloc((size_t)nr + 2, 4);
    c_nodes = (uint32_t *)malloc(((size_t)nr + 1) * 4);
    cand = (uint32_t *)malloc(((size_t)nr + 1) * 4);
    x.stamp = (uint32_t *)calloc((size_t)nr + 1, 4);
    x.pos = (uint32_t *)malloc(((size_t)nr + 1) * 4);
    x.avail = (uint32_t *)calloc((size_t)nr + 1, 4);
    x.order = (uint32_t *)malloc(((size_t)nr + 1) * 4);
    x.parent_edge = (uint32_t *)malloc(((size_t)nr + 1) * 4);
    x.used = (uint32_t *)calloc((size_t)g->np + 1, 4);
    g->out_off = (uint32_t *)calloc((size_t)nr + 2, 4);
    if (!label || !c_off || !c_nodes || !cand || !x.stamp || !x.pos || !x.avail || !x.order || !x.parent_edge ||
        !x.used || !g->out_off) {
        s = nomem(err, "the trivial cluster graph");
        goto done;
    }
    /* edges are sorted by (Ri, Rj): CSR by source */
    for (k = 0; k < g->ne; k++) g->out_off[g->e[k].ri + 1]++;
    for (r = 0; r < nr; r++) g->out_off[r + 1] += g->out_off[r];
    g->st->components = sh_uf_labels(uf, label, SH_UF_LABEL_DENSE);
    for (r = 0; r < nr; r++) c_off[label[r] + 1]++;
    for (r = 0; r < g->st->components; r++) c_off[r + 1] += c_off[r];
    {
        uint32_t *fill = cand;  /* scratch */
        memcpy(fill, c_off, (size_t)g->st->components * 4);
        for (r = 0; r < nr; r++) c_nodes[fill[label[r]]++] = r;
    }
    for (r = 0; r < g->st->components; r++) {
        uint32_t a = c_off[r], b = c_off[r + 1], left = b - a, j;
        uint32_t maxz = 0;
        for (j = a; j < b; j++) if (g->size[c_nodes[j]] > maxz) maxz = g->size[c_nodes[j]];
        /* nothing here can make a cluster of enough collections */
        if (maxz < g->cfg->min_cardinality || (left < g->cfg->min_size)) continue;
        for (j = a; j < b; j++) x.avail[c_nodes[j]] = 1;
        while (left > 0) {
            uint32_t nc = 0, best = UINT32_MAX, best_n = 0, t, reached;
            maxz = 0;
            for (j = a; j < b; j++)
                if (x.avail[c_nodes[j]] && g->size[c_nodes[j]] > maxz) maxz = g->size[c_nodes[j]];
            if (maxz < g->cfg->min_cardinality) break;
            for (j = a; j < b; j++)
                if (x.avail[c_nodes[j]] && g->size[c_nodes[j]] == maxz) cand[nc++] = c_nodes[j];
            /* candidates in order of preference (a selection sort over few) */
            for (t = 0; t < nc && t < 16; t++) {
                uint32_t bi = t, q;
                for (q = t + 1; q < nc; q++) if (better(g, cand[q], cand[bi])) bi = q;
                q = cand[t]; cand[t] = cand[bi]; cand[bi] = q;
                reached = bfs(g, &x, cand[t]);
                if (reached > best_n) { best_n = reached; best = cand[t]; }
                if (reached == left) break;
            }
            if (best_n < left) {
                /* No node of the largest size reaches the whole component (the
                 * paper assumes one does): start instead from the node that
                 * reaches the most, trying the larger ones first, so that one
                 * out-of-place trivial cluster (replicas within a collection)
                 * does not cut the collections short. */
                uint32_t tried = 0, z;
                g->st->split_components++;
                for (z = maxz; z >= g->cfg->min_cardinality && z > 0 && tried < 64; z--)
                    for (j = a; j < b && tried < 64; j++) {
                        uint32_t v = c_nodes[j];
                        if (!x.avail[v] || g->size[v] != z || z == maxz) continue;
                        tried++;
                        reached = bfs(g, &x, v);
                        if (reached > best_n || (reached == best_n && better(g, v, best) && g->size[v] == g->size[best])) {
                            best_n = reached;
                            best = v;
                        }
                    }
            }
            reached = bfs(g, &x, best);
            if (reached >= g->cfg->min_size) {
                if ((s = build_cluster(g, &x, reached, err)) != SH_OK) goto done;
            } else {
                g->st->small_clusters++;
            }
            for (t = 0; t < reached; t++) x.avail[x.order[t]] = 0;
            left -= reached;
        }
        for (j = a; j < b; j++) x.avail[c_nodes[j]] = 0;
    }
    s = SH_OK;
done:
    sh_uf_free(uf);
    free(label);
    free(c_off);
    free(c_nodes);
    free(cand);
    free(x.stamp);
    free(x.pos);
    free(x.avail);
    free(x.order);
    free(x.parent_edge);
    free(x.used);
    return s;
}

static int cmp_cluster(const void *pa, const void *pb)
{
    const gcluster *a = (const gcluster *)pa, *b = (const gcluster *)pb;
    if (a->n != b->n) return a->n > b->n ? -1 : 1;
    if (a->m != b->m) return a->m > b->m ? -1 : 1;
    return a->first_page < b->first_page ? -1 : a->first_page > b->first_page;
}

/* ---- the report ------------------------------------------------------------- */

static const char *url_of(const grow *g, uint32_t p, size_t *len)
{
    return sh_webgraph_url(&g->wf, p, len);
}

/* Write members.bin and colls.bin (collections.jsonl is written from them in
 * Lua: lua/shingle/collections.lua). Per collection: the
 * root and its site, the URL prefix a crawler could skip (the common prefix,
 * to its last '/', of the collection's pages on the root's site), and the
 * pages and bytes that are not in the cluster's kept collection (the one
 * with the earliest root: the copy a crawler saw first). */
static sh_status report(grow *g, sh_error *err)
{
    char path[4096];
    sh_recwriter wm, wc;
    uint32_t *mark = (uint32_t *)calloc((size_t)g->np + 1, 4), *site_pages = NULL;
    size_t i, nsites = 0;
    sh_status s = SH_OK;
    memset(&wm, 0, sizeof wm);
    memset(&wc, 0, sizeof wc);
    if (!mark) return nomem(err, "the report");
    for (i = 0; i < g->np; i++) if (g->pg[i].site + 1 > nsites) nsites = g->pg[i].site + 1;
    site_pages = (uint32_t *)calloc(nsites + 1, 4);
    if (!site_pages) { free(mark); return nomem(err, "the report"); }
    for (i = 0; i < g->np; i++) site_pages[g->pg[i].site]++;
    for (i = 0; i < g->np; i++) g->st->bytes_total += g->pg[i].bytes;
    if (g->ncl) qsort(g->cl, g->ncl, sizeof *g->cl, cmp_cluster);
    path_of(path, sizeof path, g->dir, "members.bin");
    if ((s = sh_recwriter_open(&wm, path, SH_MAGIC_MEMBERS, sizeof(sh_memberrec), NULL, 0, err)) != SH_OK) goto done;
    {
        char meta[SH_COLLS_META_SIZE];
        memset(meta, 0, sizeof meta);
        snprintf(meta, sizeof meta, "%s", g->cfg->trivial);
        path_of(path, sizeof path, g->dir, "colls.bin");
        if ((s = sh_recwriter_open(&wc, path, SH_MAGIC_COLLS, sizeof(sh_collrec), meta, sizeof meta, err)) != SH_OK) goto done;
    }
    for (i = 0; i < g->ncl; i++) {
        const gcluster *cl = &g->cl[i];
        uint32_t id = (uint32_t)i + 1, c, k;
        uint32_t stamp = id;
        if (i < SH_GROW_TOP) {
            g->st->top[i].cluster = id;
            g->st->top[i].cardinality = cl->n;
            g->st->top[i].size = cl->m;
            g->st->top[i].root = cl->first_page;
            g->st->n_top = i + 1;
        }
        g->st->clusters++;
        for (c = 0; c < cl->n; c++) {
            sh_collrec cr;
            uint32_t root = g->cells[cl->cells + c];
            size_t rlen, plen = 0, ulen;
            const char *rurl = url_of(g, root, &rlen), *u;
            uint32_t on_site = 0;
            memset(&cr, 0, sizeof cr);
            cr.cluster = id;
            cr.index = c;
            cr.root = root;
            cr.site = g->pg[root].site;
            cr.prefix_page = root;
            if (c == 0) cr.flags |= SH_COLL_KEPT;
            cr.cluster_size = cl->m;
            plen = rlen;
            for (k = 0; k < cl->m; k++) {
                uint32_t p = g->cells[cl->cells + (size_t)k * cl->n + c];
                sh_memberrec mr;
                size_t j;
                if (p == UINT32_MAX) continue;
                mr.cluster = id;
                mr.collection = c;
                mr.page = p;
                mr.trivial = g->rid[p];
                if ((s = sh_recwriter_append(&wm, &mr, 1, err)) != SH_OK) goto done;
                cr.pages++;
                cr.bytes += g->pg[p].bytes;
                g->st->pages_in_collections++;
                if (mark[p] == stamp) g->st->shared_pages++;
                else {
                    if (c > 0) { cr.avoid_pages++; cr.avoid_bytes += g->pg[p].bytes; }
                    if (mark[p] == 0) g->st->distinct_pages++;
                    mark[p] = stamp;
                }
                if (g->pg[p].site == cr.site) {
                    on_site++;
                    u = url_of(g, p, &ulen);
                    for (j = 0; j < plen && j < ulen && u[j] == rurl[j]; j++) {}
                    plen = j;
                }
            }
            while (plen > 0 && rurl[plen - 1] != '/') plen--;
            cr.prefix_len = (uint32_t)plen;
            if (on_site == site_pages[cr.site]) cr.flags |= SH_COLL_WHOLE_SITE;
            g->st->collections++;
            if (c > 0) { g->st->bytes_avoidable += cr.avoid_bytes; g->st->pages_avoidable += cr.avoid_pages; }
            if ((s = sh_recwriter_append(&wc, &cr, 1, err)) != SH_OK) goto done;
        }
    }
    if ((s = sh_recwriter_commit(&wm, err)) != SH_OK) goto done;
    s = sh_recwriter_commit(&wc, err);
done:
    if (s != SH_OK) { sh_recwriter_abort(&wm); sh_recwriter_abort(&wc); }
    free(mark);
    free(site_pages);
    return s;
}

sh_status sh_coll_grow(const char *dir, const sh_grow_config *cfg, sh_grow_stats *st, sh_error *err)
{
    grow g;
    char path[4096], file[256];
    sh_status s;
    uint32_t i;
    double t0;
    memset(st, 0, sizeof *st);
    memset(&g, 0, sizeof g);
    if (!cfg->trivial || cfg->min_cardinality < 1 || cfg->min_size < 1)
        return sh_error_set(err, SH_EINVAL, 0, "growing needs the trivial clusters' name, and min_cardinality and "
                            "min_size of at least 1");
    g.dir = dir;
    g.cfg = cfg;
    g.st = st;
    t0 = sh_now();
    if ((s = sh_webgraph_files_open(&g.wf, dir, err)) != SH_OK) goto done;
    g.pg = g.wf.pg;
    g.np = g.wf.np;
    path_of(path, sizeof path, dir, "links.bin");
    if ((s = sh_recfile_open(&g.links, path, SH_MAGIC_WEBLINKS, sizeof(sh_weblinkrec), 1, err)) != SH_OK) goto done;
    snprintf(file, sizeof file, "trivial-%s.bin", cfg->trivial);
    path_of(path, sizeof path, dir, file);
    if ((s = sh_recfile_open(&g.triv, path, SH_MAGIC_TRIVIAL, 4, 1, err)) != SH_OK) goto done;
    if (g.triv.count != g.np) {
        s = sh_error_set(err, SH_EFORMAT, 0, "%s has %llu pages, pages.bin %u: the files are from different runs; "
                         "compute the trivial clusters again", path, (unsigned long long)g.triv.count, g.np);
        goto done;
    }
    g.rid = (const uint32_t *)(const void *)g.triv.records;
    for (i = 0; i < g.np; i++) if (g.rid[i] + 1 > g.nr) g.nr = g.rid[i] + 1;
    g.size = (uint32_t *)calloc((size_t)g.nr + 1, 4);
    g.r_off = (uint32_t *)calloc((size_t)g.nr + 2, 4);
    g.r_pages = (uint32_t *)malloc(((size_t)g.np + 1) * 4);
    g.score = (uint64_t *)calloc((size_t)g.nr + 1, 8);
    if (!g.size || !g.r_off || !g.r_pages || !g.score) { s = nomem(err, "the trivial clusters"); goto done; }
    for (i = 0; i < g.np; i++) {
        if (g.rid[i] >= g.np) {
            s = sh_error_set(err, SH_EFORMAT, 24 + 4 * (size_t)i, "%s: page %u has cluster %u, past the last page: "
                             "the file is corrupt; compute the trivial clusters again", path, i, g.rid[i]);
            goto done;
        }
        g.size[g.rid[i]]++;
        g.score[g.rid[i]] += g.pg[i].ext_in;
        g.r_off[g.rid[i] + 1]++;
    }
    for (i = 0; i < g.nr; i++) g.r_off[i + 1] += g.r_off[i];
    {
        uint32_t *fill = (uint32_t *)malloc(((size_t)g.nr + 1) * 4);
        if (!fill) { s = nomem(err, "the trivial clusters"); goto done; }
        memcpy(fill, g.r_off, (size_t)g.nr * 4);
        for (i = 0; i < g.np; i++) g.r_pages[fill[g.rid[i]]++] = i;
        free(fill);
    }
    st->trivial_clusters = g.nr;
    if ((s = link_summary(&g, err)) != SH_OK) goto done;
    st->t_summary = sh_now() - t0;
    t0 = sh_now();
    if ((s = regain_all(&g, err)) != SH_OK) goto done;
    st->t_regain = sh_now() - t0;
    t0 = sh_now();
    s = report(&g, err);
    st->t_report = sh_now() - t0;
done:
    sh_webgraph_files_close(&g.wf);
    sh_recfile_close(&g.links);
    sh_recfile_close(&g.triv);
    free(g.size);
    free(g.r_off);
    free(g.r_pages);
    free(g.score);
    free(g.e);
    free(g.ml);
    free(g.out_off);
    free(g.cells);
    free(g.cl);
    return s;
}
