#include "clmul.h"

#if defined(__x86_64__) && defined(__GNUC__) && !defined(SH_NO_SIMD)
#define SH_X86_CLMUL 1
#include <immintrin.h>
#endif

void sh_clmul_init(sh_clmul *c, uint64_t p)
{
    /* long division of x^128 by x^64 + p: after the quotient's x^64 term the
     * remainder is x^64 * p; then one quotient bit per remainder bit 127..64 */
    uint64_t hi = p, lo = 0, q = 0;
    int j;
    for (j = 63; j >= 0; j--) {
        if ((hi >> j) & 1) {
            q |= (uint64_t)1 << j;
            hi ^= (uint64_t)1 << j;
            lo ^= p << j;
            if (j) hi ^= p >> (64 - j);
        }
    }
    (void)lo;
    c->p = p;
    c->mu = q;
}

#ifdef SH_X86_CLMUL
__attribute__((target("pclmul,sse2")))
static uint64_t mul_hw(const sh_clmul *c, uint64_t a, uint64_t b)
{
    __m128i prod = _mm_clmulepi64_si128(_mm_cvtsi64_si128((long long)a), _mm_cvtsi64_si128((long long)b), 0x00);
    uint64_t lo = (uint64_t)_mm_cvtsi128_si64(prod), hi = (uint64_t)_mm_cvtsi128_si64(_mm_srli_si128(prod, 8));
    __m128i t = _mm_clmulepi64_si128(_mm_cvtsi64_si128((long long)hi), _mm_cvtsi64_si128((long long)c->mu), 0x00);
    uint64_t q = hi ^ (uint64_t)_mm_cvtsi128_si64(_mm_srli_si128(t, 8));
    __m128i r = _mm_clmulepi64_si128(_mm_cvtsi64_si128((long long)q), _mm_cvtsi64_si128((long long)c->p), 0x00);
    return lo ^ (uint64_t)_mm_cvtsi128_si64(r);
}
#endif

/* Software carry-less product, for machines without the instruction. */
static void clmul_sw(uint64_t a, uint64_t b, uint64_t *hi, uint64_t *lo)
{
    uint64_t h = 0, l = 0;
    int i;
    for (i = 0; i < 64; i++)
        if ((b >> i) & 1) {
            l ^= a << i;
            if (i) h ^= a >> (64 - i);
        }
    *hi = h;
    *lo = l;
}

uint64_t sh_clmul_mul(const sh_clmul *c, uint64_t a, uint64_t b)
{
    uint64_t hi, lo, th, tl, rh, rl;
#ifdef SH_X86_CLMUL
    if (sh_clmul_available()) return mul_hw(c, a, b);
#endif
    clmul_sw(a, b, &hi, &lo);
    clmul_sw(hi, c->mu, &th, &tl);
    clmul_sw(hi ^ th, c->p, &rh, &rl);
    (void)tl;
    (void)rh;
    return lo ^ rl;
}

uint64_t sh_clmul_x64(const sh_clmul *c, uint64_t a)
{
    uint64_t th, tl, rh, rl;
    clmul_sw(a, c->mu, &th, &tl);
    clmul_sw(a ^ th, c->p, &rh, &rl);
    (void)tl;
    (void)rh;
    return rl;
}

int sh_clmul_available(void)
{
#ifdef SH_X86_CLMUL
    return __builtin_cpu_supports("pclmul") != 0;
#else
    return 0;
#endif
}
