/* Fixed-width integers loaded from and stored to bytes in a stated byte
 * order: the one home of these helpers in the engine, as xxHash keeps its
 * XXH_readLE64 in one place.
 *
 * They go through shifts, so they read and write the same bytes on a host of
 * either byte order and at any alignment; compilers turn each into one load
 * or store (and a byte swap where the orders differ). Big-endian keys are
 * used where byte order must be numeric order (sort keys, LMDB keys); the
 * stored formats are little-endian (core/formats.h). */
#ifndef SHINGLE_BYTEORDER_H
#define SHINGLE_BYTEORDER_H

#include <stddef.h>
#include <stdint.h>

#if defined(__GNUC__)
#define SH_BYTEORDER_INLINE static inline __attribute__((always_inline))
#else
#define SH_BYTEORDER_INLINE static inline
#endif

SH_BYTEORDER_INLINE uint32_t sh_load_le32(const void *q)
{
    const unsigned char *p = (const unsigned char *)q;
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

SH_BYTEORDER_INLINE uint64_t sh_load_le64(const void *q)
{
    const unsigned char *p = (const unsigned char *)q;
    return (uint64_t)sh_load_le32(p) | (uint64_t)sh_load_le32(p + 4) << 32;
}

SH_BYTEORDER_INLINE void sh_store_le32(void *q, uint32_t v)
{
    unsigned char *p = (unsigned char *)q;
    p[0] = (unsigned char)v;
    p[1] = (unsigned char)(v >> 8);
    p[2] = (unsigned char)(v >> 16);
    p[3] = (unsigned char)(v >> 24);
}

SH_BYTEORDER_INLINE void sh_store_le64(void *q, uint64_t v)
{
    unsigned char *p = (unsigned char *)q;
    sh_store_le32(p, (uint32_t)v);
    sh_store_le32(p + 4, (uint32_t)(v >> 32));
}

SH_BYTEORDER_INLINE uint32_t sh_load_be32(const void *q)
{
    const unsigned char *p = (const unsigned char *)q;
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | (uint32_t)p[3];
}

SH_BYTEORDER_INLINE uint64_t sh_load_be64(const void *q)
{
    const unsigned char *p = (const unsigned char *)q;
    return (uint64_t)p[0] << 56 | (uint64_t)p[1] << 48 | (uint64_t)p[2] << 40 | (uint64_t)p[3] << 32 |
           (uint64_t)p[4] << 24 | (uint64_t)p[5] << 16 | (uint64_t)p[6] << 8 | (uint64_t)p[7];
}

SH_BYTEORDER_INLINE void sh_store_be32(void *q, uint32_t v)
{
    unsigned char *p = (unsigned char *)q;
    p[0] = (unsigned char)(v >> 24);
    p[1] = (unsigned char)(v >> 16);
    p[2] = (unsigned char)(v >> 8);
    p[3] = (unsigned char)v;
}

SH_BYTEORDER_INLINE void sh_store_be64(void *q, uint64_t v)
{
    unsigned char *p = (unsigned char *)q;
    sh_store_be32(p, (uint32_t)(v >> 32));
    sh_store_be32(p + 4, (uint32_t)v);
}

/* The first n <= 8 bytes at q as a big-endian number (a short token's bytes). */
SH_BYTEORDER_INLINE uint64_t sh_load_be(const void *q, size_t n)
{
    const unsigned char *p = (const unsigned char *)q;
    uint64_t v = 0;
    size_t i;
    for (i = 0; i < n; i++) v = (v << 8) | p[i];
    return v;
}

#endif
