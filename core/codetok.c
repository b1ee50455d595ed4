/* The "code" rule set in C: see codetok.h. Each branch below is the branch
 * of rules.code_tokens (lua/shingle/rules.lua) with the same condition, in
 * the same order; spec/rules_spec.lua compares the two on generated and
 * real source. The Lua patterns there use the C locale's classes: %s space
 * \t \n \v \f \r, %a letters, %d digits, %w both, %p the printable rest. */
#include "codetok.h"
#include "byteorder.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#if defined(__GNUC__)
#define CODE_HOT static inline __attribute__((always_inline))
#else
#define CODE_HOT static inline
#endif

enum {
    K_SPACE = 1,  /* %s */
    K_IDENT = 2,  /* [%a_\128-\255]: starts and continues an identifier */
    K_DIGIT = 4,  /* %d: starts a number, continues both */
    K_PUNCT = 8,  /* %p */
    K_OP = 16,    /* the characters of operators: = ! < > + - * / % & | ^ ~ : . */
    K_NUM = 32    /* [%w_.]: continues a number */
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
                ((ALPHA(b) || DIGIT(b) || (b) == '_' || (b) == '.') ? K_NUM : 0))
#define CLS4(b) CLS(b), CLS((b) + 1), CLS((b) + 2), CLS((b) + 3)
#define CLS16(b) CLS4(b), CLS4((b) + 4), CLS4((b) + 8), CLS4((b) + 12)
#define CLS64(b) CLS16(b), CLS16((b) + 16), CLS16((b) + 32), CLS16((b) + 48)
static const unsigned char cls[256] = { CLS64(0), CLS64(64), CLS64(128), CLS64(192) };

/* The keywords that stay themselves (rules.lua's code_keywords), in a
 * perfect hash of their bytes into 256 slots (the multiplier found by
 * trying random odd ones until the 74 fell into distinct slots; the spec
 * checks every keyword against the Lua list). Each is zero-padded to 16
 * bytes, as a token's head is. */
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

/* Whether the identifier of len bytes whose head (its bytes, zero-padded
 * to 16, as two little-endian words) is lo, hi is a keyword. */
CODE_HOT int keyword(uint64_t lo, uint64_t hi, size_t len)
{
    const uint64_t key = lo ^ (hi * 0x9e3779b97f4a7c15ULL) ^ (uint64_t)len;
    const struct kw *kw = &keywords[(key * 0x488cc4aae48d0a47ULL) >> 56];
    return (kw->len == len) & (sh_load_le64(kw->s) == lo) & (sh_load_le64(kw->s + 8) == hi);
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

/* The dispatch of a token's first byte, in the order of rules.code_tokens'
 * branches: white space; the starts of comments ('/', '#', '-': a comment
 * only with the right next byte, else an operator); quotes; identifiers;
 * numbers; control characters (separators); operators and punctuation. */
enum { D_SPACE, D_SLASH, D_HASH, D_MINUS, D_QUOTE, D_IDENT, D_DIGIT, D_CTRL, D_OP };
#define DSP(b) (SPACE(b) ? D_SPACE : (b) == '/' ? D_SLASH : (b) == '#' ? D_HASH : (b) == '-' ? D_MINUS : \
                ((b) == '"' || (b) == '\'') ? D_QUOTE : (ALPHA(b) || (b) == '_' || (b) >= 128) ? D_IDENT : \
                DIGIT(b) ? D_DIGIT : !PUNCT(b) ? D_CTRL : D_OP)
#define DSP4(b) DSP(b), DSP((b) + 1), DSP((b) + 2), DSP((b) + 3)
#define DSP16(b) DSP4(b), DSP4((b) + 4), DSP4((b) + 8), DSP4((b) + 12)
#define DSP64(b) DSP16(b), DSP16((b) + 16), DSP16((b) + 32), DSP16((b) + 48)
static const unsigned char dsp[256] = { DSP64(0), DSP64(64), DSP64(128), DSP64(192) };

