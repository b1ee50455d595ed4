/* The estimates of phase 4 from the counts of phase 3. "Syntactic
 * Clustering of the Web", phase 3: "for each pair, the number of shingles
 * they have in common" -- pairs.bin's `shared`, the sketch values two
 * documents share, less those of the common shingles phase 3 dropped. For
 * MOD_m sketches (any moduli of one chain) and full sets, the estimator of
 * Theorem 1 (estimate.c) needs nothing else per pair: |MOD_m(A) n MOD_m(B)|
 * is `shared` plus the dropped values both sketches hold, and |MOD_m(A)| is
 * a count of multiples kept per document. So the estimate of every pair
 * costs a few loads instead of a merge of two sketches, and equals
 * sh_sketch_estimate_at's bit for bit (spec/pairest_spec.lua compares the
 * two at every pair). Internal to the engine (decide.c). */
#ifndef SHINGLE_PAIREST_H
#define SHINGLE_PAIREST_H

#include "run.h"

/* Up to this many dropped values, a document's are a bitmap (a pair's in
 * common: a few AND and popcounts), else a list (a merge). */
#define SH_PAIREST_BITMAP 512

typedef struct sh_pairest_doc {
    uint32_t n;               /* its sketch values */
    uint8_t steps;            /* MOD sketches: its modulus steps down the run's chain (else 0) */
    uint8_t dropped;          /* 1: it holds a dropped value */
    uint16_t unused;
} sh_pairest_doc;             /* 8 bytes: the one random read of most pairs */

typedef struct sh_pairest {
    sh_pairest_doc *doc;      /* per document of the run */
    uint32_t *cm_at;          /* per document: where its counts of multiples start in cm */
    uint32_t *cm;             /* per document, for levels 0 .. steps - 1: its sketch values that are
                               * multiples of the modulus that many steps down the chain */
    uint32_t *dr_at;          /* per document (n + 1): its dropped values, at dr + dr_at[i] (a list)
                               * or at bm + words * dr_at[i] (a bitmap) */
    uint32_t *dr;             /* the dropped (common) values each document holds, as indices into
                               * them in ascending order (many dropped values), or NULL */
    uint64_t *bm;             /* the same as a bitmap of `words` words per document that holds any
                               * (few dropped values: SH_PAIREST_BITMAP at most), or NULL */
    size_t words;
} sh_pairest;

/* Prepare the estimates of the pairs p[0..n_pairs) of run r (opened with
 * its sketch values), whose `shared` counts phase 3 made with max_df (0: no
 * common shingle dropped). *usable = 1 when they give every pair's estimate
 * exactly; 0 (nothing to free) when the run's sketches are of another kind
 * (MIN_s: the count alone does not give the merged estimator), a sketch
 * holds a value twice, a pair names a document phase 2 left out, or the
 * counts are not phase 3's with max_df over these sketches: their sum is
 * checked against sum over the kept values of C(df, 2). The caller then
 * estimates from the sketches. SH_ENOMEM only. */
sh_status sh_pairest_open(sh_pairest *pe, const sh_run *r, const sh_pairrec *p, uint64_t n_pairs, uint32_t max_df,
                          int *usable, sh_error *err);

/* The estimate of pair p, as sh_sketch_estimate_at gives it from the two
 * sketches. */
void sh_pairest_estimate(const sh_pairest *pe, const sh_pairrec *p, sh_estimate *e);

void sh_pairest_free(sh_pairest *pe);

/* One document's entry *x from its sketch values v[0..n), `steps` down the
 * chain of moduli mods[0..steps] (MOD sketches: mods[j] = sh_mod_step(m, j);
 * full sets: steps 0), with its counts of multiples of the larger moduli
 * into cm[0..steps). 1 when the counts give its pairs' estimates (strictly
 * ascending values, each a multiple of its own modulus), else 0 with x->n =
 * 0. sh_pairest_open makes a run's entries with it; an index add
 * (core/index.c, "pairs from counts") makes its documents'. */
int sh_pairest_doc_of(sh_pairest_doc *x, uint32_t *cm, const uint64_t *v, uint32_t n, uint32_t steps, const uint64_t *mods);

/* The estimate of two documents with entries x, y (counts of multiples cmx,
 * cmy) holding `both` sketch values in common, as sh_sketch_estimate_at
 * gives it from the two sketches (x the first). */
void sh_pairest_estimate_of(const sh_pairest_doc *x, const uint32_t *cmx, const sh_pairest_doc *y, const uint32_t *cmy,
                            size_t both, sh_estimate *e);

#endif
