/* The clustering phases of "Syntactic Clustering of the Web" across the
 * ranks of a distributed run (MPI), with the same result as one process.
 *
 * The paper ran its 30 million documents by "divide, compute, merge" and
 * notes which phases are parallelizable ("Status": sketching, shingle
 * merging, ID-ID merging). Here every rank sketches its share of the inputs
 * (phase 1, core/cluster.h, into its own directory, ids local), and these
 * collective steps do the rest, each rank owning a range of every key:
 *
 *   sh_dist_open     counts: rank r's documents have global ids firsts[r] ..
 *                    firsts[r+1]-1, the global input order, so ids equal a
 *                    single process's
 *   sh_dist_dedupe   "Identical documents": <kind, fingerprint, id> records
 *                    to the owners of the fingerprints' ranges, groups joined
 *                    at rank 0 (only the documents that have a copy), each
 *                    document's representative and relation back to its rank;
 *                    rewrites the rank's docs.bin with global representatives
 *   sh_dist_pairs    phases 2-3: <shingle, id> records to the owners of the
 *                    shingle ranges, sorted there, common shingles dropped,
 *                    <id, id, 1> formed and merged locally, then sent to the
 *                    rank that owns the first id and merged again: the rank's
 *                    pairs.bin holds the pairs whose first id is its own,
 *                    global ids, sorted, exactly the single process's pairs
 *                    of that id range
 *   sh_dist_decide   phase 4's decision where the pairs are: the sketches (and
 *                    with verification the full sets of the candidates'
 *                    documents) of the other ranks' documents are fetched
 *                    into a shard directory that looks like a single-process
 *                    run, and sh_decide (the same code as one process)
 *                    decides it; the rank's links.bin, global ids
 *   sh_dist_collect  rank 0 writes docs.bin and links.bin of the whole run
 *                    into the output directory (and, as asked, sketches.bin,
 *                    shingles.bin, sigs.bin, pairs.bin), byte for byte those
 *                    of one process; sh_finish_clusters (cluster.h) then forms
 *                    the clusters there, and the report is the single
 *                    process's.
 *
 * Each rank sorts externally within its own memory budget, with run files in
 * its own temp directory. Counters returned are totals over all ranks. Every
 * function is collective (exchange.h): on an error the rank must end the job. */
#ifndef SHINGLE_DIST_H
#define SHINGLE_DIST_H

#include <stddef.h>
#include <stdint.h>
#include "cluster.h"
#include "exchange.h"

typedef struct sh_dist_config {
    size_t memory;            /* this rank's budget for its sorters (the exchange's buffers are the comm's) */
    const char *temp_dir;     /* sort runs and the decision shard; NULL: the rank's directory */
    sh_progress_fn progress;  /* may be NULL; called on this rank */
    void *progress_ud;
} sh_dist_config;

/* A step of a distributed phase, as measured on this rank: what moved
 * between ranks (not counting a rank's records to itself) and how long the
 * step took here. */
typedef struct sh_dist_step {
    const char *name;         /* "fingerprints", "shingles", "pairs", ... (static) */
    double seconds;
    uint64_t sent, received;  /* bytes to and from the other ranks */
} sh_dist_step;

#define SH_DIST_MAX_STEPS 64

typedef struct sh_dist {
    sh_comm *comm;
    char *dir;                /* this rank's run directory (phase 1's files) */
    char *temp;               /* where sorters and shards go */
    size_t memory;
    sh_progress_fn progress;
    void *progress_ud;
    uint32_t n;               /* this rank's documents */
    uint32_t first;           /* the global id of its first */
    uint32_t *firsts;         /* size + 1 entries: rank r's first global id; firsts[size] = all documents */
    uint64_t *values_at;      /* size + 1: where each rank's sketch values start in the whole run's sketches.bin */
    uint64_t *full_at;        /* size + 1: the same for shingles.bin */
    uint32_t sig_k;
    uint32_t meta_crc;        /* of docs.bin's meta: every rank's must agree */
    sh_dist_step steps[SH_DIST_MAX_STEPS];  /* the steps so far, in order (the last ones kept) */
    int n_steps;
    uint32_t *joins;          /* rank 0, after sh_dist_keys without a check: id pairs to join */
    size_t n_joins;
} sh_dist;

