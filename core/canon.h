/* Canonicalization and tokenizing (Broder 1997, "Definitions": a parser reduces
 * a document to a canonical sequence of tokens, so that documents differing
 * only in formatting, capitalization or punctuation give the same sequence).
 *
 * One pass over the input bytes: optional HTML stripping (tags, comments,
 * the contents of script and style, entities decoded), lowercasing (ASCII fast
 * path, UTF-8 through utf8proc; a multibyte letter is never split or dropped),
 * and splitting into words. Every token keeps the byte span it came from in the
 * input, so a caller can show the original text that matched.
 *
 * Reentrant: all state lives in the caller's sh_tokens and sh_canon_opts. */
#ifndef SHINGLE_CANON_H
#define SHINGLE_CANON_H

#include <stddef.h>
#include "error.h"
#include "simd.h"

enum {
    SH_CANON_HTML    = 1u << 0, /* input is HTML: strip tags, comments, script/style; decode entities */
    SH_CANON_LOWER   = 1u << 1, /* lowercase letters (simple Unicode mapping) */
    SH_CANON_NUMBERS = 1u << 2, /* keep tokens made only of digits (else dropped) */
    SH_CANON_PUNCT   = 1u << 3, /* keep each punctuation/symbol character as a token of its own (else a separator) */
    SH_CANON_FOLD    = 1u << 4, /* Unicode fold: NFKC, case fold, strip combining marks (implies LOWER) */
    SH_CANON_CODE    = 1u << 5, /* source code instead (codetok.h): the other flags and invalid do not apply */
    SH_CANON_TWEET   = 1u << 6  /* first blank what the tweet rule set drops (tweet.h); offsets stay the input's */
};

/* What to do with bytes that are not valid UTF-8. */
typedef enum sh_utf8_mode {
    SH_UTF8_ERROR = 0, /* fail with SH_EUTF8 naming the byte offset */
    SH_UTF8_SKIP,      /* treat each invalid byte as a separator */
    SH_UTF8_LATIN1     /* read each invalid byte as the Latin-1 character of that value */
} sh_utf8_mode;

typedef struct sh_canon_opts {
    unsigned flags;            /* SH_CANON_* */
    sh_utf8_mode invalid;
    sh_simd simd;              /* instruction set level of the scanner (simd.h); 0: the best there is */
} sh_canon_opts;

/* The default the paper describes for web pages: HTML off, lowercase, keep numbers, drop punctuation. */
#define SH_CANON_DEFAULT_FLAGS (SH_CANON_LOWER | SH_CANON_NUMBERS)

typedef struct sh_token {
    size_t src_off;  /* offset in the input of the token's first byte */
    size_t src_len;  /* bytes of input the token spans (an entity counts whole) */
    size_t off;      /* offset of the token's canonical bytes in sh_tokens.text */
    size_t len;      /* length of the canonical bytes (UTF-8, never empty) */
} sh_token;

/* Zero bytes that follow the canonical text of the last token, so that a
 * reader may load 16 bytes at the start of any token without a bounds test. */
#define SH_CANON_SLACK 16

/* Bytes of the head of a token (sh_tokens.head): its first canonical bytes,
 * zero-padded. No canonical token contains a NUL byte, so the padding tells
 * the length of a token shorter than this. */
#define SH_TOKEN_HEAD 16

/* Output buffers, reused across calls (the arrays only grow). Zero-initialize
 * before first use; release with sh_tokens_free. After a successful
 * sh_canon_tokenize, text[text_len .. text_len + SH_CANON_SLACK) are zero. */
typedef struct sh_tokens {
    sh_token *tok;
    unsigned char *head; /* SH_TOKEN_HEAD bytes per token, in order: what a hash of
                          * short tokens reads without touching text */
    size_t n, cap;
    char *text;          /* canonical bytes of the tokens, each at its tok.off (not in order,
                          * not back to back, with gaps; text_len bytes are in use) */
    size_t text_len, text_cap;
    size_t max_n;        /* set by the caller: the most tokens it takes (0: no limit); beyond
                          * them tokenizing stops with SH_ELIMIT, having held at most max_n
                          * + 64 tokens (a bound on the memory one document takes; the
                          * 64: the block scanner's slack, so a result may hold up to
                          * 63 more than max_n: the caller checks n) */
    char *src;           /* a copy of the input that SH_CANON_TWEET changes */
    size_t src_cap;
    /* Streaming (issue 11; sh_shingle_stream): with flush set, once the
     * token array holds flush_at tokens or more and is full, its tokens
     * [0, n) are handed to flush(flush_ctx, t, err) and dropped (n = 0)
     * instead of the array growing, so a document's tokens take
     * O(flush_at) memory whatever its length. The canonical text is kept
     * (tokens point into it; its size is about the input's). A status
     * other than SH_OK from flush stops tokenizing with it. The caller
     * takes the last tokens [0, n) after sh_canon_tokenize. The code
     * tokenizer (SH_CANON_CODE) does not flush. */
    sh_status (*flush)(void *ctx, struct sh_tokens *t, sh_error *err);
    void *flush_ctx;
    size_t flush_at;
} sh_tokens;

/* Tokenize in[0..n) into out (its previous contents are discarded; its
 * max_n is kept). Returns SH_OK, SH_ENOMEM, SH_ELIMIT (more than out->max_n
 * tokens), or SH_EUTF8 (only with SH_UTF8_ERROR; err->offset is
 * the offending byte). NUL bytes are separators. On error out is left valid but
 * its contents are unspecified. */
sh_status sh_canon_tokenize(const sh_canon_opts *opts, const char *in, size_t n,
                            sh_tokens *out, sh_error *err);

void sh_tokens_free(sh_tokens *t);

/* Whether in[0..n) is well-formed UTF-8 (shortest forms, no surrogates, at
 * most U+10FFFF): SH_OK, or SH_EUTF8 with err->offset the first bad byte. */
sh_status sh_utf8_check(const char *in, size_t n, sh_error *err);

/* For tokenizers of other languages (codetok.h): start t empty, append a
 * token (its canonical bytes[0..len), len >= 1 and without NUL bytes, and
 * the span of input it came from), and end it (the SH_CANON_SLACK zero
 * bytes). Errors: SH_ENOMEM (t stays valid). */
void sh_tokens_begin(sh_tokens *t);
/* Room for ntok tokens and text bytes in all (tok, head and text; text as
 * it is up to text_len is kept). Errors: SH_ENOMEM (t stays valid). A
 * tokenizer that reserved may fill tok, head and text itself: each token's
 * canonical bytes at its off, and its head, as sh_tokens_push does. */
sh_status sh_tokens_reserve(sh_tokens *t, size_t ntok, size_t text, sh_error *err);
sh_status sh_tokens_push(sh_tokens *t, const void *bytes, size_t len, size_t src_off, size_t src_len, sh_error *err);
sh_status sh_tokens_end(sh_tokens *t, sh_error *err);
/* The length (2 to 4) of the well-formed UTF-8 sequence of a non-ASCII
 * scalar value starting at p[0] and complete within avail bytes, or 0. */
size_t sh_utf8_seq(const char *p, size_t avail);

#endif
