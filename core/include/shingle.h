/* shingle.h — the C API of shingle: near-duplicate documents after Broder,
 * Glassman, Manasse and Zweig, "Syntactic Clustering of the Web" (1997), and
 * Broder, "On the resemblance and containment of documents" (1997).
 *
 * The one public header of libshingle (pkg-config: shingle). It is stable:
 * within a major version, functions keep their signatures and meanings and
 * structs keep their fields; new functions may be added. Everything else in
 * the library is hidden. docs/capi.md is the guide; examples/capi_similar.c
 * is a complete program.
 *
 * Conventions
 * - Every function that can fail returns an int status: SHINGLE_OK (0) or one
 *   of the SHINGLE_E* codes. shingle_strerror(code) names a code. Such
 *   functions take a last argument `char **errmsg`: when not NULL, on failure
 *   *errmsg points at a sentence that names the place (the file, the byte,
 *   the parameter) and says what would work. The text belongs to the library
 *   and stays valid until the next failing call in the same thread.
 * - Handles are opaque and made by *_new / *_open; each has one *_free or
 *   *_close, which accepts NULL. A handle may be used by one thread at a
 *   time; different handles are independent (no global state), except that an
 *   index directory must be opened once per process (an LMDB rule).
 * - Document ids and cluster ids are 1-based, as in the Lua API, the command
 *   line and the HTTP answers.
 * - Fingerprints and sketch values are uint64_t; serialized sketches have one
 *   documented byte order (docs/formats.md, "Sketches"). */
#ifndef SHINGLE_H
#define SHINGLE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SHINGLE_VERSION_MAJOR 0
#define SHINGLE_VERSION_MINOR 4
#define SHINGLE_VERSION_PATCH 0
/* MAJOR * 10000 + MINOR * 100 + PATCH */
#define SHINGLE_VERSION_NUMBER (SHINGLE_VERSION_MAJOR * 10000 + SHINGLE_VERSION_MINOR * 100 + SHINGLE_VERSION_PATCH)
#define SHINGLE_VERSION_STRING "0.4.0"

#if defined(SHINGLE_BUILDING) && defined(__GNUC__)
#define SHINGLE_API __attribute__((visibility("default")))
#else
#define SHINGLE_API
#endif

/* ---- versions and errors ------------------------------------------------ */

/* The version of the library linked at run time: SHINGLE_VERSION_NUMBER and
 * SHINGLE_VERSION_STRING of the build it came from. Compare with the macros
 * to detect a header/library mismatch. Never fails. */
SHINGLE_API int shingle_version_number(void);
SHINGLE_API const char *shingle_version(void);

enum {
    SHINGLE_OK = 0,
    SHINGLE_ENOMEM = 1,     /* allocation failed */
    SHINGLE_EINVAL = 2,     /* an argument out of range, an unknown option (misuse) */
    SHINGLE_EUTF8 = 3,      /* the text is not UTF-8 and the shingler's invalid option is "error" */
    SHINGLE_EFORMAT = 4,    /* a serialized sketch or an index is truncated, corrupt or foreign */
    SHINGLE_EMISMATCH = 5,  /* two sketches (or a sketch and an index) made with other parameters */
    SHINGLE_EIO = 6,        /* an operating-system I/O failure */
    SHINGLE_ENOTFOUND = 7,  /* no such document, URL or cluster in the index */
    SHINGLE_ERANGE = 8,     /* an output buffer too small: the size needed is reported */
    SHINGLE_EBUSY = 9,      /* a lock is held by another process (the message names it) */
    SHINGLE_ELIMIT = 10     /* input beyond a configured limit (a size, a length; the message names it) */
};

/* A short name and meaning for a status code ("EMISMATCH: made with other
 * parameters"); "unknown status" for anything else. Never fails; the string
 * is static. */
SHINGLE_API const char *shingle_strerror(int code);

/* Whether buf[0..len) is well-formed UTF-8 (shortest forms, no surrogates,
 * at most U+10FFFF): SHINGLE_OK, or SHINGLE_EUTF8 with *bad (if not NULL)
 * the offset of the first byte that is not. */
