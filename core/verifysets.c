/* Full sets of the candidates made again from their sources: verifysets.h. */
#include "verifysets.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "run.h"

/* documents (and bytes of JSON Lines) handed to the pool at a time */
#define BATCH_DOCS 512
#define BATCH_BYTES ((size_t)64 << 20)

void sh_verify_sets_remove(const char *dir)
{
    char path[4096];
    sh_run_path(path, sizeof path, dir, "fullsets.idx");
    unlink(path);
    sh_run_path(path, sizeof path, dir, "fullsets.bin");
    unlink(path);
}

typedef struct vs {
    const char *dir;
    const sh_run *r;
    const sh_srcrec *src;
    const char *names;
    uint64_t names_size;
    int fd;                 /* the JSON Lines file open, or -1 */
    uint64_t fd_name;       /* its name's offset */
    char *buf;              /* the batch's lines and paths */
    size_t cap, used;
    size_t *at;             /* per batch document: offset of its bytes (or path) in buf */
    uint32_t *ids;
    sh_doc_in *ins;
    sh_doc_out *outs;
    size_t n;
} vs;

static sh_status reserve(vs *v, size_t more, sh_error *err)
{
    if (v->used + more <= v->cap) return SH_OK;
    {
        size_t nc = v->cap ? v->cap : 1 << 20;
        char *b;
        while (nc < v->used + more) nc *= 2;
        if (!(b = (char *)realloc(v->buf, nc))) return sh_error_set(err, SH_ENOMEM, 0, "out of memory");
        v->buf = b;
        v->cap = nc;
    }
    return SH_OK;
}

static const char *name_at(const vs *v, uint64_t off)
{
    return off < v->names_size ? v->names + off : "";
}

/* the bytes of one batch document: a JSON Lines line read again, or a path */
static sh_status add_doc(vs *v, uint32_t i, sh_error *err)
{
    const sh_srcrec *s = &v->src[i];
    const char *name = name_at(v, s->name);
    sh_status st;
    v->ids[v->n] = i;
    v->at[v->n] = v->used;
    if (s->kind == SH_SRC_FILE) {
        size_t k = strlen(name), c = name[0] == '/' ? 0 : strlen(v->names);
        if ((st = reserve(v, c + k + 2, err)) != SH_OK) return st;
        if (c) { memcpy(v->buf + v->used, v->names, c); v->buf[v->used + c] = '/'; c++; }
        memcpy(v->buf + v->used + c, name, k + 1);
        v->used += c + k + 1;
    } else if (s->kind == SH_SRC_JSONL) {
        size_t got = 0;
        if (s->len > ((uint64_t)1 << 40)) return sh_error_set(err, SH_EFORMAT, 0, "%s/sources.bin is corrupt", v->dir);
        if (v->fd < 0 || v->fd_name != s->name) {
            char path[4096];
            if (v->fd >= 0) close(v->fd);
            if (name[0] == '/') snprintf(path, sizeof path, "%s", name);
            else snprintf(path, sizeof path, "%s/%s", v->names, name);
            v->fd = open(path, O_RDONLY | O_CLOEXEC);
            if (v->fd < 0) {
                int e = errno;
                sh_error_set(err, SH_EIO, 0, "cannot read %s again for exact verification: %s", path, strerror(e));
                if (err) err->sys_errno = e;
                return SH_EIO;
            }
            v->fd_name = s->name;
        }
        if ((st = reserve(v, (size_t)s->len + 1, err)) != SH_OK) return st;
        while (got < s->len) {
            ssize_t k = pread(v->fd, v->buf + v->used + got, (size_t)s->len - got, (off_t)(s->off + got));
            if (k < 0 && errno == EINTR) continue;
            if (k <= 0) {
                int e = k < 0 ? errno : 0;
                sh_error_set(err, SH_EIO, 0, "cannot read document %u again from %s (byte %llu): %s", i + 1, name,
                             (unsigned long long)s->off, e ? strerror(e) : "the file is shorter than in phase 1");
                if (err) err->sys_errno = e;
                return SH_EIO;
            }
            got += (size_t)k;
        }
        v->used += (size_t)s->len + 1;
    } else {
        return sh_error_set(err, SH_EFORMAT, 0, "%s/sources.bin is corrupt (document %u)", v->dir, i + 1);
    }
    v->n++;
    return SH_OK;
}

