/* Exchanging records between the ranks of a distributed run: the "divide,
 * compute, merge" of Broder et al. 1997 ("Algorithms") spread over
 * processes. Records of a phase are routed to the rank that owns their key
 * (a range of shingle values, of document ids), in bounded rounds, so that
 * each rank sorts and merges its own key range with the external sort it
 * uses alone (MapReduce-MPI's key-value exchange, in C over fixed-size
 * records).
 *
 * Two layers:
 *   sh_transport  the collective operations of a message-passing library, as
 *                 function pointers: core/mpi/ implements them with MPI (built
 *                 only when MPI is found), core/transport_threads.c with
 *                 threads of one process (the tests run every distributed
 *                 phase that way, MPI or not).
 *   sh_comm       what the phases use: an all-to-all exchange of records with
 *                 the counts exchanged first and the data sent in rounds so
 *                 that no message exceeds a bound and no rank receives more
 *                 than round_bytes at once; a gather to one rank in rank
 *                 order; a shuffle that routes what a producer makes to the
 *                 owners of the records' keys; counters of the bytes each rank
 *                 sent to and received from the others.
 *
 * Every function here is collective: every rank calls it, in the same order,
 * with matching record sizes. On failure a function returns an error (SH_EIO
 * for the transport, SH_ENOMEM, or the status a callback returned) and the
 * rank must end the whole job (MPI_Abort): its peers may be waiting for it
 * in a collective call and would wait forever. No global state; one thread
 * per sh_comm. */
#ifndef SHINGLE_EXCHANGE_H
#define SHINGLE_EXCHANGE_H

#include <stddef.h>
#include <stdint.h>
#include "error.h"

/* The most bytes one message carries (one peer, one round): under the 2^31
 * that an MPI int count allows. */
#define SH_XCHG_MAX_MESSAGE ((size_t)1 << 30)
/* The default receive bound of a round. */
#define SH_XCHG_ROUND_BYTES ((size_t)64 << 20)

typedef enum sh_reduce { SH_REDUCE_SUM = 0, SH_REDUCE_MAX, SH_REDUCE_MIN } sh_reduce;

/* The collective operations of a transport. Counts and displacements are in
 * bytes; no count exceeds SH_XCHG_MAX_MESSAGE and no buffer's total exceeds
 * it either. Errors: SH_EIO with a message naming the operation and the rank. */
typedef struct sh_transport {
    void *ud;
    int rank, size;
    /* each rank sends `each` bytes to every rank: send + r * each goes to rank r,
     * recv + r * each comes from rank r */
    sh_status (*alltoall)(void *ud, const void *send, void *recv, size_t each, sh_error *err);
    sh_status (*alltoallv)(void *ud, const void *send, const size_t *scounts, const size_t *sdispls,
                           void *recv, const size_t *rcounts, const size_t *rdispls, sh_error *err);
    /* count bytes from every rank into root's recv at rdispls[r] (rcounts and
     * rdispls are read at the root only) */
    sh_status (*gatherv)(void *ud, int root, const void *send, size_t count, void *recv, const size_t *rcounts,
                         const size_t *rdispls, sh_error *err);
    sh_status (*bcast)(void *ud, int root, void *buf, size_t count, sh_error *err);
    sh_status (*allreduce_u64)(void *ud, uint64_t *v, size_t n, sh_reduce op, sh_error *err);
    sh_status (*barrier)(void *ud, sh_error *err);
    /* End the whole job now, every rank (MPI_Abort): for a rank that failed
     * while its peers may be blocked in a collective call. Does not return
     * with MPI; the threads transport makes every pending and later call of
     * the other ranks fail instead. */
    void (*abort)(void *ud, int code);
} sh_transport;

typedef struct sh_comm {
    sh_transport t;
    int rank, size;
    size_t round_bytes;    /* most bytes a rank receives in one round, from all peers */
    size_t max_message;    /* most bytes of one message */
    uint64_t sent;         /* bytes sent to other ranks (not to itself) so far */
    uint64_t received;     /* bytes received from other ranks so far */
    uint64_t rounds;       /* exchange rounds so far */
} sh_comm;

