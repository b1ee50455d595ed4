/* Pair formation: see pairs.h for the contract. */
#include "pairs.h"

#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "formats.h"
#include "parwork.h"
#include "recfile.h"

#define CHUNK 65536

static void add_count(void *acc, const void *rec, void *ud)
{
    unsigned char *a = (unsigned char *)acc;
    (void)ud;
    sh_store_le32(a + 8, sh_load_le32(a + 8) + sh_load_le32((const unsigned char *)rec + 8));
}

sh_status sh_pairsort_open(sh_extsort **out, size_t memory, const char *temp_dir, sh_error *err)
{
    return sh_extsort_open(out, SH_PAIR_RECORD, 8, memory, temp_dir, add_count, err);
}

typedef struct former {
    const sh_form_config *c;
    sh_form_stats *st;
    uint32_t *group;          /* the ids of the current key */
    size_t g, cap;
    int over;                 /* the current key has more than max_df ids */
    unsigned char *out;       /* pair records not yet added to c->pairs */
    size_t no;
} former;

/* The current key is complete: emit its pairs, or join its ids. */
static sh_status close_group(former *f, sh_error *err)
{
    const sh_form_config *c = f->c;
    size_t x, y;
    f->st->keys++;
    if (f->over) { f->st->dropped++; return SH_OK; }
    if (f->g < 2) return SH_OK;
    if (!c->pairs) {
        if (c->uf)
            for (x = 1; x < f->g; x++) sh_uf_union(c->uf, f->group[0], f->group[x]);
        return SH_OK;
    }
    for (x = 0; x < (c->star ? 1 : f->g); x++)
        for (y = x + 1; y < f->g; y++) {
            uint32_t a = f->group[x], b = f->group[y];
            unsigned char *o;
            if (a == b) continue;   /* one id twice under a key (a meta-sketch window repeated) */
            if (a > b) { uint32_t t = a; a = b; b = t; }
            o = f->out + SH_PAIR_RECORD * f->no;
            sh_store_be32(o, a);
            sh_store_be32(o + 4, b);
            sh_store_le32(o + 8, 1);
            f->st->pair_records++;
            if (++f->no == CHUNK) {
                sh_status s = sh_extsort_add(c->pairs, f->out, f->no, err);
                if (s != SH_OK) return s;
                f->no = 0;
            }
        }
    return SH_OK;
}

static int push_id(former *f, uint32_t id)
{
    if (f->over) return 1;
    if (f->c->max_df && f->g == f->c->max_df) { f->over = 1; return 1; }
    if (f->g == f->cap) {
        size_t cap = f->cap ? 2 * f->cap : 1024;
        uint32_t *p = (uint32_t *)realloc(f->group, cap * sizeof *p);
        if (!p) return 0;
        f->group = p;
        f->cap = cap;
    }
    f->group[f->g++] = id;
    return 1;
}

sh_status sh_form_pairs(sh_extsort *keys, const sh_form_config *c, sh_form_stats *st, sh_error *err)
{
    const size_t ks = c->key_size, rs = ks + 4;
    former f;
    unsigned char *in = (unsigned char *)malloc((size_t)CHUNK * rs), last[8];
    uint64_t read = 0;
    size_t n, i;
    int have = 0;
    sh_status s = SH_OK;
    memset(&f, 0, sizeof f);
    f.c = c;
    f.st = st;
    if (c->pairs) f.out = (unsigned char *)malloc((size_t)CHUNK * SH_PAIR_RECORD);
    if (!in || (c->pairs && !f.out) || (ks != 4 && ks != 8)) {
        s = ks != 4 && ks != 8 ? sh_error_set(err, SH_EINVAL, 0, "pair formation takes 4- or 8-byte keys, not %zu", ks)
                               : sh_error_set(err, SH_ENOMEM, 0, "out of memory forming pairs");
        goto done;
    }
    for (;;) {
        if ((s = sh_extsort_read(keys, in, CHUNK, &n, err)) != SH_OK) goto done;
        if (n == 0) break;
        read += n;
        st->records += n;
        if (c->progress && (read / CHUNK) % 8 == 0) c->progress(c->progress_ud, c->progress_step, read, c->progress_total);
        for (i = 0; i < n; i++) {
            const unsigned char *rec = in + rs * i;
            if (!have || memcmp(rec, last, ks) != 0) {
                if (have && (s = close_group(&f, err)) != SH_OK) goto done;
                memcpy(last, rec, ks);
                have = 1;
                f.g = 0;
                f.over = 0;
            }
            if (!push_id(&f, sh_load_be32(rec + ks))) { s = sh_error_set(err, SH_ENOMEM, 0, "out of memory forming pairs"); goto done; }
        }
    }
    if (have && (s = close_group(&f, err)) != SH_OK) goto done;
    if (f.no && c->pairs) s = sh_extsort_add(c->pairs, f.out, f.no, err);
    if (c->progress) c->progress(c->progress_ud, c->progress_step, read, read);
done:
    free(in);
    free(f.out);
    free(f.group);
    return s;
}

