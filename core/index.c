#include "index.h"

#include "byteorder.h"
#include "ixcheck.h"
#include "ixcache.h"
#include "ixfilter.h"
#include "ixwarm.h"
#include "pairest.h"
#include "run.h"
#include "extsort.h"
#include "hashtab.h"
#include "sort.h"

#include <errno.h>
#include <math.h>
#include <lmdb.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <dirent.h>
#include <sys/statvfs.h>
#include <unistd.h>


/* how an add puts its postings (sh_index_adder.deferred; core/index.c, "deferred postings") */
enum { DEFER_APPEND = 1, DEFER_CHUNK = 2 };

/* The holders of values two or more new documents hold, gathered in memory
 * for decide_in_memory (keep_group): 4 bytes a holder there and 4 more in
 * its document's list of groups, 4 bytes a value. Past it the pairs go
 * through an external sort (DEFER_PAIR_MEMORY). */
#define DEFER_INMEM_MEMORY ((size_t)512 << 20)

/* dups[i] of a document sh_index_add skips (its URL is already in the sweep) */
#define SKIPPED 0xFF

enum { D_META, D_DOCS, D_POST, D_URLS, D_RAW, D_CANON, D_CLUSTER, D_MEMBERS, D_SWEEPS, D_SWEEPDOCS,
       D_DELTA, D_DURLS, D_DRAW, D_DCANON, D_N };
/* the table that takes later entries of a table (see "postings and delta"), or -1 */
static int delta_of(int d)
{
    return d == D_POST ? D_DELTA : d == D_URLS ? D_DURLS : d == D_RAW ? D_DRAW : d == D_CANON ? D_DCANON : -1;
}

/* The error of a handle opened read-only on an index without delta tables
 * (made before them) once a writer has given the index them: the entries it
 * would miss are there (lmdb_err says to open the index again). */
#define SH_MDB_STALE MDB_INCOMPATIBLE
static const char *const dbnames[D_N] = SH_INDEX_TABLE_NAMES;
/* which tables hold sorted lists of fixed-size doc ids */
static const int dupsort[D_N] = SH_INDEX_DUPSORT;

struct sh_index {
    MDB_env *env;
    MDB_dbi db[D_N];
    MDB_txn *rtxn;             /* the pinned read transaction (sh_index_read_begin), kept for renewal */
    int pinned;                /* depth of sh_index_read_begin */
    pthread_t pin_owner;       /* the thread that pinned it: other threads read on their own */
    int readonly;
    int has_delta;             /* the delta tables are there (an index made before they were, opened read-only, has none) */
    MDB_dbi main_dbi;          /* LMDB's table of tables: whether a writer has given the index delta tables since (delta_appeared) */
    char path[1024];
    sh_rabin urlr;
    void *att;                 /* sh_index_attach */
    void (*att_free)(void *);
    /* the postings filter (sh_index_filter_start): built by its own thread,
     * then brought up to date by the queries (aids_for) */
    sh_ixfilter *filter;       /* NULL until built (atomic) */
    uint32_t filter_next;      /* the first document id it does not cover (atomic) */
    pthread_mutex_t filter_mu; /* one query brings it up to date at a time */
    pthread_t filter_thread;
    int filter_started, filter_stop; /* filter_stop: atomic */
    int filter_thread_live;    /* the builder is to be joined */
    int aids_shared;           /* filter and cache belong to an sh_index_aids (sh_index_aids_use) */
    uint64_t filter_tested, filter_skipped; /* values the queries asked it about, and left out (atomic) */
    char filter_err[256];      /* why the builder gave up, if it did */
    /* the postings cache (core/ixcache.c), when asked for and it fits in
     * cache_max bytes: built with the filter, from the same snapshot, it
     * holds the postings of the documents below cache_next; `recent` is a
     * filter of the values of the documents from cache_next on, which the
     * queries bring up to date with the filter (published with the filter) */
    size_t cache_max;
    sh_ixcache *cache;
    sh_ixfilter *recent;
    uint32_t cache_next;
    /* a filter of delta's values (built with the filter, from the same
     * snapshot, and given every later document's values by the queries): a
     * value it does not hold is not searched in delta. A snapshot before its
     * build (LMDB transaction dtxn) does not use it: a merge since may have
     * moved entries it never saw out of delta. */
    sh_ixfilter *dfilter;
    size_t dtxn;
    uint64_t cache_found, cache_lmdb; /* values the cache answered, and values looked up in the postings beside it (atomic) */
    char cache_note[256];      /* why there is no cache, when one was asked for */
};

struct sh_index_adder {
    sh_index *ix;
    MDB_txn *txn;
    sh_sketch_params p;
    sh_policy policy;
    double threshold;
    uint32_t max_df, sweep, next, sweep_count;
    char sweep_name[256];
    sh_index_add_stats st;
    uint32_t *cand;            /* candidate scratch */
    size_t cand_cap;
    sh_sketch *sa, *sb;        /* estimator scratch: a new document's sketch (deferred adds), an earlier one's */
    size_t sa_cap, sb_cap;
    uint64_t *pairs;           /* a batch's candidate pairs, new << 32 | earlier */
    size_t pairs_cap;
    /* An add into an index whose postings are empty (a new index) defers
     * them to the commit (defer_flush): dpost holds the sweep's postings,
     * dstat[id - dbase] each new document's SH_DUP_* and dother[] its
     * earlier copy */
    int deferred;              /* DEFER_APPEND, DEFER_CHUNK or 0 */
    sh_extsort *dpost;
    unsigned char *store;      /* DEFER_APPEND: the sweep's records without their URLs, while they fit */
    size_t store_len, store_cap, store_n, *store_off;
    int store_full;
    unsigned char *crecs;      /* DEFER_CHUNK: the chunk's postings, BE64 value, BE32 doc */
    size_t ncrecs, crecs_cap, chunk, post_entries;
    uint32_t dbase;
    unsigned char *dstat;
    uint32_t *dother;
    size_t dcap;
    /* pairs from counts: the entries of the new documents of a
     * DEFER_APPEND add, pent[id - dbase], their counts of multiples at
     * pcm + pent[id - dbase].cm_at */
    int counts, test;          /* counts: the index's sketches allow it; test: SH_INDEX_* */
    int post_written;          /* this transaction changed the postings table (not only delta) */
    uint64_t mods[256];        /* MOD: the moduli of the chain, mods[j] = sh_mod_step(m, j), j <= nmods */
    uint32_t nmods;
    struct pentry *pent;
    uint32_t *pcm;
    size_t npdoc, pdoc_cap, npcm, pcm_cap;
    /* DEFER_APPEND's pairs in memory: the holders of each value two or
     * more new documents hold, group after group (hold; group g's end at
     * gend[g]); inmem 0 once they outgrew DEFER_INMEM_MEMORY (the pairs then
     * go through an external sort) */
    int inmem;
    size_t inmem_max;          /* DEFER_INMEM_MEMORY, or 4 KiB for a test */
    uint32_t *hold, *gend;
    size_t nhold, hold_cap, ngrp, grp_cap;
    /* DEFER_APPEND into empty urls, raw and canon tables (a new index):
     * their records wait too, fps[3 k + t] (t: 0 URL, 1 raw, 2 canonical
     * fingerprint of document dbase + k), and are appended at the commit
     * (fp_flush); the add's lookups go to hash tables of the first id of
     * each fingerprint (fph, fps 0 and 1 in fpsmall), and unext[k] chains
     * the documents of one URL fingerprint */
    int dfp;
    int fp_delta;              /* dfp into an index with fingerprints: they go into the delta_* tables at the commit,
                                * and the add's lookups go to the tables first (core/index.c, "postings and delta") */
    uint32_t fpbase;           /* the add's first id (dbase moves on with each chunk) */
    uint64_t *fps;
    uint32_t *unext;
    size_t nfp, fp_cap;
    sh_htab fph[3];
    uint32_t fpsmall[3][2];
    /* dfp into an index without documents: the docs, sweepdocs, members and
     * cluster tables take this add's records in the order of ids, appended
     * through cursors kept open until the commit (close_append) */
    int dapp, sd_started;
    MDB_cursor *acur[4];
};


static void shrink(sh_index *ix);
static size_t chunk_values(const sh_index_adder *a);
static sh_status stored_sketch(sh_index_adder *a, uint32_t id, sh_error *err);

/* Whether the filesystem holding path has (almost) no room left: LMDB
 * reports a short write on a full disk as EIO, so the cause is looked up. */
static int disk_full(const char *path)
{
    struct statvfs v;
    return statvfs(path, &v) == 0 && (uint64_t)v.f_bavail * v.f_frsize < ((uint64_t)1 << 20);
}

static sh_status lmdb_err(sh_error *err, const sh_index *ix, const char *what, int rc)
{
    if (ix && (rc == ENOSPC || ((rc == EIO || rc == MDB_MAP_FULL) && disk_full(ix->path)))) {
        sh_error_set(err, SH_EIO, 0, "%s/data.mdb: %s: no space left on device; the add was rolled back and the index "
                     "is as it was: free some space and add again", ix->path, what);
        if (err) err->sys_errno = ENOSPC;
        return SH_EIO;
    }
    sh_status code = rc == MDB_INVALID || rc == MDB_VERSION_MISMATCH || rc == MDB_CORRUPTED || rc == MDB_PAGE_NOTFOUND
                     ? SH_EFORMAT : rc == ENOMEM ? SH_ENOMEM : SH_EIO;
    const char *hint = rc == MDB_MAP_FULL ? ": the index reached its map size; open it with a larger map_size"
                     : rc == SH_MDB_STALE && ix && !ix->has_delta
                     ? ": a newer writer gave the index its delta tables after this handle opened it read-only; open the index again"
                     : code == SH_EFORMAT ? ": the index is corrupt or not a shingle index" : "";
    sh_error_set(err, code, 0, "%s: %s: %s%s", ix ? ix->path : "index", what, mdb_strerror(rc), hint);
    if (err && code == SH_EIO) err->sys_errno = rc;
    return code;
}

/* Whether this thread pinned ix's snapshot. A server's writer thread adds
 * through the handle its event loop reads with (shingle_index_add from a
 * worker thread): it must not read the loop's pinned transaction. */
static int pinned_here(const sh_index *ix)
{
    return __atomic_load_n(&ix->pinned, __ATOMIC_ACQUIRE) > 0 &&
           pthread_equal(__atomic_load_n(&ix->pin_owner, __ATOMIC_RELAXED), pthread_self());
}

/* A read transaction for one query: the pinned one, or a fresh one. */
static int rbegin(sh_index *ix, MDB_txn **t)
{
    if (pinned_here(ix)) { *t = ix->rtxn; return 0; }
    return mdb_txn_begin(ix->env, NULL, MDB_RDONLY, t);
}

static void rend(sh_index *ix, MDB_txn *t)
{
    if (!pinned_here(ix) || t != ix->rtxn) mdb_txn_abort(t);
}

sh_status sh_index_read_begin(sh_index *ix, sh_error *err)
{
    int rc;
    if (ix->pinned) {
        __atomic_store_n(&ix->pinned, ix->pinned + 1, __ATOMIC_RELEASE);
        return SH_OK;
    }
    rc = ix->rtxn ? mdb_txn_renew(ix->rtxn) : mdb_txn_begin(ix->env, NULL, MDB_RDONLY, &ix->rtxn);
    if (rc) return lmdb_err(err, ix, "begin reading", rc);
    __atomic_store_n(&ix->pin_owner, pthread_self(), __ATOMIC_RELAXED);
    __atomic_store_n(&ix->pinned, 1, __ATOMIC_RELEASE);
    return SH_OK;
}

void sh_index_read_end(sh_index *ix)
{
    int n = ix->pinned;
    if (n <= 0) return;
    __atomic_store_n(&ix->pinned, n - 1, __ATOMIC_RELEASE);
    if (n == 1) mdb_txn_reset(ix->rtxn);
}

uint64_t sh_index_url_fp(const sh_index *ix, const char *url, size_t len)
{
    return sh_rabin_aug(&ix->urlr, url, len);
}

sh_status sh_index_open(sh_index **out, const char *path, int readonly, int create, size_t map_size, sh_error *err)
{
    sh_index *ix;
    MDB_txn *txn;
    struct stat st;
    int rc, i;
    *out = NULL;
    if (!sh_host_little_endian())
        return sh_error_set(err, SH_EINVAL, 0, "%s: this host is big-endian, and the index stores little-endian records; "
                            "use a little-endian host (docs/formats.md, \"Byte order\")", path);
    if (stat(path, &st) != 0) {
        if (!create || readonly)
            return sh_error_set(err, SH_EIO, 0, "%s: no index there (%s); make one with `shingle index add` or `shingle cluster --index`",
                                path, strerror(errno));
        if (mkdir(path, 0755) != 0)
            return sh_error_set(err, SH_EIO, 0, "cannot create the index directory %s: %s", path, strerror(errno));
    } else if (!S_ISDIR(st.st_mode)) {
        return sh_error_set(err, SH_EFORMAT, 0, "%s is not an index directory (an index is a directory holding data.mdb)", path);
    }
    {
        /* a truncated data.mdb would make the first read die of SIGBUS */
        sh_status cs = sh_index_check_file(path, NULL, err);
        if (cs != SH_OK) return cs;
    }
    ix = (sh_index *)calloc(1, sizeof *ix);
    if (!ix) return sh_error_set(err, SH_ENOMEM, 0, "out of memory");
    snprintf(ix->path, sizeof ix->path, "%s", path);
    ix->readonly = readonly;
    sh_rabin_init(&ix->urlr, SH_INDEX_URL_POLY, 64);
    if ((rc = mdb_env_create(&ix->env)) != 0) { free(ix); return lmdb_err(err, NULL, "create", rc); }
    mdb_env_set_maxdbs(ix->env, D_N + 2);
    mdb_env_set_mapsize(ix->env, map_size ? map_size : (size_t)64 << 30);
    mdb_env_set_maxreaders(ix->env, 512);
    rc = mdb_env_open(ix->env, path, (readonly ? MDB_RDONLY : 0) | MDB_NOTLS, 0644);
    if (rc != 0) { lmdb_err(err, ix, "open", rc); sh_index_close(ix); return err ? err->code : SH_EIO; }
    if ((rc = mdb_txn_begin(ix->env, NULL, readonly ? MDB_RDONLY : 0, &txn)) != 0) {
        lmdb_err(err, ix, "begin", rc);
        sh_index_close(ix);
        return err ? err->code : SH_EIO;
    }
    for (i = 0; i < D_N; i++) {
        unsigned flags = (readonly ? 0 : MDB_CREATE) | (dupsort[i] ? MDB_DUPSORT | MDB_DUPFIXED : 0);
        if ((rc = mdb_dbi_open(txn, dbnames[i], flags, &ix->db[i])) != 0) {
            if (rc == MDB_NOTFOUND && i >= D_DELTA) { ix->db[i] = 0; continue; } /* an older index, read-only: no delta */
            mdb_txn_abort(txn);
            if (rc == MDB_NOTFOUND) {
                sh_error_set(err, SH_EFORMAT, 0, "%s is an LMDB environment but not a shingle index (no table '%s')", path, dbnames[i]);
            } else {
                lmdb_err(err, ix, "open table", rc);
            }
            sh_index_close(ix);
            return err ? err->code : SH_EFORMAT;
        }
    }
    ix->has_delta = 1;
    for (i = D_DELTA; i < D_N; i++) if (!ix->db[i]) ix->has_delta = 0;
    if (!ix->has_delta && (rc = mdb_dbi_open(txn, NULL, 0, &ix->main_dbi)) != 0) {
        mdb_txn_abort(txn);
        lmdb_err(err, ix, "open table", rc);
        sh_index_close(ix);
        return err ? err->code : SH_EIO;
    }
    {
        MDB_val k = { 6, (void *)(uintptr_t)"format" }, v;
        rc = mdb_get(txn, ix->db[D_META], &k, &v);
        if (rc == 0 && (v.mv_size != 4 || sh_load_be32(v.mv_data) != SH_INDEX_FORMAT)) {
            mdb_txn_abort(txn);
            sh_error_set(err, SH_EFORMAT, 0, "%s has index format %u; this build reads format %u", path,
                         v.mv_size == 4 ? sh_load_be32(v.mv_data) : 0, SH_INDEX_FORMAT);
            sh_index_close(ix);
            return SH_EFORMAT;
        }
        if (rc == MDB_NOTFOUND && !readonly) {
            unsigned char b[4];
            sh_store_be32(b, SH_INDEX_FORMAT);
            v.mv_size = 4;
            v.mv_data = b;
            rc = mdb_put(txn, ix->db[D_META], &k, &v, 0);
        } else if (rc == MDB_NOTFOUND) {
            rc = 0;
        }
    }
    if (rc != 0 || (rc = mdb_txn_commit(txn)) != 0) {
        lmdb_err(err, ix, "initialize", rc);
        sh_index_close(ix);
        return err ? err->code : SH_EIO;
    }
    *out = ix;
    return SH_OK;
}

