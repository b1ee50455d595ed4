/* The persistent index ("Syntactic Clustering of the Web", "Query support",
 * "On the fly resemblance", "Lost and found"): an LMDB environment, so any
 * number of processes read it while one writes, with no server, and a whole
 * sweep is added in one transaction (a writer killed half-way leaves the index
 * as it was). Layout (docs/formats.md, "Index"):
 *
 *   meta       "format" -> u32 1; "params" -> serialized empty sketch (the
 *              parameters, polynomials, seed and rules every sketch must share);
 *              "policy" -> u32 policy, f64 threshold; "next" -> u32 next doc id
 *   docs       u32 doc (BE) -> sh_ixdoc header, sketch values (LE u64), URL bytes
 *   postings   u64 value (BE) -> sorted u32 docs (BE)       the <shingle, ID> file
 *   delta      the same, for docs added since it was last merged into postings
 *   delta_urls, delta_raw, delta_canon   the same for urls, raw and canon
 *   urls       u64 AUG fingerprint of the URL (BE) -> docs  the <fingerprint, ID> pairs
 *   raw, canon u64 content fingerprints -> docs             identical / lexically equal
 *   cluster    u32 doc -> u32 cluster                        document -> cluster
 *   members    u32 cluster -> docs                           cluster -> documents
 *   sweeps     sweep name -> u32 sweep id, u32 documents
 *   sweepdocs  u32 sweep -> docs
 *
 * Adding documents links them into clusters incrementally: identical documents
 * by fingerprint, near-duplicates by looking up their sketch values in the
 * postings and deciding each candidate pair by the index's policy, merging
 * clusters by size. Since every pair that shares a sketch value is decided
 * with the same symmetric rule, the clusters equal re-clustering everything
 * from scratch with that policy ("we need only sketch the documents from the
 * last sweep and merge them into the existing clusters"). */
#ifndef SHINGLE_INDEX_H
#define SHINGLE_INDEX_H

#include <stddef.h>
#include <stdint.h>
#include "formats.h"
#include "policy.h"
#include "sketch.h"

typedef struct sh_index sh_index;

/* What is stored for each document: sh_ixdoc (core/formats.h). */

/* Open (creating if create and absent) the index directory path. map_size:
 * the most bytes the index may grow to (0: 64 GiB; sparse, so it costs
 * nothing until used). SH_EIO names the path; SH_EFORMAT for a file that is
 * not an LMDB environment or an index of another format version. */
sh_status sh_index_open(sh_index **out, const char *path, int readonly, int create, size_t map_size, sh_error *err);
void sh_index_close(sh_index *ix);

/* What a binding keeps with a handle, made once (the C API's shinglers for
 * shingle_index_add, core/capi.c): sh_index_attach stores p, to be freed
 * with free_fn when the index is closed, unless the handle has one already
 * (another thread was first): it returns the one the handle keeps, which
 * the caller's p then is not. */
void *sh_index_attach(sh_index *ix, void *p, void (*free_fn)(void *));
void *sh_index_attachment(const sh_index *ix);

/* The parameters recorded by the first add; *present = 0 for an empty index. */
sh_status sh_index_params(sh_index *ix, sh_sketch_params *p, int *present, sh_policy *pol, double *threshold, sh_error *err);

typedef struct sh_index_doc {
    const char *url;
    size_t url_len;
    uint64_t raw_fp, canon_fp;
    const sh_sketch *sketch;
} sh_index_doc;

typedef struct sh_index_add_stats {
    uint64_t added, identical, candidates, linked, merges;
    uint64_t already;   /* skipped: the same URL with the same content is in the sweep */
    uint64_t refused;   /* refused: the same URL with other content is in the sweep */
    uint64_t from_counts; /* candidate pairs decided from their counts of shared values (core/index.c, "pairs from counts") */
    uint64_t postings_merged; /* entries of delta the commit merged into the postings (core/index.c, "postings and delta"), or 0 */
} sh_index_add_stats;

