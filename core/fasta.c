/* FASTA k-mers: see fasta.h. */
#include "fasta.h"

#include "byteorder.h"

#include <stdlib.h>
#include <string.h>

sh_status sh_fasta_init(sh_fasta *f, const sh_shingler *sh, unsigned k, sh_error *err)
{
    const uint64_t p = sh->c.idpoly;
    uint64_t xout, xpre, xinv;
    unsigned b;
    if (k < 1 || k > SH_FASTA_MAX_K)
        return sh_error_set(err, SH_EINVAL, 0, "the FASTA extractor's k is %u; use a whole number from 1 to %d", k,
                            SH_FASTA_MAX_K);
    f->sh = sh;
    f->k = k;
    xout = sh_poly_xpow(8u * (uint64_t)k + 64u, p, 64);
    xpre = sh_poly_xpow(8u * (uint64_t)k + 56u, p, 64);
    xinv = sh_poly_xpow(UINT64_MAX - 8u, p, 64); /* x^-8: x^(2^64 - 1) = 1 in GF(2^64) */
    for (b = 0; b < 256; b++) {
        f->out[b] = sh_poly_mulmod(b, xout, p, 64);
        f->pre[b] = sh_poly_mulmod(b, xpre, p, 64);
        f->inv[b] = sh_poly_mulmod(b, xinv, p, 64);
    }
    return SH_OK;
}

static const unsigned char complement[256] = { ['A'] = 'T', ['C'] = 'G', ['G'] = 'C', ['T'] = 'A', ['N'] = 'N' };
static const unsigned char code[256] = { ['A'] = 0, ['C'] = 1, ['G'] = 2, ['N'] = 3, ['T'] = 4 };
/* 1 + the 2-bit code of a DNA base (k <= 32), 5 for N, 0 for a byte that
 * makes the sequence a protein's */
static const unsigned char base2[256] = { ['A'] = 1, ['C'] = 2, ['G'] = 3, ['T'] = 4, ['N'] = 5 };
#define NOT_DNA ((size_t)-1)

/* A rolling state: the k-mer's fingerprint, its reverse complement's, and
 * for choosing between them (k <= 21) their 3-bit codes. */
typedef struct roll {
    uint64_t fw, rc, kf, kr;
} roll;

/* The state of the k-mer at s (its reverse complement and codes with dna). */
static void roll_start(const sh_fasta *f, const unsigned char *s, int dna, roll *r)
{
    const uint64_t *t8 = f->sh->id.t;
    const size_t k = f->k;
    size_t j;
    r->fw = sh_token_id(f->sh, s, k);
    r->rc = r->kf = r->kr = 0;
    if (!dna) return;
    /* the reverse complement from scratch, byte by byte */
    for (j = k; j-- > 0;) r->rc = (r->rc << 8) ^ t8[r->rc >> 56] ^ t8[complement[s[j]]];
    for (j = 0; j < k && k <= 21; j++) {
        r->kf = (r->kf << 3) | code[s[j]];
        r->kr |= (uint64_t)code[complement[s[j]]] << (3 * j);
    }
}

/* The id of the k-mer at s whose state r is, by comparing its bytes with
 * its reverse complement's where k > 21: they mostly differ in the first. */
static uint64_t pick(const sh_fasta *f, const unsigned char *s, int dna, const roll *r)
{
    const size_t k = f->k;
    size_t j;
    int c = 0;
    if (!dna) return r->fw;
    if (k <= 21) return r->kr < r->kf ? r->rc : r->fw;
    for (j = 0; j < k && c == 0; j++) c = (int)s[j] - (int)complement[s[k - 1 - j]];
    return c > 0 ? r->rc : r->fw;
}

