/* A table from 64-bit hashes to 32-bit ids, by open addressing with linear
 * probing, growing by doubling at half full. The web graph maps URLs and
 * sites to their ids with it, and the collections view URLs to pages. The
 * keys are hashes (sh_url_hash): two strings with one hash are one key, a
 * chance of about n^2 / 2^65. Reentrant; zero-initialise, free with
 * sh_htab_free. */
#ifndef SHINGLE_HASHTAB_H
#define SHINGLE_HASHTAB_H

#include <stddef.h>
#include <stdint.h>

typedef struct sh_htab {
    uint64_t *key;    /* 0 marks an empty slot (a hash of 0 is stored as 1) */
    uint32_t *val;
    size_t cap, n;
} sh_htab;

/* The id of h, or UINT32_MAX. */
uint32_t sh_htab_get(const sh_htab *t, uint64_t h);
/* Insert h -> v unless h is there: 1 inserted, 0 there already (its id kept),
 * -1 out of memory (the table is unchanged). */
int sh_htab_put(sh_htab *t, uint64_t h, uint32_t v);
void sh_htab_free(sh_htab *t);

#endif
