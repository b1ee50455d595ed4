#include "shingler.h"

#include "byteorder.h"
#include "grow.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) && defined(__GNUC__) && !defined(SH_NO_SIMD)
#define SH_X86_CLMUL 1
#include <immintrin.h>
#endif

#define SEED_P_ID 0x5bd1e9955bd1e995ULL /* separates the P_id stream from P's */

sh_status sh_shingler_init(sh_shingler *s, const sh_shingler_config *cfg, sh_error *err)
{
    sh_shingler_config c = *cfg;
    int i;
    if (c.w < 1 || c.w > 1024)
        return sh_error_set(err, SH_EINVAL, 0, "shingle width w = %d is out of range; use 1 to 1024 (the paper uses 10)", c.w);
    if (c.k < 16 || c.k > 64)
        return sh_error_set(err, SH_EINVAL, 0, "fingerprint degree k = %d is out of range; use 16 to 64 (64 by default, 40 as in the paper)", c.k);
    if (c.k < 64 && c.poly >> c.k)
        return sh_error_set(err, SH_EINVAL, 0, "polynomial 0x%llx has more than k = %d low bits; give only the low k bits (the x^k term is implied)",
                            (unsigned long long)c.poly, c.k);
    if (c.poly == 0)
        c.poly = sh_poly_random(c.seed, c.k);
    else if (!sh_poly_irreducible(c.poly, c.k))
        return sh_error_set(err, SH_EINVAL, 0, "polynomial 0x%llx of degree %d is not irreducible; pass poly = 0 to draw one from the seed",
                            (unsigned long long)c.poly, c.k);
    if (c.idpoly == 0)
        c.idpoly = sh_poly_random(c.seed ^ SEED_P_ID, 64);
    else if (!sh_poly_irreducible(c.idpoly, 64))
        return sh_error_set(err, SH_EINVAL, 0, "token-id polynomial 0x%llx is not irreducible of degree 64",
                            (unsigned long long)c.idpoly);
    if (c.tokens != SH_TOKENS_RABIN && c.tokens != SH_TOKENS_PAD8)
        return sh_error_set(err, SH_EINVAL, 0, "unknown token mode %d; use rabin or pad8", (int)c.tokens);
    if (c.option != SH_OPTION_A && c.option != SH_OPTION_B)
        return sh_error_set(err, SH_EINVAL, 0, "unknown option %d; use A (labelled bag) or B (set)", (int)c.option);
    if (sh_simd_resolve(c.simd, &s->level, err) != SH_OK)
        return SH_EINVAL;
    c.canon.simd = s->level;
    s->c = c;
    sh_rabin_init(&s->win, c.poly, c.k);
    sh_rabin_init(&s->id, c.idpoly, 64);
    sh_mulx_init(&s->id64, &s->id, 64);
    sh_mulx_init(&s->id128, &s->id, 128);
    sh_mulx_init(&s->w64, &s->win, 64);
    sh_mulx_init(&s->wk, &s->win, (uint64_t)c.k);
    sh_mulx_init(&s->wout, &s->win, 64u * (uint64_t)c.w + (uint64_t)c.k);
    s->hw = c.k == 64 && s->level >= SH_SIMD_SSE2 && sh_clmul_available();
    sh_clmul_init(&s->cwin, c.poly);
    sh_clmul_init(&s->cid, c.idpoly);
    s->cout = sh_poly_xpow(64u * (uint64_t)c.w + 64u, c.poly, c.k);
    s->idk[0] = 0;
    for (i = 1; i < 9; i++) s->idk[i] = sh_poly_xpow(8u * (uint64_t)i + 64u, c.idpoly, 64);
    return SH_OK;
}

/* AUG under P_id (degree 64) eight bytes at a time: appending an 8-byte chunk
 * C gives (f xor C) * x^64; a tail of t < 8 bytes gives
 * (f_lo << 8t) xor ((f_hi xor T) * x^64), f_hi being the t bytes shifted out. */
uint64_t sh_token_id(const sh_shingler *s, const void *bytes, size_t n)
{
    const unsigned char *b = (const unsigned char *)bytes;
    uint64_t f = 0;
    size_t t;
    while (n >= 8) {
        f = sh_mulx_apply(&s->id64, f ^ sh_load_be64(b));
        b += 8;
        n -= 8;
    }
    if ((t = n) > 0) {
        unsigned sh = (unsigned)(64 - 8 * t);
        uint64_t hi = f >> sh, lo = f & ((1ULL << sh) - 1);
        f = (lo << (8 * t)) ^ sh_mulx_apply(&s->id64, hi ^ sh_load_be(b, t));
    }
    return f;
}

uint64_t sh_label(const sh_shingler *s, uint64_t fp, uint64_t label)
{
    return sh_mulx_apply(&s->w64, sh_mulx_apply(&s->wk, fp)) ^ sh_mulx_apply(&s->wk, label);
}

uint64_t sh_window_slow(const sh_shingler *s, const uint64_t *ids, size_t n)
{
    uint64_t f = 0;
    size_t i;
    for (i = 0; i < n; i++) {
        unsigned char be[8];
        sh_store_be64(be, ids[i]);
        f = sh_rabin_extend(&s->win, f, be, 8);
    }
    return f;
}

sh_status sh_work_reserve_ids(sh_work *w, size_t n)
{
    /* (the two grow apart: sh_shingle_features trades ids for fps) */
    if (!sh_grow((void **)&w->ids, &w->cap_ids, n, sizeof *w->ids, 256)) return SH_ENOMEM;
    if (!sh_grow((void **)&w->id_tok, &w->cap_id_tok, n, sizeof *w->id_tok, 256)) return SH_ENOMEM;
    return SH_OK;
}

static sh_status reserve_fps(sh_work *w, size_t n)
{
    return sh_grow((void **)&w->fps, &w->cap_fps, n, sizeof *w->fps, 256) ? SH_OK : SH_ENOMEM;
}

uint64_t *sh_work_ids(sh_work *w, size_t n)
{
    if (sh_work_reserve_ids(w, n) != SH_OK) return NULL;
    w->n_ids = n;
    return w->ids;
}

sh_status sh_shingle_features(sh_work *w, sh_error *err)
{
    if (w->max_shingles && w->n_ids > w->max_shingles)
        return sh_error_set(err, SH_ELIMIT, 0, "has more than %zu features, the limit (max_shingles); raise "
                            "--max-shingles to include it", w->max_shingles);
    {
        uint64_t *const t = w->fps;
        const size_t c = w->cap_fps;
        w->fps = w->ids;
        w->cap_fps = w->cap_ids;
        w->ids = t;
        w->cap_ids = c;
    }
    w->n_fps = w->n_ids;
    (void)err;
    return SH_OK;
}

size_t sh_work_tokens(const sh_work *w)
{
    return w->toks.n + (w->split ? w->toks2.n : 0);
}

sh_token sh_work_token(const sh_work *w, size_t j, const char **bytes, const unsigned char **head)
{
    const sh_tokens *t = &w->toks;
    sh_token k;
    if (w->split && j >= w->toks.n) {
        j -= w->toks.n;
        t = &w->toks2;
    }
    k = t->tok[j];
    if (t == &w->toks2) k.src_off += w->split_src;
    if (bytes) *bytes = t->text + t->tok[j].off;
    if (head) *head = t->head + j * SH_TOKEN_HEAD;
    return k;
}

void sh_shingle_span(const sh_shingler *s, const sh_work *w, size_t i, size_t *first, size_t *end)
{
    /* shingle i covers ids i .. i + w - 1 (all of them in a text shorter than w) */
    size_t last = w->n_ids < (size_t)s->c.w ? w->n_ids - 1 : i + (size_t)s->c.w - 1;
    const int pad8 = s->c.tokens == SH_TOKENS_PAD8;
    sh_token a = sh_work_token(w, pad8 ? w->id_tok[i] : i, NULL, NULL);
    sh_token b = sh_work_token(w, pad8 ? w->id_tok[last] : last, NULL, NULL);
    *first = a.src_off;
    *end = b.src_off + b.src_len;
}

