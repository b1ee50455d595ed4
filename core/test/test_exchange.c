/* The record exchange between ranks (core/exchange.h) over the threads
 * transport: every record reaches its owner exactly once, in its sender's
 * order, in rounds no larger than the bound; gathers arrive in rank order;
 * a rank that ends the job makes its peers' calls fail instead of hang. */
#include <pthread.h>
#include <stdlib.h>

#include "byteorder.h"
#include "exchange.h"
#include "test.h"
#include "transport_threads.h"

#define MAXR 8

typedef struct rank_job {
    sh_threads_world *w;
    int rank, size;
    size_t round_bytes;
    int (*body)(struct rank_job *, sh_comm *);
    int ok;                   /* set by body: 1 if everything it checked held */
    char msg[640];
    uint64_t sent, received, rounds;
} rank_job;

static void *rank_main(void *ud)
{
    rank_job *j = (rank_job *)ud;
    sh_transport t;
    sh_comm c;
    sh_threads_transport(&t, j->w, j->rank);
    sh_comm_init(&c, &t, j->round_bytes);
    j->ok = j->body(j, &c);
    j->sent = c.sent;
    j->received = c.received;
    j->rounds = c.rounds;
    return NULL;
}

/* Run body on size threads; 1 if every rank's body returned 1. */
static int run_world(int size, size_t round_bytes, int (*body)(rank_job *, sh_comm *), rank_job *jobs)
{
    sh_threads_world *w;
    pthread_t th[MAXR];
    sh_error err;
    int r, all = 1;
    if (sh_threads_world_new(&w, size, &err) != SH_OK) return 0;
    for (r = 0; r < size; r++) {
        jobs[r].w = w; jobs[r].rank = r; jobs[r].size = size; jobs[r].round_bytes = round_bytes; jobs[r].body = body;
        jobs[r].ok = 0; jobs[r].msg[0] = 0;
        pthread_create(&th[r], NULL, rank_main, &jobs[r]);
    }
    for (r = 0; r < size; r++) {
        pthread_join(th[r], NULL);
        if (!jobs[r].ok) { all = 0; fprintf(stderr, "rank %d of %d: %s\n", r, size, jobs[r].msg); }
    }
    sh_threads_world_free(w);
    return all;
}

/* ---- shuffle: 16-byte records <key BE 8, source u32, sequence u32> ---------- */

#define PER_RANK 5000

static uint64_t key_of(int rank, uint32_t i)
{
    uint64_t x = ((uint64_t)rank << 32 | i) * 0x9e3779b97f4a7c15ULL;
    x ^= x >> 29; x *= 0xbf58476d1ce4e5b9ULL; x ^= x >> 32;
    return x;
}

typedef struct gen { int rank; uint32_t next, total; } gen;

static sh_status produce_keys(void *ud, void *buf, size_t max, size_t *n, sh_error *err)
{
    gen *g = (gen *)ud;
    unsigned char *o = (unsigned char *)buf;
    size_t k = 0;
    (void)err;
    /* deliberately uneven pieces: the rounds must still line up across ranks */
    if (max > 16 * (size_t)(97 + 13 * g->rank)) max = 16 * (size_t)(97 + 13 * g->rank);
    while (k + 16 <= max && g->next < g->total) {
        sh_store_be64(o + k, key_of(g->rank, g->next));
        sh_store_le32(o + k + 8, (uint32_t)g->rank);
        sh_store_le32(o + k + 12, g->next);
        g->next++;
        k += 16;
    }
    *n = k;
    return SH_OK;
}

typedef struct collect {
    sh_comm *c;
    uint32_t last[MAXR];   /* next sequence expected from each source */
    uint64_t got, bad_owner, bad_order;
    size_t largest;
} collect;

static sh_status sink_keys(void *ud, int src, const void *data, size_t n, sh_error *err)
{
    collect *k = (collect *)ud;
    const unsigned char *p = (const unsigned char *)data;
    size_t i;
    (void)err;
    if (n > k->largest) k->largest = n;
    for (i = 0; i < n; i += 16) {
        uint64_t key = sh_load_be64(p + i);
        uint32_t from = sh_load_le32(p + i + 8), seq = sh_load_le32(p + i + 12);
        if (sh_key64_owner(key, k->c->size) != k->c->rank || (int)from != src) k->bad_owner++;
        if (seq < k->last[src]) k->bad_order++;
        k->last[src] = seq + 1;
        k->got++;
    }
    return SH_OK;
}

