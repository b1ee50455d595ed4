/* Shingling and sketches: fast paths against slow obvious ones, the padded
 * 80-byte window vectors of docs/vectors.md, serialization robustness. */
#include <stdlib.h>
#include "../sketch.h"
#include "test.h"
#include <time.h>

static sh_shingler *make(int w, int k, uint64_t poly, sh_token_mode tm, sh_option opt)
{
    static sh_shingler s; /* large; one at a time in this single-threaded test */
    sh_shingler_config c;
    sh_error err;
    memset(&c, 0, sizeof c);
    c.w = w; c.k = k; c.seed = 12345; c.poly = poly; c.tokens = tm; c.option = opt;
    c.canon.flags = SH_CANON_DEFAULT_FLAGS;
    if (sh_shingler_init(&s, &c, &err) != SH_OK) { fprintf(stderr, "%s\n", err.msg); return NULL; }
    return &s;
}

static void padded_window_matches_the_80_byte_vectors(void)
{
    const char *text = "the quick brown fox jumps over the lazy dog and";
    const uint64_t poly[] = { 0xcaefbcde6b4238b1ULL, 0x6b5d667075192889ULL, 0x39ULL };
    const int k[] = { 64, 64, 40 };
    const uint64_t want[] = { 0x16c77356d8a04da3ULL, 0x59a08c5b60b41b42ULL, 0x273bfff875ULL };
    int i;
    for (i = 0; i < 3; i++) {
        sh_shingler *s = make(10, k[i], poly[i], SH_TOKENS_PAD8, SH_OPTION_B);
        sh_work w;
        sh_error err;
        memset(&w, 0, sizeof w);
        CHECK(s != NULL);
        if (!s) return;
        CHECK(sh_shingle_text(s, &w, text, strlen(text), &err) == SH_OK);
        CHECK(w.n_ids == 10);
        CHECK(w.n_fps == 1);
        CHECK_EQ_U64(w.fps[0], want[i]);
        sh_work_free(&w);
    }
}

/* Every position of the slide equals fingerprinting its 8w bytes from scratch. */
static void sliding_window_equals_from_scratch_everywhere(void)
{
    const int ks[] = { 64, 40, 16 }, ws[] = { 1, 2, 4, 10, 33 };
    uint64_t st = 1;
    int a, b, t;
    int hw;
    for (hw = 0; hw < 2; hw++) /* the carry-less multiply where there is one, and the tables */
    for (a = 0; a < 3; a++)
        for (b = 0; b < 5; b++) {
            sh_shingler *s = make(ws[b], ks[a], 0, SH_TOKENS_RABIN, SH_OPTION_B);
            if (!hw) s->hw = 0;
            sh_work w;
            sh_error err;
            memset(&w, 0, sizeof w);
            for (t = 0; t < 5; t++) {
                size_t n = (size_t)(sh_splitmix_next(&st) % 600), i;
                sh_work_reserve_ids(&w, n);
                for (i = 0; i < n; i++) w.ids[i] = sh_splitmix_next(&st);
                w.n_ids = n;
                CHECK(sh_shingle_ids(s, &w, &err) == SH_OK);
                if (n == 0) { CHECK(w.n_fps == 0); continue; }
                if (n < (size_t)ws[b]) {
                    CHECK(w.n_fps == 1);
                    CHECK_EQ_U64(w.fps[0], sh_window_slow(s, w.ids, n));
                    continue;
                }
                CHECK(w.n_fps == n - (size_t)ws[b] + 1);
                for (i = 0; i < w.n_fps; i++)
                    if (w.fps[i] != sh_window_slow(s, w.ids + i, (size_t)ws[b])) {
                        CHECK(!"slide differs from scratch");
                        break;
                    }
            }
            sh_work_free(&w);
        }
}

/* The vector windows at their edges, at every level: nf = n - w + 1 from
 * the four chains' threshold (64) on through every remainder mod 4, and a
 * few longer; the ids in a heap block of exactly n (so that AddressSanitizer
 * sees a read past the last id: each step reads two ids at once, i - 1 and i
 * as it leaves, i + w - 2 and i + w - 1 as it enters). Every fingerprint
 * equals the one from scratch. */
static void vector_window_edges_equal_from_scratch(void)
{
    const int ws[] = { 1, 2, 3, 10, 33 };
    const size_t extra[] = { 0, 1, 2, 3, 4, 5, 6, 7, 8, 61, 62, 63, 64, 301, 302, 303, 304 };
    uint64_t st = 7;
    int b, lv;
    size_t e;
    for (lv = SH_SIMD_PORTABLE; lv < SH_SIMD_LEVELS; lv++)
        for (b = 0; b < 5; b++) {
            sh_shingler_config c;
            sh_error err;
            static sh_shingler s;
            memset(&c, 0, sizeof c);
            c.w = ws[b]; c.k = 64; c.seed = 99; c.tokens = SH_TOKENS_RABIN; c.option = SH_OPTION_B;
            c.canon.flags = SH_CANON_DEFAULT_FLAGS;
            c.simd = (sh_simd)lv;
            CHECK(sh_shingler_init(&s, &c, &err) == SH_OK);
            for (e = 0; e < sizeof extra / sizeof extra[0]; e++) {
                const size_t n = 64 + extra[e] + (size_t)ws[b] - 1;
                sh_work w;
                size_t i;
                long bad = 0;
                memset(&w, 0, sizeof w);
                w.ids = (uint64_t *)malloc(n * sizeof *w.ids);
                CHECK(w.ids != NULL);
                if (!w.ids) return;
                w.cap_ids = n;
                for (i = 0; i < n; i++) w.ids[i] = sh_splitmix_next(&st);
                w.n_ids = n;
                CHECK(sh_shingle_ids(&s, &w, &err) == SH_OK);
                CHECK(w.n_fps == n - (size_t)ws[b] + 1);
                for (i = 0; i < w.n_fps; i++) bad += w.fps[i] != sh_window_slow(&s, w.ids + i, (size_t)ws[b]);
                if (bad) fprintf(stderr, "window differs: level %s, w %d, %zu ids, %ld fingerprints\n",
                                 sh_simd_name(s.level), ws[b], n, bad);
                CHECK_EQ_U64(bad, 0);
                sh_work_free(&w);
            }
        }
}

