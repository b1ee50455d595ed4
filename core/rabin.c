#include "rabin.h"

static uint64_t low_mask(int k)
{
    return k >= 64 ? ~(uint64_t)0 : (((uint64_t)1 << k) - 1);
}

/* a * x mod P */
static uint64_t mulx1(uint64_t a, uint64_t p, int k)
{
    uint64_t carry = (a >> (k - 1)) & 1;
    a = (a << 1) & low_mask(k);
    return carry ? a ^ p : a;
}

uint64_t sh_poly_mulmod(uint64_t a, uint64_t b, uint64_t p, int k)
{
    uint64_t r = 0;
    int i;
    for (i = 63; i >= 0; i--) {
        r = mulx1(r, p, k);
        if ((b >> i) & 1)
            r ^= a;
    }
    return r;
}

uint64_t sh_poly_xpow(uint64_t e, uint64_t p, int k)
{
    uint64_t result = 1, base = 2;
    if (k == 1) base = p & 1; /* x mod (x + p0) */
    while (e) {
        if (e & 1) result = sh_poly_mulmod(result, base, p, k);
        base = sh_poly_mulmod(base, base, p, k);
        e >>= 1;
    }
    return result;
}

static int degree(uint64_t a)
{
    int d = -1;
    while (a) { d++; a >>= 1; }
    return d;
}

/* a mod b for polynomials that fit in 64 bits, b != 0 */
static uint64_t pmod(uint64_t a, uint64_t b)
{
    int db = degree(b), da;
    while ((da = degree(a)) >= db)
        a ^= b << (da - db);
    return a;
}

/* Ben-Or 1981: P of degree k is irreducible iff gcd(P, x^(2^i) - x) = 1 for
 * i = 1..k/2. Each x^(2^i) is one squaring of the previous mod P. The first
 * gcd step reduces the (k+1)-bit P modulo g = h - x, which has degree < k. */
int sh_poly_irreducible(uint64_t p, int k)
{
    uint64_t h = (k == 1) ? (p & 1) : 2;
    int i;
    if (k < 1 || k > 64) return 0;
    p &= low_mask(k);
    if (k == 1) return 1;
    if ((p & 1) == 0) return 0; /* divisible by x */
    for (i = 1; i <= k / 2; i++) {
        uint64_t g, a, b;
        h = sh_poly_mulmod(h, h, p, k);
        g = h ^ 2;
        if (g == 0) return 0;      /* P divides x^(2^i) - x */
        if (g == 1) continue;
        /* a = P mod g = (x^k mod g) xor (p mod g) */
        a = 1;
        {
            int j;
            for (j = 0; j < k; j++) a = pmod(a << 1, g);
        }
        a ^= pmod(p, g);
        b = g;
        while (a) { uint64_t t = pmod(b, a); b = a; a = t; }
        if (b != 1) return 0;
    }
    return 1;
}

uint64_t sh_poly_random(uint64_t seed, int k)
{
    uint64_t state = seed, mask = low_mask(k);
    for (;;) {
        uint64_t p = (sh_splitmix_next(&state) & mask) | 1;
        if (sh_poly_irreducible(p, k))
            return p;
    }
}

void sh_rabin_init(sh_rabin *r, uint64_t p, int k)
{
    int b;
    r->k = k;
    r->mask = low_mask(k);
    r->p = p & r->mask;
    for (b = 0; b < 256; b++) {
        /* b * x^k mod P: shift b in one bit at a time through mulx1 */
        uint64_t v = 0;
        int i;
        for (i = 7; i >= 0; i--) {
            v = mulx1(v, r->p, k);
            if ((b >> i) & 1) v ^= 1;
        }
        for (i = 0; i < k; i++) v = mulx1(v, r->p, k);
        r->t[b] = v;
    }
}

uint64_t sh_rabin_extend(const sh_rabin *r, uint64_t f, const void *s, size_t n)
{
    const unsigned char *b = (const unsigned char *)s;
    const int shift = r->k - 8;
    const uint64_t mask = r->mask;
    size_t i;
    for (i = 0; i < n; i++)
        f = ((f << 8) & mask) ^ r->t[((f >> shift) ^ b[i]) & 0xff];
    return f;
}

uint64_t sh_rabin_aug(const sh_rabin *r, const void *s, size_t n)
{
    return sh_rabin_extend(r, 0, s, n);
}

uint64_t sh_rabin_aug1(const sh_rabin *r, const void *s, size_t n)
{
    static const unsigned char one = 1;
    return sh_rabin_extend(r, sh_rabin_aug(r, &one, 1), s, n);
}

/* RAW: f = f * x^8 + b mod P; the byte leaving the top is reduced by t[]. */
uint64_t sh_rabin_raw(const sh_rabin *r, const void *s, size_t n)
{
    const unsigned char *b = (const unsigned char *)s;
    const int shift = r->k - 8;
    size_t i;
    uint64_t f = 0;
    for (i = 0; i < n; i++)
        f = (((f << 8) & r->mask) | b[i]) ^ r->t[(f >> shift) & 0xff];
    return f;
}

/* t[j][.] is linear over GF(2) in its byte index, so only the 8 single-bit
 * entries x^(e + 8j + i) need computing; the rest are XORs of them. */
void sh_mulx_init(sh_mulx *m, const sh_rabin *r, uint64_t e)
{
    uint64_t xp = sh_poly_xpow(e, r->p, r->k);
    int j, i, b;
    for (j = 0; j < 8; j++) {
        m->t[j][0] = 0;
        for (i = 0; i < 8; i++) {
            m->t[j][1 << i] = xp;
            xp = mulx1(xp, r->p, r->k);
        }
        for (b = 1; b < 256; b++)
            m->t[j][b] = m->t[j][b & (b - 1)] ^ m->t[j][b & -b];
    }
}
