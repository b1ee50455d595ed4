/* The "code" rule set in C: see codetok.h. Each branch below is the branch
 * of rules.code_tokens (lua/shingle/rules.lua) with the same condition, in
 * the same order; spec/rules_spec.lua compares the two on generated and
 * real source. The Lua patterns there use the C locale's classes: %s space
 * \t \n \v \f \r, %a letters, %d digits, %w both, %p the printable rest. */
#include "codetok.h"

#include <stdint.h>
#include <string.h>

#include "byteorder.h"

enum {
    K_SPACE = 1,  /* %s */
    K_IDENT = 2,  /* [%a_\128-\255]: starts and continues an identifier */
    K_DIGIT = 4,  /* %d: starts a number, continues both */
    K_PUNCT = 8,  /* %p */
    K_OP = 16,    /* the characters of operators: = ! < > + - * / % & | ^ ~ : . */
    K_NUM = 32,   /* [%w_.]: continues a number */
    K_CONT = 64   /* K_IDENT or K_DIGIT: continues an identifier */
};

#define SPACE(b) ((b) == ' ' || ((b) >= 9 && (b) <= 13))
#define ALPHA(b) (((b) >= 'a' && (b) <= 'z') || ((b) >= 'A' && (b) <= 'Z'))
#define DIGIT(b) ((b) >= '0' && (b) <= '9')
#define PUNCT(b) ((b) >= 33 && (b) <= 126 && !ALPHA(b) && !DIGIT(b))
#define OPCH(b) ((b) == '=' || (b) == '!' || (b) == '<' || (b) == '>' || (b) == '+' || (b) == '-' || \
                 (b) == '*' || (b) == '/' || (b) == '%' || (b) == '&' || (b) == '|' || (b) == '^' || \
                 (b) == '~' || (b) == ':' || (b) == '.')
#define CLS(b) ((SPACE(b) ? K_SPACE : 0) | ((ALPHA(b) || (b) == '_' || (b) >= 128) ? K_IDENT : 0) | \
                (DIGIT(b) ? K_DIGIT : 0) | (PUNCT(b) ? K_PUNCT : 0) | (OPCH(b) ? K_OP : 0) | \
                ((ALPHA(b) || DIGIT(b) || (b) == '_' || (b) == '.') ? K_NUM : 0) | \
                ((ALPHA(b) || (b) == '_' || (b) >= 128 || DIGIT(b)) ? K_CONT : 0))
#define CLS4(b) CLS(b), CLS((b) + 1), CLS((b) + 2), CLS((b) + 3)
#define CLS16(b) CLS4(b), CLS4((b) + 4), CLS4((b) + 8), CLS4((b) + 12)
#define CLS64(b) CLS16(b), CLS16((b) + 16), CLS16((b) + 32), CLS16((b) + 48)
static const unsigned char cls[256] = { CLS64(0), CLS64(64), CLS64(128), CLS64(192) };

/* The keywords that stay themselves (rules.lua's code_keywords), in a
 * perfect hash of their bytes into 256 slots (the multiplier found by
 * trying random odd ones until the 74 fell into distinct slots; the spec
 * checks every keyword against the Lua list). */
