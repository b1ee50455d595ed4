/* Canonicalization and tokenizing: see canon.h for the contract.
 *
 * The scanner is one pass over the input, in three gears:
 *  - ascii_words(): no word in progress and plain ASCII ahead. Its state is in
 *    locals; it emits tokens directly. On x86-64 it classifies 64 bytes at a
 *    time with SSE2 into bit masks (word bytes, letters, bytes it must leave
 *    to the slow path) and steps from word to word with count-trailing-zeros.
 *  - ascii_run(): a byte loop copying ASCII letters and digits through a
 *    lowercase table, used for short tails and for words in progress.
 *  - put_cp(): everything else (UTF-8, markup, entities, punctuation) is one
 *    code point at a time, classified and appended to the word in progress,
 *    ending it, or emitted as a token of its own.
 * Room for the rest of the input is reserved in out->text before the ASCII
 * loops, so they copy without a capacity check per byte.
 *
 * Policy choices not spelled out in canon.h:
 *  - Bytes inside dropped markup (tags, comments, script/style contents) are
 *    not checked for valid UTF-8.
 *  - Comments, <!...> declarations, <?...?> and the CDATA brackets do not
 *    separate words (a browser renders "a<!-- x -->b" as "ab"); block tags and
 *    any tag not in the inline list do.
 *  - A quote inside a tag opens a quoted value only after '=' (so a stray
 *    apostrophe in an unquoted value does not swallow the document).
 *  - Numeric character references may omit the ';' (as in HTML5). Named ones
 *    need it, except the legacy forms amp, lt, gt, quot, nbsp, copy, reg when
 *    followed by a non-letter ("&copy2020" is "(c)2020", "&amplifier" stays).
 *  - With SH_CANON_FOLD a token is folded as a whole after it is complete; a
 *    token that folds to nothing (only combining marks) is dropped. */
#include "canon.h"

#include "byteorder.h"
#include "codetok.h"
#include "grow.h"
#include "tweet.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <utf8proc.h>

/* ASCII byte classes: digit, letter, separator (whitespace, controls, NUL,
 * DEL), punctuation/symbol, '<', '&', and bytes >= 0x80. Digit and letter are
 * 0 and 1 so "k <= C_L" tests for a word byte and OR-ing the classes of a run
 * tells whether it had a letter. */
enum { C_D = 0, C_L = 1, C_S, C_P, C_LT, C_AMP, C_HI };

static const unsigned char byte_class[256] = {
    C_S, C_S, C_S, C_S, C_S, C_S, C_S, C_S, C_S, C_S, C_S, C_S, C_S, C_S, C_S, C_S,
    C_S, C_S, C_S, C_S, C_S, C_S, C_S, C_S, C_S, C_S, C_S, C_S, C_S, C_S, C_S, C_S,
    C_S, C_P, C_P, C_P, C_P, C_P, C_AMP, C_P, C_P, C_P, C_P, C_P, C_P, C_P, C_P, C_P,
    C_D, C_D, C_D, C_D, C_D, C_D, C_D, C_D, C_D, C_D, C_P, C_P, C_LT, C_P, C_P, C_P,
    C_P, C_L, C_L, C_L, C_L, C_L, C_L, C_L, C_L, C_L, C_L, C_L, C_L, C_L, C_L, C_L,
    C_L, C_L, C_L, C_L, C_L, C_L, C_L, C_L, C_L, C_L, C_L, C_P, C_P, C_P, C_P, C_P,
    C_P, C_L, C_L, C_L, C_L, C_L, C_L, C_L, C_L, C_L, C_L, C_L, C_L, C_L, C_L, C_L,
    C_L, C_L, C_L, C_L, C_L, C_L, C_L, C_L, C_L, C_L, C_L, C_P, C_P, C_P, C_P, C_S,
    /* 0x80-0xff: UTF-8 lead and continuation bytes */
    C_HI, C_HI, C_HI, C_HI, C_HI, C_HI, C_HI, C_HI, C_HI, C_HI, C_HI, C_HI, C_HI, C_HI, C_HI, C_HI,
    C_HI, C_HI, C_HI, C_HI, C_HI, C_HI, C_HI, C_HI, C_HI, C_HI, C_HI, C_HI, C_HI, C_HI, C_HI, C_HI,
    C_HI, C_HI, C_HI, C_HI, C_HI, C_HI, C_HI, C_HI, C_HI, C_HI, C_HI, C_HI, C_HI, C_HI, C_HI, C_HI,
    C_HI, C_HI, C_HI, C_HI, C_HI, C_HI, C_HI, C_HI, C_HI, C_HI, C_HI, C_HI, C_HI, C_HI, C_HI, C_HI,
    C_HI, C_HI, C_HI, C_HI, C_HI, C_HI, C_HI, C_HI, C_HI, C_HI, C_HI, C_HI, C_HI, C_HI, C_HI, C_HI,
    C_HI, C_HI, C_HI, C_HI, C_HI, C_HI, C_HI, C_HI, C_HI, C_HI, C_HI, C_HI, C_HI, C_HI, C_HI, C_HI,
    C_HI, C_HI, C_HI, C_HI, C_HI, C_HI, C_HI, C_HI, C_HI, C_HI, C_HI, C_HI, C_HI, C_HI, C_HI, C_HI,
    C_HI, C_HI, C_HI, C_HI, C_HI, C_HI, C_HI, C_HI, C_HI, C_HI, C_HI, C_HI, C_HI, C_HI, C_HI, C_HI,
};

#define LOW1(b) ((unsigned char)((b) >= 'A' && (b) <= 'Z' ? (b) + 32 : (b)))
#define LOW4(b) LOW1(b), LOW1((b) + 1), LOW1((b) + 2), LOW1((b) + 3)
#define LOW16(b) LOW4(b), LOW4((b) + 4), LOW4((b) + 8), LOW4((b) + 12)
#define LOW64(b) LOW16(b), LOW16((b) + 16), LOW16((b) + 32), LOW16((b) + 48)
static const unsigned char ascii_lower[256] = { LOW64(0), LOW64(64), LOW64(128), LOW64(192) };
#define ID1(b) ((unsigned char)(b))
#define ID4(b) ID1(b), ID1((b) + 1), ID1((b) + 2), ID1((b) + 3)
#define ID16(b) ID4(b), ID4((b) + 4), ID4((b) + 8), ID4((b) + 12)
#define ID64(b) ID16(b), ID16((b) + 16), ID16((b) + 32), ID16((b) + 48)
static const unsigned char ascii_same[256] = { ID64(0), ID64(64), ID64(128), ID64(192) };

/* The HTML 4 named character references (252) plus &apos;, sorted by strcmp. */
static const struct entity {
    char name[9];
    unsigned short cp;
} entities[] = {
    {"AElig", 0x00C6}, {"Aacute", 0x00C1}, {"Acirc", 0x00C2}, {"Agrave", 0x00C0},
    {"Alpha", 0x0391}, {"Aring", 0x00C5}, {"Atilde", 0x00C3}, {"Auml", 0x00C4},
    {"Beta", 0x0392}, {"Ccedil", 0x00C7}, {"Chi", 0x03A7}, {"Dagger", 0x2021},
    {"Delta", 0x0394}, {"ETH", 0x00D0}, {"Eacute", 0x00C9}, {"Ecirc", 0x00CA},
    {"Egrave", 0x00C8}, {"Epsilon", 0x0395}, {"Eta", 0x0397}, {"Euml", 0x00CB},
    {"Gamma", 0x0393}, {"Iacute", 0x00CD}, {"Icirc", 0x00CE}, {"Igrave", 0x00CC},
    {"Iota", 0x0399}, {"Iuml", 0x00CF}, {"Kappa", 0x039A}, {"Lambda", 0x039B}, {"Mu", 0x039C},
    {"Ntilde", 0x00D1}, {"Nu", 0x039D}, {"OElig", 0x0152}, {"Oacute", 0x00D3},
    {"Ocirc", 0x00D4}, {"Ograve", 0x00D2}, {"Omega", 0x03A9}, {"Omicron", 0x039F},
    {"Oslash", 0x00D8}, {"Otilde", 0x00D5}, {"Ouml", 0x00D6}, {"Phi", 0x03A6}, {"Pi", 0x03A0},
    {"Prime", 0x2033}, {"Psi", 0x03A8}, {"Rho", 0x03A1}, {"Scaron", 0x0160}, {"Sigma", 0x03A3},
    {"THORN", 0x00DE}, {"Tau", 0x03A4}, {"Theta", 0x0398}, {"Uacute", 0x00DA},
    {"Ucirc", 0x00DB}, {"Ugrave", 0x00D9}, {"Upsilon", 0x03A5}, {"Uuml", 0x00DC},
    {"Xi", 0x039E}, {"Yacute", 0x00DD}, {"Yuml", 0x0178}, {"Zeta", 0x0396}, {"aacute", 0x00E1},
    {"acirc", 0x00E2}, {"acute", 0x00B4}, {"aelig", 0x00E6}, {"agrave", 0x00E0},
    {"alefsym", 0x2135}, {"alpha", 0x03B1}, {"amp", 0x0026}, {"and", 0x2227}, {"ang", 0x2220},
    {"apos", 0x0027}, {"aring", 0x00E5}, {"asymp", 0x2248}, {"atilde", 0x00E3},
    {"auml", 0x00E4}, {"bdquo", 0x201E}, {"beta", 0x03B2}, {"brvbar", 0x00A6}, {"bull", 0x2022},
    {"cap", 0x2229}, {"ccedil", 0x00E7}, {"cedil", 0x00B8}, {"cent", 0x00A2}, {"chi", 0x03C7},
    {"circ", 0x02C6}, {"clubs", 0x2663}, {"cong", 0x2245}, {"copy", 0x00A9}, {"crarr", 0x21B5},
    {"cup", 0x222A}, {"curren", 0x00A4}, {"dArr", 0x21D3}, {"dagger", 0x2020}, {"darr", 0x2193},
    {"deg", 0x00B0}, {"delta", 0x03B4}, {"diams", 0x2666}, {"divide", 0x00F7},
    {"eacute", 0x00E9}, {"ecirc", 0x00EA}, {"egrave", 0x00E8}, {"empty", 0x2205},
    {"emsp", 0x2003}, {"ensp", 0x2002}, {"epsilon", 0x03B5}, {"equiv", 0x2261}, {"eta", 0x03B7},
    {"eth", 0x00F0}, {"euml", 0x00EB}, {"euro", 0x20AC}, {"exist", 0x2203}, {"fnof", 0x0192},
    {"forall", 0x2200}, {"frac12", 0x00BD}, {"frac14", 0x00BC}, {"frac34", 0x00BE},
    {"frasl", 0x2044}, {"gamma", 0x03B3}, {"ge", 0x2265}, {"gt", 0x003E}, {"hArr", 0x21D4},
    {"harr", 0x2194}, {"hearts", 0x2665}, {"hellip", 0x2026}, {"iacute", 0x00ED},
    {"icirc", 0x00EE}, {"iexcl", 0x00A1}, {"igrave", 0x00EC}, {"image", 0x2111},
    {"infin", 0x221E}, {"int", 0x222B}, {"iota", 0x03B9}, {"iquest", 0x00BF}, {"isin", 0x2208},
    {"iuml", 0x00EF}, {"kappa", 0x03BA}, {"lArr", 0x21D0}, {"lambda", 0x03BB}, {"lang", 0x2329},
    {"laquo", 0x00AB}, {"larr", 0x2190}, {"lceil", 0x2308}, {"ldquo", 0x201C}, {"le", 0x2264},
    {"lfloor", 0x230A}, {"lowast", 0x2217}, {"loz", 0x25CA}, {"lrm", 0x200E},
    {"lsaquo", 0x2039}, {"lsquo", 0x2018}, {"lt", 0x003C}, {"macr", 0x00AF}, {"mdash", 0x2014},
    {"micro", 0x00B5}, {"middot", 0x00B7}, {"minus", 0x2212}, {"mu", 0x03BC}, {"nabla", 0x2207},
    {"nbsp", 0x00A0}, {"ndash", 0x2013}, {"ne", 0x2260}, {"ni", 0x220B}, {"not", 0x00AC},
    {"notin", 0x2209}, {"nsub", 0x2284}, {"ntilde", 0x00F1}, {"nu", 0x03BD}, {"oacute", 0x00F3},
    {"ocirc", 0x00F4}, {"oelig", 0x0153}, {"ograve", 0x00F2}, {"oline", 0x203E},
    {"omega", 0x03C9}, {"omicron", 0x03BF}, {"oplus", 0x2295}, {"or", 0x2228}, {"ordf", 0x00AA},
    {"ordm", 0x00BA}, {"oslash", 0x00F8}, {"otilde", 0x00F5}, {"otimes", 0x2297},
    {"ouml", 0x00F6}, {"para", 0x00B6}, {"part", 0x2202}, {"permil", 0x2030}, {"perp", 0x22A5},
    {"phi", 0x03C6}, {"pi", 0x03C0}, {"piv", 0x03D6}, {"plusmn", 0x00B1}, {"pound", 0x00A3},
    {"prime", 0x2032}, {"prod", 0x220F}, {"prop", 0x221D}, {"psi", 0x03C8}, {"quot", 0x0022},
    {"rArr", 0x21D2}, {"radic", 0x221A}, {"rang", 0x232A}, {"raquo", 0x00BB}, {"rarr", 0x2192},
    {"rceil", 0x2309}, {"rdquo", 0x201D}, {"real", 0x211C}, {"reg", 0x00AE}, {"rfloor", 0x230B},
    {"rho", 0x03C1}, {"rlm", 0x200F}, {"rsaquo", 0x203A}, {"rsquo", 0x2019}, {"sbquo", 0x201A},
    {"scaron", 0x0161}, {"sdot", 0x22C5}, {"sect", 0x00A7}, {"shy", 0x00AD}, {"sigma", 0x03C3},
    {"sigmaf", 0x03C2}, {"sim", 0x223C}, {"spades", 0x2660}, {"sub", 0x2282}, {"sube", 0x2286},
    {"sum", 0x2211}, {"sup", 0x2283}, {"sup1", 0x00B9}, {"sup2", 0x00B2}, {"sup3", 0x00B3},
    {"supe", 0x2287}, {"szlig", 0x00DF}, {"tau", 0x03C4}, {"there4", 0x2234}, {"theta", 0x03B8},
    {"thetasym", 0x03D1}, {"thinsp", 0x2009}, {"thorn", 0x00FE}, {"tilde", 0x02DC},
    {"times", 0x00D7}, {"trade", 0x2122}, {"uArr", 0x21D1}, {"uacute", 0x00FA},
    {"uarr", 0x2191}, {"ucirc", 0x00FB}, {"ugrave", 0x00F9}, {"uml", 0x00A8}, {"upsih", 0x03D2},
    {"upsilon", 0x03C5}, {"uuml", 0x00FC}, {"weierp", 0x2118}, {"xi", 0x03BE},
    {"yacute", 0x00FD}, {"yen", 0x00A5}, {"yuml", 0x00FF}, {"zeta", 0x03B6}, {"zwj", 0x200D},
    {"zwnj", 0x200C},
};

