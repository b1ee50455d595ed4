/* Sketching throughput: a benchmark, not a test (docs/benchmarks.md,
 * "Sketching throughput").
 *
 *   sketch_bench [-r REPS] [-t THREADS] [-s text|html] [-W] [-P] CORPUS
 *
 * (-s: only that set; -W: without the wc -w reference; -P: without the
 * portable rows; for profiling.)
 * CORPUS holds text/ and html/ (bench/corpus.sh makes them). Every file is read
 * into memory first, so no I/O is timed. Then, for each set, with the default
 * shingler (w = 10, k = 64, the default seed, lowercase + numbers; HTML
 * stripping on for html/):
 *   canon     sh_canon_tokenize alone
 *   shingle   + token ids and the sliding window (sh_shingle_text)
 *   MOD_25    + the sketch (sh_sketch_build, MOD_m m = 25: the clustering default)
 *   MIN_200   + the sketch (MIN_s s = 200)
 * on one thread at the best SIMD level there is (core/simd.h), the same at
 * the portable level (the reference path, whose digests must be the same),
 * then MOD_25 through the pool (sh_pool_run, documents already in memory) on
 * 1 and THREADS threads; each REPS times, reporting the median and the range
 * in MB/s (10^6 bytes of input per second) and per core, and the median cost
 * of each stage in nanoseconds and cycles per input byte (cycles at the
 * clock a dependent chain of additions runs at, measured in the run:
 * hardware counters are not readable on a shared VM). The
 * reference is `wc -w` (GNU coreutils, C and C.UTF-8 locales) over the same
 * files in the same run, read from the page cache after a warm-up run.
 *
 * Files the default shingler rejects (invalid UTF-8) are left out of every
 * figure and counted. A digest of every sketch is printed so that a change to
 * the hot loops can be checked for bit-identical results on real data. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "canon.h"
#include "pool.h"
#include "simd.h"
#include "shingler.h"
#include "sketch.h"

#include "lib/kernel.h"

typedef struct corpus {
    char name[16];
    char dir[4096];
    char **path;          /* relative to dir */
    const char **data;
    size_t *len;
    size_t n;             /* documents kept */
    size_t bytes;         /* their total size */
    size_t rejected, rejected_bytes;
    unsigned long long tokens, shingles; /* of the documents kept */
    char *buf;
} corpus;

static void die(const char *what)
{
    fprintf(stderr, "sketch_bench: %s\n", what);
    exit(1);
}

static void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p) die("out of memory");
    return p;
}

