/* Sketching many documents at once on worker threads (phase 1 of "Syntactic
 * Clustering of the Web", "The clustering algorithm": "we calculate a sketch
 * for every document"). Workers read the files themselves, so reading and
 * sketching both run in parallel; each worker owns an sh_work, the shinglers
 * are shared read-only.
 *
 * Besides the sketch, every document gets the three fingerprints of section
 * "Identical documents": of its raw bytes (identical), of its canonical token
 * sequence (lexically equivalent) and of its selected shingle set (shingle
 * equivalent). */
#ifndef SHINGLE_POOL_H
#define SHINGLE_POOL_H

#include <stddef.h>
#include <stdint.h>
#include "sketch.h"

typedef struct sh_doc_in {
    const char *data;     /* the document, or NULL to read it from path */
    size_t len;
    const char *path;     /* file to read when data is NULL; also named in errors */
    int html;             /* canonicalize with the HTML shingler */
} sh_doc_in;

typedef struct sh_doc_out {
    sh_status status;     /* SH_OK, or why the document was skipped */
    char err[240];
    uint64_t bytes;       /* raw size */
    uint64_t raw_fp;      /* XXH3 of the raw bytes */
    uint64_t canon_fp;    /* XXH3 of the canonical token ids (host byte order) */
    uint64_t set_fp;      /* of the selected sketch values */
    uint64_t n_tokens;
    sh_sketch *sketch;    /* malloc'ed, the caller frees; NULL on error */
    uint64_t *full;       /* with want_full: all distinct values, sorted; malloc'ed */
    size_t n_full;
    uint64_t *sig;        /* with sig_k: k independent minima (min-hash signature); malloc'ed */
} sh_doc_out;

typedef struct sh_pool_config {
    const sh_shingler *text;   /* for plain text */
    const sh_shingler *html;   /* for HTML (may equal text) */
    sh_sketch_params params;   /* kind, s, m, rules */
    int threads;               /* workers, >= 1 (the calling thread is one of them) */
    int want_full;             /* also return the full distinct shingle set */
    uint32_t sig_k;            /* also return k independent minima (0: none) */
    int skip_binary;           /* a NUL byte in the first 8 KiB: skip as binary */
    size_t max_bytes;          /* larger documents are skipped (0: no limit) */
} sh_pool_config;

typedef struct sh_pool sh_pool;

sh_status sh_pool_new(sh_pool **out, const sh_pool_config *cfg, sh_error *err);

/* Sketch docs[0..n) into outs[0..n) on the pool's threads; returns when all
 * are done. Per-document failures (unreadable, binary, invalid UTF-8) are in
 * outs[i].status; the return value is SH_ENOMEM only if threads could not run. */
sh_status sh_pool_run(sh_pool *p, const sh_doc_in *docs, sh_doc_out *outs, size_t n, sh_error *err);

/* Free what sh_pool_run allocated in outs[0..n). */
void sh_pool_release(sh_doc_out *outs, size_t n);

void sh_pool_free(sh_pool *p);

/* The min-hash signature: for j < k, the minimum over the shingles of
 * mix(fp ^ seed_j) with seed_j drawn from seed; k independent permutations as
 * LSH and the 6 x 14 super shingles need. fps need not be distinct. */
void sh_minhash(const uint64_t *fps, size_t n, uint64_t seed, uint32_t k, uint64_t *out);

/* AUG under P_id of the concatenation of the big-endian values v[0..n). */
uint64_t sh_fold_u64(const sh_shingler *s, const uint64_t *v, size_t n);

#endif
