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

int main(void)
{
    make();
    RUN(rolling_ids_equal_fingerprints_from_scratch);
    RUN(palindromes_and_runs_pick_the_smaller_strand);
    RUN(every_byte_value_is_read_as_the_lua_extractor_reads_it);
    RUN(what_is_not_fasta_is_refused_naming_the_line);
    RUN(a_late_letter_makes_the_record_a_protein);
    return TEST_END();
}
