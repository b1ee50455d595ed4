/* Ranks as threads: see transport_threads.h. Every collective is: publish
 * what this rank offers in its slot, meet at the barrier, take from the
 * others' slots, meet again (so no slot is reused while being read). */
#include "transport_threads.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

typedef struct slot {
    const void *send;
    const size_t *scounts, *sdispls;
    size_t count;
    uint64_t *v;
} slot;

struct sh_threads_world {
    int size;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int waiting;
    unsigned long generation;
    int aborted;      /* the rank that aborted, or -1 */
    slot *slots;
    struct rank_ud { sh_threads_world *w; int rank; } *ranks;
};

typedef struct rank_ud rank_ud;

sh_status sh_threads_world_new(sh_threads_world **out, int size, sh_error *err)
{
    sh_threads_world *w;
    int i;
    *out = NULL;
    if (size < 1 || size > 1024) return sh_error_set(err, SH_EINVAL, 0, "a threads world has 1 to 1024 ranks, not %d", size);
    w = (sh_threads_world *)calloc(1, sizeof *w);
    if (!w) return sh_error_set(err, SH_ENOMEM, 0, "out of memory");
    w->slots = (slot *)calloc((size_t)size, sizeof *w->slots);
    w->ranks = (rank_ud *)calloc((size_t)size, sizeof *w->ranks);
    if (!w->slots || !w->ranks) { free(w->slots); free(w->ranks); free(w); return sh_error_set(err, SH_ENOMEM, 0, "out of memory"); }
    w->size = size;
    w->aborted = -1;
    pthread_mutex_init(&w->mu, NULL);
    pthread_cond_init(&w->cv, NULL);
    for (i = 0; i < size; i++) { w->ranks[i].w = w; w->ranks[i].rank = i; }
    *out = w;
    return SH_OK;
}

void sh_threads_world_free(sh_threads_world *w)
{
    if (!w) return;
    pthread_mutex_destroy(&w->mu);
    pthread_cond_destroy(&w->cv);
    free(w->slots);
    free(w->ranks);
    free(w);
}

int sh_threads_aborted(const sh_threads_world *w)
{
    return w->aborted;
}

static sh_status aborted(const sh_threads_world *w, int rank, sh_error *err)
{
    return sh_error_set(err, SH_EIO, 0, "rank %d: rank %d ended the job", rank, w->aborted);
}

/* All ranks meet here; SH_EIO once a rank has aborted. */
static sh_status meet(rank_ud *r, sh_error *err)
{
    sh_threads_world *w = r->w;
    sh_status s = SH_OK;
    pthread_mutex_lock(&w->mu);
    if (w->aborted >= 0) {
        s = aborted(w, r->rank, err);
    } else if (++w->waiting == w->size) {
        w->waiting = 0;
        w->generation++;
        pthread_cond_broadcast(&w->cv);
    } else {
        unsigned long g = w->generation;
        while (g == w->generation && w->aborted < 0) pthread_cond_wait(&w->cv, &w->mu);
        if (g == w->generation) s = aborted(w, r->rank, err);
    }
    pthread_mutex_unlock(&w->mu);
    return s;
}

static void t_abort(void *ud, int code)
{
    rank_ud *r = (rank_ud *)ud;
    sh_threads_world *w = r->w;
    (void)code;
    pthread_mutex_lock(&w->mu);
    if (w->aborted < 0) w->aborted = r->rank;
    pthread_cond_broadcast(&w->cv);
    pthread_mutex_unlock(&w->mu);
}

static sh_status t_barrier(void *ud, sh_error *err)
{
    return meet((rank_ud *)ud, err);
}

static sh_status t_alltoallv(void *ud, const void *send, const size_t *scounts, const size_t *sdispls,
                             void *recv, const size_t *rcounts, const size_t *rdispls, sh_error *err)
{
    rank_ud *r = (rank_ud *)ud;
    sh_threads_world *w = r->w;
    sh_status s;
    int i;
    w->slots[r->rank].send = send;
    w->slots[r->rank].scounts = scounts;
    w->slots[r->rank].sdispls = sdispls;
    if ((s = meet(r, err)) != SH_OK) return s;
    for (i = 0; i < w->size && s == SH_OK; i++) {
        const slot *o = &w->slots[i];
        if (o->scounts[r->rank] != rcounts[i])
            s = sh_error_set(err, SH_EINVAL, 0, "rank %d expects %zu bytes from rank %d, which sends %zu", r->rank, rcounts[i], i,
                             o->scounts[r->rank]);
        else if (rcounts[i])
            memcpy((unsigned char *)recv + rdispls[i], (const unsigned char *)o->send + o->sdispls[r->rank], rcounts[i]);
    }
    {
        sh_status m = meet(r, err);
        return s != SH_OK ? s : m;
    }
}

