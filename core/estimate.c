/* Estimators of Theorem 1 (Broder 1997) and the confidence of section 4.2. */
#include "sketch.h"

#include "divides.h"
#include "intersect.h"

#include <math.h>

static const char *kind_name(int k)
{
    switch (k) {
    case SH_SKETCH_MIN: return "min";
    case SH_SKETCH_MOD: return "mod";
    case SH_SKETCH_MINMOD: return "minmod";
    case SH_SKETCH_CLASS: return "class";
    case SH_SKETCH_FULL: return "full";
    }
    return "unknown";
}

#define DIFF(field, what, fmt, cast) \
    if (a->p.field != b->p.field) \
        return sh_error_set(err, SH_EMISMATCH, 0, "cannot compare sketches made with different " what " (" fmt " and " fmt "): " \
                            "sketch both documents with the same shingler", (cast)a->p.field, (cast)b->p.field)

/* Moduli compare when one divides the other: MOD_m2(MOD_m1(X)) = MOD_m2(X) for m1 | m2. */
static uint64_t common_modulus(uint64_t m1, uint64_t m2)
{
    if (m1 == m2) return m1;
    if (m1 && m2 % m1 == 0) return m2;
    if (m2 && m1 % m2 == 0) return m1;
    return 0;
}

sh_status sh_sketch_compatible(const sh_sketch *a, const sh_sketch *b, sh_error *err)
{
    if (a->p.kind != b->p.kind)
        return sh_error_set(err, SH_EMISMATCH, 0, "cannot compare a %s sketch with a %s sketch: sketch both documents with the same shingler",
                            kind_name(a->p.kind), kind_name(b->p.kind));
    if ((a->p.w == 0) != (b->p.w == 0))
        return sh_error_set(err, SH_EMISMATCH, 0, "cannot compare a sketch of a feature set with a sketch of a text (w = %u and %u)",
                            a->p.w, b->p.w);
    DIFF(w, "shingle widths w", "%u", unsigned);
    DIFF(k, "fingerprint degrees k", "%u", unsigned);
    DIFF(option, "shingling options (0 = B, set; 1 = A, labelled bag)", "%u", unsigned);
    DIFF(tokens, "token modes (0 = rabin, 1 = pad8)", "%u", unsigned);
    /* the seed first: it draws the polynomials, which then differ too */
    DIFF(seed, "seeds", "%llu", unsigned long long);
    DIFF(poly, "polynomials", "0x%llx", unsigned long long);
    DIFF(idpoly, "token-id polynomials", "0x%llx", unsigned long long);
    DIFF(rules, "canonicalization rules", "0x%016llx", unsigned long long);
    /* MIN_s of MOD_m does not commute with a coarser modulus: it needs equal m */
    if (a->p.kind == SH_SKETCH_MINMOD && a->p.m != b->p.m)
        return sh_error_set(err, SH_EMISMATCH, 0, "cannot compare min-of-mod sketches with moduli %llu and %llu: use the same m",
                            (unsigned long long)a->p.m, (unsigned long long)b->p.m);
    if (a->p.kind == SH_SKETCH_MOD && !common_modulus(a->p.m, b->p.m))
        return sh_error_set(err, SH_EMISMATCH, 0, "cannot compare sketches with moduli %llu and %llu: one must divide the other",
                            (unsigned long long)a->p.m, (unsigned long long)b->p.m);
    return SH_OK;
}

/* The merged MIN_s estimator: walk MIN_s(M(A) u M(B)) in order and count the
 * values found in both sketches. Each sketch holds its s smallest values, so
 * the first s of the union are known exactly (Theorem 1, first claim). */
static void min_merge(const uint64_t *a, size_t na, const uint64_t *b, size_t nb, size_t s, sh_estimate *e)
{
    size_t i = 0, j = 0, taken = 0, both = 0;
    while (taken < s && (i < na || j < nb)) {
        if (j >= nb || (i < na && a[i] < b[j])) i++;
        else if (i >= na || b[j] < a[i]) j++;
        else { both++; i++; j++; }
        taken++;
    }
    e->both = both;
    e->sample = taken;
}

/* |X n Y| for sorted sets X, Y (intersect.h: four values at a time where
 * the processor has AVX2) */
static size_t intersection(const uint64_t *a, size_t na, const uint64_t *b, size_t nb)
{
    return sh_intersect_count(a, na, b, nb, SH_SIMD_AUTO);
}

