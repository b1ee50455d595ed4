/* JSON Lines input: one JSON object (RFC 8259) per line, each a document
 * with a text, a URL (or an id standing for it) and a date. Two parts:
 *
 *   a reader that streams lines from a file, a descriptor or a read function
 *   with memory bounded by the longest line it accepts: a longer line is
 *   refused after reading max_line bytes of it, and the rest of it is read
 *   past without being kept (docs/robustness.md, "Limits");
 *
 *   a parser of one line that validates the whole line as JSON and the
 *   document's fields, decoding their strings in place, so that it runs on
 *   any thread over a line it was handed (it keeps no state).
 *
 * What the fields may hold (docs/formats.md, "JSON Lines input"):
 *   text   a string (raw bytes that are not UTF-8 are kept, for the
 *          shingler's `invalid` policy to decide; a \u escape of a lone
 *          surrogate becomes U+FFFD)
 *   url    a string, or an integer, taken as its decimal digits; valid UTF-8
 *   id     the same; the URL of a document without a url field
 *   date   a string or an integer (its digits); valid UTF-8
 * null is the same as absent. Anything else (a fraction or an exponent, true,
 * an array, an object, a string that is not UTF-8, a control character) is
 * refused with a message naming the field and the column, so that nothing
 * reaches docs.jsonl that is not faithful JSON text. */
#ifndef SHINGLE_JSONL_H
#define SHINGLE_JSONL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "error.h"

/* The default longest line: the default largest document (64 MiB). */
#define SH_JSONL_MAX_LINE ((size_t)64 << 20)
/* Arrays and objects nest at most this deep in a line (a deeper line is refused). */
#define SH_JSONL_MAX_DEPTH 64

typedef struct sh_jsonl_fields {
    const char *text, *url, *id, *date;   /* field names; NULL: "text", "url", "id", "date" */
} sh_jsonl_fields;

typedef struct sh_span {
    const char *p;   /* NULL: absent */
    size_t n;
} sh_span;

typedef struct sh_jsonl_doc {
    sh_span text;   /* always present on success */
    sh_span url;    /* the url field, else the id field; absent if neither */
    sh_span date;
} sh_jsonl_doc;

/* Parse line[0..n) (one line, without its newline) as a document. String
 * values are decoded in place, into line itself (a decoded string is never
 * longer than its JSON text), so the spans of doc point into line. On
 * failure SH_EFORMAT, with err->offset the byte of the line at fault and a
 * message "column C: what, and what would work" (the caller names the file
 * and the line). Reentrant: no state but its arguments. */
sh_status sh_jsonl_parse(char *line, size_t n, const sh_jsonl_fields *f, sh_jsonl_doc *doc, sh_error *err);

/* Where a reader's bytes come from: like read(2), the number of bytes read
 * into buf (at most n), 0 at the end, -1 with errno set on failure. */
typedef ssize_t (*sh_read_fn)(void *ctx, void *buf, size_t n);

typedef struct sh_jsonl_reader sh_jsonl_reader;

/* Open a reader over the file path, the descriptor fd (not closed by the
 * reader), or a read function; name is what messages call the input.
 * max_line: the longest line accepted, in bytes (0: SH_JSONL_MAX_LINE).
 * SH_EIO naming the file if it cannot be opened or is a directory. */
sh_status sh_jsonl_open(const char *path, size_t max_line, sh_jsonl_reader **out, sh_error *err);
sh_status sh_jsonl_open_fd(int fd, const char *name, size_t max_line, sh_jsonl_reader **out, sh_error *err);
sh_status sh_jsonl_open_fn(sh_read_fn fn, void *ctx, const char *name, size_t max_line, sh_jsonl_reader **out,
                           sh_error *err);

/* Read only a piece of the input (a distributed run's share): the bytes
 * [start, stop) of a file opened by path, whose first line is line number
 * `line`. start must be a line's first byte. Call before the first read;
 * SH_EIO if the file cannot seek there. */
sh_status sh_jsonl_range(sh_jsonl_reader *r, uint64_t start, uint64_t stop, uint64_t line, sh_error *err);

/* The next line that is not blank: *line points to it in the reader's buffer
 * (without its newline or a carriage return before it; writable, valid until
 * the next call), *n its length, *lineno its number (from 1). At the end SH_OK
 * with *line NULL. A line longer than max_line: SH_EFORMAT "NAME: line L:
 * longer than the limit of M bytes ...; skipped", having read past it; the
 * reader goes on with the next call. SH_EIO naming the input on a read error
 * (the reader is then finished). */
sh_status sh_jsonl_next_line(sh_jsonl_reader *r, char **line, size_t *n, uint64_t *lineno, sh_error *err);

/* The next document: sh_jsonl_next_line then sh_jsonl_parse. At the end SH_OK
 * with doc->text.p NULL. A line that is not a document: SH_EFORMAT "NAME: line
 * L: column C: what; skipped" (the reader goes on). Spans valid until the next call. */
sh_status sh_jsonl_next(sh_jsonl_reader *r, const sh_jsonl_fields *f, sh_jsonl_doc *doc, uint64_t *lineno, sh_error *err);

/* Bytes consumed so far (for progress). */
uint64_t sh_jsonl_offset(const sh_jsonl_reader *r);
/* Where the last line handed out (sh_jsonl_next_line, sh_jsonl_next) starts
 * in the input, in bytes from its beginning (after a byte order mark), and
 * *len its length (without newline or carriage return): what reads it again
 * from a plain file (pread), as exact verification does for the documents
 * of candidate pairs (core/verifysets.h). */
uint64_t sh_jsonl_line_offset(const sh_jsonl_reader *r, size_t *len);
/* The name messages use. */
const char *sh_jsonl_name(const sh_jsonl_reader *r);

void sh_jsonl_close(sh_jsonl_reader *r);

/* A URL or date from elsewhere (a file name, a WARC header) as faithful
 * text for a JSON output: each byte that is not part of a well-formed UTF-8
 * sequence, and each control character, becomes %XX (as RFC 3987 maps an
 * IRI to a URI); everything else is copied. out needs 3 * n bytes. Returns
 * the length written; equal to n exactly when s needed no change. */
size_t sh_text_escape_invalid(const char *s, size_t n, char *out);

#endif
