/* bench/gen.c: the corpus generator of bench/lib/gen.lua in C, for the
 * benchmarks (a million documents of 5 KB is 5 GB; Lua 5.4 makes text at
 * about 45 MB/s and writes JSON Lines at about half that).
 *
 * It is a line-for-line port: the same random stream (L'Ecuyer's combined
 * generator, integers below 2^53), the same vocabulary, alias table, sentence
 * structure, family plan and variants, so for the same options it writes the
 * same bytes as `lua5.4 bench/gen.lua --format jsonl` (spec/gen_spec.lua
 * checks this). Any change to the algorithm must be made in both files.
 *
 *   cc -O2 -std=c99 -o gen bench/gen.c -lm
 *   ./gen --docs 1000000 --size 5000 --seed 1 --out corpus.jsonl --truth truth.jsonl
 *
 * Floating point must not be contracted into fused multiply-adds (the Lua
 * side never fuses): the pragmas below ask for that; with other compilers
 * pass -ffp-contract=off. No Lua, no library beyond libc and libm. */
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define M1 2147483563LL
#define A1 40014LL
#define M2 2147483399LL
#define A2 40692LL
#define Z1 (M1 - 1)

enum { PLAIN, CAP, STOP, PARA, COMMA, NSTYLES };

enum kind { K_ORIGINAL, K_EXACT, K_FORMAT, K_EDIT, K_INSERT, K_TRUNCATE, K_BOILERPLATE,
            K_CONTAINED, K_NOISE };
static const char *const KIND_NAMES[] = { "original", "exact", "format", "edit", "insert",
                                          "truncate", "boilerplate", "contained", "noise" };
static const enum kind VARIANTS[] = { K_EXACT, K_FORMAT, K_EDIT, K_EDIT, K_EDIT, K_EDIT,
                                      K_INSERT, K_TRUNCATE, K_BOILERPLATE, K_CONTAINED };
static const int FAMILY_VARIANTS[] = { 1, 1, 1, 2, 2, 3, 4, 6 };
#define MEAN_FAMILY 3.5
#define SPREAD 20

static void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p) {
        fprintf(stderr, "gen: out of memory\n");
        exit(1);
    }
    return p;
}

static void *xrealloc(void *p, size_t n)
{
    p = realloc(p, n ? n : 1);
    if (!p) {
        fprintf(stderr, "gen: out of memory\n");
        exit(1);
    }
    return p;
}

/* A growable list of codes (word + V * style). */
typedef struct codes {
    int32_t *v;
    int64_t n, cap;
} codes;

static void codes_reserve(codes *c, int64_t n)
{
    if (n > c->cap) {
        int64_t cap = c->cap ? c->cap : 64;
        while (cap < n) cap *= 2;
        c->v = xrealloc(c->v, (size_t)cap * sizeof *c->v);
        c->cap = cap;
    }
}

static void codes_push(codes *c, int32_t x)
{
    codes_reserve(c, c->n + 1);
    c->v[c->n++] = x;
}

typedef struct buf {
    char *p;
    size_t n, cap;
} buf;

static void buf_add(buf *b, const char *s, size_t n)
{
    if (b->n + n > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->n + n) cap *= 2;
        b->p = xrealloc(b->p, cap);
        b->cap = cap;
    }
    memcpy(b->p + b->n, s, n);
    b->n += n;
}

static void buf_adds(buf *b, const char *s) { buf_add(b, s, strlen(s)); }

typedef struct str {
    char *p;
    int len;
} str;

typedef struct gen {
    int64_t x1, x2;
    int64_t V;
    double *T;
    int32_t *A;
    str *S;            /* NSTYLES * V strings, code - 1 indexes */
    str *W, *UP, *CP;  /* bare, upper-case, capitalized words */
    double words_per_doc;
    codes headers[8], footers[8];
} gen;

static double g_u(gen *g)
{
    int64_t z;
    g->x1 = g->x1 * A1 % M1;
    g->x2 = g->x2 * A2 % M2;
    z = g->x1 - g->x2;
    if (z < 1) z += Z1;
    return (double)z / (double)M1;
}

