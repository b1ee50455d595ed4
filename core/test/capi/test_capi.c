/* The C API as a program outside the project sees it: nothing but the public
 * header core/include/shingle.h, linked against libshingle.so. The index
 * functions on a real index are checked by spec/capi_spec.lua (which builds
 * the index with the command line) through examples/capi_similar.c. */
#define _POSIX_C_SOURCE 200809L /* mkdtemp */
#include "shingle.h"
#include "test.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char *TEXT =
    "The resemblance of two documents is the size of the intersection of their sets of shingles "
    "divided by the size of the union, and it can be estimated from small sketches that are "
    "computed once for every document, then compared in constant time for any pair of them.";

static shingle_shingler *make(const char *opts)
{
    shingle_shingler *sh = NULL;
    char *msg = NULL;
    int rc = shingle_shingler_new(opts, &sh, &msg);
    if (rc != SHINGLE_OK) fprintf(stderr, "shingler '%s': %s\n", opts, msg);
    return sh;
}

static shingle_sketch *sketch(shingle_shingler *sh, const char *text)
{
    shingle_sketch *sk = NULL;
    char *msg = NULL;
    if (shingle_sketch_new(&sk, &msg) != SHINGLE_OK) return NULL;
    if (shingle_sketch_text(sh, text, strlen(text), sk, &msg) != SHINGLE_OK) {
        fprintf(stderr, "sketch: %s\n", msg);
        shingle_sketch_free(sk);
        return NULL;
    }
    return sk;
}

static void the_version_of_the_library_is_the_headers(void)
{
    CHECK(shingle_version_number() == SHINGLE_VERSION_NUMBER);
    CHECK(strcmp(shingle_version(), SHINGLE_VERSION_STRING) == 0);
    CHECK(SHINGLE_VERSION_NUMBER == SHINGLE_VERSION_MAJOR * 10000 + SHINGLE_VERSION_MINOR * 100 + SHINGLE_VERSION_PATCH);
}

static void every_status_has_its_own_message(void)
{
    int a, b;
    for (a = SHINGLE_OK; a <= SHINGLE_ELIMIT; a++) {
        CHECK(strcmp(shingle_strerror(a), "unknown status") != 0);
        for (b = a + 1; b <= SHINGLE_ELIMIT; b++) CHECK(strcmp(shingle_strerror(a), shingle_strerror(b)) != 0);
    }
    CHECK(strcmp(shingle_strerror(99), "unknown status") == 0);
    CHECK(strncmp(shingle_strerror(SHINGLE_EMISMATCH), "EMISMATCH", 9) == 0);
}

static void bad_options_are_refused_by_name(void)
{
    shingle_shingler *sh = NULL;
    char *msg = NULL;
    CHECK(shingle_shingler_new("w=0", &sh, &msg) == SHINGLE_EINVAL && sh == NULL);
    CHECK(msg && strstr(msg, "option w=0: give a whole number from 1 to 1024"));
    CHECK(shingle_shingler_new("colour=blue", &sh, &msg) == SHINGLE_EINVAL);
    CHECK(msg && strstr(msg, "unknown option 'colour'"));
    CHECK(shingle_shingler_new("sketch=big", &sh, &msg) == SHINGLE_EINVAL);
    CHECK(msg && strstr(msg, "use min, mod, minmod, class or full"));
    CHECK(shingle_shingler_new("w 10", &sh, &msg) == SHINGLE_EINVAL);
    CHECK(shingle_shingler_new("html=maybe", &sh, &msg) == SHINGLE_EINVAL);
    CHECK(shingle_shingler_new(NULL, &sh, &msg) == SHINGLE_OK && sh != NULL);
    shingle_shingler_free(sh);
    shingle_shingler_free(NULL);
    CHECK(shingle_shingler_new("w=4, sketch=mod m=5 html=1 fold=true invalid=latin1", &sh, NULL) == SHINGLE_OK);
    shingle_shingler_free(sh);
}

