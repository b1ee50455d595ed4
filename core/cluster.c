/* The phases of "Syntactic Clustering of the Web" over files (cluster.h):
 * phase 1's writer, identical documents, phases 2 and 3. Phase 4 is in
 * decide.c, the alternatives to phases 2-4 in alternatives.c; a run's files
 * are read back by run.c. */
#include "cluster.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "byteorder.h"
#include "clock.h"
#include "extsort.h"
#include "pairs.h"
#include "run.h"
#include "unionfind.h"

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
    sh_run_path(path, sizeof path, dir, "docs.bin");
    if ((st = sh_recwriter_open(&p->docs, path, SH_MAGIC_DOCS, sizeof(sh_docrec), meta, SH_DOCS_META_SIZE, err)) != SH_OK) return st;
    sh_run_path(path, sizeof path, dir, "sketches.bin");
    if ((st = sh_recwriter_open(&p->sketches, path, SH_MAGIC_SKETCHES, 8, NULL, 0, err)) != SH_OK) goto fail;
    if (p->want_full) {
        sh_run_path(path, sizeof path, dir, "shingles.bin");
        if ((st = sh_recwriter_open(&p->full, path, SH_MAGIC_SHINGLES, 8, NULL, 0, err)) != SH_OK) goto fail;
    }
    if (p->sig_k) {
        sh_run_path(path, sizeof path, dir, "sigs.bin");
        if ((st = sh_recwriter_open(&p->sigs, path, SH_MAGIC_SIGS, 8 * p->sig_k, NULL, 0, err)) != SH_OK) goto fail;
    }
    return SH_OK;
fail:
    sh_p1_abort(p);
    return st;
}

static sh_status p1_name(sh_p1 *p, const char *name, uint64_t *at, sh_error *err)
{
    size_t k = strlen(name) + 1;
    sh_status st;
    char *c;
    if (p->last_name && strcmp(p->last_name, name) == 0) { *at = p->last_name_at; return SH_OK; }
    if ((st = sh_recwriter_append(&p->names, name, k, err)) != SH_OK) return st;
    if (!(c = (char *)malloc(k))) return sh_error_set(err, SH_ENOMEM, 0, "out of memory");
    memcpy(c, name, k);
    free(p->last_name);
    p->last_name = c;
    p->last_name_at = *at = p->names_size;
    p->names_size += k;
    return SH_OK;
}

sh_status sh_p1_sources(sh_p1 *p, const char *dir, const char *cwd, sh_error *err)
{
    char path[4096];
    uint64_t at;
    sh_status st;
    if (!p->want_full) return SH_OK;
    sh_run_path(path, sizeof path, dir, "sources.bin");
    if ((st = sh_recwriter_open(&p->src, path, SH_MAGIC_SOURCES, sizeof(sh_srcrec), NULL, 0, err)) != SH_OK) return st;
    sh_run_path(path, sizeof path, dir, "srcnames.bin");
    if ((st = sh_recwriter_open(&p->names, path, SH_MAGIC_SRCNAMES, 1, NULL, 0, err)) != SH_OK) return st;
    p->sources = 1;
    return p1_name(p, cwd, &at, err);
}

sh_status sh_p1_add(sh_p1 *p, const sh_doc_out *outs, size_t n, sh_error *err)
{
    return sh_p1_add_src(p, outs, NULL, n, err);
}

sh_status sh_p1_add_src(sh_p1 *p, const sh_doc_out *outs, const sh_doc_src *srcs, size_t n, sh_error *err)
{
    size_t i;
    sh_status st;
    uint64_t *zeros = NULL;
    for (i = 0; i < n; i++) {
        const sh_doc_out *o = &outs[i];
        const sh_doc_src *src = srcs ? &srcs[i] : NULL;
        int again = p->sources && src && src->kind != SH_SRC_STORED && src->name;
        sh_docrec r;
        memset(&r, 0, sizeof r);
        if (p->sources) {
            sh_srcrec sr;
            memset(&sr, 0, sizeof sr);
            if (again) {
                sr.kind = (uint8_t)src->kind;
                sr.html = (uint8_t)(src->html != 0);
                sr.off = src->off;
                sr.len = src->len;
                if ((st = p1_name(p, src->name, &sr.name, err)) != SH_OK) return st;
            }
            if ((st = sh_recwriter_append(&p->src, &sr, 1, err)) != SH_OK) return st;
        }
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
                r.full_n = (uint32_t)o->full->n;
                if (again) {
                    /* made again from its source for phase 4 when it is a candidate */
                    r.full_off = SH_FULL_AT_SOURCE;
                    goto full_done;
                }
                r.full_off = p->n_full;
                r.full_n = (uint32_t)o->full->n;
                if ((st = sh_recwriter_append(&p->full, o->full->v, o->full->n, err)) != SH_OK) return st;
                p->n_full += o->full->n;
            }
        full_done:
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
        return sh_error_set(err, SH_EINVAL, 0, "more than 4294967294 documents in one sh_run; split the collection");
    return SH_OK;
}