/* From the k-mer at s to the one after it (s[k] comes in, s[0] goes out). */
static inline void roll_next(const sh_fasta *f, const unsigned char *s, int dna, const uint64_t mask, roll *r)
{
    const uint64_t *t8 = f->sh->id.t;
    const unsigned char in = s[f->k], out = s[0];
    r->fw = (r->fw << 8) ^ t8[r->fw >> 56] ^ t8[in] ^ f->out[out];
    if (dna) {
        const uint64_t g = r->rc ^ t8[complement[out]];
        r->rc = (g >> 8) ^ f->inv[g & 0xff] ^ f->pre[complement[in]];
        if (f->k > 21) return; /* pick() compares bytes: no codes */
        r->kf = ((r->kf << 3) | code[in]) & mask;
        r->kr = (r->kr >> 3) | ((uint64_t)code[complement[in]] << (3 * (f->k - 1)));
    }
}

/* The ids of the k-mers of one sequence s[0..n) to ids (n - k + 1 of them):
 * proteins, and DNA with k > 32 (kmers2 takes the rest). */
static void kmers(const sh_fasta *f, const unsigned char *s, size_t n, int dna, uint64_t *ids)
{
    const size_t k = f->k, m = n - k + 1;
    const uint64_t mask = k >= 21 ? ~(uint64_t)0 >> 1 : ((uint64_t)1 << (3 * k)) - 1;
    roll r;
    size_t i;
    roll_start(f, s, dna, &r);
    for (i = 0;; i++) {
        ids[i] = pick(f, s + i, dna, &r);
        if (i + 1 == m) break;
        roll_next(f, s + i, dna, mask, &r);
    }
}

/* DNA k-mers with k <= 32 (version 2 of the extractor, fasta.h): each base
 * as 2 bits (A 0, C 1, G 2, T 3), the k-mer's code fw (first base highest)
 * and its reverse complement's rc rolled in one shift and one or each; the
 * smaller is the canonical k-mer (the order of the codes is the byte order
 * of the letters), and its id is sh_token_id of its packed bytes, which for
 * at most 8 bytes is T * x^64 mod P_id, T their big-endian value: one
 * carry-less multiply and a Barrett reduction, or eight table lookups.
 * A k-mer with an N in it has no id. Returns the ids written, or NOT_DNA
 * at a byte that is not a base (a protein: the caller starts again).
 *
 * With the carry-less multiply it takes two passes: the canonical codes
 * first (codes2: the rolling is all there is to that loop), then their ids
 * in place, two (or eight) at a time; the ids do not wait on each other, so
 * the multiplier is kept busy, where one loop made it wait on the rolling. */

#if defined(__x86_64__) && defined(__GNUC__) && !defined(SH_NO_SIMD)
#include <immintrin.h>
#define FA_HW 1

/* The canonical codes of the k-mers of s[0..n) that have no N, to ids in
 * order; their count, or NOT_DNA. Inlined into each instruction set's caller. */
static inline __attribute__((always_inline)) size_t codes2(unsigned k, const unsigned char *s, size_t n, uint64_t *ids)
{
    const unsigned shift = 2 * (k - 1);
    const uint64_t mask = k == 32 ? ~(uint64_t)0 : ((uint64_t)1 << (2 * k)) - 1;
    const uint64_t rcin[4] = { (uint64_t)3 << shift, (uint64_t)2 << shift, (uint64_t)1 << shift, 0 };
    uint64_t fw = 0, rc = 0;
    size_t i, run = 0, nid = 0;
#define C2_STEP(C, J) do { \
            fw = fw * 4 + (C); /* the bits above the k-mer's are cut below */ \
            rc = (rc >> 2) | rcin[C]; \
            a = fw & mask; \
            ids[nid + (J)] = a < rc ? a : rc; \
        } while (0)
    for (i = 0; i < n;) {
        uint64_t a;
        if (i + 4 <= n && run >= k) {
            /* four bases, all A, C, G or T, each ending a k-mer: no branch
             * or count per base */
            const unsigned c0 = base2[s[i]] - 1u, c1 = base2[s[i + 1]] - 1u, c2 = base2[s[i + 2]] - 1u,
                           c3 = base2[s[i + 3]] - 1u;
            if ((c0 | c1 | c2 | c3) <= 3) {
                C2_STEP(c0, 0);
                C2_STEP(c1, 1);
                C2_STEP(c2, 2);
                C2_STEP(c3, 3);
                nid += 4;
                i += 4;
                continue;
            }
        }
        {
            const unsigned c = base2[s[i++]] - 1u;
            if (c > 3) {
                if (c != 4) return NOT_DNA;
                run = 0; /* N */
                continue;
            }
            C2_STEP(c, 0);
            nid += ++run >= k;
        }
    }
