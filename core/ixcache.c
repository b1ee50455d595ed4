/* The postings cache (ixcache.h). Three arrays and a directory:
 *   keys[i]  the keys, increasing;
 *   vals[i]  the key's document when it is its only one (most keys of a
 *            MOD sketch's postings: a value is in one document unless the
 *            documents share text), else MORE | the offset in more[] of its
 *            count followed by its documents;
 *   dir[b]   the first key whose top `bits` bits are b (dir[b + 1] ends it),
 *            bits chosen for about four keys a bucket.
 * Sketch values are fingerprints, uniform in their top bits, so a lookup
 * reads one directory word, one line of keys (a linear scan of a few) and one
 * value: three misses, which find_many overlaps across a query's values by
 * asking for each stage's lines for a batch of values before reading any.
 * Buckets that inputs made uneven are searched by bisection. Everything lives
 * in 2 MiB pages where the kernel gives them (MADV_HUGEPAGE): hundreds of MB
 * read at random would otherwise miss the TLB on every access. */
#define _DEFAULT_SOURCE
#include "ixcache.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define MORE UINT32_C(0x80000000)
#define BATCH 32
#define LINEAR 16 /* buckets of up to this many keys are scanned, larger ones bisected */

struct sh_ixcache {
    uint64_t *keys;
    uint32_t *vals, *more, *dir;
    size_t nk, max_keys, nmore, max_more, nbuckets, npost, max_postings;
    size_t keys_map, vals_map, more_map, dir_map; /* mapped bytes of each */
    unsigned shift;                               /* 64 - bits */
    int finished;
};

static void *reserve(size_t bytes)
{
    void *p;
    if (bytes == 0) bytes = 1;
    p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) return NULL;
#ifdef MADV_HUGEPAGE
    if (bytes >= ((size_t)2 << 20)) (void)madvise(p, bytes, MADV_HUGEPAGE); /* a hint: 4 KiB pages work too */
#endif
    return p;
}

static void release(void *p, size_t bytes)
{
    if (p) munmap(p, bytes ? bytes : 1);
}

sh_ixcache *sh_ixcache_new(size_t max_keys, size_t max_postings)
{
    sh_ixcache *c;
    /* dir[] and vals[] hold 32-bit offsets; more[] needs a count word for
     * each key it holds besides the documents */
    if (max_keys > UINT32_MAX - 1 || max_postings > (size_t)(MORE - 1) / 2) return NULL;
    if (!(c = (sh_ixcache *)calloc(1, sizeof *c))) return NULL;
    c->max_keys = max_keys;
    c->max_postings = max_postings;
    c->max_more = max_postings + (max_keys < max_postings ? max_keys : max_postings);
    c->keys_map = 8 * max_keys;
    c->vals_map = 4 * max_keys;
    c->more_map = 4 * c->max_more;
    c->keys = (uint64_t *)reserve(c->keys_map);
    c->vals = (uint32_t *)reserve(c->vals_map);
    c->more = (uint32_t *)reserve(c->more_map);
    if (!c->keys || !c->vals || !c->more) {
        sh_ixcache_free(c);
        return NULL;
    }
    return c;
}

void sh_ixcache_free(sh_ixcache *c)
{
    if (!c) return;
    release(c->keys, c->keys_map);
    release(c->vals, c->vals_map);
    release(c->more, c->more_map);
    release(c->dir, c->dir_map);
    free(c);
}

int sh_ixcache_append(sh_ixcache *c, uint64_t key, const uint32_t *docs, size_t n)
{
    if (c->finished || n == 0 || (c->nk && key <= c->keys[c->nk - 1])) return EINVAL;
    if (c->nk >= c->max_keys || n > c->max_postings - c->npost) return ERANGE;
    if (n == 1 && docs[0] < MORE) {
        c->vals[c->nk] = docs[0];
    } else {
        if (c->max_more - c->nmore < 1 || n > c->max_more - c->nmore - 1) return ERANGE;
        c->vals[c->nk] = MORE | (uint32_t)c->nmore;
        c->more[c->nmore] = (uint32_t)n;
        memcpy(c->more + c->nmore + 1, docs, 4 * n);
        c->nmore += n + 1;
    }
    c->keys[c->nk++] = key;
    c->npost += n;
    return 0;
}

