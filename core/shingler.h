/* Shingling (Broder 1997, "Definitions"): the w-shingles of a canonical token
 * sequence, each identified by a Rabin fingerprint computed over a sliding
 * window (section 4.3).
 *
 * Tokens have variable length, so the window does not run over their bytes:
 * each token is first mapped to a 64-bit id (a Rabin fingerprint of its
 * canonical bytes under a polynomial P_id), and the window fingerprint is the
 * AUG fingerprint, under a second polynomial P, of the big-endian concatenation
 * of the w ids. Two polynomials, because with one a token longer than 7 bytes
 * would spill into its neighbours' slots. Sliding costs 16 independent table
 * lookups per token whatever its length, and equals fingerprinting the 8w bytes
 * from scratch bit for bit.
 *
 * SH_TOKENS_PAD8 reproduces the paper's alternative instead: a token's id is
 * its bytes NUL-padded to 8, and a longer token is the catenation of several
 * 8-byte words.
 *
 * A document with fewer than w (but at least one) ids has one shingle: the
 * fingerprint of all of them, so short documents can still be compared.
 *
 * An sh_shingler is immutable once initialised: one can be shared by threads,
 * each with its own sh_work. */
#ifndef SHINGLE_SHINGLER_H
#define SHINGLE_SHINGLER_H

#include <stdint.h>
#include "canon.h"
#include "error.h"
#include "clmul.h"
#include "rabin.h"
#include "simd.h"

typedef enum sh_token_mode { SH_TOKENS_RABIN = 0, SH_TOKENS_PAD8 = 1 } sh_token_mode;
typedef enum sh_option { SH_OPTION_B = 0, SH_OPTION_A = 1 } sh_option; /* B: set; A: labelled bag */

typedef struct sh_shingler_config {
    int w;                    /* shingle width in tokens, 1..1024 (paper: 10) */
    int k;                    /* degree of P, 16..64 (64; 40 reproduces the paper) */
    uint64_t seed;            /* draws P, P_id and the MIN_s order */
    uint64_t poly;            /* P's low k bits, or 0 to draw it from seed */
    uint64_t idpoly;          /* P_id (degree 64), or 0 to draw it from seed */
    sh_token_mode tokens;
    sh_option option;
    sh_canon_opts canon;
    sh_simd simd;             /* highest instruction set level to use (core/simd.h); 0: the best there is */
} sh_shingler_config;

typedef struct sh_shingler {
    sh_shingler_config c;     /* with poly and idpoly filled in */
    sh_rabin win;             /* P, degree k */
    sh_rabin id;              /* P_id, degree 64 */
    sh_mulx id64;             /* v * x^64 mod P_id: token ids 8 bytes at a time */
    sh_mulx id128;            /* v * x^128 mod P_id: a set's fingerprint two values at a time (document.c) */
    sh_mulx w64;              /* v * x^64 mod P */
    sh_mulx wk;               /* v * x^k mod P (== w64 when k = 64) */
    sh_mulx wout;             /* v * x^(64w + k) mod P: the id leaving the window */
    sh_simd level;            /* the level the hot loops use: c.simd capped by the processor (simd.h) */
    int hw;                   /* k = 64, level >= sse2 and the carry-less multiply is there: use it (clmul.h) */
    sh_clmul cwin, cid;       /* Barrett constants of P and P_id */
    uint64_t cout;            /* x^(64w + 64) mod P */
    uint64_t idk[9];          /* x^(8t + 64) mod P_id for t = 1..8, idk[0] = 0: ids of 9 to 16 bytes */
} sh_shingler;

/* Per-thread scratch buffers; zero-initialise, release with sh_work_free. */
typedef struct sh_work {
    sh_tokens toks;
    uint64_t *ids;            /* token ids */
    uint32_t *id_tok;         /* PAD8 only: the token of each id (a token may make several);
                               * otherwise id i is token i */
    size_t n_ids, cap_ids, cap_id_tok;
    uint64_t *fps;            /* shingle fingerprints in document order; shingle i starts at id i */
    size_t n_fps, cap_fps;
    uint64_t *tab;            /* hash table for distinct values / labels */
    uint32_t *cnt;            /* option A's occurrence counts, per slot of tab (only allocated for it) */
    size_t tab_cap, cnt_cap;
    uint64_t *vals;           /* distinct mixed values */
    size_t n_vals, cap_vals;
    size_t max_shingles;      /* set by the caller: the most shingles a document may have
                               * (0: no limit). Beyond it sh_shingle_text stops tokenizing
                               * and, like sh_shingle_ids, gives SH_ELIMIT: the bound on
                               * the memory one document takes (docs/robustness.md) */
    unsigned char *bytes;     /* scratch of extractors (fasta.h: the sequences) */
    size_t cap_bytes;
    /* Set by the caller: up to this many threads (2) for one large plain
     * text in sh_shingle_text (0, 1: the caller's thread alone), from
     * par_min bytes on (0: SH_SHINGLE_PAR_MIN). For a caller with cores to
     * spare: a query of the Lua API or the command line, not one of a pool's
     * threads or a busy server's worker (the C API's shinglers keep 1). */
    int threads;
    size_t par_min;
    sh_tokens toks2;          /* the second half's tokens and ids (threads = 2) */
    uint64_t *ids2;
    size_t cap_ids2;
    struct sh_helper *helper; /* the second thread, made at the first large text */
    /* After a text shingled on two threads (split): its tokens are toks'
     * then toks2's, whose src_off count from split_src. Read them with
     * sh_work_tokens and sh_work_token. */
    int split;
    size_t split_src;
} sh_work;

