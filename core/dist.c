/* The clustering phases across ranks: see dist.h. */
#include "dist.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "byteorder.h"
#include "clock.h"
#include "extsort.h"
#include "pairs.h"
#include "recfile.h"
#include "run.h"
#include "unionfind.h"

#define CHUNK 65536

static sh_status nomem(sh_error *err)
{
    return sh_error_set(err, SH_ENOMEM, 0, "out of memory");
}

static sh_status io_fail(sh_error *err, const char *what, const char *path)
{
    int e = errno;
    sh_error_set(err, SH_EIO, 0, "cannot %s %s: %s", what, path, strerror(e));
    if (err) err->sys_errno = e;
    return SH_EIO;
}


static char *dupstr(const char *s)
{
    size_t n = strlen(s) + 1;
    char *o = (char *)malloc(n);
    if (o) memcpy(o, s, n);
    return o;
}

/* ---- small growable arrays -------------------------------------------------- */

typedef struct vec { unsigned char *p; size_t len, cap; } vec;

static int vec_add(vec *v, const void *data, size_t n)
{
    if (v->len + n > v->cap) {
        size_t cap = v->cap ? v->cap : 4096;
        unsigned char *q;
        while (cap < v->len + n) cap *= 2;
        if (!(q = (unsigned char *)realloc(v->p, cap))) return 0;
        v->p = q;
        v->cap = cap;
    }
    memcpy(v->p + v->len, data, n);
    v->len += n;
    return 1;
}

static void vec_free(vec *v)
{
    free(v->p);
    memset(v, 0, sizeof *v);
}

static sh_status vec_sink(void *ud, int src, const void *data, size_t n, sh_error *err)
{
    (void)src;
    return vec_add((vec *)ud, data, n) ? SH_OK : nomem(err);
}

/* Sort n ids ascending and drop repeats; the new count. */
static size_t sort_unique(uint32_t *v, size_t n)
{
    unsigned char *k, *aux;
    size_t i, m = 0;
    if (n < 2) return n;
    k = (unsigned char *)malloc(n * 4);
    aux = (unsigned char *)malloc(n * 4);
    if (!k || !aux) { /* fall back to an insertion-free path: qsort-like is not needed for correctness */
        free(k); free(aux);
        return (size_t)-1;
    }
    for (i = 0; i < n; i++) sh_store_be32(k + 4 * i, v[i]);
    sh_radix_sort(k, aux, n, 4, 4);
    for (i = 0; i < n; i++) {
        uint32_t x = sh_load_be32(k + 4 * i);
        if (m == 0 || v[m - 1] != x) v[m++] = x;
    }
    free(k);
    free(aux);
    return m;
}

/* Index of id in the sorted v[0..n), or n. */
static size_t find_id(const uint32_t *v, size_t n, uint32_t id)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (v[mid] < id) lo = mid + 1;
        else hi = mid;
    }
    return lo < n && v[lo] == id ? lo : n;
}

/* ---- a spool: bytes in memory, moved to a temporary file past a limit, read
 * back mapped (so a large reply is paged by the kernel, not held) ---------- */

typedef struct spool {
    vec mem;
    size_t limit;
    FILE *f;
    char path[4200];
    void *map;
    size_t size;
} spool;

static void spool_init(spool *s, const char *dir, size_t limit)
{
    memset(s, 0, sizeof *s);
    s->limit = limit;
    snprintf(s->path, sizeof s->path, "%s/spool-XXXXXX", dir);
}

static sh_status spool_add(spool *s, const void *data, size_t n, sh_error *err)
{
    if (!s->f && s->mem.len + n > s->limit) {
        int fd = mkstemp(s->path);
        if (fd < 0) return io_fail(err, "create", s->path);
        if (!(s->f = fdopen(fd, "wb"))) { close(fd); unlink(s->path); return io_fail(err, "open", s->path); }
        if (s->mem.len && fwrite(s->mem.p, 1, s->mem.len, s->f) != s->mem.len) return io_fail(err, "write", s->path);
        vec_free(&s->mem);
    }
    if (s->f) return fwrite(data, 1, n, s->f) == n ? SH_OK : io_fail(err, "write", s->path);
    return vec_add(&s->mem, data, n) ? SH_OK : nomem(err);
}

static size_t spool_len(const spool *s)
{
    return s->f ? (size_t)ftello(s->f) : s->mem.len;
}

/* The whole spool, readable until spool_free. */
static sh_status spool_data(spool *s, const unsigned char **data, sh_error *err)
{
    if (!s->f) { *data = s->mem.p; return SH_OK; }
    if (fflush(s->f) != 0) return io_fail(err, "write", s->path);
    s->size = spool_len(s);
    if (s->size == 0) { *data = NULL; return SH_OK; }
    s->map = mmap(NULL, s->size, PROT_READ, MAP_SHARED, fileno(s->f), 0);
    if (s->map == MAP_FAILED) { s->map = NULL; return io_fail(err, "map", s->path); }
    *data = (const unsigned char *)s->map;
    return SH_OK;
}

static void spool_free(spool *s)
{
    if (s->map) munmap(s->map, s->size);
    if (s->f) { fclose(s->f); unlink(s->path); }
    vec_free(&s->mem);
    s->f = NULL;
    s->map = NULL;
}

/* ---- this rank's part of the run: its phase 1 files, read as run.h reads a run ---- */

/* Write a docs.bin of n records with the meta of l's (the run's parameters),
 * a working file of this rank (not synced). */
static sh_status write_docs(const char *path, const sh_run *l, const sh_docrec *recs, size_t n, sh_error *err)
{
    sh_recwriter w;
    sh_status s = sh_recwriter_open(&w, path, SH_MAGIC_DOCS, sizeof(sh_docrec), l->docs.meta, SH_DOCS_META_SIZE, err);
    if (s != SH_OK) return s;
    w.scratch = 1;
    if ((s = sh_recwriter_append(&w, recs, n, err)) != SH_OK) { sh_recwriter_abort(&w); return s; }
    return sh_recwriter_commit(&w, err);
}

static size_t sorter_budget(const sh_dist *d, int parts)
{
    size_t m = d->memory / (size_t)parts;
    return m < SH_EXTSORT_MIN_BUDGET ? SH_EXTSORT_MIN_BUDGET : m;
}

static void progress(const sh_dist *d, const char *step, uint64_t done, uint64_t total)
{
    if (d->progress) d->progress(d->progress_ud, step, done, total);
}

/* Steps: what each exchange of a phase moved, for the phase table. */
typedef struct step_mark { double t; uint64_t sent, received; } step_mark;

static step_mark step_begin(const sh_dist *d)
{
    step_mark m;
    m.t = sh_now();
    m.sent = d->comm->sent;
    m.received = d->comm->received;
    return m;
}

static void step_end(sh_dist *d, const char *name, step_mark m)
{
    sh_dist_step *s;
    if (d->n_steps == SH_DIST_MAX_STEPS) {
        memmove(d->steps, d->steps + 1, (SH_DIST_MAX_STEPS - 1) * sizeof *d->steps);
        d->n_steps--;
    }
    s = &d->steps[d->n_steps++];
    s->name = name;
    s->seconds = sh_now() - m.t;
    s->sent = d->comm->sent - m.sent;
    s->received = d->comm->received - m.received;
}

/* ---- open ------------------------------------------------------------------ */