/* Runs of plain ASCII words are classified 64 bytes at a time with SSE2
 * or AVX2 (chosen at run time, core/simd.h; the AVX-512 level takes AVX2's
 * scanner, see ascii_words) and count-trailing-zeros builtins; at the portable level (and off x86-64) the byte loop of
 * ascii_run does all. */
#if defined(__GNUC__) && defined(__x86_64__) && !defined(SH_NO_SIMD)
#define CANON_BLOCKS 1
#include <immintrin.h>
#else
#define CANON_BLOCKS 0
#endif

/* Small functions on the per-word path, inlined even where gcc would not. */
#if defined(__GNUC__)
#define CANON_HOT static inline __attribute__((always_inline))
#else
#define CANON_HOT static inline
#endif

/* Tags that do not end a word ("wo<b>r</b>d" is one token), and the two
 * whose contents are raw text: a perfect hash of the lowercase name's bytes
 * (at most 8, the first in the lowest byte of a 64-bit key) into 64 slots
 * (the multiplier was found by trying random odd ones until these 35 names
 * fell into distinct slots; test_canon checks every name). Any other tag
 * (block-level, void like img/br, unknown, or a name longer than 8 bytes)
 * separates words. The inline ones: a abbr acronym b bdi bdo big cite code
 * data del dfn em font i ins kbd mark nobr q s samp small span strike strong
 * sub sup time tt u var wbr. */
enum { TAG_OTHER = 0, TAG_INLINE, TAG_SCRIPT, TAG_STYLE }; /* raw text: >= TAG_SCRIPT */
#define TAG_HASH(key) ((unsigned)(((key) * 0xce88ee9624189e43ULL) >> 58))
static const struct tag_slot {
    uint64_t key;        /* the name's bytes, the first in the lowest */
    unsigned char kind;
} tag_slots[64] = {
    [0] = { 0x6f6462ULL, TAG_INLINE }, /* bdo */
    [3] = { 0x6c6c616d73ULL, TAG_INLINE }, /* small */
    [4] = { 0x62ULL, TAG_INLINE }, /* b */
    [5] = { 0x6d796e6f726361ULL, TAG_INLINE }, /* acronym */
    [10] = { 0x71ULL, TAG_INLINE }, /* q */
    [11] = { 0x656c797473ULL, TAG_STYLE }, /* style */
    [13] = { 0x746e6f66ULL, TAG_INLINE }, /* font */
    [14] = { 0x676962ULL, TAG_INLINE }, /* big */
    [16] = { 0x61ULL, TAG_INLINE }, /* a */
    [19] = { 0x72626f6eULL, TAG_INLINE }, /* nobr */
    [21] = { 0x726176ULL, TAG_INLINE }, /* var */
    [22] = { 0x6c6564ULL, TAG_INLINE }, /* del */
    [24] = { 0x65746963ULL, TAG_INLINE }, /* cite */
    [25] = { 0x75ULL, TAG_INLINE }, /* u */
    [26] = { 0x696462ULL, TAG_INLINE }, /* bdi */
    [29] = { 0x656b69727473ULL, TAG_INLINE }, /* strike */
    [32] = { 0x747069726373ULL, TAG_SCRIPT }, /* script */
    [35] = { 0x61746164ULL, TAG_INLINE }, /* data */
    [36] = { 0x656d6974ULL, TAG_INLINE }, /* time */
    [37] = { 0x676e6f727473ULL, TAG_INLINE }, /* strong */
    [38] = { 0x6e617073ULL, TAG_INLINE }, /* span */
    [40] = { 0x7474ULL, TAG_INLINE }, /* tt */
    [42] = { 0x726277ULL, TAG_INLINE }, /* wbr */
    [43] = { 0x65646f63ULL, TAG_INLINE }, /* code */
    [44] = { 0x627573ULL, TAG_INLINE }, /* sub */
    [45] = { 0x69ULL, TAG_INLINE }, /* i */
    [46] = { 0x736e69ULL, TAG_INLINE }, /* ins */
    [47] = { 0x707573ULL, TAG_INLINE }, /* sup */
    [48] = { 0x6e6664ULL, TAG_INLINE }, /* dfn */
    [49] = { 0x73ULL, TAG_INLINE }, /* s */
    [50] = { 0x6d65ULL, TAG_INLINE }, /* em */
    [52] = { 0x6b72616dULL, TAG_INLINE }, /* mark */
    [55] = { 0x72626261ULL, TAG_INLINE }, /* abbr */
    [59] = { 0x706d6173ULL, TAG_INLINE }, /* samp */
    [60] = { 0x64626bULL, TAG_INLINE }, /* kbd */
};

/* Classes of a code point once decoded. */
enum { K_DIGIT, K_LETTER, K_MARK, K_IDEO, K_SEP, K_PUNCT };

/* The scanner's state for one call: the input, the options, and the word in
 * progress (its source span, where its bytes start in out->text, whether it
 * has anything but Nd digits, any non-ASCII byte, and whether it is a single
 * ideograph that only combining marks may extend). */
typedef struct canon {
    const unsigned char *p;
    size_t len;        /* of the whole input */
    unsigned flags;
    sh_utf8_mode invalid;
    const unsigned char *low;
    sh_tokens *out;
    sh_error *err;
    int active, ideo, nondigit, nonascii;
    size_t w_src, w_end, w_text;
    sh_simd level;     /* of the block scanner; SH_SIMD_PORTABLE: none */
    int vbmi;          /* the AVX-512 level's scanner takes words_vbmi */
    /* the classes of the code points beyond ASCII met last, by their low
     * bits: a text uses few of them (quotes, dashes, its accented letters),
     * and utf8proc's lookup costs more than the rest of a code point's way */
    utf8proc_int32_t seen_cp[32];
    signed char seen_k[32];
} canon;

static sh_status no_memory(canon *c, size_t want)
{
    return sh_error_set(c->err, SH_ENOMEM, 0,
                        "out of memory growing the token buffers to %zu bytes", want);
}

/* Make room for need more bytes of text; grows geometrically. */
static sh_status text_grow(canon *c, size_t need)
{
    sh_tokens *o = c->out;
    size_t want, cap;
    char *t;
    if (need > SIZE_MAX - o->text_len)
        return no_memory(c, SIZE_MAX);
    want = o->text_len + need;
    cap = o->text_cap ? o->text_cap : 64;
    while (cap < want)
        cap = cap > SIZE_MAX / 2 ? want : cap * 2;
    t = realloc(o->text, cap);
    if (!t)
        return no_memory(c, cap);
    o->text = t;
    o->text_cap = cap;
    return SH_OK;
}

static sh_status text_reserve(canon *c, size_t need)
{
    if (c->out->text_cap - c->out->text_len >= need)
        return SH_OK;
    return text_grow(c, need);
}

static sh_status token_grow(canon *c)
{
    sh_tokens *o = c->out;
    size_t cap = o->cap ? o->cap * 2 : 256;
    sh_token *nt;
    unsigned char *nh;
    sh_status st;
    if (o->flush && o->n > 0 && o->cap >= o->flush_at) {
        /* streaming: hand the tokens over instead of growing (canon.h) */
        if ((st = o->flush(o->flush_ctx, o, c->err)) != SH_OK)
            return st;
        o->n = 0;
        return SH_OK;
    }
    if (o->flush && !o->cap && o->flush_at < cap) /* small blocks (tests, fuzzing); the block scanner needs 64 */
        cap = o->flush_at < 64 ? 64 : o->flush_at;
    /* the caller's bound (issue 11, max_shingles): checked here, when the
     * array is full; the array never grows past the bound and the 64 tokens
     * of slack the block scanner asks for before each block (so a document
     * may end with up to 63 tokens past the bound: sh_shingle_text checks
     * the count it gets) */
    if (o->max_n) {
        if (o->n >= o->max_n)
            return sh_error_set(c->err, SH_ELIMIT, 0, "more than %zu tokens", o->max_n);
        if (o->max_n <= SIZE_MAX - 64 && cap > o->max_n + 64)
            cap = o->max_n + 64;
    }
    if (cap > SIZE_MAX / sizeof *nt)
        return no_memory(c, SIZE_MAX);
    nt = realloc(o->tok, cap * sizeof *nt);
    if (!nt)
        return no_memory(c, cap * sizeof *nt);
    o->tok = nt;
    nh = realloc(o->head, cap * SH_TOKEN_HEAD);
    if (!nh)
        return no_memory(c, cap * SH_TOKEN_HEAD);
    o->head = nh;
    o->cap = cap;
    return SH_OK;
}

/* The head of token k: its first SH_TOKEN_HEAD canonical bytes, zero-padded.
 * Two 8-byte loads and masks: text has room for 16 bytes at any token. */
static void put_head(sh_tokens *o, size_t k)
{
    const unsigned char *t = (const unsigned char *)o->text + o->tok[k].off;
    const size_t len = o->tok[k].len;
    const uint64_t lo = sh_load_le64(t), hi = sh_load_le64(t + 8);
    unsigned char *h = o->head + k * SH_TOKEN_HEAD;
    sh_store_le64(h, len >= 8 ? lo : lo & ((UINT64_C(1) << (8 * len)) - 1));
    sh_store_le64(h + 8, len >= 16 ? hi : len <= 8 ? 0 : hi & ((UINT64_C(1) << (8 * (len - 8))) - 1));
}