/* keep[len]: 0xff in the first len of 16 bytes, 0 after */
#define KEEP(l) { (l) > 0 ? 0xff : 0, (l) > 1 ? 0xff : 0, (l) > 2 ? 0xff : 0, (l) > 3 ? 0xff : 0, \
                  (l) > 4 ? 0xff : 0, (l) > 5 ? 0xff : 0, (l) > 6 ? 0xff : 0, (l) > 7 ? 0xff : 0, \
                  (l) > 8 ? 0xff : 0, (l) > 9 ? 0xff : 0, (l) > 10 ? 0xff : 0, (l) > 11 ? 0xff : 0, \
                  (l) > 12 ? 0xff : 0, (l) > 13 ? 0xff : 0, (l) > 14 ? 0xff : 0, (l) > 15 ? 0xff : 0 }
static const unsigned char keep[17][16] = { KEEP(0), KEEP(1), KEEP(2), KEEP(3), KEEP(4), KEEP(5), KEEP(6),
                                            KEEP(7), KEEP(8), KEEP(9), KEEP(10), KEEP(11), KEEP(12), KEEP(13),
                                            KEEP(14), KEEP(15), KEEP(16) };

/* The head of a token whose canonical bytes x[0..len) (len <= 16) are
 * followed by at least 16 - len readable bytes: the 16 bytes, masked, as
 * two little-endian words (the same bytes on a host of either order). */
CODE_HOT void head_of(const unsigned char *x, size_t len, uint64_t *lo, uint64_t *hi)
{
    *lo = sh_load_le64(x) & sh_load_le64(keep[len]);
    *hi = sh_load_le64(x + 8) & sh_load_le64(keep[len] + 8);
}

/* Runs of identifier, number and white-space bytes end where a mask of the
 * 64-byte block says (count trailing zeros), not after a mispredicted byte
 * loop, and an operator's length comes from the mask of operator bytes; at
 * the portable level (and off x86-64) the byte loops and the class table do
 * all. The masks are read from the text's image of the input, which has
 * zero bytes after the input: a run ends there. The scanner below is
 * compiled once per instruction set (the masks then stay in registers, the
 * block's classification inlined), as canon.c's block scanner is. */
#if defined(__GNUC__) && defined(__x86_64__) && !defined(SH_NO_SIMD)
#define CODE_BLOCKS 1
#include <immintrin.h>
#else
#define CODE_BLOCKS 0
#endif

/* A block's masks: bit k for byte base + k. */
typedef struct masks {
    uint64_t ident, num, space, op;
} masks;

#if CODE_BLOCKS
/* The operator bytes = ! < > + - * / % & | ^ ~ : . by a table of the low
 * nibble for each high nibble 2, 3, 5, 7 (as bits): a byte is an operator
 * byte when its bit (1 << high nibble's row) is set in row[low nibble]. */
#define OPROW(lo) ((OPCH(0x20 + (lo)) ? 1 : 0) | (OPCH(0x30 + (lo)) ? 2 : 0) | (OPCH(0x50 + (lo)) ? 4 : 0) | \
                   (OPCH(0x70 + (lo)) ? 8 : 0))
#define OPROWS OPROW(0), OPROW(1), OPROW(2), OPROW(3), OPROW(4), OPROW(5), OPROW(6), OPROW(7), OPROW(8), \
               OPROW(9), OPROW(10), OPROW(11), OPROW(12), OPROW(13), OPROW(14), OPROW(15)
/* the row bit of each high nibble (0 for those without operator bytes) */
#define HIBITS 0, 0, 1, 2, 0, 4, 0, 8, 0, 0, 0, 0, 0, 0, 0, 0

/* The x86-64 baseline has no byte shuffle: its masks leave out the operator
 * bytes (op 0), which the scanner then takes from the class table. */