/* ids[i] of a document sh_index_add refused (its URL is in the sweep with other content) */
#define SH_INDEX_REFUSED UINT32_MAX

typedef struct sh_index_adder sh_index_adder;

/* Begin adding one sweep in one write transaction. identity: the parameters
 * of the sketches to come (the first add records them, later ones must match:
 * SH_EMISMATCH otherwise). policy/threshold: recorded by the first add; later
 * adds must pass the same (SH_EMISMATCH). max_df: postings longer than this
 * are not searched for candidates (0: no limit). */
sh_status sh_index_begin(sh_index *ix, const char *sweep, const sh_sketch_params *identity, sh_policy policy,
                         double threshold, uint32_t max_df, sh_index_adder **out, sh_error *err);
/* Into an index with postings, an add's postings wait until about this many
 * sketch values are there (or the commit) and go in together (core/index.c,
 * "deferred postings"); 0: the default, a quarter of the postings there up to
 * 8,388,608 (chunk_values). Tests set small chunks to
 * cross their boundaries. */
void sh_index_set_chunk(sh_index_adder *a, size_t values);

/* For tests of the ways an add decides its candidate pairs (core/index.c,
 * "pairs from counts"): SH_INDEX_NO_COUNTS estimates every pair from its
 * two sketches; SH_INDEX_CHECK_COUNTS estimates a pair decided from its
 * counts from its sketches too and fails the add (SH_EINVAL) when the two
 * estimates differ in any score; SH_INDEX_PAIRS_SORTED gathers a new
 * index's pairs in the external sort, never in memory; SH_INDEX_PAIRS_SMALL
 * gives the pairs in memory 4 KiB, so they move to the external sort after a
 * few values. And of where postings go (core/index.c, "postings and delta"):
 * SH_INDEX_MERGE_ALWAYS merges delta into the postings at the commit whatever
 * its size, SH_INDEX_MERGE_NEVER never (nor before a large batch);
 * SH_INDEX_PRELOOK searches the postings ahead on a thread for every batch
 * into delta, handing over the answers 7 values at a time. */
enum { SH_INDEX_NO_COUNTS = 1, SH_INDEX_CHECK_COUNTS = 2, SH_INDEX_PAIRS_SORTED = 4, SH_INDEX_PAIRS_SMALL = 8,
       SH_INDEX_MERGE_ALWAYS = 16, SH_INDEX_MERGE_NEVER = 32, SH_INDEX_PRELOOK = 64 };
void sh_index_set_test(sh_index_adder *a, int flags);

/* Add docs[0..n) (their sketches must carry identity's parameters); ids[i] gets each new id.
 * A sweep holds one version of a URL: a document whose URL is already in the
 * sweep (added before, or earlier in docs) is not added; ids[i] is then the
 * id of that document when its raw bytes are the same (counted in
 * st.already: adding a sweep again adds nothing twice), else
 * SH_INDEX_REFUSED (counted in st.refused). */
sh_status sh_index_add(sh_index_adder *a, const sh_index_doc *docs, size_t n, uint32_t *ids, sh_error *err);
/* Commit the sweep: it becomes visible to readers all at once. */
sh_status sh_index_commit(sh_index_adder *a, sh_index_add_stats *st, sh_error *err);

/* Add the documents of a finished cluster run in dir (its docs.bin and
 * sketches.bin: core/cluster.h) as sh_index_add would add them sketched
 * again, in the order of their ids, without sketching them again (`shingle
 * cluster --index`): document i (0-based) with urls[i] (url_lens[i] bytes)
 * when urls[i] is not NULL and the run sketched it; n must be the run's
 * number of documents. Its sketches must be made with the index's shingler
 * (SH_EMISMATCH otherwise, as for sh_index_add). *added counts the
 * documents added. */
