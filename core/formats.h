/* The stored formats of shingle: every record a file holds, its magic, and
 * the layout of the containers (docs/formats.md, docs/collections.md). The
 * engine writes and reads through these definitions, and so do the bindings,
 * the benchmarks and any C program that reads a run's files; the stable C
 * API builds on this header. It is self-contained (it needs <stdint.h> only)
 * and everything in it is prefixed sh_ or SH_.
 *
 * Byte order. Every integer and float stored is little-endian: the record
 * files hold these structs as they are in memory on a little-endian host and
 * are mapped back in place, and the index stores its document header and
 * policy the same way. A big-endian host would read them wrong, so this
 * header refuses to compile there (the compilers that say their byte order
 * in __BYTE_ORDER__: GCC, Clang, ICC), and sh_host_little_endian() lets the
 * readers refuse at run time where the compiler does not say. Keys that must
 * sort numerically (sort records, LMDB keys) are big-endian by explicit
 * stores (core/byteorder.h), on any host.
 *
 * Sizes are checked at compile time below: a record's size is part of its
 * format, and a reader rejects a file whose record size differs. */
#ifndef SHINGLE_FORMATS_H
#define SHINGLE_FORMATS_H

#include <stdint.h>

#if defined(__BYTE_ORDER__) && defined(__ORDER_BIG_ENDIAN__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#error "shingle stores little-endian records and maps them in place; this host is big-endian, where they would be misread. Build on a little-endian host (x86-64, AArch64, RISC-V, ...): see docs/formats.md, \"Byte order\"."
#endif

/* 1 on a little-endian host; readers check it where the compiler gave no
 * __BYTE_ORDER__ to refuse at build time. */
static inline int sh_host_little_endian(void)
{
    const uint16_t one = 1;
    return *(const unsigned char *)&one == 1;
}

/* A compile-time check of a record's size, so a change of layout cannot pass
 * unnoticed: the array size is -1 when the condition fails. */
#define SH_FORMAT_CHECK(name, cond) typedef char sh_format_check_##name[(cond) ? 1 : -1]

/* ==== the record file container (core/recfile.h) =========================
 *
 *   header   magic[8] | u32 version | u32 record_size | u32 meta_size | u32 reserved (0)
 *   meta     meta_size bytes, zero-padded to a multiple of 8 (records start 8-aligned)
 *   records  count * record_size bytes
 *   trailer  u64 count | u32 crc32(records) | u32 crc32(header + meta) | SH_RECFILE_END
 *
 * CRC-32 is zlib's. Magics are 8 bytes, NUL-padded. */
#define SH_RECFILE_VERSION 1u
#define SH_RECFILE_HEADER 24u
#define SH_RECFILE_TRAILER 24u
#define SH_RECFILE_END "SHEND\0\0\0"

/* ==== a serialized sketch (core/sketch.h, Sketch:serialize()) =============
 *
 *   0  "SHSK" | 4 u8 version (1) | 5 u8 kind | 6 u8 option | 7 u8 k | 8 u8 token mode |
 *   9  u8 0 | 10 u16 floor | 12 u32 w | 16 u32 s | 20 u32 size class | 24 u64 m |
 *   32 u64 seed | 40 u64 P | 48 u64 P_id | 56 u64 rules | 64 u64 shingles |
 *   72 u64 tokens | 80 u32 n | 84 n u64 values, ascending | then u32 crc32 of all before
 *
 * An empty sketch (n = 0) carries the parameters alone: SH_SKETCH_PARAMS_SIZE
 * bytes, the form docs.bin's meta and the index's "params" use. */
#define SH_SKETCH_MAGIC "SHSK"
#define SH_SKETCH_VERSION 1u
#define SH_SKETCH_HEADER_SIZE 84u
#define SH_SKETCH_PARAMS_SIZE (SH_SKETCH_HEADER_SIZE + 4u)

/* ==== the files of a cluster run (core/cluster.h) ========================= */

#define SH_MAGIC_DOCS "SHDOCS\0\0"       /* docs.bin: sh_docrec */
#define SH_MAGIC_SKETCHES "SHSKVAL\0"    /* sketches.bin: u64 sketch values, by document */
#define SH_MAGIC_SHINGLES "SHFULL\0\0"   /* shingles.bin: u64 values of the full shingle sets */
#define SH_MAGIC_SIGS "SHSIGS\0\0"       /* sigs.bin: sig_k u64 min-hashes per document */
#define SH_MAGIC_PAIRS "SHPAIRS\0"       /* pairs.bin: sh_pairrec */
#define SH_MAGIC_LINKS "SHLINKS\0"       /* links.bin: sh_linkrec */
#define SH_MAGIC_CLUSTERS "SHCLUST\0"    /* clusters.bin: sh_clusterrec */

