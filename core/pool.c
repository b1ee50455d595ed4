#include "pool.h"
#include "mail.h"
#include "stream.h"
#include "zio.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct worker {
    sh_work work;
    sh_stream stream;     /* a document's sketch in blocks (core/stream.h) */
    sh_zbuf buf;          /* file contents, decompressed (core/zio.h) */
    sh_mail *mail;        /* made on the first message met */
    void *ctx;            /* of the extractor, made the first time this worker runs it */
    int ctx_made;
} worker;

struct sh_pool {
    sh_pool_config c;
    worker *w;
    /* the current batch */
    const sh_doc_in *docs;
    sh_doc_out *outs;
    size_t n;
    size_t next;          /* next document to take, under lock */
    pthread_mutex_t lock;
    /* a batch started by sh_pool_start, until sh_pool_wait */
    pthread_t tid[256];
    void *args[256][2];
    int started, running;
};

sh_status sh_pool_new(sh_pool **out, const sh_pool_config *cfg, sh_error *err)
{
    sh_pool *p;
    *out = NULL;
    if (cfg->threads < 1 || cfg->threads > 256)
        return sh_error_set(err, SH_EINVAL, 0, "threads = %d; use 1 to 256", cfg->threads);
    p = (sh_pool *)calloc(1, sizeof *p);
    if (!p) return sh_error_set(err, SH_ENOMEM, 0, "out of memory");
    p->c = *cfg;
    if (!p->c.html) p->c.html = p->c.text;
    p->w = (worker *)calloc((size_t)cfg->threads, sizeof *p->w);
    if (!p->w) { free(p); return sh_error_set(err, SH_ENOMEM, 0, "out of memory"); }
    pthread_mutex_init(&p->lock, NULL);
    *out = p;
    return SH_OK;
}

/* A document through the pool's extractor: its ids, then shingled (or
 * taken as a set) and sketched as any other. */
static void extract(sh_pool *p, worker *w, const sh_shingler *sh, const char *data, size_t len, const char *path,
                    const char *name, sh_doc_out *o)
{
    const sh_extractor *ex = p->c.extractor;
    int features = 0;
    sh_error err;
    if (!w->ctx_made) {
        w->ctx = ex->init ? ex->init(ex->arg, &err) : ex->arg;
        if (ex->init && !w->ctx) {
            o->status = err.code;
            snprintf(o->err, sizeof o->err, "%.230s", err.msg);
            return;
        }
        w->ctx_made = 1;
    }
    w->work.max_shingles = p->c.max_shingles;
    if (ex->extract(w->ctx, data, len, path, &w->work, &features, &err) != SH_OK ||
        (features ? sh_shingle_features(&w->work, &err) : sh_shingle_ids(sh, &w->work, &err)) != SH_OK ||
        sh_doc_sketch(sh, &w->work, &p->c.params, features, p->c.want_full, p->c.sig_k, data, len, w->work.n_ids, o,
                      &err) != SH_OK) {
        const size_t nl = strlen(name);
        o->status = err.code;
        if (strncmp(err.msg, name, nl) == 0 && err.msg[nl] == ':') /* a Lua extractor's message names it already */
            snprintf(o->err, sizeof o->err, "%.230s", err.msg);
        else
            snprintf(o->err, sizeof o->err, "%.100s: %.130s", name, err.msg);
    }
}

static void one(sh_pool *p, worker *w, const sh_doc_in *d, sh_doc_out *o)
{
    const sh_shingler *sh = d->html ? p->c.html : p->c.text;
    const char *data = d->data;
    const char *name = d->path ? d->path : d->name ? d->name : "document";
    size_t len = d->len;
    sh_error err;
    sh_status st;
    memset(o, 0, sizeof *o);
    if (!data) {
        if (!d->path) { o->status = SH_EINVAL; snprintf(o->err, sizeof o->err, "document has neither text nor path"); return; }
        /* gzip and zstd files are decompressed here, bounded by max_bytes */
        if (sh_zio_read_file(d->path, p->c.max_bytes, &w->buf, NULL, &err) != SH_OK) {
            o->status = err.code;
            snprintf(o->err, sizeof o->err, "%.239s", err.msg);
            return;
        }
        data = w->buf.p;
        len = w->buf.len;
    } else if (p->c.max_bytes && len > p->c.max_bytes) {
        o->status = SH_ELIMIT;
        snprintf(o->err, sizeof o->err, "%s is larger than the limit of %zu bytes; raise --max-bytes to include it", name, p->c.max_bytes);
        return;
    }
    o->bytes = len;
    if (p->c.skip_binary) {
        const char *z = (const char *)memchr(data, 0, len < 8192 ? len : 8192);
        if (z) {
            o->status = SH_EFORMAT;
            snprintf(o->err, sizeof o->err, "%s looks binary (a NUL byte at offset %zu); skipped", name, (size_t)(z - data));
            return;
        }
    }
    if (p->c.extractor) {
        extract(p, w, sh, data, len, d->path, name, o);
        return;
    }
    {
        /* a message is shingled as what it says (subject and text parts, as HTML:
         * core/mail.h); its raw fingerprint stays that of its bytes */
        const char *text = data;
        size_t tlen = len;
        if (p->c.mail && sh_mail_sniff(data, len) != SH_MAIL_NONE) {
            sh_mail_result mr;
            if ((!w->mail && sh_mail_new(&w->mail, &err) != SH_OK) ||
                sh_mail_render(w->mail, data, len, p->c.max_bytes, &mr, &err) != SH_OK) {
                o->status = err.code;
                snprintf(o->err, sizeof o->err, "%.100s: %.130s", name, err.msg);
                return;
            }
            text = mr.text;
            tlen = mr.len;
            sh = p->c.html;
        }
        /* in blocks of tokens (core/stream.h): a document's memory is its
         * bytes, its canonical text and its distinct shingles (or only the
         * MOD_m sample), not ~75 bytes a token (docs/robustness.md, "Limits") */
        w->work.max_shingles = p->c.max_shingles;
        st = sh_doc_sketch_stream(sh, &w->work, &w->stream, &p->c.params, p->c.want_full, p->c.sig_k, text, tlen,
                                  data, len, 0, o, &err);
        /* a large document's buffers are given back, not kept for the next */
        sh_stream_trim(&w->stream);
        if (w->work.toks.text_cap > ((size_t)1 << 24) || w->work.toks.cap > ((size_t)1 << 20)) sh_tokens_free(&w->work.toks);
        if (st == SH_OK) return;
    }
    o->status = err.code;
    snprintf(o->err, sizeof o->err, "%.100s: %.130s", name, err.msg);
}