static sh_status t_alltoall(void *ud, const void *send, void *recv, size_t each, sh_error *err)
{
    rank_ud *r = (rank_ud *)ud;
    size_t n = (size_t)r->w->size, i;
    size_t *c = (size_t *)malloc(2 * n * sizeof *c);
    sh_status s;
    if (!c) return sh_error_set(err, SH_ENOMEM, 0, "out of memory");
    for (i = 0; i < n; i++) { c[i] = each; c[n + i] = i * each; }
    s = t_alltoallv(ud, send, c, c + n, recv, c, c + n, err);
    free(c);
    return s;
}

static sh_status t_gatherv(void *ud, int root, const void *send, size_t count, void *recv, const size_t *rcounts,
                           const size_t *rdispls, sh_error *err)
{
    rank_ud *r = (rank_ud *)ud;
    sh_threads_world *w = r->w;
    sh_status s;
    int i;
    w->slots[r->rank].send = send;
    w->slots[r->rank].count = count;
    if ((s = meet(r, err)) != SH_OK) return s;
    if (r->rank == root)
        for (i = 0; i < w->size && s == SH_OK; i++) {
            if (w->slots[i].count != rcounts[i])
                s = sh_error_set(err, SH_EINVAL, 0, "root %d expects %zu bytes from rank %d, which sends %zu", root, rcounts[i], i,
                                 w->slots[i].count);
            else if (rcounts[i])
                memcpy((unsigned char *)recv + rdispls[i], w->slots[i].send, rcounts[i]);
        }
    {
        sh_status m = meet(r, err);
        return s != SH_OK ? s : m;
    }
}

static sh_status t_bcast(void *ud, int root, void *buf, size_t count, sh_error *err)
{
    rank_ud *r = (rank_ud *)ud;
    sh_threads_world *w = r->w;
    sh_status s;
    w->slots[r->rank].send = buf;
    w->slots[r->rank].count = count;
    if ((s = meet(r, err)) != SH_OK) return s;
    if (r->rank != root) {
        if (w->slots[root].count != count)
            s = sh_error_set(err, SH_EINVAL, 0, "rank %d expects %zu bytes from root %d, which sends %zu", r->rank, count, root,
                             w->slots[root].count);
        else
            memcpy(buf, w->slots[root].send, count);
    }
    {
        sh_status m = meet(r, err);
        return s != SH_OK ? s : m;
    }
}

static sh_status t_allreduce(void *ud, uint64_t *v, size_t n, sh_reduce op, sh_error *err)
{
    rank_ud *r = (rank_ud *)ud;
    sh_threads_world *w = r->w;
    uint64_t *acc = (uint64_t *)malloc((n ? n : 1) * sizeof *acc);
    sh_status s;
    size_t j;
    int i;
    if (!acc) return sh_error_set(err, SH_ENOMEM, 0, "out of memory");
    w->slots[r->rank].v = v;
    w->slots[r->rank].count = n;
    if ((s = meet(r, err)) != SH_OK) { free(acc); return s; }
    memcpy(acc, v, n * sizeof *acc);
    for (i = 0; i < w->size; i++) {
        const uint64_t *o = w->slots[i].v;
        if (i == r->rank) continue;
        for (j = 0; j < n; j++) {
            if (op == SH_REDUCE_SUM) acc[j] += o[j];
            else if (op == SH_REDUCE_MAX) { if (o[j] > acc[j]) acc[j] = o[j]; }
            else if (o[j] < acc[j]) acc[j] = o[j];
        }
    }
    /* everyone has read every v before anyone writes its own */
    s = meet(r, err);
    if (s == SH_OK) memcpy(v, acc, n * sizeof *acc);
    free(acc);
    return s;
}

void sh_threads_transport(sh_transport *t, sh_threads_world *w, int rank)
{
    memset(t, 0, sizeof *t);
    t->ud = &w->ranks[rank];
    t->rank = rank;
    t->size = w->size;
    t->alltoall = t_alltoall;
    t->alltoallv = t_alltoallv;
    t->gatherv = t_gatherv;
    t->bcast = t_bcast;
    t->allreduce_u64 = t_allreduce;
    t->barrier = t_barrier;
    t->abort = t_abort;
}
