#ifndef SH_IXFILTER_H
#define SH_IXFILTER_H

/* A blocked Bloom filter of 64-bit sketch values (core/ixfilter.c): "this
 * value is certainly not a key of the postings" in one cache line, for the
 * lookups of a query that would otherwise each search the postings B-tree
 * only to find nothing. Values are added and tested concurrently without a
 * lock (bits are only ever set, atomically); a value added is always found. */

#include <stddef.h>
#include <stdint.h>

typedef struct sh_ixfilter sh_ixfilter;

/* A filter sized for about n values (10 bits each, at least 64 KiB), or NULL
 * without memory. */
sh_ixfilter *sh_ixfilter_new(size_t n);
void sh_ixfilter_free(sh_ixfilter *f);

void sh_ixfilter_add(sh_ixfilter *f, uint64_t v);
/* sh_ixfilter_add for n values, their cache lines asked for first: for
 * building f, before any other thread uses it (it sets bits without atomics) */
void sh_ixfilter_add_many(sh_ixfilter *f, const uint64_t *v, size_t n);
/* 0: v was never added; 1: it may have been (false positives ~1% at the
 * sized load). */
int sh_ixfilter_test(const sh_ixfilter *f, uint64_t v);
/* sh_ixfilter_test for n values at once, keep[i] set to its answer for
 * v[i]: their cache lines are all asked for before any is read, so the misses
 * overlap. Returns how many may be there. */
size_t sh_ixfilter_test_many(const sh_ixfilter *f, const uint64_t *v, size_t n, unsigned char *keep);
/* the values it was sized for, and its bytes */
size_t sh_ixfilter_capacity(const sh_ixfilter *f);
size_t sh_ixfilter_bytes(const sh_ixfilter *f);

#endif