static int64_t g_int(gen *g, int64_t n) { return (int64_t)floor(g_u(g) * (double)n) + 1; }

static int64_t g_range(gen *g, int64_t a, int64_t b)
{
    return a + (int64_t)floor(g_u(g) * (double)(b - a + 1));
}

static int32_t g_word(gen *g)
{
    int64_t z, j;
    g->x1 = g->x1 * A1 % M1;
    g->x2 = g->x2 * A2 % M2;
    z = g->x1 - g->x2;
    if (z < 1) z += Z1;
    j = z % g->V + 1;
    if ((double)z >= g->T[j]) j = g->A[j];
    return (int32_t)j;
}

/* Vocabulary: see word_of_rank in gen.lua. */
static const char *const CONS = "bcdfghjklmnprstvwz";
static const char *const VOWS = "aeiou";
static const char *const ENDS[] = { "", "n", "r", "s", "l", "t" };
#define NSYL 90
#define NFINAL 540

static char *word_of_rank(int64_t r)
{
    static const int64_t lo[] = { 0, 60, 3000, 3500000 }, hi[] = { 60, 3000, 3500000, INT64_MAX };
    char tmp[32];
    size_t n = 0;
    int cl;
    for (cl = 0; cl < 4; cl++)
        if (r <= hi[cl]) break;
    {
        int nsyl = cl + 1, k;
        int64_t space = NFINAL, idx, fin, s;
        for (k = 1; k < nsyl; k++) space *= NSYL;
        idx = (r - lo[cl] - 1) * 7919 % space;
        fin = idx % NFINAL;
        idx = (idx - fin) / NFINAL;
        for (k = 1; k < nsyl; k++) {
            s = idx % NSYL;
            idx = (idx - s) / NSYL;
            tmp[n++] = CONS[s / 5];
            tmp[n++] = VOWS[s % 5];
        }
        s = fin % NSYL;
        tmp[n++] = CONS[s / 5];
        tmp[n++] = VOWS[s % 5];
        memcpy(tmp + n, ENDS[(fin - s) / NSYL], strlen(ENDS[(fin - s) / NSYL]));
        n += strlen(ENDS[(fin - s) / NSYL]);
    }
    tmp[n] = 0;
    {
        char *w = xmalloc(n + 1);
        memcpy(w, tmp, n + 1);
        return w;
    }
}

static str mkstr(const char *a, const char *b, const char *c)
{
    str s;
    size_t la = strlen(a), lb = strlen(b), lc = strlen(c);
    s.p = xmalloc(la + lb + lc + 1);
    memcpy(s.p, a, la);
    memcpy(s.p + la, b, lb);
    memcpy(s.p + la + lb, c, lc + 1);
    s.len = (int)(la + lb + lc);
    return s;
}

static void g_words(gen *g, int64_t n, codes *c);