void sh_fullsets_free(sh_fullsets *f)
{
    if (!f) return;
    free(f->at);
    free(f->v);
    free(f->pair_cand);
    free(f);
}

/* the batch's documents as the pool takes them: a JSON Lines line decoded in place */
static sh_status parse_batch(vs *v, const sh_jsonl_fields *f, sh_error *err)
{
    size_t k;
    sh_status s;
    for (k = 0; k < v->n; k++) {
        uint32_t i = v->ids[k];
        const sh_srcrec *sr = &v->src[i];
        sh_doc_in *in = &v->ins[k];
        memset(in, 0, sizeof *in);
        in->html = sr->html;
        if (sr->kind == SH_SRC_FILE) {
            in->path = v->buf + v->at[k];
        } else {
            sh_jsonl_doc doc;
            char *line = v->buf + v->at[k];
            sh_error perr;
            if ((s = sh_jsonl_parse(line, (size_t)sr->len, f, &doc, &perr)) != SH_OK)
                return sh_error_set(err, SH_EFORMAT, 0, "document %u is no longer the line at byte %llu of %s (%.200s); "
                                    "the input changed since phase 1 (run shingle cluster again)", i + 1,
                                    (unsigned long long)sr->off, name_at(v, sr->name), perr.msg);
            in->data = doc.text.p;
            in->len = doc.text.n;
            in->name = name_at(v, sr->name);
        }
    }
    return SH_OK;
}

/* the next batch of the candidates cand[*at..n): read again and decoded (on a
 * helper thread while the pool shingles the batch before it) */
static sh_status prepare(vs *v, const uint32_t *cand, size_t n, size_t *at, const sh_jsonl_fields *f, sh_error *err)
{
    sh_status s;
    v->n = 0;
    v->used = 0;
    while (*at < n && v->n < BATCH_DOCS && v->used < BATCH_BYTES)
        if ((s = add_doc(v, cand[(*at)++], err)) != SH_OK) return s;
    return parse_batch(v, f, err);
}

typedef struct prep_job {
    vs *v;
    const uint32_t *cand;
    size_t n, *at;
    const sh_jsonl_fields *f;
    sh_status s;
    sh_error err;
} prep_job;

static void *prep_run(void *arg)
{
    prep_job *j = (prep_job *)arg;
    j->s = prepare(j->v, j->cand, j->n, j->at, j->f, &j->err);
    return NULL;
}

/* shingle the prepared batch on the pool; its sets into fullsets.bin (w) or memory (mv) */
static sh_status run_batch(vs *v, sh_pool *pool, sh_recwriter *w, uint64_t *mv, uint64_t *fat,
                           uint64_t *nvals, sh_verify_sets_stats *st, sh_error *err)
{
    size_t k;
    sh_status s = SH_OK;
    for (k = 0; k < v->n; k++)
        if (v->src[v->ids[k]].kind == SH_SRC_JSONL) st->bytes += v->src[v->ids[k]].len;
    memset(v->outs, 0, v->n * sizeof *v->outs);
    if ((s = sh_pool_run(pool, v->ins, v->outs, v->n, err)) != SH_OK) return s;
    for (k = 0; k < v->n && s == SH_OK; k++) {
        uint32_t i = v->ids[k];
        const sh_docrec *d = &v->r->d[i];
        const sh_doc_out *o = &v->outs[k];
        if (o->status != SH_OK) {
            s = sh_error_set(err, o->status, 0, "document %u cannot be shingled again for exact verification: %s", i + 1, o->err);
        } else if (!o->full) {
            s = sh_error_set(err, SH_EINVAL, 0, "the pool of exact verification must make full sets");
        } else if (o->set_fp != d->set_fp || o->full->n != d->full_n) {
            s = sh_error_set(err, SH_EMISMATCH, 0, "document %u (%s) changed since phase 1: its shingles are not those it "
                             "was sketched from (run shingle cluster again)", i + 1, name_at(v, v->src[i].name));
        } else {
            fat[i] = *nvals;
            if (mv) memcpy(mv + *nvals, o->full->v, o->full->n * 8);
            else s = sh_recwriter_append(w, o->full->v, o->full->n, err);
            *nvals += o->full->n;
            st->values += o->full->n;
            st->documents++;
        }
    }
    sh_pool_release(v->outs, v->n);
    v->n = 0;
    v->used = 0;
    return s;
}