sh_status sh_dist_open(sh_dist *d, sh_comm *c, const char *dir, const sh_dist_config *cfg, sh_error *err)
{
    const size_t p = (size_t)c->size;
    uint64_t *all = NULL, total = 0, crcs[2];
    sh_run l;
    sh_status s;
    size_t r;
    uint32_t i;
    uint64_t values = 0, full = 0;
    memset(d, 0, sizeof *d);
    d->comm = c;
    d->memory = cfg->memory;
    d->progress = cfg->progress;
    d->progress_ud = cfg->progress_ud;
    d->dir = dupstr(dir);
    d->temp = dupstr(cfg->temp_dir ? cfg->temp_dir : dir);
    d->firsts = (uint32_t *)calloc(p + 1, sizeof *d->firsts);
    d->values_at = (uint64_t *)calloc(p + 1, sizeof *d->values_at);
    d->full_at = (uint64_t *)calloc(p + 1, sizeof *d->full_at);
    all = (uint64_t *)calloc(p, sizeof *all);
    if (!d->dir || !d->temp || !d->firsts || !d->values_at || !d->full_at || !all) {
        free(all);
        sh_dist_close(d);
        return nomem(err);
    }
    /* every rank opens its own part; a failure here still joins the
     * collectives below (with a count that says so), so no rank waits */
    s = sh_run_open(&l, dir, 0, 0, 0, err);
    if (s == SH_OK) {
        d->n = l.n;
        d->sig_k = l.sig_k;
        d->meta_crc = (uint32_t)crc32(0L, l.docs.meta, SH_DOCS_META_SIZE);
        for (i = 0; i < l.n; i++)
            if (l.d[i].status == SH_OK) { values += l.d[i].sketch_n; full += l.d[i].full_n; }
        sh_run_close(&l);
    }
    {
        uint64_t bad = s != SH_OK;
        sh_status t = sh_comm_allreduce(c, &bad, 1, SH_REDUCE_MAX, err);
        if (s == SH_OK && t != SH_OK) s = t;
        if (s == SH_OK && bad) s = sh_error_set(err, SH_EIO, 0, "another rank could not open its part of the run");
        if (s != SH_OK) goto fail;
    }
    if ((s = sh_comm_allgather(c, d->n, all, err)) != SH_OK) goto fail;
    for (r = 0; r < p; r++) { d->firsts[r] = (uint32_t)total; total += all[r]; }
    if (total >= UINT32_MAX) {
        s = sh_error_set(err, SH_EINVAL, 0, "%llu documents in all ranks; a run holds at most 4294967294: split the collection",
                         (unsigned long long)total);
        goto fail;
    }
    d->firsts[p] = (uint32_t)total;
    d->first = d->firsts[c->rank];
    if ((s = sh_comm_allgather(c, values, all, err)) != SH_OK) goto fail;
    for (r = 0; r < p; r++) d->values_at[r + 1] = d->values_at[r] + all[r];
    if ((s = sh_comm_allgather(c, full, all, err)) != SH_OK) goto fail;
    for (r = 0; r < p; r++) d->full_at[r + 1] = d->full_at[r] + all[r];
    /* the ranks must have sketched alike */
    crcs[0] = d->meta_crc;
    crcs[1] = d->meta_crc;
    if ((s = sh_comm_allreduce(c, crcs, 1, SH_REDUCE_MIN, err)) != SH_OK || (s = sh_comm_allreduce(c, crcs + 1, 1, SH_REDUCE_MAX, err)) != SH_OK)
        goto fail;
    if (crcs[0] != crcs[1]) {
        s = sh_error_set(err, SH_EMISMATCH, 0, "the ranks sketched with different parameters (docs.bin headers differ): "
                         "every rank must run the same command");
        goto fail;
    }
    free(all);
    return SH_OK;
fail:
    free(all);
    sh_dist_close(d);
    return s;
}

void sh_dist_close(sh_dist *d)
{
    free(d->joins);
    free(d->dir);
    free(d->temp);
    free(d->firsts);
    free(d->values_at);
    free(d->full_at);
    memset(d, 0, sizeof *d);
}

int sh_dist_owner(const sh_dist *d, uint32_t id)
{
    int lo = 0, hi = d->comm->size - 1;
    while (lo < hi) {
        int mid = (lo + hi + 1) / 2;
        if (d->firsts[mid] <= id) lo = mid;
        else hi = mid - 1;
    }
    return lo;
}

/* ---- asking other ranks about their documents --------------------------------- */

/* The owner's side: append the answer about its document id (global) to out:
 * an 8-byte header <u32 id, u32 units> and `units` 8-byte units. */
typedef sh_status (*answer_fn)(void *ud, uint32_t id, spool *out, sh_error *err);
/* The asker's side: the whole answer about id, units of 8 bytes. */
typedef sh_status (*answered_fn)(void *ud, uint32_t id, const unsigned char *units, size_t n, sh_error *err);

typedef struct asks { vec *by_src; } asks;

static sh_status ask_sink(void *ud, int src, const void *data, size_t n, sh_error *err)
{
    asks *a = (asks *)ud;
    return vec_add(&a->by_src[src], data, n) ? SH_OK : nomem(err);
}

typedef struct parse {
    unsigned char *buf;     /* the answer being assembled, per source */
    size_t have, want, cap; /* bytes */
    uint32_t id;
    int in_header;
} parse;

typedef struct replies {
    parse *ps;
    answered_fn answered;
    void *ud;
} replies;

static sh_status reply_sink(void *ud, int src, const void *data, size_t n, sh_error *err)
{
    replies *r = (replies *)ud;
    parse *p = &r->ps[src];
    const unsigned char *q = (const unsigned char *)data;
    size_t i = 0;
    sh_status s;
    while (i < n) {
        if (p->in_header) {
            /* chunks are whole 8-byte units, so a header is never split */
            p->id = sh_load_le32(q + i);
            p->want = (size_t)sh_load_le32(q + i + 4) * 8;
            p->have = 0;
            i += 8;
            p->in_header = 0;
            if (p->want > p->cap) {
                unsigned char *b = (unsigned char *)realloc(p->buf, p->want);
                if (!b) return nomem(err);
                p->buf = b;
                p->cap = p->want;
            }
        } else {
            size_t k = p->want - p->have;
            if (k > n - i) k = n - i;
            memcpy(p->buf + p->have, q + i, k);
            p->have += k;
            i += k;
        }
        if (!p->in_header && p->have == p->want) {
            if ((s = r->answered(r->ud, p->id, p->buf, p->want / 8, err)) != SH_OK) return s;
            p->in_header = 1;
        }
    }
    return SH_OK;
}

/* Ask the owners of ids[0..n) (ascending, none of them this rank's) and get
 * each answer through answered; answer this rank's share of everyone's
 * questions. Collective. */
static sh_status ask(sh_dist *d, const uint32_t *ids, size_t n, answer_fn answer, void *aud, answered_fn answered, void *rud,
                     sh_error *err)
{
    sh_comm *c = d->comm;
    const size_t p = (size_t)c->size;
    uint64_t *counts = (uint64_t *)calloc(p, sizeof *counts);
    vec *by_src = (vec *)calloc(p, sizeof *by_src);
    parse *ps = (parse *)calloc(p, sizeof *ps);
    unsigned char *q = (unsigned char *)malloc(n * 4 + 4);
    const unsigned char *data = NULL;
    spool out;
    asks a;
    replies r;
    sh_status s = SH_OK;
    size_t i, src;
    spool_init(&out, d->temp, d->memory / 4 + 1);
    if (!counts || !by_src || !ps || !q) { s = nomem(err); goto done; }
    for (i = 0; i < n; i++) {
        sh_store_le32(q + 4 * i, ids[i]);
        counts[sh_dist_owner(d, ids[i])] += 4;
    }
    a.by_src = by_src;
    if ((s = sh_comm_exchange(c, q, counts, 4, ask_sink, &a, err)) != SH_OK) goto done;
    /* answers, grouped by the rank that asked */
    for (src = 0; src < p; src++) {
        size_t before = spool_len(&out);
        for (i = 0; i < by_src[src].len; i += 4) {
            uint32_t id = sh_load_le32(by_src[src].p + i);
            if (id < d->first || id - d->first >= d->n) {
                s = sh_error_set(err, SH_EINVAL, 0, "rank %zu asked rank %d about document %u, which it does not hold", src, c->rank, id);
                goto done;
            }
            if ((s = answer(aud, id, &out, err)) != SH_OK) goto done;
        }
        counts[src] = spool_len(&out) - before;
    }
    if ((s = spool_data(&out, &data, err)) != SH_OK) goto done;
    for (i = 0; i < p; i++) ps[i].in_header = 1;
    r.ps = ps;
    r.answered = answered;
    r.ud = rud;
    s = sh_comm_exchange(c, data, counts, 8, reply_sink, &r, err);
done:
    spool_free(&out);
    if (by_src) for (i = 0; i < p; i++) vec_free(&by_src[i]);
    if (ps) for (i = 0; i < p; i++) free(ps[i].buf);
    free(by_src);
    free(ps);
    free(counts);
    free(q);
    return s;
}

