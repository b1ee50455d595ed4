/* Exact verification without keeping every full shingle set: phase 1 writes
 * where each document came from (formats.h, sources.bin) instead of its full
 * set, and before phase 4 this step shingles again only the documents of the
 * candidate pairs (cluster.h, sh_candidates), on the pool's threads, into
 * fullsets.bin and fullsets.idx, which sh_run_full (run.h) reads. Each set
 * made again must have the fingerprint phase 1 gave the document (docs.bin
 * set_fp): an input changed since phase 1 is refused, not verified against. */
#ifndef SHINGLE_VERIFYSETS_H
#define SHINGLE_VERIFYSETS_H

#include "cluster.h"
#include "jsonl.h"
#include "pool.h"

typedef struct sh_verify_sets_stats {
    uint64_t documents;   /* documents shingled again */
    uint64_t values;      /* values written to fullsets.bin */
    uint64_t bytes;       /* bytes of JSON Lines read again (files: not counted) */
    int in_memory;        /* 1: held in memory, not written */
    int from_counts;      /* 1: the candidates' estimates came from pairs.bin's shared counts (pairest.h) */
} sh_verify_sets_stats;

/* The sets made again, held in memory: document i's full_n values at
 * v + at[i] (at[i] = SH_FULL_AT_SOURCE: not made). Phase 4 reads them through
 * sh_decide_config.fullsets. */
struct sh_fullsets {
    uint32_t n;            /* documents of the run */
    uint64_t *at;
    uint64_t *v;
    uint64_t n_values;
    /* the candidates as sh_candidates found them, a byte per pair of
     * pairs.bin (n_pairs), so phase 4 does not estimate every pair again;
     * NULL if not kept */
    unsigned char *pair_cand;
    uint64_t n_pairs;
    sh_policy cand_policy;  /* the policy and score they were found with: phase 4 */
    double cand_score;      /* uses them only with the same */
};
void sh_fullsets_free(sh_fullsets *f);

/* Make the full sets of the candidate documents of dir for phase 4 with cfg
 * (every document at a source with every = 1: the methods whose candidates
 * are not in pairs.bin). pool: one made with the options of phase 1 and
 * want_full; fields: the JSON Lines field names of phase 1 (NULL: the
 * defaults). When they take at most memory bytes and mem is not NULL, they
 * are kept in memory (*mem, for sh_decide_config.fullsets); else written to
 * fullsets.bin and fullsets.idx (*mem NULL). Nothing to do (SH_OK, *mem
 * NULL) when no document of dir is at a source. Removes what an earlier call
 * left first. */
sh_status sh_verify_sets(const char *dir, sh_pool *pool, const sh_decide_config *cfg, int every,
                         const sh_jsonl_fields *fields, size_t memory, sh_fullsets **mem, sh_verify_sets_stats *st,
                         sh_error *err);

/* Remove fullsets.bin and fullsets.idx (after phase 4). */
void sh_verify_sets_remove(const char *dir);

#endif