sh_status sh_pairs_write(const char *path, sh_extsort *pairs, int scratch, uint64_t *count, sh_error *err)
{
    sh_recwriter w;
    unsigned char *buf = (unsigned char *)malloc((size_t)CHUNK * SH_PAIR_RECORD);
    sh_pairrec *o = (sh_pairrec *)malloc((size_t)CHUNK * sizeof *o);
    size_t n, i;
    sh_status s;
    if (!buf || !o) { free(buf); free(o); return sh_error_set(err, SH_ENOMEM, 0, "out of memory"); }
    if ((s = sh_recwriter_open(&w, path, SH_MAGIC_PAIRS, sizeof(sh_pairrec), NULL, 0, err)) != SH_OK) goto done;
    w.scratch = scratch == 1;
    w.sync_later = scratch == 2;
    for (;;) {
        if ((s = sh_extsort_read(pairs, buf, CHUNK, &n, err)) != SH_OK) { sh_recwriter_abort(&w); goto done; }
        if (n == 0) break;
        for (i = 0; i < n; i++) {
            const unsigned char *rec = buf + SH_PAIR_RECORD * i;
            o[i].a = sh_pair_a(rec);
            o[i].b = sh_pair_b(rec);
            o[i].shared = sh_pair_count(rec);
        }
        *count += n;
        if ((s = sh_recwriter_append(&w, o, n, err)) != SH_OK) { sh_recwriter_abort(&w); goto done; }
    }
    s = sh_recwriter_commit(&w, err);
done:
    free(buf);
    free(o);
    return s;
}

/* ---- phase 3 in memory ---------------------------------------------------- */

/* v[0..n) ascending, every value <= max; scratch has room for n */
static void sort_u32(uint32_t *v, size_t n, uint32_t max, uint32_t *scratch)
{
    size_t i, j;
    if (n < 64) {
        for (i = 1; i < n; i++) {
            uint32_t x = v[i];
            for (j = i; j > 0 && v[j - 1] > x; j--) v[j] = v[j - 1];
            v[j] = x;
        }
        return;
    }
    {
        /* LSD radix sort, 8-bit digits, as many as max has */
        uint32_t *src = v, *dst = scratch;
        int shift;
        for (shift = 0; shift < 32 && (max >> shift) != 0; shift += 8) {
            size_t cnt[256 + 1];
            memset(cnt, 0, sizeof cnt);
            for (i = 0; i < n; i++) cnt[((src[i] >> shift) & 0xff) + 1]++;
            for (i = 1; i <= 256; i++) cnt[i] += cnt[i - 1];
            for (i = 0; i < n; i++) dst[cnt[(src[i] >> shift) & 0xff]++] = src[i];
            { uint32_t *t = src; src = dst; dst = t; }
        }
        if (src != v) memcpy(v, src, n * sizeof *v);
    }
}

uint64_t sh_form_pairs_memory_need(uint64_t records, uint32_t n)
{
    /* per key record: its id and its group's end (8 B), its place in its id's
     * list (4 B); per id: list start, counter, touched, sort scratch (16 B);
     * the pair records buffer and a group being read */
    return records * 12 + (uint64_t)n * 16 + (uint64_t)CHUNK * (sizeof(sh_pairrec) + 12) + ((uint64_t)1 << 20);
}

