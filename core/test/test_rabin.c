/* Known-answer vectors from docs/vectors.md (checked by three
 * independent implementations) and property tests of the fast paths. */
#include <stdlib.h>
#include "../rabin.h"
#include "test.h"

#define P64A 0x6b5d667075192889ULL
#define P64B 0xcaefbcde6b4238b1ULL
#define P40A 0x39ULL
#define P40B 0x048d90602fULL

static uint64_t aug(uint64_t p, int k, const char *s)
{
    sh_rabin r;
    sh_rabin_init(&r, p, k);
    return sh_rabin_aug(&r, s, strlen(s));
}

static void aug_vectors_match_the_reference(void)
{
    const char *in[] = { "", "a", "abc", "123456789", "hello world" };
    const uint64_t a64a[] = { 0, 0x09233514b4fdbbf0ULL, 0x8042cdb57afccc85ULL, 0x29145324914ea032ULL, 0xf67f0c43e95e3687ULL };
    const uint64_t a64b[] = { 0, 0x8886a05155fe5a69ULL, 0x71f61743249f4439ULL, 0xec49568991475ebeULL, 0xeaf5813961488a62ULL };
    const uint64_t a40a[] = { 0, 0x0000000959ULL, 0x0009501b2bULL, 0x90a55b6791ULL, 0xb4a70644a7ULL };
    const uint64_t a40b[] = { 0, 0xb2d6140e20ULL, 0xe62159f4bdULL, 0x8e543c035aULL, 0xd64f71d7a1ULL };
    int i;
    for (i = 0; i < 5; i++) {
        CHECK_EQ_U64(aug(P64A, 64, in[i]), a64a[i]);
        CHECK_EQ_U64(aug(P64B, 64, in[i]), a64b[i]);
        CHECK_EQ_U64(aug(P40A, 40, in[i]), a40a[i]);
        CHECK_EQ_U64(aug(P40B, 40, in[i]), a40b[i]);
    }
}

static void raw_aug1_and_tables_match_the_reference(void)
{
    sh_rabin r;
    sh_mulx u;
    sh_rabin_init(&r, P64B, 64);
    CHECK_EQ_U64(sh_rabin_raw(&r, "abc", 3), 0x616263);
    CHECK_EQ_U64(sh_rabin_raw(&r, "123456789", 9), 0xd9e806acc22b31e4ULL);
    CHECK_EQ_U64(sh_rabin_aug1(&r, "", 0), 0xcaefbcde6b4238b1ULL);
    CHECK_EQ_U64(sh_rabin_aug1(&r, "a", 1), 0x0af42b124b2378f7ULL);
    CHECK_EQ_U64(sh_rabin_aug1(&r, "abc", 3), 0xb911f5b277b236baULL);
    CHECK_EQ_U64(r.t[1], 0xcaefbcde6b4238b1ULL);
    CHECK_EQ_U64(r.t[0x80], 0x413945a18f6e914fULL);
    CHECK_EQ_U64(r.t[0xff], 0x3874ed74d37509e5ULL);
    /* U[1] for an 80-byte window is x^(8*80) * x^64 = x^704 mod P */
    CHECK_EQ_U64(sh_poly_xpow(704, P64B, 64), 0x1cc38aa8f7c4f82fULL);
    sh_mulx_init(&u, &r, 8 * 80 + 64);
    CHECK_EQ_U64(u.t[0][1], 0x1cc38aa8f7c4f82fULL);
}

/* The AUG loop is a CRC with init 0, no reflection, no final xor; with each
 * catalogue model's init and xorout it reproduces the catalogue's check values. */
static uint64_t crc_model(uint64_t poly, int k, uint64_t init, uint64_t xorout)
{
    sh_rabin r;
    uint64_t mask = k == 64 ? ~0ULL : ((1ULL << k) - 1);
    sh_rabin_init(&r, poly, k);
    /* the table loop's state is the CRC register: preset it to init */
    return (sh_rabin_extend(&r, init & mask, "123456789", 9) ^ xorout) & mask;
}

static void aug_reproduces_crc_catalogue_checks(void)
{
    CHECK_EQ_U64(crc_model(0x42f0e1eba9ea3693ULL, 64, 0, 0), 0x6c40df5f0b497347ULL);
    CHECK_EQ_U64(crc_model(0x42f0e1eba9ea3693ULL, 64, ~0ULL, ~0ULL), 0x62ec59e3f1a4f00aULL);
    CHECK_EQ_U64(crc_model(0x0004820009ULL, 40, 0, 0xffffffffffULL), 0xd4164fc646ULL);
}