static int shuffle_body(rank_job *j, sh_comm *c)
{
    gen g;
    collect k;
    sh_error err;
    uint64_t expect = 0;
    uint32_t i;
    int r;
    memset(&k, 0, sizeof k);
    k.c = c;
    g.rank = j->rank; g.next = 0; g.total = PER_RANK + 777u * (uint32_t)j->rank;
    if (sh_comm_shuffle(c, 16, produce_keys, &g, sh_owner_by_key64, c, sink_keys, &k, &err) != SH_OK) {
        snprintf(j->msg, sizeof j->msg, "shuffle: %s", err.msg);
        return 0;
    }
    for (r = 0; r < j->size; r++)
        for (i = 0; i < PER_RANK + 777u * (uint32_t)r; i++)
            if (sh_key64_owner(key_of(r, i), j->size) == j->rank) expect++;
    if (k.got != expect || k.bad_owner || k.bad_order) {
        snprintf(j->msg, sizeof j->msg, "got %llu of %llu records, %llu at the wrong owner, %llu out of order",
                 (unsigned long long)k.got, (unsigned long long)expect, (unsigned long long)k.bad_owner,
                 (unsigned long long)k.bad_order);
        return 0;
    }
    if (k.largest > j->round_bytes / (size_t)j->size + 16) {
        snprintf(j->msg, sizeof j->msg, "a message of %zu bytes passed the bound of %zu", k.largest, j->round_bytes / (size_t)j->size);
        return 0;
    }
    return 1;
}

static void test_shuffle_reaches_owners(void)
{
    rank_job jobs[MAXR];
    int size;
    for (size = 1; size <= 5; size++) {
        uint64_t sent = 0, received = 0;
        int r;
        CHECK(run_world(size, 4096, shuffle_body, jobs));
        for (r = 0; r < size; r++) { sent += jobs[r].sent; received += jobs[r].received; }
        CHECK_EQ_U64(sent, received);                 /* what leaves one rank arrives at another */
        if (size > 1) CHECK(jobs[0].rounds > 10);     /* the bound forced many rounds */
        else CHECK_EQ_U64(sent, 0);                   /* a rank's records to itself are not traffic */
    }
}

/* ---- exchange with uneven counts, some empty ------------------------------- */

typedef struct bytes_sink { unsigned char *buf; size_t n[MAXR]; unsigned char *base[MAXR]; int bad; } bytes_sink;

static sh_status sink_bytes(void *ud, int src, const void *data, size_t n, sh_error *err)
{
    bytes_sink *b = (bytes_sink *)ud;
    const unsigned char *p = (const unsigned char *)data;
    size_t i;
    (void)err;
    for (i = 0; i < n; i++)
        if (p[i] != (unsigned char)(src * 31 + (b->n[src] + i) * 7)) b->bad++;
    b->n[src] += n;
    return SH_OK;
}

static size_t amount(int from, int to) { return (size_t)((from * 5 + to * 3) % 4) * 1000 * 4; }

static int exchange_body(rank_job *j, sh_comm *c)
{
    uint64_t counts[MAXR];
    unsigned char *send;
    size_t total = 0, i, off = 0;
    bytes_sink b;
    sh_error err;
    int r;
    memset(&b, 0, sizeof b);
    for (r = 0; r < j->size; r++) { counts[r] = amount(j->rank, r); total += counts[r]; }
    send = (unsigned char *)malloc(total + 1);
    for (r = 0; r < j->size; r++)
        for (i = 0; i < counts[r]; i++) send[off++] = (unsigned char)(j->rank * 31 + i * 7);
    if (sh_comm_exchange(c, send, counts, 4, sink_bytes, &b, &err) != SH_OK) {
        snprintf(j->msg, sizeof j->msg, "exchange: %s", err.msg); free(send); return 0;
    }
    free(send);
    for (r = 0; r < j->size; r++)
        if (b.n[r] != amount(r, j->rank)) { snprintf(j->msg, sizeof j->msg, "from %d: %zu bytes, not %zu", r, b.n[r], amount(r, j->rank)); return 0; }
    if (b.bad) { snprintf(j->msg, sizeof j->msg, "%d bytes wrong", b.bad); return 0; }
    return 1;
}

static void test_exchange_uneven_counts(void)
{
    rank_job jobs[MAXR];
    CHECK(run_world(4, 1000, exchange_body, jobs));
    CHECK(run_world(3, 1 << 20, exchange_body, jobs));
    CHECK(run_world(4, 3, exchange_body, jobs)); /* a bound below one record: one record per round */
}

/* ---- gather in rank order; allreduce, allgather, bcast -------------------- */

typedef struct gather_sink { int last_src; size_t from[MAXR]; int bad; } gather_sink;

