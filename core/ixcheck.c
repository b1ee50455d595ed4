#include "ixcheck.h"

#include <errno.h>
#include <fcntl.h>
#include <lmdb.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "byteorder.h"

/* ---- the size of data.mdb against its meta pages ------------------------- */

/* LMDB's meta page (lmdb/mdb.c, MDB_meta after a 16-byte page header), as
 * liblmdb 0.9 writes it on a 64-bit little-endian host: magic at 16, the
 * page size in the free list's md_pad at 40, the last page number at 136,
 * the transaction id at 144. */
#define META_MAGIC 0xBEEFC0DEu
#define META_BYTES 152

static int meta_at(const unsigned char *pg, uint64_t *psize, uint64_t *last, uint64_t *txnid)
{
    uint32_t ps;
    if (sh_load_le32(pg + 16) != META_MAGIC) return 0;
    ps = sh_load_le32(pg + 40);
    if (ps < 512 || ps > 65536 || (ps & (ps - 1)) != 0) return 0;
    *psize = ps;
    *last = sh_load_le64(pg + 136);
    *txnid = sh_load_le64(pg + 144);
    return *last < ((uint64_t)1 << 48);
}

sh_status sh_index_check_file(const char *dir, uint64_t *used, sh_error *err)
{
    char path[4096];
    unsigned char pg[META_BYTES];
    struct stat st;
    uint64_t ps0 = 0, last0 = 0, tx0 = 0, ps1 = 0, last1 = 0, tx1 = 0, need;
    int fd, ok0, ok1 = 0;
    if (used) *used = 0;
    snprintf(path, sizeof path, "%s/data.mdb", dir);
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        int e = errno;
        if (e == ENOENT) return SH_OK;
        sh_error_set(err, SH_EIO, 0, "cannot read %s: %s", path, strerror(e));
        if (err) err->sys_errno = e;
        return SH_EIO;
    }
    if (fstat(fd, &st) != 0 || st.st_size == 0) { close(fd); return SH_OK; } /* empty: LMDB makes a new one */
    ok0 = pread(fd, pg, sizeof pg, 0) == (ssize_t)sizeof pg && meta_at(pg, &ps0, &last0, &tx0);
    {
        /* the second meta page is one page in: its size from the first, or else each likely size */
        static const uint64_t sizes[] = { 4096, 8192, 16384, 32768, 65536, 512, 1024, 2048 };
        size_t i;
        for (i = 0; i < 1 + sizeof sizes / sizeof sizes[0] && !ok1; i++) {
            uint64_t off = i == 0 ? ps0 : sizes[i - 1];
            if (off == 0) continue;
            ok1 = pread(fd, pg, sizeof pg, (off_t)off) == (ssize_t)sizeof pg && meta_at(pg, &ps1, &last1, &tx1) && ps1 == off;
        }
    }
    close(fd);
    if (!ok0 && !ok1)
        return sh_error_set(err, SH_EFORMAT, 0, "%s: the index is corrupt or not a shingle index (no valid LMDB meta page in "
                            "its %lld bytes): restore a copy or rebuild the index (docs/robustness.md, \"Index\")", path,
                            (long long)st.st_size);
    if (!ok1 || (ok0 && tx0 >= tx1)) need = (last0 + 1) * ps0;
    else need = (last1 + 1) * ps1;
    if (ok0 && ok1 && ps0 != ps1)
        return sh_error_set(err, SH_EFORMAT, 0, "%s has meta pages of two page sizes (%llu and %llu): it is damaged; restore "
                            "a copy or rebuild the index (docs/robustness.md, \"Index\")", path, (unsigned long long)ps0,
                            (unsigned long long)ps1);
    if ((uint64_t)st.st_size < need)
        return sh_error_set(err, SH_EFORMAT, (size_t)st.st_size, "%s is truncated: it has %lld bytes and its last committed "
                            "state needs %llu; restore a copy, or rebuild the index from its sweeps (docs/robustness.md, "
                            "\"Index\")", path, (long long)st.st_size, (unsigned long long)need);
    if (used) *used = need;
    return SH_OK;
}

/* ---- document records ------------------------------------------------------ */

