/* External sort of fixed-size records within a memory budget (Broder et al.
 * 1997, "Algorithms": divide, compute, merge — sort pieces that fit in memory,
 * then merge them; used for the <shingle, doc> list and the <doc, doc, count>
 * triplets of the clustering phases).
 *
 * Records are opaque byte strings of record_size bytes; they are ordered by
 * memcmp order of their first key_size bytes. Store integer keys big-endian
 * (most significant byte first) and memcmp order is numeric order; a
 * <u64 shingle, u32 doc> record with the shingle big-endian and key_size 8
 * sorts by shingle. The sort is stable: records with equal keys come out in
 * the order they were added, whatever the budget and the number of runs.
 *
 * Records are buffered until the buffer (and its radix-sort scratch) would
 * exceed the budget; the buffer is then radix sorted and written as a run file
 * (format: docs/formats-runs.md) in a private directory made under temp_dir.
 * sh_extsort_finish merges the runs with a loser tree, in intermediate passes
 * if there are more runs than the budget allows buffers for, and
 * sh_extsort_read returns the sorted records in bulk. Buffers are all carved
 * from the budget, so the sorter holds at most memory_budget bytes (plus a few
 * hundred bytes per run) regardless of the input size. If everything fits in
 * memory, no file is written.
 *
 * Reentrant, no global state. A sorter is used by one thread at a time. */
#ifndef SHINGLE_EXTSORT_H
#define SHINGLE_EXTSORT_H

#include <stddef.h>
#include <stdint.h>
#include "error.h"

#define SH_EXTSORT_MAX_RECORD      4096u         /* largest record_size */
#define SH_EXTSORT_MIN_RUN_BUFFER  (32u * 1024)  /* smallest read/write buffer per run */
#define SH_EXTSORT_MIN_BUDGET      (4u * SH_EXTSORT_MIN_RUN_BUFFER)
#define SH_EXTSORT_DEFAULT_FAN_IN  256u          /* runs merged at once (open files) */

/* Folds rec into acc, two records with equal keys; acc came first in the
 * stable order. It may change acc's non-key bytes (add a count, keep a max)
 * and must not change acc's key bytes. ud is the config's combine_ud. */
typedef void (*sh_extsort_combine_fn)(void *acc, const void *rec, void *ud);

typedef struct sh_extsort_config {
    size_t record_size;    /* bytes per record, 1..SH_EXTSORT_MAX_RECORD */
    size_t key_size;       /* leading bytes that are the key, 1..record_size */
    size_t memory_budget;  /* bytes, >= SH_EXTSORT_MIN_BUDGET */
    const char *temp_dir;  /* directory for run files; NULL: $TMPDIR, else /tmp */
    unsigned max_fan_in;   /* most runs merged at once, >= 2; 0: SH_EXTSORT_DEFAULT_FAN_IN */
    sh_extsort_combine_fn combine; /* NULL: keep every record; else one record per key */
    void *combine_ud;      /* passed to combine */
} sh_extsort_config;

typedef struct sh_extsort_stats {
    uint64_t records_in;          /* records added */
    uint64_t records_out;         /* records returned by sh_extsort_read so far */
    uint64_t runs_spilled;        /* run files written from the in-memory buffer */
    uint64_t intermediate_merges; /* merges of several runs into one run file */
    uint64_t bytes_written;       /* run file bytes written, all passes */
    uint64_t bytes_read;          /* run file bytes read, all passes */
    unsigned final_fan_in;        /* runs merged by sh_extsort_read; 0 when in memory */
    size_t peak_memory;           /* most buffer bytes held at once (<= memory_budget) */
} sh_extsort_stats;

typedef struct sh_extsort sh_extsort;

/* Makes a sorter for cfg (copied; temp_dir is copied too). Allocates little:
 * the record buffer grows with the input up to the budget, and the run
 * directory is made only when the first run is written.
 * Errors: SH_EINVAL for a size, budget or fan-in out of range; SH_ENOMEM. */
sh_status sh_extsort_new(sh_extsort **out, const sh_extsort_config *cfg, sh_error *err);

/* The common case of sh_extsort_new: a sorter of record_size-byte records by
 * their first key_size bytes, within memory bytes (raised to
 * SH_EXTSORT_MIN_BUDGET if less), run files under temp_dir, combine as in the
 * config. */
sh_status sh_extsort_open(sh_extsort **out, size_t record_size, size_t key_size, size_t memory, const char *temp_dir,
                          sh_extsort_combine_fn combine, sh_error *err);

/* Adds n records (n * record_size bytes at records; copied). May sort and
 * write a run file. Errors: SH_EIO (temp dir not writable, disk full) naming
 * the file; SH_ENOMEM; SH_EINVAL after sh_extsort_finish. After an error the
 * sorter is failed: every later call returns the same error. */
sh_status sh_extsort_add(sh_extsort *s, const void *records, size_t n, sh_error *err);

/* Ends input and prepares the sorted output: sorts the buffer, or writes it as
 * a last run and does the intermediate merge passes needed so that the
 * remaining runs can be merged by sh_extsort_read within the budget.
 * Errors: SH_EIO, SH_EFORMAT (a run file was changed on disk: truncated,
 * corrupt or foreign; the message names the file and byte offset), SH_ENOMEM,
 * SH_EINVAL if called twice. */
sh_status sh_extsort_finish(sh_extsort *s, sh_error *err);

/* Copies up to max sorted records to out (max * record_size bytes) and sets
 * *n_out to the number copied; *n_out == 0 means the end. With a combine
 * function, each key appears once. Records of one key may span two calls, so
 * a caller grouping by key keeps the last key of the previous call.
 * A payload checksum is verified as each run ends: on SH_EFORMAT or SH_EIO
 * the records returned before may be wrong and must be discarded.
 * Errors: SH_EIO, SH_EFORMAT, SH_EINVAL before sh_extsort_finish or if max
 * is 0 (which would be mistaken for the end). */
sh_status sh_extsort_read(sh_extsort *s, void *out, size_t max, size_t *n_out, sh_error *err);

/* Fills *st with counters so far. */
void sh_extsort_get_stats(const sh_extsort *s, sh_extsort_stats *st);

/* The private run directory, or NULL if no run file was written (yet). */
const char *sh_extsort_run_dir(const sh_extsort *s);

/* Closes files, removes the run files and the run directory (also after an
 * error), frees everything. NULL is a no-op. */
void sh_extsort_free(sh_extsort *s);

/* A combine function that keeps the first record of each key (unique mode). */
void sh_extsort_keep_first(void *acc, const void *rec, void *ud);

/* The in-memory sort used for runs, usable on its own: sorts n records of
 * record_size bytes at recs by their first key_size bytes (memcmp order),
 * stably, with an MSD radix pass on the top key byte and LSD radix passes per
 * bucket while it fits in cache. aux is scratch of n * record_size bytes
 * (not overlapping recs). record_size and key_size as in the config. */
void sh_radix_sort(void *recs, void *aux, size_t n, size_t record_size, size_t key_size);

#endif