static sh_status push_token(canon *c)
{
    sh_tokens *o = c->out;
    sh_token *t;
    sh_status st;
    if (o->n == o->cap && (st = token_grow(c)) != SH_OK)
        return st;
    if ((st = text_reserve(c, SH_TOKEN_HEAD)) != SH_OK) /* put_head reads 16 bytes */
        return st;
    t = &o->tok[o->n];
    t->src_off = c->w_src;
    t->src_len = c->w_end - c->w_src;
    t->off = c->w_text;
    t->len = o->text_len - c->w_text;
    put_head(o, o->n++);
    return SH_OK;
}

/* Replace the word's bytes by their NFKC case fold without marks. */
static sh_status fold_word(canon *c)
{
    sh_tokens *o = c->out;
    utf8proc_uint8_t *dst = NULL;
    utf8proc_ssize_t r = utf8proc_map((const utf8proc_uint8_t *)o->text + c->w_text,
                                      (utf8proc_ssize_t)(o->text_len - c->w_text), &dst,
                                      UTF8PROC_COMPOSE | UTF8PROC_COMPAT |
                                      UTF8PROC_CASEFOLD | UTF8PROC_STRIPMARK);
    sh_status st;
    if (r == UTF8PROC_ERROR_NOMEM)
        return sh_error_set(c->err, SH_ENOMEM, c->w_src,
                            "out of memory folding the token at byte %zu", c->w_src);
    if (r < 0) /* cannot happen on the valid UTF-8 we wrote: keep the word unfolded */
        return SH_OK;
    o->text_len = c->w_text;
    st = text_reserve(c, (size_t)r);
    if (st == SH_OK) {
        memcpy(o->text + o->text_len, dst, (size_t)r);
        o->text_len += (size_t)r;
    }
    free(dst);
    return st;
}

/* The uncommon ends of a word: a number that is not kept, or a word to fold. */
static sh_status finish_rare(canon *c)
{
    sh_status st;
    if (!c->nondigit && !(c->flags & SH_CANON_NUMBERS)) {
        c->out->text_len = c->w_text;
        return SH_OK;
    }
    if (c->nonascii && (c->flags & SH_CANON_FOLD)) {
        if ((st = fold_word(c)) != SH_OK)
            return st;
        if (c->out->text_len == c->w_text)
            return SH_OK;
    }
    return push_token(c);
}

/* End the word in progress: drop it if it is a number and numbers are not
 * kept, fold it if asked, and record it. */
static sh_status finish(canon *c)
{
    if (!c->active)
        return SH_OK;
    c->active = 0;
    if (!c->nondigit || (c->nonascii && (c->flags & SH_CANON_FOLD)))
        return finish_rare(c);
    return push_token(c);
}

static void start(canon *c, size_t src)
{
    c->active = 1;
    c->ideo = c->nondigit = c->nonascii = 0;
    c->w_src = src;
    c->w_text = c->out->text_len;
}

/* Scripts written without spaces between words: each letter is a token. */
static int no_space_script(utf8proc_int32_t cp)
{
    if (cp < 0x0E00)
        return 0;
    return (cp <= 0x0EFF)                     /* Thai, Lao */
        || (cp >= 0x1000 && cp <= 0x109F)     /* Myanmar */
        || (cp >= 0x1780 && cp <= 0x17FF)     /* Khmer */
        || (cp >= 0x2E80 && cp <= 0x2FDF)     /* CJK and Kangxi radicals */
        || (cp >= 0x3005 && cp <= 0x3007)     /* ideographic iteration mark, closing mark, zero */
        || (cp >= 0x3021 && cp <= 0x3029)     /* Hangzhou numerals */
        || (cp >= 0x3031 && cp <= 0x303C)     /* kana repeat marks */
        || (cp >= 0x3040 && cp <= 0x312F)     /* Hiragana, Katakana, Bopomofo */
        || (cp >= 0x31A0 && cp <= 0x31BF)     /* Bopomofo extended */
        || (cp >= 0x31F0 && cp <= 0x31FF)     /* Katakana phonetic extensions */
        || (cp >= 0x3400 && cp <= 0x4DBF)     /* CJK extension A */
        || (cp >= 0x4E00 && cp <= 0x9FFF)     /* CJK unified ideographs */
        || (cp >= 0xA000 && cp <= 0xA4CF)     /* Yi */
        || (cp >= 0xF900 && cp <= 0xFAFF)     /* CJK compatibility ideographs */
        || (cp >= 0xFF66 && cp <= 0xFF9F)     /* halfwidth Katakana */
        || (cp >= 0x1B000 && cp <= 0x1B16F)   /* kana supplement and extensions */
        || (cp >= 0x20000 && cp <= 0x3FFFF);  /* CJK extensions B and later */
}

static int classify(utf8proc_int32_t cp)
{
    if (cp < 0x80) {
        switch (byte_class[cp]) {
        case C_D: return K_DIGIT;
        case C_L: return K_LETTER;
        case C_S: return K_SEP;
        default: return K_PUNCT;
        }
    }
    switch (utf8proc_category(cp)) {
    case UTF8PROC_CATEGORY_LU: case UTF8PROC_CATEGORY_LL: case UTF8PROC_CATEGORY_LT:
    case UTF8PROC_CATEGORY_LM: case UTF8PROC_CATEGORY_LO: case UTF8PROC_CATEGORY_NL:
        return no_space_script(cp) ? K_IDEO : K_LETTER;
    case UTF8PROC_CATEGORY_NO:
        return K_LETTER;
    case UTF8PROC_CATEGORY_MN: case UTF8PROC_CATEGORY_MC: case UTF8PROC_CATEGORY_ME:
        return K_MARK;
    case UTF8PROC_CATEGORY_ND:
        return K_DIGIT;
    case UTF8PROC_CATEGORY_PC: case UTF8PROC_CATEGORY_PD: case UTF8PROC_CATEGORY_PS:
    case UTF8PROC_CATEGORY_PE: case UTF8PROC_CATEGORY_PI: case UTF8PROC_CATEGORY_PF:
    case UTF8PROC_CATEGORY_PO: case UTF8PROC_CATEGORY_SM: case UTF8PROC_CATEGORY_SC:
    case UTF8PROC_CATEGORY_SK: case UTF8PROC_CATEGORY_SO:
        return K_PUNCT;
    default: /* Z*, C* (controls, format, private use, unassigned) */
        return K_SEP;
    }
}

/* classify(cp) through c's cache of the code points met last. */
static int classify_seen(canon *c, utf8proc_int32_t cp)
{
    const unsigned slot = (unsigned)cp & 31;
    if (cp < 0x80)
        return classify(cp);
    if (c->seen_cp[slot] != cp) {
        c->seen_cp[slot] = cp;
        c->seen_k[slot] = (signed char)classify(cp);
    }
    return c->seen_k[slot];
}

/* Append cp (valid scalar value) to the word in progress as UTF-8. */
static sh_status append_cp(canon *c, utf8proc_int32_t cp, size_t src_end)
{
    sh_tokens *o = c->out;
    unsigned char *d;
    uint32_t u = (uint32_t)cp;
    sh_status st = text_reserve(c, 4);
    if (st != SH_OK)
        return st;
    d = (unsigned char *)o->text + o->text_len;
    if (u < 0x80) {
        d[0] = (unsigned char)u;
        o->text_len += 1;
    } else if (u < 0x800) {
        d[0] = (unsigned char)(0xC0 | (u >> 6));
        d[1] = (unsigned char)(0x80 | (u & 0x3F));
        o->text_len += 2;
        c->nonascii = 1;
    } else if (u < 0x10000) {
        d[0] = (unsigned char)(0xE0 | (u >> 12));
        d[1] = (unsigned char)(0x80 | ((u >> 6) & 0x3F));
        d[2] = (unsigned char)(0x80 | (u & 0x3F));
        o->text_len += 3;
        c->nonascii = 1;
    } else {
        d[0] = (unsigned char)(0xF0 | (u >> 18));
        d[1] = (unsigned char)(0x80 | ((u >> 12) & 0x3F));
        d[2] = (unsigned char)(0x80 | ((u >> 6) & 0x3F));
        d[3] = (unsigned char)(0x80 | (u & 0x3F));
        o->text_len += 4;
        c->nonascii = 1;
    }
    c->w_end = src_end;
    return SH_OK;
}

/* One code point that came from input bytes [s0, s1): extend, end or start a
 * token according to its class. */
static sh_status put_cp(canon *c, utf8proc_int32_t cp, size_t s0, size_t s1)
{
    sh_status st;
    int k = classify_seen(c, cp);
    switch (k) {
    case K_SEP:
        return finish(c);
    case K_PUNCT:
        if ((st = finish(c)) != SH_OK || !(c->flags & SH_CANON_PUNCT))
            return st;
        start(c, s0);
        c->nondigit = 1;
        if ((st = append_cp(c, cp, s1)) != SH_OK)
            return st;
        return finish(c);
    case K_IDEO:
        if ((st = finish(c)) != SH_OK)
            return st;
        start(c, s0);
        c->ideo = c->nondigit = 1;
        break;
    case K_MARK:
        if (!c->active)
            start(c, s0);
        c->nondigit = 1;
        break;
    default: /* K_LETTER, K_DIGIT */
        if (c->active && c->ideo && (st = finish(c)) != SH_OK)
            return st;
        if (!c->active)
            start(c, s0);
        if (k == K_LETTER) {
            c->nondigit = 1;
            if (c->flags & SH_CANON_LOWER)
                cp = cp < 0x80 ? c->low[cp] : utf8proc_tolower(cp);
        }
        break;
    }
    return append_cp(c, cp, s1);
}

/* Decode the UTF-8 sequence at p (avail >= 1 bytes, p[0] >= 0x80). Returns its
 * length, or 0 if p[0] does not start a valid, complete, shortest-form
 * encoding of a scalar value. */
static size_t utf8_decode(const unsigned char *p, size_t avail, utf8proc_int32_t *cp)
{
    unsigned b0 = p[0], lo = 0x80, hi = 0xBF;
    if (b0 < 0xC2 || b0 > 0xF4)
        return 0;
    if (b0 < 0xE0) {
        if (avail < 2 || (p[1] & 0xC0) != 0x80)
            return 0;
        *cp = (utf8proc_int32_t)(((b0 & 0x1Fu) << 6) | (p[1] & 0x3Fu));
        return 2;
    }
    if (b0 < 0xF0) {
        if (b0 == 0xE0)
            lo = 0xA0;      /* overlong */
        else if (b0 == 0xED)
            hi = 0x9F;      /* surrogates */
        if (avail < 3 || p[1] < lo || p[1] > hi || (p[2] & 0xC0) != 0x80)
            return 0;
        *cp = (utf8proc_int32_t)(((b0 & 0x0Fu) << 12) | ((p[1] & 0x3Fu) << 6) | (p[2] & 0x3Fu));
        return 3;
    }
    if (b0 == 0xF0)
        lo = 0x90;          /* overlong */
    else if (b0 == 0xF4)
        hi = 0x8F;          /* above U+10FFFF */
    if (avail < 4 || p[1] < lo || p[1] > hi || (p[2] & 0xC0) != 0x80 || (p[3] & 0xC0) != 0x80)
        return 0;
    *cp = (utf8proc_int32_t)(((b0 & 0x07u) << 18) | ((p[1] & 0x3Fu) << 12) |
                             ((p[2] & 0x3Fu) << 6) | (p[3] & 0x3Fu));
    return 4;
}

size_t sh_utf8_seq(const char *p, size_t avail)
{
    utf8proc_int32_t cp;
    return avail ? utf8_decode((const unsigned char *)p, avail, &cp) : 0;
}

sh_status sh_utf8_check(const char *in, size_t n, sh_error *err)
{
    const unsigned char *p = (const unsigned char *)in;
    size_t i = 0;
    while (i < n) {
        utf8proc_int32_t cp;
        size_t len;
        /* ASCII a word at a time: no byte with its top bit set */
        while (i + 8 <= n) {
            uint64_t w;
            memcpy(&w, p + i, 8);
            if (w & 0x8080808080808080ULL) break;
            i += 8;
        }
        if (i >= n) break;
        if (p[i] < 0x80) { i++; continue; }
        if ((len = utf8_decode(p + i, n - i, &cp)) == 0)
            return sh_error_set(err, SH_EUTF8, i, "invalid UTF-8 at byte %zu (0x%02x)", i, p[i]);
        i += len;
    }
    return SH_OK;
}

