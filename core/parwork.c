/* Chunks of a sequential job run on threads: parwork.h. */
#include "parwork.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

typedef struct job {
    sh_chunk_fn fn;
    size_t n;
    size_t next;        /* the next chunk to take (atomic) */
    int stop;           /* a chunk failed (atomic) */
    size_t failed;      /* the lowest failed chunk (under lock) */
    sh_error err;       /* its error */
    sh_status *status;
    pthread_mutex_t lock;
} job;

typedef struct arg { job *j; void *ctx; } arg;

static void *run(void *p)
{
    arg *a = (arg *)p;
    job *j = a->j;
    for (;;) {
        size_t c;
        sh_status s;
        sh_error e;
        if (__atomic_load_n(&j->stop, __ATOMIC_ACQUIRE)) break;
        c = __atomic_fetch_add(&j->next, 1, __ATOMIC_RELAXED);
        if (c >= j->n) break;
        memset(&e, 0, sizeof e);
        s = j->fn(a->ctx, c, &e);
        j->status[c] = s;
        if (s != SH_OK) {
            pthread_mutex_lock(&j->lock);
            if (c < j->failed) { j->failed = c; j->err = e; }
            pthread_mutex_unlock(&j->lock);
            __atomic_store_n(&j->stop, 1, __ATOMIC_RELEASE);
        }
    }
    return NULL;
}

sh_status sh_par_chunks(int threads, size_t n, sh_chunk_fn fn, void **ctx, sh_status *status, sh_error *err)
{
    job j;
    pthread_t tid[64];
    arg args[64];
    int t, started = 0;
    if (threads < 1) threads = 1;
    if (threads > 64) threads = 64;
    if ((size_t)threads > n) threads = n ? (int)n : 1;
    memset(&j, 0, sizeof j);
    j.fn = fn;
    j.n = n;
    j.failed = (size_t)-1;
    j.status = status;
    memset(status, 0, n * sizeof *status);
    pthread_mutex_init(&j.lock, NULL);
    for (t = 0; t < threads; t++) { args[t].j = &j; args[t].ctx = ctx[t]; }
    for (t = 1; t < threads; t++) {
        if (pthread_create(&tid[t], NULL, run, &args[t]) != 0) break;
        started++;
    }
    run(&args[0]);
    for (t = 1; t <= started; t++) pthread_join(tid[t], NULL);
    pthread_mutex_destroy(&j.lock);
    if (j.failed != (size_t)-1) {
        if (err) *err = j.err;
        return status[j.failed];
    }
    return SH_OK;
}
