/* In-memory sorting of 64-bit keys, used for sketches and shingle sets. */
#ifndef SHINGLE_SORT_H
#define SHINGLE_SORT_H

#include <stddef.h>
#include <stdint.h>

/* Sort v[0..n) ascending: quicksort on the values (insertion sort for small
 * parts), LSD radix sort (16-bit digits) from 65536 values, which allocates a
 * scratch copy and falls back to the quicksort if that fails. */
void sh_sort_u64(uint64_t *v, size_t n);

#endif
