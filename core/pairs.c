/* Pair formation: see pairs.h for the contract. */
#include "pairs.h"

#include <stdlib.h>
#include <string.h>

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
