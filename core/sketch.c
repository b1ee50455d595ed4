#include "sketch.h"
#include "grow.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "byteorder.h"
#include "formats.h"
#include "sort.h"

#if defined(__GNUC__) || defined(__clang__)
#define PREFETCH(p) __builtin_prefetch(p)
#else
#define PREFETCH(p) ((void)0)
#endif

/* How many values ahead distinct() prefetches its table slot. */
#define AHEAD 8

static sh_status reserve(sh_work *w, size_t n)
{
    if (n > w->cap_vals) {
        size_t nc = w->cap_vals ? w->cap_vals : 256;
        uint64_t *q;
        while (nc < n) nc *= 2;
        q = (uint64_t *)realloc(w->vals, nc * sizeof *q);
        if (!q) return SH_ENOMEM;
        w->vals = q;
        w->cap_vals = nc;
    }
    return SH_OK;
}

static size_t table_cap(size_t n)
{
    size_t cap = 16;
    while (cap < 2 * n) cap *= 2;
    return cap;
}

/* Room for cap slots in w->tab (and in w->cnt with counts), not cleared. */
static sh_status table_slots(sh_work *w, size_t cap, int counts)
{
    if (!sh_grow((void **)&w->tab, &w->tab_cap, cap, sizeof *w->tab, 256)) return SH_ENOMEM;
    if (counts && !sh_grow((void **)&w->cnt, &w->cnt_cap, cap, sizeof *w->cnt, 256)) return SH_ENOMEM;
    return SH_OK;
}

/* Open-addressing table of table_cap(n) slots, cleared. Key 0 marks an empty
 * slot; a real key 0 is tracked by the caller. */
static sh_status table(sh_work *w, size_t n, int counts)
{
    size_t cap = table_cap(n);
    if (table_slots(w, cap, counts) != SH_OK) return SH_ENOMEM;
    memset(w->tab, 0, cap * sizeof *w->tab);
    if (counts) memset(w->cnt, 0, cap * sizeof *w->cnt);
    return SH_OK;
}

static void permute_all(sh_simd level, uint64_t seed, const uint64_t *fps, size_t n, uint64_t *v);

/* Distinct values of pi(fp) (option B or features), or of pi(label(fp, j))
 * for the j-th occurrence of fp (option A), into w->vals. */
static sh_status distinct(const sh_shingler *sh, sh_work *w, int option_a, uint64_t seed)
{
    const size_t n = w->n_fps;
    const size_t cap = table_cap(n), mask = cap - 1;
    const uint64_t *fps = w->fps;
    uint64_t *tab, *vals;
    size_t i, nv = 0;
    int zero_seen = 0;
    uint32_t zero_count = 0;
    if (reserve(w, n) != SH_OK || table(w, n, option_a) != SH_OK) return SH_ENOMEM;
    tab = w->tab;
    vals = w->vals;
    if (!option_a) {
        /* Mix everything first, so that the slot of the value AHEAD places on
         * can be prefetched: once a document has some ten thousand shingles
         * the table outgrows the caches and each probe would wait on memory.
         * vals is then compacted in place (nv <= i), in first-seen order. */
        permute_all(sh->level, seed, fps, n, vals);
        for (i = 0; i < n; i++) {
            uint64_t v = vals[i];
            size_t h;
            if (i + AHEAD < n) PREFETCH(&tab[(size_t)(vals[i + AHEAD] >> 20) & mask]);
            if (v == 0) {
                if (!zero_seen) { zero_seen = 1; vals[nv++] = 0; }
                continue;
            }
            for (h = (size_t)(v >> 20) & mask; tab[h] != 0 && tab[h] != v; h = (h + 1) & mask) {}
            if (tab[h] == 0) { tab[h] = v; vals[nv++] = v; }
        }
    } else {
        /* Option A (Broder 1997, section 2): label each shingle with its
         * occurrence number, then fingerprint (shingle, label) again. */
        uint32_t *cnt = w->cnt;
        for (i = 0; i < n; i++) {
            uint64_t fp = fps[i], key = sh_mix(fp);
            uint32_t label;
            size_t h;
            if (key == 0) {
                label = ++zero_count;
            } else {
                for (h = (size_t)(key >> 20) & mask; tab[h] != 0 && tab[h] != key; h = (h + 1) & mask) {}
                tab[h] = key;
                label = ++cnt[h];
            }
            vals[nv++] = sh_permute(seed, sh_label(sh, fp, label));
        }
    }
    w->n_vals = nv;
    return SH_OK;
}

/* Move the s smallest of v[0..n) to the front (Hoare's selection). */
static void select_smallest(uint64_t *v, size_t n, size_t s)
{
    size_t lo = 0, hi = n - 1;
    while (lo < hi) {
        uint64_t pivot = v[lo + (hi - lo) / 2];
        size_t i = lo, j = hi;
        while (i <= j) {
            while (v[i] < pivot) i++;
            while (v[j] > pivot) j--;
            if (i <= j) {
                uint64_t t = v[i]; v[i] = v[j]; v[j] = t;
                i++;
                if (j == 0) break;
                j--;
            }
        }
        if (s - 1 <= j) hi = j;
        else if (s - 1 >= i) lo = i;
        else break;
    }
}

/* MOD_m's test (keep_mod): x is kept iff (x & low) == 0 and x * inv <= lim. */
static void mod_test(uint64_t m, uint64_t *low, uint64_t *inv, uint64_t *lim)
{
    uint64_t o = m, in;
    unsigned t = 0;
    int j;
    while ((o & 1) == 0) { o >>= 1; t++; }
    *low = ((uint64_t)1 << t) - 1;
    in = o;
    for (j = 0; j < 5; j++) in *= 2 - o * in;
    *inv = in;
    *lim = UINT64_MAX / o;
}

/* Keep the values of v[0..n) that are 0 mod m (m >= 1), in order. With
 * m = o * 2^t, o odd: x is a multiple of m iff its t low bits are 0 and
 * x * o^-1 mod 2^64 <= (2^64 - 1) / o (Granlund and Montgomery 1994,
 * section 9), a multiply instead of a division per value; the store is
 * unconditional, so the loop has no branch to mispredict either. */
static size_t keep_mod(uint64_t *v, size_t n, uint64_t m)
{
    size_t i, k = 0;
    uint64_t inv, lim, low;
    if (m == 0) { /* never passed (check_kind); as before, read as 0 mod 2^64 */
        for (i = 0; i < n; i++) if (v[i] == 0) v[k++] = v[i];
        return k;
    }
    mod_test(m, &low, &inv, &lim);
    for (i = 0; i < n; i++) {
        uint64_t x = v[i];
        v[k] = x;
        k += ((x & low) == 0) & (x * inv <= lim);
    }
    return k;
}

static uint64_t smallest_prime_factor(uint64_t m)
{
    uint64_t d;
    if (m % 2 == 0) return 2;
    for (d = 3; d * d <= m; d += 2)
        if (m % d == 0) return d;
    return m;
}

uint64_t sh_mod_step(uint64_t m, uint32_t k)
{
    while (k-- > 0 && m > 1) m /= smallest_prime_factor(m);
    return m;
}

uint32_t sh_mod_steps(uint64_t m, uint64_t md)
{
    uint32_t k = 0;
    if (m == md) return 0;
    /* Not on the chain without a walk: md must divide m, and a writer makes
     * moduli above 2^32 only without a floor, so never two of one chain.
     * This bounds the walk's trial division to sqrt(2^32) per step: a
     * loaded sketch with a prime modulus near 2^64 made it 2^32 divisions,
     * seconds per comparison or per record of a sketch file (found by
     * core/fuzz/fuzz_sketchfile: 262 bytes took 11 s). */
    if (md == 0 || m % md != 0 || m > SH_SKETCH_MAX_M) return UINT32_MAX;
    while (m != md) {
        if (m <= 1) return UINT32_MAX;
        m /= smallest_prime_factor(m);
        k++;
    }
    return k;
}

uint64_t sh_mod_for(uint64_t m, uint32_t least, uint64_t n)
{
    while (least && m > 1 && n / m < least) m /= smallest_prime_factor(m);
    return m;
}

uint32_t sh_size_class(uint64_t n_shingles)
{
    uint32_t i = 0;
    while (i < 63 && n_shingles / 100 >= (2ULL << i)) i++;
    return i;
}