#undef C2_STEP
    return nid;
}

/* ids[i] = (ids[i] << pad) * x^64 mod P_id (Barrett, clmul.h), in place, two
 * at a time (a 128-bit register's two halves, one multiply each). */
__attribute__((target("pclmul,sse2")))
static void ids2_hw(const sh_fasta *f, uint64_t *ids, size_t n, unsigned pad)
{
    const __m128i mu = _mm_set1_epi64x((long long)f->sh->cid.mu), p = _mm_set1_epi64x((long long)f->sh->cid.p);
    size_t i;
    for (i = 0; i + 2 <= n; i += 2) {
        const __m128i x = _mm_slli_epi64(_mm_loadu_si128((const __m128i *)(const void *)&ids[i]), (int)pad);
        const __m128i h = _mm_unpackhi_epi64(_mm_clmulepi64_si128(x, mu, 0x00), _mm_clmulepi64_si128(x, mu, 0x01));
        const __m128i a = _mm_xor_si128(x, h);
        _mm_storeu_si128((__m128i *)(void *)&ids[i],
                         _mm_unpacklo_epi64(_mm_clmulepi64_si128(a, p, 0x00), _mm_clmulepi64_si128(a, p, 0x01)));
    }
    for (; i < n; i++) {
        __m128i a = _mm_cvtsi64_si128((long long)(ids[i] << pad));
        a = _mm_xor_si128(a, _mm_srli_si128(_mm_clmulepi64_si128(a, mu, 0x00), 8));
        ids[i] = (uint64_t)_mm_cvtsi128_si64(_mm_clmulepi64_si128(a, p, 0x00));
    }
}

__attribute__((target("pclmul,sse2")))
static size_t kmers2_hw(const sh_fasta *f, const unsigned char *s, size_t n, uint64_t *ids)
{
    const unsigned k = f->k, pad = 8 * ((k + 3) / 4) - 2 * k;
    const size_t nid = codes2(k, s, n, ids);
    if (nid != NOT_DNA) ids2_hw(f, ids, nid, pad);
    return nid;
}

/* kmers2 at the AVX2 level for k <= 29 (kmers2_avx2): the sequence is
 * packed first, 2 bits a base (the first base of a byte in its high bits)
 * into pk, 32 bases at a time (a byte shuffle for the codes, two
 * multiply-adds to pack them); then the k-mer starting at base j is
 * (be64(pk + j / 4) << 2 (j % 4)) >> (64 - 2k), so four k-mers in a row
 * share one load and take a shift each, and the reverse complement is the
 * bits reversed two by two (bytes, then crumbs within bytes by two
 * nibble shuffles, the complement folded into their tables). The ids are
 * taken in the same loop, so that the carry-less multiplies, which bound
 * it, overlap the rest. Runs of N are cut out (memchr), k-mers at the ends
 * of a run taken one at a time. FA_K_AVX2: the largest k (a k-mer at
 * j % 4 = 3 must fit in the 64 bits loaded). */
#define FA_K_AVX2 29
#define FY __attribute__((target("avx2,pclmul")))

/* The reverse complement of a k-mer's code, one at a time. */
static inline uint64_t revcomp2(uint64_t x, unsigned k)
{
    x = __builtin_bswap64(~x);
    x = ((x >> 4) & 0x0f0f0f0f0f0f0f0fULL) | ((x & 0x0f0f0f0f0f0f0f0fULL) << 4);
    x = ((x >> 2) & 0x3333333333333333ULL) | ((x & 0x3333333333333333ULL) << 2);
    return x >> (64 - 2 * k);
}

