/* Chunk fingerprints: see chunks.h for the contract. */
#include "chunks.h"

#include <stdlib.h>
#include <string.h>

static const char *const scheme_names[SH_CHUNK_SCHEMES] = { "whole", "lines4", "lines2" };
static const unsigned scheme_lines[SH_CHUNK_SCHEMES] = { 0, 4, 2 };

const char *sh_chunk_scheme_name(int scheme)
{
    return scheme >= 0 && scheme < SH_CHUNK_SCHEMES ? scheme_names[scheme] : NULL;
}

int sh_chunk_scheme(const char *name)
{
    int i;
    for (i = 0; name && i < SH_CHUNK_SCHEMES; i++)
        if (strcmp(name, scheme_names[i]) == 0) return i;
    return -1;
}

void sh_chunker_init(sh_chunker *c, uint64_t seed, int anchored)
{
    memset(c, 0, sizeof *c);
    sh_rabin_init(&c->r32, sh_poly_random(seed ^ 0x43484e4bULL /* "CHNK" */, 32), 32);
    c->canon.flags = SH_CANON_HTML | SH_CANON_LOWER | SH_CANON_NUMBERS;
    c->canon.invalid = SH_UTF8_LATIN1;
    c->anchored = anchored;
}

void sh_chunks_free(sh_chunks *ch)
{
    int i;
    for (i = 0; i < SH_CHUNK_SCHEMES; i++) free(ch->fp[i]);
    free(ch->line_start);
    sh_tokens_free(&ch->tok);
    memset(ch, 0, sizeof *ch);
}

static int lower(int c) { return c >= 'A' && c <= 'Z' ? c + 32 : c; }

/* Tags that end a line of rendered text. */
static int block_tag(const char *s, size_t n)
{
    static const char *const names[] = { "p", "br", "div", "li", "tr", "td", "th", "h1", "h2", "h3", "h4",
        "h5", "h6", "pre", "table", "ul", "ol", "dl", "dt", "dd", "blockquote", "hr", "title", "body",
        "form", "center", "section", "article", "header", "footer", "nav", "caption", "address", NULL };
    size_t len = 0, i;
    if (n && s[0] == '/') { s++; n--; }
    while (len < n && len < 12 && ((lower(s[len]) >= 'a' && lower(s[len]) <= 'z') || (s[len] >= '0' && s[len] <= '9')))
        len++;
    if (len == 0 || (len < n && s[len] != '>' && s[len] != '/' && s[len] != ' ' && s[len] != '\t' &&
                     s[len] != '\n' && s[len] != '\r'))
        return 0;
    for (i = 0; names[i]; i++) {
        size_t k = strlen(names[i]), j;
        if (k != len) continue;
        for (j = 0; j < k && lower(s[j]) == names[i][j]; j++) {}
        if (j == k) return 1;
    }
    return 0;
}

/* Whether the source between two tokens ends a line. */
static int breaks(const char *s, size_t n, int html)
{
    size_t i;
    for (i = 0; i < n; i++) {
        if (s[i] == '\n') return 1;
        if (html && s[i] == '<' && i + 1 < n && block_tag(s + i + 1, n - i - 1)) return 1;
    }
    return 0;
}

static int push_fp(sh_chunks *out, int scheme, uint32_t fp)
{
    if (out->n[scheme] == out->cap[scheme]) {
        size_t cap = out->cap[scheme] ? 2 * out->cap[scheme] : 64;
        uint32_t *v = (uint32_t *)realloc(out->fp[scheme], cap * sizeof *v);
        if (!v) return -1;
        out->fp[scheme] = v;
        out->cap[scheme] = cap;
    }
    out->fp[scheme][out->n[scheme]++] = fp;
    return 0;
}

/* AUG fingerprint of lines [a, b) of the page: tokens separated by ' ', lines by '\n'. */
static uint32_t lines_fp(const sh_chunker *c, const sh_chunks *out, size_t a, size_t b)
{
    uint64_t f = 0;
    size_t l, t;
    for (l = a; l < b; l++) {
        for (t = out->line_start[l]; t < out->line_start[l + 1]; t++) {
            const sh_token *k = &out->tok.tok[t];
            f = sh_rabin_extend(&c->r32, f, out->tok.text + k->off, k->len);
            if (t + 1 < out->line_start[l + 1]) f = sh_rabin_extend(&c->r32, f, " ", 1);
        }
        if (l + 1 < b) f = sh_rabin_extend(&c->r32, f, "\n", 1);
    }
    return (uint32_t)(f & c->r32.mask);
}

sh_status sh_chunks_compute(const sh_chunker *c, const char *text, size_t n, int html,
                            sh_chunks *out, sh_error *err)
{
    sh_canon_opts o = c->canon;
    sh_status st;
    size_t i, nl = 0;
    int s;
    for (s = 0; s < SH_CHUNK_SCHEMES; s++) out->n[s] = 0;
    out->n_tokens = out->n_lines = 0;
    if (!html) o.flags &= ~(unsigned)SH_CANON_HTML;
    if ((st = sh_canon_tokenize(&o, text, n, &out->tok, err)) != SH_OK) return st;
    out->n_tokens = out->tok.n;
    if (out->tok.n == 0) return SH_OK;
    if (out->line_cap < out->tok.n + 1) {
        size_t *v = (size_t *)realloc(out->line_start, (out->tok.n + 1) * sizeof *v);
        if (!v) return sh_error_set(err, SH_ENOMEM, 0, "out of memory for the lines of a page of %zu bytes", n);
        out->line_start = v;
        out->line_cap = out->tok.n + 1;
    }
    out->line_start[nl++] = 0;
    for (i = 1; i < out->tok.n; i++) {
        const sh_token *p = &out->tok.tok[i - 1], *k = &out->tok.tok[i];
        size_t end = p->src_off + p->src_len;
        if (k->src_off > end && breaks(text + end, k->src_off - end, html)) out->line_start[nl++] = i;
    }
    out->line_start[nl] = out->tok.n;
    out->n_lines = nl;

    if (push_fp(out, SH_CHUNK_WHOLE, lines_fp(c, out, 0, nl)) != 0) goto nomem;
    for (s = SH_CHUNK_LINES4; s < SH_CHUNK_SCHEMES; s++) {
        size_t k = scheme_lines[s], a = 0, l;
        if (!c->anchored) {
            for (a = 0; a < nl; a += k)
                if (push_fp(out, s, lines_fp(c, out, a, a + k < nl ? a + k : nl)) != 0) goto nomem;
            continue;
        }
        for (l = 0; l < nl; l++) {
            uint32_t h = lines_fp(c, out, l, l + 1);
            if ((sh_mix(h) % k) == 0 || l + 1 - a >= k * k || l + 1 == nl) {
                if (push_fp(out, s, lines_fp(c, out, a, l + 1)) != 0) goto nomem;
                a = l + 1;
            }
        }
    }
    return SH_OK;
nomem:
    return sh_error_set(err, SH_ENOMEM, 0, "out of memory for the chunk fingerprints of a page of %zu bytes", n);
}
