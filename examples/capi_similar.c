/* A C program using shingle through its public header and library only:
 *
 *   cc capi_similar.c $(pkg-config --cflags --libs shingle) -o capi_similar
 *   ./capi_similar INDEX "OPTIONS" FILE...
 *
 * For each file, the documents of the index that resemble it (as `shingle
 * similar` finds them), one line each: file, id, resemblance, containment,
 * contained, shared values, sweep, URL. OPTIONS are the shingler options the
 * index was made with (`shingle index info` shows them; the defaults of an
 * index are "w=10 sketch=mod m=25 invalid=latin1"), or "-" for the index's own
 * shinglers (shingle_index_shingler, since 0.2); a file ending in .html or
 * .htm is read as HTML. Then the estimates of every pair of files. */
#include <shingle.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    char *buf = NULL;
    long n;
    if (!f) return NULL;
    if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 &&
        (buf = malloc((size_t)n + 1)) != NULL && fread(buf, 1, (size_t)n, f) == (size_t)n) {
        *len = (size_t)n;
    } else {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    return buf;
}

static int is_html(const char *path)
{
    const char *dot = strrchr(path, '.');
    return dot && (!strcmp(dot, ".html") || !strcmp(dot, ".htm"));
}

int main(int argc, char **argv)
{
    shingle_index *ix = NULL;
    shingle_shingler *text = NULL, *html = NULL;
    shingle_sketch **sk;
    shingle_hit hits[10];
    char opts[512], url[4096], sweep[256], *err = NULL;
    int i, j, rc, status = 0;
    if (argc < 4) {
        fprintf(stderr, "usage: %s INDEX OPTIONS FILE...\n", argv[0]);
        return 2;
    }
    if (shingle_version_number() / 10000 != SHINGLE_VERSION_MAJOR) {
        fprintf(stderr, "libshingle %s does not match shingle.h %s\n", shingle_version(), SHINGLE_VERSION_STRING);
        return 1;
    }
    snprintf(opts, sizeof opts, "%s html=1", argv[2]);
    if ((rc = shingle_index_open(argv[1], SHINGLE_INDEX_READONLY, &ix, &err)) != SHINGLE_OK ||
        (!strcmp(argv[2], "-") ? (rc = shingle_index_shingler(ix, 0, &text, &err)) != SHINGLE_OK ||
                                     (rc = shingle_index_shingler(ix, 1, &html, &err)) != SHINGLE_OK
                               : (rc = shingle_shingler_new(argv[2], &text, &err)) != SHINGLE_OK ||
                                     (rc = shingle_shingler_new(opts, &html, &err)) != SHINGLE_OK)) {
        fprintf(stderr, "capi_similar: %s (%s)\n", err, shingle_strerror(rc));
        return 1;
    }
    sk = calloc((size_t)argc, sizeof *sk);
    for (i = 3; i < argc && sk; i++) {
        size_t len = 0, n = 0, k;
        char *doc = slurp(argv[i], &len);
        if (!doc) { fprintf(stderr, "capi_similar: cannot read %s\n", argv[i]); status = 1; continue; }
        if ((rc = shingle_sketch_new(&sk[i], &err)) != SHINGLE_OK ||
            (rc = shingle_sketch_text(is_html(argv[i]) ? html : text, doc, len, sk[i], &err)) != SHINGLE_OK ||
            (rc = shingle_index_similar(ix, sk[i], 0.5, SHINGLE_POLICY_RESEMBLANCE, 0, 10, 0, hits, 10, &n, &err)) != SHINGLE_OK) {
            fprintf(stderr, "capi_similar: %s: %s\n", argv[i], err);
            status = 1;
        }
        free(doc);
        for (k = 0; k < n; k++) {
            shingle_document d;
            if (shingle_index_document(ix, hits[k].id, &d, url, sizeof url, sweep, sizeof sweep, &err) != SHINGLE_OK) {
                fprintf(stderr, "capi_similar: document %u: %s\n", hits[k].id, err);
                status = 1;
                continue;
            }
            printf("%s\t%u\t%.17g\t%.17g\t%.17g\t%u\t%s\t%s\n", argv[i], hits[k].id, hits[k].resemblance,
                   hits[k].containment, hits[k].contained, hits[k].shared, sweep, url);
        }
    }
    for (i = 3; i < argc && sk; i++)
        for (j = i + 1; j < argc; j++) {
            shingle_estimate e;
            if (sk[i] && sk[j] && shingle_estimate_sketches(sk[i], sk[j], &e, &err) == SHINGLE_OK)
                printf("pair\t%s\t%s\t%.17g\t%.17g\t%.17g\n", argv[i], argv[j], e.resemblance, e.containment, e.contained);
        }
    for (i = 3; i < argc && sk; i++) shingle_sketch_free(sk[i]);
    free(sk);
    shingle_shingler_free(text);
    shingle_shingler_free(html);
    shingle_index_close(ix);
    return status;
}