SHINGLE_API int shingle_utf8_check(const char *buf, size_t len, size_t *bad, char **errmsg);

/* ---- shinglers ---------------------------------------------------------- */

typedef struct shingle_shingler shingle_shingler;

/* A shingler configured by options, a string of space-separated key=value
 * pairs with the names and defaults of the Lua API's shingle.new (docs/api.md):
 *   w=10 k=64 seed=<n> sketch=min|mod|minmod|class|full s=200 m=25 floor=20
 *   option=B|A tokens=rabin|pad8 html=0|1 lowercase=1 numbers=1
 *   punctuation=0 fold=0 invalid=error|skip|latin1
 * NULL or "" takes every default. A shingler made with the same options as a
 * Lua shingler makes bit-identical sketches. Unknown keys and values out of
 * range fail with SHINGLE_EINVAL naming them. *out is freed with
 * shingle_shingler_free. */
SHINGLE_API int shingle_shingler_new(const char *options, shingle_shingler **out, char **errmsg);
SHINGLE_API void shingle_shingler_free(shingle_shingler *sh);

/* ---- sketches ----------------------------------------------------------- */

typedef struct shingle_sketch shingle_sketch;

/* An empty sketch handle, to be filled by shingle_sketch_text (again and
 * again: its memory is reused and only grows, so a server keeps one per
 * worker). Freed with shingle_sketch_free. */
SHINGLE_API int shingle_sketch_new(shingle_sketch **out, char **errmsg);
SHINGLE_API void shingle_sketch_free(shingle_sketch *sk);

/* Canonicalize, shingle and sketch buf[0..len) with sh into sk (its previous
 * contents are replaced). Fails with SHINGLE_EUTF8 (the byte offset in the
 * message) for invalid UTF-8 when sh's invalid option is "error", and with
 * SHINGLE_ENOMEM. On failure sk is left empty. */
SHINGLE_API int shingle_sketch_text(shingle_shingler *sh, const char *buf, size_t len, shingle_sketch *sk, char **errmsg);

/* The sketch's values (sorted ascending, distinct) and their number; the
 * number of shingles and tokens of the document it was made from. The
 * pointer stays valid until sk is filled again or freed. Never fail. */
SHINGLE_API size_t shingle_sketch_size(const shingle_sketch *sk);
SHINGLE_API const uint64_t *shingle_sketch_values(const shingle_sketch *sk);
SHINGLE_API uint64_t shingle_sketch_shingles(const shingle_sketch *sk);
SHINGLE_API uint64_t shingle_sketch_tokens(const shingle_sketch *sk);

/* Serialize sk into out[0..cap) (docs/formats.md, "Sketches": versioned,
 * little-endian, with every parameter that decides comparability); *len gets
 * the size written, or the size needed when it fails with SHINGLE_ERANGE.
 * shingle_sketch_serialized_size gives that size beforehand. */
SHINGLE_API size_t shingle_sketch_serialized_size(const shingle_sketch *sk);
SHINGLE_API int shingle_sketch_serialize(const shingle_sketch *sk, unsigned char *out, size_t cap, size_t *len,
                                         char **errmsg);

/* Load a serialized sketch (made by this API, the Lua API's sketch:serialize()
 * or stored in a file) into sk. SHINGLE_EFORMAT for a truncated, damaged or
 * foreign string, naming the byte. */
SHINGLE_API int shingle_sketch_load(const unsigned char *buf, size_t len, shingle_sketch *sk, char **errmsg);

/* The estimates of Theorem 1 from two sketches (Broder 1997): resemblance
 * r(A, B), containment c(A, B) of a in b and c(B, A) of b in a, and the
 * sample they are over. */
typedef struct shingle_estimate {
    double resemblance;
    double containment;   /* of a in b */
    double contained;     /* of b in a */
    size_t both;          /* sample values in both */
    size_t sample;        /* the sample the resemblance is over */
} shingle_estimate;

/* Estimate from a and b. SHINGLE_EMISMATCH (naming the parameter and both
 * values) when they were made with parameters that do not compare. */
SHINGLE_API int shingle_estimate_sketches(const shingle_sketch *a, const shingle_sketch *b, shingle_estimate *out,
                                          char **errmsg);

