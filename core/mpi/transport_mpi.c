/* The collectives of core/exchange.h with MPI: see transport_mpi.h. */
#include "transport_mpi.h"

#include <limits.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct sh_mpi {
    MPI_Comm world;       /* a duplicate of MPI_COMM_WORLD, errors returned */
    int rank, size, local_rank, local_size;
    int initialized;      /* 1 if sh_mpi_open called MPI_Init_thread */
    double timeout;       /* seconds a collective may wait for the others; 0: no limit */
    char host[MPI_MAX_PROCESSOR_NAME + 1];
    char library[MPI_MAX_LIBRARY_VERSION_STRING];
};

/* SH_EIO naming the call, the rank and MPI's explanation. */
static sh_status mpi_fail(const sh_mpi *m, const char *call, int rc, sh_error *err)
{
    char what[MPI_MAX_ERROR_STRING + 1];
    int len = 0;
    if (MPI_Error_string(rc, what, &len) != MPI_SUCCESS) len = snprintf(what, sizeof what, "error %d", rc);
    what[len < 0 ? 0 : len] = 0;
    return sh_error_set(err, SH_EIO, 0, "%s failed on rank %d of %d (%s): %s", call, m->rank, m->size, m->host, what);
}

sh_status sh_mpi_open(sh_mpi **out, sh_error *err)
{
    sh_mpi *m;
    MPI_Comm node;
    int inited = 0, provided = 0, rc, len = 0;
    *out = NULL;
    m = (sh_mpi *)calloc(1, sizeof *m);
    if (!m) return sh_error_set(err, SH_ENOMEM, 0, "out of memory");
    MPI_Initialized(&inited);
    if (!inited) {
        if (MPI_Init_thread(NULL, NULL, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS) {
            free(m);
            return sh_error_set(err, SH_EIO, 0, "MPI could not start (MPI_Init_thread failed): run under mpirun, "
                                "or check the MPI installation with `mpirun -np 2 hostname`");
        }
        m->initialized = 1;
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    if ((rc = MPI_Comm_dup(MPI_COMM_WORLD, &m->world)) != MPI_SUCCESS) {
        sh_status s = mpi_fail(m, "MPI_Comm_dup", rc, err);
        free(m);
        return s;
    }
    MPI_Comm_set_errhandler(m->world, MPI_ERRORS_RETURN);
    MPI_Comm_rank(m->world, &m->rank);
    MPI_Comm_size(m->world, &m->size);
    MPI_Get_processor_name(m->host, &len);
    m->host[len < 0 ? 0 : len] = 0;
    len = 0;
    {
        char lib[MPI_MAX_LIBRARY_VERSION_STRING];
        MPI_Get_library_version(lib, &len);
        lib[len < 0 ? 0 : (len < MPI_MAX_LIBRARY_VERSION_STRING ? len : MPI_MAX_LIBRARY_VERSION_STRING - 1)] = 0;
        lib[strcspn(lib, "\n,")] = 0;
        snprintf(m->library, sizeof m->library, "%s", lib);
    }
    /* the ranks sharing this node, to share its cores among them */
    m->local_rank = 0;
    m->local_size = 1;
    if (MPI_Comm_split_type(m->world, MPI_COMM_TYPE_SHARED, m->rank, MPI_INFO_NULL, &node) == MPI_SUCCESS) {
        MPI_Comm_rank(node, &m->local_rank);
        MPI_Comm_size(node, &m->local_size);
        MPI_Comm_free(&node);
    }
    *out = m;
    return SH_OK;
}

int sh_mpi_rank(const sh_mpi *m) { return m->rank; }
int sh_mpi_size(const sh_mpi *m) { return m->size; }
int sh_mpi_local_size(const sh_mpi *m) { return m->local_size; }
int sh_mpi_local_rank(const sh_mpi *m) { return m->local_rank; }
const char *sh_mpi_host(const sh_mpi *m) { return m->host; }
const char *sh_mpi_library(const sh_mpi *m) { return m->library; }

void sh_mpi_abort(sh_mpi *m, int code)
{
    MPI_Abort(m ? m->world : MPI_COMM_WORLD, code);
    abort(); /* MPI_Abort returns only if MPI is broken */
}

sh_status sh_mpi_close(sh_mpi *m, sh_error *err)
{
    sh_status s = SH_OK;
    int rc;
    if (!m) return SH_OK;
    MPI_Comm_free(&m->world);
    if (m->initialized && (rc = MPI_Finalize()) != MPI_SUCCESS) s = mpi_fail(m, "MPI_Finalize", rc, err);
    free(m);
    return s;
}

void sh_mpi_set_timeout(sh_mpi *m, double seconds)
{
    m->timeout = seconds > 0 ? seconds : 0;
}

/* ---- the transport ---------------------------------------------------------- */

/* Wait for a nonblocking barrier without burning a core: MPI's blocking
 * calls poll at full speed, so a rank that waits long (for the slowest
 * rank's phase 1, for rank 0's report) would take CPU from the ranks still
 * working on its node. A short spin first (most waits end quickly), then
 * sleeps that grow to a millisecond. With a timeout, a wait that outlasts it
 * ends with an error naming the call: the caller reports it and ends the
 * job. Only the barrier waits so: the data-moving collectives stay blocking
 * (their nonblocking forms hang in Open MPI 4.1's libnbc on some sequences
 * with empty contributions), and the pipeline puts a barrier before each
 * phase, where the long waits are. */
static sh_status wait_for(sh_mpi *m, MPI_Request *req, const char *call, sh_error *err)
{
    struct timespec nap;
    double start = MPI_Wtime();
    long ns = 1000;
    unsigned spins = 0;
    int done = 0, rc;
    for (;;) {
        if ((rc = MPI_Test(req, &done, MPI_STATUS_IGNORE)) != MPI_SUCCESS) return mpi_fail(m, call, rc, err);
        if (done) return SH_OK;
        if (++spins < 2000) continue;
        if (m->timeout > 0 && MPI_Wtime() - start > m->timeout)
            return sh_error_set(err, SH_EIO, 0, "rank %d of %d (%s) waited %.0f s in %s for the other ranks: one of them is stuck "
                                "or gone (--mpi-timeout)", m->rank, m->size, m->host, MPI_Wtime() - start, call);
        nap.tv_sec = 0;
        nap.tv_nsec = ns;
        nanosleep(&nap, NULL);
        if (ns < 1000000) ns *= 2;
    }
}

/* size_t counts and displacements as MPI's ints; exchange.h keeps them under 2^30 */
static int to_ints(const sh_mpi *m, const size_t *a, int *out, sh_error *err)
{
    int i;
    for (i = 0; i < m->size; i++) {
        if (a[i] > (size_t)INT_MAX) {
            sh_error_set(err, SH_EINVAL, 0, "a message of %zu bytes is over MPI's limit of %d", a[i], INT_MAX);
            return 0;
        }
        out[i] = (int)a[i];
    }
    return 1;
}

static sh_status m_alltoall(void *ud, const void *send, void *recv, size_t each, sh_error *err)
{
    sh_mpi *m = (sh_mpi *)ud;
    int rc;
    if (each > (size_t)INT_MAX) return sh_error_set(err, SH_EINVAL, 0, "an all-to-all of %zu bytes each is over MPI's limit", each);
    rc = MPI_Alltoall(send, (int)each, MPI_BYTE, recv, (int)each, MPI_BYTE, m->world);
    return rc == MPI_SUCCESS ? SH_OK : mpi_fail(m, "MPI_Alltoall", rc, err);
}

static sh_status m_alltoallv(void *ud, const void *send, const size_t *scounts, const size_t *sdispls,
                             void *recv, const size_t *rcounts, const size_t *rdispls, sh_error *err)
{
    sh_mpi *m = (sh_mpi *)ud;
    int *v = (int *)malloc(4 * (size_t)m->size * sizeof *v), rc;
    sh_status s = SH_OK;
    if (!v) return sh_error_set(err, SH_ENOMEM, 0, "out of memory");
    if (!to_ints(m, scounts, v, err) || !to_ints(m, sdispls, v + m->size, err) || !to_ints(m, rcounts, v + 2 * m->size, err) ||
        !to_ints(m, rdispls, v + 3 * m->size, err)) {
        s = SH_EINVAL;
    } else {
        /* MPI wants non-NULL buffers even when every count is 0 */
        static unsigned char none[1];
        rc = MPI_Alltoallv(send ? send : none, v, v + m->size, MPI_BYTE, recv ? recv : none, v + 2 * m->size, v + 3 * m->size,
                           MPI_BYTE, m->world);
        if (rc != MPI_SUCCESS) s = mpi_fail(m, "MPI_Alltoallv", rc, err);
    }
    free(v);
    return s;
}

static sh_status m_gatherv(void *ud, int root, const void *send, size_t count, void *recv, const size_t *rcounts,
                           const size_t *rdispls, sh_error *err)
{
    sh_mpi *m = (sh_mpi *)ud;
    int *v = NULL, rc;
    sh_status s = SH_OK;
    static unsigned char none[1];
    if (count > (size_t)INT_MAX) return sh_error_set(err, SH_EINVAL, 0, "a gather of %zu bytes is over MPI's limit", count);
    if (m->rank == root) {
        v = (int *)malloc(2 * (size_t)m->size * sizeof *v);
        if (!v) return sh_error_set(err, SH_ENOMEM, 0, "out of memory");
        if (!to_ints(m, rcounts, v, err) || !to_ints(m, rdispls, v + m->size, err)) { free(v); return SH_EINVAL; }
    }
    rc = MPI_Gatherv(send ? send : none, (int)count, MPI_BYTE, recv ? recv : none, v, v ? v + m->size : NULL, MPI_BYTE, root,
                     m->world);
    if (rc != MPI_SUCCESS) s = mpi_fail(m, "MPI_Gatherv", rc, err);
    free(v);
    return s;
}

static sh_status m_bcast(void *ud, int root, void *buf, size_t count, sh_error *err)
{
    sh_mpi *m = (sh_mpi *)ud;
    int rc;
    if (count > (size_t)INT_MAX) return sh_error_set(err, SH_EINVAL, 0, "a broadcast of %zu bytes is over MPI's limit", count);
    rc = MPI_Bcast(buf, (int)count, MPI_BYTE, root, m->world);
    return rc == MPI_SUCCESS ? SH_OK : mpi_fail(m, "MPI_Bcast", rc, err);
}

static sh_status m_allreduce(void *ud, uint64_t *v, size_t n, sh_reduce op, sh_error *err)
{
    sh_mpi *m = (sh_mpi *)ud;
    MPI_Op o = op == SH_REDUCE_SUM ? MPI_SUM : op == SH_REDUCE_MAX ? MPI_MAX : MPI_MIN;
    int rc;
    if (n > (size_t)INT_MAX) return sh_error_set(err, SH_EINVAL, 0, "an allreduce of %zu values is over MPI's limit", n);
    rc = MPI_Allreduce(MPI_IN_PLACE, v, (int)n, MPI_UINT64_T, o, m->world);
    return rc == MPI_SUCCESS ? SH_OK : mpi_fail(m, "MPI_Allreduce", rc, err);
}

static sh_status m_barrier(void *ud, sh_error *err)
{
    sh_mpi *m = (sh_mpi *)ud;
    MPI_Request req;
    int rc = MPI_Ibarrier(m->world, &req);
    return rc == MPI_SUCCESS ? wait_for(m, &req, "MPI_Barrier", err) : mpi_fail(m, "MPI_Barrier", rc, err);
}

static void m_abort(void *ud, int code)
{
    sh_mpi_abort((sh_mpi *)ud, code);
}

void sh_mpi_transport(sh_transport *t, sh_mpi *m)
{
    memset(t, 0, sizeof *t);
    t->ud = m;
    t->rank = m->rank;
    t->size = m->size;
    t->alltoall = m_alltoall;
    t->alltoallv = m_alltoallv;
    t->gatherv = m_gatherv;
    t->bcast = m_bcast;
    t->allreduce_u64 = m_allreduce;
    t->barrier = m_barrier;
    t->abort = m_abort;
}
