/* The fast paths of every SIMD level (core/simd.h) against the portable
 * path, bit for bit: tokens (canon.c and its block scanners), token ids and
 * windows (shingler.c), MIN_s and MOD_m sketches (sketch.c). Inputs are
 * adversarial: every byte value, every UTF-8 length and invalid sequences
 * under each invalid-UTF-8 policy, tokens of every length at every offset
 * around the 16-, 32- and 64-byte block boundaries and at the end of the
 * buffer, HTML tags, comments and entities straddling them, and random
 * mixtures of all of these. Levels the processor (or the build, or
 * SHINGLE_SIMD) does not have are skipped and named on stderr. */
#include <stdlib.h>
#include "../intersect.h"
#include "../sketch.h"
#include "test.h"

static sh_simd best;

static uint64_t rnd(uint64_t *s) { return sh_splitmix_next(s); }

/* ---- tokens ----------------------------------------------------------------- */

/* status, tokens (source spans and canonical bytes) of in[0..n) at a level. */
typedef struct run {
    sh_status st;
    size_t err_off;
    sh_tokens t;
} run;

static void tokenize(run *r, unsigned flags, sh_utf8_mode mode, sh_simd level, const char *in, size_t n)
{
    sh_canon_opts o;
    sh_error e;
    /* the buffers are reused from the run before (another level, the same
     * input): poisoned, so that a token or head a level leaves unwritten
     * cannot pass for right */
    if (r->t.cap) {
        memset(r->t.tok, 0xa5, r->t.cap * sizeof *r->t.tok);
        memset(r->t.head, 0xa5, r->t.cap * SH_TOKEN_HEAD);
    }
    o.flags = flags;
    o.invalid = mode;
    o.simd = level;
    e.offset = 0;
    r->st = sh_canon_tokenize(&o, in, n, &r->t, &e);
    r->err_off = r->st == SH_OK ? 0 : e.offset;
}

/* 1 if a and b are the same outcome: same status (and offset of an error),
 * or the same tokens with the same spans and canonical bytes. */
static int same_run(const run *a, const run *b)
{
    size_t i;
    if (a->st != b->st) return 0;
    if (a->st != SH_OK) return a->err_off == b->err_off;
    if (a->t.n != b->t.n) return 0;
    for (i = 0; i < a->t.n; i++) {
        const sh_token *x = &a->t.tok[i], *y = &b->t.tok[i];
        if (x->src_off != y->src_off || x->src_len != y->src_len || x->len != y->len ||
            memcmp(a->t.text + x->off, b->t.text + y->off, x->len) != 0 ||
            memcmp(a->t.head + i * SH_TOKEN_HEAD, b->t.head + i * SH_TOKEN_HEAD, SH_TOKEN_HEAD) != 0)
            return 0;
    }
    return 1;
}

/* Every head is its token's first SH_TOKEN_HEAD bytes, zero-padded. */
static int heads_right(const run *a)
{
    size_t i, k;
    if (a->st != SH_OK) return 1;
    for (i = 0; i < a->t.n; i++) {
        const unsigned char *h = a->t.head + i * SH_TOKEN_HEAD;
        const size_t len = a->t.tok[i].len;
        for (k = 0; k < SH_TOKEN_HEAD; k++)
            if (h[k] != (k < len ? (unsigned char)a->t.text[a->t.tok[i].off + k] : 0)) return 0;
    }
    return 1;
}

static const unsigned flag_sets[] = {
    SH_CANON_DEFAULT_FLAGS, SH_CANON_DEFAULT_FLAGS | SH_CANON_HTML, SH_CANON_LOWER, SH_CANON_LOWER | SH_CANON_HTML,
    SH_CANON_NUMBERS, SH_CANON_NUMBERS | SH_CANON_HTML, SH_CANON_DEFAULT_FLAGS | SH_CANON_PUNCT,
    SH_CANON_DEFAULT_FLAGS | SH_CANON_HTML | SH_CANON_PUNCT, SH_CANON_DEFAULT_FLAGS | SH_CANON_FOLD,
    SH_CANON_DEFAULT_FLAGS | SH_CANON_HTML | SH_CANON_FOLD
};
#define N_FLAGS (sizeof flag_sets / sizeof *flag_sets)

/* Tokenize in[0..n) under every flag set and policy at every level the
 * processor has; count the outcomes that differ from the portable one. A
 * copy in a buffer of exactly n bytes, so that reading past the end is
 * caught by the sanitizers. */
static long differ_everywhere(const char *in, size_t n, int all_flags)
{
    static run ref, got;
    char *copy = (char *)malloc(n ? n : 1);
    long bad = 0;
    size_t f;
    int mode, lv;
    memcpy(copy, in, n);
    for (f = 0; f < (all_flags ? N_FLAGS : 2); f++)
        for (mode = SH_UTF8_ERROR; mode <= SH_UTF8_LATIN1; mode++) {
            tokenize(&ref, flag_sets[f], (sh_utf8_mode)mode, SH_SIMD_PORTABLE, copy, n);
            if (!heads_right(&ref)) {
                if (bad == 0) fprintf(stderr, "portable heads wrong on \"%.*s\"\n", (int)(n < 200 ? n : 200), in);
                bad++;
            }
            for (lv = SH_SIMD_SSE2; lv <= (int)best; lv++) {
                tokenize(&got, flag_sets[f], (sh_utf8_mode)mode, (sh_simd)lv, copy, n);
                if (!same_run(&ref, &got)) {
                    if (bad == 0)
                        fprintf(stderr, "level %s, flags 0x%x, invalid %d differ on %zu bytes: \"%.*s\"\n",
                                sh_simd_name((sh_simd)lv), flag_sets[f], mode, n, (int)(n < 200 ? n : 200), in);
                    bad++;
                }
            }
        }
    free(copy);
    return bad;
}

/* Every byte value, alone and inside, before and after words, at offsets
 * around the block boundaries. */
static void every_byte_value_tokenizes_alike_at_every_level(void)
{
    char buf[256];
    long bad = 0;
    int b, off;
    for (b = 0; b < 256; b++)
        for (off = 0; off < 140; off += (off < 70 ? 1 : 7)) {
            size_t n = 0;
            memset(buf, 'w', sizeof buf);
            for (n = 0; n < (size_t)off; n++) buf[n] = (char)((n % 7 == 6) ? ' ' : 'a' + (int)(n % 5));
            buf[n++] = (char)b;
            memcpy(buf + n, "xY 1\xc3\xa9 end", 11);
            n += 11;
            bad += differ_everywhere(buf, n, off % 9 == 0);
            bad += differ_everywhere(buf, (size_t)off + 1, 0); /* the byte last */
        }
    CHECK_EQ_U64(bad, 0);
}

/* A token of every length from 1 to 140 starting at every offset from 0 to
 * 130, so that it starts, ends and straddles 16-, 32- and 64-byte block
 * boundaries, with the end of the buffer right after it or a little later. */
static void tokens_at_every_offset_and_length_tokenize_alike(void)
{
    static char buf[400];
    long bad = 0;
    size_t off, len, tail;
    for (off = 0; off <= 130; off++)
        for (len = 1; len <= 140; len += (len < 72 ? 1 : 17))
            for (tail = 0; tail <= 2; tail++) {
                size_t n = 0, i;
                for (i = 0; i < off; i++) buf[n++] = (char)(i % 4 == 3 ? ' ' : 'B');
                if (off) buf[off - 1] = ' ';
                for (i = 0; i < len; i++) buf[n++] = (char)('a' + (int)((i * 7 + off) % 26));
                for (i = 0; i < tail; i++) buf[n++] = tail == 1 ? ' ' : (char)'Q';
                bad += differ_everywhere(buf, n, len % 13 == 0);
            }
    CHECK_EQ_U64(bad, 0);
}