sh_status sh_index_add_run(sh_index_adder *a, const char *dir, const char *const *urls, const size_t *url_lens, uint32_t n,
                           size_t *added, sh_error *err);
/* Store a user value under key in the index's meta table, within the add's
 * transaction (keys starting with "user." only: the rest is the index's own). */
sh_status sh_index_meta_put(sh_index_adder *a, const char *key, const void *data, size_t n, sh_error *err);
/* Read one: *data is a malloc'ed copy, NULL if absent. */
sh_status sh_index_meta_get(sh_index *ix, const char *key, char **data, size_t *n, sh_error *err);

/* Abandon the sweep: the index is left as it was. */
void sh_index_abort(sh_index_adder *a);

/* ---- queries ------------------------------------------------------------------
 * Each query reads in its own read transaction, unless the caller pinned one:
 * between sh_index_read_begin and sh_index_read_end every query of this
 * handle reads the same snapshot (a web request sees one state of the index
 * whatever a writer commits meanwhile; the handle is renewed, not allocated,
 * each time). The pair nests; a pinned handle must not be shared by threads. */
sh_status sh_index_read_begin(sh_index *ix, sh_error *err);
void sh_index_read_end(sh_index *ix);

typedef struct sh_index_hit {
    uint32_t doc, shared;
    double r, cab, cba;     /* estimated resemblance, containment of the query in doc, of doc in the query */
} sh_index_hit;

/* On-the-fly resemblance: look up each value of q in the postings (for the
 * resemblance and both policies, only the smallest K of a large query's
 * values, K ~ 63 / threshold, enough that a document passing the policy is
 * missed with probability below 1e-12 while those sharing fewer than
 * SH_INDEX_QUERY_SAMPLE_SHARED of them are not fetched: index.c
 * query_lookups; and of a small one only as many as a pigeonhole needs),
 * skipping values held by more than max_df documents (0: none skipped),
 * estimate resemblance and containment against the stored sketches, keep
 * those that pass policy at threshold (resemblance, the larger containment,
 * either or both), best first by resemblance or, when by_containment, by the
 * larger containment; at most top (0: all). *hits is malloc'ed. */
#ifndef SH_INDEX_QUERY_SAMPLE_SHARED
#define SH_INDEX_QUERY_SAMPLE_SHARED 4
#endif
/* A query whose values all count (a small document's, index.c
 * query_lookups) looks up only n - need + SH_INDEX_QUERY_SHARED of its n
 * values, need being the fewest a passing document shares, and fetches the
 * documents sharing SH_INDEX_QUERY_SHARED of those: fewer lookups (each a
 * search of the largest B-tree), a few more documents read. */
#ifndef SH_INDEX_QUERY_SHARED
#define SH_INDEX_QUERY_SHARED 3
#endif
sh_status sh_index_similar(sh_index *ix, const sh_sketch *q, double threshold, sh_policy policy, int by_containment,
                           uint32_t top, uint32_t max_df, sh_index_hit **hits, size_t *n, sh_error *err);

/* A document: its record, a malloc'ed copy of its sketch (if sk), its URL and sweep name copied into
 * caller buffers (truncated to cap). SH_EINVAL if there is no such document. */
sh_status sh_index_doc_get(sh_index *ix, uint32_t doc, sh_ixdoc *d, sh_sketch **sk, char *url, size_t url_cap,
                           char *sweep, size_t sweep_cap, sh_error *err);

/* Document ids by URL, by cluster, by sweep (malloc'ed lists). */
sh_status sh_index_url_docs(sh_index *ix, const char *url, size_t len, uint32_t **ids, size_t *n, sh_error *err);
sh_status sh_index_cluster_docs(sh_index *ix, uint32_t cluster, uint32_t **ids, size_t *n, sh_error *err);
sh_status sh_index_sweep_docs(sh_index *ix, const char *sweep, uint32_t **ids, size_t *n, sh_error *err);

