/* Record exchange between ranks over a transport: see exchange.h. */
#include "exchange.h"

#include <stdlib.h>
#include <string.h>

#include "byteorder.h"

void sh_comm_init(sh_comm *c, const sh_transport *t, size_t round_bytes)
{
    memset(c, 0, sizeof *c);
    c->t = *t;
    c->rank = t->rank;
    c->size = t->size;
    if (round_bytes == 0) round_bytes = SH_XCHG_ROUND_BYTES;
    if (round_bytes > SH_XCHG_MAX_MESSAGE) round_bytes = SH_XCHG_MAX_MESSAGE;
    c->round_bytes = round_bytes;
    c->max_message = SH_XCHG_MAX_MESSAGE;
}

static sh_status nomem(sh_error *err, const char *what)
{
    return sh_error_set(err, SH_ENOMEM, 0, "out of memory %s", what);
}

sh_status sh_comm_barrier(sh_comm *c, sh_error *err)
{
    return c->t.barrier(c->t.ud, err);
}

void sh_comm_abort(sh_comm *c, int code)
{
    c->t.abort(c->t.ud, code);
}

sh_status sh_comm_allreduce(sh_comm *c, uint64_t *v, size_t n, sh_reduce op, sh_error *err)
{
    return c->t.allreduce_u64(c->t.ud, v, n, op, err);
}

sh_status sh_comm_allgather(sh_comm *c, uint64_t mine, uint64_t *all, sh_error *err)
{
    size_t i, p = (size_t)c->size;
    sh_status s;
    unsigned char *send = (unsigned char *)calloc(p, 8), *recv = (unsigned char *)calloc(p, 8);
    if (!send || !recv) { free(send); free(recv); return nomem(err, "for an allgather"); }
    for (i = 0; i < p; i++) sh_store_le64(send + 8 * i, mine);
    s = c->t.alltoall(c->t.ud, send, recv, 8, err);
    for (i = 0; s == SH_OK && i < p; i++) all[i] = sh_load_le64(recv + 8 * i);
    free(send);
    free(recv);
    return s;
}

sh_status sh_comm_bcast(sh_comm *c, int root, void *buf, size_t count, sh_error *err)
{
    size_t off = 0;
    while (off < count) {
        size_t k = count - off < c->max_message ? count - off : c->max_message;
        sh_status s = c->t.bcast(c->t.ud, root, (unsigned char *)buf + off, k, err);
        if (s != SH_OK) return s;
        off += k;
    }
    return SH_OK;
}

/* Bytes per peer and round: at most max_message and round_bytes / size, in
 * whole records, at least one record. */
static size_t per_peer(const sh_comm *c, size_t record_size)
{
    size_t cap = c->round_bytes / (size_t)c->size;
    if (cap > c->max_message) cap = c->max_message;
    cap -= cap % record_size;
    return cap ? cap : record_size;
}