static void gen_init(gen *g, int64_t seed, int64_t V, double zipf, int64_t size)
{
    double *p, *q, sum = 0, letters = 0;
    int64_t *small, *large, ns = 0, nl = 0, j;
    int k;
    memset(g, 0, sizeof *g);
    g->V = V;
    g->x1 = seed % (M1 - 1) + 1;
    g->x2 = ((int64_t)floor((double)seed / (double)(M1 - 1)) + seed % (M2 - 1) + 99991) % (M2 - 1) + 1;
    for (k = 0; k < 8; k++) g_u(g);

    p = xmalloc((size_t)(V + 1) * sizeof *p);
    q = xmalloc((size_t)(V + 1) * sizeof *q);
    for (j = 1; j <= V; j++) {
        double w = zipf == 1 ? 1.0 / (double)j : pow((double)j, -zipf);
        p[j] = w;
        sum = sum + w;
    }
    g->T = xmalloc((size_t)(V + 1) * sizeof *g->T);
    g->A = xmalloc((size_t)(V + 1) * sizeof *g->A);
    small = xmalloc((size_t)(V + 1) * sizeof *small);
    large = xmalloc((size_t)(V + 1) * sizeof *large);
    for (j = 1; j <= V; j++) {
        q[j] = p[j] * (double)V / sum;
        if (q[j] < 1) small[ns++] = j;
        else large[nl++] = j;
    }
    while (ns > 0 && nl > 0) {
        int64_t l = small[--ns], h = large[nl - 1];
        g->T[l] = q[l] * (double)M1;
        g->A[l] = (int32_t)h;
        q[h] = (q[h] + q[l]) - 1;
        if (q[h] < 1) {
            nl--;
            small[ns++] = h;
        }
    }
    while (nl > 0) { j = large[--nl]; g->T[j] = (double)M1; g->A[j] = (int32_t)j; }
    while (ns > 0) { j = small[--ns]; g->T[j] = (double)M1; g->A[j] = (int32_t)j; }

    g->W = xmalloc((size_t)(V + 1) * sizeof *g->W);
    g->UP = xmalloc((size_t)(V + 1) * sizeof *g->UP);
    g->CP = xmalloc((size_t)(V + 1) * sizeof *g->CP);
    g->S = xmalloc((size_t)(NSTYLES * V + 1) * sizeof *g->S);
    for (j = 1; j <= V; j++) {
        char *w = word_of_rank(j), *up, *cp;
        size_t n = strlen(w), i;
        g->W[j].p = w;
        g->W[j].len = (int)n;
        letters = letters + (double)n * p[j] / sum;
        up = xmalloc(n + 1);
        cp = xmalloc(n + 1);
        for (i = 0; i <= n; i++) up[i] = (char)(w[i] >= 'a' && w[i] <= 'z' ? w[i] - 32 : w[i]);
        memcpy(cp, w, n + 1);
        cp[0] = up[0];
        g->UP[j].p = up;
        g->UP[j].len = (int)n;
        g->CP[j].p = cp;
        g->CP[j].len = (int)n;
        g->S[j + V * PLAIN] = mkstr(w, " ", "");
        g->S[j + V * CAP] = mkstr(cp, " ", "");
        g->S[j + V * STOP] = mkstr(w, ". ", "");
        g->S[j + V * PARA] = mkstr(w, ".\n\n", "");
        g->S[j + V * COMMA] = mkstr(w, ", ", "");
    }
    {
        double bytes_per_word = letters + 1 + (1 + 8.0 / 17) / 12 + 1.0 / 48;
        g->words_per_doc = (double)size / bytes_per_word;
    }
    for (k = 0; k < 8; k++) {
        g_words(g, g_range(g, 12, 40), &g->headers[k]);
        g_words(g, g_range(g, 12, 40), &g->footers[k]);
    }
    free(p);
    free(q);
    free(small);
    free(large);
}

static void gen_free(gen *g)
{
    int64_t j;
    int k;
    for (j = 1; j <= g->V; j++) {
        free(g->W[j].p);
        free(g->UP[j].p);
        free(g->CP[j].p);
        for (k = 0; k < NSTYLES; k++) free(g->S[j + g->V * k].p);
    }
    for (k = 0; k < 8; k++) {
        free(g->headers[k].v);
        free(g->footers[k].v);
    }
    free(g->T);
    free(g->A);
    free(g->S);
    free(g->W);
    free(g->UP);
    free(g->CP);
}

/* Append n words of running text to c: Gen:words in gen.lua. */
static void g_words(gen *g, int64_t n, codes *c)
{
    const int64_t V = g->V;
    const uint32_t V32 = (uint32_t)V; /* 32-bit division: x1, x2 < 2^31 */
    const double *T = g->T;
    const int32_t *A = g->A;
    int64_t x1 = g->x1, x2 = g->x2;
    int64_t i = c->n, last = i + n, para = 0;
    int32_t *v;
    codes_reserve(c, last + 1);
    v = c->v - 1; /* 1-based, as in Lua */
    while (i < last) {
        int64_t z, len, first, k, j;
        x1 = x1 * A1 % M1;
        x2 = x2 * A2 % M2;
        z = x1 - x2;
        if (z < 1) z += Z1;
        len = 4 + z % 17;
        if (para <= 0) para = 2 + (z - z % 17) / 17 % 5;
        if (i + len > last) len = last - i;
        first = i + 1;
        for (k = 2; k <= len; k += 2) {
            x1 = x1 * A1 % M1;
            j = (uint32_t)x1 % V32 + 1;
            if ((double)x1 >= T[j]) j = A[j];
            v[i + 1] = (int32_t)j;
            x2 = x2 * A2 % M2;
            j = (uint32_t)x2 % V32 + 1;
            if ((double)x2 >= T[j]) j = A[j];
            i += 2;
            v[i] = (int32_t)j;
        }
        if (len % 2 == 1) {
            x1 = x1 * A1 % M1;
            j = (uint32_t)x1 % V32 + 1;
            if ((double)x1 >= T[j]) j = A[j];
            i += 1;
            v[i] = (int32_t)j;
        }
        para -= 1;
        if (len >= 2) v[first] += (int32_t)(V * CAP);
        if (len >= 9) {
            k = first + 1 + z % (len - 2);
            v[k] += (int32_t)(V * COMMA);
        }
        v[i] += (int32_t)(V * ((para <= 0 || i == last) ? PARA : STOP));
    }
    c->n = last;
    g->x1 = x1;
    g->x2 = x2;
}

