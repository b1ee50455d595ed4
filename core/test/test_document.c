/* One document, two paths (core/document.h): a text the C canonicalizer
 * tokenized and the same tokens given as a list (as the Lua binding gives
 * them) get the same sketch, full set, signature and three fingerprints; the
 * pieces the bindings use without touching the engine's buffers
 * (sh_sketch_compute, sh_sketch_identity, sh_work_ids, sh_shingle_features,
 * sh_shingle_span) against the slow obvious way. */
#include <stdlib.h>
#include <xxhash.h>
#include "../document.h"
#include "../byteorder.h"
#include "test.h"

static sh_shingler S, SP; /* rabin and pad8 token ids */

static int make(sh_shingler *s, sh_token_mode tm, sh_option opt)
{
    sh_shingler_config c;
    sh_error err;
    memset(&c, 0, sizeof c);
    c.w = 4; c.k = 64; c.seed = 0x5348494E474CULL; c.tokens = tm; c.option = opt;
    c.canon.flags = SH_CANON_DEFAULT_FLAGS;
    if (sh_shingler_init(s, &c, &err) != SH_OK) { fprintf(stderr, "%s\n", err.msg); return 0; }
    return 1;
}

static const char *TEXT =
    "Michael Rabin proposed in 1981 to view a string of bits as a polynomial over the field with two elements, "
    "and to take its remainder modulo a random irreducible polynomial of degree k; Andrei Broder used these "
    "fingerprints to identify the shingles of web pages. The the the the repeated words repeat.";

static sh_sketch_params params(uint8_t kind)
{
    sh_sketch_params p;
    memset(&p, 0, sizeof p);
    p.kind = kind; p.s = 8; p.m = 3; p.floor = 2; p.rules = 7;
    return p;
}

static int same_sketch(const sh_sketch *a, const sh_sketch *b)
{
    return a && b && memcmp(&a->p, &b->p, sizeof a->p) == 0 && a->n == b->n && a->n_shingles == b->n_shingles &&
           a->n_tokens == b->n_tokens && memcmp(a->v, b->v, a->n * 8) == 0;
}

/* The text path (sh_shingle_text) and the list path (token ids, then
 * sh_shingle_ids) of one document, with every option of sh_doc_sketch. */
static void text_and_token_list_give_one_identity(void)
{
    const uint8_t kinds[] = { SH_SKETCH_MIN, SH_SKETCH_MOD, SH_SKETCH_MINMOD, SH_SKETCH_CLASS };
    size_t len = strlen(TEXT);
    int k, full;
    for (k = 0; k < 4; k++)
        for (full = 0; full < 2; full++) {
            sh_sketch_params p = params(kinds[k]);
            sh_work wt, wl;
            sh_doc_out a, b;
            sh_error err;
            uint64_t *ids;
            size_t i;
            memset(&wt, 0, sizeof wt); memset(&wl, 0, sizeof wl);
            memset(&a, 0, sizeof a); memset(&b, 0, sizeof b);
            CHECK(sh_shingle_text(&S, &wt, TEXT, len, &err) == SH_OK);
            CHECK(sh_doc_sketch(&S, &wt, &p, 0, full, 12, TEXT, len, wt.toks.n, &a, &err) == SH_OK);
            /* the canonical tokens as strings, as a Lua rule set would give them */
            ids = sh_work_ids(&wl, wt.toks.n);
            CHECK(ids != NULL);
            for (i = 0; i < wt.toks.n; i++) ids[i] = sh_token_id(&S, wt.toks.text + wt.toks.tok[i].off, wt.toks.tok[i].len);
            CHECK(sh_shingle_ids(&S, &wl, &err) == SH_OK);
            CHECK(sh_doc_sketch(&S, &wl, &p, 0, full, 12, TEXT, len, wl.n_ids, &b, &err) == SH_OK);
            CHECK_EQ_U64(a.raw_fp, b.raw_fp);
            CHECK_EQ_U64(a.canon_fp, b.canon_fp);
            CHECK_EQ_U64(a.set_fp, b.set_fp);
            CHECK(same_sketch(a.sketch, b.sketch));
            CHECK(memcmp(a.sig, b.sig, 12 * 8) == 0);
            CHECK(!full || same_sketch(a.full, b.full));
            CHECK(full || (!a.full && !b.full));
            sh_doc_release(&a); sh_doc_release(&b);
            CHECK(a.sketch == NULL && a.full == NULL && a.sig == NULL);
            sh_work_free(&wt); sh_work_free(&wl);
        }
}