int sh_ixcache_finish(sh_ixcache *c)
{
    unsigned bits = 1;
    size_t b = 0, i;
    if (c->finished) return 0;
    while (bits < 31 && ((size_t)1 << bits) < c->nk / 4) bits++;
    c->shift = 64 - bits;
    c->nbuckets = (size_t)1 << bits;
    c->dir_map = 4 * (c->nbuckets + 1);
    if (!(c->dir = (uint32_t *)reserve(c->dir_map))) return ENOMEM;
    for (i = 0; i < c->nk; i++) {
        size_t h = (size_t)(c->keys[i] >> c->shift);
        while (b <= h) c->dir[b++] = (uint32_t)i;
    }
    while (b <= c->nbuckets) c->dir[b++] = (uint32_t)c->nk;
    c->finished = 1;
    return 0;
}

/* the index of v among keys[lo, hi), or SIZE_MAX */
static size_t search(const uint64_t *keys, size_t lo, size_t hi, uint64_t v)
{
    if (hi - lo <= LINEAR) {
        for (; lo < hi; lo++)
            if (keys[lo] >= v) return keys[lo] == v ? lo : SIZE_MAX;
        return SIZE_MAX;
    }
    {
        size_t end = hi;
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (keys[mid] < v) lo = mid + 1;
            else hi = mid;
        }
        return lo < end && keys[lo] == v ? lo : SIZE_MAX;
    }
}

void sh_ixcache_find_many(const sh_ixcache *c, const uint64_t *v, size_t n, const unsigned char *keep, const uint32_t **docs,
                          uint32_t *cnt)
{
    size_t base;
    for (base = 0; base < n; base += BATCH) {
        size_t m = n - base < BATCH ? n - base : BATCH, j;
        size_t lo[BATCH], hi[BATCH], at[BATCH];
        /* each stage asks for the lines of every value of the batch before
         * the next stage reads any of them */
        for (j = 0; j < m; j++) {
            cnt[base + j] = 0;
            docs[base + j] = NULL;
            if (keep && !keep[base + j]) continue;
            __builtin_prefetch(c->dir + (size_t)(v[base + j] >> c->shift));
        }
        for (j = 0; j < m; j++) {
            size_t h;
            lo[j] = hi[j] = 0;
            if (keep && !keep[base + j]) continue;
            h = (size_t)(v[base + j] >> c->shift);
            lo[j] = c->dir[h];
            hi[j] = c->dir[h + 1];
            if (lo[j] < hi[j]) __builtin_prefetch(c->keys + lo[j]);
        }
        for (j = 0; j < m; j++) {
            at[j] = lo[j] < hi[j] ? search(c->keys, lo[j], hi[j], v[base + j]) : SIZE_MAX;
            if (at[j] != SIZE_MAX) __builtin_prefetch(c->vals + at[j]);
        }
        for (j = 0; j < m; j++) {
            uint32_t x;
            if (at[j] == SIZE_MAX) continue;
            x = c->vals[at[j]];
            if (!(x & MORE)) {
                docs[base + j] = c->vals + at[j];
                cnt[base + j] = 1;
            } else {
                const uint32_t *p = c->more + (x & ~MORE);
                cnt[base + j] = p[0];
                docs[base + j] = p + 1;
            }
        }
    }
}

size_t sh_ixcache_keys(const sh_ixcache *c) { return c->nk; }

size_t sh_ixcache_postings(const sh_ixcache *c) { return c->npost; }

size_t sh_ixcache_bytes(const sh_ixcache *c) { return 12 * c->nk + 4 * c->nmore + (c->dir ? c->dir_map : 0) + sizeof *c; }

/* o keys with more than one document take postings - (keys - o) + o words
 * of more[], and o <= postings - keys; the directory has at most keys / 2
 * + 3 words */
size_t sh_ixcache_bytes_for(size_t keys, size_t postings)
{
    size_t extra = postings > keys ? postings - keys : 0, o = extra < keys ? extra : keys;
    return 12 * keys + 4 * (extra + 2 * o) + 4 * (keys / 2 + 3) + sizeof(struct sh_ixcache);
}