static void g_text(const gen *g, const codes *c, buf *out)
{
    int64_t i;
    out->n = 0;
    for (i = 0; i < c->n; i++) {
        const str *s = &g->S[c->v[i]];
        buf_add(out, s->p, (size_t)s->len);
    }
}

static const char *const SEP_PLAIN[] = { " ", " ", " ", "  ", " \t", ", ", " - ", "\n", " ... " };
static const char *const SEP_CAP[] = { " ", " ", "  ", "   " };
static const char *const SEP_STOP[] = { ". ", ". ", "! ", "? ", "... ", ".  ", ";\n" };
static const char *const SEP_PARA[] = { ".\n\n", "!\n\n\n", ".\r\n\r\n", ".\n \n" };
static const char *const SEP_COMMA[] = { ", ", "; ", ": ", " -- ", ",\t" };
static const char *const *const SEPS[] = { SEP_PLAIN, SEP_CAP, SEP_STOP, SEP_PARA, SEP_COMMA };
static const int NSEPS[] = { 9, 4, 7, 4, 5 };

static void g_format(gen *g, const codes *c, buf *out)
{
    int64_t i, V = g->V;
    out->n = 0;
    buf_adds(out, "  ");
    for (i = 0; i < c->n; i++) {
        int64_t j = (c->v[i] - 1) % V + 1;
        int64_t style = (c->v[i] - j) / V;
        double u = g_u(g);
        const str *w;
        if (style == CAP || u < 0.1) {
            w = &g->CP[j];
        } else if (u < 0.2) {
            w = &g->UP[j];
        } else if (u < 0.24) {
            buf_adds(out, "(");
            buf_add(out, g->W[j].p, (size_t)g->W[j].len);
            buf_adds(out, ")");
            w = NULL;
        } else if (u < 0.27) {
            buf_adds(out, "\"");
            buf_add(out, g->W[j].p, (size_t)g->W[j].len);
            buf_adds(out, "\"");
            w = NULL;
        } else {
            w = &g->W[j];
        }
        if (w) buf_add(out, w->p, (size_t)w->len);
        buf_adds(out, SEPS[style][(int64_t)floor(u * 7919) % NSEPS[style] + 1 - 1]);
    }
}

static void g_edit(gen *g, const codes *c, double rate, codes *out)
{
    int64_t V = g->V, n = c->n, k, i;
    double *op = xmalloc((size_t)(n + 1) * sizeof *op);
    for (i = 0; i <= n; i++) op[i] = -1;
    if (rate > 1) rate = 1;
    k = (int64_t)floor((double)n * rate + g_u(g));
    while (k > 0) {
        i = g_int(g, n);
        if (op[i] < 0) {
            op[i] = g_u(g);
            k--;
        }
    }
    out->n = 0;
    for (i = 1; i <= n; i++) {
        double o = op[i];
        int32_t ci = c->v[i - 1];
        if (o < 0) {
            codes_push(out, ci);
        } else if (o < 0.6) {
            codes_push(out, (int32_t)(ci - (ci - 1) % V - 1 + g_word(g)));
        } else if (o >= 0.8) {
            codes_push(out, g_word(g));
            codes_push(out, ci);
        }
    }
    free(op);
}

