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

/* The canonical codes of the k-mers of s[0..n) (no N in them) to ids, in
 * order; the count, or NOT_DNA. Inlined into each instruction set's caller. */
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

#if defined(__x86_64__) && defined(__GNUC__) && !defined(SH_NO_SIMD)
#include <immintrin.h>
#define FA_HW 1
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

static size_t kmers2(const sh_fasta *f, const unsigned char *s, size_t n, uint64_t *ids)
{
    const unsigned k = f->k, shift = 2 * (k - 1), pad = 8 * ((k + 3) / 4) - 2 * k;
    const uint64_t mask = k == 32 ? ~(uint64_t)0 : ((uint64_t)1 << (2 * k)) - 1;
    const sh_mulx *m = &f->sh->id64;
    uint64_t fw = 0, rc = 0;
    size_t i, run = 0, nid = 0;
#ifdef FA_HW
    if (f->sh->hw && f->sh->level >= SH_SIMD_AVX512) return kmers2_zmm(f, s, n, ids);
    if (f->sh->hw) return kmers2_hw(f, s, n, ids);
#endif
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
     * at most one record per two bytes of input */
    if (w->cap_bytes < n + 1) {
        unsigned char *b = realloc(w->bytes, n + 1);
        if (!b) return sh_error_set(err, SH_ENOMEM, 0, "out of memory for a FASTA input of %zu bytes", n);
        w->bytes = b;
        w->cap_bytes = n + 1;
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
        const unsigned char *nl = memchr(p + i, '\n', n - i), *cr;
        size_t e = nl ? (size_t)(nl - p) : n;
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
            const size_t got = dna && f->k <= 32 ? kmers2(f, q, m, w->ids + nid) : NOT_DNA;
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