static sh_status answer_header(spool *out, uint32_t id, uint32_t units, sh_error *err)
{
    unsigned char h[8];
    sh_store_le32(h, id);
    sh_store_le32(h + 4, units);
    return spool_add(out, h, 8, err);
}

/* ---- identical documents ------------------------------------------------------ */

/* <kind u8, fingerprint BE 8, id BE 4, 3 zero bytes>: sorted by kind,
 * fingerprint, then id, so every group lists its ids ascending */
#define DD_REC 16
#define DD_KEY 13

typedef struct dd_prod { const sh_run *l; uint32_t first, i; int kind; } dd_prod;

static sh_status dd_produce(void *ud, void *buf, size_t max, size_t *n, sh_error *err)
{
    dd_prod *p = (dd_prod *)ud;
    unsigned char *o = (unsigned char *)buf;
    size_t k = 0;
    (void)err;
    while (k + DD_REC <= max && p->i < p->l->n) {
        const sh_docrec *d = &p->l->d[p->i];
        uint32_t i = p->i;
        int kind = p->kind;
        if (++p->kind == 3) { p->kind = 0; p->i++; }
        if (d->status != SH_OK) continue;
        if (kind == 2 && d->sketch_n == 0) continue; /* no selected shingles: no evidence */
        memset(o + k, 0, DD_REC);
        o[k] = (unsigned char)kind;
        sh_store_be64(o + k + 1, kind == 0 ? d->raw_fp : kind == 1 ? d->canon_fp : d->set_fp);
        sh_store_be32(o + k + 9, p->first + i);
        k += DD_REC;
    }
    *n = k;
    return SH_OK;
}

static int dd_owner(void *ud, const unsigned char *rec)
{
    return sh_key64_owner(sh_load_be64(rec + 1), ((const sh_comm *)ud)->size);
}

/* Received records into a sorter. */
typedef struct to_sorter { sh_extsort *s; size_t record_size; } to_sorter;

static sh_status sort_sink(void *ud, int src, const void *data, size_t n, sh_error *err)
{
    to_sorter *t = (to_sorter *)ud;
    (void)src;
    return sh_extsort_add(t->s, data, n / t->record_size, err);
}

/* A representative's fingerprints, for the relation of its copies */
typedef struct fp_ctx { const sh_run *l; uint32_t first; const uint32_t *ids; size_t n; uint64_t *raw, *canon; } fp_ctx;

static sh_status answer_fps(void *ud, uint32_t id, spool *out, sh_error *err)
{
    const fp_ctx *f = (const fp_ctx *)ud;
    const sh_docrec *r = &f->l->d[id - f->first];
    unsigned char v[16];
    sh_status s;
    sh_store_le64(v, r->raw_fp);
    sh_store_le64(v + 8, r->canon_fp);
    if ((s = answer_header(out, id, 2, err)) != SH_OK) return s;
    return spool_add(out, v, 16, err);
}

static sh_status got_fps(void *ud, uint32_t id, const unsigned char *u, size_t n, sh_error *err)
{
    fp_ctx *f = (fp_ctx *)ud;
    size_t j = find_id(f->ids, f->n, id);
    if (j == f->n || n != 2) return sh_error_set(err, SH_EFORMAT, 0, "an answer about document %u that was not asked for", id);
    f->raw[j] = sh_load_le64(u);
    f->canon[j] = sh_load_le64(u + 8);
    return SH_OK;
}

/* Root: the groups' links over only the documents they name (a union-find of
 * those, not of every document), each one's representative, the smallest id
 * of its group. Out: <id, rep> for every id whose rep is another, ascending. */
static sh_status join_groups(const uint32_t *links, size_t n_links, vec *out, sh_error *err)
{
    uint32_t *ids = (uint32_t *)malloc((2 * n_links + 1) * sizeof *ids), *label = NULL;
    sh_unionfind *uf = NULL;
    size_t m, i;
    sh_status s = SH_OK;
    if (!ids) return nomem(err);
    memcpy(ids, links, 2 * n_links * sizeof *ids);
    m = sort_unique(ids, 2 * n_links);
    if (m == (size_t)-1) { free(ids); return nomem(err); }
    if (m > UINT32_MAX - 1 || (s = sh_uf_new(&uf, (uint32_t)m, err)) != SH_OK) { free(ids); return s != SH_OK ? s : nomem(err); }
    for (i = 0; i < n_links; i++)
        sh_uf_union(uf, (uint32_t)find_id(ids, m, links[2 * i]), (uint32_t)find_id(ids, m, links[2 * i + 1]));
    label = (uint32_t *)malloc((m + 1) * sizeof *label);
    if (!label) { s = nomem(err); goto done; }
    sh_uf_labels(uf, label, SH_UF_LABEL_MIN);  /* the smallest index is the smallest id: ids are sorted */
    for (i = 0; i < m; i++) {
        unsigned char rec[8];
        if (label[i] == i) continue;
        sh_store_le32(rec, ids[i]);
        sh_store_le32(rec + 4, ids[label[i]]);
        if (!vec_add(out, rec, 8)) { s = nomem(err); goto done; }
    }
done:
    sh_uf_free(uf);
    free(label);
    free(ids);
    return s;
}

typedef struct rep_ctx { uint32_t first, n, *rep; } rep_ctx;

static sh_status rep_sink(void *ud, int src, const void *data, size_t n, sh_error *err)
{
    rep_ctx *r = (rep_ctx *)ud;
    const unsigned char *q = (const unsigned char *)data;
    size_t i;
    (void)src;
    for (i = 0; i < n; i += 8) {
        uint32_t id = sh_load_le32(q + i), rep = sh_load_le32(q + i + 4);
        if (id < r->first || id - r->first >= r->n || rep > id)
            return sh_error_set(err, SH_EFORMAT, 0, "a representative %u for document %u, which is not this rank's", rep, id);
        r->rep[id - r->first] = rep;
    }
    return SH_OK;
}

