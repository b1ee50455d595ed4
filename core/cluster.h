/* The clustering pipeline of "Syntactic Clustering of the Web" ("The
 * clustering algorithm", "Identical documents", "Common shingles", "Super
 * shingles"), as bulk steps over files in one output directory. Lua calls
 * them in order (lua/shingle/pipeline.lua); each step reads the files of the
 * steps before it and writes its own atomically (core/recfile.h), so a step
 * can be re-run, and phase 4 can be re-run with another policy.
 *
 *   phase 1   sh_p1_*        docs.bin, sketches.bin [, shingles.bin, sigs.bin]
 *   dedupe    sh_dedupe      docs.bin again, with each document's representative
 *   phase 2-3 sh_pairs       pairs.bin: <doc, doc, shared sketch values>, by external sort
 *   phase 4   sh_decide      links.bin, clusters.bin: policy, union-find
 *   or        sh_supershingle, sh_lsh, sh_greedy in place of phases 2-4
 * Formats: core/formats.h, docs/formats.md. */
#ifndef SHINGLE_CLUSTER_H
#define SHINGLE_CLUSTER_H

#include <stddef.h>
#include <stdint.h>
#include "formats.h"
#include "pairs.h"
#include "policy.h"
#include "pool.h"
#include "recfile.h"

/* ---- phase 1: sketch documents and write them ---------------------------- */
typedef struct sh_p1 {
    sh_recwriter docs, sketches, full, sigs;
    sh_recwriter src, names;  /* with sources: sources.bin, srcnames.bin */
    int sources;
    uint64_t names_size;      /* bytes of srcnames.bin so far */
    char *last_name;          /* the last name written (a JSON Lines file repeats) */
    uint64_t last_name_at;
    int want_full;
    uint32_t sig_k;
    uint64_t n_docs, n_values, n_full, n_ok, n_bytes;
    uint64_t m;            /* the run's modulus (MOD sketches) */
} sh_p1;

sh_status sh_p1_open(sh_p1 *p, const char *dir, const sh_pool_config *cfg, const sh_sketch_params *identity, sh_error *err);
/* Append the results of one pool batch; documents keep their order (ids). */
sh_status sh_p1_add(sh_p1 *p, const sh_doc_out *outs, size_t n, sh_error *err);

/* Where a document came from (formats.h, sources.bin): kind SH_SRC_FILE with
 * name its path, SH_SRC_JSONL with name the plain file and off, len its
 * line; SH_SRC_STORED for one that cannot be read again. */
typedef struct sh_doc_src {
    int kind;
    int html;
    const char *name;
    uint64_t off, len;
} sh_doc_src;

/* With exact verification (the pool's want_full): write sources.bin and
 * srcnames.bin (cwd first), and keep in shingles.bin only the full sets of
 * documents that cannot be read again. Call after sh_p1_open. */
sh_status sh_p1_sources(sh_p1 *p, const char *dir, const char *cwd, sh_error *err);
/* sh_p1_add with each document's source (srcs[i]; NULL: none). */
sh_status sh_p1_add_src(sh_p1 *p, const sh_doc_out *outs, const sh_doc_src *srcs, size_t n, sh_error *err);
sh_status sh_p1_commit(sh_p1 *p, sh_error *err);
void sh_p1_abort(sh_p1 *p);

/* ---- identical documents ------------------------------------------------- */
typedef struct sh_dedupe_stats {
    uint64_t docs, skipped, exact, lexical, shingle, representatives;
} sh_dedupe_stats;

/* Group documents with equal raw, canonical or shingle-set fingerprints; the
 * smallest id of a group is its representative. Rewrites docs.bin. */
sh_status sh_dedupe(const char *dir, sh_dedupe_stats *st, sh_error *err);

/* ---- phases 2 and 3 ------------------------------------------------------ */
typedef struct sh_pairs_config {
    sh_progress_fn progress; /* may be NULL */
    void *progress_ud;
    size_t memory;          /* budget for the external sorts, bytes */
    uint32_t max_df;        /* drop shingles shared by more documents (paper: 1000) */
    const char *temp_dir;   /* NULL: the output directory */
    int threads;            /* threads counting the pairs when phase 3 fits in memory (0: one); pairs.bin
                             * is the same for any number */
    int sync_later;         /* 1: pairs.bin is not fsynced here; the caller syncs the directory before it
                             * counts (a staged output: util.output syncs the tree before the swap) */
} sh_pairs_config;

typedef struct sh_pairs_stats {
    uint64_t records;         /* <shingle, doc> records */
    uint64_t shingles;        /* distinct shingles */
    uint64_t common_dropped;  /* shingles over max_df */
    uint64_t pair_records;    /* <doc, doc, 1> triplets formed */
    uint64_t pairs;           /* distinct pairs after merging counts */
    uint64_t disk_peak;       /* bytes of run files written by the sorts */
    double t_merge, t_form, t_pairmerge; /* seconds: shingle merging, pair formation, pair merging */
} sh_pairs_stats;

sh_status sh_pairs(const char *dir, const sh_pairs_config *cfg, sh_pairs_stats *st, sh_error *err);

/* ---- phase 4 ------------------------------------------------------------- */
/* A caller's own policy: 1 links the pair, 0 does not, -1 stops phase 4 with
 * SH_EINVAL (the callback explains why in its own way). e holds the estimate,
 * or the exact values with verify; shared is the number of shared sketch
 * values; sizes are the documents' shingle counts. */