#ifdef SH_X86_CLMUL
/* The hot loops again with the carry-less multiply (clmul.h): the same
 * values as the table loops, which the tests compare them with.
 *
 * One step of the window, f <- (f ^ in) * x^64 + out * x^(64w + 64) mod P,
 * takes a single Barrett reduction: the 128-bit sum
 *   X = (f ^ in) * x^64 ^ clmul(out, C),   C = x^(64w + 64) mod P,
 * has hi = (f ^ in) ^ high64(clmul(out, C)) and lo = low64(clmul(out, C)), and
 *   X mod P = lo ^ low64(clmul(hi ^ high64(clmul(hi, mu)), p)):
 * three products a step, two of them on the chain from f to f. */
__attribute__((target("pclmul,sse2")))
static inline uint64_t hw_lo(__m128i x) { return (uint64_t)_mm_cvtsi128_si64(x); }
__attribute__((target("pclmul,sse2")))
static inline uint64_t hw_hi(__m128i x) { return (uint64_t)_mm_cvtsi128_si64(_mm_srli_si128(x, 8)); }
__attribute__((target("pclmul,sse2")))
static inline __m128i hw_mul(uint64_t a, uint64_t b)
{
    return _mm_clmulepi64_si128(_mm_cvtsi64_si128((long long)a), _mm_cvtsi64_si128((long long)b), 0x00);
}

/* a * x^64 mod P: hi = a, lo = 0 */
__attribute__((target("pclmul,sse2")))
static inline uint64_t hw_x64(const sh_clmul *c, uint64_t a)
{
    return hw_lo(hw_mul(a ^ hw_hi(hw_mul(a, c->mu)), c->p));
}

/* In SSE registers, so that f never moves to a general register on its
 * chain: the low halves hold the values, the high halves are ignored. */
__attribute__((target("pclmul,sse2")))
static inline __m128i xm_x64(__m128i v, __m128i mu, __m128i p)
{
    __m128i t = _mm_clmulepi64_si128(v, mu, 0x00);
    t = _mm_xor_si128(_mm_srli_si128(t, 8), v);
    return _mm_clmulepi64_si128(t, p, 0x00);
}

/* One window step (see above) with f in the HIGH half of a register, so
 * that no shift sits on the chain before its products: the 128-bit sum
 *   A = [*, f] ^ [*, in] ^ clmul(out, C)
 * has hi = f ^ in ^ high64(clmul(out, C)) in its high half; the products
 * read that half directly (imm 0x01), and the low halves of f's and in's
 * registers, whatever they hold, reach only the low half of
 * clmul(A, mu) ^ A, which the last product does not read:
 *   f' = low64(clmul(out, C)) ^ low64(clmul(high64(clmul(A, mu) ^ A), p)).
 * in and out are read as 16 bytes each, operands of the xor and of the
 * product: [ids[j - 1], ids[j]] puts id j in the high half (in), id j - 1 in
 * the low one (out). One shuffle a step (f' back to the high half) where
 * the low-half form took two (0.35 -> 0.31 ns a byte on the text set,
 * docs/benchmarks.md). Returns f' in both halves. */
__attribute__((target("pclmul,sse2")))
static inline __m128i xm_step_hi(__m128i f, __m128i in2, __m128i out2, __m128i c, __m128i mu, __m128i p)
{
    const __m128i o = _mm_clmulepi64_si128(c, out2, 0x00);
    const __m128i a = _mm_xor_si128(f, _mm_xor_si128(o, in2));
    const __m128i u = _mm_xor_si128(_mm_clmulepi64_si128(a, mu, 0x01), a);
    const __m128i r = _mm_xor_si128(_mm_clmulepi64_si128(u, p, 0x01), o);
    return _mm_unpacklo_epi64(r, r);
}

/* Four chains over four stretches of the document, interleaved: one chain
 * is bound by the latency of its multiplies, four keep the unit busy. The
 * chains are four named registers, not an array indexed in a loop, which the
 * compiler kept in memory: a store and a reload on each chain's every step
 * (0.38 -> 0.35 ns a byte on the text set, docs/benchmarks.md). Step i of a
 * chain reads ids i - 1 and i (out) and i + W - 2 and i + W - 1 (in): none
 * past the last id. */
#define XM_LOAD(x) _mm_loadl_epi64((const __m128i *)(const void *)(x))
#define XM_LOAD2(x) _mm_loadu_si128((const __m128i *)(const void *)(x))
#define XM_STORE(x, v) _mm_storel_epi64((__m128i *)(void *)(x), (v))
#define XM_STEP(f, ids_, fps_, a) do { \
    (f) = xm_step_hi((f), XM_LOAD2((ids_) + (a) + W - 2), XM_LOAD2((ids_) + (a) - 1), cout, mu, p); \
    XM_STORE((fps_) + (a), (f)); \
} while (0)
/* The first window of each chain k (ids k q .. k q + W - 1) to fps[k q],
 * and into f[k] in both halves, as xm_step_hi takes it. */
__attribute__((target("pclmul,sse2"))) static inline __attribute__((always_inline))
void window_start(const uint64_t *ids, size_t q, size_t W, __m128i mu, __m128i p, uint64_t *fps, __m128i f[4])
{
    __m128i f0 = _mm_setzero_si128(), f1 = f0, f2 = f0, f3 = f0;
    size_t i;
    for (i = 0; i < W; i++) {
        f0 = xm_x64(_mm_xor_si128(f0, XM_LOAD(ids + i)), mu, p);
        f1 = xm_x64(_mm_xor_si128(f1, XM_LOAD(ids + q + i)), mu, p);
        f2 = xm_x64(_mm_xor_si128(f2, XM_LOAD(ids + 2 * q + i)), mu, p);
        f3 = xm_x64(_mm_xor_si128(f3, XM_LOAD(ids + 3 * q + i)), mu, p);
    }
    XM_STORE(fps, f0);
    XM_STORE(fps + q, f1);
    XM_STORE(fps + 2 * q, f2);
    XM_STORE(fps + 3 * q, f3);
    f[0] = _mm_unpacklo_epi64(f0, f0);
    f[1] = _mm_unpacklo_epi64(f1, f1);
    f[2] = _mm_unpacklo_epi64(f2, f2);
    f[3] = _mm_unpacklo_epi64(f3, f3);
}

__attribute__((target("pclmul,sse2"))) static inline __attribute__((always_inline))
void window_body(const sh_shingler *s, const uint64_t *ids, size_t n, size_t W, uint64_t *fps)
{
    const __m128i mu = _mm_cvtsi64_si128((long long)s->cwin.mu), p = _mm_cvtsi64_si128((long long)s->cwin.p);
    const __m128i cout = _mm_cvtsi64_si128((long long)s->cout);
    const size_t nf = n - W + 1, q = nf / 4;
    /* chain k: shingles [k q, (k + 1) q), the last one on to nf */
    const uint64_t *i0 = ids, *i1 = ids + q, *i2 = ids + 2 * q, *i3 = ids + 3 * q;
    uint64_t *o0 = fps, *o1 = fps + q, *o2 = fps + 2 * q, *o3 = fps + 3 * q;
    __m128i f[4], f0, f1, f2, f3;
    size_t i;
    window_start(ids, q, W, mu, p, fps, f);
    f0 = f[0];
    f1 = f[1];
    f2 = f[2];
    f3 = f[3];
    for (i = 1; i < q; i++) {
        XM_STEP(f0, i0, o0, i);
        XM_STEP(f1, i1, o1, i);
        XM_STEP(f2, i2, o2, i);
        XM_STEP(f3, i3, o3, i);
    }
    for (i = 4 * q; i < nf; i++) XM_STEP(f3, ids, fps, i);
}

