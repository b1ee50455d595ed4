/* core/sketchfile.h: many sketches in one streamed, checksummed file. */
#include "sketchfile.h"
#include "shingler.h"
#include "test.h"

#include <stdlib.h>
#include <unistd.h>

static sh_shingler sh;
static sh_work work;

static sh_sketch *sketch_of(const char *text, uint8_t kind)
{
    sh_sketch_params p;
    sh_sketch *s = NULL;
    sh_error err;
    memset(&p, 0, sizeof p);
    p.kind = kind;
    p.s = 50;
    p.m = 4;
    p.floor = 0;
    if (sh_shingle_text(&sh, &work, text, strlen(text), &err) != SH_OK) exit(2);
    if (sh_sketch_build(&sh, &work, &p, 0, work.toks.n, &s, &err) != SH_OK) exit(2);
    return s;
}

static char path[64];

static void temp_path(void)
{
    int fd;
    snprintf(path, sizeof path, "/tmp/shingle-skf-XXXXXX");
    fd = mkstemp(path);
    if (fd < 0) exit(2);
    close(fd);
}

static int same(const sh_sketch *a, const sh_sketch *b)
{
    return a->n == b->n && a->n_shingles == b->n_shingles && a->n_tokens == b->n_tokens &&
           memcmp(&a->p, &b->p, sizeof a->p) == 0 && memcmp(a->v, b->v, a->n * sizeof *a->v) == 0;
}

static const char *texts[] = {
    "the quick brown fox jumps over the lazy dog and keeps on running through the field",
    "a rose is a rose is a rose is a rose",
    "short",
    "",
    "resemblance and containment of documents estimated from small sketches of their shingles",
};

static void test_round_trip_with_every_key_type(void)
{
    sh_skfile_writer *w;
    sh_skfile_reader *r;
    sh_error err;
    sh_sketch *s[5];
    sh_skkey k, got;
    const sh_sketch *x;
    uint64_t count;
    int i;
    temp_path();
    for (i = 0; i < 5; i++) s[i] = sketch_of(texts[i], SH_SKETCH_MIN);
    CHECK(sh_skfile_create(path, &w, &err) == SH_OK);
    CHECK(sh_skfile_set_meta(w, "{\"lsh\":1}", 9, &err) == SH_OK);
    for (i = 0; i < 5; i++) {
        memset(&k, 0, sizeof k);
        k.type = (sh_skkey_type)(i % 4);
        k.s = "doc-key";
        k.len = 7;
        k.i = -(int64_t)i * 1000000007LL;
        k.d = 0.5 + i;
        CHECK(sh_skfile_put(w, &k, s[i], &err) == SH_OK);
    }
    CHECK(sh_skfile_commit(w, &count, &err) == SH_OK && count == 5);
    CHECK(sh_skfile_open(path, &r, &err) == SH_OK);
    CHECK(sh_skfile_params(r) != NULL && sh_skfile_params(r)->p.kind == SH_SKETCH_MIN);
    {
        size_t mn;
        const char *meta = sh_skfile_meta(r, &mn);
        CHECK(mn == 9 && memcmp(meta, "{\"lsh\":1}", 9) == 0);
    }
    for (i = 0; i < 5; i++) {
        CHECK(sh_skfile_next(r, &got, &x, &err) == SH_OK && x != NULL);
        if (!x) break;
        CHECK(same(x, s[i]));
        CHECK(got.type == (sh_skkey_type)(i % 4));
        if (got.type == SH_SKKEY_STRING) CHECK(got.len == 7 && memcmp(got.s, "doc-key", 7) == 0);
        if (got.type == SH_SKKEY_INTEGER) CHECK(got.i == -(int64_t)i * 1000000007LL);
        if (got.type == SH_SKKEY_NUMBER) CHECK(got.d == 0.5 + i);
    }
    CHECK(sh_skfile_next(r, &got, &x, &err) == SH_OK && x == NULL);
    CHECK(sh_skfile_read_count(r) == 5);
    sh_skfile_close(r);
    unlink(path);
    for (i = 0; i < 5; i++) free(s[i]);
}