/* Token ids and windows through sh_shingle_text at the processor's best
 * level equal the portable level's, for texts of token counts around where
 * ids and window share one loop on AVX2 machines (shingler.c
 * ids_window_avx2: each of four stretches q = (n - w + 1) / 4 long needs
 * q >= 2 w + 160, groups of 32 steps, ids made 64 steps ahead): q from
 * below that bound through more than two groups past it, every remainder
 * n - w + 1 - 4 q, tokens of 1 to 8 bytes, of 9 to 16 and longer (the
 * ones made right after their group) at random places. */
static void fused_ids_and_window_equal_the_portable_level(void)
{
    const int ws[] = { 1, 2, 10, 33 };
    static sh_shingler fast, slow;
    uint64_t st = 2024;
    size_t b;
    for (b = 0; b < sizeof ws / sizeof *ws; b++) {
        const size_t W = (size_t)ws[b], qmin = 2 * W + 160;
        sh_shingler_config c;
        sh_error err;
        size_t q, r;
        memset(&c, 0, sizeof c);
        c.w = ws[b]; c.k = 64; c.seed = 77; c.tokens = SH_TOKENS_RABIN; c.option = SH_OPTION_B;
        c.canon.flags = SH_CANON_DEFAULT_FLAGS;
        c.simd = SH_SIMD_AUTO;
        CHECK(sh_shingler_init(&fast, &c, &err) == SH_OK);
        c.simd = SH_SIMD_PORTABLE;
        CHECK(sh_shingler_init(&slow, &c, &err) == SH_OK);
        for (q = qmin - 2; q < qmin + 70; q++)
            for (r = 0; r < 4; r++) {
                const size_t n = 4 * q + r + W - 1;
                char *text = (char *)malloc(n * 41 + 1);
                size_t len = 0, i, j, bad = 0;
                sh_work a, z;
                if (!text) { CHECK(text != NULL); return; }
                for (i = 0; i < n; i++) {
                    const uint64_t x = sh_splitmix_next(&st);
                    const size_t tl = x % 10 < 7 ? 1 + (x >> 8) % 8 : x % 10 < 9 ? 9 + (x >> 8) % 8 : 17 + (x >> 8) % 24;
                    for (j = 0; j < tl; j++) text[len++] = (char)('a' + (x >> (16 + j % 40)) % 26);
                    text[len++] = ' ';
                }
                memset(&a, 0, sizeof a);
                memset(&z, 0, sizeof z);
                CHECK(sh_shingle_text(&fast, &a, text, len, &err) == SH_OK);
                CHECK(sh_shingle_text(&slow, &z, text, len, &err) == SH_OK);
                CHECK_EQ_U64(a.n_ids, n);
                CHECK_EQ_U64(a.n_fps, z.n_fps);
                if (a.n_ids == z.n_ids && a.n_fps == z.n_fps) {
                    for (i = 0; i < n; i++) bad += a.ids[i] != z.ids[i];
                    for (i = 0; i < a.n_fps; i++) bad += a.fps[i] != z.fps[i];
                }
                if (bad) fprintf(stderr, "  w %zu, %zu tokens (q %zu): %zu ids or fingerprints differ\n", W, n, q, bad);
                CHECK_EQ_U64(bad, 0);
                sh_work_free(&a);
                sh_work_free(&z);
                free(text);
            }
    }
}

/* Token ids 8 bytes at a time equal the byte-at-a-time AUG under P_id. */
static void text_ids_equal_bytewise_fingerprints_with_and_without_clmul(void)
{
    /* tokens of every length from 1 to 40 and some after them, through
     * sh_shingle_text's fast paths (the last ones take the careful path) */
    char text[2000];
    size_t len = 0, ntok = 0;
    int hw, L, j;
    for (L = 1; L <= 40; L++, ntok++) {
        for (j = 0; j < L; j++) text[len++] = (char)('a' + (L + j) % 26);
        text[len++] = ' ';
    }
    for (L = 0; L < 5; L++, ntok++) { text[len++] = 'z'; text[len++] = ' '; }
    text[len] = 0;
    for (hw = 0; hw < 2; hw++) {
        sh_shingler *s = make(3, 64, 0, SH_TOKENS_RABIN, SH_OPTION_B);
        sh_work w;
        sh_error err;
        size_t i;
        if (!hw) s->hw = 0;
        memset(&w, 0, sizeof w);
        CHECK(sh_shingle_text(s, &w, text, strlen(text), &err) == SH_OK);
        CHECK(w.n_ids == ntok);
        for (i = 0; i < w.n_ids; i++)
            CHECK_EQ_U64(w.ids[i], sh_rabin_aug(&s->id, w.toks.text + w.toks.tok[i].off, w.toks.tok[i].len));
        sh_work_free(&w);
    }
}

static void token_ids_equal_bytewise_fingerprints(void)
{
    sh_shingler *s = make(10, 64, 0, SH_TOKENS_RABIN, SH_OPTION_B);
    uint64_t st = 99, differ = 0;
    unsigned char buf[64];
    int t;
    size_t i, n;
    for (t = 0; t < 2000; t++) {
        n = (size_t)(sh_splitmix_next(&st) % 41);
        for (i = 0; i < n; i++) buf[i] = (unsigned char)sh_splitmix_next(&st);
        differ += sh_token_id(s, buf, n) != sh_rabin_aug(&s->id, buf, n);
    }
    CHECK_EQ_U64(differ, 0); /* token ids are the bytewise AUG fingerprints */
}

