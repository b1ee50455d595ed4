/* External sort: radix-sorted runs within a memory budget, merged with a
 * loser tree. See extsort.h for the contract, docs/formats-runs.md for the
 * run file format. */
#include "extsort.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>
#include <zlib.h>

#include "byteorder.h"

#if defined(__GNUC__)
#define SH_INLINE static inline __attribute__((always_inline))
#else
#define SH_INLINE static inline
#endif

#define RUN_MAGIC       "SHRUN\0\0\1"
#define RUN_VERSION     1u
#define RUN_HEADER      32u
#define RUN_TRAILER     8u

#define INITIAL_BUFFER  (64u * 1024)  /* first record buffer, grown by doubling */
#define SMALL_SORT      24u           /* insertion sort at or below this many records */
#define LSD_BYTES       (256u * 1024) /* a bucket this small is LSD sorted in cache */
#define MSD_DEPTH       3u            /* MSD passes at most; bounds the recursion */

/* ---------------------------------------------------------------- helpers */

SH_INLINE void copy_rec(unsigned char *d, const unsigned char *s, size_t rs)
{
    /* Constant sizes let the compiler emit plain moves for the common records. */
    switch (rs) {
    case 8: memcpy(d, s, 8); break;
    case 12: memcpy(d, s, 12); break;
    case 16: memcpy(d, s, 16); break;
    default: memcpy(d, s, rs); break;
    }
}

SH_INLINE int key_cmp(const unsigned char *a, const unsigned char *b, size_t ks)
{
    while (ks >= 8) {
        uint64_t x = sh_load_be64(a), y = sh_load_be64(b);
        if (x != y)
            return x < y ? -1 : 1;
        a += 8; b += 8; ks -= 8;
    }
    if (ks >= 4) {
        uint32_t x = sh_load_be32(a), y = sh_load_be32(b);
        if (x != y)
            return x < y ? -1 : 1;
        a += 4; b += 4; ks -= 4;
    }
    return ks ? memcmp(a, b, ks) : 0;
}

/* zlib's crc32 takes a uInt length; feed large buffers in slices. */
static uint32_t crc_update(uint32_t crc, const unsigned char *p, size_t n)
{
    uLong c = crc;
    while (n > 0) {
        uInt k = n > (1u << 30) ? (1u << 30) : (uInt)n;
        c = crc32(c, p, k);
        p += k; n -= k;
    }
    return (uint32_t)c;
}

/* ---------------------------------------------------------- radix sort */

typedef struct sort_params {
    size_t rs, ks;
} sort_params;

/* Stable insertion sort of m records at a; tmp holds one record. */
static void insertion_sort(const sort_params *p, unsigned char *a, size_t m, unsigned char *tmp)
{
    size_t rs = p->rs, i, j;
    for (i = 1; i < m; i++) {
        if (key_cmp(a + i * rs, a + (i - 1) * rs, p->ks) >= 0)
            continue;
        memcpy(tmp, a + i * rs, rs);
        j = i - 1;
        while (j > 0 && key_cmp(tmp, a + (j - 1) * rs, p->ks) < 0)
            j--;
        memmove(a + (j + 1) * rs, a + j * rs, (i - j) * rs);
        memcpy(a + j * rs, tmp, rs);
    }
}

/* Scatters the m records of src into dst by key byte d, stably; cnt holds the
 * per-value counts and is turned into start positions. */
static void scatter(const sort_params *p, const unsigned char *src, unsigned char *dst,
                    size_t m, size_t d, size_t cnt[256])
{
    size_t rs = p->rs, sum = 0, i, c;
    unsigned char *pos[256];
    for (c = 0; c < 256; c++) {
        pos[c] = dst + sum * rs;
        sum += cnt[c];
    }
    for (i = 0; i < m; i++) {
        const unsigned char *r = src + i * rs;
        unsigned char **q = &pos[r[d]];
        copy_rec(*q, r, rs);
        *q += rs;
    }
}

/* Returns 1 if all m records share key byte d (the pass can be skipped). */
static int count_byte(const sort_params *p, const unsigned char *a, size_t m, size_t d,
                      size_t cnt[256])
{
    size_t rs = p->rs, i;
    memset(cnt, 0, 256 * sizeof cnt[0]);
    for (i = 0; i < m; i++)
        cnt[a[i * rs + d]]++;
    return cnt[a[d]] == m;
}

/* LSD radix sort of m records at a by key bytes d..ks-1, least significant
 * first, ping-ponging between a and b; the result ends in b if to_b, else a. */
static void lsd_sort(const sort_params *p, unsigned char *a, unsigned char *b, size_t m,
                     size_t d, int to_b)
{
    size_t cnt[256], j = p->ks;
    unsigned char *cur = a, *oth = b, *want = to_b ? b : a;
    while (j-- > d) {
        if (count_byte(p, cur, m, j, cnt))
            continue;
        scatter(p, cur, oth, m, j, cnt);
        unsigned char *t = cur; cur = oth; oth = t;
    }
    if (cur != want)
        memcpy(want, cur, m * p->rs);
}