sh_status sh_dist_dedupe(sh_dist *d, sh_dedupe_stats *st, sh_error *err)
{
    sh_comm *c = d->comm;
    const size_t p = (size_t)c->size;
    sh_run l;
    sh_extsort *sorter = NULL;
    to_sorter ts;
    dd_prod prod;
    vec links = { 0, 0, 0 }, all = { 0, 0, 0 }, reps = { 0, 0, 0 };
    uint32_t *rep = NULL, *want = NULL;
    uint64_t *counts = NULL, *raw = NULL, *canon = NULL, sums[6];
    sh_docrec *out = NULL;
    unsigned char *buf = NULL;
    size_t nw = 0, i;
    char path[4096];
    step_mark mark;
    sh_status s;
    memset(st, 0, sizeof *st);
    if ((s = sh_run_open(&l, d->dir, 0, 0, 0, err)) != SH_OK) return s;
    rep = (uint32_t *)malloc(((size_t)l.n + 1) * sizeof *rep);
    counts = (uint64_t *)calloc(p, sizeof *counts);
    buf = (unsigned char *)malloc((size_t)CHUNK * DD_REC);
    if (!rep || !counts || !buf) { s = nomem(err); goto done; }
    for (i = 0; i < l.n; i++) rep[i] = d->first + (uint32_t)i;
    /* equal fingerprints meet at the owner of their range */
    if ((s = sh_extsort_open(&sorter, DD_REC, DD_KEY, sorter_budget(d, 1), d->temp, NULL, err)) != SH_OK) goto done;
    prod.l = &l; prod.first = d->first; prod.i = 0; prod.kind = 0;
    ts.s = sorter; ts.record_size = DD_REC;
    mark = step_begin(d);
    if ((s = sh_comm_shuffle(c, DD_REC, dd_produce, &prod, dd_owner, c, sort_sink, &ts, err)) != SH_OK) goto done;
    step_end(d, "fingerprints", mark);
    if ((s = sh_extsort_finish(sorter, err)) != SH_OK) goto done;
    {
        unsigned char last[DD_KEY];
        uint32_t head = 0;
        int have = 0;
        size_t n, k;
        for (;;) {
            if ((s = sh_extsort_read(sorter, buf, CHUNK, &n, err)) != SH_OK) goto done;
            if (n == 0) break;
            for (k = 0; k < n; k++) {
                const unsigned char *r = buf + k * DD_REC;
                uint32_t id = sh_load_be32(r + 9);
                if (!have || memcmp(r, last, 9) != 0) {
                    memcpy(last, r, 9);
                    have = 1;
                    head = id;     /* the smallest id of the group */
                } else if (id != head) {
                    unsigned char e[8];
                    sh_store_le32(e, head);
                    sh_store_le32(e + 4, id);
                    if (!vec_add(&links, e, 8)) { s = nomem(err); goto done; }
                }
            }
        }
    }
    sh_extsort_free(sorter);
    sorter = NULL;
    /* the groups joined at rank 0, over the documents that have a copy only */
    {
        sh_buffer_source b;
        b.data = links.p; b.size = links.len; b.pos = 0;
        mark = step_begin(d);
        if ((s = sh_comm_gather(c, 0, 8, sh_buffer_produce, &b, vec_sink, &all, err)) != SH_OK) goto done;
    }
    if (c->rank == 0) {
        uint32_t *pairs = (uint32_t *)malloc(all.len + 8);
        if (!pairs) { s = nomem(err); goto done; }
        for (i = 0; i < all.len / 4; i++) pairs[i] = sh_load_le32(all.p + 4 * i);
        s = join_groups(pairs, all.len / 8, &reps, err);
        free(pairs);
        if (s != SH_OK) goto done;
        for (i = 0; i < reps.len; i += 8) counts[sh_dist_owner(d, sh_load_le32(reps.p + i))] += 8;
    }
    {
        rep_ctx rc;
        rc.first = d->first; rc.n = l.n; rc.rep = rep;
        if ((s = sh_comm_exchange(c, reps.p, counts, 8, rep_sink, &rc, err)) != SH_OK) goto done;
        step_end(d, "groups", mark);
    }
    /* representatives on earlier ranks: their fingerprints, to name the relation */
    want = (uint32_t *)malloc(((size_t)l.n + 1) * sizeof *want);
    if (!want) { s = nomem(err); goto done; }
    for (i = 0; i < l.n; i++) if (rep[i] < d->first) want[nw++] = rep[i];
    nw = sort_unique(want, nw);
    if (nw == (size_t)-1) { s = nomem(err); goto done; }
    raw = (uint64_t *)calloc(nw + 1, sizeof *raw);
    canon = (uint64_t *)calloc(nw + 1, sizeof *canon);
    if (!raw || !canon) { s = nomem(err); goto done; }
    {
        fp_ctx f;
        f.l = &l; f.first = d->first; f.ids = want; f.n = nw; f.raw = raw; f.canon = canon;
        mark = step_begin(d);
        if ((s = ask(d, want, nw, answer_fps, &f, got_fps, &f, err)) != SH_OK) goto done;
        step_end(d, "relations", mark);
    }
    /* as sh_dedupe names them: the relation to the representative */
    out = (sh_docrec *)malloc(((size_t)l.n + 1) * sizeof *out);
    if (!out) { s = nomem(err); goto done; }
    for (i = 0; i < l.n; i++) {
        sh_docrec r = l.d[i];
        uint32_t id = d->first + (uint32_t)i;
        st->docs++;
        if (r.status != SH_OK) { st->skipped++; r.rep = id; r.dup = SH_DUP_NONE; out[i] = r; continue; }
        r.rep = rep[i];
        if (r.rep == id) { r.dup = SH_DUP_NONE; st->representatives++; }
        else {
            uint64_t prf, pcf;
            if (r.rep >= d->first) { prf = l.d[r.rep - d->first].raw_fp; pcf = l.d[r.rep - d->first].canon_fp; }
            else { size_t j = find_id(want, nw, r.rep); prf = raw[j]; pcf = canon[j]; }
            r.dup = prf == r.raw_fp ? SH_DUP_EXACT : pcf == r.canon_fp ? SH_DUP_LEXICAL : SH_DUP_SHINGLE;
            if (r.dup == SH_DUP_EXACT) st->exact++;
            else if (r.dup == SH_DUP_LEXICAL) st->lexical++;
            else st->shingle++;
        }
        out[i] = r;
    }
    sh_run_path(path, sizeof path, d->dir, "docs.bin");
    if ((s = write_docs(path, &l, out, l.n, err)) != SH_OK) goto done;
    sums[0] = st->docs; sums[1] = st->skipped; sums[2] = st->exact; sums[3] = st->lexical; sums[4] = st->shingle;
    sums[5] = st->representatives;
    if ((s = sh_comm_allreduce(c, sums, 6, SH_REDUCE_SUM, err)) != SH_OK) goto done;
    st->docs = sums[0]; st->skipped = sums[1]; st->exact = sums[2]; st->lexical = sums[3]; st->shingle = sums[4];
    st->representatives = sums[5];
done:
    sh_extsort_free(sorter);
    sh_run_close(&l);
    vec_free(&links);
    vec_free(&all);
    vec_free(&reps);
    free(rep);
    free(want);
    free(counts);
    free(raw);
    free(canon);
    free(out);
    free(buf);
    return s;
}

/* ---- phases 2 and 3 ----------------------------------------------------------- */

/* <shingle BE 8, id BE 4> of the representatives' sketch values */
typedef struct sk_prod { const sh_run *l; uint32_t first, i, j; } sk_prod;

static sh_status sk_produce(void *ud, void *buf, size_t max, size_t *n, sh_error *err)
{
    sk_prod *p = (sk_prod *)ud;
    unsigned char *o = (unsigned char *)buf;
    size_t k = 0;
    (void)err;
    while (p->i < p->l->n) {
        const sh_docrec *d = &p->l->d[p->i];
        uint32_t id = p->first + p->i;
        if (d->status != SH_OK || d->rep != id || p->j >= d->sketch_n) { p->i++; p->j = 0; continue; }
        if (k + 12 > max) break;
        sh_key_record(o + k, 8, p->l->v[d->sketch_off + p->j], id);
        p->j++;
        k += 12;
    }
    *n = k;
    return SH_OK;
}

/* the merged pairs of a sorter, as a producer */
static sh_status sorter_produce(void *ud, void *buf, size_t max, size_t *n, sh_error *err)
{
    to_sorter *t = (to_sorter *)ud;
    size_t k = 0;
    sh_status s = sh_extsort_read(t->s, buf, max / t->record_size, &k, err);
    *n = k * t->record_size;
    return s;
}

/* a pair goes to the rank that holds its first document */
static int pair_owner(void *ud, const unsigned char *rec)
{
    return sh_dist_owner((const sh_dist *)ud, sh_pair_a(rec));
}

static void disk_of(sh_extsort *s, uint64_t *peak)
{
    sh_extsort_stats x;
    sh_extsort_get_stats(s, &x);
    if (x.bytes_written > *peak) *peak = x.bytes_written;
}

/* Phases 2-3 from a producer of this rank's <key, id> records (shingles, or
 * the alternatives' keys): the records go to the owners of their keys' ranges
 * and are sorted there (by key, then id, so every group lists its ids as one
 * process does); each key of at most max_df ids (0: no limit) gives its
 * pairs, merged on this rank first (a pair from many keys of this range
 * travels once), then sent to the rank of the first document and merged
 * again into this rank's pairs.bin. With stars, a key's first id is paired
 * with each other (the alternatives without a check, which only join) and the
 * pairs go to rank 0 as d->joins instead. */