static void test_an_empty_file_and_a_mismatch(void)
{
    sh_skfile_writer *w;
    sh_skfile_reader *r;
    sh_error err;
    sh_skkey k;
    const sh_sketch *x;
    sh_sketch *a = sketch_of(texts[0], SH_SKETCH_MIN), *b = sketch_of(texts[0], SH_SKETCH_MOD);
    temp_path();
    CHECK(sh_skfile_create(path, &w, &err) == SH_OK);
    CHECK(sh_skfile_commit(w, NULL, &err) == SH_OK);
    CHECK(sh_skfile_open(path, &r, &err) == SH_OK);
    CHECK(sh_skfile_params(r) == NULL);
    CHECK(sh_skfile_next(r, &k, &x, &err) == SH_OK && x == NULL);
    sh_skfile_close(r);
    CHECK(sh_skfile_create(path, &w, &err) == SH_OK);
    CHECK(sh_skfile_put(w, NULL, a, &err) == SH_OK);
    CHECK(sh_skfile_put(w, NULL, b, &err) == SH_EMISMATCH);
    CHECK(strstr(err.msg, "sketch 2") != NULL);
    a->p.seed ^= 1;
    CHECK(sh_skfile_put(w, NULL, a, &err) == SH_EMISMATCH);
    CHECK(strstr(err.msg, "seeds") != NULL);
    sh_skfile_abort(w);
    CHECK(access(path, F_OK) == 0); /* the earlier, empty file is still there */
    unlink(path);
    free(a);
    free(b);
}

static unsigned char *slurp(const char *p, size_t *n)
{
    FILE *f = fopen(p, "rb");
    unsigned char *b;
    long len;
    if (!f) exit(2);
    fseek(f, 0, SEEK_END);
    len = ftell(f);
    fseek(f, 0, SEEK_SET);
    b = malloc((size_t)len + 1);
    if (!b || fread(b, 1, (size_t)len, f) != (size_t)len) exit(2);
    fclose(f);
    *n = (size_t)len;
    return b;
}

/* Every truncation of a file is refused; so is every single-byte change. */
static void test_truncated_and_damaged_files_are_refused(void)
{
    sh_skfile_writer *w;
    sh_error err;
    sh_skkey k;
    unsigned char *b;
    size_t n, cut, bad_accepted = 0, i;
    int j;
    temp_path();
    CHECK(sh_skfile_create(path, &w, &err) == SH_OK);
    CHECK(sh_skfile_set_meta(w, "meta", 4, &err) == SH_OK);
    for (j = 0; j < 3; j++) {
        sh_sketch *s = sketch_of(texts[j], SH_SKETCH_MIN);
        memset(&k, 0, sizeof k);
        k.type = SH_SKKEY_STRING;
        k.s = texts[j];
        k.len = 5;
        CHECK(sh_skfile_put(w, &k, s, &err) == SH_OK);
        free(s);
    }
    CHECK(sh_skfile_commit(w, NULL, &err) == SH_OK);
    b = slurp(path, &n);
    for (cut = 0; cut < n; cut++) {
        sh_skfile_reader *r;
        const sh_sketch *x = NULL;
        sh_status st = sh_skfile_open_mem(b, cut, "cut", &r, &err);
        if (st == SH_OK) {
            do st = sh_skfile_next(r, &k, &x, &err);
            while (st == SH_OK && x);
            sh_skfile_close(r);
        }
        if (st == SH_OK) bad_accepted++;
    }
    CHECK(bad_accepted == 0);
    for (i = 0; i < n; i++) {
        sh_skfile_reader *r;
        const sh_sketch *x = NULL;
        sh_status st;
        b[i] ^= 0x5a;
        st = sh_skfile_open_mem(b, n, "flipped", &r, &err);
        if (st == SH_OK) {
            do st = sh_skfile_next(r, &k, &x, &err);
            while (st == SH_OK && x);
            sh_skfile_close(r);
        }
        if (st == SH_OK) bad_accepted++;
        b[i] ^= 0x5a;
    }
    CHECK(bad_accepted == 0);
    free(b);
    unlink(path);
}