/* Option A: the label makes repeated shingles distinct. */
static void option_a_labels_repeated_shingles(void)
{
    sh_shingler *s = make(4, 64, 0, SH_TOKENS_RABIN, SH_OPTION_A);
    const char *text = "a rose is a rose is a rose";
    sh_sketch_params p;
    sh_sketch *sk;
    sh_work w;
    sh_error err;
    memset(&w, 0, sizeof w);
    memset(&p, 0, sizeof p);
    p.kind = SH_SKETCH_FULL;
    CHECK(sh_shingle_text(s, &w, text, strlen(text), &err) == SH_OK);
    CHECK(w.n_fps == 5);
    CHECK(sh_sketch_build(s, &w, &p, 0, w.toks.n, &sk, &err) == SH_OK);
    CHECK(sk->n_shingles == 5 && sk->n == 5);
    free(sk);
    s = make(4, 64, 0, SH_TOKENS_RABIN, SH_OPTION_B);
    CHECK(sh_shingle_text(s, &w, text, strlen(text), &err) == SH_OK);
    CHECK(sh_sketch_build(s, &w, &p, 0, w.toks.n, &sk, &err) == SH_OK);
    CHECK(sk->n_shingles == 3 && sk->n == 3);
    free(sk);
    sh_work_free(&w);
}

static sh_sketch *sketch_of(const char *text, int kind, uint32_t sz, uint64_t m)
{
    sh_shingler *s = make(3, 64, 0, SH_TOKENS_RABIN, SH_OPTION_B);
    sh_sketch_params p;
    sh_sketch *sk = NULL;
    sh_work w;
    sh_error err;
    memset(&w, 0, sizeof w);
    memset(&p, 0, sizeof p);
    p.kind = (uint8_t)kind; p.s = sz; p.m = m;
    if (sh_shingle_text(s, &w, text, strlen(text), &err) == SH_OK)
        sh_sketch_build(s, &w, &p, 0, w.toks.n, &sk, &err);
    sh_work_free(&w);
    return sk;
}

/* A text of n words drawn from a vocabulary of vocab (repeats included). */
static char *random_text(size_t n, unsigned vocab, uint64_t *st)
{
    char *text = (char *)malloc(n * 12 + 1);
    size_t i, len = 0;
    text[0] = 0;
    for (i = 0; i < n; i++) len += (size_t)sprintf(text + len, "w%u ", (unsigned)(sh_splitmix_next(st) % vocab));
    return text;
}

/* The sketch of kind (s, m, floor) of text, through the engine's own path. */
static sh_sketch *build(sh_shingler *s, const char *text, int kind, uint32_t sz, uint64_t m, uint32_t floor,
                        sh_work *w)
{
    sh_sketch_params p;
    sh_sketch *sk = NULL;
    sh_error err;
    memset(&p, 0, sizeof p);
    p.kind = (uint8_t)kind; p.s = sz; p.m = m; p.floor = floor;
    if (sh_shingle_text(s, w, text, strlen(text), &err) != SH_OK) return NULL;
    if (sh_sketch_build(s, w, &p, 0, w->toks.n, &sk, &err) != SH_OK) return NULL;
    return sk;
}

/* MIN_s (Broder 1997, section 3): the s smallest values of the full set of
 * (permuted) shingles, all of them when there are fewer; at every size
 * around s, for s from 1 to 200. */
static void min_s_is_the_s_smallest_of_the_full_set(void)
{
    static const size_t words[] = { 0, 1, 5, 48, 49, 50, 51, 52, 198, 200, 209, 210, 211, 1000, 6000 };
    static const uint32_t sizes[] = { 1, 2, 50, 200 };
    static const sh_option options[] = { SH_OPTION_B, SH_OPTION_A };
    uint64_t st = 11;
    size_t a, b, o, bad = 0;
    sh_work w;
    memset(&w, 0, sizeof w);
    /* option B has its own one-pass path (min_sketch); option A, and a full
     * sketch narrowed by sh_sketch_select, take the general one */
    for (o = 0; o < sizeof options / sizeof *options; o++) {
        sh_shingler *s = make(10, 64, 0, SH_TOKENS_RABIN, options[o]);
        for (a = 0; a < sizeof words / sizeof *words; a++) {
            char *text = random_text(words[a], o ? 50 : 100000, &st); /* option A: repeated shingles */
            sh_sketch *full = build(s, text, SH_SKETCH_FULL, 0, 0, 0, &w);
            CHECK(full != NULL);
            for (b = 0; full && b < sizeof sizes / sizeof *sizes; b++) {
                sh_sketch *min = build(s, text, SH_SKETCH_MIN, sizes[b], 0, 0, &w), *sel = NULL;
                sh_sketch_params p;
                sh_error err;
                size_t want = full->n < sizes[b] ? full->n : sizes[b];
                memset(&p, 0, sizeof p);
                p.kind = SH_SKETCH_MIN; p.s = sizes[b];
                if (!min || min->n != want || memcmp(min->v, full->v, want * 8) != 0) {
                    bad++;
                    fprintf(stderr, "  option %c, %zu words, s = %u: %zu values, want the %zu smallest of %zu\n",
                            o ? 'A' : 'B', words[a], (unsigned)sizes[b], min ? min->n : 0, want, full->n);
                }
                if (sh_sketch_select(full, &p, &sel, &err) != SH_OK || sel->n != want || memcmp(sel->v, full->v, want * 8) != 0) {
                    bad++;
                    fprintf(stderr, "  option %c, %zu words: the full set narrowed to MIN_%u has %zu values, want %zu\n",
                            o ? 'A' : 'B', words[a], (unsigned)sizes[b], sel ? sel->n : 0, want);
                }
                free(sel);
                free(min);
            }
            free(full);
            free(text);
        }
    }
    CHECK_EQ_U64(bad, 0);
    sh_work_free(&w);
}

static uint64_t smallest_factor_slowly(uint64_t m)
{
    uint64_t d;
    for (d = 2; d < m; d++) if (m % d == 0) return d;
    return m;
}

/* The default sketch, MOD_m of a text under option B with a floor (its own
 * one-pass path, mod_sketch), against the obvious computation: the modulus
 * steps down m's chain (dividing by the smallest prime factor) while the
 * document's shingle positions / modulus < floor; the sketch is every
 * distinct permuted shingle that is 0 mod that modulus, ascending. And
 * against the general path (a full sketch narrowed by sh_sketch_select). */