static int is_alpha(unsigned char b)
{
    return byte_class[b] == C_L;
}

static int is_alnum(unsigned char b)
{
    return byte_class[b] <= C_L;
}

static int hex_value(unsigned char b)
{
    if (b >= '0' && b <= '9')
        return b - '0';
    b = ascii_lower[b];
    if (b >= 'a' && b <= 'f')
        return b - 'a' + 10;
    return -1;
}

static int entity_cmp(const void *key, const void *elem)
{
    return strcmp(key, ((const struct entity *)elem)->name);
}

/* A character reference at p[i] == '&'. Returns 1 and sets *cp and *next (the
 * byte after it) if it is one, 0 if the '&' is literal text. */
static int html_entity(const unsigned char *p, size_t i, size_t end,
                       utf8proc_int32_t *cp, size_t *next)
{
    static const struct { char name[5]; unsigned short cp; } legacy[] = {
        {"amp", '&'}, {"lt", '<'}, {"gt", '>'}, {"quot", '"'},
        {"nbsp", 0xA0}, {"copy", 0xA9}, {"reg", 0xAE}
    };
    size_t j = i + 1, k;
    char name[9];
    if (j >= end)
        return 0;
    if (p[j] == '#') {
        uint32_t v = 0;
        int any = 0, over = 0, h;
        j++;
        if (j < end && (p[j] == 'x' || p[j] == 'X')) {
            for (j++; j < end && (h = hex_value(p[j])) >= 0; j++, any = 1) {
                if (v > 0x10FFFF)
                    over = 1;
                else
                    v = v * 16 + (uint32_t)h;
            }
        } else {
            for (; j < end && byte_class[p[j]] == C_D; j++, any = 1) {
                if (v > 0x10FFFF)
                    over = 1;
                else
                    v = v * 10 + (uint32_t)(p[j] - '0');
            }
        }
        if (!any)
            return 0;
        if (j < end && p[j] == ';')
            j++;
        if (over || v == 0 || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF))
            v = 0xFFFD;
        *cp = (utf8proc_int32_t)v;
        *next = j;
        return 1;
    }
    for (k = j; k < end && k - j < sizeof name && is_alnum(p[k]); k++)
        ;
    if (k > j && k - j < sizeof name && k < end && p[k] == ';') {
        const struct entity *e;
        memcpy(name, p + j, k - j);
        name[k - j] = '\0';
        e = bsearch(name, entities, sizeof entities / sizeof *entities, sizeof *entities,
                    entity_cmp);
        if (e) {
            *cp = e->cp;
            *next = k + 1;
            return 1;
        }
        return 0;
    }
    for (k = j; k < end && k - j < 5 && is_alpha(p[k]); k++)
        ;
    if (k < end && is_alpha(p[k]))
        return 0;
    for (size_t e = 0; e < sizeof legacy / sizeof *legacy; e++) {
        if (strlen(legacy[e].name) == k - j && memcmp(legacy[e].name, p + j, k - j) == 0) {
            *cp = legacy[e].cp;
            *next = k;
            return 1;
        }
    }
    return 0;
}

/* First occurrence of the m-byte pattern pat in p[from, end), or end. Linear
 * for our short patterns whose first byte does not recur in them. */
static size_t find(const unsigned char *p, size_t from, size_t end, const char *pat, size_t m)
{
    while (from < end && end - from >= m) {
        const unsigned char *q = memchr(p + from, (unsigned char)pat[0], end - from - m + 1);
        if (!q)
            break;
        from = (size_t)(q - p);
        if (memcmp(q, pat, m) == 0)
            return from;
        from++;
    }
    return end;
}

/* The '>' that ends a tag whose attributes start at p[j]: quotes open a value
 * only right after '=' (spaces between allowed). Returns end if there is none.
 * The portable reference, one byte at a time. */
static size_t tag_end_bytes(const unsigned char *p, size_t j, size_t end)
{
    int after_eq = 0;
    for (; j < end; j++) {
        unsigned char b = p[j];
        if (b == '>')
            return j;
        if ((b == '"' || b == '\'') && after_eq) {
            const unsigned char *q = memchr(p + j + 1, b, end - j - 1);
            if (!q)
                return end;
            j = (size_t)(q - p);
            after_eq = 0;
        } else if (b == '=') {
            after_eq = 1;
        } else if (byte_class[b] != C_S) {
            after_eq = 0;
        }
    }
    return end;
}

#if CANON_BLOCKS
/* tag_end_bytes 64 bytes at a time: a mask of the bytes that matter ('>',
 * quotes, '='), one step per such byte. A quote opens a value where the
 * last '=' before it is followed by separators only (what after_eq tracks
 * byte by byte); the value ends at the next quote of its kind, in the same
 * mask or found by memchr. */
#define TAG_END_FN(NAME, TARGET, SPECIALS) \
TARGET static size_t NAME(const unsigned char *p, size_t j, size_t end) \
{ \
    size_t eq = SIZE_MAX; /* the last '=' since the last quote */ \
    while (end - j >= 64) { \
        uint64_t m = SPECIALS(p + j); \
        while (m) { \
            const size_t k = j + (size_t)__builtin_ctzll(m); \
            const unsigned char b = p[k]; \
            size_t g; \
            m &= m - 1; \
            if (b == '>') \
                return k; \
            if (b == '=') { \
                eq = k; \
                continue; \
            } \
            if (eq == SIZE_MAX) \
                continue; \
            for (g = eq + 1; g < k && byte_class[p[g]] == C_S; g++) \
                ; \
            eq = SIZE_MAX; \
            if (g < k) \
                continue; \
            /* a quoted value: to the next quote of its kind */ \
            while (m && p[j + (size_t)__builtin_ctzll(m)] != b) \
                m &= m - 1; \
            if (!m) { \
                const unsigned char *q = memchr(p + j + 64, b, end - j - 64); \
                if (!q) \
                    return end; \
                j = (size_t)(q - p) + 1 - 64; \
                break; \
            } \
            m &= m - 1; \
        } \
        j += 64; \
    } \
    /* the last bytes: the reference, with the state carried over */ \
    if (eq != SIZE_MAX) { \
        size_t g; \
        for (g = eq + 1; g < j && byte_class[p[g]] == C_S; g++) \
            ; \
        if (g == j) \
            return tag_end_bytes(p, eq, end); \
    } \
    return tag_end_bytes(p, j, end); \
}

__attribute__((target("sse2")))
CANON_HOT uint64_t specials_sse2(const unsigned char *q)
{
    uint64_t m = 0;
    unsigned w;
    for (w = 0; w < 4; w++) {
        __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(q + 16 * w));
        __m128i s = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('>')), _mm_cmpeq_epi8(v, _mm_set1_epi8('='))),
                                 _mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('"')), _mm_cmpeq_epi8(v, _mm_set1_epi8('\''))));
        m |= (uint64_t)(unsigned)_mm_movemask_epi8(s) << (16 * w);
    }
    return m;
}

__attribute__((target("avx2")))
CANON_HOT uint64_t specials_avx2(const unsigned char *q)
{
    uint64_t m = 0;
    unsigned w;
    for (w = 0; w < 2; w++) {
        __m256i v = _mm256_loadu_si256((const __m256i *)(const void *)(q + 32 * w));
        __m256i s = _mm256_or_si256(_mm256_or_si256(_mm256_cmpeq_epi8(v, _mm256_set1_epi8('>')), _mm256_cmpeq_epi8(v, _mm256_set1_epi8('='))),
                                    _mm256_or_si256(_mm256_cmpeq_epi8(v, _mm256_set1_epi8('"')), _mm256_cmpeq_epi8(v, _mm256_set1_epi8('\''))));
        m |= (uint64_t)(uint32_t)_mm256_movemask_epi8(s) << (32 * w);
    }
    return m;
}

__attribute__((target("avx512f,avx512bw")))
CANON_HOT uint64_t specials_avx512(const unsigned char *q)
{
    const __m512i v = _mm512_loadu_si512((const void *)q);
    return (uint64_t)(_mm512_cmpeq_epi8_mask(v, _mm512_set1_epi8('>')) | _mm512_cmpeq_epi8_mask(v, _mm512_set1_epi8('=')) |
                      _mm512_cmpeq_epi8_mask(v, _mm512_set1_epi8('"')) | _mm512_cmpeq_epi8_mask(v, _mm512_set1_epi8('\'')));
}

TAG_END_FN(tag_end_sse2, __attribute__((target("sse2"))), specials_sse2)
TAG_END_FN(tag_end_avx2, __attribute__((target("avx2"))), specials_avx2)
TAG_END_FN(tag_end_avx512, __attribute__((target("avx512f,avx512bw"))), specials_avx512)
#endif

CANON_HOT size_t tag_end(sh_simd level, const unsigned char *p, size_t j, size_t end)
{
    if (j < end && p[j] == '>')
        return j; /* no attributes: most tags */
#if CANON_BLOCKS
    if (level >= SH_SIMD_AVX512)
        return tag_end_avx512(p, j, end);
    if (level >= SH_SIMD_AVX2)
        return tag_end_avx2(p, j, end);
    if (level >= SH_SIMD_SSE2)
        return tag_end_sse2(p, j, end);
#endif
    (void)level;
    return tag_end_bytes(p, j, end);
}

static int tag_name_end(unsigned char b)
{
    return b == '>' || b == '/' || byte_class[b] == C_S;
}

/* The name of a tag at p[j]: returns its end (the first '>', '/' or
 * separator byte, or end) and sets *len to its length and *key to its
 * first 8 bytes lowercased (ASCII), the first in the lowest byte. */
static size_t tag_name(const unsigned char *p, size_t j, size_t end, uint64_t *key, size_t *len)
{
    size_t k;
    *key = 0;
    for (k = 0; j < end && !tag_name_end(p[j]); j++, k++)
        if (k < 8)
            *key |= (uint64_t)ascii_lower[p[j]] << (8 * k);
    *len = k;
    return j;
}

#if CANON_BLOCKS
/* tag_name 16 bytes at a time where 16 are there: the name ends at the first
 * '>', '/' or separator (bytes up to 0x20, and 0x7f: byte_class's C_S), and
 * its key is its first 8 bytes each with 0x20 set (letters lowercased;
 * other bytes may change, but the key still equals a table name's exactly
 * when tag_name's does), the bytes past its end cleared. No branch per byte: the name's length follows the page
 * and would mispredict. */
__attribute__((target("sse2")))
CANON_HOT size_t tag_name_sse2(const unsigned char *p, size_t j, size_t end, uint64_t *key, size_t *len)
{
    const __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(p + j));
    const __m128i sep = _mm_or_si128(_mm_cmpeq_epi8(_mm_min_epu8(v, _mm_set1_epi8(0x20)), v),
                                     _mm_cmpeq_epi8(v, _mm_set1_epi8(0x7f)));
    const __m128i stop = _mm_or_si128(sep, _mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('>')),
                                                        _mm_cmpeq_epi8(v, _mm_set1_epi8('/'))));
    /* every byte with 0x20 set: a byte so set is an ASCII lowercase letter
     * if and only if it was a letter of either case, so the key is a table
     * name's (lowercase letters) exactly when the name lowercased is */
    const uint64_t low = (uint64_t)_mm_cvtsi128_si64(v) | UINT64_C(0x2020202020202020);
    /* the first 8 bytes' stop bytes as 0xff: the lowest set bit is bit 8k
     * of the name's end k (< 8), so one less is the key's mask (all ones
     * when the name has 8 bytes or more): the key without waiting for the
     * movemask and its count, which the kind lookup would */
    const uint64_t s8 = (uint64_t)_mm_cvtsi128_si64(stop);
    const unsigned m = (unsigned)_mm_movemask_epi8(stop);
    size_t k;
    if (m == 0) { /* 16 bytes or more: too long for any key */
        size_t k2;
        *key = low;
        for (k2 = j + 16; k2 < end && !tag_name_end(p[k2]); k2++)
            ;
        *len = k2 - j;
        return k2;
    }
    k = (size_t)__builtin_ctz(m);
    *key = low & ((s8 & (0 - s8)) - 1);
    *len = k;
    return j + k;
}
#endif

