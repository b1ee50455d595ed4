/* Phases 1-4 of "Syntactic Clustering of the Web" over files (cluster.h). */
#include "cluster.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "byteorder.h"
#include "clock.h"
#include "extsort.h"
#include "pairs.h"
#include "unionfind.h"

static void path_of(char *out, size_t cap, const char *dir, const char *name)
{
    snprintf(out, cap, "%s/%s", dir, name);
}

/* ---- phase 1 -------------------------------------------------------------- */

/* docs.bin's meta: the serialized empty sketch that carries the parameters
 * every sketch of the run shares, then u32 sig_k. */
sh_status sh_p1_open(sh_p1 *p, const char *dir, const sh_pool_config *cfg, const sh_sketch_params *identity, sh_error *err)
{
    char path[4096];
    unsigned char meta[SH_DOCS_META_SIZE];
    sh_sketch empty;
    sh_status st;
    memset(p, 0, sizeof *p);
    memset(&empty, 0, sizeof empty);
    empty.p = *identity;
    sh_sketch_serialize(&empty, meta);
    sh_store_le32(meta + SH_SKETCH_PARAMS_SIZE, cfg->sig_k);
    p->want_full = cfg->want_full;
    p->sig_k = cfg->sig_k;
    p->m = identity->m;
    path_of(path, sizeof path, dir, "docs.bin");
    if ((st = sh_recwriter_open(&p->docs, path, SH_MAGIC_DOCS, sizeof(sh_docrec), meta, SH_DOCS_META_SIZE, err)) != SH_OK) return st;
    path_of(path, sizeof path, dir, "sketches.bin");
    if ((st = sh_recwriter_open(&p->sketches, path, SH_MAGIC_SKETCHES, 8, NULL, 0, err)) != SH_OK) goto fail;
    if (p->want_full) {
        path_of(path, sizeof path, dir, "shingles.bin");
        if ((st = sh_recwriter_open(&p->full, path, SH_MAGIC_SHINGLES, 8, NULL, 0, err)) != SH_OK) goto fail;
    }
    if (p->sig_k) {
        path_of(path, sizeof path, dir, "sigs.bin");
        if ((st = sh_recwriter_open(&p->sigs, path, SH_MAGIC_SIGS, 8 * p->sig_k, NULL, 0, err)) != SH_OK) goto fail;
    }
    return SH_OK;
fail:
    sh_p1_abort(p);
    return st;
}

sh_status sh_p1_add(sh_p1 *p, const sh_doc_out *outs, size_t n, sh_error *err)
{
    size_t i;
    sh_status st;
    uint64_t *zeros = NULL;
    for (i = 0; i < n; i++) {
        const sh_doc_out *o = &outs[i];
        sh_docrec r;
        memset(&r, 0, sizeof r);
        r.rep = (uint32_t)p->n_docs;
        r.status = (uint8_t)o->status;
        if (o->status == SH_OK) {
            r.raw_fp = o->raw_fp;
            r.canon_fp = o->canon_fp;
            r.set_fp = o->set_fp;
            r.sketch_off = p->n_values;
            r.sketch_n = (uint32_t)o->sketch->n;
            r.n_shingles = o->sketch->n_shingles > UINT32_MAX ? UINT32_MAX : (uint32_t)o->sketch->n_shingles;
            r.n_tokens = o->n_tokens > UINT32_MAX ? UINT32_MAX : (uint32_t)o->n_tokens;
            if (o->sketch->p.kind == SH_SKETCH_MOD) {
                uint32_t k = sh_mod_steps(p->m, o->sketch->p.m);
                if (k > 255) return sh_error_set(err, SH_EMISMATCH, 0, "a sketch with modulus %llu is not on the run's chain from %llu",
                                                 (unsigned long long)o->sketch->p.m, (unsigned long long)p->m);
                r.mod_steps = (uint8_t)k;
            }
            if ((st = sh_recwriter_append(&p->sketches, o->sketch->v, o->sketch->n, err)) != SH_OK) return st;
            p->n_values += o->sketch->n;
            if (p->want_full) {
                if (!o->full)
                    return sh_error_set(err, SH_EINVAL, 0, "document %llu has no full shingle set, and this run keeps them "
                                        "(exact verification)", (unsigned long long)p->n_docs + 1);
                r.full_off = p->n_full;
                r.full_n = (uint32_t)o->full->n;
                if ((st = sh_recwriter_append(&p->full, o->full->v, o->full->n, err)) != SH_OK) return st;
                p->n_full += o->full->n;
            }
            p->n_ok++;
            p->n_bytes += o->bytes;
        }
        if (p->sig_k) {
            const uint64_t *sig = o->sig;
            if (!sig) {
                if (!zeros && !(zeros = (uint64_t *)calloc(p->sig_k, 8))) return sh_error_set(err, SH_ENOMEM, 0, "out of memory");
                sig = zeros;
            }
            if ((st = sh_recwriter_append(&p->sigs, sig, 1, err)) != SH_OK) { free(zeros); return st; }
        }
        if ((st = sh_recwriter_append(&p->docs, &r, 1, err)) != SH_OK) { free(zeros); return st; }
        p->n_docs++;
    }
    free(zeros);
    if (p->n_docs >= UINT32_MAX)
        return sh_error_set(err, SH_EINVAL, 0, "more than 4294967294 documents in one run; split the collection");
    return SH_OK;
}