/* Sweep names in order, with their document counts: names is one malloc'ed
 * block of NUL-separated strings. */
sh_status sh_index_sweeps(sh_index *ix, char **names, uint32_t **counts, size_t *n, sh_error *err);

/* Number of documents. */
sh_status sh_index_count(sh_index *ix, uint32_t *n, sh_error *err);

/* Merge the delta tables into their tables now, in one write transaction
 * (core/index.c, "postings and delta": adds merge them at a quarter of their
 * tables' size; lookups without the postings cache search both until then).
 * *postings, *fingerprints: the entries moved (either may be NULL). */
sh_status sh_index_merge(sh_index *ix, uint64_t *postings, uint64_t *fingerprints, sh_error *err);

/* The postings filter of this handle (core/ixfilter.c): start building it,
 * from every key of the postings, in a thread of its own (a few seconds and
 * ~1.6 bytes a posting for a large index: 65 MB for 1M documents of 5 KB;
 * the handle's memory until it is closed). Once built, every sh_index_similar of the handle first leaves out
 * the values the filter says no document has, instead of searching the
 * postings for each; the filter follows the documents added since (by any
 * writer) as each query finds them in its snapshot. A second call does
 * nothing. For a server's long-lived handles, not one-off queries.
 *
 * cache_max > 0 also builds the postings cache (core/ixcache.c) from the same
 * snapshot, when it fits in cache_max bytes (~13 bytes a posting at most:
 * 480 MB for 1M documents of 5 KB): every key with its documents in memory,
 * so that a query's values that are keys cost a few cache misses each
 * instead of a search of the postings B-tree. Documents added later are
 * found in the postings as before (a second filter says which values they
 * have). The same hits with or without it. */
sh_status sh_index_filter_start(sh_index *ix, size_t cache_max, sh_error *err);

typedef struct {
    int started, ready;      /* sh_index_filter_start was called; the filter is built */
    size_t bytes, capacity;  /* its memory, and the values it was sized for */
    uint32_t covers;         /* the documents it holds the values of: (internal) ids below this */
    uint64_t tested, skipped; /* sketch values the queries asked it about, and left out as absent */
    const char *error;       /* why the build gave up (then queries go without), or NULL */
    size_t cache_bytes, cache_keys; /* the postings cache (0 without one) */
    uint32_t cache_covers;   /* the documents it holds the postings of: ids below this */
    uint64_t cache_found, cache_looked_up; /* values it answered, and values searched in the postings beside it */
    const char *cache_note;  /* why there is no cache, when one was asked for, or NULL */
    int shared;              /* filter and cache came from sh_index_aids_use */
} sh_index_filter_stats;

void sh_index_filter_info(sh_index *ix, sh_index_filter_stats *st);

/* The filter and cache of one handle, for handles opened later: in this
 * process, or in processes forked from it (a server's workers share them
 * then, copy-on-write). sh_index_aids_take waits for ix's build
 * (sh_index_filter_start) and takes them from ix, whose queries go without
 * from then on; NULL with err when there is none or the build failed.
 * sh_index_aids_use gives them to ix, a handle of the same index (its path;
 * with at least the documents they hold) whose filter was not started: its
 * queries use them as their own (documents added since are added to the
 * filter, and searched for beside the cache), but they are not freed with
 * it: a must outlive every handle using it. */
typedef struct sh_index_aids sh_index_aids;
sh_index_aids *sh_index_aids_take(sh_index *ix, sh_error *err);
sh_status sh_index_aids_use(sh_index *ix, sh_index_aids *a, sh_error *err);
void sh_index_aids_free(sh_index_aids *a);

/* The URL fingerprint the index uses: AUG under the fixed polynomial
 * SH_INDEX_URL_POLY (P64b of docs/vectors.md), so it does not depend on the
 * index's seed. */
uint64_t sh_index_url_fp(const sh_index *ix, const char *url, size_t len);

#endif