__attribute__((target("pclmul,sse2")))
static void window_hw(const sh_shingler *s, const uint64_t *ids, size_t n, size_t W, uint64_t *fps)
{
    window_body(s, ids, n, W, fps);
}

__attribute__((target("pclmul,avx2,bmi,bmi2")))
static void window_avx2(const sh_shingler *s, const uint64_t *ids, size_t n, size_t W, uint64_t *fps)
{
    window_body(s, ids, n, W, fps);
}

/* Token ids (sh_token_id) of tokens of up to 16 bytes, without a branch on
 * the length: the token is c1 || T, c1 its first 8 bytes when it has more
 * (else nothing), T the other t = 1..8 bytes, and
 *   AUG(c1 || T) = (c1 * x^(8t + 64) + T * x^64) mod P_id
 *                = reduce(clmul(c1, idk[t]) ^ T * x^64)
 * with idk[t] = 0 for a token of at most 8 bytes: one 128-bit value, one
 * Barrett reduction. The bytes come from the token's head (canon.h: its
 * first 16 bytes, zero-padded). */
#define ID_PARTS(s, h, len, c1, T, K) do { \
    const uint64_t lo_ = sh_load_be64(h), hi_ = sh_load_be64((h) + 8); \
    const int lg_ = (len) > 8; \
    const size_t t_ = lg_ ? (len) - 8 : (len); \
    (c1) = lo_; \
    (T) = (lg_ ? hi_ : lo_) >> (64 - 8 * t_); \
    (K) = (s)->idk[lg_ ? t_ : 0]; \
} while (0)

/* Tokens longer than 16 bytes, 8 bytes at a time, as sh_token_id. */
__attribute__((target("pclmul,sse2")))
static uint64_t id_long_hw(const sh_shingler *s, const unsigned char *b, size_t r)
{
    uint64_t f = 0;
    while (r >= 8) {
        f = hw_x64(&s->cid, f ^ sh_load_be64(b));
        b += 8;
        r -= 8;
    }
    if (r > 0) {
        unsigned sh = (unsigned)(64 - 8 * r);
        f = ((f & ((1ULL << sh) - 1)) << (8 * r)) ^ hw_x64(&s->cid, (f >> sh) ^ (sh_load_be64(b) >> sh));
    }
    return f;
}

/* Token ids of a token list, in two passes over each 256 tokens: every
 * token first as one of at most 8 bytes (T = its head's first bytes,
 * big-endian, shifted down to its length: id64(T), one Barrett reduction,
 * two products), with no branch on the length, which follows the text and
 * would mispredict, and no product by idk[0] = 0; then the longer ones,
 * listed on the way, again (ID_PARTS's formula, three products, or
 * id_long_hw). The first pass reads the heads alone, not the 32-byte token
 * records (a third of the bytes: 0.43 -> 0.36 ns a byte on the text set,
 * docs/benchmarks.md). Most tokens take two products, not three. */
#define IDS_CHUNK 256

/* The ids of the tokens longer than 8 bytes, listed as base + longs[j]
 * (j < nl) by a first pass that took them for tokens of at most 8 bytes. */
__attribute__((target("pclmul,sse2"))) static inline __attribute__((always_inline))
void ids_longs(const sh_shingler *s, const sh_tokens *t, size_t base, const uint32_t *longs, size_t nl, uint64_t *ids)
{
    const __m128i mu = _mm_cvtsi64_si128((long long)s->cid.mu), p = _mm_cvtsi64_si128((long long)s->cid.p);
    size_t j;
    for (j = 0; j < nl; j++) {
        const size_t k = base + longs[j], len = t->tok[k].len;
        uint64_t c1, T, K;
        __m128i x, h, r;
        if (len > 16) {
            ids[k] = id_long_hw(s, (const unsigned char *)t->text + t->tok[k].off, len);
            continue;
        }
        ID_PARTS(s, t->head + k * SH_TOKEN_HEAD, len, c1, T, K);
        x = _mm_clmulepi64_si128(_mm_cvtsi64_si128((long long)c1), _mm_cvtsi64_si128((long long)K), 0x00);
        h = _mm_xor_si128(_mm_srli_si128(x, 8), _mm_cvtsi64_si128((long long)T));
        r = _mm_xor_si128(_mm_srli_si128(_mm_clmulepi64_si128(h, mu, 0x00), 8), h);
        ids[k] = hw_lo(_mm_xor_si128(x, _mm_clmulepi64_si128(r, p, 0x00)));
    }
}

__attribute__((target("pclmul,sse2"))) static inline __attribute__((always_inline))
void ids_split_body(const sh_shingler *s, const sh_tokens *t, uint64_t *ids)
{
    const __m128i mu = _mm_cvtsi64_si128((long long)s->cid.mu), p = _mm_cvtsi64_si128((long long)s->cid.p);
    const size_t nt = t->n;
    const unsigned char *head = t->head;
    uint32_t longs[IDS_CHUNK];
    size_t c, i;
    for (c = 0; c < nt; c += IDS_CHUNK) {
        const size_t e = nt - c < IDS_CHUNK ? nt : c + IDS_CHUNK;
        size_t nl = 0;
        for (i = c; i < e; i++) {
            /* the head alone: its zero padding (no canonical token has a
             * NUL byte, and none is empty) is the shift, its ninth byte
             * tells a longer token; the token records are not read */
            const uint64_t v = sh_load_be64(head + i * SH_TOKEN_HEAD);
            const __m128i h = _mm_cvtsi64_si128((long long)(v >> ((unsigned)__builtin_ctzll(v) & 56)));
            const __m128i r = _mm_xor_si128(_mm_srli_si128(_mm_clmulepi64_si128(h, mu, 0x00), 8), h);
            _mm_storel_epi64((__m128i *)(void *)&ids[i], _mm_clmulepi64_si128(r, p, 0x00));
            longs[nl] = (uint32_t)(i - c);
            nl += head[i * SH_TOKEN_HEAD + 8] != 0;
        }
        ids_longs(s, t, c, longs, nl, ids);
    }
}

__attribute__((target("pclmul,sse2")))
static void ids_hw(const sh_shingler *s, const sh_tokens *t, uint64_t *ids)
{
    ids_split_body(s, t, ids);
}

/* ids_hw and window_hw again for AVX2 machines (which have BMI2): the same
 * instructions in their three-operand forms, shifts by a register that leave
 * the flags alone: fewer instructions a token. */
__attribute__((target("pclmul,avx2,bmi,bmi2")))
static void ids_avx2(const sh_shingler *s, const sh_tokens *t, uint64_t *ids)
{
    ids_split_body(s, t, ids);
}

/* ---- token ids and the window in one loop (AVX2 machines) ------------------
 * ids_avx2 and then window_avx2 leave the carry-less multiplier idle while
 * the ids' integer work runs and the integer units idle while the window's
 * products run; one loop over the window's four stretches keeps both busy.
 * At step i of stretch k (token a = k q + i of the window's chains) the loop
 *   - takes T of token a + DT from its head (ids_split_body's first pass: T
 *     shifted down by the head's zero padding) into tb, and lists the token
 *     if it is longer than 8 bytes;
 *   - makes the id of token a + DI from tb as a token of at most 8 bytes
 *     (T read in the high half of a 16-byte operand, as the window's step
 *     reads its ids: no shuffle);
 *   - steps the window (xm_step_hi), which takes in id a + W - 1.
 * DI = W - 1 + FUSED_D and DT = DI + FUSED_G: an id is made FUSED_D steps
 * before the window takes it in, T FUSED_G steps before its id. The
 * tokens listed in one group of FUSED_G steps get their ids in the next
 * group, and are made right (ids_longs) at its end, FUSED_D >= FUSED_G steps
 * before the window reads the first of them. tb is fps itself, ahead of the
 * window's stores (T of token a + DT at fps[a + DT], the window writing
 * fps[a]). The ids of the first fused_pre(W) tokens of each stretch and
 * of the last ones (4 q on) are made before the loop by ids_avx2.
 * Groups of 32 and 64 steps ahead: 0.632-0.642 against 0.668-0.672 ns a
 * byte for ids_avx2 and window_avx2 apart (kern10w's driver, the text set;
 * groups of 4 or 16 lose to the fix-ups' calls). docs/benchmarks.md. */