sh_status sh_p1_commit(sh_p1 *p, sh_error *err)
{
    sh_status st;
    /* docs.bin last: its presence means phase 1 finished */
    if ((st = sh_recwriter_commit(&p->sketches, err)) != SH_OK) goto fail;
    if (p->want_full && (st = sh_recwriter_commit(&p->full, err)) != SH_OK) goto fail;
    if (p->sig_k && (st = sh_recwriter_commit(&p->sigs, err)) != SH_OK) goto fail;
    if ((st = sh_recwriter_commit(&p->docs, err)) != SH_OK) goto fail;
    return SH_OK;
fail:
    sh_p1_abort(p);
    return st;
}

void sh_p1_abort(sh_p1 *p)
{
    sh_recwriter_abort(&p->docs);
    sh_recwriter_abort(&p->sketches);
    sh_recwriter_abort(&p->full);
    sh_recwriter_abort(&p->sigs);
}

/* ---- reading back --------------------------------------------------------- */

typedef struct run {
    sh_recfile docs, skv, sigs;
    sh_recstream full;     /* full sets: read per pair, not mapped (they are large) */
    const sh_docrec *d;
    const uint64_t *v, *sig;
    uint32_t n;
    uint32_t sig_k;
    sh_sketch_params p;
} run;

static void run_close(run *r)
{
    sh_recfile_close(&r->docs);
    sh_recfile_close(&r->skv);
    sh_recstream_close(&r->full);
    sh_recfile_close(&r->sigs);
}

/* Map and check docs.bin and, as asked, the files of sketch values, full sets
 * and signatures (each step opens only what it reads). */
static sh_status run_open_files(run *r, const char *dir, int need_values, int need_full, int need_sigs, sh_error *err)
{
    char path[4096];
    sh_status st;
    sh_sketch *empty;
    memset(r, 0, sizeof *r);
    r->full.fd = -1;
    path_of(path, sizeof path, dir, "docs.bin");
    if ((st = sh_recfile_open(&r->docs, path, SH_MAGIC_DOCS, sizeof(sh_docrec), 1, err)) != SH_OK) return st;
    if (r->docs.record_size != sizeof(sh_docrec) || r->docs.meta_size != ((SH_DOCS_META_SIZE + 7u) & ~7u) ||
        sh_sketch_deserialize(r->docs.meta, SH_SKETCH_PARAMS_SIZE, &empty, err) != SH_OK) {
        run_close(r);
        return sh_error_set(err, SH_EFORMAT, 0, "%s has an unexpected layout; it was written by another version", path);
    }
    r->p = empty->p;
    free(empty);
    r->sig_k = sh_load_le32(r->docs.meta + SH_SKETCH_PARAMS_SIZE);
    r->d = (const sh_docrec *)(const void *)r->docs.records;
    r->n = (uint32_t)r->docs.count;
    if (need_values) {
        path_of(path, sizeof path, dir, "sketches.bin");
        if ((st = sh_recfile_open(&r->skv, path, SH_MAGIC_SKETCHES, 8, 1, err)) != SH_OK) { run_close(r); return st; }
        r->v = (const uint64_t *)(const void *)r->skv.records;
    }
    if (need_full) {
        path_of(path, sizeof path, dir, "shingles.bin");
        if ((st = sh_recstream_open(&r->full, path, SH_MAGIC_SHINGLES, 8, err)) != SH_OK) {
            run_close(r);
            if (st == SH_EIO) return sh_error_set(err, SH_EIO, 0, "%s is missing: exact verification needs the full shingle sets kept in phase 1 (run cluster with --verify exact)", path);
            return st;
        }
    }
    if (need_sigs) {
        path_of(path, sizeof path, dir, "sigs.bin");
        if ((st = sh_recfile_open(&r->sigs, path, SH_MAGIC_SIGS, 8 * r->sig_k, 1, err)) != SH_OK) {
            run_close(r);
            if (st == SH_EIO) return sh_error_set(err, SH_EIO, 0, "%s is missing: this method needs min-hash signatures kept in phase 1", path);
            return st;
        }
        r->sig = (const uint64_t *)(const void *)r->sigs.records;
    }
    return SH_OK;
}

static sh_status run_open(run *r, const char *dir, int need_full, int need_sigs, sh_error *err)
{
    return run_open_files(r, dir, 1, need_full, need_sigs, err);
}

static sh_status run_file(sh_recfile *f, const char *dir, const char *name, const char magic[8], uint32_t size,
                          size_t *n, sh_error *err)
{
    char path[4096];
    sh_status s;
    path_of(path, sizeof path, dir, name);
    *n = 0;
    if ((s = sh_recfile_open(f, path, magic, size, 1, err)) != SH_OK) return s;
    *n = (size_t)f->count;
    return SH_OK;
}

sh_status sh_run_clusters(sh_recfile *f, const char *dir, const sh_clusterrec **recs, size_t *n, sh_error *err)
{
    sh_status s = run_file(f, dir, "clusters.bin", SH_MAGIC_CLUSTERS, sizeof **recs, n, err);
    *recs = s == SH_OK ? (const sh_clusterrec *)(const void *)f->records : NULL;
    return s;
}