void *sh_index_attach(sh_index *ix, void *p, void (*free_fn)(void *))
{
    void *none = NULL;
    if (__atomic_compare_exchange_n(&ix->att, &none, p, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
        ix->att_free = free_fn;
        return p;
    }
    return none;
}

void *sh_index_attachment(const sh_index *ix)
{
    return __atomic_load_n(&ix->att, __ATOMIC_ACQUIRE);
}

void sh_index_close(sh_index *ix)
{
    if (!ix) return;
    if (ix->filter_started) {
        __atomic_store_n(&ix->filter_stop, 1, __ATOMIC_RELEASE);
        if (ix->filter_thread_live) pthread_join(ix->filter_thread, NULL);
        pthread_mutex_destroy(&ix->filter_mu);
        if (!ix->aids_shared) {
            sh_ixfilter_free(ix->filter);
            sh_ixcache_free(ix->cache);
            sh_ixfilter_free(ix->dfilter);
        }
        sh_ixfilter_free(ix->recent);
    }
    if (ix->att && ix->att_free) ix->att_free(ix->att);
    if (ix->rtxn) mdb_txn_abort(ix->rtxn);
    if (ix->env) mdb_env_close(ix->env);
    free(ix);
}

static int meta_get(MDB_txn *t, sh_index *ix, const char *key, MDB_val *v)
{
    MDB_val k = { strlen(key), (void *)(uintptr_t)key };
    return mdb_get(t, ix->db[D_META], &k, v);
}

static int meta_put(MDB_txn *t, sh_index *ix, const char *key, const void *data, size_t n)
{
    MDB_val k = { strlen(key), (void *)(uintptr_t)key }, v = { n, (void *)(uintptr_t)data };
    return mdb_put(t, ix->db[D_META], &k, &v, 0);
}

static sh_status read_params(MDB_txn *t, sh_index *ix, sh_sketch_params *p, int *present, sh_policy *pol, double *thr, sh_error *err)
{
    MDB_val v;
    int rc = meta_get(t, ix, "params", &v);
    sh_sketch *e;
    *present = 0;
    if (rc == MDB_NOTFOUND) return SH_OK;
    if (rc != 0) return lmdb_err(err, ix, "read parameters", rc);
    if (sh_sketch_deserialize((const unsigned char *)v.mv_data, v.mv_size, &e, err) != SH_OK)
        return sh_error_set(err, SH_EFORMAT, 0, "%s: the stored parameters are corrupt", ix->path);
    *p = e->p;
    free(e);
    *present = 1;
    if ((rc = meta_get(t, ix, "policy", &v)) == 0 && v.mv_size == 12) {
        uint32_t q = sh_load_le32(v.mv_data);
        memcpy(thr, (const char *)v.mv_data + 4, 8);
        *pol = (sh_policy)q;
    }
    return SH_OK;
}

sh_status sh_index_params(sh_index *ix, sh_sketch_params *p, int *present, sh_policy *pol, double *threshold, sh_error *err)
{
    MDB_txn *t;
    sh_status s;
    int rc = rbegin(ix, &t);
    if (rc) return lmdb_err(err, ix, "begin", rc);
    s = read_params(t, ix, p, present, pol, threshold, err);
    rend(ix, t);
    return s;
}

/* ---- adding --------------------------------------------------------------- */

/* An add's external sorts (a new index's postings, their candidate pairs)
 * keep their run files in a shingle-sort-XXXXXX directory inside the index
 * (extsort.c), on the file system the index was given room on, not in
 * $TMPDIR. A killed add leaves that directory behind; the next add removes
 * it. It runs inside the next add's write transaction: LMDB lets one writer
 * in at a time, so no other add can be using such a directory then. */
static void clear_stale_sorts(const char *path)
{
    DIR *d = opendir(path), *r;
    struct dirent *e, *f;
    char sub[1400], file[1700];
    if (!d) return;
    while ((e = readdir(d)) != NULL) {
        if (strncmp(e->d_name, "shingle-sort-", 13) != 0) continue;
        snprintf(sub, sizeof sub, "%s/%s", path, e->d_name);
        if ((r = opendir(sub)) == NULL) continue;
        while ((f = readdir(r)) != NULL) {
            if (f->d_name[0] == '.') continue;
            snprintf(file, sizeof file, "%s/%s", sub, f->d_name);
            unlink(file);
        }
        closedir(r);
        rmdir(sub);
    }
    closedir(d);
}

/* Whether a deferred add keeps its fingerprints in memory (dfp) and appends
 * them at the commit: into empty tables (a new index), or into the empty
 * delta tables of an index that has some (fp_delta); and whether its
 * documents' records are appended (dapp, a new index). */
static void choose_dfp(sh_index_adder *a)
{
    sh_index *ix = a->ix;
    if (a->deferred && !a->dfp) {
        /* the fingerprint tables: into empty ones (a new index) the add's
         * fingerprints are appended at the commit; into an index that has
         * some, they go into the delta tables at the commit, appended when
         * those are empty, else in one sorted walk of each */
        MDB_stat mu, mr, mc, du, dr, dc;
        size_t in_tables = SIZE_MAX, in_delta = SIZE_MAX;
        int i;
        if (mdb_stat(a->txn, ix->db[D_URLS], &mu) == 0 && mdb_stat(a->txn, ix->db[D_RAW], &mr) == 0 &&
            mdb_stat(a->txn, ix->db[D_CANON], &mc) == 0)
            in_tables = mu.ms_entries + mr.ms_entries + mc.ms_entries;
        if (mdb_stat(a->txn, ix->db[D_DURLS], &du) == 0 && mdb_stat(a->txn, ix->db[D_DRAW], &dr) == 0 &&
            mdb_stat(a->txn, ix->db[D_DCANON], &dc) == 0)
            in_delta = du.ms_entries + dr.ms_entries + dc.ms_entries;
        if (in_delta != SIZE_MAX && in_tables != SIZE_MAX) {
            a->dfp = 1;
            a->fp_delta = in_tables + in_delta > 0;
            memset(a->fpsmall, 0xff, sizeof a->fpsmall);
        }
        if (a->dfp && !a->fp_delta && a->deferred == DEFER_APPEND) {
            a->dapp = 1;
            for (i = 0; i < 4; i++) {
                static const int app[4] = { D_DOCS, D_SWEEPDOCS, D_MEMBERS, D_CLUSTER };
                if (mdb_stat(a->txn, ix->db[app[i]], &mu) != 0 || mu.ms_entries != 0) a->dapp = 0;
            }
        }
    }
}

sh_status sh_index_begin(sh_index *ix, const char *sweep, const sh_sketch_params *identity, sh_policy policy,
                         double threshold, uint32_t max_df, sh_index_adder **out, sh_error *err)
{
    sh_index_adder *a;
    sh_sketch_params p;
    sh_policy pol = SH_POLICY_RESEMBLANCE;
    double thr = 0.5;
    int present, rc;
    size_t sl = strlen(sweep);
    sh_status s;
    MDB_val v;
    *out = NULL;
    if (ix->readonly) return sh_error_set(err, SH_EINVAL, 0, "%s was opened read-only", ix->path);
    if (sl == 0 || sl >= 256) return sh_error_set(err, SH_EINVAL, 0, "a sweep name must have 1 to 255 bytes");
    a = (sh_index_adder *)calloc(1, sizeof *a);
    if (!a) return sh_error_set(err, SH_ENOMEM, 0, "out of memory");
    a->ix = ix;
    a->p = *identity;
    /* s and m mean something only for the kinds that use them (as in sketches) */
    if (a->p.kind != SH_SKETCH_MIN && a->p.kind != SH_SKETCH_MINMOD) a->p.s = 0;
    if (a->p.kind != SH_SKETCH_MOD && a->p.kind != SH_SKETCH_MINMOD) a->p.m = 0;
    a->p.cls = 0;
    a->p.floor = 0;
    identity = &a->p;
    a->policy = policy;
    a->threshold = threshold;
    a->max_df = max_df;
    memcpy(a->sweep_name, sweep, sl + 1);
    if ((rc = mdb_txn_begin(ix->env, NULL, 0, &a->txn)) != 0) { free(a); return lmdb_err(err, ix, "begin", rc); }
    clear_stale_sorts(ix->path);
    if ((s = read_params(a->txn, ix, &p, &present, &pol, &thr, err)) != SH_OK) { sh_index_abort(a); return s; }
    if (present) {
        sh_sketch x, y;
        memset(&x, 0, sizeof x);
        memset(&y, 0, sizeof y);
        x.p = p;
        y.p = *identity;
        if (p.kind != identity->kind || p.s != identity->s || p.m != identity->m) {
            sh_index_abort(a);
            return sh_error_set(err, SH_EMISMATCH, 0, "%s holds sketches of another kind or size (s = %u, m = %llu); "
                                "sketch with the index's parameters", ix->path, p.s, (unsigned long long)p.m);
        }
        if ((s = sh_sketch_compatible(&x, &y, err)) != SH_OK) {
            char msg[512];
            snprintf(msg, sizeof msg, "%.200s: %.300s", ix->path, err->msg);
            sh_index_abort(a);
            return sh_error_set(err, s, 0, "%s", msg);
        }
        if (pol != policy || thr != threshold) {
            sh_index_abort(a);
            return sh_error_set(err, SH_EMISMATCH, 0, "%s links documents by %s >= %g; adding with %s >= %g would make its clusters "
                                "differ from a fresh clustering: use the index's policy", ix->path, sh_policy_name(pol), thr,
                                sh_policy_name(policy), threshold);
        }
    } else {
        unsigned char buf[SH_SKETCH_PARAMS_SIZE], pb[12];
        sh_sketch e;
        uint32_t q = (uint32_t)policy;
        memset(&e, 0, sizeof e);
        e.p = *identity;
        sh_sketch_serialize(&e, buf);
        sh_store_le32(pb, q);
        memcpy(pb + 4, &threshold, 8);   /* an IEEE double as the host has it: little-endian (formats.h) */
        if ((rc = meta_put(a->txn, ix, "params", buf, SH_SKETCH_PARAMS_SIZE)) != 0 || (rc = meta_put(a->txn, ix, "policy", pb, 12)) != 0) {
            sh_index_abort(a);
            return lmdb_err(err, ix, "write parameters", rc);
        }
    }
    a->next = 0;
    if ((rc = meta_get(a->txn, ix, "next", &v)) == 0 && v.mv_size == 4) a->next = sh_load_be32(v.mv_data);
    a->dbase = a->next;
    if (max_df == 0) {
        /* no postings yet (a new index): they go in at the commit, all at
         * once (defer_flush). With a common-value cutoff a value's count
         * depends on the batches, so those adds keep to them. */
        MDB_stat ms, md;
        if (mdb_stat(a->txn, ix->db[D_POST], &ms) == 0 && mdb_stat(a->txn, ix->db[D_DELTA], &md) == 0) {
            a->post_entries = ms.ms_entries + md.ms_entries;
            /* an index too small for chunks (chunk_values) keeps the batches */
            a->deferred = a->post_entries == 0 ? DEFER_APPEND : chunk_values(a) ? DEFER_CHUNK : 0;
        }
    }
    /* pairs from counts: MOD sketches of one chain, or full sets */
    a->counts = (a->p.kind == SH_SKETCH_MOD && a->p.m) || a->p.kind == SH_SKETCH_FULL;
    a->mods[0] = a->p.kind == SH_SKETCH_MOD ? a->p.m : 1;
    a->inmem = 1;
    a->inmem_max = DEFER_INMEM_MEMORY;
    a->fpbase = a->next;
    choose_dfp(a);
    /* the sweep: existing name keeps its id, else the next id */
    {
        MDB_val k = { sl, (void *)(uintptr_t)sweep };
        if ((rc = mdb_get(a->txn, ix->db[D_SWEEPS], &k, &v)) == 0 && v.mv_size == 8) {
            a->sweep = sh_load_be32(v.mv_data);
            a->sweep_count = sh_load_be32((const char *)v.mv_data + 4);
        } else {
            MDB_stat ms;
            mdb_stat(a->txn, ix->db[D_SWEEPS], &ms);
            a->sweep = (uint32_t)ms.ms_entries;
            a->sweep_count = 0;
        }
    }
    *out = a;
    return SH_OK;
}

static int put_dup(MDB_txn *t, MDB_dbi db, const void *key, size_t klen, uint32_t doc)
{
    unsigned char d[4];
    MDB_val k = { klen, (void *)(uintptr_t)key }, v = { 4, d };
    sh_store_be32(d, doc);
    return mdb_put(t, db, &k, &v, 0);
}

static int first_dup(MDB_txn *t, MDB_dbi db, const void *key, size_t klen, uint32_t *doc)
{
    MDB_val k = { klen, (void *)(uintptr_t)key }, v;
    int rc = mdb_get(t, db, &k, &v);
    if (rc == 0) *doc = sh_load_be32(v.mv_data);
    return rc;
}

/* first_dup() of a table and its delta table: the smaller of their first documents. */
static int first_dup_both(MDB_txn *t, const sh_index *ix, int db, const void *key, size_t klen, uint32_t *doc)
{
    uint32_t x;
    int rc = first_dup(t, ix->db[db], key, klen, doc), rd;
    if (!ix->has_delta || (rc != 0 && rc != MDB_NOTFOUND)) return rc;
    if ((rd = first_dup(t, ix->db[delta_of(db)], key, klen, &x)) == MDB_NOTFOUND) return rc;
    if (rd) return rd;
    if (rc == MDB_NOTFOUND || x < *doc) *doc = x;
    return 0;
}

static int cluster_of(MDB_txn *t, sh_index *ix, uint32_t doc, uint32_t *c)
{
    unsigned char kb[4];
    MDB_val k = { 4, kb }, v;
    int rc;
    sh_store_be32(kb, doc);
    rc = mdb_get(t, ix->db[D_CLUSTER], &k, &v);
    if (rc == 0) *c = sh_load_be32(v.mv_data);
    return rc;
}

static int set_cluster(MDB_txn *t, sh_index *ix, uint32_t doc, uint32_t c)
{
    unsigned char kb[4], vb[4];
    MDB_val k = { 4, kb }, v = { 4, vb };
    sh_store_be32(kb, doc);
    sh_store_be32(vb, c);
    return mdb_put(t, ix->db[D_CLUSTER], &k, &v, 0);
}

/* Union by size: the members of the smaller cluster move to the larger. */
static int merge(sh_index_adder *a, uint32_t x, uint32_t y)
{
    sh_index *ix = a->ix;
    MDB_txn *t = a->txn;
    uint32_t cx, cy, small, big;
    unsigned char kb[4];
    MDB_val k = { 4, kb }, v;
    MDB_cursor *cur;
    size_t nx = 0, ny = 0;
    uint32_t *moving = NULL;
    size_t nm = 0, i;
    int rc;
    if ((rc = cluster_of(t, ix, x, &cx)) != 0 || (rc = cluster_of(t, ix, y, &cy)) != 0) return rc;
    if (cx == cy) return 0;
    if ((rc = mdb_cursor_open(t, ix->db[D_MEMBERS], &cur)) != 0) return rc;
    /* mdb_cursor_get points k at the key in the map: set it again before each search */
    sh_store_be32(kb, cx);
    k.mv_size = 4; k.mv_data = kb;
    if (mdb_cursor_get(cur, &k, &v, MDB_SET_KEY) == 0) mdb_cursor_count(cur, &nx);
    sh_store_be32(kb, cy);
    k.mv_size = 4; k.mv_data = kb;
    if (mdb_cursor_get(cur, &k, &v, MDB_SET_KEY) == 0) mdb_cursor_count(cur, &ny);
    small = nx < ny ? cx : cy;
    big = small == cx ? cy : cx;
    moving = (uint32_t *)malloc((nx < ny ? nx : ny) * sizeof *moving + 4);
    if (!moving) { mdb_cursor_close(cur); return ENOMEM; }
    sh_store_be32(kb, small);
    k.mv_size = 4; k.mv_data = kb;
    rc = mdb_cursor_get(cur, &k, &v, MDB_SET_KEY);
    while (rc == 0) {
        moving[nm++] = sh_load_be32(v.mv_data);
        rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT_DUP);
    }
    mdb_cursor_close(cur);
    if (rc != MDB_NOTFOUND) { free(moving); return rc; }
    sh_store_be32(kb, small);
    k.mv_size = 4;
    k.mv_data = kb;
    if ((rc = mdb_del(t, ix->db[D_MEMBERS], &k, NULL)) != 0 && rc != MDB_NOTFOUND) { free(moving); return rc; }
    rc = 0;
    for (i = 0; i < nm && rc == 0; i++) {
        unsigned char ck[4];
        sh_store_be32(ck, big);
        if ((rc = put_dup(t, ix->db[D_MEMBERS], ck, 4, moving[i])) == 0) rc = set_cluster(t, ix, moving[i], big);
    }
    free(moving);
    a->st.merges++;
    return rc;
}

static size_t docrec_size(const sh_ixdoc *d)
{
    return sizeof *d + 8 * (size_t)d->n_values + d->url_len;
}

/* The sketch of a stored document as the estimator takes it, after checking
 * its record (ixcheck.h); out has room for the record's values. */
static sh_status sketch_from(const sh_index *ix, const sh_sketch_params *p, uint32_t doc, const MDB_val *v, sh_sketch *out,
                             sh_error *err)
{
    sh_ixdoc d;
    sh_status s = sh_ixdoc_decode(v->mv_data, v->mv_size, doc, &d, NULL, NULL, err);
    if (s != SH_OK) {
        char msg[sizeof err->msg];
        snprintf(msg, sizeof msg, "%s", err ? err->msg : "");
        return sh_error_set(err, s, 0, "%.300s: %.200s", ix->path, msg);
    }
    sh_ixdoc_sketch(p, &d, v->mv_data, out);
    return SH_OK;
}

/* The header of a stored document, checked. */
static sh_status doc_head(const sh_index *ix, uint32_t doc, const MDB_val *v, sh_ixdoc *d, sh_error *err)
{
    sh_status s = sh_ixdoc_decode(v->mv_data, v->mv_size, doc, d, NULL, NULL, err);
    if (s != SH_OK) {
        char msg[sizeof err->msg];
        snprintf(msg, sizeof msg, "%s", err ? err->msg : "");
        return sh_error_set(err, s, 0, "%.300s: %.200s", ix->path, msg);
    }
    return SH_OK;
}

static int get_doc(MDB_txn *t, sh_index *ix, uint32_t doc, MDB_val *v)
{
    unsigned char kb[4];
    MDB_val k = { 4, kb };
    sh_store_be32(kb, doc);
    return mdb_get(t, ix->db[D_DOCS], &k, v);
}

/* Room in *sk for a sketch of n values. */
static sh_status grow_scratch(sh_sketch **sk, size_t *cap, size_t n, sh_error *err)
{
    if (n <= *cap && *sk) return SH_OK;
    free(*sk);
    *cap = 0;
    if (!(*sk = (sh_sketch *)malloc(sizeof(sh_sketch) + 8 * (n ? n : 1)))) return sh_error_set(err, SH_ENOMEM, 0, "out of memory");
    *cap = n;
    return SH_OK;
}

/* Candidate documents sharing sketch values with sk: each distinct doc once
 * (ids below `below` only, so a pair within one batch is decided once),
 * looking up the first nv values, or the first nv_skip when one of them is
 * skipped as common (held by more than max_df documents). */
/* ---- the postings filter ------------------------------------------------------
 *
 * A query's lookups of values no document has are most of the work of a
 * query for new content (a spam check, a crawler's "seen it?"): each searches
 * the postings B-tree to its leaf only to miss. The filter (core/ixfilter.c)
 * says "certainly absent" for them from memory. It must never say so of a
 * value that is a key: it starts from every key of the postings of one
 * snapshot, covering the documents up to the last one of that snapshot, and a
 * query whose snapshot has later documents adds their sketch values first
 * (documents are only ever added, with increasing ids, each with all its
 * postings in the transaction that adds it). */

/* the id after the last document of t, 0 for none; -1 with *rc on an error */
static int64_t docs_end(MDB_txn *t, sh_index *ix, int *rc)
{
    MDB_cursor *c;
    MDB_val k, v;
    int64_t next = 0;
    if ((*rc = mdb_cursor_open(t, ix->db[D_DOCS], &c)) != 0) return -1;
    *rc = mdb_cursor_get(c, &k, &v, MDB_LAST);
    if (*rc == 0 && k.mv_size == 4) next = (int64_t)sh_load_be32(k.mv_data) + 1;
    else if (*rc == 0) *rc = MDB_CORRUPTED;
    if (*rc == MDB_NOTFOUND) *rc = 0;
    mdb_cursor_close(c);
    return *rc ? -1 : next;
}

/* Puts the documents of one key into the cache under construction; on a
 * failure (none expected: it was sized from the same snapshot) the build
 * goes on without a cache. */
static void cache_put(sh_index *ix, sh_ixcache **cache, uint64_t key, const uint32_t *docs, size_t n)
{
    int rc;
    if (!*cache || (rc = sh_ixcache_append(*cache, key, docs, n)) == 0) return;
    snprintf(ix->cache_note, sizeof ix->cache_note, "the postings did not fit the room they were counted for (%s)", strerror(rc));
    sh_ixcache_free(*cache);
    *cache = NULL;
}

