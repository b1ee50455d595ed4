/* The canonicalizer and tokenizer (core/canon.c), and the shingler and
 * sketches over them. The first input byte picks the options (HTML, case,
 * numbers, punctuation, Unicode folding, the policy for invalid UTF-8, w).
 * Invariants: every token lies inside the input and after the previous one;
 * canonical bytes are non-empty, inside the text buffer and valid UTF-8
 * (unless the policy is to fail, which then names a byte of the input);
 * tokenizing twice gives the same tokens; the shingler makes one fingerprint
 * per window of w tokens; a sketch of it serializes and loads back equal;
 * the document sketched in blocks of 64 tokens (core/stream.h) gives the
 * whole path's sketch, full set, signature and fingerprints. */
#include "canon.h"
#include "fuzz.h"
#include "simd.h"
#include "shingler.h"
#include "sketch.h"
#include "stream.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    sh_canon_opts o;
    sh_tokens a, b;
    sh_error err;
    sh_status s;
    size_t i, n;
    const char *in;
    unsigned sel;
    if (size == 0) return 0;
    sel = data[0];
    in = (const char *)data + 1;
    n = size - 1;
    memset(&o, 0, sizeof o); /* simd = SH_SIMD_AUTO: the best level this processor has */
    o.flags = (sel & 1 ? SH_CANON_HTML : 0) | (sel & 2 ? SH_CANON_LOWER : 0) | (sel & 4 ? SH_CANON_NUMBERS : 0) |
              (sel & 8 ? SH_CANON_PUNCT : 0) | (sel & 16 ? SH_CANON_FOLD : 0);
    o.invalid = (sh_utf8_mode)((sel >> 5) % 3);
    memset(&a, 0, sizeof a);
    memset(&b, 0, sizeof b);
    s = sh_canon_tokenize(&o, in, n, &a, &err);
    if (s == SH_EUTF8) {
        FUZZ_CHECK(o.invalid == SH_UTF8_ERROR && err.offset < n);
        sh_tokens_free(&a);
        return 0;
    }
    FUZZ_CHECK(s == SH_OK);
    for (i = 0; i < a.n; i++) {
        const sh_token *t = &a.tok[i];
        FUZZ_CHECK(t->src_off + t->src_len <= n && t->src_len > 0);
        if (i > 0) FUZZ_CHECK(t->src_off >= a.tok[i - 1].src_off + a.tok[i - 1].src_len);
        FUZZ_CHECK(t->len > 0 && t->off + t->len <= a.text_len);
        FUZZ_CHECK(fuzz_utf8_ok((const unsigned char *)a.text + t->off, t->len));
    }
    FUZZ_CHECK(sh_canon_tokenize(&o, in, n, &b, &err) == SH_OK && b.n == a.n && b.text_len == a.text_len);
    if (a.text_len) FUZZ_CHECK(memcmp(a.text, b.text, a.text_len) == 0);
    for (i = 0; i < a.n; i++) FUZZ_CHECK(memcmp(&a.tok[i], &b.tok[i], sizeof a.tok[i]) == 0);
    {
        /* the portable scanner, the reference of the SIMD levels (core/simd.h),
         * makes the same tokens: same source spans, same canonical bytes */
        sh_canon_opts po = o;
        po.simd = SH_SIMD_PORTABLE;
        FUZZ_CHECK(sh_canon_tokenize(&po, in, n, &b, &err) == SH_OK && b.n == a.n);
        for (i = 0; i < a.n; i++) {
            FUZZ_CHECK(b.tok[i].src_off == a.tok[i].src_off && b.tok[i].src_len == a.tok[i].src_len &&
                       b.tok[i].len == a.tok[i].len);
            FUZZ_CHECK(memcmp(a.text + a.tok[i].off, b.text + b.tok[i].off, a.tok[i].len) == 0);
        }
    }
    {
        /* a shingler per option byte, made once: drawing polynomials is slow */
        static sh_shingler shs[256];
        static int made[256];
        sh_shingler_config c;
        sh_shingler *shp = &shs[sel];
        sh_work w;
        sh_sketch_params p;
        sh_sketch *sk, *back;
        unsigned char *ser;
        memset(&c, 0, sizeof c);
        memset(&w, 0, sizeof w);
        memset(&p, 0, sizeof p);
        c.w = 1 + (int)((sel >> 2) % 8);
        c.k = 64;
        c.seed = sel;
        c.canon = o;
        if (!made[sel]) { FUZZ_CHECK(sh_shingler_init(shp, &c, &err) == SH_OK); made[sel] = 1; }
        FUZZ_CHECK(sh_shingle_text(shp, &w, in, n, &err) == SH_OK);
        FUZZ_CHECK(w.toks.n == a.n);
        FUZZ_CHECK(w.n_fps == (a.n >= (size_t)c.w ? a.n - (size_t)c.w + 1 : (a.n > 0)));
        p.kind = (uint8_t)(1 + sel % 5);
        p.s = 20;
        p.m = 4;
        FUZZ_CHECK(sh_sketch_build(shp, &w, &p, 0, w.toks.n, &sk, &err) == SH_OK);
        ser = (unsigned char *)malloc(sh_sketch_serialized_size(sk));
        sh_sketch_serialize(sk, ser);
        FUZZ_CHECK(sh_sketch_deserialize(ser, sh_sketch_serialized_size(sk), &back, &err) == SH_OK);
        FUZZ_CHECK(back->n == sk->n && memcmp(back->v, sk->v, 8 * sk->n) == 0);
        free(ser);
        free(back);
        free(sk);
        {
            /* sketched in blocks of 64 tokens (core/stream.h): the whole
             * path's sketch, full set, signature and fingerprints */
            sh_work w2;
            sh_stream st;
            sh_doc_out d1, d2;
            const int full = (sel >> 3) & 1;
            memset(&w2, 0, sizeof w2);
            memset(&st, 0, sizeof st);
            memset(&d1, 0, sizeof d1);
            memset(&d2, 0, sizeof d2);
            FUZZ_CHECK(sh_doc_sketch(shp, &w, &p, 0, full, 3, in, n, w.toks.n, &d1, &err) == SH_OK);
            FUZZ_CHECK(sh_doc_sketch_stream(shp, &w2, &st, &p, full, 3, in, n, in, n, 1, &d2, &err) == SH_OK);
            FUZZ_CHECK(d1.n_tokens == d2.n_tokens && d1.raw_fp == d2.raw_fp && d1.canon_fp == d2.canon_fp &&
                       d1.set_fp == d2.set_fp && memcmp(d1.sig, d2.sig, 3 * 8) == 0);
            FUZZ_CHECK(d1.sketch->n == d2.sketch->n && d1.sketch->n_shingles == d2.sketch->n_shingles &&
                       memcmp(&d1.sketch->p, &d2.sketch->p, sizeof d1.sketch->p) == 0 &&
                       memcmp(d1.sketch->v, d2.sketch->v, 8 * d1.sketch->n) == 0);
            FUZZ_CHECK(!full || (d1.full->n == d2.full->n && memcmp(d1.full->v, d2.full->v, 8 * d1.full->n) == 0));
            sh_doc_release(&d1);
            sh_doc_release(&d2);
            sh_stream_free(&st);
            sh_work_free(&w2);
        }
        sh_work_free(&w);
    }
    sh_tokens_free(&a);
    sh_tokens_free(&b);
    return 0;
}
