/* Checking an index (docs/robustness.md, "Index"). LMDB keeps no page
 * checksums: a damaged page is found only when it is read, and LMDB may then
 * stop the process on an assertion or crash on a bad pointer. So:
 *
 *   sh_index_check_file   before an index is mapped: data.mdb must be as
 *                         long as its newest meta page says (a truncated
 *                         file would crash the first reader with SIGBUS);
 *   sh_ixdoc_decode       every document record read is checked before use;
 *   sh_index_check        walks every table of an index in a child process,
 *                         so that an assertion or a crash in LMDB becomes a
 *                         line of the report instead of the end of the caller. */
#ifndef SHINGLE_IXCHECK_H
#define SHINGLE_IXCHECK_H

#include <stddef.h>
#include <stdint.h>
#include "error.h"
#include "formats.h"
#include "sketch.h"

/* The named tables of an index environment, in the order index.c opens them
 * (docs/formats.md, "Index"); SH_INDEX_DUPSORT says which hold sorted lists
 * of 4-byte document ids. */
#define SH_INDEX_NTABLES 14
#define SH_INDEX_TABLE_NAMES { "meta", "docs", "postings", "urls", "raw", "canon", "cluster", "members", "sweeps", "sweepdocs", \
                               "delta", "delta_urls", "delta_raw", "delta_canon" }
#define SH_INDEX_DUPSORT { 0, 0, 1, 1, 1, 1, 0, 1, 0, 1, 1, 1, 1, 1 }
/* The delta tables (entries of postings, urls, raw and canon added since
 * they were last merged into them, core/index.c "postings and delta") came
 * after format 1's first indexes: an index without them has none. */
#define SH_INDEX_FIRST_OPTIONAL 10

/* SH_OK if dir/data.mdb is absent (a new index) or holds at least the pages
 * its newest valid meta page counts; SH_EFORMAT naming the file, its size and
 * the size it needs when it is truncated or has no valid meta page; SH_EIO if
 * it cannot be read. *used (if not NULL) gets the bytes the newest committed
 * state uses, 0 for an absent file. */
sh_status sh_index_check_file(const char *dir, uint64_t *used, sh_error *err);

/* Decode the "docs" record v[0..n) of document doc: the header into *d (and
 * *url, *url_len pointing into v), after checking that its size is the header
 * plus its values and URL, its relation and modulus steps are in range and
 * its values ascend. SH_EFORMAT naming the document otherwise. */
sh_status sh_ixdoc_decode(const void *v, size_t n, uint32_t doc, sh_ixdoc *d, const char **url, size_t *url_len,
                          sh_error *err);

/* The sketch of a decoded record (checked by sh_ixdoc_decode) as the
 * estimator takes it, into out (room for d->n_values values): p are the
 * index's parameters. */
void sh_ixdoc_sketch(const sh_sketch_params *p, const sh_ixdoc *d, const void *v, sh_sketch *out);

/* A line of a check's report: kind is "table" (text "NAME ENTRIES"),
 * "problem" (a sentence), "lmdb" (what LMDB printed before it stopped) or
 * "crash" (the signal that ended the walk and where it was). */
typedef void (*sh_index_check_fn)(void *ctx, const char *kind, const char *text);

/* Walk every table of the index at dir in a child process, reading every
 * record and checking what can be checked without the whole index in
 * memory (record sizes and ranges, ids below the next id, counts that must
 * agree), calling fn for each line of the report. *problems gets the number
 * of problems and crashes (0: the index reads whole). SH_EIO if the child
 * cannot be started. */
sh_status sh_index_check(const char *dir, sh_index_check_fn fn, void *ctx, uint64_t *problems, sh_error *err);

#endif
