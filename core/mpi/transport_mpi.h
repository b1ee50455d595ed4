/* The MPI transport of core/exchange.h: the collectives of a distributed
 * run over MPI (Open MPI, MPICH, any MPI-3 library). Built only when CMake
 * finds MPI; the rest of the engine, and the Lua module shingle.core, never
 * link it. The Lua module shingle.mpi (core/lua/mpi/l_mpi.c) is its binding.
 *
 * The world is a duplicate of MPI_COMM_WORLD whose error handler returns
 * errors (MPI_ERRORS_RETURN) instead of aborting silently, so a failed
 * collective comes back as SH_EIO with MPI's own message and the rank that
 * saw it; the caller then reports it and ends the job with sh_mpi_abort
 * (MPI_Abort), which stops every rank, also those blocked in a collective. */
#ifndef SHINGLE_TRANSPORT_MPI_H
#define SHINGLE_TRANSPORT_MPI_H

#include "exchange.h"

typedef struct sh_mpi sh_mpi;

/* Initialize MPI if nobody has (MPI_Init_thread, MPI_THREAD_FUNNELED: the
 * sketching pool's threads never call MPI), and make the world. Errors:
 * SH_EIO (MPI could not start), SH_ENOMEM. */
sh_status sh_mpi_open(sh_mpi **out, sh_error *err);
/* The transport over m's world. */
void sh_mpi_transport(sh_transport *t, sh_mpi *m);
int sh_mpi_rank(const sh_mpi *m);
int sh_mpi_size(const sh_mpi *m);
/* Ranks on this rank's node (they share its cores) and this rank's index among them. */
int sh_mpi_local_size(const sh_mpi *m);
int sh_mpi_local_rank(const sh_mpi *m);
/* The processor name (MPI_Get_processor_name): the host a rank runs on. */
const char *sh_mpi_host(const sh_mpi *m);
/* The MPI library's version string (MPI_Get_library_version), first line. */
const char *sh_mpi_library(const sh_mpi *m);
/* A limit on how long a barrier waits for the other ranks (0, the default:
 * none). Barriers do not burn a core (they poll, then sleep up to 1 ms
 * between polls); one that outlasts the limit returns SH_EIO naming the rank,
 * so a job whose rank hangs alive ends instead of waiting for the
 * scheduler's time limit. The pipeline puts a barrier before each phase. */
void sh_mpi_set_timeout(sh_mpi *m, double seconds);
/* End every rank of the job with exit status code. Does not return. */
void sh_mpi_abort(sh_mpi *m, int code);
/* Free the world and finalize MPI if sh_mpi_open initialized it; after a
 * normal end, every rank calls it. NULL is a no-op. */
sh_status sh_mpi_close(sh_mpi *m, sh_error *err);

#endif
