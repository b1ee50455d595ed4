/* A C program adding documents to an index through the public API only:
 *
 *   cc capi_add.c $(pkg-config --cflags --libs shingle) -o capi_add
 *   ./capi_add INDEX SWEEP OPTIONS FILE...
 *
 * Adds the files (each with its path as URL; HTML or text decided by its
 * bytes, as `shingle index add` does) to the sweep SWEEP of INDEX in one
 * write transaction, making the index if there is none. OPTIONS: the options
 * of a new index ("-": the defaults of `shingle index add`); an index with
 * documents keeps its own (give "-"). Prints each file's id and status, then
 * the options its shingler was made with, as the index records them. */
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

int main(int argc, char **argv)
{
    shingle_index *ix = NULL;
    shingle_input *docs;
    shingle_added *out;
    char *err = NULL;
    size_t n, i;
    int rc, status = 0;
    if (argc < 5) {
        fprintf(stderr, "usage: %s INDEX SWEEP OPTIONS|- FILE...\n", argv[0]);
        return 2;
    }
    n = (size_t)argc - 4;
    docs = calloc(n, sizeof *docs);
    out = calloc(n, sizeof *out);
    if (!docs || !out) return 1;
    for (i = 0; i < n; i++) {
        const char *path = argv[4 + i];
        docs[i].url = path;
        docs[i].url_len = strlen(path);
        docs[i].text = slurp(path, &docs[i].len);
        docs[i].html = -1;
        if (!docs[i].text) {
            fprintf(stderr, "capi_add: cannot read %s\n", path);
            return 1;
        }
    }
    if ((rc = shingle_index_open(argv[1], SHINGLE_INDEX_CREATE, &ix, &err)) != SHINGLE_OK ||
        (rc = shingle_index_add(ix, argv[2], strcmp(argv[3], "-") ? argv[3] : NULL, docs, n, out, &err)) != SHINGLE_OK) {
        fprintf(stderr, "capi_add: %s (%s)\n", err, shingle_strerror(rc));
        return 1;
    }
    for (i = 0; i < n; i++) {
        printf("%s\t%u\t%s\n", docs[i].url, out[i].id, shingle_strerror(out[i].status));
        if (out[i].status != SHINGLE_OK) status = 1;
        free((char *)docs[i].text);
    }
    free(docs);
    free(out);
    shingle_index_close(ix);
    return status;
}
