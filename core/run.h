/* A cluster run's files read back, and what the paper's phases (cluster.c,
 * decide.c) share with the alternatives to phases 2-4 (alternatives.c):
 * documents as the estimator takes them, phase 3's pair formation with its
 * counters, and phase 4's decider (a pair decided by the policy, linked in a
 * union-find and written to links.bin; clusters.bin at the end). Internal to
 * the engine: cluster.h is the public face. */
#ifndef SHINGLE_RUN_H
#define SHINGLE_RUN_H

#include "cluster.h"
#include "extsort.h"
#include "unionfind.h"

/* Records moved through a sorter at a time. */
#define SH_RUN_CHUNK 65536

/* docs.bin and, as a step needs them, the sketch values (mapped), the full
 * sets (read per pair: they are large) and the signatures of a run. */
typedef struct sh_run {
    sh_recfile docs, skv, sigs;
    sh_recstream full;
    sh_recfile fidx;          /* fullsets.idx, when phase 4's step made the candidates' sets again */
    sh_recstream fsets;       /* fullsets.bin */
    const uint64_t *fat;      /* fidx's records, or NULL */
    const sh_fullsets *mem;   /* the same held in memory (the caller's), or NULL */
    const sh_docrec *d;       /* the documents, d[0..n) */
    const uint64_t *v, *sig;  /* sketch values; signatures, sig_k per document */
    uint32_t n;
    uint32_t sig_k;
    sh_sketch_params p;       /* the parameters every sketch of the run shares */
} sh_run;

/* dir/name into out. */
void sh_run_path(char *out, size_t cap, const char *dir, const char *name);

/* Map and check docs.bin and, as asked, sketches.bin, shingles.bin, sigs.bin.
 * Errors: as sh_recfile_open; SH_EIO saying what needs a missing file. */
sh_status sh_run_open(sh_run *r, const char *dir, int need_values, int need_full, int need_sigs, sh_error *err);
void sh_run_close(sh_run *r);

/* THE full set of document i of the run: its full_n values into out, from
 * shingles.bin, or, for a document phase 1 can read again (formats.h,
 * sources.bin), from fullsets.bin as sh_verify_sets made it for phase 4.
 * Phase 4 (sh_run_view, decide.c) and the distributed one (dist.c) read
 * full sets through it alone. SH_EINVAL naming the document if its set was
 * not made. */
sh_status sh_run_full(const sh_run *r, uint32_t i, uint64_t *out, sh_error *err);
/* Document i's sketch (or, with full, its full set, sh_run_full) as the
 * estimator takes it, in caller-owned scratch with room for
 * sh_run_max_len(r, full) values; NULL with err set if reading fails. */
sh_sketch *sh_run_view(const sh_run *r, uint32_t i, sh_sketch *scratch, int full, sh_error *err);
/* The same without copying: the header (p, n_shingles, n_tokens, n) into
 * *h and a pointer to the values, in place where they are mapped (sketches)
 * or held in memory (sets made again), else read into scratch; NULL with
 * err set if reading fails. Safe from several threads with their own
 * scratch (files are read with pread). */
const uint64_t *sh_run_values(const sh_run *r, uint32_t i, sh_sketch *h, int full, uint64_t *scratch, sh_error *err);
/* The exact estimate of documents a and b from their full sets. */
sh_status sh_run_exact(const sh_run *r, uint32_t a, uint32_t b, sh_sketch *fa, sh_sketch *fb, sh_estimate *e, sh_error *err);
/* The most values a document has in its sketch (or full set). */
size_t sh_run_max_len(const sh_run *r, int full);

/* Phase 3 over a sorter of <u64 key, doc> records (pairs.h): pairs into the
 * pair sorter, or (pairs NULL) stars into uf; counters into st. */
sh_status sh_run_form(sh_extsort *keys, sh_extsort *pairs, uint32_t max_df, sh_unionfind *uf, sh_pairs_stats *st,
                      sh_progress_fn progress, void *pud, sh_error *err);
/* The disk a sorter's runs took, into st's peak. */
void sh_run_add_disk(sh_pairs_stats *st, sh_extsort *s);

/* One pair judged from its sketches and, with verify, its full sets
 * (decide.c): what a thread needs besides the run, scratch for sets read
 * from a file and the first document's set kept across its pairs (pairs.bin
 * comes sorted by the first document). */
typedef struct sh_judge {
    const sh_run *r;
    const sh_decide_config *c;
    uint64_t *fa, *fb;              /* scratch, sh_run_max_len(r, 1) values each */
    sh_sketch fah;                  /* the header of fa_doc's set */
    const uint64_t *fav;            /* its values (in fa, or where the run holds them) */
    uint32_t fa_doc;                /* 1 + the document whose set fav is (0: none) */
} sh_judge;

/* Phase 4's decider over an open run: union-find, links.bin being written. */
typedef struct sh_decider {
    sh_run r;
    sh_sketch *sa, *sb, *fa, *fb;   /* estimator scratch */
    sh_judge j;                     /* over fa and fb; set j.fa_doc = 0 after using fa */
    sh_unionfind *uf;
    sh_recwriter links;
    const sh_decide_config *c;
    sh_decide_stats *st;
} sh_decider;

/* Open the run of dir (with its full sets when c->verify, its signatures with
 * need_sigs) and start links.bin; st is zeroed. Close with sh_decider_close
 * whatever it returns. */
sh_status sh_decider_open(sh_decider *x, const char *dir, const sh_decide_config *c, int need_sigs,
                          sh_decide_stats *st, sh_error *err);
/* Decide one candidate pair of representatives; link it if it passes. */
sh_status sh_decider_pair(sh_decider *x, uint32_t a, uint32_t b, sh_error *err);
/* Commit links.bin and write clusters.bin. */
sh_status sh_decider_finish(sh_decider *x, const char *dir, sh_error *err);
void sh_decider_close(sh_decider *x);

/* The alternatives with a check drop a key shared by more documents than
 * this (a band or super shingle of boilerplate), as phase 3 drops common
 * shingles. */
#define SH_ALT_MAX_DF 100000u

/* The keys of the alternatives for document i of r: 12-byte <key (BE), i
 * (BE)> records (pairs.h) appended at out, *n counting them; none for a
 * document without shingles. */
typedef sh_status (*sh_key_emit_fn)(const sh_run *r, const sh_alt_config *cfg, uint32_t i, unsigned char *out, size_t *n);
/* The emitter of super shingles (lsh 0; cfg->meta picks the kind) or LSH
 * bands (lsh 1) for a run opened with its sketch values and, unless meta
 * super shingles, its signatures; *per = the most records of one document.
 * SH_EINVAL if LSH asks for more min-hashes than phase 1 kept. */
sh_status sh_alt_keys(const sh_run *r, const sh_alt_config *cfg, int lsh, sh_key_emit_fn *emit, size_t *per, sh_error *err);

/* clusters.bin from the links in uf, each identical document joined with its
 * representative; the cluster counts into st. */
sh_status sh_write_clusters(const sh_run *r, sh_unionfind *uf, const char *dir, sh_decide_stats *st, sh_error *err);

#endif