sh_status sh_run_links(sh_recfile *f, const char *dir, const sh_linkrec **recs, size_t *n, sh_error *err)
{
    sh_status s = run_file(f, dir, "links.bin", SH_MAGIC_LINKS, sizeof **recs, n, err);
    *recs = s == SH_OK ? (const sh_linkrec *)(const void *)f->records : NULL;
    return s;
}

sh_status sh_run_docs(sh_recfile *f, const char *dir, const sh_docrec **recs, size_t *n, sh_error *err)
{
    sh_status s = run_file(f, dir, "docs.bin", SH_MAGIC_DOCS, sizeof **recs, n, err);
    *recs = s == SH_OK ? (const sh_docrec *)(const void *)f->records : NULL;
    return s;
}

/* ---- identical documents -------------------------------------------------- */

typedef struct fpid { unsigned char key[8]; uint32_t id; } fpid;


/* Section "Identical documents": one fingerprint per kind of equivalence;
 * documents with equal fingerprints are joined, and the smallest id of each
 * group stays as the representative through phases 2-4. */
sh_status sh_dedupe(const char *dir, sh_dedupe_stats *st, sh_error *err)
{
    run r;
    sh_status s;
    sh_unionfind *uf = NULL;
    fpid *a = NULL, *aux = NULL;
    uint32_t *label = NULL;
    sh_docrec *out = NULL;
    uint32_t i, n;
    int kind;
    char path[4096];
    memset(st, 0, sizeof *st);
    if ((s = run_open_files(&r, dir, 0, 0, 0, err)) != SH_OK) return s; /* dedupe reads fingerprints only */
    n = r.n;
    a = (fpid *)malloc(((size_t)n + 1) * sizeof *a);
    aux = (fpid *)malloc(((size_t)n + 1) * sizeof *aux);
    label = (uint32_t *)malloc(((size_t)n + 1) * sizeof *label);
    out = (sh_docrec *)malloc(((size_t)n + 1) * sizeof *out);
    if (!a || !aux || !label || !out || sh_uf_new(&uf, n, err) != SH_OK) {
        s = sh_error_set(err, SH_ENOMEM, 0, "out of memory deduplicating %u documents", n);
        goto done;
    }
    for (kind = 0; kind < 3; kind++) {
        size_t m = 0, j;
        for (i = 0; i < n; i++) {
            const sh_docrec *d = &r.d[i];
            uint64_t fp;
            if (d->status != SH_OK) continue;
            if (kind == 2 && d->sketch_n == 0) continue; /* no selected shingles: no evidence */
            fp = kind == 0 ? d->raw_fp : kind == 1 ? d->canon_fp : d->set_fp;
            sh_store_be64(a[m].key, fp);
            a[m].id = i;
            m++;
        }
        sh_radix_sort(a, aux, m, sizeof *a, 8);
        for (j = 1; j < m; j++)
            if (memcmp(a[j].key, a[j - 1].key, 8) == 0) sh_uf_union(uf, a[j - 1].id, a[j].id);
    }
    sh_uf_labels(uf, label, SH_UF_LABEL_MIN);
    for (i = 0; i < n; i++) {
        sh_docrec d = r.d[i];
        st->docs++;
        if (d.status != SH_OK) { st->skipped++; d.rep = i; d.dup = SH_DUP_NONE; out[i] = d; continue; }
        d.rep = label[i];
        if (d.rep == i) { d.dup = SH_DUP_NONE; st->representatives++; }
        else {
            const sh_docrec *p = &r.d[d.rep];
            d.dup = p->raw_fp == d.raw_fp ? SH_DUP_EXACT : p->canon_fp == d.canon_fp ? SH_DUP_LEXICAL : SH_DUP_SHINGLE;
            if (d.dup == SH_DUP_EXACT) st->exact++;
            else if (d.dup == SH_DUP_LEXICAL) st->lexical++;
            else st->shingle++;
        }
        out[i] = d;
    }
    {
        sh_recwriter w;
        unsigned char meta[SH_DOCS_META_SIZE];
        memcpy(meta, r.docs.meta, SH_DOCS_META_SIZE);
        path_of(path, sizeof path, dir, "docs.bin");
        if ((s = sh_recwriter_open(&w, path, SH_MAGIC_DOCS, sizeof(sh_docrec), meta, SH_DOCS_META_SIZE, err)) != SH_OK) goto done;
        if ((s = sh_recwriter_append(&w, out, n, err)) != SH_OK) { sh_recwriter_abort(&w); goto done; }
        s = sh_recwriter_commit(&w, err);
    }
done:
    sh_uf_free(uf);
    free(a);
    free(aux);
    free(label);
    free(out);
    run_close(&r);
    return s;
}

/* ---- phases 2 and 3 ------------------------------------------------------- */

#define CHUNK 65536

/* Phase 3 over a sorter of <key, doc> records (pairs.h), its counters into st. */
static sh_status form(sh_extsort *keys, sh_extsort *pairs, uint32_t max_df, sh_unionfind *uf, sh_pairs_stats *st,
                      sh_progress_fn progress, void *pud, sh_error *err)
{
    sh_form_config c;
    sh_form_stats fs;
    sh_status s;
    memset(&c, 0, sizeof c);
    memset(&fs, 0, sizeof fs);
    c.key_size = 8;
    c.max_df = max_df;
    c.pairs = pairs;
    c.uf = uf;
    c.progress = progress;
    c.progress_ud = pud;
    c.progress_step = "pair formation";
    c.progress_total = st->records;
    s = sh_form_pairs(keys, &c, &fs, err);
    st->shingles += fs.keys;
    st->common_dropped += fs.dropped;
    st->pair_records += fs.pair_records;
    return s;
}

