/* What the C benchmarks of the sketching kernel share (bench/sketch_bench.c,
 * bench/select_bench.c): the process's CPU clock, the processor's clock
 * measured by a dependent chain of additions, and the shingler both use (the
 * Lua API's defaults: w = 10, k = 64, Rabin token ids, option B). Included
 * by each benchmark, which defines die() before it. */
#ifndef SHINGLE_BENCH_KERNEL_H
#define SHINGLE_BENCH_KERNEL_H

#include <string.h>
#include <time.h>

#include "shingler.h"
#include "simd.h"

#define DEFAULT_SEED 0x5348494E474CULL /* lua/shingle/options.lua, "SHINGL" */

static void die(const char *what);

static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* The clock in GHz: a dependent chain of additions runs one a cycle. 0
 * where there is no way to write one (then no cycles are printed). */
static double clock_ghz(void)
{
#if defined(__GNUC__) && defined(__x86_64__)
    double best = 0;
    int r;
    for (r = 0; r < 5; r++) {
        unsigned long x = 0, i, n = 200000000UL;
        double c0 = cpu_now(), t;
        for (i = 0; i < n; i++) __asm__ volatile("add $1, %0" : "+r"(x));
        t = cpu_now() - c0;
        if (t > 0 && n / t / 1e9 > best) best = n / t / 1e9;
    }
    return best;
#else
    return 0;
#endif
}

/* The Lua API's default shingler, for text or HTML, at a SIMD level. */
static void make_shingler(sh_shingler *sh, int html, sh_simd level)
{
    sh_shingler_config cfg;
    sh_error err;
    memset(&cfg, 0, sizeof cfg);
    cfg.w = 10;
    cfg.k = 64;
    cfg.seed = DEFAULT_SEED;
    cfg.tokens = SH_TOKENS_RABIN;
    cfg.option = SH_OPTION_B;
    cfg.canon.flags = SH_CANON_DEFAULT_FLAGS | (html ? SH_CANON_HTML : 0);
    cfg.canon.invalid = SH_UTF8_ERROR;
    cfg.simd = level;
    if (sh_shingler_init(sh, &cfg, &err) != SH_OK) die(err.msg);
}

#endif
