/* Phase 4's estimates from phase 3's shared counts: see pairest.h. */
#include "pairest.h"

#include <stdlib.h>
#include <string.h>

#include "divides.h"
#include "sort.h"

/* the documents phase 2 expanded into <shingle, doc> records (cluster.c, sh_pairs) */
static int in_phase2(const sh_run *r, uint32_t i)
{
    const sh_docrec *d = &r->d[i];
    return d->status == SH_OK && d->rep == i && d->sketch_n > 0;
}

void sh_pairest_free(sh_pairest *pe)
{
    free(pe->doc);
    free(pe->cm_at);
    free(pe->cm);
    free(pe->dr_at);
    free(pe->dr);
    free(pe->bm);
    memset(pe, 0, sizeof *pe);
}

/* index of x in the ascending v[0..n), or n */
static size_t find(const uint64_t *v, size_t n, uint64_t x)
{
    size_t lo = 0, hi = n;
    if (!n || x < v[0] || x > v[n - 1]) return n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (v[mid] < x) lo = mid + 1; else hi = mid;
    }
    return lo < n && v[lo] == x ? lo : n;
}

/* Each document's dropped values drop[0..nd): as bitmaps when they are few, else lists. */
static sh_status dropped_sets(sh_pairest *pe, const sh_run *r, const uint64_t *drop, size_t nd)
{
    size_t ndr = 0, cap = 0;
    uint32_t i, k;
    if (!(pe->dr_at = (uint32_t *)calloc((size_t)r->n + 1, sizeof *pe->dr_at))) return SH_ENOMEM;
    if (nd <= SH_PAIREST_BITMAP) pe->words = (nd + 63) / 64;
    for (i = 0; i < r->n; i++) {
        sh_pairest_doc *x = &pe->doc[i];
        const uint64_t *v = r->v + r->d[i].sketch_off;
        pe->dr_at[i] = pe->words ? 0 : (uint32_t)ndr;
        if (!x->n) continue;
        for (k = 0; k < x->n; k++) {
            size_t j = find(drop, nd, v[k]);
            if (j == nd) continue;
            if (pe->words) {
                if (!x->dropped) {
                    /* its bitmap, the next one */
                    if (ndr == cap) {
                        uint64_t *g;
                        cap = cap ? 2 * cap : 1024;
                        if (cap > UINT32_MAX || !(g = (uint64_t *)realloc(pe->bm, cap * pe->words * 8))) return SH_ENOMEM;
                        pe->bm = g;
                    }
                    pe->dr_at[i] = (uint32_t)ndr;
                    memset(pe->bm + ndr * pe->words, 0, pe->words * 8);
                    ndr++;
                }
                pe->bm[(size_t)pe->dr_at[i] * pe->words + j / 64] |= (uint64_t)1 << (j % 64);
            } else {
                if (ndr == cap) {
                    uint32_t *g;
                    cap = cap ? 2 * cap : 4096;
                    if (cap > UINT32_MAX || !(g = (uint32_t *)realloc(pe->dr, cap * sizeof *g))) return SH_ENOMEM;
                    pe->dr = g;
                }
                pe->dr[ndr++] = (uint32_t)j;
            }
            x->dropped = 1;
        }
    }
    pe->dr_at[r->n] = pe->words ? 0 : (uint32_t)ndr;
    return SH_OK;
}

int sh_pairest_doc_of(sh_pairest_doc *x, uint32_t *cm, const uint64_t *v, uint32_t n, uint32_t steps, const uint64_t *mods)
{
    uint32_t k, lvl;
    memset(x, 0, sizeof *x);
    if (steps > 255) return 0;
    /* every sketch a set of multiples of its own modulus, strictly
     * ascending: then pair formation counted each value two sketches
     * share once, and such a value is a multiple of the common (larger)
     * modulus, as the estimator's intersection takes it */
    for (k = 1; k < n; k++)
        if (v[k] <= v[k - 1]) return 0;
    if (steps) {
        sh_divisor dv = sh_divisor_of(mods[steps]);
        for (k = 0; k < n; k++)
            if (!sh_divides(&dv, v[k])) return 0;
    }
    /* its multiples of each larger modulus of the chain (count_multiples in estimate.c) */
    for (lvl = 0; lvl < steps; lvl++) {
        sh_divisor dv = sh_divisor_of(mods[lvl]);
        uint32_t c = 0;
        for (k = 0; k < n; k++) c += (uint32_t)sh_divides(&dv, v[k]);
        cm[lvl] = c;
    }
    x->n = n;
    x->steps = (uint8_t)steps;
    return 1;
}