static void *filter_build(void *arg)
{
    sh_index *ix = (sh_index *)arg;
    MDB_txn *t = NULL;
    MDB_cursor *c = NULL, *dc = NULL;
    MDB_stat ms, md;
    MDB_val pk, pv, dk, dv;
    int rcp, rcd;
    sh_ixfilter *f = NULL, *recent = NULL, *df = NULL;
    sh_ixcache *cache = NULL;
    int64_t next = 0;
    size_t n = 0, nb = 0, nd = 0, dcap = 0;
    uint64_t batch[256], key = 0;
    uint32_t *docs = NULL;
    int rc;
    if ((rc = mdb_txn_begin(ix->env, NULL, MDB_RDONLY, &t)) != 0 || (rc = mdb_stat(t, ix->db[D_POST], &ms)) != 0) goto fail;
    if (ix->has_delta) {
        if ((rc = mdb_stat(t, ix->db[D_DELTA], &md)) != 0) goto fail;
        /* delta's values, and room for as many more as delta holds before
         * a merge (a quarter of the postings) */
        if (!(df = sh_ixfilter_new(md.ms_entries + ms.ms_entries / 4 + 1))) { rc = ENOMEM; goto fail; }
        ms.ms_entries += md.ms_entries;
    }
    /* sized for the postings (their entries: at least their keys) and a
     * quarter more; past that, false positives grow slowly (~1% at the size,
     * each costing one lookup) */
    if (!(f = sh_ixfilter_new(ms.ms_entries + ms.ms_entries / 4))) { rc = ENOMEM; goto fail; }
    if (ix->cache_max) {
        /* the cache, when the postings fit the bytes allowed: sized for as
         * many keys as entries (the most there can be); what is not used is
         * reserved, not touched. Documents added later are in `recent`, a
         * filter for a quarter as many values as the postings hold
         * (a quarter more documents; past that its false positives grow, each
         * a search of the postings, until a restart builds the cache again). */
        size_t need = sh_ixcache_bytes_for(ms.ms_entries, ms.ms_entries);
        if (need > ix->cache_max)
            snprintf(ix->cache_note, sizeof ix->cache_note, "the postings (%zu entries) would take up to %zu MB, more than the %zu MB allowed",
                     (size_t)ms.ms_entries, need >> 20, ix->cache_max >> 20);
        else if (!(cache = sh_ixcache_new(ms.ms_entries, ms.ms_entries)) || !(recent = sh_ixfilter_new(ms.ms_entries / 4 + 1))) {
            snprintf(ix->cache_note, sizeof ix->cache_note, "out of memory for the postings cache (%zu MB)", need >> 20);
            sh_ixcache_free(cache);
            cache = NULL;
        }
    }
    if ((rc = mdb_cursor_open(t, ix->db[D_POST], &c)) != 0) goto fail;
    if (ix->has_delta && (rc = mdb_cursor_open(t, ix->db[D_DELTA], &dc)) != 0) goto fail;
    /* every key once for the filter; with the cache, every (key, document)
     * entry, a key's documents in increasing order: the two tables walked
     * side by side, a key's documents in the postings before delta's */
    rcp = mdb_cursor_get(c, &pk, &pv, MDB_FIRST);
    rcd = dc ? mdb_cursor_get(dc, &dk, &dv, MDB_FIRST) : MDB_NOTFOUND;
    for (;;) {
        const MDB_val *k, *v;
        int from_p;
        uint64_t x;
        if ((rc = rcp) != 0 && rc != MDB_NOTFOUND) goto fail;
        if ((rc = rcd) != 0 && rc != MDB_NOTFOUND) goto fail;
        if (rcp && rcd) break;
        if ((!rcp && pk.mv_size != 8) || (!rcd && dk.mv_size != 8)) { rc = MDB_CORRUPTED; goto fail; }
        from_p = !rcp && (rcd || memcmp(pk.mv_data, dk.mv_data, 8) <= 0);
        k = from_p ? &pk : &dk;
        v = from_p ? &pv : &dv;
        if (cache && v->mv_size != 4) { rc = MDB_CORRUPTED; goto fail; }
        x = sh_load_be64(k->mv_data);
        if (cache) {
            if (nd && x != key) {
                cache_put(ix, &cache, key, docs, nd);
                nd = 0;
            }
            if (nd == dcap) {
                uint32_t *q = (uint32_t *)realloc(docs, 4 * (dcap = dcap ? 2 * dcap : 64));
                if (!q) { rc = ENOMEM; goto fail; }
                docs = q;
            }
            docs[nd++] = sh_load_be32(v->mv_data);
        }
        if (!cache || nd == 1) {
            /* the key's first entry (a key in both tables comes twice
             * without the cache: the filter does not mind) */
            batch[nb++] = x;
            if (nb == sizeof batch / sizeof *batch) {
                sh_ixfilter_add_many(f, batch, nb);
                nb = 0;
            }
        }
        if (!from_p) sh_ixfilter_add(df, x); /* each of its documents' entries with the cache: the same value again changes nothing */
        key = x;
        if (from_p) rcp = mdb_cursor_get(c, &pk, &pv, cache ? MDB_NEXT : MDB_NEXT_NODUP);
        else rcd = mdb_cursor_get(dc, &dk, &dv, cache ? MDB_NEXT : MDB_NEXT_NODUP);
        if ((++n & 0xffff) == 0 && __atomic_load_n(&ix->filter_stop, __ATOMIC_ACQUIRE)) { rc = ECANCELED; goto fail; }
    }
    sh_ixfilter_add_many(f, batch, nb);
    if (cache && nd) cache_put(ix, &cache, key, docs, nd);
    if (cache && sh_ixcache_finish(cache) != 0) {
        snprintf(ix->cache_note, sizeof ix->cache_note, "out of memory for the postings cache's directory");
        sh_ixcache_free(cache);
        cache = NULL;
    }
    if (!cache) {
        sh_ixfilter_free(recent);
        recent = NULL;
    }
    free(docs);
    docs = NULL;
    mdb_cursor_close(c);
    c = NULL;
    if (dc) mdb_cursor_close(dc);
    dc = NULL;
    if ((next = docs_end(t, ix, &rc)) < 0) goto fail;
    ix->dtxn = mdb_txn_id(t);
    mdb_txn_abort(t);
    pthread_mutex_lock(&ix->filter_mu);
    __atomic_store_n(&ix->filter_next, (uint32_t)next, __ATOMIC_RELEASE);
    ix->cache_next = (uint32_t)next;
    ix->recent = recent;
    ix->dfilter = df;
    __atomic_store_n(&ix->cache, cache, __ATOMIC_RELEASE);
    __atomic_store_n(&ix->filter, f, __ATOMIC_RELEASE); /* last: a query that sees it sees the rest */
    pthread_mutex_unlock(&ix->filter_mu);
    return NULL;
fail:
    if (c) mdb_cursor_close(c);
    if (dc) mdb_cursor_close(dc);
    if (t) mdb_txn_abort(t);
    sh_ixfilter_free(f);
    sh_ixfilter_free(recent);
    sh_ixfilter_free(df);
    sh_ixcache_free(cache);
    free(docs);
    snprintf(ix->filter_err, sizeof ix->filter_err, "%s", rc == ENOMEM ? "out of memory" : rc == ECANCELED ? "stopped" : mdb_strerror(rc));
    return NULL;
}

sh_status sh_index_filter_start(sh_index *ix, size_t cache_max, sh_error *err)
{
    int rc;
    if (ix->filter_started) return SH_OK;
    ix->cache_max = cache_max;
    if ((rc = pthread_mutex_init(&ix->filter_mu, NULL)) != 0) return sh_error_set(err, SH_ENOMEM, 0, "cannot make a mutex");
    if ((rc = pthread_create(&ix->filter_thread, NULL, filter_build, ix)) != 0) {
        pthread_mutex_destroy(&ix->filter_mu);
        return sh_error_set(err, SH_ENOMEM, 0, "%s: cannot start the thread that builds the postings filter: %s", ix->path,
                            strerror(rc));
    }
    ix->filter_started = 1;
    ix->filter_thread_live = 1;
    return SH_OK;
}

/* ---- aids shared by handles ------------------------------------------------------
 *
 * A server's workers are forked from one process: the filter and cache built
 * there before the fork are in every worker's memory once (copy-on-write:
 * the cache is never written again; the filter's pages are copied as the
 * worker's queries add later documents to it). */
struct sh_index_aids {
    sh_ixfilter *filter;
    sh_ixcache *cache;
    sh_ixfilter *dfilter;      /* with dtxn: sh_index's */
    size_t dtxn;
    uint32_t next;             /* the documents they hold: ids below this */
    char path[1024];
};

sh_index_aids *sh_index_aids_take(sh_index *ix, sh_error *err)
{
    sh_index_aids *a;
    if (!ix->filter_started || !ix->filter_thread_live || ix->aids_shared) {
        sh_error_set(err, SH_EINVAL, 0, "%s: no postings filter of this handle's own to take (start one with filter_start)", ix->path);
        return NULL;
    }
    pthread_join(ix->filter_thread, NULL);
    ix->filter_thread_live = 0;
    if (!ix->filter) {
        sh_error_set(err, SH_EIO, 0, "%s: the postings filter was not built: %s", ix->path, ix->filter_err[0] ? ix->filter_err : "?");
        return NULL;
    }
    if (!(a = (sh_index_aids *)calloc(1, sizeof *a))) {
        sh_error_set(err, SH_ENOMEM, 0, "out of memory");
        return NULL;
    }
    pthread_mutex_lock(&ix->filter_mu);
    a->filter = ix->filter;
    a->cache = ix->cache;
    a->dfilter = ix->dfilter;
    a->dtxn = ix->dtxn;
    ix->dfilter = NULL;
    a->next = ix->cache ? ix->cache_next : ix->filter_next;
    /* the filter may hold documents past the cache's (queries brought it up
     * to date): a user of both starts from the cache's */
    snprintf(a->path, sizeof a->path, "%s", ix->path);
    __atomic_store_n(&ix->filter, NULL, __ATOMIC_RELEASE);
    __atomic_store_n(&ix->cache, NULL, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&ix->filter_mu);
    return a;
}

void sh_index_aids_free(sh_index_aids *a)
{
    if (!a) return;
    sh_ixfilter_free(a->filter);
    sh_ixcache_free(a->cache);
    sh_ixfilter_free(a->dfilter);
    free(a);
}

sh_status sh_index_aids_use(sh_index *ix, sh_index_aids *a, sh_error *err)
{
    MDB_txn *t;
    int64_t end;
    int rc;
    if (ix->filter_started) return sh_error_set(err, SH_EINVAL, 0, "%s: this handle has a postings filter already", ix->path);
    if (strcmp(a->path, ix->path) != 0)
        return sh_error_set(err, SH_EINVAL, 0, "%s: the postings filter was built for another index (%s)", ix->path, a->path);
    if ((rc = rbegin(ix, &t)) != 0) return lmdb_err(err, ix, "begin", rc);
    end = docs_end(t, ix, &rc);
    rend(ix, t);
    if (end < 0) return lmdb_err(err, ix, "read", rc);
    /* documents are only ever added: an index with fewer than the aids hold
     * is another one */
    if ((uint32_t)end < a->next)
        return sh_error_set(err, SH_EINVAL, 0, "%s: the postings filter holds %u documents, the index %u: it was built for another index",
                            ix->path, a->next, (uint32_t)end);
    if (a->cache && !(ix->recent = sh_ixfilter_new(sh_ixcache_keys(a->cache) / 4 + 1)))
        return sh_error_set(err, SH_ENOMEM, 0, "out of memory");
    if ((rc = pthread_mutex_init(&ix->filter_mu, NULL)) != 0) {
        sh_ixfilter_free(ix->recent);
        ix->recent = NULL;
        return sh_error_set(err, SH_ENOMEM, 0, "cannot make a mutex");
    }
    ix->aids_shared = 1;
    ix->filter_next = a->next;
    ix->cache_next = a->next;
    ix->cache = a->cache;
    ix->dfilter = a->dfilter;
    ix->dtxn = a->dtxn;
    __atomic_store_n(&ix->filter, a->filter, __ATOMIC_RELEASE);
    ix->filter_started = 1;
    return SH_OK;
}

void sh_index_filter_info(sh_index *ix, sh_index_filter_stats *st)
{
    sh_ixfilter *f = ix->filter_started ? __atomic_load_n(&ix->filter, __ATOMIC_ACQUIRE) : NULL;
    memset(st, 0, sizeof *st);
    st->started = ix->filter_started;
    st->ready = f != NULL;
    if (f) {
        st->bytes = sh_ixfilter_bytes(f);
        st->capacity = sh_ixfilter_capacity(f);
        st->covers = __atomic_load_n(&ix->filter_next, __ATOMIC_ACQUIRE);
    }
    st->tested = __atomic_load_n(&ix->filter_tested, __ATOMIC_RELAXED);
    st->skipped = __atomic_load_n(&ix->filter_skipped, __ATOMIC_RELAXED);
    st->error = ix->filter_err[0] ? ix->filter_err : NULL;
    {
        const sh_ixcache *c = f ? __atomic_load_n(&ix->cache, __ATOMIC_ACQUIRE) : NULL;
        if (c) {
            st->cache_bytes = sh_ixcache_bytes(c) + sh_ixfilter_bytes(ix->recent);
            st->cache_keys = sh_ixcache_keys(c);
            st->cache_covers = ix->cache_next;
        }
        st->cache_found = __atomic_load_n(&ix->cache_found, __ATOMIC_RELAXED);
        st->cache_looked_up = __atomic_load_n(&ix->cache_lmdb, __ATOMIC_RELAXED);
        st->cache_note = ix->cache_note[0] ? ix->cache_note : NULL;
        st->shared = ix->aids_shared;
    }
}

/* What a query of snapshot t may use instead of searching the postings for
 * each value: the filter, brought up to t, and the cache when t has every
 * document it holds. NULL: no filter built yet, another thread is bringing
 * it up to date, or a document would not decode (the lookups then go without
 * it, and a query meets the error itself if it matters). A document adds
 * every value its record holds (a superset of what it posted) to the filter
 * and, past the cache's documents, to `recent`. */
typedef struct {
    const sh_ixfilter *f, *recent;
    const sh_ixfilter *df;     /* delta's values (NULL: search delta for every value) */
    const sh_ixcache *cache;   /* NULL: none, or t has fewer documents than it holds */
    uint32_t cache_next, end;  /* the cache holds documents below cache_next; t's end below end */
} query_aids;

static const query_aids *aids_for(sh_index *ix, MDB_txn *t, query_aids *a)
{
    sh_ixfilter *f;
    MDB_cursor *c;
    MDB_val k, v;
    unsigned char kb[4];
    int64_t end;
    int rc;
    if (!ix->filter_started || !(f = __atomic_load_n(&ix->filter, __ATOMIC_ACQUIRE))) return NULL;
    if ((end = docs_end(t, ix, &rc)) < 0) return NULL;
    a->f = f;
    a->cache = __atomic_load_n(&ix->cache, __ATOMIC_ACQUIRE);
    a->recent = ix->recent;
    a->cache_next = ix->cache_next;
    a->end = (uint32_t)end;
    a->df = ix->dfilter && mdb_txn_id(t) >= ix->dtxn ? ix->dfilter : NULL;
    if (a->cache && (uint32_t)end < a->cache_next) a->cache = NULL; /* an older snapshot (a pinned one) */
    if ((uint32_t)end <= __atomic_load_n(&ix->filter_next, __ATOMIC_ACQUIRE)) return a;
    if (pthread_mutex_trylock(&ix->filter_mu) != 0) return NULL;
    if ((rc = mdb_cursor_open(t, ix->db[D_DOCS], &c)) != 0) { pthread_mutex_unlock(&ix->filter_mu); return NULL; }
    sh_store_be32(kb, ix->filter_next);
    k.mv_size = 4;
    k.mv_data = kb;
    for (rc = mdb_cursor_get(c, &k, &v, MDB_SET_RANGE); rc == 0; rc = mdb_cursor_get(c, &k, &v, MDB_NEXT)) {
        sh_ixdoc d;
        uint32_t id, i;
        if (k.mv_size != 4) { rc = MDB_CORRUPTED; break; }
        id = sh_load_be32(k.mv_data);
        if (id >= (uint64_t)end) break;
        if (sh_ixdoc_decode(v.mv_data, v.mv_size, id, &d, NULL, NULL, NULL) != SH_OK) { rc = MDB_CORRUPTED; break; }
        for (i = 0; i < d.n_values; i++) {
            uint64_t x;
            memcpy(&x, (const char *)v.mv_data + sizeof d + 8 * (size_t)i, 8); /* as sh_ixdoc_sketch reads them */
            sh_ixfilter_add(f, x);
            if (ix->recent) sh_ixfilter_add(ix->recent, x);
            if (ix->dfilter) sh_ixfilter_add(ix->dfilter, x);
        }
    }
    mdb_cursor_close(c);
    if (rc == 0 || rc == MDB_NOTFOUND) __atomic_store_n(&ix->filter_next, (uint32_t)end, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&ix->filter_mu);
    return rc == 0 || rc == MDB_NOTFOUND ? a : NULL;
}

/* Whether snapshot t has delta tables that handle ix, opened without them, cannot read. */
static int delta_appeared(MDB_txn *t, const sh_index *ix)
{
    MDB_val k = { 5, (void *)(uintptr_t)"delta" }, v;
    return !ix->has_delta && mdb_get(t, ix->main_dbi, &k, &v) == 0;
}

/* Room in *cand for n + m ids. */
static int cand_room(uint32_t **cand, size_t *cap, size_t n, size_t m)
{
    size_t nc;
    uint32_t *q;
    if (n + m <= *cap) return 0;
    nc = *cap ? *cap : 1024;
    while (nc < n + m) nc *= 2;
    if (!(q = (uint32_t *)realloc(*cand, nc * 4))) return ENOMEM;
    *cand = q;
    *cap = nc;
    return 0;
}

/* ---- postings and delta ------------------------------------------------------
 * A value's documents are in two tables: `postings`, and `delta`, the
 * postings added since the two were last merged (all of later documents
 * than any in `postings`). An add into an index that has postings puts its
 * own in delta, which is small, instead of into the large table: a sorted
 * walk that inserts into every leaf of a large B-tree copies every leaf
 * (LMDB writes a changed page anew), so a sweep of 100,000 documents onto
 * 1,000,000 wrote 1.9 GB, most of the postings, for 4 million new entries.
 * Into an empty delta they are appended (pages filled, each written once).
 * The commit merges delta into the postings when it has grown past
 * 1/DELTA_MERGE of them (merge_table), so a lookup costs at most two
 * searches and the copies of the large table's leaves are paid once per that
 * much growth (`shingle index merge` does it at once). This is the paper's
 * batch merging of the <shingle, ID> file kept for later, as log-structured
 * indexes do. A later batch at least a quarter of delta's size rewrites
 * delta merged with it (delta_take) rather than insert among its entries.
 *
 * The fingerprint tables (urls, raw, canon) have delta tables too: a sweep's
 * 100,000 random inserts into tables of a million keys split and copied
 * every leaf of the three (134 MB written); a sweep held back to its commit
 * puts its fingerprints into the delta tables instead (fp_flush), and a
 * lookup reads both. With the postings filter, a filter of delta's values
 * (dfilter) spares a query the delta search of values delta does not have. */
#define DELTA_MERGE 4   /* merge when delta holds more than a quarter as many entries as the postings */

/* Look the value kb (8 bytes) up in the postings (pc, NULL: not there) and
 * delta (dc, NULL: none or empty): *in bit 1 if the postings have it, bit 2 if delta has it
 * (each cursor then on it), *cnt its documents in both. */
static int post_lookup(MDB_cursor *pc, MDB_cursor *dc, const unsigned char *kb, int *in, size_t *cnt)
{
    MDB_val k = { 8, (void *)(uintptr_t)kb }, v;
    size_t c;
    int rc = pc ? mdb_cursor_get(pc, &k, &v, MDB_SET_KEY) : MDB_NOTFOUND;
    *in = 0;
    *cnt = 0;
    if (rc == 0) {
        if ((rc = mdb_cursor_count(pc, &c)) != 0) return rc;
        *in = 1;
        *cnt = c;
    } else if (rc != MDB_NOTFOUND) {
        return rc;
    }
    if (!dc) return 0;
    k.mv_size = 8;
    k.mv_data = (void *)(uintptr_t)kb;
    if ((rc = mdb_cursor_get(dc, &k, &v, MDB_SET_KEY)) == MDB_NOTFOUND) return 0;
    if (rc == 0 && (rc = mdb_cursor_count(dc, &c)) == 0) {
        *in |= 2;
        *cnt += c;
    }
    return rc;
}

/* The documents below `below` of the value cursor c is on, appended to
 * (*ids)[*n]. */
static int post_docs(MDB_cursor *c, uint32_t below, uint32_t **ids, size_t *cap, size_t *n)
{
    MDB_val k, v;
    /* a value with one document has no list: MDB_GET_MULTIPLE then leaves
     * v as it was, the current document */
    int rc = mdb_cursor_get(c, &k, &v, MDB_GET_CURRENT);
    if (rc == 0) rc = mdb_cursor_get(c, &k, &v, MDB_GET_MULTIPLE);
    while (rc == 0) {
        size_t j, m = v.mv_size / 4;
        if ((rc = cand_room(ids, cap, *n, m)) != 0) return rc;
        for (j = 0; j < m; j++) {
            uint32_t d = sh_load_be32((const char *)v.mv_data + 4 * j);
            if (d < below) (*ids)[(*n)++] = d;
        }
        rc = mdb_cursor_get(c, &k, &v, MDB_NEXT_MULTIPLE);
    }
    return rc == MDB_NOTFOUND ? 0 : rc;
}

/* Append (key, doc) after everything in the table cursor c is on: the
 * first of a key with MDB_APPEND, the next ones MDB_APPENDDUP; last holds
 * the key appended before (*have: whether there was one). */
static int append_entry(MDB_cursor *c, const unsigned char *key, const unsigned char *doc, unsigned char *last, int *have)
{
    MDB_val k = { 8, (void *)(uintptr_t)key }, d = { 4, (void *)(uintptr_t)doc };
    int same = *have && memcmp(last, key, 8) == 0;
    memcpy(last, key, 8);
    *have = 1;
    return mdb_cursor_put(c, &k, &d, same ? MDB_APPENDDUP : MDB_APPEND);
}