/* ---- the index ---------------------------------------------------------- */

typedef struct shingle_index shingle_index;

#define SHINGLE_INDEX_READONLY 1
#define SHINGLE_INDEX_CREATE 2    /* since 0.2: make the directory and an empty index if there is none */

/* Open the index directory path (made by `shingle index add`, the Lua API,
 * `shingle cluster --index` or shingle_index_add); flags: SHINGLE_INDEX_READONLY,
 * SHINGLE_INDEX_CREATE (to add to a new index) or 0. Readers in
 * any number of processes never wait for the one writer. SHINGLE_EIO (the
 * path and the system's reason) when it cannot be opened, SHINGLE_EFORMAT for
 * a file that is not a shingle index of this format. Closed with
 * shingle_index_close. */
SHINGLE_API int shingle_index_open(const char *path, int flags, shingle_index **out, char **errmsg);
SHINGLE_API void shingle_index_close(shingle_index *ix);

/* Number of documents. */
SHINGLE_API int shingle_index_count(shingle_index *ix, uint32_t *n, char **errmsg);

/* Between read_begin and read_end every query of ix reads one snapshot
 * (one LMDB read transaction), whatever a writer commits meanwhile; the pair
 * nests. Without it each query reads its own. */
SHINGLE_API int shingle_index_read_begin(shingle_index *ix, char **errmsg);
SHINGLE_API void shingle_index_read_end(shingle_index *ix);

enum { SHINGLE_POLICY_RESEMBLANCE = 0, SHINGLE_POLICY_CONTAINMENT = 1, SHINGLE_POLICY_EITHER = 2, SHINGLE_POLICY_BOTH = 3 };

typedef struct shingle_hit {
    uint32_t id;          /* the document */
    uint32_t shared;      /* sketch values in both */
    double resemblance;
    double containment;   /* of the query in the document */
    double contained;     /* of the document in the query */
} shingle_hit;

/* On-the-fly resemblance ("Syntactic Clustering of the Web", "Query support"):
 * the indexed documents sharing sketch values with q that pass policy at
 * threshold (resemblance, the larger containment, either or both), best
 * first by resemblance or, with by_containment, by the larger containment;
 * at most top of them (0: all) into hits[0..cap), *n the number written.
 * max_df: a sketch value held by more than max_df documents is not looked
 * up for candidates (the paper's very common shingles: it bounds the cost of
 * a query; a document sharing only such values is missed); 0: no cutoff,
 * every candidate (the command line's `shingle similar` without --max-df).
 * q must have been sketched with the index's parameters (SHINGLE_EMISMATCH).
 * When more pass than cap holds, the best cap are written. */
SHINGLE_API int shingle_index_similar(shingle_index *ix, const shingle_sketch *q, double threshold, int policy,
                                      int by_containment, uint32_t top, uint32_t max_df, shingle_hit *hits, size_t cap,
                                      size_t *n, char **errmsg);

typedef struct shingle_document {
    uint32_t id;
    uint32_t cluster;     /* its cluster (the id of a member) */
    uint64_t shingles;
    uint64_t tokens;
    int relation;         /* 0 original, 1 exact copy, 2 lexically equal, 3 shingle-equal to an earlier document */
    size_t url_len;       /* the URL's full length (url gets at most url_cap - 1 bytes and a NUL) */
    size_t sweep_len;
} shingle_document;

/* Document id: its record, its URL into url[0..url_cap) and its sweep's name
 * into sweep[0..sweep_cap), NUL-terminated and truncated to fit (either
 * buffer may be NULL with cap 0). SHINGLE_ENOTFOUND when there is no such
 * document. */
SHINGLE_API int shingle_index_document(shingle_index *ix, uint32_t id, shingle_document *doc, char *url,
                                       size_t url_cap, char *sweep, size_t sweep_cap, char **errmsg);

/* The ids of the stored versions of a URL, or of the members of a cluster,
 * ascending, into ids[0..cap); *n the number there are (SHINGLE_ERANGE, with
 * *n, when cap is smaller). A URL the index does not have gives *n = 0. */
