/* A document sketched in blocks (core/stream.h) against the whole-array
 * path (sh_shingle_text + sh_doc_sketch): the same sketch, full set,
 * signature and three fingerprints, bit for bit, for every kind, option A
 * and B, both token modes, HTML, folding, punctuation, widths 1 to 12, at
 * every SIMD level the processor has, and block sizes that cut the document
 * at every kind of place (the carried w - 1 ids, a block that ends a short
 * document, a block with no shingle). The max_shingles limit refuses the same
 * documents with the same message. */
#include <stdlib.h>
#include "../stream.h"
#include "test.h"

static const char *WORDS[] = {
    "the", "a", "of", "rabin", "fingerprint", "Shingle", "broder", "1997", "42", "polynomial",
    "extraordinarily-long-token-of-many-bytes", "caf\xc3\xa9", "\xe6\x97\xa5\xe6\x9c\xac", "STRASSE",
    "stra\xc3\x9f" "e", "na\xc3\xafve", "x", "<b>bold</b>", "&amp;", "<p>", "<!-- c -->", "<script>var x = 1;</script>",
    "\xef\xac\x83", "e\xcc\x81", "\xd8\xa7\xd9\x84", "!", ",", "--", "2026-11-23", "zzzzzzzzzzzzzzzzz",
};
#define NW (sizeof WORDS / sizeof *WORDS)

static uint64_t rng = 0x9E3779B97F4A7C15ULL;
static uint64_t next(void) { return sh_splitmix_next(&rng); }

/* A text of about n words from the first `vocab` words, separated by spaces,
 * newlines or nothing. */
static char *text_of(size_t n, size_t vocab, size_t *len)
{
    size_t cap = n * 48 + 16, l = 0, i;
    char *t = (char *)malloc(cap);
    for (i = 0; i < n; i++) {
        const char *w = WORDS[next() % vocab];
        size_t wl = strlen(w);
        uint64_t r = next() % 16;
        memcpy(t + l, w, wl);
        l += wl;
        t[l++] = r == 0 ? '\n' : r == 1 ? '\t' : ' ';
    }
    t[l] = 0;
    *len = l;
    return t;
}

static int same_sketch(const sh_sketch *a, const sh_sketch *b)
{
    if (!a || !b) return a == b;
    return memcmp(&a->p, &b->p, sizeof a->p) == 0 && a->n == b->n && a->n_shingles == b->n_shingles &&
           a->n_tokens == b->n_tokens && (a->n == 0 || memcmp(a->v, b->v, a->n * 8) == 0);
}

static int make(sh_shingler *s, int w, sh_token_mode tm, sh_option opt, unsigned flags, sh_simd simd)
{
    sh_shingler_config c;
    sh_error err;
    memset(&c, 0, sizeof c);
    c.w = w; c.k = 64; c.seed = 0x5348494E474CULL ^ (uint64_t)w; c.tokens = tm; c.option = opt;
    c.canon.flags = flags;
    c.canon.invalid = SH_UTF8_LATIN1;
    c.simd = simd;
    return sh_shingler_init(s, &c, &err) == SH_OK;
}

static long compared;

/* The whole path and the block path on one text: equal outputs. */
static void compare(const sh_shingler *sh, const sh_sketch_params *p, int full, uint32_t sig_k, const char *t,
                    size_t len, size_t block, size_t max_shingles)
{
    sh_work w1, w2;
    sh_stream st;
    sh_doc_out a, b;
    sh_error e1, e2;
    sh_status s1, s2;
    memset(&w1, 0, sizeof w1); memset(&w2, 0, sizeof w2); memset(&st, 0, sizeof st);
    memset(&a, 0, sizeof a); memset(&b, 0, sizeof b);
    w1.max_shingles = w2.max_shingles = max_shingles;
    s1 = sh_shingle_text(sh, &w1, t, len, &e1);
    if (s1 == SH_OK) s1 = sh_doc_sketch(sh, &w1, p, 0, full, sig_k, t, len, w1.toks.n, &a, &e1);
    s2 = sh_doc_sketch_stream(sh, &w2, &st, p, full, sig_k, t, len, t, len, block, &b, &e2);
    CHECK(s1 == s2);
    if (s1 != SH_OK && s1 == s2) {
        CHECK(strcmp(e1.msg, e2.msg) == 0);
    } else if (s1 == SH_OK && s2 == SH_OK) {
        int ok = same_sketch(a.sketch, b.sketch) && same_sketch(a.full, b.full) && a.raw_fp == b.raw_fp &&
                 a.canon_fp == b.canon_fp && a.set_fp == b.set_fp && a.n_tokens == b.n_tokens &&
                 ((!a.sig && !b.sig) || (a.sig && b.sig && memcmp(a.sig, b.sig, sig_k * 8) == 0));
        CHECK(ok);
        if (!ok)
            fprintf(stderr, "  kind %d full %d w %u option %d tokens %d block %zu len %zu: n %zu/%zu shingles %llu/%llu\n",
                    p->kind, full, (unsigned)sh->c.w, sh->c.option, sh->c.tokens, block, len, a.sketch ? a.sketch->n : 0,
                    b.sketch ? b.sketch->n : 0, a.sketch ? (unsigned long long)a.sketch->n_shingles : 0ULL,
                    b.sketch ? (unsigned long long)b.sketch->n_shingles : 0ULL);
    }
    compared++;
    sh_doc_release(&a); sh_doc_release(&b);
    sh_work_free(&w1); sh_work_free(&w2); sh_stream_free(&st);
}