/* Sizes of X' = MOD_m(X), Y' = MOD_m(Y) and of X' n Y' for sorted sets X, Y */
static void mod_counts(const uint64_t *a, size_t na, const uint64_t *b, size_t nb, uint64_t m,
                       size_t *ka, size_t *kb, size_t *both)
{
    size_t i = 0, j = 0, ca = 0, cb = 0, cab = 0;
    if (m == 1) {
        /* every value counts (full sets, plain MOD_1): the intersection only */
        *ka = na; *kb = nb; *both = intersection(a, na, b, nb);
        return;
    }
    {
        sh_divisor v = sh_divisor_of(m);
        while (i < na || j < nb) {
            if (j >= nb || (i < na && a[i] < b[j])) { ca += sh_divides(&v, a[i]); i++; }
            else if (i >= na || b[j] < a[i]) { cb += sh_divides(&v, b[j]); j++; }
            else { int k = sh_divides(&v, a[i]); ca += k; cb += k; cab += k; i++; j++; }
        }
    }
    *ka = ca; *kb = cb; *both = cab;
}

/* mod_counts when every value of the larger list a counts (its sketch's own
 * modulus is the common one: a MOD_m sketch holds multiples of m only): each
 * value of b is looked up in a by bisection, O(nb log na) instead of O(na +
 * nb), the same counts. A large query against the index's small sketches
 * ("On the fly resemblance") is the case it is for. */
static void mod_counts_lookup(const uint64_t *a, size_t na, const uint64_t *b, size_t nb, uint64_t m,
                              size_t *ka, size_t *kb, size_t *both)
{
    size_t j, lo = 0, cb = 0, cab = 0;
    sh_divisor v = sh_divisor_of(m);
    for (j = 0; j < nb; j++) {
        size_t hi = na;
        if (!sh_divides(&v, b[j])) continue;
        cb++;
        /* b is sorted: the next one lies at or after lo */
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (a[mid] < b[j]) lo = mid + 1; else hi = mid;
        }
        if (lo < na && a[lo] == b[j]) cab++;
    }
    *ka = na; *kb = cb; *both = cab;
}

/* Whether every value of a MOD (or FULL) sketch x counts at the common modulus m. */
static int all_count(const sh_sketch *x, uint64_t m)
{
    return m == 1 || (x->p.kind == SH_SKETCH_MOD && x->p.m == m);
}

/* The values of x that are multiples of v's modulus. */
static size_t count_multiples(const sh_divisor *v, const uint64_t *x, size_t n)
{
    size_t i, k = 0;
    for (i = 0; i < n; i++) k += sh_divides(v, x[i]);
    return k;
}

sh_status sh_sketch_estimate_at(const sh_sketch *a, const uint64_t *av, const sh_sketch *b, const uint64_t *bv,
                                sh_estimate *e, sh_error *err)
{
    sh_status st = sh_sketch_compatible(a, b, err);
    e->resemblance = e->contain_ab = e->contain_ba = 0;
    e->both = e->sample = 0;
    if (st != SH_OK) return st;
    if (a->n == 0 || b->n == 0) return SH_OK;
    switch (a->p.kind) {
    case SH_SKETCH_MIN: case SH_SKETCH_MINMOD: {
        size_t s = a->p.s < b->p.s ? a->p.s : b->p.s;
        double r, inter;
        min_merge(av, a->n, bv, b->n, s, e);
        r = e->sample ? (double)e->both / (double)e->sample : 0.0;
        e->resemblance = r;
        /* |A n B| = r (|A| + |B|) / (1 + r), from the exact set sizes */
        inter = r * ((double)a->n_shingles + (double)b->n_shingles) / (1.0 + r);
        e->contain_ab = a->n_shingles ? fmin(1.0, inter / (double)a->n_shingles) : 0.0;
        e->contain_ba = b->n_shingles ? fmin(1.0, inter / (double)b->n_shingles) : 0.0;
        return SH_OK;
    }
    case SH_SKETCH_MOD: case SH_SKETCH_CLASS: case SH_SKETCH_FULL: {
        uint64_t m = 1;
        size_t ka, kb, both;
        int all_a, all_b;
        if (a->p.kind == SH_SKETCH_MOD) m = common_modulus(a->p.m, b->p.m);
        if (a->p.kind == SH_SKETCH_CLASS) m = 1ULL << (a->p.cls > b->p.cls ? a->p.cls : b->p.cls);
        all_a = a->p.kind != SH_SKETCH_CLASS && all_count(a, m);
        all_b = b->p.kind != SH_SKETCH_CLASS && all_count(b, m);
        if (all_a && a->n >= 16 * b->n) {
            mod_counts_lookup(av, a->n, bv, b->n, m, &ka, &kb, &both);
        } else if (all_b && b->n >= 16 * a->n) {
            mod_counts_lookup(bv, b->n, av, a->n, m, &kb, &ka, &both);
        } else if (all_a && all_b) {
            /* full sets, or MOD sketches of one modulus: every value counts */
            ka = a->n;
            kb = b->n;
            both = intersection(av, a->n, bv, b->n);
        } else if (all_a || all_b) {
            /* the side whose own modulus is the common one holds multiples
             * of m only, so a value both hold counts: the plain
             * intersection, and the other side's multiples of m counted
             * apart (mod_counts gives the same counts, a branch per value) */
            sh_divisor v = sh_divisor_of(m);
            ka = all_a ? a->n : count_multiples(&v, av, a->n);
            kb = all_b ? b->n : count_multiples(&v, bv, b->n);
            both = intersection(av, a->n, bv, b->n);
        } else {
            mod_counts(av, a->n, bv, b->n, m, &ka, &kb, &both);
        }
        sh_estimate_counts(ka, kb, both, e);
        return SH_OK;
    }
    }
    return sh_error_set(err, SH_EINVAL, 0, "unknown sketch kind %d", (int)a->p.kind);
}