static sh_status keys_to_pairs(sh_dist *d, sh_produce_fn produce, void *pud, const char *key_step, uint32_t max_df, int stars,
                               uint32_t docs, sh_pairs_stats *st, sh_error *err)
{
    sh_comm *c = d->comm;
    sh_extsort *keys = NULL, *mine = NULL, *pairs = NULL;
    to_sorter ts;
    sh_form_config fc;
    sh_form_stats fs;
    uint64_t sums[6];
    char path[4096];
    double t0 = sh_now();
    step_mark mark;
    sh_status s;
    progress(d, "shingle merging", 0, docs);
    if ((s = sh_extsort_open(&keys, 12, 12, sorter_budget(d, 2), d->temp, NULL, err)) != SH_OK) goto done;
    ts.s = keys; ts.record_size = 12;
    mark = step_begin(d);
    if ((s = sh_comm_shuffle(c, 12, produce, pud, sh_owner_by_key64, c, sort_sink, &ts, err)) != SH_OK) goto done;
    step_end(d, key_step, mark);
    if ((s = sh_extsort_finish(keys, err)) != SH_OK) goto done;
    {
        sh_extsort_stats x;
        sh_extsort_get_stats(keys, &x);
        st->records = x.records_in;
    }
    disk_of(keys, &st->disk_peak);
    progress(d, "shingle merging", docs, docs);
    st->t_merge = sh_now() - t0;
    t0 = sh_now();
    if ((s = sh_pairsort_open(&mine, sorter_budget(d, 2), d->temp, err)) != SH_OK) goto done;
    memset(&fc, 0, sizeof fc);
    memset(&fs, 0, sizeof fs);
    fc.key_size = 8;
    fc.max_df = max_df;
    fc.pairs = mine;
    fc.star = stars;
    fc.progress = d->progress;
    fc.progress_ud = d->progress_ud;
    fc.progress_step = "pair formation";
    fc.progress_total = st->records;
    if ((s = sh_form_pairs(keys, &fc, &fs, err)) != SH_OK) goto done;
    st->shingles = fs.keys;
    st->common_dropped = fs.dropped;
    st->pair_records = stars ? 0 : fs.pair_records;
    sh_extsort_free(keys);
    keys = NULL;
    if ((s = sh_extsort_finish(mine, err)) != SH_OK) goto done;
    disk_of(mine, &st->disk_peak);
    st->t_form = sh_now() - t0;
    t0 = sh_now();
    if (stars) {
        /* the joins, at rank 0 */
        to_sorter from;
        vec got = { 0, 0, 0 };
        from.s = mine; from.record_size = SH_PAIR_RECORD;
        mark = step_begin(d);
        s = sh_comm_gather(c, 0, SH_PAIR_RECORD, sorter_produce, &from, vec_sink, &got, err);
        step_end(d, "joins", mark);
        if (s == SH_OK && c->rank == 0) {
            size_t i, n = got.len / SH_PAIR_RECORD;
            uint32_t *j = (uint32_t *)realloc(d->joins, (2 * (d->n_joins + n) + 1) * sizeof *j);
            if (!j) s = nomem(err);
            else {
                d->joins = j;
                for (i = 0; i < n; i++) {
                    j[2 * d->n_joins] = sh_pair_a(got.p + SH_PAIR_RECORD * i);
                    j[2 * d->n_joins + 1] = sh_pair_b(got.p + SH_PAIR_RECORD * i);
                    d->n_joins++;
                }
            }
        }
        vec_free(&got);
        if (s != SH_OK) goto done;
    } else {
        if ((s = sh_pairsort_open(&pairs, sorter_budget(d, 2), d->temp, err)) != SH_OK) goto done;
        {
            to_sorter from, to;
            from.s = mine; from.record_size = SH_PAIR_RECORD;
            to.s = pairs; to.record_size = SH_PAIR_RECORD;
            mark = step_begin(d);
            if ((s = sh_comm_shuffle(c, SH_PAIR_RECORD, sorter_produce, &from, pair_owner, d, sort_sink, &to, err)) != SH_OK) goto done;
            step_end(d, "pairs", mark);
        }
        sh_extsort_free(mine);
        mine = NULL;
        if ((s = sh_extsort_finish(pairs, err)) != SH_OK) goto done;
        disk_of(pairs, &st->disk_peak);
        sh_run_path(path, sizeof path, d->dir, "pairs.bin");
        if ((s = sh_pairs_write(path, pairs, 1, &st->pairs, err)) != SH_OK) goto done;
    }
    st->t_pairmerge = sh_now() - t0;
    sums[0] = st->records; sums[1] = st->shingles; sums[2] = st->common_dropped; sums[3] = st->pair_records;
    sums[4] = st->pairs;
    if ((s = sh_comm_allreduce(c, sums, 5, SH_REDUCE_SUM, err)) != SH_OK) goto done;
    sums[5] = st->disk_peak;
    if ((s = sh_comm_allreduce(c, sums + 5, 1, SH_REDUCE_MAX, err)) != SH_OK) goto done;
    st->records = sums[0]; st->shingles = sums[1]; st->common_dropped = sums[2]; st->pair_records = sums[3];
    st->pairs = sums[4]; st->disk_peak = sums[5];
done:
    sh_extsort_free(keys);
    sh_extsort_free(mine);
    sh_extsort_free(pairs);
    return s;
}

sh_status sh_dist_pairs(sh_dist *d, const sh_pairs_config *cfg, sh_pairs_stats *st, sh_error *err)
{
    sh_run l;
    sk_prod prod;
    sh_status s;
    memset(st, 0, sizeof *st);
    if ((s = sh_run_open(&l, d->dir, 1, 0, 0, err)) != SH_OK) return s;
    prod.l = &l; prod.first = d->first; prod.i = 0; prod.j = 0;
    s = keys_to_pairs(d, sk_produce, &prod, "shingles", cfg->max_df, 0, l.n, st, err);
    sh_run_close(&l);
    return s;
}

/* The alternatives' <key, id> records of this rank's representatives: a
 * document's keys with its global id */
typedef struct key_prod {
    const sh_run *l;
    const sh_alt_config *cfg;
    sh_key_emit_fn emit;
    uint32_t first, i;
    unsigned char *doc;   /* one document's records, room for per */
    size_t per;
} key_prod;

static sh_status key_produce(void *ud, void *buf, size_t max, size_t *n, sh_error *err)
{
    key_prod *p = (key_prod *)ud;
    unsigned char *o = (unsigned char *)buf;
    size_t k = 0;
    while (p->i < p->l->n) {
        const sh_docrec *r = &p->l->d[p->i];
        uint32_t id = p->first + p->i;
        size_t nk = 0, j;
        sh_status s;
        if (r->status != SH_OK || r->rep != id) { p->i++; continue; }
        if (k + 12 * p->per > max && k > 0) break;  /* a document's keys stay in one piece */
        if ((s = p->emit(p->l, p->cfg, p->i, p->doc, &nk)) != SH_OK) return sh_error_set(err, s, 0, "the keys of document %u", id);
        if (k + 12 * nk > max) {
            if (k > 0) break;
            return sh_error_set(err, SH_EINVAL, 0, "document %u has %zu keys, more than an exchange round holds", id, nk);
        }
        for (j = 0; j < nk; j++) sh_store_be32(p->doc + 12 * j + 8, id); /* the global id in place of the local one */
        memcpy(o + k, p->doc, 12 * nk);
        k += 12 * nk;
        p->i++;
    }
    *n = k;
    return SH_OK;
}

sh_status sh_dist_keys(sh_dist *d, const sh_alt_config *cfg, int lsh, sh_pairs_stats *st, sh_error *err)
{
    sh_run l;
    key_prod prod;
    sh_status s;
    memset(st, 0, sizeof *st);
    memset(&prod, 0, sizeof prod);
    if ((s = sh_run_open(&l, d->dir, 1, 0, lsh || !cfg->meta, err)) != SH_OK) return s;
    prod.l = &l; prod.cfg = cfg; prod.first = d->first;
    s = sh_alt_keys(&l, cfg, lsh, &prod.emit, &prod.per, err);
    if (s == SH_OK && !(prod.doc = (unsigned char *)malloc(12 * prod.per + 12))) s = nomem(err);
    /* with a check, pairs sharing a key are decided as phase 4 does (keys of
     * more than SH_ALT_MAX_DF documents dropped, as alternatives.c does);
     * without, the documents sharing a key are joined as a star */
    if (s == SH_OK)
        s = keys_to_pairs(d, key_produce, &prod, "keys", cfg->check ? SH_ALT_MAX_DF : 0, !cfg->check, l.n, st, err);
    if (s == SH_OK && !cfg->check) {
        /* no links to record, as alternatives.c records none without a check */
        sh_recwriter w;
        char path[4096];
        sh_run_path(path, sizeof path, d->dir, "links.bin");
        if ((s = sh_recwriter_open(&w, path, SH_MAGIC_LINKS, sizeof(sh_linkrec), NULL, 0, err)) == SH_OK) {
            w.scratch = 1;
            s = sh_recwriter_commit(&w, err);
        }
    }
    free(prod.doc);
    sh_run_close(&l);
    return s;
}