static void a_sketch_holds_sorted_distinct_values_reused_across_texts(void)
{
    shingle_shingler *sh = make("w=3 sketch=min s=20");
    shingle_sketch *sk = sketch(sh, TEXT);
    const uint64_t *v;
    size_t i, n;
    char *msg = NULL;
    CHECK(sk != NULL);
    n = shingle_sketch_size(sk);
    v = shingle_sketch_values(sk);
    CHECK(n == 20);
    for (i = 1; i < n; i++) CHECK(v[i - 1] < v[i]);
    /* 48 words; 46 shingles of 3 words, "the size of" twice and "size of the" twice: 44 distinct
     * (counted by hand with a regular expression split, not by the library) */
    CHECK(shingle_sketch_tokens(sk) == 48);
    CHECK(shingle_sketch_shingles(sk) == 44);
    CHECK(shingle_sketch_text(sh, "one two", 7, sk, &msg) == SHINGLE_OK);
    CHECK(shingle_sketch_size(sk) == 1); /* fewer tokens than w: one shingle of them all */
    CHECK(shingle_sketch_text(sh, "", 0, sk, &msg) == SHINGLE_OK);
    CHECK(shingle_sketch_size(sk) == 0);
    shingle_sketch_free(sk);
    shingle_shingler_free(sh);
}

static void estimates_follow_theorem_one(void)
{
    shingle_shingler *full = make("w=4 sketch=full"), *other = make("w=5 sketch=full");
    char longer[1024];
    shingle_sketch *a, *b, *c;
    shingle_estimate e;
    char *msg = NULL;
    snprintf(longer, sizeof longer, "%s And a second part that the first document does not have at all, "
             "long enough to change the union of the two sets.", TEXT);
    a = sketch(full, TEXT);
    b = sketch(full, longer);
    c = sketch(other, TEXT);
    CHECK(shingle_estimate_sketches(a, a, &e, &msg) == SHINGLE_OK && e.resemblance == 1.0 && e.containment == 1.0);
    CHECK(shingle_estimate_sketches(a, b, &e, &msg) == SHINGLE_OK);
    CHECK(e.containment == 1.0);            /* every shingle of TEXT is in the longer text */
    CHECK(e.contained > 0.5 && e.contained < 1.0);
    CHECK(e.resemblance == e.contained);    /* A inside B: |A n B| / |A u B| = |A| / |B| = c(B, A) */
    CHECK(e.both == shingle_sketch_size(a) && e.sample == shingle_sketch_size(b));
    CHECK(shingle_estimate_sketches(a, c, &e, &msg) == SHINGLE_EMISMATCH);
    CHECK(msg && strstr(msg, "w"));
    shingle_sketch_free(a);
    shingle_sketch_free(b);
    shingle_sketch_free(c);
    shingle_shingler_free(full);
    shingle_shingler_free(other);
}

static void serialized_sketches_load_back_bit_for_bit(void)
{
    shingle_shingler *sh = make("sketch=mod m=3 w=3");
    shingle_sketch *a = sketch(sh, TEXT), *b = NULL;
    size_t n = 0, n2 = 0, need = shingle_sketch_serialized_size(a);
    unsigned char *buf = (unsigned char *)malloc(need), *buf2 = (unsigned char *)malloc(need), small[8];
    shingle_estimate e;
    char *msg = NULL;
    CHECK(need > 0 && buf && buf2);
    CHECK(shingle_sketch_serialize(a, small, sizeof small, &n, &msg) == SHINGLE_ERANGE && n == need);
    CHECK(shingle_sketch_serialize(a, buf, need, &n, &msg) == SHINGLE_OK && n == need);
    CHECK(memcmp(buf, "SHSK", 4) == 0);
    CHECK(shingle_sketch_new(&b, &msg) == SHINGLE_OK);
    CHECK(shingle_sketch_load(buf, n, b, &msg) == SHINGLE_OK);
    CHECK(shingle_sketch_serialize(b, buf2, need, &n2, &msg) == SHINGLE_OK && n2 == n && memcmp(buf, buf2, n) == 0);
    CHECK(shingle_estimate_sketches(a, b, &e, &msg) == SHINGLE_OK && e.resemblance == 1.0);
    CHECK(shingle_sketch_load(buf, n - 1, b, &msg) == SHINGLE_EFORMAT && shingle_sketch_size(b) == 0);
    buf[n / 2] ^= 0x40;
    CHECK(shingle_sketch_load(buf, n, b, &msg) == SHINGLE_EFORMAT);
    CHECK(msg && (strstr(msg, "checksum") || strstr(msg, "corrupt")));
    CHECK(shingle_sketch_serialize(b, buf2, need, &n2, &msg) == SHINGLE_EINVAL); /* left empty by the failed load */
    free(buf);
    free(buf2);
    shingle_sketch_free(a);
    shingle_sketch_free(b);
    shingle_shingler_free(sh);
}