static void default_mod_path_equals_the_obvious_computation(void)
{
    static const size_t words[] = { 0, 1, 9, 10, 11, 40, 49, 50, 51, 209, 210, 211, 1000, 5000 };
    static const uint64_t mods[] = { 25, 24, 7, 1 };
    static const uint32_t floors[] = { 0, 8 };
    sh_shingler *s = make(10, 64, 0, SH_TOKENS_RABIN, SH_OPTION_B);
    uint64_t st = 21;
    size_t a, b, c, bad = 0, i, j;
    sh_work w;
    memset(&w, 0, sizeof w);
    for (a = 0; a < sizeof words / sizeof *words; a++) {
        char *text = random_text(words[a], a % 2 ? 50 : 100000, &st); /* odd ones repeat shingles */
        for (b = 0; b < sizeof mods / sizeof *mods; b++)
            for (c = 0; c < sizeof floors / sizeof *floors; c++) {
                sh_sketch *mod = build(s, text, SH_SKETCH_MOD, 0, mods[b], floors[c], &w), *full, *sel = NULL;
                sh_sketch_params p;
                sh_error err;
                uint64_t m = mods[b], pos, *want;
                size_t nw = 0;
                if (!mod) { bad++; continue; }
                pos = w.n_fps; /* shingle positions: one for a text shorter than w */
                while (floors[c] && m > 1 && pos / m < floors[c]) m /= smallest_factor_slowly(m);
                want = (uint64_t *)malloc((w.n_fps + 1) * 8);
                for (i = 0; i < w.n_fps; i++) {
                    uint64_t x = sh_permute(s->c.seed, w.fps[i]);
                    int seen = 0;
                    if (x % m != 0) continue;
                    for (j = 0; j < nw; j++) seen |= want[j] == x;
                    if (!seen) want[nw++] = x;
                }
                for (i = 1; i < nw; i++) /* insertion sort: few values */
                    for (j = i; j > 0 && want[j - 1] > want[j]; j--) { uint64_t t = want[j]; want[j] = want[j - 1]; want[j - 1] = t; }
                if (mod->p.m != m || mod->n != nw || memcmp(mod->v, want, nw * 8) != 0 || mod->n_shingles != pos) {
                    bad++;
                    fprintf(stderr, "  %zu words, MOD_%llu floor %u: modulus %llu, %zu values; want %llu, %zu\n", words[a],
                            (unsigned long long)mods[b], (unsigned)floors[c], (unsigned long long)mod->p.m, mod->n,
                            (unsigned long long)m, nw);
                }
                /* the general path: the full set narrowed to MOD_m */
                full = build(s, text, SH_SKETCH_FULL, 0, 0, 0, &w);
                memset(&p, 0, sizeof p);
                p.kind = SH_SKETCH_MOD; p.m = mods[b]; p.floor = floors[c];
                if (!full || sh_sketch_select(full, &p, &sel, &err) != SH_OK || sel->p.m != m || sel->n != nw ||
                    memcmp(sel->v, want, nw * 8) != 0)
                    bad++;
                free(sel);
                free(full);
                free(want);
                free(mod);
            }
        free(text);
    }
    CHECK_EQ_U64(bad, 0);
    sh_work_free(&w);
}

static uint64_t inverse_odd(uint64_t c) /* c * inverse = 1 mod 2^64, Newton's iteration */
{
    uint64_t inv = c;
    int i;
    for (i = 0; i < 6; i++) inv *= 2 - c * inv;
    return inv;
}

/* The fingerprint whose permuted value (sh_permute: sh_mix(fp ^ seed)) is x:
 * sh_mix undone step by step. */
static uint64_t unpermute(uint64_t seed, uint64_t x)
{
    x ^= (x >> 31) ^ (x >> 62);
    x *= inverse_odd(0x94d049bb133111ebULL);
    x ^= (x >> 27) ^ (x >> 54);
    x *= inverse_odd(0xbf58476d1ce4e5b9ULL);
    x ^= (x >> 30) ^ (x >> 60);
    x -= 0x9e3779b97f4a7c15ULL;
    return x ^ seed;
}

/* A work whose n fingerprints permute to xs[0..n) (sh_sketch_build's input),
 * at level lv of s. */
static void work_of_permuted(sh_shingler *s, int lv, const uint64_t *xs, size_t n, sh_work *w)
{
    size_t i;
    memset(w, 0, sizeof *w);
    s->level = (sh_simd)lv;
    w->fps = (uint64_t *)malloc(n * sizeof *w->fps);
    w->cap_fps = w->n_fps = n;
    for (i = 0; i < n; i++) w->fps[i] = unpermute(s->c.seed, xs[i]);
}

/* MOD_m at the edges of the 64-bit range, where a divisibility test by
 * multiplication (Granlund and Montgomery) can be off by one: 0, m, the
 * largest multiple of m and its neighbours, 2^64 - 1. Both paths (the
 * default one-pass MOD_m of a text, and a full set narrowed to MOD_m) keep
 * exactly the values that are 0 mod m. */
