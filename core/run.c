/* A cluster run read back: see run.h. */
#include "run.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "byteorder.h"
#include "verifysets.h"

void sh_run_path(char *out, size_t cap, const char *dir, const char *name)
{
    snprintf(out, cap, "%s/%s", dir, name);
}

void sh_run_close(sh_run *r)
{
    sh_recfile_close(&r->docs);
    sh_recfile_close(&r->skv);
    sh_recstream_close(&r->full);
    sh_recfile_close(&r->sigs);
    sh_recfile_close(&r->fidx);
    sh_recstream_close(&r->fsets);
}

/* Map and check docs.bin and, as asked, the files of sketch values, full sets
 * and signatures (each step opens only what it reads). */
sh_status sh_run_open(sh_run *r, const char *dir, int need_values, int need_full, int need_sigs, sh_error *err)
{
    char path[4096];
    sh_status st;
    sh_sketch *empty;
    memset(r, 0, sizeof *r);
    r->full.fd = -1;
    r->fsets.fd = -1;
    sh_run_path(path, sizeof path, dir, "docs.bin");
    if ((st = sh_recfile_open(&r->docs, path, SH_MAGIC_DOCS, sizeof(sh_docrec), 1, err)) != SH_OK) return st;
    if (r->docs.record_size != sizeof(sh_docrec) || r->docs.meta_size != ((SH_DOCS_META_SIZE + 7u) & ~7u) ||
        sh_sketch_deserialize(r->docs.meta, SH_SKETCH_PARAMS_SIZE, &empty, err) != SH_OK) {
        sh_run_close(r);
        return sh_error_set(err, SH_EFORMAT, 0, "%s has an unexpected layout; it was written by another version", path);
    }
    r->p = empty->p;
    free(empty);
    r->sig_k = sh_load_le32(r->docs.meta + SH_SKETCH_PARAMS_SIZE);
    r->d = (const sh_docrec *)(const void *)r->docs.records;
    r->n = (uint32_t)r->docs.count;
    if (need_values) {
        sh_run_path(path, sizeof path, dir, "sketches.bin");
        if ((st = sh_recfile_open(&r->skv, path, SH_MAGIC_SKETCHES, 8, 1, err)) != SH_OK) { sh_run_close(r); return st; }
        r->v = (const uint64_t *)(const void *)r->skv.records;
    }
    if (need_full) {
        sh_run_path(path, sizeof path, dir, "shingles.bin");
        if ((st = sh_recstream_open(&r->full, path, SH_MAGIC_SHINGLES, 8, err)) != SH_OK) {
            sh_run_close(r);
            if (st == SH_EIO) return sh_error_set(err, SH_EIO, 0, "%s is missing: exact verification needs the full shingle sets kept in phase 1 (run cluster with --verify exact)", path);
            return st;
        }
        /* the candidates' sets made again from their sources (verifysets.c) */
        sh_run_path(path, sizeof path, dir, "fullsets.idx");
        if (sh_recfile_open(&r->fidx, path, SH_MAGIC_FULLIDX, 8, 1, NULL) == SH_OK) {
            if (r->fidx.count != r->n) {
                sh_run_close(r);
                return sh_error_set(err, SH_EFORMAT, 0, "%s is not of this run (%llu documents, not %u)", path,
                                    (unsigned long long)r->fidx.count, r->n);
            }
            r->fat = (const uint64_t *)(const void *)r->fidx.records;
            sh_run_path(path, sizeof path, dir, "fullsets.bin");
            if ((st = sh_recstream_open(&r->fsets, path, SH_MAGIC_SHINGLES, 8, err)) != SH_OK) { sh_run_close(r); return st; }
        }
    }
    if (need_sigs) {
        sh_run_path(path, sizeof path, dir, "sigs.bin");
        if ((st = sh_recfile_open(&r->sigs, path, SH_MAGIC_SIGS, 8 * r->sig_k, 1, err)) != SH_OK) {
            sh_run_close(r);
            if (st == SH_EIO) return sh_error_set(err, SH_EIO, 0, "%s is missing: this method needs min-hash signatures kept in phase 1", path);
            return st;
        }
        r->sig = (const uint64_t *)(const void *)r->sigs.records;
    }
    return SH_OK;
}