/* Pack s[0..n) into pk (2 bits a base, N as 0, then 16 zero bytes); 1 if
 * there is an N, 0 if not, -1 at a byte that is not a base. */
FY static int pack2_avx2(const unsigned char *s, size_t n, unsigned char *pk)
{
    const __m256i expect = _mm256_setr_epi8(-128, 'A', -128, 'C', 'T', -128, -128, 'G', -128, -128, -128, -128, -128, -128,
                                            -128, -128, -128, 'A', -128, 'C', 'T', -128, -128, 'G', -128, -128, -128,
                                            -128, -128, -128, -128, -128);
    const __m256i codes = _mm256_setr_epi8(0, 0, 0, 1, 3, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 3, 0, 0, 2, 0, 0, 0,
                                          0, 0, 0, 0, 0);
    const __m256i weights = _mm256_set1_epi32(0x01041040), ones = _mm256_set1_epi16(1), nb = _mm256_set1_epi8('N');
    const __m256i pick = _mm256_setr_epi8(0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, 0, 4, 8, 12, -1, -1,
                                          -1, -1, -1, -1, -1, -1, -1, -1, -1, -1);
    const __m256i lanes = _mm256_setr_epi32(0, 4, 1, 1, 1, 1, 1, 1);
    size_t i;
    int has_n = 0;
    for (i = 0; i + 32 <= n; i += 32) {
        const __m256i v = _mm256_loadu_si256((const __m256i *)(const void *)(s + i));
        const unsigned ok = (unsigned)_mm256_movemask_epi8(_mm256_cmpeq_epi8(v, _mm256_shuffle_epi8(expect, v)));
        __m256i x;
        if (ok != 0xffffffffu) {
            const unsigned isn = (unsigned)_mm256_movemask_epi8(_mm256_cmpeq_epi8(v, nb));
            if ((ok | isn) != 0xffffffffu) return -1;
            has_n = 1;
        }
        /* N's low nibble (0xe) gives code 0 */
        x = _mm256_madd_epi16(_mm256_maddubs_epi16(_mm256_shuffle_epi8(codes, v), weights), ones);
        x = _mm256_permutevar8x32_epi32(_mm256_shuffle_epi8(x, pick), lanes);
        _mm_storel_epi64((__m128i *)(void *)(pk + i / 4), _mm256_castsi256_si128(x));
    }
    for (; i < n; i += 4) {
        unsigned b = 0, j;
        for (j = 0; j < 4; j++) {
            unsigned c = 0;
            if (i + j < n) {
                c = base2[s[i + j]] - 1u;
                if (c > 3) {
                    if (c != 4) return -1;
                    has_n = 1;
                    c = 0;
                }
            }
            b = b << 2 | c;
        }
        pk[i / 4] = (unsigned char)b;
    }
    memset(pk + (n + 3) / 4, 0, 16);
    return has_n;
}

/* The id of one canonical code (T = code << pad; T * x^64 mod P_id). */
FY static inline uint64_t id1_avx2(uint64_t t, __m128i mu, __m128i p)
{
    __m128i a = _mm_cvtsi64_si128((long long)t);
    a = _mm_xor_si128(a, _mm_srli_si128(_mm_clmulepi64_si128(a, mu, 0x00), 8));
    return (uint64_t)_mm_cvtsi128_si64(_mm_clmulepi64_si128(a, p, 0x00));
}

/* The ids of the k-mers starting at a..e (inclusive) of the packed
 * sequence pk, to ids; the count. */
