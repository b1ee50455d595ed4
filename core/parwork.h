/* Chunks of a sequential job run on threads: phase 4 judges the pairs of
 * pairs.bin (decide.c) a chunk at a time on every core, while the caller
 * consumes the chunks' results in chunk order, so what it writes (links.bin,
 * the union-find, the counters) is the same as one thread's, byte for byte. */
#ifndef SHINGLE_PARWORK_H
#define SHINGLE_PARWORK_H

#include <stddef.h>
#include "error.h"

/* Work on chunk c with the context of the thread running it; its status
 * (and err) are the chunk's. */
typedef sh_status (*sh_chunk_fn)(void *ctx, size_t c, sh_error *err);

/* Run fn on chunks 0..n-1 with `threads` threads (the calling one among
 * them; fewer if threads cannot start), thread t with ctx[t]; chunks are
 * taken in increasing order. After a chunk fails no further chunk is
 * started; the error returned is that of the failed chunk with the lowest
 * number, so the same failure is reported whatever the threads' timing.
 * status[c] (n of them) receives each chunk's status (SH_OK for those not
 * run after a failure: check the return value first). */
sh_status sh_par_chunks(int threads, size_t n, sh_chunk_fn fn, void **ctx, sh_status *status, sh_error *err);

#endif
