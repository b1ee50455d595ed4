/* The alternatives to phases 2-4 of "Syntactic Clustering of the Web"
 * (cluster.h): super shingles (Broder 1997, "Super shingles"; the 6 x 14
 * megashingles of Broder 2000 and Fetterly et al. 2003), LSH banding of
 * min-hash signatures, and the greedy clustering of "On the resemblance and
 * containment of documents" (section 4.4). They read the files of phase 1
 * and write those of phase 4, through the run reader and the decider of
 * run.h. */
#include "cluster.h"

#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "extsort.h"
#include "run.h"
#include "unionfind.h"

/* Candidates from a <key, doc> sorter: with check, every pair sharing a key
 * is decided like phase 4 (pairs merged first so each is decided once);
 * without, documents sharing a key are linked directly as a star. */
static sh_status candidates(const char *dir, sh_extsort *keys, const sh_alt_config *cfg, sh_decider *x,
                            sh_pairs_stats *ps, sh_error *err)
{
    sh_status s;
    if (!cfg->check) {
        uint64_t before = sh_uf_components(x->uf);
        if ((s = sh_run_form(keys, NULL, 0, x->uf, ps, cfg->decide.progress, cfg->decide.progress_ud, err)) != SH_OK) return s;
        x->st->linked = before - sh_uf_components(x->uf);
        return SH_OK;
    }
    {
        sh_extsort *pairs = NULL;
        unsigned char *buf = (unsigned char *)malloc((size_t)SH_RUN_CHUNK * SH_PAIR_RECORD);
        size_t n, i;
        if (!buf) return sh_error_set(err, SH_ENOMEM, 0, "out of memory");
        if ((s = sh_pairsort_open(&pairs, cfg->memory / 2, cfg->temp_dir ? cfg->temp_dir : dir, err)) != SH_OK) { free(buf); return s; }
        if ((s = sh_run_form(keys, pairs, SH_ALT_MAX_DF, NULL, ps, cfg->decide.progress, cfg->decide.progress_ud, err)) == SH_OK && (s = sh_extsort_finish(pairs, err)) == SH_OK) {
            for (;;) {
                if ((s = sh_extsort_read(pairs, buf, SH_RUN_CHUNK, &n, err)) != SH_OK || n == 0) break;
                ps->pairs += n;
                for (i = 0; i < n && s == SH_OK; i++)
                    s = sh_decider_pair(x, sh_pair_a(buf + SH_PAIR_RECORD * i), sh_pair_b(buf + SH_PAIR_RECORD * i), err);
                if (s != SH_OK) break;
            }
        }
        sh_extsort_free(pairs);
        free(buf);
        return s;
    }
}

static sh_status keyed(const char *dir, const sh_alt_config *cfg, int need_sigs, sh_decide_stats *st, sh_pairs_stats *ps,
                       sh_key_emit_fn emit, size_t per_doc, sh_error *err)
{
    sh_decider x;
    sh_extsort *keys = NULL;
    unsigned char *buf = NULL;
    size_t nb = 0;
    uint32_t i;
    sh_status s;
    double t0 = sh_now();
    memset(ps, 0, sizeof *ps);
    if ((s = sh_decider_open(&x, dir, &cfg->decide, need_sigs, st, err)) != SH_OK) goto done;
    buf = (unsigned char *)malloc((SH_RUN_CHUNK + per_doc) * 12);
    if (!buf) { s = sh_error_set(err, SH_ENOMEM, 0, "out of memory"); goto done; }
    if ((s = sh_extsort_open(&keys, 12, 8, cfg->memory / 2, cfg->temp_dir ? cfg->temp_dir : dir, NULL, err)) != SH_OK) goto done;
    for (i = 0; i < x.r.n; i++) {
        if (x.r.d[i].status != SH_OK || x.r.d[i].rep != i) continue;
        if ((s = emit(&x.r, cfg, i, buf + 12 * nb, &nb)) != SH_OK) goto done;
        if (nb >= SH_RUN_CHUNK) {
            if ((s = sh_extsort_add(keys, buf, nb, err)) != SH_OK) goto done;
            ps->records += nb;
            nb = 0;
        }
    }
    if (nb && (s = sh_extsort_add(keys, buf, nb, err)) != SH_OK) goto done;
    ps->records += nb;
    if ((s = sh_extsort_finish(keys, err)) != SH_OK) goto done;
    sh_run_add_disk(ps, keys);
    ps->t_merge = sh_now() - t0;
    t0 = sh_now();
    if ((s = candidates(dir, keys, cfg, &x, ps, err)) != SH_OK) goto done;
    ps->t_form = sh_now() - t0;
    s = sh_decider_finish(&x, dir, err);
done:
    sh_extsort_free(keys);
    free(buf);
    sh_decider_close(&x);
    return s;
}

