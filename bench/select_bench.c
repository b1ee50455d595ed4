/* The sketch selection alone: a benchmark, not a test (docs/benchmarks.md,
 * "The selection alone").
 *
 *   select_bench [-r REPS] [-k min|mod|both] [-s text|html] [-g GHZ] [-c CLASS] [-e KB] CORPUS
 *
 * CORPUS holds text/ and html/ (bench/corpus.sh). Every document is shingled
 * once with the default shingler (w = 10, k = 64, the default seed; HTML
 * stripping for html/) and its fingerprints are kept in memory; then only
 * sh_sketch_build runs, MIN_200 and MOD_25 (floor 0), over the documents of
 * each size class (under 8 KB, 8 to 400 KB, over 400 KB) REPS times, each
 * document's fingerprints first copied to the work's buffer, where the
 * shingler leaves them (in the caches; with -e, after KB kilobytes were
 * written elsewhere, as the stages before the sketch would have: -e 512
 * comes nearer the Lua API's figures). It prints the median CPU time of a
 * pass less the median of a pass of the copies alone, in cycles per input
 * byte and per shingle (cycles at the clock a dependent chain of additions
 * runs at, or -g), and a digest of every sketch, which must equal the
 * portable level's (computed in the run; it stops if not). Documents the
 * shingler rejects are left out. -c 0, 1 or 2 times one size class alone
 * (for profiles). bench/run_select.sh builds and runs it. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "canon.h"
#include "simd.h"
#include "shingler.h"
#include "sketch.h"

#include "lib/kernel.h"
#define NCLASS 3
static const char *const class_name[NCLASS] = { "< 8 KB", "8-400 KB", "> 400 KB" };

typedef struct doc {
    uint64_t *fps;
    size_t n, tokens, bytes;
} doc;

typedef struct set {
    doc *d[NCLASS];
    size_t nd[NCLASS], cap[NCLASS];
    double bytes[NCLASS], shingles[NCLASS];
} set;

static void die(const char *m)
{
    fprintf(stderr, "select_bench: %s\n", m);
    exit(1);
}

static int class_of(size_t bytes)
{
    return bytes < 8192 ? 0 : bytes <= 400 * 1024 ? 1 : 2;
}

static void load(set *st, const char *dir, const sh_shingler *sh)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    sh_work w;
    size_t cap = 1 << 20;
    char *buf = (char *)malloc(cap), path[8192];
    if (!d || !buf) die("cannot open the corpus");
    memset(&w, 0, sizeof w);
    memset(st, 0, sizeof *st);
    while ((e = readdir(d)) != NULL) {
        FILE *f;
        size_t n = 0, got;
        sh_error err;
        int c;
        doc *dd;
        if (e->d_name[0] == '.') continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (!(f = fopen(path, "rb"))) continue;
        for (;;) {
            if (n == cap && !(buf = (char *)realloc(buf, cap *= 2))) die("out of memory");
            got = fread(buf + n, 1, cap - n, f);
            if (got == 0) break;
            n += got;
        }
        fclose(f);
        if (sh_shingle_text(sh, &w, buf, n, &err) != SH_OK) continue;
        c = class_of(n);
        if (st->nd[c] == st->cap[c]) {
            st->cap[c] = st->cap[c] ? 2 * st->cap[c] : 1024;
            if (!(st->d[c] = (doc *)realloc(st->d[c], st->cap[c] * sizeof(doc)))) die("out of memory");
        }
        dd = &st->d[c][st->nd[c]++];
        dd->n = w.n_fps;
        dd->tokens = sh_work_tokens(&w);
        dd->bytes = n;
        if (!(dd->fps = (uint64_t *)malloc(dd->n * sizeof(uint64_t) + 64))) die("out of memory");
        memcpy(dd->fps, w.fps, dd->n * sizeof(uint64_t));
        st->bytes[c] += (double)n;
        st->shingles[c] += (double)dd->n;
    }
    closedir(d);
    free(buf);
    sh_work_free(&w);
}

/* One pass over the documents of class c: each document's fingerprints are
 * copied to the work's own buffer, as sh_shingle_text would have left them
 * there (in the caches, for all but large documents), then with build 1 or 2
 * sh_sketch_build makes its sketch, whose digest (build 2) is folded into *dig.
 * Returns the CPU seconds of the pass. */
static unsigned char *evict_buf;
static size_t evict_len;