/* The size from which sh_shingle_text splits a plain text over two threads
 * when the caller allows it (sh_work.threads): below it a thread costs more
 * than it saves. */
#define SH_SHINGLE_PAR_MIN ((size_t)128 << 10)

/* Validate cfg and fill s. Returns SH_EINVAL (with a message naming the
 * parameter and the range that would work) or SH_OK. */
sh_status sh_shingler_init(sh_shingler *s, const sh_shingler_config *cfg, sh_error *err);

/* The 64-bit id of one token (its canonical bytes), as used in windows. */
uint64_t sh_token_id(const sh_shingler *s, const void *bytes, size_t n);

/* Canonicalize and tokenize text, then fill w->ids and w->fps. With
 * w->threads = 2, a plain text (not HTML, code or tweets) of w->par_min bytes
 * or more is cut after a separator byte near its middle (where no token is
 * in progress), its halves tokenized and given ids on two threads, and the
 * windows slid on two threads: the same tokens, ids and fingerprints as one
 * thread gives (test_shingler compares them at every cut). */
sh_status sh_shingle_text(const sh_shingler *s, sh_work *w, const char *text, size_t n, sh_error *err);

/* Streaming (issue 11: memory per document a small constant times its size):
 * sh_shingle_text in blocks of about `block` tokens (0: 65536). Each block's
 * tokens are turned into ids and the shingles they complete (the window
 * carries the last w - 1 ids across blocks) and handed to
 * sink(ctx, ids, n_ids, fps, n_fps, n_tokens, err): that block's new ids, in
 * document order, and the fingerprints of the shingles ending in them, with
 * the tokens seen so far. Concatenated over the calls, ids and fps are
 * exactly w->ids and w->fps of sh_shingle_text (a text of fewer than w ids
 * gives its one shingle in a last call without ids). Tokens, ids and
 * fingerprints take O(block + w) memory; the canonical text about the
 * input's size. w->max_shingles bounds the tokens as in sh_shingle_text
 * (SH_ELIMIT, same message). *n_tokens gets the token count. A status other
 * than SH_OK from sink stops it with that status. w->toks, w->ids and
 * w->fps are scratch (w->toks holds the last block afterwards). */
typedef sh_status (*sh_shingle_sink)(void *ctx, const uint64_t *ids, size_t n_ids, const uint64_t *fps, size_t n_fps,
                                     uint64_t n_tokens, sh_error *err);
sh_status sh_shingle_stream(const sh_shingler *s, sh_work *w, const char *text, size_t n, size_t block,
                            sh_shingle_sink sink, void *ctx, uint64_t *n_tokens, sh_error *err);

/* Same from a list of token ids already in w->ids[0..w->n_ids). */
sh_status sh_shingle_ids(const sh_shingler *s, sh_work *w, sh_error *err);

/* Make room for n ids in w->ids / w->id_tok. */
sh_status sh_work_reserve_ids(sh_work *w, size_t n);

/* w->ids with room for n ids and w->n_ids = n, for a caller to fill before
 * sh_shingle_ids or sh_shingle_features; NULL when out of memory. */
uint64_t *sh_work_ids(sh_work *w, size_t n);

/* The ids in w->ids[0..w->n_ids) as a set of features: w->fps gets them as
 * they are (no shingling), for sh_sketch_build with features = 1. The
 * buffers trade places rather than the ids being copied (a FASTA document
 * has a feature a base): w->fps[0..w->n_fps) then holds the ids, w->n_ids
 * still counts them, and w->ids is scratch. */
sh_status sh_shingle_features(sh_work *w, sh_error *err);

/* The number of tokens of the last sh_shingle_text, and token j of them
 * (src_off in the whole text), with its canonical bytes and head when
 * bytes, head are not NULL. */
size_t sh_work_tokens(const sh_work *w);
sh_token sh_work_token(const sh_work *w, size_t j, const char **bytes, const unsigned char **head);

/* The bytes of the source text that shingle i of the last sh_shingle_text
 * covers: [*first, *end) (PAD8 ids map back to their tokens). */
void sh_shingle_span(const sh_shingler *s, const sh_work *w, size_t i, size_t *first, size_t *end);

/* Option A (section 2): the fingerprint of shingle fp labelled with its
 * occurrence number, AUG under P of the 16 bytes fp || label. */
uint64_t sh_label(const sh_shingler *s, uint64_t fp, uint64_t label);

/* Slow obvious reference: AUG under P of the big-endian bytes of ids[0..n). */
uint64_t sh_window_slow(const sh_shingler *s, const uint64_t *ids, size_t n);

void sh_work_free(sh_work *w);

#endif