/* Super shingles. 6 x 14 (Broder 2000; Fetterly et al. 2003): 84 independent
 * minima in 6 groups of 14, a super shingle being the fingerprint of a group;
 * two documents are near-duplicates when they share 2 of the 6, i.e. one of
 * the 15 pairs ("megashingles"). Meta (Broder 1997, "Super shingles"): sort
 * the sketch and shingle the sorted sequence of shingles with width meta_w. */
static sh_status emit_super(const sh_run *r, const sh_alt_config *cfg, uint32_t i, unsigned char *o, size_t *nb)
{
    const sh_docrec *d = &r->d[i];
    if (cfg->meta) {
        const uint64_t *v = r->v + d->sketch_off;
        uint32_t w = cfg->meta_w, j, k;
        if (d->sketch_n == 0) return SH_OK;
        if (d->sketch_n < w) w = d->sketch_n;
        for (j = 0; j + w <= d->sketch_n; j++) {
            uint64_t f = 0x9e3779b97f4a7c15ULL;
            for (k = 0; k < w; k++) f = sh_mix(f ^ v[j + k]);
            sh_key_record(o, 8, f, i);
            o += 12;
            (*nb)++;
        }
    } else {
        const uint64_t *sig = r->sig + (size_t)i * r->sig_k;
        uint64_t ss[6];
        int g, a, b;
        if (d->n_shingles == 0) return SH_OK;
        for (g = 0; g < 6; g++) {
            uint64_t f = 0x9e3779b97f4a7c15ULL;
            int k;
            for (k = 0; k < 14; k++) f = sh_mix(f ^ sig[14 * g + k]);
            ss[g] = f;
        }
        for (a = 0; a < 6; a++)
            for (b = a + 1; b < 6; b++) {
                sh_key_record(o, 8, sh_mix(ss[a] ^ sh_mix(ss[b] + (uint64_t)(16 * a + b))), i);
                o += 12;
                (*nb)++;
            }
    }
    return SH_OK;
}

sh_status sh_supershingle(const char *dir, const sh_alt_config *cfg, sh_decide_stats *st, sh_pairs_stats *ps, sh_error *err)
{
    sh_run r;
    sh_key_emit_fn emit = NULL;
    size_t per = 0;
    sh_status s = sh_run_open(&r, dir, 1, 0, !cfg->meta, err);
    if (s == SH_OK) s = sh_alt_keys(&r, cfg, 0, &emit, &per, err);
    sh_run_close(&r);
    if (s != SH_OK) return s;
    return keyed(dir, cfg, !cfg->meta, st, ps, emit, per, err);
}

/* LSH banding (b bands of r rows of the min-hash signature): documents whose
 * band agrees are candidates; P(candidate) = 1 - (1 - s^r)^b. */
static sh_status emit_lsh(const sh_run *r, const sh_alt_config *cfg, uint32_t i, unsigned char *o, size_t *nb)
{
    const uint64_t *sig = r->sig + (size_t)i * r->sig_k;
    uint32_t b, k;
    if (r->d[i].n_shingles == 0) return SH_OK;
    for (b = 0; b < cfg->bands; b++) {
        uint64_t f = sh_mix(0x51ed270b27ab45d3ULL + b);
        for (k = 0; k < cfg->rows; k++) f = sh_mix(f ^ sig[b * cfg->rows + k]);
        sh_key_record(o, 8, f, i);
        o += 12;
        (*nb)++;
    }
    return SH_OK;
}

sh_status sh_lsh(const char *dir, const sh_alt_config *cfg, sh_decide_stats *st, sh_pairs_stats *ps, sh_error *err)
{
    sh_run r;
    sh_key_emit_fn emit = NULL;
    size_t per = 0;
    sh_status s = sh_run_open(&r, dir, 1, 0, 1, err);
    if (s == SH_OK) s = sh_alt_keys(&r, cfg, 1, &emit, &per, err);
    sh_run_close(&r);
    if (s != SH_OK) return s;
    return keyed(dir, cfg, 1, st, ps, emit, per, err);
}

sh_status sh_alt_keys(const sh_run *r, const sh_alt_config *cfg, int lsh, sh_key_emit_fn *emit, size_t *per, sh_error *err)
{
    if (lsh) {
        if ((uint64_t)cfg->bands * cfg->rows > r->sig_k || cfg->bands == 0 || cfg->rows == 0)
            return sh_error_set(err, SH_EINVAL, 0, "LSH with %u bands of %u rows needs %u min-hashes, but phase 1 kept %u: "
                                "sketch again with a larger signature", cfg->bands, cfg->rows, cfg->bands * cfg->rows, r->sig_k);
        *emit = emit_lsh;
        *per = cfg->bands;
        return SH_OK;
    }
    *emit = emit_super;
    *per = cfg->meta ? sh_run_max_len(r, 0) : 15; /* meta: at most one key per value */
    return SH_OK;
}

/* Greedy clustering ("On the resemblance and containment", section 4.4):
 * take the sketches in turn; each cluster keeps its first member's sketch as
 * representative, and a hash table maps each fingerprint to the clusters whose
 * representative holds it, so a new sketch finds the clusters it shares
 * values with in O(s); it joins the one it resembles best if that passes the
 * policy, else starts a new cluster. O(r s) overall. */