static double pass(const sh_shingler *sh, sh_work *w, const sh_sketch_params *p, const set *st, int c, uint64_t *dig,
                   int build)
{
    size_t i, j;
    double c0 = cpu_now();
    for (i = 0; i < st->nd[c]; i++) {
        sh_sketch *sk;
        sh_error err;
        uint64_t h = *dig;
        const doc *d = &st->d[c][i];
        if (evict_len) memset(evict_buf, (int)i, evict_len);
        if (d->n > w->cap_fps) {
            free(w->fps);
            if (!(w->fps = (uint64_t *)malloc(d->n * sizeof(uint64_t) + 64))) die("out of memory");
            w->cap_fps = d->n;
        }
        memcpy(w->fps, d->fps, d->n * sizeof(uint64_t));
        w->n_fps = d->n;
        if (!build) continue;
        if (sh_sketch_build(sh, w, p, 0, d->tokens, &sk, &err) != SH_OK) die(err.msg);
        if (build == 1) {
            free(sk);
            continue;
        }
        for (j = 0; j < sk->n; j++) h = h * 31 + sk->v[j];
        *dig = h + sk->n_shingles;
        free(sk);
    }
    return cpu_now() - c0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    int reps = 9, opt, si, ki, c, r, oc = -1;
    const char *kinds = "both", *only = NULL;
    double ghz = 0;
    static const char *const set_name[2] = { "text", "html" };
    while ((opt = getopt(argc, argv, "r:k:s:g:c:e:")) != -1) {
        if (opt == 'r') reps = atoi(optarg);
        else if (opt == 'k') kinds = optarg;
        else if (opt == 's') only = optarg;
        else if (opt == 'g') ghz = atof(optarg);
        else if (opt == 'c') oc = atoi(optarg);
        else if (opt == 'e') {
            evict_len = (size_t)atol(optarg) * 1024;
            if (!(evict_buf = (unsigned char *)malloc(evict_len + 1))) die("out of memory");
        }
        else die("usage: select_bench [-r REPS] [-k min|mod|both] [-s text|html] [-g GHZ] [-c CLASS] [-e KB] CORPUS");
    }
    if (optind != argc - 1 || reps < 1 || reps > 99) die("usage: select_bench [-r REPS] [-k min|mod|both] [-s text|html] [-g GHZ] CORPUS");
    if (ghz <= 0) ghz = clock_ghz();
    printf("clock %.2f GHz, %d passes, medians of CPU time less the copies; cycles per input byte and per shingle\n", ghz, reps);
    for (si = 0; si < 2; si++) {
        sh_shingler sh, port;
        sh_work w;
        set st;
        char dir[4096];
        if (only && strcmp(only, set_name[si]) != 0) continue;
        snprintf(dir, sizeof dir, "%s/%s", argv[optind], set_name[si]);
        make_shingler(&sh, si, SH_SIMD_AUTO);
        make_shingler(&port, si, SH_SIMD_PORTABLE);
        load(&st, dir, &sh);
        memset(&w, 0, sizeof w);
        for (ki = 0; ki < 2; ki++) {
            sh_sketch_params p;
            uint64_t dig = 0;
            double tb = 0, tc = 0, ts = 0;
            if (strcmp(kinds, "both") != 0 && strcmp(kinds, ki ? "mod" : "min") != 0) continue;
            memset(&p, 0, sizeof p);
            if (ki == 0) { p.kind = SH_SKETCH_MIN; p.s = 200; }
            else { p.kind = SH_SKETCH_MOD; p.m = 25; }
            for (c = 0; c < NCLASS; c++) {
                double t[99], copy[99], med;
                uint64_t d0 = 0;
                if (!st.nd[c] || (oc >= 0 && c != oc)) continue;
                pass(&sh, &w, &p, &st, c, &d0, 2); /* warm-up, and the digest */
                dig ^= d0 * (uint64_t)(2 * c + 1);
                for (r = 0; r < reps; r++) {
                    uint64_t dd = 0;
                    t[r] = pass(&sh, &w, &p, &st, c, &dd, 1);
                    copy[r] = pass(&sh, &w, &p, &st, c, &dd, 0);
                }
                qsort(t, (size_t)reps, sizeof t[0], cmp_double);
                qsort(copy, (size_t)reps, sizeof copy[0], cmp_double);
                med = t[reps / 2] - copy[reps / 2];
                tb += st.bytes[c];
                ts += st.shingles[c];
                tc += med;
                printf("%s %s %-8s %6zu docs %8.1f MB %6.0f shingles/doc: %6.3f c/B %6.2f c/shingle (range %.2f-%.2f)\n",
                       set_name[si], ki ? "MOD_25 " : "MIN_200", class_name[c], st.nd[c], st.bytes[c] / 1e6,
                       st.shingles[c] / (double)st.nd[c], med * ghz * 1e9 / st.bytes[c], med * ghz * 1e9 / st.shingles[c],
                       (t[0] - copy[reps / 2]) * ghz * 1e9 / st.shingles[c],
                       (t[reps - 1] - copy[reps / 2]) * ghz * 1e9 / st.shingles[c]);
            }
            {
                /* the portable level's digest, folded the same way */
                uint64_t pd = 0;
                for (c = 0; c < NCLASS; c++) {
                    uint64_t d0 = 0;
                    if (!st.nd[c] || (oc >= 0 && c != oc)) continue;
                    pass(&port, &w, &p, &st, c, &d0, 2);
                    pd ^= d0 * (uint64_t)(2 * c + 1);
                }
                if (pd != dig) die("the digest differs from the portable level's");
            }
            printf("%s %s all      %6.3f c/B %6.2f c/shingle, digest %016llx (= portable)\n", set_name[si],
                   ki ? "MOD_25 " : "MIN_200", tc * ghz * 1e9 / tb, tc * ghz * 1e9 / ts, (unsigned long long)dig);
        }
        sh_work_free(&w);
        for (c = 0; c < NCLASS; c++) {
            size_t i;
            for (i = 0; i < st.nd[c]; i++) free(st.d[c][i].fps);
            free(st.d[c]);
        }
    }
    return 0;
}
