/* The postings filter (ixfilter.h): a blocked Bloom filter (Putze, Sanders
 * and Singler, "Cache-, hash- and space-efficient Bloom filters", 2007).
 * Each value picks one 64-byte block and sets K bits in it, so a test costs
 * one cache miss, and the misses of a query's values are independent loads
 * the processor overlaps. The filter of a million-document index is tens of
 * MB; it is allocated in 2 MiB pages where the kernel gives them
 * (MADV_HUGEPAGE), so that its random reads do not also miss the TLB. Sketch
 * values are fingerprints, but a MOD sketch keeps only multiples of its
 * modulus: they are mixed (splitmix64's finalizer) before use. */
#define _DEFAULT_SOURCE
#include "ixfilter.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define BLOCK_WORDS 8      /* 64 bytes */
#define K 6                /* bits set per value, 9 bits of hash each */
#define BITS_PER_VALUE 10
#define HUGE_PAGE ((size_t)2 << 20)

struct sh_ixfilter {
    uint64_t *words;
    size_t nblocks, capacity, bytes;
};

static uint64_t mix(uint64_t x)
{
    x ^= x >> 30;
    x *= UINT64_C(0xbf58476d1ce4e5b9);
    x ^= x >> 27;
    x *= UINT64_C(0x94d049bb133111eb);
    x ^= x >> 31;
    return x;
}

sh_ixfilter *sh_ixfilter_new(size_t n)
{
    sh_ixfilter *f = (sh_ixfilter *)calloc(1, sizeof *f);
    size_t bytes = n / 8 * BITS_PER_VALUE + 64;
    void *p = NULL;
    if (!f) return NULL;
    if (bytes < ((size_t)64 << 10)) bytes = (size_t)64 << 10;
    bytes = (bytes + 63) & ~(size_t)63;
    if (bytes >= HUGE_PAGE) bytes = (bytes + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1);
    if (posix_memalign(&p, bytes >= HUGE_PAGE ? HUGE_PAGE : 64, bytes) != 0) { free(f); return NULL; }
#ifdef MADV_HUGEPAGE
    if (bytes >= HUGE_PAGE) (void)madvise(p, bytes, MADV_HUGEPAGE); /* a hint: 4 KiB pages work too */
#endif
    memset(p, 0, bytes);
    f->words = (uint64_t *)p;
    f->bytes = bytes;
    f->nblocks = bytes / 64;
    f->capacity = bytes * 8 / BITS_PER_VALUE;
    return f;
}

void sh_ixfilter_free(sh_ixfilter *f)
{
    if (!f) return;
    free(f->words);
    free(f);
}

/* the block of a value of hash h: the high half of h scaled to the block
 * count; its K bit positions come from a second hash, 9 bits each */
static uint64_t *block_of(const sh_ixfilter *f, uint64_t h)
{
    return f->words + (size_t)(((h >> 32) * (uint64_t)f->nblocks) >> 32) * BLOCK_WORDS;
}

/* the K bits of a value of hash h, as a mask for each word of its block */
static void masks(uint64_t h, uint64_t m[BLOCK_WORDS])
{
    uint64_t bits = mix(h + UINT64_C(0x9e3779b97f4a7c15));
    int i;
    memset(m, 0, 8 * BLOCK_WORDS);
    for (i = 0; i < K; i++, bits >>= 9) m[(bits >> 6) & 7] |= UINT64_C(1) << (bits & 63);
}

void sh_ixfilter_add(sh_ixfilter *f, uint64_t v)
{
    uint64_t h = mix(v), *b = block_of(f, h), m[BLOCK_WORDS];
    int w;
    masks(h, m);
    for (w = 0; w < BLOCK_WORDS; w++)
        if (m[w]) __atomic_fetch_or(&b[w], m[w], __ATOMIC_RELAXED); /* tests may run meanwhile */
}

void sh_ixfilter_add_many(sh_ixfilter *f, const uint64_t *v, size_t n)
{
    uint64_t h[64];
    size_t i, j;
    for (i = 0; i < n; i += 64) {
        size_t m = n - i < 64 ? n - i : 64;
        for (j = 0; j < m; j++) {
            h[j] = mix(v[i + j]);
            __builtin_prefetch(block_of(f, h[j]), 1);
        }
        for (j = 0; j < m; j++) {
            uint64_t *b = block_of(f, h[j]), k[BLOCK_WORDS];
            int w;
            masks(h[j], k);
            for (w = 0; w < BLOCK_WORDS; w++) b[w] |= k[w]; /* nothing else uses f yet */
        }
    }
}

static int test_block(const uint64_t *b, uint64_t h)
{
    uint64_t bits = mix(h + UINT64_C(0x9e3779b97f4a7c15));
    int i;
    for (i = 0; i < K; i++, bits >>= 9)
        if (!(__atomic_load_n(&b[(bits >> 6) & 7], __ATOMIC_RELAXED) >> (bits & 63) & 1)) return 0;
    return 1;
}

int sh_ixfilter_test(const sh_ixfilter *f, uint64_t v)
{
    uint64_t h = mix(v);
    return test_block(block_of(f, h), h);
}

size_t sh_ixfilter_test_many(const sh_ixfilter *f, const uint64_t *v, size_t n, unsigned char *keep)
{
    uint64_t h[64];
    size_t i, j, kept = 0;
    for (i = 0; i < n; i += 64) {
        size_t m = n - i < 64 ? n - i : 64;
        for (j = 0; j < m; j++) {
            h[j] = mix(v[i + j]);
            __builtin_prefetch(block_of(f, h[j]));
        }
        for (j = 0; j < m; j++) kept += keep[i + j] = (unsigned char)test_block(block_of(f, h[j]), h[j]);
    }
    return kept;
}

size_t sh_ixfilter_capacity(const sh_ixfilter *f) { return f->capacity; }
size_t sh_ixfilter_bytes(const sh_ixfilter *f) { return f->bytes; }