#define FUSED_G 32
#define FUSED_D 64

/* the ids of tokens [a, b) by ids_avx2 */
__attribute__((target("pclmul,avx2,bmi,bmi2")))
static void ids_range_avx2(const sh_shingler *s, const sh_tokens *t, size_t a, size_t b, uint64_t *ids)
{
    sh_tokens r = *t;
    r.tok += a;
    r.head += a * SH_TOKEN_HEAD;
    r.n = b - a;
    ids_avx2(s, &r, ids + a);
}

__attribute__((target("pclmul,avx2,bmi,bmi2")))
static void ids_longs_avx2(const sh_shingler *s, const sh_tokens *t, const uint32_t *longs, size_t nl, uint64_t *ids)
{
    ids_longs(s, t, 0, longs, nl, ids);
}

/* The tokens at the start of each stretch whose ids ids_window_avx2 makes
 * before its loop: those the window takes in before the loop's first id. */
static size_t fused_pre(size_t W)
{
    return W + FUSED_D + FUSED_G;
}

/* Whether ids_window_avx2 takes n tokens of a window of W: each stretch
 * needs its ids made ahead, two groups and a window. */
static int fused_takes(size_t n, size_t W)
{
    return n >= W && (n - W + 1) / 4 >= fused_pre(W) + 2 * FUSED_G + W;
}

/* The ids of t's t->n tokens (fused_takes) to ids[0..n) and the
 * fingerprints of their windows of W to fps[0..n - W + 1): what ids_avx2
 * and window_avx2 give. */
__attribute__((target("pclmul,avx2,bmi,bmi2")))
static void ids_window_avx2(const sh_shingler *s, const sh_tokens *t, uint64_t *ids, size_t W, uint64_t *fps)
{
    const __m128i mu = _mm_cvtsi64_si128((long long)s->cwin.mu), p = _mm_cvtsi64_si128((long long)s->cwin.p);
    const __m128i cout = _mm_cvtsi64_si128((long long)s->cout);
    const __m128i imu = _mm_cvtsi64_si128((long long)s->cid.mu), ip = _mm_cvtsi64_si128((long long)s->cid.p);
    const unsigned char *head = t->head;
    const size_t n = t->n, nf = n - W + 1, q = nf / 4, pre = fused_pre(W);
    const size_t dI = W - 1 + FUSED_D, dT = dI + FUSED_G;
    const size_t iT = q - dT; /* T steps: i in [1, iT) */
    const size_t iI = q - dI; /* id steps: i in [1 + FUSED_G, iI) */
    uint64_t *const tb = fps;
    const uint64_t *i0 = ids, *i1 = ids + q, *i2 = ids + 2 * q, *i3 = ids + 3 * q;
    uint64_t *o0 = fps, *o1 = fps + q, *o2 = fps + 2 * q, *o3 = fps + 3 * q;
    __m128i f[4], f0, f1, f2, f3;
    uint32_t lists[2][4 * FUSED_G];
    size_t i, k, nls[2] = { 0, 0 }, g = 0;
    for (k = 0; k < 4; k++) ids_range_avx2(s, t, k * q, k * q + pre, ids);
    ids_range_avx2(s, t, 4 * q, n, ids);
/* T of token P to tb[P], P listed when longer than 8 bytes */
#define FT(P) do { \
    const size_t P_ = (P); \
    const uint64_t v_ = sh_load_be64(head + P_ * SH_TOKEN_HEAD); \
    tb[P_] = v_ >> ((unsigned)__builtin_ctzll(v_) & 56); \
    lg[nl] = (uint32_t)P_; \
    nl += head[P_ * SH_TOKEN_HEAD + 8] != 0; \
} while (0)
/* the id of token P (as one of at most 8 bytes) from tb[P], the high half
 * of the 16 bytes at tb + P - 1 */
#define FI(P) do { \
    const size_t P_ = (P); \
    const __m128i x_ = _mm_loadu_si128((const __m128i *)(const void *)(tb + P_ - 1)); \
    const __m128i u_ = _mm_xor_si128(_mm_clmulepi64_si128(imu, x_, 0x10), x_); \
    _mm_storel_epi64((__m128i *)(void *)(ids + P_), _mm_clmulepi64_si128(u_, ip, 0x01)); \
} while (0)
/* step i of the four stretches: T, id and window, each chain in turn */
#define FTIW(i) do { \
    FT((i) + dT); FI((i) + dI); XM_STEP(f0, i0, o0, (i)); \
    FT(q + (i) + dT); FI(q + (i) + dI); XM_STEP(f1, i1, o1, (i)); \
    FT(2 * q + (i) + dT); FI(2 * q + (i) + dI); XM_STEP(f2, i2, o2, (i)); \
    FT(3 * q + (i) + dT); FI(3 * q + (i) + dI); XM_STEP(f3, i3, o3, (i)); \
} while (0)
    window_start(ids, q, W, mu, p, fps, f);
    f0 = f[0];
    f1 = f[1];
    f2 = f[2];
    f3 = f[3];
    {
        /* the first group: T only (its ids were made before the loop) */
        uint32_t *lg = lists[0];
        size_t nl = 0;
        for (i = 1; i < 1 + FUSED_G; i++) {
            FT(i + dT); FT(q + i + dT); FT(2 * q + i + dT); FT(3 * q + i + dT);
            XM_STEP(f0, i0, o0, i); XM_STEP(f1, i1, o1, i); XM_STEP(f2, i2, o2, i); XM_STEP(f3, i3, o3, i);
        }
        nls[0] = nl;
    }
    while (i + FUSED_G <= iT) {
        /* a group: T, ids (those listed in the group before are made
         * right at its end), window */
        uint32_t *lg = lists[(g + 1) & 1];
        size_t nl = 0;
        const size_t e = i + FUSED_G;
        for (; i < e; i++) FTIW(i);
        if (nls[g & 1]) ids_longs_avx2(s, t, lists[g & 1], nls[g & 1], ids);
        nls[(g + 1) & 1] = nl;
        g++;
    }
    {
        /* the last T steps (fewer than a group), the last id steps, and
         * every listed token made right before the window reaches it */
        uint32_t *lg = lists[(g + 1) & 1];
        size_t nl = 0;
        for (; i < iT; i++) FTIW(i);
        for (; i < iI; i++) {
            FI(i + dI); XM_STEP(f0, i0, o0, i);
            FI(q + i + dI); XM_STEP(f1, i1, o1, i);
            FI(2 * q + i + dI); XM_STEP(f2, i2, o2, i);
            FI(3 * q + i + dI); XM_STEP(f3, i3, o3, i);
        }
        if (nls[g & 1]) ids_longs_avx2(s, t, lists[g & 1], nls[g & 1], ids);
        if (nl) ids_longs_avx2(s, t, lg, nl, ids);
    }
    for (; i < q; i++) {
        XM_STEP(f0, i0, o0, i); XM_STEP(f1, i1, o1, i); XM_STEP(f2, i2, o2, i); XM_STEP(f3, i3, o3, i);
    }
    for (i = 4 * q; i < nf; i++) XM_STEP(f3, ids, fps, i);