static sh_status check_kind(const sh_sketch_params *p, sh_error *err)
{
    switch (p->kind) {
    case SH_SKETCH_MIN: case SH_SKETCH_MINMOD:
        if (p->s < 1 || p->s > SH_SKETCH_MAX_S)
            return sh_error_set(err, SH_EINVAL, 0, "sketch size s = %u; use 1 to %u (100 to 200 is the paper's advice)", p->s,
                                SH_SKETCH_MAX_S);
        if (p->kind == SH_SKETCH_MIN) break;
        /* fall through */
    case SH_SKETCH_MOD:
        if (p->m < 1)
            return sh_error_set(err, SH_EINVAL, 0, "modulus m = %llu; use at least 1 (the paper's clustering used 25)",
                                (unsigned long long)p->m);
        /* the floor walks m's chain of divisors by trial division: bounded for m <= 2^32 */
        if (p->kind == SH_SKETCH_MOD && p->floor > 0 && p->m > SH_SKETCH_MAX_M)
            return sh_error_set(err, SH_EINVAL, 0, "modulus m = %llu with a floor; use m up to 2^32, or floor 0",
                                (unsigned long long)p->m);
        break;
    case SH_SKETCH_CLASS: case SH_SKETCH_FULL:
        break;
    default:
        return sh_error_set(err, SH_EINVAL, 0, "unknown sketch kind %d; use min, mod, minmod, class or full", (int)p->kind);
    }
    return SH_OK;
}

/* Move the s smallest of the n > s distinct values v[0..n) to the front (v
 * stays a permutation). The values are mixed, so about 1.25 s + 32 of them
 * fall below (1.25 s + 32) / n of the range: a branch-free pass moves those
 * to the front and the selection runs on them alone. Should fewer than s fall
 * below (a chance of about 1e-6 for s = 200), select among all n. */
static void smallest(uint64_t *v, size_t n, size_t s)
{
    double frac = (1.25 * (double)s + 32) / (double)n;
    if (frac < 0.5) {
        const uint64_t lim = (uint64_t)(frac * 18446744073709551616.0);
        size_t i, k = 0;
        for (i = 0; i < n; i++) {
            uint64_t x = v[i], y = v[k];
            int c = x < lim;
            v[i] = c ? y : x;
            v[k] = c ? x : y;
            k += (size_t)c;
        }
        if (k >= s) { select_smallest(v, k, s); return; }
    }
    select_smallest(v, n, s);
}

/* Shingle positions of a text of n tokens with width w (a short text has one). */
static uint64_t positions(uint64_t n, uint32_t w)
{
    return n >= w ? n - w + 1 : (n > 0);
}

/* The count a MOD_m sketch under option B records and its floor looks at:
 * the shingles of a text with repetition (its shingle positions), the
 * features of a set (w = 0) with repetition (n_tokens, their number). The
 * distinct count would cost a hash probe or a bitmap pass per shingle or
 * feature, and no MOD_m estimator uses it (docs/guide.md). */
static uint64_t mod_count(uint32_t w, uint64_t n_tokens)
{
    return w ? positions(n_tokens, w) : n_tokens;
}

/* Select from the nv distinct values v (reordered in place) the ones kind p
 * keeps: they end up sorted in v[0..hdr->n), and hdr gets the header of the
 * sketch they make. */
static void select_values(sh_sketch_params p, uint64_t *v, size_t nv, uint64_t n_tokens, sh_sketch *hdr)
{
    size_t keep = nv;
    if (p.kind != SH_SKETCH_MIN && p.kind != SH_SKETCH_MINMOD) p.s = 0;
    if (p.kind != SH_SKETCH_MOD && p.kind != SH_SKETCH_MINMOD) p.m = 0;
    if (p.kind != SH_SKETCH_MOD) p.floor = 0;
    p.cls = 0;
    switch (p.kind) {
    case SH_SKETCH_MIN:
        if (nv > p.s) { smallest(v, nv, p.s); keep = p.s; }
        break;
    case SH_SKETCH_MOD:
        /* the floor looks at shingle positions of a text (as mod_sketch does,
         * so both paths pick the same modulus), at the set size of features */
        p.m = sh_mod_for(p.m, p.floor, mod_count(p.w, n_tokens));
        keep = keep_mod(v, nv, p.m);
        break;
    case SH_SKETCH_MINMOD:
        keep = keep_mod(v, nv, p.m);
        if (keep > p.s) { smallest(v, keep, p.s); keep = p.s; }
        break;
    case SH_SKETCH_CLASS:
        p.cls = sh_size_class(nv);
        keep = keep_mod(v, nv, 1ULL << p.cls);
        break;
    default:
        break;
    }
    sh_sort_u64(v, keep);
    hdr->p = p;
    /* MOD sketches of texts count shingles with repetition, as mod_sketch does */
    hdr->n_shingles = (p.kind == SH_SKETCH_MOD && p.option == SH_OPTION_B) ? mod_count(p.w, n_tokens) : nv;
    hdr->n_tokens = n_tokens;
    hdr->n = keep;
}

/* ---- the hot loops of MIN_s and MOD_m, per instruction set level ----------
 * The portable loops are the reference; the AVX-512 ones (core/simd.h) do
 * eight values per instruction where the portable ones do one, and the
 * tests compare them (core/test/test_simd.c). */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(SH_NO_SIMD)
#define SK_X86 1
#include <immintrin.h>
#define ZT __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,bmi,bmi2")))

/* sh_permute(seed, x) in each 64-bit lane (sh_mix, rabin.h). */
ZT static inline __m512i z_permute(__m512i x, __m512i seed)
{
    x = _mm512_add_epi64(_mm512_xor_si512(x, seed), _mm512_set1_epi64((long long)0x9e3779b97f4a7c15ULL));
    x = _mm512_mullo_epi64(_mm512_xor_si512(x, _mm512_srli_epi64(x, 30)), _mm512_set1_epi64((long long)0xbf58476d1ce4e5b9ULL));
    x = _mm512_mullo_epi64(_mm512_xor_si512(x, _mm512_srli_epi64(x, 27)), _mm512_set1_epi64((long long)0x94d049bb133111ebULL));
    return _mm512_xor_si512(x, _mm512_srli_epi64(x, 31));
}


/* sh_permute(seed, fps[i]) for i < n into v, eight at a time; the last
 * ones by masks. */
ZT static void permute_zmm(uint64_t seed, const uint64_t *fps, size_t n, uint64_t *v)
{
    const __m512i sd = _mm512_set1_epi64((long long)seed);
    size_t i;
    for (i = 0; i + 8 <= n; i += 8)
        _mm512_storeu_si512((void *)&v[i], z_permute(_mm512_loadu_si512((const void *)&fps[i]), sd));
    if (i < n) {
        const __mmask8 m = (__mmask8)((1u << (n - i)) - 1);
        _mm512_mask_storeu_epi64(&v[i], m, z_permute(_mm512_maskz_loadu_epi64(m, &fps[i]), sd));
    }
}

/* permute_zmm split at lim: the values below it packed to cand in order,
 * the others to v (each has room for n + 8), as permute_below_ymm; returns
 * how many are below. */
ZT static size_t permute_below_zmm(uint64_t seed, const uint64_t *fps, size_t n, uint64_t lim, uint64_t *v,
                                   uint64_t *cand)
{
    const __m512i sd = _mm512_set1_epi64((long long)seed), vlim = _mm512_set1_epi64((long long)lim);
    size_t i, k = 0, j = 0;
    for (i = 0; i + 8 <= n; i += 8) {
        const __m512i x = z_permute(_mm512_loadu_si512((const void *)&fps[i]), sd);
        const __mmask8 below = _mm512_cmplt_epu64_mask(x, vlim);
        const size_t c = (size_t)__builtin_popcount((unsigned)below);
        /* compressed into registers, then plain stores (permute_keep_mod_zmm) */
        _mm512_storeu_si512((void *)&cand[k], _mm512_maskz_compress_epi64(below, x));
        _mm512_storeu_si512((void *)&v[j], _mm512_maskz_compress_epi64((__mmask8)~below, x));
        k += c;
        j += 8 - c;
    }
    for (; i < n; i++) {
        const uint64_t x = sh_permute(seed, fps[i]);
        cand[k] = x;
        v[j] = x;
        k += x < lim;
        j += x >= lim;
    }
    return k;
}

