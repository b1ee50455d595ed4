/* What one add through the C API costs (shingle_index_add, the call a web
 * server's writer thread makes for the documents posted in a short while;
 * issue 12: "the writer slowing readers by less than 20%"). Not a test.
 *
 *   cc -O2 bench/capi_add_bench.c -Icore/include -Lbuild/5.4 -lshingle -o /tmp/capi_add_bench
 *   LD_LIBRARY_PATH=build/5.4 /tmp/capi_add_bench INDEX DOCS.jsonl [CALLS [PER_CALL [SWEEP]]]
 *
 * Adds CALLS batches of PER_CALL documents of DOCS.jsonl (bench/gen.c's
 * records: "url" and "text"; each URL gets a suffix so that a re-run adds
 * again) to INDEX, one shingle_index_add each, and prints the CPU time of
 * the process (user and system, from getrusage) and the wall time per
 * document and per call, median and total. Run it on a copy of an index: it
 * adds to it. */
#include <shingle.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double cpu(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 + (double)ru.ru_stime.tv_sec +
           (double)ru.ru_stime.tv_usec * 1e-6;
}

static double sys(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec * 1e-6;
}

/* The JSON string value of "key" in line, unescaped into a malloc'ed buffer
 * (\n, \t, \r, \", \\, \/, \uXXXX of the BMP): enough for bench/gen.c. */
static char *field(const char *line, const char *key, size_t *len)
{
    char pat[64];
    const char *p;
    char *out, *o;
    snprintf(pat, sizeof pat, "\"%s\":\"", key);
    if (!(p = strstr(line, pat))) return NULL;
    p += strlen(pat);
    if (!(out = o = malloc(strlen(p) + 1))) return NULL;
    while (*p && *p != '"') {
        if (*p != '\\') { *o++ = *p++; continue; }
        p++;
        switch (*p) {
        case 'n': *o++ = '\n'; p++; break;
        case 't': *o++ = '\t'; p++; break;
        case 'r': *o++ = '\r'; p++; break;
        case 'u': {
            unsigned c = (unsigned)strtoul((char[5]){ p[1], p[2], p[3], p[4], 0 }, NULL, 16);
            p += 5;
            if (c < 0x80) *o++ = (char)c;
            else if (c < 0x800) { *o++ = (char)(0xC0 | c >> 6); *o++ = (char)(0x80 | (c & 63)); }
            else { *o++ = (char)(0xE0 | c >> 12); *o++ = (char)(0x80 | (c >> 6 & 63)); *o++ = (char)(0x80 | (c & 63)); }
            break;
        }
        default: if (*p) *o++ = *p++;
        }
    }
    *o = 0;
    *len = (size_t)(o - out);
    return out;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    shingle_index *ix = NULL;
    char *err = NULL, line[1 << 20];
    size_t calls = argc > 3 ? strtoul(argv[3], NULL, 10) : 200, per = argc > 4 ? strtoul(argv[4], NULL, 10) : 1, n = calls * per, i, k = 0;
    const char *sweep = argc > 5 ? argv[5] : "capi-bench";
    shingle_input *docs;
    shingle_added *out;
    double *cpu_call, *wall_call, c0, w0, s0;
    FILE *f;
    if (argc < 3) {
        fprintf(stderr, "usage: %s INDEX DOCS.jsonl [CALLS [PER_CALL [SWEEP]]]\n", argv[0]);
        return 2;
    }
    docs = calloc(n, sizeof *docs);
    out = calloc(per, sizeof *out);
    cpu_call = calloc(calls, sizeof *cpu_call);
    wall_call = calloc(calls, sizeof *wall_call);
    if (!docs || !out || !cpu_call || !wall_call || !(f = fopen(argv[2], "r"))) { perror(argv[2]); return 1; }
    while (k < n && fgets(line, sizeof line, f)) {
        size_t ul, tl;
        char *url = field(line, "url", &ul), *text = field(line, "text", &tl), *u2;
        if (!url || !text) { free(url); free(text); continue; }
        if (!(u2 = malloc(ul + 32))) return 1;
        docs[k].url_len = (size_t)snprintf(u2, ul + 32, "%s#%ld", url, (long)time(NULL));
        docs[k].url = u2;
        docs[k].text = text;
        docs[k].len = tl;
        docs[k].html = -1;
        free(url);
        k++;
    }
    fclose(f);
    if (k < n) { fprintf(stderr, "%s has only %zu documents\n", argv[2], k); return 1; }
    if (shingle_index_open(argv[1], 0, &ix, &err) != SHINGLE_OK) { fprintf(stderr, "%s\n", err); return 1; }
    {
        uint32_t count = 0;
        shingle_index_count(ix, &count, NULL);
        printf("index %s: %u documents; %zu calls of %zu documents\n", argv[1], count, calls, per);
    }
    c0 = cpu();
    w0 = now();
    s0 = sys();
    for (i = 0; i < calls; i++) {
        double c = cpu(), w = now();
        if (shingle_index_add(ix, sweep, NULL, docs + i * per, per, out, &err) != SHINGLE_OK) {
            fprintf(stderr, "add: %s\n", err);
            return 1;
        }
        cpu_call[i] = cpu() - c;
        wall_call[i] = now() - w;
    }
    {
        double tc = cpu() - c0, tw = now() - w0, ts = sys() - s0;
        qsort(cpu_call, calls, sizeof *cpu_call, cmp_d);
        qsort(wall_call, calls, sizeof *wall_call, cmp_d);
        printf("CPU per document: %.0f us (system %.0f us); per call median %.0f us CPU, %.0f us wall; total %.2f CPU s, %.2f s wall\n",
               tc / (double)n * 1e6, ts / (double)n * 1e6, cpu_call[calls / 2] * 1e6, wall_call[calls / 2] * 1e6, tc, tw);
    }
    shingle_index_close(ix);
    return 0;
}
