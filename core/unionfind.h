/* Union-find (disjoint sets) over uint32 vertex ids: the last phase of the
 * clustering (Broder et al. 1997, "The clustering algorithm": every pair of
 * documents over the resemblance threshold is a link; the connected
 * components are the clusters). Vertices live in memory, 8 bytes each (parent
 * and size arrays); edges are streamed in bulk (semi-external, as in
 * docs/vectors.md "Sorting and union-find at scale"). Union by size and path
 * halving: near-constant amortized time per operation.
 *
 * Vertex ids are 0..n-1 with n <= SH_UF_MAX_VERTICES; the structure grows on
 * demand, new vertices being singletons. Reentrant, no global state; one
 * thread at a time per structure (find compresses paths, so even lookups
 * write). */
#ifndef SHINGLE_UNIONFIND_H
#define SHINGLE_UNIONFIND_H

#include <stddef.h>
#include <stdint.h>
#include "error.h"

#define SH_UF_MAX_VERTICES UINT32_MAX  /* ids 0..UINT32_MAX-1; UINT32_MAX means "none" */

typedef struct sh_unionfind sh_unionfind;

/* How sh_uf_labels names components. */
typedef enum sh_uf_label_mode {
    SH_UF_LABEL_MIN = 0,  /* the smallest vertex id in the component */
    SH_UF_LABEL_DENSE     /* 0..c-1, numbered in order of each component's smallest id */
} sh_uf_label_mode;

/* Makes a structure with vertices 0..n-1, each its own component (n may be 0).
 * Errors: SH_ENOMEM. */
sh_status sh_uf_new(sh_unionfind **out, uint32_t n, sh_error *err);

/* Frees uf; NULL is a no-op. */
void sh_uf_free(sh_unionfind *uf);

/* Ensures vertices 0..n-1 exist; the new ones are singletons. Never shrinks.
 * Errors: SH_ENOMEM (uf is unchanged). */
sh_status sh_uf_grow(sh_unionfind *uf, uint32_t n, sh_error *err);

/* Number of vertices (one more than the largest valid id). */
uint32_t sh_uf_vertices(const sh_unionfind *uf);

/* Number of components among the vertices. */
uint32_t sh_uf_components(const sh_unionfind *uf);

/* The root (an internal representative, not stable across unions) of v's
 * component; UINT32_MAX if v is not a vertex. */
uint32_t sh_uf_find(sh_unionfind *uf, uint32_t v);

/* Joins the components of a and b. Returns 1 if they were two components,
 * 0 if already one, -1 if a or b is not a vertex (nothing changed). */
int sh_uf_union(sh_unionfind *uf, uint32_t a, uint32_t b);

/* 1 if a and b are in one component, else 0 (also when either is not a vertex). */
int sh_uf_same(sh_unionfind *uf, uint32_t a, uint32_t b);

/* Number of vertices in v's component; 0 if v is not a vertex. */
uint32_t sh_uf_component_size(sh_unionfind *uf, uint32_t v);

/* Unions each pair (pairs[2i], pairs[2i+1]) for i < npairs, growing the
 * structure to cover the largest id seen. Returns the number of pairs that
 * joined two components in *joined (may be NULL).
 * Errors: SH_EINVAL if an id is UINT32_MAX (pairs before it are applied);
 * SH_ENOMEM. */
sh_status sh_uf_union_pairs(sh_unionfind *uf, const uint32_t *pairs, size_t npairs,
                            size_t *joined, sh_error *err);

/* Links the n ids as one group (a star on ids[0]: n-1 unions, which gives the
 * same components as all n(n-1)/2 pairs), growing as sh_uf_union_pairs. */
sh_status sh_uf_union_group(sh_unionfind *uf, const uint32_t *ids, size_t n, size_t *joined,
                            sh_error *err);

/* Writes a canonical component id for every vertex: out[v] for v < n, out
 * having room for sh_uf_vertices(uf) entries. Labels do not depend on the
 * order of the unions. Returns the number of components. */
uint32_t sh_uf_labels(sh_unionfind *uf, uint32_t *out, sh_uf_label_mode mode);

#endif
