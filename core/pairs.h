/* Pair formation: from records <key, id> sorted by key, every pair of ids
 * that share a key. It is phase 3 of "Syntactic Clustering of the Web" ("we
 * generate a list of all the pairs of documents that share any shingles,
 * along with the number of shingles they have in common": <shingle, ID>
 * groups give <ID, ID, 1> triplets, "Common shingles" drops the groups of
 * more than max_df documents) and the iceberg count of Cho et al., "Finding
 * replicated web collections", section 3.2 (<chunk, page> groups; pages
 * sharing at least T chunks). The super shingles and LSH use it too, with
 * their own keys. One implementation, for 8-byte keys (shingles, super
 * shingles, LSH bands) and 4-byte keys (chunk fingerprints).
 *
 * Record layouts (big-endian keys and ids, so that memcmp order, which the
 * external sort uses, is numeric order):
 *   key record    key (key_size bytes, BE) | u32 id (BE)
 *   pair record   u32 a (BE) | u32 b (BE) | u32 count (LE)       a < b
 * A pair sorter (sh_pairsort_open) keys on <a, b> and adds the counts of
 * equal pairs as it merges, so that its output holds each pair once with
 * the number of keys the two ids share. */
#ifndef SHINGLE_PAIRS_H
#define SHINGLE_PAIRS_H

#include <stddef.h>
#include <stdint.h>
#include "byteorder.h"
#include "error.h"
#include "extsort.h"
#include "unionfind.h"

#define SH_PAIR_RECORD 12u

/* Progress of a long step: called now and then with the step's name, the
 * work done and the total (0: unknown). */
typedef void (*sh_progress_fn)(void *ud, const char *step, uint64_t done, uint64_t total);

typedef struct sh_form_config {
    size_t key_size;          /* 8 or 4: bytes of the key before the id */
    uint32_t max_df;          /* a key shared by more ids is dropped ("common"); 0: no limit */
    sh_extsort *pairs;        /* where the pairs go (a pair sorter); NULL: join as stars */
    int star;                 /* with pairs: a group's pairs are its first id with each other one (a star, as
                               * uf has it), not every pair */
    sh_unionfind *uf;         /* without pairs: each group's ids are joined (a star on its first) */
    sh_progress_fn progress;  /* may be NULL: called as (ud, step, records read, total) */
    void *progress_ud;
    const char *progress_step;
    uint64_t progress_total;
    int threads;              /* sh_form_pairs_memory: threads counting the pairs (0: one); pairs.bin is
                               * the same for any number */
    uint32_t chunk_ids;       /* sh_form_pairs_memory: ids a thread counts at a time (0: 512; small in tests) */
    int sync_later;           /* sh_form_pairs_memory: pairs.bin is synced by the caller later (recfile.h) */
} sh_form_config;

typedef struct sh_form_stats {
    uint64_t records;         /* key records read */
    uint64_t keys;            /* distinct keys */
    uint64_t dropped;         /* keys over max_df */
    uint64_t pair_records;    /* pairs emitted (before their counts are merged) */
} sh_form_stats;

/* Read the finished sorter keys (records of c->key_size + 4 bytes, sorted by
 * key) to the end and, for every key of g ids (2 <= g <= max_df), emit the
 * g(g - 1)/2 pairs <a, b, 1> with a < b into c->pairs, or join the g ids in
 * c->uf. *st is added to. Errors: those of the sorters, SH_ENOMEM. */
sh_status sh_form_pairs(sh_extsort *keys, const sh_form_config *c, sh_form_stats *st, sh_error *err);

/* The memory sh_form_pairs_memory needs at most for records key records of
 * ids below n. */
uint64_t sh_form_pairs_memory_need(uint64_t records, uint32_t n);

/* Phase 3 in memory when it fits (sh_form_pairs_memory_need): the same pairs
 * and counts as sh_form_pairs into a pair sorter and sh_pairs_write make,
 * written as pairs.bin at path (the same bytes), without sorting the pair
 * records. The groups of the finished sorter keys (c->key_size, c->max_df,
 * c->progress as for sh_form_pairs; not c->star, c->uf, c->pairs) are kept
 * as sorted lists of ids; then for each id a, in order, the groups holding
 * it give the counts of the ids after it (a dense counter over the n ids),
 * emitted in order of b. *st and *count are added to; *t_count is the time
 * spent counting and writing. Errors: those of the sorter and the writer
 * (nothing is left at path), SH_ENOMEM. */
/* The counting is done on c->threads threads, c->chunk_ids ids at a time,
 * the chunks' pairs written in order of a. */
sh_status sh_form_pairs_memory(sh_extsort *keys, const sh_form_config *c, uint32_t n, const char *path,
                               sh_form_stats *st, uint64_t *count, double *t_count, sh_error *err);

/* A sorter for pair records: keyed on <a, b>, the counts of equal pairs added. */
sh_status sh_pairsort_open(sh_extsort **out, size_t memory, const char *temp_dir, sh_error *err);

/* Write the merged pairs of a finished pair sorter as a pairs.bin record file
 * (sh_pairrec, core/formats.h) at path (scratch: 1, a working file, not
 * synced; 2, synced later by the caller, sync_later in recfile.h); *count is
 * added the number written. Errors: those of the
 * sorter and the writer (nothing is left at path). */
sh_status sh_pairs_write(const char *path, sh_extsort *pairs, int scratch, uint64_t *count, sh_error *err);

/* A key record: key (its low key_size bytes, BE), then id. */
static inline void sh_key_record(unsigned char *o, size_t key_size, uint64_t key, uint32_t id)
{
    if (key_size == 8) sh_store_be64(o, key);
    else sh_store_be32(o, (uint32_t)key);
    sh_store_be32(o + key_size, id);
}

/* The fields of a pair record. */
static inline uint32_t sh_pair_a(const unsigned char *rec) { return sh_load_be32(rec); }
static inline uint32_t sh_pair_b(const unsigned char *rec) { return sh_load_be32(rec + 4); }
static inline uint32_t sh_pair_count(const unsigned char *rec) { return sh_load_le32(rec + 8); }

#endif
