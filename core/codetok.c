/* The "code" rule set in C: see codetok.h. Each branch below is the branch
 * of rules.code_tokens (lua/shingle/rules.lua) with the same condition, in
 * the same order; spec/rules_spec.lua compares the two on generated and
 * real source. The Lua patterns there use the C locale's classes: %s space
 * \t \n \v \f \r, %a letters, %d digits, %w both, %p the printable rest. */
#include "codetok.h"

#include <stdint.h>
#include <string.h>

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
 * checks every keyword against the Lua list). */
static const struct kw { const char *s; unsigned char len; } keywords[256] = {
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

/* Whether the identifier w[0..len) is a keyword. */
static int keyword(const unsigned char *w, size_t len)
{
    uint64_t k0 = 0, k1 = 0, key;
    const struct kw *kw;
    size_t i;
    if (len > 10)
        return 0;
    for (i = 0; i < len && i < 8; i++) k0 |= (uint64_t)w[i] << (8 * i);
    for (; i < len; i++) k1 |= (uint64_t)w[i] << (8 * (i - 8));
    key = k0 ^ (k1 * 0x9e3779b97f4a7c15ULL) ^ (uint64_t)len;
    kw = &keywords[(key * 0x488cc4aae48d0a47ULL) >> 56];
    return kw->len == len && memcmp(kw->s, w, len) == 0;
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

sh_status sh_code_tokenize(const char *in, size_t n, sh_tokens *out, sh_error *err)
{
    const unsigned char *p = (const unsigned char *)in;
    size_t i = 0;
    sh_status st = SH_OK;
    sh_tokens_begin(out);
    while (i < n && st == SH_OK) {
        const unsigned c = p[i], k = cls[c], c2 = i + 1 < n ? p[i + 1] : 0;
        if (k & K_SPACE) {
            i++;
        } else if ((c == '/' && c2 == '/') || c == '#' || (c == '-' && c2 == '-')) {
            /* a line comment (and C preprocessor lines): past the newline */
            const unsigned char *e = memchr(p + i, '\n', n - i);
            i = e ? (size_t)(e - p) + 1 : n;
        } else if (c == '/' && c2 == '*') {
            const unsigned char *e = find(p, i + 2, n, "*/", 2);
            i = e ? (size_t)(e - p) + 2 : n;
        } else if (c == '"' || c == '\'') {
            size_t j = i + 1;
            while (j < n && p[j] != c) {
                if (p[j] == '\\')
                    j++;
                j++;
            }
            st = sh_tokens_push(out, "STR", 3, i, (j < n ? j + 1 : n) - i, err);
            i = j + 1;
        } else if (k & K_IDENT) {
            size_t j = i + 1;
            while (j < n && (cls[p[j]] & (K_IDENT | K_DIGIT)))
                j++;
            if (keyword(p + i, j - i))
                st = sh_tokens_push(out, p + i, j - i, i, j - i, err);
            else
                st = sh_tokens_push(out, "ID", 2, i, j - i, err);
            i = j;
        } else if (k & K_DIGIT) {
            size_t j = i + 1;
            while (j < n && (cls[p[j]] & K_NUM))
                j++;
            st = sh_tokens_push(out, "NUM", 3, i, j - i, err);
            i = j;
        } else if (!(k & K_PUNCT)) {
            i++; /* a control character: a separator */
        } else {
            /* an operator: the longest run of up to three operator
             * characters, or the one punctuation character */
            size_t j = i;
            while (j < n && j - i < 3 && (cls[p[j]] & K_OP))
                j++;
            if (j == i)
                j = i + 1;
            st = sh_tokens_push(out, p + i, j - i, i, j - i, err);
            i = j;
        }
    }
    if (st != SH_OK)
        return st;
    return sh_tokens_end(out, err);
}