/* Sorts the m records at a by key bytes d..ks-1, b being scratch of the same
 * size; the result ends in b if to_b, else in a. The top bytes are split MSD
 * (stable, out of place) so that each bucket fits in cache, then each bucket is
 * finished LSD (docs/vectors.md, "Sorting and union-find at scale": keys are
 * uniform fingerprints, so the buckets are even). */
static void msd_sort(const sort_params *p, unsigned char *a, unsigned char *b, size_t m,
                     size_t d, int to_b)
{
    size_t rs = p->rs, cnt[256], off = 0, c;
    for (;;) {
        if (d >= p->ks) {               /* all keys equal */
            if (to_b)
                memcpy(b, a, m * rs);
            return;
        }
        if (m <= SMALL_SORT) {
            if (to_b) {
                memcpy(b, a, m * rs);
                insertion_sort(p, b, m, a);
            } else {
                insertion_sort(p, a, m, b);
            }
            return;
        }
        if (m * rs <= LSD_BYTES || d >= MSD_DEPTH || p->ks - d == 1) {
            lsd_sort(p, a, b, m, d, to_b);
            return;
        }
        if (!count_byte(p, a, m, d, cnt))
            break;
        d++;                            /* one value only: next byte */
    }
    scatter(p, a, b, m, d, cnt);
    for (c = 0; c < 256; c++) {
        if (cnt[c])
            msd_sort(p, b + off * rs, a + off * rs, cnt[c], d + 1, !to_b);
        off += cnt[c];
    }
}

void sh_radix_sort(void *recs, void *aux, size_t n, size_t record_size, size_t key_size)
{
    sort_params p;
    if (n < 2)
        return;
    p.rs = record_size;
    p.ks = key_size;
    msd_sort(&p, recs, aux, n, 0, 0);
}

void sh_extsort_keep_first(void *acc, const void *rec, void *ud)
{
    (void)acc; (void)rec; (void)ud;
}

/* ----------------------------------------------------------- the sorter */

typedef struct run_file {
    char *path;
    uint64_t count;
} run_file;

typedef struct run_reader {
    int fd;
    const char *path;
    unsigned char *buf, *cur, *end;
    size_t cap;            /* bytes, a multiple of the record size */
    uint64_t left;         /* payload bytes not read yet */
    uint64_t off;          /* file offset of the next read */
    uint32_t crc, want_crc;
    int done;
} run_reader;

typedef struct merger {
    run_reader *in;
    unsigned *tree;        /* tree[0]: winner; tree[1..k-1]: losers */
    unsigned k;
    unsigned char *bufs;
    size_t bufs_bytes;
} merger;

typedef struct run_writer {
    int fd;
    char *tmp;             /* path while being written */
    unsigned char *buf;    /* NULL: bulk writes only */
    size_t cap, used;      /* bytes */
    uint64_t count, payload;
    uint32_t crc;
} run_writer;

enum { ST_ADDING, ST_MEMORY, ST_MERGING, ST_DONE };

struct sh_extsort {
    size_t rs, ks, budget;
    unsigned fan_final, fan_mid;
    sh_extsort_combine_fn combine;
    void *combine_ud;
    char *temp_dir, *run_dir;
    unsigned seq;

    unsigned char *buf, *aux;  /* record buffer and radix scratch */
    size_t buf_cap, aux_cap, buf_n, max_records;  /* in records */

    run_file *runs;
    size_t nruns, runs_cap;

    int state;
    sh_status failed;
    sh_error fail;

    size_t mem_pos;            /* ST_MEMORY: next record to return */
    merger m;                  /* ST_MERGING */
    unsigned char *pending;    /* one record being combined */
    int has_pending;

    size_t mem_now;
    sh_extsort_stats st;
};

static void mem_add(sh_extsort *s, size_t bytes)
{
    s->mem_now += bytes;
    if (s->mem_now > s->st.peak_memory)
        s->st.peak_memory = s->mem_now;
}

static sh_status nomem(sh_error *e, size_t bytes)
{
    return sh_error_set(e, SH_ENOMEM, 0, "extsort: cannot allocate %zu bytes; lower memory_budget", bytes);
}

static sh_status io_error(sh_error *e, int errnum, const char *what, const char *path)
{
    char msg[160];
    const char *hint = "";
    if (strerror_r(errnum, msg, sizeof msg) != 0)
        snprintf(msg, sizeof msg, "errno %d", errnum);
    if (errnum == ENOSPC || errnum == EFBIG
#ifdef EDQUOT
        || errnum == EDQUOT
#endif
        )
        hint = "; free space there or set temp_dir to a larger file system";
    else if (errnum == EACCES || errnum == EPERM || errnum == EROFS || errnum == ENOENT ||
             errnum == ENOTDIR)
        hint = "; set temp_dir to an existing writable directory";
    sh_error_set(e, SH_EIO, 0, "extsort: cannot %s '%s': %s%s", what, path, msg, hint);
    e->sys_errno = errnum;
    return SH_EIO;
}

static sh_status format_error(sh_error *e, const char *path, uint64_t off, const char *what)
{
    return sh_error_set(e, SH_EFORMAT, (size_t)off,
                        "extsort: run file '%s' %s (at byte %llu); it was changed after it "
                        "was written: keep other programs out of the temp directory and rerun",
                        path, what, (unsigned long long)off);
}