/* The MOD_m test of keep_mod on eight values at a time; the kept ones are
 * packed to the front of v in order (v has room for n + 8). */
ZT static size_t permute_keep_mod_zmm(uint64_t seed, const uint64_t *fps, size_t n, uint64_t low, uint64_t inv,
                                      uint64_t lim, uint64_t *v)
{
    const __m512i sd = _mm512_set1_epi64((long long)seed), vlow = _mm512_set1_epi64((long long)low);
    const __m512i vinv = _mm512_set1_epi64((long long)inv), vlim = _mm512_set1_epi64((long long)lim);
    size_t i, k = 0;
    for (i = 0; i + 8 <= n; i += 8) {
        __m512i x = z_permute(_mm512_loadu_si512((const void *)&fps[i]), sd);
        __mmask8 keep = _mm512_testn_epi64_mask(x, vlow) & _mm512_cmple_epu64_mask(_mm512_mullo_epi64(x, vinv), vlim);
        /* compress into a register, then a plain store: a compressing store
         * to memory is slow on some processors */
        _mm512_storeu_si512((void *)&v[k], _mm512_maskz_compress_epi64(keep, x));
        k += (size_t)__builtin_popcount((unsigned)keep);
    }
    for (; i < n; i++) {
        uint64_t x = sh_permute(seed, fps[i]);
        v[k] = x;
        k += ((x & low) == 0) & (x * inv <= lim);
    }
    return k;
}

#undef ZT

/* ---- AVX2: four values per instruction, the 64-bit products made of
 * 32-bit ones (AVX2 has no 64-bit multiply) --------------------------------- */
#define YT __attribute__((target("avx2")))

/* a * c mod 2^64 in each lane, c = chi * 2^32 + clo (clo, chi in the low
 * halves of their lanes): alo clo + (ahi clo + alo chi) 2^32 */
YT static inline __m256i y_mul(__m256i a, __m256i clo, __m256i chi)
{
    const __m256i lo = _mm256_mul_epu32(a, clo);
    const __m256i mid = _mm256_add_epi64(_mm256_mul_epu32(_mm256_srli_epi64(a, 32), clo), _mm256_mul_epu32(a, chi));
    return _mm256_add_epi64(lo, _mm256_slli_epi64(mid, 32));
}


/* The 32-bit lane indices that move the kept 64-bit lanes (bits of the
 * index) to the front, in order. */
static const int32_t y_compress[16][8] = {
    { 0, 0, 0, 0, 0, 0, 0, 0 }, { 0, 1, 0, 0, 0, 0, 0, 0 },
    { 2, 3, 0, 0, 0, 0, 0, 0 }, { 0, 1, 2, 3, 0, 0, 0, 0 },
    { 4, 5, 0, 0, 0, 0, 0, 0 }, { 0, 1, 4, 5, 0, 0, 0, 0 },
    { 2, 3, 4, 5, 0, 0, 0, 0 }, { 0, 1, 2, 3, 4, 5, 0, 0 },
    { 6, 7, 0, 0, 0, 0, 0, 0 }, { 0, 1, 6, 7, 0, 0, 0, 0 },
    { 2, 3, 6, 7, 0, 0, 0, 0 }, { 0, 1, 2, 3, 6, 7, 0, 0 },
    { 4, 5, 6, 7, 0, 0, 0, 0 }, { 0, 1, 4, 5, 6, 7, 0, 0 },
    { 2, 3, 4, 5, 6, 7, 0, 0 }, { 0, 1, 2, 3, 4, 5, 6, 7 }
};

/* sh_mix(x ^ seed) in each lane */
YT static inline __m256i y_permute(__m256i x, __m256i sd)
{
    const __m256i c1lo = _mm256_set1_epi64x((long long)(0xbf58476d1ce4e5b9ULL & 0xffffffffULL)),
                  c1hi = _mm256_set1_epi64x((long long)(0xbf58476d1ce4e5b9ULL >> 32));
    const __m256i c2lo = _mm256_set1_epi64x((long long)(0x94d049bb133111ebULL & 0xffffffffULL)),
                  c2hi = _mm256_set1_epi64x((long long)(0x94d049bb133111ebULL >> 32));
    x = _mm256_add_epi64(_mm256_xor_si256(x, sd), _mm256_set1_epi64x((long long)0x9e3779b97f4a7c15ULL));
    x = y_mul(_mm256_xor_si256(x, _mm256_srli_epi64(x, 30)), c1lo, c1hi);
    x = y_mul(_mm256_xor_si256(x, _mm256_srli_epi64(x, 27)), c2lo, c2hi);
    return _mm256_xor_si256(x, _mm256_srli_epi64(x, 31));
}

/* sh_permute(seed, fps[i]) four at a time (MIN_s's first pass): the
 * values below lim packed to cand in order, the others to v in order (each
 * with room for n + 8); returns how many went to cand. */
YT static size_t permute_below_ymm(uint64_t seed, const uint64_t *fps, size_t n, uint64_t lim, uint64_t *v,
                                   uint64_t *cand)
{
    const __m256i sd = _mm256_set1_epi64x((long long)seed), sign = _mm256_set1_epi64x((long long)0x8000000000000000ULL);
    const __m256i vlim = _mm256_xor_si256(_mm256_set1_epi64x((long long)lim), sign);
    size_t i, k = 0, j = 0;
    for (i = 0; i + 4 <= n; i += 4) {
        const __m256i x = y_permute(_mm256_loadu_si256((const __m256i *)(const void *)&fps[i]), sd);
        /* x < lim, unsigned: both sides' sign bits flipped */
        const unsigned m = (unsigned)_mm256_movemask_pd(_mm256_castsi256_pd(
            _mm256_cmpgt_epi64(vlim, _mm256_xor_si256(x, sign))));
        _mm256_storeu_si256((__m256i *)(void *)&cand[k], _mm256_permutevar8x32_epi32(
            x, _mm256_loadu_si256((const __m256i *)(const void *)y_compress[m])));
        _mm256_storeu_si256((__m256i *)(void *)&v[j], _mm256_permutevar8x32_epi32(
            x, _mm256_loadu_si256((const __m256i *)(const void *)y_compress[m ^ 15])));
        k += (size_t)__builtin_popcount(m);
        j += 4 - (size_t)__builtin_popcount(m);
    }
    for (; i < n; i++) {
        const uint64_t x = sh_permute(seed, fps[i]);
        cand[k] = x;
        v[j] = x;
        k += x < lim;
        j += x >= lim;
    }
    return k;
}

/* sh_permute(seed, fps[i]) for i < n into v, six at a time: four in a
 * vector register and two on the integer units, whose multiplier the
 * vector loop leaves idle (AVX2 has no 64-bit multiply: y_mul takes three
 * products of 32 bits). */
YT static void permute_ymm(uint64_t seed, const uint64_t *fps, size_t n, uint64_t *v)
{
    const __m256i sd = _mm256_set1_epi64x((long long)seed);
    size_t i;
    for (i = 0; i + 6 <= n; i += 6) {
        const uint64_t a = sh_permute(seed, fps[i + 4]), b = sh_permute(seed, fps[i + 5]);
        _mm256_storeu_si256((__m256i *)(void *)&v[i], y_permute(_mm256_loadu_si256((const __m256i *)(const void *)&fps[i]), sd));
        v[i + 4] = a;
        v[i + 5] = b;
    }
    for (; i < n; i++) v[i] = sh_permute(seed, fps[i]);
}

/* The MOD_m test of keep_mod on four values at a time, as
 * permute_keep_mod_zmm; the kept ones are packed to the front of v in order
 * (v has room for n + 8). */