static int candidates_of(MDB_txn *t, sh_index *ix, const query_aids *qa, const sh_sketch *sk, size_t nv, size_t nv_skip,
                         uint32_t below, uint32_t max_df, uint32_t min_shared, uint32_t **cand, size_t *cap, size_t *n_out)
{
    MDB_cursor *cur, *dcur = NULL;
    size_t n = 0, i, skipped = 0, nw, warmed = 0, tested = 0, left_out = 0, found = 0, looked_up = 0;
    size_t most = (nv > nv_skip ? nv : nv_skip) < sk->n ? (nv > nv_skip ? nv : nv_skip) : sk->n;
    const sh_ixfilter *f = qa ? qa->f : NULL;
    const sh_ixcache *cache = qa ? qa->cache : NULL;
    uint64_t warm[64];
    unsigned char keep_here[256], recent_here[256], din_here[256], *keep = NULL, *recent = NULL, *din = NULL;
    const uint32_t *cdocs_here[256], **cdocs = NULL;
    uint32_t ccnt_here[256], *ccnt = NULL;
    void *scratch = NULL;
    int rc;
    if (delta_appeared(t, ix)) return SH_MDB_STALE;
    if (f && most > sizeof keep_here) {
        /* keep, and with the cache its answers and the recent filter's */
        scratch = malloc(most * (cache ? 2 + sizeof *cdocs + sizeof *ccnt : 1));
        if (!scratch) return ENOMEM;
    }
    /* the values the filter says may be there (the others are left out) */
    if (f) {
        keep = scratch ? (unsigned char *)scratch : keep_here;
        tested = most;
        left_out = most - sh_ixfilter_test_many(f, sk->v, most, keep);
    }
    /* with the cache, the documents of each of them it holds, and whether
     * documents added since it was built may have it too (then the postings
     * are searched for that value instead) */
    if (cache) {
        if (scratch) {
            cdocs = (const uint32_t **)((char *)scratch + most);
            ccnt = (uint32_t *)(cdocs + most);
            recent = (unsigned char *)(ccnt + most);
        } else {
            cdocs = cdocs_here;
            ccnt = ccnt_here;
            recent = recent_here;
        }
        sh_ixcache_find_many(cache, sk->v, most, keep, cdocs, ccnt);
        if (qa->recent && qa->end > qa->cache_next) sh_ixfilter_test_many(qa->recent, sk->v, most, recent);
        else memset(recent, 0, most);
    }
    {
        if ((rc = mdb_cursor_open(t, ix->db[D_POST], &cur)) != 0) {
            free(scratch);
            return rc;
        }
        if (ix->has_delta && (rc = mdb_cursor_open(t, ix->db[D_DELTA], &dcur)) != 0) {
            mdb_cursor_close(cur);
            free(scratch);
            return rc;
        }
        /* the values delta may have (the others are searched in the postings alone) */
        if (dcur && qa && qa->df) {
            din = most > sizeof din_here ? (unsigned char *)malloc(most) : din_here;
            if (!din) {
                mdb_cursor_close(cur);
                mdb_cursor_close(dcur);
                free(scratch);
                return ENOMEM;
            }
            sh_ixfilter_test_many(qa->df, sk->v, most, din);
        }
        for (i = 0; i < nv && i < sk->n; i++) {
            unsigned char kb[8];
            size_t cnt = 0;
            int in;
            if (keep && !keep[i]) continue;
            if (cache && !recent[i]) {
                /* the cache holds every document of this value in t */
                const uint32_t *dd = cdocs[i];
                size_t j, m = ccnt[i];
                found++;
                if (!m) continue;
                if (max_df && m > max_df) {
                    skipped++;
                    if (nv_skip > nv) nv = nv_skip;
                    continue;
                }
                if ((rc = cand_room(cand, cap, n, m)) != 0) break;
                for (j = 0; j < m; j++)
                    if (dd[j] < below) (*cand)[n++] = dd[j];
                continue;
            }
            if (!cache && i >= warmed) {
                /* the lookups below, one after another, each wait for memory:
                 * walk the tree for the next 64 of them at once first
                 * (core/ixwarm.c) */
                for (nw = 0; warmed < nv && warmed < sk->n && nw < sizeof warm / sizeof *warm; warmed++)
                    if (!keep || keep[warmed]) warm[nw++] = sk->v[warmed];
                sh_ixwarm(t, dbnames[D_POST], warm, nw, NULL);
            }
            looked_up += cache != NULL;
            sh_store_be64(kb, sk->v[i]);
            if ((rc = post_lookup(cur, din && !din[i] ? NULL : dcur, kb, &in, &cnt)) != 0) break;
            if (!in) continue;
            if (max_df && cnt > max_df) {
                skipped++;
                if (nv_skip > nv) nv = nv_skip;
                continue;
            }
            if ((in & 1) && (rc = post_docs(cur, below, cand, cap, &n)) != 0) break;
            if ((in & 2) && (rc = post_docs(dcur, below, cand, cap, &n)) != 0) break;
        }
    }
    mdb_cursor_close(cur);
    if (dcur) mdb_cursor_close(dcur);
    if (din != din_here) free(din);
    free(scratch);
    if (tested) {
        __atomic_fetch_add(&ix->filter_tested, tested, __ATOMIC_RELAXED);
        __atomic_fetch_add(&ix->filter_skipped, left_out, __ATOMIC_RELAXED);
    }
    if (found) __atomic_fetch_add(&ix->cache_found, found, __ATOMIC_RELAXED);
    if (looked_up) __atomic_fetch_add(&ix->cache_lmdb, looked_up, __ATOMIC_RELAXED);
    if (rc && rc != MDB_NOTFOUND) return rc;
    /* distinct: sort and squeeze, keeping those that share at least
     * min_shared of the values looked up (a bound that holds only when none
     * was skipped as common) */
    if (skipped) min_shared = 1;
    if (n > 1 || min_shared > 1) {
        uint64_t *tmp = (uint64_t *)malloc((n ? n : 1) * 8);
        size_t k = 0, run;
        if (!tmp) return ENOMEM;
        for (i = 0; i < n; i++) tmp[i] = (*cand)[i];
        sh_sort_u64(tmp, n);
        for (i = 0; i < n; i += run) {
            for (run = 1; i + run < n && tmp[i + run] == tmp[i]; run++) {}
            if (run >= min_shared) (*cand)[k++] = (uint32_t)tmp[i];
        }
        n = k;
        free(tmp);
    }
    *n_out = n;
    return 0;
}

/* The first earlier document with this raw (then canonical) fingerprint:
 * section "Identical documents". Returns SH_DUP_NONE when there is none. */
static int identical(MDB_txn *t, sh_index *ix, const sh_index_doc *d, uint32_t *other, int *rc)
{
    unsigned char kb[8];
    sh_store_be64(kb, d->raw_fp);
    if ((*rc = first_dup_both(t, ix, D_RAW, kb, 8, other)) == 0) return SH_DUP_EXACT;
    if (*rc != MDB_NOTFOUND) return SH_DUP_NONE;
    sh_store_be64(kb, d->canon_fp);
    if ((*rc = first_dup_both(t, ix, D_CANON, kb, 8, other)) == 0) return SH_DUP_LEXICAL;
    if (*rc == MDB_NOTFOUND) *rc = 0;
    return SH_DUP_NONE;
}

/* Whether document id is d's URL in this sweep: 1 with *prev = id and *same
 * whether its raw bytes are d's, 0 if not, -1 with *rc on an LMDB error (or
 * an SH_EFORMAT record, which *s then holds). */
static int same_url(MDB_txn *t, sh_index *ix, uint32_t id, uint32_t sweep, const sh_index_doc *d, uint32_t *prev, int *same,
                    int *rc, sh_status *s, sh_error *err)
{
    MDB_val dv;
    sh_ixdoc h;
    const char *url;
    size_t ul;
    if ((*rc = get_doc(t, ix, id, &dv)) != 0) return -1;
    if ((*s = sh_ixdoc_decode(dv.mv_data, dv.mv_size, id, &h, &url, &ul, err)) != SH_OK) return -1;
    if (h.sweep != sweep || ul != d->url_len || memcmp(url, d->url, ul) != 0) return 0;
    *prev = id;
    *same = h.raw_fp == d->raw_fp;
    return 1;
}

/* A document of this sweep with the URL of d: 1 with *prev its id and *same
 * whether its raw bytes are d's, 0 if there is none, -1 with *rc on an LMDB
 * error (or an SH_EFORMAT record, which *s then holds). */
static int url_in_sweep(MDB_txn *t, sh_index *ix, uint32_t sweep, const sh_index_doc *d, uint64_t url_fp, uint32_t *prev,
                        int *same, int *rc, sh_status *s, sh_error *err)
{
    unsigned char kb[8];
    int tb;
    sh_store_be64(kb, url_fp);
    /* the URL's documents in urls, then in delta_urls */
    for (tb = 0; tb < (ix->has_delta ? 2 : 1); tb++) {
        MDB_val k = { 8, kb }, v;
        MDB_cursor *cur;
        if ((*rc = mdb_cursor_open(t, ix->db[tb ? D_DURLS : D_URLS], &cur)) != 0) return -1;
        for (*rc = mdb_cursor_get(cur, &k, &v, MDB_SET_KEY); *rc == 0; *rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT_DUP)) {
            int r = same_url(t, ix, sh_load_be32(v.mv_data), sweep, d, prev, same, rc, s, err);
            if (r != 0) {
                mdb_cursor_close(cur);
                return r;
            }
        }
        mdb_cursor_close(cur);
        if (*rc != MDB_NOTFOUND) return -1;
    }
    *rc = 0;
    return 0;
}

/* ---- a new index's fingerprint tables in memory (dfp) ---------------------- */

static const int fp_table[3] = { D_URLS, D_RAW, D_CANON };

/* The first document of this add with fingerprint fp in table t, or UINT32_MAX. */
static uint32_t fp_first(const sh_index_adder *a, int t, uint64_t fp)
{
    return fp <= 1 ? a->fpsmall[t][fp] : sh_htab_get(&a->fph[t], fp);
}

/* identical() for an add with dfp: the first earlier document with d's raw
 * (then canonical) fingerprint, as the tables' first duplicate gives it. */
static int identical_in_add(const sh_index_adder *a, const sh_index_doc *d, uint32_t *other)
{
    uint32_t x = fp_first(a, 1, d->raw_fp);
    if (x != UINT32_MAX) { *other = x; return SH_DUP_EXACT; }
    x = fp_first(a, 2, d->canon_fp);
    if (x != UINT32_MAX) { *other = x; return SH_DUP_LEXICAL; }
    return SH_DUP_NONE;
}

/* identical() for an add with fp_delta: the tables' documents (earlier than
 * the add's), then the add's; an exact copy before a lexical one. */
static int identical_both(const sh_index_adder *a, const sh_index_doc *d, uint32_t *other, int *rc)
{
    unsigned char kb[8];
    uint32_t x;
    sh_store_be64(kb, d->raw_fp);
    if ((*rc = first_dup_both(a->txn, a->ix, D_RAW, kb, 8, other)) == 0) return SH_DUP_EXACT;
    if (*rc != MDB_NOTFOUND) return SH_DUP_NONE;
    *rc = 0;
    if ((x = fp_first(a, 1, d->raw_fp)) != UINT32_MAX) { *other = x; return SH_DUP_EXACT; }
    sh_store_be64(kb, d->canon_fp);
    if ((*rc = first_dup_both(a->txn, a->ix, D_CANON, kb, 8, other)) == 0) return SH_DUP_LEXICAL;
    if (*rc != MDB_NOTFOUND) return SH_DUP_NONE;
    *rc = 0;
    if ((x = fp_first(a, 2, d->canon_fp)) != UINT32_MAX) { *other = x; return SH_DUP_LEXICAL; }
    return SH_DUP_NONE;
}

/* url_in_sweep() for an add with dfp: the documents of the add with the URL
 * fingerprint, in the order of ids. */
static int url_in_add(sh_index_adder *a, const sh_index_doc *d, uint64_t url_fp, uint32_t *prev, int *same, int *rc,
                      sh_status *s, sh_error *err)
{
    uint32_t id;
    *rc = 0;
    for (id = fp_first(a, 0, url_fp); id != UINT32_MAX; id = a->unext[id - a->fpbase]) {
        int r = same_url(a->txn, a->ix, id, a->sweep, d, prev, same, rc, s, err);
        if (r != 0) return r;
    }
    return 0;
}

/* Note the fingerprints of new document id (the next of the add). */
static sh_status fp_keep(sh_index_adder *a, uint32_t id, uint64_t url_fp, uint64_t raw_fp, uint64_t canon_fp, sh_error *err)
{
    size_t k = id - a->fpbase;
    const uint64_t fp[3] = { url_fp, raw_fp, canon_fp };
    int t;
    if (k != a->nfp) return sh_error_set(err, SH_EINVAL, 0, "document %u out of order", id);
    if (k >= a->fp_cap) {
        size_t nc = a->fp_cap ? a->fp_cap * 2 : 4096;
        uint64_t *f;
        uint32_t *u;
        if (!(f = (uint64_t *)realloc(a->fps, 3 * nc * sizeof *f))) return sh_error_set(err, SH_ENOMEM, 0, "out of memory");
        a->fps = f;
        if (!(u = (uint32_t *)realloc(a->unext, nc * sizeof *u))) return sh_error_set(err, SH_ENOMEM, 0, "out of memory");
        a->unext = u;
        a->fp_cap = nc;
    }
    a->unext[k] = UINT32_MAX;
    for (t = 0; t < 3; t++) {
        uint32_t first = fp_first(a, t, fp[t]);
        a->fps[3 * k + t] = fp[t];
        if (first == UINT32_MAX) {
            if (fp[t] <= 1) a->fpsmall[t][fp[t]] = id;
            else if (sh_htab_put(&a->fph[t], fp[t], id) < 0) return sh_error_set(err, SH_ENOMEM, 0, "out of memory");
        } else if (t == 0) {
            /* another document of this URL fingerprint: at the end of its chain */
            while (a->unext[first - a->fpbase] != UINT32_MAX) first = a->unext[first - a->fpbase];
            a->unext[first - a->fpbase] = id;
        }
    }
    a->nfp++;
    return SH_OK;
}

/* Close the cursors step 1 appends through (before anything else writes those tables). */
static void close_append(sh_index_adder *a)
{
    int j;
    for (j = 0; j < 4; j++)
        if (a->acur[j]) { mdb_cursor_close(a->acur[j]); a->acur[j] = NULL; }
}

/* Put the add's fingerprint records into the tables (empty: a new index),
 * or with fp_delta into the delta tables, sorted by fingerprint, each one's
 * documents in the order of ids: appended into an empty table, else in one
 * sorted walk (the ids are above every earlier one). */
static sh_status fp_flush(sh_index_adder *a, sh_error *err)
{
    unsigned char *recs, *aux;
    size_t n = a->nfp, k;
    int t, rc = 0;
    if (!a->dfp || n == 0) return SH_OK;
    recs = (unsigned char *)malloc(12 * n);
    aux = (unsigned char *)malloc(12 * n);
    if (!recs || !aux) { free(recs); free(aux); return sh_error_set(err, SH_ENOMEM, 0, "out of memory"); }
    for (t = 0; t < 3 && rc == 0; t++) {
        MDB_cursor *cur;
        for (k = 0; k < n; k++) {
            sh_store_be64(recs + 12 * k, a->fps[3 * k + t]);
            sh_store_be32(recs + 12 * k + 8, a->fpbase + (uint32_t)k);
        }
        sh_radix_sort(recs, aux, n, 12, 8); /* stable: the ids stay ascending */
        MDB_dbi db = a->ix->db[a->fp_delta ? delta_of(fp_table[t]) : fp_table[t]];
        MDB_stat ms;
        unsigned char last[8];
        int append, have_last = 0;
        if ((rc = mdb_stat(a->txn, db, &ms)) != 0 || (rc = mdb_cursor_open(a->txn, db, &cur)) != 0) break;
        append = ms.ms_entries == 0;
        for (k = 0; k < n && rc == 0; k++) {
            MDB_val kk = { 8, recs + 12 * k }, d = { 4, recs + 12 * k + 8 };
            rc = append ? append_entry(cur, recs + 12 * k, recs + 12 * k + 8, last, &have_last) : mdb_cursor_put(cur, &kk, &d, 0);
        }
        mdb_cursor_close(cur);
    }
    free(recs);
    free(aux);
    return rc ? lmdb_err(err, a->ix, "add fingerprints", rc) : SH_OK;
}

/* The records of a new index's sweep are kept in memory too, up to
 * DEFER_STORE_MEMORY (about 13 bytes a sketch value past the 8 of the value):
 * its pairs are decided at the commit (defer_flush), and a million documents
 * may have tens of millions of candidate pairs (62 million for 1,000,000
 * bench/gen.c documents), each reading two records; read from LMDB, each read
 * searches the B-tree and the large transaction's dirty and spilled pages. */
#define DEFER_STORE_MEMORY ((size_t)512 << 20)

static sh_status keep_record(sh_index_adder *a, uint32_t id, const void *rec, size_t len, sh_error *err)
{
    size_t k = id - a->dbase;
    if (a->store_full) return SH_OK;
    if (k != a->store_n || a->store_len + len + 8 * (k + 1) > DEFER_STORE_MEMORY) { a->store_full = 1; return SH_OK; }
    if (a->store_len + len > a->store_cap || !a->store_off || (k & (k + 1)) == 0) {
        size_t nc = a->store_cap ? a->store_cap : ((size_t)1 << 20);
        unsigned char *q;
        size_t *o;
        while (nc < a->store_len + len) nc *= 2;
        if (nc != a->store_cap) {
            if (!(q = (unsigned char *)realloc(a->store, nc))) return sh_error_set(err, SH_ENOMEM, 0, "out of memory");
            a->store = q;
            a->store_cap = nc;
        }
        /* offsets grow at powers of two: k + 1 slots */
        if ((k & (k + 1)) == 0) {
            if (!(o = (size_t *)realloc(a->store_off, 2 * (k + 1) * sizeof *o))) return sh_error_set(err, SH_ENOMEM, 0, "out of memory");
            a->store_off = o;
        }
    }
    a->store_off[k] = a->store_len;
    memcpy(a->store + a->store_len, rec, len);
    a->store_len += len;
    a->store_n++;
    return SH_OK;
}

/* The record of document id (its header and sketch values): kept in memory
 * by this add (keep_record, made here from the sketch given) or read from
 * the docs table and checked. */
static sh_status record_of(sh_index_adder *a, uint32_t id, sh_ixdoc *h, const void **rec, int *rc, sh_error *err)
{
    MDB_val v;
    *rc = 0;
    if (id >= a->dbase && id - a->dbase < a->store_n) {
        *rec = a->store + a->store_off[id - a->dbase];
        memcpy(h, *rec, sizeof *h);
        return SH_OK;
    }
    if ((*rc = get_doc(a->txn, a->ix, id, &v)) != 0) return SH_OK;
    *rec = v.mv_data;
    return doc_head(a->ix, id, &v, h, err);
}

/* ---- pairs from counts -------------------------------------------------------
 * A candidate pair of a new index is found by the values its two documents
 * share, and the walk that finds it can count them: for MOD sketches (one
 * modulus or several of one chain) and full sets, the count is all the
 * estimator takes from the two sketches besides their sizes at the common
 * modulus (core/pairest.h, as phase 4 of the pipeline uses it), so such a
 * pair is decided from the count and the documents' entries without
 * reading either sketch; the same estimate, score for score
 * (spec/index_counts_spec.lua compares the two at every pair, every kind and
 * policy). Other kinds (MIN_s, CLASS), a sketch whose values are not
 * ascending multiples of its modulus (no entry), and pairs not counted (the
 * batch path) are estimated from their sketches. */

/* A new document's entry (pairest.h), where its counts of multiples start,
 * and its count of values shared with the document whose pairs are being
 * counted (decide_in_memory): the one random read of most pairs. */
typedef struct pentry {
    sh_pairest_doc d;
    uint32_t cm_at, cnt;
} pentry;

/* Room for the entries of documents up to k and `more` counts of multiples. */
static sh_status grow_entries(sh_index_adder *a, size_t k, size_t more, sh_error *err)
{
    if (k >= a->pdoc_cap) {
        size_t nc = a->pdoc_cap ? a->pdoc_cap * 2 : 4096;
        pentry *d;
        while (nc <= k) nc *= 2;
        if (!(d = (pentry *)realloc(a->pent, nc * sizeof *d))) return sh_error_set(err, SH_ENOMEM, 0, "out of memory");
        a->pent = d;
        a->pdoc_cap = nc;
    }
    if (a->npcm + more > a->pcm_cap) {
        size_t nc = a->pcm_cap ? a->pcm_cap * 2 : 1024;
        uint32_t *c;
        while (nc < a->npcm + more) nc *= 2;
        if (nc > UINT32_MAX || !(c = (uint32_t *)realloc(a->pcm, nc * sizeof *c))) return sh_error_set(err, SH_ENOMEM, 0, "out of memory");
        a->pcm = c;
        a->pcm_cap = nc;
    }
    return SH_OK;
}

