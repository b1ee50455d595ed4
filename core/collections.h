/* Similar clusters of collections: Cho, Shivakumar and Garcia-Molina,
 * "Finding replicated web collections" (2000), sections 3 and 4, over the
 * files of a web graph (core/webgraph.h) in one directory.
 *
 *   sh_coll_trivial  trivial-NAME.bin: each page's trivial similar cluster
 *                    (section 3.2: similar page pairs by an iceberg count of
 *                    shared chunks, the external sort's combine doing the
 *                    counting; their connected components by union-find, the
 *                    transitive similarity of Definition 4). Or taken from
 *                    the clusters.bin of the shingle pipeline (core/cluster.h).
 *   sh_coll_grow     the cluster growing algorithm (Figure 9): the
 *                    LinkSummary table <Ri, Rj, a, b, s, d> by sort and group
 *                    over the links, the merge condition a = s = d = b (or
 *                    a = s >= d = b for partial mirrors, section 4), the
 *                    trivial cluster graph, union-find over it, and the
 *                    collections regained from a start point of each
 *                    component (Figure 7). Writes linksummary.bin, tcg.bin,
 *                    members.bin and colls.bin (collections.jsonl is written
 *                    from them by lua/shingle/collections.lua).
 * The results are read back by core/collview.h.
 * Layouts: docs/collections.md. Reentrant, no global state. */
#ifndef SHINGLE_COLLECTIONS_H
#define SHINGLE_COLLECTIONS_H

#include <stddef.h>
#include <stdint.h>
#include "error.h"
#include "formats.h"
#include "webgraph.h"

/* Replica histogram bins (Figure 11): pages with 0, 1, 2, 3-9, 10-99,
 * 100-999 and 1000 or more similar pages besides themselves. */
#define SH_REPLICA_BINS 7
/* The bin of a page with r replicas. */
int sh_replica_bin(uint64_t r);

/* ---- trivial clusters ---------------------------------------------------- */
typedef struct sh_trivial_config {
    const char *name;        /* writes trivial-NAME.bin */
    int scheme;              /* SH_CHUNK_* to read chunks-S.bin; -1 with clusters */
    const char *clusters;    /* a clusters.bin of `shingle cluster` over the same pages, or NULL */
    uint32_t threshold;      /* T: shared chunks for a pair to be similar, >= 1 */
    uint32_t max_df;         /* chunks in more pages are dropped (0: no limit) */
    size_t memory;           /* budget for the two sorts, bytes */
    const char *temp_dir;    /* NULL: dir */
} sh_trivial_config;

typedef struct sh_trivial_stats {
    uint64_t chunk_records;  /* <chunk, page> records, after duplicates within a page */
    uint64_t distinct_chunks, common_dropped;
    uint64_t pair_records;   /* <page, page, 1> formed */
    uint64_t pairs;          /* distinct pairs sharing a chunk */
    uint64_t similar_pairs;  /* sharing at least T */
    uint64_t clusters;       /* trivial clusters of two or more pages */
    uint64_t pages_in_clusters, largest;
    uint64_t hist[SH_REPLICA_BINS]; /* over pages with text */
    double seconds;
} sh_trivial_stats;

sh_status sh_coll_trivial(const char *dir, const sh_trivial_config *cfg, sh_trivial_stats *st, sh_error *err);

/* ---- growing clusters ---------------------------------------------------- */
typedef enum sh_start_rule {
    SH_START_INLINKS = 0,    /* the trivial cluster whose pages have the most links from other sites */
    SH_START_FIRST = 1       /* the trivial cluster holding the earliest page */
} sh_start_rule;

typedef struct sh_grow_config {
    const char *trivial;     /* NAME of trivial-NAME.bin */
    int extended;            /* a = s >= d = b (section 4) instead of a = s = d = b */
    int single_site;         /* only links within a site: collections within one site */
    sh_start_rule start;
    uint32_t min_cardinality;/* report clusters of at least this many collections (>= 1) */
    uint32_t min_size;       /* ... and this many pages per collection (>= 1) */
    size_t memory;
    const char *temp_dir;
} sh_grow_config;

#define SH_GROW_TOP 10
typedef struct sh_grow_top {
    uint32_t cluster, cardinality, size, root;   /* root: page id of the first collection's root */
} sh_grow_top;

typedef struct sh_grow_stats {
    uint64_t trivial_clusters;   /* all, singletons included */
    uint64_t links_considered;   /* link records joined into the LinkSummary */
    uint64_t summary_rows, merge_edges, components;
    uint64_t clusters, collections, pages_in_collections, distinct_pages, shared_pages;
    uint64_t small_clusters;     /* grown but under min_cardinality or min_size */
    uint64_t split_components;   /* components no single start point reaches whole */
    uint64_t unmatched;          /* collection cells with no page to follow (should be 0) */
    uint64_t bytes_total, bytes_avoidable, pages_avoidable;
    double t_summary, t_tcg, t_regain, t_report;
    sh_grow_top top[SH_GROW_TOP];
    size_t n_top;
} sh_grow_stats;

sh_status sh_coll_grow(const char *dir, const sh_grow_config *cfg, sh_grow_stats *st, sh_error *err);

#endif