static void g_insert(gen *g, const codes *c, codes *out)
{
    int64_t V = g->V, n = c->n, i, nb = 0, times, t;
    int64_t *breaks = xmalloc((size_t)(n + 1) * sizeof *breaks);
    char *at = xmalloc((size_t)(n + 1));
    memset(at, 0, (size_t)(n + 1));
    for (i = 1; i <= n - 1; i++) {
        int64_t j = (c->v[i - 1] - 1) % V + 1;
        if ((c->v[i - 1] - j) / V == PARA) breaks[nb++] = i;
    }
    times = g_int(g, 3);
    for (t = 0; t < times; t++) at[nb > 0 ? breaks[g_int(g, nb) - 1] : n] = 1;
    out->n = 0;
    for (i = 1; i <= n; i++) {
        codes_push(out, c->v[i - 1]);
        if (at[i]) g_words(g, g_range(g, 40, 150), out);
    }
    free(breaks);
    free(at);
}

static void copy_range(const codes *c, int64_t a, int64_t b, codes *out)
{
    int64_t i;
    for (i = a; i <= b; i++) codes_push(out, c->v[i - 1]);
}

static void g_truncate(gen *g, const codes *c, codes *out)
{
    int64_t n = c->n, k = (int64_t)floor((double)n * (0.3 + 0.6 * g_u(g)));
    if (k < 12) k = n < 12 ? n : 12;
    out->n = 0;
    copy_range(c, 1, k, out);
}

static void g_excerpt(gen *g, const codes *c, codes *out)
{
    int64_t n = c->n, k = (int64_t)floor((double)n * (0.2 + 0.4 * g_u(g))), a;
    if (k < 12) k = n < 12 ? n : 12;
    a = g_int(g, n - k + 1);
    out->n = 0;
    copy_range(c, a, a + k - 1, out);
}

static void g_boilerplate(gen *g, const codes *c, codes *out)
{
    const codes *h = &g->headers[g_int(g, 8) - 1];
    const codes *f = &g->footers[g_int(g, 8) - 1];
    out->n = 0;
    copy_range(h, 1, h->n, out);
    copy_range(c, 1, c->n, out);
    copy_range(f, 1, f->n, out);
}

static double keep10(double e)
{
    double q = 1 - e, q2 = q * q, q4 = q2 * q2;
    return q4 * q4 * q2;
}

static double rate_for(double r)
{
    double q = 2 * r / (1 + r), lo = 0, hi = 1;
    int k;
    for (k = 0; k < 60; k++) {
        double mid = (lo + hi) / 2;
        if (keep10(mid) > q) lo = mid;
        else hi = mid;
    }
    return (lo + hi) / 2;
}

static double expected(double e)
{
    double q = keep10(e);
    return q / (2 - q);
}

/* The text of a variant into out; *rate set for edits (else -1). */
static void g_variant(gen *g, enum kind kind, const codes *c, buf *out, double *rate, codes *tmp)
{
    *rate = -1;
    switch (kind) {
    case K_EXACT: g_text(g, c, out); return;
    case K_FORMAT: g_format(g, c, out); return;
    case K_EDIT: {
        double r;
        if (g_u(g) < 0.5) r = 0.3 + 0.69 * g_u(g);
        else r = 0.42 + 0.16 * g_u(g);
        *rate = rate_for(r);
        g_edit(g, c, *rate, tmp);
        break;
    }
    case K_INSERT: g_insert(g, c, tmp); break;
    case K_TRUNCATE: g_truncate(g, c, tmp); break;
    case K_CONTAINED: g_excerpt(g, c, tmp); break;
    case K_BOILERPLATE: g_boilerplate(g, c, tmp); break;
    default: fprintf(stderr, "gen: bad variant kind\n"); exit(1);
    }
    g_text(g, tmp, out);
}

static int64_t g_length(gen *g)
{
    int64_t n = (int64_t)floor(g->words_per_doc * (0.5 + g_u(g)));
    return n < 12 ? 12 : n;
}

