/* A transport (core/exchange.h) whose ranks are threads of one process: the
 * distributed phases run and are tested this way whether MPI is installed or
 * not (core/test/test_dist.c), and under the sanitizers. Each rank's thread
 * makes the same collective calls as an MPI rank would; they meet at a
 * barrier, read what the others published, and meet again.
 *
 *   sh_threads_world *w;  sh_threads_world_new(&w, 4, &err);
 *   in thread r:  sh_transport t;  sh_threads_transport(&t, w, r);  ... use t ...
 *   after all threads are joined:  sh_threads_world_free(w);
 *
 * A rank that calls abort makes every collective call of every rank, pending
 * or later, return SH_EIO ("rank R ended the job"), so a failure path ends
 * instead of hanging. */
#ifndef SHINGLE_TRANSPORT_THREADS_H
#define SHINGLE_TRANSPORT_THREADS_H

#include "exchange.h"

typedef struct sh_threads_world sh_threads_world;

/* A world of size ranks (1 <= size <= 1024). Errors: SH_EINVAL, SH_ENOMEM. */
sh_status sh_threads_world_new(sh_threads_world **out, int size, sh_error *err);
void sh_threads_world_free(sh_threads_world *w);
/* The transport of rank `rank` of w, for the thread that plays it. */
void sh_threads_transport(sh_transport *t, sh_threads_world *w, int rank);
/* The rank that aborted, or -1. */
int sh_threads_aborted(const sh_threads_world *w);

#endif