#undef FTIW
#undef FT
#undef FI
}
#undef XM_STEP
#undef XM_LOAD2
#undef XM_LOAD
#undef XM_STORE

/* ---- AVX-512 with VPCLMULQDQ: four products per instruction ----------------
 * A 512-bit register holds four 128-bit lanes; each lane computes what one
 * xm_ step computes, on the low half (imm 0x00) or the high half (0x01) of
 * its operands. */
#define ZT __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,vpclmulqdq,pclmul")))

/* In lane k of the results: lane j of a becomes lane k of row j, i.e. the
 * 4 x 4 matrix of 128-bit lanes a[0..3] is transposed (its own inverse). */
ZT static inline void z_transpose(__m512i a[4])
{
    __m512i t0 = _mm512_shuffle_i64x2(a[0], a[1], 0x44), t1 = _mm512_shuffle_i64x2(a[0], a[1], 0xEE);
    __m512i t2 = _mm512_shuffle_i64x2(a[2], a[3], 0x44), t3 = _mm512_shuffle_i64x2(a[2], a[3], 0xEE);
    a[0] = _mm512_shuffle_i64x2(t0, t2, 0x88);
    a[1] = _mm512_shuffle_i64x2(t0, t2, 0xDD);
    a[2] = _mm512_shuffle_i64x2(t1, t3, 0x88);
    a[3] = _mm512_shuffle_i64x2(t1, t3, 0xDD);
}

/* A window step in every lane: f, in in the low halves; out in the half
 * that OSEL picks (0x00 low, 0x01 high). */
#define Z_STEP(f, in, out, OSEL) do { \
    __m512i o_ = _mm512_clmulepi64_epi128((out), c, (OSEL)); \
    __m512i h_ = _mm512_ternarylogic_epi64((f), (in), _mm512_bsrli_epi128(o_, 8), 0x96); \
    __m512i t_ = _mm512_xor_si512(_mm512_bsrli_epi128(_mm512_clmulepi64_epi128(h_, mu, 0x00), 8), h_); \
    (f) = _mm512_xor_si512(o_, _mm512_clmulepi64_epi128(t_, p, 0x00)); \
} while (0)

/* The first steps of a chain (nothing leaves the window yet). */
#define Z_WARM(f, in) do { \
    __m512i h_ = _mm512_xor_si512((f), (in)); \
    __m512i t_ = _mm512_xor_si512(_mm512_bsrli_epi128(_mm512_clmulepi64_epi128(h_, mu, 0x00), 8), h_); \
    (f) = _mm512_clmulepi64_epi128(t_, p, 0x00); \
} while (0)

/* Lane k's low half: ids[pos[k]] (0 where pos[k] is -1: the empty slot before
 * the first id). */
ZT static inline __m512i z_gather4(const uint64_t *ids, const ptrdiff_t pos[4])
{
    return _mm512_set_epi64(0, pos[3] < 0 ? 0 : (long long)ids[pos[3]], 0, pos[2] < 0 ? 0 : (long long)ids[pos[2]],
                            0, pos[1] < 0 ? 0 : (long long)ids[pos[1]], 0, pos[0] < 0 ? 0 : (long long)ids[pos[0]]);
}

#define ZG 4            /* registers of four chains each, interleaved */
#define ZCH (4 * ZG)    /* chains */

/* The window in ZCH chains, eight steps at a time: per register, the next
 * eight ids entering and leaving each of its four chains are loaded as four
 * rows and transposed so that lane k holds chain k's (two steps per 128-bit
 * lane); the outputs are transposed back and stored eight per chain.
 * Chain k covers shingles [st[k], st[k] + q) (q a multiple of 8; the last
 * chains overlap where nf is not a multiple, computing equal values twice).
 * It first takes in ids st[k] - 1 .. st[k] + W - 2 (nothing for the slot
 * before the first id), so that step j brings in id st[k] + j + W - 1, lets
 * id st[k] + j - 1 leave, and gives shingle st[k] + j. Needs nf >= 8 * ZCH. */
ZT static void window_zmm(const sh_shingler *s, const uint64_t *ids, size_t n, size_t W, uint64_t *fps)
{
    const __m512i mu = _mm512_set1_epi64((long long)s->cwin.mu), p = _mm512_set1_epi64((long long)s->cwin.p);
    const __m512i c = _mm512_set1_epi64((long long)s->cout);
    const size_t nf = n - W + 1;
    const size_t q = ((nf + ZCH - 1) / ZCH + 7) & ~(size_t)7;
    size_t st[ZCH], j, t;
    __m512i f[ZG];
    int g, k;
    for (k = 0; k < ZCH; k++) st[k] = (size_t)k * q + q <= nf ? (size_t)k * q : nf - q;
    for (g = 0; g < ZG; g++) {
        f[g] = _mm512_setzero_si512();
        for (t = 0; t < W; t++) {
            ptrdiff_t pos[4];
            for (k = 0; k < 4; k++) pos[k] = (ptrdiff_t)(st[4 * g + k] + t) - 1;
            Z_WARM(f[g], z_gather4(ids, pos));
        }
    }
    for (j = 0; j < q; j += 8) {
        /* all groups' steps interleaved: one chain is bound by the latency
         * of its two dependent products, ZG of them keep the unit busy */
        __m512i in[ZG][4], out[ZG][4], r[ZG][4], even[ZG];
        int m;
        for (g = 0; g < ZG; g++) {
            for (k = 0; k < 4; k++) {
                const size_t a = st[4 * g + k] + j;
                in[g][k] = _mm512_loadu_si512((const void *)&ids[a + W - 1]);
                /* ids a - 1 .. a + 6; the slot before the first id is empty */
                out[g][k] = a > 0 ? _mm512_loadu_si512((const void *)&ids[a - 1])
                                  : _mm512_alignr_epi64(_mm512_loadu_si512((const void *)&ids[0]), _mm512_setzero_si512(), 7);
            }
            z_transpose(in[g]);
            z_transpose(out[g]);
        }
        for (m = 0; m < 4; m++) {
            for (g = 0; g < ZG; g++) {
                Z_STEP(f[g], in[g][m], out[g][m], 0x00);
                even[g] = f[g];
            }
            for (g = 0; g < ZG; g++) {
                Z_STEP(f[g], _mm512_bsrli_epi128(in[g][m], 8), out[g][m], 0x01);
                r[g][m] = _mm512_unpacklo_epi64(even[g], f[g]);
            }
        }
        for (g = 0; g < ZG; g++) {
            z_transpose(r[g]);
            for (k = 0; k < 4; k++) _mm512_storeu_si512((void *)&fps[st[4 * g + k] + j], r[g][k]);
        }
    }
}

/* Token ids eight at a time from the heads alone, as ids_hw: a 128-bit
 * lane holds one token's head, whose zero padding (no canonical token has a
 * NUL byte) gives its length: a head with a zero high half is a token of at
 * most 8 bytes, T = its low half; otherwise c1 = the low half, T = the high
 * one and t = 8 less the padding. Tokens of 16 bytes or more (no padding)
 * are done one by one after, from the text. */
