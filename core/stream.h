/* One document sketched in blocks (issue 11: "memory per document must be a
 * small constant times its size or streamed"): what sh_doc_sketch makes from
 * sh_shingle_text's whole arrays (document.h: sketch, full set, min-hash
 * signature, fingerprints), bit for bit, while the document's tokens, ids
 * and fingerprints pass through sh_shingle_stream's blocks and only this
 * stays for the whole document:
 *
 *   MOD_m, option B, no full set    the distinct values divisible by the
 *                                   modulus the shingles so far pick (m's
 *                                   chain with the floor): O(n/m + floor)
 *   other kinds, or the full set    the distinct mixed values, in an open-
 *   (option B)                      addressing set: 8 bytes a slot, at most
 *                                   70% full (11 to 23 bytes a distinct
 *                                   shingle); the full set is made in place
 *   option A                        every fingerprint (8 bytes a shingle),
 *                                   then sh_sketch_build as before
 *
 * with the canonical text (about the input's size) and O(block + w) for the
 * block. The canonical fingerprint is XXH3's streaming form over the same
 * bytes, the signature the running minima. docs/robustness.md, "Limits". */
#ifndef SHINGLE_STREAM_H
#define SHINGLE_STREAM_H

#include <stddef.h>
#include <stdint.h>
#include "document.h"

/* Per-thread buffers; zero-initialise, release with sh_stream_free. */
typedef struct sh_stream {
    uint64_t *set;            /* open-addressing set of mixed values (0: empty slot) */
    size_t set_cap, set_n;
    int zero;                 /* the value 0 was met */
    uint64_t *keep;           /* MOD candidates, or option A's fingerprints */
    size_t keep_n, keep_cap;
    uint64_t *mixed;          /* a block's mixed values */
    size_t mixed_cap;
    uint64_t *seeds;          /* the min-hash signature's seeds */
    uint32_t n_seeds;
    uint64_t seeds_of;        /* the shingler seed they were drawn from */
    void *xxh;                /* XXH3 state of the canonical fingerprint */
} sh_stream;

/* Tokens a block holds by default (sh_shingle_stream). */
#define SH_STREAM_BLOCK 65536

/* sh_doc_sketch for the text text[0..tlen) (whose raw bytes are
 * bytes[0..len)), shingled by sh_shingle_stream in blocks of `block` tokens
 * (0: SH_STREAM_BLOCK): o gets the same as sh_shingle_text + sh_doc_sketch
 * give. w->max_shingles applies. Errors: those of sh_shingle_stream and
 * sh_doc_sketch (o then holds nothing). */
sh_status sh_doc_sketch_stream(const sh_shingler *sh, sh_work *w, sh_stream *st, const sh_sketch_params *params,
                               int want_full, uint32_t sig_k, const char *text, size_t tlen, const void *bytes,
                               size_t len, size_t block, sh_doc_out *o, sh_error *err);

/* Give back buffers larger than a block's needs (after a large document). */
void sh_stream_trim(sh_stream *st);

void sh_stream_free(sh_stream *st);

#endif