typedef struct memform {
    uint32_t *id, *end;       /* kept groups: ids sorted, end[p] = the end of p's group */
    size_t np, cap;
} memform;

/* Counting the pairs: the ids are cut into chunks of at most chunk_ids ids
 * and about CHUNK_WORK counter increments (so at most that many pairs held
 * per chunk, whatever the groups' sizes), each counted on a thread into its
 * own list (sh_par_chunks), a round of ROUND_CHUNKS at a time, the lists
 * written in chunk order (the order of a) */
#define ROUND_CHUNKS 16u
#define CHUNK_WORK 262144u

typedef struct count_out {
    sh_pairrec *v;
    size_t n, cap;
    uint64_t records;        /* <a, b, 1> records the chunk's counts add up */
} count_out;

typedef struct count_job {
    const uint32_t *start, *list, *id, *end;
    uint32_t n;
    const uint32_t *bounds;  /* chunk j: ids bounds[j] .. bounds[j + 1] */
    size_t first;            /* the round's first chunk */
    count_out *out;          /* ROUND_CHUNKS */
} count_job;

typedef struct count_worker {
    count_job *job;
    uint32_t *cnt, *touched, *scratch; /* n + 1 each; cnt all zero between ids */
} count_worker;

static sh_status count_chunk(void *ctx, size_t c, sh_error *err)
{
    count_worker *w = (count_worker *)ctx;
    const count_job *jb = w->job;
    count_out *o = &jb->out[c];
    uint32_t a, lo = jb->bounds[jb->first + c], hi = jb->bounds[jb->first + c + 1];
    o->n = 0;
    o->records = 0;
    for (a = lo; a < hi; a++) {
        size_t nt = 0, k, t;
        for (k = jb->start[a]; k < jb->start[a + 1]; k++) {
            size_t p = jb->list[k], q, e = jb->end[p];
            for (q = p + 1; q < e; q++) {
                uint32_t b = jb->id[q];
                if (b == a) continue; /* one id twice under a key */
                if (w->cnt[b]++ == 0) w->touched[nt++] = b;
            }
        }
        if (!nt) continue;
        sort_u32(w->touched, nt, jb->n - 1, w->scratch);
        if (o->n + nt > o->cap) {
            size_t cap = o->cap ? o->cap : 4096;
            sh_pairrec *g;
            while (cap < o->n + nt) cap *= 2;
            if (!(g = (sh_pairrec *)realloc(o->v, cap * sizeof *g))) {
                for (t = 0; t < nt; t++) w->cnt[w->touched[t]] = 0;
                return sh_error_set(err, SH_ENOMEM, 0, "out of memory forming pairs");
            }
            o->v = g;
            o->cap = cap;
        }
        for (t = 0; t < nt; t++) {
            uint32_t b = w->touched[t];
            sh_pairrec *r = &o->v[o->n++];
            o->records += w->cnt[b];
            r->a = a;
            r->b = b;
            r->shared = w->cnt[b];
            w->cnt[b] = 0;
        }
    }
    return SH_OK;
}

static int cmp_u32(const void *x, const void *y)
{
    uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
    return a < b ? -1 : a > b;
}

static int memform_push(memform *m, const uint32_t *g, size_t n, uint32_t *scratch, size_t scratch_n)
{
    size_t i;
    if (m->np + n > m->cap) {
        size_t cap = m->cap ? m->cap : 65536;
        uint32_t *a, *b;
        while (cap < m->np + n) cap *= 2;
        a = (uint32_t *)realloc(m->id, cap * sizeof *a);
        if (!a) return 0;
        m->id = a;
        b = (uint32_t *)realloc(m->end, cap * sizeof *b);
        if (!b) return 0;
        m->end = b;
        m->cap = cap;
    }
    memcpy(m->id + m->np, g, n * sizeof *g);
    if (n <= scratch_n) sort_u32(m->id + m->np, n, UINT32_MAX, scratch);
    else qsort(m->id + m->np, n, sizeof *g, cmp_u32); /* more ids than documents: one twice */
    for (i = 0; i < n; i++) m->end[m->np + i] = (uint32_t)(m->np + n);
    m->np += n;
    return 1;
}