__attribute__((target("sse2"))) static inline void load_sse2(masks *m, const unsigned char *b)
{
    uint64_t id = 0, nu = 0, sp = 0;
    int k;
    for (k = 0; k < 4; k++) {
        const __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(b + 16 * k));
        const __m128i lo = _mm_or_si128(v, _mm_set1_epi8(0x20));
        const __m128i alpha = _mm_cmplt_epi8(_mm_add_epi8(lo, _mm_set1_epi8((char)(128 - 'a'))),
                                             _mm_set1_epi8((char)(-128 + 26)));
        const __m128i digit = _mm_cmplt_epi8(_mm_add_epi8(v, _mm_set1_epi8((char)(128 - '0'))),
                                             _mm_set1_epi8((char)(-128 + 10)));
        const __m128i alnum_ = _mm_or_si128(_mm_or_si128(alpha, digit), _mm_cmpeq_epi8(v, _mm_set1_epi8('_')));
        const __m128i space = _mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8(' ')),
                                           _mm_cmplt_epi8(_mm_add_epi8(v, _mm_set1_epi8((char)(128 - 9))),
                                                          _mm_set1_epi8((char)(-128 + 5))));
        /* identifiers also take bytes >= 128 (their sign bit), numbers '.' */
        id |= (uint64_t)(unsigned)_mm_movemask_epi8(_mm_or_si128(alnum_, v)) << (16 * k);
        nu |= (uint64_t)(unsigned)_mm_movemask_epi8(_mm_or_si128(alnum_, _mm_cmpeq_epi8(v, _mm_set1_epi8('.'))))
              << (16 * k);
        sp |= (uint64_t)(unsigned)_mm_movemask_epi8(space) << (16 * k);
    }
    m->ident = id;
    m->num = nu;
    m->space = sp;
    m->op = 0;
}

CODE_HOT __attribute__((target("avx2"))) void cls32_avx2(__m256i v, uint32_t *id, uint32_t *sp, uint32_t *nu, uint32_t *op)
{
    const __m256i lo = _mm256_or_si256(v, _mm256_set1_epi8(0x20));
    const __m256i alpha = _mm256_cmpgt_epi8(_mm256_set1_epi8((char)(-128 + 26)),
                                            _mm256_add_epi8(lo, _mm256_set1_epi8((char)(128 - 'a'))));
    const __m256i digit = _mm256_cmpgt_epi8(_mm256_set1_epi8((char)(-128 + 10)),
                                            _mm256_add_epi8(v, _mm256_set1_epi8((char)(128 - '0'))));
    const __m256i alnum_ = _mm256_or_si256(_mm256_or_si256(alpha, digit), _mm256_cmpeq_epi8(v, _mm256_set1_epi8('_')));
    const __m256i space = _mm256_or_si256(_mm256_cmpeq_epi8(v, _mm256_set1_epi8(' ')),
                                          _mm256_cmpgt_epi8(_mm256_set1_epi8((char)(-128 + 5)),
                                                            _mm256_add_epi8(v, _mm256_set1_epi8((char)(128 - 9)))));
    const __m256i rows = _mm256_setr_epi8(OPROWS, OPROWS), hib = _mm256_setr_epi8(HIBITS, HIBITS);
    const __m256i r = _mm256_shuffle_epi8(rows, _mm256_and_si256(v, _mm256_set1_epi8(0x0f)));
    const __m256i h = _mm256_shuffle_epi8(hib, _mm256_and_si256(_mm256_srli_epi16(v, 4), _mm256_set1_epi8(0x0f)));
    const __m256i isop = _mm256_cmpgt_epi8(_mm256_and_si256(r, h), _mm256_setzero_si256());
    *id = (uint32_t)_mm256_movemask_epi8(_mm256_or_si256(alnum_, v));
    *sp = (uint32_t)_mm256_movemask_epi8(space);
    *nu = (uint32_t)_mm256_movemask_epi8(_mm256_or_si256(alnum_, _mm256_cmpeq_epi8(v, _mm256_set1_epi8('.'))));
    *op = (uint32_t)_mm256_movemask_epi8(isop);
}