static void invalid_utf8_follows_the_shinglers_rule(void)
{
    static const char bad[] = "caf\xe9 au lait";
    shingle_shingler *strict = make("invalid=error"), *latin1 = make("invalid=latin1");
    shingle_sketch *sk = NULL;
    size_t off = 0;
    char *msg = NULL;
    CHECK(shingle_utf8_check(bad, sizeof bad - 1, &off, &msg) == SHINGLE_EUTF8 && off == 3);
    CHECK(shingle_utf8_check(TEXT, strlen(TEXT), &off, &msg) == SHINGLE_OK);
    CHECK(shingle_sketch_new(&sk, &msg) == SHINGLE_OK);
    CHECK(shingle_sketch_text(strict, bad, sizeof bad - 1, sk, &msg) == SHINGLE_EUTF8);
    CHECK(msg && strstr(msg, "byte 3"));
    CHECK(shingle_sketch_text(latin1, bad, sizeof bad - 1, sk, &msg) == SHINGLE_OK && shingle_sketch_size(sk) == 1);
    shingle_sketch_free(sk);
    shingle_shingler_free(strict);
    shingle_shingler_free(latin1);
}

static void opening_what_is_not_an_index_fails_with_a_reason(void)
{
    shingle_index *ix = NULL;
    char *msg = NULL;
    CHECK(shingle_index_open("/nonexistent/shingle-index", SHINGLE_INDEX_READONLY, &ix, &msg) == SHINGLE_EIO && ix == NULL);
    CHECK(msg && strstr(msg, "/nonexistent/shingle-index"));
    CHECK(shingle_index_open("/etc/hostname", SHINGLE_INDEX_READONLY, &ix, &msg) == SHINGLE_EFORMAT);
    CHECK(shingle_index_open("/tmp", 8, &ix, &msg) == SHINGLE_EINVAL);
    shingle_index_close(NULL);
}