SHINGLE_API int shingle_index_url_docs(shingle_index *ix, const char *url, size_t len, uint32_t *ids, size_t cap,
                                       size_t *n, char **errmsg);
SHINGLE_API int shingle_index_cluster_docs(shingle_index *ix, uint32_t cluster, uint32_t *ids, size_t cap, size_t *n,
                                           char **errmsg);

/* ---- an index's shingler; adding documents (since 0.2) --------------------- */

/* A shingler made from the options ix's documents were sketched with (its
 * stored configuration, as `shingle index info` shows it), for text (html 0)
 * or HTML (html 1): its sketches are the ones ix's queries and adds use.
 * An index that records no MOD floor (made before 0.2) was made with floor 8,
 * which this shingler then takes. SHINGLE_ENOTFOUND for an empty index,
 * SHINGLE_EINVAL for one made with a rule set or extractor written in Lua. */
SHINGLE_API int shingle_index_shingler(shingle_index *ix, int html, shingle_shingler **out, char **errmsg);

typedef struct shingle_input {
    const char *url;      /* the document's URL (an index finds documents by it); not empty */
    size_t url_len;
    const char *text;     /* its bytes */
    size_t len;
    int html;             /* 1 HTML, 0 text, -1 decided by the text as `shingle index add` does */
} shingle_input;

typedef struct shingle_added {
    uint32_t id;          /* the document's id, 0 when it was not added */
    int status;           /* SHINGLE_OK; SHINGLE_EINVAL (no URL), SHINGLE_EUTF8 or SHINGLE_ELIMIT (it
                           * could not be sketched), SHINGLE_EMISMATCH (the sweep has its URL with
                           * other content): that document is left out, the others are added */
} shingle_added;

/* Add docs[0..n) to the sweep named sweep of ix (opened without
 * SHINGLE_INDEX_READONLY) in one write transaction, as `shingle index add`
 * adds them: each is sketched with the index's shingler, identical and
 * near-duplicate documents join their clusters (the clusters equal a fresh
 * clustering of everything), and readers see the whole batch at once when it
 * commits. A URL the sweep already has with the same bytes keeps its id
 * (out[i].id is that one). options: for an empty index, its shingler's options
 * as shingle_shingler_new takes them (but html) and policy=, threshold=,
 * max_df=, over the defaults of `shingle index add` (sketch=mod m=25 floor=20
 * invalid=latin1, resemblance >= 0.5, max_df=0), recorded in the index; for an
 * index with documents, NULL (it keeps its own). out[i] gets each document's
 * id and status. The call fails as a whole (nothing added) on a bad option,
 * an index made with other parameters, or an I/O error; one writer at a time
 * (another waits for the first to commit). */
SHINGLE_API int shingle_index_add(shingle_index *ix, const char *sweep, const char *options, const shingle_input *docs,
                                  size_t n, shingle_added *out, char **errmsg);

/* Start building ix's postings filter in a thread of its own (since 0.3): a
 * few seconds and about 1.6 bytes a posting (65 MB for a million 5 KB
 * documents), held until shingle_index_close. Once it is built, every
 * shingle_index_similar of ix leaves out the values the filter says no
 * document has instead of searching the postings for each, with the same
 * hits; documents added later, by any writer, are added to it as queries
 * meet them. For a server's long-lived handle; a second call does nothing. */
SHINGLE_API int shingle_index_filter_start(shingle_index *ix, char **errmsg);

/* shingle_index_filter_start, and with the filter the postings cache when it
 * fits in max_bytes (since 0.4): every key of the postings with its
 * documents, in memory laid out for lookups (at most about 13 bytes a
 * posting: ~480 MB for a million 5 KB documents), so that the values of a
 * query that are keys cost a few cache misses each instead of a search of
 * the postings B-tree. Built with the filter, from the same snapshot;
 * documents added later are searched for in the postings as before. The
 * same hits with or without it. max_bytes 0: the filter alone. */
SHINGLE_API int shingle_index_cache_start(shingle_index *ix, size_t max_bytes, char **errmsg);

#ifdef __cplusplus
}
#endif

#endif