static void mod_m_keeps_exactly_the_multiples_at_the_edges_of_the_range(void)
{
    static const uint64_t mods[] = { 25, 24, 7, 3, 2, 1, 1000003, 0x8000000000000001ULL };
    sh_shingler *s = make(10, 64, 0, SH_TOKENS_RABIN, SH_OPTION_B);
    const sh_simd best = s->level;
    size_t a, i, j, bad = 0;
    int lv;
    /* the one-pass path at every level this processor has, the portable
     * loop (the reference) included: 13 values take an 8-wide loop and its
     * tail at the wide levels */
    for (lv = SH_SIMD_PORTABLE; lv <= (int)best; lv++)
    for (a = 0; a < sizeof mods / sizeof *mods; a++) {
        const uint64_t m = mods[a], top = UINT64_MAX / m * m;
        const uint64_t xs[] = { 0, 1, m - 1, m, m + 1, 2 * m, top - 1, top, top + 1, UINT64_MAX - 1, UINT64_MAX,
                                top - m, top / 2 - top / 2 % m };
        const size_t n = sizeof xs / sizeof *xs;
        uint64_t want[sizeof xs / sizeof *xs];
        size_t nw = 0;
        int path;
        for (i = 0; i < n; i++) {
            int seen = 0;
            if (xs[i] % m != 0) continue;
            for (j = 0; j < nw; j++) seen |= want[j] == xs[i];
            if (!seen) want[nw++] = xs[i];
        }
        for (i = 1; i < nw; i++)
            for (j = i; j > 0 && want[j - 1] > want[j]; j--) { uint64_t t = want[j]; want[j] = want[j - 1]; want[j - 1] = t; }
        for (path = 0; path < 2; path++) {
            sh_work w;
            sh_sketch_params p;
            sh_sketch *sk = NULL, *full = NULL;
            sh_error err;
            memset(&p, 0, sizeof p);
            work_of_permuted(s, lv, xs, n, &w);
            p.kind = path ? SH_SKETCH_FULL : SH_SKETCH_MOD;
            p.m = m;
            if (sh_sketch_build(s, &w, &p, 0, n + 9, path ? &full : &sk, &err) != SH_OK) { bad++; sh_work_free(&w); continue; }
            if (path) {
                p.kind = SH_SKETCH_MOD;
                if (sh_sketch_select(full, &p, &sk, &err) != SH_OK) sk = NULL;
                free(full);
            }
            if (!sk || sk->n != nw || memcmp(sk->v, want, nw * 8) != 0) {
                bad++;
                fprintf(stderr, "  MOD_%llu (%s path, level %d): %zu values, want %zu\n", (unsigned long long)m,
                        path ? "full set" : "one-pass", lv, sk ? sk->n : 0, nw);
            }
            free(sk);
            sh_work_free(&w);
        }
    }
    s->level = best;
    CHECK_EQ_U64(bad, 0);
}

static int cmp_u64(const void *a, const void *b)
{
    const uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* MOD_m's kept values put in order without repeats as a sort does, at
 * every level: by ordered_min's table up to 32,768 kept (sketch.c), past it
 * by the sort, and by the sort again when the table gives up on values
 * crowding a few slots. Kept counts at the table's edges (1, 2, 63, 64, 65,
 * 32,768, 32,769), values spread over the range or crowded at its bottom or
 * top, with repeats. */
static void mod_m_orders_kept_values_as_a_sort_does(void)
{
    static const size_t counts[] = { 1, 2, 63, 64, 65, 1000, 32768, 32769 };
    static const uint64_t mods[] = { 1, 25 };
    sh_shingler *s = make(10, 64, 0, SH_TOKENS_RABIN, SH_OPTION_B);
    const sh_simd best = s->level;
    size_t a, c, i, bad = 0;
    int lv, shape;
    for (lv = SH_SIMD_PORTABLE; lv <= (int)best; lv++)
    for (a = 0; a < sizeof mods / sizeof *mods; a++)
    for (c = 0; c < sizeof counts / sizeof *counts; c++)
    for (shape = 0; shape < 3; shape++) {
        const uint64_t m = mods[a], top = UINT64_MAX / m * m;
        const size_t n = counts[c];
        uint64_t *xs = (uint64_t *)malloc(n * sizeof *xs), *want = (uint64_t *)malloc(n * sizeof *want);
        uint64_t r = 0x5eed + n + (uint64_t)shape;
        size_t nw = 0;
        sh_work w;
        sh_sketch_params p;
        sh_sketch *sk = NULL;
        sh_error err;
        for (i = 0; i < n; i++) {
            /* every third value repeats an earlier one */
            if (i > 0 && i % 3 == 0) { xs[i] = xs[sh_splitmix_next(&r) % i]; continue; }
            if (shape == 0) xs[i] = sh_splitmix_next(&r) / m * m;   /* spread */
            else if (shape == 1) xs[i] = (uint64_t)i * m;            /* crowded at 0 */
            else xs[i] = top - (uint64_t)i * m;                      /* crowded at the top */
        }
        memcpy(want, xs, n * sizeof *xs);
        qsort(want, n, sizeof *want, cmp_u64);
        for (i = 0; i < n; i++) if (nw == 0 || want[i] != want[nw - 1]) want[nw++] = want[i];
        memset(&p, 0, sizeof p);
        work_of_permuted(s, lv, xs, n, &w);
        p.kind = SH_SKETCH_MOD;
        p.m = m;
        if (sh_sketch_build(s, &w, &p, 0, n + 9, &sk, &err) != SH_OK || sk->n != nw ||
            memcmp(sk->v, want, nw * 8) != 0) {
            bad++;
            fprintf(stderr, "  MOD_%llu, %zu values, shape %d, level %d: %zu values, want %zu\n",
                    (unsigned long long)m, n, shape, lv, sk ? sk->n : 0, nw);
        }
        free(sk);
        sh_work_free(&w);
        free(xs);
        free(want);
    }
    s->level = best;
    CHECK_EQ_U64(bad, 0);
}

/* A reader rejects every truncation and every single-bit flip, never crashes. */
static void serialization_round_trips_and_rejects_damage(void)
{
    sh_sketch *a = sketch_of("one two three four five six seven eight nine ten eleven twelve", SH_SKETCH_MIN, 5, 0), *b;
    size_t n, i;
    unsigned char *buf;
    sh_error err;
    CHECK(a != NULL);
    if (!a) return;
    n = sh_sketch_serialized_size(a);
    buf = (unsigned char *)malloc(n);
    sh_sketch_serialize(a, buf);
    CHECK(sh_sketch_deserialize(buf, n, &b, &err) == SH_OK);
    CHECK(b && b->n == a->n && memcmp(b->v, a->v, a->n * 8) == 0 && memcmp(&a->p, &b->p, sizeof a->p) == 0);
    free(b);
    for (i = 0; i < n; i++) {
        CHECK(sh_sketch_deserialize(buf, i, &b, &err) == SH_EFORMAT);
        CHECK(b == NULL);
    }
    for (i = 0; i < n * 8; i++) {
        buf[i / 8] ^= (unsigned char)(1u << (i % 8));
        if (sh_sketch_deserialize(buf, n, &b, &err) != SH_EFORMAT) { CHECK(!"bit flip accepted"); free(b); }
        buf[i / 8] ^= (unsigned char)(1u << (i % 8));
    }
    CHECK(sh_sketch_deserialize((const unsigned char *)"GIF89a", 6, &b, &err) == SH_EFORMAT);
    CHECK(strstr(err.msg, "magic") != NULL);
    free(buf);
    free(a);
}