static void json_text(FILE *f, const char *s, size_t n)
{
    size_t i, from = 0;
    for (i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)s[i];
        const char *e;
        char u[8];
        if (ch >= 32 && ch != '"' && ch != '\\' && ch != 127) continue;
        fwrite(s + from, 1, i - from, f);
        from = i + 1;
        switch (ch) {
        case '"': e = "\\\""; break;
        case '\\': e = "\\\\"; break;
        case '\n': e = "\\n"; break;
        case '\r': e = "\\r"; break;
        case '\t': e = "\\t"; break;
        default: snprintf(u, sizeof u, "\\u%04x", ch); e = u; break;
        }
        fputs(e, f);
    }
    fwrite(s + from, 1, n - from, f);
}

typedef struct family {
    int64_t id, family, left;
    codes c;
} family;

static void usage(const char *msg)
{
    fprintf(stderr,
            "usage: gen --out PATH [--truth PATH] [--docs N] [--size BYTES] [--seed N]\n"
            "           [--families F] [--vocab V] [--zipf S] [--hosts H] [--txt F]\n"
            "Writes the corpus of shingle.gen as JSON Lines (id, url, date, text).\n");
    if (msg) fprintf(stderr, "gen: %s\n", msg);
    exit(msg ? 2 : 0);
}