static void add_disk(sh_pairs_stats *st, sh_extsort *s)
{
    sh_extsort_stats x;
    sh_extsort_get_stats(s, &x);
    if (x.bytes_written > st->disk_peak) st->disk_peak = x.bytes_written;
}

/* Phase 2: expand the representatives' sketches into <shingle, doc> records
 * and sort them. Phase 3: drop shingles shared by more than max_df documents
 * ("Common shingles"), form <doc, doc, 1> for each pair sharing a shingle and
 * merge the counts by a second external sort. */
sh_status sh_pairs(const char *dir, const sh_pairs_config *cfg, sh_pairs_stats *st, sh_error *err)
{
    run r;
    sh_status s;
    sh_extsort *keys = NULL, *pairs = NULL;
    unsigned char *buf = NULL;
    const char *tmp = cfg->temp_dir ? cfg->temp_dir : dir;
    char path[4096];
    size_t nb = 0;
    uint32_t i;
    double t0;
    memset(st, 0, sizeof *st);
    if ((s = run_open(&r, dir, 0, 0, err)) != SH_OK) return s;
    t0 = sh_now();
    buf = (unsigned char *)malloc((size_t)CHUNK * 12);
    if (!buf) { s = sh_error_set(err, SH_ENOMEM, 0, "out of memory"); goto done; }
    if ((s = sh_extsort_open(&keys, 12, 8, cfg->memory / 2, tmp, NULL, err)) != SH_OK) goto done;
    for (i = 0; i < r.n; i++) {
        const sh_docrec *d = &r.d[i];
        uint32_t j;
        if (cfg->progress && i % 262144 == 0) cfg->progress(cfg->progress_ud, "shingle merging", i, r.n);
        if (d->status != SH_OK || d->rep != i) continue;
        for (j = 0; j < d->sketch_n; j++) {
            sh_key_record(buf + 12 * nb, 8, r.v[d->sketch_off + j], i);
            if (++nb == CHUNK) {
                if ((s = sh_extsort_add(keys, buf, nb, err)) != SH_OK) goto done;
                st->records += nb;
                nb = 0;
            }
        }
    }
    if (nb && (s = sh_extsort_add(keys, buf, nb, err)) != SH_OK) goto done;
    st->records += nb;
    if (cfg->progress) cfg->progress(cfg->progress_ud, "shingle merging", r.n, r.n);
    if ((s = sh_extsort_finish(keys, err)) != SH_OK) goto done;
    add_disk(st, keys);
    st->t_merge = sh_now() - t0;
    t0 = sh_now();
    if ((s = sh_pairsort_open(&pairs, cfg->memory / 2, tmp, err)) != SH_OK) goto done;
    if ((s = form(keys, pairs, cfg->max_df, NULL, st, cfg->progress, cfg->progress_ud, err)) != SH_OK) goto done;
    sh_extsort_free(keys);
    keys = NULL;
    st->t_form = sh_now() - t0;
    t0 = sh_now();
    if ((s = sh_extsort_finish(pairs, err)) != SH_OK) goto done;
    add_disk(st, pairs);
    path_of(path, sizeof path, dir, "pairs.bin");
    s = sh_pairs_write(path, pairs, &st->pairs, err);
    st->t_pairmerge = sh_now() - t0;
done:
    sh_extsort_free(keys);
    sh_extsort_free(pairs);
    free(buf);
    run_close(&r);
    return s;
}

/* ---- phase 4 -------------------------------------------------------------- */

/* A sketch of document i as the estimator takes it, in caller-owned scratch;
 * the full set is read from shingles.bin (NULL, with err set, if that fails). */
static sh_sketch *view_err(const run *r, uint32_t i, sh_sketch *scratch, int full, sh_error *err)
{
    const sh_docrec *d = &r->d[i];
    scratch->p = r->p;
    scratch->n_shingles = d->n_shingles;
    scratch->n_tokens = d->n_tokens;
    if (full) {
        scratch->p.kind = SH_SKETCH_FULL;
        scratch->p.s = 0;
        scratch->p.m = 0;
        scratch->p.floor = 0;
        scratch->n = d->full_n;
        if (sh_recstream_read(&r->full, d->full_off, d->full_n, scratch->v, err) != SH_OK) return NULL;
    } else {
        if (r->p.kind == SH_SKETCH_CLASS) scratch->p.cls = sh_size_class(d->n_shingles);
        if (r->p.kind == SH_SKETCH_MOD) scratch->p.m = sh_mod_step(r->p.m, d->mod_steps);
        scratch->n = d->sketch_n;
        memcpy(scratch->v, r->v + d->sketch_off, d->sketch_n * 8);
    }
    return scratch;
}

static sh_sketch *view(const run *r, uint32_t i, sh_sketch *scratch, int full)
{
    return view_err(r, i, scratch, full, NULL);
}

/* Exact estimate of documents a and b from their full sets. */
static sh_status exact_pair(const run *r, uint32_t a, uint32_t b, sh_sketch *fa, sh_sketch *fb, sh_estimate *e, sh_error *err)
{
    if (!view_err(r, a, fa, 1, err) || !view_err(r, b, fb, 1, err)) return err ? err->code : SH_EIO;
    return sh_sketch_estimate(fa, fb, e, err);
}