/* docs.bin's meta: the serialized empty sketch that carries the parameters
 * every sketch of the run shares (SH_SKETCH_PARAMS_SIZE bytes), then u32
 * sig_k, the length of the min-hash signatures in sigs.bin (0: none). */
#define SH_DOCS_META_SIZE (SH_SKETCH_PARAMS_SIZE + 4u)

/* How a document relates to its representative after dedupe ("Identical
 * documents"); in the index, to the earlier document it copies. */
enum {
    SH_DUP_NONE = 0,     /* its own representative */
    SH_DUP_EXACT = 1,    /* the same bytes */
    SH_DUP_LEXICAL = 2,  /* the same canonical token sequence */
    SH_DUP_SHINGLE = 3   /* the same selected shingle set */
};

/* docs.bin record, one per document in input order (its index is its id) */
typedef struct sh_docrec {
    uint64_t raw_fp;       /* XXH3-64 of the raw bytes (core/docfp.h) */
    uint64_t canon_fp;     /* XXH3-64 of the canonical token ids */
    uint64_t set_fp;       /* fingerprint of the selected (or, verified, the full) shingle set */
    uint64_t sketch_off;   /* index of the document's first value in sketches.bin */
    uint32_t sketch_n;     /* its number of sketch values */
    uint32_t n_shingles;   /* shingles of the document (as the sketch counts them); saturates at UINT32_MAX */
    uint64_t full_off;     /* index of its first value in shingles.bin (with exact verification) */
    uint32_t full_n;       /* its number of full-set values */
    uint32_t rep;          /* its representative after dedupe (itself if none) */
    uint8_t dup;           /* SH_DUP_*: its relation to rep */
    uint8_t status;        /* sh_status of sketching it; non-zero: skipped, no values */
    uint8_t html;          /* 1: canonicalized as HTML */
    uint8_t mod_steps;     /* MOD sketches: its modulus is the run's m divided this many
                            * times by its smallest prime factor (sh_mod_step) */
    uint32_t n_tokens;     /* canonical tokens; saturates at UINT32_MAX */
} sh_docrec;
SH_FORMAT_CHECK(docrec, sizeof(sh_docrec) == 64);

/* pairs.bin record: two representatives that share sketch values, sorted by (a, b) */
typedef struct sh_pairrec {
    uint32_t a, b;         /* document ids, a < b */
    uint32_t shared;       /* sketch values they share */
} sh_pairrec;
SH_FORMAT_CHECK(pairrec, sizeof(sh_pairrec) == 12);

/* links.bin record: a pair phase 4 linked, with its scores */
typedef struct sh_linkrec {
    uint32_t a, b;         /* document ids */
    float r, cab, cba;     /* estimated resemblance, containment of a in b, of b in a */
    float xr, xcab, xcba;  /* the same computed exactly; -1 when not verified */
} sh_linkrec;
SH_FORMAT_CHECK(linkrec, sizeof(sh_linkrec) == 32);

/* clusters.bin record: a member of a cluster of two or more documents,
 * sorted by cluster, then document */
typedef struct sh_clusterrec {
    uint32_t cluster;      /* the cluster's id: its smallest member */
    uint32_t doc;          /* the member */
} sh_clusterrec;
SH_FORMAT_CHECK(clusterrec, sizeof(sh_clusterrec) == 8);

/* Where each document came from, for exact verification to shingle again
 * only the documents of candidate pairs instead of keeping every full set
 * (core/verifysets.h). Phase 1 writes them when every document it can read
 * again is named by a file path or a line of a plain JSON Lines file:
 *   sources.bin   sh_srcrec per document, in id order
 *   srcnames.bin  the names, each ended by a NUL (record size 1); the first
 *                 is the working directory of phase 1, which relative names
 *                 are read against
 * A document read again has full_off SH_FULL_AT_SOURCE in docs.bin (full_n
 * is its set's size); the others keep theirs in shingles.bin. Phase 4
 * writes the candidates' sets to fullsets.bin (values, as shingles.bin)
 * with fullsets.idx (u64 per document: its first value there, or
 * SH_FULL_AT_SOURCE), and removes both when it is done. */