sh_status sh_dist_finish(sh_dist *d, const char *outdir, sh_decide_stats *st, size_t *joined, sh_error *err)
{
    return sh_finish_clusters(outdir, d->joins, d->n_joins, st, joined, err);
}

/* ---- phase 4 ------------------------------------------------------------------ */

/* A shard: a run directory holding the documents this rank's pairs name,
 * renumbered 0..m-1 in the order of their global ids (need[]), so that
 * sh_decide decides them as one process would. */
typedef struct shard {
    char dir[4200];
    const uint32_t *need;
    size_t m;
    sh_docrec *docs;
    sh_recwriter vals, full;
    uint64_t nvals, nfull;
} shard;

static const char *const shard_files[] = { "docs.bin", "sketches.bin", "shingles.bin", "pairs.bin", "links.bin", "clusters.bin" };

static void shard_remove(shard *h)
{
    char path[4400];
    size_t i;
    if (!h->dir[0]) return;
    for (i = 0; i < sizeof shard_files / sizeof *shard_files; i++) {
        snprintf(path, sizeof path, "%s/%s", h->dir, shard_files[i]);
        unlink(path);
        snprintf(path, sizeof path, "%s/%s.tmp", h->dir, shard_files[i]);
        unlink(path);
    }
    rmdir(h->dir);
    h->dir[0] = 0;
}

typedef struct owner_ctx { sh_run *l; uint32_t first; uint64_t *scratch; size_t cap; } owner_ctx;

/* an owner's answer: the document's record and its sketch values */
static sh_status answer_sketch(void *ud, uint32_t id, spool *out, sh_error *err)
{
    owner_ctx *o = (owner_ctx *)ud;
    const sh_docrec *r = &o->l->d[id - o->first];
    sh_status s;
    if ((s = answer_header(out, id, 8 + r->sketch_n, err)) != SH_OK) return s;
    if ((s = spool_add(out, r, sizeof *r, err)) != SH_OK) return s;
    return spool_add(out, o->l->v + r->sketch_off, (size_t)r->sketch_n * 8, err);
}

static sh_status got_sketch(void *ud, uint32_t id, const unsigned char *u, size_t n, sh_error *err)
{
    shard *h = (shard *)ud;
    size_t j = find_id(h->need, h->m, id);
    sh_docrec *r;
    sh_status s;
    if (j == h->m || n < 8) return sh_error_set(err, SH_EFORMAT, 0, "an answer about document %u that was not asked for", id);
    r = &h->docs[j];
    memcpy(r, u, sizeof *r);
    if (r->status != SH_OK || r->sketch_n != n - 8)
        return sh_error_set(err, SH_EFORMAT, 0, "document %u came without its sketch", id);
    r->sketch_off = h->nvals;
    if ((s = sh_recwriter_append(&h->vals, u + 64, n - 8, err)) != SH_OK) return s;
    h->nvals += n - 8;
    return SH_OK;
}

/* an owner's answer: the document's full shingle set */
static sh_status answer_full(void *ud, uint32_t id, spool *out, sh_error *err)
{
    owner_ctx *o = (owner_ctx *)ud;
    const sh_docrec *r = &o->l->d[id - o->first];
    sh_status s;
    if (r->full_n > o->cap) {
        uint64_t *b = (uint64_t *)realloc(o->scratch, (size_t)r->full_n * 8);
        if (!b) return nomem(err);
        o->scratch = b;
        o->cap = r->full_n;
    }
    if ((s = sh_run_full(o->l, id - o->first, o->scratch, err)) != SH_OK) return s;
    if ((s = answer_header(out, id, r->full_n, err)) != SH_OK) return s;
    return spool_add(out, o->scratch, (size_t)r->full_n * 8, err);
}

static sh_status got_full(void *ud, uint32_t id, const unsigned char *u, size_t n, sh_error *err)
{
    shard *h = (shard *)ud;
    size_t j = find_id(h->need, h->m, id);
    sh_status s;
    if (j == h->m) return sh_error_set(err, SH_EFORMAT, 0, "an answer about document %u that was not asked for", id);
    h->docs[j].full_off = h->nfull;
    h->docs[j].full_n = (uint32_t)n;
    if ((s = sh_recwriter_append(&h->full, u, n, err)) != SH_OK) return s;
    h->nfull += n;
    return SH_OK;
}

/* a caller's policy sees global ids */
typedef struct accept_map { const sh_decide_config *c; const uint32_t *need; } accept_map;

static int accept_global(void *ud, uint32_t a, uint32_t b, uint32_t shared, const sh_estimate *e, uint32_t size_a, uint32_t size_b)
{
    const accept_map *m = (const accept_map *)ud;
    return m->c->accept(m->c->accept_ud, m->need[a], m->need[b], shared, e, size_a, size_b);
}