/* Where received records go: n bytes (whole records) from rank src. */
typedef sh_status (*sh_sink_fn)(void *ud, int src, const void *data, size_t n, sh_error *err);
/* Where records come from: up to max bytes into buf, *n a multiple of the
 * record size; *n == 0 means the producer is finished (and stays finished). */
typedef sh_status (*sh_produce_fn)(void *ud, void *buf, size_t max, size_t *n, sh_error *err);
/* The rank that owns a record, 0 <= rank < size. */
typedef int (*sh_owner_fn)(void *ud, const unsigned char *rec);

/* Set c up over transport t (copied). round_bytes: 0 takes
 * SH_XCHG_ROUND_BYTES; it is capped at SH_XCHG_MAX_MESSAGE. */
void sh_comm_init(sh_comm *c, const sh_transport *t, size_t round_bytes);

sh_status sh_comm_barrier(sh_comm *c, sh_error *err);
/* End the job: see sh_transport.abort. */
void sh_comm_abort(sh_comm *c, int code);
/* v[0..n) reduced over all ranks, in place. */
sh_status sh_comm_allreduce(sh_comm *c, uint64_t *v, size_t n, sh_reduce op, sh_error *err);
/* all[r] = rank r's mine, for every r (all has c->size entries). */
sh_status sh_comm_allgather(sh_comm *c, uint64_t mine, uint64_t *all, sh_error *err);
/* root's count bytes at buf to every rank's buf (count must match). */
sh_status sh_comm_bcast(sh_comm *c, int root, void *buf, size_t count, sh_error *err);

/* All-to-all of records: send holds the records for rank 0, then those for
 * rank 1, ...; counts[r] is the number of bytes for rank r (a multiple of
 * record_size). The counts are exchanged first, then the data in rounds in
 * which no message exceeds max_message nor round_bytes / size (rounded down to
 * whole records, at least one record), so a rank holds at most about
 * round_bytes of received data at once. sink receives every rank's records,
 * in the order that rank sent them, source by source within a round. */
sh_status sh_comm_exchange(sh_comm *c, const void *send, const uint64_t *counts, size_t record_size,
                           sh_sink_fn sink, void *ud, sh_error *err);

/* Gather to root, in rank order: every rank's producer is drained in turn
 * (rank 0 first), in chunks of at most round_bytes, and root's sink receives
 * them in that order (src, data, n); other ranks' sinks are not called and may
 * be NULL. */
sh_status sh_comm_gather(sh_comm *c, int root, size_t record_size, sh_produce_fn produce, void *pud,
                         sh_sink_fn sink, void *sud, sh_error *err);

/* Route everything a producer makes to the owners of its records: rounds of
 * up to round_bytes produced, partitioned by owner (keeping their order) and
 * exchanged, until every rank's producer is finished. */
sh_status sh_comm_shuffle(sh_comm *c, size_t record_size, sh_produce_fn produce, void *pud,
                          sh_owner_fn owner, void *oud, sh_sink_fn sink, void *sud, sh_error *err);

/* A producer over one buffer: sh_buffer_source b = { data, bytes }; pass
 * sh_buffer_produce, &b. */
typedef struct sh_buffer_source {
    const unsigned char *data;
    size_t size, pos;
} sh_buffer_source;
sh_status sh_buffer_produce(void *ud, void *buf, size_t max, size_t *n, sh_error *err);

/* Owner of a key that is a uniformly distributed 64-bit value (a shingle
 * fingerprint, a hash), stored big-endian in the record's first 8 bytes:
 * rank r owns the r-th of size equal ranges of the key space. ud: the
 * sh_comm. */
int sh_owner_by_key64(void *ud, const unsigned char *rec);
/* The rank whose key range holds a key. */
static inline int sh_key64_owner(uint64_t key, int size)
{
    return (int)(((key >> 32) * (uint64_t)size) >> 32);
}

#endif
