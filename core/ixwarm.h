#ifndef SH_IXWARM_H
#define SH_IXWARM_H

/* Warming the pages a batch of lookups in one LMDB table will read, so that
 * their cache misses overlap instead of following one another (core/ixwarm.c).
 * Only a hint: the lookups themselves still go through LMDB, and a table or
 * page the walk does not recognize just ends the walk. */

#include <lmdb.h>
#include <stddef.h>
#include <stdint.h>

/* What a walk did, for tests and benchmarks: keys it followed to a leaf, and
 * of those, the ones it found there (an exact key on the leaf). */
typedef struct {
    size_t walked, found;
} sh_ixwarm_stats;

/* Walk table (a named table of read transaction t, 8-byte keys in memcmp
 * order) for the n keys, big-endian 64-bit values keys[0..n), all at once,
 * level by level, prefetching each binary-search probe of every key before
 * reading any. t must be a read transaction (its view of the table's root is
 * the committed one). st may be NULL. */
void sh_ixwarm(MDB_txn *t, const char *table, const uint64_t *keys, size_t n, sh_ixwarm_stats *st);

#endif
