/* Warming the pages of a batch of LMDB lookups (ixwarm.h).
 *
 * A query looks up a few dozen sketch values in the postings table, tens of
 * millions of random 64-bit keys (docs/benchmarks.md, "Serving"). Each
 * lookup is a descent of LMDB's B-tree whose binary search within a page
 * touches ~8 cache lines at random, one after another: ~1.5 us of memory
 * latency a lookup, and most of a /similar request. The lookups of one query
 * do not depend on each other, so this walks the tree for all of them at
 * once, level by level, the way LMDB's own search will (mdb_page_search_root
 * and mdb_node_search, so that it probes the same nodes): each round issues
 * the prefetch of every key's next probe, and reads them only in the next
 * round, so a batch of keys costs about one miss per probe instead of one per
 * key and probe. The lookups that follow, through LMDB's API as before, then
 * find their pages in the cache.
 *
 * This reads LMDB's pages directly, in the layout of LMDB 0.9 (data format
 * MDB_DATA_VERSION 1, which Debian's liblmdb0 writes). It is a hint and
 * nothing depends on it: every page is checked (its number, its flags, its
 * node offsets) before it is used, reads stay inside the pages the
 * environment has committed, and anything unexpected ends the walk of that
 * key. The layout, from mdb.c:
 *   page:  uint64 mp_pgno; uint16 mp_pad, mp_flags, mp_lower, mp_upper;
 *          uint16 mp_ptrs[(mp_lower - 16) / 2], the node offsets in key order
 *   node:  uint16 mn_lo, mn_hi, mn_flags, mn_ksize; the key; the data. On a
 *          branch page the child is page mn_lo | mn_hi << 16 | mn_flags << 32
 *          and the first node's key is empty (it covers every smaller key).
 *   a named table's record in the main table (MDB_db): uint32 md_pad;
 *          uint16 md_flags, md_depth; uint64 md_branch_pages, md_leaf_pages,
 *          md_overflow_pages, md_entries, md_root. */
#include "ixwarm.h"

#include "byteorder.h"

#include <string.h>

#define PAGEHDR 16
#define P_BRANCH 0x01
#define P_LEAF 0x02
#define BATCH 32
#define LINE 64

static unsigned ld16(const unsigned char *p)
{
    uint16_t v;
    memcpy(&v, p, 2);
    return v;
}

