/* In-memory sorting of 64-bit keys, used for sketches and shingle sets. */
#ifndef SHINGLE_SORT_H
#define SHINGLE_SORT_H

#include <stddef.h>
#include <stdint.h>

/* Sort v[0..n) ascending. Insertion sort for small n, LSD radix sort
 * (16-bit digits) for large n; allocates a scratch copy for the latter and
 * falls back to an in-place sort if that fails. */
void sh_sort_u64(uint64_t *v, size_t n);

#endif