static sh_status sink_gather(void *ud, int src, const void *data, size_t n, sh_error *err)
{
    gather_sink *g = (gather_sink *)ud;
    const unsigned char *p = (const unsigned char *)data;
    size_t i;
    (void)err;
    if (src < g->last_src) g->bad++;          /* rank order */
    g->last_src = src;
    for (i = 0; i < n; i++) if (p[i] != (unsigned char)(src + 1)) g->bad++;
    g->from[src] += n;
    return SH_OK;
}

static int gather_body(rank_job *j, sh_comm *c)
{
    size_t n = (size_t)(j->rank * 2500 + 8) * 8, i;
    unsigned char *data = (unsigned char *)malloc(n);
    sh_buffer_source src;
    gather_sink g;
    uint64_t v[3], all[MAXR];
    char word[16];
    sh_error err;
    int r, ok = 1;
    for (i = 0; i < n; i++) data[i] = (unsigned char)(j->rank + 1);
    memset(&g, 0, sizeof g);
    src.data = data; src.size = n; src.pos = 0;
    if (sh_comm_gather(c, j->size - 1, 8, sh_buffer_produce, &src, sink_gather, &g, &err) != SH_OK) {
        snprintf(j->msg, sizeof j->msg, "gather: %s", err.msg); free(data); return 0;
    }
    free(data);
    if (j->rank == j->size - 1) {
        for (r = 0; r < j->size; r++) if (g.from[r] != (size_t)(r * 2500 + 8) * 8) ok = 0;
        if (g.bad || !ok) { snprintf(j->msg, sizeof j->msg, "gather at root: %d bad", g.bad); return 0; }
    } else if (g.from[0]) {
        snprintf(j->msg, sizeof j->msg, "a rank that is not the root received a gather"); return 0;
    }
    v[0] = v[1] = v[2] = (uint64_t)j->rank + 10;
    if (sh_comm_allreduce(c, v, 1, SH_REDUCE_SUM, &err) != SH_OK || sh_comm_allreduce(c, v + 1, 1, SH_REDUCE_MAX, &err) != SH_OK ||
        sh_comm_allreduce(c, v + 2, 1, SH_REDUCE_MIN, &err) != SH_OK || sh_comm_allgather(c, (uint64_t)j->rank * 3, all, &err) != SH_OK) {
        snprintf(j->msg, sizeof j->msg, "collective: %s", err.msg); return 0;
    }
    if (v[0] != (uint64_t)(10 * j->size + j->size * (j->size - 1) / 2) || v[1] != (uint64_t)(9 + j->size) || v[2] != 10) {
        snprintf(j->msg, sizeof j->msg, "allreduce gave %llu %llu %llu", (unsigned long long)v[0], (unsigned long long)v[1],
                 (unsigned long long)v[2]);
        return 0;
    }
    for (r = 0; r < j->size; r++) if (all[r] != (uint64_t)r * 3) { snprintf(j->msg, sizeof j->msg, "allgather"); return 0; }
    memset(word, 0, sizeof word);
    if (j->rank == 1 % j->size) memcpy(word, "shingles", 8);
    if (sh_comm_bcast(c, 1 % j->size, word, sizeof word, &err) != SH_OK || strcmp(word, "shingles") != 0) {
        snprintf(j->msg, sizeof j->msg, "bcast"); return 0;
    }
    return 1;
}

static void test_gather_and_collectives(void)
{
    rank_job jobs[MAXR];
    CHECK(run_world(1, 1 << 16, gather_body, jobs));
    CHECK(run_world(4, 1 << 12, gather_body, jobs));   /* chunks of 4 KiB: many per rank */
}

/* ---- a rank that fails ends the job: the others' calls fail, none hangs --- */

static int abort_body(rank_job *j, sh_comm *c)
{
    sh_error err;
    uint64_t v = 1;
    int i;
    if (j->rank == 2) {
        sh_comm_abort(c, 1);
        return 1;
    }
    for (i = 0; i < 100; i++)
        if (sh_comm_allreduce(c, &v, 1, SH_REDUCE_SUM, &err) != SH_OK) {
            if (err.code == SH_EIO && strstr(err.msg, "rank 2 ended the job")) return 1;
            snprintf(j->msg, sizeof j->msg, "unexpected error: %s", err.msg);
            return 0;
        }
    snprintf(j->msg, sizeof j->msg, "100 allreduces went through with a rank gone");
    return 0;
}

static void test_abort_ends_every_rank(void)
{
    rank_job jobs[MAXR];
    CHECK(run_world(4, 1 << 16, abort_body, jobs));
}

int main(void)
{
    RUN(test_shuffle_reaches_owners);
    RUN(test_exchange_uneven_counts);
    RUN(test_gather_and_collectives);
    RUN(test_abort_ends_every_rank);
    return TEST_END();
}