static sh_status run_file(sh_recfile *f, const char *dir, const char *name, const char magic[8], uint32_t size,
                          size_t *n, sh_error *err)
{
    char path[4096];
    sh_status s;
    sh_run_path(path, sizeof path, dir, name);
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

/* ---- documents as the estimator takes them --------------------------------- */

sh_status sh_run_full(const sh_run *r, uint32_t i, uint64_t *out, sh_error *err)
{
    const sh_docrec *d = &r->d[i];
    if (d->full_off != SH_FULL_AT_SOURCE) return sh_recstream_read(&r->full, d->full_off, d->full_n, out, err);
    if (r->mem && i < r->mem->n && r->mem->at[i] != SH_FULL_AT_SOURCE) {
        memcpy(out, r->mem->v + r->mem->at[i], (size_t)d->full_n * 8);
        return SH_OK;
    }
    if (!r->fat || r->fat[i] == SH_FULL_AT_SOURCE)
        return sh_error_set(err, SH_EINVAL, 0, "the full shingle set of document %u was not made again from its source "
                            "(sh_verify_sets makes those of the candidate pairs before phase 4)", i + 1);
    return sh_recstream_read(&r->fsets, r->fat[i], d->full_n, out, err);
}

const uint64_t *sh_run_values(const sh_run *r, uint32_t i, sh_sketch *h, int full, uint64_t *scratch, sh_error *err)
{
    const sh_docrec *d = &r->d[i];
    h->p = r->p;
    h->n_shingles = d->n_shingles;
    h->n_tokens = d->n_tokens;
    if (full) {
        h->p.kind = SH_SKETCH_FULL;
        h->p.s = 0;
        h->p.m = 0;
        h->p.floor = 0;
        h->n = d->full_n;
        /* the sets made again in memory are read where they are */
        if (d->full_off == SH_FULL_AT_SOURCE && r->mem && i < r->mem->n && r->mem->at[i] != SH_FULL_AT_SOURCE)
            return r->mem->v + r->mem->at[i];
        return sh_run_full(r, i, scratch, err) == SH_OK ? scratch : NULL;
    }
    if (r->p.kind == SH_SKETCH_CLASS) h->p.cls = sh_size_class(d->n_shingles);
    if (r->p.kind == SH_SKETCH_MOD) h->p.m = sh_mod_step(r->p.m, d->mod_steps);
    h->n = d->sketch_n;
    return r->v + d->sketch_off;
}

/* A sketch of document i as the estimator takes it, in caller-owned scratch;
 * the full set is read from shingles.bin (NULL, with err set, if that fails). */
sh_sketch *sh_run_view(const sh_run *r, uint32_t i, sh_sketch *scratch, int full, sh_error *err)
{
    const uint64_t *v = sh_run_values(r, i, scratch, full, scratch->v, err);
    if (!v) return NULL;
    if (v != scratch->v) memcpy(scratch->v, v, scratch->n * 8);
    return scratch;
}

/* Exact estimate of documents a and b from their full sets. */
sh_status sh_run_exact(const sh_run *r, uint32_t a, uint32_t b, sh_sketch *fa, sh_sketch *fb, sh_estimate *e, sh_error *err)
{
    if (!sh_run_view(r, a, fa, 1, err) || !sh_run_view(r, b, fb, 1, err)) return err ? err->code : SH_EIO;
    return sh_sketch_estimate(fa, fb, e, err);
}

size_t sh_run_max_len(const sh_run *r, int full)
{
    size_t m = 1;
    uint32_t i;
    for (i = 0; i < r->n; i++) {
        size_t k = full ? r->d[i].full_n : r->d[i].sketch_n;
        if (k > m) m = k;
    }
    return m;
}

/* ---- scores of chosen pairs (shingle dedup) ---------------------------------- */

sh_status sh_pair_estimates(const char *dir, const uint32_t *a, const uint32_t *b, size_t n, sh_estimate *est,
                            sh_estimate *exact, sh_error *err)
{
    sh_run r;
    sh_sketch *sa = NULL, *sb = NULL, *fa = NULL, *fb = NULL;
    sh_status s;
    size_t i;
    char path[4096];
    int full = 0;
    if (exact) {
        FILE *f;
        sh_run_path(path, sizeof path, dir, "shingles.bin");
        f = fopen(path, "rb");
        full = f != NULL;
        if (f) fclose(f);
    }
    if ((s = sh_run_open(&r, dir, 1, full, 0, err)) != SH_OK) return s;
    sa = (sh_sketch *)malloc(sizeof(sh_sketch) + sh_run_max_len(&r, 0) * 8);
    sb = (sh_sketch *)malloc(sizeof(sh_sketch) + sh_run_max_len(&r, 0) * 8);
    if (full) {
        fa = (sh_sketch *)malloc(sizeof(sh_sketch) + sh_run_max_len(&r, 1) * 8);
        fb = (sh_sketch *)malloc(sizeof(sh_sketch) + sh_run_max_len(&r, 1) * 8);
    }
    if (!sa || !sb || (full && (!fa || !fb))) { s = sh_error_set(err, SH_ENOMEM, 0, "out of memory"); goto done; }
    for (i = 0; i < n; i++) {
        if (a[i] >= r.n || b[i] >= r.n) {
            s = sh_error_set(err, SH_EINVAL, 0, "document %u is not in %s (it has %u documents)", (a[i] >= r.n ? a[i] : b[i]) + 1,
                             dir, r.n);
            goto done;
        }
        if (r.d[a[i]].status || r.d[b[i]].status) {
            memset(&est[i], 0, sizeof est[i]);
            if (exact) { memset(&exact[i], 0, sizeof exact[i]); exact[i].resemblance = -1; }
            continue;
        }
        if ((s = sh_sketch_estimate(sh_run_view(&r, a[i], sa, 0, NULL), sh_run_view(&r, b[i], sb, 0, NULL), &est[i], err)) != SH_OK)
            goto done;
        if (exact) {
            if (full) {
                if ((s = sh_run_exact(&r, a[i], b[i], fa, fb, &exact[i], err)) != SH_OK) goto done;
            } else {
                memset(&exact[i], 0, sizeof exact[i]);
                exact[i].resemblance = -1;
            }
        }
    }
    s = SH_OK;
done:
    free(sa);
    free(sb);
    free(fa);
    free(fb);
    sh_run_close(&r);
    return s;
}
