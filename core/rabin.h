/* Rabin fingerprints (Rabin 1981; Broder 1993, "Some applications of Rabin's
 * fingerprinting method"), as used by Broder 1997 section 4.1 and 4.3.
 *
 * A byte string s of n bytes is the polynomial S(x) over GF(2), most significant
 * bit first. P is an irreducible polynomial of degree k (16 <= k <= 64), stored
 * as its low k bits (the x^k term is implied).
 *   RAW(s)  = S mod P
 *   AUG(s)  = S * x^k mod P      Broder's "append nulls": a bijection of GF(2^k),
 *                                so collisions are unchanged, but short strings
 *                                no longer map to themselves
 *   AUG1(s) = AUG("\x01" || s)   a leading 1 bit, so "\0a" and "a" differ
 * The byte loop is table-driven, one lookup per byte. The sh_mulx tables
 * multiply a whole 64-bit word by a fixed power of x with 8 independent
 * lookups: that is what makes the sliding window over tokens O(1) per token.
 * Vectors for all of this are in docs/vectors.md and core/test/test_rabin.c. */
#ifndef SHINGLE_RABIN_H
#define SHINGLE_RABIN_H

#include <stddef.h>
#include <stdint.h>

typedef struct sh_rabin {
    int k;             /* degree */
    uint64_t p;        /* low k bits of P */
    uint64_t mask;     /* the k low bits */
    uint64_t t[256];   /* t[b] = b(x) * x^k mod P */
} sh_rabin;

/* Multiplication of any 64-bit polynomial v (degree < 64) by x^e mod P:
 * t[j][b] = (b * x^(8j)) * x^e mod P, so v * x^e = XOR_j t[j][byte j of v]. */
typedef struct sh_mulx {
    uint64_t t[8][256];
} sh_mulx;

/* Arithmetic in GF(2)[x] / P for degree-k P (low k bits p): a*b mod P, x^e mod P. */
uint64_t sh_poly_mulmod(uint64_t a, uint64_t b, uint64_t p, int k);
uint64_t sh_poly_xpow(uint64_t e, uint64_t p, int k);

/* Ben-Or's test: 1 if x^k + p is irreducible over GF(2), else 0. 1 <= k <= 64. */
int sh_poly_irreducible(uint64_t p, int k);

/* The first irreducible polynomial of degree k drawn from a splitmix64 stream
 * seeded with seed, with the x^k and x^0 terms fixed (about 2/k of candidates
 * pass). Deterministic for a given (seed, k). */
uint64_t sh_poly_random(uint64_t seed, int k);

/* Fill r for polynomial p of degree k (16..64). Does not test irreducibility. */
void sh_rabin_init(sh_rabin *r, uint64_t p, int k);

/* Continue an AUG fingerprint f of some prefix with n more bytes: returns AUG(prefix || s). */
uint64_t sh_rabin_extend(const sh_rabin *r, uint64_t f, const void *s, size_t n);
uint64_t sh_rabin_aug(const sh_rabin *r, const void *s, size_t n);
uint64_t sh_rabin_aug1(const sh_rabin *r, const void *s, size_t n);
uint64_t sh_rabin_raw(const sh_rabin *r, const void *s, size_t n);

/* Fill m so that sh_mulx_apply(m, v) = v * x^e mod P. */
void sh_mulx_init(sh_mulx *m, const sh_rabin *r, uint64_t e);

static inline uint64_t sh_mulx_apply(const sh_mulx *m, uint64_t v)
{
    return m->t[0][v & 0xff] ^ m->t[1][(v >> 8) & 0xff] ^ m->t[2][(v >> 16) & 0xff]
         ^ m->t[3][(v >> 24) & 0xff] ^ m->t[4][(v >> 32) & 0xff] ^ m->t[5][(v >> 40) & 0xff]
         ^ m->t[6][(v >> 48) & 0xff] ^ m->t[7][v >> 56];
}

/* The splitmix64 generator and its finaliser. sh_mix(x) = fin(x + 0x9e3779b97f4a7c15),
 * so sh_mix(0) is the generator's published first output 0xe220a8397b1dcdaf.
 * A bijection of 64-bit words: used to order shingles for MIN_s (Rabin residues
 * are linear, not min-wise independent) without adding collisions. */
static inline uint64_t sh_mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

/* Next value of a splitmix64 stream whose state is *state. */
static inline uint64_t sh_splitmix_next(uint64_t *state)
{
    uint64_t v = sh_mix(*state);
    *state += 0x9e3779b97f4a7c15ULL;
    return v;
}

#endif