sh_status sh_verify_sets(const char *dir, sh_pool *pool, const sh_decide_config *cfg, int every,
                         const sh_jsonl_fields *fields, size_t memory, sh_fullsets **mem, sh_verify_sets_stats *st,
                         sh_error *err)
{
    uint64_t *mv = NULL, want = 0;
    sh_run r;
    sh_recfile sf, nf;
    sh_recwriter w, wi;
    unsigned char *mark = NULL, *pair_cand = NULL;
    uint64_t *fat = NULL, nvals = 0, total = 0, done = 0, n_pairs = 0;
    char path[4096];
    sh_status s;
    uint32_t i, *cand = NULL;
    size_t at = 0;
    int any = 0, k;
    vs two[2], *cur, *nxt;
    memset(st, 0, sizeof *st);
    memset(&sf, 0, sizeof sf);
    memset(&nf, 0, sizeof nf);
    memset(&w, 0, sizeof w);
    memset(&wi, 0, sizeof wi);
    memset(two, 0, sizeof two);
    two[0].fd = two[1].fd = -1;
    if (mem) *mem = NULL;
    sh_verify_sets_remove(dir);
    if ((s = sh_run_open(&r, dir, 0, 0, 0, err)) != SH_OK) return s;
    for (i = 0; i < r.n && !any; i++) any = r.d[i].status == SH_OK && r.d[i].full_off == SH_FULL_AT_SOURCE;
    if (!any) { sh_run_close(&r); return SH_OK; }
    sh_run_path(path, sizeof path, dir, "sources.bin");
    if ((s = sh_recfile_open(&sf, path, SH_MAGIC_SOURCES, sizeof(sh_srcrec), 1, err)) != SH_OK) goto done;
    if (sf.count != r.n) {
        s = sh_error_set(err, SH_EFORMAT, 0, "%s is not of this run (%llu documents, not %u)", path, (unsigned long long)sf.count, r.n);
        goto done;
    }
    sh_run_path(path, sizeof path, dir, "srcnames.bin");
    if ((s = sh_recfile_open(&nf, path, SH_MAGIC_SRCNAMES, 1, 1, err)) != SH_OK) goto done;
    if (nf.count == 0 || nf.records[nf.count - 1] != '\0') {
        s = sh_error_set(err, SH_EFORMAT, 0, "%s is corrupt", path);
        goto done;
    }
    two[0].dir = dir;
    two[0].r = &r;
    two[0].src = (const sh_srcrec *)(const void *)sf.records;
    two[0].names = (const char *)nf.records;
    two[0].names_size = nf.count;
    two[1] = two[0];
    mark = (unsigned char *)calloc((size_t)r.n + 1, 1);
    fat = (uint64_t *)malloc(((size_t)r.n + 1) * 8);
    cand = (uint32_t *)malloc(((size_t)r.n + 1) * sizeof *cand);
    if (!mark || !fat || !cand) { s = sh_error_set(err, SH_ENOMEM, 0, "out of memory"); goto done; }
    for (k = 0; k < 2; k++) {
        two[k].at = (size_t *)malloc(BATCH_DOCS * sizeof *two[k].at);
        two[k].ids = (uint32_t *)malloc(BATCH_DOCS * sizeof *two[k].ids);
        two[k].ins = (sh_doc_in *)malloc(BATCH_DOCS * sizeof *two[k].ins);
        two[k].outs = (sh_doc_out *)calloc(BATCH_DOCS, sizeof *two[k].outs);
        if (!two[k].at || !two[k].ids || !two[k].ins || !two[k].outs) { s = sh_error_set(err, SH_ENOMEM, 0, "out of memory"); goto done; }
    }
    if (every) {
        memset(mark, 1, r.n);
    } else {
        /* the pairs' verdicts kept for phase 4 with sets kept in memory */
        if (mem) {
            sh_recfile pf;
            sh_run_path(path, sizeof path, dir, "pairs.bin");
            /* its count only: sh_candidates verifies its checksum next */
            if ((s = sh_recfile_open(&pf, path, SH_MAGIC_PAIRS, sizeof(sh_pairrec), 0, err)) != SH_OK) goto done;
            n_pairs = pf.count;
            sh_recfile_close(&pf);
            if (!(pair_cand = (unsigned char *)malloc((size_t)n_pairs + 1))) { s = sh_error_set(err, SH_ENOMEM, 0, "out of memory"); goto done; }
        }
        if ((s = sh_candidates(dir, cfg, mark, pair_cand, NULL, &st->from_counts, err)) != SH_OK) goto done;
    }
    for (i = 0; i < r.n; i++) {
        fat[i] = SH_FULL_AT_SOURCE;
        if (mark[i] && r.d[i].status == SH_OK && r.d[i].full_off == SH_FULL_AT_SOURCE) { cand[total++] = i; want += r.d[i].full_n; }
    }
    if (mem && want <= memory / 8 && (mv = (uint64_t *)malloc((size_t)want * 8 + 8)) != NULL) {
        st->in_memory = 1;
    } else {
        sh_run_path(path, sizeof path, dir, "fullsets.bin");
        if ((s = sh_recwriter_open(&w, path, SH_MAGIC_SHINGLES, 8, NULL, 0, err)) != SH_OK) goto done;
        w.scratch = 1; /* made again by the next phase 4 if lost */
    }
    /* batch n + 1 is read again and decoded on a helper thread while the pool
     * (with this thread) shingles batch n */
    cur = &two[0];
    nxt = &two[1];
    if ((s = prepare(cur, cand, (size_t)total, &at, fields, err)) != SH_OK) goto done;
    while (cur->n) {
        prep_job job;
        pthread_t tid;
        int started;
        vs *t;
        memset(&job, 0, sizeof job);
        job.v = nxt;
        job.cand = cand;
        job.n = (size_t)total;
        job.at = &at;
        job.f = fields;
        started = pthread_create(&tid, NULL, prep_run, &job) == 0;
        done += cur->n;
        s = run_batch(cur, pool, &w, mv, fat, &nvals, st, err);
        if (started) pthread_join(tid, NULL);
        else if (s == SH_OK) job.s = prepare(nxt, cand, (size_t)total, &at, fields, &job.err);
        if (s != SH_OK) goto done;
        if (job.s != SH_OK) {
            s = job.s;
            if (err) *err = job.err;
            goto done;
        }
        if (cfg->progress) cfg->progress(cfg->progress_ud, "verification sets", done, total);
        t = cur; cur = nxt; nxt = t;
    }
    if (cfg->progress) cfg->progress(cfg->progress_ud, "verification sets", total, total);
    if (mv) {
        sh_fullsets *f = (sh_fullsets *)malloc(sizeof *f);
        if (!f) { s = sh_error_set(err, SH_ENOMEM, 0, "out of memory"); goto done; }
        f->n = r.n;
        f->at = fat;
        f->v = mv;
        f->n_values = nvals;
        f->pair_cand = cfg->accept ? NULL : pair_cand;
        f->n_pairs = n_pairs;
        f->cand_policy = cfg->policy;
        f->cand_score = cfg->candidate;
        if (cfg->accept) free(pair_cand);
        fat = NULL;
        mv = NULL;
        pair_cand = NULL;
        *mem = f;
        s = SH_OK;
        goto done;
    }
    if ((s = sh_recwriter_commit(&w, err)) != SH_OK) goto done;
    sh_run_path(path, sizeof path, dir, "fullsets.idx");
    if ((s = sh_recwriter_open(&wi, path, SH_MAGIC_FULLIDX, 8, NULL, 0, err)) != SH_OK) goto done;
    wi.scratch = 1;
    if ((s = sh_recwriter_append(&wi, fat, r.n, err)) != SH_OK) goto done;
    s = sh_recwriter_commit(&wi, err);
done:
    sh_recwriter_abort(&w);
    sh_recwriter_abort(&wi);
    if (s != SH_OK) sh_verify_sets_remove(dir);
    for (k = 0; k < 2; k++) {
        if (two[k].outs) sh_pool_release(two[k].outs, BATCH_DOCS);
        if (two[k].fd >= 0) close(two[k].fd);
        free(two[k].buf);
        free(two[k].at);
        free(two[k].ids);
        free(two[k].ins);
        free(two[k].outs);
    }
    free(cand);
    free(pair_cand);
    free(mark);
    free(fat);
    free(mv);
    sh_recfile_close(&sf);
    sh_recfile_close(&nf);
    sh_run_close(&r);
    return s;
}
