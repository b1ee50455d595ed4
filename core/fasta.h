/* DNA and protein sequences in FASTA as the set of their k-mers, the way
 * MinHash sketches compare genomes ("our general technique only depends on
 * the ability to extract a set of features from objects", Broder et al.
 * 1997): the FASTA extractor of lua/shingle/extractors/fasta.lua, whose Lua
 * function is the reference this equals feature for feature.
 *
 * A record is a '>' header line and the sequence lines after it (';' lines
 * are comments); its sequence is their concatenation, upper-cased, without
 * white space. A sequence of only A, C, G, T and N is DNA: each k-mer and
 * its reverse complement count as one, the smaller of the two in byte
 * order, and a k-mer with an N in it has no id (version 2 of the extractor,
 * docs/api.md). For k <= 32 the feature id of a DNA k-mer is sh_token_id of
 * its bases packed 2 bits each (A 0, C 1, G 2, T 3, the first in the high
 * bits, ceil(k / 4) bytes), else of its bytes, so the sketches equal those
 * of the Lua extractor's strings.
 *
 * DNA with k <= 32: the 2-bit codes of the k-mer and of its reverse
 * complement roll in 64-bit words (a shift and an or each per base), the
 * smaller is the canonical one, and its id, T * x^64 mod P_id for its
 * packed bytes T, is one carry-less multiply and a Barrett reduction (eight
 * at a time with VPCLMULQDQ), or eight table lookups without. With AVX2
 * and k <= 29 the sequence is packed 2 bits a base first, and four k-mers
 * in a row come from one 64-bit load and a shift each, their reverse
 * complements from byte and nibble shuffles, their ids in the same loop.
 * Otherwise rolling fingerprints (Rabin 1981; Broder 1993): the id of the
 * next k-mer takes a few table lookups, not k bytes, for the k-mer (one
 * byte in at x^64, one out at x^(8k + 64)) and for its reverse complement
 * (one byte off the end by multiplying by x^-8, one in front at
 * x^(8k + 56)). */
#ifndef SHINGLE_FASTA_H
#define SHINGLE_FASTA_H

#include <stddef.h>
#include <stdint.h>
#include "shingler.h"

/* The tables of one k for one shingler's P_id; immutable once made (threads
 * may share one). */
typedef struct sh_fasta {
    const sh_shingler *sh;
    unsigned k;
    uint64_t out[256];   /* b * x^(8k + 64) mod P_id: byte b leaving a k-mer */
    uint64_t pre[256];   /* c * x^(8k + 56) mod P_id: byte c entering a reverse complement in front */
    uint64_t inv[256];   /* g * x^-8 mod P_id: the low byte of a value divided by x^8 */
} sh_fasta;

#define SH_FASTA_MAX_K 1000

/* Make the tables for k (1..SH_FASTA_MAX_K, else SH_EINVAL) and sh. */
sh_status sh_fasta_init(sh_fasta *f, const sh_shingler *sh, unsigned k, sh_error *err);

/* The feature ids of every k-mer of the records in in[0..n), repeats
 * included, into w->ids[0..w->n_ids) (ready for sh_shingle_features);
 * w->bytes holds the sequences meanwhile. Errors: SH_EFORMAT for input that
 * is not FASTA (sequence data before the first header: err->offset is the
 * line, counting non-empty lines, as the Lua extractor does; or no record
 * at all), SH_ENOMEM. */
sh_status sh_fasta_features(const sh_fasta *f, const char *in, size_t n, sh_work *w, sh_error *err);

/* The FASTA extractor for the thread pool (pool.h's sh_extractor, its arg
 * an sh_fasta): feature ids of a document's k-mers. */
sh_status sh_fasta_extract(void *fasta, const char *data, size_t len, const char *path, sh_work *w, int *features,
                           sh_error *err);

#endif