sh_status sh_ixdoc_decode(const void *v, size_t n, uint32_t doc, sh_ixdoc *d, const char **url, size_t *url_len,
                          sh_error *err)
{
    const unsigned char *p = (const unsigned char *)v;
    uint32_t i;
    uint64_t prev = 0;
    if (n < sizeof *d)
        return sh_error_set(err, SH_EFORMAT, 0, "document %u: its record has %zu bytes, fewer than its %zu-byte header: the "
                            "index is damaged (shingle index check)", doc + 1, n, sizeof *d);
    memcpy(d, p, sizeof *d);
    if ((uint64_t)sizeof *d + 8 * (uint64_t)d->n_values + d->url_len != n)
        return sh_error_set(err, SH_EFORMAT, 0, "document %u: its record has %zu bytes for %u values and a %u-byte URL: the "
                            "index is damaged (shingle index check)", doc + 1, n, d->n_values, d->url_len);
    if (d->dup > 3 || d->cls > 255)
        return sh_error_set(err, SH_EFORMAT, 0, "document %u: its relation (%u) or modulus steps (%u) are out of range: the "
                            "index is damaged (shingle index check)", doc + 1, d->dup, d->cls);
    for (i = 0; i < d->n_values; i++) {
        uint64_t x;
        memcpy(&x, p + sizeof *d + 8 * (size_t)i, 8);
        if (i > 0 && x <= prev)
            return sh_error_set(err, SH_EFORMAT, 0, "document %u: its sketch values do not ascend at value %u: the index is "
                                "damaged (shingle index check)", doc + 1, i);
        prev = x;
    }
    if (url) *url = (const char *)p + sizeof *d + 8 * (size_t)d->n_values;
    if (url_len) *url_len = d->url_len;
    return SH_OK;
}

void sh_ixdoc_sketch(const sh_sketch_params *p, const sh_ixdoc *d, const void *v, sh_sketch *out)
{
    out->p = *p;
    if (p->kind == SH_SKETCH_CLASS) out->p.cls = d->cls > 63 ? 63 : d->cls;
    if (p->kind == SH_SKETCH_MOD) out->p.m = sh_mod_step(p->m, d->cls); /* cls holds the modulus steps */
    out->n_shingles = d->n_shingles;
    out->n_tokens = d->n_tokens;
    out->n = d->n_values;
    /* a MIN sketch never holds more than s: the estimator walks at most s of each */
    if ((p->kind == SH_SKETCH_MIN || p->kind == SH_SKETCH_MINMOD) && out->n > p->s) out->n = p->s;
    memcpy(out->v, (const char *)v + sizeof *d, 8 * (size_t)out->n);
}

/* ---- the walk, in a child process ------------------------------------------ */

typedef struct walker {
    FILE *out;
    MDB_txn *t;
    uint64_t next, n_sweeps, problems;
    unsigned shown;           /* problems printed for the current table */
    const char *table;
} walker;