FY static size_t run2_avx2(const unsigned char *pk, size_t a, size_t e, unsigned k, unsigned pad, __m128i mu, __m128i p,
                           uint64_t *ids)
{
    const __m256i shifts = _mm256_setr_epi64x(0, 2, 4, 6);
    const __m128i down = _mm_cvtsi32_si128((int)(64 - 2 * k)), up = _mm_cvtsi32_si128((int)pad);
    const __m256i bswap = _mm256_setr_epi8(7, 6, 5, 4, 3, 2, 1, 0, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0, 15,
                                           14, 13, 12, 11, 10, 9, 8);
    /* a nibble's two crumbs complemented and swapped, to the high or the low nibble */
    const __m256i rlo = _mm256_setr_epi8(-16, -80, 112, 48, -32, -96, 96, 32, -48, -112, 80, 16, -64, -128, 64, 0, -16, -80,
                                         112, 48, -32, -96, 96, 32, -48, -112, 80, 16, -64, -128, 64, 0);
    const __m256i rhi = _mm256_setr_epi8(15, 11, 7, 3, 14, 10, 6, 2, 13, 9, 5, 1, 12, 8, 4, 0, 15, 11, 7, 3, 14, 10, 6, 2, 13,
                                         9, 5, 1, 12, 8, 4, 0);
    const __m256i nib = _mm256_set1_epi8(0x0f);
    size_t j = a, nid = 0;
    for (; j <= e && (j & 3) != 0; j++) {
        const uint64_t fw = (sh_load_be64(pk + j / 4) << (2 * (j & 3))) >> (64 - 2 * k), rc = revcomp2(fw, k);
        ids[nid++] = id1_avx2((fw < rc ? fw : rc) << pad, mu, p);
    }
    for (; j + 3 <= e; j += 4) {
        const __m256i x = _mm256_set1_epi64x((long long)sh_load_be64(pk + j / 4));
        const __m256i fw = _mm256_srl_epi64(_mm256_sllv_epi64(x, shifts), down);
        const __m256i y = _mm256_shuffle_epi8(fw, bswap);
        const __m256i rc = _mm256_srl_epi64(
            _mm256_or_si256(_mm256_shuffle_epi8(rlo, _mm256_and_si256(y, nib)),
                            _mm256_shuffle_epi8(rhi, _mm256_and_si256(_mm256_srli_epi16(y, 4), nib))),
            down);
        /* codes below 2^58: the signed comparison is the unsigned one */
        const __m256i t = _mm256_sll_epi64(_mm256_blendv_epi8(fw, rc, _mm256_cmpgt_epi64(fw, rc)), up);
        const __m128i t0 = _mm256_castsi256_si128(t), t1 = _mm256_extracti128_si256(t, 1);
        const __m128i a0 = _mm_xor_si128(t0, _mm_unpackhi_epi64(_mm_clmulepi64_si128(t0, mu, 0x00),
                                                                 _mm_clmulepi64_si128(t0, mu, 0x01)));
        const __m128i a1 = _mm_xor_si128(t1, _mm_unpackhi_epi64(_mm_clmulepi64_si128(t1, mu, 0x00),
                                                                 _mm_clmulepi64_si128(t1, mu, 0x01)));
        _mm_storeu_si128((__m128i *)(void *)&ids[nid],
                         _mm_unpacklo_epi64(_mm_clmulepi64_si128(a0, p, 0x00), _mm_clmulepi64_si128(a0, p, 0x01)));
        _mm_storeu_si128((__m128i *)(void *)&ids[nid + 2],
                         _mm_unpacklo_epi64(_mm_clmulepi64_si128(a1, p, 0x00), _mm_clmulepi64_si128(a1, p, 0x01)));
        nid += 4;
    }
    for (; j <= e; j++) {
        const uint64_t fw = (sh_load_be64(pk + j / 4) << (2 * (j & 3))) >> (64 - 2 * k), rc = revcomp2(fw, k);
        ids[nid++] = id1_avx2((fw < rc ? fw : rc) << pad, mu, p);
    }
    return nid;
}