sh_status sh_pairest_open(sh_pairest *pe, const sh_run *r, const sh_pairrec *p, uint64_t n_pairs, uint32_t max_df,
                          int *usable, sh_error *err)
{
    const int mod = r->p.kind == SH_SKETCH_MOD;
    uint64_t *vals = NULL, total = 0, nv = 0, kept = 0, shared = 0, q, mods[256];
    size_t nd = 0, ncm = 0, j;
    uint32_t i, max_steps = 0;
    sh_status s = SH_OK;
    memset(pe, 0, sizeof *pe);
    *usable = 0;
    if (!mod && r->p.kind != SH_SKETCH_FULL) return SH_OK;
    if (mod && r->p.m == 0) return SH_OK;
    for (i = 0; i < r->n; i++) {
        const sh_docrec *d = &r->d[i];
        if (!in_phase2(r, i)) continue;
        if (mod && d->mod_steps > max_steps) max_steps = d->mod_steps;
        total += d->sketch_n;
        ncm += mod ? d->mod_steps : 0;
    }
    for (j = 0; j <= max_steps; j++) mods[j] = mod ? sh_mod_step(r->p.m, (uint32_t)j) : 1;
    pe->doc = (sh_pairest_doc *)calloc((size_t)r->n + 1, sizeof *pe->doc);
    pe->cm_at = (uint32_t *)calloc((size_t)r->n + 1, sizeof *pe->cm_at);
    pe->cm = (uint32_t *)malloc((ncm + 1) * sizeof *pe->cm);
    vals = (uint64_t *)malloc((size_t)(total + 1) * 8);
    if (!pe->doc || !pe->cm_at || !pe->cm || !vals || ncm > UINT32_MAX) goto nomem;
    ncm = 0;
    for (i = 0; i < r->n; i++) {
        const sh_docrec *d = &r->d[i];
        const uint64_t *v = r->v + d->sketch_off;
        sh_pairest_doc *x = &pe->doc[i];
        uint32_t steps = mod ? d->mod_steps : 0;
        if (!in_phase2(r, i)) continue; /* n = 0: no pair may name it */
        if (!sh_pairest_doc_of(x, pe->cm + ncm, v, d->sketch_n, steps, mods)) goto unusable;
        memcpy(vals + nv, v, (size_t)d->sketch_n * 8);
        nv += d->sketch_n;
        pe->cm_at[i] = (uint32_t)ncm;
        ncm += steps;
    }
    /* the pairs: of documents phase 2 expanded, their counts summed */
    for (q = 0; q < n_pairs; q++) {
        if (p[q].a >= r->n || p[q].b >= r->n || p[q].a == p[q].b || !pe->doc[p[q].a].n || !pe->doc[p[q].b].n) goto unusable;
        shared += p[q].shared;
    }
    /* the values' document frequencies: those above max_df are the common
     * shingles phase 3 dropped ("Common shingles"); the others gave C(df, 2)
     * pair records each, which is what the shared counts sum to */
    sh_sort_u64(vals, (size_t)nv);
    for (q = 0; q < nv;) {
        uint64_t e = q + 1;
        while (e < nv && vals[e] == vals[q]) e++;
        if (max_df && e - q > max_df) vals[nd++] = vals[q]; /* the dropped, ascending, over the front */
        else kept += (e - q) * (e - q - 1) / 2;
        q = e;
    }
    if (kept != shared) goto unusable;
    if (nd && dropped_sets(pe, r, vals, nd) != SH_OK) goto nomem;
    *usable = 1;
    goto done;
nomem:
    s = sh_error_set(err, SH_ENOMEM, 0, "out of memory for the estimates of %llu pairs", (unsigned long long)n_pairs);
unusable:
    sh_pairest_free(pe);
done:
    free(vals);
    return s;
}

/* bits set in x, without a call where the build has no popcnt instruction */
static inline unsigned ones(uint64_t x)
{
    x = x - ((x >> 1) & 0x5555555555555555ULL);
    x = (x & 0x3333333333333333ULL) + ((x >> 2) & 0x3333333333333333ULL);
    x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0fULL;
    return (unsigned)((x * 0x0101010101010101ULL) >> 56);
}

/* |D_a n D_b|: the dropped values both hold */
static size_t dropped_both(const sh_pairest *pe, uint32_t a, uint32_t b)
{
    size_t c = 0;
    if (pe->words) {
        const uint64_t *u = pe->bm + (size_t)pe->dr_at[a] * pe->words, *w = pe->bm + (size_t)pe->dr_at[b] * pe->words;
        size_t k;
        for (k = 0; k < pe->words; k++) c += ones(u[k] & w[k]);
    } else {
        const uint32_t *x = pe->dr + pe->dr_at[a], *xe = pe->dr + pe->dr_at[a + 1];
        const uint32_t *y = pe->dr + pe->dr_at[b], *ye = pe->dr + pe->dr_at[b + 1];
        while (x < xe && y < ye) {
            if (*x < *y) x++;
            else if (*y < *x) y++;
            else { c++; x++; y++; }
        }
    }
    return c;
}

void sh_pairest_estimate_of(const sh_pairest_doc *x, const uint32_t *cmx, const sh_pairest_doc *y, const uint32_t *cmy,
                            size_t both, sh_estimate *e)
{
    /* the common modulus is the larger one, the fewer steps down the chain;
     * every value of the sketch of that modulus counts (all_count in estimate.c) */
    uint32_t lvl = x->steps < y->steps ? x->steps : y->steps;
    size_t ka = x->steps == lvl ? x->n : cmx[lvl];
    size_t kb = y->steps == lvl ? y->n : cmy[lvl];
    /* as sh_sketch_estimate_at computes them from these counts */
    sh_estimate_counts(ka, kb, both, e);
}

void sh_pairest_estimate(const sh_pairest *pe, const sh_pairrec *p, sh_estimate *e)
{
    const sh_pairest_doc *x = &pe->doc[p->a], *y = &pe->doc[p->b];
    size_t both = (size_t)p->shared + (x->dropped && y->dropped ? dropped_both(pe, p->a, p->b) : 0);
    sh_pairest_estimate_of(x, pe->cm + pe->cm_at[p->a], y, pe->cm + pe->cm_at[p->b], both, e);
}