static sh_sketch_params params(uint8_t kind, uint64_t m, uint32_t floor)
{
    sh_sketch_params p;
    memset(&p, 0, sizeof p);
    p.kind = kind; p.s = 50; p.m = m; p.floor = floor; p.rules = 11;
    return p;
}

static void blocks_give_the_whole_documents_sketch(void)
{
    const uint8_t kinds[] = { SH_SKETCH_MIN, SH_SKETCH_MOD, SH_SKETCH_MINMOD, SH_SKETCH_CLASS, SH_SKETCH_FULL };
    const unsigned flags[] = { SH_CANON_DEFAULT_FLAGS, SH_CANON_DEFAULT_FLAGS | SH_CANON_HTML,
                               SH_CANON_FOLD | SH_CANON_PUNCT, SH_CANON_HTML | SH_CANON_FOLD | SH_CANON_NUMBERS };
    const size_t sizes[] = { 0, 1, 3, 9, 11, 200, 257, 700, 3000, 20000 };
    const size_t blocks[] = { 1, 100, 256, 1000, 65536 };
    const sh_simd levels[] = { SH_SIMD_PORTABLE, SH_SIMD_AUTO };
    const int widths[] = { 1, 4, 12 };
    size_t si, bi;
    int k, f, wi, li, opt, tm;
    for (li = 0; li < 2; li++)
        for (f = 0; f < 4; f++)
            for (wi = 0; wi < 3; wi++)
                for (opt = 0; opt < 2; opt++)
                    for (tm = 0; tm < 2; tm++) {
                        sh_shingler sh;
                        if (!make(&sh, widths[wi], tm ? SH_TOKENS_PAD8 : SH_TOKENS_RABIN, opt ? SH_OPTION_A : SH_OPTION_B,
                                  flags[f], levels[li])) { CHECK(0); return; }
                        for (si = 0; si < sizeof sizes / sizeof *sizes; si++) {
                            size_t len, vocab = 2 + next() % (NW - 1);
                            char *t = text_of(sizes[si], vocab, &len);
                            for (k = 0; k < 5; k++) {
                                const sh_sketch_params p = params(kinds[k], k == 1 ? 6 : 4, k == 1 ? 20 : 0);
                                bi = next() % (sizeof blocks / sizeof *blocks);
                                compare(&sh, &p, (int)(next() & 1), (next() & 1) ? 6 : 0, t, len, blocks[bi], 0);
                            }
                            free(t);
                        }
                    }
}

/* MOD's floor: the modulus the whole document picks, though each block saw
 * fewer shingles (a chain 2^k * 3^j with a floor that walks it). */
static void the_mod_floor_walks_the_chain_as_the_document_grows(void)
{
    const uint64_t ms[] = { 1, 2, 7, 12, 64, 1000, 1u << 20 };
    const uint32_t floors[] = { 0, 1, 20, 100 };
    const size_t sizes[] = { 2, 50, 500, 5000, 60000 };
    sh_shingler sh;
    size_t mi, fi, si;
    CHECK(make(&sh, 5, SH_TOKENS_RABIN, SH_OPTION_B, SH_CANON_DEFAULT_FLAGS, SH_SIMD_AUTO));
    for (si = 0; si < 5; si++) {
        size_t len;
        char *t = text_of(sizes[si], NW, &len);
        for (mi = 0; mi < 7; mi++)
            for (fi = 0; fi < 4; fi++) {
                const sh_sketch_params p = params(SH_SKETCH_MOD, ms[mi], floors[fi]);
                compare(&sh, &p, 0, 0, t, len, 256, 0);
                compare(&sh, &p, 0, 84, t, len, 65536, 0);
            }
        free(t);
    }
}