int main(int argc, char **argv)
{
    int64_t N = 1000, size = 5000, seed = 1, V = 20000, H = -1;
    double f = 0.4, zipf = 1, txt = 0.25;
    const char *out_path = NULL, *truth_path = NULL;
    FILE *out, *truth = NULL;
    gen g;
    family *pool = NULL;
    int64_t npool = 0, pending = 0, id, nfam = 0;
    double p0, m = MEAN_FAMILY, bytes = 0;
    codes scratch = { 0 }, tmp = { 0 };
    buf text = { 0 };
    clock_t t0;
    int a;

    for (a = 1; a < argc; a++) {
        const char *name = argv[a], *val = a + 1 < argc ? argv[a + 1] : NULL;
        if (!strcmp(name, "-h") || !strcmp(name, "--help")) usage(NULL);
        if (!val) usage("every option needs a value");
        a++;
        if (!strcmp(name, "--docs")) N = strtoll(val, NULL, 10);
        else if (!strcmp(name, "--size")) size = strtoll(val, NULL, 10);
        else if (!strcmp(name, "--seed")) seed = strtoll(val, NULL, 10);
        else if (!strcmp(name, "--vocab")) V = strtoll(val, NULL, 10);
        else if (!strcmp(name, "--hosts")) H = strtoll(val, NULL, 10);
        else if (!strcmp(name, "--families")) f = strtod(val, NULL);
        else if (!strcmp(name, "--zipf")) zipf = strtod(val, NULL);
        else if (!strcmp(name, "--txt")) txt = strtod(val, NULL);
        else if (!strcmp(name, "--out")) out_path = val;
        else if (!strcmp(name, "--truth")) truth_path = val;
        else usage("unknown option");
    }
    if (!out_path) usage("--out is required");
    if (N < 0 || size < 100 || seed < 0 || V < 10 || V > 1000000 || !(f >= 0 && f <= 1) ||
        !(txt >= 0 && txt <= 1) || !(zipf >= 0 && zipf <= 4))
        usage("an option is out of range (see bench/lib/gen.lua for the ranges)");
    if (H < 0) H = N / 20 + 1;
    if (H < 1) usage("--hosts must be at least 1");
    out = strcmp(out_path, "-") ? fopen(out_path, "wb") : stdout;
    if (!out) { perror(out_path); return 1; }
    setvbuf(out, NULL, _IOFBF, 1 << 20);
    if (truth_path) {
        truth = fopen(truth_path, "wb");
        if (!truth) { perror(truth_path); return 1; }
    }

    t0 = clock();
    gen_init(&g, seed, V, zipf, size);
    p0 = f >= 1 ? 1 : (f / m) / (1 - f * (m - 1) / m);
    pool = xmalloc(sizeof *pool * 16);
    {
        int64_t pool_cap = 16;
        for (id = 1; id <= N; id++) {
            int64_t left = N - id + 1, fam_id = 0, parent = 0;
            double rate = -1;
            enum kind kind;
            if (pending > 0 && (pending >= left || g_u(&g) < (double)pending / (double)(pending + SPREAD))) {
                int64_t k = g_int(&g, npool);
                family *fam = &pool[k - 1];
                kind = VARIANTS[g_int(&g, 10) - 1];
                g_variant(&g, kind, &fam->c, &text, &rate, &tmp);
                fam_id = fam->family;
                parent = fam->id;
                fam->left -= 1;
                pending -= 1;
                if (fam->left == 0) {
                    free(fam->c.v);
                    pool[k - 1] = pool[npool - 1];
                    npool--;
                }
            } else {
                int start = g_u(&g) < p0;
                int64_t nv = FAMILY_VARIANTS[g_int(&g, 8) - 1];
                if (nv > left - 1 - pending) nv = left - 1 - pending;
                if (start && nv >= 1) {
                    family fam;
                    memset(&fam, 0, sizeof fam);
                    g_words(&g, g_length(&g), &fam.c);
                    nfam++;
                    fam.id = id;
                    fam.family = nfam;
                    fam.left = nv;
                    if (npool == pool_cap) {
                        pool_cap *= 2;
                        pool = xrealloc(pool, sizeof *pool * (size_t)pool_cap);
                    }
                    pool[npool++] = fam;
                    pending += nv;
                    g_text(&g, &fam.c, &text);
                    kind = K_ORIGINAL;
                    fam_id = nfam;
                } else {
                    scratch.n = 0;
                    g_words(&g, g_length(&g), &scratch);
                    g_text(&g, &scratch, &text);
                    kind = K_NOISE;
                }
            }
            {
                int64_t host = g_int(&g, H);
                const char *ext = g_u(&g) < txt ? ".txt" : ".html";
                int64_t mo = g_int(&g, 12), d = g_int(&g, 28), hh = g_int(&g, 24) - 1;
                int64_t mi = g_int(&g, 60) - 1, ss = g_int(&g, 60) - 1;
                char url[128], date[128];
                snprintf(url, sizeof url, "http://host%lld.example/path/%lld%s", (long long)host,
                         (long long)id, ext);
                snprintf(date, sizeof date, "2026-%02lld-%02lldT%02lld:%02lld:%02lldZ", (long long)mo,
                         (long long)d, (long long)hh, (long long)mi, (long long)ss);
                fprintf(out, "{\"id\":%lld,\"url\":\"%s\",\"date\":\"%s\",\"text\":\"", (long long)id, url,
                        date);
                json_text(out, text.p, text.n);
                fputs("\"}\n", out);
                bytes += (double)text.n;
                if (truth) {
                    fprintf(truth, "{\"id\":%lld,\"url\":\"%s\",\"family\":", (long long)id, url);
                    if (fam_id) fprintf(truth, "%lld", (long long)fam_id);
                    else fputs("null", truth);
                    fprintf(truth, ",\"kind\":\"%s\",\"parent\":", KIND_NAMES[kind]);
                    if (parent) fprintf(truth, "%lld", (long long)parent);
                    else fputs("null", truth);
                    if (rate >= 0) fprintf(truth, ",\"rate\":%.6f,\"expected\":%.4f", rate, expected(rate));
                    fputs("}\n", truth);
                }
            }
        }
    }
    if (fflush(out) != 0 || ferror(out) || (out != stdout && fclose(out) != 0)) {
        perror(out_path);
        return 1;
    }
    if (truth && (fflush(truth) != 0 || ferror(truth) || fclose(truth) != 0)) {
        perror(truth_path);
        return 1;
    }
    {
        double cpu = (double)(clock() - t0) / CLOCKS_PER_SEC;
        fprintf(stderr, "gen.c: %lld documents, %.1f MB of text, %.2f s CPU, %.1f MB/s of text\n",
                (long long)N, bytes / 1e6, cpu, cpu > 0 ? bytes / 1e6 / cpu : 0.0);
    }
    while (npool > 0) free(pool[--npool].c.v);
    free(pool);
    free(scratch.v);
    free(tmp.v);
    free(text.p);
    gen_free(&g);
    return 0;
}
