/* FASTA k-mers (core/fasta.c): the rolling ids of k-mers and reverse
 * complements against fingerprinting each canonical k-mer from scratch; the
 * parsing rules (headers, comments, case, white space, \r\n, records
 * without sequence) and the two ways an input is not FASTA. The Lua
 * extractor (lua/shingle/extractors/fasta.lua) is compared with this in
 * spec/extractors_spec.lua. */
#include <stdlib.h>
#include "../fasta.h"
#include "test.h"

static sh_shingler sh;

static void make(void)
{
    sh_shingler_config c;
    sh_error err;
    memset(&c, 0, sizeof c);
    c.w = 10;
    c.k = 64;
    c.seed = 0x5348494E474CULL;
    sh_shingler_init(&sh, &c, &err);
}

static int lower(unsigned char b) { return b >= 'a' && b <= 'z' ? b - 32 : b; }

/* The id of the k-mer at s (upper-case sequence bytes), canonical for DNA:
 * the smaller of it and its reverse complement, built and compared; for
 * k <= 32 the id of its bases packed 2 bits each (A 0, C 1, G 2, T 3; the
 * first in the high bits of the first byte; ceil(k / 4) bytes). */
static uint64_t slow_id(const unsigned char *s, size_t k, int dna)
{
    unsigned char rc[SH_FASTA_MAX_K], packed[8];
    const unsigned char *c;
    size_t j;
    if (!dna) return sh_token_id(&sh, s, k);
    for (j = 0; j < k; j++) {
        unsigned char b = s[k - 1 - j];
        rc[j] = b == 'A' ? 'T' : b == 'C' ? 'G' : b == 'G' ? 'C' : b == 'T' ? 'A' : 'N';
    }
    c = memcmp(rc, s, k) < 0 ? rc : s;
    if (k > 32) return sh_token_id(&sh, c, k);
    memset(packed, 0, sizeof packed);
    for (j = 0; j < k; j++) {
        const unsigned v = c[j] == 'A' ? 0 : c[j] == 'C' ? 1 : c[j] == 'G' ? 2 : 3;
        packed[j / 4] = (unsigned char)(packed[j / 4] | v << (6 - 2 * (j % 4)));
    }
    return sh_token_id(&sh, packed, (k + 3) / 4);
}

/* Whether the DNA k-mer at s has an N (it then has no id). */
static int has_n(const unsigned char *s, size_t k)
{
    return memchr(s, 'N', k) != NULL;
}