/* The entry of new document id (its sketch sk, steps down the index's
 * chain of moduli): made for every document of a DEFER_APPEND add, in the
 * order of ids; n = 0 when its pairs must be estimated from the sketches. */
static sh_status keep_entry(sh_index_adder *a, uint32_t id, const sh_sketch *sk, uint32_t steps, sh_error *err)
{
    size_t k = id - a->dbase;
    sh_status s;
    if (a->p.kind != SH_SKETCH_MOD) steps = 0;
    if (k != a->npdoc || steps > 255) return sh_error_set(err, SH_EINVAL, 0, "document %u out of order", id);
    if ((s = grow_entries(a, k, steps, err)) != SH_OK) return s;
    /* the moduli of the chain down to this document's */
    while (a->nmods < steps) {
        a->mods[a->nmods + 1] = sh_mod_step(a->mods[a->nmods], 1);
        a->nmods++;
    }
    a->pent[k].cm_at = (uint32_t)a->npcm;
    a->pent[k].cnt = 0;
    if (sk->n <= UINT32_MAX && sh_pairest_doc_of(&a->pent[k].d, a->pcm + a->npcm, sk->v, (uint32_t)sk->n, steps, a->mods))
        a->npcm += steps;
    else
        memset(&a->pent[k].d, 0, sizeof a->pent[k].d);
    a->npdoc++;
    return SH_OK;
}

/* The entry of document id, with its counts of multiples, or NULL for none. */
static const sh_pairest_doc *entry_of(const sh_index_adder *a, uint32_t id, const uint32_t **cm)
{
    size_t k;
    if (!a->counts || id < a->dbase || (k = id - a->dbase) >= a->npdoc || !a->pent[k].d.n) return NULL;
    *cm = a->pcm + a->pent[k].cm_at;
    return &a->pent[k].d;
}

/* Whether the candidate pair (new document id, earlier document cid),
 * sharing `shared` sketch values (0: not counted), passes the policy: from
 * the count when both documents have entries, else on the estimate of their
 * sketches (*sk: id's; when NULL, read into a->sa). */
static int pair_passes(sh_index_adder *a, const sh_sketch **sk, uint32_t id, uint32_t cid, uint32_t shared, int *pass,
                       sh_status *s, sh_error *err)
{
    sh_estimate e, f;
    sh_ixdoc h;
    const sh_pairest_doc *x, *y;
    const uint32_t *cx = NULL, *cy = NULL;
    const void *rec = NULL;
    int rc, counted = 0;
    a->st.candidates++;
    *pass = 0;
    if (shared && (x = entry_of(a, id, &cx)) != NULL && (y = entry_of(a, cid, &cy)) != NULL) {
        sh_pairest_estimate_of(x, cx, y, cy, shared, &e);
        a->st.from_counts++;
        counted = 1;
        if (!(a->test & SH_INDEX_CHECK_COUNTS)) {
            *pass = sh_policy_passes(a->policy, a->threshold, &e);
            return 0;
        }
    }
    if (!*sk) {
        if ((*s = stored_sketch(a, id, err)) != SH_OK) return 0;
        *sk = a->sa;
    }
    if ((*s = record_of(a, cid, &h, &rec, &rc, err)) != SH_OK || rc) return rc;
    if ((*s = grow_scratch(&a->sb, &a->sb_cap, h.n_values, err)) != SH_OK) return 0;
    sh_ixdoc_sketch(&a->p, &h, rec, a->sb); /* the record was checked by record_of */
    if ((*s = sh_sketch_estimate(*sk, a->sb, &f, err)) != SH_OK) return 0;
    if (counted && (e.both != f.both || e.sample != f.sample || e.resemblance != f.resemblance || e.contain_ab != f.contain_ab ||
                    e.contain_ba != f.contain_ba)) {
        *s = sh_error_set(err, SH_EINVAL, 0, "%s: documents %u and %u: the estimate from their %u shared values "
                          "(%.17g, %.17g, %.17g) is not their sketches' (%.17g, %.17g, %.17g)", a->ix->path, id + 1, cid + 1,
                          shared, e.resemblance, e.contain_ab, e.contain_ba, f.resemblance, f.contain_ab, f.contain_ba);
        return 0;
    }
    *pass = sh_policy_passes(a->policy, a->threshold, &f);
    return 0;
}

/* Decide one candidate pair (new document id, earlier document cid) on the
 * estimates of their sketches and merge their clusters when it passes. */
static int link_candidate(sh_index_adder *a, const sh_sketch *sk, uint32_t id, uint32_t cid, sh_status *s, sh_error *err)
{
    int pass, rc = pair_passes(a, &sk, id, cid, 0, &pass, s, err);
    if (rc || *s != SH_OK || !pass) return rc;
    a->st.linked++;
    return merge(a, cid, id);
}

/* Room for n more pairs; 0 when the batch would hold more than MAX_PAIRS. */
#define MAX_PAIRS ((size_t)1 << 25)   /* 256 MiB of pairs; past it, one document at a time */
static int room_for_pairs(sh_index_adder *a, size_t np, size_t n)
{
    size_t nc;
    uint64_t *q;
    if (np + n <= a->pairs_cap) return 1;
    if (np + n > MAX_PAIRS) return 0;
    nc = a->pairs_cap ? a->pairs_cap : 4096;
    while (nc < np + n) nc *= 2;
    q = (uint64_t *)realloc(a->pairs, nc * sizeof *q);
    if (!q) return 0;
    a->pairs = q;
    a->pairs_cap = nc;
    return 1;
}

/* Merge table db's delta table (delta_of) into it when the delta holds more
 * than 1/DELTA_MERGE as many entries (or as the test flags say), or always
 * when force, in the add's transaction: each of its entries put among the
 * documents the table has for its key (for the postings, after them: delta's
 * are later ones), appended when the table is empty, then the delta emptied.
 * The sorted walk copies the table's leaves once for all the adds since the
 * last merge (see "postings and delta"). *moved (may be NULL): the entries
 * moved. */
static int merge_table(sh_index_adder *a, int db, int force, uint64_t *moved)
{
    sh_index *ix = a->ix;
    int ddb = delta_of(db);
    MDB_stat ms, md;
    MDB_cursor *dc = NULL, *pc = NULL;
    MDB_val k, v;
    unsigned char last[8];
    int rc, append, have_last = 0;
    if (moved) *moved = 0;
    if ((rc = mdb_stat(a->txn, ix->db[db], &ms)) != 0 || (rc = mdb_stat(a->txn, ix->db[ddb], &md)) != 0) return rc;
    if (md.ms_entries == 0 || (!force && (a->test & SH_INDEX_MERGE_NEVER))) return 0;
    if (!force && !(a->test & SH_INDEX_MERGE_ALWAYS) && md.ms_entries * DELTA_MERGE <= ms.ms_entries) return 0;
    append = ms.ms_entries == 0;
    if ((rc = mdb_cursor_open(a->txn, ix->db[ddb], &dc)) != 0) return rc;
    if ((rc = mdb_cursor_open(a->txn, ix->db[db], &pc)) != 0) { mdb_cursor_close(dc); return rc; }
    for (rc = mdb_cursor_get(dc, &k, &v, MDB_FIRST); rc == 0; rc = mdb_cursor_get(dc, &k, &v, MDB_NEXT)) {
        if (k.mv_size != 8 || v.mv_size != 4) { rc = MDB_CORRUPTED; break; }
        rc = append ? append_entry(pc, (const unsigned char *)k.mv_data, (const unsigned char *)v.mv_data, last, &have_last)
                    : mdb_cursor_put(pc, &k, &v, 0);
        if (rc) break;
    }
    mdb_cursor_close(pc);
    mdb_cursor_close(dc);
    if (rc != MDB_NOTFOUND) return rc;
    if ((rc = mdb_drop(a->txn, ix->db[ddb], 0)) != 0) return rc;
    if (moved) *moved = md.ms_entries;
    if (db == D_POST) {
        a->st.postings_merged += md.ms_entries;
        a->post_written = 1;
    }
    return 0;
}

/* ---- the postings searched ahead -------------------------------------------
 * A large batch into delta searches the postings for each of its values and
 * appends it to delta, one after the other on one thread. The postings are
 * the committed ones while the transaction has not written them (only delta),
 * so a thread with a read transaction of its own searches them ahead of the
 * walk, block by block, and the walk reads its answers while it puts: the
 * searches and the puts run side by side on two cores. */
#define PRELOOK_MIN 65536   /* records: fewer are searched by the walk itself */
#define PRELOOK_BLOCK 4096  /* values whose answers are handed over at a time */

typedef struct {
    sh_index *ix;
    const unsigned char *recs;
    size_t m;
    uint32_t max_df;
    uint32_t *cnt;          /* per value (group of recs), in order: its documents in the postings */
    uint32_t *off;          /* where they start in its block's list, UINT32_MAX when not gathered (too common) */
    uint32_t **blocks;      /* per block of `block` values: their documents, one value after another */
    size_t block;           /* PRELOOK_BLOCK, or 7 for a test */
    size_t done;            /* values answered (under mu) */
    int rc, finished, stop; /* the thread's failure, its end, the walk's request to stop (under mu) */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    pthread_t th;
} prelook;

