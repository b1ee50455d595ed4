#include "lsh.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "rabin.h"

/* ---- choosing b and r (datasketch's _optimal_param) ------------------------------- */

double sh_lsh_probability(double j, uint32_t b, uint32_t r)
{
    return 1.0 - pow(1.0 - pow(j, (double)r), (double)b);
}

/* Simpson's rule with an even number of intervals */
static double simpson(double lo, double hi, uint32_t b, uint32_t r, int complement)
{
    const int n = 128;
    double h = (hi - lo) / n, sum = 0;
    int i;
    if (hi <= lo) return 0;
    for (i = 0; i <= n; i++) {
        double x = lo + h * i, y = sh_lsh_probability(x, b, r);
        double f = complement ? 1.0 - y : y;
        sum += f * (i == 0 || i == n ? 1 : (i % 2 ? 4 : 2));
    }
    return sum * h / 3;
}

void sh_lsh_areas(double t, uint32_t b, uint32_t r, double *fp, double *fn)
{
    *fp = simpson(0.0, t, b, r, 0);
    *fn = simpson(t, 1.0, b, r, 1);
}

void sh_lsh_shape(double t, uint32_t budget, double wfp, double wfn, uint32_t *bo, uint32_t *ro)
{
    double best = HUGE_VAL;
    uint32_t b, r;
    *bo = *ro = 1;
    if (budget < 1) budget = 1;
    for (b = 1; b <= budget; b++) {
        for (r = 1; r <= budget / b; r++) {
            double fp, fn, e;
            sh_lsh_areas(t, b, r, &fp, &fn);
            e = wfp * fp + wfn * fn;
            if (e < best) {
                best = e;
                *bo = b;
                *ro = r;
            }
        }
    }
}

/* ---- a multimap from band keys to document ids ------------------------------------ */

typedef struct slot {
    uint64_t key;       /* 0: empty */
    uint32_t head;      /* first entry + 1 (0: none) */
    uint32_t n;
} slot;

typedef struct ent {
    uint32_t doc;
    uint32_t next;      /* next entry + 1 (0: end) */
} ent;

typedef struct mmap {
    slot *t;
    size_t cap, used;   /* slots; slots with a key */
    ent *e;
    size_t ne, ecap;
    uint32_t free_e;    /* free entry list, + 1 */
} mmap_t;

static size_t slot_of(const mmap_t *m, uint64_t key)
{
    size_t i = (size_t)(key * 0x9e3779b97f4a7c15ULL >> 17) & (m->cap - 1);
    while (m->t[i].key != 0 && m->t[i].key != key) i = (i + 1) & (m->cap - 1);
    return i;
}

static int mm_grow(mmap_t *m)
{
    size_t nc = m->cap ? m->cap * 2 : 1024, i;
    slot *old = m->t, *t = (slot *)calloc(nc, sizeof *t);
    size_t oc = m->cap;
    if (!t) return 0;
    m->t = t;
    m->cap = nc;
    m->used = 0;
    for (i = 0; i < oc; i++) {
        if (old[i].key != 0 && old[i].n > 0) {
            size_t j = slot_of(m, old[i].key);
            m->t[j] = old[i];
            m->used++;
        }
    }
    free(old);
    return 1;
}

static int mm_add(mmap_t *m, uint64_t key, uint32_t doc)
{
    size_t i;
    uint32_t k;
    if ((m->used + 1) * 2 > m->cap && !mm_grow(m)) return 0;
    i = slot_of(m, key);
    if (m->free_e) {
        k = m->free_e - 1;
        m->free_e = m->e[k].next;
    } else {
        if (m->ne == m->ecap) {
            size_t nc = m->ecap ? m->ecap * 2 : 4096;
            ent *e = (ent *)realloc(m->e, nc * sizeof *e);
            if (!e) return 0;
            m->e = e;
            m->ecap = nc;
        }
        k = (uint32_t)m->ne++;
    }
    if (m->t[i].key == 0) {
        m->t[i].key = key;
        m->used++;
    }
    m->e[k].doc = doc;
    m->e[k].next = m->t[i].head;
    m->t[i].head = k + 1;
    m->t[i].n++;
    return 1;
}