static void rolling_ids_equal_fingerprints_from_scratch(void)
{
    static const unsigned ks[] = { 1, 2, 7, 8, 9, 15, 16, 17, 21, 31, 32, 33, 64, 100 };
    static char in[20000];
    static unsigned char seq[4][4000];
    size_t seqlen[4];
    uint64_t st = 11;
    long bad = 0;
    unsigned ki;
    int round;
    sh_work w;
    memset(&w, 0, sizeof w);
    for (ki = 0; ki < sizeof ks / sizeof *ks; ki++) {
        sh_fasta f;
        sh_error err;
        CHECK(sh_fasta_init(&f, &sh, ks[ki], &err) == SH_OK);
        for (round = 0; round < 20; round++) {
            size_t n = 0, r, i, nid = 0;
            int nrec = 1 + (int)(sh_splitmix_next(&st) % 4), dna[4];
            if (round % 5 == 0) n += (size_t)sprintf(in, "; a comment first\r\n\r\n");
            for (r = 0; r < (size_t)nrec; r++) {
                const char *alpha = (round + (int)r) % 3 == 2 ? "ACDEFGHIKLMNPQRSTVWY" : (round % 2 ? "acgtn" : "ACGT");
                const size_t al = strlen(alpha), len = (size_t)(sh_splitmix_next(&st) % 300);
                dna[r] = 1;
                n += (size_t)sprintf(in + n, ">record %zu\n", r);
                seqlen[r] = len;
                for (i = 0; i < len; i++) {
                    char b = alpha[sh_splitmix_next(&st) % al];
                    seq[r][i] = (unsigned char)lower((unsigned char)b);
                    in[n++] = b;
                    if (i % 61 == 60) in[n++] = (round % 3 == 1) ? '\r' : '\n'; /* line breaks */
                    if (i % 37 == 36) in[n++] = ' ';                            /* white space inside */
                }
                in[n++] = '\n';
                for (i = 0; i < len; i++) /* DNA: only A, C, G, T, N (a short protein may be) */
                    if (!strchr("ACGTN", seq[r][i])) dna[r] = 0;
            }
            if (sh_fasta_features(&f, in, n, &w, &err) != SH_OK) {
                fprintf(stderr, "k %u round %d: %s\n", ks[ki], round, err.msg);
                bad++;
                continue;
            }
            for (r = 0; r < (size_t)nrec; r++)
                for (i = 0; i + ks[ki] <= seqlen[r]; i++, nid++)
                    if (dna[r] && has_n(seq[r] + i, ks[ki])) nid--; /* no id */
                    else if (nid >= w.n_ids || w.ids[nid] != slow_id(seq[r] + i, ks[ki], dna[r])) {
                        if (!bad) fprintf(stderr, "k %u round %d record %zu at %zu: differs\n", ks[ki], round, r, i);
                        bad++;
                    }
            if (nid != w.n_ids) {
                if (!bad) fprintf(stderr, "k %u round %d: %zu k-mers, want %zu\n", ks[ki], round, w.n_ids, nid);
                bad++;
            }
        }
    }
    CHECK_EQ_U64(bad, 0);
    sh_work_free(&w);
}

static void palindromes_and_runs_pick_the_smaller_strand(void)
{
    /* ACGT is its own reverse complement; AAAA's is TTTT */
    const char *in = ">p\nACGTACGT\n>r\nAAAAAAAATTTTTTTT\n";
    sh_fasta f;
    sh_error err;
    sh_work w;
    size_t i;
    memset(&w, 0, sizeof w);
    CHECK(sh_fasta_init(&f, &sh, 4, &err) == SH_OK);
    CHECK(sh_fasta_features(&f, in, strlen(in), &w, &err) == SH_OK);
    CHECK_EQ_U64(w.n_ids, 5 + 13);
    /* ids of the bases packed 2 bits each: ACGT 00 01 10 11, CGTA 01 10 11 00 */
    CHECK_EQ_U64(w.ids[0], sh_token_id(&sh, "\x1b", 1));
    CHECK_EQ_U64(w.ids[1], sh_token_id(&sh, "\x6c", 1)); /* its complement TACG is larger */
    for (i = 5; i < 10; i++) CHECK_EQ_U64(w.ids[i], sh_token_id(&sh, "\0", 1));
    CHECK_EQ_U64(w.ids[17], sh_token_id(&sh, "\0", 1)); /* TTTT */
    sh_work_free(&w);
}

/* Every byte value in sequence lines (but the line breaks): white space
 * dropped, lower-case letters raised, the rest as it is, eight bytes at a
 * time or one by one. */
static void every_byte_value_is_read_as_the_lua_extractor_reads_it(void)
{
    static char in[4096];
    static unsigned char seq[4096];
    size_t n = 0, m = 0, i;
    int b, rep;
    long bad = 0;
    sh_fasta f;
    sh_error err;
    sh_work w;
    memset(&w, 0, sizeof w);
    CHECK(sh_fasta_init(&f, &sh, 5, &err) == SH_OK);
    n = (size_t)sprintf(in, ">all bytes\n");
    for (rep = 0; rep < 3; rep++)
        for (b = 0; b < 256; b++) {
            if (b == '\n' || b == '\r') continue;
            in[n++] = (char)b;
            if (!(b == ' ' || (b >= 9 && b <= 13))) seq[m++] = (unsigned char)(b >= 'a' && b <= 'z' ? b - 32 : b);
            /* a line break now and then, but not where the next line would
             * start with '>' or ';' (a header or a comment) */
            if ((b + rep) % 29 == 0 && b + 1 != '>' && b + 1 != ';') in[n++] = '\n';
        }
    CHECK(sh_fasta_features(&f, in, n, &w, &err) == SH_OK);
    CHECK_EQ_U64(w.n_ids, m - 4);
    for (i = 0; i + 5 <= m && i < w.n_ids; i++) bad += w.ids[i] != sh_token_id(&sh, seq + i, 5);
    CHECK_EQ_U64(bad, 0);
    sh_work_free(&w);
}