FY static size_t kmers2_avx2(const sh_fasta *f, const unsigned char *s, size_t n, uint64_t *ids, unsigned char *pk)
{
    const unsigned k = f->k, pad = 8 * ((k + 3) / 4) - 2 * k;
    const __m128i mu = _mm_set1_epi64x((long long)f->sh->cid.mu), p = _mm_set1_epi64x((long long)f->sh->cid.p);
    const int has_n = pack2_avx2(s, n, pk);
    size_t a = 0, nid = 0;
    if (has_n < 0) return NOT_DNA;
    if (!has_n) return n >= k ? run2_avx2(pk, 0, n - k, k, pad, mu, p, ids) : 0;
    while (a < n) {
        const unsigned char *z = memchr(s + a, 'N', n - a);
        const size_t b = z ? (size_t)(z - s) : n; /* the run [a, b) */
        if (b - a >= k) nid += run2_avx2(pk, a, b - k, k, pad, mu, p, ids + nid);
        a = b + 1;
    }
    return nid;
}
#undef FY

/* One sequence line from p[i] on, as sh_fasta_features' byte loop takes it
 * (white space dropped, lower-case letters raised, the rest as it is), 32
 * bytes at a time: the letters raised in the register, the bytes up to the
 * first one below 0x21 (white space, a control character, the line's end)
 * stored as they are. Appends to seq at *len; returns where the line ends
 * (its \n or \r, or n). seq has room for 32 bytes past what it gets. */
__attribute__((target("avx2,bmi")))
static size_t seq_line_avx2(const unsigned char *p, size_t i, size_t n, unsigned char *seq, size_t *len)
{
    const __m256i a1 = _mm256_set1_epi8('a'), z = _mm256_set1_epi8('z'), sp = _mm256_set1_epi8(0x20);
    size_t l = *len;
    for (;;) {
        unsigned char b;
        if (i + 32 <= n) {
            const __m256i v = _mm256_loadu_si256((const __m256i *)(const void *)(p + i));
            const __m256i lower = _mm256_and_si256(_mm256_cmpeq_epi8(_mm256_max_epu8(v, a1), v),
                                                   _mm256_cmpeq_epi8(_mm256_min_epu8(v, z), v));
            const unsigned low = (unsigned)_mm256_movemask_epi8(_mm256_cmpeq_epi8(_mm256_min_epu8(v, sp), v));
            _mm256_storeu_si256((__m256i *)(void *)(seq + l), _mm256_sub_epi8(v, _mm256_and_si256(lower, sp)));
            if (low == 0) {
                l += 32;
                i += 32;
                continue;
            }
            l += (size_t)__builtin_ctz(low);
            i += (size_t)__builtin_ctz(low);
        }
        if (i >= n) break;
        b = p[i];
        if (b == '\n' || b == '\r') break;
        if (!(b == ' ' || (b >= 9 && b <= 13))) seq[l++] = (unsigned char)(b >= 'a' && b <= 'z' ? b - 32 : b);
        i++;
    }
    *len = l;
    return i;
}

/* kmers2 at the AVX-512 level: the ids eight at a time, with four
 * carry-less multiplies (VPCLMULQDQ) per eight. */
#define FZ __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,vpclmulqdq,pclmul")))
FZ static size_t kmers2_zmm(const sh_fasta *f, const unsigned char *s, size_t n, uint64_t *ids)
{
    const unsigned k = f->k, pad = 8 * ((k + 3) / 4) - 2 * k;
    const __m512i mu = _mm512_set1_epi64((long long)f->sh->cid.mu), p = _mm512_set1_epi64((long long)f->sh->cid.p);
    const size_t nid = codes2(k, s, n, ids);
    size_t i;
    if (nid == NOT_DNA) return nid;
    /* T = code << pad, then T * x^64 mod P_id (Barrett, clmul.h), in place */
    for (i = 0; i + 8 <= nid; i += 8) {
        const __m512i x = _mm512_slli_epi64(_mm512_loadu_si512((const void *)&ids[i]), pad);
        const __m512i h = _mm512_unpackhi_epi64(_mm512_clmulepi64_epi128(x, mu, 0x00), _mm512_clmulepi64_epi128(x, mu, 0x01));
        const __m512i a = _mm512_xor_si512(x, h);
        _mm512_storeu_si512((void *)&ids[i],
                            _mm512_unpacklo_epi64(_mm512_clmulepi64_epi128(a, p, 0x00), _mm512_clmulepi64_epi128(a, p, 0x01)));
    }
    ids2_hw(f, ids + i, nid - i, pad);
    return nid;
}
#undef FZ
#endif