#define SH_MAGIC_SOURCES "SHSRCS\0\0"     /* sources.bin: sh_srcrec */
#define SH_MAGIC_SRCNAMES "SHSRCNM\0"     /* srcnames.bin: NUL-ended names (record size 1) */
#define SH_MAGIC_FULLIDX "SHFULIX\0"      /* fullsets.idx: u64 per document */
#define SH_FULL_AT_SOURCE UINT64_MAX      /* docs.bin full_off: the full set is made again from the source */

enum {
    SH_SRC_STORED = 0,   /* its full set is in shingles.bin (or it has none) */
    SH_SRC_FILE = 1,     /* the file at name, read as phase 1 read it (decompressed, a message rendered) */
    SH_SRC_JSONL = 2     /* len bytes at byte off of the plain JSON Lines file name: one line */
};

typedef struct sh_srcrec {
    uint64_t off;          /* SH_SRC_JSONL: the line's first byte */
    uint64_t len;          /* SH_SRC_JSONL: its length */
    uint64_t name;         /* byte offset of its name in srcnames.bin */
    uint8_t kind;          /* SH_SRC_* */
    uint8_t html;          /* 1: canonicalized as HTML */
    uint8_t pad[6];
} sh_srcrec;
SH_FORMAT_CHECK(srcrec, sizeof(sh_srcrec) == 32);

/* ==== the files of a collections run (core/webgraph.h, core/collections.h) ==== */

#define SH_MAGIC_PAGES "SHCPAGE\0"       /* pages.bin: sh_pagerec; meta u32 site_depth, u32 anchored */
#define SH_MAGIC_URLS "SHCURLS\0"        /* urls.bin: the normalized URLs back to back (record size 1) */
#define SH_MAGIC_SITES "SHCSITE\0"       /* sites.bin: site names, each ended by a NUL, by site id */
#define SH_MAGIC_WEBLINKS "SHCLINK\0"    /* links.bin: sh_weblinkrec */
#define SH_MAGIC_CHUNKS "SHCCHNK\0"      /* chunks-S.bin: sh_chunkrec */
#define SH_MAGIC_TRIVIAL "SHCTRIV\0"     /* trivial-NAME.bin: u32 trivial cluster per page */
#define SH_MAGIC_SUMMARY "SHCSUMM\0"     /* linksummary.bin: sh_summaryrec */
#define SH_MAGIC_TCG "SHCTCG\0\0"        /* tcg.bin: sh_tcgrec */
#define SH_MAGIC_MEMBERS "SHCMEMB\0"     /* members.bin: sh_memberrec */
#define SH_MAGIC_COLLS "SHCCOLL\0"       /* colls.bin: sh_collrec; meta: the trivial clusters' name */

#define SH_PAGES_META_SIZE 8u            /* u32 site_depth, u32 anchored */
#define SH_COLLS_META_SIZE 64u           /* the trivial clusters' NAME, NUL-padded */

/* What became of a page. */
enum {
    SH_PAGE_OK = 0,         /* fingerprinted, links extracted */
    SH_PAGE_EMPTY = 1,      /* no text (no tokens): no fingerprint, never similar */
    SH_PAGE_UNREADABLE = 2, /* the file could not be read, or is over max_bytes */
    SH_PAGE_DUPLICATE = 3   /* its URL was already a page: links kept, no fingerprint */
};

/* pages.bin record, one per page in the order added (its index is its id) */
typedef struct sh_pagerec {
    uint64_t url_off;      /* offset of its URL in urls.bin */
    uint64_t bytes;        /* size of the page */
    uint32_t url_len;      /* length of its URL */
    uint32_t site;         /* index of its site in sites.bin */
    uint32_t n_tokens;     /* canonical tokens */
    uint32_t n_lines;      /* non-empty lines */
    uint32_t out_links;    /* distinct links to other pages of the graph */
    uint32_t in_links;     /* distinct links from other pages */
    uint32_t ext_in;       /* of those, from pages of other sites (Figure 7's start point) */
    uint8_t status;        /* SH_PAGE_* */
    uint8_t html;          /* 1: links were extracted from it as HTML */
    uint16_t pad;          /* 0 */
} sh_pagerec;
SH_FORMAT_CHECK(pagerec, sizeof(sh_pagerec) == 48);

