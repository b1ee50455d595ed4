#include "simd.h"

#include <stdlib.h>
#include <string.h>

#if !defined(SH_NO_SIMD) && defined(__x86_64__) && defined(__GNUC__)
#define SH_SIMD_X86 1
#endif

static const char *const names[SH_SIMD_LEVELS] = { "auto", "portable", "sse2", "avx2", "avx512" };

const char *sh_simd_name(sh_simd level)
{
    return (unsigned)level < SH_SIMD_LEVELS ? names[level] : NULL;
}

int sh_simd_parse(const char *name)
{
    int i;
    for (i = 0; name && i < SH_SIMD_LEVELS; i++)
        if (strcmp(name, names[i]) == 0) return i;
    return -1;
}

static sh_simd cpu_level(void)
{
#ifdef SH_SIMD_X86
    /* libgcc's feature bits also check that the system saves the AVX and
     * AVX-512 registers (XCR0) */
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
        __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq") &&
        __builtin_cpu_supports("avx512cd") &&
        __builtin_cpu_supports("vpclmulqdq") && __builtin_cpu_supports("pclmul") &&
        __builtin_cpu_supports("bmi") && __builtin_cpu_supports("bmi2"))
        return SH_SIMD_AVX512;
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("bmi") && __builtin_cpu_supports("bmi2") &&
        __builtin_cpu_supports("pclmul"))
        return SH_SIMD_AVX2;
    return SH_SIMD_SSE2;
#else
    return SH_SIMD_PORTABLE;
#endif
}

/* The processor's level capped by SHINGLE_SIMD, found once: both are facts
 * of the process, so every thread computes the same value and a race only
 * stores it twice. Negative: SHINGLE_SIMD names no level. */
static int cached_best = 0;

sh_simd sh_simd_best(int *bad)
{
    int v = __atomic_load_n(&cached_best, __ATOMIC_RELAXED);
    if (v == 0) {
        const char *env = getenv("SHINGLE_SIMD");
        int cap = env && *env ? sh_simd_parse(env) : SH_SIMD_AUTO;
        v = (int)cpu_level();
        if (cap < 0) v = -SH_SIMD_PORTABLE;
        else if (cap != SH_SIMD_AUTO && cap < v) v = cap;
        __atomic_store_n(&cached_best, v, __ATOMIC_RELAXED);
    }
    if (bad) *bad = v < 0;
    return (sh_simd)(v < 0 ? -v : v);
}

sh_status sh_simd_resolve(sh_simd want, sh_simd *out, sh_error *err)
{
    int bad;
    sh_simd best = sh_simd_best(&bad);
    *out = SH_SIMD_PORTABLE;
    if (bad)
        return sh_error_set(err, SH_EINVAL, 0, "SHINGLE_SIMD=%s names no instruction set level; "
                            "use auto, portable, sse2, avx2 or avx512 (or unset it)", getenv("SHINGLE_SIMD"));
    if ((unsigned)want >= SH_SIMD_LEVELS)
        return sh_error_set(err, SH_EINVAL, 0, "SIMD level %d is out of range; use auto, portable, sse2, avx2 or avx512",
                            (int)want);
    *out = want == SH_SIMD_AUTO || want > best ? best : want;
    return SH_OK;
}

int sh_simd_has_clmul(void)
{
#ifdef SH_SIMD_X86
    return __builtin_cpu_supports("pclmul") != 0;
#else
    return 0;
#endif
}