/* The close tag </name> (ASCII case-insensitive, name lowercase) at or after
 * from: returns the byte after its '>', or end. */
static size_t skip_raw_text(const unsigned char *p, size_t from, size_t end, const char *name)
{
    size_t m = strlen(name);
    for (;;) {
        const unsigned char *q;
        size_t k, j;
        if (from >= end || !(q = memchr(p + from, '<', end - from)))
            return end;
        j = (size_t)(q - p);
        from = j + 1;
        if (end - j < m + 2 || p[j + 1] != '/')
            continue;
        for (k = 0; k < m && ascii_lower[p[j + 2 + k]] == (unsigned char)name[k]; k++)
            ;
        if (k < m || (j + 2 + m < end && !tag_name_end(p[j + 2 + m])))
            continue;
        q = memchr(p + j + 2 + m, '>', end - (j + 2 + m));
        return q ? (size_t)(q - p) + 1 : end;
    }
}

/* What the '<' at p[i] (HTML mode) starts, and *next, the byte after it:
 *   MK_TEXT   not markup: the '<' is text (*next = i)
 *   MK_KEEPS  a comment, <!...>, <?...?> or an inline tag: does not end a word
 *   MK_ENDS   any other tag (script and style with their contents): ends a word
 *   MK_CDATA  <![CDATA[...]]>: its contents [i + 9, *cdata_end) are text
 * The one place markup is parsed, for the general scanner and the block
 * scanners alike. */
enum { MK_TEXT, MK_KEEPS, MK_ENDS, MK_CDATA }; /* MK_ENDS = MK_KEEPS + 1: tag_in_block */

/* The tag at p[i] == '<' whose p[i + 1] is '/' or a letter: MK_KEEPS or
 * MK_ENDS, and *next. Inlined into the block scanners (canon_blocks.h), which
 * meet most tags here, without markup()'s other cases. The inline kind is
 * looked up without a branch on the hit: inline and other tags alternate in
 * a page. */
CANON_HOT int markup_tag(sh_simd level, const unsigned char *p, size_t i, size_t end, size_t *next)
{
    size_t j = i + 1, k;
    uint64_t key;
    int closing = 0, kind;
    const struct tag_slot *slot;

    if (p[j] == '/') {
        closing = 1;
        j++;
    }
#if CANON_BLOCKS
    if (level >= SH_SIMD_SSE2 && end - j >= 16)
        j = tag_name_sse2(p, j, end, &key, &k);
    else
#endif
        j = tag_name(p, j, end, &key, &k);
    slot = &tag_slots[TAG_HASH(key)];
    kind = (int)(slot->kind & (unsigned)-(int)((slot->key == key) & (k - 1 < 8)));
    j = tag_end(level, p, j, end);
    *next = j < end ? j + 1 : end;
    if (kind >= TAG_SCRIPT && !closing && *next < end)
        *next = skip_raw_text(p, *next, end, kind == TAG_SCRIPT ? "script" : "style");
    return kind == TAG_INLINE ? MK_KEEPS : MK_ENDS;
}

#if CANON_BLOCKS
/* What the block scanner knows of a 64-byte block's tags, from masks (bit k
 * for the block's byte k), so that most tags take no scan of their own: a
 * page's tags are most of its bytes (two thirds of the benchmark corpus's),
 * and their lengths, closing slashes and attributes follow the page, so a
 * scan per tag mispredicts. */
typedef struct tag_masks {
    uint64_t gt;    /* '>' */
    uint64_t par;   /* the parity of the '"'s at or before each byte */
    uint64_t bad0;  /* the quotes tag_end_bytes would read otherwise, by */
    uint64_t bad1;  /* the parity at the tag's '<' (see tag_masks_quotes) */
} tag_masks;

/* The quote parts of the masks from those of '"', '\'' and '=' and the
 * '"'s' prefix XOR. With the '"'s counted from a tag's '<', its quoted
 * values are the odd stretches; when every '"' that opens one follows '='
 * right away and no '\'' stands outside one, they are what tag_end_bytes
 * reads (a quote opens a value right after '='; it reads to the next quote
 * of its kind). bad<s> marks, for the parity s at the '<', the quotes that
 * break this: an opening '"' not right after '=', a '\'' outside a value. */
CANON_HOT void tag_masks_quotes(tag_masks *m, uint64_t dq, uint64_t sq, uint64_t eq, uint64_t par)
{
    const uint64_t after_eq = eq << 1;
    m->par = par;
    m->bad0 = (dq & par & ~after_eq) | (sq & ~par);
    m->bad1 = (dq & ~par & ~after_eq) | (sq & par);
}

__attribute__((target("sse2")))
CANON_HOT void tag_masks_sse2(const unsigned char *q, tag_masks *m)
{
    uint64_t gt = 0, dq = 0, sq = 0, eq = 0, par;
    unsigned w;
    for (w = 0; w < 4; w++) {
        const __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(q + 16 * w));
        gt |= (uint64_t)(unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8('>'))) << (16 * w);
        dq |= (uint64_t)(unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8('"'))) << (16 * w);
        sq |= (uint64_t)(unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8('\''))) << (16 * w);
        eq |= (uint64_t)(unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8('='))) << (16 * w);
    }
    m->gt = gt;
    /* the prefix XOR without a carry-less multiply (not in SSE2) */
    par = dq ^ (dq << 1);
    par ^= par << 2;
    par ^= par << 4;
    par ^= par << 8;
    par ^= par << 16;
    par ^= par << 32;
    tag_masks_quotes(m, dq, sq, eq, par);
}

/* Also the AVX-512 level's (it has these instructions): one copy. */
__attribute__((target("avx2,pclmul")))
CANON_HOT void tag_masks_avx2(const unsigned char *q, tag_masks *m)
{
    uint64_t gt = 0, dq = 0, sq = 0, eq = 0;
    unsigned w;
    for (w = 0; w < 2; w++) {
        const __m256i v = _mm256_loadu_si256((const __m256i *)(const void *)(q + 32 * w));
        gt |= (uint64_t)(uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(v, _mm256_set1_epi8('>'))) << (32 * w);
        dq |= (uint64_t)(uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(v, _mm256_set1_epi8('"'))) << (32 * w);
        sq |= (uint64_t)(uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(v, _mm256_set1_epi8('\''))) << (32 * w);
        eq |= (uint64_t)(uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(v, _mm256_set1_epi8('='))) << (32 * w);
    }
    m->gt = gt;
    /* the prefix XOR: dq times all ones, carry-less */
    tag_masks_quotes(m, dq, sq, eq,
                     (uint64_t)_mm_cvtsi128_si64(_mm_clmulepi64_si128(_mm_cvtsi64_si128((long long)dq),
                                                                      _mm_set1_epi8((char)0xff), 0)));
}

/* p[j] (j <= end) is the '<' of a tag: a letter or '/' follows it before end
 * (markup() takes anything else after a '<' for text or another kind of
 * markup). The block scanners' test before tag_in_block. */
CANON_HOT int opens_tag(const unsigned char *p, size_t j, size_t end)
{
    return end - j > 1 && p[j] == '<' && (p[j + 1] == '/' || is_alpha(p[j + 1]));
}

/* markup_tag for the tag at p[i + x] == '<' (p[i + x + 1] '/' or a letter)
 * from its block's masks m and word mask A (its bytes from x on as
 * classified), when its '>' is in the block, its name ends at the first
 * byte that is no ASCII letter or digit and its quotes are what
 * tag_end_bytes reads (tag_masks_quotes): the same kind (MK_KEEPS or
 * MK_ENDS) and *next; -1 for markup_tag to find them (a tag that leaves the
 * block, other names or quotes, script and style, a name within 8 bytes of
 * the end). The '>' comes from the masks alone, so the scan's next byte
 * does not wait for the name and its kind.
 *
 * adj: a word runs up to the '<'; X: the block's bytes the masks leave
 * undecided (the '<'s, '&'s and bytes >= 0x80 in HTML). Where the kind
 * cannot change what the scanner does, it is not looked up and MK_ENDS is
 * returned for an inline tag too: after no word (the scanner only skips the
 * tag), or after a word when the byte after the '>' is in the block and in
 * neither A nor X: an ASCII separator or punctuation, or the first byte of
 * a CJK ideograph that the block's masks made a token of its own (I, in
 * canon_blocks.h): an inline tag ends the word there as well
 * (keeps_then_ends; test_simd's inline_tags_after_words_tokenize_alike). Only an
 * opening script or style tag opens raw text: its key is compared with
 * theirs (no branch on the name's first byte: <span>, <strong> and <sup>
 * are common) and markup_tag skips the raw text (-1). The lookup (a hash,
 * a table load, a compare) is most of the cost of a tag found here, and
 * most tags follow no word. */
CANON_HOT int tag_in_block(const tag_masks *m, uint64_t A, const unsigned char *p, size_t i, unsigned x,
                           size_t end, int adj, uint64_t X, size_t *next)
{
    /* all ones if the '"'s before the '<' are odd in number: the parity from
     * the '<' on is then par's complement */
    const uint64_t odd = 0 - ((m->par >> x) & 1);
    const uint64_t gts = m->gt & ~(m->par ^ odd) & (~(uint64_t)0 << x);
    unsigned g, start, stop, len;
    uint64_t key;
    const struct tag_slot *slot;
    int kind;
    if (!gts)
        return -1;
    g = (unsigned)__builtin_ctzll(gts);
    start = x + 1 + (p[i + x + 1] == '/'); /* <= g: a '>' right after "</" is past it */
    /* the name's end if that byte is one of tag_name_end's (so no quote
     * is in the name); the '>' at g at the latest */
    stop = (unsigned)__builtin_ctzll(~A & (~(uint64_t)0 << start));
    if ((((m->bad0 & ~odd) | (m->bad1 & odd)) & (((uint64_t)1 << g) - 1) & (~(uint64_t)1 << x))
        | !tag_name_end(p[i + stop]) | (end - (i + start) < 8))
        return -1;
    len = stop - start;
    key = (sh_load_le64(p + i + start) | UINT64_C(0x2020202020202020))
        & (len >= 8 ? ~(uint64_t)0 : ((uint64_t)1 << (8 * len)) - 1); /* as tag_name_sse2's */
    /* the byte after the '>' in the buffer (padding is not) and the block */
    if (!adj || (g < 63 && i + g + 1 < end && !(((A | X) >> (g + 1)) & 1))) {
        if (p[i + x + 1] != '/' && ((key == UINT64_C(0x747069726373)) | (key == UINT64_C(0x656c797473))))
            return -1; /* <script>, <style>: raw text follows (their table keys) */
        *next = i + g + 1;
        return MK_ENDS;
    }
    slot = &tag_slots[TAG_HASH(key)];
    kind = (int)(slot->kind & (unsigned)-(int)((slot->key == key) & (len - 1 < 8)));
    if (kind >= TAG_SCRIPT && p[i + x + 1] != '/')
        return -1; /* raw text follows: markup_tag skips it */
    *next = i + g + 1;
    return MK_ENDS - (kind == TAG_INLINE);
}
#endif

static int markup(sh_simd level, const unsigned char *p, size_t i, size_t end, size_t *next, size_t *cdata_end)
{
    size_t j = i + 1;

    *next = i;
    if (j >= end)
        return MK_TEXT;
    if (p[j] == '!') {
        if (end - i >= 9 && memcmp(p + i, "<![CDATA[", 9) == 0) {
            size_t e = find(p, i + 9, end, "]]>", 3);
            *cdata_end = e;
            *next = e < end ? e + 3 : end;
            return MK_CDATA;
        }
        if (end - i >= 4 && p[i + 2] == '-' && p[i + 3] == '-') {
            size_t e = find(p, i + 2, end, "-->", 3);
            *next = e < end ? e + 3 : end;
        } else {
            const unsigned char *q = memchr(p + j, '>', end - j);
            *next = q ? (size_t)(q - p) + 1 : end;
        }
        return MK_KEEPS;
    }
    if (p[j] == '?') {
        size_t e = find(p, j + 1, end, "?>", 2);
        *next = e < end ? e + 2 : end;
        return MK_KEEPS;
    }
    if (p[j] != '/' && !is_alpha(p[j]))
        return MK_TEXT;
    return markup_tag(level, p, i, end, next);
}