static size_t max_len(const run *r, int full)
{
    size_t m = 1;
    uint32_t i;
    for (i = 0; i < r->n; i++) {
        size_t k = full ? r->d[i].full_n : r->d[i].sketch_n;
        if (k > m) m = k;
    }
    return m;
}

typedef struct decider {
    run r;
    sh_sketch *sa, *sb, *fa, *fb;
    sh_unionfind *uf;
    sh_recwriter links;
    const sh_decide_config *c;
    sh_decide_stats *st;
} decider;

static sh_status decider_open(decider *x, const char *dir, const sh_decide_config *c, int need_sigs,
                              sh_decide_stats *st, sh_error *err)
{
    sh_status s;
    size_t m;
    char path[4096];
    memset(x, 0, sizeof *x);
    x->c = c;
    x->st = st;
    memset(st, 0, sizeof *st);
    if ((s = run_open(&x->r, dir, c->verify, need_sigs, err)) != SH_OK) return s;
    m = max_len(&x->r, 0);
    x->sa = (sh_sketch *)malloc(sizeof(sh_sketch) + m * 8);
    x->sb = (sh_sketch *)malloc(sizeof(sh_sketch) + m * 8);
    if (c->verify) {
        m = max_len(&x->r, 1);
        x->fa = (sh_sketch *)malloc(sizeof(sh_sketch) + m * 8);
        x->fb = (sh_sketch *)malloc(sizeof(sh_sketch) + m * 8);
    }
    if (!x->sa || !x->sb || (c->verify && (!x->fa || !x->fb)) || sh_uf_new(&x->uf, x->r.n, err) != SH_OK)
        return sh_error_set(err, SH_ENOMEM, 0, "out of memory for %u documents", x->r.n);
    path_of(path, sizeof path, dir, "links.bin");
    return sh_recwriter_open(&x->links, path, SH_MAGIC_LINKS, sizeof(sh_linkrec), NULL, 0, err);
}

