/* One document sketched in blocks: see stream.h for the contract. */
#include "stream.h"

#include "grow.h"
#include "sort.h"

#define XXH_STATIC_LINKING_ONLY
#include <xxhash.h>

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* How many values ahead the set insertion prefetches its slot (as sketch.c's distinct()). */
#define AHEAD 8

/* The most slots a set keeps between documents (64 KiB); a larger one is
 * freed. A full set of more values is made in the set's own buffer. */
#define SET_KEEP 8192

enum { MODE_MOD, MODE_SET, MODE_FPS };

typedef struct sink {
    const sh_shingler *sh;
    sh_stream *st;
    int mode;
    uint64_t seed;            /* of the permutation */
    uint64_t m;               /* MOD: the sketch's modulus ... */
    uint32_t floor;           /* ... and floor */
    uint64_t md;              /* MOD: the modulus the tokens so far pick */
    uint64_t low, inv, lim;   /* its test: x % md == 0 iff (x & low) == 0 && x * inv <= lim */
    size_t kept;              /* MOD: keep[0..kept) sorted, distinct and divisible by md */
    uint64_t *sig;            /* running minima, sig_k of them */
    uint32_t sig_k;
} sink;

static uint64_t positions(uint64_t n, uint32_t w)
{
    return n >= w ? n - w + 1 : (n > 0);
}

/* The divisibility test of modulus m = 2^t * q (q odd): the low t bits zero
 * and x / 2^t a multiple of q, i.e. (x * q^-1 mod 2^64) <= (2^64 - 1) / q. */
static void mod_test(uint64_t m, uint64_t *low, uint64_t *inv, uint64_t *lim)
{
    uint64_t q = m, x;
    int t = 0, i;
    while ((q & 1) == 0) { q >>= 1; t++; }
    x = q; /* Newton's iteration for the inverse of q mod 2^64 */
    for (i = 0; i < 5; i++) x *= 2 - q * x;
    *low = t ? ((uint64_t)1 << t) - 1 : 0;
    *inv = x;
    *lim = UINT64_MAX / q;
}

static int divisible(const sink *k, uint64_t x)
{
    return (x & k->low) == 0 && x * k->inv <= k->lim;
}

/* keep[0..keep_n) sorted, made distinct and cut to the multiples of md. */
static void mod_compact(sink *k)
{
    sh_stream *st = k->st;
    size_t i, d = 0;
    sh_sort_u64(st->keep, st->keep_n);
    for (i = 0; i < st->keep_n; i++)
        if (divisible(k, st->keep[i]) && (d == 0 || st->keep[i] != st->keep[d - 1])) st->keep[d++] = st->keep[i];
    st->keep_n = d;
    k->kept = d;
}

/* Ready for the next document: a small set cleared, a large one given back
 * (so that a million small documents after a large one do not each clear
 * its slots). */
static void set_clear(sh_stream *st)
{
    if (st->set && st->set_cap <= SET_KEEP) {
        memset(st->set, 0, st->set_cap * sizeof *st->set);
    } else {
        free(st->set);
        st->set = NULL;
        st->set_cap = 0;
    }
    st->set_n = 0;
    st->zero = 0;
}

static sh_status set_alloc(sh_stream *st, size_t cap)
{
    uint64_t *t = (uint64_t *)calloc(cap, sizeof *t);
    if (!t) return SH_ENOMEM;
    free(st->set);
    st->set = t;
    st->set_cap = cap;
    return SH_OK;
}

/* Room for `more` new values at most 70% full: the set doubles, its values rehashed. */
static sh_status set_room(sh_stream *st, size_t more)
{
    size_t cap = st->set_cap, i;
    uint64_t *old, *t;
    if ((st->set_n + more) * 10 <= cap * 7) return SH_OK;
    while ((st->set_n + more) * 10 > cap * 7) cap *= 2;
    if (!(t = (uint64_t *)calloc(cap, sizeof *t))) return SH_ENOMEM;
    old = st->set;
    for (i = 0; i < st->set_cap; i++) {
        const uint64_t v = old[i];
        size_t h;
        if (!v) continue;
        for (h = (size_t)(v >> 20) & (cap - 1); t[h] != 0; h = (h + 1) & (cap - 1)) {}
        t[h] = v;
    }
    free(old);
    st->set = t;
    st->set_cap = cap;
    return SH_OK;
}

static sh_status take(void *ctx, const uint64_t *ids, size_t n_ids, const uint64_t *fps, size_t nf, uint64_t n_tokens,
                      sh_error *err)
{
    sink *k = (sink *)ctx;
    sh_stream *st = k->st;
    size_t i;
    uint32_t j;
    if (n_ids) XXH3_64bits_update((XXH3_state_t *)st->xxh, ids, n_ids * sizeof *ids);
    if (!nf) return SH_OK;
    for (j = 0; j < k->sig_k; j++) {
        const uint64_t sj = st->seeds[j];
        uint64_t m = k->sig[j];
        for (i = 0; i < nf; i++) {
            const uint64_t v = sh_mix(fps[i] ^ sj);
            m = v < m ? v : m;
        }
        k->sig[j] = m;
    }
    if (k->mode == MODE_FPS) {
        if (!sh_grow((void **)&st->keep, &st->keep_cap, st->keep_n + nf, sizeof *st->keep, 1024))
            return sh_error_set(err, SH_ENOMEM, 0, "out of memory for %zu shingles", st->keep_n + nf);
        memcpy(st->keep + st->keep_n, fps, nf * sizeof *fps);
        st->keep_n += nf;
        return SH_OK;
    }
    if (k->mode == MODE_MOD) {
        const uint64_t md = sh_mod_for(k->m, k->floor, positions(n_tokens, (uint32_t)k->sh->c.w));
        if (md != k->md) {
            /* more shingles, a larger modulus of the chain: its multiples
             * are among those of the smaller one */
            k->md = md;
            mod_test(md, &k->low, &k->inv, &k->lim);
            mod_compact(k);
        }
        if (!sh_grow((void **)&st->keep, &st->keep_cap, st->keep_n + nf + 8, sizeof *st->keep, 1024))
            return sh_error_set(err, SH_ENOMEM, 0, "out of memory for %zu shingles", st->keep_n + nf);
        st->keep_n += sh_sketch_permute_keep(k->sh->level, k->seed, fps, nf, k->md, st->keep + st->keep_n);
        /* repeats (a document of few distinct shingles) are dropped before they pile up */
        if (st->keep_n - k->kept > 65536 && st->keep_n > 2 * k->kept) mod_compact(k);
        return SH_OK;
    }
    /* MODE_SET */
    if (!sh_grow((void **)&st->mixed, &st->mixed_cap, nf + 8, sizeof *st->mixed, 1024) || set_room(st, nf) != SH_OK)
        return sh_error_set(err, SH_ENOMEM, 0, "out of memory for %zu distinct shingles", st->set_n + nf);
    {
        uint64_t *v = st->mixed, *tab = st->set;
        const size_t mask = st->set_cap - 1;
        size_t nv = st->set_n;
        sh_sketch_permute_keep(k->sh->level, k->seed, fps, nf, 1, v);
        for (i = 0; i < nf; i++) {
            const uint64_t x = v[i];
            size_t h;
            if (i + AHEAD < nf) __builtin_prefetch(&tab[(size_t)(v[i + AHEAD] >> 20) & mask]);
            if (x == 0) { st->zero = 1; continue; }
            for (h = (size_t)(x >> 20) & mask; tab[h] != 0 && tab[h] != x; h = (h + 1) & mask) {}
            if (tab[h] == 0) { tab[h] = x; nv++; }
        }
        st->set_n = nv;
    }
    return SH_OK;
}

/* A malloc'ed sketch of header hdr and values v[0..hdr->n). */
static sh_status emit(const sh_sketch *hdr, const uint64_t *v, sh_sketch **out, sh_error *err)
{
    sh_sketch *sk = (sh_sketch *)malloc(sizeof *sk + hdr->n * sizeof(uint64_t));
    if (!sk) return sh_error_set(err, SH_ENOMEM, 0, "out of memory for a sketch of %zu values", hdr->n);
    *sk = *hdr;
    if (hdr->n) memcpy(sk->v, v, hdr->n * sizeof(uint64_t));
    *out = sk;
    return SH_OK;
}

/* The sketch (and full set) from the values collected. */
static sh_status finish(sink *k, sh_work *w, const sh_sketch_params *params, int want_full, uint64_t n_tokens,
                        sh_doc_out *o, sh_error *err)
{
    sh_stream *st = k->st;
    sh_sketch hdr;
    sh_status s;
    if (k->mode == MODE_FPS) {
        /* option A: the whole array, as sh_doc_sketch has it */
        uint64_t *f = w->fps;
        size_t cap = w->cap_fps;
        w->fps = st->keep;
        w->cap_fps = st->keep_cap;
        w->n_fps = st->keep_n;
        st->keep = f;
        st->keep_cap = cap;
        st->keep_n = 0;
        if (want_full) {
            sh_sketch_params fp = *params;
            fp.kind = SH_SKETCH_FULL;
            if ((s = sh_sketch_build(k->sh, w, &fp, 0, n_tokens, &o->full, err)) != SH_OK) return s;
            return sh_sketch_select(o->full, params, &o->sketch, err);
        }
        return sh_sketch_build(k->sh, w, params, 0, n_tokens, &o->sketch, err);
    }
    if (k->mode == MODE_MOD) {
        if (k->kept != st->keep_n) mod_compact(k);
        if ((s = sh_sketch_of_values(k->sh, params, 0, st->keep, st->keep_n, n_tokens, &hdr, err)) != SH_OK) return s;
        return emit(&hdr, st->keep, &o->sketch, err);
    }
    {
        /* MODE_SET: the set's values to its front */
        uint64_t *v = st->set;
        size_t i, nv = 0;
        sh_sketch_params fp = *params;
        for (i = 0; i < st->set_cap; i++)
            if (v[i]) v[nv++] = v[i];
        if (st->zero) v[nv++] = 0; /* room: the set is at most 70% full */
        if (want_full) fp.kind = SH_SKETCH_FULL;
        if (want_full && nv > SET_KEEP) {
            /* a large full set is made where the set was, not copied: the
             * buffer shrunk to the values behind room for the header */
            const size_t hw = offsetof(sh_sketch, v) / sizeof *v;
            uint64_t *b = (uint64_t *)realloc(v, (nv + hw) * sizeof *v);
            if (!b) return sh_error_set(err, SH_ENOMEM, 0, "out of memory for a full set of %zu values", nv);
            memmove(b + hw, b, nv * sizeof *b);
            st->set = NULL; /* the next document makes its own */
            st->set_cap = st->set_n = 0;
            st->zero = 0;
            if ((s = sh_sketch_of_values(k->sh, &fp, 0, b + hw, nv, n_tokens, &hdr, err)) != SH_OK) {
                free(b);
                return s;
            }
            o->full = (sh_sketch *)(void *)b;
            *o->full = hdr;
            return sh_sketch_select(o->full, params, &o->sketch, err);
        }
        if ((s = sh_sketch_of_values(k->sh, &fp, 0, v, nv, n_tokens, &hdr, err)) != SH_OK ||
            (s = emit(&hdr, v, want_full ? &o->full : &o->sketch, err)) != SH_OK)
            return s;
        set_clear(st);
        return want_full ? sh_sketch_select(o->full, params, &o->sketch, err) : SH_OK;
    }
}

sh_status sh_doc_sketch_stream(const sh_shingler *sh, sh_work *w, sh_stream *st, const sh_sketch_params *params,
                               int want_full, uint32_t sig_k, const char *text, size_t tlen, const void *bytes,
                               size_t len, size_t block, sh_doc_out *o, sh_error *err)
{
    sink k;
    uint64_t n_tokens = 0, canon_unused;
    sh_status s;
    uint32_t j;
    memset(&k, 0, sizeof k);
    k.sh = sh;
    k.st = st;
    k.seed = sh->c.seed;
    k.sig_k = sig_k;
    if (sh->c.option == SH_OPTION_A)
        k.mode = MODE_FPS;
    else if (params->kind == SH_SKETCH_MOD && !want_full)
        k.mode = MODE_MOD;
    else
        k.mode = MODE_SET;
    if (!st->xxh && !(st->xxh = XXH3_createState()))
        return sh_error_set(err, SH_ENOMEM, 0, "out of memory");
    XXH3_64bits_reset((XXH3_state_t *)st->xxh);
    st->keep_n = 0;
    k.kept = 0;
    if (k.mode == MODE_MOD) {
        k.m = params->m ? params->m : 1;
        k.floor = params->floor;
        k.md = 1;
        mod_test(1, &k.low, &k.inv, &k.lim);
    } else if (k.mode == MODE_SET && !st->set) {
        /* (a set is left cleared by the document before, set_clear) */
        if (set_alloc(st, 1024) != SH_OK) return sh_error_set(err, SH_ENOMEM, 0, "out of memory");
    }
    if (sig_k) {
        if (st->n_seeds != sig_k || st->seeds_of != sh->c.seed) {
            uint64_t *sd = (uint64_t *)realloc(st->seeds, sig_k * sizeof *sd), state = SH_MINHASH_SEED(sh->c.seed);
            if (!sd) return sh_error_set(err, SH_ENOMEM, 0, "out of memory for a min-hash signature");
            st->seeds = sd;
            for (j = 0; j < sig_k; j++) sd[j] = sh_splitmix_next(&state);
            st->n_seeds = sig_k;
            st->seeds_of = sh->c.seed;
        }
        if (!(k.sig = (uint64_t *)malloc(sig_k * sizeof *k.sig)))
            return sh_error_set(err, SH_ENOMEM, 0, "out of memory for a min-hash signature");
        for (j = 0; j < sig_k; j++) k.sig[j] = UINT64_MAX;
    }
    if ((s = sh_shingle_stream(sh, w, text, tlen, block, take, &k, &n_tokens, err)) != SH_OK ||
        (s = finish(&k, w, params, want_full, n_tokens, o, err)) != SH_OK) {
        free(k.sig);
        sh_doc_release(o);
        if (k.mode == MODE_SET) set_clear(st);
        return s;
    }
    o->n_tokens = n_tokens;
    o->sig = k.sig;
    {
        const sh_sketch *set = o->full ? o->full : o->sketch;
        sh_doc_fingerprints(sh, bytes, len, NULL, 0, set->v, set->n, &o->raw_fp, &canon_unused, &o->set_fp);
        o->canon_fp = XXH3_64bits_digest((XXH3_state_t *)st->xxh);
    }
    return SH_OK;
}

void sh_stream_trim(sh_stream *st)
{
    if (st->keep_cap > ((size_t)1 << 17)) {
        free(st->keep);
        st->keep = NULL;
        st->keep_cap = st->keep_n = 0;
    }
    if (st->mixed_cap > ((size_t)1 << 17)) {
        free(st->mixed);
        st->mixed = NULL;
        st->mixed_cap = 0;
    }
}

void sh_stream_free(sh_stream *st)
{
    free(st->set);
    free(st->keep);
    free(st->mixed);
    free(st->seeds);
    if (st->xxh) XXH3_freeState((XXH3_state_t *)st->xxh);
    memset(st, 0, sizeof *st);
}
