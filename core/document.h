/* One document as phase 1 of "Syntactic Clustering of the Web" keeps it
 * ("The clustering algorithm": "we calculate a sketch for every document";
 * "Identical documents"): its sketch, optionally its full shingle set (for
 * exact verification) and its min-hash signature (for super shingles and
 * LSH), and three fingerprints:
 *
 *   raw    XXH3-64 of its bytes                       identical documents
 *   canon  XXH3-64 of its canonical token ids, as     lexically equivalent
 *          little-endian u64s (the ids sh_shingle_text
 *          makes, or sh_token_id of Lua's tokens)
 *   set    AUG under P_id of the big-endian values    shingle equivalent
 *          of its selected sketch, or of its full set
 *          when that is kept (so that no pair is joined
 *          without its exact resemblance being 1)
 *
 * One function makes all of it from the shingles in an sh_work, whoever
 * canonicalized the document: the thread pool (core/pool.h) for the rule
 * sets of C, the Lua binding for rule sets with Lua steps and feature
 * extractors. So a document gets the same identity, sketch and signature
 * whichever path sketched it. XXH3 rather than a Rabin fingerprint for the
 * first two: they need a strong 64-bit hash, not the algebra, and XXH3 runs
 * at memory speed where a fingerprint of a whole document is one long
 * dependency chain. */
#ifndef SHINGLE_DOCUMENT_H
#define SHINGLE_DOCUMENT_H

#include <stddef.h>
#include <stdint.h>
#include "sketch.h"

typedef struct sh_doc_out {
    sh_status status;     /* SH_OK, or why the document was skipped */
    char err[240];
    uint64_t bytes;       /* raw size */
    uint64_t raw_fp;      /* the three fingerprints above */
    uint64_t canon_fp;
    uint64_t set_fp;
    uint64_t n_tokens;
    sh_sketch *sketch;    /* malloc'ed, the caller frees; NULL on error */
    sh_sketch *full;      /* with want_full: the FULL sketch (every distinct value); malloc'ed */
    uint64_t *sig;        /* with sig_k: k independent minima (min-hash signature); malloc'ed */
} sh_doc_out;

/* The raw, canonical and set fingerprints of a document: its bytes[0..len),
 * its token ids[0..n_ids), and the values set[0..n_set) it is known by
 * (its sketch's, or its full set's). s gives P_id. */
void sh_doc_fingerprints(const sh_shingler *s, const void *bytes, size_t len, const uint64_t *ids, size_t n_ids,
                         const uint64_t *set, size_t n_set, uint64_t *raw, uint64_t *canon, uint64_t *set_fp);

/* Everything of o but status, err and bytes, for a document whose shingles
 * are in w (after sh_shingle_text or sh_shingle_ids; with features = 1, after
 * sh_shingle_features: w->fps holds the feature set) and whose raw bytes are
 * bytes[0..len): its sketch of params's kind (sh_sketch_build), with
 * want_full its full set (the FULL sketch, from which the sketch is then
 * selected), with sig_k its min-hash signature over w->fps, and its
 * fingerprints. Everything o holds is malloc'ed: sh_doc_release frees it.
 * Errors: those of sh_sketch_build, SH_ENOMEM (o then holds nothing). */
sh_status sh_doc_sketch(const sh_shingler *sh, sh_work *w, const sh_sketch_params *params, int features, int want_full,
                        uint32_t sig_k, const void *bytes, size_t len, uint64_t n_tokens, sh_doc_out *o, sh_error *err);

/* Free what o holds (sketch, full set, signature) and clear those fields. */
void sh_doc_release(sh_doc_out *o);

/* The min-hash signature: for j < k, the minimum over the shingles of
 * mix(fp ^ seed_j) with seed_j drawn from seed; k independent permutations as
 * LSH and the 6 x 14 super shingles need. fps need not be distinct. */
void sh_minhash(const uint64_t *fps, size_t n, uint64_t seed, uint32_t k, uint64_t *out);

/* The seed of a shingler's min-hash signatures (sh_minhash), from its seed. */
#define SH_MINHASH_SEED(shingler_seed) ((shingler_seed) ^ 0x243f6a8885a308d3ULL)

#endif
