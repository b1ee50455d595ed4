/* A streaming WARC reader (ISO 28500, WARC/1.0 and WARC/1.1).
 *
 * Reads one record at a time from a plain file or a gzip-compressed one
 * (normally one gzip member per record, as crawlers write them; one stream for
 * the whole file also works). Compression is detected from the first two bytes
 * of the file, never from its name. For `response` records whose Content-Type
 * is application/http, the HTTP status line and headers are parsed and the
 * body is given separately, de-chunked and decompressed, because that body is
 * the document text to be shingled and the headers are not (core/http.h does
 * that part).
 *
 * Errors: a malformed, truncated or corrupt record makes sh_warc_next return
 * SH_EFORMAT with a message naming the file, the byte offset and the problem.
 * The caller may stop, or call sh_warc_next again: the reader then
 * resynchronizes on the next gzip member (compressed files) or the next line
 * starting "WARC/1." (plain files) after the bad record's start. Every call
 * makes progress, so "continue on error" loops terminate.
 *
 * Memory: every buffer belongs to the reader and is reused across records; a
 * record is valid until the next sh_warc_next or sh_warc_close. No global
 * state; one reader per thread. See docs/formats-warc-links.md. */
#ifndef SHINGLE_WARC_H
#define SHINGLE_WARC_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "error.h"
#include "http.h"

typedef struct sh_warc sh_warc;

typedef struct sh_warc_opts {
    size_t max_record;   /* largest block read into memory, and largest decoded HTTP
                            body; 0 means SH_WARC_DEFAULT_MAX_RECORD */
    size_t max_header;   /* largest WARC header; 0 means SH_WARC_DEFAULT_MAX_HEADER */
    int raw_http;        /* nonzero: do not parse application/http blocks */
} sh_warc_opts;

#define SH_WARC_DEFAULT_MAX_RECORD ((size_t)64 << 20)
#define SH_WARC_DEFAULT_MAX_HEADER ((size_t)1 << 20)

/* A header field (core/http.h): name and value NUL-terminated, the value
 * trimmed, folded continuation lines joined with one space. Look one up with
 * sh_header_get. */
typedef sh_header_field sh_warc_field;

typedef struct sh_warc_record {
    uint64_t offset;         /* where the record starts in the file; in a gzip file,
                                the offset of the gzip member it starts in (as CDX has it) */
    uint64_t length;         /* bytes it occupies in the file (gzip: the member's compressed
                                length) when the record is its own member or the file is
                                plain; 0 if unknown (several records in one member) */
    const char *version;     /* "WARC/1.0" or "WARC/1.1" */
    /* Named fields, NULL when absent. WARC-Target-URI loses any <> around it. */
    const char *type;        /* WARC-Type */
    const char *target_uri;  /* WARC-Target-URI */
    const char *date;        /* WARC-Date */
    const char *record_id;   /* WARC-Record-ID, e.g. "<urn:uuid:...>" */
    const char *content_type;/* Content-Type of the block */
    const sh_warc_field *fields;  /* all WARC header fields, in order */
    size_t nfields;
    uint64_t content_length; /* the block length the header declares */
    const char *block;       /* the block (NUL-terminated for convenience); NULL if skipped */
    size_t block_len;
    int skipped;             /* 1: the block exceeded max_record and was passed over
                                unread (header fields are valid; warning says so) */

    /* application/http responses (http_status 0 otherwise, or if unparsable) */
    int http_status;
    const char *http_content_type;   /* the HTTP Content-Type, NULL if absent */
    const sh_warc_field *http_fields;/* HTTP header fields, in order */
    size_t http_nfields;
    const char *http_headers;        /* raw status line and headers, within block */
    size_t http_headers_len;

    /* The document bytes: for a parsed HTTP response the body after
     * de-chunking and Content-Encoding gzip/deflate decoding; otherwise the
     * whole block. Empty (never NULL) when there is none. */
    const char *payload;
    size_t payload_len;

    /* Non-fatal problems with this record (skipped block, truncated chunked or
     * compressed body, unknown Content-Encoding, ...), or NULL. */
    const char *warning;
} sh_warc_record;

/* Open the WARC file at path for reading (name is used in messages).
 * Returns SH_OK and a reader in *out, SH_EIO (with errno) or SH_ENOMEM. */
sh_status sh_warc_open(const char *path, const sh_warc_opts *opts, sh_warc **out, sh_error *err);

/* The same over an open descriptor, read from its current position; fd is
 * duplicated, so the caller still owns (and closes) its own. name may be NULL. */
sh_status sh_warc_open_fd(int fd, const char *name, const sh_warc_opts *opts, sh_warc **out,
                          sh_error *err);

/* The same over a stdio stream; the caller keeps ownership of fp and must not
 * read it while the reader is in use. Offsets are file positions when fp is
 * seekable, else counted from where reading started. */
sh_status sh_warc_open_stream(FILE *fp, const char *name, const sh_warc_opts *opts, sh_warc **out,
                              sh_error *err);

/* Read the next record. On SH_OK, *rec is the record, or NULL at the end of
 * the file. On SH_EFORMAT (bad record, corrupt gzip member; err names file
 * and offset) the caller may call again to go on with the next record. After
 * SH_EIO or SH_ENOMEM the reader is finished and further calls give *rec NULL. */
sh_status sh_warc_next(sh_warc *w, const sh_warc_record **rec, sh_error *err);

/* 1 if the file is gzip-compressed. */
int sh_warc_is_gzip(const sh_warc *w);

/* Close the reader (and the file it opened). NULL is allowed. */
void sh_warc_close(sh_warc *w);

#endif
