/* Phases 2-4 of the clustering at the scale of "Syntactic Clustering of the
 * Web" ("Status": 30 million documents, about 600M kept shingles, 12.3 million
 * documents in 3.6 million clusters), on synthetic sketches: a benchmark, not
 * a test (docs/benchmarks.md, "Clustering at paper scale").
 *
 *   paper_scale [-n DOCS] [-m MEMORY] [-d MAX_DF] [-s SEED] [-k] OUTDIR
 *
 * MEMORY takes a K/M/G suffix (default 4G); -k keeps OUTDIR's files.
 *
 * Phase 1 is not timed here: the sketches are made up and written with
 * sh_p1_open/sh_p1_add/sh_p1_commit as sh_doc_out records of kind MOD_25,
 * w = 10, so that phases 2-4 see what they would see after sketching a corpus
 * of the paper's shape (all fractions scale with DOCS):
 *
 *   - 12 to 28 values per document (mean 20: 600M for 30M documents), each a
 *     distinct random multiple of 25 (MOD_25 keeps only those);
 *   - 2.1/30 of DOCS clusters of byte-identical documents (5.3/30 of DOCS
 *     documents) and 1.5/30 of DOCS mixed clusters (7/30 of DOCS documents);
 *     sizes by preferential attachment (heavy-tailed), capped at 10000
 *     (identical) and 300 (mixed);
 *   - in a mixed cluster the first member is the base, later ones are exact
 *     copies (30%) or near-duplicates that drop up to 2 and add up to 2
 *     values (at least one change). With at least 12 base values every two
 *     members have resemblance >= (n-4)/(n+4) >= 0.5, so the planted clusters
 *     are exactly what the 0.5 resemblance policy should find;
 *   - very common shingles: 25% of bases (documents or cluster bases) carry
 *     one of DOCS/20000 values (document frequency about 5000 > max_df), as
 *     the generated headers and footers of "Common shingles";
 *   - moderately common shingles: 20% of bases carry one of DOCS*0.2/30 values
 *     (document frequency about 30), which form pairs that share one value and
 *     fail the threshold: the false candidates of phase 3.
 *
 * Then sh_dedupe, sh_pairs and sh_decide (resemblance >= 0.5) run in turn.
 * For each: wall and CPU seconds, peak RSS (VmHWM, reset between phases
 * through /proc/self/clear_refs) and peak anonymous RSS, peak disk use of
 * OUTDIR (a sampler thread sums the allocated blocks of every file under it
 * every 50 ms; sorter run files live there too), and the counters of the
 * phase. Last, clusters.bin is compared with the planted clusters. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "cluster.h"
#include "extsort.h"

#define NONE UINT32_MAX
#define MAXV 40

/* ---- random numbers ------------------------------------------------------ */

static uint64_t splitmix(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}
static uint64_t hash2(uint64_t a, uint64_t b) { uint64_t s = a * 0x9E3779B97F4A7C15ULL ^ b; return splitmix(&s); }
static uint32_t below(uint64_t *s, uint32_t n) { return (uint32_t)(((splitmix(s) >> 32) * (uint64_t)n) >> 32); }
static uint64_t mult25(uint64_t x) { return (x % (UINT64_MAX / 25)) * 25; }

/* ---- measuring ----------------------------------------------------------- */

typedef struct sampler {
    const char *dir;
    volatile int stop;
    pthread_mutex_t mu;
    uint64_t disk_peak, anon_peak, file_peak; /* since the last reset */
    uint64_t disk_base;                       /* of the files made by generation */
} sampler;

static uint64_t du_acc;
static int du_cb(const char *path, const struct stat *sb, int flag, struct FTW *f)
{
    (void)f;
    if (flag == FTW_F && !strstr(path, "planted.bin")) du_acc += (uint64_t)sb->st_blocks * 512;
    return 0;
}
static uint64_t du(const char *dir)
{
    du_acc = 0;
    nftw(dir, du_cb, 16, FTW_PHYS);
    return du_acc;
}