static void mm_del(mmap_t *m, uint64_t key, uint32_t doc)
{
    size_t i;
    uint32_t *link, k;
    if (!m->cap) return;
    i = slot_of(m, key);
    if (m->t[i].key == 0) return;
    for (link = &m->t[i].head; *link; link = &m->e[*link - 1].next) {
        k = *link - 1;
        if (m->e[k].doc == doc) {
            *link = m->e[k].next;
            m->e[k].next = m->free_e;
            m->free_e = k + 1;
            m->t[i].n--; /* an emptied slot keeps its key until the next growth */
            return;
        }
    }
}

static void mm_free(mmap_t *m)
{
    free(m->t);
    free(m->e);
}

/* ---- the index ------------------------------------------------------------------------ */

struct sh_lsh {
    sh_lsh_config c;
    sh_sketch params;       /* n = 0 */
    uint64_t mod_base;      /* MOD: the modulus bands are taken at */
    sh_sketch **sk;         /* by id; NULL: free */
    uint64_t *keys;         /* by id: bands + cbands keys */
    uint32_t n_ids, cap_ids;
    uint32_t *free_ids;
    uint32_t n_free;
    size_t count;
    mmap_t mm;
    /* scratch */
    uint64_t *cls;          /* classes x rows values */
    uint32_t *cnt;
    uint32_t *stamp;        /* per id: the query that saw it last */
    uint32_t cur;
    uint64_t *qkeys;
};

static uint64_t salt(uint32_t which, uint32_t j) { return sh_mix(((uint64_t)which << 32 | j) ^ 0x5348494e474c5348ULL); }

/* The keys of a sketch's bands: nb classes, r values each, into out[0..nb).
 * which: 0 resemblance bands, 1 containment bands. */
static void band_keys(sh_lsh *ix, const sh_sketch *s, uint32_t nb, uint32_t r, uint32_t which, uint64_t *out)
{
    uint64_t seed = sh_mix(ix->c.seed ^ (which ? 0x243f6a8885a308d3ULL : 0x13198a2e03707344ULL));
    uint32_t j, full = 0;
    size_t i;
    int mod = ix->params.p.kind == SH_SKETCH_MOD;
    memset(ix->cnt, 0, nb * sizeof *ix->cnt);
    for (i = 0; i < s->n && full < nb; i++) {
        uint64_t v = s->v[i];
        uint32_t c;
        if (mod && ix->mod_base > 1 && v % ix->mod_base != 0) continue;
        c = (uint32_t)(sh_mix(v ^ seed) % nb);
        if (ix->cnt[c] < r) {
            ix->cls[(size_t)c * r + ix->cnt[c]] = v;
            if (++ix->cnt[c] == r) full++;
        }
    }
    for (j = 0; j < nb; j++) {
        /* fewer than r values: the whole class (a complete sample) or what a
         * truncated sketch holds of it; the count is part of the key */
        uint64_t k = XXH3_64bits_withSeed(ix->cls + (size_t)j * r, ix->cnt[j] * sizeof(uint64_t),
                                          salt(which, j) ^ ((uint64_t)ix->cnt[j] << 56));
        out[j] = k ? k : 1;
    }
}

sh_status sh_lsh_new(const sh_lsh_config *cfg, const sh_sketch *params, sh_lsh **out, sh_error *err)
{
    sh_lsh *ix;
    uint32_t most;
    *out = NULL;
    if (cfg->bands < 1 || cfg->rows < 1 || cfg->bands > 4096 || cfg->rows > 4096 || cfg->cbands > 4096)
        return sh_error_set(err, SH_EINVAL, 0, "bands and rows must be 1 to 4096 (got %u and %u), containment bands 0 to 4096",
                            cfg->bands, cfg->rows);
    if (params->p.kind == SH_SKETCH_CLASS)
        return sh_error_set(err, SH_EINVAL, 0, "an LSH index takes min, minmod, mod or full sketches, not size-class sketches "
                            "(their samples differ with the document's size)");
    ix = (sh_lsh *)calloc(1, sizeof *ix);
    if (!ix) return sh_error_set(err, SH_ENOMEM, 0, "out of memory");
    ix->c = *cfg;
    ix->params = *params;
    ix->params.n = 0;
    ix->mod_base = params->p.kind == SH_SKETCH_MOD ? params->p.m : 1;
    most = cfg->bands > cfg->cbands ? cfg->bands : cfg->cbands;
    ix->cls = (uint64_t *)malloc((size_t)most * (cfg->rows > 1 ? cfg->rows : 1) * sizeof *ix->cls);
    ix->cnt = (uint32_t *)malloc(most * sizeof *ix->cnt);
    ix->qkeys = (uint64_t *)malloc((size_t)(cfg->bands + cfg->cbands) * sizeof *ix->qkeys);
    if (!ix->cls || !ix->cnt || !ix->qkeys) { sh_lsh_free(ix); return sh_error_set(err, SH_ENOMEM, 0, "out of memory"); }
    *out = ix;
    return SH_OK;
}