/* Words of upper- and lowercase letters and digits at every offset, of
 * lengths around the 16 bytes of a head, with the end of the buffer from
 * right after them to 90 bytes later; then ideographs (tokens of their own,
 * which the block scanners copy only when they reach past the block)
 * ending at, before and after every 64-byte boundary. */
static void mixed_case_words_and_ideographs_near_the_end_tokenize_alike(void)
{
    static char buf[400];
    static const char alnum[] = "aZ0bY1cX2dW3eV4fU5gT6hS7iR8jQ9kPlOmNnMoLpKqJrIsHtGuFvEwDxCyBzA";
    long bad = 0;
    size_t off, len, tail, i;
    for (off = 0; off <= 96; off += (off < 70 ? 1 : 5))
        for (len = 1; len <= 34; len += (len < 18 ? 1 : 8))
            for (tail = 0; tail <= 90; tail += (tail < 20 ? 1 : 7)) {
                size_t n = 0;
                for (i = 0; i < off; i++) buf[n++] = (char)(i % 5 == 4 ? ' ' : alnum[(i * 3) % 62]);
                if (off) buf[off - 1] = ' ';
                for (i = 0; i < len; i++) buf[n++] = alnum[(i * 7 + off) % 62];
                for (i = 0; i < tail; i++) buf[n++] = (char)(i % 3 == 0 ? ' ' : alnum[(i + len) % 62]);
                bad += differ_everywhere(buf, n, (off + len + tail) % 11 == 0);
            }
    for (off = 40; off <= 200; off++)
        for (tail = 0; tail <= 20; tail += 4) {
            size_t n = 0;
            for (i = 0; i < off; i++) buf[n++] = (char)(i % 6 == 5 ? ' ' : alnum[i % 62]);
            for (i = 0; i < 4; i++) { memcpy(buf + n, "\xe6\x9d\xb1", 3); n += 3; }   /* ideographs */
            memcpy(buf + n, "\xf0\xa0\x80\x80", 4); n += 4;                        /* a 4-byte one */
            for (i = 0; i < tail; i++) buf[n++] = (char)(i % 2 ? ' ' : 'K');
            bad += differ_everywhere(buf, n, off % 7 == 0);
        }
    CHECK_EQ_U64(bad, 0);
}

/* Tag names (which the vector paths read 16 bytes at a time where 16 are
 * there) of every length up to 18, in mixed case, known and unknown, ended
 * by each kind of byte that ends one and by others, with the end of the
 * buffer at every distance from the name's start up to 24 bytes after it. */
static void tag_names_of_every_length_and_ending_tokenize_alike(void)
{
    static const char *const names[] = {
        "b", "B", "i", "br", "Br", "p", "em", "EM", "span", "SPAN", "sPaN", "div", "script", "SCRIPT", "style",
        "Style", "strong", "acronym", "ACRONYM", "strike", "h1", "H6", "x-y", "a1b2", "abcdefgh", "abcdefghi",
        "ABCDEFGHIJKLMNO", "abcdefghijklmnop", "abcdefghijklmnopq", "abcdefghijklmnopqr", "sp\xc3\xa9n", "q@r", "Z[", "z`",
        "spanx", "Bx", "acronyms", "ACRONYMX", "scripts", "stylE2", "emb", "a-",
    };
    static const char ends[] = { '>', '/', ' ', '\t', '\n', '\x7f', '\x00', '\x1f', '=', 'x', '"', '\x80', '!' };
    static char buf[128];
    long bad = 0;
    size_t ni, ei, cut;
    for (ni = 0; ni < sizeof names / sizeof *names; ni++)
        for (ei = 0; ei < sizeof ends; ei++) {
            size_t n = 0, l = strlen(names[ni]), start;
            memcpy(buf, "word<", 5);
            n = 5;
            start = n;
            memcpy(buf + n, names[ni], l);
            n += l;
            buf[n++] = ends[ei];
            memcpy(buf + n, " a=\"v>w\">in</b> tail WORDS here 123", 35);
            n += 35;
            for (cut = start; cut <= start + 24 && cut <= n; cut++)
                bad += differ_everywhere(buf, cut, cut % 5 == 0);
            bad += differ_everywhere(buf, n, 1);
        }
    CHECK_EQ_U64(bad, 0);
}

/* A word followed by markup that keeps it going (inline tags, comments), in
 * chains of one to nine, then by each kind of thing that may or may not
 * end it, the word placed so that the chain starts before, at and after a
 * 64-byte boundary, and the buffer ending inside the chain. */
static void words_followed_by_inline_markup_tokenize_alike(void)
{
    static const char *const chains[] = {
        "</span>", "<b>", "</a></code>", "<!-- c -->", "<i></i>", "<b><i><u><em>", "</a><!--x--></b>",
        "<b><b><b><b><b><b><b><b><b>", "<span class=\"kw\">", "<?p?>", "<!x>",
    };
    static const char *const after[] = {
        " ", ".", ")", "x", "Q", "7", "<p>", "</div>", "<![CDATA[q]]>", "&amp;", "&eacute;", "&nbsp;",
        "\xc3\xa9", "\xe2\x80\x94", "<", "<b", "< x", "<script>s</script>", "\x7f", "",
    };
    static char buf[256];
    long bad = 0;
    size_t ci, ai, pad, cut;
    for (ci = 0; ci < sizeof chains / sizeof *chains; ci++)
        for (ai = 0; ai < sizeof after / sizeof *after; ai++)
            for (pad = 52; pad <= 68; pad += 2) {
                size_t n = 0, i, lc = strlen(chains[ci]), la = strlen(after[ai]);
                for (i = 0; i < pad; i++) buf[n++] = (char)(i % 6 == 5 ? ' ' : 'a' + (int)(i % 7));
                memcpy(buf + n, "Word", 4);
                n += 4;
                memcpy(buf + n, chains[ci], lc);
                n += lc;
                memcpy(buf + n, after[ai], la);
                n += la;
                memcpy(buf + n, "tail end", 8);
                n += 8;
                bad += differ_everywhere(buf, n, pad % 4 == 0);
                for (cut = pad + 4; cut < pad + 4 + lc; cut += 3) bad += differ_everywhere(buf, cut, 0);
            }
    CHECK_EQ_U64(bad, 0);
}

/* Tags that the block scanners find from a block's masks ('>', quotes, '=')
 * or leave to the tag path: quoted values with '>' and the other quote in
 * them, quotes not after '=', in names, unterminated, '"' and '\'' in the
 * text before the tag (so that the block's count of '"' is odd at its '<'),
 * names ended by other bytes than a tag's name ends at, names one byte off
 * the table's, script and style; at every offset around the 64-byte block
 * boundary (starting, ending and straddling it), after a word or not,
 * followed by a word, a separator or an inline tag, and with the buffer
 * ending inside the tag, at its '>' and right after it. */