static uint64_t ld64(const unsigned char *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

typedef struct {
    const unsigned char *base; /* page 0 */
    size_t psize;
    uint64_t last;             /* the last page committed */
} walkmap;

typedef struct {
    const unsigned char *pg;   /* the page of this level */
    const unsigned char *node; /* the node probed (prefetched, read next round) */
    uint64_t key, pgno;
    unsigned n;                /* nodes on the page */
    int low, high, i;          /* the search's range and probe (i < 0: it ended) */
    int exact, live;           /* the key is on the page; the walk goes on */
} probe;

/* the page pgno, checked to be one of the map's committed pages, of the kind
 * wanted, and to say it is page pgno (a wrong map base reads some other page) */
static const unsigned char *page_at(const walkmap *m, uint64_t pgno, unsigned kind, unsigned *n)
{
    const unsigned char *pg;
    unsigned lower, upper;
    if (pgno < 2 || pgno > m->last) return NULL; /* pages 0 and 1 are the meta pages */
    pg = m->base + pgno * m->psize;
    if (ld64(pg) != pgno || (ld16(pg + 10) & (P_BRANCH | P_LEAF)) != kind) return NULL;
    lower = ld16(pg + 12);
    upper = ld16(pg + 14);
    if (lower < PAGEHDR || (lower & 1) || upper < lower || upper > m->psize) return NULL;
    *n = (lower - PAGEHDR) / 2;
    return pg;
}

static void prefetch_range(const unsigned char *p, size_t len)
{
    const unsigned char *e = p + len;
    for (p = (const unsigned char *)((uintptr_t)p & ~(uintptr_t)(LINE - 1)); p < e; p += LINE) __builtin_prefetch(p);
}

/* the node at index i of pr's page, NULL if it is not among the page's
 * nodes or runs off the page with an 8-byte key (want_key) or none (the
 * first node of a branch page) */
static const unsigned char *node_at(const walkmap *m, const probe *pr, int i, int want_key)
{
    unsigned off = ld16(pr->pg + PAGEHDR + 2 * (unsigned)i);
    if (off < PAGEHDR + 2 * pr->n || (size_t)off + 8 + (want_key ? 8 : 0) > m->psize) return NULL;
    return pr->pg + off;
}

/* the next probe of LMDB's binary search (mdb_node_search), prefetched; the
 * search ends (i = -1) when low passes high */
static void next_probe(const walkmap *m, probe *pr)
{
    if (pr->low > pr->high) { pr->i = -1; return; }
    pr->i = (pr->low + pr->high) >> 1;
    pr->node = node_at(m, pr, pr->i, 1);
    if (!pr->node) { pr->live = 0; return; }
    prefetch_range(pr->node, 16);
}

/* one level for every live probe of b[0..k): the pages are set; search them */
static void search_level(const walkmap *m, probe *b, size_t k, int leaf)
{
    size_t j;
    int more = 1;
    for (j = 0; j < k; j++) /* the node offsets of every page */
        if (b[j].live) prefetch_range(b[j].pg + PAGEHDR, 2 * (size_t)b[j].n);
    for (j = 0; j < k; j++) {
        probe *pr = &b[j];
        if (!pr->live) continue;
        pr->low = leaf ? 0 : 1;
        pr->high = (int)pr->n - 1;
        pr->exact = 0;
        next_probe(m, pr);
    }
    while (more) { /* a round: read every probe prefetched by the last one, prefetch the next */
        more = 0;
        for (j = 0; j < k; j++) {
            probe *pr = &b[j];
            uint64_t nk;
            if (!pr->live || pr->i < 0) continue;
            if (ld16(pr->node + 6) != 8) { pr->live = 0; continue; } /* not a table of 8-byte keys */
            nk = sh_load_be64((const char *)pr->node + 8);
            if (pr->key == nk) { pr->exact = 1; pr->low = pr->i; pr->i = -1; continue; }
            if (pr->key > nk) pr->low = pr->i + 1;
            else pr->high = pr->i - 1;
            next_probe(m, pr);
            more |= pr->live && pr->i >= 0;
        }
    }
}

static void walk_batch(const walkmap *m, uint64_t root, unsigned depth, probe *b, size_t k, sh_ixwarm_stats *st)
{
    unsigned level;
    size_t j;
    for (level = 0; level < depth; level++) {
        int leaf = level + 1 == depth, any = 0;
        for (j = 0; j < k; j++) {
            probe *pr = &b[j];
            uint64_t pgno = root;
            if (!pr->live) continue;
            if (level > 0) {
                /* the child LMDB descends to (mdb_page_search_root): the
                 * search ends on the key, or (low) on the first larger one,
                 * whose left neighbour covers the key; none larger: the last */
                int i = pr->low;
                const unsigned char *nd;
                if (i >= (int)pr->n) i = (int)pr->n - 1;
                else if (!pr->exact) i--;
                if (i < 0 || !(nd = node_at(m, pr, i, 0))) { pr->live = 0; continue; }
                pgno = (uint64_t)ld16(nd) | (uint64_t)ld16(nd + 2) << 16 | (uint64_t)ld16(nd + 4) << 32;
            }
            if (pgno > m->last) { pr->live = 0; continue; }
            pr->pgno = pgno;
            __builtin_prefetch(m->base + pgno * m->psize);
            any = 1;
        }
        if (!any) return;
        for (j = 0; j < k; j++) {
            probe *pr = &b[j];
            if (!pr->live) continue;
            pr->pg = page_at(m, pr->pgno, leaf ? P_LEAF : P_BRANCH, &pr->n);
            if (!pr->pg || pr->n == 0) pr->live = 0;
        }
        search_level(m, b, k, leaf);
    }
    for (j = 0; j < k; j++) {
        if (!b[j].live) continue;
        st->walked++;
        if (b[j].exact) {
            /* the node's data (a list of document ids) is read next */
            st->found++;
            prefetch_range(b[j].node, 2 * LINE);
        }
    }
}

void sh_ixwarm(MDB_txn *t, const char *table, const uint64_t *keys, size_t n, sh_ixwarm_stats *st)
{
    sh_ixwarm_stats none;
    MDB_env *env = mdb_txn_env(t);
    MDB_dbi main;
    MDB_val k, v;
    MDB_stat ms;
    MDB_envinfo info;
    walkmap m;
    const unsigned char *rec, *pg;
    uint64_t root;
    unsigned depth;
    probe b[BATCH];
    size_t i, j;
    if (!st) st = &none;
    memset(st, 0, sizeof *st);
    if (n == 0 || mdb_env_stat(env, &ms) != 0 || mdb_env_info(env, &info) != 0) return;
    if (ms.ms_psize < 1024 || (ms.ms_psize & (ms.ms_psize - 1))) return;
    if (mdb_dbi_open(t, NULL, 0, &main) != 0) return;
    k.mv_size = strlen(table);
    k.mv_data = (void *)(uintptr_t)table; /* LMDB only reads a key */
    if (mdb_get(t, main, &k, &v) != 0 || v.mv_size != 48) return;
    rec = (const unsigned char *)v.mv_data;
    depth = ld16(rec + 6);
    root = ld64(rec + 40);
    if (depth == 0 || depth > 16) return;
    /* the map's base from the main table's page holding that record: a page
     * starts at a multiple of the page size and names itself */
    pg = (const unsigned char *)((uintptr_t)rec & ~(uintptr_t)(ms.ms_psize - 1));
    m.psize = ms.ms_psize;
    /* the newest commit's last page, and no further than this handle maps
     * (a writer elsewhere may have grown the map since) */
    m.last = (uint64_t)info.me_last_pgno;
    if (m.last >= info.me_mapsize / ms.ms_psize) m.last = info.me_mapsize / ms.ms_psize - 1;
    if (ld64(pg) > m.last || (ld16(pg + 10) & P_LEAF) == 0) return;
    m.base = pg - ld64(pg) * ms.ms_psize;
    for (i = 0; i < n; i += BATCH) {
        size_t kn = n - i < BATCH ? n - i : BATCH;
        for (j = 0; j < kn; j++) {
            b[j].key = keys[i + j];
            b[j].live = 1;
            b[j].i = -1;
            b[j].exact = 0;
            b[j].low = 0;
        }
        walk_batch(&m, root, depth, b, kn, st);
    }
}