typedef struct gentry { uint64_t v; uint32_t cluster; uint32_t next; } gentry;

sh_status sh_greedy(const char *dir, const sh_alt_config *cfg, sh_decide_stats *st, sh_error *err)
{
    sh_decider x;
    sh_status s;
    uint32_t i, *head = NULL, *reps = NULL, *hits = NULL, *touched = NULL;
    gentry *e = NULL;
    size_t ne = 0, cap_e = 0, hcap = 1, total = 0, nreps = 0;
    if ((s = sh_decider_open(&x, dir, &cfg->decide, 0, st, err)) != SH_OK) goto done;
    for (i = 0; i < x.r.n; i++) if (x.r.d[i].rep == i && x.r.d[i].status == SH_OK) total += x.r.d[i].sketch_n;
    while (hcap < 2 * total + 2) hcap *= 2;
    head = (uint32_t *)malloc(hcap * 4);
    reps = (uint32_t *)malloc(((size_t)x.r.n + 1) * 4);
    hits = (uint32_t *)calloc((size_t)x.r.n + 1, 4);
    touched = (uint32_t *)malloc(((size_t)x.r.n + 1) * 4);
    cap_e = total + 1;
    e = (gentry *)malloc(cap_e * sizeof *e);
    if (!head || !reps || !hits || !touched || !e) { s = sh_error_set(err, SH_ENOMEM, 0, "out of memory"); goto done; }
    memset(head, 0xff, hcap * 4);
    for (i = 0; i < x.r.n; i++) {
        const sh_docrec *d = &x.r.d[i];
        const uint64_t *v = x.r.v + d->sketch_off;
        uint32_t j, nt = 0, best = UINT32_MAX;
        double best_score = -1;
        if (d->status != SH_OK || d->rep != i) continue;
        for (j = 0; j < d->sketch_n; j++) {
            uint32_t k;
            for (k = head[sh_mix(v[j]) & (hcap - 1)]; k != UINT32_MAX; k = e[k].next)
                if (e[k].v == v[j]) {
                    uint32_t c = e[k].cluster;
                    if (!hits[c]++) touched[nt++] = c;
                }
        }
        for (j = 0; j < nt; j++) {
            uint32_t c = touched[j];
            sh_estimate est;
            hits[c] = 0;
            x.st->pairs++;
            if ((s = sh_sketch_estimate(sh_run_view(&x.r, i, x.sa, 0, NULL), sh_run_view(&x.r, reps[c], x.sb, 0, NULL), &est, err)) != SH_OK) goto done;
            if (cfg->decide.verify) {
                /* a candidate cluster by the estimate, decided by the exact scores */
                if (!sh_policy_passes(cfg->decide.policy, cfg->decide.candidate, &est)) continue;
                x.st->candidates++;
                x.j.fa_doc = 0; /* fa is scratch here */
                if ((s = sh_run_exact(&x.r, i, reps[c], x.fa, x.fb, &est, err)) != SH_OK) goto done;
            }
            if (sh_policy_passes(cfg->decide.policy, cfg->decide.threshold, &est)) {
                double score = est.resemblance > est.contain_ab ? est.resemblance : est.contain_ab;
                if (score > best_score) { best_score = score; best = c; }
            }
        }
        if (best != UINT32_MAX) {
            sh_linkrec l;
            sh_estimate est;
            sh_sketch_estimate(sh_run_view(&x.r, i, x.sa, 0, NULL), sh_run_view(&x.r, reps[best], x.sb, 0, NULL), &est, err);
            l.a = reps[best]; l.b = i;
            l.r = (float)est.resemblance; l.cab = (float)est.contain_ba; l.cba = (float)est.contain_ab;
            l.xr = l.xcab = l.xcba = -1.0f;
            if (cfg->decide.verify) {
                x.j.fa_doc = 0; /* fa is scratch here */
                if ((s = sh_run_exact(&x.r, i, reps[best], x.fa, x.fb, &est, err)) != SH_OK) goto done;
                l.xr = (float)est.resemblance; l.xcab = (float)est.contain_ba; l.xcba = (float)est.contain_ab;
            } else {
                x.st->candidates++;
            }
            sh_uf_union(x.uf, reps[best], i);
            x.st->linked++;
            if ((s = sh_recwriter_append(&x.links, &l, 1, err)) != SH_OK) goto done;
        } else {
            uint32_t c = (uint32_t)nreps++;
            reps[c] = i;
            for (j = 0; j < d->sketch_n; j++) {
                size_t h = sh_mix(v[j]) & (hcap - 1);
                e[ne].v = v[j];
                e[ne].cluster = c;
                e[ne].next = head[h];
                head[h] = (uint32_t)ne;
                ne++;
            }
        }
    }
    s = sh_decider_finish(&x, dir, err);
done:
    free(head);
    free(reps);
    free(hits);
    free(touched);
    free(e);
    sh_decider_close(&x);
    return s;
}