static char *dup_str(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d)
        memcpy(d, s, n);
    return d;
}

sh_status sh_extsort_new(sh_extsort **out, const sh_extsort_config *cfg, sh_error *err)
{
    sh_extsort *s;
    const char *dir;
    unsigned fan, by_budget;

    *out = NULL;
    if (cfg->record_size < 1 || cfg->record_size > SH_EXTSORT_MAX_RECORD)
        return sh_error_set(err, SH_EINVAL, 0, "extsort: record_size %zu is out of range 1..%u",
                            cfg->record_size, SH_EXTSORT_MAX_RECORD);
    if (cfg->key_size < 1 || cfg->key_size > cfg->record_size)
        return sh_error_set(err, SH_EINVAL, 0, "extsort: key_size %zu is out of range 1..%zu",
                            cfg->key_size, cfg->record_size);
    if (cfg->memory_budget < SH_EXTSORT_MIN_BUDGET)
        return sh_error_set(err, SH_EINVAL, 0, "extsort: memory_budget %zu is below the minimum %u bytes",
                            cfg->memory_budget, SH_EXTSORT_MIN_BUDGET);
    if (cfg->max_fan_in == 1)
        return sh_error_set(err, SH_EINVAL, 0, "extsort: max_fan_in must be at least 2 (or 0 for the default)");

    dir = cfg->temp_dir;
    if (!dir || !*dir)
        dir = getenv("TMPDIR");
    if (!dir || !*dir)
        dir = "/tmp";

    s = calloc(1, sizeof *s);
    if (!s)
        return nomem(err, sizeof *s);
    s->rs = cfg->record_size;
    s->ks = cfg->key_size;
    s->budget = cfg->memory_budget;
    s->combine = cfg->combine;
    s->combine_ud = cfg->combine_ud;
    fan = cfg->max_fan_in ? cfg->max_fan_in : SH_EXTSORT_DEFAULT_FAN_IN;
    by_budget = s->budget / SH_EXTSORT_MIN_RUN_BUFFER > 65536u ? 65536u
              : (unsigned)(s->budget / SH_EXTSORT_MIN_RUN_BUFFER);
    s->fan_final = fan < by_budget ? fan : by_budget;          /* k input buffers */
    s->fan_mid = fan < by_budget - 1 ? fan : by_budget - 1;    /* k inputs + 1 output */
    s->max_records = s->budget / (2 * s->rs);                  /* buffer + radix scratch */
    s->temp_dir = dup_str(dir);
    s->pending = malloc(s->rs);
    if (!s->temp_dir || !s->pending) {
        sh_extsort_free(s);
        return nomem(err, s->rs);
    }
    *out = s;
    return SH_OK;
}

/* ------------------------------------------------------------ run files */

static sh_status ensure_run_dir(sh_extsort *s, sh_error *e)
{
    size_t n;
    if (s->run_dir)
        return SH_OK;
    n = strlen(s->temp_dir) + sizeof "/shingle-sort-XXXXXX";
    s->run_dir = malloc(n);
    if (!s->run_dir)
        return nomem(e, n);
    snprintf(s->run_dir, n, "%s/shingle-sort-XXXXXX", s->temp_dir);
    if (!mkdtemp(s->run_dir)) {
        int errnum = errno;
        free(s->run_dir);
        s->run_dir = NULL;
        return io_error(e, errnum, "create a run directory in", s->temp_dir);
    }
    return SH_OK;
}

static sh_status write_full(int fd, const unsigned char *p, size_t n, const char *path, sh_error *e)
{
    while (n > 0) {
        ssize_t w = write(fd, p, n > ((size_t)1 << 30) ? ((size_t)1 << 30) : n);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return io_error(e, errno, "write run file", path);
        }
        if (w == 0)
            return io_error(e, EIO, "write run file", path);
        p += w;
        n -= (size_t)w;
    }
    return SH_OK;
}

/* Reads exactly n bytes at off; an early end of file is a format error. */
static sh_status pread_full(int fd, unsigned char *p, size_t n, uint64_t off, const char *path,
                            sh_error *e)
{
    while (n > 0) {
        ssize_t r = pread(fd, p, n > ((size_t)1 << 30) ? ((size_t)1 << 30) : n, (off_t)off);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            return io_error(e, errno, "read run file", path);
        }
        if (r == 0)
            return format_error(e, path, off, "ends early");
        p += r;
        n -= (size_t)r;
        off += (uint64_t)r;
    }
    return SH_OK;
}

static void writer_abort(run_writer *w)
{
    if (w->fd >= 0)
        close(w->fd);
    w->fd = -1;
    if (w->tmp) {
        unlink(w->tmp);
        free(w->tmp);
        w->tmp = NULL;
    }
}