static void tags_found_by_block_masks_tokenize_alike(void)
{
    static const char *const tags[] = {
        "<a href=\"x\">", "<a href=\"x>y\">", "<a title=\"it's\">", "<a b='c>d'>", "<a b=\"c\" d='e>f'>",
        "<a b=c\"d>e\">", "<a b = \"c>d\">", "<a\"b>", "<a=\"x>y\">", "<a b=\"c>", "<a b=\"\" c=\"d\">",
        "<p x=\">\"y>", "<a href=\"#\">", "</a>", "</ a>", "</>", "<a/>", "<br/>", "<SPAN>", "<Span class=\"x\">",
        "<span-x>", "<spanx>", "<spa>", "<scrip>", "<script>x</script>", "</script>", "<style a=\"b>c\">p</style>",
        "<a\tb=\"c\">", "<a\x7f>", "<a\x01>", "<a\xc3\xa9>", "<a&b>", "<a<b>", "<a b=\"x\"y=\"z\">",
        "<a b=\"x\"\"y\">", "<a b=\">\">", "<a b=\"'\">", "<a b='\"'>", "<a b=\"a\" '>' c>", "<ab\"cd>",
        "<a b=&quot;>", "<abbr title=\"x\">", "<acronym>", "<acronyms>", "<b>", "<B>", "<i >", "<i/>",
        "<em\n>", "<q=>", "<s b=>", "<u b=\"=\">", "<kbd b==\"c>d\">", "<div class=\"a\" id=\"b\" data-x=\"c\">",
    };
    static const char *const before[] = { "w", " ", "x\"y ", "it's ", "\"", "=", "\"w" };
    static const char *const after[] = { "word more", " tail", "<b>x</b> y" };
    static char buf[256];
    long bad = 0;
    size_t ti, bi, ai, pad, i;
    for (ti = 0; ti < sizeof tags / sizeof *tags; ti++)
        for (bi = 0; bi < sizeof before / sizeof *before; bi++)
            for (pad = 0; pad <= 72; pad++) {
                size_t n = 0, lt = strlen(tags[ti]), lb = strlen(before[bi]), t0;
                ai = (pad + bi) % (sizeof after / sizeof *after);
                for (i = 0; i < pad; i++) buf[n++] = (char)(i % 7 == 6 ? ' ' : 'a' + (int)(i % 5));
                memcpy(buf + n, before[bi], lb);
                n += lb;
                t0 = n;
                memcpy(buf + n, tags[ti], lt);
                n += lt;
                memcpy(buf + n, after[ai], strlen(after[ai]));
                n += strlen(after[ai]);
                bad += differ_everywhere(buf, n, pad % 9 == 0);
                if (pad % 4 == 0)
                    for (i = t0 + 1; i <= t0 + lt + 1; i++) bad += differ_everywhere(buf, i, 0);
            }
    CHECK_EQ_U64(bad, 0);
}

/* Tags after a word and after none, at every offset of the block boundary:
 * after none, or after a word and a separator in the block, the scanner
 * takes a tag without its kind unless it opens raw text (<script>, <style>,
 * told by their keys), so names starting with 's' (near those) in either
 * case, nested inline tags,
 * comments, and what follows them (a word going on, separators, punctuation,
 * tags of either kind, references, non-ASCII, the end) are mixed here. The
 * text starts with a separator, so a tag whose '>' ends a block is not
 * taken as followed by one (the block's first byte). */
static void inline_tags_after_words_tokenize_alike(void)
{
    static const char *const tags[] = {
        "<b>", "</b>", "<i>", "<span class=\"x\">", "</span>", "<s>", "</s>", "<S>", "<sup>", "</sub>",
        "<small>", "<strong>", "<samp>", "<select>", "<script>x<y</script>", "<SCRIPT>a</SCRIPT>",
        "<Style>p{}</style>", "<stylex>", "<scripts>", "</script>", "<p>", "</p>", "<br>", "<a href=\"x\">",
        "</a>", "<b><i>", "</i></b>", "<!-- c -->", "<b><!-- c --></b>", "<b><i><u><em><b><i><u><em><b>",
        /* chains whose later tags the scanner reads from the block's masks
         * (canon_blocks.h): tags that end words or not, quotes with '>' in
         * values, s-names, a comment in the chain, 7 and 8 tags after the
         * first (its hop limit and keeps_then_ends's), ideographs in
         * attributes (the block's I mask) */
        "</b></li>", "</a><a href=\"x>y\">", "<b><a title='q>r'>", "<i><x y=z\"w>", "</b><script>x</script>",
        "<b><style>p{}</style>", "<b><s>", "<b><sup>", "</i><select>", "<b><!-- c --><p>", "<b><i><u><em><b><i><u><em>",
        "<b><i><u><em><b><i><u><em></p>", "<b><i><u><em><b><i><u></p>", "<span class=\"a\"><b></span></td>",
        "<b><a title=\"\xe6\x9d\xb1 x\">", "</i><p title=\"\xe4\xb8\x80\">",
    };
    static const char *const before[] = { "w", " ", ".", "w ", "w<i>", "w</b>", "7", "\xc3\xa9", "\xe6\x9d\xb1" };
    static const char *const after[] = {
        "", "x", " x", ",y", "<p>z", "</li> z", "<b>y</b>", "</i>-", "&amp;q", "\xc3\xa9", "<", "<s>t",
        /* ideographs of the range the masks take (kern9t): not in A, not in X */
        "\xe6\x9d\xb1", "\xe4\xb8\x80x", "\xe9\xbe\xa5 ",
    };
    static char buf[256];
    long bad = 0;
    size_t ti, bi, ai, pad, i;
    for (ti = 0; ti < sizeof tags / sizeof *tags; ti++)
        for (bi = 0; bi < sizeof before / sizeof *before; bi++)
            for (ai = 0; ai < sizeof after / sizeof *after; ai++)
                for (pad = 0; pad <= 72; pad++) {
                    size_t n = 0, lt = strlen(tags[ti]), lb = strlen(before[bi]), la = strlen(after[ai]), t0;
                    for (i = 0; i < pad; i++) buf[n++] = (char)(i % 7 == 0 ? ' ' : 'a' + (int)(i % 5));
                    memcpy(buf + n, before[bi], lb);
                    n += lb;
                    t0 = n;
                    memcpy(buf + n, tags[ti], lt);
                    n += lt;
                    memcpy(buf + n, after[ai], la);
                    n += la;
                    bad += differ_everywhere(buf, n, 0);
                    if (ai == 0 && pad % 4 == 0)
                        for (i = t0 + 1; i < t0 + lt; i++) bad += differ_everywhere(buf, i, 0);
                }
    CHECK_EQ_U64(bad, 0);
}

/* Pieces that the block scanners treat specially, to straddle boundaries. */
static const char *const pieces[] = {
    "a", "Q", "7", "2024", "abcdefghij", "ABCDEFGHIJKLMNOPQRSTU", "x9y8",
    " ", "  ", "\n", "\t", ", ", ".", "-", "'", "\"", "=", ";", "#", "/", "\x7f", "\x1f",
    "\xc3\xa9", "\xc3\x89", "\xd0\x96", "\xc2\xa0", "\xe2\x80\x94", "\xe2\x80\x9c", "\xe2\x80\x99",
    "\xe6\x9d\xb1", "\xe3\x81\x82", "\xcc\x81", "\xf0\x9f\x98\x80", "\xf0\x90\x8c\xb0", "\xef\xbc\xa1",
    "\x80", "\xbf", "\xc0\xaf", "\xc3", "\xe2\x80", "\xf0\x9f\x98", "\xed\xa0\x80", "\xf4\x90\x80\x80", "\xff", "\xfe",
    "<", ">", "&", "<i>", "</B>", "<b >", "<br>", "<br/>", "<p>", "</p>", "<div class=\"a>b\">",
    "<p class='x>y'>", "<a href=x>", "<a title = \"q\">", "<img alt=\"it's\" src='a\"b'>", "<x y=z\"w>",
    "<!-- c -->", "<!---->", "<!DOCTYPE html>", "<?xml v?>", "<![CDATA[ab]]>", "<![CDATA[x", "<!-- open",
    "<script>a<b</script>", "<style>p{}</STYLE >", "<script", "</script>", "<span>", "</span>",
    "<![CDATA[\xe6\x9d\xb1]]>", "<![CDATA[ab]]>", "\xe6\x9d\xb1\xcc\x81", "<b>\xcc\x81",
    "<acronym>", "<strike>", "<strong>", "<code>", "<abcdefghij>", "<a\x00b>", "< p>", "<1>", "<=>",
    "&amp;", "&nbsp;", "&eacute;", "&Eacute;", "&#65;", "&#x39;", "&#x1F600;", "&#0;", "&#xD800;",
    "&copy2020", "&amplifier", "&mdash;", "&lt;", "&gt", "&bogus;", "&#", "&#x", "&", "&;",
    "\x00", /* one NUL byte */
};
#define N_PIECES (sizeof pieces / sizeof *pieces)