static void what_is_not_fasta_is_refused_naming_the_line(void)
{
    sh_fasta f;
    sh_error err;
    sh_work w;
    memset(&w, 0, sizeof w);
    CHECK(sh_fasta_init(&f, &sh, 3, &err) == SH_OK);
    CHECK(sh_fasta_features(&f, "\n;c\nACGT\n>h\nACGT\n", 17, &w, &err) == SH_EFORMAT);
    CHECK(strcmp(err.msg, "line 2: sequence data before the first '>' header: not FASTA") == 0);
    CHECK(sh_fasta_features(&f, "; only\n;comments\n", 17, &w, &err) == SH_EFORMAT);
    CHECK(strcmp(err.msg, "no FASTA record (a line starting with '>')") == 0);
    CHECK(sh_fasta_features(&f, ">empty\n>short\nAC\n", 17, &w, &err) == SH_OK && w.n_ids == 0);
    CHECK(sh_fasta_init(&f, &sh, 0, &err) == SH_EINVAL);
    CHECK(sh_fasta_init(&f, &sh, SH_FASTA_MAX_K + 1, &err) == SH_EINVAL);
    sh_work_free(&w);
}

/* A record that reads as DNA for a long stretch and then has a byte that
 * is no base (a protein's letter, late): every k-mer of it is a protein's
 * (its letters, no strand chosen), also those the 2-bit path had made
 * before it met the letter; and an N-only record has no k-mer. */
static void a_late_letter_makes_the_record_a_protein(void)
{
    static char in[600];
    static const unsigned ks[] = { 4, 21, 32, 33 };
    size_t n, i, ki;
    long bad = 0;
    sh_work w;
    memset(&w, 0, sizeof w);
    for (ki = 0; ki < sizeof ks / sizeof *ks; ki++) {
        sh_fasta f;
        sh_error err;
        CHECK(sh_fasta_init(&f, &sh, ks[ki], &err) == SH_OK);
        n = (size_t)sprintf(in, ">late\n");
        for (i = 0; i < 300; i++) in[n++] = "ACGTTGCA"[i % 8];
        in[n++] = 'E';
        n += (size_t)sprintf(in + n, "\n>n\nNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNN\n");
        CHECK(sh_fasta_features(&f, in, n, &w, &err) == SH_OK);
        CHECK_EQ_U64(w.n_ids, 301 - ks[ki] + 1);
        for (i = 0; i < w.n_ids; i++)
            if (w.ids[i] != sh_token_id(&sh, in + 6 + i, ks[ki])) bad++;
    }
    CHECK_EQ_U64(bad, 0);
    sh_work_free(&w);
}

/* The sequences of an input as the Lua extractor reads it, the obvious
 * way: lines are the runs of bytes between \r and \n; a line starting with
 * '>' starts a record, one starting with ';' is a comment; the others are
 * sequence, white space dropped and letters raised. Returns the records. */
#define ADV_RECS 16
#define ADV_LEN 6000
typedef struct adv_seqs {
    size_t n, len[ADV_RECS];
    unsigned char s[ADV_RECS][ADV_LEN];
} adv_seqs;