__attribute__((target("avx2"))) static inline void load_avx2(masks *m, const unsigned char *b)
{
    uint32_t i0, s0, u0, o0, i1, s1, u1, o1;
    cls32_avx2(_mm256_loadu_si256((const __m256i *)(const void *)b), &i0, &s0, &u0, &o0);
    cls32_avx2(_mm256_loadu_si256((const __m256i *)(const void *)(b + 32)), &i1, &s1, &u1, &o1);
    m->ident = i0 | (uint64_t)i1 << 32;
    m->space = s0 | (uint64_t)s1 << 32;
    m->num = u0 | (uint64_t)u1 << 32;
    m->op = o0 | (uint64_t)o1 << 32;
}

/* The same masks from one 64-byte register (AVX-512 BW). */
__attribute__((target("avx512f,avx512bw"))) static inline void load_avx512(masks *m, const unsigned char *b)
{
    const __m512i v = _mm512_loadu_si512((const void *)b);
    const __mmask64 alpha = _mm512_cmplt_epu8_mask(
        _mm512_sub_epi8(_mm512_or_si512(v, _mm512_set1_epi8(0x20)), _mm512_set1_epi8('a')), _mm512_set1_epi8(26));
    const __mmask64 digit = _mm512_cmplt_epu8_mask(_mm512_sub_epi8(v, _mm512_set1_epi8('0')), _mm512_set1_epi8(10));
    const __mmask64 alnum_ = alpha | digit | _mm512_cmpeq_epi8_mask(v, _mm512_set1_epi8('_'));
    const __m512i rows = _mm512_broadcast_i32x4(_mm_setr_epi8(OPROWS)), hib = _mm512_broadcast_i32x4(_mm_setr_epi8(HIBITS));
    const __m512i r = _mm512_shuffle_epi8(rows, _mm512_and_si512(v, _mm512_set1_epi8(0x0f)));
    const __m512i h = _mm512_shuffle_epi8(hib, _mm512_and_si512(_mm512_srli_epi16(v, 4), _mm512_set1_epi8(0x0f)));
    m->ident = alnum_ | _mm512_movepi8_mask(v);
    m->num = alnum_ | _mm512_cmpeq_epi8_mask(v, _mm512_set1_epi8('.'));
    m->space = _mm512_cmpeq_epi8_mask(v, _mm512_set1_epi8(' ')) |
               _mm512_cmplt_epu8_mask(_mm512_sub_epi8(v, _mm512_set1_epi8(9)), _mm512_set1_epi8(5));
    m->op = _mm512_test_epi8_mask(r, h);
}
#endif

/* The byte loop: the end of the run from i of bytes of class cond. */
CODE_HOT size_t byte_run(const unsigned char *p, size_t i, size_t n, unsigned cond)
{
    while (i < n && (cls[p[i]] & cond)) i++;
    return i;
}

/* The bytes of the placeholders, after the input's image in the text. */
enum { AT_ID = 16, AT_NUM = 32, AT_STR = 48, PLACE_END = 64 };

/* A token: its canonical bytes at text[off, off + len) (len <= 16), its
 * head lo, hi, the input it came from. The next token and head are written
 * through pointers (tk, hd; the token array ends at tk_end), few registers
 * in the scanner's loop. */
#define EMIT(off_, len_, lo_, hi_, soff_, slen_) do { \
        if (tk == tk_end) { \
            const size_t nt_ = (size_t)(tk - o->tok); \
            o->n = nt_; \
            if ((st = sh_tokens_reserve(o, nt_ + 1, o->text_cap, sc->err)) != SH_OK) return st; \
            tk = o->tok + nt_; \
            tk_end = o->tok + o->cap; \
            hd = o->head + nt_ * SH_TOKEN_HEAD; \
        } \
        tk->src_off = (soff_); \
        tk->src_len = (slen_); \
        tk->off = (off_); \
        tk->len = (len_); \
        sh_store_le64(hd, (lo_)); \
        sh_store_le64(hd + 8, (hi_)); \
        tk++; \
        hd += SH_TOKEN_HEAD; \
    } while (0)

