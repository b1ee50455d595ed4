/* x % m == 0 without a division, for a fixed m (a division per value was
 * most of the cost of verifying a pair from its full sets): m = 2^k d with d
 * odd; x is a multiple of m when its low k bits are 0 and (x >> k) inv(d)
 * mod 2^64 is at most (2^64 - 1) / d (Granlund and Montgomery, "Division by
 * invariant integers using multiplication", section 9). The estimators
 * (estimate.c) and the estimates from pairs.bin (pairest.c) share it. */
#ifndef SHINGLE_DIVIDES_H
#define SHINGLE_DIVIDES_H

#include <stdint.h>

typedef struct sh_divisor { unsigned k; uint64_t low, inv, lim; } sh_divisor;

static inline sh_divisor sh_divisor_of(uint64_t m)
{
    sh_divisor v;
    uint64_t d = m, inv;
    int i;
    v.k = 0;
    if (!d) d = 1; /* no modulus (never passed: sketches checked compatible): every value */
    while (!(d & 1)) { d >>= 1; v.k++; }
    inv = d; /* Newton's iteration: inv d = 1 mod 2^(3 * 2^i) */
    for (i = 0; i < 5; i++) inv *= 2 - d * inv;
    v.low = v.k ? (((uint64_t)1 << v.k) - 1) : 0;
    v.inv = inv;
    v.lim = UINT64_MAX / d;
    return v;
}

static inline int sh_divides(const sh_divisor *v, uint64_t x)
{
    return (x & v->low) == 0 && (x >> v->k) * v->inv <= v->lim;
}

#endif