static void incompatible_sketches_are_refused(void)
{
    sh_sketch *a = sketch_of("a b c d e f g", SH_SKETCH_MIN, 10, 0);
    sh_sketch *b = sketch_of("a b c d e f g", SH_SKETCH_MOD, 0, 4);
    sh_estimate e;
    sh_error err;
    CHECK(sh_sketch_estimate(a, b, &e, &err) == SH_EMISMATCH);
    CHECK(strstr(err.msg, "min") && strstr(err.msg, "mod"));
    b->p.kind = SH_SKETCH_MIN; b->p.s = 10; b->p.m = 0;
    b->p.seed ^= 1;
    CHECK(sh_sketch_estimate(a, b, &e, &err) == SH_EMISMATCH);
    CHECK(strstr(err.msg, "seeds") != NULL);
    b->p.seed ^= 1;
    b->p.rules ^= 1;
    CHECK(sh_sketch_estimate(a, b, &e, &err) == SH_EMISMATCH);
    CHECK(strstr(err.msg, "canonicalization rules") != NULL);
    free(a);
    free(b);
}

/* Size classes: V_i reduced to V_j keeps exactly the values = 0 mod 2^j. */
static void size_class_reduction_filters_to_the_coarser_modulus(void)
{
    char *text = (char *)malloc(20000);
    size_t i, len = 0;
    sh_sketch *a, *r;
    sh_error err;
    uint64_t st = 5;
    for (i = 0; i < 2000; i++) len += (size_t)sprintf(text + len, "w%u ", (unsigned)(sh_splitmix_next(&st) % 100000));
    a = sketch_of(text, SH_SKETCH_CLASS, 0, 0);
    CHECK(a->p.cls == sh_size_class(a->n_shingles));
    CHECK(a->p.cls == 4); /* 1998 distinct shingles: 1998/100 = 19, floor(log2 19) = 4 */
    CHECK(a->n >= 60 && a->n <= 250);
    CHECK(sh_sketch_reduce(a, 6, &r, &err) == SH_OK);
    {
        size_t k = 0;
        for (i = 0; i < a->n; i++) k += (a->v[i] & 63) == 0;
        CHECK(r->n == k);
        for (i = 0; i < r->n; i++) CHECK((r->v[i] & 63) == 0);
    }
    free(r);
    CHECK(sh_sketch_reduce(a, 2, &r, &err) == SH_EINVAL && r == NULL);
    free(a);
    free(text);
    CHECK(sh_size_class(0) == 0 && sh_size_class(199) == 0 && sh_size_class(200) == 1 && sh_size_class(399) == 1 && sh_size_class(400) == 2);
}

/* max_shingles (issue 11): a document of exactly the limit is shingled, one
 * token more is SH_ELIMIT, and the token array never holds more than the
 * tokens the limit allows, also after a larger document grew it; the ids
 * and features paths refuse likewise. */
static void max_shingles_bounds_the_tokens_kept(void)
{
    sh_shingler *s = make(3, 64, 0, SH_TOKENS_RABIN, SH_OPTION_B);
    sh_work w;
    sh_error err;
    char big[4000];
    size_t i;
    memset(&w, 0, sizeof w);
    CHECK(s != NULL);
    if (!s) return;
    for (i = 0; i + 2 <= sizeof big - 1; i += 2) { big[i] = 'a'; big[i + 1] = ' '; }
    big[sizeof big - 1] = '\0';
    /* no limit: 1999 tokens, the array grows past them */
    CHECK(sh_shingle_text(s, &w, big, strlen(big), &err) == SH_OK);
    CHECK(w.toks.n == 1999 && w.toks.cap >= 1999);
    w.max_shingles = 5; /* w = 3: 7 tokens make 5 shingles */
    CHECK(sh_shingle_text(s, &w, "a b c d e f g", 13, &err) == SH_OK);
    CHECK(w.n_fps == 5);
    CHECK(w.toks.cap <= 7 + 64); /* the block scanner's slack */
    CHECK(sh_shingle_text(s, &w, "a b c d e f g h", 15, &err) == SH_ELIMIT);
    CHECK(strstr(err.msg, "more than 5 shingles") != NULL && strstr(err.msg, "--max-shingles") != NULL);
    CHECK(w.toks.cap <= 7 + 64); /* the block scanner's slack */
    CHECK(sh_shingle_text(s, &w, big, strlen(big), &err) == SH_ELIMIT);
    CHECK(w.toks.cap <= 7 + 64); /* the block scanner's slack */
    /* ids given by a caller (Lua tokens), and feature sets */
    CHECK(sh_work_ids(&w, 8) != NULL);
    for (i = 0; i < 8; i++) w.ids[i] = i + 1;
    CHECK(sh_shingle_ids(s, &w, &err) == SH_ELIMIT);
    w.n_ids = 7;
    CHECK(sh_shingle_ids(s, &w, &err) == SH_OK && w.n_fps == 5);
    w.n_ids = 6;
    CHECK(sh_shingle_features(&w, &err) == SH_ELIMIT);
    w.n_ids = 5;
    CHECK(sh_shingle_features(&w, &err) == SH_OK && w.n_fps == 5);
    sh_work_free(&w);
}

/* The chain walk of MOD_m: on a writer's chain it counts the steps; off it
 * (md not dividing m, or m above 2^32, where a writer never makes a chain)
 * it answers at once: a loaded modulus that is a prime near 2^64 took 2^32
 * trial divisions, seconds per comparison (found by fuzz_sketchfile). */