static void documents_added_from_c_are_found_and_keep_their_ids(void)
{
    char tmpl[] = "/tmp/shingle-capi-XXXXXX", path[64];
    char *dir = mkdtemp(tmpl), *msg = NULL;
    shingle_index *ix = NULL;
    shingle_shingler *own = NULL, *same = NULL, *html = NULL;
    shingle_sketch *a = NULL, *b = NULL;
    shingle_estimate e;
    shingle_hit hits[4];
    shingle_added out[3];
    size_t n = 0;
    uint32_t count = 0;
    static const char *const edited = "The resemblance of two documents is the size of the intersection of their sets of "
        "shingles divided by the size of the union, and it can be estimated from small sketches that are computed once "
        "for every document, then compared in constant time for any pair of these.";
    shingle_input docs[3] = { { "http://a.example/1", 18, NULL, 0, 0 }, { "", 0, "no URL", 6, 0 },
                              { "http://a.example/2", 18, NULL, 0, -1 } };
    docs[0].text = TEXT;
    docs[0].len = strlen(TEXT);
    docs[2].text = edited;
    docs[2].len = strlen(edited);
    CHECK(dir != NULL);
    if (!dir) return;
    snprintf(path, sizeof path, "%s/idx", dir);
    CHECK(shingle_index_open(path, SHINGLE_INDEX_READONLY | SHINGLE_INDEX_CREATE, &ix, &msg) == SHINGLE_EINVAL);
    CHECK(shingle_index_open(path, SHINGLE_INDEX_CREATE, &ix, &msg) == SHINGLE_OK);
    CHECK(shingle_index_shingler(ix, 0, &own, &msg) == SHINGLE_ENOTFOUND && own == NULL);
    CHECK(shingle_index_add(ix, "s1", "w=3 m=1 html=1", docs, 3, out, &msg) == SHINGLE_EINVAL);
    CHECK(shingle_index_add(ix, "s1", "w=3 m=1 bogus=2", docs, 3, out, &msg) == SHINGLE_EINVAL && strstr(msg, "bogus"));
    CHECK(shingle_index_add(ix, "s1", "w=3 m=1 threshold=0.3", docs, 3, out, &msg) == SHINGLE_OK);
    CHECK(out[0].status == SHINGLE_OK && out[0].id == 1);
    CHECK(out[1].status == SHINGLE_EINVAL && out[1].id == 0);
    CHECK(out[2].status == SHINGLE_OK && out[2].id == 2);
    CHECK(shingle_index_count(ix, &count, &msg) == SHINGLE_OK && count == 2);
    /* an index with documents keeps its options; the same URLs again keep their ids */
    CHECK(shingle_index_add(ix, "s1", "w=3", docs, 3, out, &msg) == SHINGLE_EINVAL);
    CHECK(shingle_index_add(ix, "s1", NULL, docs, 3, out, &msg) == SHINGLE_OK && out[0].id == 1 && out[2].id == 2);
    CHECK(shingle_index_count(ix, &count, &msg) == SHINGLE_OK && count == 2);
    /* its shingler is the one made from the options it recorded (over the defaults of an index) */
    CHECK(shingle_index_shingler(ix, 0, &own, &msg) == SHINGLE_OK);
    CHECK(shingle_index_shingler(ix, 1, &html, &msg) == SHINGLE_OK);
    same = make("w=3 m=1 sketch=mod floor=20 invalid=latin1");
    a = sketch(own, edited);
    b = sketch(same, edited);
    CHECK(a && b && shingle_sketch_size(a) == shingle_sketch_size(b) && shingle_sketch_size(a) > 0);
    CHECK(a && b && memcmp(shingle_sketch_values(a), shingle_sketch_values(b), 8 * shingle_sketch_size(a)) == 0);
    CHECK(shingle_estimate_sketches(a, b, &e, &msg) == SHINGLE_OK && e.resemblance == 1.0);
    /* the two documents are near-duplicates: one cluster, and a query finds both */
    CHECK(shingle_index_similar(ix, a, 0.3, SHINGLE_POLICY_RESEMBLANCE, 0, 4, 0, hits, 4, &n, &msg) == SHINGLE_OK);
    CHECK(n == 2 && hits[0].id == 2 && hits[0].resemblance == 1.0 && hits[1].id == 1);
    /* the postings filter and cache: the same hits while its thread builds them and after
     * (and closing the index stops and frees it: the ASan build checks) */
    CHECK(shingle_index_filter_start(NULL, &msg) == SHINGLE_EINVAL);
    CHECK(shingle_index_cache_start(NULL, 1, &msg) == SHINGLE_EINVAL);
    /* with the postings cache (0.4) */
    CHECK(shingle_index_cache_start(ix, (size_t)1 << 30, &msg) == SHINGLE_OK);
    CHECK(shingle_index_filter_start(ix, &msg) == SHINGLE_OK); /* a second call does nothing */
    {
        int round;
        for (round = 0; round < 40; round++) {
            struct timespec pause = { 0, 2000000 };
            shingle_hit again[4];
            size_t m = 0;
            CHECK(shingle_index_similar(ix, a, 0.3, SHINGLE_POLICY_RESEMBLANCE, 0, 4, 0, again, 4, &m, &msg) == SHINGLE_OK);
            CHECK(m == 2 && again[0].id == 2 && again[0].resemblance == 1.0 && again[1].id == 1);
            nanosleep(&pause, NULL);
        }
    }
    {
        shingle_document d1, d2;
        CHECK(shingle_index_document(ix, 1, &d1, NULL, 0, NULL, 0, &msg) == SHINGLE_OK);
        CHECK(shingle_index_document(ix, 2, &d2, NULL, 0, NULL, 0, &msg) == SHINGLE_OK);
        CHECK(d1.cluster == d2.cluster);
    }
    shingle_sketch_free(a);
    shingle_sketch_free(b);
    shingle_shingler_free(own);
    shingle_shingler_free(html);
    shingle_shingler_free(same);
    shingle_index_close(ix);
    {
        char cmd[128];
        snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
        CHECK(system(cmd) == 0);
    }
}

typedef struct adder_arg {
    shingle_index *ix;
    int rc;
    uint32_t count;
} adder_arg;