YT static size_t permute_keep_mod_ymm(uint64_t seed, const uint64_t *fps, size_t n, uint64_t low, uint64_t inv,
                                      uint64_t lim, uint64_t *v)
{
    const __m256i sd = _mm256_set1_epi64x((long long)seed), sign = _mm256_set1_epi64x((long long)0x8000000000000000ULL);
    const __m256i vlow = _mm256_set1_epi64x((long long)low), vlim = _mm256_xor_si256(_mm256_set1_epi64x((long long)lim), sign);
    const __m256i ilo = _mm256_set1_epi64x((long long)(inv & 0xffffffffULL)), ihi = _mm256_set1_epi64x((long long)(inv >> 32));
    size_t i, k = 0;
    /* six at a time, as permute_ymm: values i .. i + 3 in the vector
     * register, i + 4 and i + 5 on the integer units, kept in order */
    for (i = 0; i + 6 <= n; i += 6) {
        /* sh_permute: sh_mix(x ^ seed) */
        const __m256i x = y_permute(_mm256_loadu_si256((const __m256i *)(const void *)&fps[i]), sd);
        const uint64_t a = sh_permute(seed, fps[i + 4]), b = sh_permute(seed, fps[i + 5]);
        __m256i keep;
        unsigned m;
        /* (x & low) == 0 and x * inv <= lim (unsigned: both sides' sign bits flipped) */
        keep = _mm256_andnot_si256(_mm256_cmpgt_epi64(_mm256_xor_si256(y_mul(x, ilo, ihi), sign), vlim),
                                   _mm256_cmpeq_epi64(_mm256_and_si256(x, vlow), _mm256_setzero_si256()));
        m = (unsigned)_mm256_movemask_pd(_mm256_castsi256_pd(keep));
        _mm256_storeu_si256((__m256i *)(void *)&v[k], _mm256_permutevar8x32_epi32(
            x, _mm256_loadu_si256((const __m256i *)(const void *)y_compress[m])));
        k += (size_t)__builtin_popcount(m);
        v[k] = a;
        k += ((a & low) == 0) & (a * inv <= lim);
        v[k] = b;
        k += ((b & low) == 0) & (b * inv <= lim);
    }
    for (; i < n; i++) {
        uint64_t x = sh_permute(seed, fps[i]);
        v[k] = x;
        k += ((x & low) == 0) & (x * inv <= lim);
    }
    return k;
}
#undef YT
#endif

/* The number of distinct values among l[0..nl), by hashing into tab
 * (table_cap(nl) slots). */
static size_t hash_distinct(const uint64_t *l, size_t nl, uint64_t *tab)
{
    const size_t cap = table_cap(nl), mask = cap - 1;
    size_t i, nd = 0;
    int zero = 0;
    memset(tab, 0, cap * sizeof *tab);
    for (i = 0; i < nl; i++) {
        const uint64_t x = l[i];
        size_t h;
        if (x == 0) {
            nd += !zero;
            zero = 1;
            continue;
        }
        for (h = (size_t)(x >> 20) & mask; tab[h] != 0 && tab[h] != x; h = (h + 1) & mask) {}
        if (tab[h] == 0) {
            tab[h] = x;
            nd++;
        }
    }
    return nd;
}

/* count_distinct's bits: 2^b >= 8 n (at least 64), from 4,097 to FIRST_MAX
 * values 4 n (first[] is then past the L1 cache anyway, and a smaller bitmap
 * stays in it). Above FIRST_MAX, 8 n, not 32 n: a document of 200,000
 * shingles then has a bitmap of 256 KB, in the L2 cache, not of 1 MB, and
 * the twice as many suspects cost less than the misses did (text over 400
 * KB: 28 -> 23 cycles a shingle, docs/benchmarks.md). */
#define FIRST_MAX ((size_t)65535)
static unsigned distinct_bits(size_t n)
{
    unsigned b = 6;
    const size_t per = n <= 4096 || n > FIRST_MAX ? 8 : 4;
    while (b < 63 && ((size_t)1 << b) < per * n) b++;
    return b;
}

/* Words of scratch count_distinct needs for n values. */
static size_t distinct_scratch(size_t n)
{
    const size_t slots = (size_t)1 << distinct_bits(n), words = slots / 64;
    if (n <= FIRST_MAX) return words + (slots + 1 + 3) / 4 + 2 * n + table_cap(n);
    return 2 * words + 2 * n + table_cap(n);
}

/* The number of distinct values among v[0..n). Without a branch
 * per value that depends on the data (a hash table mispredicts on every
 * collision, about one value in three): each value's top b bits pick a bit
 * of a bitmap, and a value whose bit was already set is a suspect, a
 * repeat or a value that only shares the bit.
 * Up to FIRST_MAX values (2^b >= 8 n or 4 n), the index of the first value of each
 * bit is kept (first[], 16 bits; a value whose bit is set writes to a spare
 * slot instead, so the store needs no branch): the values that are first of
 * their bit are distinct, a suspect equal to its bit's first value is a
 * repeat, and the other suspects (about n / 16 or n / 8 of them) are made distinct
 * by hashing, none of them being equal to a first value.
 * Above (2^b >= 8 n: first[] would outgrow the caches), every repeat is a
 * suspect, so the distinct count is n less the repeats among the values
 * whose bit some suspect has, found by a second pass over v and made
 * distinct by hashing.
 * scratch: distinct_scratch(n) words. */
static inline __attribute__((always_inline)) size_t count_distinct_body(const uint64_t *v, size_t n, uint64_t *scratch)
{
    const unsigned b = distinct_bits(n);
    const size_t slots = (size_t)1 << b, words = slots / 64;
    size_t i, ns = 0, nl = 0;
    uint64_t *bm = scratch, *sus, *l, *tab;
    memset(bm, 0, words * sizeof *bm);
    if (n <= FIRST_MAX) {
        uint16_t *first = (uint16_t *)(scratch + words);
        sus = scratch + words + (slots + 1 + 3) / 4;
        l = sus + n;
        tab = l + n;
        for (i = 0; i < n; i++) {
            const uint64_t pos = v[i] >> (64 - b), bit = (uint64_t)1 << (pos & 63), word = bm[pos >> 6];
            const size_t set = (word & bit) != 0;
            bm[pos >> 6] = word | bit;
            first[set ? slots : pos] = (uint16_t)i;
            sus[ns] = i;
            ns += set;
        }
        if (ns == 0)
            return n;
        /* the suspects that are not their bit's first value */
        for (i = 0; i < ns; i++) {
            const uint64_t x = v[sus[i]];
            l[nl] = x;
            nl += x != v[first[x >> (64 - b)]];
        }
        return n - ns + (nl ? hash_distinct(l, nl, tab) : 0);
    }
    sus = scratch + 2 * words;
    l = sus + n;
    tab = l + n;
    for (i = 0; i < n; i++) {
        const uint64_t pos = v[i] >> (64 - b), bit = (uint64_t)1 << (pos & 63), word = bm[pos >> 6];
        bm[pos >> 6] = word | bit;
        sus[ns] = pos;
        ns += (word & bit) != 0;
    }
    if (ns == 0)
        return n;
    /* the values whose bit a suspect has */
    memset(bm + words, 0, words * sizeof *bm);
    for (i = 0; i < ns; i++) bm[words + (sus[i] >> 6)] |= (uint64_t)1 << (sus[i] & 63);
    for (i = 0; i < n; i++) {
        const uint64_t x = v[i], pos = x >> (64 - b);
        l[nl] = x;
        nl += (bm[words + (pos >> 6)] >> (pos & 63)) & 1;
    }
    return n - nl + hash_distinct(l, nl, tab);
}

static size_t count_distinct(const uint64_t *v, size_t n, uint64_t *scratch)
{
    return count_distinct_body(v, n, scratch);
}

#ifdef SK_X86
/* The same compiled for AVX2 machines, which all have BMI2: shifts by a
 * register that leave the flags alone, fewer instructions a value. */
__attribute__((target("avx2,bmi,bmi2")))
static size_t count_distinct_bmi2(const uint64_t *v, size_t n, uint64_t *scratch)
{
    return count_distinct_body(v, n, scratch);
}
#endif

/* Sort v[0..n) and drop the repeats: returns how many remain. */
static size_t sorted_distinct(uint64_t *v, size_t n)
{
    size_t i, d = 0;
    sh_sort_u64(v, n);
    for (i = 0; i < n; i++) if (d == 0 || v[i] != v[d - 1]) v[d++] = v[i];
    return d;
}

/* sh_permute(seed, fps[i]) for i < n into v, by the loop of the level. */
static void permute_all(sh_simd level, uint64_t seed, const uint64_t *fps, size_t n, uint64_t *v)
{
    size_t i;
#ifdef SK_X86
    if (level >= SH_SIMD_AVX512) {
        permute_zmm(seed, fps, n, v);
        return;
    }
    if (level == SH_SIMD_AVX2) {
        permute_ymm(seed, fps, n, v);
        return;
    }
#endif
    (void)level;
    for (i = 0; i < n; i++) v[i] = sh_permute(seed, fps[i]);
}