/* The heads of the placeholders (little-endian words of their bytes). */
#define HEAD_ID 0x4449u
#define HEAD_NUM 0x4d554eu
#define HEAD_STR 0x525453u

/* The scanner's state: the output and the input's image. */
typedef struct scan {
    const unsigned char *p; /* the input */
    const unsigned char *t; /* its image in the text */
    size_t n;
    sh_tokens *o;
    sh_error *err;
} scan;

/* The level the masks are made for: 0 the byte loops (portable), 2 SSE2
 * (no operator mask), 3 AVX2, 4 AVX-512. */
#define LOAD(lvl, m, b) do { \
        if ((lvl) >= 4) load_avx512((m), (b)); \
        else if ((lvl) == 3) load_avx2((m), (b)); \
        else load_sse2((m), (b)); \
    } while (0)

/* The end of the run from i of the bytes whose bit is set in field F of the
 * block masks (reloading them for the block of i as needed), or, at the
 * portable level, of the bytes of class COND. */
#if CODE_BLOCKS
#define RUN_END(lvl, i, F, COND) do { \
        if (lvl) { \
            for (;;) { \
                uint64_t m_; \
                if (((i) & ~(size_t)63) != base) { base = (i) & ~(size_t)63; LOAD(lvl, &mk, t + base); } \
                m_ = ~mk.F >> ((i) - base); \
                if (m_) { (i) += (size_t)__builtin_ctzll(m_); break; } \
                (i) = base + 64; \
            } \
        } else { \
            (i) = byte_run(p, (i), n, (COND)); \
        } \
    } while (0)
#else
#define RUN_END(lvl, i, F, COND) ((i) = byte_run(p, (i), n, (COND)))
#endif

/* The body of the scanner; lvl is a constant in each of its copies. */
CODE_HOT sh_status scan_body(const scan *sc, const int lvl)
{
    const unsigned char *p = sc->p, *t = sc->t;
    const size_t n = sc->n;
    sh_tokens *o = sc->o;
    sh_status st;
    size_t i = 0, base = SIZE_MAX;
    masks mk = { 0, 0, 0, 0 };
    sh_token *tk = o->tok, *tk_end = o->tok + o->cap;
    unsigned char *hd = o->head;
    (void)base;
    (void)mk;
    for (;;) {
        unsigned c;
        size_t j;
        uint64_t lo, hi;
        RUN_END(lvl, i, space, K_SPACE); /* white space: no token (i may be past n) */
        if (i >= n) break;
        c = p[i];
        if (dsp[c] == D_IDENT) { /* the most frequent */
            /* a keyword stays itself, any other identifier is ID: chosen
             * without a branch (which would go either way at random) */
            size_t len, k;
            j = i + 1;
            RUN_END(lvl, j, ident, K_IDENT | K_DIGIT);
            len = j - i;
            head_of(t + i, len < 16 ? len : 16, &lo, &hi);
            k = (size_t)0 - (size_t)keyword(lo, hi, len); /* all ones for a keyword: selects by masks */
            EMIT((i & k) | ((n + AT_ID) & ~k), (len & k) | (2 & ~k), (lo & k) | (HEAD_ID & ~k), hi & k, i, len);
            i = j;
            continue;
        }
        if (dsp[c] == D_OP) goto op; /* the next most frequent */
        switch (dsp[c]) {
        case D_SLASH:
            if (i + 1 < n && p[i + 1] == '*') {
                const unsigned char *e = find(p, i + 2, n, "*/", 2);
                i = e ? (size_t)(e - p) + 2 : n;
                continue;
            }
            if (i + 1 < n && p[i + 1] == '/') goto line_comment;
            break;
        case D_MINUS:
            if (i + 1 < n && p[i + 1] == '-') goto line_comment;
            break;
        case D_HASH:
        line_comment: { /* a line comment (and C preprocessor lines): past the newline */
                const unsigned char *e = memchr(p + i, '\n', n - i);
                i = e ? (size_t)(e - p) + 1 : n;
                continue;
            }
        case D_QUOTE:
            for (j = i + 1; j < n && p[j] != c; j++)
                if (p[j] == '\\') j++;
            EMIT(n + AT_STR, 3, HEAD_STR, 0, i, (j < n ? j + 1 : n) - i);
            i = j + 1;
            continue;
        case D_DIGIT:
            j = i + 1;
            RUN_END(lvl, j, num, K_NUM);
            EMIT(n + AT_NUM, 3, HEAD_NUM, 0, i, j - i);
            i = j;
            continue;
        case D_CTRL:
            i++; /* a control character: a separator */
            continue;
        default:
            break;
        }
        /* an operator: the longest run of up to three operator characters,
         * or the one punctuation character (the image has a zero byte,
         * not an operator, after the input) */
    op: {
            size_t len;
            if (lvl >= 3 && (i & ~(size_t)63) == base && (i & 63) <= 61) {
                /* the three bytes in the block's operator mask */
                const unsigned b3 = (unsigned)(mk.op >> (i & 63)) & 7;
                len = 1 + ((b3 & 3) == 3) + (b3 == 7);
            } else {
                const unsigned o1 = (cls[t[i]] & K_OP) != 0, o2 = o1 & ((cls[t[i + 1]] & K_OP) != 0),
                               o3 = o2 & ((cls[t[i + 2]] & K_OP) != 0);
                len = 1 + o2 + o3;
            }
            head_of(t + i, len, &lo, &hi);
            EMIT(i, len, lo, hi, i, len);
            i += len;
        }
    }
    o->n = (size_t)(tk - o->tok);
    return SH_OK;
}