static size_t kmers2(const sh_fasta *f, const unsigned char *s, size_t n, uint64_t *ids, unsigned char *pk)
{
    const unsigned k = f->k, shift = 2 * (k - 1), pad = 8 * ((k + 3) / 4) - 2 * k;
    const uint64_t mask = k == 32 ? ~(uint64_t)0 : ((uint64_t)1 << (2 * k)) - 1;
    const sh_mulx *m = &f->sh->id64;
    uint64_t fw = 0, rc = 0;
    size_t i, run = 0, nid = 0;
#ifdef FA_HW
    if (f->sh->hw && f->sh->level >= SH_SIMD_AVX512) return kmers2_zmm(f, s, n, ids);
    if (f->sh->hw && f->sh->level == SH_SIMD_AVX2 && k <= FA_K_AVX2) return kmers2_avx2(f, s, n, ids, pk);
    if (f->sh->hw) return kmers2_hw(f, s, n, ids);
#endif
    (void)pk;
    for (i = 0; i < n; i++) {
        const unsigned c = base2[s[i]] - 1u;
        if (c > 3) {
            if (c != 4) return NOT_DNA;
            run = 0; /* N */
            continue;
        }
        fw = ((fw << 2) | c) & mask;
        rc = (rc >> 2) | ((uint64_t)(3 - c) << shift);
        ids[nid] = sh_mulx_apply(m, (fw < rc ? fw : rc) << pad);
        nid += ++run >= k;
    }
    return nid;
}

/* Drop the ids of DNA k-mers with an N in them (k > 32, version 2): ids[i]
 * is the k-mer at s + i, m of them; returns how many remain, in order. */
static size_t drop_n(const unsigned char *s, size_t m, size_t k, uint64_t *ids)
{
    size_t i, j, kept = 0, after = 0; /* after: the k-mers from here on have no N seen so far */
    for (j = 0; j + 1 < k; j++) if (s[j] == 'N') after = j + 1;
    for (i = 0; i < m; i++) {
        if (s[i + k - 1] == 'N') after = i + k;
        ids[kept] = ids[i];
        kept += i >= after;
    }
    return kept;
}

static int space(unsigned char b)
{
    return b == ' ' || (b >= 9 && b <= 13);
}

/* Whether the 8 bytes of v go to the sequence as they are: none below 0x21
 * (white space, control characters) and none a lower-case letter. The
 * borrow tricks of "hasless" and "hasbetween" (Anderson, Bit Twiddling
 * Hacks) answer for all eight at once, exactly. */
static int plain8(uint64_t v)
{
    const uint64_t ones = 0x0101010101010101ULL, high = 0x8080808080808080ULL, low7 = ones * 127;
    const uint64_t below = (v - ones * 0x21) & ~v & high;
    const uint64_t lower = (ones * (127 + 0x7b) - (v & low7)) & ~v & ((v & low7) + ones * (127 - 0x60)) & high;
    return (below | lower) == 0;
}