/* A block boundary at every position of a text: the same text behind 0 to
 * 300 tokens of another, cut every 256 tokens (the first block the token
 * array makes; the block scanner cuts up to 63 tokens earlier). */
static void a_cut_at_every_position_changes_nothing(void)
{
    const sh_sketch_params p = params(SH_SKETCH_MOD, 3, 0), pm = params(SH_SKETCH_MIN, 0, 0);
    sh_shingler sh, sp;
    size_t len, k;
    char *body = text_of(1500, 12, &len), *t = (char *)malloc(len + 300 * 3 + 1);
    CHECK(make(&sh, 7, SH_TOKENS_RABIN, SH_OPTION_B, SH_CANON_DEFAULT_FLAGS, SH_SIMD_AUTO));
    CHECK(make(&sp, 7, SH_TOKENS_RABIN, SH_OPTION_B, SH_CANON_DEFAULT_FLAGS, SH_SIMD_PORTABLE));
    for (k = 0; k <= 300; k++) {
        size_t i, l = 0;
        for (i = 0; i < k; i++) { t[l++] = 'q'; t[l++] = ' '; }
        memcpy(t + l, body, len);
        l += len;
        compare(&sh, &p, 0, 3, t, l, 256, 0);
        compare(&sp, &pm, 1, 0, t, l, 256, 0);
    }
    free(body);
    free(t);
}

/* One repeated word (few distinct shingles, the MOD candidates made distinct
 * as they pile up) and the max_shingles limit on either side of it. */
static void repeats_and_the_limit(void)
{
    sh_shingler sh;
    const size_t n = 300000;
    char *t = (char *)malloc(2 * n);
    size_t i;
    int k;
    for (i = 0; i < n; i++) { t[2 * i] = 'a'; t[2 * i + 1] = ' '; }
    CHECK(make(&sh, 10, SH_TOKENS_RABIN, SH_OPTION_B, SH_CANON_DEFAULT_FLAGS, SH_SIMD_AUTO));
    for (k = 0; k < 2; k++) {
        const sh_sketch_params p = params(k ? SH_SKETCH_MIN : SH_SKETCH_MOD, 1, 0);
        compare(&sh, &p, 0, 4, t, 2 * n, 1000, 0);
        compare(&sh, &p, 1, 0, t, 2 * n, 65536, 0);
        compare(&sh, &p, 0, 0, t, 2 * n, 1000, n - 9);      /* exactly the limit: kept */
        compare(&sh, &p, 0, 0, t, 2 * n, 1000, n - 10);     /* one shingle over: refused */
        compare(&sh, &p, 0, 0, t, 2 * n, 65536, 1000);
    }
    free(t);
}

/* The block path's tokens stay within a block: tokens and ids do not grow
 * with the document. */
static void memory_of_tokens_is_a_block(void)
{
    sh_shingler sh;
    sh_work w;
    sh_stream st;
    sh_doc_out o;
    sh_error err;
    size_t len;
    char *t = text_of(400000, NW, &len);
    const sh_sketch_params p = params(SH_SKETCH_MOD, 25, 20);
    memset(&w, 0, sizeof w); memset(&st, 0, sizeof st); memset(&o, 0, sizeof o);
    CHECK(make(&sh, 10, SH_TOKENS_RABIN, SH_OPTION_B, SH_CANON_DEFAULT_FLAGS, SH_SIMD_AUTO));
    CHECK(sh_doc_sketch_stream(&sh, &w, &st, &p, 0, 0, t, len, t, len, 4096, &o, &err) == SH_OK);
    CHECK(o.n_tokens >= 390000);
    CHECK(w.toks.cap <= 8192 + 64);
    CHECK(w.cap_ids <= 8192 + 64 && w.cap_fps <= 8192 + 64);
    /* the MOD sample: about n / 25 candidates, not n */
    CHECK(st.keep_cap <= 2 * 400000 / 25 + 65536 + 8192);
    sh_doc_release(&o);
    sh_work_free(&w);
    sh_stream_free(&st);
    /* a full set of more values than a set keeps is made in its buffer */
    compare(&sh, &p, 1, 0, t, len, 4096, 0);
    free(t);
}

int main(void)
{
    RUN(blocks_give_the_whole_documents_sketch);
    RUN(the_mod_floor_walks_the_chain_as_the_document_grows);
    RUN(a_cut_at_every_position_changes_nothing);
    RUN(repeats_and_the_limit);
    RUN(memory_of_tokens_is_a_block);
    printf("(%ld documents compared)\n", compared);
    return TEST_END();
}
