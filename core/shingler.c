#include "shingler.h"

#include "byteorder.h"
#include "grow.h"

#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) && defined(__GNUC__)
#define SH_X86_CLMUL 1
#include <immintrin.h>
#endif

#define SEED_P_ID 0x5bd1e9955bd1e995ULL /* separates the P_id stream from P's */

sh_status sh_shingler_init(sh_shingler *s, const sh_shingler_config *cfg, sh_error *err)
{
    sh_shingler_config c = *cfg;
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
    s->c = c;
    sh_rabin_init(&s->win, c.poly, c.k);
    sh_rabin_init(&s->id, c.idpoly, 64);
    sh_mulx_init(&s->id64, &s->id, 64);
    sh_mulx_init(&s->w64, &s->win, 64);
    sh_mulx_init(&s->wk, &s->win, (uint64_t)c.k);
    sh_mulx_init(&s->wout, &s->win, 64u * (uint64_t)c.w + (uint64_t)c.k);
    s->hw = c.k == 64 && sh_clmul_available();
    sh_clmul_init(&s->cwin, c.poly);
    sh_clmul_init(&s->cid, c.idpoly);
    s->cout = sh_poly_xpow(64u * (uint64_t)c.w + 64u, c.poly, c.k);
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
    size_t cap = w->cap_ids;
    if (n <= cap) return SH_OK;
    if (!sh_grow((void **)&w->ids, &cap, n, sizeof *w->ids, 256)) return SH_ENOMEM;
    cap = w->cap_ids;
    if (!sh_grow((void **)&w->id_tok, &cap, n, sizeof *w->id_tok, 256)) return SH_ENOMEM;
    w->cap_ids = cap;
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
    if (reserve_fps(w, w->n_ids) != SH_OK)
        return sh_error_set(err, SH_ENOMEM, 0, "out of memory for %zu features", w->n_ids);
    if (w->n_ids) memcpy(w->fps, w->ids, w->n_ids * sizeof *w->fps);
    w->n_fps = w->n_ids;
    return SH_OK;
}

void sh_shingle_span(const sh_shingler *s, const sh_work *w, size_t i, size_t *first, size_t *end)
{
    /* shingle i covers ids i .. i + w - 1 (all of them in a text shorter than w) */
    size_t last = w->n_ids < (size_t)s->c.w ? w->n_ids - 1 : i + (size_t)s->c.w - 1;
    const int pad8 = s->c.tokens == SH_TOKENS_PAD8;
    const sh_token *a = &w->toks.tok[pad8 ? w->id_tok[i] : i];
    const sh_token *b = &w->toks.tok[pad8 ? w->id_tok[last] : last];
    *first = a->src_off;
    *end = b->src_off + b->src_len;
}

#ifdef SH_X86_CLMUL
/* The hot loops again with the carry-less multiply (clmul.h): the same
 * values as the table loops, which the tests compare them with. */
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

/* The window in SSE registers: f stays a 128-bit value (its low half) from
 * one step to the next, so the chain has no moves to and from general
 * registers. x64(v) = lo(clmul(v ^ hi(clmul(v, mu)), p)). */
__attribute__((target("pclmul,sse2")))
static inline __m128i xm_x64(__m128i v, __m128i mu, __m128i p)
{
    __m128i t = _mm_clmulepi64_si128(v, mu, 0x00);
    t = _mm_xor_si128(_mm_srli_si128(t, 8), v);
    return _mm_move_epi64(_mm_clmulepi64_si128(t, p, 0x00));
}

__attribute__((target("pclmul,sse2")))
static inline __m128i xm_mulmod(__m128i a, __m128i b, __m128i mu, __m128i p)
{
    __m128i prod = _mm_clmulepi64_si128(a, b, 0x00);
    __m128i hi = _mm_srli_si128(prod, 8);
    __m128i t = _mm_xor_si128(_mm_srli_si128(_mm_clmulepi64_si128(hi, mu, 0x00), 8), hi);
    return _mm_move_epi64(_mm_xor_si128(prod, _mm_clmulepi64_si128(t, p, 0x00)));
}

/* Four chains over four stretches of the document, interleaved: one chain
 * is bound by the latency of its multiplies, four keep the unit busy. */
__attribute__((target("pclmul,sse2")))
static void window_hw(const sh_shingler *s, const uint64_t *ids, size_t n, size_t W, uint64_t *fps)
{
    const __m128i mu = _mm_cvtsi64_si128((long long)s->cwin.mu), p = _mm_cvtsi64_si128((long long)s->cwin.p);
    const __m128i cout = _mm_cvtsi64_si128((long long)s->cout);
    const size_t nf = n - W + 1, q = nf / 4;
    size_t start[4], i, k;
    __m128i f[4];
    for (k = 0; k < 4; k++) {
        start[k] = k * q;
        f[k] = _mm_setzero_si128();
        for (i = 0; i < W; i++) f[k] = xm_x64(_mm_xor_si128(f[k], _mm_loadl_epi64((const __m128i *)(const void *)&ids[start[k] + i])), mu, p);
        _mm_storel_epi64((__m128i *)(void *)&fps[start[k]], f[k]);
    }
    for (i = 1; i < q; i++)
        for (k = 0; k < 4; k++) {
            size_t a = start[k] + i;
            __m128i in = _mm_loadl_epi64((const __m128i *)(const void *)&ids[a + W - 1]);
            __m128i out = _mm_loadl_epi64((const __m128i *)(const void *)&ids[a - 1]);
            f[k] = _mm_xor_si128(xm_x64(_mm_xor_si128(f[k], in), mu, p), xm_mulmod(out, cout, mu, p));
            _mm_storel_epi64((__m128i *)(void *)&fps[a], f[k]);
        }
    for (i = start[3] + q; i < nf; i++) {
        __m128i in = _mm_loadl_epi64((const __m128i *)(const void *)&ids[i + W - 1]);
        __m128i out = _mm_loadl_epi64((const __m128i *)(const void *)&ids[i - 1]);
        f[3] = _mm_xor_si128(xm_x64(_mm_xor_si128(f[3], in), mu, p), xm_mulmod(out, cout, mu, p));
        _mm_storel_epi64((__m128i *)(void *)&fps[i], f[3]);
    }
}

