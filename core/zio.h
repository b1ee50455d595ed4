/* Compressed input, read transparently: gzip (zlib) and zstd (libzstd),
 * recognised by their magic bytes, never by a file name; anything else is
 * passed through as it is. The one place that decompresses documents and
 * streams: the pool's workers read whole files through sh_zio_read_file,
 * line-oriented inputs (JSON Lines, mbox) through an sh_zstream.
 *
 *   gzip   1f 8b            several members one after the other are one stream
 *                           (as `cat a.gz b.gz` makes); zero padding after the
 *                           last member is ignored, other trailing bytes are an error
 *   zstd   28 b5 2f fd      several frames likewise; skippable frames are skipped
 *   xz, bzip2               recognised only to refuse them with a clear message
 *
 * Bounds: the decompressed size of a document is limited by the caller's max
 * (a compression bomb stops at max + 1 bytes with SH_ELIMIT, whatever its
 * compressed size); a stream has no total limit, but one line is limited, and
 * the bytes passed over after an over-long line are bounded too (see
 * sh_zstream_line). The zstd window is limited to 2^27 bytes (libzstd's
 * default), so a frame cannot make the decoder allocate more.
 *
 * No global state; one stream per thread. Errors name the file and the byte
 * offset in the compressed input. */
#ifndef SHINGLE_ZIO_H
#define SHINGLE_ZIO_H

#include <stddef.h>
#include <stdint.h>
#include "error.h"

typedef enum sh_zkind {
    SH_Z_PLAIN = 0, SH_Z_GZIP = 1, SH_Z_ZSTD = 2, SH_Z_XZ = 3, SH_Z_BZIP2 = 4
} sh_zkind;

/* The kind of data from its first bytes (n may be short: fewer than 6 bytes
 * can only be plain). */
sh_zkind sh_zio_kind(const void *head, size_t n);
/* "plain", "gzip", "zstd", "xz", "bzip2" */
const char *sh_zio_kind_name(sh_zkind k);

/* A growing buffer owned by the caller (zero-initialise; free(b->p)). */
typedef struct sh_zbuf {
    char *p;
    size_t len, cap;
} sh_zbuf;

/* Decompress in[0..n) (or copy it, if plain) into out (its previous content
 * replaced). max: the largest decompressed size accepted (0: no limit); more
 * gives SH_ELIMIT. Corrupt or truncated data gives SH_EFORMAT naming `name`
 * and the offset; xz and bzip2 give SH_EFORMAT saying to decompress first. */
sh_status sh_zio_decompress(const void *in, size_t n, size_t max, const char *name, sh_zbuf *out,
                            sh_zkind *kind, sh_error *err);

/* Read the whole file at path into out, decompressing it when its first bytes
 * say so. max bounds the bytes kept (after decompression; 0: no limit): a
 * larger document gives SH_ELIMIT having read at most max + 1 of them.
 * *kind (if not NULL) tells what the file was. SH_EIO when it cannot be read. */
sh_status sh_zio_read_file(const char *path, size_t max, sh_zbuf *out, sh_zkind *kind, sh_error *err);

/* The first bytes of the file at path, decompressed when it is gzip or zstd:
 * up to cap of them into buf, their count in *n (fewer at the end of the
 * file). For sniffing what a file holds: a plain file costs one read(2).
 * SH_EIO when it cannot be read; a compressed file that cannot be
 * decompressed gives the decoder's error. */
sh_status sh_zio_head(const char *path, char *buf, size_t cap, size_t *n, sh_error *err);

/* ---- streams ---------------------------------------------------------------- */

typedef struct sh_zstream sh_zstream;

/* Open path, or a descriptor (duplicated: the caller keeps and closes its
 * own; name is used in messages, e.g. "standard input"). The kind is decided
 * from the first bytes read. SH_EIO, SH_ENOMEM, or SH_EFORMAT for xz/bzip2. */
sh_status sh_zstream_open(const char *path, sh_zstream **out, sh_error *err);
/* ... from byte offset of path on (a piece of a plain file; a compressed one
 * read from elsewhere than its start gives SH_EFORMAT when it is read). */
sh_status sh_zstream_open_at(const char *path, uint64_t offset, sh_zstream **out, sh_error *err);
sh_status sh_zstream_open_fd(int fd, const char *name, sh_zstream **out, sh_error *err);
/* ... or over bytes in memory (not copied: they must outlive the stream). */
sh_status sh_zstream_open_mem(const void *p, size_t n, const char *name, sh_zstream **out, sh_error *err);

/* Up to want decompressed bytes from the current position, without consuming
 * them (fewer only at the end of the data): for detecting the format. *p stays
 * valid until the next call on the stream. */
sh_status sh_zstream_peek(sh_zstream *zs, size_t want, const char **p, size_t *n, sh_error *err);

/* Read up to n decompressed bytes; *got = 0 at the end. */
sh_status sh_zstream_read(sh_zstream *zs, void *buf, size_t n, size_t *got, sh_error *err);

/* The next line, without its "\n" (a "\r" before it is kept; the caller
 * decides), in *line (valid until the next call), *len bytes; *line = NULL at
 * the end. A last line without "\n" is a line. A line longer than max bytes is
 * passed over and gives SH_ELIMIT naming its number: call again for the next
 * one. If more than 16 * max bytes go by without a newline the stream gives up
 * (SH_ELIMIT, and every later call the same), so a bomb costs bounded time. */
sh_status sh_zstream_line(sh_zstream *zs, size_t max, const char **line, size_t *len, sh_error *err);

/* A stdio stream over the decompressed bytes from the current position (for
 * readers written over FILE *, such as the WARC reader): not seekable;
 * fclose it before closing zs. NULL with errno set if it cannot be made. */
#include <stdio.h>
FILE *sh_zstream_file(sh_zstream *zs);

/* SH_OK while the stream can go on; else the failure every later call gives
 * (an over-long line passed over leaves the stream usable). */
sh_status sh_zstream_failed(const sh_zstream *zs);

/* The message of the failure sh_zstream_failed reports (NULL while none). */
const char *sh_zstream_message(const sh_zstream *zs);

/* Decompressed bytes consumed so far (handed out or passed over). */
uint64_t sh_zstream_pos(const sh_zstream *zs);

/* What was read of the file (compressed bytes; for progress against its size),
 * and the number of the line last returned (1-based). */
uint64_t sh_zstream_in_bytes(const sh_zstream *zs);
uint64_t sh_zstream_lineno(const sh_zstream *zs);
sh_zkind sh_zstream_kind(const sh_zstream *zs);

/* Close the stream and the descriptor it owns. NULL is allowed. */
void sh_zstream_close(sh_zstream *zs);

#endif