static const struct kw { char s[16]; unsigned char len; } keywords[256] = {
    [2] = { "return", 6 }, [5] = { "local", 5 }, [8] = { "float", 5 }, [10] = { "not", 3 },
    [18] = { "var", 3 }, [21] = { "and", 3 }, [22] = { "def", 3 }, [23] = { "protected", 9 },
    [28] = { "let", 3 }, [32] = { "throw", 5 }, [38] = { "elseif", 6 }, [43] = { "auto", 4 },
    [45] = { "double", 6 }, [46] = { "static", 6 }, [49] = { "union", 5 }, [54] = { "extends", 7 },
    [55] = { "end", 3 }, [56] = { "import", 6 }, [57] = { "volatile", 8 }, [60] = { "for", 3 },
    [63] = { "class", 5 }, [65] = { "lambda", 6 }, [67] = { "finally", 7 }, [75] = { "catch", 5 },
    [76] = { "case", 4 }, [77] = { "false", 5 }, [78] = { "goto", 4 }, [81] = { "default", 7 },
    [83] = { "pass", 4 }, [85] = { "sizeof", 6 }, [90] = { "continue", 8 }, [92] = { "this", 4 },
    [93] = { "try", 3 }, [96] = { "switch", 6 }, [98] = { "repeat", 6 }, [104] = { "private", 7 },
    [105] = { "if", 2 }, [107] = { "except", 6 }, [108] = { "while", 5 }, [113] = { "public", 6 },
    [122] = { "function", 8 }, [126] = { "from", 4 }, [143] = { "is", 2 }, [144] = { "short", 5 },
    [147] = { "or", 2 }, [149] = { "register", 8 }, [152] = { "nil", 3 }, [155] = { "typedef", 7 },
    [159] = { "enum", 4 }, [161] = { "elif", 4 }, [163] = { "interface", 9 }, [164] = { "int", 3 },
    [165] = { "else", 4 }, [170] = { "raise", 5 }, [174] = { "implements", 10 }, [178] = { "unsigned", 8 },
    [183] = { "signed", 6 }, [187] = { "true", 4 }, [191] = { "break", 5 }, [195] = { "void", 4 },
    [196] = { "throws", 6 }, [197] = { "long", 4 }, [199] = { "const", 5 }, [207] = { "in", 2 },
    [215] = { "yield", 5 }, [216] = { "new", 3 }, [218] = { "until", 5 }, [222] = { "with", 4 },
    [235] = { "struct", 6 }, [241] = { "do", 2 }, [242] = { "package", 7 }, [243] = { "then", 4 },
    [245] = { "extern", 6 }, [255] = { "char", 4 },
};

/* w[0..len) as two little-endian words, the bytes past len zero (len <= 16;
 * avail is how many bytes from w may be read). */
static inline void words16(const unsigned char *w, size_t len, size_t avail, uint64_t *lo, uint64_t *hi)
{
    uint64_t k0 = 0, k1 = 0;
    if (avail >= 16) {
        k0 = sh_load_le64(w);
        k1 = sh_load_le64(w + 8);
        k0 = len >= 8 ? k0 : k0 & ((UINT64_C(1) << (8 * len)) - 1);
        k1 = len >= 16 ? k1 : len <= 8 ? 0 : k1 & ((UINT64_C(1) << (8 * (len - 8))) - 1);
    } else {
        size_t i;
        for (i = 0; i < len && i < 8; i++) k0 |= (uint64_t)w[i] << (8 * i);
        for (; i < len; i++) k1 |= (uint64_t)w[i] << (8 * (i - 8));
    }
    *lo = k0;
    *hi = k1;
}

/* Whether the identifier w[0..len) is a keyword (avail bytes readable at w). */
static int keyword(const unsigned char *w, size_t len, size_t avail)
{
    uint64_t k0, k1, key;
    const struct kw *kw;
    if (len > 10)
        return 0;
    words16(w, len, avail, &k0, &k1);
    key = k0 ^ (k1 * 0x9e3779b97f4a7c15ULL) ^ (uint64_t)len;
    kw = &keywords[(key * 0x488cc4aae48d0a47ULL) >> 56];
    /* the keyword's bytes are zero past its length, as k0 and k1 are */
    return kw->len == len && sh_load_le64(kw->s) == k0 && sh_load_le64(kw->s + 8) == k1;
}

/* First occurrence of the m-byte pattern at or after from, or NULL. */
static const unsigned char *find(const unsigned char *p, size_t from, size_t n, const char *pat, size_t m)
{
    while (from + m <= n) {
        const unsigned char *q = memchr(p + from, (unsigned char)pat[0], n - from - m + 1);
        if (!q)
            return NULL;
        if (memcmp(q, pat, m) == 0)
            return q;
        from = (size_t)(q - p) + 1;
    }
    return NULL;
}

/* Runs of identifier characters and of white space, found with a bitmap of
 * 64 bytes at a time rather than a loop that stops (and mispredicts) at the
 * end of every run. A block's two masks: bit i of cont is set when byte
 * base + i continues an identifier (K_CONT), of space when it is white space
 * (K_SPACE); bytes at or past n have neither. */
typedef struct blocks {
    const unsigned char *p;
    size_t n, base;
    uint64_t cont, space;
} blocks;

#if defined(__x86_64__) && defined(__GNUC__) && !defined(SH_NO_SIMD)
#include <emmintrin.h>
#define CT_SSE2 1
#endif