sh_status sh_p1_commit(sh_p1 *p, sh_error *err)
{
    sh_status st;
    /* docs.bin last: its presence means phase 1 finished */
    if ((st = sh_recwriter_commit(&p->sketches, err)) != SH_OK) goto fail;
    if (p->want_full && (st = sh_recwriter_commit(&p->full, err)) != SH_OK) goto fail;
    if (p->sig_k && (st = sh_recwriter_commit(&p->sigs, err)) != SH_OK) goto fail;
    if (p->sources && ((st = sh_recwriter_commit(&p->src, err)) != SH_OK || (st = sh_recwriter_commit(&p->names, err)) != SH_OK))
        goto fail;
    if ((st = sh_recwriter_commit(&p->docs, err)) != SH_OK) goto fail;
    free(p->last_name);
    p->last_name = NULL;
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
    sh_recwriter_abort(&p->src);
    sh_recwriter_abort(&p->names);
    free(p->last_name);
    p->last_name = NULL;
}

/* ---- identical documents -------------------------------------------------- */

typedef struct fpid { unsigned char key[8]; uint32_t id; } fpid;


/* Section "Identical documents": one fingerprint per kind of equivalence;
 * documents with equal fingerprints are joined, and the smallest id of each
 * group stays as the representative through phases 2-4. */
sh_status sh_dedupe(const char *dir, sh_dedupe_stats *st, sh_error *err)
{
    sh_run r;
    sh_status s;
    sh_unionfind *uf = NULL;
    fpid *a = NULL, *aux = NULL;
    uint32_t *label = NULL;
    sh_docrec *out = NULL;
    uint32_t i, n;
    int kind;
    char path[4096];
    memset(st, 0, sizeof *st);
    if ((s = sh_run_open(&r, dir, 0, 0, 0, err)) != SH_OK) return s; /* dedupe reads fingerprints only */
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
        sh_run_path(path, sizeof path, dir, "docs.bin");
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
    sh_run_close(&r);
    return s;
}

/* ---- phases 2 and 3 ------------------------------------------------------- */

/* Phase 3 over a sorter of <key, doc> records (pairs.h), its counters into st. */
sh_status sh_run_form(sh_extsort *keys, sh_extsort *pairs, uint32_t max_df, sh_unionfind *uf, sh_pairs_stats *st,
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

void sh_run_add_disk(sh_pairs_stats *st, sh_extsort *s)
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
    sh_run r;
    sh_status s;
    sh_extsort *keys = NULL, *pairs = NULL;
    unsigned char *buf = NULL;
    const char *tmp = cfg->temp_dir ? cfg->temp_dir : dir;
    char path[4096];
    size_t nb = 0;
    uint32_t i;
    double t0;
    memset(st, 0, sizeof *st);
    if ((s = sh_run_open(&r, dir, 1, 0, 0, err)) != SH_OK) return s;
    t0 = sh_now();
    buf = (unsigned char *)malloc((size_t)SH_RUN_CHUNK * 12);
    if (!buf) { s = sh_error_set(err, SH_ENOMEM, 0, "out of memory"); goto done; }
    if ((s = sh_extsort_open(&keys, 12, 8, cfg->memory / 2, tmp, NULL, err)) != SH_OK) goto done;
    for (i = 0; i < r.n; i++) {
        const sh_docrec *d = &r.d[i];
        uint32_t j;
        if (cfg->progress && i % 262144 == 0) cfg->progress(cfg->progress_ud, "shingle merging", i, r.n);
        if (d->status != SH_OK || d->rep != i) continue;
        for (j = 0; j < d->sketch_n; j++) {
            sh_key_record(buf + 12 * nb, 8, r.v[d->sketch_off + j], i);
            if (++nb == SH_RUN_CHUNK) {
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
    sh_run_add_disk(st, keys);
    st->t_merge = sh_now() - t0;
    t0 = sh_now();
    sh_run_path(path, sizeof path, dir, "pairs.bin");
    if (sh_form_pairs_memory_need(st->records, r.n) <= cfg->memory / 2) {
        /* phase 3 in memory (pairs.h): the same pairs.bin without sorting the pair records */
        sh_form_config c;
        sh_form_stats fs;
        double t_count = 0;
        memset(&c, 0, sizeof c);
        memset(&fs, 0, sizeof fs);
        c.key_size = 8;
        c.max_df = cfg->max_df;
        c.progress = cfg->progress;
        c.progress_ud = cfg->progress_ud;
        c.progress_step = "pair formation";
        c.progress_total = st->records;
        c.threads = cfg->threads;
        c.sync_later = cfg->sync_later;
        s = sh_form_pairs_memory(keys, &c, r.n, path, &fs, &st->pairs, &t_count, err);
        st->shingles += fs.keys;
        st->common_dropped += fs.dropped;
        st->pair_records += fs.pair_records;
        st->t_form = sh_now() - t0 - t_count;
        st->t_pairmerge = t_count;
        goto done;
    }
    if ((s = sh_pairsort_open(&pairs, cfg->memory / 2, tmp, err)) != SH_OK) goto done;
    if ((s = sh_run_form(keys, pairs, cfg->max_df, NULL, st, cfg->progress, cfg->progress_ud, err)) != SH_OK) goto done;
    sh_extsort_free(keys);
    keys = NULL;
    st->t_form = sh_now() - t0;
    t0 = sh_now();
    if ((s = sh_extsort_finish(pairs, err)) != SH_OK) goto done;
    sh_run_add_disk(st, pairs);
    s = sh_pairs_write(path, pairs, cfg->sync_later ? 2 : 0, &st->pairs, err);
    st->t_pairmerge = sh_now() - t0;
done:
    sh_extsort_free(keys);
    sh_extsort_free(pairs);
    free(buf);
    sh_run_close(&r);
    return s;
}