static void rss(uint64_t *anon, uint64_t *file, uint64_t *hwm)
{
    char line[256];
    FILE *f = fopen("/proc/self/status", "r");
    *anon = *file = *hwm = 0;
    if (!f) return;
    while (fgets(line, sizeof line, f)) {
        unsigned long long v;
        if (sscanf(line, "RssAnon: %llu", &v) == 1) *anon = v * 1024;
        else if (sscanf(line, "RssFile: %llu", &v) == 1) *file = v * 1024;
        else if (sscanf(line, "VmHWM: %llu", &v) == 1) *hwm = v * 1024;
    }
    fclose(f);
}

static void *sample_loop(void *ud)
{
    sampler *s = (sampler *)ud;
    while (!s->stop) {
        uint64_t d = du(s->dir), a, f, h;
        struct timespec ts = { 0, 50 * 1000 * 1000 };
        rss(&a, &f, &h);
        pthread_mutex_lock(&s->mu);
        if (d > s->disk_peak) s->disk_peak = d;
        if (a > s->anon_peak) s->anon_peak = a;
        if (f > s->file_peak) s->file_peak = f;
        pthread_mutex_unlock(&s->mu);
        nanosleep(&ts, NULL);
    }
    return NULL;
}

typedef struct phase {
    const char *name;
    double wall, cpu;
    uint64_t hwm, anon, file, disk;
} phase;

static double cpu_now(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + 1e-6 * (double)ru.ru_utime.tv_usec +
           (double)ru.ru_stime.tv_sec + 1e-6 * (double)ru.ru_stime.tv_usec;
}

static void reset_peaks(sampler *s)
{
    int fd = open("/proc/self/clear_refs", O_WRONLY);
    if (fd >= 0) { if (write(fd, "5", 1) != 1) { /* VmHWM then stays the process peak */ } close(fd); }
    pthread_mutex_lock(&s->mu);
    s->disk_peak = s->anon_peak = s->file_peak = 0;
    pthread_mutex_unlock(&s->mu);
}

static void begin(sampler *s, phase *p, const char *name)
{
    reset_peaks(s);
    p->name = name;
    p->cpu = cpu_now();
    p->wall = sh_now();
}

static void end(sampler *s, phase *p)
{
    uint64_t a, f, h, d = du(s->dir);
    p->wall = sh_now() - p->wall;
    p->cpu = cpu_now() - p->cpu;
    rss(&a, &f, &h);
    pthread_mutex_lock(&s->mu);
    if (d > s->disk_peak) s->disk_peak = d;
    if (a > s->anon_peak) s->anon_peak = a;
    if (f > s->file_peak) s->file_peak = f;
    p->hwm = h;
    p->anon = s->anon_peak;
    p->file = s->file_peak;
    p->disk = s->disk_peak;
    pthread_mutex_unlock(&s->mu);
}

static double gib(uint64_t b) { return (double)b / (1024.0 * 1024.0 * 1024.0); }

static void die(const char *what, const sh_error *e)
{
    fprintf(stderr, "paper_scale: %s: %s\n", what, e->msg);
    exit(1);
}

static size_t parse_size(const char *s)
{
    char *end;
    double v = strtod(s, &end);
    switch (*end) {
    case 'k': case 'K': v *= 1024.0; break;
    case 'm': case 'M': v *= 1024.0 * 1024.0; break;
    case 'g': case 'G': v *= 1024.0 * 1024.0 * 1024.0; break;
    default: break;
    }
    return (size_t)v;
}

static uint64_t file_size(const char *dir, const char *name)
{
    char p[4096];
    struct stat sb;
    snprintf(p, sizeof p, "%s/%s", dir, name);
    return stat(p, &sb) == 0 ? (uint64_t)sb.st_size : 0;
}

/* ---- the planted shape --------------------------------------------------- */