typedef int (*sh_accept_fn)(void *ud, uint32_t a, uint32_t b, uint32_t shared, const sh_estimate *e,
                            uint32_t size_a, uint32_t size_b);

typedef struct sh_fullsets sh_fullsets; /* verifysets.h */

typedef struct sh_decide_config {
    const sh_fullsets *fullsets; /* with verify: the candidates' sets made again in memory (verifysets.h), or NULL */
    sh_progress_fn progress; /* may be NULL */
    void *progress_ud;
    sh_accept_fn accept;    /* NULL: decide by policy and threshold */
    void *accept_ud;
    sh_policy policy;
    double threshold;       /* on the decided score */
    double candidate;       /* with verify: estimated score a pair needs to be verified */
    int verify;             /* decide on exact scores from shingles.bin */
    int threads;            /* threads judging pairs (sh_decide, sh_candidates; 0: one); the results
                             * are the same for any number */
    unsigned chunk_pairs;   /* pairs a thread judges at a time (0: 8192; small in the specs) */
    int shared_counts;      /* 1: pairs.bin's shared counts are phase 3's over the run's sketches with
                             * max_df, so sh_candidates may estimate the pairs from them (pairest.h),
                             * once their sum is checked; 0: from the sketches */
    uint32_t max_df;        /* with shared_counts: phase 3's max_df (0: no common shingle dropped) */
} sh_decide_config;

typedef struct sh_decide_stats {
    uint64_t pairs, candidates, linked, clusters, clustered_docs, identical_only_clusters, mixed_clusters;
} sh_decide_stats;

/* Decide the pairs of pairs.bin; write links.bin and clusters.bin. */
sh_status sh_decide(const char *dir, const sh_decide_config *cfg, sh_decide_stats *st, sh_error *err);

/* What phase 4 does after deciding, for a decision made elsewhere (the ranks
 * of a distributed run, core/dist.h): clusters.bin from the links of
 * links.bin plus n_joins extra joins (pairs of ids, linked without a
 * links.bin record, as the alternatives do without a check), each identical
 * document with its representative (docs.bin). Sets st's cluster counts
 * (clusters, clustered_docs, identical_only_clusters, mixed_clusters) and
 * *joined (may be NULL) to the extra joins that joined two clusters. */
sh_status sh_finish_clusters(const char *dir, const uint32_t *joins, size_t n_joins, sh_decide_stats *st, size_t *joined,
                             sh_error *err);

/* The pairs exact verification decides in sh_decide, and the documents it
 * reads: those of pairs.bin whose estimate passes cfg's policy at
 * cfg->candidate (every pair when cfg->accept is set). mark (a byte per
 * document) gets 1 at both ends of each, pair_mark (a byte per pair) 1 at
 * each; either may be NULL; *n_pairs (may be NULL) = their number;
 * *from_counts (may be NULL) = 1 if the estimates came from the shared
 * counts (cfg->shared_counts, pairest.h), 0 if from the sketches. Reads
 * docs.bin, sketches.bin and pairs.bin. */
sh_status sh_candidates(const char *dir, const sh_decide_config *cfg, unsigned char *mark, unsigned char *pair_mark,
                        uint64_t *n_pairs, int *from_counts, sh_error *err);

/* ---- reading a run back ------------------------------------------------- */

/* The records of dir/clusters.bin, links.bin or docs.bin, mapped and checked
 * (sh_recfile_open): *recs and *n describe them until sh_recfile_close(f).
 * Errors: SH_EIO (no such file), SH_EFORMAT naming the file. */
sh_status sh_run_clusters(sh_recfile *f, const char *dir, const sh_clusterrec **recs, size_t *n, sh_error *err);
sh_status sh_run_links(sh_recfile *f, const char *dir, const sh_linkrec **recs, size_t *n, sh_error *err);
sh_status sh_run_docs(sh_recfile *f, const char *dir, const sh_docrec **recs, size_t *n, sh_error *err);

/* ---- alternatives to phases 2-4 (same inputs, same outputs) --------------- */
typedef struct sh_alt_config {
    size_t memory;
    const char *temp_dir;
    sh_decide_config decide;  /* verify: check each linked pair with the estimator (or exactly) */
    int check;                /* supershingle/lsh: keep only pairs that pass decide */
    uint32_t bands, rows;     /* LSH */
    int meta;                 /* supershingle: 1 = Broder 1997 meta-sketch, 0 = 6 x 14, 2 of 6 */
    uint32_t meta_w;          /* meta-sketch window over the sorted sketch */
} sh_alt_config;

sh_status sh_supershingle(const char *dir, const sh_alt_config *cfg, sh_decide_stats *st, sh_pairs_stats *ps, sh_error *err);
sh_status sh_lsh(const char *dir, const sh_alt_config *cfg, sh_decide_stats *st, sh_pairs_stats *ps, sh_error *err);
sh_status sh_greedy(const char *dir, const sh_alt_config *cfg, sh_decide_stats *st, sh_error *err);

/* ---- scores of chosen pairs (shingle dedup: a removed document and the one kept) ---- */

/* For i < n, est[i] = the estimate of documents a[i] and b[i] (0-based ids)
 * from sketches.bin; exact (if not NULL) the exact values from shingles.bin,
 * or resemblance -1 when the run kept no full sets. A skipped document gives
 * zeros. SH_EINVAL for an id out of range. */
sh_status sh_pair_estimates(const char *dir, const uint32_t *a, const uint32_t *b, size_t n, sh_estimate *est,
                            sh_estimate *exact, sh_error *err);

#endif