static void slow_parse(const char *in, size_t n, adv_seqs *q)
{
    size_t i = 0;
    q->n = 0;
    while (i < n) {
        size_t e = i, j;
        while (e < n && in[e] != '\n' && in[e] != '\r') e++;
        if (e > i && in[i] == '>') {
            q->len[q->n++] = 0;
        } else if (e > i && in[i] != ';') {
            for (j = i; j < e; j++) {
                const unsigned char b = (unsigned char)in[j];
                if (b == ' ' || (b >= 9 && b <= 13)) continue;
                q->s[q->n - 1][q->len[q->n - 1]++] = (unsigned char)lower(b);
            }
        }
        i = e + 1;
    }
}

/* The ids of every k-mer of q, each from scratch (slow_id; DNA k-mers with
 * an N have none), compared with sh_fasta_features of the input on shingler
 * s; the number of differences (the first one printed). */
static long compare_slow(const sh_shingler *s, unsigned k, const char *in, size_t n, sh_work *w, const char *what)
{
    static adv_seqs q;
    sh_fasta f;
    sh_error err;
    size_t r, i, nid = 0;
    long bad = 0;
    slow_parse(in, n, &q);
    if (sh_fasta_init(&f, s, k, &err) != SH_OK || sh_fasta_features(&f, in, n, w, &err) != SH_OK) {
        fprintf(stderr, "%s, k %u, %s: %s\n", what, k, sh_simd_name(s->level), err.msg);
        return 1;
    }
    for (r = 0; r < q.n; r++) {
        int dna = 1;
        for (i = 0; i < q.len[r]; i++) dna &= strchr("ACGTN", q.s[r][i]) != NULL && q.s[r][i] != 0;
        for (i = 0; i + k <= q.len[r]; i++) {
            if (dna && has_n(q.s[r] + i, k)) continue;
            if (nid >= w->n_ids || w->ids[nid] != slow_id(q.s[r] + i, k, dna)) {
                if (!bad)
                    fprintf(stderr, "%s, k %u, %s: record %zu, k-mer at %zu differs\n", what, k, sh_simd_name(s->level), r, i);
                bad++;
            }
            nid++;
        }
    }
    if (nid != w->n_ids) {
        if (!bad) fprintf(stderr, "%s, k %u, %s: %zu k-mers, want %zu\n", what, k, sh_simd_name(s->level), w->n_ids, nid);
        bad++;
    }
    return bad;
}

/* Every instruction set level (core/simd.h; a build without SIMD has the
 * portable one only) against the slow reference on adversarial input: runs
 * of N long and short, lower case, IUPAC codes (a record with one is a
 * protein's), line breaks of every kind at every position, white space
 * inside lines, records shorter than k and empty ones, several records. */