/* The fingerprints are what document.h says, computed the obvious way. */
static void fingerprints_are_as_documented(void)
{
    sh_sketch_params p = params(SH_SKETCH_MOD);
    size_t len = strlen(TEXT), i;
    sh_work w;
    sh_doc_out o;
    sh_error err;
    unsigned char *le;
    uint64_t f = 0;
    sh_rabin id;
    memset(&w, 0, sizeof w); memset(&o, 0, sizeof o);
    CHECK(sh_shingle_text(&S, &w, TEXT, len, &err) == SH_OK);
    CHECK(sh_doc_sketch(&S, &w, &p, 0, 1, 0, TEXT, len, w.toks.n, &o, &err) == SH_OK);
    CHECK_EQ_U64(o.raw_fp, XXH3_64bits(TEXT, len));
    le = (unsigned char *)malloc(8 * w.n_ids);
    for (i = 0; i < w.n_ids; i++) sh_store_le64(le + 8 * i, w.ids[i]);
    CHECK_EQ_U64(o.canon_fp, XXH3_64bits(le, 8 * w.n_ids));
    free(le);
    /* set: AUG under P_id of the big-endian values of the full set, byte by byte */
    sh_rabin_init(&id, S.c.idpoly, 64);
    for (i = 0; i < o.full->n; i++) {
        unsigned char be[8];
        sh_store_be64(be, o.full->v[i]);
        f = sh_rabin_extend(&id, f, be, 8);
    }
    CHECK_EQ_U64(o.set_fp, f);
    CHECK(o.sig == NULL);
    sh_doc_release(&o);
    sh_work_free(&w);
}

/* At every instruction set level (document.c takes XXH3 with AVX2 where
 * the library offers it) the raw and canonical fingerprints are
 * XXH3_64bits, on inputs short and long (XXH3's stripes begin above 240
 * bytes). */
static void fingerprints_are_xxh3_at_every_level(void)
{
    static const size_t lens[] = { 0, 1, 7, 16, 128, 240, 241, 1024, 4099, 100003 };
    static unsigned char buf[100003 + 8];
    uint64_t st = 5, set = 1;
    size_t i, li;
    int lv;
    for (i = 0; i < sizeof buf; i++) buf[i] = (unsigned char)sh_splitmix_next(&st);
    for (lv = SH_SIMD_PORTABLE; lv < SH_SIMD_LEVELS; lv++) {
        sh_shingler_config c;
        sh_shingler s;
        sh_error err;
        memset(&c, 0, sizeof c);
        c.w = 4; c.k = 64; c.seed = 0x5348494E474CULL; c.simd = (sh_simd)lv;
        if (sh_shingler_init(&s, &c, &err) != SH_OK || s.level != (sh_simd)lv) continue;
        for (li = 0; li < sizeof lens / sizeof *lens; li++) {
            uint64_t raw, canon, sfp;
            /* (ids: the buffer as little-endian values, whole ones) */
            sh_doc_fingerprints(&s, buf + 1, lens[li], (const uint64_t *)(void *)(buf + 8 - ((uintptr_t)buf & 7)),
                                lens[li] / 8, &set, 1, &raw, &canon, &sfp);
            CHECK_EQ_U64(raw, XXH3_64bits(buf + 1, lens[li]));
            CHECK_EQ_U64(canon, XXH3_64bits(buf + 8 - ((uintptr_t)buf & 7), lens[li] / 8 * 8));
        }
    }
}

/* sh_shingle_features takes the ids as a set; the sketch of a feature set has
 * w = 0 and option B whatever the shingler's. */