/* Opens a new run file for writing; buf/cap (may be NULL/0) buffer writer_put. */
static sh_status writer_open(sh_extsort *s, run_writer *w, unsigned char *buf, size_t cap,
                             sh_error *e)
{
    unsigned char zero[RUN_HEADER];
    size_t n;
    sh_status st;

    memset(w, 0, sizeof *w);
    w->fd = -1;
    w->buf = buf;
    w->cap = cap;
    if ((st = ensure_run_dir(s, e)) != SH_OK)
        return st;
    n = strlen(s->run_dir) + 32;
    w->tmp = malloc(n);
    if (!w->tmp)
        return nomem(e, n);
    snprintf(w->tmp, n, "%s/run-%06u.tmp", s->run_dir, ++s->seq);
    w->fd = open(w->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (w->fd < 0) {
        st = io_error(e, errno, "create run file", w->tmp);
        free(w->tmp);
        w->tmp = NULL;
        return st;
    }
    memset(zero, 0, sizeof zero);  /* the header is written at close, when the count is known */
    if ((st = write_full(w->fd, zero, sizeof zero, w->tmp, e)) != SH_OK)
        return st;
    s->st.bytes_written += RUN_HEADER;
    return SH_OK;
}

static sh_status writer_bulk(sh_extsort *s, run_writer *w, const unsigned char *p, size_t bytes,
                             sh_error *e)
{
    sh_status st;
    w->crc = crc_update(w->crc, p, bytes);
    if ((st = write_full(w->fd, p, bytes, w->tmp, e)) != SH_OK)
        return st;
    w->payload += bytes;
    s->st.bytes_written += bytes;
    return SH_OK;
}

static sh_status writer_flush(sh_extsort *s, run_writer *w, sh_error *e)
{
    sh_status st = SH_OK;
    if (w->used) {
        st = writer_bulk(s, w, w->buf, w->used, e);
        w->used = 0;
    }
    return st;
}

SH_INLINE sh_status writer_put(sh_extsort *s, run_writer *w, const unsigned char *rec, sh_error *e)
{
    if (w->used + s->rs > w->cap) {
        sh_status st = writer_flush(s, w, e);
        if (st != SH_OK)
            return st;
    }
    copy_rec(w->buf + w->used, rec, s->rs);
    w->used += s->rs;
    return SH_OK;
}

static void make_header(const sh_extsort *s, unsigned char h[RUN_HEADER], uint64_t count)
{
    memcpy(h, RUN_MAGIC, 8);
    sh_store_le32(h + 8, RUN_VERSION);
    sh_store_le32(h + 12, (uint32_t)s->rs);
    sh_store_le32(h + 16, (uint32_t)s->ks);
    sh_store_le32(h + 20, 0);
    sh_store_le64(h + 24, count);
}

/* Finishes the file (trailer, then the header now that the count is known)
 * and renames it to its final name, described in *rf. On error the temp file
 * is removed. */
static sh_status writer_close(sh_extsort *s, run_writer *w, run_file *rf, sh_error *e)
{
    unsigned char h[RUN_HEADER], t[RUN_TRAILER];
    sh_status st;
    size_t n;
    char *path;

    if ((st = writer_flush(s, w, e)) != SH_OK)
        goto fail;
    w->count = w->payload / s->rs;
    make_header(s, h, w->count);
    sh_store_le32(t, w->crc);
    sh_store_le32(t + 4, crc_update(0, h, sizeof h));
    if ((st = write_full(w->fd, t, sizeof t, w->tmp, e)) != SH_OK)
        goto fail;
    for (;;) {
        ssize_t r = pwrite(w->fd, h, sizeof h, 0);
        if (r == (ssize_t)sizeof h)
            break;
        if (r < 0 && errno == EINTR)
            continue;
        st = io_error(e, r < 0 ? errno : EIO, "write run file", w->tmp);
        goto fail;
    }
    s->st.bytes_written += RUN_TRAILER;
    if (close(w->fd) != 0) {
        w->fd = -1;
        st = io_error(e, errno, "close run file", w->tmp);
        goto fail;
    }
    w->fd = -1;
    n = strlen(w->tmp);
    path = malloc(n + 1);
    if (!path) {
        st = nomem(e, n + 1);
        goto fail;
    }
    memcpy(path, w->tmp, n - 4);            /* drop ".tmp" */
    path[n - 4] = '\0';
    if (rename(w->tmp, path) != 0) {
        st = io_error(e, errno, "rename run file", w->tmp);
        free(path);
        goto fail;
    }
    free(w->tmp);
    w->tmp = NULL;
    rf->path = path;
    rf->count = w->count;
    return SH_OK;
fail:
    writer_abort(w);
    return st;
}

static sh_status reader_fill(sh_extsort *s, run_reader *r, sh_error *e)
{
    size_t n;
    sh_status st;
    if (r->left == 0) {
        r->done = 1;
        return SH_OK;
    }
    n = r->left < r->cap ? (size_t)r->left : r->cap;
    if ((st = pread_full(r->fd, r->buf, n, r->off, r->path, e)) != SH_OK)
        return st;
    r->crc = crc_update(r->crc, r->buf, n);
    r->left -= n;
    r->off += n;
    r->cur = r->buf;
    r->end = r->buf + n;
    s->st.bytes_read += n;
    if (r->left == 0 && r->crc != r->want_crc) {
        char what[96];
        snprintf(what, sizeof what, "fails its payload checksum (stored 0x%08x, computed 0x%08x)",
                 (unsigned)r->want_crc, (unsigned)r->crc);
        return format_error(e, r->path, r->off, what);
    }
    return SH_OK;
}

/* Opens rf, checks its header, size and header checksum, reads the first chunk. */
static sh_status reader_open(sh_extsort *s, run_reader *r, const run_file *rf, unsigned char *buf,
                             size_t cap, sh_error *e)
{
    unsigned char h[RUN_HEADER], t[RUN_TRAILER];
    struct stat sb;
    uint64_t size, count, expect;
    char what[160];
    sh_status st;

    memset(r, 0, sizeof *r);
    r->path = rf->path;
    r->buf = buf;
    r->cap = cap;
    r->fd = open(rf->path, O_RDONLY | O_CLOEXEC);
    if (r->fd < 0)
        return io_error(e, errno, "open run file", rf->path);
    if (fstat(r->fd, &sb) != 0)
        return io_error(e, errno, "stat run file", rf->path);
    size = (uint64_t)sb.st_size;
    if ((st = pread_full(r->fd, h, size < RUN_HEADER ? (size_t)size : RUN_HEADER, 0, rf->path, e)) != SH_OK)
        return st;
    if (size >= 8 && memcmp(h, RUN_MAGIC, 8) != 0)
        return format_error(e, rf->path, 0, "is not a shingle run file (bad magic)");
    if (size < RUN_HEADER + RUN_TRAILER) {
        snprintf(what, sizeof what, "is truncated: %llu bytes, shorter than a header and trailer",
                 (unsigned long long)size);
        return format_error(e, rf->path, size, what);
    }
    if (sh_load_le32(h + 8) != RUN_VERSION) {
        snprintf(what, sizeof what, "has format version %u, this build reads version %u",
                 (unsigned)sh_load_le32(h + 8), RUN_VERSION);
        return format_error(e, rf->path, 8, what);
    }
    count = sh_load_le64(h + 24);
    expect = count > (UINT64_MAX - RUN_HEADER - RUN_TRAILER) / s->rs ? UINT64_MAX
           : RUN_HEADER + count * s->rs + RUN_TRAILER;
    if (size != expect) {
        snprintf(what, sizeof what, "is truncated or corrupt: %llu bytes, its header implies %llu",
                 (unsigned long long)size, (unsigned long long)expect);
        return format_error(e, rf->path, size < expect ? size : expect, what);
    }
    if ((st = pread_full(r->fd, t, sizeof t, size - RUN_TRAILER, rf->path, e)) != SH_OK)
        return st;
    if (crc_update(0, h, sizeof h) != sh_load_le32(t + 4))
        return format_error(e, rf->path, 0, "fails its header checksum");
    if (sh_load_le32(h + 12) != s->rs || sh_load_le32(h + 16) != s->ks) {
        snprintf(what, sizeof what, "holds %u-byte records with %u-byte keys, this sort uses %zu and %zu",
                 (unsigned)sh_load_le32(h + 12), (unsigned)sh_load_le32(h + 16), s->rs, s->ks);
        return format_error(e, rf->path, 12, what);
    }
    if (count != rf->count) {
        snprintf(what, sizeof what, "holds %llu records, %llu were written",
                 (unsigned long long)count, (unsigned long long)rf->count);
        return format_error(e, rf->path, 24, what);
    }
    s->st.bytes_read += RUN_HEADER + RUN_TRAILER;
    r->want_crc = sh_load_le32(t);
    r->crc = 0;
    r->left = count * s->rs;
    r->off = RUN_HEADER;
    return reader_fill(s, r, e);
}

/* ---------------------------------------------------------- loser tree */

/* Does run a's current record come before run b's? Exhausted runs come last;
 * equal keys go by run index, which keeps the sort stable (runs are in input
 * order). */
SH_INLINE int beats(const sh_extsort *s, const merger *m, unsigned a, unsigned b)
{
    const run_reader *ra = &m->in[a], *rb = &m->in[b];
    int c;
    if (ra->done)
        return 0;
    if (rb->done)
        return 1;
    c = key_cmp(ra->cur, rb->cur, s->ks);
    return c < 0 || (c == 0 && a < b);
}

/* Plays the matches below node of the heap-shaped tree whose leaves are
 * nodes k..2k-1; stores each match's loser, returns the winner. */
static unsigned tree_build(const sh_extsort *s, merger *m, unsigned node)
{
    unsigned x, y;
    if (node >= m->k)
        return node - m->k;
    x = tree_build(s, m, 2 * node);
    y = tree_build(s, m, 2 * node + 1);
    if (beats(s, m, x, y)) {
        m->tree[node] = y;
        return x;
    }
    m->tree[node] = x;
    return y;
}

static void merger_close(sh_extsort *s, merger *m)
{
    unsigned i;
    if (m->in) {
        for (i = 0; i < m->k; i++)
            if (m->in[i].fd >= 0)
                close(m->in[i].fd);
    }
    free(m->in);
    free(m->tree);
    free(m->bufs);
    s->mem_now -= m->bufs_bytes;
    memset(m, 0, sizeof *m);
}

/* Opens k runs with cap bytes of buffer each and plays the initial tree. */
static sh_status merger_open(sh_extsort *s, merger *m, const run_file *runs, unsigned k,
                             size_t cap, sh_error *e)
{
    unsigned i;
    sh_status st;
    memset(m, 0, sizeof *m);
    m->k = k;
    m->in = calloc(k, sizeof *m->in);
    m->tree = calloc(k, sizeof *m->tree);
    m->bufs = malloc((size_t)k * cap);
    if (m->in)
        for (i = 0; i < k; i++)
            m->in[i].fd = -1;
    if (!m->in || !m->tree || !m->bufs) {
        free(m->bufs);
        m->bufs = NULL;
        merger_close(s, m);
        return nomem(e, (size_t)k * cap);
    }
    m->bufs_bytes = (size_t)k * cap;
    mem_add(s, m->bufs_bytes);
    for (i = 0; i < k; i++) {
        if ((st = reader_open(s, &m->in[i], &runs[i], m->bufs + (size_t)i * cap, cap, e)) != SH_OK) {
            merger_close(s, m);
            return st;
        }
    }
    m->tree[0] = k > 1 ? tree_build(s, m, 1) : 0;
    return SH_OK;
}

/* The smallest current record, or NULL when all runs are exhausted. */
SH_INLINE const unsigned char *merger_top(const merger *m)
{
    const run_reader *r = &m->in[m->tree[0]];
    return r->done ? NULL : r->cur;
}

/* Advances past the top record and replays its path to the root
 * (ceil(log2 k) comparisons). */
SH_INLINE sh_status merger_pop(sh_extsort *s, merger *m, sh_error *e)
{
    unsigned w = m->tree[0], node;
    run_reader *r = &m->in[w];
    r->cur += s->rs;
    if (r->cur == r->end) {
        sh_status st = reader_fill(s, r, e);
        if (st != SH_OK)
            return st;
    }
    for (node = (w + m->k) >> 1; node > 0; node >>= 1) {
        unsigned t = m->tree[node];
        if (beats(s, m, t, w)) {
            m->tree[node] = w;
            w = t;
        }
    }
    m->tree[0] = w;
    return SH_OK;
}

/* ------------------------------------------------------------- phases */

/* Sorts the buffer and, with a combine function, folds equal keys. */
static sh_status sort_buffer(sh_extsort *s, sh_error *e)
{
    size_t rs = s->rs, w, i;
    if (s->buf_n < 2)
        return SH_OK;
    if (s->aux_cap < s->buf_n) {
        size_t want = s->buf_cap;
        free(s->aux);
        s->mem_now -= s->aux_cap * rs;
        s->aux_cap = 0;
        s->aux = malloc(want * rs);
        if (!s->aux)
            return nomem(e, want * rs);
        s->aux_cap = want;
        mem_add(s, want * rs);
    }
    sh_radix_sort(s->buf, s->aux, s->buf_n, rs, s->ks);
    if (s->combine) {
        for (w = 0, i = 1; i < s->buf_n; i++) {
            unsigned char *acc = s->buf + w * rs, *rec = s->buf + i * rs;
            if (key_cmp(acc, rec, s->ks) == 0) {
                s->combine(acc, rec, s->combine_ud);
            } else if (++w != i) {
                copy_rec(s->buf + w * rs, rec, rs);
            }
        }
        s->buf_n = w + 1;
    }
    return SH_OK;
}

static sh_status push_run(sh_extsort *s, const run_file *rf, sh_error *e)
{
    if (s->nruns == s->runs_cap) {
        size_t cap = s->runs_cap ? 2 * s->runs_cap : 16;
        run_file *r = realloc(s->runs, cap * sizeof *r);
        if (!r)
            return nomem(e, cap * sizeof *r);
        s->runs = r;
        s->runs_cap = cap;
    }
    s->runs[s->nruns++] = *rf;
    return SH_OK;
}

/* Sorts the buffer and writes it as a run file. */
static sh_status spill(sh_extsort *s, sh_error *e)
{
    run_writer w;
    run_file rf;
    sh_status st;
    if ((st = sort_buffer(s, e)) != SH_OK)
        return st;
    if ((st = writer_open(s, &w, NULL, 0, e)) != SH_OK) {
        writer_abort(&w);
        return st;
    }
    if ((st = writer_bulk(s, &w, s->buf, s->buf_n * s->rs, e)) != SH_OK) {
        writer_abort(&w);
        return st;
    }
    if ((st = writer_close(s, &w, &rf, e)) != SH_OK)
        return st;
    if ((st = push_run(s, &rf, e)) != SH_OK) {
        unlink(rf.path);
        free(rf.path);
        return st;
    }
    s->st.runs_spilled++;
    s->buf_n = 0;
    return SH_OK;
}

/* Merges runs[i..i+g) into one run file that takes their place. */
static sh_status merge_group(sh_extsort *s, size_t i, unsigned g, sh_error *e)
{
    size_t rs = s->rs, cap = s->budget / (g + 1) / rs * rs, j;
    unsigned char *obuf;
    const unsigned char *top;
    merger m;
    run_writer w;
    run_file rf;
    sh_status st;

    obuf = malloc(cap);
    if (!obuf)
        return nomem(e, cap);
    mem_add(s, cap);
    if ((st = merger_open(s, &m, s->runs + i, g, cap, e)) != SH_OK)
        goto out_buf;
    if ((st = writer_open(s, &w, obuf, cap, e)) != SH_OK)
        goto out_w;
    s->has_pending = 0;
    while ((top = merger_top(&m)) != NULL) {
        if (s->combine && s->has_pending && key_cmp(s->pending, top, s->ks) == 0) {
            s->combine(s->pending, top, s->combine_ud);
        } else if (s->combine) {
            if (s->has_pending && (st = writer_put(s, &w, s->pending, e)) != SH_OK)
                goto out_w;
            copy_rec(s->pending, top, rs);
            s->has_pending = 1;
        } else if ((st = writer_put(s, &w, top, e)) != SH_OK) {
            goto out_w;
        }
        if ((st = merger_pop(s, &m, e)) != SH_OK)
            goto out_w;
    }
    if (s->has_pending && (st = writer_put(s, &w, s->pending, e)) != SH_OK)
        goto out_w;
    s->has_pending = 0;
    if ((st = writer_close(s, &w, &rf, e)) != SH_OK)
        goto out_m;
    merger_close(s, &m);
    free(obuf);
    s->mem_now -= cap;
    for (j = i; j < i + g; j++) {
        unlink(s->runs[j].path);
        free(s->runs[j].path);
    }
    s->runs[i] = rf;
    memmove(s->runs + i + 1, s->runs + i + g, (s->nruns - i - g) * sizeof *s->runs);
    s->nruns -= g - 1;
    s->st.intermediate_merges++;
    return SH_OK;
out_w:
    writer_abort(&w);
out_m:
    merger_close(s, &m);
out_buf:
    free(obuf);
    s->mem_now -= cap;
    return st;
}

static sh_status add_impl(sh_extsort *s, const unsigned char *p, size_t n, sh_error *e)
{
    sh_status st;
    while (n > 0) {
        size_t take;
        if (s->buf_n == s->max_records && (st = spill(s, e)) != SH_OK)
            return st;
        if (s->buf_n == s->buf_cap) {
            size_t cap = s->buf_cap ? 2 * s->buf_cap : INITIAL_BUFFER / s->rs + 1;
            unsigned char *b;
            if (cap > s->max_records)
                cap = s->max_records;
            b = realloc(s->buf, cap * s->rs);
            if (!b)
                return nomem(e, cap * s->rs);
            s->buf = b;
            s->mem_now -= s->buf_cap * s->rs;
            mem_add(s, cap * s->rs);
            s->buf_cap = cap;
        }
        take = s->buf_cap - s->buf_n;
        if (take > n)
            take = n;
        memcpy(s->buf + s->buf_n * s->rs, p, take * s->rs);
        s->buf_n += take;
        s->st.records_in += take;
        p += take * s->rs;
        n -= take;
    }
    return SH_OK;
}

static void free_buffers(sh_extsort *s)
{
    free(s->buf);
    free(s->aux);
    s->mem_now -= (s->buf_cap + s->aux_cap) * s->rs;
    s->buf = s->aux = NULL;
    s->buf_cap = s->aux_cap = 0;
}

static sh_status finish_impl(sh_extsort *s, sh_error *e)
{
    sh_status st;
    size_t i = 0;
    if (s->nruns == 0) {                 /* all in memory: no file */
        if ((st = sort_buffer(s, e)) != SH_OK)
            return st;
        free(s->aux);
        s->mem_now -= s->aux_cap * s->rs;
        s->aux = NULL;
        s->aux_cap = 0;
        s->mem_pos = 0;
        s->state = ST_MEMORY;
        return SH_OK;
    }
    if (s->buf_n > 0 && (st = spill(s, e)) != SH_OK)
        return st;
    free_buffers(s);
    /* Merge consecutive groups (keeping runs in input order, hence stability),
     * sweeping along the list so that each pass reads each record once, and
     * only as much as needed for the final merge to fit. */
    while (s->nruns > s->fan_final) {
        size_t g = s->fan_mid;
        if (i + 1 >= s->nruns)
            i = 0;
        if (g > s->nruns - s->fan_final + 1)
            g = s->nruns - s->fan_final + 1;
        if (g > s->nruns - i)
            g = s->nruns - i;
        if ((st = merge_group(s, i, (unsigned)g, e)) != SH_OK)
            return st;
        i++;
    }
    st = merger_open(s, &s->m, s->runs, (unsigned)s->nruns,
                     s->budget / s->nruns / s->rs * s->rs, e);
    if (st != SH_OK)
        return st;
    s->st.final_fan_in = (unsigned)s->nruns;
    s->has_pending = 0;
    s->state = ST_MERGING;
    return SH_OK;
}

static sh_status read_merge(sh_extsort *s, unsigned char *out, size_t max, size_t *got,
                            sh_error *e)
{
    size_t rs = s->rs, n = 0;
    const unsigned char *top;
    sh_status st = SH_OK;
    while (n < max) {
        top = merger_top(&s->m);
        if (!top) {
            if (s->has_pending) {
                copy_rec(out + n++ * rs, s->pending, rs);
                s->has_pending = 0;
            }
            s->state = ST_DONE;
            merger_close(s, &s->m);
            break;
        }
        if (!s->combine) {
            copy_rec(out + n++ * rs, top, rs);
        } else if (s->has_pending && key_cmp(s->pending, top, s->ks) == 0) {
            s->combine(s->pending, top, s->combine_ud);
        } else if (s->has_pending) {
            copy_rec(out + n++ * rs, s->pending, rs);
            s->has_pending = 0;
            continue;                    /* top is taken on the next turn */
        } else {
            copy_rec(s->pending, top, rs);
            s->has_pending = 1;
        }
        if ((st = merger_pop(s, &s->m, e)) != SH_OK)
            break;
    }
    *got = n;
    return st;
}

/* ------------------------------------------------------------ public */

static sh_status failed(sh_extsort *s, sh_error *err)
{
    if (err)
        *err = s->fail;
    return s->failed;
}

static sh_status record_failure(sh_extsort *s, sh_status st, const sh_error *e, sh_error *err)
{
    s->failed = st;
    s->fail = *e;
    if (err)
        *err = *e;
    return st;
}

sh_status sh_extsort_open(sh_extsort **out, size_t record_size, size_t key_size, size_t memory, const char *temp_dir,
                          sh_extsort_combine_fn combine, sh_error *err)
{
    sh_extsort_config c;
    memset(&c, 0, sizeof c);
    c.record_size = record_size;
    c.key_size = key_size;
    c.memory_budget = memory < SH_EXTSORT_MIN_BUDGET ? SH_EXTSORT_MIN_BUDGET : memory;
    c.temp_dir = temp_dir;
    c.combine = combine;
    return sh_extsort_new(out, &c, err);
}

sh_status sh_extsort_add(sh_extsort *s, const void *records, size_t n, sh_error *err)
{
    sh_error e;
    sh_status st;
    if (s->failed)
        return failed(s, err);
    if (s->state != ST_ADDING)
        return sh_error_set(err, SH_EINVAL, 0, "extsort: add after finish; make a new sorter");
    if ((st = add_impl(s, records, n, &e)) != SH_OK)
        return record_failure(s, st, &e, err);
    return SH_OK;
}

sh_status sh_extsort_finish(sh_extsort *s, sh_error *err)
{
    sh_error e;
    sh_status st;
    if (s->failed)
        return failed(s, err);
    if (s->state != ST_ADDING)
        return sh_error_set(err, SH_EINVAL, 0, "extsort: finish called twice");
    if ((st = finish_impl(s, &e)) != SH_OK)
        return record_failure(s, st, &e, err);
    return SH_OK;
}

sh_status sh_extsort_read(sh_extsort *s, void *out, size_t max, size_t *n_out, sh_error *err)
{
    sh_error e;
    sh_status st = SH_OK;
    size_t n = 0;
    *n_out = 0;
    if (s->failed)
        return failed(s, err);
    if (s->state == ST_ADDING)
        return sh_error_set(err, SH_EINVAL, 0, "extsort: read before finish");
    if (max == 0)  /* 0 records would read as the end */
        return sh_error_set(err, SH_EINVAL, 0, "extsort: read asks for 0 records; ask for at least 1");
    switch (s->state) {
    case ST_MEMORY:
        n = s->buf_n - s->mem_pos;
        if (n > max)
            n = max;
        if (n)
            memcpy(out, s->buf + s->mem_pos * s->rs, n * s->rs);
        s->mem_pos += n;
        break;
    case ST_MERGING:
        st = read_merge(s, out, max, &n, &e);
        break;
    default:
        break;
    }
    s->st.records_out += n;
    *n_out = n;
    if (st != SH_OK)
        return record_failure(s, st, &e, err);
    return SH_OK;
}

void sh_extsort_get_stats(const sh_extsort *s, sh_extsort_stats *st)
{
    *st = s->st;
}

const char *sh_extsort_run_dir(const sh_extsort *s)
{
    return s->run_dir;
}

/* Removes everything in the private run directory, then the directory. */
static void remove_run_dir(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *de;
    size_t n = strlen(dir) + 2;
    if (d) {
        while ((de = readdir(d)) != NULL) {
            char *p;
            if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
                continue;
            p = malloc(n + strlen(de->d_name));
            if (!p)
                continue;
            sprintf(p, "%s/%s", dir, de->d_name);
            unlink(p);
            free(p);
        }
        closedir(d);
    }
    rmdir(dir);
}

void sh_extsort_free(sh_extsort *s)
{
    size_t i;
    if (!s)
        return;
    merger_close(s, &s->m);
    free_buffers(s);
    for (i = 0; i < s->nruns; i++) {
        unlink(s->runs[i].path);
        free(s->runs[i].path);
    }
    free(s->runs);
    if (s->run_dir)
        remove_run_dir(s->run_dir);
    free(s->run_dir);
    free(s->temp_dir);
    free(s->pending);
    free(s);
}