/* Decide one candidate pair of representatives; link it if it passes. */
static sh_status decide_pair(decider *x, uint32_t a, uint32_t b, sh_error *err)
{
    sh_estimate e, xe;
    sh_linkrec l;
    sh_status s;
    x->st->pairs++;
    if ((s = sh_sketch_estimate(view(&x->r, a, x->sa, 0), view(&x->r, b, x->sb, 0), &e, err)) != SH_OK) return s;
    l.a = a; l.b = b;
    l.r = (float)e.resemblance; l.cab = (float)e.contain_ab; l.cba = (float)e.contain_ba;
    l.xr = l.xcab = l.xcba = -1.0f;
    if (x->c->verify) {
        if (!x->c->accept && !sh_policy_passes(x->c->policy, x->c->candidate, &e)) return SH_OK;
        x->st->candidates++;
        if ((s = exact_pair(&x->r, a, b, x->fa, x->fb, &xe, err)) != SH_OK) return s;
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
static sh_status write_clusters(const run *r, sh_unionfind *uf, const char *dir, sh_decide_stats *st, sh_error *err)
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
    path_of(path, sizeof path, dir, "clusters.bin");
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

static sh_status decider_finish(decider *x, const char *dir, sh_error *err)
{
    sh_status s = sh_recwriter_commit(&x->links, err);
    if (s != SH_OK) return s;
    return write_clusters(&x->r, x->uf, dir, x->st, err);
}

static void decider_close(decider *x)
{
    sh_recwriter_abort(&x->links);
    sh_uf_free(x->uf);
    free(x->sa);
    free(x->sb);
    free(x->fa);
    free(x->fb);
    run_close(&x->r);
}

/* Phase 4: "We examine each <ID, ID, count> triplet and decide if the document
 * pair exceeds our threshold ... If it does, we add a link between the two
 * documents in a union-find algorithm. The connected components ... form the
 * final clusters." The estimate is made from the two stored sketches (the
 * count alone does not give the MIN_s estimator), or exactly with verify. */
sh_status sh_decide(const char *dir, const sh_decide_config *cfg, sh_decide_stats *st, sh_error *err)
{
    decider x;
    sh_recfile pf;
    char path[4096];
    sh_status s;
    uint64_t i;
    if ((s = decider_open(&x, dir, cfg, 0, st, err)) != SH_OK) { decider_close(&x); return s; }
    path_of(path, sizeof path, dir, "pairs.bin");
    if ((s = sh_recfile_open(&pf, path, SH_MAGIC_PAIRS, sizeof(sh_pairrec), 1, err)) != SH_OK) { decider_close(&x); return s; }
    for (i = 0; i < pf.count && s == SH_OK; i++) {
        const uint32_t *p = (const uint32_t *)(const void *)(pf.records + 12 * i);
        if (cfg->progress && i % 262144 == 0) cfg->progress(cfg->progress_ud, "cluster formation", i, pf.count);
        if (p[0] >= x.r.n || p[1] >= x.r.n) {
            s = sh_error_set(err, SH_EFORMAT, (size_t)(12 * i), "%s names document %u of only %u: it belongs to another run",
                             path, p[0] > p[1] ? p[0] : p[1], x.r.n);
            break;
        }
        s = decide_pair(&x, p[0], p[1], err);
    }
    if (cfg->progress && s == SH_OK) cfg->progress(cfg->progress_ud, "cluster formation", pf.count, pf.count);
    sh_recfile_close(&pf);
    if (s == SH_OK) s = decider_finish(&x, dir, err);
    decider_close(&x);
    return s;
}

/* The clusters of a decision made elsewhere (by the ranks of a distributed
 * run): the links of links.bin and the extra joins, each identical document
 * with its representative, as phase 4 forms them. */
sh_status sh_finish_clusters(const char *dir, const uint32_t *joins, size_t n_joins, sh_decide_stats *st, size_t *joined,
                             sh_error *err)
{
    run r;
    sh_recfile lf;
    sh_unionfind *uf = NULL;
    char path[4096];
    sh_status s;
    uint64_t i;
    size_t j, k = 0;
    st->clusters = st->clustered_docs = st->identical_only_clusters = st->mixed_clusters = 0;
    if ((s = run_open_files(&r, dir, 0, 0, 0, err)) != SH_OK) return s;
    path_of(path, sizeof path, dir, "links.bin");
    if ((s = sh_recfile_open(&lf, path, SH_MAGIC_LINKS, sizeof(sh_linkrec), 1, err)) != SH_OK) { run_close(&r); return s; }
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
    s = write_clusters(&r, uf, dir, st, err);
done:
    sh_uf_free(uf);
    sh_recfile_close(&lf);
    run_close(&r);
    return s;
}

/* The documents exact verification would read: both ends of every pair of
 * pairs.bin whose estimate passes cfg's candidate score (every pair with a
 * caller's policy, which decides on exact values). */
sh_status sh_candidates(const char *dir, const sh_decide_config *cfg, unsigned char *mark, unsigned char *pair_mark,
                        uint64_t *n_pairs, sh_error *err)
{
    run r;
    sh_recfile pf;
    sh_sketch *sa = NULL, *sb = NULL;
    char path[4096];
    sh_status s;
    uint64_t i, k = 0;
    size_t m;
    if ((s = run_open(&r, dir, 0, 0, err)) != SH_OK) return s;
    path_of(path, sizeof path, dir, "pairs.bin");
    if ((s = sh_recfile_open(&pf, path, SH_MAGIC_PAIRS, sizeof(sh_pairrec), 1, err)) != SH_OK) { run_close(&r); return s; }
    m = max_len(&r, 0);
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
            if ((s = sh_sketch_estimate(view(&r, p->a, sa, 0), view(&r, p->b, sb, 0), &e, err)) != SH_OK) goto done;
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
    run_close(&r);
    return s;
}

/* ---- alternatives --------------------------------------------------------- */

/* Candidates from a <key, doc> sorter: with check, every pair sharing a key
 * is decided like phase 4 (pairs merged first so each is decided once);
 * without, documents sharing a key are linked directly as a star. */
static sh_status candidates(const char *dir, sh_extsort *keys, const sh_alt_config *cfg, decider *x,
                            sh_pairs_stats *ps, sh_error *err)
{
    sh_status s;
    if (!cfg->check) {
        uint64_t before = sh_uf_components(x->uf);
        if ((s = form(keys, NULL, 0, x->uf, ps, cfg->decide.progress, cfg->decide.progress_ud, err)) != SH_OK) return s;
        x->st->linked = before - sh_uf_components(x->uf);
        return SH_OK;
    }
    {
        sh_extsort *pairs = NULL;
        unsigned char *buf = (unsigned char *)malloc((size_t)CHUNK * SH_PAIR_RECORD);
        size_t n, i;
        if (!buf) return sh_error_set(err, SH_ENOMEM, 0, "out of memory");
        if ((s = sh_pairsort_open(&pairs, cfg->memory / 2, cfg->temp_dir ? cfg->temp_dir : dir, err)) != SH_OK) { free(buf); return s; }
        if ((s = form(keys, pairs, 100000, NULL, ps, cfg->decide.progress, cfg->decide.progress_ud, err)) == SH_OK && (s = sh_extsort_finish(pairs, err)) == SH_OK) {
            for (;;) {
                if ((s = sh_extsort_read(pairs, buf, CHUNK, &n, err)) != SH_OK || n == 0) break;
                ps->pairs += n;
                for (i = 0; i < n && s == SH_OK; i++)
                    s = decide_pair(x, sh_pair_a(buf + SH_PAIR_RECORD * i), sh_pair_b(buf + SH_PAIR_RECORD * i), err);
                if (s != SH_OK) break;
            }
        }
        sh_extsort_free(pairs);
        free(buf);
        return s;
    }
}

static sh_status keyed(const char *dir, const sh_alt_config *cfg, int need_sigs, sh_decide_stats *st, sh_pairs_stats *ps,
                       sh_status (*emit)(const run *, const sh_alt_config *, uint32_t, unsigned char *, size_t *),
                       size_t per_doc, sh_error *err)
{
    decider x;
    sh_extsort *keys = NULL;
    unsigned char *buf = NULL;
    size_t nb = 0;
    uint32_t i;
    sh_status s;
    double t0 = sh_now();
    memset(ps, 0, sizeof *ps);
    if ((s = decider_open(&x, dir, &cfg->decide, need_sigs, st, err)) != SH_OK) goto done;
    buf = (unsigned char *)malloc((CHUNK + per_doc) * 12);
    if (!buf) { s = sh_error_set(err, SH_ENOMEM, 0, "out of memory"); goto done; }
    if ((s = sh_extsort_open(&keys, 12, 8, cfg->memory / 2, cfg->temp_dir ? cfg->temp_dir : dir, NULL, err)) != SH_OK) goto done;
    for (i = 0; i < x.r.n; i++) {
        if (x.r.d[i].status != SH_OK || x.r.d[i].rep != i) continue;
        if ((s = emit(&x.r, cfg, i, buf + 12 * nb, &nb)) != SH_OK) goto done;
        if (nb >= CHUNK) {
            if ((s = sh_extsort_add(keys, buf, nb, err)) != SH_OK) goto done;
            ps->records += nb;
            nb = 0;
        }
    }
    if (nb && (s = sh_extsort_add(keys, buf, nb, err)) != SH_OK) goto done;
    ps->records += nb;
    if ((s = sh_extsort_finish(keys, err)) != SH_OK) goto done;
    add_disk(ps, keys);
    ps->t_merge = sh_now() - t0;
    t0 = sh_now();
    if ((s = candidates(dir, keys, cfg, &x, ps, err)) != SH_OK) goto done;
    ps->t_form = sh_now() - t0;
    s = decider_finish(&x, dir, err);
done:
    sh_extsort_free(keys);
    free(buf);
    decider_close(&x);
    return s;
}

/* Super shingles. 6 x 14 (Broder 2000; Fetterly et al. 2003): 84 independent
 * minima in 6 groups of 14, a super shingle being the fingerprint of a group;
 * two documents are near-duplicates when they share 2 of the 6, i.e. one of
 * the 15 pairs ("megashingles"). Meta (Broder 1997, "Super shingles"): sort
 * the sketch and shingle the sorted sequence of shingles with width meta_w. */
static sh_status emit_super(const run *r, const sh_alt_config *cfg, uint32_t i, unsigned char *o, size_t *nb)
{
    const sh_docrec *d = &r->d[i];
    if (cfg->meta) {
        const uint64_t *v = r->v + d->sketch_off;
        uint32_t w = cfg->meta_w, j, k;
        if (d->sketch_n == 0) return SH_OK;
        if (d->sketch_n < w) w = d->sketch_n;
        for (j = 0; j + w <= d->sketch_n; j++) {
            uint64_t f = 0x9e3779b97f4a7c15ULL;
            for (k = 0; k < w; k++) f = sh_mix(f ^ v[j + k]);
            sh_key_record(o, 8, f, i);
            o += 12;
            (*nb)++;
        }
    } else {
        const uint64_t *sig = r->sig + (size_t)i * r->sig_k;
        uint64_t ss[6];
        int g, a, b;
        if (d->n_shingles == 0) return SH_OK;
        for (g = 0; g < 6; g++) {
            uint64_t f = 0x9e3779b97f4a7c15ULL;
            int k;
            for (k = 0; k < 14; k++) f = sh_mix(f ^ sig[14 * g + k]);
            ss[g] = f;
        }
        for (a = 0; a < 6; a++)
            for (b = a + 1; b < 6; b++) {
                sh_key_record(o, 8, sh_mix(ss[a] ^ sh_mix(ss[b] + (uint64_t)(16 * a + b))), i);
                o += 12;
                (*nb)++;
            }
    }
    return SH_OK;
}

sh_status sh_supershingle(const char *dir, const sh_alt_config *cfg, sh_decide_stats *st, sh_pairs_stats *ps, sh_error *err)
{
    size_t per = 15;
    if (cfg->meta) per = 1 << 20; /* bounded by the longest sketch; checked below */
    if (cfg->meta) {
        run r;
        sh_status s = run_open(&r, dir, 0, 0, err);
        if (s != SH_OK) return s;
        per = max_len(&r, 0);
        run_close(&r);
    }
    return keyed(dir, cfg, !cfg->meta, st, ps, emit_super, per, err);
}

/* LSH banding (b bands of r rows of the min-hash signature): documents whose
 * band agrees are candidates; P(candidate) = 1 - (1 - s^r)^b. */
static sh_status emit_lsh(const run *r, const sh_alt_config *cfg, uint32_t i, unsigned char *o, size_t *nb)
{
    const uint64_t *sig = r->sig + (size_t)i * r->sig_k;
    uint32_t b, k;
    if (r->d[i].n_shingles == 0) return SH_OK;
    for (b = 0; b < cfg->bands; b++) {
        uint64_t f = sh_mix(0x51ed270b27ab45d3ULL + b);
        for (k = 0; k < cfg->rows; k++) f = sh_mix(f ^ sig[b * cfg->rows + k]);
        sh_key_record(o, 8, f, i);
        o += 12;
        (*nb)++;
    }
    return SH_OK;
}

sh_status sh_lsh(const char *dir, const sh_alt_config *cfg, sh_decide_stats *st, sh_pairs_stats *ps, sh_error *err)
{
    run r;
    sh_status s = run_open(&r, dir, 0, 1, err);
    if (s != SH_OK) return s;
    if ((uint64_t)cfg->bands * cfg->rows > r.sig_k || cfg->bands == 0 || cfg->rows == 0) {
        uint32_t k = r.sig_k;
        run_close(&r);
        return sh_error_set(err, SH_EINVAL, 0, "LSH with %u bands of %u rows needs %u min-hashes, but phase 1 kept %u: "
                            "sketch again with a larger signature", cfg->bands, cfg->rows, cfg->bands * cfg->rows, k);
    }
    run_close(&r);
    return keyed(dir, cfg, 1, st, ps, emit_lsh, cfg->bands, err);
}

/* Greedy clustering ("On the resemblance and containment", section 4.4):
 * take the sketches in turn; each cluster keeps its first member's sketch as
 * representative, and a hash table maps each fingerprint to the clusters whose
 * representative holds it, so a new sketch finds the clusters it shares
 * values with in O(s); it joins the one it resembles best if that passes the
 * policy, else starts a new cluster. O(r s) overall. */
typedef struct gentry { uint64_t v; uint32_t cluster; uint32_t next; } gentry;

sh_status sh_greedy(const char *dir, const sh_alt_config *cfg, sh_decide_stats *st, sh_error *err)
{
    decider x;
    sh_status s;
    uint32_t i, *head = NULL, *reps = NULL, *hits = NULL, *touched = NULL;
    gentry *e = NULL;
    size_t ne = 0, cap_e = 0, hcap = 1, total = 0, nreps = 0;
    if ((s = decider_open(&x, dir, &cfg->decide, 0, st, err)) != SH_OK) goto done;
    for (i = 0; i < x.r.n; i++) if (x.r.d[i].rep == i && x.r.d[i].status == SH_OK) total += x.r.d[i].sketch_n;
    while (hcap < 2 * total + 2) hcap *= 2;
    head = (uint32_t *)malloc(hcap * 4);
    reps = (uint32_t *)malloc(((size_t)x.r.n + 1) * 4);
    hits = (uint32_t *)calloc((size_t)x.r.n + 1, 4);
    touched = (uint32_t *)malloc(((size_t)x.r.n + 1) * 4);
    cap_e = total + 1;
    e = (gentry *)malloc(cap_e * sizeof *e);
    if (!head || !reps || !hits || !touched || !e) { s = sh_error_set(err, SH_ENOMEM, 0, "out of memory"); goto done; }
    memset(head, 0xff, hcap * 4);
    for (i = 0; i < x.r.n; i++) {
        const sh_docrec *d = &x.r.d[i];
        const uint64_t *v = x.r.v + d->sketch_off;
        uint32_t j, nt = 0, best = UINT32_MAX;
        double best_score = -1;
        if (d->status != SH_OK || d->rep != i) continue;
        for (j = 0; j < d->sketch_n; j++) {
            uint32_t k;
            for (k = head[sh_mix(v[j]) & (hcap - 1)]; k != UINT32_MAX; k = e[k].next)
                if (e[k].v == v[j]) {
                    uint32_t c = e[k].cluster;
                    if (!hits[c]++) touched[nt++] = c;
                }
        }
        for (j = 0; j < nt; j++) {
            uint32_t c = touched[j];
            sh_estimate est;
            hits[c] = 0;
            x.st->pairs++;
            if ((s = sh_sketch_estimate(view(&x.r, i, x.sa, 0), view(&x.r, reps[c], x.sb, 0), &est, err)) != SH_OK) goto done;
            if (cfg->decide.verify) {
                /* a candidate cluster by the estimate, decided by the exact scores */
                if (!sh_policy_passes(cfg->decide.policy, cfg->decide.candidate, &est)) continue;
                x.st->candidates++;
                if ((s = exact_pair(&x.r, i, reps[c], x.fa, x.fb, &est, err)) != SH_OK) goto done;
            }
            if (sh_policy_passes(cfg->decide.policy, cfg->decide.threshold, &est)) {
                double score = est.resemblance > est.contain_ab ? est.resemblance : est.contain_ab;
                if (score > best_score) { best_score = score; best = c; }
            }
        }
        if (best != UINT32_MAX) {
            sh_linkrec l;
            sh_estimate est;
            sh_sketch_estimate(view(&x.r, i, x.sa, 0), view(&x.r, reps[best], x.sb, 0), &est, err);
            l.a = reps[best]; l.b = i;
            l.r = (float)est.resemblance; l.cab = (float)est.contain_ba; l.cba = (float)est.contain_ab;
            l.xr = l.xcab = l.xcba = -1.0f;
            if (cfg->decide.verify) {
                if ((s = exact_pair(&x.r, i, reps[best], x.fa, x.fb, &est, err)) != SH_OK) goto done;
                l.xr = (float)est.resemblance; l.xcab = (float)est.contain_ba; l.xcba = (float)est.contain_ab;
            } else {
                x.st->candidates++;
            }
            sh_uf_union(x.uf, reps[best], i);
            x.st->linked++;
            if ((s = sh_recwriter_append(&x.links, &l, 1, err)) != SH_OK) goto done;
        } else {
            uint32_t c = (uint32_t)nreps++;
            reps[c] = i;
            for (j = 0; j < d->sketch_n; j++) {
                size_t h = sh_mix(v[j]) & (hcap - 1);
                e[ne].v = v[j];
                e[ne].cluster = c;
                e[ne].next = head[h];
                head[h] = (uint32_t)ne;
                ne++;
            }
        }
    }
    s = decider_finish(&x, dir, err);
done:
    free(head);
    free(reps);
    free(hits);
    free(touched);
    free(e);
    decider_close(&x);
    return s;
}