/* Open this rank's part of a run: dir holds its phase 1 (docs.bin,
 * sketches.bin, [shingles.bin, sigs.bin]). Collective. Errors: those of
 * reading docs.bin; SH_EMISMATCH when the ranks sketched with different
 * parameters; SH_EINVAL for more than 4294967294 documents in all. */
sh_status sh_dist_open(sh_dist *d, sh_comm *c, const char *dir, const sh_dist_config *cfg, sh_error *err);
void sh_dist_close(sh_dist *d);
/* The rank that holds global document id. */
int sh_dist_owner(const sh_dist *d, uint32_t id);

sh_status sh_dist_dedupe(sh_dist *d, sh_dedupe_stats *st, sh_error *err);
/* cfg->memory and cfg->temp_dir are ignored (the dist's are used). */
sh_status sh_dist_pairs(sh_dist *d, const sh_pairs_config *cfg, sh_pairs_stats *st, sh_error *err);
/* The alternatives' phases 2-3 (super shingles, lsh 0; LSH bands, lsh 1):
 * their keys exchanged and paired as sh_dist_pairs does with shingles. With
 * cfg->check the rank's pairs.bin is then decided by sh_dist_decide; without,
 * the documents sharing a key are joined as a star at rank 0 (sh_dist_finish)
 * and the rank's links.bin is empty.
 * cfg->memory and temp_dir are ignored. */
sh_status sh_dist_keys(sh_dist *d, const sh_alt_config *cfg, int lsh, sh_pairs_stats *st, sh_error *err);
/* Rank 0: clusters.bin of outdir (holding the run's docs.bin and links.bin,
 * sh_dist_collect) with the joins of sh_dist_keys (sh_finish_clusters). */
sh_status sh_dist_finish(sh_dist *d, const char *outdir, sh_decide_stats *st, size_t *joined, sh_error *err);
/* cfg as for sh_decide; an accept callback is called with global ids. st:
 * pairs, candidates, linked (the cluster counts come from sh_finish_clusters). */
sh_status sh_dist_decide(sh_dist *d, const sh_decide_config *cfg, sh_decide_stats *st, sh_error *err);

enum {
    SH_COLLECT_SKETCHES = 1,  /* sketches.bin */
    SH_COLLECT_FULL = 2,      /* shingles.bin (with exact verification) */
    SH_COLLECT_SIGS = 4,      /* sigs.bin (when phase 1 kept signatures) */
    SH_COLLECT_PAIRS = 8,     /* pairs.bin (after sh_dist_pairs) */
    SH_COLLECT_LINKS = 16     /* links.bin (after sh_dist_decide) */
};
/* Write, at root, outdir/docs.bin of all documents (global ids and offsets)
 * and the files of `what`, each the concatenation of the ranks' parts in rank
 * order. Collective; outdir matters at root only. */
sh_status sh_dist_collect(sh_dist *d, int root, const char *outdir, unsigned what, sh_error *err);

/* Concatenate every rank's file at path into root_path at root, in rank
 * order, atomically (root_path.tmp, then renamed). A rank whose path is NULL
 * sends nothing. *bytes (may be NULL) is set at root to the bytes written. */
sh_status sh_dist_gather_file(sh_comm *c, int root, const char *path, const char *root_path, uint64_t *bytes, sh_error *err);

/* Splitting one large input at record boundaries (JSON Lines: lines).
 * sh_dist_line_start: the offset of the first line that starts at or after
 * offset (0 for 0; the file's size when no line starts there).
 * sh_dist_count_lines: the newlines in bytes [start, stop). Errors: SH_EIO
 * naming the file. */
sh_status sh_dist_line_start(const char *path, uint64_t offset, uint64_t *pos, sh_error *err);
sh_status sh_dist_count_lines(const char *path, uint64_t start, uint64_t stop, uint64_t *lines, sh_error *err);

#endif