sh_status sh_comm_exchange(sh_comm *c, const void *send, const uint64_t *counts, size_t record_size,
                           sh_sink_fn sink, void *ud, sh_error *err)
{
    const size_t p = (size_t)c->size;
    size_t cap, *sc = NULL, *sd = NULL, *rc = NULL, *rd = NULL, sbuf = 0, rbuf = 0, i;
    unsigned char *cnt = NULL, *pack = NULL, *recv = NULL;
    uint64_t *rtotal = NULL, *sdone = NULL, *rdone = NULL, *soff = NULL, rounds = 0, r;
    sh_status s = SH_OK;
    if (record_size == 0) return sh_error_set(err, SH_EINVAL, 0, "an exchange needs a record size");
    cap = per_peer(c, record_size);
    cnt = (unsigned char *)calloc(p, 16);
    rtotal = (uint64_t *)malloc(4 * p * sizeof *rtotal);
    sc = (size_t *)malloc(4 * p * sizeof *sc);
    if (!cnt || !rtotal || !sc) { s = nomem(err, "for an exchange"); goto done; }
    sdone = rtotal + p; rdone = rtotal + 2 * p; soff = rtotal + 3 * p;
    sd = sc + p; rc = sc + 2 * p; rd = sc + 3 * p;
    /* the counts first, so every rank knows what it receives */
    for (i = 0; i < p; i++) {
        if (counts[i] % record_size) {
            s = sh_error_set(err, SH_EINVAL, 0, "an exchange of %zu-byte records was given %llu bytes for rank %zu",
                             record_size, (unsigned long long)counts[i], i);
            goto done;
        }
        sh_store_le64(cnt + 8 * i, counts[i]);
    }
    if ((s = c->t.alltoall(c->t.ud, cnt, cnt + 8 * p, 8, err)) != SH_OK) goto done;
    for (i = 0; i < p; i++) {
        uint64_t k;
        rtotal[i] = sh_load_le64(cnt + 8 * p + 8 * i);
        soff[i] = i ? soff[i - 1] + counts[i - 1] : 0;
        sdone[i] = rdone[i] = 0;
        k = (counts[i] + cap - 1) / cap;
        if (k > rounds) rounds = k;
        sbuf += (size_t)(counts[i] < cap ? counts[i] : cap);
        rbuf += (size_t)(rtotal[i] < cap ? rtotal[i] : cap);
    }
    /* every rank makes the same number of rounds */
    if ((s = sh_comm_allreduce(c, &rounds, 1, SH_REDUCE_MAX, err)) != SH_OK) goto done;
    if ((sbuf && !(pack = (unsigned char *)malloc(sbuf))) || (rbuf && !(recv = (unsigned char *)malloc(rbuf)))) {
        s = nomem(err, "for an exchange's buffers");
        goto done;
    }
    for (r = 0; r < rounds; r++) {
        size_t so = 0, ro = 0;
        /* this round's piece for each peer, packed so displacements stay small */
        for (i = 0; i < p; i++) {
            uint64_t left = counts[i] - sdone[i];
            sc[i] = (size_t)(left < cap ? left : cap);
            sd[i] = so;
            if (sc[i]) memcpy(pack + so, (const unsigned char *)send + soff[i] + sdone[i], sc[i]);
            so += sc[i];
            left = rtotal[i] - rdone[i];
            rc[i] = (size_t)(left < cap ? left : cap);
            rd[i] = ro;
            ro += rc[i];
        }
        if ((s = c->t.alltoallv(c->t.ud, pack, sc, sd, recv, rc, rd, err)) != SH_OK) goto done;
        c->rounds++;
        for (i = 0; i < p; i++) {
            sdone[i] += sc[i];
            rdone[i] += rc[i];
            if ((int)i != c->rank) { c->sent += sc[i]; c->received += rc[i]; }
        }
        for (i = 0; i < p; i++)
            if (rc[i] && (s = sink(ud, (int)i, recv + rd[i], rc[i], err)) != SH_OK) goto done;
    }
done:
    free(cnt);
    free(rtotal);
    free(sc);
    free(pack);
    free(recv);
    return s;
}

sh_status sh_comm_gather(sh_comm *c, int root, size_t record_size, sh_produce_fn produce, void *pud,
                         sh_sink_fn sink, void *sud, sh_error *err)
{
    const size_t p = (size_t)c->size;
    size_t chunk = c->round_bytes - c->round_bytes % record_size, *rc = NULL, *rd = NULL, i;
    unsigned char *buf = NULL, *in = NULL;
    sh_status s = SH_OK;
    int src;
    if (chunk == 0) chunk = record_size;
    buf = (unsigned char *)malloc(chunk);
    in = c->rank == root ? (unsigned char *)malloc(chunk) : NULL; /* MPI wants send and receive buffers apart */
    rc = (size_t *)calloc(2 * p, sizeof *rc);
    if (!buf || !rc || (c->rank == root && !in)) { free(buf); free(in); free(rc); return nomem(err, "for a gather"); }
    rd = rc + p;
    /* rank by rank: the source says how much it sends, then sends it */
    for (src = 0; src < c->size && s == SH_OK; src++) {
        for (;;) {
            uint64_t n = 0;
            size_t k = 0;
            if (c->rank == src) {
                if ((s = produce(pud, buf, chunk, &k, err)) != SH_OK) break;
                n = k;
            }
            if ((s = sh_comm_bcast(c, src, &n, sizeof n, err)) != SH_OK) break;
            if (n == 0) break;
            if (n % record_size || n > chunk) {
                s = sh_error_set(err, SH_EINVAL, 0, "a gather of %zu-byte records got %llu bytes", record_size, (unsigned long long)n);
                break;
            }
            for (i = 0; i < p; i++) rc[i] = rd[i] = 0;
            rc[src] = (size_t)n;
            if ((s = c->t.gatherv(c->t.ud, root, buf, c->rank == src ? (size_t)n : 0, in, rc, rd, err)) != SH_OK) break;
            c->rounds++;
            if (src != root) {
                if (c->rank == src) c->sent += n;
                if (c->rank == root) c->received += n;
            }
            if (c->rank == root && (s = sink(sud, src, in, (size_t)n, err)) != SH_OK) break;
        }
    }
    free(buf);
    free(in);
    free(rc);
    return s;
}

