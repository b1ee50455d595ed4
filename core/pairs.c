/* Pair formation: see pairs.h for the contract. */
#include "pairs.h"

#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "formats.h"
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
    w.scratch = scratch;
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
    uint32_t *group = NULL, *scratch = NULL, *start = NULL, *list = NULL, *cnt = NULL, *touched = NULL;
    sh_pairrec *out = NULL;
    size_t g = 0, gcap = 0, nrec, i, no = 0;
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
    cnt = (uint32_t *)calloc((size_t)n + 1, sizeof *cnt);
    touched = (uint32_t *)malloc(((size_t)n + 1) * sizeof *touched);
    out = (sh_pairrec *)malloc((size_t)CHUNK * sizeof *out);
    if (!start || !list || !cnt || !touched || !out) goto nomem;
    for (i = 0; i < m.np; i++) {
        if (m.id[i] >= n) { s = sh_error_set(err, SH_EFORMAT, 0, "pair formation: id %u of %u", m.id[i], n); goto done; }
        start[m.id[i] + 2]++;
    }
    for (i = 2; i < (size_t)n + 2; i++) start[i] += start[i - 1];
    for (i = 0; i < m.np; i++) list[start[m.id[i] + 1]++] = (uint32_t)i;
    /* now start[a] .. start[a + 1] are a's places */
    if ((s = sh_recwriter_open(&w, path, SH_MAGIC_PAIRS, sizeof(sh_pairrec), NULL, 0, err)) != SH_OK) goto done;
    wopen = 1;
    {
        uint32_t a;
        for (a = 0; a < n; a++) {
            size_t nt = 0, k, t;
            for (k = start[a]; k < start[a + 1]; k++) {
                size_t p = list[k], q, e = m.end[p];
                for (q = p + 1; q < e; q++) {
                    uint32_t b = m.id[q];
                    if (b == a) continue; /* one id twice under a key */
                    if (cnt[b]++ == 0) touched[nt++] = b;
                }
            }
            if (!nt) continue;
            sort_u32(touched, nt, n - 1, scratch);
            for (t = 0; t < nt; t++) {
                uint32_t b = touched[t];
                st->pair_records += cnt[b];
                out[no].a = a;
                out[no].b = b;
                out[no].shared = cnt[b];
                cnt[b] = 0;
                if (++no == CHUNK) {
                    if ((s = sh_recwriter_append(&w, out, no, err)) != SH_OK) goto done;
                    *count += no;
                    no = 0;
                }
            }
        }
    }
    if (no && (s = sh_recwriter_append(&w, out, no, err)) != SH_OK) goto done;
    *count += no;
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
    free(cnt);
    free(touched);
    free(out);
    free(m.id);
    free(m.end);
    return s;
}