void sh_estimate_counts(size_t ka, size_t kb, size_t both, sh_estimate *e)
{
    size_t uni = ka + kb - both;
    e->both = both;
    e->sample = uni;
    e->resemblance = uni ? (double)both / (double)uni : 0.0;
    e->contain_ab = ka ? (double)both / (double)ka : 0.0;
    e->contain_ba = kb ? (double)both / (double)kb : 0.0;
}

double sh_resemblance_bound_sizes(uint64_t na, uint64_t nb)
{
    if (na == 0 || nb == 0) return 0.0;
    return na < nb ? (double)na / (double)nb : (double)nb / (double)na;
}

double sh_resemblance_bound(const sh_sketch *a, const uint64_t *av, const sh_sketch *b, const uint64_t *bv)
{
    uint64_t m = 1;
    size_t ka, kb;
    int all_a, all_b;
    if (a->p.kind != b->p.kind || (a->p.kind != SH_SKETCH_MOD && a->p.kind != SH_SKETCH_FULL)) return 1.0;
    if (a->n == 0 || b->n == 0) return 0.0;
    if (a->p.kind == SH_SKETCH_MOD && !(m = common_modulus(a->p.m, b->p.m))) return 1.0;
    all_a = all_count(a, m);
    all_b = all_count(b, m);
    if (!all_a && !all_b) return 1.0;
    {
        /* |X n Y| <= min(|X|, |Y|) and |X u Y| >= max(|X|, |Y|) for the
         * values that count; the one side's multiples counted when needed */
        sh_divisor v = sh_divisor_of(m);
        ka = all_a ? a->n : count_multiples(&v, av, a->n);
        kb = all_b ? b->n : count_multiples(&v, bv, b->n);
    }
    return sh_resemblance_bound_sizes(ka, kb);
}

sh_status sh_sketch_estimate(const sh_sketch *a, const sh_sketch *b, sh_estimate *e, sh_error *err)
{
    return sh_sketch_estimate_at(a, a->v, b, b->v, e, err);
}

/* log C(s, k) r^k (1-r)^(s-k), with the r = 0 and r = 1 edge cases exact */
static double binom_term(uint32_t s, uint32_t k, double r)
{
    double lc;
    if (r <= 0.0) return k == 0 ? 1.0 : 0.0;
    if (r >= 1.0) return k == s ? 1.0 : 0.0;
    lc = lgamma((double)s + 1) - lgamma((double)k + 1) - lgamma((double)(s - k) + 1);
    return exp(lc + k * log(r) + (s - k) * log1p(-r));
}

#define TOL 1e-9 /* s * (r +- eps) computed in floating point: 100 * 0.9 is 90.00000000000001 */

double sh_confidence(uint32_t s, double r, double eps)
{
    double p = 0.0, lo = s * (r - eps) - TOL, hi = s * (r + eps) + TOL;
    uint32_t k;
    for (k = 0; k <= s; k++)
        if (k >= lo && k <= hi) p += binom_term(s, k, r);
    return p > 1.0 ? 1.0 : p;
}

double sh_error_probability(uint32_t s, double r, double eps)
{
    double p = 0.0;
    uint32_t k;
    for (k = 0; k <= s; k++)
        if (fabs((double)k - s * r) >= s * eps - TOL) p += binom_term(s, k, r);
    return p > 1.0 ? 1.0 : p;
}