static void *add_elsewhere(void *p)
{
    adder_arg *a = (adder_arg *)p;
    char *msg = NULL;
    shingle_added out[1];
    shingle_input doc = { "http://b.example/2", 18, "another page, with words of its own that no other page has", 58, 0 };
    a->rc = shingle_index_add(a->ix, "s1", NULL, &doc, 1, out, &msg);
    if (a->rc == SHINGLE_OK) a->rc = out[0].status;
    if (a->rc == SHINGLE_OK) a->rc = shingle_index_count(a->ix, &a->count, &msg);
    return NULL;
}

/* A server's writer thread adds through the handle its event loop reads
 * with: the loop's pinned snapshot is the loop's only; the writer reads and
 * writes the newest state, and the loop sees the add after its snapshot. */
static void a_pinned_snapshot_belongs_to_the_thread_that_pinned_it(void)
{
    char tmpl[] = "/tmp/shingle-capi-XXXXXX", path[64];
    char *dir = mkdtemp(tmpl), *msg = NULL;
    shingle_index *ix = NULL;
    shingle_added out[1];
    shingle_input doc = { "http://b.example/1", 18, NULL, 0, 0 };
    uint32_t count = 0;
    adder_arg arg;
    pthread_t th;
    doc.text = TEXT;
    doc.len = strlen(TEXT);
    CHECK(dir != NULL);
    if (!dir) return;
    snprintf(path, sizeof path, "%s/idx", dir);
    CHECK(shingle_index_open(path, SHINGLE_INDEX_CREATE, &ix, &msg) == SHINGLE_OK);
    CHECK(shingle_index_add(ix, "s1", "w=3", &doc, 1, out, &msg) == SHINGLE_OK && out[0].id == 1);
    CHECK(shingle_index_read_begin(ix, &msg) == SHINGLE_OK);
    CHECK(shingle_index_count(ix, &count, &msg) == SHINGLE_OK && count == 1);
    arg.ix = ix;
    arg.rc = -1;
    arg.count = 0;
    CHECK(pthread_create(&th, NULL, add_elsewhere, &arg) == 0);
    CHECK(pthread_join(th, NULL) == 0);
    CHECK(arg.rc == SHINGLE_OK);
    CHECK(arg.count == 2);                 /* the writer thread read its own, newest state */
    CHECK(shingle_index_count(ix, &count, &msg) == SHINGLE_OK && count == 1); /* the snapshot still */
    shingle_index_read_end(ix);
    CHECK(shingle_index_count(ix, &count, &msg) == SHINGLE_OK && count == 2);
    shingle_index_close(ix);
    {
        char cmd[128];
        snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
        CHECK(system(cmd) == 0);
    }
}

/* Texts of the kept-shinglers test: near-duplicates, an HTML page of one of
 * them, and an unrelated one. */
static void kept_texts(char texts[6][600])
{
    int i;
    for (i = 0; i < 6; i++) {
        if (i == 4) snprintf(texts[i], 600, "<html><body><p>%s</p></body></html>", TEXT);
        else if (i == 5) snprintf(texts[i], 600, "%s", "an unrelated page about tide tables, harbour fees and the ferry times of a small island");
        else snprintf(texts[i], 600, "%s and %d more words of edit number %d", TEXT, i, i * 7);
    }
}

typedef struct kept_arg {
    shingle_index *ix;
    const char *url, *text;
    int rc;
} kept_arg;

static void *add_one(void *p)
{
    kept_arg *a = (kept_arg *)p;
    shingle_added out[1];
    char *msg = NULL;
    shingle_input d;
    d.url = a->url;
    d.url_len = strlen(a->url);
    d.text = a->text;
    d.len = strlen(a->text);
    d.html = -1;
    a->rc = shingle_index_add(a->ix, "s1", NULL, &d, 1, out, &msg);
    if (a->rc == SHINGLE_OK) a->rc = out[0].status;
    return NULL;
}

/* shingle_index_add keeps the index's shinglers with the handle after its
 * first add (core/capi.c kept_shinglers): adds through one handle store
 * what adds each through a handle of its own store, and two threads adding
 * at once (one finds the kept shinglers in use and makes its own) both add. */
