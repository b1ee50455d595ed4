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

SH_BYTEORDER_INLINE uint16_t sh_load_le16(const void *q)
{
    const unsigned char *p = (const unsigned char *)q;
    return (uint16_t)(p[0] | p[1] << 8);
}

SH_BYTEORDER_INLINE void sh_store_le16(void *q, uint16_t v)
{
    unsigned char *p = (unsigned char *)q;
    p[0] = (unsigned char)v;
    p[1] = (unsigned char)(v >> 8);
}

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

/* gcc (12) merges the loads' shifts into one load, but not the stores'
 * byte writes: where the compiler tells the host's byte order, a store is
 * one memcpy of the value in the wanted order (a byte swap where the orders
 * differ), which compiles to one store. */
#if defined(__GNUC__) && defined(__BYTE_ORDER__) && \
    (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ || __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__)
#include <string.h>
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define SH_LE32(v) (v)
#define SH_LE64(v) (v)
#define SH_BE32(v) __builtin_bswap32(v)
#define SH_BE64(v) __builtin_bswap64(v)
#else
#define SH_LE32(v) __builtin_bswap32(v)
#define SH_LE64(v) __builtin_bswap64(v)
#define SH_BE32(v) (v)
#define SH_BE64(v) (v)
#endif
#define SH_STORE_BYTES(q, v, conv) do { __typeof__(v) w_ = conv(v); memcpy((q), &w_, sizeof w_); } while (0)
#endif

SH_BYTEORDER_INLINE void sh_store_le32(void *q, uint32_t v)
{
#ifdef SH_STORE_BYTES
    SH_STORE_BYTES(q, v, SH_LE32);
#else
    unsigned char *p = (unsigned char *)q;
    p[0] = (unsigned char)v;
    p[1] = (unsigned char)(v >> 8);
    p[2] = (unsigned char)(v >> 16);
    p[3] = (unsigned char)(v >> 24);
#endif
}

SH_BYTEORDER_INLINE void sh_store_le64(void *q, uint64_t v)
{
#ifdef SH_STORE_BYTES
    SH_STORE_BYTES(q, v, SH_LE64);
#else
    unsigned char *p = (unsigned char *)q;
    sh_store_le32(p, (uint32_t)v);
    sh_store_le32(p + 4, (uint32_t)(v >> 32));
#endif
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
#ifdef SH_STORE_BYTES
    SH_STORE_BYTES(q, v, SH_BE32);
#else
    unsigned char *p = (unsigned char *)q;
    p[0] = (unsigned char)(v >> 24);
    p[1] = (unsigned char)(v >> 16);
    p[2] = (unsigned char)(v >> 8);
    p[3] = (unsigned char)v;
#endif
}

SH_BYTEORDER_INLINE void sh_store_be64(void *q, uint64_t v)
{
#ifdef SH_STORE_BYTES
    SH_STORE_BYTES(q, v, SH_BE64);
#else
    unsigned char *p = (unsigned char *)q;
    sh_store_be32(p, (uint32_t)(v >> 32));
    sh_store_be32(p + 4, (uint32_t)v);
#endif
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