/* ---- MIN_s of a short document: an order-preserving table ----------------
 * Up to ORDERED_MAX values, each value x goes to slot x >> (64 - b) of a
 * table of 2^b >= 8 n slots (plus n past the end, where the last runs may
 * spill), by linear probing that keeps every run of occupied slots sorted:
 * the slot function is monotone, so the table holds the values in ascending
 * order, an equal value is met on the probe (a repeat, not inserted), and the
 * s smallest are the first s occupied slots. A slot holds the value's index
 * in v plus 1 (16 bits; 0: empty): the table is a quarter of what the
 * values would take, which counts, as it is cleared for each document and
 * the stages before the sketch leave little of it in the caches. Most values
 * find their slot free (a slot is taken with a chance under 1/8), so the one
 * branch is mostly predicted. This replaces the split, the sort of the
 * candidates and the distinct count of the others (docs/benchmarks.md,
 * "The selection alone"). */
#define ORDERED_MAX ((size_t)32768) /* below 65,535: the indices are 16 bits */

/* b: 2^b >= 8 n (at least 64) */
static unsigned ordered_bits(size_t n)
{
    unsigned b = 6;
    while (((size_t)1 << b) < 8 * n) b++;
    return b;
}

/* Slots of ordered_min's table for n values (a multiple of 64). */
static size_t ordered_slots(size_t n)
{
    return (((size_t)1 << ordered_bits(n)) + n + 1 + 63) & ~(size_t)63;
}

/* Words of scratch ordered_min needs for n values: the table, then room for
 * the positions of up to n + 32 occupied slots (ordered_positions). */
static size_t ordered_scratch(size_t n)
{
    return ordered_slots(n) / 4 + (n + 32 + 1) / 2;
}

/* Puts the n values v[0..n) in the table (ordered_scratch(n) words of
 * scratch) and returns how many are distinct. Values that crowd a few slots
 * (not the mixed values of any ordinary document) would make the probes
 * quadratic: past 2 n + 64 steps of them it gives up and returns SIZE_MAX
 * (the caller then takes another way). */
static inline __attribute__((always_inline)) size_t ordered_insert(const uint64_t *v, size_t n, uint64_t *scratch)
{
    const unsigned b = ordered_bits(n), sh = 64 - b;
    const size_t slots = ordered_slots(n);
    uint16_t *slot = (uint16_t *)scratch;
    size_t i, d = 0, j, budget = 2 * n + 64;
    memset(slot, 0, slots * sizeof *slot);
    for (i = 0; i < n; i++) {
        const uint64_t x = v[i];
        uint16_t e, cur = (uint16_t)(i + 1);
        j = (size_t)(x >> sh);
        e = slot[j];
        if (e == 0) {
            slot[j] = cur;
            d++;
            continue;
        }
        /* one value in slot j and none after it (most collisions): the
         * two in order by moves chosen without a branch, as the one on
         * which is smaller was mispredicted half the time */
        if (slot[j + 1] == 0) {
            const uint64_t y = v[e - 1];
            int lt;
            if (x == y) continue;
            lt = x < y;
            slot[j] = lt ? cur : e;
            slot[j + 1] = lt ? e : cur;
            d++;
            continue;
        }
        /* the run from j on: past the smaller values; an equal one is a repeat */
        for (; e != 0 && v[e - 1] < x; e = slot[++j])
            if (budget-- == 0) return SIZE_MAX;
        if (e != 0 && v[e - 1] == x) continue;
        /* x goes to j, the larger ones of the run move up one slot */
        for (; e != 0; e = slot[++j]) {
            if (budget-- == 0) return SIZE_MAX;
            slot[j] = cur;
            cur = e;
        }
        slot[j] = cur;
        d++;
    }
    return d;
}

/* The values of the first s occupied slots (there are at least s) to
 * out[0..s): a mask of 64 slots, four at a time (the top bit of each nonzero
 * 16-bit slot, gathered by one product), then its bits. */
static void ordered_first(const uint64_t *v, const uint64_t *scratch, size_t s, uint64_t *out)
{
    const uint16_t *slot = (const uint16_t *)scratch;
    size_t j, k = 0;
    for (j = 0; k < s; j += 64) {
        uint64_t m = 0;
        unsigned q;
        for (q = 0; q < 16; q++) {
            uint64_t g;
            memcpy(&g, slot + j + 4 * q, 8);
            g = (((g & 0x7fff7fff7fff7fffULL) + 0x7fff7fff7fff7fffULL) | g) & 0x8000800080008000ULL;
            m |= (((g >> 15) * 0x1000200040008000ULL) >> 60) << (4 * q);
        }
        while (m && k < s) {
            out[k++] = v[slot[j + (size_t)__builtin_ctzll(m)] - 1];
            m &= m - 1;
        }
    }
}

#ifdef SK_X86
/* Where ordered_first_avx2 lists the occupied slots: past the table. */
static uint32_t *ordered_positions(uint64_t *scratch, size_t n)
{
    return (uint32_t *)(void *)(scratch + ordered_slots(n) / 4);
}

/* ordered_first on AVX2 machines: 32 slots compared with zero at a time,
 * whose byte mask has both bits of an occupied slot set (not 4 slots a step
 * by a product: the extraction was a quarter of the time of a short
 * document's MIN_s, docs/benchmarks.md). The occupied slots' positions are
 * written eight a group whether or not the group has eight (a table of 8 n
 * slots or more has two to four in 32), and a loop finishes the rare group
 * of more: a loop over the bits, whose exit depends on their number, was
 * mispredicted about once a group, and was half of the whole extraction.
 * The values are then read in a loop of its own. */
__attribute__((target("avx2,bmi,bmi2")))
static inline void ordered_first_avx2(const uint64_t *v, uint64_t *scratch, size_t n, size_t s, uint64_t *out)
{
    const uint16_t *slot = (const uint16_t *)scratch;
    uint32_t *pos = ordered_positions(scratch, n);
    const __m256i zero = _mm256_setzero_si256();
    size_t j, k = 0;
    for (j = 0; k < s; j += 32) {
        const uint32_t lo = (uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi16(
            _mm256_loadu_si256((const __m256i *)(const void *)(slot + j)), zero));
        const uint32_t hi = (uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi16(
            _mm256_loadu_si256((const __m256i *)(const void *)(slot + j + 16)), zero));
        /* bit 2i: slot j + i is occupied */
        uint64_t m = ~((uint64_t)hi << 32 | lo) & 0x5555555555555555ULL;
        const size_t c = (size_t)__builtin_popcountll(m);
        uint32_t *p = pos + k, q = (uint32_t)j;
        unsigned t;
        /* (a bit past the last is 64: position j + 32, never read) */
#pragma GCC unroll 8
        for (t = 0; t < 8; t++, m = _blsr_u64(m)) p[t] = q + (uint32_t)(_tzcnt_u64(m) >> 1);
        for (p += 8; m; m = _blsr_u64(m)) *p++ = q + (uint32_t)(_tzcnt_u64(m) >> 1);
        k += c;
    }
    for (k = 0; k < s; k++) out[k] = v[slot[pos[k]] - 1];
}


/* ordered_first on AVX-512 machines with VBMI2 (Ice Lake, Zen 4 and later):
 * the occupied slots of 32 at a time are packed by one compress (vpcompressw
 * into a register, then a plain store), as the value's index they hold, so
 * neither their positions nor the slots are read again. On the Zen 4 machine
 * of session 12 the extraction of a short text's 200 values (386 shingles)
 * took 0.53 ns a shingle against ordered_first_avx2's 0.89. */
__attribute__((target("avx512f,avx512bw,avx512vl,avx512vbmi2,bmi,bmi2")))
static inline void ordered_first_vbmi2(const uint64_t *v, uint64_t *scratch, size_t n, size_t s, uint64_t *out)
{
    const uint16_t *slot = (const uint16_t *)scratch;
    uint16_t *ix = (uint16_t *)(void *)ordered_positions(scratch, n);
    size_t j, k = 0;
    for (j = 0; k < s; j += 32) {
        const __m512i e = _mm512_loadu_si512((const void *)(slot + j));
        const __mmask32 m = _mm512_test_epi16_mask(e, e);
        _mm512_storeu_si512((void *)(ix + k), _mm512_maskz_compress_epi16(m, e));
        k += (size_t)__builtin_popcount((unsigned)m);
    }
    for (k = 0; k < s; k++) out[k] = v[ix[k] - 1];
}
#endif