static void kept_shinglers_add_what_fresh_ones_add(void)
{
    char tmpl[] = "/tmp/shingle-capi-XXXXXX", pa[64], pb[64], texts[6][600], url[64];
    char *dir = mkdtemp(tmpl), *msg = NULL;
    shingle_index *a = NULL, *b = NULL;
    shingle_shingler *sh = NULL;
    uint32_t count = 0;
    int i;
    CHECK(dir != NULL);
    if (!dir) return;
    kept_texts(texts);
    snprintf(pa, sizeof pa, "%s/a", dir);
    snprintf(pb, sizeof pb, "%s/b", dir);
    CHECK(shingle_index_open(pa, SHINGLE_INDEX_CREATE, &a, &msg) == SHINGLE_OK);
    for (i = 0; i < 6; i++) {
        kept_arg x;
        snprintf(url, sizeof url, "http://k.example/%d", i);
        x.url = url;
        x.text = texts[i];
        /* a: one handle for every add; b: a new handle each time */
        x.ix = a;
        add_one(&x);
        CHECK(x.rc == SHINGLE_OK);
        CHECK(shingle_index_open(pb, SHINGLE_INDEX_CREATE, &b, &msg) == SHINGLE_OK);
        x.ix = b;
        add_one(&x);
        CHECK(x.rc == SHINGLE_OK);
        shingle_index_close(b);
    }
    CHECK(shingle_index_open(pb, SHINGLE_INDEX_READONLY, &b, &msg) == SHINGLE_OK);
    CHECK(shingle_index_shingler(a, 0, &sh, &msg) == SHINGLE_OK);
    for (i = 0; i < 6; i++) {
        shingle_sketch *q = sketch(sh, texts[i]);
        shingle_hit ha[8], hb[8];
        size_t na = 0, nb = 0, k;
        shingle_document da, db;
        CHECK(q && shingle_index_similar(a, q, 0.0, SHINGLE_POLICY_EITHER, 0, 8, 0, ha, 8, &na, &msg) == SHINGLE_OK);
        CHECK(q && shingle_index_similar(b, q, 0.0, SHINGLE_POLICY_EITHER, 0, 8, 0, hb, 8, &nb, &msg) == SHINGLE_OK);
        CHECK(na == nb && na >= 1);
        for (k = 0; k < na && k < nb; k++) CHECK(ha[k].id == hb[k].id && ha[k].resemblance == hb[k].resemblance);
        CHECK(shingle_index_document(a, (uint32_t)i + 1, &da, NULL, 0, NULL, 0, &msg) == SHINGLE_OK);
        CHECK(shingle_index_document(b, (uint32_t)i + 1, &db, NULL, 0, NULL, 0, &msg) == SHINGLE_OK);
        CHECK(da.cluster == db.cluster && da.shingles == db.shingles && da.relation == db.relation);
        shingle_sketch_free(q);
    }
    {
        kept_arg x[2];
        pthread_t th[2];
        for (i = 0; i < 2; i++) {
            x[i].ix = a;
            x[i].url = i ? "http://k.example/t1" : "http://k.example/t0";
            x[i].text = texts[i];
            x[i].rc = -1;
            CHECK(pthread_create(&th[i], NULL, add_one, &x[i]) == 0);
        }
        for (i = 0; i < 2; i++) CHECK(pthread_join(th[i], NULL) == 0 && x[i].rc == SHINGLE_OK);
        CHECK(shingle_index_count(a, &count, &msg) == SHINGLE_OK && count == 8);
    }
    shingle_shingler_free(sh);
    shingle_index_close(a);
    shingle_index_close(b);
    {
        char cmd[128];
        snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
        CHECK(system(cmd) == 0);
    }
}

int main(void)
{
    RUN(the_version_of_the_library_is_the_headers);
    RUN(every_status_has_its_own_message);
    RUN(bad_options_are_refused_by_name);
    RUN(a_sketch_holds_sorted_distinct_values_reused_across_texts);
    RUN(estimates_follow_theorem_one);
    RUN(serialized_sketches_load_back_bit_for_bit);
    RUN(invalid_utf8_follows_the_shinglers_rule);
    RUN(opening_what_is_not_an_index_fails_with_a_reason);
    RUN(documents_added_from_c_are_found_and_keep_their_ids);
    RUN(a_pinned_snapshot_belongs_to_the_thread_that_pinned_it);
    RUN(kept_shinglers_add_what_fresh_ones_add);
    return TEST_END();
}