#define ZC __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx512cd,vpclmulqdq,pclmul,bmi,bmi2")))
ZC static void ids_avx512(const sh_shingler *s, const sh_tokens *tk, uint64_t *ids)
{
    const __m512i mu = _mm512_set1_epi64((long long)s->cid.mu), p = _mm512_set1_epi64((long long)s->cid.p);
    const __m512i idk = _mm512_loadu_si512((const void *)&s->idk[1]); /* t = 1..8 at 0..7 */
    const __m512i bswap = _mm512_set_epi64(0x08090a0b0c0d0e0fLL, 0x0001020304050607LL, 0x08090a0b0c0d0e0fLL,
                                           0x0001020304050607LL, 0x08090a0b0c0d0e0fLL, 0x0001020304050607LL,
                                           0x08090a0b0c0d0e0fLL, 0x0001020304050607LL);
    const __m512i evens = _mm512_set_epi64(14, 12, 10, 8, 6, 4, 2, 0);
    const __m512i bytes = _mm512_set1_epi64(~7LL), seven = _mm512_set1_epi64(7);
    const size_t nt = tk->n;
    size_t i;
    for (i = 0; i + 8 <= nt; i += 8) {
        __m512i r[2];
        unsigned longs = 0;
        int half;
        for (half = 0; half < 2; half++) {
            const __m512i raw = _mm512_loadu_si512((const void *)(tk->head + (i + 4 * half) * SH_TOKEN_HEAD));
            /* 8 x the zero bytes at the end of each half (64 for an empty one) */
            const __m512i pad = _mm512_and_si512(_mm512_lzcnt_epi64(raw), bytes);
            const __m512i be = _mm512_shuffle_epi8(raw, bswap);
            const __m512i tc = _mm512_srlv_epi64(be, pad); /* low half: T if short; high: T if not */
            /* lanes whose high half holds bytes, and those it fills (16 bytes or more) */
            const __mmask8 mid = _mm512_test_epi64_mask(raw, raw) & 0xAA;
            const __mmask8 full = _mm512_cmpeq_epi64_mask(pad, _mm512_setzero_si512()) & 0xAA;
            /* T to the high half of each lane (the short ones' from the low half) */
            const __m512i th = _mm512_maskz_mov_epi64(0xAA, _mm512_mask_blend_epi64(
                (__mmask8)(~mid & 0xAA), tc, _mm512_shuffle_epi32(tc, _MM_PERM_BADC)));
            /* idk[t], t = 8 - padding bytes of the high half, where it holds bytes */
            const __m512i k = _mm512_maskz_permutexvar_epi64(mid, _mm512_sub_epi64(seven, _mm512_srli_epi64(pad, 3)), idk);
            const __m512i x = _mm512_xor_si512(_mm512_clmulepi64_epi128(be, k, 0x10), th);
            const __m512i t2 = _mm512_xor_si512(_mm512_clmulepi64_epi128(x, mu, 0x01), x);
            r[half] = _mm512_xor_si512(x, _mm512_clmulepi64_epi128(t2, p, 0x01));
            longs |= (unsigned)full << (8 * half);
        }
        _mm512_storeu_si512((void *)&ids[i], _mm512_permutex2var_epi64(r[0], evens, r[1]));
        while (longs) {
            /* bit 2j + 1 of the pair of masks is token j */
            const size_t j = i + (size_t)(__builtin_ctz(longs) - 1) / 2;
            ids[j] = id_long_hw(s, (const unsigned char *)tk->text + tk->tok[j].off, tk->tok[j].len);
            longs &= longs - 1;
        }
    }
    if (i < nt) {
        sh_tokens rest = *tk;
        rest.tok += i;
        rest.head += i * SH_TOKEN_HEAD;
        rest.n = nt - i;
        ids_hw(s, &rest, ids + i);
    }
}
#undef ZC
#undef ZT
#endif

/* The sliding window of section 4.3: f <- f * x^64 + id_in * x^k - id_out * x^(64w + k),
 * over ids[0..n), n >= W: fps[0..n - W + 1). Each fingerprint is a function
 * of its W ids alone, so any stretch of ids gives its own windows' exactly. */
static void slide(const sh_shingler *s, const uint64_t *ids, size_t n, size_t W, uint64_t *fps)
{
    const size_t nf = n - W + 1;
    size_t i;
    uint64_t f = 0;
#ifdef SH_X86_CLMUL
    if (s->hw && s->level >= SH_SIMD_AVX512 && nf >= 8 * ZCH) {
        window_zmm(s, ids, n, W, fps);
    } else if (s->hw && s->level == SH_SIMD_AVX2 && nf >= 64) {
        window_avx2(s, ids, n, W, fps);
    } else if (s->hw && nf >= 64) {
        window_hw(s, ids, n, W, fps);
    } else
#endif
    if (s->c.k == 64 && nf >= 64) {
        /* four interleaved chains, as in window_hw */
        const size_t q = nf / 4;
        size_t start[4], k;
        uint64_t g[4];
        for (k = 0; k < 4; k++) {
            start[k] = k * q;
            g[k] = 0;
            for (i = 0; i < W; i++) g[k] = sh_mulx_apply(&s->w64, g[k] ^ ids[start[k] + i]);
            fps[start[k]] = g[k];
        }
        for (i = 1; i < q; i++)
            for (k = 0; k < 4; k++) {
                size_t a = start[k] + i;
                g[k] = sh_mulx_apply(&s->w64, g[k] ^ ids[a + W - 1]) ^ sh_mulx_apply(&s->wout, ids[a - 1]);
                fps[a] = g[k];
            }
        for (i = start[3] + q; i < nf; i++) {
            g[3] = sh_mulx_apply(&s->w64, g[3] ^ ids[i + W - 1]) ^ sh_mulx_apply(&s->wout, ids[i - 1]);
            fps[i] = g[3];
        }
    } else if (s->c.k == 64) {
        for (i = 0; i < W; i++) f = sh_mulx_apply(&s->w64, f ^ ids[i]);
        fps[0] = f;
        for (i = W; i < n; i++) {
            f = sh_mulx_apply(&s->w64, f ^ ids[i]) ^ sh_mulx_apply(&s->wout, ids[i - W]);
            fps[i - W + 1] = f;
        }
    } else {
        for (i = 0; i < W; i++) f = sh_mulx_apply(&s->w64, f) ^ sh_mulx_apply(&s->wk, ids[i]);
        fps[0] = f;
        for (i = W; i < n; i++) {
            f = sh_mulx_apply(&s->w64, f) ^ sh_mulx_apply(&s->wk, ids[i]) ^ sh_mulx_apply(&s->wout, ids[i - W]);
            fps[i - W + 1] = f;
        }
    }
}

static sh_status window(const sh_shingler *s, sh_work *w, sh_error *err)
{
    const size_t n = w->n_ids, W = (size_t)s->c.w;
    size_t nf;
    w->n_fps = 0;
    if (n == 0) return SH_OK;
    nf = n >= W ? n - W + 1 : 1;
    if (reserve_fps(w, nf) != SH_OK)
        return sh_error_set(err, SH_ENOMEM, 0, "out of memory for %zu shingles", nf);
    if (n < W) w->fps[0] = sh_window_slow(s, w->ids, n);
    else slide(s, w->ids, n, W, w->fps);
    w->n_fps = nf;
    return SH_OK;
}

/* The tokens (ids) that make max_shingles shingles: w - 1 more. */
static size_t max_tokens(const sh_shingler *s, const sh_work *w)
{
    if (!w->max_shingles) return 0;
    return w->max_shingles > SIZE_MAX - (size_t)s->c.w ? SIZE_MAX : w->max_shingles + (size_t)s->c.w - 1;
}

static sh_status too_many(const sh_work *w, sh_error *err)
{
    return sh_error_set(err, SH_ELIMIT, 0, "has more than %zu shingles, the limit (max_shingles); raise --max-shingles "
                        "to include it", w->max_shingles);
}

/* The ids of tokens t->tok[0..t->n) to ids[0..): one per token (RABIN) or
 * one per 8 bytes (PAD8, also recording each id's token in id_tok, when
 * given); returns how many. ids has room for them (ids_needed). */
static size_t ids_needed(const sh_shingler *s, const sh_tokens *t)
{
    size_t i, need = 0;
    if (s->c.tokens == SH_TOKENS_RABIN) return t->n;
    for (i = 0; i < t->n; i++) need += (t->tok[i].len + 7) / 8;
    return need;
}