/* The s smallest of the n values v[0..n), distinct and ascending, to
 * out[0..) (not overlapping v); returns how many (min(s, distinct)), or
 * SIZE_MAX should ordered_insert give up; *nd gets the number of distinct
 * values. scratch: ordered_scratch(n) words. ext: the extraction,
 * ordered_first's (0), ordered_first_avx2's (1) or ordered_first_vbmi2's (2)
 * (a constant where this is inlined). */
static inline __attribute__((always_inline)) size_t ordered_min_body(const uint64_t *v, size_t n, size_t s,
                                                                     uint64_t *out, uint64_t *scratch, size_t *nd,
                                                                     int ext)
{
    const size_t d = ordered_insert(v, n, scratch);
    if (d == SIZE_MAX) return SIZE_MAX;
    *nd = d;
    if (s > d) s = d;
#ifdef SK_X86
    if (ext == 2) {
        ordered_first_vbmi2(v, scratch, n, s, out);
        return s;
    }
    if (ext == 1) {
        ordered_first_avx2(v, scratch, n, s, out);
        return s;
    }
#endif
    (void)ext;
    ordered_first(v, scratch, s, out);
    return s;
}

#ifdef SK_X86
/* ordered_min for AVX2 machines (BMI2 shifts, as count_distinct_bmi2, and
 * ordered_first_avx2). */
__attribute__((target("avx2,bmi,bmi2")))
static size_t ordered_min_bmi2(const uint64_t *v, size_t n, size_t s, uint64_t *out, uint64_t *scratch, size_t *nd)
{
    return ordered_min_body(v, n, s, out, scratch, nd, 1);
}

/* ordered_min for AVX-512 machines with VBMI2 (ordered_first_vbmi2). */
__attribute__((target("avx512f,avx512bw,avx512vl,avx512vbmi2,bmi,bmi2")))
static size_t ordered_min_vbmi2(const uint64_t *v, size_t n, size_t s, uint64_t *out, uint64_t *scratch, size_t *nd)
{
    return ordered_min_body(v, n, s, out, scratch, nd, 2);
}
#endif

static size_t ordered_min(const uint64_t *v, size_t n, size_t s, uint64_t *out, uint64_t *scratch, size_t *nd)
{
    return ordered_min_body(v, n, s, out, scratch, nd, 0);
}

/* ordered_min at the level's loop: ordered_min_bmi2 on AVX2 machines,
 * ordered_min_vbmi2 on AVX-512 ones that have VBMI2 */
static size_t ordered_min_at(sh_simd level, const uint64_t *v, size_t n, size_t s, uint64_t *out, uint64_t *scratch,
                             size_t *nd)
{
#ifdef SK_X86
    if (level >= SH_SIMD_AVX512 && __builtin_cpu_supports("avx512vbmi2"))
        return ordered_min_vbmi2(v, n, s, out, scratch, nd);
    if (level >= SH_SIMD_AVX2) return ordered_min_bmi2(v, n, s, out, scratch, nd);
#endif
    (void)level;
    return ordered_min(v, n, s, out, scratch, nd);
}

/* MIN_s of a text or feature set under option B, the default. Up to
 * ORDERED_MAX shingles (most documents), the values are mixed in one pass
 * and put in order by ordered_min, which also counts the distinct ones.
 * Above (or should ordered_min give up), the values are mixed in one pass,
 * which splits them at the fraction
 * (1.25 s + 32) / n of the range: the candidates below it (about
 * 1.25 s + 32 of them when the shingles are distinct) are sorted and made
 * distinct, and the others are counted (count_distinct). No value of one
 * part equals one of the other, so the distinct count is the sum of the
 * two. Should fewer than s distinct candidates fall
 * below while there are more distinct values (a document of many repeated
 * shingles, such as source code), the fraction is taken of the distinct
 * count instead, and failing that (about one in a million) all are sorted. */
static sh_status min_sketch(const sh_shingler *sh, sh_sketch_params p, sh_work *w, uint64_t n_tokens, sh_sketch *hdr,
                            sh_error *err)
{
    const size_t n = w->n_fps;
    const double frac = n ? (1.25 * (double)p.s + 32) / (double)n : 1;
    const uint64_t lim = frac < 1 ? (uint64_t)(frac * 18446744073709551616.0) : UINT64_MAX;
    size_t i, nv, nc = 0, na = 0, d, k;
    uint64_t *v, *cand;
    (void)sh; /* its level, where there are vector paths */
    /* (8 more: w->vals is never NULL, even for an empty document, where the
     * caller copies the sketch's no values from it) */
    if (reserve(w, 2 * n + 8) != SH_OK)
        return sh_error_set(err, SH_ENOMEM, 0, "out of memory sketching %zu shingles", n);
    /* the candidates end up in w->vals[0..), where the caller takes the
     * sketch; the others go to v */
    cand = w->vals;
    v = w->vals + n;
    if (n <= ORDERED_MAX) {
        permute_all(sh->level, p.seed, w->fps, n, v);
        if (table_slots(w, ordered_scratch(n), 0) != SH_OK)
            return sh_error_set(err, SH_ENOMEM, 0, "out of memory sketching %zu shingles", n);
        k = ordered_min_at(sh->level, v, n, p.s, cand, w->tab, &nv);
        if (k != SIZE_MAX) {
            w->n_vals = k;
            goto header;
        }
    }
#ifdef SK_X86
    if (sh->level >= SH_SIMD_AVX512) {
        nc = permute_below_zmm(p.seed, w->fps, n, lim, v, cand);
        na = n - nc;
    } else if (sh->level == SH_SIMD_AVX2) {
        nc = permute_below_ymm(p.seed, w->fps, n, lim, v, cand);
        na = n - nc;
    } else
#endif
    {
        for (i = 0; i < n; i++) {
            const uint64_t x = sh_permute(p.seed, w->fps[i]);
            cand[nc] = x;
            v[na] = x;
            nc += x < lim;
            na += x >= lim;
        }
    }
    if (table_slots(w, distinct_scratch(na), 0) != SH_OK)
        return sh_error_set(err, SH_ENOMEM, 0, "out of memory sketching %zu shingles", n);
#ifdef SK_X86
    if (sh->level >= SH_SIMD_AVX2)
        nv = count_distinct_bmi2(v, na, w->tab);
    else
#endif
        nv = count_distinct(v, na, w->tab);
    d = sorted_distinct(cand, nc);
    nv += d;
    if (d < p.s && d < nv) {
        /* many repeats: about as many below (1.25 s + 32) / nv of the
         * range, or failing that, all of them; cand[0..d) has every
         * distinct value below lim, and room for the others */
        const double frac2 = (1.25 * (double)p.s + 32) / (double)nv;
        const uint64_t lim2 = frac2 < 1 ? (uint64_t)(frac2 * 18446744073709551616.0) : UINT64_MAX;
        for (i = 0, k = d; i < na; i++) {
            cand[k] = v[i];
            k += v[i] < lim2 || lim2 == UINT64_MAX;
        }
        d = sorted_distinct(cand, k);
        if (d < p.s && d < nv) {
            /* (lim2 < UINT64_MAX: with all of them d would be nv) */
            for (i = 0, k = d; i < na; i++) {
                cand[k] = v[i];
                k += v[i] >= lim2;
            }
            d = sorted_distinct(cand, k);
        }
    }
    w->n_vals = d < p.s ? d : p.s;
header:
    p.m = 0;
    p.floor = 0;
    p.cls = 0;
    hdr->p = p;
    hdr->n_shingles = nv;
    hdr->n_tokens = n_tokens;
    hdr->n = w->n_vals;
    return SH_OK;
}

/* MOD_m of a text or a feature set under option B, the clustering default,
 * in one pass: each shingle (feature) is mixed and tested for divisibility,
 * and only the kept ones (about 1 in m) are sorted and made distinct, into
 * w->vals. The count recorded, and the floor's, is mod_count's: with
 * repetition. */