static void ben_or_accepts_irreducible_and_rejects_reducible(void)
{
    CHECK(sh_poly_irreducible(P64A, 64));
    CHECK(sh_poly_irreducible(P64B, 64));
    CHECK(sh_poly_irreducible(P40A, 40));
    CHECK(sh_poly_irreducible(P40B, 40));
    CHECK(!sh_poly_irreducible(0x42f0e1eba9ea3693ULL, 64));
    CHECK(!sh_poly_irreducible(0x0004820009ULL, 40));
    CHECK(!sh_poly_irreducible(0x1bULL ^ 1, 64)); /* even constant term: divisible by x */
    /* small degrees against the known counts of irreducible polynomials:
     * degree 8 has 30, degree 10 has 99, degree 16 has 4080 */
    {
        int n8 = 0, n10 = 0, n16 = 0;
        uint64_t p;
        for (p = 0; p < 256; p++) n8 += sh_poly_irreducible(p, 8);
        for (p = 0; p < 1024; p++) n10 += sh_poly_irreducible(p, 10);
        for (p = 0; p < 65536; p++) n16 += sh_poly_irreducible(p, 16);
        CHECK(n8 == 30);
        CHECK(n10 == 99);
        CHECK(n16 == 4080);
    }
}

/* Slow obvious irreducibility test for degree <= 16: trial division by every
 * polynomial of degree 1..k/2. */
static int trial_irreducible(uint64_t p, int k)
{
    uint64_t full = (1ULL << k) | p, d;
    for (d = 2; d < (1ULL << (k / 2 + 1)); d++) {
        uint64_t a = full;
        int dd = 63 - __builtin_clzll(d), da;
        while (a && (da = 63 - __builtin_clzll(a)) >= dd) a ^= d << (da - dd);
        if (a == 0) return 0;
    }
    return 1;
}

static void ben_or_agrees_with_trial_division(void)
{
    uint64_t p, disagree = 0;
    int k;
    for (k = 2; k <= 14; k++)
        for (p = 0; p < (1ULL << k); p++)
            disagree += sh_poly_irreducible(p, k) != trial_irreducible(p, k);
    CHECK_EQ_U64(disagree, 0);
}

static void random_polynomials_are_deterministic_and_irreducible(void)
{
    uint64_t a = sh_poly_random(42, 64), b = sh_poly_random(42, 64), c = sh_poly_random(43, 64);
    uint64_t d = sh_poly_random(42, 40);
    CHECK(a == b);
    CHECK(a != c);
    CHECK(sh_poly_irreducible(a, 64));
    CHECK(sh_poly_irreducible(c, 64));
    CHECK(sh_poly_irreducible(d, 40));
    CHECK(d < (1ULL << 40));
    CHECK((a & 1) == 1);
}

static void mix_is_splitmix64(void)
{
    uint64_t st = 0;
    CHECK_EQ_U64(sh_mix(0), 0xe220a8397b1dcdafULL);
    CHECK_EQ_U64(sh_splitmix_next(&st), 0xe220a8397b1dcdafULL);
    CHECK_EQ_U64(sh_splitmix_next(&st), 0x6e789e6aa1b965f4ULL);
}

/* v * x^e through the 8-lookup table equals the bitwise product */
static void mulx_tables_equal_slow_multiplication(void)
{
    int kk[] = { 64, 40, 16 };
    int t, i;
    uint64_t st = 7;
    for (t = 0; t < 3; t++) {
        int k = kk[t];
        sh_rabin r;
        sh_mulx m;
        uint64_t p = sh_poly_random(99 + t, k), e = 64 * 10 + k;
        sh_rabin_init(&r, p, k);
        sh_mulx_init(&m, &r, e);
        for (i = 0; i < 200; i++) {
            uint64_t v = sh_splitmix_next(&st);
            unsigned char be[8];
            int j;
            for (j = 0; j < 8; j++) be[j] = (unsigned char)(v >> (56 - 8 * j));
            /* v * x^e = RAW(v) * x^e; RAW of the 8 bytes reduces v mod P */
            CHECK_EQ_U64(sh_mulx_apply(&m, v),
                         sh_poly_mulmod(sh_rabin_raw(&r, be, 8), sh_poly_xpow(e, p, k), p, k));
        }
    }
}

int main(void)
{
    RUN(aug_vectors_match_the_reference);
    RUN(raw_aug1_and_tables_match_the_reference);
    RUN(aug_reproduces_crc_catalogue_checks);
    RUN(ben_or_accepts_irreducible_and_rejects_reducible);
    RUN(ben_or_agrees_with_trial_division);
    RUN(random_polynomials_are_deterministic_and_irreducible);
    RUN(mix_is_splitmix64);
    RUN(mulx_tables_equal_slow_multiplication);
    return TEST_END();
}