typedef struct plan {
    uint32_t n;
    uint32_t n_ident, n_mixed;      /* clusters: ids 0..n_ident-1 identical, then mixed */
    uint64_t ident_docs, mixed_docs;
    uint32_t *assign;               /* doc -> cluster or NONE */
    uint32_t n_common, n_mid;
} plan;

/* Cluster sizes: each starts with 2 members; every further member joins the
 * cluster of a uniformly chosen existing member (preferential attachment). */
static void grow(uint32_t *slots, uint64_t first, uint32_t nclust, uint64_t total, uint32_t *size, uint32_t cap, uint64_t *rng)
{
    uint64_t filled = 0, i;
    for (i = 0; i < nclust; i++) {
        slots[first + filled++] = (uint32_t)i;
        slots[first + filled++] = (uint32_t)i;
        size[i] = 2;
    }
    while (filled < total) {
        uint32_t c = slots[first + (uint64_t)((splitmix(rng) >> 11) * (1.0 / 9007199254740992.0) * (double)filled)];
        if (size[c] >= cap) continue;
        size[c]++;
        slots[first + filled++] = c;
    }
}

static void make_plan(plan *p, uint32_t n, uint64_t seed)
{
    uint64_t rng = seed, clustered, i;
    uint32_t *slots, *size, *perm;
    p->n = n;
    p->n_ident = (uint32_t)(n * (2.1 / 30.0));
    p->n_mixed = (uint32_t)(n * (1.5 / 30.0));
    p->ident_docs = (uint64_t)(n * (5.3 / 30.0));
    p->mixed_docs = (uint64_t)(n * (7.0 / 30.0));
    if (p->ident_docs < 2ull * p->n_ident) p->ident_docs = 2ull * p->n_ident;
    if (p->mixed_docs < 2ull * p->n_mixed) p->mixed_docs = 2ull * p->n_mixed;
    p->n_common = n / 20000 ? n / 20000 : 1;
    p->n_mid = (uint32_t)(n * 0.2 / 30.0) ? (uint32_t)(n * 0.2 / 30.0) : 1;
    clustered = p->ident_docs + p->mixed_docs;
    slots = (uint32_t *)malloc(clustered * 4);
    size = (uint32_t *)malloc(((size_t)p->n_ident + p->n_mixed + 1) * 4);
    perm = (uint32_t *)malloc((size_t)n * 4);
    p->assign = (uint32_t *)malloc((size_t)n * 4);
    if (!slots || !size || !perm || !p->assign) { fprintf(stderr, "paper_scale: out of memory planning\n"); exit(1); }
    grow(slots, 0, p->n_ident, p->ident_docs, size, 10000, &rng);
    grow(slots, p->ident_docs, p->n_mixed, p->mixed_docs, size + p->n_ident, 300, &rng);
    for (i = p->ident_docs; i < clustered; i++) slots[i] += p->n_ident;
    /* scatter the members over the ids */
    for (i = 0; i < n; i++) { perm[i] = (uint32_t)i; p->assign[i] = NONE; }
    for (i = 0; i < clustered; i++) {
        uint64_t j = i + (uint64_t)((splitmix(&rng) >> 11) * (1.0 / 9007199254740992.0) * (double)(n - i));
        uint32_t t = perm[i]; perm[i] = perm[j]; perm[j] = t;
        p->assign[perm[i]] = slots[i];
    }
    free(slots);
    free(size);
    free(perm);
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* n distinct values sorted ascending; 0 if none is equal to another */
static size_t finish_set(uint64_t *v, size_t n)
{
    size_t i, m = 0;
    qsort(v, n, 8, cmp_u64);
    for (i = 0; i < n; i++)
        if (m == 0 || v[i] != v[m - 1]) v[m++] = v[i];
    return m;
}

/* The values of a base: document or cluster key k. */
static size_t base_values(const plan *p, uint64_t seed, uint64_t k, uint64_t *v)
{
    uint64_t rng = hash2(seed, k);
    size_t n = 12 + below(&rng, 17), i = 0;
    if (below(&rng, 100) < 25) v[i++] = mult25(hash2(seed ^ 0xC0110C, below(&rng, p->n_common)));
    if (below(&rng, 100) < 20) v[i++] = mult25(hash2(seed ^ 0x31D, below(&rng, p->n_mid)));
    for (; i < n; i++) v[i] = mult25(splitmix(&rng));
    return finish_set(v, n);
}

static uint64_t fold(const uint64_t *v, size_t n)
{
    uint64_t h = 0x5E7, i;
    for (i = 0; i < n; i++) h = hash2(h, v[i]);
    return h;
}

/* Write docs.bin and sketches.bin for the plan. */
static void generate(const plan *p, const char *dir, uint64_t seed, uint64_t *n_values)
{
    enum { BATCH = 4096 };
    sh_p1 w;
    sh_pool_config pc;
    sh_sketch_params id;
    sh_error e;
    sh_doc_out *outs = (sh_doc_out *)calloc(BATCH, sizeof *outs);
    uint32_t *seen = (uint32_t *)calloc((size_t)p->n_ident + p->n_mixed + 1, 4);
    uint32_t i;
    size_t b = 0, k;
    memset(&pc, 0, sizeof pc);
    memset(&id, 0, sizeof id);
    id.kind = SH_SKETCH_MOD; id.option = SH_OPTION_B; id.k = 64; id.tokens = SH_TOKENS_RABIN;
    id.w = 10; id.m = 25; id.seed = 0x5348494E474CULL; id.poly = 0x1B; id.idpoly = 0x87; id.rules = 1;
    pc.params = id;
    if (!outs || !seen) { fprintf(stderr, "paper_scale: out of memory\n"); exit(1); }
    for (k = 0; k < BATCH; k++) {
        outs[k].sketch = (sh_sketch *)malloc(sizeof(sh_sketch) + MAXV * 8);
        if (!outs[k].sketch) { fprintf(stderr, "paper_scale: out of memory\n"); exit(1); }
        outs[k].sketch->p = id;
    }
    if (sh_p1_open(&w, dir, &pc, &id, &e) != SH_OK) die("sh_p1_open", &e);
    *n_values = 0;
    for (i = 0; i < p->n; i++) {
        sh_doc_out *o = &outs[b];
        sh_sketch *s = o->sketch;
        uint32_t c = p->assign[i];
        uint64_t key;
        int exact;
        if (c == NONE) { key = (uint64_t)i << 1; exact = 1; }
        else {
            uint32_t member = seen[c]++;
            key = ((uint64_t)c << 1) | 1;
            exact = c < p->n_ident || member == 0 || (member >= 2 && hash2(seed ^ 0xE, i) % 10 < 3);
        }
        s->n = base_values(p, seed, key, s->v);
        if (!exact) {
            /* near-duplicate: drop d <= 2, add a <= 2, d + a >= 1 */
            uint64_t rng = hash2(seed ^ 0xD0C, i);
            uint32_t d = below(&rng, 3), a = below(&rng, 3), j;
            if (d + a == 0) a = 1;
            for (j = 0; j < d; j++) {
                uint32_t x = below(&rng, (uint32_t)s->n);
                memmove(s->v + x, s->v + x + 1, (s->n - x - 1) * 8);
                s->n--;
            }
            for (j = 0; j < a; j++) s->v[s->n++] = mult25(splitmix(&rng));
            s->n = finish_set(s->v, s->n);
        }
        s->n_shingles = s->n * 25;
        s->n_tokens = s->n_shingles + 9;
        o->status = SH_OK;
        o->bytes = s->n_tokens * 6;
        o->n_tokens = s->n_tokens;
        o->raw_fp = exact ? hash2(seed ^ 0x7A3, key) : hash2(seed ^ 0x7A4, i);
        o->canon_fp = exact ? hash2(seed ^ 0xCA1, key) : hash2(seed ^ 0xCA2, i);
        o->set_fp = fold(s->v, s->n);
        *n_values += s->n;
        if (++b == BATCH || i + 1 == p->n) {
            if (sh_p1_add(&w, outs, b, &e) != SH_OK) die("sh_p1_add", &e);
            b = 0;
        }
    }
    if (sh_p1_commit(&w, &e) != SH_OK) die("sh_p1_commit", &e);
    for (k = 0; k < BATCH; k++) free(outs[k].sketch);
    free(outs);
    free(seen);
}

/* ---- checking the result ------------------------------------------------- */

typedef struct check {
    uint64_t found_clusters, found_docs;
    uint64_t exact, split, merged, missing;   /* planted clusters */
    uint64_t foreign_docs;                     /* singletons put in a cluster */
} check;

static void check_clusters(const plan *p, const char *dir, check *ck)
{
    char path[4096];
    sh_recfile f;
    sh_error e;
    uint32_t nc = p->n_ident + p->n_mixed, i;
    uint32_t *lab = (uint32_t *)malloc((size_t)p->n * 4);
    uint32_t *labsize = (uint32_t *)calloc(p->n, 4);
    uint32_t *clab = (uint32_t *)malloc(((size_t)nc + 1) * 4);
    uint32_t *psize = (uint32_t *)calloc((size_t)nc + 1, 4);
    uint8_t *bad = (uint8_t *)calloc((size_t)nc + 1, 1);
    uint64_t j;
    memset(ck, 0, sizeof *ck);
    if (!lab || !labsize || !clab || !psize || !bad) { fprintf(stderr, "paper_scale: out of memory checking\n"); exit(1); }
    snprintf(path, sizeof path, "%s/clusters.bin", dir);
    if (sh_recfile_open(&f, path, SH_MAGIC_CLUSTERS, sizeof(sh_clusterrec), 1, &e) != SH_OK) die("clusters.bin", &e);
    for (i = 0; i < p->n; i++) lab[i] = NONE;
    for (j = 0; j < f.count; j++) {
        const sh_clusterrec *r = (const sh_clusterrec *)(const void *)(f.records + j * sizeof(sh_clusterrec));
        lab[r->doc] = r->cluster;
        if (labsize[r->cluster]++ == 0) ck->found_clusters++;
        ck->found_docs++;
    }
    sh_recfile_close(&f);
    for (i = 0; i < nc; i++) clab[i] = NONE;
    for (i = 0; i < p->n; i++) {
        uint32_t c = p->assign[i];
        if (c == NONE) { if (lab[i] != NONE) ck->foreign_docs++; continue; }
        psize[c]++;
        if (lab[i] == NONE) bad[c] |= 1;
        else if (clab[c] == NONE) clab[c] = lab[i];
        else if (clab[c] != lab[i]) bad[c] |= 2;
    }
    for (i = 0; i < nc; i++) {
        if (bad[i] & 2 || (bad[i] & 1 && clab[i] != NONE)) ck->split++;
        else if (clab[i] == NONE) ck->missing++;
        else if (labsize[clab[i]] != psize[i]) ck->merged++;
        else ck->exact++;
    }
    free(lab); free(labsize); free(clab); free(psize); free(bad);
}

/* ---- a reference measured in the same run ------------------------------- */

/* Seconds to sort 2^24 random 12-byte records in memory with sh_radix_sort
 * (the in-memory sort of the external sorter), median of 3: the machine is
 * shared, so phase times are also given as multiples of this. */
static double reference(void)
{
    const size_t n = (size_t)1 << 24;
    unsigned char *a = (unsigned char *)malloc(n * 12), *aux = (unsigned char *)malloc(n * 12);
    double t[3], x;
    uint64_t rng = 42;
    size_t i;
    int r;
    if (!a || !aux) { fprintf(stderr, "paper_scale: out of memory\n"); exit(1); }
    for (r = 0; r < 3; r++) {
        for (i = 0; i < n; i++) { uint64_t v = splitmix(&rng); memcpy(a + 12 * i, &v, 8); memcpy(a + 12 * i + 8, &i, 4); }
        t[r] = sh_now();
        sh_radix_sort(a, aux, n, 12, 8);
        t[r] = sh_now() - t[r];
    }
    free(a);
    free(aux);
    if (t[0] > t[1]) { x = t[0]; t[0] = t[1]; t[1] = x; }
    if (t[1] > t[2]) { x = t[1]; t[1] = t[2]; t[2] = x; }
    if (t[0] > t[1]) { x = t[0]; t[0] = t[1]; t[1] = x; }
    return t[1];
}

/* ---- main ---------------------------------------------------------------- */

static void machine(void)
{
    char line[512], model[256] = "?";
    struct utsname u;
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (f) {
        while (fgets(line, sizeof line, f))
            if (strncmp(line, "model name", 10) == 0) {
                char *c = strchr(line, ':');
                if (c) { snprintf(model, sizeof model, "%s", c + 2); model[strcspn(model, "\n")] = 0; }
                break;
            }
        fclose(f);
    }
    uname(&u);
    printf("machine: %s, %ld cores, %.1f GiB RAM, %s %s\n", model, sysconf(_SC_NPROCESSORS_ONLN),
           gib((uint64_t)sysconf(_SC_PHYS_PAGES) * (uint64_t)sysconf(_SC_PAGE_SIZE)), u.sysname, u.release);
}

static void save_plan(const plan *p, const char *dir)
{
    char path[4096];
    FILE *f;
    snprintf(path, sizeof path, "%s/planted.bin", dir);
    if (!(f = fopen(path, "wb")) || fwrite(p->assign, 4, p->n, f) != p->n || fclose(f) != 0) {
        fprintf(stderr, "paper_scale: cannot write %s\n", path);
        exit(1);
    }
}

static void load_plan(plan *p, const char *dir)
{
    char path[4096];
    FILE *f;
    snprintf(path, sizeof path, "%s/planted.bin", dir);
    p->assign = (uint32_t *)malloc((size_t)p->n * 4);
    if (!p->assign || !(f = fopen(path, "rb")) || fread(p->assign, 4, p->n, f) != p->n) {
        fprintf(stderr, "paper_scale: cannot read %s\n", path);
        exit(1);
    }
    fclose(f);
    unlink(path);
}

int main(int argc, char **argv)
{
    uint32_t n = 1000000, max_df = 1000;
    size_t memory = (size_t)4 << 30;
    uint64_t seed = 1997, n_values;
    int keep = 0, opt;
    const char *dir;
    plan p;
    sampler smp;
    pthread_t th;
    phase ph[4];
    sh_error e;
    sh_dedupe_stats ds;
    sh_pairs_config pcfg;
    sh_pairs_stats ps;
    sh_decide_config dcfg;
    sh_decide_stats dst;
    check ck;
    double t_gen, ref0, ref1, ref;
    struct rusage ru;
    char cmd[4200];
    while ((opt = getopt(argc, argv, "n:m:d:s:k")) != -1) {
        switch (opt) {
        case 'n': n = (uint32_t)strtoul(optarg, NULL, 10); break;
        case 'm': memory = parse_size(optarg); break;
        case 'd': max_df = (uint32_t)strtoul(optarg, NULL, 10); break;
        case 's': seed = strtoull(optarg, NULL, 10); break;
        case 'k': keep = 1; break;
        default:
            fprintf(stderr, "usage: paper_scale [-n DOCS] [-m MEMORY] [-d MAX_DF] [-s SEED] [-k] OUTDIR\n");
            return 2;
        }
    }
    if (optind + 1 != argc || n < 100) {
        fprintf(stderr, "usage: paper_scale [-n DOCS >= 100] [-m MEMORY] [-d MAX_DF] [-s SEED] [-k] OUTDIR\n");
        return 2;
    }
    dir = argv[optind];
    if (mkdir(dir, 0777) != 0 && errno != EEXIST) { perror(dir); return 1; }
    machine();
    printf("documents %u, memory budget %.2f GiB, max_df %u, seed %llu, output %s\n", n, gib(memory), max_df,
           (unsigned long long)seed, dir);

    t_gen = sh_now();
    make_plan(&p, n, seed);
    generate(&p, dir, seed, &n_values);
    save_plan(&p, dir);
    free(p.assign);
    p.assign = NULL;
    t_gen = sh_now() - t_gen;
    printf("planted: %u identical-only clusters (%llu docs), %u mixed clusters (%llu docs), %u singletons; "
           "%u very common values, %u moderately common\n",
           p.n_ident, (unsigned long long)p.ident_docs, p.n_mixed, (unsigned long long)p.mixed_docs,
           (uint32_t)(n - p.ident_docs - p.mixed_docs), p.n_common, p.n_mid);
    printf("generated %llu sketch values (%.2f per document) in %.1f s: docs.bin %.2f GiB, sketches.bin %.2f GiB\n",
           (unsigned long long)n_values, (double)n_values / n, t_gen, gib(file_size(dir, "docs.bin")),
           gib(file_size(dir, "sketches.bin")));
    fflush(stdout);

    ref0 = reference();
    memset(&smp, 0, sizeof smp);
    smp.dir = dir;
    pthread_mutex_init(&smp.mu, NULL);
    smp.disk_base = du(dir);
    pthread_create(&th, NULL, sample_loop, &smp);

    begin(&smp, &ph[0], "dedupe");
    if (sh_dedupe(dir, &ds, &e) != SH_OK) die("sh_dedupe", &e);
    end(&smp, &ph[0]);
    printf("dedupe: %llu docs, %llu exact, %llu lexical, %llu shingle-equal, %llu representatives\n",
           (unsigned long long)ds.docs, (unsigned long long)ds.exact, (unsigned long long)ds.lexical,
           (unsigned long long)ds.shingle, (unsigned long long)ds.representatives);
    fflush(stdout);

    memset(&pcfg, 0, sizeof pcfg);
    pcfg.memory = memory;
    pcfg.max_df = max_df;
    begin(&smp, &ph[1], "pairs");
    if (sh_pairs(dir, &pcfg, &ps, &e) != SH_OK) die("sh_pairs", &e);
    end(&smp, &ph[1]);
    printf("pairs: %llu <shingle, doc> records, %llu distinct shingles, %llu over max_df, %llu <doc, doc, 1> triplets, "
           "%llu distinct pairs; disk_peak (stat) %.2f GiB\n",
           (unsigned long long)ps.records, (unsigned long long)ps.shingles, (unsigned long long)ps.common_dropped,
           (unsigned long long)ps.pair_records, (unsigned long long)ps.pairs, gib(ps.disk_peak));
    fflush(stdout);

    memset(&dcfg, 0, sizeof dcfg);
    dcfg.policy = SH_POLICY_RESEMBLANCE;
    dcfg.threshold = 0.5;
    dcfg.candidate = 0.5;
    begin(&smp, &ph[2], "decide");
    if (sh_decide(dir, &dcfg, &dst, &e) != SH_OK) die("sh_decide", &e);
    end(&smp, &ph[2]);
    smp.stop = 1;
    pthread_join(th, NULL);
    ref1 = reference();
    ref = (ref0 + ref1) / 2;
    printf("decide: %llu pairs, %llu linked, %llu clusters (%llu identical only, %llu mixed), %llu documents in them\n",
           (unsigned long long)dst.pairs, (unsigned long long)dst.linked, (unsigned long long)dst.clusters,
           (unsigned long long)dst.identical_only_clusters, (unsigned long long)dst.mixed_clusters,
           (unsigned long long)dst.clustered_docs);

    printf("\nfiles: docs.bin %.3f GiB, sketches.bin %.3f GiB, pairs.bin %.3f GiB, links.bin %.3f GiB, clusters.bin %.3f GiB\n",
           gib(file_size(dir, "docs.bin")), gib(file_size(dir, "sketches.bin")), gib(file_size(dir, "pairs.bin")),
           gib(file_size(dir, "links.bin")), gib(file_size(dir, "clusters.bin")));
    printf("\nreference: sh_radix_sort of 2^24 12-byte records in memory, median of 3: %.3f s before the phases, %.3f s after\n",
           ref0, ref1);
    printf("\n| phase (paper's row) | paper CPU-days (30M docs) | wall s | wall / reference | CPU s | peak RSS GiB | peak anon GiB | peak file-backed GiB | peak disk of OUTDIR GiB |\n");
    printf("|---|---|---|---|---|---|---|---|---|\n");
    printf("| dedupe (Duplicate Elimination) | 0.3 | %.1f | %.0f | %.1f | %.3f | %.3f | %.3f | %.2f |\n",
           ph[0].wall, ph[0].wall / ref, ph[0].cpu, gib(ph[0].hwm), gib(ph[0].anon), gib(ph[0].file), gib(ph[0].disk));
    printf("| pairs: shingle merging (Shingle Merging) | 1.7 | %.1f | %.0f | | | | | |\n", ps.t_merge, ps.t_merge / ref);
    printf("| pairs: pair formation (ID-ID Pair Formation) | 0.7 | %.1f | %.0f | | | | | |\n", ps.t_form, ps.t_form / ref);
    printf("| pairs: pair merging (ID-ID Merging) | 2.6 | %.1f | %.0f | | | | | |\n", ps.t_pairmerge, ps.t_pairmerge / ref);
    printf("| pairs, all | 5.0 | %.1f | %.0f | %.1f | %.3f | %.3f | %.3f | %.2f |\n",
           ph[1].wall, ph[1].wall / ref, ph[1].cpu, gib(ph[1].hwm), gib(ph[1].anon), gib(ph[1].file), gib(ph[1].disk));
    printf("| decide (Cluster Formation) | 0.5 | %.1f | %.0f | %.1f | %.3f | %.3f | %.3f | %.2f |\n",
           ph[2].wall, ph[2].wall / ref, ph[2].cpu, gib(ph[2].hwm), gib(ph[2].anon), gib(ph[2].file), gib(ph[2].disk));
    printf("| phases after sketching | 5.8 | %.1f | %.0f | %.1f | | | | |\n",
           ph[0].wall + ph[1].wall + ph[2].wall, (ph[0].wall + ph[1].wall + ph[2].wall) / ref, ph[0].cpu + ph[1].cpu + ph[2].cpu);
    getrusage(RUSAGE_SELF, &ru);
    printf("\nru_maxrss since the last reset (decide): %.2f GiB; OUTDIR before the phases %.2f GiB\n",
           gib((uint64_t)ru.ru_maxrss * 1024), gib(smp.disk_base));

    load_plan(&p, dir);
    check_clusters(&p, dir, &ck);
    printf("\nplanted: %u clusters of >= 2, %llu documents in them\n", p.n_ident + p.n_mixed,
           (unsigned long long)(p.ident_docs + p.mixed_docs));
    printf("found:   %llu clusters of >= 2, %llu documents in them\n", (unsigned long long)ck.found_clusters,
           (unsigned long long)ck.found_docs);
    printf("planted clusters recovered exactly %llu, split %llu, merged with others %llu, missing %llu; "
           "singletons put in a cluster %llu\n",
           (unsigned long long)ck.exact, (unsigned long long)ck.split, (unsigned long long)ck.merged,
           (unsigned long long)ck.missing, (unsigned long long)ck.foreign_docs);
    free(p.assign);
    if (!keep) {
        static const char *const made[] = { "docs.bin", "sketches.bin", "pairs.bin", "links.bin", "clusters.bin" };
        size_t k;
        for (k = 0; k < sizeof made / sizeof *made; k++) {
            snprintf(cmd, sizeof cmd, "%s/%s", dir, made[k]);
            unlink(cmd);
        }
        rmdir(dir);
    }
    return ck.exact == (uint64_t)p.n_ident + p.n_mixed && ck.foreign_docs == 0 ? 0 : 3;
}
