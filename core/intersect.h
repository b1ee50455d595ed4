/* |X n Y| for two sorted sets of distinct 64-bit values: what exact
 * verification (the full sets of a candidate pair, Broder 1997's r(A, B)
 * computed exactly) and the MOD_m estimator of phase 4 spend their time on.
 * The portable loop is the reference; the AVX2 one compares blocks of four
 * values of each set against each other (sixteen comparisons in four
 * instructions) and steps past the block with the smaller largest value, the
 * same count in about a quarter of the steps. core/test/test_shingler.c
 * compares every level with the reference. */
#ifndef SHINGLE_INTERSECT_H
#define SHINGLE_INTERSECT_H

#include <stddef.h>
#include <stdint.h>
#include "simd.h"

/* At the level asked for (capped by what the processor and build have;
 * SH_SIMD_AUTO: the best, as sh_simd_best gives it). */
size_t sh_intersect_count(const uint64_t *a, size_t na, const uint64_t *b, size_t nb, sh_simd level);

#endif