static void mod_steps_are_cheap_off_a_writers_chain(void)
{
    clock_t t0 = clock();
    CHECK(sh_mod_steps(25, 25) == 0);
    CHECK(sh_mod_steps(25, 5) == 1);
    CHECK(sh_mod_steps(25, 1) == 2);
    CHECK(sh_mod_steps(25, 3) == UINT32_MAX);
    CHECK(sh_mod_steps(12, 3) == 2);           /* 12 -> 6 -> 3 */
    CHECK(sh_mod_steps(12, 4) == UINT32_MAX);  /* 4 divides 12 but is not on its chain */
    CHECK(sh_mod_steps(4294967291ULL, 1) == 1); /* the largest prime below 2^32 */
    CHECK(sh_mod_steps(18446744073709551557ULL, 1) == UINT32_MAX); /* the largest prime below 2^64 */
    CHECK(sh_mod_steps(18446744073709551557ULL, 18446744073709551557ULL) == 0);
    CHECK((double)(clock() - t0) / CLOCKS_PER_SEC < 0.5);
}

/* A sorted set of n distinct values, each a multiple of m, drawn from a pool
 * small enough that two sets share many values. */
static sh_sketch *mod_set(uint64_t *st, size_t n, uint64_t m, uint64_t pool, int full)
{
    sh_sketch *x = (sh_sketch *)calloc(1, sizeof(sh_sketch) + (n + 1) * 8);
    size_t k = 0, i;
    x->p.kind = full ? SH_SKETCH_FULL : SH_SKETCH_MOD;
    x->p.m = full ? 0 : m;
    while (k < n) {
        uint64_t v = (sh_splitmix_next(st) % pool) * m;
        int dup = 0;
        for (i = 0; i < k && !dup; i++) dup = x->v[i] == v;
        if (!dup) x->v[k++] = v;
    }
    /* insertion sort: the sets are small */
    for (i = 1; i < k; i++) {
        uint64_t v = x->v[i];
        size_t j = i;
        while (j && x->v[j - 1] > v) { x->v[j] = x->v[j - 1]; j--; }
        x->v[j] = v;
    }
    x->n = k;
    x->n_shingles = k * (full ? 1 : m);
    return x;
}

/* The estimator's paths (the intersection of two sets of one modulus, one
 * side's multiples counted apart, the lookup for a 16x larger side, the
 * value-by-value merge) give the counts the obvious computation gives, and
 * the resemblance bound is never below the estimate: moduli of one chain
 * (25, 5, 1), sizes 0 to 400 and ratios past 16, values at 0 and near 2^64. */
static void estimate_paths_equal_the_obvious_counts(void)
{
    static const uint64_t ms[] = { 25, 5, 1 };
    static const size_t ns[] = { 0, 1, 2, 7, 25, 60, 200, 400 };
    uint64_t st = 11;
    int round;
    for (round = 0; round < 600; round++) {
        int full = round % 5 == 0;
        uint64_t ma = full ? 1 : ms[sh_splitmix_next(&st) % 3], mb = full ? 1 : ms[sh_splitmix_next(&st) % 3];
        size_t na = ns[sh_splitmix_next(&st) % 8], nb = ns[sh_splitmix_next(&st) % 8];
        uint64_t pool = 40 + sh_splitmix_next(&st) % 900, m, ca = 0, cb = 0, both = 0;
        sh_sketch *a, *b;
        sh_estimate e;
        sh_error err;
        size_t i, j;
        if (pool * 25 < na || pool * 25 < nb) continue;
        if (pool < na + 1 || pool < nb + 1) pool = (na > nb ? na : nb) + 5;
        a = mod_set(&st, na, ma, pool * (25 / ma), full);
        b = mod_set(&st, nb, mb, pool * (25 / mb), full);
        if (round % 7 == 0) {
            /* the top of the range: values that wrap a careless difference */
            for (i = 0; i < a->n; i++) a->v[i] = UINT64_MAX - (UINT64_MAX % (full ? 1 : ma)) - (a->n - 1 - i) * (full ? 1 : ma) * 3;
            for (i = 0; i < b->n; i++) b->v[i] = UINT64_MAX - (UINT64_MAX % (full ? 1 : mb)) - (b->n - 1 - i) * (full ? 1 : mb) * 2;
        }
        m = full ? 1 : (ma > mb ? ma : mb);
        for (i = 0; i < a->n; i++) ca += a->v[i] % m == 0;
        for (j = 0; j < b->n; j++) cb += b->v[j] % m == 0;
        for (i = 0; i < a->n; i++)
            for (j = 0; j < b->n; j++) both += a->v[i] == b->v[j] && a->v[i] % m == 0;
        CHECK(sh_sketch_estimate(a, b, &e, &err) == SH_OK);
        if (a->n && b->n) {
            CHECK_EQ_U64(e.both, both);
            CHECK_EQ_U64(e.sample, ca + cb - both);
            CHECK(e.resemblance == (ca + cb - both ? (double)both / (double)(ca + cb - both) : 0.0));
            CHECK(e.contain_ab == (ca ? (double)both / (double)ca : 0.0));
            CHECK(e.contain_ba == (cb ? (double)both / (double)cb : 0.0));
        } else {
            CHECK(e.resemblance == 0.0 && e.both == 0);
        }
        CHECK(sh_resemblance_bound(a, a->v, b, b->v) >= e.resemblance);
        if (full) CHECK(sh_resemblance_bound_sizes(a->n, b->n) >= e.resemblance);
        /* the values read where they are: the same estimate */
        {
            sh_estimate e2;
            sh_sketch ha = *a, hb = *b;
            CHECK(sh_sketch_estimate_at(&ha, a->v, &hb, b->v, &e2, &err) == SH_OK);
            CHECK(memcmp(&e, &e2, sizeof e) == 0);
        }
        free(a);
        free(b);
    }
}