static double clock_secs(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static double now(void) { return clock_secs(CLOCK_MONOTONIC); }

/* CPU seconds of the last timed pass, all its threads (or its child
 * processes) together: other load on the machine leaves it almost unchanged,
 * so bytes / cpu is the rate per core even when the machine is shared. */
static double last_cpu;

static double children_cpu(void)
{
    struct rusage ru;
    getrusage(RUSAGE_CHILDREN, &ru);
    return (double)ru.ru_utime.tv_sec + 1e-6 * (double)ru.ru_utime.tv_usec
         + (double)ru.ru_stime.tv_sec + 1e-6 * (double)ru.ru_stime.tv_usec;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Read every regular file of dir into one buffer, in name order. */
static void load(corpus *c, const char *root, const char *name)
{
    DIR *d;
    struct dirent *e;
    size_t cap = 1024, i, total = 0, at = 0;
    snprintf(c->name, sizeof c->name, "%s", name);
    snprintf(c->dir, sizeof c->dir, "%s/%s", root, name);
    if (!(d = opendir(c->dir))) {
        fprintf(stderr, "sketch_bench: cannot open %s; make the corpus with bench/corpus.sh %s\n", c->dir, root);
        exit(1);
    }
    c->path = (char **)xmalloc(cap * sizeof *c->path);
    c->n = 0;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.') continue;
        if (c->n == cap) {
            cap *= 2;
            c->path = (char **)realloc(c->path, cap * sizeof *c->path);
            if (!c->path) die("out of memory");
        }
        c->path[c->n] = (char *)xmalloc(strlen(e->d_name) + 1);
        strcpy(c->path[c->n++], e->d_name);
    }
    closedir(d);
    qsort(c->path, c->n, sizeof *c->path, cmp_str);
    c->len = (size_t *)xmalloc(c->n * sizeof *c->len);
    c->data = (const char **)xmalloc(c->n * sizeof *c->data);
    for (i = 0; i < c->n; i++) {
        char full[8192];
        struct stat st;
        snprintf(full, sizeof full, "%s/%s", c->dir, c->path[i]);
        if (stat(full, &st) != 0) die("cannot stat a corpus file");
        c->len[i] = (size_t)st.st_size;
        total += c->len[i];
    }
    c->buf = (char *)xmalloc(total);
    for (i = 0; i < c->n; i++) {
        char full[8192];
        FILE *f;
        snprintf(full, sizeof full, "%s/%s", c->dir, c->path[i]);
        if (!(f = fopen(full, "rb")) || fread(c->buf + at, 1, c->len[i], f) != c->len[i]) die("cannot read a corpus file");
        fclose(f);
        c->data[i] = c->buf + at;
        at += c->len[i];
    }
    c->bytes = total;
}

static uint64_t fold_sketch(uint64_t d, const sh_sketch *sk)
{
    size_t i;
    d = sh_mix(d ^ sk->n_shingles);
    for (i = 0; i < sk->n; i++) d = sh_mix(d ^ sk->v[i]);
    return d;
}

/* Drop the documents the shingler rejects (they would stop part way). */
static void keep_valid(corpus *c, const sh_shingler *sh)
{
    sh_work w;
    sh_error err;
    size_t i, k = 0;
    memset(&w, 0, sizeof w);
    c->rejected = c->rejected_bytes = 0;
    c->bytes = 0;
    c->tokens = c->shingles = 0;
    for (i = 0; i < c->n; i++) {
        if (sh_shingle_text(sh, &w, c->data[i], c->len[i], &err) != SH_OK) {
            c->rejected++;
            c->rejected_bytes += c->len[i];
            free(c->path[i]);
            continue;
        }
        c->path[k] = c->path[i];
        c->data[k] = c->data[i];
        c->len[k] = c->len[i];
        c->bytes += c->len[k];
        c->tokens += w.toks.n;
        c->shingles += w.n_fps;
        k++;
    }
    c->n = k;
    sh_work_free(&w);
}

typedef enum stage { CANON, SHINGLE, SKETCH } stage;

/* One pass over the corpus on the calling thread; returns seconds. *digest,
 * when given, receives a digest of every sketch. */
static double pass(const corpus *c, const sh_shingler *sh, stage st, const sh_sketch_params *p, uint64_t *digest)
{
    /* one set of scratch buffers for every pass, as a long-running worker
     * (or a shingler object) keeps them: they grow to the largest document
     * once; a fresh set per pass would put the page faults of that growth
     * (some 100 MB for the corpus's 4 MB documents) into every pass */
    static sh_work w;
    sh_error err;
    size_t i;
    uint64_t d = 0;
    double t0, c0;
    for (i = 0; i < c->n && i < 64; i++) sh_shingle_text(sh, &w, c->data[i], c->len[i], &err);
    c0 = cpu_now();
    t0 = now();
    for (i = 0; i < c->n; i++) {
        sh_sketch *sk;
        if (st == CANON) {
            if (sh_canon_tokenize(&sh->c.canon, c->data[i], c->len[i], &w.toks, &err) != SH_OK) die(err.msg);
            continue;
        }
        if (sh_shingle_text(sh, &w, c->data[i], c->len[i], &err) != SH_OK) die(err.msg);
        if (st == SHINGLE) continue;
        if (sh_sketch_build(sh, &w, p, 0, w.toks.n, &sk, &err) != SH_OK) die(err.msg);
        if (digest) d = fold_sketch(d, sk);
        free(sk);
    }
    t0 = now() - t0;
    last_cpu = cpu_now() - c0;
    if (digest) *digest = d;
    return t0;
}

static double pool_pass(const corpus *c, const sh_shingler *sh, const sh_sketch_params *p, int threads, uint64_t *digest)
{
    sh_pool_config pc;
    sh_pool *pool;
    sh_error err;
    sh_doc_in *in = (sh_doc_in *)xmalloc(c->n * sizeof *in);
    sh_doc_out *out = (sh_doc_out *)xmalloc(c->n * sizeof *out);
    size_t i;
    uint64_t d = 0;
    double t, c0;
    memset(&pc, 0, sizeof pc);
    pc.text = pc.html = sh;
    pc.params = *p;
    pc.threads = threads;
    for (i = 0; i < c->n; i++) {
        in[i].data = c->data[i];
        in[i].len = c->len[i];
        in[i].path = c->path[i];
        in[i].html = 0; /* the shingler given is already the right one for the set */
        in[i].name = NULL;
    }
    if (sh_pool_new(&pool, &pc, &err) != SH_OK) die(err.msg);
    c0 = cpu_now();
    t = now();
    if (sh_pool_run(pool, in, out, c->n, &err) != SH_OK) die(err.msg);
    t = now() - t;
    last_cpu = cpu_now() - c0;
    for (i = 0; i < c->n; i++) {
        if (out[i].status != SH_OK) die(out[i].err);
        d = fold_sketch(d, out[i].sketch);
    }
    *digest = d;
    sh_pool_release(out, c->n);
    sh_pool_free(pool);
    free(in);
    free(out);
    return t;
}

static int cmp_dbl(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median, min and max of v[0..n) (sorted in place). */
static void stats(double *v, int n, double *med, double *lo, double *hi)
{
    qsort(v, (size_t)n, sizeof *v, cmp_dbl);
    *med = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
    *lo = v[0];
    *hi = v[n - 1];
}

/* Print a row; returns the median rate per core (MB per CPU second). */
static double row(const char *set, const char *what, int threads, double bytes, double *secs, double *cpus, int reps)
{
    double mbs[64], med, lo, hi, cmed, clo, chi;
    int r;
    for (r = 0; r < reps; r++) mbs[r] = bytes / secs[r] / 1e6;
    stats(mbs, reps, &med, &lo, &hi);
    for (r = 0; r < reps; r++) mbs[r] = bytes / cpus[r] / 1e6;
    stats(mbs, reps, &cmed, &clo, &chi);
    printf("| %-4s | %-26s | %7d | %11.1f | %7.1f – %-7.1f | %13.1f | %7.1f – %-7.1f |\n",
           set, what, threads, med, lo, hi, cmed, clo, chi);
    fflush(stdout);
    return cmed;
}

/* Run `wc -w` over the files of c (the names given in a NUL-separated list);
 * returns seconds and the word count in *words. */
static double wc_pass(const corpus *c, const char *locale, unsigned long long *words)
{
    char list[] = "/tmp/sketch_bench_XXXXXX", cmd[512], line[8192], last[8192] = "";
    int fd = mkstemp(list);
    FILE *f, *p;
    size_t i;
    double t, c0;
    if (fd < 0 || !(f = fdopen(fd, "w"))) die("cannot write the file list for wc");
    for (i = 0; i < c->n; i++) fprintf(f, "%s/%s%c", c->dir, c->path[i], 0);
    fclose(f);
    snprintf(cmd, sizeof cmd, "LC_ALL=%s wc -w --files0-from=%s", locale, list);
    c0 = children_cpu();
    t = now();
    if (!(p = popen(cmd, "r"))) die("cannot run wc");
    while (fgets(line, sizeof line, p)) memcpy(last, line, sizeof line);
    if (pclose(p) != 0) die("wc -w failed");
    t = now() - t;
    last_cpu = children_cpu() - c0;
    unlink(list);
    *words = strtoull(last, NULL, 10);
    return t;
}

/* The load average: a busy machine lowers the wall-clock figures. */
static void load_average(const char *when)
{
    char line[128] = "unknown\n";
    FILE *f = fopen("/proc/loadavg", "r");
    if (f) {
        if (!fgets(line, sizeof line, f)) strcpy(line, "unknown\n");
        fclose(f);
    }
    printf("load average %s: %s", when, line);
}

static void machine(void)
{
    char line[512], model[256] = "unknown", when[64];
    FILE *f = fopen("/proc/cpuinfo", "r");
    struct utsname u;
    time_t tt = time(NULL);
    if (f) {
        while (fgets(line, sizeof line, f)) {
            char *colon = strchr(line, ':');
            if (strncmp(line, "model name", 10) == 0 && colon) {
                snprintf(model, sizeof model, "%s", colon + 2);
                model[strcspn(model, "\n")] = 0;
                break;
            }
        }
        fclose(f);
    }
    uname(&u);
    strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S %Z", localtime(&tt));
    printf("date:    %s\n", when);
    printf("cpu:     %s, %ld cores online\n", model, sysconf(_SC_NPROCESSORS_ONLN));
    printf("kernel:  %s %s %s\n", u.sysname, u.release, u.machine);
#ifdef __VERSION__
    printf("cc:      %s\n", __VERSION__);
#endif
    load_average("at start");
}

int main(int argc, char **argv)
{
    int reps = 5, threads = 2, opt, s, r, with_wc = 1, with_portable = 1;
    const char *only = NULL;
    const char *root;
    corpus sets[2];
    static sh_shingler shs[2], portable[2];
    sh_sketch_params mod, min;
    double secs[64], cpus[64], ghz;
    uint64_t dig[2][2] = { { 0 } }, pdig[2][2] = { { 0 } };
    double med[2][4] = { { 0 } }; /* MOD_25 1 thread, MIN_200 1 thread, wc -w C, wc -w C.UTF-8 */
    double stage[2][4] = { { 0 } }; /* canon, + shingle, + MOD_25, + MIN_200: per core */

    while ((opt = getopt(argc, argv, "r:t:s:WP")) != -1) {
        if (opt == 'r') reps = atoi(optarg);
        else if (opt == 't') threads = atoi(optarg);
        else if (opt == 's') only = optarg;
        else if (opt == 'W') with_wc = 0;
        else if (opt == 'P') with_portable = 0;
        else reps = 0;
    }
    if (optind != argc - 1 || reps < 1 || reps > 64 || threads < 1) {
        fprintf(stderr, "usage: sketch_bench [-r REPS 1..64] [-t THREADS] [-s text|html] [-W] [-P] CORPUS\n");
        return 2;
    }
    root = argv[optind];
    machine();
    ghz = clock_ghz();
    printf("clock:   %.2f GHz (a dependent chain of additions; cycles below are at this clock)\n", ghz);

    memset(&mod, 0, sizeof mod);
    mod.kind = SH_SKETCH_MOD;
    mod.m = 25;
    memset(&min, 0, sizeof min);
    min.kind = SH_SKETCH_MIN;
    min.s = 200;

    for (s = 0; s < 2; s++) {
        double t = now();
        make_shingler(&shs[s], s == 1, SH_SIMD_AUTO);
        make_shingler(&portable[s], s == 1, SH_SIMD_PORTABLE);
        load(&sets[s], root, s == 0 ? "text" : "html");
        t = now() - t;
        keep_valid(&sets[s], &shs[s]);
        printf("corpus:  %-4s %6zu files, %8.1f MB, %llu tokens, %llu shingles (read in %.1f s); %zu files (%.1f MB) of invalid UTF-8 left out\n",
               sets[s].name, sets[s].n, sets[s].bytes / 1e6, sets[s].tokens, sets[s].shingles, t,
               sets[s].rejected, sets[s].rejected_bytes / 1e6);
    }
    printf("shingler: w = 10, k = 64, seed 0x%llx, Rabin token ids, option B, lowercase + numbers, invalid UTF-8 = error;"
           " %d repetitions; SIMD level %s\n\n", (unsigned long long)DEFAULT_SEED, reps, sh_simd_name(shs[0].level));

    printf("MB/s: 10^6 input bytes per second of wall time; per core: per CPU second (all threads, or wc's own)\n\n");
    printf("| set  | stage                      | threads | MB/s median | MB/s min – max    | per core median | per core min – max |\n");
    printf("| ---- | -------------------------- | ------: | ----------: | ----------------- | --------------: | ------------------ |\n");
    for (s = 0; s < 2; s++) {
        const corpus *c = &sets[s];
        const sh_shingler *sh = &shs[s];
        const char *canon_name = s == 1 ? "canon (HTML) + tokenize" : "canon + tokenize";
        uint64_t d;
        if (only && strcmp(only, c->name) != 0) continue;
        for (r = 0; r < reps; r++) { secs[r] = pass(c, sh, CANON, NULL, NULL); cpus[r] = last_cpu; }
        stage[s][0] = row(c->name, canon_name, 1, (double)c->bytes, secs, cpus, reps);
        for (r = 0; r < reps; r++) { secs[r] = pass(c, sh, SHINGLE, NULL, NULL); cpus[r] = last_cpu; }
        stage[s][1] = row(c->name, "+ ids + window", 1, (double)c->bytes, secs, cpus, reps);
        for (r = 0; r < reps; r++) { secs[r] = pass(c, sh, SKETCH, &mod, &dig[s][0]); cpus[r] = last_cpu; }
        stage[s][2] = med[s][0] = row(c->name, "+ sketch MOD_25", 1, (double)c->bytes, secs, cpus, reps);
        for (r = 0; r < reps; r++) { secs[r] = pass(c, sh, SKETCH, &min, &dig[s][1]); cpus[r] = last_cpu; }
        stage[s][3] = med[s][1] = row(c->name, "+ sketch MIN_200", 1, (double)c->bytes, secs, cpus, reps);
        if (with_portable) {
            for (r = 0; r < reps; r++) { secs[r] = pass(c, &portable[s], SKETCH, &mod, &pdig[s][0]); cpus[r] = last_cpu; }
            row(c->name, "MOD_25, portable level", 1, (double)c->bytes, secs, cpus, reps);
            for (r = 0; r < reps; r++) { secs[r] = pass(c, &portable[s], SKETCH, &min, &pdig[s][1]); cpus[r] = last_cpu; }
            row(c->name, "MIN_200, portable level", 1, (double)c->bytes, secs, cpus, reps);
            if (pdig[s][0] != dig[s][0] || pdig[s][1] != dig[s][1])
                die("the portable level's sketches differ from the fast paths' (core/simd.h): a bug");
        }
        for (r = 0; r < reps; r++) {
            { secs[r] = pool_pass(c, sh, &mod, 1, &d); cpus[r] = last_cpu; }
            if (d != dig[s][0]) die("the pool's MOD_25 sketches differ from the single-threaded ones");
        }
        row(c->name, "pool, MOD_25", 1, (double)c->bytes, secs, cpus, reps);
        if (threads > 1) {
            for (r = 0; r < reps; r++) {
                { secs[r] = pool_pass(c, sh, &mod, threads, &d); cpus[r] = last_cpu; }
                if (d != dig[s][0]) die("the pool's MOD_25 sketches differ from the single-threaded ones");
            }
            row(c->name, "pool, MOD_25", threads, (double)c->bytes, secs, cpus, reps);
        }
        if (with_wc) {
            static const char *const locales[] = { "C", "C.UTF-8" };
            int l;
            for (l = 0; l < 2; l++) {
                char what[64];
                unsigned long long words = 0;
                wc_pass(c, locales[l], &words); /* warm-up: page cache */
                for (r = 0; r < reps; r++) { secs[r] = wc_pass(c, locales[l], &words); cpus[r] = last_cpu; }
                snprintf(what, sizeof what, "wc -w, LC_ALL=%s", locales[l]);
                med[s][2 + l] = row(c->name, what, 1, (double)c->bytes, secs, cpus, reps);
                if (l == 0) printf("|      | (wc -w: %llu words) | | | | | |\n", words);
            }
        }
    }
    printf("\n");
    for (s = 0; s < 2 && with_wc; s++)
        if (!only || strcmp(only, sets[s].name) == 0)
            printf("%s: sketching / wc -w, per core: MOD_25 %.2fx, MIN_200 %.2fx of LC_ALL=C; %.2fx, %.2fx of LC_ALL=C.UTF-8\n",
               sets[s].name, med[s][0] / med[s][2], med[s][1] / med[s][2], med[s][0] / med[s][3], med[s][1] / med[s][3]);
    printf("\ncost of each stage, per core (median): ns and cycles per input byte\n\n");
    printf("| set  | canonicalize + tokenize | token ids + window | MOD_25 sketch | MIN_200 sketch | all, MIN_200 |\n");
    printf("| ---- | ----------------------: | -----------------: | ------------: | -------------: | -----------: |\n");
    for (s = 0; s < 2; s++) {
        double ns[4];
        int k;
        if (only && strcmp(only, sets[s].name) != 0) continue;
        for (k = 0; k < 4; k++) ns[k] = 1e3 / stage[s][k]; /* ns per byte, cumulative */
        printf("| %-4s | %5.3f ns, %4.2f c | %5.3f ns, %4.2f c | %5.3f ns, %4.2f c | %5.3f ns, %4.2f c | %5.3f ns, %4.2f c |\n",
               sets[s].name, ns[0], ns[0] * ghz, ns[1] - ns[0], (ns[1] - ns[0]) * ghz, ns[2] - ns[1], (ns[2] - ns[1]) * ghz,
               ns[3] - ns[1], (ns[3] - ns[1]) * ghz, ns[3], ns[3] * ghz);
    }
    load_average("at end");
    printf("\ndigests (bit-identical results check): text MOD_25 %016llx MIN_200 %016llx; html MOD_25 %016llx MIN_200 %016llx\n",
           (unsigned long long)dig[0][0], (unsigned long long)dig[0][1], (unsigned long long)dig[1][0], (unsigned long long)dig[1][1]);
    for (s = 0; s < 2; s++) {
        size_t i;
        for (i = 0; i < sets[s].n; i++) free(sets[s].path[i]);
        free(sets[s].path);
        free(sets[s].data);
        free(sets[s].len);
        free(sets[s].buf);
    }
    return 0;
}
