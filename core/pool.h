/* Sketching many documents at once on worker threads (phase 1 of "Syntactic
 * Clustering of the Web", "The clustering algorithm": "we calculate a sketch
 * for every document"). Workers read the files themselves, so reading and
 * sketching both run in parallel; each worker owns an sh_work, the shinglers
 * are shared read-only.
 *
 * What a document gets (its sketch, fingerprints and so on) is made by
 * sh_doc_sketch (core/document.h), the same function the Lua path uses; the
 * pool adds the threads, reading the files (gzip and zstd decompressed,
 * core/zio.h), skipping binary ones, and reducing email messages recognised
 * by content to what they say (core/mail.h). */
#ifndef SHINGLE_POOL_H
#define SHINGLE_POOL_H

#include <stddef.h>
#include <stdint.h>
#include "document.h"

typedef struct sh_doc_in {
    const char *data;     /* the document, or NULL to read it from path */
    size_t len;
    const char *path;     /* file to read when data is NULL; also named in errors */
    int html;             /* canonicalize with the HTML shingler */
    const char *name;     /* named in errors when there is no path (a URL), or NULL */
} sh_doc_in;

/* A feature extractor run by the workers in place of the shingler's
 * canonicalization (fasta.h's k-mers; the Lua binding's extractors and rule
 * sets with Lua steps, one Lua state per worker). It fills w->ids[0..n_ids)
 * with the document's token ids (to shingle) or, setting *features, its
 * feature ids (a set), and returns SH_OK or this document's error. ctx is
 * the worker's, made by init the first time the worker runs one and freed
 * with the pool; without init it is arg. */
typedef struct sh_extractor {
    sh_status (*extract)(void *ctx, const char *data, size_t len, const char *path, sh_work *w, int *features,
                         sh_error *err);
    void *(*init)(void *arg, sh_error *err); /* the worker's context, or NULL with err set */
    void (*free)(void *ctx);
    void *arg;
} sh_extractor;

typedef struct sh_pool_config {
    const sh_shingler *text;   /* for plain text */
    const sh_shingler *html;   /* for HTML (may equal text) */
    sh_sketch_params params;   /* kind, s, m, rules */
    int threads;               /* workers, >= 1 (the calling thread is one of them) */
    int want_full;             /* also return the full distinct shingle set */
    uint32_t sig_k;            /* also return k independent minima (0: none) */
    int skip_binary;           /* a NUL byte in the first 8 KiB: skip as binary */
    size_t max_bytes;          /* larger documents are skipped (0: no limit); also the bound on a
                                  compressed document's decompressed size and a message's rendering */
    int mail;                  /* a document that is an email message (by content, core/mail.h) is
                                  rendered as its subject and text parts, with the HTML shingler */
    size_t max_shingles;       /* a document with more shingles is skipped (SH_ELIMIT), having held
                                  at most that many tokens (0: no limit; sh_work.max_shingles) */
    const sh_extractor *extractor; /* NULL: the shingler's canonicalization; else this (kept by the caller) */
} sh_pool_config;

typedef struct sh_pool sh_pool;

sh_status sh_pool_new(sh_pool **out, const sh_pool_config *cfg, sh_error *err);

/* Sketch docs[0..n) into outs[0..n) on the pool's threads; returns when all
 * are done. Per-document failures (unreadable, binary, invalid UTF-8) are in
 * outs[i].status; the return value is SH_ENOMEM only if threads could not run. */
sh_status sh_pool_run(sh_pool *p, const sh_doc_in *docs, sh_doc_out *outs, size_t n, sh_error *err);

/* The same, in the background: start sketching docs[0..n) into outs[0..n)
 * on the pool's threads (all of them: the calling thread is free
 * meanwhile, e.g. to write the previous batch to an index) and return;
 * docs, their bytes and outs must stay as they are until sh_pool_wait
 * returns, which is when all are done. One batch at a time: sh_pool_start,
 * sh_pool_run and sh_pool_free wait for a started batch first. */
sh_status sh_pool_start(sh_pool *p, const sh_doc_in *docs, sh_doc_out *outs, size_t n, sh_error *err);
void sh_pool_wait(sh_pool *p);

/* Free what sh_pool_run allocated in outs[0..n). */
void sh_pool_release(sh_doc_out *outs, size_t n);

void sh_pool_free(sh_pool *p);

#endif