static sh_status mod_sketch(sh_simd level, sh_sketch_params p, sh_work *w, uint64_t n_tokens, sh_sketch *hdr,
                            sh_error *err)
{
    const size_t n = w->n_fps;
    const uint64_t *fps = w->fps;
    uint64_t inv, lim, low, *v;
    size_t i, k = 0, d;
    /* the kept values go past n + 8 (the room the passes below write in),
     * the sketch to w->vals[0..), where the caller takes it */
    if (reserve(w, 2 * n + 16) != SH_OK) return sh_error_set(err, SH_ENOMEM, 0, "out of memory sketching %zu shingles", n);
    v = w->vals + n + 8;
    p.m = sh_mod_for(p.m, p.floor, mod_count(p.w, n_tokens));
    mod_test(p.m, &low, &inv, &lim);
#ifdef SK_X86
    if (level >= SH_SIMD_AVX512) {
        k = permute_keep_mod_zmm(p.seed, fps, n, low, inv, lim, v);
    } else if (level == SH_SIMD_AVX2) {
        k = permute_keep_mod_ymm(p.seed, fps, n, low, inv, lim, v);
    } else
#endif
    for (i = 0; i < n; i++) {
        uint64_t x = sh_permute(p.seed, fps[i]);
        v[k] = x;
        k += ((x & low) == 0) & (x * inv <= lim);
    }
    /* in order and without repeats: by ordered_min's table (all of them,
     * s = k) up to ORDERED_MAX, which gives up on values crowding a few
     * slots; else, or then, by a sort. The table costs less than the sort
     * whatever the number kept (text under 8 KB, about 15 kept: 6.4 -> 5.9
     * cycles a shingle for the whole selection, docs/benchmarks.md) */
    d = SIZE_MAX;
    if (k > 0 && k <= ORDERED_MAX && table_slots(w, ordered_scratch(k), 0) == SH_OK) {
        size_t nd;
        d = ordered_min_at(level, v, k, k, w->vals, w->tab, &nd);
    }
    if (d == SIZE_MAX) {
        sh_sort_u64(v, k);
        for (i = 0, d = 0; i < k; i++) if (d == 0 || v[i] != w->vals[d - 1]) w->vals[d++] = v[i];
    }
    w->n_vals = d;
    p.s = 0;
    p.cls = 0;
    hdr->p = p;
    hdr->n_shingles = mod_count(p.w, n_tokens);
    hdr->n_tokens = n_tokens;
    hdr->n = d;
    return SH_OK;
}

/* A malloc'ed sketch of header hdr and values v[0..hdr->n). */
static sh_status emit(const sh_sketch *hdr, const uint64_t *v, sh_sketch **out, sh_error *err)
{
    sh_sketch *sk = (sh_sketch *)malloc(sizeof *sk + hdr->n * sizeof(uint64_t));
    if (!sk) return sh_error_set(err, SH_ENOMEM, 0, "out of memory for a sketch of %zu values", hdr->n);
    *sk = *hdr;
    if (hdr->n) memcpy(sk->v, v, hdr->n * sizeof(uint64_t)); /* v may be NULL for no values */
    *out = sk;
    return SH_OK;
}

void sh_sketch_identity(const sh_shingler *sh, const sh_sketch_params *params, int features, sh_sketch_params *out)
{
    *out = *params;
    out->option = (uint8_t)(features ? SH_OPTION_B : sh->c.option);
    out->k = (uint8_t)sh->c.k;
    out->tokens = (uint8_t)sh->c.tokens;
    out->w = features ? 0 : (uint32_t)sh->c.w;
    out->seed = sh->c.seed;
    out->poly = sh->c.poly;
    out->idpoly = sh->c.idpoly;
}

sh_status sh_sketch_compute(const sh_shingler *sh, sh_work *w, const sh_sketch_params *params, int features,
                            uint64_t n_tokens, sh_sketch *hdr, sh_error *err)
{
    sh_sketch_params p;
    sh_status st;
    memset(hdr, 0, sizeof *hdr);
    if ((st = check_kind(params, err)) != SH_OK) return st;
    sh_sketch_identity(sh, params, features, &p);
    if (p.kind == SH_SKETCH_MOD && p.option == SH_OPTION_B)
        return mod_sketch(sh->level, p, w, n_tokens, hdr, err);
    if (p.kind == SH_SKETCH_MIN && p.option == SH_OPTION_B)
        return min_sketch(sh, p, w, n_tokens, hdr, err);
    if (distinct(sh, w, p.option == SH_OPTION_A, p.seed) != SH_OK)
        return sh_error_set(err, SH_ENOMEM, 0, "out of memory sketching %zu shingles", w->n_fps);
    select_values(p, w->vals, w->n_vals, n_tokens, hdr);
    return SH_OK;
}

sh_status sh_sketch_of_values(const sh_shingler *sh, const sh_sketch_params *params, int features, uint64_t *v,
                              size_t nv, uint64_t n_tokens, sh_sketch *hdr, sh_error *err)
{
    sh_sketch_params p;
    sh_status st;
    memset(hdr, 0, sizeof *hdr);
    if ((st = check_kind(params, err)) != SH_OK) return st;
    sh_sketch_identity(sh, params, features, &p);
    select_values(p, v, nv, n_tokens, hdr);
    return SH_OK;
}

size_t sh_sketch_permute_keep(sh_simd level, uint64_t seed, const uint64_t *fps, size_t n, uint64_t m, uint64_t *out)
{
    uint64_t inv, lim, low;
    size_t i, k = 0;
    mod_test(m ? m : 1, &low, &inv, &lim);
#ifdef SK_X86
    if (level >= SH_SIMD_AVX512) return permute_keep_mod_zmm(seed, fps, n, low, inv, lim, out);
    if (level == SH_SIMD_AVX2) return permute_keep_mod_ymm(seed, fps, n, low, inv, lim, out);
#endif
    (void)level;
    for (i = 0; i < n; i++) {
        const uint64_t x = sh_permute(seed, fps[i]);
        out[k] = x;
        k += ((x & low) == 0) & (x * inv <= lim);
    }
    return k;
}

sh_status sh_sketch_build(const sh_shingler *sh, sh_work *w, const sh_sketch_params *params,
                          int features, uint64_t n_tokens, sh_sketch **out, sh_error *err)
{
    sh_sketch hdr;
    sh_status st;
    *out = NULL;
    if ((st = sh_sketch_compute(sh, w, params, features, n_tokens, &hdr, err)) != SH_OK) return st;
    return emit(&hdr, w->vals, out, err);
}

sh_status sh_sketch_select(const sh_sketch *full, const sh_sketch_params *params, sh_sketch **out, sh_error *err)
{
    sh_sketch hdr;
    sh_sketch_params p = full->p;
    sh_status st;
    uint64_t *tmp;
    *out = NULL;
    if (full->p.kind != SH_SKETCH_FULL)
        return sh_error_set(err, SH_EINVAL, 0, "only a full sketch can be narrowed to another kind");
    p.kind = params->kind;
    p.s = params->s;
    p.m = params->m;
    p.floor = params->floor;
    if ((st = check_kind(&p, err)) != SH_OK) return st;
    tmp = (uint64_t *)malloc((full->n ? full->n : 1) * sizeof *tmp);
    if (!tmp) return sh_error_set(err, SH_ENOMEM, 0, "out of memory");
    memcpy(tmp, full->v, full->n * sizeof *tmp);
    select_values(p, tmp, full->n, full->n_tokens, &hdr);
    st = emit(&hdr, tmp, out, err);
    free(tmp);
    return st;
}

sh_status sh_sketch_reduce(const sh_sketch *a, uint32_t j, sh_sketch **out, sh_error *err)
{
    sh_sketch *r;
    size_t i, k = 0;
    uint64_t mask;
    *out = NULL;
    if (a->p.kind != SH_SKETCH_CLASS)
        return sh_error_set(err, SH_EINVAL, 0, "only size-class sketches can be reduced to a coarser class");
    if (j < a->p.cls || j > 63)
        return sh_error_set(err, SH_EINVAL, 0, "cannot reduce class %u to class %u; the target must be between %u and 63",
                            a->p.cls, j, a->p.cls);
    r = (sh_sketch *)malloc(sizeof *r + a->n * sizeof(uint64_t));
    if (!r) return sh_error_set(err, SH_ENOMEM, 0, "out of memory");
    *r = *a;
    mask = (1ULL << j) - 1;
    for (i = 0; i < a->n; i++) if ((a->v[i] & mask) == 0) r->v[k++] = a->v[i];
    r->n = k;
    r->p.cls = j;
    *out = r;
    return SH_OK;
}

/* ---- serialization (docs/formats.md, "Sketch") ---------------------------- */

#define HEADER SH_SKETCH_HEADER_SIZE