static sh_status scan(canon *c, size_t i, size_t end, int html);

/* Markup at p[i] == '<' (HTML mode), through markup(). Sets *next past it;
 * *next == i means the '<' is text. */
static sh_status html_markup(canon *c, size_t i, size_t end, size_t *next)
{
    size_t cdata_end = 0;
    switch (markup(c->level, c->p, i, end, next, &cdata_end)) {
    case MK_CDATA:
        return scan(c, i + 9, cdata_end, 0);
    case MK_ENDS:
        return finish(c);
    default:
        return SH_OK;
    }
}

/* Copy the run of ASCII letters and digits at p[i, end) (p[i] is one) to d,
 * lowercased through low; returns the end of the run and ORs 1 into *letters
 * if it had a letter. d must have room for end - i bytes. */
CANON_HOT size_t ascii_run(const unsigned char *p, size_t i, size_t end, unsigned char *d,
                        const unsigned char *low, unsigned *letters)
{
    unsigned seen = 0, b, k;
    while (i < end && (k = byte_class[b = p[i]]) <= C_L) {
        *d++ = low[b];
        seen |= k;
        i++;
    }
    *letters |= seen;
    return i;
}

#if CANON_BLOCKS
/* classify64: for the 64 bytes at q, bit k of *A is set if q[k] is an ASCII
 * letter or digit, of *L if it is a letter, of *X if the block scanner must
 * leave it to the general one (a byte >= 0x80; with html '<' and '&'); d
 * receives the 64 bytes, lowercased if lower. Letters are found as
 * (b | 0x20) - 'a' < 26 and digits as b - '0' < 10, unsigned, so no byte
 * >= 0x80 passes either test. */
__attribute__((target("sse2")))
CANON_HOT void classify_sse2(const unsigned char *q, unsigned char *d, int html, int lower,
                             uint64_t *A, uint64_t *L, uint64_t *X)
{
    uint64_t a = 0, l = 0, x = 0;
    unsigned w;
    const __m128i ca = _mm_set1_epi8('a'), c0 = _mm_set1_epi8('0');
    const __m128i bias = _mm_set1_epi8((char)0x80), sp = _mm_set1_epi8(0x20);
    const __m128i lim26 = _mm_set1_epi8((char)(0x80 + 26)), lim10 = _mm_set1_epi8((char)(0x80 + 10));
    const __m128i lt = _mm_set1_epi8('<'), amp = _mm_set1_epi8('&');
    const __m128i lowmask = lower ? sp : _mm_setzero_si128();
    for (w = 0; w < 4; w++) {
        __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(q + 16 * w));
        /* unsigned "v - lo < n" as a signed compare after flipping the top bit */
        __m128i let = _mm_cmplt_epi8(_mm_xor_si128(_mm_sub_epi8(_mm_or_si128(v, sp), ca), bias), lim26);
        __m128i dig = _mm_cmplt_epi8(_mm_xor_si128(_mm_sub_epi8(v, c0), bias), lim10);
        unsigned hi = (unsigned)_mm_movemask_epi8(v);
        a |= (uint64_t)(unsigned)_mm_movemask_epi8(_mm_or_si128(let, dig)) << (16 * w);
        l |= (uint64_t)(unsigned)_mm_movemask_epi8(let) << (16 * w);
        if (html)
            hi |= (unsigned)_mm_movemask_epi8(_mm_or_si128(_mm_cmpeq_epi8(v, lt), _mm_cmpeq_epi8(v, amp)));
        x |= (uint64_t)hi << (16 * w);
        _mm_storeu_si128((__m128i *)(void *)(d + 16 * w), _mm_or_si128(v, _mm_and_si128(let, lowmask)));
    }
    *A = a;
    *L = l;
    *X = x;
}

__attribute__((target("avx2,bmi,bmi2")))
CANON_HOT void classify_avx2(const unsigned char *q, unsigned char *d, int html, int lower,
                             uint64_t *A, uint64_t *L, uint64_t *X)
{
    uint64_t a = 0, l = 0, x = 0;
    unsigned w;
    const __m256i ca = _mm256_set1_epi8('a'), c0 = _mm256_set1_epi8('0');
    const __m256i bias = _mm256_set1_epi8((char)0x80), sp = _mm256_set1_epi8(0x20);
    const __m256i lim26 = _mm256_set1_epi8((char)(26 - 128)), lim10 = _mm256_set1_epi8((char)(10 - 128));
    const __m256i lt = _mm256_set1_epi8('<'), amp = _mm256_set1_epi8('&');
    const __m256i lowmask = lower ? sp : _mm256_setzero_si256();
    for (w = 0; w < 2; w++) {
        __m256i v = _mm256_loadu_si256((const __m256i *)(const void *)(q + 32 * w));
        /* signed "(v - lo) ^ 0x80 < n - 128": unsigned "v - lo < n" */
        __m256i let = _mm256_cmpgt_epi8(lim26, _mm256_xor_si256(_mm256_sub_epi8(_mm256_or_si256(v, sp), ca), bias));
        __m256i dig = _mm256_cmpgt_epi8(lim10, _mm256_xor_si256(_mm256_sub_epi8(v, c0), bias));
        uint64_t hi = (uint32_t)_mm256_movemask_epi8(v);
        a |= (uint64_t)(uint32_t)_mm256_movemask_epi8(_mm256_or_si256(let, dig)) << (32 * w);
        l |= (uint64_t)(uint32_t)_mm256_movemask_epi8(let) << (32 * w);
        if (html)
            hi |= (uint32_t)_mm256_movemask_epi8(_mm256_or_si256(_mm256_cmpeq_epi8(v, lt), _mm256_cmpeq_epi8(v, amp)));
        x |= hi << (32 * w);
        _mm256_storeu_si256((__m256i *)(void *)(d + 32 * w), _mm256_or_si256(v, _mm256_and_si256(let, lowmask)));
    }
    *A = a;
    *L = l;
    *X = x;
}

/* classify64 in one 64-byte register: its one store of the image is what
 * words_vbmi loads back whole (two 32-byte stores would not forward). */
__attribute__((target("avx512f,avx512bw,avx512vl,bmi,bmi2")))
CANON_HOT void classify_avx512(const unsigned char *q, unsigned char *d, int html, int lower,
                               uint64_t *A, uint64_t *L, uint64_t *X)
{
    const __m512i sp = _mm512_set1_epi8(0x20);
    const __m512i v = _mm512_loadu_si512((const void *)q);
    const __mmask64 let = _mm512_cmplt_epu8_mask(_mm512_sub_epi8(_mm512_or_si512(v, sp), _mm512_set1_epi8('a')),
                                                 _mm512_set1_epi8(26));
    const __mmask64 dig = _mm512_cmplt_epu8_mask(_mm512_sub_epi8(v, _mm512_set1_epi8('0')), _mm512_set1_epi8(10));
    __mmask64 x = _mm512_movepi8_mask(v);
    if (html)
        x |= _mm512_cmpeq_epi8_mask(v, _mm512_set1_epi8('<')) | _mm512_cmpeq_epi8_mask(v, _mm512_set1_epi8('&'));
    _mm512_storeu_si512((void *)d, lower ? _mm512_or_si512(v, _mm512_maskz_mov_epi8(let, sp)) : v);
    *A = (uint64_t)(let | dig);
    *L = (uint64_t)let;
    *X = (uint64_t)x;
}

/* range64: for the 64 bytes at q, bit k set if lo <= q[k] < lo + n
 * (1 <= n <= 128, unsigned, as classify64's tests): the masks the block
 * scanner reads UTF-8 sequences from (canon_blocks.h: the ideographs, I). */
__attribute__((target("sse2")))
CANON_HOT uint64_t range_sse2(const unsigned char *q, unsigned lo, unsigned n)
{
    /* (b - lo) ^ 0x80 = b - (lo ^ 0x80): signed "< n - 128" is unsigned "b - lo < n" */
    const __m128i bias = _mm_set1_epi8((char)(lo ^ 0x80)), lim = _mm_set1_epi8((char)((int)n - 128));
    uint64_t m = 0;
    unsigned w;
    for (w = 0; w < 4; w++) {
        const __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(q + 16 * w));
        m |= (uint64_t)(unsigned)_mm_movemask_epi8(_mm_cmplt_epi8(_mm_sub_epi8(v, bias), lim)) << (16 * w);
    }
    return m;
}

__attribute__((target("avx2,bmi,bmi2")))
CANON_HOT uint64_t range_avx2(const unsigned char *q, unsigned lo, unsigned n)
{
    const __m256i bias = _mm256_set1_epi8((char)(lo ^ 0x80)), lim = _mm256_set1_epi8((char)((int)n - 128));
    const __m256i v0 = _mm256_loadu_si256((const __m256i *)(const void *)q);
    const __m256i v1 = _mm256_loadu_si256((const __m256i *)(const void *)(q + 32));
    return (uint64_t)(uint32_t)_mm256_movemask_epi8(_mm256_cmpgt_epi8(lim, _mm256_sub_epi8(v0, bias)))
         | (uint64_t)(uint32_t)_mm256_movemask_epi8(_mm256_cmpgt_epi8(lim, _mm256_sub_epi8(v1, bias))) << 32;
}

/* What the block scanner can do with the byte at p[k] that its masks could
 * not decide (canon_blocks.h); what the general scanner would do with it
 * decides:
 *   STOP_SEP    ends a word and is no token: a separator or punctuation code
 *               point beyond ASCII, '<' as text, an entity for a separator
 *               ("&nbsp;", "&amp;", "&mdash;"), or '&' as text
 *   STOP_ENDS   markup that ends a word (MK_ENDS)
 *   STOP_KEEPS  markup that does not (MK_KEEPS): a separator only where no
 *               word runs into it
 *   STOP_IDEO   a letter of a script written without spaces (K_IDEO) that no
 *               combining mark follows: ends a word and is a token of its own,
 *               its bytes as they are (without SH_CANON_FOLD, which folds it)
 *   STOP_OTHER  anything else: the general scanner's
 * *next: the byte after it. Only called without SH_CANON_PUNCT. */
enum { STOP_SEP, STOP_ENDS, STOP_KEEPS, STOP_IDEO, STOP_OTHER };

static int stop_kind(canon *c, size_t k, size_t end, size_t *next)
{
    const unsigned char *p = c->p;
    utf8proc_int32_t cp;
    size_t len, cdata_end;
    int kc;
    if (p[k] >= 0x80) {
        if (!(len = utf8_decode(p + k, end - k, &cp)))
            return STOP_OTHER;
        *next = k + len;
    } else if (p[k] == '<') {
        switch (markup(c->level, p, k, end, next, &cdata_end)) {
        case MK_TEXT:
            *next = k + 1;
            return STOP_SEP;
        case MK_KEEPS:
            return STOP_KEEPS;
        case MK_ENDS:
            return STOP_ENDS;
        default:
            return STOP_OTHER;
        }
    } else { /* '&' */
        if (!html_entity(p, k, end, &cp, next)) {
            *next = k + 1;
            return STOP_SEP;
        }
    }
    kc = classify_seen(c, cp);
    if (kc == K_SEP || kc == K_PUNCT)
        return STOP_SEP;
    if (kc == K_IDEO && p[k] >= 0x80 && !(c->flags & SH_CANON_FOLD)) {
        /* the token ends here unless a combining mark follows (or may:
         * after an inline tag, or as an entity) */
        utf8proc_int32_t nx;
        if (*next == end)
            return end == c->len ? STOP_IDEO : STOP_OTHER; /* in CDATA, what follows "]]>" may continue it */
        if (p[*next] < 0x80 && !((c->flags & SH_CANON_HTML) && (p[*next] == '<' || p[*next] == '&')))
            return STOP_IDEO;
        if ((len = utf8_decode(p + *next, end - *next, &nx)) && classify_seen(c, nx) != K_MARK)
            return STOP_IDEO;
    }
    return STOP_OTHER;
}

/* Whether p[k, end) starts with a CJK unified ideograph of U+4E00..U+9FA5
 * (bytes E4 B8 80 .. E9 BE A5): letters (category Lo) of a script written
 * without spaces in every Unicode version, so K_IDEO without asking
 * utf8proc (test_simd checks every one against the portable level). */