static size_t token_ids(const sh_shingler *s, const sh_tokens *t, uint64_t *ids, uint32_t *id_tok)
{
    const size_t nt = t->n;
    const sh_token *tok = t->tok;
    size_t i, nid = 0;
    if (s->c.tokens == SH_TOKENS_RABIN) {
        const unsigned char *txt = (const unsigned char *)t->text, *head = t->head;
#ifdef SH_X86_CLMUL
        if (s->hw && s->level >= SH_SIMD_AVX512) {
            ids_avx512(s, t, ids);
        } else if (s->hw && s->level == SH_SIMD_AVX2) {
            ids_avx2(s, t, ids);
        } else if (s->hw) {
            ids_hw(s, t, ids);
        } else
#endif
        for (i = 0; i < nt; i++) {
            const size_t len = tok[i].len;
            /* A token of 1 to 8 bytes is one chunk: sh_token_id reduces to
             * id64(its big-endian bytes), which its head has zero-padded. */
            if (len <= 8)
                ids[i] = sh_mulx_apply(&s->id64, sh_load_be64(head + i * SH_TOKEN_HEAD) >> (64 - 8 * len));
            else
                ids[i] = sh_token_id(s, txt + tok[i].off, len);
        }
        return nt;
    }
    for (i = 0; i < nt; i++) {
        const unsigned char *b = (const unsigned char *)t->text + tok[i].off;
        size_t len = tok[i].len;
        while (len > 0) {
            size_t c = len < 8 ? len : 8;
            ids[nid] = sh_load_be(b, c) << (8 * (8 - c)); /* NUL-padded on the right */
            if (id_tok) id_tok[nid] = (uint32_t)i;
            nid++;
            b += c;
            len -= c;
        }
    }
    return nid;
}

sh_status sh_shingle_ids(const sh_shingler *s, sh_work *w, sh_error *err)
{
    w->split = 0;
    size_t max = max_tokens(s, w);
    if (max && w->n_ids > max) return too_many(w, err);
    return window(s, w, err);
}

/* ---- one large text on two threads (sh_work.threads) --------------------- */

/* The work's second thread: it takes a posted job, unless the caller, done
 * with its own half first, finds the job not yet taken and does it itself.
 * So a thread that the scheduler keeps waiting (a loaded machine) costs the
 * caller nothing but doing the work alone, never a wait for the thread. */
enum { JOB_NONE, JOB_POSTED, JOB_RUNNING, JOB_DONE };

struct sh_helper {
    pthread_t th;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    void (*f)(void *);
    void *arg;
    int state, quit;
};

static void *helper_main(void *p)
{
    struct sh_helper *h = (struct sh_helper *)p;
    pthread_mutex_lock(&h->mu);
    for (;;) {
        while (!h->quit && h->state != JOB_POSTED) pthread_cond_wait(&h->cv, &h->mu);
        if (h->quit) break;
        h->state = JOB_RUNNING;
        pthread_mutex_unlock(&h->mu);
        h->f(h->arg);
        pthread_mutex_lock(&h->mu);
        h->state = JOB_DONE;
        pthread_cond_broadcast(&h->cv);
    }
    pthread_mutex_unlock(&h->mu);
    return NULL;
}

static struct sh_helper *helper_of(sh_work *w)
{
    struct sh_helper *h;
    if (w->helper) return w->helper;
    if (!(h = (struct sh_helper *)calloc(1, sizeof *h))) return NULL;
    if (pthread_mutex_init(&h->mu, NULL) != 0) { free(h); return NULL; }
    if (pthread_cond_init(&h->cv, NULL) != 0) { pthread_mutex_destroy(&h->mu); free(h); return NULL; }
    if (pthread_create(&h->th, NULL, helper_main, h) != 0) {
        pthread_cond_destroy(&h->cv);
        pthread_mutex_destroy(&h->mu);
        free(h);
        return NULL;
    }
    return w->helper = h;
}

static void helper_post(struct sh_helper *h, void (*f)(void *), void *arg)
{
    pthread_mutex_lock(&h->mu);
    h->f = f;
    h->arg = arg;
    h->state = JOB_POSTED;
    pthread_cond_broadcast(&h->cv);
    pthread_mutex_unlock(&h->mu);
}

/* The posted job done: by the helper (waited for), or here if it was not taken. */
static void helper_finish(struct sh_helper *h)
{
    pthread_mutex_lock(&h->mu);
    if (h->state == JOB_POSTED) {
        h->state = JOB_NONE;
        pthread_mutex_unlock(&h->mu);
        h->f(h->arg);
        return;
    }
    while (h->state != JOB_DONE) pthread_cond_wait(&h->cv, &h->mu);
    h->state = JOB_NONE;
    pthread_mutex_unlock(&h->mu);
}

static void helper_free(struct sh_helper *h)
{
    if (!h) return;
    pthread_mutex_lock(&h->mu);
    h->quit = 1;
    pthread_cond_broadcast(&h->cv);
    pthread_mutex_unlock(&h->mu);
    pthread_join(h->th, NULL);
    pthread_cond_destroy(&h->cv);
    pthread_mutex_destroy(&h->mu);
    free(h);
}

/* The second half's work: its tokens and ids, then (slide_half) its windows. */
typedef struct half {
    const sh_shingler *s;
    sh_work *w;
    const char *text;
    size_t n;
    sh_status st;
    const uint64_t *ids;      /* slide_half: ids[0..n_ids) make fps[0..) */
    size_t n_ids;
    uint64_t *fps;
} half;

static void tokenize_half(void *arg)
{
    half *h = (half *)arg;
    sh_work *w = h->w;
    sh_error e;
    h->st = sh_canon_tokenize(&h->s->c.canon, h->text, h->n, &w->toks2, &e);
    if (h->st != SH_OK) return;
    if (!sh_grow((void **)&w->ids2, &w->cap_ids2, w->toks2.n, sizeof *w->ids2, 256)) { h->st = SH_ENOMEM; return; }
    token_ids(h->s, &w->toks2, w->ids2, NULL);
}

static void slide_half(void *arg)
{
    half *h = (half *)arg;
    slide(h->s, h->ids, h->n_ids, (size_t)h->s->c.w, h->fps);
}

/* Where text may be cut for two threads: just after an ASCII separator
 * (whitespace or a control character) near the middle. In a plain text the
 * scanner has no word in progress there and carries nothing else from one
 * byte to the next (canon.c), so the halves give the whole text's tokens.
 * 0: nowhere within 64 KiB of the middle. */
static size_t cut_point(const char *text, size_t n)
{
    size_t i, end = n / 2 + ((size_t)64 << 10);
    if (end > n - 1) end = n - 1;
    for (i = n / 2; i < end; i++) {
        unsigned char c = (unsigned char)text[i];
        if (c <= ' ' || c == 0x7f) return i + 1;
    }
    return 0;
}

/* sh_shingle_text on two threads: 1 with its status in *st, or 0 when the
 * text has no cut point or a half failed (the caller then does it all on one
 * thread, which gives the whole text's own error and offsets). */