static sh_status scan_portable(const scan *sc) { return scan_body(sc, 0); }
#if CODE_BLOCKS
__attribute__((target("sse2"))) static sh_status scan_sse2(const scan *sc) { return scan_body(sc, 2); }
__attribute__((target("avx2,bmi"))) static sh_status scan_avx2(const scan *sc) { return scan_body(sc, 3); }
__attribute__((target("avx512f,avx512bw,avx2,bmi"))) static sh_status scan_avx512(const scan *sc) { return scan_body(sc, 4); }
#endif

sh_status sh_code_tokenize(const char *in, size_t n, sh_simd level, sh_tokens *out, sh_error *err)
{
    sh_tokens *o = out;
    sh_status st;
    scan sc;
    /* the text: the input's image (keywords and operators are their own
     * bytes, at their offsets), 16 zero bytes, then the placeholders ID,
     * NUM and STR, 16 bytes each, and the slack */
    sh_tokens_begin(o);
    if (n > SIZE_MAX / 2 || (st = sh_tokens_reserve(o, n / 4 + 16, n + PLACE_END + SH_CANON_SLACK, err)) != SH_OK)
        return n > SIZE_MAX / 2 ? sh_error_set(err, SH_ENOMEM, 0, "out of memory for %zu bytes of source", n) : st;
    if (n) memcpy(o->text, in, n);
    memset(o->text + n, 0, PLACE_END + SH_CANON_SLACK);
    memcpy(o->text + n + AT_ID, "ID", 2);
    memcpy(o->text + n + AT_NUM, "NUM", 3);
    memcpy(o->text + n + AT_STR, "STR", 3);
    o->text_len = n + PLACE_END;
    sc.p = (const unsigned char *)in;
    sc.t = (const unsigned char *)o->text;
    sc.n = n;
    sc.o = o;
    sc.err = err;
#if CODE_BLOCKS
    if (level >= SH_SIMD_AVX512) return scan_avx512(&sc);
    if (level == SH_SIMD_AVX2) return scan_avx2(&sc);
    if (level == SH_SIMD_SSE2) return scan_sse2(&sc);
#else
    (void)level;
#endif
    return scan_portable(&sc);
}