static void problem(walker *w, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

static void problem(walker *w, const char *fmt, ...)
{
    va_list ap;
    w->problems++;
    if (++w->shown > 20) return; /* enough to see what is wrong; the count says the rest */
    fprintf(w->out, "problem %s: ", w->table);
    va_start(ap, fmt);
    vfprintf(w->out, fmt, ap);
    va_end(ap);
    fputc('\n', w->out);
    fflush(w->out);
}

static uint32_t be32(const MDB_val *v) { return sh_load_be32(v->mv_data); }

/* LMDB's default order of keys and of sorted duplicates: bytes, then length. */
static int keycmp(const unsigned char *a, size_t an, const void *b, size_t bn)
{
    int c = memcmp(a, b, an < bn ? an : bn);
    return c ? c : (an < bn ? -1 : an > bn);
}

static int remember(unsigned char **buf, size_t *cap, size_t *n, const MDB_val *x)
{
    if (x->mv_size > *cap) {
        unsigned char *b = (unsigned char *)realloc(*buf, x->mv_size);
        if (!b) return 0;
        *buf = b;
        *cap = x->mv_size;
    }
    memcpy(*buf, x->mv_data, x->mv_size);
    *n = x->mv_size;
    return 1;
}

/* Walk one table: every key and value (every duplicate too), checked by kind. */
static uint64_t walk_table(walker *w, MDB_dbi dbi, int kind, uint64_t *values)
{
    MDB_cursor *c;
    MDB_val k, v;
    uint64_t entries = 0;
    unsigned char *prev_k = NULL, *prev_v = NULL;
    size_t prev_kn = 0, prev_vn = 0, prev_kcap = 0, prev_vcap = 0;
    int rc;
    w->shown = 0;
    fprintf(w->out, "at %s\n", w->table);
    fflush(w->out);
    if ((rc = mdb_cursor_open(w->t, dbi, &c)) != 0) { problem(w, "cannot read it: %s", mdb_strerror(rc)); return 0; }
    for (rc = mdb_cursor_get(c, &k, &v, MDB_FIRST); rc == 0; rc = mdb_cursor_get(c, &k, &v, MDB_NEXT)) {
        /* records come in (key, value) order; one that does not means the
         * walk went round damaged pages and would never end */
        if (entries > 0) {
            int ck;
            if (dbi == 0 && k.mv_size == 8 && prev_kn == 8) { /* the free list: native integer keys */
                uint64_t a, b;
                memcpy(&a, prev_k, 8);
                memcpy(&b, k.mv_data, 8);
                ck = (a > b) - (a < b);
            } else {
                ck = keycmp(prev_k, prev_kn, k.mv_data, k.mv_size);
            }
            if (ck > 0 || (ck == 0 && keycmp(prev_v, prev_vn, v.mv_data, v.mv_size) >= 0)) {
                problem(w, "record %llu is out of order: the walk went back (damaged pages); stopped reading the table",
                        (unsigned long long)entries + 1);
                break;
            }
        }
        if (!remember(&prev_k, &prev_kcap, &prev_kn, &k) || !remember(&prev_v, &prev_vcap, &prev_vn, &v)) {
            problem(w, "out of memory");
            break;
        }
        entries++;
        switch (kind) {
        case 1: { /* docs */
            sh_ixdoc d;
            sh_error e;
            uint32_t doc;
            if (k.mv_size != 4) { problem(w, "a key of %zu bytes, not a 4-byte document id", k.mv_size); break; }
            doc = be32(&k);
            if (doc >= w->next) problem(w, "document %u is at or above the next id %llu", doc + 1, (unsigned long long)w->next);
            if (sh_ixdoc_decode(v.mv_data, v.mv_size, doc, &d, NULL, NULL, &e) != SH_OK) { problem(w, "%s", e.msg); break; }
            if (d.sweep >= w->n_sweeps) problem(w, "document %u belongs to sweep %u of %llu", doc + 1, d.sweep,
                                                (unsigned long long)w->n_sweeps);
            break;
        }
        case 2: case 3: case 4: case 5: case 7: case 9: case 10: case 11: case 12: case 13: /* lists of document ids */
            if (kind == 7 || kind == 9 ? k.mv_size != 4 : k.mv_size != 8) {
                problem(w, "a key of %zu bytes", k.mv_size);
            } else if (kind == 7 && be32(&k) >= w->next) {
                problem(w, "cluster %u is at or above the next id", be32(&k) + 1);
            } else if (kind == 9 && be32(&k) >= w->n_sweeps) {
                problem(w, "sweep %u of %llu", be32(&k), (unsigned long long)w->n_sweeps);
            }
            if (v.mv_size != 4) problem(w, "a document id of %zu bytes", v.mv_size);
            else if (be32(&v) >= w->next) problem(w, "document %u is at or above the next id %llu", be32(&v) + 1,
                                                  (unsigned long long)w->next);
            break;
        case 6: /* cluster */
            if (k.mv_size != 4 || v.mv_size != 4) problem(w, "a record of %zu + %zu bytes, not 4 + 4", k.mv_size, v.mv_size);
            else if (be32(&k) >= w->next || be32(&v) >= w->next)
                problem(w, "document %u in cluster %u: at or above the next id", be32(&k) + 1, be32(&v) + 1);
            break;
        case 8: /* sweeps */
            if (k.mv_size < 1 || k.mv_size > 255 || v.mv_size != 8) problem(w, "a sweep record of %zu + %zu bytes", k.mv_size, v.mv_size);
            else {
                if (be32(&v) >= w->n_sweeps) problem(w, "sweep id %u of %llu", be32(&v), (unsigned long long)w->n_sweeps);
                if (values) *values += sh_load_be32((const char *)v.mv_data + 4);
            }
            break;
        default:
            break;
        }
        if (kind != 8 && values) *values += 1;
    }
    if (rc != MDB_NOTFOUND && rc != 0) problem(w, "reading stopped: %s", mdb_strerror(rc));
    mdb_cursor_close(c);
    free(prev_k);
    free(prev_v);
    fprintf(w->out, "table %s %llu\n", w->table, (unsigned long long)entries);
    fflush(w->out);
    return entries;
}

static void walk_index(const char *dir, walker *w0);

/* The child's work: every line to out, "done N" (the problems) last. */
static int walk(const char *dir, FILE *out)
{
    walker w;
    memset(&w, 0, sizeof w);
    w.out = out;
    walk_index(dir, &w);
    fprintf(out, "done %llu\n", (unsigned long long)w.problems);
    fflush(out);
    return w.problems ? 1 : 0;
}

static void walk_index(const char *dir, walker *wp)
{
    static const char *const names[SH_INDEX_NTABLES] = SH_INDEX_TABLE_NAMES;
    static const int dups[SH_INDEX_NTABLES] = SH_INDEX_DUPSORT;
#define w (*wp)
    MDB_env *env = NULL;
    MDB_dbi dbi[SH_INDEX_NTABLES];
    int have[SH_INDEX_NTABLES];
    MDB_val k, v;
    sh_error e;
    uint64_t used, counts[SH_INDEX_NTABLES], sweep_total = 0;
    int rc, i;
    w.table = "data.mdb";
    if (sh_index_check_file(dir, &used, &e) != SH_OK) { problem(&w, "%s", e.msg); return; }
    if ((rc = mdb_env_create(&env)) != 0) { problem(&w, "%s", mdb_strerror(rc)); return; }
    mdb_env_set_maxdbs(env, SH_INDEX_NTABLES + 2);
    mdb_env_set_mapsize(env, (size_t)(used > ((uint64_t)1 << 30) ? used : ((uint64_t)1 << 30)));
    if ((rc = mdb_env_open(env, dir, MDB_RDONLY, 0644)) != 0) { problem(&w, "cannot open: %s", mdb_strerror(rc)); return; }
    if ((rc = mdb_txn_begin(env, NULL, MDB_RDONLY, &w.t)) != 0) { problem(&w, "cannot read: %s", mdb_strerror(rc)); return; }
    /* LMDB's own tables: the free list (writers need it whole) and the table of tables */
    w.table = "free list";
    walk_table(&w, 0, -1, NULL);
    w.table = "tables";
    walk_table(&w, 1, -1, NULL);
    fprintf(w.out, "at table names\n");
    fflush(w.out);
    for (i = 0; i < SH_INDEX_NTABLES; i++) {
        have[i] = 1;
        if ((rc = mdb_dbi_open(w.t, names[i], dups[i] ? MDB_DUPSORT | MDB_DUPFIXED : 0, &dbi[i])) != 0) {
            if (rc == MDB_NOTFOUND && i >= SH_INDEX_FIRST_OPTIONAL) { have[i] = 0; continue; }
            w.table = names[i];
            problem(&w, "the table is missing (%s): this is not a shingle index", mdb_strerror(rc));
            return;
        }
    }
    w.table = "meta";
    k.mv_size = 6; k.mv_data = (void *)(uintptr_t)"format";
    if (mdb_get(w.t, dbi[0], &k, &v) == 0 && (v.mv_size != 4 || sh_load_be32(v.mv_data) != SH_INDEX_FORMAT))
        problem(&w, "the format is not %u", SH_INDEX_FORMAT);
    k.mv_size = 4; k.mv_data = (void *)(uintptr_t)"next";
    if (mdb_get(w.t, dbi[0], &k, &v) == 0) {
        if (v.mv_size == 4) w.next = sh_load_be32(v.mv_data);
        else problem(&w, "the next id has %zu bytes", v.mv_size);
    }
    k.mv_size = 6; k.mv_data = (void *)(uintptr_t)"params";
    if (mdb_get(w.t, dbi[0], &k, &v) == 0) {
        sh_sketch *sk;
        if (sh_sketch_deserialize((const unsigned char *)v.mv_data, v.mv_size, &sk, &e) != SH_OK)
            problem(&w, "the stored parameters: %s", e.msg);
        else free(sk);
    }
    {
        MDB_stat ms;
        if (mdb_stat(w.t, dbi[8], &ms) == 0) w.n_sweeps = ms.ms_entries;
    }
    /* a read-only commit keeps the table handles; each table is then read in
     * a transaction of its own, so a damaged one does not hide the others */
    if ((rc = mdb_txn_commit(w.t)) != 0) { w.t = NULL; problem(&w, "cannot read: %s", mdb_strerror(rc)); return; }
    w.t = NULL;
    for (i = 0; i < SH_INDEX_NTABLES; i++) {
        w.table = names[i];
        counts[i] = 0;
        if (!have[i]) continue;
        if ((rc = mdb_txn_begin(env, NULL, MDB_RDONLY, &w.t)) != 0) { problem(&w, "cannot read: %s", mdb_strerror(rc)); continue; }
        walk_table(&w, dbi[i], i, i == 8 ? &sweep_total : &counts[i]);
        mdb_txn_abort(w.t);
        w.t = NULL;
    }
    /* counts that must agree: ids 0..next-1 all present, each in one cluster,
     * one members entry, one sweep */
    w.table = "counts";
    w.shown = 0;
    if (counts[1] != w.next)
        problem(&w, "%llu document records for ids up to %llu", (unsigned long long)counts[1], (unsigned long long)w.next);
    if (counts[6] != counts[1])
        problem(&w, "%llu documents have a cluster, of %llu", (unsigned long long)counts[6], (unsigned long long)counts[1]);
    if (counts[7] != counts[1])
        problem(&w, "%llu cluster members for %llu documents", (unsigned long long)counts[7], (unsigned long long)counts[1]);
    if (counts[9] != counts[1] || sweep_total != counts[1])
        problem(&w, "sweeps list %llu documents (their counts say %llu) of %llu", (unsigned long long)counts[9],
                (unsigned long long)sweep_total, (unsigned long long)counts[1]);
    for (i = 3; i <= 5; i++) /* urls, raw, canon with their delta tables (delta_urls, delta_raw, delta_canon) */
        if (counts[i] + counts[i + 8] != counts[1])
            problem(&w, "tables %s and %s list %llu documents of %llu", names[i], names[i + 8],
                    (unsigned long long)(counts[i] + counts[i + 8]), (unsigned long long)counts[1]);
    mdb_env_close(env);
#undef w
}

sh_status sh_index_check(const char *dir, sh_index_check_fn fn, void *ctx, uint64_t *problems, sh_error *err)
{
    int fds[2], status = 0;
    pid_t pid;
    FILE *in;
    char line[1200], where[300] = "opening the index";
    int done = 0;
    *problems = 0;
    if (pipe(fds) != 0) return sh_error_set(err, SH_EIO, 0, "cannot check %s: pipe: %s", dir, strerror(errno));
    fflush(NULL);
    pid = fork();
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        return sh_error_set(err, SH_EIO, 0, "cannot check %s: fork: %s", dir, strerror(errno));
    }
    if (pid == 0) {
        FILE *out;
        close(fds[0]);
        dup2(fds[1], 2); /* what LMDB prints before it aborts comes into the report */
        out = fdopen(fds[1], "w");
        if (!out) _exit(2);
        _exit(walk(dir, out));
    }
    close(fds[1]);
    in = fdopen(fds[0], "r");
    if (!in) { close(fds[0]); waitpid(pid, &status, 0); return sh_error_set(err, SH_EIO, 0, "cannot check %s: fdopen", dir); }
    while (fgets(line, sizeof line, in)) {
        line[strcspn(line, "\n")] = 0;
        if (strncmp(line, "at ", 3) == 0) snprintf(where, sizeof where, "reading table %.200s", line + 3);
        else if (strncmp(line, "table ", 6) == 0) fn(ctx, "table", line + 6);
        else if (strncmp(line, "problem ", 8) == 0) { fn(ctx, "problem", line + 8); (*problems)++; }
        else if (strncmp(line, "done ", 5) == 0) { done = 1; *problems = strtoull(line + 5, NULL, 10); }
        else if (line[0]) fn(ctx, "lmdb", line);
    }
    fclose(in);
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
    if (WIFSIGNALED(status) || !done) {
        char msg[400];
        int sig = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
        snprintf(msg, sizeof msg, "the check stopped %s while %s: LMDB found the index damaged there",
                 sig == SIGABRT ? "on an LMDB assertion (SIGABRT)" : sig == SIGSEGV ? "with a segmentation fault (SIGSEGV)"
                 : sig == SIGBUS ? "with a bus error (SIGBUS)" : sig ? "on a signal" : "early", where);
        fn(ctx, "crash", msg);
        (*problems)++;
    }
    return SH_OK;
}
