/* Chunk fingerprints of a page (Cho, Shivakumar and Garcia-Molina, "Finding
 * replicated web collections", section 2.1 and 5.1): the page is converted to
 * text, the text is cut into chunks of lines, and every chunk is hashed down
 * to a 32-bit fingerprint. Two pages sharing at least T fingerprints are
 * similar. The paper's three schemes are computed in one pass:
 *
 *   whole   one fingerprint for the entire document
 *   lines4  one fingerprint for every four lines of text (paper: T = 15)
 *   lines2  one fingerprint for every two lines of text  (paper: T = 25)
 *
 * Text: the canonical tokens of core/canon.h (HTML stripped, entities
 * decoded, lowercased), so markup and spacing do not change a fingerprint.
 * Lines: a line ends at a newline of the source or, in HTML, at a block-level
 * tag (p, br, div, li, tr, td, h1-h6, pre, table, ...); lines without tokens
 * do not count. Chunks: consecutive runs of 4 (2) lines, non-overlapping, as
 * the paper has it; with anchored = 1 a chunk instead ends after a line whose
 * hash is 0 mod 4 (2), or at 4 x 4 (2 x 2) lines, so that a header added to
 * every page of a mirror shifts only the first chunk (documented deviation,
 * off by default). A fingerprint is the 32-bit Rabin fingerprint (degree 32,
 * AUG) of the chunk's tokens separated by spaces and lines by newlines.
 *
 * Reentrant: the chunker is read-only after init; scratch lives in sh_chunks. */
#ifndef SHINGLE_CHUNKS_H
#define SHINGLE_CHUNKS_H

#include <stddef.h>
#include <stdint.h>
#include "canon.h"
#include "error.h"
#include "rabin.h"

enum { SH_CHUNK_WHOLE = 0, SH_CHUNK_LINES4 = 1, SH_CHUNK_LINES2 = 2, SH_CHUNK_SCHEMES = 3 };

typedef struct sh_chunker {
    sh_rabin r32;          /* degree-32 polynomial drawn from the seed */
    sh_canon_opts canon;   /* lowercase, numbers kept, invalid UTF-8 read as Latin-1 */
    int anchored;
} sh_chunker;

/* Output and scratch, reused across pages (arrays only grow). Zero-initialize
 * before first use; release with sh_chunks_free. */
typedef struct sh_chunks {
    uint32_t *fp[SH_CHUNK_SCHEMES];   /* fingerprints per scheme, in page order */
    size_t n[SH_CHUNK_SCHEMES], cap[SH_CHUNK_SCHEMES];
    size_t n_tokens, n_lines;
    size_t *line_start;               /* private: first token of each line, + sentinel */
    size_t line_cap;
    sh_tokens tok;                    /* private */
} sh_chunks;

/* The name of a scheme ("whole", "lines4", "lines2"), or NULL. */
const char *sh_chunk_scheme_name(int scheme);
/* The scheme called name, or -1. */
int sh_chunk_scheme(const char *name);

/* Prepare c: draws the degree-32 polynomial from seed (the same seed gives
 * the same fingerprints in every run and program). */
void sh_chunker_init(sh_chunker *c, uint64_t seed, int anchored);

/* Fingerprint the page text[0..n) (HTML if html) into out. A page without
 * tokens gets no fingerprint in any scheme (out->n_tokens == 0). Returns
 * SH_OK or SH_ENOMEM; broken HTML is never an error. */
sh_status sh_chunks_compute(const sh_chunker *c, const char *text, size_t n, int html,
                            sh_chunks *out, sh_error *err);

void sh_chunks_free(sh_chunks *ch);

#endif
