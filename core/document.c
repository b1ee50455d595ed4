/* One document as phase 1 keeps it: see document.h for the contract. */
#include "document.h"

#include <xxhash.h>
#ifdef SH_HAVE_XXH_DISPATCH
#define XXH_DISPATCH_DISABLE_REPLACE 1
#include <xxh_x86dispatch.h>
#endif

#include <stdlib.h>
#include <string.h>

/* XXH3_64bits, with AVX2 where the processor has it (the same hash; a
 * feature set's ids are 8 bytes a feature, a FASTA document's 8 a base)
 * unless the shingler is held to the portable level */
static uint64_t xxh3(const sh_shingler *s, const void *p, size_t n)
{
#ifdef SH_HAVE_XXH_DISPATCH
    if (s->level > SH_SIMD_PORTABLE) return XXH3_64bits_dispatch(p, n);
#endif
    (void)s;
    return XXH3_64bits(p, n);
}

void sh_doc_fingerprints(const sh_shingler *s, const void *bytes, size_t len, const uint64_t *ids, size_t n_ids,
                         const uint64_t *set, size_t n_set, uint64_t *raw, uint64_t *canon, uint64_t *set_fp)
{
    uint64_t f = 0;
    size_t i;
    /* the ids as little-endian bytes: the host's own order (core/formats.h) */
    *raw = xxh3(s, bytes, len);
    *canon = xxh3(s, ids, n_ids * sizeof *ids);
    /* f = (f ^ v) * x^64 for each value (AUG over the big-endian values), two at
     * a time: ((f ^ a) x^64 ^ b) x^64 = (f ^ a) x^128 ^ b x^64, the product being
     * linear; the two table walks are independent, the chain is half as long */
    for (i = 0; i + 1 < n_set; i += 2) f = sh_mulx_apply(&s->id128, f ^ set[i]) ^ sh_mulx_apply(&s->id64, set[i + 1]);
    for (; i < n_set; i++) f = sh_mulx_apply(&s->id64, f ^ set[i]);
    *set_fp = f;
}

void sh_minhash(const uint64_t *fps, size_t n, uint64_t seed, uint32_t k, uint64_t *out)
{
    uint64_t st = seed;
    uint32_t j;
    size_t i;
    for (j = 0; j < k; j++) {
        uint64_t sj = sh_splitmix_next(&st), m = UINT64_MAX;
        for (i = 0; i < n; i++) {
            uint64_t v = sh_mix(fps[i] ^ sj);
            if (v < m) m = v;
        }
        out[j] = m;
    }
}

void sh_doc_release(sh_doc_out *o)
{
    free(o->sketch);
    free(o->full);
    free(o->sig);
    o->sketch = NULL;
    o->full = NULL;
    o->sig = NULL;
}

sh_status sh_doc_sketch(const sh_shingler *sh, sh_work *w, const sh_sketch_params *params, int features, int want_full,
                        uint32_t sig_k, const void *bytes, size_t len, uint64_t n_tokens, sh_doc_out *o, sh_error *err)
{
    sh_status st;
    o->n_tokens = n_tokens;
    if (sig_k) {
        o->sig = (uint64_t *)malloc(sig_k * sizeof *o->sig);
        if (!o->sig) return sh_error_set(err, SH_ENOMEM, 0, "out of memory for a min-hash signature");
        sh_minhash(w->fps, w->n_fps, SH_MINHASH_SEED(sh->c.seed), sig_k, o->sig);
    }
    if (want_full) {
        sh_sketch_params fp = *params;
        fp.kind = SH_SKETCH_FULL;
        if ((st = sh_sketch_build(sh, w, &fp, features, n_tokens, &o->full, err)) != SH_OK ||
            (st = sh_sketch_select(o->full, params, &o->sketch, err)) != SH_OK)
            goto fail;
    } else if ((st = sh_sketch_build(sh, w, params, features, n_tokens, &o->sketch, err)) != SH_OK) {
        goto fail;
    }
    {
        const sh_sketch *set = o->full ? o->full : o->sketch;
        /* (features: sh_shingle_features moved the ids to fps) */
        sh_doc_fingerprints(sh, bytes, len, features ? w->fps : w->ids, w->n_ids, set->v, set->n, &o->raw_fp, &o->canon_fp,
                            &o->set_fp);
    }
    return SH_OK;
fail:
    sh_doc_release(o);
    return st;
}
