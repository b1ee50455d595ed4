/* The walk that warms a batch of lookups (core/ixwarm.c) against LMDB's own
 * lookups: on tables of one leaf up to a tree of depth 3, for keys that are
 * there and keys that are not, in batches of every shape, every key must be
 * followed to a leaf and found there exactly when mdb_get finds it (a walk
 * that lost its way would still be harmless, but would warm nothing). And on
 * what it does not know (a table of other keys, no such table) it does
 * nothing. */
#include <stdlib.h>
#include <unistd.h>
#include <lmdb.h>
#include "../byteorder.h"
#include "../ixwarm.h"
#include "../rabin.h"
#include "test.h"

typedef struct {
    char dir[64];
    MDB_env *env;
    MDB_dbi post, other;
} fixture;

/* n random keys (kept in keys[]), each with 1-3 document ids, in a table
 * like the index's postings (DUPSORT, DUPFIXED); a table "other" of 12-byte keys */
static int make(fixture *f, uint64_t *keys, size_t n, uint64_t seed)
{
    MDB_txn *t;
    size_t i;
    strcpy(f->dir, "/tmp/shingle-test-ixwarm-XXXXXX");
    if (!mkdtemp(f->dir)) return -1;
    if (mdb_env_create(&f->env) || mdb_env_set_maxdbs(f->env, 4) || mdb_env_set_mapsize(f->env, (size_t)1 << 30) ||
        mdb_env_open(f->env, f->dir, MDB_NOSYNC, 0600) || mdb_txn_begin(f->env, NULL, 0, &t))
        return -1;
    if (mdb_dbi_open(t, "postings", MDB_CREATE | MDB_DUPSORT | MDB_DUPFIXED, &f->post) ||
        mdb_dbi_open(t, "other", MDB_CREATE, &f->other))
        return -1;
    for (i = 0; i < n; i++) {
        unsigned char kb[8], vb[4];
        MDB_val k = { 8, kb }, v = { 4, vb };
        uint32_t d, nd = 1 + (uint32_t)(i % 3);
        keys[i] = sh_splitmix_next(&seed);
        sh_store_be64(kb, keys[i]);
        for (d = 0; d < nd; d++) {
            sh_store_be32(vb, (uint32_t)i * 3 + d);
            if (mdb_put(t, f->post, &k, &v, 0)) return -1;
        }
        if (i < 1000) {
            unsigned char ob[12] = { 0 };
            MDB_val ok = { 12, ob };
            memcpy(ob, kb, 8);
            if (mdb_put(t, f->other, &ok, &v, 0)) return -1;
        }
    }
    return mdb_txn_commit(t) ? -1 : 0;
}

static void done(fixture *f)
{
    char cmd[128];
    mdb_env_close(f->env);
    snprintf(cmd, sizeof cmd, "rm -rf %s", f->dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", f->dir);
}

static size_t lmdb_finds(MDB_txn *t, MDB_dbi db, const uint64_t *q, size_t n)
{
    size_t i, found = 0;
    for (i = 0; i < n; i++) {
        unsigned char kb[8];
        MDB_val k = { 8, kb }, v;
        sh_store_be64(kb, q[i]);
        found += mdb_get(t, db, &k, &v) == 0;
    }
    return found;
}

static void walks_to_every_leaf_and_finds_what_lmdb_finds(void)
{
    static const size_t sizes[] = { 1, 2, 150, 400, 5000, 200000 };
    static const size_t batches[] = { 1, 2, 7, 31, 32, 33, 64, 100, 257 };
    size_t si, bi;
    for (si = 0; si < sizeof sizes / sizeof *sizes; si++) {
        size_t n = sizes[si], i;
        uint64_t *keys = (uint64_t *)malloc(n * 8), *q = (uint64_t *)malloc(600 * 8), st = 99 + n;
        fixture f;
        MDB_txn *t;
        MDB_stat ms;
        CHECK(make(&f, keys, n, 7 + n) == 0);
        CHECK(mdb_txn_begin(f.env, NULL, MDB_RDONLY, &t) == 0);
        mdb_stat(t, f.post, &ms);
        for (bi = 0; bi < sizeof batches / sizeof *batches; bi++) {
            size_t m = batches[bi], want;
            sh_ixwarm_stats ws;
            /* keys of the table and keys that are not, mixed; the smallest
             * and largest keys there are, and beyond them */
            for (i = 0; i < m; i++) {
                uint64_t r = sh_splitmix_next(&st);
                q[i] = (r & 1) ? keys[r % n] : r;
            }
            if (m > 4) { q[0] = 0; q[1] = UINT64_MAX; q[2] = keys[0] - 1; q[3] = keys[n - 1] + 1; }
            want = lmdb_finds(t, f.post, q, m);
            sh_ixwarm(t, "postings", q, m, &ws);
            if (ws.walked != m || ws.found != want)
                fprintf(stderr, "table of %zu keys (depth %u), batch of %zu: walked %zu, found %zu, LMDB found %zu\n", n,
                        ms.ms_depth, m, ws.walked, ws.found, want);
            CHECK(ws.walked == m);
            CHECK(ws.found == want);
        }
        if (n == 200000) CHECK(ms.ms_depth >= 3);
        mdb_txn_abort(t);
        done(&f);
        free(keys);
        free(q);
    }
}

static void walks_nothing_it_does_not_know(void)
{
    uint64_t keys[3000], q[8];
    fixture f;
    MDB_txn *t;
    sh_ixwarm_stats ws;
    size_t i;
    CHECK(make(&f, keys, 3000, 5) == 0);
    CHECK(mdb_txn_begin(f.env, NULL, MDB_RDONLY, &t) == 0);
    for (i = 0; i < 8; i++) q[i] = keys[i];
    sh_ixwarm(t, "other", q, 8, &ws); /* 12-byte keys */
    CHECK(ws.walked == 0);
    sh_ixwarm(t, "no such table", q, 8, &ws);
    CHECK(ws.walked == 0);
    sh_ixwarm(t, "postings", q, 0, &ws);
    CHECK(ws.walked == 0);
    sh_ixwarm(t, "postings", q, 8, NULL); /* no stats wanted */
    sh_ixwarm(t, "postings", q, 8, &ws);
    CHECK(ws.walked == 8 && ws.found == 8);
    mdb_txn_abort(t);
    done(&f);
}

int main(void)
{
    RUN(walks_to_every_leaf_and_finds_what_lmdb_finds);
    RUN(walks_nothing_it_does_not_know);
    return TEST_END();
}
