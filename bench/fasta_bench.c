/* What the FASTA extractor costs a base, stage by stage, in CPU time (a
 * micro-benchmark, not a test; docs/benchmarks.md, "Rule sets and
 * extractors"): 50 kbp generated DNA records, 70 bases a line, k = 21, as the
 * pool's workers take them — sh_fasta_features (parsing and k-mer ids),
 * sh_shingle_features, sh_doc_sketch (MOD_25 and the fingerprints).
 *   bash bench/run_micro.sh         (builds build/bench/fasta_bench, runs it)
 *   build/bench/fasta_bench [REPS]  (REPS records, 1001 by default)
 * Prints ns a base for each stage and a digest of the results (the same in
 * every build: compare a build of main with the same file). */
#include "fasta.h"
#include "document.h"
#include "sketch.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double cpu(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    const size_t nb = 50000;
    const int reps = argc > 1 ? atoi(argv[1]) : 1001;
    sh_shingler sh;
    sh_shingler_config c;
    sh_sketch_params sp;
    sh_fasta f;
    sh_error err;
    sh_work w;
    char *in = malloc(2 * nb);
    size_t n = 0, i;
    uint64_t st = 9, digest = 0;
    double te = 0, tf = 0, ts = 0;
    int r;
    memset(&c, 0, sizeof c);
    c.w = 10;
    c.k = 64;
    c.seed = 0x5348494E474CULL;
    if (!in || sh_shingler_init(&sh, &c, &err) != SH_OK || sh_fasta_init(&f, &sh, 21, &err) != SH_OK) {
        fprintf(stderr, "fasta_bench: %s\n", in ? err.msg : "out of memory");
        return 1;
    }
    n += (size_t)sprintf(in, ">r\n");
    for (i = 0; i < nb; i++) {
        in[n++] = "ACGT"[sh_splitmix_next(&st) & 3];
        if (i % 70 == 69) in[n++] = '\n';
    }
    in[n++] = '\n';
    memset(&w, 0, sizeof w);
    memset(&sp, 0, sizeof sp);
    sp.kind = SH_SKETCH_MOD;
    sp.m = 25;
    sp.seed = sh.c.seed;
    for (r = 0; r < reps; r++) {
        sh_doc_out o;
        double t0, t1, t2, t3;
        memset(&o, 0, sizeof o);
        t0 = cpu();
        if (sh_fasta_features(&f, in, n, &w, &err) != SH_OK) break;
        t1 = cpu();
        if (sh_shingle_features(&w, &err) != SH_OK) break;
        t2 = cpu();
        if (sh_doc_sketch(&sh, &w, &sp, 1, 0, 0, in, n, w.n_ids, &o, &err) != SH_OK) break;
        t3 = cpu();
        digest = digest * 31 + (o.canon_fp ^ o.raw_fp ^ o.set_fp ^ o.sketch->n);
        sh_doc_release(&o);
        te += t1 - t0;
        tf += t2 - t1;
        ts += t3 - t2;
    }
    if (r < reps) {
        fprintf(stderr, "fasta_bench: %s\n", err.msg);
        return 1;
    }
    printf("FASTA k = 21, %d records of %zu bases, level %s, CPU ns a base: k-mers %.3f, features %.3f, "
           "MOD_25 and fingerprints %.3f, total %.3f (digest %016llx)\n",
           reps, nb, sh_simd_name(sh.level), te / reps / (double)nb * 1e9, tf / reps / (double)nb * 1e9,
           ts / reps / (double)nb * 1e9, (te + tf + ts) / reps / (double)nb * 1e9, (unsigned long long)digest);
    sh_work_free(&w);
    free(in);
    return 0;
}