static void every_level_equals_the_slow_reference_on_adversarial_input(void)
{
    static const unsigned ks[] = { 1, 3, 4, 5, 8, 13, 20, 21, 22, 28, 29, 30, 31, 32, 33 };
    static const unsigned few[] = { 1, 4, 21, 29, 30, 32, 33 };
    static const char *breaks[] = { "\n", "\r\n", "\r", "\n\n", " \n", "\n;comment\n" };
    static char in[ADV_RECS * ADV_LEN * 2];
    static unsigned char base[400];
    sh_shingler lv[SH_SIMD_LEVELS];
    int have[SH_SIMD_LEVELS];
    uint64_t st = 2026;
    long bad = 0;
    unsigned ki;
    int l, round;
    sh_work w;
    memset(&w, 0, sizeof w);
    for (l = SH_SIMD_PORTABLE; l < SH_SIMD_LEVELS; l++) {
        sh_shingler_config c;
        sh_error err;
        memset(&c, 0, sizeof c);
        c.w = 10;
        c.k = 64;
        c.seed = 0x5348494E474CULL;
        c.simd = (sh_simd)l;
        have[l] = sh_shingler_init(&lv[l], &c, &err) == SH_OK && lv[l].level == (sh_simd)l;
    }
    CHECK(have[SH_SIMD_PORTABLE]);
    /* random documents */
    for (round = 0; round < 40; round++) {
        size_t n = 0, r, i;
        const size_t nrec = 1 + (size_t)(sh_splitmix_next(&st) % 6);
        const size_t line = 1 + (size_t)(sh_splitmix_next(&st) % 90);
        for (r = 0; r < nrec; r++) {
            const unsigned kind = (unsigned)(sh_splitmix_next(&st) % 8);
            size_t len = (size_t)(sh_splitmix_next(&st) % (kind == 0 ? 40 : 3000));
            n += (size_t)sprintf(in + n, ">rec %zu of round %d%s", r, round, breaks[sh_splitmix_next(&st) % 3]);
            for (i = 0; i < len; i++) {
                uint64_t x = sh_splitmix_next(&st);
                char b = "ACGT"[x & 3];
                if (kind == 2 && (x >> 8) % 500 == 0) b = "RYKMSWBDHV"[(x >> 20) % 10]; /* IUPAC: a protein's */
                if (kind == 3 && (x >> 8) % 97 == 0) { /* a run of N */
                    size_t run = 1 + (size_t)((x >> 20) % 60);
                    while (run-- && i < len) { in[n++] = (x >> 30) & 1 ? 'n' : 'N'; i++; }
                    if (i == len) break;
                }
                if (kind == 4 && (x >> 12) % 3 == 0) b = (char)(b + 32); /* lower case */
                if (kind == 5) b = "ACGTN"[(x >> 8) % 5];                    /* N anywhere */
                if (kind == 6) b = "ACDEFGHIKLMNPQRSTVWY"[(x >> 8) % 20];   /* a protein */
                in[n++] = b;
                if ((i + 1) % line == 0) n += (size_t)sprintf(in + n, "%s", breaks[(x >> 40) % 6]);
                else if ((x >> 50) % 211 == 0) in[n++] = (x >> 60) & 1 ? ' ' : '\t';
            }
            if (r + 1 < nrec || (sh_splitmix_next(&st) & 1)) in[n++] = '\n'; /* the last line's break, or none */
        }
        for (ki = 0; ki < sizeof ks / sizeof *ks; ki++)
            for (l = SH_SIMD_PORTABLE; l < SH_SIMD_LEVELS; l++)
                if (have[l]) bad += compare_slow(&lv[l], ks[ki], in, n, &w, "random document");
    }
    /* a line break (\n, \r\n, \r in turn) at every position of a sequence
     * with a run of N in it, and the sequence cut at every length */
    for (ki = 0; ki < sizeof base; ki++) base[ki] = (unsigned char)"ACGT"[sh_splitmix_next(&st) & 3];
    memset(base + 150, 'N', 7);
    base[200] = 'n';
    {
        size_t at, b;
        for (at = 0; at <= sizeof base; at++)
            for (b = at % 3; b < 3; b += 3) { /* each kind of break in turn */
                size_t n = (size_t)sprintf(in, ">one\n");
                memcpy(in + n, base, at);
                n += at;
                n += (size_t)sprintf(in + n, "%s", breaks[b]);
                memcpy(in + n, base + at, sizeof base - at);
                n += sizeof base - at;
                n += (size_t)sprintf(in + n, "\n>cut\n");
                memcpy(in + n, base, at); /* every length, shorter than k too */
                n += at;
                for (ki = 0; ki < sizeof few / sizeof *few; ki++)
                    for (l = SH_SIMD_PORTABLE; l < SH_SIMD_LEVELS; l++)
                        if (have[l]) bad += compare_slow(&lv[l], few[ki], in, n, &w, "a break at every position");
            }
    }
    CHECK_EQ_U64(bad, 0);
    sh_work_free(&w);
}

int main(void)
{
    make();
    RUN(rolling_ids_equal_fingerprints_from_scratch);
    RUN(palindromes_and_runs_pick_the_smaller_strand);
    RUN(every_byte_value_is_read_as_the_lua_extractor_reads_it);
    RUN(what_is_not_fasta_is_refused_naming_the_line);
    RUN(a_late_letter_makes_the_record_a_protein);
    RUN(every_level_equals_the_slow_reference_on_adversarial_input);
    return TEST_END();
}
