/* Sketches (Broder 1997, "On the resemblance and containment of documents",
 * Theorem 1 and section 4.1). Shingle fingerprints pass through a bijective
 * mix keyed by the seed (standing for the random permutation pi), and a
 * sketch keeps some of the mixed values, sorted ascending:
 *   SH_SKETCH_MIN     MIN_s: the s smallest (fixed size; resemblance)
 *   SH_SKETCH_MOD     MOD_m: those = 0 mod m (grows with the document; resemblance and containment)
 *   SH_SKETCH_MINMOD  MIN_s of MOD_m (section 4.1, "for further efficiency")
 *   SH_SKETCH_CLASS   V_i: for |S(D)| shingles, i = max(0, floor(log2(|S(D)|/100)))
 *                     and the values = 0 mod 2^i, so 100 to 200 are expected
 *                     (the paper says "between 50 and 100", which would need
 *                     modulus 2^(i+1); we keep 100 to 200)
 *   SH_SKETCH_FULL    every distinct value: the whole shingle set, for exact answers
 * A sketch records everything that decides whether two sketches can be
 * compared: kind, s, m, w, k, option, token mode, the polynomials, the seed and
 * the identity of the canonicalization rules. */
#ifndef SHINGLE_SKETCH_H
#define SHINGLE_SKETCH_H

#include <stddef.h>
#include <stdint.h>
#include "error.h"
#include "shingler.h"

typedef enum sh_sketch_kind {
    SH_SKETCH_MIN = 1, SH_SKETCH_MOD = 2, SH_SKETCH_MINMOD = 3, SH_SKETCH_CLASS = 4, SH_SKETCH_FULL = 5
} sh_sketch_kind;

/* The largest s a sketch may have and the largest m the shingler's options
 * take (and a MOD floor works with): beyond them the sample means nothing, and
 * walking the modulus chain of an m above 2^32 (trial division) is slow. */
#define SH_SKETCH_MAX_S 1000000u
#define SH_SKETCH_MAX_M ((uint64_t)1 << 32)

typedef struct sh_sketch_params {
    uint8_t kind;        /* sh_sketch_kind */
    uint8_t option;      /* sh_option */
    uint8_t k;           /* degree of P */
    uint8_t tokens;      /* sh_token_mode */
    uint32_t w;          /* shingle width; 0 for a sketch of a feature set */
    uint32_t s;          /* MIN, MINMOD */
    uint32_t cls;        /* CLASS: i, the modulus being 2^i */
    uint32_t floor;      /* MOD: a document whose MOD_m sample would hold fewer than
                          * `floor` values expected uses the next smaller modulus of
                          * the chain m, m/p, ... 1 (p its smallest prime factor): short
                          * documents still have samples; 0 = plain MOD_m. Not part of
                          * the identity: moduli of one chain compare (after reducing
                          * to the coarser). */
    uint32_t spare;      /* zero: keeps the struct free of padding, so memcmp compares it */
    uint64_t m;          /* MOD, MINMOD */
    uint64_t seed;
    uint64_t poly;       /* P */
    uint64_t idpoly;     /* P_id */
    uint64_t rules;      /* identity of the canonicalization rules */
} sh_sketch_params;

typedef struct sh_sketch {
    sh_sketch_params p;
    uint64_t n_shingles; /* |S(D)|: distinct shingles (option B) or labelled shingles (option A);
                          * for MOD sketches of texts under option B, shingles with repetition */
    uint64_t n_tokens;
    size_t n;            /* number of values */
    uint64_t v[];        /* sorted ascending, distinct */
} sh_sketch;

/* The permutation pi of Theorem 1: a bijection of 64-bit words keyed by seed. */
static inline uint64_t sh_permute(uint64_t seed, uint64_t fp) { return sh_mix(fp ^ seed); }

/* The modulus chain of MOD_m: m divided k times by its smallest prime factor
 * (1 once exhausted); the number of steps from m down to md (UINT32_MAX if md
 * is not on m's chain); the modulus for a document of n shingles with a floor. */
uint64_t sh_mod_step(uint64_t m, uint32_t k);
uint32_t sh_mod_steps(uint64_t m, uint64_t md);
uint64_t sh_mod_for(uint64_t m, uint32_t least, uint64_t n);

/* The size class of a document with n distinct shingles: max(0, floor(log2(n/100))). */
uint32_t sh_size_class(uint64_t n_shingles);

/* The parameters of a sketch of sh's shingles, which decide what it compares
 * with: kind, s, m, floor and rules from params; option, k, token mode, w,
 * seed and the polynomials from the shingler (w 0 and option B for a
 * feature set). */
void sh_sketch_identity(const sh_shingler *sh, const sh_sketch_params *params, int features, sh_sketch_params *out);

/* Sketch the shingles in w->fps[0..w->n_fps) (or, with features = 1, the set
 * of values w->fps, w being 0 in the result). Option A labels repeated
 * shingles. params supplies kind, s, m, floor and rules; the rest comes from
 * the shingler. *hdr gets the sketch's header (hdr->n values) and the values,
 * sorted, are left in w->vals[0..hdr->n), for the caller to copy where it
 * keeps sketches (a Lua userdata, a file); they stay there until w is used
 * again. */
sh_status sh_sketch_compute(const sh_shingler *sh, sh_work *w, const sh_sketch_params *params, int features,
                            uint64_t n_tokens, sh_sketch *hdr, sh_error *err);