sh_status sh_comm_shuffle(sh_comm *c, size_t record_size, sh_produce_fn produce, void *pud,
                          sh_owner_fn owner, void *oud, sh_sink_fn sink, void *sud, sh_error *err)
{
    const size_t p = (size_t)c->size;
    size_t cap = c->round_bytes - c->round_bytes % record_size, i;
    unsigned char *in = NULL, *out = NULL;
    uint64_t *counts = NULL, *pos = NULL;
    int *dest = NULL, finished = 0;
    sh_status s = SH_OK;
    if (cap == 0) cap = record_size;
    in = (unsigned char *)malloc(cap);
    out = (unsigned char *)malloc(cap);
    counts = (uint64_t *)malloc(2 * p * sizeof *counts);
    dest = (int *)malloc(cap / record_size * sizeof *dest);
    if (!in || !out || !counts || !dest) { s = nomem(err, "for a shuffle"); goto done; }
    pos = counts + p;
    for (;;) {
        size_t n = 0, k;
        uint64_t more;
        if (!finished) {
            if ((s = produce(pud, in, cap, &n, err)) != SH_OK) goto done;
            if (n % record_size) { s = sh_error_set(err, SH_EINVAL, 0, "a producer gave %zu bytes of %zu-byte records", n, record_size); goto done; }
            if (n == 0) finished = 1;
        }
        more = n > 0;
        if ((s = sh_comm_allreduce(c, &more, 1, SH_REDUCE_MAX, err)) != SH_OK) goto done;
        if (!more) break;
        /* a stable counting sort by destination */
        memset(counts, 0, p * sizeof *counts);
        for (k = 0; k < n / record_size; k++) {
            int d = owner(oud, in + k * record_size);
            if (d < 0 || d >= c->size) { s = sh_error_set(err, SH_EINVAL, 0, "a record's owner %d is not a rank of %d", d, c->size); goto done; }
            dest[k] = d;
            counts[d] += record_size;
        }
        for (i = 0; i < p; i++) pos[i] = i ? pos[i - 1] + counts[i - 1] : 0;
        for (k = 0; k < n / record_size; k++) {
            memcpy(out + pos[dest[k]], in + k * record_size, record_size);
            pos[dest[k]] += record_size;
        }
        if ((s = sh_comm_exchange(c, out, counts, record_size, sink, sud, err)) != SH_OK) goto done;
    }
done:
    free(in);
    free(out);
    free(counts);
    free(dest);
    return s;
}

sh_status sh_buffer_produce(void *ud, void *buf, size_t max, size_t *n, sh_error *err)
{
    sh_buffer_source *b = (sh_buffer_source *)ud;
    size_t k = b->size - b->pos;
    (void)err;
    if (k > max) k = max;
    memcpy(buf, b->data + b->pos, k);
    b->pos += k;
    *n = k;
    return SH_OK;
}

int sh_owner_by_key64(void *ud, const unsigned char *rec)
{
    return sh_key64_owner(sh_load_be64(rec), ((const sh_comm *)ud)->size);
}