size_t sh_sketch_serialized_size(const sh_sketch *a)
{
    return HEADER + 8 * a->n + 4;
}

void sh_sketch_serialize(const sh_sketch *a, unsigned char *out)
{
    size_t i;
    memcpy(out, SH_SKETCH_MAGIC, 4);
    out[4] = SH_SKETCH_VERSION;
    out[5] = a->p.kind;
    out[6] = a->p.option;
    out[7] = a->p.k;
    out[8] = a->p.tokens;
    out[9] = 0;
    sh_store_le16(out + 10, (uint16_t)a->p.floor);
    sh_store_le32(out + 12, a->p.w);
    sh_store_le32(out + 16, a->p.s);
    sh_store_le32(out + 20, a->p.cls);
    sh_store_le64(out + 24, a->p.m);
    sh_store_le64(out + 32, a->p.seed);
    sh_store_le64(out + 40, a->p.poly);
    sh_store_le64(out + 48, a->p.idpoly);
    sh_store_le64(out + 56, a->p.rules);
    sh_store_le64(out + 64, a->n_shingles);
    sh_store_le64(out + 72, a->n_tokens);
    sh_store_le32(out + 80, (uint32_t)a->n);
    for (i = 0; i < a->n; i++) sh_store_le64(out + HEADER + 8 * i, a->v[i]);
    sh_store_le32(out + HEADER + 8 * a->n, (uint32_t)crc32(0L, out, (uInt)(HEADER + 8 * a->n)));
}

/* The fields of a decoded sketch against what a writer produces (sketch.h). */
sh_status sh_sketch_check(const sh_sketch *a, sh_error *err)
{
    const sh_sketch_params *p = &a->p;
    size_t i;
    if (p->w > 1024)
        return sh_error_set(err, SH_EFORMAT, 12, "sketch has shingle width w = %u; a writer makes 0 (features) to 1024", p->w);
    if (p->s > SH_SKETCH_MAX_S)
        return sh_error_set(err, SH_EFORMAT, 16, "sketch has size s = %u; a writer makes at most %u", p->s, SH_SKETCH_MAX_S);
    if (p->floor > 1000)
        return sh_error_set(err, SH_EFORMAT, 10, "sketch has floor %u; a writer makes at most 1000", p->floor);
    if (p->kind == SH_SKETCH_CLASS ? p->cls > 63 : p->cls != 0)
        return sh_error_set(err, SH_EFORMAT, 20, "sketch has size class %u; a %s", p->cls,
                            p->kind == SH_SKETCH_CLASS ? "class is 0 to 63" : "sketch of this kind has class 0");
    if ((p->k < 64 && p->poly >> p->k) || (p->poly & 1) == 0)
        return sh_error_set(err, SH_EFORMAT, 40, "sketch polynomial 0x%llx is not one of degree %u (more bits, or no constant term)",
                            (unsigned long long)p->poly, p->k);
    if ((p->idpoly & 1) == 0)
        return sh_error_set(err, SH_EFORMAT, 48, "sketch token-id polynomial 0x%llx has no constant term", (unsigned long long)p->idpoly);
    if ((p->kind == SH_SKETCH_MIN || p->kind == SH_SKETCH_MINMOD) && (p->s < 1 || a->n > p->s))
        return sh_error_set(err, SH_EFORMAT, 16, "sketch of size s = %u holds %zu values", p->s, a->n);
    if (p->kind == SH_SKETCH_MIN && a->n != (a->n_shingles < p->s ? a->n_shingles : p->s))
        return sh_error_set(err, SH_EFORMAT, 64, "MIN sketch of s = %u over %llu shingles holds %zu values", p->s,
                            (unsigned long long)a->n_shingles, a->n);
    if ((p->kind == SH_SKETCH_MOD || p->kind == SH_SKETCH_MINMOD) && p->m < 1)
        return sh_error_set(err, SH_EFORMAT, 24, "sketch has modulus 0");
    if (a->n > a->n_shingles)
        return sh_error_set(err, SH_EFORMAT, 64, "sketch holds %zu values of %llu shingles", a->n, (unsigned long long)a->n_shingles);
    if (p->kind == SH_SKETCH_FULL && a->n != a->n_shingles)
        return sh_error_set(err, SH_EFORMAT, 64, "full sketch holds %zu values of %llu shingles", a->n, (unsigned long long)a->n_shingles);
    for (i = 0; i < a->n; i++) {
        uint64_t v = a->v[i];
        if (i > 0 && v <= a->v[i - 1])
            return sh_error_set(err, SH_EFORMAT, HEADER + 8 * i, "sketch values are not strictly ascending at value %zu", i);
        if ((p->kind == SH_SKETCH_MOD || p->kind == SH_SKETCH_MINMOD) && v % p->m != 0)
            return sh_error_set(err, SH_EFORMAT, HEADER + 8 * i, "sketch value %zu is not a multiple of the modulus %llu", i,
                                (unsigned long long)p->m);
        if (p->kind == SH_SKETCH_CLASS && (v & ((1ULL << p->cls) - 1)) != 0)
            return sh_error_set(err, SH_EFORMAT, HEADER + 8 * i, "sketch value %zu is not a multiple of 2^%u (its class)", i, p->cls);
    }
    return SH_OK;
}

sh_status sh_sketch_deserialize(const unsigned char *in, size_t n, sh_sketch **out, sh_error *err)
{
    sh_sketch *a;
    uint32_t count, i;
    *out = NULL;
    if (n < 4 || memcmp(in, SH_SKETCH_MAGIC, 4) != 0)
        return sh_error_set(err, SH_EFORMAT, 0, "not a shingle sketch: it does not start with the magic \"SHSK\"");
    if (n < HEADER + 4)
        return sh_error_set(err, SH_EFORMAT, n, "truncated sketch: %zu bytes, the header alone takes %d", n, HEADER + 4);
    if (in[4] != SH_SKETCH_VERSION)
        return sh_error_set(err, SH_EFORMAT, 4, "sketch format version %u is not supported (this build reads version %u)", in[4],
                            SH_SKETCH_VERSION);
    count = sh_load_le32(in + 80);
    if ((uint64_t)count * 8 + HEADER + 4 != n)
        return sh_error_set(err, SH_EFORMAT, 80, "sketch of %u values should take %llu bytes, got %zu: truncated or corrupt",
                            count, (unsigned long long)count * 8 + HEADER + 4, n);
    if (sh_load_le32(in + n - 4) != (uint32_t)crc32(0L, in, (uInt)(n - 4)))
        return sh_error_set(err, SH_EFORMAT, n - 4, "sketch checksum mismatch: the string is corrupt");
    if (in[5] < SH_SKETCH_MIN || in[5] > SH_SKETCH_FULL || in[6] > 1 || in[8] > 1 || in[7] < 16 || in[7] > 64)
        return sh_error_set(err, SH_EFORMAT, 5, "sketch header has an unknown kind, option, token mode or degree");
    if (in[9] != 0) return sh_error_set(err, SH_EFORMAT, 9, "sketch header byte 9 (reserved) is not 0");
    a = (sh_sketch *)malloc(sizeof *a + (size_t)count * sizeof(uint64_t));
    if (!a) return sh_error_set(err, SH_ENOMEM, 0, "out of memory for a sketch of %u values", count);
    memset(&a->p, 0, sizeof a->p);
    a->p.kind = in[5];
    a->p.option = in[6];
    a->p.k = in[7];
    a->p.tokens = in[8];
    a->p.floor = sh_load_le16(in + 10);
    a->p.w = sh_load_le32(in + 12);
    a->p.s = sh_load_le32(in + 16);
    a->p.cls = sh_load_le32(in + 20);
    a->p.m = sh_load_le64(in + 24);
    a->p.seed = sh_load_le64(in + 32);
    a->p.poly = sh_load_le64(in + 40);
    a->p.idpoly = sh_load_le64(in + 48);
    a->p.rules = sh_load_le64(in + 56);
    a->n_shingles = sh_load_le64(in + 64);
    a->n_tokens = sh_load_le64(in + 72);
    a->n = count;
    for (i = 0; i < count; i++) a->v[i] = sh_load_le64(in + HEADER + 8 * (size_t)i);
    {
        sh_status st = sh_sketch_check(a, err);
        if (st != SH_OK) { free(a); return st; }
    }
    *out = a;
    return SH_OK;
}