static void *run(void *arg)
{
    void **a = (void **)arg;
    sh_pool *p = (sh_pool *)a[0];
    worker *w = (worker *)a[1];
    for (;;) {
        size_t i, end;
        pthread_mutex_lock(&p->lock);
        i = p->next;
        end = i + 4 < p->n ? i + 4 : p->n; /* small chunks balance uneven documents */
        p->next = end;
        pthread_mutex_unlock(&p->lock);
        if (i >= p->n) break;
        for (; i < end; i++) one(p, w, &p->docs[i], &p->outs[i]);
    }
    return NULL;
}

/* Workers for a batch of n: at most one per 4 documents (run's chunks). */
static int workers_for(const sh_pool *p, size_t n)
{
    int nt = p->c.threads;
    if ((size_t)nt > (n + 3) / 4) nt = (int)((n + 3) / 4);
    return nt < 1 ? 1 : nt;
}

sh_status sh_pool_start(sh_pool *p, const sh_doc_in *docs, sh_doc_out *outs, size_t n, sh_error *err)
{
    int t, nt;
    sh_pool_wait(p);
    p->docs = docs;
    p->outs = outs;
    p->n = n;
    p->next = 0;
    p->started = 0;
    nt = workers_for(p, n);
    for (t = 0; t < nt; t++) {
        p->args[t][0] = p;
        p->args[t][1] = &p->w[t];
        if (pthread_create(&p->tid[t], NULL, run, p->args[t]) != 0) break;
        p->started++;
    }
    if (p->started == 0) run(p->args[0]); /* no thread to be had: the batch is done here and now */
    p->running = 1;
    (void)err;
    return SH_OK;
}

void sh_pool_wait(sh_pool *p)
{
    int t;
    if (!p->running) return;
    for (t = 0; t < p->started; t++) pthread_join(p->tid[t], NULL);
    p->started = 0;
    p->running = 0;
}

sh_status sh_pool_run(sh_pool *p, const sh_doc_in *docs, sh_doc_out *outs, size_t n, sh_error *err)
{
    pthread_t tid[256];
    void *args[256][2];
    int t, started = 0, nt;
    sh_pool_wait(p);
    p->docs = docs;
    p->outs = outs;
    p->n = n;
    p->next = 0;
    nt = workers_for(p, n);
    for (t = 0; t < nt; t++) { args[t][0] = p; args[t][1] = &p->w[t]; }
    for (t = 1; t < nt; t++) {
        if (pthread_create(&tid[t], NULL, run, args[t]) != 0) break;
        started++;
    }
    run(args[0]);
    for (t = 1; t <= started; t++) pthread_join(tid[t], NULL);
    (void)err;
    return SH_OK;
}

void sh_pool_release(sh_doc_out *outs, size_t n)
{
    size_t i;
    for (i = 0; i < n; i++) sh_doc_release(&outs[i]);
}

void sh_pool_free(sh_pool *p)
{
    int t;
    if (!p) return;
    sh_pool_wait(p);
    for (t = 0; t < p->c.threads; t++) {
        sh_work_free(&p->w[t].work);
        sh_stream_free(&p->w[t].stream);
        free(p->w[t].buf.p);
        sh_mail_free(p->w[t].mail);
        if (p->w[t].ctx_made && p->c.extractor->init && p->c.extractor->free) p->c.extractor->free(p->w[t].ctx);
    }
    free(p->w);
    pthread_mutex_destroy(&p->lock);
    free(p);
}