/* links.bin record of a web graph: sorted by (src, dst), unique, no self-links */
typedef struct sh_weblinkrec {
    uint32_t src, dst;     /* page ids */
} sh_weblinkrec;
SH_FORMAT_CHECK(weblinkrec, sizeof(sh_weblinkrec) == 8);

/* chunks-S.bin record: one chunk fingerprint of a page (core/chunks.h) */
typedef struct sh_chunkrec {
    uint32_t page;
    uint32_t fp;
} sh_chunkrec;
SH_FORMAT_CHECK(chunkrec, sizeof(sh_chunkrec) == 8);

/* linksummary.bin record: a row <Ri, Rj, a, b, s, d> of Cho et al.'s LinkSummary table */
typedef struct sh_summaryrec {
    uint32_t ri, rj;       /* trivial clusters, links from Ri to Rj */
    uint32_t a, b;         /* |Ri|, |Rj| */
    uint32_t s;            /* distinct pages of Ri with a link to Rj */
    uint32_t d;            /* distinct pages of Rj linked from Ri */
} sh_summaryrec;
SH_FORMAT_CHECK(summaryrec, sizeof(sh_summaryrec) == 24);

/* tcg.bin record: an edge Ri -> Rj of the trivial cluster graph (a row that met the merge condition) */
typedef struct sh_tcgrec {
    uint32_t ri, rj;
} sh_tcgrec;
SH_FORMAT_CHECK(tcgrec, sizeof(sh_tcgrec) == 8);

/* members.bin record, sorted by cluster, then collection */
typedef struct sh_memberrec {
    uint32_t cluster;      /* similar cluster, 1-based in output order */
    uint32_t collection;   /* collection within it, 0-based */
    uint32_t page;         /* page id */
    uint32_t trivial;      /* the page's trivial cluster */
} sh_memberrec;
SH_FORMAT_CHECK(memberrec, sizeof(sh_memberrec) == 16);

enum { SH_COLL_KEPT = 1, SH_COLL_WHOLE_SITE = 2 };

/* colls.bin record: one per collection, clusters in output order */
typedef struct sh_collrec {
    uint32_t cluster;      /* cluster id, 1-based in output order */
    uint32_t index;        /* collection in the cluster, 0-based */
    uint32_t root;         /* root page */
    uint32_t site;         /* the root's site */
    uint32_t pages;        /* pages of the collection */
    uint32_t avoid_pages;  /* of those, not in the kept collection nor counted before */
    uint32_t prefix_page;  /* the URL prefix is the first prefix_len bytes of this page's URL */
    uint32_t prefix_len;
    uint64_t bytes;        /* bytes of its pages */
    uint64_t avoid_bytes;  /* bytes of its avoid_pages */
    uint32_t flags;        /* SH_COLL_* */
    uint32_t cluster_size; /* its cluster's size: the rows (trivial clusters) of the cluster;
                            * 0 in files written before it was recorded */
} sh_collrec;
SH_FORMAT_CHECK(collrec, sizeof(sh_collrec) == 56);

/* ==== the index (core/index.h): an LMDB environment ======================= */

#define SH_INDEX_FORMAT 1u
/* URLs are keyed by their AUG fingerprint under this fixed polynomial (P64b of
 * docs/vectors.md), so the key does not depend on the index's seed. */
#define SH_INDEX_URL_POLY 0xcaefbcde6b4238b1ULL

/* The head of a "docs" value; the sketch values (u64) and the URL bytes follow. */
typedef struct sh_ixdoc {
    uint64_t url_fp;       /* fingerprint of the URL under SH_INDEX_URL_POLY */
    uint64_t raw_fp;       /* XXH3-64 of the raw bytes */
    uint64_t canon_fp;     /* XXH3-64 of the canonical token ids */
    uint32_t sweep;        /* the sweep that added it */
    uint32_t cluster;      /* its cluster when added (the "cluster" table has the current one) */
    uint32_t n_shingles;   /* shingles; saturates at UINT32_MAX */
    uint32_t n_tokens;     /* canonical tokens; saturates at UINT32_MAX */
    uint32_t n_values;     /* sketch values that follow */
    uint32_t url_len;      /* URL bytes that follow the values */
    uint32_t cls;          /* CLASS sketches: the size class; MOD: the modulus steps (as sh_docrec.mod_steps) */
    uint32_t dup;          /* SH_DUP_*: its relation to an earlier document */
} sh_ixdoc;
SH_FORMAT_CHECK(ixdoc, sizeof(sh_ixdoc) == 56);

#endif