static void features_are_a_set_without_shingling(void)
{
    sh_shingler a;
    sh_sketch_params p = params(SH_SKETCH_FULL), id;
    sh_work w;
    sh_doc_out o;
    sh_error err;
    uint64_t *ids;
    size_t i;
    CHECK(make(&a, SH_TOKENS_RABIN, SH_OPTION_A));
    memset(&w, 0, sizeof w); memset(&o, 0, sizeof o);
    ids = sh_work_ids(&w, 5);
    CHECK(ids != NULL && w.n_ids == 5);
    for (i = 0; i < 5; i++) ids[i] = 100 + i % 3;   /* 100 101 102 100 101 */
    CHECK(sh_shingle_features(&w, &err) == SH_OK);
    /* the ids are moved to fps, not copied: w.ids is scratch now */
    CHECK(w.n_fps == 5 && w.n_ids == 5);
    for (i = 0; i < 5; i++) CHECK_EQ_U64(w.fps[i], 100 + i % 3);
    for (i = 0; i < w.cap_ids && i < 5; i++) w.ids[i] = 7; /* what a caller may do with the scratch */
    CHECK(sh_doc_sketch(&a, &w, &p, 1, 0, 4, "x", 1, 5, &o, &err) == SH_OK);
    {
        /* the canonical fingerprint is that of the features as given */
        const uint64_t want[5] = { 100, 101, 102, 100, 101 };
        uint64_t raw, canon, set;
        sh_doc_fingerprints(&a, "x", 1, want, 5, o.sketch->v, o.sketch->n, &raw, &canon, &set);
        CHECK_EQ_U64(o.canon_fp, canon);
        CHECK_EQ_U64(o.raw_fp, raw);
        CHECK_EQ_U64(o.set_fp, set);
    }
    CHECK(o.sketch->n == 3 && o.sketch->p.w == 0 && o.sketch->p.option == SH_OPTION_B);
    sh_sketch_identity(&a, &p, 1, &id);
    /* the fields that decide comparability; s, m and floor are the kind's business */
    CHECK(id.kind == o.sketch->p.kind && id.option == o.sketch->p.option && id.w == o.sketch->p.w &&
          id.k == o.sketch->p.k && id.tokens == o.sketch->p.tokens && id.seed == o.sketch->p.seed &&
          id.poly == o.sketch->p.poly && id.idpoly == o.sketch->p.idpoly && id.rules == o.sketch->p.rules);
    sh_sketch_identity(&a, &p, 0, &id);
    CHECK(id.w == 4 && id.option == SH_OPTION_A && id.seed == a.c.seed && id.poly == a.c.poly &&
          id.idpoly == a.c.idpoly && id.k == 64 && id.rules == 7 && id.kind == SH_SKETCH_FULL);
    sh_doc_release(&o);
    sh_work_free(&w);
}

/* The two-step sketch the Lua binding uses (values left in the work) gives
 * what sh_sketch_build gives, for every kind and both options. */
static void compute_then_copy_equals_build(void)
{
    const uint8_t kinds[] = { SH_SKETCH_MIN, SH_SKETCH_MOD, SH_SKETCH_MINMOD, SH_SKETCH_CLASS, SH_SKETCH_FULL };
    sh_shingler a;
    int k, opt;
    for (opt = 0; opt < 2; opt++) {
        CHECK(make(&a, SH_TOKENS_RABIN, opt ? SH_OPTION_A : SH_OPTION_B));
        for (k = 0; k < 5; k++) {
            sh_sketch_params p = params(kinds[k]);
            sh_sketch hdr, *built;
            sh_work w;
            sh_error err;
            memset(&w, 0, sizeof w);
            CHECK(sh_shingle_text(&a, &w, TEXT, strlen(TEXT), &err) == SH_OK);
            CHECK(sh_sketch_build(&a, &w, &p, 0, w.toks.n, &built, &err) == SH_OK);
            CHECK(sh_sketch_compute(&a, &w, &p, 0, w.toks.n, &hdr, &err) == SH_OK);
            CHECK(memcmp(&hdr.p, &built->p, sizeof hdr.p) == 0 && hdr.n == built->n &&
                  hdr.n_shingles == built->n_shingles && hdr.n_tokens == built->n_tokens);
            CHECK(memcmp(w.vals, built->v, hdr.n * 8) == 0);
            free(built);
            sh_work_free(&w);
        }
    }
}

/* Shingle spans: the first byte of the shingle's first token to the end of
 * its last one, through the PAD8 id -> token map where a long token makes
 * several ids. */
static void shingle_spans_cover_their_tokens(void)
{
    const char *t = "short extraordinarily long words here and there again";
    sh_shingler *ss[2] = { &S, &SP };
    int m;
    for (m = 0; m < 2; m++) {
        sh_work w;
        sh_error err;
        size_t first, end;
        memset(&w, 0, sizeof w);
        CHECK(sh_shingle_text(ss[m], &w, t, strlen(t), &err) == SH_OK);
        sh_shingle_span(ss[m], &w, 0, &first, &end);
        /* w = 4: "short extraordinarily long words" (rabin); pad8 ids: short, extraor, dinarily, long */
        CHECK(first == 0);
        CHECK(end == (m == 0 ? strlen("short extraordinarily long words") : strlen("short extraordinarily long")));
        sh_shingle_span(ss[m], &w, w.n_fps - 1, &first, &end);
        CHECK(end == strlen(t));
        CHECK(first == (size_t)(strstr(t, "here") - t));
        sh_work_free(&w);
    }
}

int main(void)
{
    if (!make(&S, SH_TOKENS_RABIN, SH_OPTION_B) || !make(&SP, SH_TOKENS_PAD8, SH_OPTION_B)) return 1;
    RUN(text_and_token_list_give_one_identity);
    RUN(fingerprints_are_as_documented);
    RUN(fingerprints_are_xxh3_at_every_level);
    RUN(features_are_a_set_without_shingling);
    RUN(compute_then_copy_equals_build);
    RUN(shingle_spans_cover_their_tokens);
    return TEST_END();
}