/* A text cut after a separator near its middle and shingled on two threads
 * (sh_work.threads, core/shingler.c shingle_text_2) gives the tokens (their
 * offsets in the input and canonical bytes), ids and fingerprints of one
 * thread, on texts made to break it: every separator byte, UTF-8 of every
 * length, combining marks after a cut, bytes that are not UTF-8, '&' and '<',
 * digits and punctuation, under four canonicalizations (invalid UTF-8 read as
 * Latin-1, skipped, or an error, which must be the same error). */
static void two_threads_shingle_as_one(void)
{
    static const char *const pieces[] = { "word", "Straße", "naïve", "\xcc\x81", "e\xcc\x81", "日本語", "\xf0\x9f\x98\x80",
        " ", "\t", "\n", "\r\n", "\f", "\v", "\x01", "\x7f", "\x80", "\xff", "&amp;", "<p>", "12345", "3.14", "--", "!",
        "A", "Zz", "x" };
    static const unsigned flags[] = { SH_CANON_DEFAULT_FLAGS, SH_CANON_LOWER | SH_CANON_NUMBERS | SH_CANON_PUNCT,
                                      SH_CANON_FOLD, SH_CANON_DEFAULT_FLAGS };
    static const sh_utf8_mode modes[] = { SH_UTF8_LATIN1, SH_UTF8_SKIP, SH_UTF8_LATIN1, SH_UTF8_ERROR };
    uint64_t st = 77;
    size_t cfg, t, cuts = 0, errors = 0, bad = 0;
    char *text = (char *)malloc(40000);
    for (cfg = 0; cfg < 4; cfg++) {
        static sh_shingler s;
        sh_shingler_config c;
        sh_error err;
        memset(&c, 0, sizeof c);
        c.w = 4; c.k = 64; c.seed = 9; c.tokens = SH_TOKENS_RABIN; c.option = SH_OPTION_B;
        c.canon.flags = flags[cfg];
        c.canon.invalid = modes[cfg];
        CHECK(sh_shingler_init(&s, &c, &err) == SH_OK);
        for (t = 0; t < 400; t++) {
            sh_work one, two;
            sh_error e1, e2;
            sh_status s1, s2;
            size_t n = 0, want = 20 + (size_t)(sh_splitmix_next(&st) % 30000), i;
            while (n < want) {
                const char *p = pieces[sh_splitmix_next(&st) % (sizeof pieces / sizeof *pieces)];
                size_t len = strlen(p);
                if (t % 5 == 0 && (p[0] == ' ' || p[0] == '\t' || p[0] == '\n')) continue; /* some texts with few separators */
                memcpy(text + n, p, len);
                n += len;
            }
            if (t % 7 == 0) text[n / 2] = '\0'; /* a NUL at the middle: a separator too */
            memset(&one, 0, sizeof one);
            memset(&two, 0, sizeof two);
            two.threads = 2;
            two.par_min = 1;
            memset(&e1, 0, sizeof e1);
            memset(&e2, 0, sizeof e2);
            s1 = sh_shingle_text(&s, &one, text, n, &e1);
            s2 = sh_shingle_text(&s, &two, text, n, &e2);
            if (s1 != s2 || (s1 != SH_OK && strcmp(e1.msg, e2.msg) != 0)) bad++;
            else if (s1 != SH_OK) errors++;
            else {
                int same = sh_work_tokens(&one) == sh_work_tokens(&two) && one.n_ids == two.n_ids && one.n_fps == two.n_fps;
                for (i = 0; same && i < sh_work_tokens(&one); i++) {
                    const char *ab, *bb;
                    const unsigned char *ah, *bh;
                    sh_token a = sh_work_token(&one, i, &ab, &ah), b = sh_work_token(&two, i, &bb, &bh);
                    size_t first1, end1, first2, end2;
                    same = a.src_off == b.src_off && a.src_len == b.src_len && a.len == b.len && memcmp(ab, bb, a.len) == 0 &&
                           memcmp(ah, bh, SH_TOKEN_HEAD) == 0;
                    if (same && i < one.n_fps) { /* the source bytes of shingle i, as explain shows them */
                        sh_shingle_span(&s, &one, i, &first1, &end1);
                        sh_shingle_span(&s, &two, i, &first2, &end2);
                        same = first1 == first2 && end1 == end2;
                    }
                }
                same = same && memcmp(one.ids, two.ids, one.n_ids * 8) == 0 && memcmp(one.fps, two.fps, one.n_fps * 8) == 0;
                if (!same) bad++;
                cuts += two.split; /* the text was cut */
            }
            sh_work_free(&one);
            sh_work_free(&two);
        }
    }
    free(text);
    fprintf(stderr, "two threads: %zu texts cut, %zu errors alike, %zu differ\n", cuts, errors, bad);
    CHECK(bad == 0);
    CHECK(cuts > 1000);
    CHECK(errors > 0);
}

int main(void)
{
    RUN(padded_window_matches_the_80_byte_vectors);
    RUN(sliding_window_equals_from_scratch_everywhere);
    RUN(vector_window_edges_equal_from_scratch);
    RUN(fused_ids_and_window_equal_the_portable_level);
    RUN(token_ids_equal_bytewise_fingerprints);
    RUN(text_ids_equal_bytewise_fingerprints_with_and_without_clmul);
    RUN(option_a_labels_repeated_shingles);
    RUN(min_s_is_the_s_smallest_of_the_full_set);
    RUN(default_mod_path_equals_the_obvious_computation);
    RUN(mod_m_keeps_exactly_the_multiples_at_the_edges_of_the_range);
    RUN(mod_m_orders_kept_values_as_a_sort_does);
    RUN(serialization_round_trips_and_rejects_damage);
    RUN(incompatible_sketches_are_refused);
    RUN(size_class_reduction_filters_to_the_coarser_modulus);
    RUN(max_shingles_bounds_the_tokens_kept);
    RUN(mod_steps_are_cheap_off_a_writers_chain);
    RUN(estimate_paths_equal_the_obvious_counts);
    RUN(two_threads_shingle_as_one);
    return TEST_END();
}