static void test_mod_sketches_of_one_chain_share_a_file(void)
{
    sh_skfile_writer *w;
    sh_skfile_reader *r;
    sh_error err;
    sh_skkey k;
    const sh_sketch *x;
    sh_sketch *a = sketch_of(texts[4], SH_SKETCH_MOD), *b = sketch_of(texts[1], SH_SKETCH_MOD);
    temp_path();
    b->p.m = 2; /* a shorter document's modulus on the chain 4, 2, 1 */
    CHECK(sh_skfile_create(path, &w, &err) == SH_OK);
    CHECK(sh_skfile_put(w, NULL, a, &err) == SH_OK);
    CHECK(sh_skfile_put(w, NULL, b, &err) == SH_OK);
    CHECK(sh_skfile_commit(w, NULL, &err) == SH_OK);
    CHECK(sh_skfile_open(path, &r, &err) == SH_OK);
    CHECK(sh_skfile_next(r, &k, &x, &err) == SH_OK && x && x->p.m == 4 && k.type == SH_SKKEY_NONE);
    CHECK(sh_skfile_next(r, &k, &x, &err) == SH_OK && x && x->p.m == 2);
    sh_skfile_close(r);
    unlink(path);
    free(a);
    free(b);
}

/* A field the kind does not use (s of a FULL sketch) may differ between
 * comparable sketches: it is stored as the header's, and the file reads
 * back (the reader refuses unused fields unlike the header, found by
 * core/fuzz/fuzz_sketchfile); a field the kind uses (s of MIN) is kept. */
static void test_unused_fields_are_stored_as_the_headers(void)
{
    sh_skfile_writer *w;
    sh_skfile_reader *r;
    sh_error err;
    sh_skkey k;
    const sh_sketch *x;
    sh_sketch *a = sketch_of(texts[4], SH_SKETCH_FULL), *b = sketch_of(texts[1], SH_SKETCH_FULL);
    sh_sketch *c = sketch_of(texts[4], SH_SKETCH_MIN), *d = sketch_of(texts[1], SH_SKETCH_MIN);
    temp_path();
    b->p.s = 7;
    CHECK(sh_skfile_create(path, &w, &err) == SH_OK);
    CHECK(sh_skfile_put(w, NULL, a, &err) == SH_OK);
    CHECK(sh_skfile_put(w, NULL, b, &err) == SH_OK);
    CHECK(sh_skfile_commit(w, NULL, &err) == SH_OK);
    CHECK(sh_skfile_open(path, &r, &err) == SH_OK);
    CHECK(sh_skfile_next(r, &k, &x, &err) == SH_OK && x && x->p.s == a->p.s && same(x, a));
    b->p.s = a->p.s; /* read back as the header's */
    CHECK(sh_skfile_next(r, &k, &x, &err) == SH_OK && x && x->p.s == a->p.s && same(x, b));
    CHECK(sh_skfile_next(r, &k, &x, &err) == SH_OK && x == NULL);
    sh_skfile_close(r);
    d->p.s = 40; /* a MIN sketch of another size compares (min of the two) */
    CHECK(sh_skfile_create(path, &w, &err) == SH_OK);
    CHECK(sh_skfile_put(w, NULL, c, &err) == SH_OK);
    CHECK(sh_skfile_put(w, NULL, d, &err) == SH_OK);
    CHECK(sh_skfile_commit(w, NULL, &err) == SH_OK);
    CHECK(sh_skfile_open(path, &r, &err) == SH_OK);
    CHECK(sh_skfile_next(r, &k, &x, &err) == SH_OK && x && x->p.s == 50);
    CHECK(sh_skfile_next(r, &k, &x, &err) == SH_OK && x && x->p.s == 40);
    sh_skfile_close(r);
    unlink(path);
    free(a);
    free(b);
    free(c);
    free(d);
}

int main(void)
{
    sh_shingler_config c;
    sh_error err;
    memset(&c, 0, sizeof c);
    c.w = 3;
    c.k = 64;
    c.seed = 7;
    c.canon.flags = SH_CANON_DEFAULT_FLAGS;
    if (sh_shingler_init(&sh, &c, &err) != SH_OK) return 2;
    RUN(test_round_trip_with_every_key_type);
    RUN(test_an_empty_file_and_a_mismatch);
    RUN(test_truncated_and_damaged_files_are_refused);
    RUN(test_mod_sketches_of_one_chain_share_a_file);
    RUN(test_unused_fields_are_stored_as_the_headers);
    sh_work_free(&work);
    return TEST_END();
}