CANON_HOT int cjk_at(const unsigned char *p, size_t k, size_t end)
{
    unsigned cp;
    if (end - k < 3 || p[k] - 0xE4u > 5u || (p[k + 1] & 0xC0) != 0x80 || (p[k + 2] & 0xC0) != 0x80)
        return 0;
    cp = ((p[k] & 0x0Fu) << 12) | ((p[k + 1] & 0x3Fu) << 6) | (p[k + 2] & 0x3Fu);
    return cp - 0x4E00u <= 0x9FA5u - 0x4E00u;
}

/* stop_kind for a byte >= 0x80 at p[k] that starts one of those
 * ideographs followed by what cannot be a combining mark (ASCII, or another
 * of them): STOP_IDEO, or STOP_OTHER where stop_kind says so; -1 where
 * only stop_kind can tell. */
CANON_HOT int ideo_fast(canon *c, size_t k, size_t end, size_t *next)
{
    const unsigned char *p = c->p;
    const size_t n = k + 3;
    if ((c->flags & SH_CANON_FOLD) || !cjk_at(p, k, end))
        return -1;
    *next = n;
    if (n == end)
        return end == c->len ? STOP_IDEO : STOP_OTHER; /* in CDATA, what follows "]]>" may continue it */
    if (p[n] < 0x80)
        return (c->flags & SH_CANON_HTML) && (p[n] == '<' || p[n] == '&') ? STOP_OTHER : STOP_IDEO;
    return cjk_at(p, n, end) ? STOP_IDEO : -1;
}

/* stop_kind for the '&' at p[k] (HTML) of the commonest character
 * references, which stand for ASCII punctuation: &lt; &gt; &amp; &quot;
 * and &#NN; (two decimal digits and ';') of a byte that is no letter or
 * digit. STOP_SEP and *next, as html_entity and classify give them; -1 for
 * any other (stop_kind's then). */
CANON_HOT int entity_fast(const unsigned char *p, size_t k, size_t end, size_t *next)
{
    uint64_t w;
    unsigned v;
    if (end - k < 8)
        return -1;
    w = sh_load_le64(p + k);
    if ((w & 0xFFFFFFFFu) == 0x3B746C26u || (w & 0xFFFFFFFFu) == 0x3B746726u) { /* "&lt;", "&gt;" */
        *next = k + 4;
        return STOP_SEP;
    }
    if ((w & UINT64_C(0xFFFFFFFFFF)) == UINT64_C(0x3B706D6126)) { /* "&amp;" */
        *next = k + 5;
        return STOP_SEP;
    }
    if ((w & UINT64_C(0xFFFFFFFFFFFF)) == UINT64_C(0x3B746F757126)) { /* "&quot;" */
        *next = k + 6;
        return STOP_SEP;
    }
    if ((w & 0xFFFFu) == 0x2326u && p[k + 2] - (unsigned)'0' < 10 && p[k + 3] - (unsigned)'0' < 10 && p[k + 4] == ';') {
        v = (p[k + 2] - (unsigned)'0') * 10 + (p[k + 3] - (unsigned)'0'); /* "&#NN;" */
        if (byte_class[v] > C_L) { /* v 0 is U+FFFD, a symbol: a separator too */
            *next = k + 5;
            return STOP_SEP;
        }
    }
    return -1;
}

/* 1 if what follows markup that keeps a word going, at p[j], ends the word
 * (canon_blocks.h): an ASCII separator or punctuation, or markup that ends
 * words or is text ('<' as text is punctuation), after any more markup that
 * keeps it going (at most 8 such, to bound the work). Only called without
 * SH_CANON_PUNCT, in HTML. */
static int keeps_then_ends(canon *c, size_t j, size_t end)
{
    const unsigned char *p = c->p;
    int hops;
    for (hops = 0; hops < 8 && j < end; hops++) {
        const unsigned k = byte_class[p[j]];
        size_t next, cdata_end;
        if (k == C_S || k == C_P)
            return 1;
        if (k != C_LT)
            return 0;
        switch (markup(c->level, p, j, end, &next, &cdata_end)) {
        case MK_TEXT:
        case MK_ENDS:
            return 1;
        case MK_KEEPS:
            j = next;
            break;
        default:
            return 0;
        }
    }
    return 0;
}

/* head16: the head of a token of len bytes at q (16 bytes readable) to d:
 * its first 16 bytes, zero-padded. The block scanner's tokens have 1 to
 * 64 bytes: the mask is the 16 bytes at head_window + 64 - len, with no
 * clamp of the length to 16. */
#define FF8 255, 255, 255, 255, 255, 255, 255, 255
static const unsigned char head_window[64 + 16] = { FF8, FF8, FF8, FF8, FF8, FF8, FF8, FF8 }; /* then zeros */
#undef FF8

#define HEAD16(d, q, len) _mm_storeu_si128((__m128i *)(void *)(d), \
    _mm_and_si128(_mm_loadu_si128((const __m128i *)(const void *)(q)), \
                  _mm_loadu_si128((const __m128i *)(const void *)(head_window + 64 - (len)))))

/* The tokens of the words of a block at once, on AVX-512 machines with VBMI
 * and VBMI2 (Ice Lake, Zen 4 and later), where the block scanner's
 * BLOCK_WORDS takes them one by one: S and E (the words' first bytes and
 * the bytes after them, n of each) pack the offsets 0..63 of the block into
 * bytes by one compress each, the lengths are their differences; the
 * records (src_off, src_len, off, len: i + start, length, twice) are
 * made eight at a time from those bytes widened to words, and the heads four
 * at a time by permuting the block's image (blk, 64 bytes readable) with
 * each token's offsets, the bytes past its length masked off. No branch
 * depends on a word: the records and heads past the n-th (up to the group's
 * end, within the 64 tokens of room the scanner keeps) are written and then
 * overwritten. */
#define VBMI_TARGET __attribute__((target("avx512f,avx512bw,avx512vl,avx512vbmi,avx512vbmi2,bmi,bmi2,pclmul")))
/* the records are four size_t words in this order (canon.h) */
typedef char token_is_four_words[(sizeof(sh_token) == 32 && offsetof(sh_token, src_off) == 0 &&
                                  offsetof(sh_token, src_len) == 8 && offsetof(sh_token, off) == 16 &&
                                  offsetof(sh_token, len) == 24) ? 1 : -1];
#define R16(x) x, x, x, x, x, x, x, x, x, x, x, x, x, x, x, x
#define J16 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15
static const unsigned char vbmi_iota[64] = { J16, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31,
                                             32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47,
                                             48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60, 61, 62, 63 };
static const unsigned char vbmi_lane[64] = { R16(0), R16(1), R16(2), R16(3) };
static const unsigned char vbmi_j16[64] = { J16, J16, J16, J16 };
#undef R16
#undef J16

VBMI_TARGET static inline void words_vbmi(sh_token *tok, unsigned char *hd, const unsigned char *blk, size_t i,
                                          uint64_t S, uint64_t E, unsigned n)
{
    const __m512i iota = _mm512_loadu_si512((const void *)vbmi_iota);
    const __m512i st = _mm512_maskz_compress_epi8(S, iota);
    const __m512i ln = _mm512_sub_epi8(_mm512_maskz_compress_epi8(E, iota), st);
    const __m512i img = _mm512_loadu_si512((const void *)blk), base = _mm512_set1_epi64((long long)i);
    /* lanes of tokens t, t + 1: (a_t, l_t, a_t, l_t, a_t+1, l_t+1, ...),
     * 0-7 picking from a, 8-15 from l */
    const __m512i p0 = _mm512_set_epi64(9, 1, 9, 1, 8, 0, 8, 0), two = _mm512_set1_epi64(2);
    const __m512i j16 = _mm512_loadu_si512((const void *)vbmi_j16), lane = _mm512_loadu_si512((const void *)vbmi_lane);
    unsigned g;
    for (g = 0; g < n; g += 8) {
        const __m512i down = _mm512_add_epi8(iota, _mm512_set1_epi8((char)g));
        const __m512i a = _mm512_add_epi64(
            _mm512_cvtepu8_epi64(_mm512_castsi512_si128(_mm512_permutexvar_epi8(down, st))), base);
        const __m512i l = _mm512_cvtepu8_epi64(_mm512_castsi512_si128(_mm512_permutexvar_epi8(down, ln)));
        const __m512i p1 = _mm512_add_epi64(p0, two), p2 = _mm512_add_epi64(p1, two), p3 = _mm512_add_epi64(p2, two);
        unsigned char *t = (unsigned char *)(void *)(tok + g);
        _mm512_storeu_si512((void *)t, _mm512_permutex2var_epi64(a, p0, l));
        _mm512_storeu_si512((void *)(t + 64), _mm512_permutex2var_epi64(a, p1, l));
        _mm512_storeu_si512((void *)(t + 128), _mm512_permutex2var_epi64(a, p2, l));
        _mm512_storeu_si512((void *)(t + 192), _mm512_permutex2var_epi64(a, p3, l));
    }
    for (g = 0; g < n; g += 4) {
        /* lane q: token g + q's offset and length in each byte */
        const __m512i sel = _mm512_add_epi8(lane, _mm512_set1_epi8((char)g));
        const __m512i at = _mm512_add_epi8(_mm512_permutexvar_epi8(sel, st), j16);
        const __mmask64 keep = _mm512_cmplt_epu8_mask(j16, _mm512_permutexvar_epi8(sel, ln));
        _mm512_storeu_si512((void *)(hd + (size_t)g * SH_TOKEN_HEAD), _mm512_maskz_permutexvar_epi8(keep, at, img));
    }
}

#define BLOCKS_FN blocks_sse2
#define BLOCKS_LEVEL SH_SIMD_SSE2
#define BLOCKS_TARGET __attribute__((target("sse2")))
#define BLOCKS_CLASSIFY classify_sse2
#define BLOCKS_RANGE range_sse2
#define BLOCKS_TAGS tag_masks_sse2
#include "canon_blocks.h"

#define BLOCKS_FN blocks_avx2
#define BLOCKS_LEVEL SH_SIMD_AVX2
#define BLOCKS_TARGET __attribute__((target("avx2,bmi,bmi2,pclmul")))
#define BLOCKS_CLASSIFY classify_avx2
#define BLOCKS_RANGE range_avx2
#define BLOCKS_TAGS tag_masks_avx2
#include "canon_blocks.h"

#define BLOCKS_FN blocks_vbmi
#define BLOCKS_LEVEL SH_SIMD_AVX2
#define BLOCKS_TARGET VBMI_TARGET
#define BLOCKS_CLASSIFY classify_avx512
#define BLOCKS_RANGE range_avx2
#define BLOCKS_TAGS tag_masks_avx2
#define BLOCKS_WORDS_VBMI 1
#include "canon_blocks.h"
#endif

/* No word in progress and an ASCII letter, digit or separator at *pos:
 * words by the block scanner of c's level while it can, each word it leaves
 * byte by byte (ascii_run), until a byte for scan() (a non-ASCII byte, '<'
 * or '&' in HTML, punctuation kept as tokens) or the end. A word that runs
 * into such a byte is left in progress in c, since that byte may continue
 * it. */
