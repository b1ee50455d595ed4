/* bench/canon_bench.c: tokenizer throughput on 50 MB of repeated English text
 * with the default flags (best of 5), the figure core/test/test_canon.c used
 * to print inside the tests (benchmarks are not tests). Run with
 *   bash bench/run_micro.sh
 * which builds it against build/5.4/libshingle_core.a and prints the machine. */
#include "canon.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(void)
{
    static const char para[] =
        "It was the best of times, it was the worst of times, it was the age of wisdom, "
        "it was the age of foolishness, it was the epoch of belief, it was the epoch of "
        "incredulity, it was the season of Light, it was the season of Darkness, it was "
        "the spring of hope, it was the winter of despair, we had everything before us, "
        "we had nothing before us, we were all going direct to Heaven, we were all going "
        "direct the other way; in short, the period was so far like the present period, "
        "that some of its noisiest authorities insisted on its being received, for good "
        "or for evil, in the superlative degree of comparison only. In 1775 there were\n";
    const size_t n = (size_t)50 << 20, m = sizeof para - 1;
    char *in = malloc(n);
    sh_canon_opts o = { SH_CANON_DEFAULT_FLAGS, SH_UTF8_ERROR, SH_SIMD_AUTO };
    sh_tokens t = { 0 };
    double best = 1e9;
    size_t w;
    int r;
    if (!in) {
        fprintf(stderr, "canon_bench: out of memory\n");
        return 1;
    }
    for (w = 0; w < n; w += m)
        memcpy(in + w, para, n - w < m ? n - w : m);
    for (r = 0; r < 5; r++) {
        double t0 = now_s(), sec;
        if (sh_canon_tokenize(&o, in, n, &t, NULL) != SH_OK) {
            fprintf(stderr, "canon_bench: tokenizing failed\n");
            return 1;
        }
        sec = now_s() - t0;
        if (sec < best)
            best = sec;
    }
    printf("tokenizer: 50 MB of English text at %.0f MB/s (%zu tokens, best of 5)\n",
           (double)n / (1 << 20) / best, t.n);
    sh_tokens_free(&t);
    free(in);
    return 0;
}
