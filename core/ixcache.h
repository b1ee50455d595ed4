#ifndef SH_IXCACHE_H
#define SH_IXCACHE_H

/* The postings cache (core/ixcache.c): every key of the postings of one
 * snapshot with its documents, in memory laid out for lookups, so that a
 * server's query finds the documents of its values in two or three cache
 * misses each (all of a query's values at once, their misses overlapping)
 * instead of a walk down the postings B-tree per value, each level a TLB and
 * a cache miss in a map of gigabytes. Built once, from keys in increasing
 * order (as a cursor over the postings gives them), then only read: any
 * number of threads may look up in it without a lock. */

#include <stddef.h>
#include <stdint.h>

typedef struct sh_ixcache sh_ixcache;

/* An empty cache with room for up to max_keys keys holding max_postings
 * documents in all, or NULL without memory. Its memory is reserved, not
 * touched: what the keys do not use costs nothing. */
sh_ixcache *sh_ixcache_new(size_t max_keys, size_t max_postings);
void sh_ixcache_free(sh_ixcache *c);

/* Appends key with its n >= 1 documents (in increasing order). Keys must come
 * in strictly increasing order. 0, or EINVAL (out of order, n == 0) or ERANGE
 * (past the room it was made with). */
int sh_ixcache_append(sh_ixcache *c, uint64_t key, const uint32_t *docs, size_t n);
/* After the last append, before any lookup: 0 or ENOMEM. */
int sh_ixcache_finish(sh_ixcache *c);

/* Looks up v[i] for each i with keep == NULL or keep[i] != 0: cnt[i] is the
 * number of documents of v[i] (0: not a key) and docs[i] points to them, in
 * increasing order, valid while c lives. The others get cnt[i] = 0. */
void sh_ixcache_find_many(const sh_ixcache *c, const uint64_t *v, size_t n, const unsigned char *keep, const uint32_t **docs,
                          uint32_t *cnt);

size_t sh_ixcache_keys(const sh_ixcache *c);
size_t sh_ixcache_postings(const sh_ixcache *c);
/* the bytes it holds (those its keys use) */
size_t sh_ixcache_bytes(const sh_ixcache *c);
/* the bytes a cache of this many keys and postings would hold, at most */
size_t sh_ixcache_bytes_for(size_t keys, size_t postings);

#endif