static sh_status ascii_words(canon *c, size_t *pos, size_t end, int html)
{
    const unsigned char *p = c->p;
    sh_tokens *o = c->out;
    const unsigned sep_max = (c->flags & SH_CANON_PUNCT) ? C_S : C_P;
    const unsigned keep_numbers = (c->flags & SH_CANON_NUMBERS) ? 1 : 0;
    size_t i = *pos;
    sh_status st = SH_OK;

    (void)html; /* only the block scanners need it */
    for (;;) {
        size_t s;
        unsigned k = C_S, letters = 0;
#if CANON_BLOCKS
        if (sep_max == C_P && c->level >= SH_SIMD_SSE2) {
            /* AVX-512 machines too: a scanner of 64-byte mask registers
             * (session 12, AMD EPYC Zen 4) was 9% slower than this one on
             * the text set and 3-4% on HTML, its masked loads of the token
             * heads most of it (docs/benchmarks.md) */
            st = c->vbmi ? blocks_vbmi(c, &i, end, html)
               : c->level >= SH_SIMD_AVX2 ? blocks_avx2(c, &i, end, html)
               : blocks_sse2(c, &i, end, html);
            if (st != SH_OK)
                break;
        }
#endif
        while (i < end && (k = byte_class[p[i]]) - C_S <= sep_max - C_S)
            i++;
        if (i == end || k > C_L)
            break;
        s = i;
        if (o->text_cap - o->text_len < end - i + SH_TOKEN_HEAD && (st = text_grow(c, end - i + SH_TOKEN_HEAD)) != SH_OK)
            break;
        i = ascii_run(p, i, end, (unsigned char *)o->text + o->text_len, c->low, &letters);
        if (i < end && (k = byte_class[p[i]]) > sep_max) {
            c->active = 1;
            c->ideo = c->nonascii = 0;
            c->nondigit = (int)letters;
            c->w_src = s;
            c->w_end = i;
            c->w_text = o->text_len;
            o->text_len += i - s;
            break;
        }
        if (letters | keep_numbers) {
            sh_token *t;
            if (o->n == o->cap && (st = token_grow(c)) != SH_OK)
                break;
            t = &o->tok[o->n];
            t->src_off = s;
            t->src_len = i - s;
            t->off = o->text_len;
            t->len = i - s;
            o->text_len += i - s;
            put_head(o, o->n++);
        }
    }
    *pos = i;
    return st;
}

/* Tokenize p[i, end) into c->out, continuing the word in progress. */
static sh_status scan(canon *c, size_t i, size_t end, int html)
{
    const unsigned char *p = c->p;
    sh_tokens *o = c->out;
    const unsigned sep_max = (c->flags & SH_CANON_PUNCT) ? C_S : C_P;
    sh_status st;

    while (i < end) {
        unsigned b = p[i], k = byte_class[b];
        if (!c->active && k <= sep_max) {
            if ((st = ascii_words(c, &i, end, html)) != SH_OK)
                return st;
            continue;
        }
        if (k <= C_L) {
            /* ASCII letters and digits extending a word in progress. */
            unsigned letters = 0;
            size_t j;
            if (c->ideo) {
                if ((st = finish(c)) != SH_OK)
                    return st;
                continue;
            }
            if (o->text_cap - o->text_len < end - i && (st = text_grow(c, end - i)) != SH_OK)
                return st;
            j = ascii_run(p, i, end, (unsigned char *)o->text + o->text_len, c->low, &letters);
            o->text_len += j - i;
            c->nondigit |= (int)letters;
            c->w_end = i = j;
            continue;
        }
        switch (k) {
        case C_S:
            if (c->active && (st = finish(c)) != SH_OK)
                return st;
            i++;
            break;
        case C_HI: {
            utf8proc_int32_t cp;
            size_t len = utf8_decode(p + i, end - i, &cp);
            if (len) {
                st = put_cp(c, cp, i, i + len);
                i += len;
            } else if (c->invalid == SH_UTF8_LATIN1) {
                st = put_cp(c, (utf8proc_int32_t)b, i, i + 1);
                i++;
            } else if (c->invalid == SH_UTF8_SKIP) {
                st = finish(c);
                i++;
            } else {
                return sh_error_set(c->err, SH_EUTF8, i,
                                    "invalid UTF-8 at byte %zu (0x%02x); pass invalid = \"latin1\" "
                                    "or \"skip\" to accept such input", i, b);
            }
            if (st != SH_OK)
                return st;
            break;
        }
        case C_LT:
            if (html) {
                size_t next;
                if ((st = html_markup(c, i, end, &next)) != SH_OK)
                    return st;
                if (next != i) {
                    i = next;
                    break;
                }
            }
            if ((st = put_cp(c, '<', i, i + 1)) != SH_OK)
                return st;
            i++;
            break;
        case C_AMP:
            if (html) {
                utf8proc_int32_t cp;
                size_t next;
                if (html_entity(p, i, end, &cp, &next)) {
                    if ((st = put_cp(c, cp, i, next)) != SH_OK)
                        return st;
                    i = next;
                    break;
                }
            }
            if ((st = put_cp(c, '&', i, i + 1)) != SH_OK)
                return st;
            i++;
            break;
        default: /* C_P */
            if ((st = put_cp(c, (utf8proc_int32_t)b, i, i + 1)) != SH_OK)
                return st;
            i++;
            break;
        }
    }
    return SH_OK;
}

sh_status sh_canon_tokenize(const sh_canon_opts *opts, const char *in, size_t n,
                            sh_tokens *out, sh_error *err)
{
    canon c;
    sh_status st;

    if (!opts || !out || (!in && n))
        return sh_error_set(err, SH_EINVAL, 0, "sh_canon_tokenize: opts, out and in must not be NULL");
    if (opts->invalid != SH_UTF8_ERROR && opts->invalid != SH_UTF8_SKIP &&
        opts->invalid != SH_UTF8_LATIN1)
        return sh_error_set(err, SH_EINVAL, 0,
                            "sh_canon_tokenize: invalid must be SH_UTF8_ERROR, SH_UTF8_SKIP or SH_UTF8_LATIN1");
    if (out->max_n && out->max_n <= SIZE_MAX - 64 && out->cap > out->max_n + 64) {
        /* buffers kept from a larger document: back within the bound (and
         * the block scanner's slack, see token_grow), so that token_grow
         * sees it */
        const size_t cap = out->max_n + 64;
        sh_token *t = realloc(out->tok, cap * sizeof *t);
        unsigned char *h;
        if (!t)
            return sh_error_set(err, SH_ENOMEM, 0, "out of memory shrinking the token buffers");
        out->tok = t;
        out->cap = cap; /* the heads keep room for at least cap tokens either way */
        if ((h = realloc(out->head, cap * SH_TOKEN_HEAD)) != NULL)
            out->head = h;
    }
    if (opts->flags & SH_CANON_CODE) {
        sh_simd level = opts->simd;
        if (level == SH_SIMD_AUTO && (st = sh_simd_resolve(SH_SIMD_AUTO, &level, err)) != SH_OK)
            return st;
        return sh_code_tokenize(in, n, level, out, err);
    }
    if (opts->flags & SH_CANON_TWEET) {
        if (!sh_grow((void **)&out->src, &out->src_cap, n, 1, 4096))
            return sh_error_set(err, SH_ENOMEM, 0, "out of memory");
        if (n) memcpy(out->src, in, n);
        sh_tweet_blank(out->src, n);
        in = out->src;
    }
    out->n = 0;
    out->text_len = 0;
    memset(&c, 0, sizeof c);
    memset(c.seen_cp, 0xff, sizeof c.seen_cp); /* -1: no code point */
    c.p = (const unsigned char *)in;
    c.len = n;
    c.flags = opts->flags;
    if (c.flags & SH_CANON_FOLD)
        c.flags |= SH_CANON_LOWER;
    c.invalid = opts->invalid;
    c.low = (c.flags & SH_CANON_LOWER) ? ascii_lower : ascii_same;
    c.out = out;
    c.err = err;
    c.level = opts->simd;
    if (c.level == SH_SIMD_AUTO && (st = sh_simd_resolve(SH_SIMD_AUTO, &c.level, err)) != SH_OK)
        return st;
#if CANON_BLOCKS
    c.vbmi = c.level >= SH_SIMD_AVX512 && __builtin_cpu_supports("avx512vbmi") && __builtin_cpu_supports("avx512vbmi2");
#endif
    if (n > 0) {
        /* the image and 16 bytes read past a token at its end; 64 past
         * a block's first byte (words_vbmi reads the block's image whole) */
        if ((st = text_reserve(&c, n + 64)) != SH_OK)
            return st;
        /* the block scanners write the input's image to text[0, n): other
         * tokens go after it */
        if (CANON_BLOCKS && c.level >= SH_SIMD_SSE2 && !(c.flags & SH_CANON_PUNCT))
            out->text_len = n;
        if ((st = scan(&c, 0, n, (c.flags & SH_CANON_HTML) != 0)) != SH_OK)
            return st;
        if ((st = finish(&c)) != SH_OK)
            return st;
    }
    if ((st = text_reserve(&c, SH_CANON_SLACK)) != SH_OK)
        return st;
    memset(out->text + out->text_len, 0, SH_CANON_SLACK);
    return SH_OK;
}

void sh_tokens_begin(sh_tokens *t)
{
    t->n = 0;
    t->text_len = 0;
}

/* Room for need more bytes of text (and the slack) and one more token. */
static sh_status tokens_room(sh_tokens *t, size_t need, sh_error *err)
{
    if (need > SIZE_MAX / 2 - SH_CANON_SLACK - t->text_len)
        return sh_error_set(err, SH_ENOMEM, 0, "out of memory growing the token buffers");
    if (t->text_cap - t->text_len < need + SH_CANON_SLACK) {
        size_t cap = t->text_cap ? t->text_cap : 64;
        char *x;
        while (cap - t->text_len < need + SH_CANON_SLACK) cap *= 2;
        if (!(x = realloc(t->text, cap)))
            return sh_error_set(err, SH_ENOMEM, 0, "out of memory growing the token buffers to %zu bytes", cap);
        t->text = x;
        t->text_cap = cap;
    }
    if (t->n == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 256;
        sh_token *k;
        unsigned char *h;
        /* the caller's bound, as in token_grow (issue 11, max_shingles) */
        if (t->max_n) {
            if (t->n >= t->max_n)
                return sh_error_set(err, SH_ELIMIT, 0, "more than %zu tokens", t->max_n);
            if (t->max_n <= SIZE_MAX - 64 && cap > t->max_n + 64)
                cap = t->max_n + 64;
        }
        if (cap > SIZE_MAX / (sizeof *k + SH_TOKEN_HEAD) || !(k = realloc(t->tok, cap * sizeof *k)))
            return sh_error_set(err, SH_ENOMEM, 0, "out of memory for %zu tokens", cap);
        t->tok = k;
        if (!(h = realloc(t->head, cap * SH_TOKEN_HEAD)))
            return sh_error_set(err, SH_ENOMEM, 0, "out of memory for %zu tokens", cap);
        t->head = h;
        t->cap = cap;
    }
    return SH_OK;
}

sh_status sh_tokens_reserve(sh_tokens *t, size_t ntok, size_t text, sh_error *err)
{
    if (!sh_grow((void **)&t->text, &t->text_cap, text, 1, 64))
        return sh_error_set(err, SH_ENOMEM, 0, "out of memory growing the token buffers to %zu bytes", text);
    /* the caller's bound (max_shingles), as token_grow keeps it */
    if (t->max_n && ntok > t->max_n) {
        if (t->n >= t->max_n)
            return sh_error_set(err, SH_ELIMIT, 0, "more than %zu tokens", t->max_n);
        ntok = t->max_n;
    }
    if (ntok > t->cap) {
        size_t cap = t->cap, hcap = t->cap;
        if (!sh_grow((void **)&t->tok, &cap, ntok, sizeof *t->tok, 256) ||
            !sh_grow((void **)&t->head, &hcap, cap, SH_TOKEN_HEAD, 256))
            return sh_error_set(err, SH_ENOMEM, 0, "out of memory for %zu tokens", ntok);
        t->cap = cap;
    }
    return SH_OK;
}

sh_status sh_tokens_push(sh_tokens *t, const void *bytes, size_t len, size_t src_off, size_t src_len, sh_error *err)
{
    sh_token *k;
    sh_status st;
    if ((t->text_cap - t->text_len < len + SH_CANON_SLACK || t->n == t->cap) &&
        (st = tokens_room(t, len, err)) != SH_OK)
        return st;
    k = &t->tok[t->n];
    k->src_off = src_off;
    k->src_len = src_len;
    k->off = t->text_len;
    k->len = len;
    memcpy(t->text + t->text_len, bytes, len);
    t->text_len += len;
    put_head(t, t->n++);
    return SH_OK;
}

sh_status sh_tokens_end(sh_tokens *t, sh_error *err)
{
    sh_status st;
    if (t->text_cap - t->text_len < SH_CANON_SLACK && (st = tokens_room(t, 0, err)) != SH_OK)
        return st;
    memset(t->text + t->text_len, 0, SH_CANON_SLACK);
    return SH_OK;
}

void sh_tokens_free(sh_tokens *t)
{
    if (!t)
        return;
    free(t->tok);
    free(t->head);
    free(t->text);
    free(t->src);
    memset(t, 0, sizeof *t);
}