sh_status sh_dist_decide(sh_dist *d, const sh_decide_config *cfg, sh_decide_stats *st, sh_error *err)
{
    sh_comm *c = d->comm;
    sh_run l;
    sh_recfile pf, lf;
    shard h;
    owner_ctx oc;
    sh_decide_config dc = *cfg;
    accept_map am;
    uint32_t *need = NULL, *remote = NULL;
    unsigned char *mark = NULL;
    size_t m = 0, nr = 0, i;
    uint64_t k, sums[3];
    char path[4400];
    step_mark sm;
    sh_status s;
    memset(st, 0, sizeof *st);
    memset(&h, 0, sizeof h);
    memset(&pf, 0, sizeof pf);
    memset(&lf, 0, sizeof lf);
    memset(&oc, 0, sizeof oc);
    if ((s = sh_run_open(&l, d->dir, 1, cfg->verify, 0, err)) != SH_OK) return s;
    oc.l = &l;
    oc.first = d->first;
    sh_run_path(path, sizeof path, d->dir, "pairs.bin");
    if ((s = sh_recfile_open(&pf, path, SH_MAGIC_PAIRS, sizeof(sh_pairrec), 0, err)) != SH_OK) goto done;
    /* the documents the pairs name, in id order: the shard's ids */
    need = (uint32_t *)malloc((2 * (size_t)pf.count + 1) * sizeof *need);
    if (!need) { s = nomem(err); goto done; }
    for (k = 0; k < pf.count; k++) {
        const sh_pairrec *p = (const sh_pairrec *)(const void *)(pf.records + k * sizeof(sh_pairrec));
        if (p->a >= d->firsts[c->size] || p->b >= d->firsts[c->size] || p->a < d->first || p->a - d->first >= d->n) {
            s = sh_error_set(err, SH_EFORMAT, 0, "%s names a pair (%u, %u) this rank does not hold", path, p->a, p->b);
            goto done;
        }
        need[2 * k] = p->a;
        need[2 * k + 1] = p->b;
    }
    m = sort_unique(need, 2 * (size_t)pf.count);
    if (m == (size_t)-1) { s = nomem(err); goto done; }
    remote = (uint32_t *)malloc((m + 1) * sizeof *remote);
    h.docs = (sh_docrec *)calloc(m + 1, sizeof *h.docs);
    mark = (unsigned char *)calloc(m + 1, 1);
    if (!remote || !h.docs || !mark) { s = nomem(err); goto done; }
    for (i = 0; i < m; i++) if (need[i] < d->first || need[i] - d->first >= d->n) remote[nr++] = need[i];
    h.need = need;
    h.m = m;
    snprintf(h.dir, sizeof h.dir, "%s/shard-XXXXXX", d->temp);
    if (!mkdtemp(h.dir)) { s = io_fail(err, "create a directory like", h.dir); h.dir[0] = 0; goto done; }
    /* the sketches: this rank's from its files, the others' asked for */
    sh_run_path(path, sizeof path, h.dir, "sketches.bin");
    if ((s = sh_recwriter_open(&h.vals, path, SH_MAGIC_SKETCHES, 8, NULL, 0, err)) != SH_OK) goto done;
    h.vals.scratch = 1;
    for (i = 0; i < m; i++) {
        const sh_docrec *r;
        if (need[i] < d->first || need[i] - d->first >= d->n) continue;
        r = &l.d[need[i] - d->first];
        h.docs[i] = *r;
        h.docs[i].sketch_off = h.nvals;
        if ((s = sh_recwriter_append(&h.vals, l.v + r->sketch_off, r->sketch_n, err)) != SH_OK) goto done;
        h.nvals += r->sketch_n;
    }
    sm = step_begin(d);
    if ((s = ask(d, remote, nr, answer_sketch, &oc, got_sketch, &h, err)) != SH_OK) goto done;
    step_end(d, "sketches", sm);
    if ((s = sh_recwriter_commit(&h.vals, err)) != SH_OK) goto done;
    for (i = 0; i < m; i++) {
        h.docs[i].rep = (uint32_t)i;
        h.docs[i].dup = SH_DUP_NONE;
        h.docs[i].full_off = 0;
        h.docs[i].full_n = 0;
    }
    {
        sh_recwriter w;
        sh_pairrec *o = (sh_pairrec *)malloc((size_t)CHUNK * sizeof *o);
        size_t no = 0;
        if (!o) { s = nomem(err); goto done; }
        sh_run_path(path, sizeof path, h.dir, "pairs.bin");
        if ((s = sh_recwriter_open(&w, path, SH_MAGIC_PAIRS, sizeof(sh_pairrec), NULL, 0, err)) != SH_OK) { free(o); goto done; }
        w.scratch = 1;
        for (k = 0; k < pf.count && s == SH_OK; k++) {
            const sh_pairrec *p = (const sh_pairrec *)(const void *)(pf.records + k * sizeof(sh_pairrec));
            o[no].a = (uint32_t)find_id(need, m, p->a);
            o[no].b = (uint32_t)find_id(need, m, p->b);
            o[no].shared = p->shared;
            if (++no == CHUNK) { s = sh_recwriter_append(&w, o, no, err); no = 0; }
        }
        if (s == SH_OK && no) s = sh_recwriter_append(&w, o, no, err);
        free(o);
        if (s == SH_OK) s = sh_recwriter_commit(&w, err);
        else sh_recwriter_abort(&w);
        if (s != SH_OK) goto done;
    }
    sh_run_path(path, sizeof path, h.dir, "docs.bin");
    if ((s = write_docs(path, &l, h.docs, m, err)) != SH_OK) goto done;
    /* with verification, the full sets of the candidates' documents */
    if (cfg->verify) {
        size_t nm = 0;
        /* from the sketches: a rank's shard of pairs.bin has the global
         * counts, but its documents are not the run's (pairest.h needs the
         * document frequencies phase 3 saw) */
        sh_decide_config local = *cfg;
        local.shared_counts = 0;
        if ((s = sh_candidates(h.dir, &local, mark, NULL, NULL, NULL, err)) != SH_OK) goto done;
        sh_run_path(path, sizeof path, h.dir, "shingles.bin");
        if ((s = sh_recwriter_open(&h.full, path, SH_MAGIC_SHINGLES, 8, NULL, 0, err)) != SH_OK) goto done;
        h.full.scratch = 1;
        for (i = 0; i < m; i++) {
            int mine = need[i] >= d->first && need[i] - d->first < d->n;
            if (!mark[i]) continue;
            if (!mine) { remote[nm++] = need[i]; continue; }
            {
                const sh_docrec *r = &l.d[need[i] - d->first];
                if (r->full_n > oc.cap) {
                    uint64_t *b = (uint64_t *)realloc(oc.scratch, (size_t)r->full_n * 8);
                    if (!b) { s = nomem(err); goto done; }
                    oc.scratch = b;
                    oc.cap = r->full_n;
                }
                if ((s = sh_run_full(&l, need[i] - d->first, oc.scratch, err)) != SH_OK) goto done;
                h.docs[i].full_off = h.nfull;
                h.docs[i].full_n = r->full_n;
                if ((s = sh_recwriter_append(&h.full, oc.scratch, r->full_n, err)) != SH_OK) goto done;
                h.nfull += r->full_n;
            }
        }
        sm = step_begin(d);
        if ((s = ask(d, remote, nm, answer_full, &oc, got_full, &h, err)) != SH_OK) goto done;
        step_end(d, "full sets", sm);
        if ((s = sh_recwriter_commit(&h.full, err)) != SH_OK) goto done;
        sh_run_path(path, sizeof path, h.dir, "docs.bin");
        if ((s = write_docs(path, &l, h.docs, m, err)) != SH_OK) goto done;
    }
    /* the decision itself: sh_decide, as one process makes it */
    if (cfg->accept) {
        am.c = cfg;
        am.need = need;
        dc.accept = accept_global;
        dc.accept_ud = &am;
    }
    if ((s = sh_decide(h.dir, &dc, st, err)) != SH_OK) goto done;
    /* the links, back to global ids */
    sh_run_path(path, sizeof path, h.dir, "links.bin");
    if ((s = sh_recfile_open(&lf, path, SH_MAGIC_LINKS, sizeof(sh_linkrec), 0, err)) != SH_OK) goto done;
    {
        sh_recwriter w;
        sh_run_path(path, sizeof path, d->dir, "links.bin");
        if ((s = sh_recwriter_open(&w, path, SH_MAGIC_LINKS, sizeof(sh_linkrec), NULL, 0, err)) != SH_OK) goto done;
        w.scratch = 1;
        for (k = 0; k < lf.count && s == SH_OK; k++) {
            sh_linkrec r;
            memcpy(&r, lf.records + k * sizeof r, sizeof r);
            r.a = need[r.a];
            r.b = need[r.b];
            s = sh_recwriter_append(&w, &r, 1, err);
        }
        if (s == SH_OK) s = sh_recwriter_commit(&w, err);
        else sh_recwriter_abort(&w);
        if (s != SH_OK) goto done;
    }
    sums[0] = st->pairs; sums[1] = st->candidates; sums[2] = st->linked;
    if ((s = sh_comm_allreduce(c, sums, 3, SH_REDUCE_SUM, err)) != SH_OK) goto done;
    memset(st, 0, sizeof *st);
    st->pairs = sums[0]; st->candidates = sums[1]; st->linked = sums[2];
done:
    sh_recfile_close(&lf);
    sh_recfile_close(&pf);
    sh_recwriter_abort(&h.vals);
    sh_recwriter_abort(&h.full);
    shard_remove(&h);
    sh_run_close(&l);
    free(oc.scratch);
    free(h.docs);
    free(need);
    free(remote);
    free(mark);
    return s;
}

/* ---- the whole run's files at the root ---------------------------------------- */

/* docs.bin records with the whole run's offsets into sketches.bin and shingles.bin */
typedef struct docs_prod { const sh_run *l; uint32_t i; uint64_t vbase, fbase; } docs_prod;

static sh_status docs_produce(void *ud, void *buf, size_t max, size_t *n, sh_error *err)
{
    docs_prod *p = (docs_prod *)ud;
    sh_docrec *o = (sh_docrec *)buf;
    size_t k = 0;
    (void)err;
    while (p->i < p->l->n && (k + 1) * sizeof *o <= max) {
        sh_docrec r = p->l->d[p->i++];
        if (r.status == SH_OK) { r.sketch_off += p->vbase; r.full_off += p->fbase; }
        o[k++] = r;
    }
    *n = k * sizeof *o;
    return SH_OK;
}

static sh_status writer_sink(void *ud, int src, const void *data, size_t n, sh_error *err)
{
    sh_recwriter *w = (sh_recwriter *)ud;
    (void)src;
    return sh_recwriter_append(w, data, n / w->record_size, err);
}

