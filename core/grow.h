/* A growable buffer's one reallocation rule: room for need elements of elem
 * bytes, the capacity doubling from first (never shrinking), the multiply
 * checked for overflow. Returns 1, or 0 when out of memory (the buffer is
 * then as it was). */
#ifndef SHINGLE_GROW_H
#define SHINGLE_GROW_H

#include <stdint.h>
#include <stdlib.h>

static inline int sh_grow(void **p, size_t *cap, size_t need, size_t elem, size_t first)
{
    size_t c;
    void *q;
    if (need <= *cap) return 1;
    c = *cap ? *cap : first;
    while (c < need) c = c > SIZE_MAX / 2 ? need : 2 * c;
    if (elem && c > SIZE_MAX / elem) return 0;
    q = realloc(*p, c * elem);
    if (!q) return 0;
    *p = q;
    *cap = c;
    return 1;
}

#endif
