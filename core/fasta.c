/* FASTA k-mers: see fasta.h. */
#include "fasta.h"

#include <stdlib.h>
#include <string.h>

sh_status sh_fasta_init(sh_fasta *f, const sh_shingler *sh, unsigned k, sh_error *err)
{
    const uint64_t p = sh->c.idpoly;
    uint64_t xout, xpre, xinv;
    unsigned b;
    if (k < 1 || k > SH_FASTA_MAX_K)
        return sh_error_set(err, SH_EINVAL, 0, "the FASTA extractor's k is %u; use a whole number from 1 to %d", k,
                            SH_FASTA_MAX_K);
    f->sh = sh;
    f->k = k;
    xout = sh_poly_xpow(8u * (uint64_t)k + 64u, p, 64);
    xpre = sh_poly_xpow(8u * (uint64_t)k + 56u, p, 64);
    xinv = sh_poly_xpow(UINT64_MAX - 8u, p, 64); /* x^-8: x^(2^64 - 1) = 1 in GF(2^64) */
    for (b = 0; b < 256; b++) {
        f->out[b] = sh_poly_mulmod(b, xout, p, 64);
        f->pre[b] = sh_poly_mulmod(b, xpre, p, 64);
        f->inv[b] = sh_poly_mulmod(b, xinv, p, 64);
    }
    return SH_OK;
}

static const unsigned char complement[256] = { ['A'] = 'T', ['C'] = 'G', ['G'] = 'C', ['T'] = 'A', ['N'] = 'N' };

/* The ids of the k-mers of one sequence s[0..n) to ids (n - k + 1 of them). */
static void kmers(const sh_fasta *f, const unsigned char *s, size_t n, int dna, uint64_t *ids)
{
    const uint64_t *t8 = f->sh->id.t; /* b * x^64 mod P_id: a byte coming in at the end */
    const size_t k = f->k;
    uint64_t fw, rc = 0;
    size_t i, j;
    fw = sh_token_id(f->sh, s, k);
    if (dna) {
        /* the first reverse complement from scratch, byte by byte */
        for (j = k; j-- > 0;) rc = (rc << 8) ^ t8[rc >> 56] ^ t8[complement[s[j]]];
    }
    for (i = 0;; i++) {
        if (dna) {
            /* the smaller in byte order of s[i..i+k) and its reverse
             * complement, whose byte j is complement[s[i + k - 1 - j]]:
             * they mostly differ in their first bytes */
            int c = 0;
            for (j = 0; j < k && c == 0; j++) c = (int)s[i + j] - (int)complement[s[i + k - 1 - j]];
            ids[i] = c > 0 ? rc : fw;
        } else {
            ids[i] = fw;
        }
        if (i + k >= n)
            break;
        fw = (fw << 8) ^ t8[fw >> 56] ^ t8[s[i + k]] ^ f->out[s[i]];
        if (dna) {
            const uint64_t g = rc ^ t8[complement[s[i]]];
            rc = (g >> 8) ^ f->inv[g & 0xff] ^ f->pre[complement[s[i + k]]];
        }
    }
}

static int space(unsigned char b)
{
    return b == ' ' || (b >= 9 && b <= 13);
}

sh_status sh_fasta_features(const sh_fasta *f, const char *in, size_t n, sh_work *w, sh_error *err)
{
    const unsigned char *p = (const unsigned char *)in;
    size_t i = 0, line = 0, len = 0, r, records = 0, nid = 0;
    uint64_t *start;
    /* the sequences, upper-cased, without white space, one after another
     * in w->bytes; record r's starts at start[r] (in w->vals), and there is
     * at most one record per two bytes of input */
    if (w->cap_bytes < n + 1) {
        unsigned char *b = realloc(w->bytes, n + 1);
        if (!b) return sh_error_set(err, SH_ENOMEM, 0, "out of memory for a FASTA input of %zu bytes", n);
        w->bytes = b;
        w->cap_bytes = n + 1;
    }
    if (w->cap_vals < n / 2 + 2) {
        uint64_t *v = realloc(w->vals, (n / 2 + 2) * sizeof *v);
        if (!v) return sh_error_set(err, SH_ENOMEM, 0, "out of memory for a FASTA input of %zu bytes", n);
        w->vals = v;
        w->cap_vals = n / 2 + 2;
    }
    start = w->vals;
    w->n_ids = 0;
    while (i < n) {
        size_t e = i;
        while (e < n && p[e] != '\n' && p[e] != '\r') e++;
        if (e > i) { /* the Lua extractor's lines are the runs of bytes between \r and \n */
            line++;
            if (p[i] == '>') {
                start[records++] = len;
            } else if (p[i] != ';') {
                size_t j;
                if (records == 0)
                    return sh_error_set(err, SH_EFORMAT, line, "line %zu: sequence data before the first '>' header: not FASTA",
                                        line);
                for (j = i; j < e; j++)
                    if (!space(p[j]))
                        w->bytes[len++] = (unsigned char)(p[j] >= 'a' && p[j] <= 'z' ? p[j] - 32 : p[j]);
            }
        }
        i = e + 1;
    }
    if (records == 0)
        return sh_error_set(err, SH_EFORMAT, 0, "no FASTA record (a line starting with '>')");
    start[records] = len;
    for (r = 0; r < records; r++) {
        const unsigned char *q = w->bytes + start[r];
        const size_t m = (size_t)(start[r + 1] - start[r]);
        size_t j;
        int dna = 1;
        for (j = 0; j < m && dna; j++) dna = complement[q[j]] != 0;
        if (m >= f->k) {
            if (sh_work_reserve_ids(w, nid + m - f->k + 1) != SH_OK)
                return sh_error_set(err, SH_ENOMEM, 0, "out of memory for %zu k-mers", nid + m - f->k + 1);
            kmers(f, q, m, dna, w->ids + nid);
            nid += m - f->k + 1;
        }
    }
    w->n_ids = nid;
    return SH_OK;
}

sh_status sh_fasta_extract(void *fasta, const char *data, size_t len, const char *path, sh_work *w, int *features,
                           sh_error *err)
{
    (void)path;
    *features = 1;
    return sh_fasta_features((const sh_fasta *)fasta, data, len, w, err);
}
