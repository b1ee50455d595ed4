/* An in-memory LSH index over sketches (banding, Indyk and Motwani; the
 * parameters chosen as datasketch's MinHashLSH chooses them), for scripts
 * that want near-neighbour queries without a database.
 *
 * Bands from a bottom-s sketch. A MIN_s sketch keeps the s smallest values
 * of one random permutation, not k independent minima, so its values cannot
 * be banded by position. Instead the values are dealt into b classes by a
 * hash of the value (class j = mix(v ^ seed) mod b); band j's key is the r
 * smallest values of class j. The r smallest of class j of A u B all lie in
 * A n B with probability C(|A n B|, r) / C(|A u B|, r), about J^r for a
 * resemblance J, and classes are disjoint, so two documents share at least
 * one band with probability about 1 - (1 - J^r)^b: the S-curve of banding.
 * The r smallest of a class are known from the sketch when the sketch holds
 * r values of the class (it holds a prefix of the permuted order), or when
 * the sketch holds the whole set. Otherwise the band uses the values it has
 * (marked with their number): near-duplicates, truncated alike, still meet.
 * MOD_m sketches are complete samples: a class's r smallest are always
 * known; they are banded at the index's modulus (sketches of a finer
 * modulus of the chain are reduced to it for banding).
 *
 * Containment: a second set of bands with r = 1 (the minimum of each of cb
 * classes): candidates meet with probability 1 - (1 - J)^cb, which stays
 * useful for the low resemblance a containment threshold implies when one
 * document is much larger than the other (c(A, B) >= t gives
 * J >= t|A| / (|B| + (1 - t)|A|)).
 *
 * Candidates are then estimated from the stored sketches (Theorem 1) and
 * filtered by the threshold; the caller gets ids and estimates. Ids are
 * small integers reused after removal. One index per thread. */
#ifndef SHINGLE_LSH_H
#define SHINGLE_LSH_H

#include <stddef.h>
#include <stdint.h>
#include "error.h"
#include "sketch.h"

typedef struct sh_lsh_config {
    uint32_t bands, rows;     /* resemblance banding (b, r); b >= 1, r >= 1 */
    uint32_t cbands;          /* containment bands of one value (0: no containment queries) */
    uint64_t seed;            /* deals values into classes */
} sh_lsh_config;

/* datasketch's choice: the (b, r) with b * r <= budget that minimises
 * wfp * (area under the S-curve below t) + wfn * (area above it, beyond t). */
void sh_lsh_shape(double t, uint32_t budget, double wfp, double wfn, uint32_t *b, uint32_t *r);
/* The S-curve: the probability that two documents of resemblance j share a band. */
double sh_lsh_probability(double j, uint32_t b, uint32_t r);
/* The two areas for (t, b, r), by Simpson's rule. */
void sh_lsh_areas(double t, uint32_t b, uint32_t r, double *fp, double *fn);

typedef struct sh_lsh sh_lsh;

/* params: a sketch (of any number of values) whose parameters every
 * inserted sketch must be comparable with; kinds min, minmod, mod and full.
 * SH_EINVAL for another kind or a bad config. */
sh_status sh_lsh_new(const sh_lsh_config *cfg, const sh_sketch *params, sh_lsh **out, sh_error *err);
void sh_lsh_free(sh_lsh *ix);

/* Insert a copy of s; *id receives its id (reused after removals).
 * SH_EMISMATCH (naming the parameter) for a sketch that cannot be compared
 * with the index's. */
sh_status sh_lsh_insert(sh_lsh *ix, const sh_sketch *s, uint32_t *id, sh_error *err);
/* Remove id: 1 if it was there. */
int sh_lsh_remove(sh_lsh *ix, uint32_t id);
/* The stored sketch of id, or NULL. */
const sh_sketch *sh_lsh_get(const sh_lsh *ix, uint32_t id);
size_t sh_lsh_count(const sh_lsh *ix);
/* One past the largest id in use (ids are < this). */
uint32_t sh_lsh_id_limit(const sh_lsh *ix);

typedef enum sh_lsh_query_kind {
    SH_LSH_RESEMBLANCE = 0,   /* r(q, d) >= t, by the resemblance bands */
    SH_LSH_CONTAINING = 1,    /* c(q, d) >= t: documents q is contained in */
    SH_LSH_CONTAINED = 2      /* c(d, q) >= t: documents contained in q */
} sh_lsh_query_kind;

typedef struct sh_lsh_hit {
    uint32_t id;
    double resemblance, contain_qd, contain_dq; /* c(q, d), c(d, q) */
} sh_lsh_hit;

/* Candidates of q by the bands of the kind, estimated and kept when the
 * kind's score reaches t (all candidates when t < 0), best first, at most
 * max (0: all). *hits is malloc'ed (free it); *n its length; *candidates
 * (if not NULL) how many were estimated. SH_EINVAL for containment queries
 * on an index without containment bands; SH_EMISMATCH for an incomparable q. */
sh_status sh_lsh_query(sh_lsh *ix, const sh_sketch *q, sh_lsh_query_kind kind, double t, size_t max, sh_lsh_hit **hits,
                       size_t *n, size_t *candidates, sh_error *err);

#endif