static void *prelook_run(void *arg)
{
    prelook *p = (prelook *)arg;
    MDB_txn *t = NULL;
    MDB_cursor *c = NULL;
    uint32_t *docs = NULL;
    size_t j0 = 0, g = 0, nd = 0, cap = 0;
    int rc = mdb_txn_begin(p->ix->env, NULL, MDB_RDONLY, &t), stop = 0;
    if (rc == 0) rc = mdb_cursor_open(t, p->ix->db[D_POST], &c);
    while (rc == 0 && j0 < p->m && !stop) {
        size_t j1 = j0 + 1, cnt = 0;
        int in;
        while (j1 < p->m && memcmp(p->recs + 12 * j1, p->recs + 12 * j0, 8) == 0) j1++;
        rc = post_lookup(c, NULL, p->recs + 12 * j0, &in, &cnt);
        p->cnt[g] = (uint32_t)(cnt > UINT32_MAX ? UINT32_MAX : cnt);
        p->off[g] = UINT32_MAX;
        if (rc == 0 && cnt && (!p->max_df || cnt + (j1 - j0) <= p->max_df)) {
            p->off[g] = (uint32_t)nd;
            rc = post_docs(c, UINT32_MAX, &docs, &cap, &nd);
        }
        g++;
        j0 = j1;
        if (rc == 0 && (g % p->block == 0 || j0 >= p->m)) {
            pthread_mutex_lock(&p->mu);
            p->blocks[(g - 1) / p->block] = docs;
            p->done = g;
            stop = p->stop;
            pthread_cond_signal(&p->cv);
            pthread_mutex_unlock(&p->mu);
            docs = NULL;
            nd = cap = 0;
        }
    }
    free(docs);
    if (c) mdb_cursor_close(c);
    if (t) mdb_txn_abort(t);
    pthread_mutex_lock(&p->mu);
    p->rc = rc;
    p->finished = 1;
    pthread_cond_signal(&p->cv);
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

/* Start searching the postings for recs' values ahead (0), or say why not. */
static int prelook_start(prelook *p, sh_index *ix, const unsigned char *recs, size_t m, uint32_t max_df, size_t block)
{
    memset(p, 0, sizeof *p);
    p->block = block;
    p->ix = ix;
    p->recs = recs;
    p->m = m;
    p->max_df = max_df;
    p->cnt = (uint32_t *)malloc(m * sizeof *p->cnt);
    p->off = (uint32_t *)malloc(m * sizeof *p->off);
    p->blocks = (uint32_t **)calloc(m / block + 1, sizeof *p->blocks);
    if (!p->cnt || !p->off || !p->blocks) goto fail;
    if (pthread_mutex_init(&p->mu, NULL) != 0) goto fail;
    if (pthread_cond_init(&p->cv, NULL) != 0) { pthread_mutex_destroy(&p->mu); goto fail; }
    if (pthread_create(&p->th, NULL, prelook_run, p) != 0) {
        pthread_cond_destroy(&p->cv);
        pthread_mutex_destroy(&p->mu);
        goto fail;
    }
    return 0;
fail:
    free(p->cnt);
    free(p->off);
    free(p->blocks);
    return ENOMEM;
}

/* Wait for value g's answer: 0, or the thread's failure. */
static int prelook_wait(prelook *p, size_t g)
{
    int rc = 0;
    pthread_mutex_lock(&p->mu);
    while (p->done <= g && !p->finished) pthread_cond_wait(&p->cv, &p->mu);
    if (p->done <= g) rc = p->rc ? p->rc : MDB_CORRUPTED;
    pthread_mutex_unlock(&p->mu);
    return rc;
}

static void prelook_end(prelook *p)
{
    size_t b;
    pthread_mutex_lock(&p->mu);
    p->stop = 1;
    pthread_mutex_unlock(&p->mu);
    pthread_join(p->th, NULL);
    pthread_cond_destroy(&p->cv);
    pthread_mutex_destroy(&p->mu);
    for (b = 0; b <= p->m / p->block; b++) free(p->blocks[b]);
    free(p->blocks);
    free(p->cnt);
    free(p->off);
}

/* delta's entries, read whole into *out (BE64 value, BE32 doc, in order),
 * and delta emptied: a batch at least a quarter of delta's size then
 * rewrites it, the old entries and the batch's merged and appended, instead
 * of inserting among them (each leaf copied and split). */
static int delta_take(sh_index_adder *a, unsigned char **out, size_t *n)
{
    MDB_cursor *c;
    MDB_val k, v;
    MDB_stat ds;
    size_t m = 0;
    unsigned char *r;
    int rc;
    *out = NULL;
    *n = 0;
    if ((rc = mdb_stat(a->txn, a->ix->db[D_DELTA], &ds)) != 0) return rc;
    if (!(r = (unsigned char *)malloc(12 * ds.ms_entries + 12))) return ENOMEM;
    if ((rc = mdb_cursor_open(a->txn, a->ix->db[D_DELTA], &c)) != 0) { free(r); return rc; }
    for (rc = mdb_cursor_get(c, &k, &v, MDB_FIRST); rc == 0; rc = mdb_cursor_get(c, &k, &v, MDB_NEXT)) {
        if (k.mv_size != 8 || v.mv_size != 4 || m == ds.ms_entries) { rc = MDB_CORRUPTED; break; }
        memcpy(r + 12 * m, k.mv_data, 8);
        memcpy(r + 12 * m + 8, v.mv_data, 4);
        m++;
    }
    mdb_cursor_close(c);
    if (rc == MDB_NOTFOUND) rc = mdb_drop(a->txn, a->ix->db[D_DELTA], 0);
    if (rc) { free(r); return rc; }
    *out = r;
    *n = m;
    return 0;
}

/* Put the batch's postings recs (m records of value BE64, doc BE32, sorted)
 * through one cursor, and gather in a->pairs every pair (new document <<
 * 32 | earlier document) of a searching new document (searches[id - base])
 * with a document that had the value before it, for values held by at most
 * max_df documents in all: sorted and distinct, the pairs candidates_of
 * would give document by document ("On the fly resemblance"), in the same
 * order. *np = SIZE_MAX when they would not fit in memory (the caller then
 * searches one document at a time). */
static int post_batch(sh_index_adder *a, const unsigned char *recs, size_t m, uint32_t base, const unsigned char *searches,
                      size_t *np)
{
    MDB_cursor *pc, *dc, *to;
    MDB_stat ps, ds;
    prelook pl;
    uint32_t *old = NULL;
    unsigned char *drecs = NULL, last[8];
    size_t old_cap = 0, j0 = 0, n = 0, g = 0, nd = 0, di = 0;
    int rc, overflow = 0, into_post = 0, append, pre = 0, rewrite = 0, have_last = 0;
    /* the postings go into delta (see "postings and delta"), unless they
     * would grow it past what the commit merges: then delta is merged first
     * (its documents stay older than the postings') and they go into the
     * postings, so the add does not write them twice. Into an empty table
     * each goes after the last, since recs are in (value, doc) order. */
    if ((rc = mdb_stat(a->txn, a->ix->db[D_POST], &ps)) != 0 || (rc = mdb_stat(a->txn, a->ix->db[D_DELTA], &ds)) != 0) return rc;
    if (!(a->test & SH_INDEX_MERGE_NEVER) && (ds.ms_entries + m) * DELTA_MERGE > ps.ms_entries) {
        if ((rc = merge_table(a, D_POST, 1, NULL)) != 0) return rc;
        if ((rc = mdb_stat(a->txn, a->ix->db[D_POST], &ps)) != 0) return rc;
        ds.ms_entries = 0;
        into_post = 1;
    }
    if (!into_post && ds.ms_entries && m * 4 >= ds.ms_entries) {
        /* delta rewritten: its entries merged with the batch's (all later) */
        if ((rc = delta_take(a, &drecs, &nd)) != 0) return rc;
        ds.ms_entries = 0;
        rewrite = 1;
    }
    append = (into_post ? ps.ms_entries : ds.ms_entries) == 0;
    if ((rc = mdb_cursor_open(a->txn, a->ix->db[D_POST], &pc)) != 0) { free(drecs); return rc; }
    if ((rc = mdb_cursor_open(a->txn, a->ix->db[D_DELTA], &dc)) != 0) { mdb_cursor_close(pc); free(drecs); return rc; }
    to = into_post ? pc : dc;
    /* the postings searched ahead on another core, when they are the
     * committed ones and the batch is large */
    if (!into_post && !a->post_written && (a->test & SH_INDEX_PRELOOK ? m > 0 : m >= PRELOOK_MIN && sysconf(_SC_NPROCESSORS_ONLN) > 1))
        pre = prelook_start(&pl, a->ix, recs, m, a->max_df, a->test & SH_INDEX_PRELOOK ? 7 : PRELOOK_BLOCK) == 0;
    while (j0 < m && rc == 0) {
        size_t j1 = j0 + 1, no = 0, cnt = 0, j, x;
        int in, take;
        while (j1 < m && memcmp(recs + 12 * j1, recs + 12 * j0, 8) == 0) j1++;
        /* the documents that had this value before the batch */
        if (pre && (rc = prelook_wait(&pl, g)) != 0) break;
        if ((rc = post_lookup(pre ? NULL : pc, ds.ms_entries ? dc : NULL, recs + 12 * j0, &in, &cnt)) != 0) break;
        if (pre && pl.cnt[g]) {
            in |= 1;
            cnt += pl.cnt[g];
        }
        take = !overflow && (!a->max_df || cnt + (j1 - j0) <= a->max_df);
        if (take && (in & 1) && pre) {
            /* gathered by the thread whenever take can be true */
            if (pl.off[g] == UINT32_MAX || (rc = cand_room(&old, &old_cap, 0, pl.cnt[g])) != 0) {
                if (!rc) rc = MDB_CORRUPTED;
                break;
            }
            memcpy(old, pl.blocks[g / pl.block] + pl.off[g], 4 * (size_t)pl.cnt[g]);
            no = pl.cnt[g];
        } else if (take && (in & 1)) {
            rc = post_docs(pc, UINT32_MAX, &old, &old_cap, &no);
        }
        if (take && rc == 0 && (in & 2)) rc = post_docs(dc, UINT32_MAX, &old, &old_cap, &no);
        if (rewrite && rc == 0) {
            /* the old delta's entries up to this value go back first; those
             * of this value are its holders in delta */
            size_t d0;
            while (di < nd && memcmp(drecs + 12 * di, recs + 12 * j0, 8) < 0 && rc == 0)
                rc = append_entry(dc, drecs + 12 * di, drecs + 12 * di + 8, last, &have_last), di++;
            for (d0 = di; di < nd && memcmp(drecs + 12 * di, recs + 12 * j0, 8) == 0 && rc == 0; di++)
                rc = append_entry(dc, drecs + 12 * di, drecs + 12 * di + 8, last, &have_last);
            cnt += di - d0;
            take = !overflow && (!a->max_df || cnt + (j1 - j0) <= a->max_df);
            if (take && di > d0 && rc == 0 && (rc = cand_room(&old, &old_cap, no, di - d0)) == 0)
                for (x = d0; x < di; x++) old[no++] = sh_load_be32(drecs + 12 * x + 8);
        }
        g++;
        if (rc) break;
        /* pairs: each searching new document with the earlier holders */
        if (take) {
            for (x = j0; x < j1 && !overflow; x++) {
                uint32_t id = sh_load_be32(recs + 12 * x + 8);
                size_t earlier = no + (x - j0);
                if (!searches[id - base] || earlier == 0) continue;
                if (!room_for_pairs(a, n, earlier)) { overflow = 1; break; }
                for (j = 0; j < no; j++) a->pairs[n++] = (uint64_t)id << 32 | old[j];
                for (j = j0; j < x; j++) a->pairs[n++] = (uint64_t)id << 32 | sh_load_be32(recs + 12 * j + 8);
            }
        }
        /* then the batch's own postings of this value (ids above every earlier one) */
        for (x = j0; x < j1 && rc == 0; x++) {
            MDB_val kk = { 8, (void *)(uintptr_t)(recs + 12 * j0) }, d = { 4, (void *)(uintptr_t)(recs + 12 * x + 8) };
            rc = append ? append_entry(to, recs + 12 * j0, recs + 12 * x + 8, last, &have_last) : mdb_cursor_put(to, &kk, &d, 0);
        }
        j0 = j1;
    }
    /* the rest of the old delta, after the batch's last value */
    for (; rewrite && rc == 0 && di < nd; di++) rc = append_entry(dc, drecs + 12 * di, drecs + 12 * di + 8, last, &have_last);
    free(drecs);
    if (pre) prelook_end(&pl);
    if (into_post) a->post_written = 1;
    mdb_cursor_close(pc);
    mdb_cursor_close(dc);
    free(old);
    if (rc) return rc;
    if (overflow) { *np = SIZE_MAX; return 0; }
    if (n > 1) {
        size_t i, k = 0;
        sh_sort_u64(a->pairs, n);
        for (i = 0; i < n; i++) if (i == 0 || a->pairs[i] != a->pairs[i - 1]) a->pairs[k++] = a->pairs[i];
        n = k;
    }
    *np = n;
    return 0;
}

/* ---- deferred postings ------------------------------------------------------
 * Into an index without postings (the first sweep of a new index, the bulk
 * of most indexes), the sweep's postings are not put batch by batch (each
 * batch then dirties pages all over the postings' B-tree, and one large
 * transaction outgrows LMDB's dirty-page room and spills and re-reads them)
 * but kept in an external sort and put at the commit, in key order, each
 * appended after the last (MDB_APPEND: no search, pages filled, each
 * written once). The candidate pairs are gathered in the same walk, as
 * post_batch gathers a batch's, and decided in the same order (by new
 * document, then earlier document), after every record of the sweep is in:
 * a decision reads only the records and clusters of the pair's two
 * documents, which do not depend on the documents after them, so the index
 * is the one batch-by-batch adds make (spec/index_bulk_spec.lua). */

/* Into an index with postings, they wait the same way, in memory, until a
 * chunk of chunk_values() is there (or the commit), and go in through
 * post_batch: the batch path with batches of many thousand documents
 * whatever the caller's, whose sorted walk finds many keys on the leaf it is
 * on; the first chunk of an add goes into an empty delta, appended (see
 * "postings and delta"). The figures below are from before delta, when
 * every chunk went into the postings: a chunk's walk dirties most leaves of a large index, more than LMDB
 * keeps dirty in memory (MDB_IDL_UM_MAX pages), so it spills them to the
 * file as it goes; a later chunk's walk finds them spilled and reads them
 * back. One walk for the whole sweep is the cheapest: 100,000 documents onto
 * 1,000,000 took 19.0 CPU s in chunks of 262,144 values, 12.1 in two chunks
 * and 9.5 in one (data.mdb the same size), so a chunk is as large as memory
 * allows: DEFER_CHUNK_VALUES, 96 MiB of records and as much to sort them. */
#define DEFER_CHUNK_VALUES ((size_t)1 << 23)
/* A chunk is at most a quarter of the postings already there: sorted
 * inserts split a leaf at its middle and go on in its right half, so many
 * new keys between few old ones leave half-full pages (an add of 3,000
 * documents onto 300 grew data.mdb past what batches of 512 took); an index
 * with fewer than 16 * DEFER_CHUNK_MIN postings keeps the batches. */
#define DEFER_CHUNK_MIN ((size_t)1 << 14)

/* How many values a chunk holds into this index, 0 for none (the batches). */
static size_t chunk_values(const sh_index_adder *a)
{
    size_t c = a->post_entries / 4;
    if (a->chunk) return a->chunk; /* set for a test */
    if (a->post_entries / 16 < DEFER_CHUNK_MIN) return 0;
    return c > DEFER_CHUNK_VALUES ? DEFER_CHUNK_VALUES : c;
}

#define DEFER_POST_MEMORY ((size_t)256 << 20)  /* the sweep's <value, doc> records, past it in run files */
#define DEFER_PAIR_MEMORY ((size_t)128 << 20)  /* its candidate pairs */
#define DEFER_READ 4096                         /* records read or added at a time */

/* Keep a batch's postings (and each new document's copy status) for
 * defer_flush: sorted by value alone, since the sort is stable and the
 * documents come in the order of ids (a document's values are distinct). */
static sh_status defer_batch(sh_index_adder *a, const sh_index_doc *docs, size_t n, const uint32_t *ids,
                             const unsigned char *dups, const uint32_t *other, sh_error *err)
{
    unsigned char rec[12 * 256];
    size_t i, j, m = 0;
    sh_status s;
    if (a->deferred == DEFER_APPEND && !a->dpost && (s = sh_extsort_open(&a->dpost, 12, 8, DEFER_POST_MEMORY, a->ix->path, NULL, err)) != SH_OK)
        return s;
    for (i = 0; i < n; i++) {
        size_t k;
        if (dups[i] == SKIPPED) continue;
        k = ids[i] - a->dbase; /* ids of an add are consecutive from dbase */
        if (k >= a->dcap) {
            size_t nc = a->dcap ? a->dcap * 2 : 4096;
            unsigned char *ds;
            uint32_t *dn;
            while (nc <= k) nc *= 2;
            if (!(ds = (unsigned char *)realloc(a->dstat, nc))) return sh_error_set(err, SH_ENOMEM, 0, "out of memory");
            a->dstat = ds;
            if (!(dn = (uint32_t *)realloc(a->dother, nc * sizeof *dn))) return sh_error_set(err, SH_ENOMEM, 0, "out of memory");
            a->dother = dn;
            a->dcap = nc;
        }
        a->dstat[k] = dups[i];
        a->dother[k] = dups[i] == SH_DUP_NONE ? 0 : other[i];
        if (a->deferred == DEFER_CHUNK) {
            size_t need = a->ncrecs + docs[i].sketch->n;
            if (need > a->crecs_cap) {
                size_t nc = a->crecs_cap ? a->crecs_cap : 4096;
                unsigned char *q;
                while (nc < need) nc *= 2;
                if (!(q = (unsigned char *)realloc(a->crecs, 12 * nc))) return sh_error_set(err, SH_ENOMEM, 0, "out of memory");
                a->crecs = q;
                a->crecs_cap = nc;
            }
            for (j = 0; j < docs[i].sketch->n; j++) {
                sh_store_be64(a->crecs + 12 * a->ncrecs, docs[i].sketch->v[j]);
                sh_store_be32(a->crecs + 12 * a->ncrecs + 8, ids[i]);
                a->ncrecs++;
            }
            continue;
        }
        for (j = 0; j < docs[i].sketch->n; j++) {
            sh_store_be64(rec + 12 * m, docs[i].sketch->v[j]);
            sh_store_be32(rec + 12 * m + 8, ids[i]);
            if (++m == 256) {
                if ((s = sh_extsort_add(a->dpost, rec, m, err)) != SH_OK) return s;
                m = 0;
            }
        }
    }
    return m ? sh_extsort_add(a->dpost, rec, m, err) : SH_OK;
}

void sh_index_set_chunk(sh_index_adder *a, size_t values)
{
    a->chunk = values;
    if (a->deferred == 0 && values && a->post_entries && a->max_df == 0 && a->next == a->dbase) {
        a->deferred = DEFER_CHUNK;
        choose_dfp(a);
    }
}

void sh_index_set_test(sh_index_adder *a, int flags)
{
    a->test = flags;
    if (flags & SH_INDEX_NO_COUNTS) a->counts = 0;
    if (flags & SH_INDEX_PAIRS_SORTED) a->inmem = 0;
    if (flags & SH_INDEX_PAIRS_SMALL) a->inmem_max = 4096;
}

/* A new document's sketch as stored, into a->sa. */
static sh_status stored_sketch(sh_index_adder *a, uint32_t id, sh_error *err)
{
    sh_ixdoc h;
    const void *rec = NULL;
    sh_status s;
    int rc;
    if ((s = record_of(a, id, &h, &rec, &rc, err)) != SH_OK) return s;
    if (rc) return lmdb_err(err, a->ix, "read document", rc);
    if ((s = grow_scratch(&a->sa, &a->sa_cap, h.n_values, err)) != SH_OK) return s;
    sh_ixdoc_sketch(&a->p, &h, rec, a->sa); /* the record was checked by record_of */
    return SH_OK;
}

/* DEFER_CHUNK: put the chunk's postings through post_batch and decide its
 * documents' pairs, as sh_index_add's steps 2 and 3 do for a batch. */
static sh_status chunk_flush(sh_index_adder *a, sh_error *err)
{
    sh_index *ix = a->ix;
    size_t np = 0, p = 0, nd = a->next - a->dbase, k;
    unsigned char *aux, *searches;
    uint32_t id;
    sh_status s = SH_OK;
    int rc;
    if (nd == 0) return SH_OK;
    aux = (unsigned char *)malloc(12 * a->ncrecs + 12);
    searches = (unsigned char *)malloc(nd);
    if (!aux || !searches) { free(aux); free(searches); return sh_error_set(err, SH_ENOMEM, 0, "out of memory"); }
    for (k = 0; k < nd; k++) searches[k] = a->dstat[k] == SH_DUP_NONE;
    sh_radix_sort(a->crecs, aux, a->ncrecs, 12, 8); /* stable, and they came in the order of ids */
    free(aux);
    rc = post_batch(a, a->crecs, a->ncrecs, a->dbase, searches, &np);
    free(searches);
    if (rc) return lmdb_err(err, ix, "add postings", rc);
    for (id = a->dbase; id < a->next && rc == 0 && s == SH_OK; id++) {
        if (a->dstat[id - a->dbase] != SH_DUP_NONE) {
            a->st.identical++;
            rc = merge(a, a->dother[id - a->dbase], id);
            continue;
        }
        if (np == SIZE_MAX) {
            /* too many pairs to hold for the chunk: one document at a time */
            size_t nc = 0, c;
            if ((s = stored_sketch(a, id, err)) != SH_OK) break;
            if ((rc = candidates_of(a->txn, ix, NULL, a->sa, a->sa->n, a->sa->n, id, a->max_df, 1, &a->cand, &a->cand_cap, &nc)) != 0) break;
            for (c = 0; c < nc && rc == 0 && s == SH_OK; c++) rc = link_candidate(a, a->sa, id, a->cand[c], &s, err);
            continue;
        }
        if (p < np && (uint32_t)(a->pairs[p] >> 32) == id && (s = stored_sketch(a, id, err)) != SH_OK) break;
        for (; p < np && (uint32_t)(a->pairs[p] >> 32) == id && rc == 0 && s == SH_OK; p++)
            rc = link_candidate(a, a->sa, id, (uint32_t)a->pairs[p], &s, err);
    }
    if (s == SH_OK && rc) s = lmdb_err(err, ix, "link documents", rc);
    a->ncrecs = 0;
    a->dbase = a->next;
    return s;
}

/* The pairs' records in their external sort: BE64 new << 32 | earlier, then
 * the values they share (host order), summed over the values' records. */
#define PAIR_REC 12
static void sum_shared(void *acc, const void *rec, void *ud)
{
    uint32_t x, y;
    (void)ud;
    memcpy(&x, (char *)acc + 8, 4);
    memcpy(&y, (const char *)rec + 8, 4);
    x = x + y < x ? UINT32_MAX : x + y;
    memcpy((char *)acc + 8, &x, 4);
}

/* The pairs of each searching document of docs[0..n) (one value's holders,
 * ascending) with the earlier ones, to the external sort pairs (through buf,
 * *nb records of DEFER_READ). */
static void sort_group(sh_index_adder *a, const uint32_t *docs, size_t n, sh_extsort *pairs, unsigned char *buf, size_t *nb,
                       sh_status *s, sh_error *err)
{
    size_t x, j;
    static const uint32_t one = 1;
    for (x = 1; x < n; x++) {
        if (a->dstat[docs[x] - a->dbase] != SH_DUP_NONE) continue;
        for (j = 0; j < x; j++) {
            unsigned char *r = buf + PAIR_REC * *nb;
            sh_store_be64(r, (uint64_t)docs[x] << 32 | docs[j]);
            memcpy(r + 8, &one, 4);
            if (++*nb == DEFER_READ) {
                if ((*s = sh_extsort_add(pairs, buf, *nb, err)) != SH_OK) return;
                *nb = 0;
            }
        }
    }
}

/* The pairs found in memory so far, to the external sort instead. */
static void sort_groups(sh_index_adder *a, sh_extsort *pairs, unsigned char *buf, size_t *nb, sh_status *s, sh_error *err)
{
    size_t g, h = 0;
    for (g = 0; g < a->ngrp && *s == SH_OK; g++) {
        sort_group(a, a->hold + h, a->gend[g] - h, pairs, buf, nb, s, err);
        h = a->gend[g];
    }
    free(a->hold);
    free(a->gend);
    a->hold = a->gend = NULL;
    a->nhold = a->hold_cap = a->ngrp = a->grp_cap = 0;
    a->inmem = 0;
}


/* Keep one value's holders docs[0..n) in memory: 0 when they do not fit. */
static int keep_group(sh_index_adder *a, const uint32_t *docs, size_t n)
{
    if (8 * (a->nhold + n) + 4 * (a->ngrp + 1) > a->inmem_max) return 0;
    if (a->nhold + n > a->hold_cap) {
        size_t nc = a->hold_cap ? a->hold_cap * 2 : 65536;
        uint32_t *q;
        while (nc < a->nhold + n) nc *= 2;
        if (!(q = (uint32_t *)realloc(a->hold, nc * sizeof *q))) return 0;
        a->hold = q;
        a->hold_cap = nc;
    }
    if (a->ngrp == a->grp_cap) {
        size_t nc = a->grp_cap ? a->grp_cap * 2 : 16384;
        uint32_t *q = (uint32_t *)realloc(a->gend, nc * sizeof *q);
        if (!q) return 0;
        a->gend = q;
        a->grp_cap = nc;
    }
    memcpy(a->hold + a->nhold, docs, n * sizeof *docs);
    a->nhold += n;
    a->gend[a->ngrp++] = (uint32_t)a->nhold;
    return 1;
}

/* One value's postings, docs[0..n) ascending, appended through cur; a value
 * two or more documents hold is kept for their pairs (keep_group, else the
 * external sort pairs, through buf, *nb records of DEFER_READ). */
static int defer_value(sh_index_adder *a, MDB_cursor *cur, const unsigned char *val, const uint32_t *docs, size_t n,
                       sh_extsort *pairs, unsigned char *buf, size_t *nb, sh_status *s, sh_error *err)
{
    size_t x;
    int rc;
    for (x = 0; x < n; x++) {
        unsigned char db[4];
        MDB_val k = { 8, (void *)(uintptr_t)val }, d = { 4, db };
        sh_store_be32(db, docs[x]);
        /* the first holder of a value is a new key after the last; the next ones are its later duplicates */
        if ((rc = mdb_cursor_put(cur, &k, &d, x == 0 ? MDB_APPEND : MDB_APPENDDUP)) != 0) return rc;
    }
    if (n < 2) return 0;
    if (a->inmem && !keep_group(a, docs, n)) sort_groups(a, pairs, buf, nb, s, err);
    if (!a->inmem && *s == SH_OK) sort_group(a, docs, n, pairs, buf, nb, s, err);
    return 0;
}

static int cmp_u32(const void *x, const void *y)
{
    uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
    return a < b ? -1 : a > b;
}

/* Decide the pairs of the groups kept in memory: for each new document in
 * the order of ids, the earlier holders of its values, each with the count
 * of values they share (a counter per document), decided in any order and
 * merged in the order of ids, as the batches would. */
static sh_status decide_in_memory(sh_index_adder *a, sh_error *err)
{
    size_t nd = a->next - a->dbase, i, q, h, g, k;
    uint32_t *doff, *dg, *touched, id;
    pentry *pe = a->pent;
    sh_status s = SH_OK;
    int rc = 0;
    doff = (uint32_t *)calloc(nd + 1, sizeof *doff);
    dg = (uint32_t *)malloc((a->nhold + 1) * sizeof *dg);
    touched = (uint32_t *)malloc((nd + 1) * sizeof *touched);
    if (!doff || !dg || !touched) { s = sh_error_set(err, SH_ENOMEM, 0, "out of memory"); goto out; }
    if (a->npdoc != nd) { s = sh_error_set(err, SH_EINVAL, 0, "%s: %zu entries for %zu documents", a->ix->path, a->npdoc, nd); goto out; }
    /* each document's groups: counted, then placed (doff[k] ends as the end of k's), then doff[k] its start */
    for (i = 0; i < a->nhold; i++) doff[a->hold[i] - a->dbase + 1]++;
    for (k = 0; k < nd; k++) doff[k + 1] += doff[k];
    for (g = 0, h = 0; g < a->ngrp; g++)
        for (; h < a->gend[g]; h++) dg[doff[a->hold[h] - a->dbase]++] = (uint32_t)g;
    for (k = nd; k > 0; k--) doff[k] = doff[k - 1];
    doff[0] = 0;
    for (id = a->dbase; id < a->next && rc == 0 && s == SH_OK; id++) {
        const sh_sketch *sk = NULL;
        size_t nt = 0, np = 0, t;
        k = id - a->dbase;
        if (a->dstat[k] != SH_DUP_NONE) {
            a->st.identical++;
            rc = merge(a, a->dother[k], id);
            continue;
        }
        for (q = doff[k]; q < doff[k + 1]; q++) {
            size_t e;
            g = dg[q];
            e = a->gend[g];
            for (h = g ? a->gend[g - 1] : 0; h < e && a->hold[h] < id; h++) {
                uint32_t c = a->hold[h] - a->dbase;
                if (pe[c].cnt++ == 0) touched[nt++] = c;
            }
        }
        for (t = 0; t < nt && rc == 0 && s == SH_OK; t++) {
            uint32_t c = touched[t];
            int pass;
            rc = pair_passes(a, &sk, id, a->dbase + c, pe[c].cnt, &pass, &s, err);
            pe[c].cnt = 0;
            if (pass) touched[np++] = c; /* np <= t: read already */
        }
        if (rc || s != SH_OK) break;
        if (np > 1) qsort(touched, np, sizeof *touched, cmp_u32);
        for (t = 0; t < np && rc == 0; t++) {
            a->st.linked++;
            rc = merge(a, a->dbase + touched[t], id);
        }
    }
    if (s == SH_OK && rc) s = lmdb_err(err, a->ix, "link documents", rc);
out:
    free(doff);
    free(dg);
    free(touched);
    return s;
}

/* Put the deferred postings and decide the sweep's pairs (see above). */
static sh_status defer_flush(sh_index_adder *a, sh_error *err)
{
    sh_index *ix = a->ix;
    MDB_cursor *cur = NULL;
    sh_extsort *pairs = NULL;
    unsigned char *recs = NULL, *pb = NULL, val[8];
    uint32_t *grp = NULL, id;
    size_t ng = 0, gcap = 0, nr, nb = 0, i, np = 0, p = 0;
    sh_status s = SH_OK;
    int rc = 0;
    if (a->deferred == DEFER_CHUNK) return (s = chunk_flush(a, err)) != SH_OK ? s : fp_flush(a, err);
    close_append(a);
    if ((s = fp_flush(a, err)) != SH_OK) return s;
    if (!a->dpost) return SH_OK;
    recs = (unsigned char *)malloc(12 * DEFER_READ);
    pb = (unsigned char *)malloc(PAIR_REC * DEFER_READ);
    if (!recs || !pb) { s = sh_error_set(err, SH_ENOMEM, 0, "out of memory"); goto out; }
    if ((s = sh_extsort_finish(a->dpost, err)) != SH_OK) goto out;
    if ((s = sh_extsort_open(&pairs, PAIR_REC, 8, DEFER_PAIR_MEMORY, ix->path, sum_shared, err)) != SH_OK) goto out;
    if ((rc = mdb_cursor_open(a->txn, ix->db[D_POST], &cur)) != 0) goto out;
    for (;;) {
        if ((s = sh_extsort_read(a->dpost, recs, DEFER_READ, &nr, err)) != SH_OK) goto out;
        for (i = 0; i < nr; i++) {
            const unsigned char *r = recs + 12 * i;
            if (ng && memcmp(r, val, 8) != 0) {
                if ((rc = defer_value(a, cur, val, grp, ng, pairs, pb, &nb, &s, err)) != 0 || s != SH_OK) goto out;
                ng = 0;
            }
            if (ng == gcap) {
                size_t nc = gcap ? gcap * 2 : 64;
                uint32_t *q = (uint32_t *)realloc(grp, nc * sizeof *q);
                if (!q) { s = sh_error_set(err, SH_ENOMEM, 0, "out of memory"); goto out; }
                grp = q;
                gcap = nc;
            }
            memcpy(val, r, 8);
            grp[ng++] = sh_load_be32(r + 8);
        }
        if (nr == 0) break;
    }
    if (ng && ((rc = defer_value(a, cur, val, grp, ng, pairs, pb, &nb, &s, err)) != 0 || s != SH_OK)) goto out;
    mdb_cursor_close(cur);
    cur = NULL;
    sh_extsort_free(a->dpost);
    a->dpost = NULL;
    if (a->inmem) {
        s = decide_in_memory(a, err);
        goto out;
    }
    if (nb && (s = sh_extsort_add(pairs, pb, nb, err)) != SH_OK) goto out;
    if ((s = sh_extsort_finish(pairs, err)) != SH_OK) goto out;
    /* identical documents join their earlier copy; the rest are linked to
     * the earlier documents they share values with that pass the policy, in
     * the order of ids, as sh_index_add's step 3 */
    for (id = a->dbase; id < a->next && rc == 0; id++) {
        const sh_sketch *sk = NULL;
        if (a->dstat[id - a->dbase] != SH_DUP_NONE) {
            a->st.identical++;
            rc = merge(a, a->dother[id - a->dbase], id);
            continue;
        }
        for (;;) {
            uint64_t pr;
            uint32_t shared;
            int pass;
            if (p == np) {
                if ((s = sh_extsort_read(pairs, pb, DEFER_READ, &np, err)) != SH_OK) goto out;
                p = 0;
                if (np == 0) break;
            }
            pr = sh_load_be64(pb + PAIR_REC * p);
            memcpy(&shared, pb + PAIR_REC * p + 8, 4);
            if ((uint32_t)(pr >> 32) != id) break;
            p++;
            if ((rc = pair_passes(a, &sk, id, (uint32_t)pr, shared, &pass, &s, err)) != 0 || s != SH_OK) goto out;
            if (pass) {
                a->st.linked++;
                if ((rc = merge(a, (uint32_t)pr, id)) != 0) goto out;
            }
        }
    }
out:
    if (cur) mdb_cursor_close(cur);
    sh_extsort_free(pairs);
    free(recs);
    free(pb);
    free(grp);
    if (s == SH_OK && rc) s = lmdb_err(err, ix, "add postings", rc);
    return s;
}

sh_status sh_index_add(sh_index_adder *a, const sh_index_doc *docs, size_t n, uint32_t *ids, sh_error *err)
{
    sh_index *ix = a->ix;
    MDB_txn *t = a->txn;
    size_t i;
    int rc = 0;
    uint32_t *other = (uint32_t *)calloc(n ? n : 1, sizeof *other);
    unsigned char *dups = (unsigned char *)calloc(n ? n : 1, 1);
    size_t np = 0, p;
    sh_status s = SH_OK;
    if (!other || !dups) { free(other); free(dups); return sh_error_set(err, SH_ENOMEM, 0, "out of memory"); }
    /* 1. records, URLs, fingerprints, sweep membership, clusters of one */
    for (i = 0; i < n && rc == 0; i++) {
        const sh_index_doc *d = &docs[i];
        const sh_sketch *sk = d->sketch;
        sh_ixdoc h;
        unsigned char kb[8], sb[4];
        MDB_val k = { 4, kb }, v;
        sh_sketch x;
        uint32_t id = a->next;
        if (a->next == UINT32_MAX - 1) { s = sh_error_set(err, SH_EINVAL, 0, "%s is full: 4294967294 documents", ix->path); goto out; }
        memset(&x, 0, sizeof x);
        x.p = a->p;
        if (sk->p.kind != a->p.kind || sh_sketch_compatible(&x, sk, err) != SH_OK || sk->p.s != a->p.s ||
            (sk->p.kind == SH_SKETCH_MOD ? sh_mod_steps(a->p.m, sk->p.m) > 255 : sk->p.m != a->p.m)) {
            s = sh_error_set(err, SH_EMISMATCH, 0, "document %zu (%.*s) was sketched with other parameters than this add",
                             i + 1, (int)(d->url_len > 200 ? 200 : d->url_len), d->url);
            goto out;
        }
        memset(&h, 0, sizeof h);
        h.url_fp = sh_index_url_fp(ix, d->url, d->url_len);
        {
            /* a sweep holds one version of a URL: the same content again is
             * skipped (a re-run after a crash adds nothing twice), other
             * content is refused */
            uint32_t prev = 0;
            int same = 0, r = a->dfp && !a->fp_delta ? 0 : url_in_sweep(t, ix, a->sweep, d, h.url_fp, &prev, &same, &rc, &s, err);
            if (r == 0 && a->dfp) r = url_in_add(a, d, h.url_fp, &prev, &same, &rc, &s, err);
            if (r < 0) { if (s != SH_OK) goto out; break; }
            if (r == 1) {
                dups[i] = SKIPPED;
                ids[i] = same ? prev : SH_INDEX_REFUSED;
                if (same) a->st.already++; else a->st.refused++;
                continue;
            }
        }
        h.dup = (uint32_t)(dups[i] = (unsigned char)(a->fp_delta ? identical_both(a, d, &other[i], &rc)
                                                     : a->dfp ? identical_in_add(a, d, &other[i]) : identical(t, ix, d, &other[i], &rc)));
        if (rc) break;
        h.raw_fp = d->raw_fp;
        h.canon_fp = d->canon_fp;
        h.sweep = a->sweep;
        h.cluster = id;
        h.n_shingles = sk->n_shingles > UINT32_MAX ? UINT32_MAX : (uint32_t)sk->n_shingles;
        h.n_tokens = sk->n_tokens > UINT32_MAX ? UINT32_MAX : (uint32_t)sk->n_tokens;
        h.n_values = (uint32_t)sk->n;
        h.url_len = (uint32_t)d->url_len;
        h.cls = sk->p.kind == SH_SKETCH_MOD ? sh_mod_steps(a->p.m, sk->p.m) : sk->p.cls;
        sh_store_be32(kb, id);
        v.mv_size = docrec_size(&h);
        if (a->dapp && !a->acur[0]) {
            static const int app[4] = { D_DOCS, D_SWEEPDOCS, D_MEMBERS, D_CLUSTER };
            int j;
            for (j = 0; j < 4 && rc == 0; j++) rc = mdb_cursor_open(t, ix->db[app[j]], &a->acur[j]);
            if (rc) break;
        }
        rc = a->dapp ? mdb_cursor_put(a->acur[0], &k, &v, MDB_RESERVE | MDB_APPEND) : mdb_put(t, ix->db[D_DOCS], &k, &v, MDB_RESERVE);
        if (rc) break;
        memcpy(v.mv_data, &h, sizeof h);
        memcpy((char *)v.mv_data + sizeof h, sk->v, 8 * sk->n);
        memcpy((char *)v.mv_data + sizeof h + 8 * sk->n, d->url, d->url_len);
        if (a->deferred == DEFER_APPEND) {
            /* what its pairs are decided from at the commit: its entry (and
             * counter), and its record when its kind has no estimates from counts */
            if ((s = keep_entry(a, id, sk, h.cls, err)) != SH_OK) goto out;
            if (!a->counts && (s = keep_record(a, id, v.mv_data, sizeof h + 8 * sk->n, err)) != SH_OK) goto out;
        }
        if (a->dfp) {
            if ((s = fp_keep(a, id, h.url_fp, d->raw_fp, d->canon_fp, err)) != SH_OK) goto out;
        } else {
            sh_store_be64(kb, h.url_fp);
            if ((rc = put_dup(t, ix->db[D_URLS], kb, 8, id)) != 0) break;
            sh_store_be64(kb, d->raw_fp);
            if ((rc = put_dup(t, ix->db[D_RAW], kb, 8, id)) != 0) break;
            sh_store_be64(kb, d->canon_fp);
            if ((rc = put_dup(t, ix->db[D_CANON], kb, 8, id)) != 0) break;
        }
        sh_store_be32(sb, a->sweep);
        if (a->dapp) {
            /* the sweep's key, then its ids after the last; the document's cluster of one after the last */
            unsigned char ib[4];
            MDB_val sk4 = { 4, sb }, ik = { 4, kb }, iv = { 4, ib };
            sh_store_be32(kb, id);
            sh_store_be32(ib, id);
            if ((rc = mdb_cursor_put(a->acur[1], &sk4, &iv, a->sd_started ? MDB_APPENDDUP : MDB_APPEND)) != 0) break;
            a->sd_started = 1;
            if ((rc = mdb_cursor_put(a->acur[2], &ik, &iv, MDB_APPEND)) != 0) break;
            if ((rc = mdb_cursor_put(a->acur[3], &ik, &iv, MDB_APPEND)) != 0) break;
        } else {
            if ((rc = put_dup(t, ix->db[D_SWEEPDOCS], sb, 4, id)) != 0) break;
            sh_store_be32(kb, id);
            if ((rc = put_dup(t, ix->db[D_MEMBERS], kb, 4, id)) != 0) break;
            if ((rc = set_cluster(t, ix, id, id)) != 0) break;
        }
        ids[i] = id;
        a->next++;
    }
    if (rc) { s = lmdb_err(err, ix, "add documents", rc); goto out; }
    if (a->deferred) {
        /* postings and links at the commit (defer_flush) */
        if ((s = defer_batch(a, docs, n, ids, dups, other, err)) != SH_OK) goto out;
        if (a->deferred == DEFER_CHUNK && a->ncrecs >= chunk_values(a) && (s = chunk_flush(a, err)) != SH_OK) goto out;
        goto counted;
    }
    /* 2. postings, sorted by value then doc and put through one cursor (a key
     * on the leaf page the cursor is on needs no search from the root); the
     * same walk gathers every new document's candidates */
    {
        size_t total = 0, m = 0, j, base_i = n;
        uint32_t base = 0;
        unsigned char *recs, *aux, *searches;
        for (i = 0; i < n; i++)
            if (dups[i] != SKIPPED) {
                total += docs[i].sketch->n;
                if (base_i == n) { base_i = i; base = ids[i]; }
            }
        recs = (unsigned char *)malloc(12 * total + 12);
        aux = (unsigned char *)malloc(12 * total + 12);
        searches = (unsigned char *)calloc(n + 1, 1);
        if (!recs || !aux || !searches) {
            free(recs); free(aux); free(searches);
            s = sh_error_set(err, SH_ENOMEM, 0, "out of memory");
            goto out;
        }
        for (i = 0; i < n; i++) {
            if (dups[i] == SKIPPED) continue;
            /* ids of the added documents are consecutive from base */
            searches[ids[i] - base] = dups[i] == SH_DUP_NONE;
            for (j = 0; j < docs[i].sketch->n; j++) {
                sh_store_be64(recs + 12 * m, docs[i].sketch->v[j]);
                sh_store_be32(recs + 12 * m + 8, ids[i]);
                m++;
            }
        }
        sh_radix_sort(recs, aux, m, 12, 8); /* stable, and they came in the order of ids */
        free(aux);
        rc = post_batch(a, recs, m, base, searches, &np);
        free(recs);
        free(searches);
        if (rc) { s = lmdb_err(err, ix, "add postings", rc); goto out; }
    }
    /* 3. identical documents join their earlier copy; the rest are linked to
     * every earlier document they share sketch values with that passes the
     * policy, in the order of ids: documents, then candidates */
    for (i = 0, p = 0; i < n && rc == 0; i++) {
        const sh_index_doc *d = &docs[i];
        uint32_t id = ids[i];
        size_t nc = 0, c;
        const uint32_t *cand;
        if (dups[i] == SKIPPED) continue;
        if (dups[i] != SH_DUP_NONE) {
            /* identical sketches decide every pair alike: the copy needs no search of its own */
            a->st.identical++;
            rc = merge(a, other[i], id);
            continue;
        }
        if (np == SIZE_MAX) {
            /* too many pairs to hold for the batch: one document at a time */
            if ((rc = candidates_of(t, ix, NULL, d->sketch, d->sketch->n, d->sketch->n, id, a->max_df, 1, &a->cand, &a->cand_cap, &nc)) != 0) break;
            cand = a->cand;
            for (c = 0; c < nc && rc == 0 && s == SH_OK; c++) rc = link_candidate(a, d->sketch, id, cand[c], &s, err);
        } else {
            for (; p < np && (uint32_t)(a->pairs[p] >> 32) == id && rc == 0 && s == SH_OK; p++)
                rc = link_candidate(a, d->sketch, id, (uint32_t)a->pairs[p], &s, err);
        }
        if (s != SH_OK) goto out;
    }
    if (rc) { s = lmdb_err(err, ix, "link documents", rc); goto out; }
counted:
    {
        size_t added = 0;
        for (i = 0; i < n; i++) added += dups[i] != SKIPPED;
        a->st.added += added;
        a->sweep_count += (uint32_t)added;
    }
out:
    free(other);
    free(dups);
    return s;
}

/* Documents of a run added at a time: the batch of sh_index_add. */
#define RUN_BATCH 16384

sh_status sh_index_add_run(sh_index_adder *a, const char *dir, const char *const *urls, const size_t *url_lens, uint32_t n,
                           size_t *added, sh_error *err)
{
    sh_run r;
    sh_index_doc *docs = NULL;
    uint32_t *ids = NULL;
    unsigned char *buf = NULL;
    size_t cap = 0;
    uint32_t i = 0;
    sh_status s;
    *added = 0;
    if ((s = sh_run_open(&r, dir, 1, 0, 0, err)) != SH_OK) return s;
    if (n != r.n) {
        s = sh_error_set(err, SH_EINVAL, 0, "%s holds %u documents, not the %u given", dir, r.n, n);
        goto out;
    }
    docs = (sh_index_doc *)malloc(RUN_BATCH * sizeof *docs);
    ids = (uint32_t *)malloc(RUN_BATCH * sizeof *ids);
    if (!docs || !ids) { s = sh_error_set(err, SH_ENOMEM, 0, "out of memory"); goto out; }
    while (i < n) {
        size_t k = 0, bytes = 0, off = 0, j;
        uint32_t end = i;
        /* the next batch: its documents and the room their sketches take */
        for (; end < n && k < RUN_BATCH; end++)
            if (urls[end] && r.d[end].status == 0) {
                bytes += sizeof(sh_sketch) + 8 * (size_t)r.d[end].sketch_n;
                k++;
            }
        if (bytes > cap) {
            unsigned char *q = (unsigned char *)realloc(buf, bytes);
            if (!q) { s = sh_error_set(err, SH_ENOMEM, 0, "out of memory"); goto out; }
            buf = q;
            cap = bytes;
        }
        for (k = 0; i < end; i++) {
            sh_sketch *sk;
            if (!urls[i] || r.d[i].status != 0) continue;
            sk = (sh_sketch *)(void *)(buf + off);
            off += sizeof(sh_sketch) + 8 * (size_t)r.d[i].sketch_n;
            if (!sh_run_view(&r, i, sk, 0, err)) { s = err ? err->code : SH_EIO; goto out; }
            /* as a sketch made for the index has them: s and m only for the kinds that use them */
            if (sk->p.kind != SH_SKETCH_MIN && sk->p.kind != SH_SKETCH_MINMOD) sk->p.s = 0;
            if (sk->p.kind != SH_SKETCH_MOD && sk->p.kind != SH_SKETCH_MINMOD) sk->p.m = 0;
            docs[k].url = urls[i];
            docs[k].url_len = url_lens[i];
            docs[k].raw_fp = r.d[i].raw_fp;
            docs[k].canon_fp = r.d[i].canon_fp;
            docs[k].sketch = sk;
            k++;
        }
        if ((s = sh_index_add(a, docs, k, ids, err)) != SH_OK) goto out;
        for (j = 0; j < k; j++) *added += ids[j] != SH_INDEX_REFUSED;
    }
    s = SH_OK;
out:
    sh_run_close(&r);
    free(docs);
    free(ids);
    free(buf);
    return s;
}

sh_status sh_index_commit(sh_index_adder *a, sh_index_add_stats *st, sh_error *err)
{
    sh_index *ix = a->ix;
    unsigned char nb[4], sv[8];
    MDB_val k = { strlen(a->sweep_name), a->sweep_name }, v = { 8, sv };
    int rc;
    sh_status s = SH_OK;
    if (a->deferred && (s = defer_flush(a, err)) != SH_OK) {
        sh_index_abort(a);
        return s;
    }
    if ((rc = merge_table(a, D_POST, 0, NULL)) != 0 || (rc = merge_table(a, D_URLS, 0, NULL)) != 0 ||
        (rc = merge_table(a, D_RAW, 0, NULL)) != 0 || (rc = merge_table(a, D_CANON, 0, NULL)) != 0) {
        s = lmdb_err(err, ix, "merge the postings", rc);
        sh_index_abort(a);
        return s;
    }
    sh_store_be32(nb, a->next);
    sh_store_be32(sv, a->sweep);
    sh_store_be32(sv + 4, a->sweep_count);
    if ((rc = meta_put(a->txn, ix, "next", nb, 4)) != 0 || (rc = mdb_put(a->txn, ix->db[D_SWEEPS], &k, &v, 0)) != 0) {
        sh_index_abort(a);
        return lmdb_err(err, ix, "commit", rc);
    }
    rc = mdb_txn_commit(a->txn);
    a->txn = NULL;
    if (st) *st = a->st;
    /* the message first: it looks at the room left on the disk (a full disk
     * says so), which cutting the file back gives again */
    if (rc) s = lmdb_err(err, ix, "commit", rc);
    if (rc) shrink(ix); /* a failed commit is rolled back; its pages may be in the file */
    sh_index_abort(a);
    return s;
}

sh_status sh_index_meta_put(sh_index_adder *a, const char *key, const void *data, size_t n, sh_error *err)
{
    int rc;
    if (strncmp(key, "user.", 5) != 0) return sh_error_set(err, SH_EINVAL, 0, "meta keys must start with \"user.\"");
    if ((rc = meta_put(a->txn, a->ix, key, data, n)) != 0) return lmdb_err(err, a->ix, "write meta", rc);
    return SH_OK;
}

sh_status sh_index_meta_get(sh_index *ix, const char *key, char **data, size_t *n, sh_error *err)
{
    MDB_txn *t;
    MDB_val v;
    int rc;
    *data = NULL;
    *n = 0;
    if ((rc = rbegin(ix, &t)) != 0) return lmdb_err(err, ix, "begin", rc);
    rc = meta_get(t, ix, key, &v);
    if (rc == 0) {
        *data = (char *)malloc(v.mv_size + 1);
        if (!*data) { rend(ix, t); return sh_error_set(err, SH_ENOMEM, 0, "out of memory"); }
        memcpy(*data, v.mv_data, v.mv_size);
        (*data)[v.mv_size] = 0;
        *n = v.mv_size;
    }
    rend(ix, t);
    if (rc && rc != MDB_NOTFOUND) return lmdb_err(err, ix, "read meta", rc);
    return SH_OK;
}

/* Cut data.mdb back to what its committed state uses. An add that failed
 * (a full disk) may have written pages past it, which LMDB leaves in the
 * file; no reader looks past the committed last page, and the write
 * transaction taken here keeps any other writer out meanwhile. */
static void shrink(sh_index *ix)
{
    MDB_txn *t;
    MDB_envinfo info;
    MDB_stat st;
    struct stat fs;
    int fd;
    if (ix->readonly || mdb_txn_begin(ix->env, NULL, 0, &t) != 0) return;
    if (mdb_env_info(ix->env, &info) == 0 && mdb_env_stat(ix->env, &st) == 0 && mdb_env_get_fd(ix->env, &fd) == 0 &&
        fstat(fd, &fs) == 0) {
        off_t used = (off_t)(info.me_last_pgno + 1) * (off_t)st.ms_psize;
        if (fs.st_size > used && ftruncate(fd, used) != 0) { /* the next add reuses the room anyway */ }
    }
    mdb_txn_abort(t);
}

void sh_index_abort(sh_index_adder *a)
{
    int failed;
    if (!a) return;
    failed = a->txn != NULL;
    if (a->txn) close_append(a);
    if (a->txn) mdb_txn_abort(a->txn);
    a->txn = NULL;
    if (failed) shrink(a->ix);
    free(a->cand);
    free(a->pairs);
    free(a->sa);
    free(a->sb);
    sh_extsort_free(a->dpost);
    free(a->crecs);
    free(a->store);
    free(a->store_off);
    free(a->dstat);
    free(a->dother);
    free(a->pent);
    free(a->fps);
    free(a->unext);
    sh_htab_free(&a->fph[0]);
    sh_htab_free(&a->fph[1]);
    sh_htab_free(&a->fph[2]);
    free(a->pcm);
    free(a->hold);
    free(a->gend);
    free(a);
}

/* ---- queries -------------------------------------------------------------- */

static double max_containment(const sh_index_hit *h) { return h->cab > h->cba ? h->cab : h->cba; }

static int by_doc(const sh_index_hit *a, const sh_index_hit *b) { return a->doc < b->doc ? -1 : a->doc > b->doc; }

static int cmp_resemblance(const void *x, const void *y)
{
    const sh_index_hit *a = (const sh_index_hit *)x, *b = (const sh_index_hit *)y;
    if (a->r != b->r) return a->r < b->r ? 1 : -1;
    return by_doc(a, b);
}

static int cmp_containment(const void *x, const void *y)
{
    const sh_index_hit *a = (const sh_index_hit *)x, *b = (const sh_index_hit *)y;
    double ka = max_containment(a), kb = max_containment(b);
    if (ka != kb) return ka < kb ? 1 : -1;
    return cmp_resemblance(x, y);
}

/* How many of the query's values to look up. A document passes resemblance
 * (or both) >= t only if it shares at least a fraction t of the values of
 * the query's sample that count: both >= t (ka + kb - both) >= t ka. When
 * every value of the query counts against every stored sketch (a FULL
 * sketch, or MOD at the index's own modulus, which each smaller modulus of
 * the chain divides), its values are fingerprints in random order with
 * respect to the text, so its K smallest values are a random K-subset of
 * them, and a document passing the policy shares none of them with
 * probability at most (1 - t)^K. K is chosen for at most 1e-12, and large
 * enough that a passing document shares at least SH_INDEX_QUERY_SAMPLE_SHARED
 * of them but with probability 1e-12 (query_min_shared: the candidates
 * sharing fewer are not fetched), K ~ 63 / t: 127 at t = 0.5, 211 at 0.3; a
 * large document's query (a 500 KB page has ~3,000 MOD_25 values) then costs
 * K lookups instead of one per value. Containment of a small document in the
 * query has no such bound: those policies look up every value. */
static int query_bounded(const sh_sketch *q, const sh_sketch_params *p, sh_policy policy, double t)
{
    return (policy == SH_POLICY_RESEMBLANCE || policy == SH_POLICY_BOTH) && t > 0.0 && t <= 1.0 &&
           (q->p.kind == SH_SKETCH_FULL || (q->p.kind == SH_SKETCH_MOD && p->kind == SH_SKETCH_MOD && q->p.m == p->m));
}

/* The fewest of nv looked-up values (of the query's n, all counting) that a
 * document passing resemblance >= t shares. With every value looked up it
 * shares both >= t ka = t n of them, exactly (both is the count of shared
 * values, every one counting). With the nv smallest, the count is
 * hypergeometric with mean >= t nv, below (1 - d) t nv with probability at
 * most exp(-d^2 t nv / 2) (Chernoff; Hoeffding's bound for sampling without
 * replacement): d is chosen for 1e-12. Candidates sharing fewer, mostly
 * documents meeting the query on a few common values, are not fetched. */
static uint32_t query_min_shared(size_t nv, size_t n, double t)
{
    double need;
    if (nv >= n) need = ceil(t * (double)n * (1.0 - 1e-9));
    else need = floor((1.0 - sqrt(2.0 * log(1e12) / (t * (double)nv))) * t * (double)nv);
    return need < 1.0 ? 1 : (uint32_t)need;
}

static size_t query_lookups(const sh_sketch *q, const sh_sketch_params *p, sh_policy policy, double t)
{
    double k;
    if (!query_bounded(q, p, policy, t)) return q->n;
    k = t >= 1.0 ? 1.0 : ceil(log(1e-12) / log1p(-t));
    {
        /* t K - sqrt(L t K) >= J (query_min_shared) from t K >= y^2, y the root of y^2 - sqrt(L) y - J */
        double L = 2.0 * log(1e12), J = SH_INDEX_QUERY_SAMPLE_SHARED;
        double y = (sqrt(L) + sqrt(L + 4.0 * J)) / 2.0, k2 = ceil(y * y / t);
        while (k2 < 1e9 && query_min_shared((size_t)k2, (size_t)k2 + 1, t) < (uint32_t)J) k2++;
        if (k < k2) k = k2;
    }
    return k >= (double)q->n ? q->n : (size_t)k;
}


/* "On the fly resemblance": the paper's algorithm over the postings. */
sh_status sh_index_similar(sh_index *ix, const sh_sketch *q, double threshold, sh_policy policy, int by_containment,
                           uint32_t top, uint32_t max_df, sh_index_hit **hits, size_t *n, sh_error *err)
{
    query_aids aids;
    MDB_txn *t;
    sh_sketch_params p;
    sh_policy pol;
    double thr;
    int present, rc, bounded;
    size_t nv, nv_all;
    uint32_t *cand = NULL, min_shared;
    size_t cap = 0, nc = 0, c, nh = 0;
    sh_index_hit *h = NULL;
    sh_sketch *sb = NULL;
    sh_status s = SH_OK;
    *hits = NULL;
    *n = 0;
    if ((rc = rbegin(ix, &t)) != 0) return lmdb_err(err, ix, "begin", rc);
    if ((s = read_params(t, ix, &p, &present, &pol, &thr, err)) != SH_OK) goto done;
    if (!present) goto done; /* an empty index has no similar documents */
    {
        sh_sketch x;
        memset(&x, 0, sizeof x);
        x.p = p;
        if (q->p.kind != p.kind || (s = sh_sketch_compatible(q, &x, err)) != SH_OK) {
            char msg[1024];
            snprintf(msg, sizeof msg, "%.200s: the query was sketched with other parameters than the index: %.250s", ix->path,
                     q->p.kind != p.kind ? "another sketch kind" : err->msg);
            s = sh_error_set(err, SH_EMISMATCH, 0, "%.500s", msg);
            goto done;
        }
    }
    bounded = query_bounded(q, &p, policy, threshold);
    nv = query_lookups(q, &p, policy, threshold);
    nv_all = nv;
    min_shared = bounded ? query_min_shared(nv, q->n, threshold) : 1;
    if (bounded) {
        /* every value counts and a passing document shares at least need
         * of the n: it shares at least SH_INDEX_QUERY_SHARED of any
         * n - need + SH_INDEX_QUERY_SHARED of them (pigeonhole, no chance
         * involved), when that is no more than the sample would look up.
         * Unless a value is skipped as common: then all n. */
        uint32_t need = query_min_shared(q->n, q->n, threshold);
        if (need > SH_INDEX_QUERY_SHARED && q->n - need + SH_INDEX_QUERY_SHARED <= nv) {
            nv = q->n - need + SH_INDEX_QUERY_SHARED;
            nv_all = q->n;
            min_shared = SH_INDEX_QUERY_SHARED;
        }
    }
    if ((rc = candidates_of(t, ix, aids_for(ix, t, &aids), q, nv, nv_all, UINT32_MAX, max_df, min_shared, &cand, &cap, &nc)) != 0) {
        s = lmdb_err(err, ix, "search", rc);
        goto done;
    }
    h = (sh_index_hit *)malloc((nc ? nc : 1) * sizeof *h);
    if (!h) { s = sh_error_set(err, SH_ENOMEM, 0, "out of memory"); goto done; }
    for (c = 0; c < nc; c++) {
        MDB_val v;
        sh_ixdoc d;
        sh_estimate e;
        if ((rc = get_doc(t, ix, cand[c], &v)) != 0) { s = lmdb_err(err, ix, "read document", rc); goto done; }
        if ((s = doc_head(ix, cand[c], &v, &d, err)) != SH_OK) goto done;
        /* with every query value counting, the estimate is at most
         * kb / ka <= n_values / q->n: a much smaller document cannot pass */
        if (bounded && (double)d.n_values < threshold * (double)q->n * (1.0 - 1e-9)) continue;
        if (!sb || sb->n < d.n_values) {
            free(sb);
            sb = (sh_sketch *)malloc(sizeof *sb + 8 * ((size_t)d.n_values + 64));
            if (!sb) { s = sh_error_set(err, SH_ENOMEM, 0, "out of memory"); goto done; }
            sb->n = (size_t)d.n_values + 64;
        }
        if ((s = sketch_from(ix, &p, cand[c], &v, sb, err)) != SH_OK) goto done;
        if ((s = sh_sketch_estimate(q, sb, &e, err)) != SH_OK) goto done;
        if (e.both == 0 || !sh_policy_passes(policy, threshold, &e)) continue;
        h[nh].doc = cand[c];
        h[nh].shared = (uint32_t)e.both;
        h[nh].r = e.resemblance;
        h[nh].cab = e.contain_ab;
        h[nh].cba = e.contain_ba;
        nh++;
    }
    qsort(h, nh, sizeof *h, by_containment ? cmp_containment : cmp_resemblance);
    if (top && nh > top) nh = top;
    *hits = h;
    *n = nh;
    h = NULL;
done:
    rend(ix, t);
    free(cand);
    free(h);
    free(sb);
    return s;
}

sh_status sh_index_doc_get(sh_index *ix, uint32_t doc, sh_ixdoc *d, sh_sketch **sk, char *url, size_t url_cap,
                           char *sweep, size_t sweep_cap, sh_error *err)
{
    MDB_txn *t;
    MDB_val v;
    int rc;
    sh_status s = SH_OK;
    if (sk) *sk = NULL;
    if ((rc = rbegin(ix, &t)) != 0) return lmdb_err(err, ix, "begin", rc);
    rc = get_doc(t, ix, doc, &v);
    if (rc == MDB_NOTFOUND) { rend(ix, t); return sh_error_set(err, SH_EINVAL, 0, "%s has no document %u", ix->path, doc + 1); }
    if (rc) { rend(ix, t); return lmdb_err(err, ix, "read document", rc); }
    if ((s = doc_head(ix, doc, &v, d, err)) != SH_OK) { rend(ix, t); return s; }
    if (url && url_cap) {
        size_t n = d->url_len < url_cap - 1 ? d->url_len : url_cap - 1;
        memcpy(url, (const char *)v.mv_data + sizeof *d + 8 * (size_t)d->n_values, n);
        url[n] = 0;
    }
    {
        uint32_t c;
        if (cluster_of(t, ix, doc, &c) == 0) d->cluster = c;
    }
    if (sk) {
        sh_sketch_params p;
        sh_policy pol;
        double thr;
        int present;
        if ((s = read_params(t, ix, &p, &present, &pol, &thr, err)) == SH_OK) {
            *sk = (sh_sketch *)malloc(sizeof **sk + 8 * (size_t)d->n_values);
            if (!*sk) s = sh_error_set(err, SH_ENOMEM, 0, "out of memory");
            else if ((s = sketch_from(ix, &p, doc, &v, *sk, err)) != SH_OK) { free(*sk); *sk = NULL; }
        }
    }
    if (s == SH_OK && sweep && sweep_cap) {
        /* sweeps are few: scan for the name of this id */
        MDB_cursor *cur;
        MDB_val k, sv;
        sweep[0] = 0;
        if (mdb_cursor_open(t, ix->db[D_SWEEPS], &cur) == 0) {
            rc = mdb_cursor_get(cur, &k, &sv, MDB_FIRST);
            while (rc == 0) {
                if (sv.mv_size == 8 && sh_load_be32(sv.mv_data) == d->sweep) {
                    size_t n = k.mv_size < sweep_cap - 1 ? k.mv_size : sweep_cap - 1;
                    memcpy(sweep, k.mv_data, n);
                    sweep[n] = 0;
                    break;
                }
                rc = mdb_cursor_get(cur, &k, &sv, MDB_NEXT);
            }
            mdb_cursor_close(cur);
        }
    }
    rend(ix, t);
    return s;
}

static sh_status list_dups(sh_index *ix, int db, const void *key, size_t klen, uint32_t **ids, size_t *n, sh_error *err)
{
    MDB_txn *t;
    size_t cap = 0, m = 0;
    int rc = 0, tb, both = 0;
    *ids = NULL;
    *n = 0;
    if ((rc = rbegin(ix, &t)) != 0) return lmdb_err(err, ix, "begin", rc);
    if (delta_of(db) >= 0 && delta_appeared(t, ix)) {
        rend(ix, t);
        return lmdb_err(err, ix, "read list", SH_MDB_STALE);
    }
    /* the table's list, and its delta table's when it has one */
    for (tb = 0; tb < (ix->has_delta && delta_of(db) >= 0 ? 2 : 1) && rc == 0; tb++) {
        MDB_cursor *cur;
        MDB_val k = { klen, (void *)(uintptr_t)key }, v;
        if ((rc = mdb_cursor_open(t, ix->db[tb ? delta_of(db) : db], &cur)) != 0) break;
        if ((rc = mdb_cursor_get(cur, &k, &v, MDB_SET_KEY)) == 0) {
            both += tb == 1 && m > 0;
            rc = post_docs(cur, UINT32_MAX, ids, &cap, &m);
        }
        if (rc == MDB_NOTFOUND) rc = 0;
        mdb_cursor_close(cur);
    }
    rend(ix, t);
    if (rc) {
        free(*ids);
        *ids = NULL;
        return rc == ENOMEM ? sh_error_set(err, SH_ENOMEM, 0, "out of memory") : lmdb_err(err, ix, "read list", rc);
    }
    if (both) {
        /* two sorted lists of distinct ids */
        uint64_t *tmp = (uint64_t *)malloc(m * 8);
        size_t i;
        if (!tmp) { free(*ids); *ids = NULL; return sh_error_set(err, SH_ENOMEM, 0, "out of memory"); }
        for (i = 0; i < m; i++) tmp[i] = (*ids)[i];
        sh_sort_u64(tmp, m);
        for (i = 0; i < m; i++) (*ids)[i] = (uint32_t)tmp[i];
        free(tmp);
    }
    *n = m;
    return SH_OK;
}

sh_status sh_index_url_docs(sh_index *ix, const char *url, size_t len, uint32_t **ids, size_t *n, sh_error *err)
{
    unsigned char kb[8];
    sh_store_be64(kb, sh_index_url_fp(ix, url, len));
    return list_dups(ix, D_URLS, kb, 8, ids, n, err);
}

sh_status sh_index_cluster_docs(sh_index *ix, uint32_t cluster, uint32_t **ids, size_t *n, sh_error *err)
{
    unsigned char kb[4];
    sh_store_be32(kb, cluster);
    return list_dups(ix, D_MEMBERS, kb, 4, ids, n, err);
}

sh_status sh_index_sweep_docs(sh_index *ix, const char *sweep, uint32_t **ids, size_t *n, sh_error *err)
{
    MDB_txn *t;
    MDB_val k = { strlen(sweep), (void *)(uintptr_t)sweep }, v;
    unsigned char kb[4];
    int rc;
    if ((rc = rbegin(ix, &t)) != 0) return lmdb_err(err, ix, "begin", rc);
    rc = mdb_get(t, ix->db[D_SWEEPS], &k, &v);
    if (rc == 0) memcpy(kb, v.mv_data, 4);
    rend(ix, t);
    if (rc == MDB_NOTFOUND) return sh_error_set(err, SH_EINVAL, 0, "%s has no sweep named '%s'", ix->path, sweep);
    if (rc) return lmdb_err(err, ix, "read sweep", rc);
    return list_dups(ix, D_SWEEPDOCS, kb, 4, ids, n, err);
}

sh_status sh_index_sweeps(sh_index *ix, char **names, uint32_t **counts, size_t *n, sh_error *err)
{
    MDB_txn *t;
    MDB_cursor *cur;
    MDB_val k, v;
    MDB_stat ms;
    size_t bytes = 0, m = 0, off = 0;
    int rc;
    *names = NULL;
    *counts = NULL;
    *n = 0;
    if ((rc = rbegin(ix, &t)) != 0) return lmdb_err(err, ix, "begin", rc);
    mdb_stat(t, ix->db[D_SWEEPS], &ms);
    if ((rc = mdb_cursor_open(t, ix->db[D_SWEEPS], &cur)) != 0) { rend(ix, t); return lmdb_err(err, ix, "cursor", rc); }
    for (rc = mdb_cursor_get(cur, &k, &v, MDB_FIRST); rc == 0; rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT)) bytes += k.mv_size + 1;
    *names = (char *)malloc(bytes + 1);
    *counts = (uint32_t *)malloc(ms.ms_entries * 4 + 4);
    if (!*names || !*counts) {
        mdb_cursor_close(cur);
        rend(ix, t);
        free(*names); free(*counts);
        return sh_error_set(err, SH_ENOMEM, 0, "out of memory");
    }
    for (rc = mdb_cursor_get(cur, &k, &v, MDB_FIRST); rc == 0 && m < ms.ms_entries; rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT)) {
        memcpy(*names + off, k.mv_data, k.mv_size);
        off += k.mv_size;
        (*names)[off++] = 0;
        (*counts)[m++] = v.mv_size == 8 ? sh_load_be32((const char *)v.mv_data + 4) : 0;
    }
    mdb_cursor_close(cur);
    rend(ix, t);
    *n = m;
    return SH_OK;
}