/* The sketch sh_sketch_compute makes, from the distinct mixed values
 * (sh_permute of the shingles, or of option A's labelled shingles)
 * v[0..nv) a caller collected itself (core/stream.c, in blocks): v is
 * reordered, the sketch's values end up sorted in v[0..hdr->n). For a MOD
 * sketch of a text under option B, v need only hold the distinct values
 * divisible by a modulus of m's chain at most the one the document's
 * shingle count picks (the rest are not kept either way). */
sh_status sh_sketch_of_values(const sh_shingler *sh, const sh_sketch_params *params, int features, uint64_t *v,
                              size_t nv, uint64_t n_tokens, sh_sketch *hdr, sh_error *err);

/* The hot loop of MOD_m for a caller's blocks (core/stream.c): sh_permute(seed,
 * fps[i]) for i < n, those divisible by m (m = 1: all) packed in order to
 * out, which has room for n + 8; returns how many. At the given SIMD level
 * (the shingler's), the same values at every level. */
size_t sh_sketch_permute_keep(sh_simd level, uint64_t seed, const uint64_t *fps, size_t n, uint64_t m, uint64_t *out);

/* sh_sketch_compute into a malloc'ed sketch (free with free()). */
sh_status sh_sketch_build(const sh_shingler *sh, sh_work *w, const sh_sketch_params *params,
                          int features, uint64_t n_tokens, sh_sketch **out, sh_error *err);

/* The sketch of kind params->kind (with its s, m) that sh_sketch_build would
 * have made, derived from a FULL sketch of the same document. */
sh_status sh_sketch_select(const sh_sketch *full, const sh_sketch_params *params, sh_sketch **out, sh_error *err);

/* A copy of a CLASS sketch reduced to class j >= its class (section 4.1). */
sh_status sh_sketch_reduce(const sh_sketch *a, uint32_t j, sh_sketch **out, sh_error *err);

/* SH_OK if a and b can be compared, else SH_EMISMATCH with a message naming
 * the parameter that differs and both values. */
sh_status sh_sketch_compatible(const sh_sketch *a, const sh_sketch *b, sh_error *err);

typedef struct sh_estimate {
    double resemblance;   /* estimate of r(A, B) */
    double contain_ab;    /* estimate of c(A, B): how much of A is in B */
    double contain_ba;
    size_t both;          /* sample values in both (numerator) */
    size_t sample;        /* sample size the resemblance is over (denominator) */
} sh_estimate;

/* Theorem 1: the unbiased estimators for the kind of a and b. MIN: the merged
 * estimator over MIN_s(M(A) u M(B)), containment derived from the exact set
 * sizes (|A n B| = r(|A|+|B|)/(1+r)); MOD and CLASS: |L(A) n L(B)| / |L(A) u L(B)|
 * and |L(A) n L(B)| / |L(A)| after reducing to the coarser modulus; FULL:
 * exact. A comparison involving an empty sketch estimates 0. */
sh_status sh_sketch_estimate(const sh_sketch *a, const sh_sketch *b, sh_estimate *e, sh_error *err);
/* An upper bound on the resemblance sh_sketch_estimate_at gives for a and b,
 * from how many values count on each side (MOD and FULL: min / max of the
 * two; 1 where no bound is cheap, 0 where the estimate is 0). A pair whose
 * bound is below a threshold cannot reach it: phase 4 leaves out comparing
 * its values. a and b must be compatible. */
double sh_resemblance_bound(const sh_sketch *a, const uint64_t *av, const sh_sketch *b, const uint64_t *bv);
/* The same for two full sets of na and nb values. */
double sh_resemblance_bound_sizes(uint64_t na, uint64_t nb);
/* The same with the values of a and b at av and bv (a's and b's own v[] are
 * not read): a run's sketches compared where they are mapped, uncopied. */
sh_status sh_sketch_estimate_at(const sh_sketch *a, const uint64_t *av, const sh_sketch *b, const uint64_t *bv,
                                sh_estimate *e, sh_error *err);

/* The MOD_m and full-set estimates from their counts: ka and kb values that
 * count on each side, both of them in common (sh_sketch_estimate_at's
 * last step; phase 4's estimates from pairs.bin take it too, pairest.h). */
void sh_estimate_counts(size_t ka, size_t kb, size_t both, sh_estimate *e);
/* Serialization: a versioned little-endian binary string (docs/formats.md).
 * sh_sketch_deserialize accepts only what sh_sketch_serialize can write: on
 * top of the magic, version, length and checksum, every field is checked
 * against what a writer produces (kind, option, token mode, degree, the
 * reserved byte, w, s, m, floor, the class, the polynomials' degree and
 * constant term, the values ascending and each a multiple of the modulus or
 * class, their count against s and the shingle count); SH_EFORMAT names the
 * field and its byte offset. */
size_t sh_sketch_serialized_size(const sh_sketch *a);
void sh_sketch_serialize(const sh_sketch *a, unsigned char *out);
sh_status sh_sketch_deserialize(const unsigned char *in, size_t n, sh_sketch **out, sh_error *err);
/* The field checks of sh_sketch_deserialize on a sketch decoded elsewhere (a
 * record of a sketch file): SH_OK or SH_EFORMAT saying which field is not
 * what a writer produces (its offset is the field's in the serialized form). */
sh_status sh_sketch_check(const sh_sketch *a, sh_error *err);

/* Section 4.2: the binomial probability that an estimate from s samples of a
 * resemblance r lies within [r - eps, r + eps] (the paper's p(s, r, eps)) ... */
double sh_confidence(uint32_t s, double r, double eps);
/* ... and that it is off by eps or more (the tables of docs/vectors.md). */
double sh_error_probability(uint32_t s, double r, double eps);

#endif