void sh_lsh_free(sh_lsh *ix)
{
    uint32_t i;
    if (!ix) return;
    for (i = 0; i < ix->n_ids; i++) free(ix->sk ? ix->sk[i] : NULL);
    free(ix->sk);
    free(ix->keys);
    free(ix->free_ids);
    free(ix->stamp);
    free(ix->cls);
    free(ix->cnt);
    free(ix->qkeys);
    mm_free(&ix->mm);
    free(ix);
}

static sh_status comparable(const sh_lsh *ix, const sh_sketch *s, sh_error *err)
{
    if (s->p.kind != ix->params.p.kind)
        return sh_error_set(err, SH_EMISMATCH, 0, "the index holds sketches of one kind; this sketch is of another "
                            "(kind %u, the index's %u): sketch with the index's shingler", s->p.kind, ix->params.p.kind);
    return sh_sketch_compatible(&ix->params, s, err);
}

sh_status sh_lsh_insert(sh_lsh *ix, const sh_sketch *s, uint32_t *id_out, sh_error *err)
{
    uint32_t id, nk = ix->c.bands + ix->c.cbands, j;
    sh_sketch *copy;
    sh_status st;
    if ((st = comparable(ix, s, err)) != SH_OK) return st;
    copy = (sh_sketch *)malloc(sizeof *copy + s->n * sizeof(uint64_t));
    if (!copy) return sh_error_set(err, SH_ENOMEM, 0, "out of memory");
    memcpy(copy, s, sizeof *copy + s->n * sizeof(uint64_t));
    if (ix->n_free) {
        id = ix->free_ids[--ix->n_free];
    } else {
        if (ix->n_ids == ix->cap_ids) {
            uint32_t nc = ix->cap_ids ? ix->cap_ids * 2 : 1024;
            sh_sketch **sk = (sh_sketch **)realloc(ix->sk, nc * sizeof *sk);
            uint64_t *keys;
            uint32_t *stamp;
            if (!sk) { free(copy); return sh_error_set(err, SH_ENOMEM, 0, "out of memory"); }
            ix->sk = sk;
            keys = (uint64_t *)realloc(ix->keys, (size_t)nc * nk * sizeof *keys);
            if (!keys) { free(copy); return sh_error_set(err, SH_ENOMEM, 0, "out of memory"); }
            ix->keys = keys;
            stamp = (uint32_t *)realloc(ix->stamp, nc * sizeof *stamp);
            if (!stamp) { free(copy); return sh_error_set(err, SH_ENOMEM, 0, "out of memory"); }
            memset(stamp + ix->cap_ids, 0, (nc - ix->cap_ids) * sizeof *stamp);
            ix->stamp = stamp;
            stamp = (uint32_t *)realloc(ix->free_ids, nc * sizeof *stamp);
            if (!stamp) { free(copy); return sh_error_set(err, SH_ENOMEM, 0, "out of memory"); }
            ix->free_ids = stamp;
            ix->cap_ids = nc;
        }
        id = ix->n_ids++;
    }
    ix->sk[id] = copy;
    band_keys(ix, copy, ix->c.bands, ix->c.rows, 0, ix->keys + (size_t)id * nk);
    if (ix->c.cbands) band_keys(ix, copy, ix->c.cbands, 1, 1, ix->keys + (size_t)id * nk + ix->c.bands);
    for (j = 0; j < nk; j++) {
        if (!mm_add(&ix->mm, ix->keys[(size_t)id * nk + j], id)) {
            uint32_t k;
            for (k = 0; k < j; k++) mm_del(&ix->mm, ix->keys[(size_t)id * nk + k], id);
            ix->sk[id] = NULL;
            free(copy);
            ix->free_ids[ix->n_free++] = id; /* free_ids has room: see below */
            return sh_error_set(err, SH_ENOMEM, 0, "out of memory");
        }
    }
    ix->count++;
    *id_out = id;
    return SH_OK;
}

