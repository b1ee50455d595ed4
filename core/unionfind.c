/* Union-find with union by size and path halving. See unionfind.h. */
#include "unionfind.h"

#include <stdlib.h>
#include <string.h>

struct sh_unionfind {
    uint32_t *parent;   /* parent[v] == v for a root */
    uint32_t *size;     /* component size, meaningful at roots */
    uint32_t n, cap;
    uint32_t components;
};

sh_status sh_uf_new(sh_unionfind **out, uint32_t n, sh_error *err)
{
    sh_unionfind *uf = calloc(1, sizeof *uf);
    sh_status st;
    *out = NULL;
    if (!uf)
        return sh_error_set(err, SH_ENOMEM, 0, "unionfind: cannot allocate the structure");
    if ((st = sh_uf_grow(uf, n, err)) != SH_OK) {
        sh_uf_free(uf);
        return st;
    }
    *out = uf;
    return SH_OK;
}

void sh_uf_free(sh_unionfind *uf)
{
    if (!uf)
        return;
    free(uf->parent);
    free(uf->size);
    free(uf);
}

sh_status sh_uf_grow(sh_unionfind *uf, uint32_t n, sh_error *err)
{
    uint32_t v;
    if (n <= uf->n)
        return SH_OK;
    if (n > uf->cap) {
        /* geometric growth so that streaming ids in increasing order is linear */
        uint64_t cap = (uint64_t)uf->cap + uf->cap / 2;
        uint32_t *p, *s;
        if (cap < n)
            cap = n;
        if (cap < 16)
            cap = 16;
        if (cap > SH_UF_MAX_VERTICES)
            cap = SH_UF_MAX_VERTICES;
        if ((size_t)cap > SIZE_MAX / sizeof(uint32_t))
            return sh_error_set(err, SH_ENOMEM, 0, "unionfind: %u vertices do not fit in memory", (unsigned)n);
        p = realloc(uf->parent, (size_t)cap * sizeof *p);
        if (!p)
            return sh_error_set(err, SH_ENOMEM, 0,
                                "unionfind: cannot allocate %llu bytes for %u vertices",
                                (unsigned long long)cap * 8, (unsigned)n);
        uf->parent = p;  /* a larger block, harmless if the next one fails */
        s = realloc(uf->size, (size_t)cap * sizeof *s);
        if (!s)
            return sh_error_set(err, SH_ENOMEM, 0,
                                "unionfind: cannot allocate %llu bytes for %u vertices",
                                (unsigned long long)cap * 8, (unsigned)n);
        uf->size = s;
        uf->cap = (uint32_t)cap;
    }
    for (v = uf->n; v < n; v++) {
        uf->parent[v] = v;
        uf->size[v] = 1;
    }
    uf->components += n - uf->n;
    uf->n = n;
    return SH_OK;
}

uint32_t sh_uf_vertices(const sh_unionfind *uf)
{
    return uf->n;
}

uint32_t sh_uf_components(const sh_unionfind *uf)
{
    return uf->components;
}

/* Path halving (Tarjan and van Leeuwen): each visited vertex is pointed at its
 * grandparent, halving the path in one pass without a stack. */
static uint32_t find_root(uint32_t *parent, uint32_t v)
{
    while (parent[v] != v) {
        uint32_t g = parent[parent[v]];
        parent[v] = g;
        v = g;
    }
    return v;
}

uint32_t sh_uf_find(sh_unionfind *uf, uint32_t v)
{
    return v < uf->n ? find_root(uf->parent, v) : UINT32_MAX;
}

/* Links the roots of a and b, the smaller tree under the larger. */
static int uf_link(sh_unionfind *uf, uint32_t a, uint32_t b)
{
    uint32_t ra = find_root(uf->parent, a), rb = find_root(uf->parent, b);
    if (ra == rb)
        return 0;
    if (uf->size[ra] < uf->size[rb]) {
        uint32_t t = ra;
        ra = rb;
        rb = t;
    }
    uf->parent[rb] = ra;
    uf->size[ra] += uf->size[rb];
    uf->components--;
    return 1;
}

int sh_uf_union(sh_unionfind *uf, uint32_t a, uint32_t b)
{
    if (a >= uf->n || b >= uf->n)
        return -1;
    return uf_link(uf, a, b);
}

int sh_uf_same(sh_unionfind *uf, uint32_t a, uint32_t b)
{
    if (a >= uf->n || b >= uf->n)
        return 0;
    return find_root(uf->parent, a) == find_root(uf->parent, b);
}

uint32_t sh_uf_component_size(sh_unionfind *uf, uint32_t v)
{
    return v < uf->n ? uf->size[find_root(uf->parent, v)] : 0;
}

/* Grows to cover the largest of the n ids; SH_EINVAL names the first id that
 * cannot be a vertex, *valid being the count of ids before it. */
static sh_status cover_ids(sh_unionfind *uf, const uint32_t *ids, size_t n, size_t *valid,
                           sh_error *err)
{
    uint32_t max = 0;
    size_t i;
    sh_status st;
    for (i = 0; i < n; i++) {
        if (ids[i] == UINT32_MAX)
            break;
        if (ids[i] > max)
            max = ids[i];
    }
    *valid = i;
    if (i > 0 && max >= uf->n && (st = sh_uf_grow(uf, max + 1, err)) != SH_OK)
        return st;
    if (i < n)
        return sh_error_set(err, SH_EINVAL, i * sizeof *ids,
                            "unionfind: id %u at index %zu is reserved (ids go up to %u)",
                            (unsigned)ids[i], i, (unsigned)(UINT32_MAX - 1));
    return SH_OK;
}

sh_status sh_uf_union_pairs(sh_unionfind *uf, const uint32_t *pairs, size_t npairs,
                            size_t *joined, sh_error *err)
{
    size_t valid, i, j = 0;
    sh_status st = cover_ids(uf, pairs, 2 * npairs, &valid, err);
    if (st == SH_ENOMEM)
        valid = 0;
    for (i = 0; i + 1 < valid; i += 2)
        j += (size_t)uf_link(uf, pairs[i], pairs[i + 1]);
    if (joined)
        *joined = j;
    return st;
}

sh_status sh_uf_union_group(sh_unionfind *uf, const uint32_t *ids, size_t n, size_t *joined,
                            sh_error *err)
{
    size_t valid, i, j = 0;
    sh_status st = cover_ids(uf, ids, n, &valid, err);
    if (st == SH_ENOMEM)
        valid = 0;
    for (i = 1; i < valid; i++)
        j += (size_t)uf_link(uf, ids[0], ids[i]);
    if (joined)
        *joined = j;
    return st;
}

uint32_t sh_uf_labels(sh_unionfind *uf, uint32_t *out, sh_uf_label_mode mode)
{
    /* One ascending pass: the first vertex seen of a component is its
     * smallest, and names it; out[root] holds the name until the pass reaches
     * the root itself (out doubles as the root -> name map, no extra memory). */
    uint32_t v, next = 0;
    if (uf->n == 0)
        return 0;
    memset(out, 0xff, (size_t)uf->n * sizeof *out);
    for (v = 0; v < uf->n; v++) {
        uint32_t r = find_root(uf->parent, v);
        if (out[r] == UINT32_MAX)
            out[r] = mode == SH_UF_LABEL_DENSE ? next++ : v;
        out[v] = out[r];
    }
    return uf->components;
}