/* A key's group is complete: kept unless common or alone. 0: out of memory. */
static int close_mem(memform *m, sh_form_stats *st, const uint32_t *group, size_t g, int over, uint32_t *scratch,
                     size_t scratch_n)
{
    st->keys++;
    if (over) { st->dropped++; return 1; }
    return g < 2 || memform_push(m, group, g, scratch, scratch_n);
}

sh_status sh_form_pairs_memory(sh_extsort *keys, const sh_form_config *c, uint32_t n, const char *path,
                               sh_form_stats *st, uint64_t *count, double *t_count, sh_error *err)
{
    const size_t ks = c->key_size, rs = ks + 4;
    unsigned char *in = (unsigned char *)malloc((size_t)CHUNK * rs), last[8];
    uint32_t *group = NULL, *scratch = NULL, *start = NULL, *list = NULL, *bounds = NULL;
    count_out *outs = NULL;
    size_t g = 0, gcap = 0, nrec, i;
    uint64_t read = 0;
    int have = 0, over = 0, wopen = 0;
    memform m;
    sh_recwriter w;
    sh_status s = SH_OK;
    double t0;
    memset(&m, 0, sizeof m);
    scratch = (uint32_t *)malloc(((size_t)n + 1) * sizeof *scratch);
    if (!in || !scratch || (ks != 4 && ks != 8)) {
        s = ks != 4 && ks != 8 ? sh_error_set(err, SH_EINVAL, 0, "pair formation takes 4- or 8-byte keys, not %zu", ks)
                               : sh_error_set(err, SH_ENOMEM, 0, "out of memory forming pairs");
        goto done;
    }
    /* the groups, as sh_form_pairs reads them */
    for (;;) {
        if ((s = sh_extsort_read(keys, in, CHUNK, &nrec, err)) != SH_OK) goto done;
        if (nrec == 0) break;
        read += nrec;
        st->records += nrec;
        if (c->progress && (read / CHUNK) % 8 == 0) c->progress(c->progress_ud, c->progress_step, read, c->progress_total);
        for (i = 0; i < nrec; i++) {
            const unsigned char *rec = in + rs * i;
            if (!have || memcmp(rec, last, ks) != 0) {
                if (have && !close_mem(&m, st, group, g, over, scratch, (size_t)n + 1)) goto nomem;
                memcpy(last, rec, ks);
                have = 1;
                g = 0;
                over = 0;
            }
            if (over) continue;
            if (c->max_df && g == c->max_df) { over = 1; continue; }
            if (g == gcap) {
                size_t cap = gcap ? 2 * gcap : 1024;
                uint32_t *p = (uint32_t *)realloc(group, cap * sizeof *p);
                if (!p) goto nomem;
                group = p;
                gcap = cap;
            }
            group[g++] = sh_load_be32(rec + ks);
        }
    }
    if (have && !close_mem(&m, st, group, g, over, scratch, (size_t)n + 1)) goto nomem;
    if (c->progress) c->progress(c->progress_ud, c->progress_step, read, read);
    free(in);
    in = NULL;
    free(group);
    group = NULL;
    t0 = sh_now();
    /* each id's places in the groups, in order */
    start = (uint32_t *)calloc((size_t)n + 2, sizeof *start);
    list = (uint32_t *)malloc((m.np ? m.np : 1) * sizeof *list);
    if (!start || !list) goto nomem;
    for (i = 0; i < m.np; i++) {
        if (m.id[i] >= n) { s = sh_error_set(err, SH_EFORMAT, 0, "pair formation: id %u of %u", m.id[i], n); goto done; }
        start[m.id[i] + 2]++;
    }
    for (i = 2; i < (size_t)n + 2; i++) start[i] += start[i - 1];
    for (i = 0; i < m.np; i++) list[start[m.id[i] + 1]++] = (uint32_t)i;
    /* now start[a] .. start[a + 1] are a's places */
    if ((s = sh_recwriter_open(&w, path, SH_MAGIC_PAIRS, sizeof(sh_pairrec), NULL, 0, err)) != SH_OK) goto done;
    w.sync_later = c->sync_later;
    wopen = 1;
    {
        /* each id a's pairs (a, b > a) from the groups holding it, counted by
         * chunks of ids on the threads, written in order of a */
        const int threads = c->threads < 1 ? 1 : c->threads > 64 ? 64 : c->threads;
        count_job jb;
        count_worker wk[64];
        void *ctx[64];
        sh_status cst[ROUND_CHUNKS];
        uint64_t first;
        size_t k;
        int t;
        memset(&jb, 0, sizeof jb);
        memset(wk, 0, sizeof wk);
        jb.start = start;
        jb.list = list;
        jb.id = m.id;
        jb.end = m.end;
        const uint32_t chunk_ids = c->chunk_ids ? c->chunk_ids : 512;
        size_t nchunks = 0, bcap = 0;
        uint64_t work = 0;
        uint32_t a, ids = 0;
        jb.n = n;
        jb.out = outs = (count_out *)calloc(ROUND_CHUNKS, sizeof *outs);
        if (!outs) goto nomem;
        /* the chunks: a's increments are the ids after it in its groups */
        for (a = 0; a <= n; a++) {
            if (a == n ? ids > 0 || nchunks == 0 : ids == chunk_ids || work >= CHUNK_WORK) {
                if (nchunks + 2 > bcap) {
                    uint32_t *nb;
                    bcap = bcap ? 2 * bcap : 1024;
                    if (!(nb = (uint32_t *)realloc(bounds, bcap * sizeof *nb))) goto nomem;
                    bounds = nb;
                }
                if (nchunks == 0) bounds[0] = 0;
                bounds[++nchunks] = a;
                ids = 0;
                work = 0;
            }
            if (a == n) break;
            for (k = start[a]; k < start[a + 1]; k++) work += m.end[list[k]] - list[k] - 1;
            ids++;
        }
        jb.bounds = bounds;
        for (t = 0; t < threads; t++) {
            wk[t].job = &jb;
            wk[t].cnt = (uint32_t *)calloc((size_t)n + 1, sizeof *wk[t].cnt);
            wk[t].touched = (uint32_t *)malloc(((size_t)n + 1) * sizeof *wk[t].touched);
            wk[t].scratch = t == 0 ? scratch : (uint32_t *)malloc(((size_t)n + 1) * sizeof *wk[t].scratch);
            ctx[t] = &wk[t];
            if (!wk[t].cnt || !wk[t].touched || !wk[t].scratch) { s = SH_ENOMEM; break; }
        }
        for (first = 0; s == SH_OK && first < nchunks; first += ROUND_CHUNKS) {
            size_t nc = nchunks - first < ROUND_CHUNKS ? (size_t)(nchunks - first) : ROUND_CHUNKS;
            jb.first = (size_t)first;
            if ((s = sh_par_chunks(threads, nc, count_chunk, ctx, cst, err)) != SH_OK) break;
            for (k = 0; k < nc && s == SH_OK; k++) {
                st->pair_records += outs[k].records;
                *count += outs[k].n;
                s = sh_recwriter_append(&w, outs[k].v, outs[k].n, err);
            }
        }
        for (t = 0; t < threads; t++) {
            free(wk[t].cnt);
            free(wk[t].touched);
            if (t) free(wk[t].scratch);
        }
        if (s == SH_ENOMEM) goto nomem;
        if (s != SH_OK) goto done;
    }
    wopen = 0;
    s = sh_recwriter_commit(&w, err);
    *t_count = sh_now() - t0;
    goto done;
nomem:
    s = sh_error_set(err, SH_ENOMEM, 0, "out of memory forming pairs");
done:
    if (wopen) sh_recwriter_abort(&w);
    free(in);
    free(group);
    free(scratch);
    free(start);
    free(list);
    free(bounds);
    if (outs) {
        unsigned k;
        for (k = 0; k < ROUND_CHUNKS; k++) free(outs[k].v);
        free(outs);
    }
    free(m.id);
    free(m.end);
    return s;
}