sh_status sh_index_merge(sh_index *ix, uint64_t *postings, uint64_t *fingerprints, sh_error *err)
{
    sh_index_adder a;
    uint64_t fp = 0, moved;
    int rc, i;
    if (postings) *postings = 0;
    if (fingerprints) *fingerprints = 0;
    if (ix->readonly) return sh_error_set(err, SH_EINVAL, 0, "%s was opened read-only", ix->path);
    memset(&a, 0, sizeof a);
    a.ix = ix;
    if ((rc = mdb_txn_begin(ix->env, NULL, 0, &a.txn)) != 0) return lmdb_err(err, ix, "begin", rc);
    rc = merge_table(&a, D_POST, 1, NULL);
    for (i = 0; i < 3 && rc == 0; i++)
        if ((rc = merge_table(&a, fp_table[i], 1, &moved)) == 0) fp += moved;
    if (rc) {
        mdb_txn_abort(a.txn);
        return lmdb_err(err, ix, "merge the delta tables", rc);
    }
    if ((rc = mdb_txn_commit(a.txn)) != 0) {
        sh_status s = lmdb_err(err, ix, "commit", rc);
        shrink(ix); /* a failed commit is rolled back; its pages may be in the file */
        return s;
    }
    if (postings) *postings = a.st.postings_merged;
    if (fingerprints) *fingerprints = fp;
    return SH_OK;
}

sh_status sh_index_count(sh_index *ix, uint32_t *n, sh_error *err)
{
    MDB_txn *t;
    MDB_stat ms;
    int rc;
    if ((rc = rbegin(ix, &t)) != 0) return lmdb_err(err, ix, "begin", rc);
    mdb_stat(t, ix->db[D_DOCS], &ms);
    rend(ix, t);
    *n = (uint32_t)ms.ms_entries;
    return SH_OK;
}