static void block_at(blocks *b, size_t at)
{
    const unsigned char *p = b->p;
    size_t base = at & ~(size_t)63, k;
    uint64_t cont = 0, space = 0;
    b->base = base;
#ifdef CT_SSE2
    /* SSE2 is part of x86-64: no level to choose. The classes of K_CONT
     * ([A-Za-z0-9_] and bytes >= 128) and K_SPACE (' ', 9..13) as byte
     * compares; signed compares after an offset of 128 for ranges. */
    if (base + 64 <= b->n) {
        const __m128i off = _mm_set1_epi8((char)0x80);
        for (k = 0; k < 64; k += 16) {
            const __m128i x = _mm_loadu_si128((const __m128i *)(const void *)(p + base + k));
            const __m128i lo = _mm_or_si128(x, _mm_set1_epi8(0x20)); /* A-Z to a-z */
            const __m128i xs = _mm_xor_si128(x, off), los = _mm_xor_si128(lo, off);
            const __m128i alpha = _mm_and_si128(_mm_cmpgt_epi8(los, _mm_set1_epi8((char)(('a' - 1) ^ 0x80))),
                                                _mm_cmplt_epi8(los, _mm_set1_epi8((char)(('z' + 1) ^ 0x80))));
            const __m128i digit = _mm_and_si128(_mm_cmpgt_epi8(xs, _mm_set1_epi8((char)(('0' - 1) ^ 0x80))),
                                                _mm_cmplt_epi8(xs, _mm_set1_epi8((char)(('9' + 1) ^ 0x80))));
            const __m128i high = _mm_cmplt_epi8(x, _mm_setzero_si128()); /* >= 128 */
            const __m128i under = _mm_cmpeq_epi8(x, _mm_set1_epi8('_'));
            const __m128i ctl = _mm_and_si128(_mm_cmpgt_epi8(xs, _mm_set1_epi8((char)((9 - 1) ^ 0x80))),
                                              _mm_cmplt_epi8(xs, _mm_set1_epi8((char)((13 + 1) ^ 0x80))));
            const __m128i sp = _mm_or_si128(ctl, _mm_cmpeq_epi8(x, _mm_set1_epi8(' ')));
            const __m128i c = _mm_or_si128(_mm_or_si128(alpha, digit), _mm_or_si128(high, under));
            cont |= (uint64_t)(unsigned)_mm_movemask_epi8(c) << k;
            space |= (uint64_t)(unsigned)_mm_movemask_epi8(sp) << k;
        }
        b->cont = cont;
        b->space = space;
        return;
    }
#endif
    for (k = 0; k < 64 && base + k < b->n; k++) {
        const unsigned x = cls[p[base + k]];
        cont |= (uint64_t)((x >> 6) & 1) << k;
        space |= (uint64_t)(x & K_SPACE) << k;
    }
    b->cont = cont;
    b->space = space;
}

/* The number of trailing zero bits of x != 0. */
static inline unsigned ctz64(uint64_t x)
{
#if defined(__GNUC__)
    return (unsigned)__builtin_ctzll(x);
#else
    unsigned r = 0;
    while (!(x & 1)) {
        x >>= 1;
        r++;
    }
    return r;
#endif
}

/* The end of the run of identifier characters (space = 0) or of white
 * space (space = 1) that goes on at j: the first byte from j that is not
 * of the run, or n. */
static inline size_t run_end(blocks *b, size_t j, int space)
{
    for (;;) {
        uint64_t stop;
        if (j >= b->n)
            return b->n;
        if (j - b->base >= 64) /* (unsigned: also when j < base) */
            block_at(b, j);
        stop = ~(space ? b->space : b->cont) >> (j - b->base);
        if (stop)
            return j + ctz64(stop);
        j = b->base + 64;
    }
}

/* sh_tokens_push for a token of at most 16 bytes with 16 readable at bytes
 * (avail of them): its text and its head (sh_tokens.head: the token's bytes,
 * zero past its length, as canon.c's put_head makes it) stored as two words
 * each, without a call. Anything else goes to sh_tokens_push. */