static int shingle_text_2(const sh_shingler *s, sh_work *w, const char *text, size_t n, sh_status *st, sh_error *err)
{
    const size_t W = (size_t)s->c.w, max = max_tokens(s, w);
    size_t cut = cut_point(text, n), n1, n2, nf;
    struct sh_helper *th;
    half h;
    sh_status s1;
    if (!cut || !(th = helper_of(w))) return 0;
    memset(&h, 0, sizeof h);
    h.s = s;
    h.w = w;
    h.text = text + cut;
    h.n = n - cut;
    w->toks.max_n = max;
    w->toks2.max_n = max;
    helper_post(th, tokenize_half, &h);
    s1 = sh_canon_tokenize(&s->c.canon, text, cut, &w->toks, NULL);
    if (s1 == SH_OK && sh_work_reserve_ids(w, w->toks.n) != SH_OK) s1 = SH_ENOMEM;
    if (s1 == SH_OK) token_ids(s, &w->toks, w->ids, NULL);
    helper_finish(th);
    if (s1 != SH_OK || h.st != SH_OK) return 0;
    n1 = w->toks.n;
    n2 = w->toks2.n;
    if ((max && n1 + n2 > max) || n1 + n2 > UINT32_MAX || sh_work_reserve_ids(w, n1 + n2) != SH_OK) return 0;
    /* the tokens stay in their two arrays (sh_work_token reads across) */
    w->split = 1;
    w->split_src = cut;
    memcpy(w->ids + n1, w->ids2, n2 * sizeof *w->ids);
    w->n_ids = n1 + n2;
    *st = SH_OK;
    if (w->n_ids < 2 * W + 128) {
        *st = window(s, w, err);
        return 1;
    }
    /* the windows: the first half's on this thread, the rest on another */
    nf = w->n_ids - W + 1;
    if (reserve_fps(w, nf) != SH_OK) {
        *st = sh_error_set(err, SH_ENOMEM, 0, "out of memory for %zu shingles", nf);
        return 1;
    }
    h.ids = w->ids + nf / 2;
    h.n_ids = w->n_ids - nf / 2;
    h.fps = w->fps + nf / 2;
    helper_post(th, slide_half, &h);
    slide(s, w->ids, nf / 2 + W - 1, W, w->fps);
    helper_finish(th);
    w->n_fps = nf;
    return 1;
}

sh_status sh_shingle_text(const sh_shingler *s, sh_work *w, const char *text, size_t n, sh_error *err)
{
    sh_status st;
    size_t nt, need, nid;
    w->split = 0;
    if (w->threads > 1 && n >= (w->par_min ? w->par_min : SH_SHINGLE_PAR_MIN) && n >= 2 &&
        s->c.tokens == SH_TOKENS_RABIN && !(s->c.canon.flags & (SH_CANON_HTML | SH_CANON_CODE | SH_CANON_TWEET)) &&
        shingle_text_2(s, w, text, n, &st, err))
        return st;
    w->toks.max_n = max_tokens(s, w);
    st = sh_canon_tokenize(&s->c.canon, text, n, &w->toks, err);
    if (st == SH_ELIMIT) return too_many(w, err);
    if (st != SH_OK) return st;
    /* the block scanner may end a document up to 63 tokens past the bound
     * (the slack it needs, canon.c token_grow) */
    if (w->toks.max_n && w->toks.n > w->toks.max_n) return too_many(w, err);
    nt = w->toks.n;
    if (nt > UINT32_MAX)
        return sh_error_set(err, SH_EINVAL, 0, "document has %zu tokens; at most 4294967295 are supported", nt);
    need = ids_needed(s, &w->toks);
    if (need > UINT32_MAX || sh_work_reserve_ids(w, need) != SH_OK)
        return s->c.tokens == SH_TOKENS_RABIN ? sh_error_set(err, SH_ENOMEM, 0, "out of memory for %zu tokens", nt)
                                              : sh_error_set(err, SH_ENOMEM, 0, "out of memory for %zu 8-byte words", need);
#ifdef SH_X86_CLMUL
    if (s->hw && s->level == SH_SIMD_AVX2 && s->c.tokens == SH_TOKENS_RABIN && fused_takes(nt, (size_t)s->c.w)) {
        /* ids and window in one loop (ids_window_avx2) */
        const size_t nf = nt - (size_t)s->c.w + 1;
        if (reserve_fps(w, nf) != SH_OK)
            return sh_error_set(err, SH_ENOMEM, 0, "out of memory for %zu shingles", nf);
        ids_window_avx2(s, &w->toks, w->ids, (size_t)s->c.w, w->fps);
        w->n_ids = nt;
        w->n_fps = nf;
        return SH_OK;
    }
#endif
    nid = token_ids(s, &w->toks, w->ids, w->id_tok);
    w->n_ids = nid;
    return window(s, w, err);
}

typedef struct stream {
    const sh_shingler *s;
    sh_work *w;
    sh_shingle_sink sink;
    void *ctx;
    uint64_t ntok, nids;
    size_t max;               /* the most tokens (max_tokens), 0: none */
    size_t carry;             /* ids of the last w - 1 kept at w->ids[0..carry) */
} stream;

/* One block of tokens: ids after the carried ones, the shingles they end,
 * to the sink; the last w - 1 ids carried to the next block. */
static sh_status stream_block(void *arg, sh_tokens *t, sh_error *err)
{
    stream *c = (stream *)arg;
    const sh_shingler *s = c->s;
    sh_work *w = c->w;
    const size_t W = (size_t)s->c.w;
    size_t nid, total, nf = 0;
    sh_status st;
    if (t->n == 0) return SH_OK; /* (ids may be NULL yet: an empty text) */
    c->ntok += t->n;
    if (c->max && c->ntok > c->max) return too_many(w, err);
    nid = ids_needed(s, t);
    if (nid > SIZE_MAX - c->carry || sh_work_reserve_ids(w, c->carry + nid) != SH_OK)
        return sh_error_set(err, SH_ENOMEM, 0, "out of memory for %zu tokens", t->n);
    nid = token_ids(s, t, w->ids + c->carry, NULL);
    total = c->carry + nid;
    c->nids += nid;
    if (total >= W) {
        w->n_ids = total;
        if ((st = window(s, w, err)) != SH_OK) return st;
        nf = w->n_fps;
    }
    if ((nid || nf) && (st = c->sink(c->ctx, w->ids + c->carry, nid, w->fps, nf, c->ntok, err)) != SH_OK) return st;
    if (total >= W) {
        c->carry = W - 1;
        memmove(w->ids, w->ids + total - c->carry, c->carry * sizeof *w->ids);
    } else {
        c->carry = total;
    }
    return SH_OK;
}

sh_status sh_shingle_stream(const sh_shingler *s, sh_work *w, const char *text, size_t n, size_t block,
                            sh_shingle_sink sink, void *ctx, uint64_t *n_tokens, sh_error *err)
{
    stream c;
    sh_status st;
    memset(&c, 0, sizeof c);
    c.s = s;
    c.w = w;
    c.sink = sink;
    c.ctx = ctx;
    c.max = max_tokens(s, w);
    *n_tokens = 0;
    w->split = 0;
    w->n_ids = w->n_fps = 0;
    w->toks.max_n = 0; /* counted here, over all blocks */
    w->toks.flush = stream_block;
    w->toks.flush_ctx = &c;
    w->toks.flush_at = block ? block : 65536;
    st = sh_canon_tokenize(&s->c.canon, text, n, &w->toks, err);
    w->toks.flush = NULL;
    w->toks.flush_ctx = NULL;
    if (st == SH_ELIMIT) return too_many(w, err);
    if (st != SH_OK) return st;
    if ((st = stream_block(&c, &w->toks, err)) != SH_OK) return st;
    if (c.nids > 0 && c.nids < (uint64_t)s->c.w) {
        /* a text shorter than the window: one shingle of all its ids (all
         * of them still carried) */
        uint64_t fp = sh_window_slow(s, w->ids, c.carry);
        if ((st = sink(ctx, NULL, 0, &fp, 1, c.ntok, err)) != SH_OK) return st;
    }
    *n_tokens = c.ntok;
    return SH_OK;
}

void sh_work_free(sh_work *w)
{
    sh_tokens_free(&w->toks);
    helper_free(w->helper);
    sh_tokens_free(&w->toks2);
    free(w->ids2);
    free(w->ids);
    free(w->id_tok);
    free(w->fps);
    free(w->tab);
    free(w->cnt);
    free(w->vals);
    free(w->bytes);
    memset(w, 0, sizeof *w);
}