/* Ids of tokens of 1 to 8 bytes with 8 readable bytes after them, as
 * id_short below; the rest through sh_token_id. */
__attribute__((target("pclmul,sse2")))
static void ids_hw(const sh_shingler *s, const sh_token *tok, size_t nt, const unsigned char *txt, size_t txt_len,
                   uint64_t *ids)
{
    const __m128i mu = _mm_cvtsi64_si128((long long)s->cid.mu), p = _mm_cvtsi64_si128((long long)s->cid.p);
    size_t i;
    for (i = 0; i < nt; i++) {
        const size_t off = tok[i].off, len = tok[i].len;
        if (len - 1 < 8 && off + 8 <= txt_len) {
            __m128i v = _mm_cvtsi64_si128((long long)(sh_load_be64(txt + off) >> (64 - 8 * len)));
            _mm_storel_epi64((__m128i *)(void *)&ids[i], xm_x64(v, mu, p));
        } else if (off + len + 8 <= txt_len) {
            /* longer tokens 8 bytes at a time, as sh_token_id */
            const unsigned char *b = txt + off;
            size_t r = len;
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
            ids[i] = f;
        } else {
            ids[i] = sh_token_id(s, txt + off, len);
        }
    }
}
#endif

/* The sliding window of section 4.3: f <- f * x^64 + id_in * x^k - id_out * x^(64w + k). */
static sh_status window(const sh_shingler *s, sh_work *w, sh_error *err)
{
    const size_t n = w->n_ids, W = (size_t)s->c.w;
    const uint64_t *ids = w->ids;
    uint64_t *fps;
    size_t i, nf;
    uint64_t f = 0;
    w->n_fps = 0;
    if (n == 0) return SH_OK;
    nf = n >= W ? n - W + 1 : 1;
    if (reserve_fps(w, nf) != SH_OK)
        return sh_error_set(err, SH_ENOMEM, 0, "out of memory for %zu shingles", nf);
    fps = w->fps;
    if (n < W) {
        fps[0] = sh_window_slow(s, ids, n);
        w->n_fps = 1;
        return SH_OK;
    }
#ifdef SH_X86_CLMUL
    if (s->hw && nf >= 64) {
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
    w->n_fps = nf;
    return SH_OK;
}

sh_status sh_shingle_ids(const sh_shingler *s, sh_work *w, sh_error *err)
{
    return window(s, w, err);
}

sh_status sh_shingle_text(const sh_shingler *s, sh_work *w, const char *text, size_t n, sh_error *err)
{
    sh_status st = sh_canon_tokenize(&s->c.canon, text, n, &w->toks, err);
    const sh_token *tok;
    size_t i, nt, nid = 0;
    if (st != SH_OK) return st;
    nt = w->toks.n;
    tok = w->toks.tok;
    if (nt > UINT32_MAX)
        return sh_error_set(err, SH_EINVAL, 0, "document has %zu tokens; at most 4294967295 are supported", nt);
    if (s->c.tokens == SH_TOKENS_RABIN) {
        if (sh_work_reserve_ids(w, nt) != SH_OK)
            return sh_error_set(err, SH_ENOMEM, 0, "out of memory for %zu tokens", nt);
        const unsigned char *txt = (const unsigned char *)w->toks.text;
        const size_t txt_len = w->toks.text_len;
        uint64_t *ids = w->ids;
#ifdef SH_X86_CLMUL
        if (s->hw) {
            ids_hw(s, tok, nt, txt, txt_len, ids);
        } else
#endif
        for (i = 0; i < nt; i++) {
            const size_t off = tok[i].off, len = tok[i].len;
            /* A token of 1 to 8 bytes is one chunk: sh_token_id reduces to
             * id64(its big-endian bytes). Read them with one 8-byte load where
             * 8 bytes of canonical text remain, and drop the ones past it. */
            if (len - 1 < 8 && off + 8 <= txt_len)
                ids[i] = sh_mulx_apply(&s->id64, sh_load_be64(txt + off) >> (64 - 8 * len));
            else
                ids[i] = sh_token_id(s, txt + off, len);
        }
        nid = nt;
    } else {
        size_t need = 0;
        for (i = 0; i < nt; i++) need += (tok[i].len + 7) / 8;
        if (need > UINT32_MAX || sh_work_reserve_ids(w, need) != SH_OK)
            return sh_error_set(err, SH_ENOMEM, 0, "out of memory for %zu 8-byte words", need);
        for (i = 0; i < nt; i++) {
            const unsigned char *b = (const unsigned char *)w->toks.text + tok[i].off;
            size_t len = tok[i].len;
            while (len > 0) {
                size_t c = len < 8 ? len : 8;
                w->ids[nid] = sh_load_be(b, c) << (8 * (8 - c)); /* NUL-padded on the right */
                w->id_tok[nid++] = (uint32_t)i;
                b += c;
                len -= c;
            }
        }
    }
    w->n_ids = nid;
    return window(s, w, err);
}

void sh_work_free(sh_work *w)
{
    sh_tokens_free(&w->toks);
    free(w->ids);
    free(w->id_tok);
    free(w->fps);
    free(w->tab);
    free(w->cnt);
    free(w->vals);
    memset(w, 0, sizeof *w);
}
