/* Record files: the intermediate files of the clustering pipeline (documents,
 * sketch values, full shingle sets, document pairs). One layout for all
 * (docs/formats.md, "Record files"):
 *
 *   header   magic[8] | u32 version | u32 record_size | u32 meta_size | u32 reserved
 *   meta     meta_size bytes (file-type specific: parameters, counts), zero-padded
 *            to a multiple of 8 so that records start 8-byte aligned
 *   records  count * record_size bytes
 *   trailer  u64 count | u32 crc32(records) | u32 crc32(header + meta) | "SHEND\0\0\0"
 *
 * All integers little-endian (core/formats.h has the constants and the
 * records of every file, and says why a big-endian host is refused). The
 * trailer comes last so a writer streams
 * without seeking back; a writer writes NAME.tmp and renames it to NAME only
 * when everything is written and flushed, so a file with the final name is
 * complete, and a killed run leaves at most a .tmp behind. A reader checks
 * the magic, version, record size and both checksums before handing out
 * records. */
#ifndef SHINGLE_RECFILE_H
#define SHINGLE_RECFILE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "error.h"
#include "formats.h"

typedef struct sh_recwriter {
    FILE *f;
    char *path;        /* final name */
    char *tmp;         /* NAME.tmp */
    uint32_t record_size;
    uint64_t count;
    uint32_t crc;      /* of the records so far */
    uint32_t hcrc;     /* of header + meta */
    int scratch;       /* set by the caller after open: a working file that need not
                          survive a crash (a rank's shard, core/dist.c), so commit
                          skips the fsync; still checksummed and renamed */
    int sync_later;    /* set by the caller after open: the file is made durable later, by an
                          fsync of the directory it is in before that directory counts (a
                          staged output, util.output's sync_tree), so commit skips the fsync
                          but its writeback is started as it grows */
    uint64_t written;  /* bytes of records appended */
    uint64_t synced;   /* of them, handed to the disk's writeback so far (sh_writeback) */
} sh_recwriter;

/* Start writing path (as path.tmp). magic is 8 bytes. */
sh_status sh_recwriter_open(sh_recwriter *w, const char *path, const char magic[8], uint32_t record_size,
                            const void *meta, uint32_t meta_size, sh_error *err);
/* Append n records. */
sh_status sh_recwriter_append(sh_recwriter *w, const void *records, size_t n, sh_error *err);
/* Write the trailer, flush, fsync (unless w->scratch) and rename to the final
 * name. Frees w's resources. */
sh_status sh_recwriter_commit(sh_recwriter *w, sh_error *err);
/* Give up: close and remove the .tmp. Safe to call on a committed or zeroed writer. */
void sh_recwriter_abort(sh_recwriter *w);

typedef struct sh_recfile {
    void *map;         /* the whole file, mapped read-only */
    size_t map_size;
    const unsigned char *meta;
    uint32_t meta_size;
    const unsigned char *records;
    uint32_t record_size;
    uint64_t count;
} sh_recfile;

/* Map and verify path: magic, version, record size (record_size; 0 takes
 * any), sizes, checksums. SH_EIO if it cannot be opened; SH_EFORMAT (naming
 * the file and the byte offset) if it is truncated, corrupt, of another kind
 * or of other records. verify = 0 skips the record checksum (for files this
 * process just wrote). */
sh_status sh_recfile_open(sh_recfile *r, const char *path, const char magic[8], uint32_t record_size, int verify,
                          sh_error *err);
void sh_recfile_close(sh_recfile *r);

/* The same file read with pread rather than mapped, for large files read in
 * small random pieces: the pages stay in the page cache and out of the
 * process's resident set. sh_recstream_open checks it as sh_recfile_open does
 * (streaming the checksum), then records are read with sh_recstream_read. */
typedef struct sh_recstream {
    int fd;
    uint32_t record_size;
    uint64_t count;
    uint64_t records_off;  /* byte offset of the first record */
    char path[1024];
} sh_recstream;

sh_status sh_recstream_open(sh_recstream *r, const char *path, const char magic[8], uint32_t record_size, sh_error *err);
/* Read records [first, first + n) into out. SH_EIO or SH_EFORMAT naming the file. */
sh_status sh_recstream_read(const sh_recstream *r, uint64_t first, uint64_t n, void *out, sh_error *err);
void sh_recstream_close(sh_recstream *r);

#endif