int sh_lsh_remove(sh_lsh *ix, uint32_t id)
{
    uint32_t nk = ix->c.bands + ix->c.cbands, j;
    if (id >= ix->n_ids || !ix->sk[id]) return 0;
    for (j = 0; j < nk; j++) mm_del(&ix->mm, ix->keys[(size_t)id * nk + j], id);
    free(ix->sk[id]);
    ix->sk[id] = NULL;
    ix->free_ids[ix->n_free++] = id;
    ix->count--;
    return 1;
}

const sh_sketch *sh_lsh_get(const sh_lsh *ix, uint32_t id) { return id < ix->n_ids ? ix->sk[id] : NULL; }
size_t sh_lsh_count(const sh_lsh *ix) { return ix->count; }
uint32_t sh_lsh_id_limit(const sh_lsh *ix) { return ix->n_ids; }

typedef struct scored {
    sh_lsh_hit h;
    double key;
} scored;

static int by_score(const void *a, const void *b)
{
    const scored *x = (const scored *)a, *y = (const scored *)b;
    if (x->key != y->key) return x->key > y->key ? -1 : 1;
    return x->h.id < y->h.id ? -1 : x->h.id > y->h.id;
}

sh_status sh_lsh_query(sh_lsh *ix, const sh_sketch *q, sh_lsh_query_kind kind, double t, size_t max, sh_lsh_hit **hits,
                       size_t *n_out, size_t *candidates, sh_error *err)
{
    uint32_t nb = kind == SH_LSH_RESEMBLANCE ? ix->c.bands : ix->c.cbands, j;
    scored *res = NULL;
    size_t n = 0, cap = 0, cand = 0, i;
    sh_status st;
    *hits = NULL;
    *n_out = 0;
    if (candidates) *candidates = 0;
    if (kind != SH_LSH_RESEMBLANCE && ix->c.cbands == 0)
        return sh_error_set(err, SH_EINVAL, 0, "this index has no containment bands: make it with containment = true");
    if ((st = comparable(ix, q, err)) != SH_OK) return st;
    if (kind == SH_LSH_RESEMBLANCE) band_keys(ix, q, nb, ix->c.rows, 0, ix->qkeys);
    else band_keys(ix, q, nb, 1, 1, ix->qkeys);
    if (++ix->cur == 0) { /* the stamps wrapped: clear them */
        if (ix->stamp) memset(ix->stamp, 0, ix->cap_ids * sizeof *ix->stamp);
        ix->cur = 1;
    }
    for (j = 0; j < nb && ix->mm.cap; j++) {
        size_t s = slot_of(&ix->mm, ix->qkeys[j]);
        uint32_t e;
        if (ix->mm.t[s].key == 0) continue;
        for (e = ix->mm.t[s].head; e; e = ix->mm.e[e - 1].next) {
            uint32_t id = ix->mm.e[e - 1].doc;
            sh_estimate est;
            double score;
            if (ix->stamp[id] == ix->cur) continue;
            ix->stamp[id] = ix->cur;
            cand++;
            if (sh_sketch_estimate(q, ix->sk[id], &est, err) != SH_OK) { free(res); return err ? err->code : SH_EINVAL; }
            score = kind == SH_LSH_RESEMBLANCE ? est.resemblance : kind == SH_LSH_CONTAINING ? est.contain_ab : est.contain_ba;
            if (t >= 0 && score < t) continue;
            if (n == cap) {
                size_t nc = cap ? cap * 2 : 64;
                scored *r2 = (scored *)realloc(res, nc * sizeof *r2);
                if (!r2) { free(res); return sh_error_set(err, SH_ENOMEM, 0, "out of memory"); }
                res = r2;
                cap = nc;
            }
            res[n].h.id = id;
            res[n].h.resemblance = est.resemblance;
            res[n].h.contain_qd = est.contain_ab;
            res[n].h.contain_dq = est.contain_ba;
            res[n].key = score;
            n++;
        }
    }
    if (n > 1) qsort(res, n, sizeof *res, by_score);
    if (max && n > max) n = max;
    if (n) {
        *hits = (sh_lsh_hit *)malloc(n * sizeof **hits);
        if (!*hits) { free(res); return sh_error_set(err, SH_ENOMEM, 0, "out of memory"); }
        for (i = 0; i < n; i++) (*hits)[i] = res[i].h;
    }
    free(res);
    *n_out = n;
    if (candidates) *candidates = cand;
    return SH_OK;
}