static inline sh_status push(sh_tokens *t, const unsigned char *bytes, size_t len, size_t avail, size_t src_off,
                             size_t src_len, sh_error *err)
{
    sh_token *k;
    unsigned char *h;
    uint64_t lo, hi;
    if (len > 16 || t->n == t->cap || t->text_cap - t->text_len < 16 + SH_CANON_SLACK)
        return sh_tokens_push(t, bytes, len, src_off, src_len, err);
    words16(bytes, len, avail, &lo, &hi);
    k = &t->tok[t->n];
    k->src_off = src_off;
    k->src_len = src_len;
    k->off = t->text_len;
    k->len = len;
    h = t->head + t->n * SH_TOKEN_HEAD;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    {
        /* two plain stores each (the byte stores of sh_store_le64 to two
         * char arrays are not merged by the compiler here) */
        const uint64_t w[2] = { lo, hi };
        memcpy(t->text + t->text_len, w, 16);
        memcpy(h, w, 16);
    }
#else
    sh_store_le64(t->text + t->text_len, lo);
    sh_store_le64(t->text + t->text_len + 8, hi);
    sh_store_le64(h, lo);
    sh_store_le64(h + 8, hi);
#endif
    t->text_len += len;
    t->n++;
    return SH_OK;
}

/* The placeholders, with room to read 16 bytes. */
static const unsigned char STR[16] = "STR", ID[16] = "ID", NUM[16] = "NUM";

sh_status sh_code_tokenize(const char *in, size_t n, sh_tokens *out, sh_error *err)
{
    const unsigned char *p = (const unsigned char *)in;
    size_t i = 0;
    sh_status st = SH_OK;
    blocks b;
    b.p = p;
    b.n = n;
    b.base = SIZE_MAX - 63; /* no block yet: every j is outside it */
    b.cont = b.space = 0;
    sh_tokens_begin(out);
    while (i < n && st == SH_OK) {
        const unsigned c = p[i], k = cls[c];
        unsigned c2;
        /* The classes are disjoint, so the branches of the Lua function
         * are taken here in the order of how often they are met; among
         * punctuation, in the Lua function's order. */
        if (k & K_IDENT) {
            const size_t j = run_end(&b, i + 1, 0);
            if (keyword(p + i, j - i, n - i))
                st = push(out, p + i, j - i, n - i, i, j - i, err);
            else
                st = push(out, ID, 2, 16, i, j - i, err);
            i = j;
            continue;
        }
        if (k & K_SPACE) {
            /* the whole run of white space (indentation) at once */
            i = run_end(&b, i + 1, 1);
            continue;
        }
        if (k & K_DIGIT) {
            size_t j = i + 1;
            while (j < n && (cls[p[j]] & K_NUM))
                j++;
            st = push(out, NUM, 3, 16, i, j - i, err);
            i = j;
            continue;
        }
        if (!(k & K_PUNCT)) {
            i++; /* a control character: a separator */
            continue;
        }
        c2 = i + 1 < n ? p[i + 1] : 0;
        if ((c == '/' && c2 == '/') || c == '#' || (c == '-' && c2 == '-')) {
            /* a line comment (and C preprocessor lines): past the newline */
            const unsigned char *e = memchr(p + i, '\n', n - i);
            i = e ? (size_t)(e - p) + 1 : n;
        } else if (c == '/' && c2 == '*') {
            const unsigned char *e = find(p, i + 2, n, "*/", 2);
            i = e ? (size_t)(e - p) + 2 : n;
        } else if (c == '"' || c == '\'') {
            /* to the closing quote, a backslash escaping the byte after it:
             * the next quote, unless a backslash comes before it */
            size_t j = i + 1;
            while (j < n) {
                const unsigned char *q = memchr(p + j, (int)c, n - j);
                const size_t end = q ? (size_t)(q - p) : n;
                const unsigned char *e = memchr(p + j, '\\', end - j);
                if (!e) {
                    j = end;
                    break;
                }
                j = (size_t)(e - p) + 2;
            }
            st = push(out, STR, 3, 16, i, (j < n ? j + 1 : n) - i, err);
            i = j + 1;
        } else {
            /* an operator: the longest run of up to three operator
             * characters, or the one punctuation character */
            size_t j = i;
            while (j < n && j - i < 3 && (cls[p[j]] & K_OP))
                j++;
            if (j == i)
                j = i + 1;
            st = push(out, p + i, j - i, n - i, i, j - i, err);
            i = j;
        }
    }
    if (st != SH_OK)
        return st;
    return sh_tokens_end(out, err);
}
