/* |X n Y| of sorted sets: intersect.h. */
#include "intersect.h"

#if !defined(SH_NO_SIMD) && defined(__x86_64__) && defined(__GNUC__)
#define SH_INTERSECT_X86 1
#include <immintrin.h>
#endif

/* branch-free: which side steps depends on values no predictor knows */
static size_t portable(const uint64_t *a, size_t na, const uint64_t *b, size_t nb, size_t i, size_t j)
{
    size_t cab = 0;
    while (i < na && j < nb) {
        uint64_t x = a[i], y = b[j];
        cab += x == y;
        i += x <= y;
        j += y <= x;
    }
    return cab;
}

#ifdef SH_INTERSECT_X86
__attribute__((target("avx2,popcnt")))
static size_t avx2(const uint64_t *a, size_t na, const uint64_t *b, size_t nb)
{
    size_t i = 0, j = 0, cab = 0;
    /* each block of a meets each block of b whose range overlaps it exactly
     * once: the block whose largest value is smaller cannot hold a value of
     * any later block of the other set (both ascend), so it is passed; with
     * equal largest values both are */
    while (i + 4 <= na && j + 4 <= nb) {
        __m256i va = _mm256_loadu_si256((const __m256i *)(const void *)(a + i));
        __m256i vb = _mm256_loadu_si256((const __m256i *)(const void *)(b + j));
        __m256i m = _mm256_or_si256(
            _mm256_or_si256(_mm256_cmpeq_epi64(va, vb), _mm256_cmpeq_epi64(va, _mm256_permute4x64_epi64(vb, 0x39))),
            _mm256_or_si256(_mm256_cmpeq_epi64(va, _mm256_permute4x64_epi64(vb, 0x4e)),
                            _mm256_cmpeq_epi64(va, _mm256_permute4x64_epi64(vb, 0x93))));
        uint64_t xa = a[i + 3], xb = b[j + 3];
        /* values are distinct within a set: a lane of a matches at most one of b */
        cab += (size_t)__builtin_popcount((unsigned)_mm256_movemask_pd(_mm256_castsi256_pd(m)));
        i += (size_t)(xa <= xb) * 4;
        j += (size_t)(xb <= xa) * 4;
    }
    return cab + portable(a, na, b, nb, i, j);
}
#endif

size_t sh_intersect_count(const uint64_t *a, size_t na, const uint64_t *b, size_t nb, sh_simd level)
{
#ifdef SH_INTERSECT_X86
    sh_simd best = sh_simd_best(NULL);
    if (level == SH_SIMD_AUTO || level > best) level = best;
    if (level >= SH_SIMD_AVX2) return avx2(a, na, b, nb);
#else
    (void)level;
#endif
    return portable(a, na, b, nb, 0, 0);
}