sh_status sh_fasta_features(const sh_fasta *f, const char *in, size_t n, sh_work *w, sh_error *err)
{
    const unsigned char *p = (const unsigned char *)in;
    size_t i = 0, line = 0, len = 0, r, records = 0, nid = 0;
    uint64_t *start;
    unsigned char *seq;
    /* the sequences, upper-cased, without white space, one after another
     * in w->bytes; record r's starts at start[r] (in w->vals), and there is
     * at most one record per two bytes of input; after them (n + 8 on)
     * room for one sequence packed 2 bits a base (kmers2_avx2) */
    if (w->cap_bytes < n + n / 4 + 64) {
        unsigned char *b = realloc(w->bytes, n + n / 4 + 64);
        if (!b) return sh_error_set(err, SH_ENOMEM, 0, "out of memory for a FASTA input of %zu bytes", n);
        w->bytes = b;
        w->cap_bytes = n + n / 4 + 64;
    }
    if (w->cap_vals < n / 2 + 2) {
        uint64_t *v = realloc(w->vals, (n / 2 + 2) * sizeof *v);
        if (!v) return sh_error_set(err, SH_ENOMEM, 0, "out of memory for a FASTA input of %zu bytes", n);
        w->vals = v;
        w->cap_vals = n / 2 + 2;
    }
    start = w->vals;
    seq = w->bytes;
    w->n_ids = 0;
    while (i < n) {
        /* the Lua extractor's lines are the runs of bytes between \r and \n */
        const unsigned char *nl, *cr;
        size_t e;
#ifdef FA_HW
        if (f->sh->level >= SH_SIMD_AVX2 && records > 0 && p[i] != '>' && p[i] != ';' && p[i] != '\n' && p[i] != '\r') {
            /* a sequence line (most of them), in one pass */
            line++;
            i = seq_line_avx2(p, i, n, seq, &len) + 1;
            continue;
        }
#endif
        nl = memchr(p + i, '\n', n - i);
        e = nl ? (size_t)(nl - p) : n;
        if ((cr = memchr(p + i, '\r', e - i)) != NULL) e = (size_t)(cr - p);
        if (e > i) {
            line++;
            if (p[i] == '>') {
                start[records++] = len;
            } else if (p[i] != ';') {
                size_t j = i;
                if (records == 0)
                    return sh_error_set(err, SH_EFORMAT, line, "line %zu: sequence data before the first '>' header: not FASTA",
                                        line);
                /* eight bytes at a time where none is white space, a control
                 * character or a lower-case letter (most sequence lines) */
                for (; e - j >= 8; j += 8) {
                    const uint64_t v = sh_load_le64(p + j);
                    if (!plain8(v))
                        break;
                    sh_store_le64(seq + len, v);
                    len += 8;
                }
                for (; j < e; j++)
                    if (!space(p[j]))
                        seq[len++] = (unsigned char)(p[j] >= 'a' && p[j] <= 'z' ? p[j] - 32 : p[j]);
            }
        }
        i = e + 1;
    }
    if (records == 0)
        return sh_error_set(err, SH_EFORMAT, 0, "no FASTA record (a line starting with '>')");
    start[records] = len;
    for (r = 0; r < records; r++) {
        const unsigned char *q = w->bytes + start[r];
        const size_t m = (size_t)(start[r + 1] - start[r]);
        size_t j;
        int dna = 1;
        /* (for k <= 32 kmers2 finds out as it goes) */
        for (j = 0; j < m && dna && f->k > 32; j++) dna = complement[q[j]] != 0;
        if (m >= f->k) {
            /* (kmers2 may store one id past the last it keeps) */
            if (sh_work_reserve_ids(w, nid + m - f->k + 2) != SH_OK)
                return sh_error_set(err, SH_ENOMEM, 0, "out of memory for %zu k-mers", nid + m - f->k + 1);
            const size_t got = dna && f->k <= 32 ? kmers2(f, q, m, w->ids + nid, w->bytes + n + 8) : NOT_DNA;
            if (got != NOT_DNA) {
                nid += got;
            } else {
                if (f->k <= 32) dna = 0;
                kmers(f, q, m, dna, w->ids + nid);
                nid += dna ? drop_n(q, m - f->k + 1, f->k, w->ids + nid) : m - f->k + 1;
            }
        }
    }
    w->n_ids = nid;
    return SH_OK;
}

sh_status sh_fasta_extract(void *fasta, const char *data, size_t len, const char *path, sh_work *w, int *features,
                           sh_error *err)
{
    (void)path;
    *features = 1;
    return sh_fasta_features((const sh_fasta *)fasta, data, len, w, err);
}