static size_t random_text(uint64_t *s, char *buf, size_t cap)
{
    size_t n = 0, want = (size_t)(rnd(s) % 260);
    while (n < want) {
        const char *p = pieces[rnd(s) % N_PIECES];
        size_t l = p[0] ? strlen(p) : 1;
        if (n + l > cap) break;
        memcpy(buf + n, p, l);
        n += l;
    }
    return n;
}

static void random_mixtures_tokenize_alike(void)
{
    static char buf[600];
    uint64_t s = 2026;
    long bad = 0;
    int round;
    for (round = 0; round < 4000; round++) {
        size_t n = random_text(&s, buf, sizeof buf);
        bad += differ_everywhere(buf, n, round % 4 == 0);
    }
    CHECK_EQ_U64(bad, 0);
}

/* Tags, comments and entities placed across the 64-byte block boundary at
 * every offset, between words that touch them. */
static void markup_straddling_block_boundaries_tokenizes_alike(void)
{
    static const char *const marks[] = {
        "<b>", "</p>", "<a href=\"x y\" title='z'>", "<!-- a b -->", "&nbsp;", "&eacute;", "&#x41;",
        "<script>var a = '<p>';</script>", "\xe2\x80\x94", "\xc3\xa9", "<![CDATA[in side]]>",
        "<p class=\"a\" id=b data-x = 'c>d'>"
    };
    static char buf[400];
    long bad = 0;
    size_t m, at, i;
    for (m = 0; m < sizeof marks / sizeof *marks; m++)
        for (at = 40; at < 140; at++) {
            size_t n = 0, ml = strlen(marks[m]);
            for (i = 0; i + 1 < at; i++) buf[n++] = (char)(i % 6 == 5 ? ' ' : 'k');
            buf[n++] = at % 2 ? ' ' : 'z';           /* a word runs into the markup or not */
            memcpy(buf + n, marks[m], ml);
            n += ml;
            memcpy(buf + n, at % 3 ? "tail word" : " tail", at % 3 ? 9 : 5);
            n += at % 3 ? 9 : 5;
            bad += differ_everywhere(buf, n, at % 11 == 0);
        }
    CHECK_EQ_U64(bad, 0);
}

/* A long document (blocks in the thousands) of realistic markup. */
static void a_long_page_tokenizes_alike(void)
{
    static const char *const parts[] = {
        "<p>The <b>quick</b> brown fox &amp; the lazy dog.</p>\n", "<li><a href=\"/x/y.html\">Link text</a></li>\n",
        "<td class=\"num\">1,234</td><td>caf\xc3\xa9 \xe2\x80\x94 na\xc3\xafve</td>\n",
        "<!-- a comment with <tags> inside -->\n", "<pre>int main(void) { return 0; }</pre>\n",
        "Plain text with \xe2\x80\x9cquotes\xe2\x80\x9d and it\xe2\x80\x99s done.  ", "&nbsp;&nbsp;&mdash;&#8212;",
        "<span class=\"pre\">shingle</span>", "\xe6\x9d\xb1\xe4\xba\xac\xe3\x81\xaf", "<script>if (a < b) x();</script>"
    };
    static char buf[200000];
    uint64_t s = 7;
    size_t n = 0;
    while (n < sizeof buf - 200) {
        const char *p = parts[rnd(&s) % (sizeof parts / sizeof *parts)];
        memcpy(buf + n, p, strlen(p));
        n += strlen(p);
    }
    CHECK_EQ_U64(differ_everywhere(buf, n, 1), 0);
}