/* Gather every rank's dir/name (records of record_size bytes, no meta) into
 * root's outdir/name. */
static sh_status collect_file(sh_dist *d, int root, const char *outdir, const char *name, const char magic[8], size_t record_size,
                              sh_error *err)
{
    sh_recfile f;
    sh_recwriter w;
    sh_buffer_source b;
    char path[4096];
    step_mark mark;
    sh_status s;
    memset(&w, 0, sizeof w);
    sh_run_path(path, sizeof path, d->dir, name);
    if ((s = sh_recfile_open(&f, path, magic, (uint32_t)record_size, 0, err)) != SH_OK) return s;
    b.data = f.records; b.size = (size_t)(f.count * record_size); b.pos = 0;
    mark = step_begin(d);
    if (d->comm->rank == root) {
        sh_run_path(path, sizeof path, outdir, name);
        if ((s = sh_recwriter_open(&w, path, magic, (uint32_t)record_size, NULL, 0, err)) != SH_OK) { sh_recfile_close(&f); return s; }
    }
    s = sh_comm_gather(d->comm, root, record_size, sh_buffer_produce, &b, writer_sink, &w, err);
    step_end(d, name, mark);
    sh_recfile_close(&f);
    if (d->comm->rank != root) return s;
    if (s == SH_OK) return sh_recwriter_commit(&w, err);
    sh_recwriter_abort(&w);
    return s;
}

sh_status sh_dist_collect(sh_dist *d, int root, const char *outdir, unsigned what, sh_error *err)
{
    sh_run l;
    sh_recwriter w;
    docs_prod dp;
    char path[4096];
    step_mark mark;
    sh_status s;
    memset(&w, 0, sizeof w);
    if ((s = sh_run_open(&l, d->dir, 0, 0, 0, err)) != SH_OK) return s;
    if (d->comm->rank == root) {
        sh_run_path(path, sizeof path, outdir, "docs.bin");
        if ((s = sh_recwriter_open(&w, path, SH_MAGIC_DOCS, sizeof(sh_docrec), l.docs.meta, SH_DOCS_META_SIZE, err)) != SH_OK) {
            sh_run_close(&l);
            return s;
        }
    }
    dp.l = &l; dp.i = 0;
    dp.vbase = d->values_at[d->comm->rank];
    dp.fbase = d->full_at[d->comm->rank];
    mark = step_begin(d);
    s = sh_comm_gather(d->comm, root, sizeof(sh_docrec), docs_produce, &dp, writer_sink, &w, err);
    step_end(d, "documents", mark);
    sh_run_close(&l);
    if (d->comm->rank == root) {
        if (s == SH_OK) s = sh_recwriter_commit(&w, err);
        else sh_recwriter_abort(&w);
    }
    if (s == SH_OK && (what & SH_COLLECT_SKETCHES)) s = collect_file(d, root, outdir, "sketches.bin", SH_MAGIC_SKETCHES, 8, err);
    if (s == SH_OK && (what & SH_COLLECT_FULL)) s = collect_file(d, root, outdir, "shingles.bin", SH_MAGIC_SHINGLES, 8, err);
    if (s == SH_OK && (what & SH_COLLECT_SIGS) && d->sig_k) s = collect_file(d, root, outdir, "sigs.bin", SH_MAGIC_SIGS, 8 * (size_t)d->sig_k, err);
    if (s == SH_OK && (what & SH_COLLECT_PAIRS)) s = collect_file(d, root, outdir, "pairs.bin", SH_MAGIC_PAIRS, sizeof(sh_pairrec), err);
    if (s == SH_OK && (what & SH_COLLECT_LINKS)) s = collect_file(d, root, outdir, "links.bin", SH_MAGIC_LINKS, sizeof(sh_linkrec), err);
    return s;
}

typedef struct file_prod { FILE *f; const char *path; } file_prod;

static sh_status file_produce(void *ud, void *buf, size_t max, size_t *n, sh_error *err)
{
    file_prod *p = (file_prod *)ud;
    *n = p->f ? fread(buf, 1, max, p->f) : 0;
    if (p->f && *n < max && ferror(p->f)) return io_fail(err, "read", p->path);
    return SH_OK;
}

typedef struct file_sink { FILE *f; const char *path; uint64_t bytes; } file_sink;

static sh_status file_write(void *ud, int src, const void *data, size_t n, sh_error *err)
{
    file_sink *w = (file_sink *)ud;
    (void)src;
    if (fwrite(data, 1, n, w->f) != n) return io_fail(err, "write", w->path);
    w->bytes += n;
    return SH_OK;
}

sh_status sh_dist_gather_file(sh_comm *c, int root, const char *path, const char *root_path, uint64_t *bytes, sh_error *err)
{
    file_prod fp;
    file_sink fs;
    char tmp[4200];
    sh_status s;
    memset(&fs, 0, sizeof fs);
    fp.path = path;
    fp.f = NULL;
    if (path && !(fp.f = fopen(path, "rb"))) return io_fail(err, "read", path);
    if (c->rank == root) {
        snprintf(tmp, sizeof tmp, "%s.tmp", root_path);
        fs.path = root_path;
        if (!(fs.f = fopen(tmp, "wb"))) { s = io_fail(err, "write", tmp); if (fp.f) fclose(fp.f); return s; }
    }
    s = sh_comm_gather(c, root, 1, file_produce, &fp, file_write, &fs, err);
    if (fp.f) fclose(fp.f);
    if (c->rank != root) return s;
    if (fflush(fs.f) != 0 || fsync(fileno(fs.f)) != 0) { if (s == SH_OK) s = io_fail(err, "write", tmp); }
    fclose(fs.f);
    if (s == SH_OK && rename(tmp, root_path) != 0) s = io_fail(err, "rename", tmp);
    if (s != SH_OK) unlink(tmp);
    else if (bytes) *bytes = fs.bytes;
    return s;
}

/* ---- splitting an input -------------------------------------------------------- */

sh_status sh_dist_line_start(const char *path, uint64_t offset, uint64_t *pos, sh_error *err)
{
    unsigned char buf[65536];
    int fd;
    struct stat sb;
    uint64_t at;
    if (offset == 0) { *pos = 0; return SH_OK; }
    if ((fd = open(path, O_RDONLY)) < 0) return io_fail(err, "read", path);
    if (fstat(fd, &sb) != 0) { sh_status s = io_fail(err, "read", path); close(fd); return s; }
    /* the line starting at offset if the byte before it ends one, else the next */
    at = offset - 1;
    *pos = (uint64_t)sb.st_size;
    while (at < (uint64_t)sb.st_size) {
        ssize_t k = pread(fd, buf, sizeof buf, (off_t)at);
        const unsigned char *nl;
        if (k < 0) { sh_status s = io_fail(err, "read", path); close(fd); return s; }
        if (k == 0) break;
        if ((nl = (const unsigned char *)memchr(buf, '\n', (size_t)k)) != NULL) {
            *pos = at + (uint64_t)(nl - buf) + 1;
            break;
        }
        at += (uint64_t)k;
    }
    close(fd);
    return SH_OK;
}

sh_status sh_dist_count_lines(const char *path, uint64_t start, uint64_t stop, uint64_t *lines, sh_error *err)
{
    static const size_t cap = 1 << 20;
    unsigned char *buf = (unsigned char *)malloc(cap);
    uint64_t at = start, n = 0;
    int fd;
    if (!buf) return nomem(err);
    if ((fd = open(path, O_RDONLY)) < 0) { free(buf); return io_fail(err, "read", path); }
    while (at < stop) {
        size_t want = stop - at < cap ? (size_t)(stop - at) : cap;
        ssize_t k = pread(fd, buf, want, (off_t)at);
        const unsigned char *p, *e;
        if (k < 0) { sh_status s = io_fail(err, "read", path); close(fd); free(buf); return s; }
        if (k == 0) break;
        for (p = buf, e = buf + k; (p = (const unsigned char *)memchr(p, '\n', (size_t)(e - p))) != NULL; p++) n++;
        at += (uint64_t)k;
    }
    close(fd);
    free(buf);
    *lines = n;
    return SH_OK;
}
