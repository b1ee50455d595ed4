/* Many sketches in one file, written and read as a stream: a research
 * script sketches a corpus once and runs many experiments on the file
 * (docs/formats.md, "Sketch file"). Every sketch of a file has the same
 * parameters (the file's: kind, w, k, option, token mode, polynomials, seed,
 * rules), stored once in the header; a record holds a key (a string, an
 * integer, a number, or none), the values of one sketch and what varies
 * between documents (MIN size, size class, MOD modulus, counts). Records are
 * checksummed one by one, so a damaged file is refused at the record that
 * is damaged, and a trailer holds the count, so a truncated file is never
 * taken for a complete one.
 *
 * The writer writes PATH.tmp and renames it over PATH on commit (a reader
 * sees the old file or the whole new one). The reader reads through
 * core/zio.h, so a sketch file may be gzip- or zstd-compressed; it holds
 * one record in memory at a time, whatever the file's size. No global state. */
#ifndef SHINGLE_SKETCHFILE_H
#define SHINGLE_SKETCHFILE_H

#include <stddef.h>
#include <stdint.h>
#include "error.h"
#include "sketch.h"

#define SH_SKFILE_MAGIC "SHSKFILE"
#define SH_SKFILE_VERSION 1u
#define SH_SKFILE_BOM 0x01020304u         /* written little-endian: 04 03 02 01 */
#define SH_SKFILE_END "SHSKEND\0"
#define SH_SKFILE_MAX_KEY ((uint32_t)1 << 20)
#define SH_SKFILE_MAX_META ((uint32_t)1 << 20)

typedef enum sh_skkey_type {
    SH_SKKEY_NONE = 0, SH_SKKEY_STRING = 1, SH_SKKEY_INTEGER = 2, SH_SKKEY_NUMBER = 3
} sh_skkey_type;

typedef struct sh_skkey {
    sh_skkey_type type;
    const char *s;        /* STRING: the bytes (not NUL-terminated), len of them */
    size_t len;
    int64_t i;            /* INTEGER */
    double d;             /* NUMBER */
} sh_skkey;

/* ---- writing ---------------------------------------------------------------- */

typedef struct sh_skfile_writer sh_skfile_writer;

/* Start writing path (as path.tmp until committed). SH_EIO naming the file. */
sh_status sh_skfile_create(const char *path, sh_skfile_writer **out, sh_error *err);

/* Bytes the file carries for its user (e.g. an LSH index's configuration,
 * JSON), stored in the header and covered by its checksum; at most 1 MiB.
 * Only before the first sketch. SH_EINVAL otherwise. */
sh_status sh_skfile_set_meta(sh_skfile_writer *w, const void *p, size_t n, sh_error *err);

/* Append one sketch under key. The first sketch sets the file's parameters;
 * a later one that cannot be compared with it gives SH_EMISMATCH naming the
 * parameter (the record is not written). Full sketches are allowed. */
sh_status sh_skfile_put(sh_skfile_writer *w, const sh_skkey *key, const sh_sketch *s, sh_error *err);

/* Write the trailer, flush, fsync and rename: the file is complete. *count
 * (if not NULL) is the number of records. The writer is freed either way. */
sh_status sh_skfile_commit(sh_skfile_writer *w, uint64_t *count, sh_error *err);

/* Give up: remove path.tmp, free the writer. NULL is allowed. */
void sh_skfile_abort(sh_skfile_writer *w);

uint64_t sh_skfile_written(const sh_skfile_writer *w);

/* ---- reading ------------------------------------------------------------------ */

typedef struct sh_skfile_reader sh_skfile_reader;

/* Open path (plain, gzip or zstd) and read its header. SH_EIO, or
 * SH_EFORMAT naming the file and the byte offset. */
sh_status sh_skfile_open(const char *path, sh_skfile_reader **out, sh_error *err);
/* The same over bytes in memory (not copied: they must outlive the reader). */
sh_status sh_skfile_open_mem(const void *p, size_t n, const char *name, sh_skfile_reader **out, sh_error *err);

/* The meta bytes of the header (n = 0 when there are none); valid until close. */
const char *sh_skfile_meta(const sh_skfile_reader *r, size_t *n);

/* The parameters every sketch of the file has (a sketch of no values), or
 * NULL for a file of no records. */
const sh_sketch *sh_skfile_params(const sh_skfile_reader *r);

/* The next record: SH_OK with *sketch (owned by the reader, valid until the
 * next call) and *key (its bytes likewise), or *sketch = NULL at the end
 * (after the trailer was found and checked). A damaged record, a count that
 * does not match the trailer, or a file that ends without its trailer give
 * SH_EFORMAT naming the record and the byte offset; the reader is then done. */
sh_status sh_skfile_next(sh_skfile_reader *r, sh_skkey *key, const sh_sketch **sketch, sh_error *err);

/* Records read so far; compressed bytes of the file read so far. */
uint64_t sh_skfile_read_count(const sh_skfile_reader *r);
uint64_t sh_skfile_offset(const sh_skfile_reader *r);

void sh_skfile_close(sh_skfile_reader *r);

#endif