/* The UTF-8 bytes of code point cp at d; returns their count. */
static size_t put_utf8(char *d, unsigned cp)
{
    if (cp < 0x80) { d[0] = (char)cp; return 1; }
    if (cp < 0x800) { d[0] = (char)(0xC0 | (cp >> 6)); d[1] = (char)(0x80 | (cp & 0x3F)); return 2; }
    if (cp < 0x10000) {
        d[0] = (char)(0xE0 | (cp >> 12)); d[1] = (char)(0x80 | ((cp >> 6) & 0x3F)); d[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    d[0] = (char)(0xF0 | (cp >> 18)); d[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    d[2] = (char)(0x80 | ((cp >> 6) & 0x3F)); d[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

/* The block scanners take CJK ideographs of U+4E00..U+9FA5 without utf8proc
 * (canon.c, cjk_at and ideo_fast): every code point of that range and of
 * 256 on either side, each followed by what may end it, continue it or
 * leave it to the general scanner (another ideograph, ASCII, a combining
 * mark, markup, an entity, a letter beyond ASCII, an ideograph outside the
 * range, truncated and invalid sequences, the end of the buffer); checked
 * against the portable level, which asks utf8proc for each. */
static void cjk_ideographs_of_the_fast_range_tokenize_alike(void)
{
    static const char *const after[] = {
        "", " ", "a", "Z9", "\xcc\x81", "<b>", "</i>x", "<p>", "&amp;", "&#x301;", "\xe3\x81\x82", "\xc3\xa9",
        "\xe4\xb8", "\xe4\x41\x80", "\xe9\xbe\xa6", "\xe4\xb7\xbf", "\xef\xbc\x8c", "\xc2\xa0", ".", "\x80",
    };
    static char buf[8192];
    long bad = 0;
    unsigned cp = 0x4E00 - 256, k = 0;
    size_t n = 0, lead = 0;
    for (; cp <= 0x9FA5 + 256; cp++, k++) {
        const char *a = after[(k * 7 + (k >> 5)) % (sizeof after / sizeof *after)];
        n += put_utf8(buf + n, cp);
        if (k % 3 == 0) { memcpy(buf + n, a, strlen(a)); n += strlen(a); }
        if (n > sizeof buf - 64) {
            bad += differ_everywhere(buf, n, 0);
            /* the next buffer starts at another offset of the block */
            lead = (lead + 5) % 67;
            memset(buf, 'q', lead);
            if (lead) buf[lead - 1] = ' ';
            n = lead;
        }
    }
    bad += differ_everywhere(buf, n, 1);
    /* one ideograph at every offset around the block boundary, with each
     * follower, the buffer ending right after it or later; and in CDATA */
    for (k = 0; k < sizeof after / sizeof *after; k++) {
        size_t off, cut;
        for (off = 50; off <= 70; off++) {
            size_t i, m = 0;
            for (i = 0; i < off; i++) buf[m++] = (char)(i % 5 == 4 ? ' ' : 'w');
            m += put_utf8(buf + m, off % 2 ? 0x4E00 : 0x9FA5);
            memcpy(buf + m, after[k], strlen(after[k]));
            m += strlen(after[k]);
            memcpy(buf + m, "\xe6\x9d\xb1 end", 7);
            m += 7;
            for (cut = off + 1; cut <= m; cut++) bad += differ_everywhere(buf, cut, cut == m);
        }
        n = 0;
        memcpy(buf, "x <![CDATA[\xe6\x9d\xb1]]>", 18);
        n = 18;
        memcpy(buf + n, after[k], strlen(after[k]));
        n += strlen(after[k]);
        bad += differ_everywhere(buf, n, 1);
    }
    CHECK_EQ_U64(bad, 0);
}

/* The block scanners find those ideographs for a whole block by masks
 * (canon_blocks.h): each is a token of its own where what follows it is in
 * the block and cannot be a combining mark, and is left to stop_kind
 * otherwise. Ideographs with followers at the edges of those rules
 * (U+3029 and the mark U+302A, U+3000, U+FF00, U+FF7F and U+FF80, the
 * variation selector U+FE00, a mark of two bytes, truncated and invalid
 * sequences, kana, '<', '&', words, ideographs in and out of the range,
 * sequences of the range cut short before ASCII), at
 * every offset of the block, so that an ideograph and its follower fall on
 * either side of the 64-byte boundary and of the end of the buffer; in
 * text, in HTML, in a tag's attribute and in CDATA (followed by a mark
 * after it, which continues an ideograph that ends it). */
static void ideographs_found_by_masks_tokenize_alike(void)
{
    static const char *const after[] = {
        "\xe3\x80\xa9", "\xe3\x80\xaa", "\xe3\x80\xaf", "\xe3\x80\x80", "\xe3\x80\x82", "\xef\xbc\x80",
        "\xef\xbc\x8c", "\xef\xbd\xbf", "\xef\xbe\x80", "\xef\xb8\x80", "\xcc\x81", "\xe3\x80", "\xef\xbc",
        "\xe3\x80" "a", "\xef\xbc" "a", "\xe3\x81\x82", "<b>", "&amp;", "a1", " ", "\xe4\xb8\x80", "\xe9\xbe\xa5",
        "\xe9\xbe\xa6", "\xe4\xb7\xbf", "\xe4\xb8" "a b", "\xe9\xbe" "a ", "\xe6" "ab", "\xe5" "a\x80 ",
        "\xe3\x82\x99", "\xea\x93\x90" "\xea\x93\x91 ",
    };
    static const char *const frame[][2] = {
        { "", "" }, { "x", "y" }, { "<p title=\"", "\">x</p>" }, { "<![CDATA[", "]]>y" }, { "<![CDATA[", "]]>\xcc\x81" },
    };
    static char buf[512];
    long bad = 0;
    size_t k, f, off;
    for (k = 0; k < sizeof after / sizeof *after; k++)
        for (f = 0; f < sizeof frame / sizeof *frame; f++)
            for (off = 0; off <= 70; off++) {
                size_t n = 0, i, cut;
#define PUT(str) do { memcpy(buf + n, (str), strlen(str)); n += strlen(str); } while (0)
                for (i = 0; i < off; i++) buf[n++] = (char)(i % 5 == 4 ? ' ' : 'w');
                PUT(frame[f][0]);
                PUT("\xe4\xb8\x80\xe6\x9d\xb1"); /* two, the first followed by the second */
                cut = n;
                PUT(after[k]);
                PUT("\xe9\xbe\xa5");
                PUT(after[k]);
                PUT("\xe6\x9d\xb1"); /* and one right before the frame's end */
                PUT(frame[f][1]);
#undef PUT
                bad += differ_everywhere(buf, n, off % 9 == 0);
                bad += differ_everywhere(buf, n - strlen(frame[f][1]), 0); /* the buffer ends after the follower */
                bad += differ_everywhere(buf, cut, 0);                      /* after an ideograph */
            }
    CHECK_EQ_U64(bad, 0);
}

/* Several tags and words in one block, so that the block scanner takes
 * the words after all its tags (the bytes of a tag taken out of the word
 * mask): words touching tags on either side, inline and other tags,
 * attributes, script and style with and without their ends, closing tags
 * of raw text, at every offset of the block. */
static void tags_and_words_sharing_blocks_tokenize_alike(void)
{
    static const char *const lines[] = {
        "ab<p>cd<b>ef</b> gh<br>ij<i>kl</i>mn</p>op",
        "<li><a href=\"x.html\">Link</a>, <code>fn</code>(x)</li><li>1<sup>2</sup>3</li>",
        "w<span class=\"n\">foo</span>.<span class='k'>bar</span>=<em>baz</em>q",
        "a<script>x<y</script>b<style>p{}</style>c</script>d</style>e<SCRIPT>z</SCRIPT >f",
        "one<div\nid=x>two</div\t>three<x-y>four</x-y>five<abcdefghi>six</abcdefgh>seven",
        "1<b>2</b>3 4<p>5</p>6 <i>7</i> 8<wbr>9<img src=a.png>0",
        "<b>\xe6\x9d\xb1</b>\xe4\xb8\x80<p>\xe9\xbe\xa5<i>x</i>\xc3\xa9<u>y</u>",
        "t<script>",
        "t<style>u",
    };
    static char buf[400];
    long bad = 0;
    size_t li, pad;
    for (li = 0; li < sizeof lines / sizeof *lines; li++)
        for (pad = 0; pad <= 70; pad++) {
            size_t n = 0, i, l = strlen(lines[li]);
            for (i = 0; i < pad; i++) buf[n++] = (char)(i % 4 == 3 ? ' ' : 'c');
            memcpy(buf + n, lines[li], l);
            n += l;
            bad += differ_everywhere(buf, n, pad % 5 == 0);
            memcpy(buf + n, lines[(li + 1) % (sizeof lines / sizeof *lines)], 8);
            bad += differ_everywhere(buf, n + 8, 0);
        }
    CHECK_EQ_U64(bad, 0);
}

/* The references the block scanners read without html_entity (canon.c,
 * entity_fast): &lt; &gt; &amp; &quot; and every &#NN; from &#00; to
 * &#99; (letters and digits among them, which it leaves), next to near
 * misses (no ';', other case, longer names, three digits, hex), touching
 * words on both sides, across the block boundary and at the end of the
 * buffer (fewer than 8 bytes left). */
static void common_character_references_tokenize_alike(void)
{
    static const char *const refs[] = {
        "&lt;", "&gt;", "&amp;", "&quot;", "&LT;", "&Gt;", "&lt", "&gt", "&amp", "&quot", "&lta;", "&ampx;", "&quo;",
        "&quott;", "&#;", "&#6;", "&#060;", "&#x3c;", "&#X3C;", "&#100;", "&#1", "&#12", "&#123", "&#9x;",
    };
    static char buf[256];
    long bad = 0;
    size_t r, off, cut;
    char num[8];
    int v;
    for (r = 0; r < sizeof refs / sizeof *refs + 200; r++) {
        const char *ref;
        size_t l;
        if (r < sizeof refs / sizeof *refs) {
            ref = refs[r];
        } else {
            v = (int)(r - sizeof refs / sizeof *refs);
            snprintf(num, sizeof num, v < 100 ? "&#%02d;" : "&#%02d", v % 100);
            ref = num;
        }
        l = strlen(ref);
        for (off = 54; off <= 66; off++) {
            size_t n = 0, i;
            for (i = 0; i < off; i++) buf[n++] = (char)(i % 5 == 4 ? ' ' : 'h');
            memcpy(buf + n, ref, l);
            n += l;
            memcpy(buf + n, "x9 <b>t</b>&amp;u", 17);
            n += 17;
            for (cut = off + 1; cut <= n; cut++) bad += differ_everywhere(buf, cut, cut == n && off % 4 == 0);
        }
    }
    CHECK_EQ_U64(bad, 0);
}

/* ---- token ids, windows, sketches ------------------------------------------ */

static sh_shingler shs[SH_SIMD_LEVELS];

static int make_levels(int w, int k, sh_option opt, unsigned flags)
{
    int lv;
    for (lv = SH_SIMD_PORTABLE; lv <= (int)best; lv++) {
        sh_shingler_config c;
        sh_error err;
        memset(&c, 0, sizeof c);
        c.w = w;
        c.k = k;
        c.seed = 0x5348494E474CULL;
        c.option = opt;
        c.canon.flags = flags;
        c.canon.invalid = SH_UTF8_LATIN1;
        c.simd = (sh_simd)lv;
        if (sh_shingler_init(&shs[lv], &c, &err) != SH_OK || shs[lv].level != (sh_simd)lv) return 0;
    }
    return 1;
}

/* Texts of random words of 1 to 40 bytes (ids of every length class), some
 * long enough for the many-chain windows: ids and fingerprints alike. */
static void ids_and_windows_agree_at_every_level(void)
{
    static char buf[30000];
    static const int ws[] = { 1, 2, 3, 10, 33, 100 };
    static const int ks[] = { 64, 40 };
    uint64_t s = 31;
    long bad = 0;
    int wi, ki, round, lv;
    sh_work ref, got;
    memset(&ref, 0, sizeof ref);
    memset(&got, 0, sizeof got);
    for (ki = 0; ki < 2; ki++)
        for (wi = 0; wi < 6; wi++) {
            CHECK(make_levels(ws[wi], ks[ki], SH_OPTION_B, SH_CANON_DEFAULT_FLAGS));
            for (round = 0; round < 40; round++) {
                /* token counts around the thresholds of the vector paths */
                size_t want = round < 20 ? (size_t)(50 + round * 3) : (size_t)(rnd(&s) % 2500), n = 0, t, i;
                sh_error err;
                for (t = 0; t < want && n + 50 < sizeof buf; t++) {
                    size_t len = 1 + (size_t)(rnd(&s) % (rnd(&s) % 4 ? 9 : 40));
                    for (i = 0; i < len; i++) buf[n++] = (char)('a' + (int)(rnd(&s) % 26));
                    buf[n++] = ' ';
                }
                if (sh_shingle_text(&shs[SH_SIMD_PORTABLE], &ref, buf, n, &err) != SH_OK) { bad++; continue; }
                for (lv = SH_SIMD_SSE2; lv <= (int)best; lv++) {
                    if (sh_shingle_text(&shs[lv], &got, buf, n, &err) != SH_OK || got.n_ids != ref.n_ids ||
                        got.n_fps != ref.n_fps || memcmp(got.ids, ref.ids, ref.n_ids * 8) != 0 ||
                        memcmp(got.fps, ref.fps, ref.n_fps * 8) != 0) {
                        if (!bad) fprintf(stderr, "ids/window differ: level %s, w %d, k %d, %zu tokens\n",
                                          sh_simd_name((sh_simd)lv), ws[wi], ks[ki], ref.n_ids);
                        bad++;
                    }
                }
            }
        }
    CHECK_EQ_U64(bad, 0);
    sh_work_free(&ref);
    sh_work_free(&got);
}

/* The inverse of sh_mix (splitmix64's finaliser): the shingle whose mixed
 * value is 0 (which hash tables cannot hold as a key) can then be planted. */
static uint64_t inv_odd(uint64_t a)
{
    uint64_t x = a;
    int i;
    for (i = 0; i < 6; i++) x *= 2 - a * x;
    return x;
}

static uint64_t unmix(uint64_t y)
{
    y ^= (y >> 31) ^ (y >> 62);
    y *= inv_odd(0x94d049bb133111ebULL);
    y ^= (y >> 27) ^ (y >> 54);
    y *= inv_odd(0xbf58476d1ce4e5b9ULL);
    y ^= (y >> 30) ^ (y >> 60);
    return y - 0x9e3779b97f4a7c15ULL;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* Builds a sketch at level lv after filling the work's scratch (values and
 * tables) with garbage: a level that leaves a value unwritten must not pass
 * by finding the one the level before it put there. */
static sh_status build_clobbered(int lv, sh_work *w, const sh_sketch_params *p, int features, uint64_t n_tokens,
                                 sh_sketch **out, sh_error *err)
{
    if (w->vals) memset(w->vals, 0xa5, w->cap_vals * sizeof *w->vals);
    if (w->tab) memset(w->tab, 0x5a, w->tab_cap * sizeof *w->tab);
    return sh_sketch_build(&shs[lv], w, p, features, n_tokens, out, err);
}

/* MIN_s and MOD_m from shingle lists with and without repeats (the
 * repeats send MIN_s down its fallback), some with a shingle whose mixed
 * value is 0, agree at every level, and MIN_s equals the slow obvious
 * sketch: the s smallest distinct mixed values. The shingles are made
 * once, by the portable window; each level sketches them. */
static void sketches_agree_at_every_level_and_with_the_definition(void)
{
    static const uint32_t sizes[] = { 1, 10, 200, 1000 };
    static const uint64_t mods[] = { 1, 2, 25, 64, 1000 };
    static uint64_t all[6000];
    uint64_t s = 77;
    long bad = 0;
    int round, lv;
    sh_work w;
    memset(&w, 0, sizeof w);
    CHECK(make_levels(10, 64, SH_OPTION_B, SH_CANON_DEFAULT_FLAGS));
    for (round = 0; round < 300; round++) {
        size_t n = round < 40 ? (size_t)round : (size_t)(rnd(&s) % 5000), i, nd = 0;
        const int repeats = round % 3; /* 0: distinct; 1: a few repeats; 2: mostly repeats */
        sh_sketch_params p;
        sh_sketch *ref, *got;
        sh_error err;
        int kind;
        sh_work_reserve_ids(&w, n);
        for (i = 0; i < n; i++)
            w.ids[i] = repeats == 2 && i > 4 ? w.ids[rnd(&s) % i] :
                       repeats == 1 && i > 0 && rnd(&s) % 10 == 0 ? w.ids[rnd(&s) % i] : rnd(&s);
        w.n_ids = n;
        CHECK(sh_shingle_ids(&shs[SH_SIMD_PORTABLE], &w, &err) == SH_OK);
        if (round % 7 == 3 && w.n_fps > 2) /* a shingle that mixes to 0, once or twice */
            w.fps[w.n_fps / 2] = w.fps[round % 2 ? 0 : w.n_fps / 2] = unmix(0) ^ shs[1].c.seed;
        for (kind = 0; kind < 2; kind++) {
            memset(&p, 0, sizeof p);
            p.kind = kind ? SH_SKETCH_MOD : SH_SKETCH_MIN;
            p.s = sizes[round % 4];
            p.m = mods[round % 5];
            p.floor = (uint32_t)((round / 7) % 2 == 0 ? 8 : 0); /* with and without repeats */
            if (sh_sketch_build(&shs[SH_SIMD_PORTABLE], &w, &p, 0, n, &ref, &err) != SH_OK) { bad++; continue; }
            if (!kind) { /* the definition: the s smallest distinct mixed values */
                for (i = 0; i < w.n_fps; i++) all[i] = sh_permute(shs[1].c.seed, w.fps[i]);
                qsort(all, w.n_fps, 8, cmp_u64);
                for (i = 0, nd = 0; i < w.n_fps; i++) if (!nd || all[i] != all[nd - 1]) all[nd++] = all[i];
                if (ref->n_shingles != nd || ref->n != (nd < p.s ? nd : p.s) || memcmp(ref->v, all, ref->n * 8) != 0) {
                    if (!bad) fprintf(stderr, "MIN_%u of %zu shingles is not the s smallest distinct values\n", p.s, n);
                    bad++;
                }
            }
            if (kind && round % 2) { /* the shingles as a feature set: MOD_m against its definition, whose
                                      * floor and count are the number of features with repetition (the
                                      * n_tokens given: here n) */
                sh_sketch *fs;
                uint64_t m;
                size_t want = 0;
                for (i = 0; i < w.n_fps; i++) all[i] = sh_permute(shs[1].c.seed, w.fps[i]);
                qsort(all, w.n_fps, 8, cmp_u64);
                for (i = 0, nd = 0; i < w.n_fps; i++) if (!nd || all[i] != all[nd - 1]) all[nd++] = all[i];
                m = sh_mod_for(p.m, p.floor, n);
                for (i = 0; i < nd; i++) if (all[i] % m == 0) all[want++] = all[i];
                for (lv = SH_SIMD_PORTABLE; lv <= (int)best; lv++) {
                    if (build_clobbered(lv, &w, &p, 1, n, &fs, &err) != SH_OK) { bad++; continue; }
                    if (fs->n_shingles != n || fs->n != want || fs->p.m != m || memcmp(fs->v, all, want * 8) != 0) {
                        if (!bad) fprintf(stderr, "MOD of %zu features differs from its definition at level %s\n", n,
                                          sh_simd_name((sh_simd)lv));
                        bad++;
                    }
                    free(fs);
                }
            }
            for (lv = SH_SIMD_SSE2; lv <= (int)best; lv++) {
                if (build_clobbered(lv, &w, &p, 0, n, &got, &err) != SH_OK) { bad++; continue; }
                if (got->n != ref->n || got->n_shingles != ref->n_shingles || got->p.m != ref->p.m ||
                    memcmp(got->v, ref->v, ref->n * 8) != 0) {
                    if (!bad) fprintf(stderr, "%s sketch differs at level %s (%zu shingles)\n", kind ? "MOD" : "MIN",
                                      sh_simd_name((sh_simd)lv), n);
                    bad++;
                }
                free(got);
            }
            free(ref);
        }
    }
    CHECK_EQ_U64(bad, 0);
    sh_work_free(&w);
}

/* The level a shingler asks for is capped by what there is, and a request
 * out of range is refused. */
static void levels_are_capped_and_checked(void)
{
    sh_simd got;
    sh_error err;
    CHECK(sh_simd_resolve(SH_SIMD_AUTO, &got, &err) == SH_OK && got == best);
    CHECK(sh_simd_resolve(SH_SIMD_AVX512, &got, &err) == SH_OK && got == best);
    CHECK(sh_simd_resolve(SH_SIMD_PORTABLE, &got, &err) == SH_OK && got == SH_SIMD_PORTABLE);
    CHECK(sh_simd_resolve((sh_simd)9, &got, &err) == SH_EINVAL);
    CHECK(sh_simd_parse("avx2") == SH_SIMD_AVX2 && sh_simd_parse("mmx") == -1);
    CHECK(strcmp(sh_simd_name(SH_SIMD_SSE2), "sse2") == 0 && sh_simd_name((sh_simd)7) == NULL);
}

/* A work whose n shingles' fingerprints are fps[0..n): n shingles of
 * width 10 from n + 9 ids make room for them, then they are put there. */
static void work_of_fps(sh_work *w, const uint64_t *fps, size_t n)
{
    sh_error err;
    size_t i;
    CHECK(sh_work_reserve_ids(w, n + 9) == SH_OK);
    for (i = 0; i < n + 9; i++) w->ids[i] = i;
    w->n_ids = n + 9;
    CHECK(sh_shingle_ids(&shs[SH_SIMD_PORTABLE], w, &err) == SH_OK && w->n_fps == n);
    memcpy(w->fps, fps, n * sizeof *fps);
}

/* MIN_s's distinct count on lists built to stress it: mixed values that
 * share their top bits (every one a suspect of the bitmap, most not equal
 * to their bit's first value), repeated in runs and at random, at sizes
 * around the switch from the first-value table (up to 65,535 values) to the
 * second pass over the values; at every level, against the definition.
 * (Their bits 20 and up vary: the hash tables behind both key on them, as
 * they may for mixed values.) */
static void min_s_counts_colliding_and_repeated_values_exactly(void)
{
    static const size_t sizes[] = { 1, 2, 63, 64, 65, 1000, 65534, 65535, 65536, 70001 };
    static uint64_t all[70001], fps[70001];
    uint64_t s = 99;
    long bad = 0;
    size_t a, i, nd;
    int shape, lv;
    sh_work w;
    memset(&w, 0, sizeof w);
    CHECK(make_levels(10, 64, SH_OPTION_B, SH_CANON_DEFAULT_FLAGS));
    for (a = 0; a < sizeof sizes / sizeof *sizes; a++)
        for (shape = 0; shape < 6; shape++) {
            const size_t n = sizes[a];
            /* min_sketch's split between the candidates and the values it
             * counts (shape 4: values at it, the last ones too, and at the
             * ends of the range, repeated on both sides; shape 5: all in the
             * upper half, repeated, so that its fallbacks run) */
            const double frac = (1.25 * (a % 2 ? 200 : 1000) + 32) / (double)n;
            const uint64_t lim = frac < 1 ? (uint64_t)(frac * 18446744073709551616.0) : UINT64_MAX;
            sh_sketch_params p;
            sh_sketch *ref = NULL;
            sh_error err;
            for (i = 0; i < n; i++) {
                uint64_t x;
                switch (shape) {
                case 0: x = (0xabcdULL << 48) | (rnd(&s) >> 16); break;        /* one top 16 bits */
                case 1: x = (rnd(&s) & 0xff00000000000000ULL) | (rnd(&s) & 0xffff) << 20; break; /* few per bit */
                case 2: x = i > 0 && rnd(&s) % 3 == 0 ? all[rnd(&s) % i] : (0x1234ULL << 48) | (rnd(&s) >> 40) << 20;
                        break;                                                    /* colliding, repeated */
                case 3: x = i % 7 == 0 ? 0 : all[i ? i - 1 : 0] + ((uint64_t)(i % 5 == 0) << 20); break; /* runs, 0 */
                case 4: {
                    const uint64_t r = rnd(&s);
                    x = i + 3 >= n ? lim + i % 3 - 1
                        : i > 0 && r % 4 == 0 ? all[rnd(&s) % i]
                        : r % 4 == 1 ? lim + (rnd(&s) % 5) - 2
                        : r % 4 == 2 ? (r % 8 < 4 ? UINT64_MAX - rnd(&s) % 3 : rnd(&s) % 3)
                        : rnd(&s);
                    break;
                }
                default: x = i > 0 && rnd(&s) % 2 ? all[rnd(&s) % i] : rnd(&s) | (uint64_t)1 << 63; break;
                }
                all[i] = x;
                fps[i] = unmix(x) ^ shs[1].c.seed;
            }
            work_of_fps(&w, fps, n);
            memset(&p, 0, sizeof p);
            p.kind = SH_SKETCH_MIN;
            p.s = a % 2 ? 200 : 1000;
            qsort(all, n, 8, cmp_u64);
            for (i = 0, nd = 0; i < n; i++) if (!nd || all[i] != all[nd - 1]) all[nd++] = all[i];
            for (lv = SH_SIMD_PORTABLE; lv <= (int)best; lv++) {
                sh_sketch *got;
                if (build_clobbered(lv, &w, &p, 0, n, &got, &err) != SH_OK) { bad++; continue; }
                if (got->n_shingles != nd || got->n != (nd < p.s ? nd : p.s) || memcmp(got->v, all, got->n * 8) != 0) {
                    if (!bad) fprintf(stderr, "MIN_%u of %zu values (shape %d) at level %s: %llu distinct, want %zu\n",
                                      p.s, n, shape, sh_simd_name((sh_simd)lv), (unsigned long long)got->n_shingles, nd);
                    bad++;
                }
                if (lv == SH_SIMD_PORTABLE) ref = got;
                else free(got);
            }
            free(ref);
        }
    CHECK_EQ_U64(bad, 0);
    sh_work_free(&w);
}

/* MIN_s up to 32,768 shingles puts the values in order in a table whose slot
 * is a value's top bits (core/sketch.c, ordered_min), and gives up for the
 * split and sort above past a probe budget: every level agrees with the
 * definition on sizes around the table's bounds and the limit, every s
 * against the set (1, 200, the distinct count and one more), and values that
 * are all equal (0 too), all distinct, repeated, in short runs inserted
 * largest first (each insert moves the run up), at the top of the range
 * (runs past the table's end), or crowding one slot (the budget runs out). */
static void min_s_in_order_table_agrees_with_definition(void)
{
    static const size_t sizes[] = { 1, 2, 3, 7, 8, 9, 63, 64, 65, 199, 200, 201, 511, 512, 513, 2047, 2048, 2049,
                                    4095, 4096, 4097, 32767, 32768, 32769 };
    static uint64_t all[32769], fps[32769];
    uint64_t st = 1313;
    long bad = 0;
    size_t a, i, nd;
    int shape, lv, si;
    sh_work w;
    memset(&w, 0, sizeof w);
    CHECK(make_levels(10, 64, SH_OPTION_B, SH_CANON_DEFAULT_FLAGS));
    for (a = 0; a < sizeof sizes / sizeof *sizes; a++)
        for (shape = 0; shape < 8; shape++) {
            const size_t n = sizes[a];
            sh_error err;
            uint64_t base = 0;
            for (i = 0; i < n; i++) {
                uint64_t x;
                switch (shape) {
                case 0: x = rnd(&st); break;                                   /* distinct */
                case 1: x = 0x0123456789abcdefULL; break;                      /* all equal */
                case 2: x = 0; break;                                          /* all 0 */
                case 3: x = i > 0 && rnd(&st) % 2 ? all[rnd(&st) % i] : rnd(&st); break; /* repeated */
                case 4:                                                         /* runs of 1-5, largest first, repeats */
                    if (i % 5 == 0) base = rnd(&st);
                    x = i > 0 && rnd(&st) % 7 == 0 ? all[rnd(&st) % i] : base + (4 - i % 5) * (rnd(&st) % 3);
                    break;
                case 5: x = i % 3 == 0 && i < 240 ? UINT64_MAX - rnd(&st) % 1000 : rnd(&st); break; /* a run past the end */
                case 6: x = rnd(&st) % (n + 1); break;                         /* the bottom, 0 among them, one slot */
                default: x = (0x7777ULL << 48) | (rnd(&st) >> 48); break;     /* one slot: the budget runs out */
                }
                all[i] = x;
                fps[i] = unmix(x) ^ shs[1].c.seed;
            }
            work_of_fps(&w, fps, n);
            qsort(all, n, 8, cmp_u64);
            for (i = 0, nd = 0; i < n; i++) if (!nd || all[i] != all[nd - 1]) all[nd++] = all[i];
            for (si = n > 5000 ? 1 : 0; si < 4; si += n > 5000 ? 2 : 1) { /* (large: s 200 and one past the set) */
                sh_sketch_params p;
                memset(&p, 0, sizeof p);
                p.kind = SH_SKETCH_MIN;
                p.s = si == 0 ? 1 : si == 1 ? 200 : (uint32_t)nd + (uint32_t)(si - 2);
                for (lv = SH_SIMD_PORTABLE; lv <= (int)best; lv++) {
                    sh_sketch *got;
                    if (build_clobbered(lv, &w, &p, 0, n, &got, &err) != SH_OK) { bad++; continue; }
                    if (got->n_shingles != nd || got->n != (nd < p.s ? nd : p.s) || memcmp(got->v, all, got->n * 8) != 0) {
                        if (bad < 5) fprintf(stderr, "MIN_%u of %zu values (shape %d) at level %s: %llu distinct, want %zu\n",
                                          p.s, n, shape, sh_simd_name((sh_simd)lv), (unsigned long long)got->n_shingles, nd);
                        bad++;
                    }
                    free(got);
                }
            }
        }
    CHECK_EQ_U64(bad, 0);
    sh_work_free(&w);
}

/* ---- set intersections (intersect.c) ----------------------------------------- */

static size_t intersect_by_definition(const uint64_t *a, size_t na, const uint64_t *b, size_t nb)
{
    size_t i, j, k = 0;
    for (i = 0; i < na; i++)
        for (j = 0; j < nb; j++) k += a[i] == b[j];
    return k;
}

/* n ascending distinct values: steps of 1 to `gap` from start, so two sets
 * from nearby starts share some values and interleave */
static void ascending(uint64_t *st, uint64_t *v, size_t n, uint64_t start, uint64_t gap)
{
    size_t i;
    uint64_t x = start;
    for (i = 0; i < n; i++) { v[i] = x; x += 1 + rnd(st) % gap; }
}

/* Every level counts |X n Y| as the definition does: lengths 0 to 40 on
 * each side (every position against the 4-value blocks and the tail), sets
 * equal, disjoint, interleaved, one inside the other, the same largest value
 * at block ends, and values at the top of the range (compared unsigned). */
static void intersections_agree_at_every_level(void)
{
    static uint64_t a[64], b[64];
    uint64_t st = 99;
    size_t na, nb;
    int shape, lvl;
    for (na = 0; na <= 40; na++)
        for (nb = 0; nb <= 40; nb++)
            for (shape = 0; shape < 6; shape++) {
                size_t want, i;
                uint64_t top = shape == 5 ? UINT64_MAX - 200 : 1000;
                switch (shape) {
                case 0: ascending(&st, a, na, top, 3); ascending(&st, b, nb, top, 3); break;
                case 1: ascending(&st, a, na, top, 2); for (i = 0; i < nb; i++) b[i] = i < na ? a[i] : a[na ? na - 1 : 0] + 1 + i; break;
                case 2: ascending(&st, a, na, top, 1); ascending(&st, b, nb, top + 100, 1); break;
                case 3: for (i = 0; i < na; i++) a[i] = top + 2 * i; for (i = 0; i < nb; i++) b[i] = top + 3 * i; break;
                case 4: for (i = 0; i < na; i++) a[i] = top + 4 * i + 3; for (i = 0; i < nb; i++) b[i] = top + 4 * i + 3; break;
                default: ascending(&st, a, na, top, 4); ascending(&st, b, nb, top, 4); break;
                }
                if (shape == 1 && nb > 0 && na > 0)
                    for (i = 1; i < nb; i++) if (b[i] <= b[i - 1]) b[i] = b[i - 1] + 1; /* stays ascending */
                want = intersect_by_definition(a, na, b, nb);
                for (lvl = SH_SIMD_PORTABLE; lvl <= (int)best; lvl++) {
                    CHECK_EQ_U64(sh_intersect_count(a, na, b, nb, (sh_simd)lvl), want);
                    CHECK_EQ_U64(sh_intersect_count(b, nb, a, na, (sh_simd)lvl), want);
                }
            }
}

int main(void)
{
    best = sh_simd_best(NULL);
    fprintf(stderr, "test_simd: comparing levels portable..%s with the portable path\n", sh_simd_name(best));
    RUN(levels_are_capped_and_checked);
    RUN(every_byte_value_tokenizes_alike_at_every_level);
    RUN(tokens_at_every_offset_and_length_tokenize_alike);
    RUN(mixed_case_words_and_ideographs_near_the_end_tokenize_alike);
    RUN(markup_straddling_block_boundaries_tokenizes_alike);
    RUN(tag_names_of_every_length_and_ending_tokenize_alike);
    RUN(words_followed_by_inline_markup_tokenize_alike);
    RUN(tags_found_by_block_masks_tokenize_alike);
    RUN(inline_tags_after_words_tokenize_alike);
    RUN(random_mixtures_tokenize_alike);
    RUN(a_long_page_tokenizes_alike);
    RUN(cjk_ideographs_of_the_fast_range_tokenize_alike);
    RUN(ideographs_found_by_masks_tokenize_alike);
    RUN(tags_and_words_sharing_blocks_tokenize_alike);
    RUN(common_character_references_tokenize_alike);
    RUN(ids_and_windows_agree_at_every_level);
    RUN(sketches_agree_at_every_level_and_with_the_definition);
    RUN(min_s_counts_colliding_and_repeated_values_exactly);
    RUN(min_s_in_order_table_agrees_with_definition);
    RUN(intersections_agree_at_every_level);
    return TEST_END();
}
