/* Which instruction set the hot loops use: one level per shingler, chosen
 * at run time from what the processor has, what the build allows and what
 * the caller asks for.
 *
 * Every level computes the same results bit for bit: the portable level is
 * the reference (byte loops and table lookups), the others are its fast
 * paths, and the tests compare each of them with it (core/test/test_simd.c,
 * spec/simd_spec.lua). The levels only ever add instructions:
 *   portable  plain C
 *   sse2      16-byte blocks (the x86-64 baseline); PCLMULQDQ where present
 *   avx2      32-byte blocks, BMI1/2; PCLMULQDQ
 *   avx512    AVX-512 F, BW, VL, DQ, CD: token ids, the window (VPCLMULQDQ
 *             for four products per instruction) and the sketch's mixing
 *             eight lanes wide; the tokenizer's block scanner is AVX2's
 * A build configured with -DSHINGLE_SIMD=OFF (SH_NO_SIMD) compiles only the
 * portable code. The environment variable SHINGLE_SIMD (auto, portable, sse2,
 * avx2, avx512), read once per process, caps the level of every shingler:
 * a whole program can be run on the reference path without rebuilding. */
#ifndef SHINGLE_SIMD_H
#define SHINGLE_SIMD_H

#include "error.h"

typedef enum sh_simd {
    SH_SIMD_AUTO = 0,     /* the best level available (zero-initialised configurations) */
    SH_SIMD_PORTABLE = 1,
    SH_SIMD_SSE2 = 2,
    SH_SIMD_AVX2 = 3,
    SH_SIMD_AVX512 = 4
} sh_simd;

#define SH_SIMD_LEVELS 5

/* The best level this build and processor support, capped by SHINGLE_SIMD;
 * with a SHINGLE_SIMD that names no level, SH_SIMD_PORTABLE and *bad = 1
 * (bad may be NULL). */
sh_simd sh_simd_best(int *bad);

/* The level to use for a request: SH_SIMD_AUTO gives sh_simd_best(); any
 * other level is capped by it (asking for avx512 on a processor without it
 * gives the best it has). SH_EINVAL for a request out of range or a
 * SHINGLE_SIMD that names no level. */
sh_status sh_simd_resolve(sh_simd want, sh_simd *out, sh_error *err);

/* "auto", "portable", "sse2", "avx2", "avx512"; NULL past the end. */
const char *sh_simd_name(sh_simd level);

/* The level of a name as sh_simd_name gives it; -1 if none. */
int sh_simd_parse(const char *name);

/* 1 if the processor has the 64-bit carry-less multiply (PCLMULQDQ) and the
 * build may use it. */
int sh_simd_has_clmul(void);

#endif
