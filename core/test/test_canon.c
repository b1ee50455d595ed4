/* Unit tests for core/canon.c: the tokenizer contract of canon.h. */
#include "canon.h"
#include "test.h"

#include <stdlib.h>
#include <time.h>

#define LOWER SH_CANON_LOWER
#define DEF SH_CANON_DEFAULT_FLAGS

/* Tokens of in[0..n) joined with '|' (the empty string for no tokens), or
 * "<status>" if tokenizing failed. Static buffer: one call per CHECK. */
static const char *joined_n(unsigned flags, sh_utf8_mode mode, const char *in, size_t n)
{
    static char buf[4096];
    sh_canon_opts o = { flags, mode, SH_SIMD_AUTO };
    sh_tokens t = { 0 };
    sh_error e;
    size_t i, w = 0;
    sh_status st = sh_canon_tokenize(&o, in, n, &t, &e);
    if (st != SH_OK) {
        snprintf(buf, sizeof buf, "<%s>", sh_status_name(st));
    } else {
        for (i = 0; i < t.n && w + t.tok[i].len + 2 < sizeof buf; i++) {
            if (i)
                buf[w++] = '|';
            memcpy(buf + w, t.text + t.tok[i].off, t.tok[i].len);
            w += t.tok[i].len;
        }
        buf[w] = '\0';
    }
    sh_tokens_free(&t);
    return buf;
}

static const char *joined(unsigned flags, const char *in)
{
    return joined_n(flags, SH_UTF8_ERROR, in, strlen(in));
}

static const char *joined_html(unsigned flags, const char *in)
{
    return joined_n(flags | SH_CANON_HTML, SH_UTF8_ERROR, in, strlen(in));
}

#define CHECK_TOKENS(got, want) do { const char *g_ = (got); CHECK(strcmp(g_, (want)) == 0); \
    if (strcmp(g_, (want)) != 0) fprintf(stderr, "  got \"%s\"\n  want \"%s\"\n", g_, (want)); } while (0)

/* Every token is non-empty and lies inside both buffers. */
static int tokens_in_bounds(const sh_tokens *t, size_t n)
{
    size_t i;
    for (i = 0; i < t->n; i++) {
        const sh_token *k = &t->tok[i];
        if (k->len == 0 || k->off > t->text_len || k->len > t->text_len - k->off ||
            k->src_len == 0 || k->src_off > n || k->src_len > n - k->src_off)
            return 0;
    }
    return 1;
}

static void test_splits_ascii_text_into_words(void)
{
    CHECK_TOKENS(joined(DEF, "Hello, world!  foo_bar\tbaz\nqux"), "hello|world|foo|bar|baz|qux");
    CHECK_TOKENS(joined(DEF, "don't stop"), "don|t|stop");
    CHECK_TOKENS(joined(DEF, "   "), "");
}

static void test_lowercases_only_when_asked(void)
{
    CHECK_TOKENS(joined(LOWER, "MiXeD CASE"), "mixed|case");
    CHECK_TOKENS(joined(0, "MiXeD CASE"), "MiXeD|CASE");
    CHECK_TOKENS(joined(0, "ÉCOLE"), "ÉCOLE");
}

static void test_keeps_or_drops_numbers(void)
{
    CHECK_TOKENS(joined(LOWER | SH_CANON_NUMBERS, "abc 123 4x 2024"), "abc|123|4x|2024");
    CHECK_TOKENS(joined(LOWER, "abc 123 4x 2024"), "abc|4x");
    /* Arabic-Indic digits are Nd: a number too. */
    CHECK_TOKENS(joined(LOWER, "x \xd9\xa3\xd9\xa4 y"), "x|y");
    CHECK_TOKENS(joined(LOWER | SH_CANON_NUMBERS, "x \xd9\xa3\xd9\xa4 y"), "x|\xd9\xa3\xd9\xa4|y");
}

static void test_keeps_or_drops_punctuation(void)
{
    CHECK_TOKENS(joined(LOWER, "a,b! c"), "a|b|c");
    CHECK_TOKENS(joined(LOWER | SH_CANON_PUNCT, "a,b! c"), "a|,|b|!|c");
    CHECK_TOKENS(joined(LOWER | SH_CANON_PUNCT, "\xc2\xabx\xc2\xbb $5"), "\xc2\xab|x|\xc2\xbb|$");
    CHECK_TOKENS(joined(LOWER | SH_CANON_PUNCT, "a < b & c"), "a|<|b|&|c");
}

static void test_token_spans_point_at_the_original_bytes(void)
{
    const char *in = "  Hello,  W\xc3\x96rld 42 ";
    const char *want[] = { "Hello", "W\xc3\x96rld", "42" };
    sh_canon_opts o = { DEF, SH_UTF8_ERROR, SH_SIMD_AUTO };
    sh_tokens t = { 0 };
    size_t i;
    CHECK(sh_canon_tokenize(&o, in, strlen(in), &t, NULL) == SH_OK);
    CHECK_EQ_U64(t.n, 3);
    for (i = 0; i < t.n && i < 3; i++) {
        CHECK_EQ_U64(t.tok[i].src_len, strlen(want[i]));
        CHECK(memcmp(in + t.tok[i].src_off, want[i], strlen(want[i])) == 0);
    }
    CHECK_EQ_U64(t.tok[0].src_off, 2);
    CHECK(t.n == 3 && memcmp(t.text + t.tok[1].off, "w\xc3\xb6rld", t.tok[1].len) == 0);
    sh_tokens_free(&t);
}

static void test_lowercases_utf8_letters(void)
{
    CHECK_TOKENS(joined(LOWER, "\xc3\x89" "COLE \xc3\x9c" "ber"), "\xc3\xa9" "cole|\xc3\xbc" "ber");
    /* Greek ΑΘΗΝΑ, Cyrillic МОСКВА */
    CHECK_TOKENS(joined(LOWER, "\xce\x91\xce\x98\xce\x97\xce\x9d\xce\x91"),
                 "\xce\xb1\xce\xb8\xce\xb7\xce\xbd\xce\xb1");
    CHECK_TOKENS(joined(LOWER, "\xd0\x9c\xd0\x9e\xd0\xa1\xd0\x9a\xd0\x92\xd0\x90"),
                 "\xd0\xbc\xd0\xbe\xd1\x81\xd0\xba\xd0\xb2\xd0\xb0");
    /* A non-breaking space (Zs) separates; a combining mark stays in its word. */
    CHECK_TOKENS(joined(LOWER, "a\xc2\xa0" "b e\xcc\x81t\xc3\xa9"), "a|b|e\xcc\x81t\xc3\xa9");
}

static void test_gives_one_token_per_ideograph(void)
{
    /* 我爱北京天安门 */
    CHECK_TOKENS(joined(DEF, "\xe6\x88\x91\xe7\x88\xb1\xe5\x8c\x97\xe4\xba\xac\xe5\xa4\xa9\xe5\xae\x89\xe9\x97\xa8"),
                 "\xe6\x88\x91|\xe7\x88\xb1|\xe5\x8c\x97|\xe4\xba\xac|\xe5\xa4\xa9|\xe5\xae\x89|\xe9\x97\xa8");
    /* 東京Tower。カタカナ */
    CHECK_TOKENS(joined(DEF, "\xe6\x9d\xb1\xe4\xba\xacTower\xe3\x80\x82\xe3\x82\xab\xe3\x82\xbf"),
                 "\xe6\x9d\xb1|\xe4\xba\xac|tower|\xe3\x82\xab|\xe3\x82\xbf");
    /* か + combining voiced mark stays one token; Thai กิน: ก + vowel mark ิ, then น */
    CHECK_TOKENS(joined(DEF, "\xe3\x81\x8b\xe3\x82\x99\xe3\x81\x8b"), "\xe3\x81\x8b\xe3\x82\x99|\xe3\x81\x8b");
    CHECK_TOKENS(joined(DEF, "\xe0\xb8\x81\xe0\xb8\xb4\xe0\xb8\x99"), "\xe0\xb8\x81\xe0\xb8\xb4|\xe0\xb8\x99");
    /* Hangul is written with spaces: a word, not syllables. 한국어 */
    CHECK_TOKENS(joined(DEF, "\xed\x95\x9c\xea\xb5\xad\xec\x96\xb4"), "\xed\x95\x9c\xea\xb5\xad\xec\x96\xb4");
}

static void test_fold_normalizes_compatibility_case_and_marks(void)
{
    unsigned f = SH_CANON_FOLD | SH_CANON_NUMBERS;
    CHECK_TOKENS(joined(f, "\xef\xac\x81ne"), "fine");                    /* ﬁ ligature */
    CHECK_TOKENS(joined(f, "caf\xc3\xa9 CAFE\xcc\x81"), "cafe|cafe");     /* precomposed vs combining */
    CHECK_TOKENS(joined(f, "Stra\xc3\x9f" "e"), "strasse");
    CHECK_TOKENS(joined(f, "\xef\xbc\xa1\xef\xbc\xa2"), "ab");            /* fullwidth ＡＢ */
    CHECK_TOKENS(joined(f, "x \xcc\x81 y"), "x|y");                       /* only a mark: dropped */
    CHECK_TOKENS(joined(SH_CANON_LOWER, "\xef\xac\x81ne"), "\xef\xac\x81ne");
}

static void test_invalid_utf8_is_an_error_naming_the_byte(void)
{
    static const struct { const char *in; size_t off; } cases[] = {
        { "ab\xff" "cd", 2 },
        { "ab \xc3(", 3 },                      /* lead byte without continuation */
        { "x \xc0\xaf", 2 },                    /* overlong '/' */
        { "x \xe0\x80\xaf", 2 },                /* overlong, 3 bytes */
        { "xy \xed\xa0\x80", 3 },               /* surrogate U+D800 */
        { "x \xf4\x90\x80\x80", 2 },            /* above U+10FFFF */
        { "x \xf8\x88\x80\x80\x80", 2 },        /* 5-byte form */
        { "\xc3\xa9\x80", 2 },                  /* stray continuation after a valid char */
    };
    const char *full = "x \xf0\x90\x8d\x88"; /* U+10348: every truncation is invalid */
    sh_canon_opts o = { DEF, SH_UTF8_ERROR, SH_SIMD_AUTO };
    sh_tokens t = { 0 };
    sh_error e;
    size_t i, len;
    for (i = 0; i < sizeof cases / sizeof *cases; i++) {
        memset(&e, 0, sizeof e);
        CHECK(sh_canon_tokenize(&o, cases[i].in, strlen(cases[i].in), &t, &e) == SH_EUTF8);
        CHECK_EQ_U64(e.code, SH_EUTF8);
        CHECK_EQ_U64(e.offset, cases[i].off);
    }
    for (len = 3; len < 6; len++) {
        CHECK(sh_canon_tokenize(&o, full, len, &t, &e) == SH_EUTF8);
        CHECK_EQ_U64(e.offset, 2);
    }
    CHECK(sh_canon_tokenize(&o, full, 6, &t, &e) == SH_OK);
    CHECK_EQ_U64(t.n, 2);
    CHECK(sh_canon_tokenize(&o, "hello \xff", 7, &t, &e) == SH_EUTF8);
    CHECK(strcmp(e.msg, "invalid UTF-8 at byte 6 (0xff); pass invalid = \"latin1\" or \"skip\" "
                        "to accept such input") == 0);
    sh_tokens_free(&t);
}

static void test_invalid_utf8_is_skipped_as_a_separator(void)
{
    CHECK_TOKENS(joined_n(DEF, SH_UTF8_SKIP, "ab\xff" "cd \xc3\xa9\xc3", 9), "ab|cd|\xc3\xa9");
    CHECK_TOKENS(joined_n(DEF, SH_UTF8_SKIP, "a\xed\xa0\x80" "b", 5), "a|b");
    CHECK_TOKENS(joined_n(DEF, SH_UTF8_SKIP, "\xe2\x82", 2), "");
}

static void test_invalid_utf8_is_read_as_latin1(void)
{
    /* 0xff is ÿ (a letter), 0xc3 at the end is Ã (lowercased), 0xa0 is NBSP (a separator). */
    CHECK_TOKENS(joined_n(DEF, SH_UTF8_LATIN1, "ab\xff" "cd \xc3\xa9\xc3", 9),
                 "ab\xc3\xbf" "cd|\xc3\xa9\xc3\xa3");
    CHECK_TOKENS(joined_n(DEF, SH_UTF8_LATIN1, "caf\xe9\xa0x", 6), "caf\xc3\xa9|x");
}

static void test_html_strips_tags(void)
{
    CHECK_TOKENS(joined_html(DEF, "<html><body><p class=x>Hello <i>there</i></p></body></html>"),
                 "hello|there");
    CHECK_TOKENS(joined_html(DEF, "<!DOCTYPE html><?xml version=\"1.0\"?>text"), "text");
    CHECK_TOKENS(joined_html(DEF, "<a href=\"x>y\" title='p>q'>link</a>"), "link");
    CHECK_TOKENS(joined_html(DEF, "<img alt=it's>word"), "word");
    CHECK_TOKENS(joined(DEF, "<b>x</b>"), "b|x|b");
}

static void test_html_block_tags_separate_and_inline_tags_join(void)
{
    sh_canon_opts o = { DEF | SH_CANON_HTML, SH_UTF8_ERROR, SH_SIMD_AUTO };
    sh_tokens t = { 0 };
    const char *in = " wo<b>r</b>d</b> ";
    CHECK_TOKENS(joined_html(DEF, "wo<b>r</b>d"), "word");
    CHECK_TOKENS(joined_html(DEF, "wo<SPAN class=\"a\">r</Span>d"), "word");
    CHECK_TOKENS(joined_html(DEF, "one<br>two<br/>three<p>four</p>five<td>six<DIV>seven"),
                 "one|two|three|four|five|six|seven");
    CHECK_TOKENS(joined_html(DEF, "a<unknowntag>b"), "a|b");
    CHECK(sh_canon_tokenize(&o, in, strlen(in), &t, NULL) == SH_OK);
    CHECK_EQ_U64(t.n, 1);
    CHECK_EQ_U64(t.tok[0].src_off, 1);
    CHECK_EQ_U64(t.tok[0].src_len, strlen("wo<b>r</b>d"));
    sh_tokens_free(&t);
}

static void test_html_drops_comments(void)
{
    CHECK_TOKENS(joined_html(DEF, "a <!-- hidden <b> words --> b"), "a|b");
    CHECK_TOKENS(joined_html(DEF, "a<!---->b <!-->c"), "ab|c");
    CHECK_TOKENS(joined_html(DEF, "a <!-- never closed b c"), "a");
}

static void test_html_drops_script_and_style_contents(void)
{
    CHECK_TOKENS(joined_html(DEF, "a<script>if (x < y && y > 2) { s = '</p>'; }</script>b"), "a|b");
    CHECK_TOKENS(joined_html(DEF, "a<SCRIPT type=x>var s = \"</scripts>\";</ScRiPt >b"), "a|b");
    CHECK_TOKENS(joined_html(DEF, "a<style>p { color: red }</style>b"), "a|b");
    CHECK_TOKENS(joined_html(DEF, "a<script>never closed"), "a");
    CHECK_TOKENS(joined_html(DEF, "<scripting>kept</scripting>"), "kept");
}

static void test_html_decodes_entities(void)
{
    CHECK_TOKENS(joined_html(DEF, "caf&eacute; &Eacute;T&Eacute;"), "caf\xc3\xa9|\xc3\xa9t\xc3\xa9");
    CHECK_TOKENS(joined_html(DEF, "&#65;&#x42;&#X63;"), "abc");
    CHECK_TOKENS(joined_html(DEF, "a&nbsp;b&amp;c&apos;d"), "a|b|c|d");
    CHECK_TOKENS(joined_html(DEF | SH_CANON_PUNCT, "x&lt;y&gt &amp z&copy2020"), "x|<|y|>|&|z|\xc2\xa9|2020");
    CHECK_TOKENS(joined_html(DEF | SH_CANON_PUNCT, "&#0; &#xD800; &#x110000; &#99999999999;"),
                 "\xef\xbf\xbd|\xef\xbf\xbd|\xef\xbf\xbd|\xef\xbf\xbd");
    /* Unknown or malformed references are literal text. */
    CHECK_TOKENS(joined_html(DEF | SH_CANON_PUNCT, "&bogus; &amplifier &#; &#x; &"),
                 "&|bogus|;|&|amplifier|&|#|;|&|#|x|;|&");
    CHECK_TOKENS(joined_html(DEF | SH_CANON_PUNCT, "&lt;b&gt;not a tag"), "<|b|>|not|a|tag");
}

/* Every named character reference of HTML 4.01 (section 24: the 252 entity
 * references of HTMLlat1, HTMLsymbol and HTMLspecial) and &apos; (XHTML 1.0),
 * with its code point as the specification gives it. Table-driven: each must
 * decode to its character, so "x&name;y" tokenizes exactly as the plain text
 * "x", the character in UTF-8, "y" (letters join the word, punctuation and
 * symbols are tokens of their own, spaces and format characters separate),
 * where an undecoded reference would give "x|&|name|;|y". */
static const struct { const char *name; uint32_t cp; } html4_entities[] = {
    {"AElig", 0x00C6}, {"Aacute", 0x00C1}, {"Acirc", 0x00C2}, {"Agrave", 0x00C0}, {"Alpha", 0x0391},
    {"Aring", 0x00C5}, {"Atilde", 0x00C3}, {"Auml", 0x00C4}, {"Beta", 0x0392}, {"Ccedil", 0x00C7},
    {"Chi", 0x03A7}, {"Dagger", 0x2021}, {"Delta", 0x0394}, {"ETH", 0x00D0}, {"Eacute", 0x00C9},
    {"Ecirc", 0x00CA}, {"Egrave", 0x00C8}, {"Epsilon", 0x0395}, {"Eta", 0x0397}, {"Euml", 0x00CB},
    {"Gamma", 0x0393}, {"Iacute", 0x00CD}, {"Icirc", 0x00CE}, {"Igrave", 0x00CC}, {"Iota", 0x0399},
    {"Iuml", 0x00CF}, {"Kappa", 0x039A}, {"Lambda", 0x039B}, {"Mu", 0x039C}, {"Ntilde", 0x00D1},
    {"Nu", 0x039D}, {"OElig", 0x0152}, {"Oacute", 0x00D3}, {"Ocirc", 0x00D4}, {"Ograve", 0x00D2},
    {"Omega", 0x03A9}, {"Omicron", 0x039F}, {"Oslash", 0x00D8}, {"Otilde", 0x00D5}, {"Ouml", 0x00D6},
    {"Phi", 0x03A6}, {"Pi", 0x03A0}, {"Prime", 0x2033}, {"Psi", 0x03A8}, {"Rho", 0x03A1}, {"Scaron", 0x0160},
    {"Sigma", 0x03A3}, {"THORN", 0x00DE}, {"Tau", 0x03A4}, {"Theta", 0x0398}, {"Uacute", 0x00DA},
    {"Ucirc", 0x00DB}, {"Ugrave", 0x00D9}, {"Upsilon", 0x03A5}, {"Uuml", 0x00DC}, {"Xi", 0x039E},
    {"Yacute", 0x00DD}, {"Yuml", 0x0178}, {"Zeta", 0x0396}, {"aacute", 0x00E1}, {"acirc", 0x00E2},
    {"acute", 0x00B4}, {"aelig", 0x00E6}, {"agrave", 0x00E0}, {"alefsym", 0x2135}, {"alpha", 0x03B1},
    {"amp", 0x0026}, {"and", 0x2227}, {"ang", 0x2220}, {"apos", 0x0027}, {"aring", 0x00E5}, {"asymp", 0x2248},
    {"atilde", 0x00E3}, {"auml", 0x00E4}, {"bdquo", 0x201E}, {"beta", 0x03B2}, {"brvbar", 0x00A6},
    {"bull", 0x2022}, {"cap", 0x2229}, {"ccedil", 0x00E7}, {"cedil", 0x00B8}, {"cent", 0x00A2},
    {"chi", 0x03C7}, {"circ", 0x02C6}, {"clubs", 0x2663}, {"cong", 0x2245}, {"copy", 0x00A9},
    {"crarr", 0x21B5}, {"cup", 0x222A}, {"curren", 0x00A4}, {"dArr", 0x21D3}, {"dagger", 0x2020},
    {"darr", 0x2193}, {"deg", 0x00B0}, {"delta", 0x03B4}, {"diams", 0x2666}, {"divide", 0x00F7},
    {"eacute", 0x00E9}, {"ecirc", 0x00EA}, {"egrave", 0x00E8}, {"empty", 0x2205}, {"emsp", 0x2003},
    {"ensp", 0x2002}, {"epsilon", 0x03B5}, {"equiv", 0x2261}, {"eta", 0x03B7}, {"eth", 0x00F0},
    {"euml", 0x00EB}, {"euro", 0x20AC}, {"exist", 0x2203}, {"fnof", 0x0192}, {"forall", 0x2200},
    {"frac12", 0x00BD}, {"frac14", 0x00BC}, {"frac34", 0x00BE}, {"frasl", 0x2044}, {"gamma", 0x03B3},
    {"ge", 0x2265}, {"gt", 0x003E}, {"hArr", 0x21D4}, {"harr", 0x2194}, {"hearts", 0x2665}, {"hellip", 0x2026},
    {"iacute", 0x00ED}, {"icirc", 0x00EE}, {"iexcl", 0x00A1}, {"igrave", 0x00EC}, {"image", 0x2111},
    {"infin", 0x221E}, {"int", 0x222B}, {"iota", 0x03B9}, {"iquest", 0x00BF}, {"isin", 0x2208},
    {"iuml", 0x00EF}, {"kappa", 0x03BA}, {"lArr", 0x21D0}, {"lambda", 0x03BB}, {"lang", 0x2329},
    {"laquo", 0x00AB}, {"larr", 0x2190}, {"lceil", 0x2308}, {"ldquo", 0x201C}, {"le", 0x2264},
    {"lfloor", 0x230A}, {"lowast", 0x2217}, {"loz", 0x25CA}, {"lrm", 0x200E}, {"lsaquo", 0x2039},
    {"lsquo", 0x2018}, {"lt", 0x003C}, {"macr", 0x00AF}, {"mdash", 0x2014}, {"micro", 0x00B5},
    {"middot", 0x00B7}, {"minus", 0x2212}, {"mu", 0x03BC}, {"nabla", 0x2207}, {"nbsp", 0x00A0},
    {"ndash", 0x2013}, {"ne", 0x2260}, {"ni", 0x220B}, {"not", 0x00AC}, {"notin", 0x2209}, {"nsub", 0x2284},
    {"ntilde", 0x00F1}, {"nu", 0x03BD}, {"oacute", 0x00F3}, {"ocirc", 0x00F4}, {"oelig", 0x0153},
    {"ograve", 0x00F2}, {"oline", 0x203E}, {"omega", 0x03C9}, {"omicron", 0x03BF}, {"oplus", 0x2295},
    {"or", 0x2228}, {"ordf", 0x00AA}, {"ordm", 0x00BA}, {"oslash", 0x00F8}, {"otilde", 0x00F5},
    {"otimes", 0x2297}, {"ouml", 0x00F6}, {"para", 0x00B6}, {"part", 0x2202}, {"permil", 0x2030},
    {"perp", 0x22A5}, {"phi", 0x03C6}, {"pi", 0x03C0}, {"piv", 0x03D6}, {"plusmn", 0x00B1}, {"pound", 0x00A3},
    {"prime", 0x2032}, {"prod", 0x220F}, {"prop", 0x221D}, {"psi", 0x03C8}, {"quot", 0x0022}, {"rArr", 0x21D2},
    {"radic", 0x221A}, {"rang", 0x232A}, {"raquo", 0x00BB}, {"rarr", 0x2192}, {"rceil", 0x2309},
    {"rdquo", 0x201D}, {"real", 0x211C}, {"reg", 0x00AE}, {"rfloor", 0x230B}, {"rho", 0x03C1}, {"rlm", 0x200F},
    {"rsaquo", 0x203A}, {"rsquo", 0x2019}, {"sbquo", 0x201A}, {"scaron", 0x0161}, {"sdot", 0x22C5},
    {"sect", 0x00A7}, {"shy", 0x00AD}, {"sigma", 0x03C3}, {"sigmaf", 0x03C2}, {"sim", 0x223C},
    {"spades", 0x2660}, {"sub", 0x2282}, {"sube", 0x2286}, {"sum", 0x2211}, {"sup", 0x2283}, {"sup1", 0x00B9},
    {"sup2", 0x00B2}, {"sup3", 0x00B3}, {"supe", 0x2287}, {"szlig", 0x00DF}, {"tau", 0x03C4},
    {"there4", 0x2234}, {"theta", 0x03B8}, {"thetasym", 0x03D1}, {"thinsp", 0x2009}, {"thorn", 0x00FE},
    {"tilde", 0x02DC}, {"times", 0x00D7}, {"trade", 0x2122}, {"uArr", 0x21D1}, {"uacute", 0x00FA},
    {"uarr", 0x2191}, {"ucirc", 0x00FB}, {"ugrave", 0x00F9}, {"uml", 0x00A8}, {"upsih", 0x03D2},
    {"upsilon", 0x03C5}, {"uuml", 0x00FC}, {"weierp", 0x2118}, {"xi", 0x03BE}, {"yacute", 0x00FD},
    {"yen", 0x00A5}, {"yuml", 0x00FF}, {"zeta", 0x03B6}, {"zwj", 0x200D}, {"zwnj", 0x200C},
};

static size_t utf8_of(uint32_t cp, char *out)
{
    if (cp < 0x80) { out[0] = (char)cp; return 1; }
    if (cp < 0x800) { out[0] = (char)(0xC0 | cp >> 6); out[1] = (char)(0x80 | (cp & 0x3F)); return 2; }
    out[0] = (char)(0xE0 | cp >> 12);
    out[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
    out[2] = (char)(0x80 | (cp & 0x3F));
    return 3;
}

static void test_html_decodes_every_named_entity(void)
{
    const unsigned flags = SH_CANON_HTML | SH_CANON_PUNCT | SH_CANON_NUMBERS; /* case kept */
    size_t i, wrong = 0, n = sizeof html4_entities / sizeof *html4_entities;
    CHECK_EQ_U64(n, 253);
    for (i = 0; i < n; i++) {
        char ref[32], lit[16], got[256];
        size_t k;
        snprintf(ref, sizeof ref, "x&%s;y", html4_entities[i].name);
        lit[0] = 'x';
        k = 1 + utf8_of(html4_entities[i].cp, lit + 1);
        lit[k++] = 'y';
        snprintf(got, sizeof got, "%s", joined_n(flags, SH_UTF8_ERROR, ref, strlen(ref)));
        /* the literal character as plain text: '<' and '&' would be markup in HTML */
        if (strcmp(got, joined_n(flags & ~SH_CANON_HTML, SH_UTF8_ERROR, lit, k)) != 0) {
            wrong++;
            fprintf(stderr, "  &%s; gives \"%s\", U+%04X gives \"%s\"\n", html4_entities[i].name, got,
                    (unsigned)html4_entities[i].cp, joined_n(flags & ~SH_CANON_HTML, SH_UTF8_ERROR, lit, k));
        }
    }
    CHECK_EQ_U64(wrong, 0);
    /* and the references browsers take without the semicolon */
    CHECK_TOKENS(joined_html(SH_CANON_PUNCT, "a&amp b&lt c&gt d&quot e&nbsp f&copy g&reg h"),
                 "a|&|b|<|c|>|d|\"|e|f|\xc2\xa9|g|\xc2\xae|h");
}

static void test_html_entity_span_counts_whole(void)
{
    sh_canon_opts o = { DEF | SH_CANON_HTML, SH_UTF8_ERROR, SH_SIMD_AUTO };
    sh_tokens t = { 0 };
    const char *in = "x caf&eacute; y";
    CHECK(sh_canon_tokenize(&o, in, strlen(in), &t, NULL) == SH_OK);
    CHECK_EQ_U64(t.n, 3);
    CHECK_EQ_U64(t.tok[1].src_off, 2);
    CHECK_EQ_U64(t.tok[1].src_len, strlen("caf&eacute;"));
    sh_tokens_free(&t);
}

static void test_html_edge_cases(void)
{
    CHECK_TOKENS(joined_html(DEF, "a <b unterminated tag c d"), "a");
    CHECK_TOKENS(joined_html(DEF | SH_CANON_PUNCT, "1 < 2 <3 a<"), "1|<|2|<|3|a|<");
    CHECK_TOKENS(joined_html(DEF, "<p><br><hr/></p>"), "");
    CHECK_TOKENS(joined_html(DEF | SH_CANON_PUNCT, "x<![CDATA[a<b>&amp;]]>y"), "xa|<|b|>|&|amp|;|y");
    CHECK_TOKENS(joined_html(DEF, "<a href='unterminated>text"), "");
    CHECK_TOKENS(joined_html(DEF, "<"), "");
    CHECK_TOKENS(joined_html(DEF, "x<?php echo '>'; ?>y"), "xy");
}

static void test_nul_bytes_are_separators(void)
{
    CHECK_TOKENS(joined_n(DEF, SH_UTF8_ERROR, "a\0b\0\0c", 6), "a|b|c");
    CHECK_TOKENS(joined_n(DEF | SH_CANON_HTML, SH_UTF8_ERROR, "a<b\0>c&\0", 8), "ac");
}

static void test_a_100mb_word_is_one_token(void)
{
    size_t n = (size_t)100 << 20;
    char *in = malloc(n);
    sh_canon_opts o = { DEF, SH_UTF8_ERROR, SH_SIMD_AUTO };
    sh_tokens t = { 0 };
    CHECK(in != NULL);
    if (!in)
        return;
    memset(in, 'A', n);
    CHECK(sh_canon_tokenize(&o, in, n, &t, NULL) == SH_OK);
    CHECK_EQ_U64(t.n, 1);
    CHECK_EQ_U64(t.tok[0].len, n);
    CHECK_EQ_U64(t.tok[0].src_len, n);
    CHECK(t.text[t.tok[0].off] == 'a' && t.text[t.tok[0].off + n - 1] == 'a');
    sh_tokens_free(&t);
    free(in);
}

static void test_empty_input_gives_no_tokens(void)
{
    sh_canon_opts o = { DEF, SH_UTF8_ERROR, SH_SIMD_AUTO };
    sh_tokens t = { 0 };
    CHECK(sh_canon_tokenize(&o, "", 0, &t, NULL) == SH_OK);
    CHECK_EQ_U64(t.n, 0);
    CHECK(sh_canon_tokenize(&o, NULL, 0, &t, NULL) == SH_OK);
    CHECK_EQ_U64(t.n, 0);
    CHECK_TOKENS(joined_html(DEF, "<p></p><!-- -->"), "");
    sh_tokens_free(&t);
}

static void test_rejects_misuse(void)
{
    sh_canon_opts o = { DEF, (sh_utf8_mode)7, SH_SIMD_AUTO };
    sh_tokens t = { 0 };
    sh_error e;
    CHECK(sh_canon_tokenize(&o, "a", 1, &t, &e) == SH_EINVAL);
    o.invalid = SH_UTF8_ERROR;
    CHECK(sh_canon_tokenize(&o, NULL, 1, &t, &e) == SH_EINVAL);
    CHECK(sh_canon_tokenize(NULL, "a", 1, &t, &e) == SH_EINVAL);
    sh_tokens_free(&t);
}

/* The canonical bytes of every token of a and b are the same. */
static int same_texts(const sh_tokens *a, const sh_tokens *b)
{
    size_t i;
    if (a->n != b->n)
        return 0;
    for (i = 0; i < a->n; i++)
        if (a->tok[i].len != b->tok[i].len ||
            memcmp(a->text + a->tok[i].off, b->text + b->tok[i].off, a->tok[i].len) != 0)
            return 0;
    return 1;
}

static void test_reusing_tokens_gives_identical_output(void)
{
    const char *in = "The quick <b>brown</b> fox &amp; caf\xc3\xa9 \xe6\x9d\xb1 42";
    sh_canon_opts o = { DEF | SH_CANON_HTML | SH_CANON_PUNCT, SH_UTF8_ERROR, SH_SIMD_AUTO };
    sh_tokens a = { 0 }, t = { 0 };
    CHECK(sh_canon_tokenize(&o, in, strlen(in), &a, NULL) == SH_OK);
    CHECK(sh_canon_tokenize(&o, in, strlen(in), &t, NULL) == SH_OK);
    CHECK(sh_canon_tokenize(&o, "other words entirely, longer than before", 40, &t, NULL) == SH_OK);
    CHECK(sh_canon_tokenize(&o, in, strlen(in), &t, NULL) == SH_OK);
    CHECK_EQ_U64(t.n, a.n);
    CHECK(t.n == a.n && memcmp(t.tok, a.tok, a.n * sizeof *a.tok) == 0);
    CHECK(same_texts(&t, &a));
    sh_tokens_free(&a);
    sh_tokens_free(&t);
}

/* A small deterministic generator, so failures reproduce. */
static uint64_t rnd_next(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static size_t random_input(uint64_t *s, char *buf, size_t cap)
{
    static const char *const pieces[] = {
        "a", "Z", "7", " ", ",", "<", ">", "&", "/", "!", "-", "'", "\"", "=", ";", "#", "x",
        "\xc3\xa9", "\xc3\x89", "\xe6\x9d\xb1", "\xf0\x9f\x98\x80", "\xcc\x81", "\xe0\xb8\xb4",
        "\xff", "\xc3", "\xe2\x82", "\x80", "\xed\xa0\x80", "\xc0\xaf",
        "<b>", "</p>", "<!--", "-->", "<script>", "</script>", "&amp;", "&#x41;", "&eacute;",
        "<![CDATA[", "]]>", "<?", "?>", "&#", "&nbsp", "<a href='"
    };
    size_t len = 0, want = (size_t)(rnd_next(s) % 80);
    while (len < want) {
        size_t k = (size_t)(rnd_next(s) % (sizeof pieces / sizeof *pieces + 1));
        const char *piece = k < sizeof pieces / sizeof *pieces ? pieces[k] : "\0";
        size_t m = k < sizeof pieces / sizeof *pieces ? strlen(piece) : 1;
        if (len + m > cap)
            break;
        memcpy(buf + len, piece, m);
        len += m;
    }
    return len;
}

static void test_random_inputs_give_tokens_in_bounds(void)
{
    uint64_t s = 0x9E3779B97F4A7C15u;
    char buf[512];
    sh_tokens t = { 0 };
    int i, bad = 0;
    for (i = 0; i < 2000; i++) {
        size_t n = random_input(&s, buf, sizeof buf);
        sh_canon_opts o = { (unsigned)(rnd_next(&s) & 31u), SH_UTF8_SKIP, SH_SIMD_AUTO };
        int html;
        for (html = 0; html < 2; html++) {
            o.flags = html ? (o.flags | SH_CANON_HTML) : (o.flags & ~(unsigned)SH_CANON_HTML);
            o.invalid = (sh_utf8_mode)(i % 3 == 0 ? SH_UTF8_LATIN1 : SH_UTF8_SKIP);
            if (sh_canon_tokenize(&o, buf, n, &t, NULL) != SH_OK || !tokens_in_bounds(&t, n))
                bad++;
        }
    }
    CHECK_EQ_U64(bad, 0);
    sh_tokens_free(&t);
}

/* The obvious tokenizer for ASCII text: maximal runs of [A-Za-z0-9], lowercased. */
static const char *reference_ascii(const char *in, size_t n, int numbers)
{
    static char buf[4096];
    size_t i = 0, w = 0;
    while (i < n) {
        size_t j = i, k;
        int letter = 0;
        while (j < n && ((in[j] >= 'a' && in[j] <= 'z') || (in[j] >= 'A' && in[j] <= 'Z') ||
                         (in[j] >= '0' && in[j] <= '9'))) {
            letter |= !(in[j] >= '0' && in[j] <= '9');
            j++;
        }
        if (j > i && (letter || numbers)) {
            if (w)
                buf[w++] = '|';
            for (k = i; k < j; k++)
                buf[w++] = (char)(in[k] >= 'A' && in[k] <= 'Z' ? in[k] + 32 : in[k]);
        }
        i = j + 1;
    }
    buf[w] = '\0';
    return buf;
}

static void test_ascii_fast_path_matches_reference(void)
{
    static const char alphabet[] = "abcXYZ0189 ,.-\t\n!?'\"()_@";
    uint64_t s = 12345;
    char in[200];
    int i, bad = 0;
    for (i = 0; i < 2000; i++) {
        size_t n = (size_t)(rnd_next(&s) % sizeof in), k;
        int numbers = (int)(rnd_next(&s) & 1);
        char want[4096];
        for (k = 0; k < n; k++)
            in[k] = alphabet[rnd_next(&s) % (sizeof alphabet - 1)];
        strcpy(want, reference_ascii(in, n, numbers));
        if (strcmp(joined_n(LOWER | (numbers ? SH_CANON_NUMBERS : 0), SH_UTF8_ERROR, in, n), want))
            bad++;
    }
    CHECK_EQ_U64(bad, 0);
}

/* Pieces of text whose tokenization is known in isolation: word bytes (with
 * their canonical form), digits, separators, and markup that is nothing. */
enum { PW, PD, PS, PN };
static const struct piece { const char *src, *canon; int kind, html_only; } pieces[] = {
    { "a", "a", PW, 0 }, { "Q", "q", PW, 0 }, { "7", "7", PD, 0 }, { "2024", "2024", PD, 0 },
    { "abcdefghij", "abcdefghij", PW, 0 }, { "ABCDEFGHIJKLMNOPQRSTU", "abcdefghijklmnopqrstu", PW, 0 },
    { " ", "", PS, 0 }, { "\n", "", PS, 0 }, { ", ", "", PS, 0 }, { ".", "", PS, 0 },
    { "\xc3\xa9", "\xc3\xa9", PW, 0 }, { "\xc3\x89", "\xc3\xa9", PW, 0 }, { "\xd0\x96", "\xd0\xb6", PW, 0 },
    { "\xc2\xa0", "", PS, 0 }, { "\xe2\x80\x94", "", PS, 0 },
    { "<i>", "", PN, 1 }, { "</B>", "", PN, 1 }, { "<!-- c -->", "", PN, 1 }, { "<br>", "", PS, 1 },
    { "<p class='x>y'>", "", PS, 1 }, { "&amp;", "", PS, 1 }, { "&nbsp;", "", PS, 1 },
    { "&eacute;", "\xc3\xa9", PW, 1 }, { "&#65;", "a", PW, 1 }, { "&#x39;", "9", PD, 1 },
};

static void test_fast_paths_match_a_piecewise_reference(void)
{
    uint64_t s = 777;
    char in[4096], want[4096];
    size_t want_off[512], want_src[512], want_len[512], want_tlen[512];
    sh_tokens t = { 0 };
    int round, bad = 0;
    for (round = 0; round < 3000; round++) {
        int html = round & 1, numbers = (round >> 1) & 1;
        sh_canon_opts o = { LOWER | (html ? SH_CANON_HTML : 0) | (numbers ? SH_CANON_NUMBERS : 0),
                            SH_UTF8_ERROR, SH_SIMD_AUTO };
        size_t n = 0, w = 0, nt = 0, k, count = (size_t)(rnd_next(&s) % 150);
        int in_word = 0, letter = 0;
        size_t tok_src = 0, tok_end = 0, tok_text = 0;
        for (k = 0; k <= count; k++) {
            const struct piece *pc;
            int kind;
            if (k < count) {
                pc = &pieces[rnd_next(&s) % (sizeof pieces / sizeof *pieces)];
                if (pc->html_only && !html)
                    continue;
                kind = pc->kind;
            } else {
                pc = NULL;
                kind = PS;
            }
            if (kind == PW || kind == PD) {
                if (!in_word) {
                    in_word = 1;
                    letter = 0;
                    tok_src = n;
                    tok_text = w;
                }
                letter |= kind == PW;
                memcpy(want + w, pc->canon, strlen(pc->canon));
                w += strlen(pc->canon);
                tok_end = n + strlen(pc->src);
            } else if (kind == PS && in_word) {
                in_word = 0;
                if (letter || numbers) {
                    want_src[nt] = tok_src;
                    want_len[nt] = tok_end - tok_src;
                    want_tlen[nt] = w - tok_text;
                    want_off[nt++] = tok_text;
                } else {
                    w = tok_text;
                }
            }
            if (pc) {
                memcpy(in + n, pc->src, strlen(pc->src));
                n += strlen(pc->src);
            }
        }
        if (sh_canon_tokenize(&o, in, n, &t, NULL) != SH_OK || t.n != nt) {
            bad++;
            continue;
        }
        for (k = 0; k < nt; k++)
            if (t.tok[k].src_off != want_src[k] || t.tok[k].src_len != want_len[k] ||
                t.tok[k].len != want_tlen[k] || memcmp(t.text + t.tok[k].off, want + want_off[k], want_tlen[k]) != 0)
                bad++;
    }
    CHECK_EQ_U64(bad, 0);
    sh_tokens_free(&t);
}

/* CPU seconds to tokenize in[0..n), the best of reps runs. */
static double cpu_seconds(const sh_canon_opts *o, const char *in, size_t n, sh_tokens *t, int reps, int *ok)
{
    double best = 1e30;
    int r;
    for (r = 0; r < reps; r++) {
        struct timespec a, b;
        double sec;
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &a);
        *ok &= sh_canon_tokenize(o, in, n, t, NULL) == SH_OK && tokens_in_bounds(t, n);
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &b);
        sec = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) * 1e-9;
        if (sec < best)
            best = sec;
    }
    return best;
}

/* Markup that never closes (an open tag, comment, entity or script) must not
 * make the tokenizer rescan: eight times the input takes about eight times the
 * CPU time, never the 64 times a quadratic scan would. The bound (24) leaves
 * room for cache effects and a loaded machine; CPU time, not wall time. */
static void test_pathological_markup_is_linear(void)
{
    static const char *const units[] = { "<", "<a", "<!", "<!--", "<?", "&#", "&amp", "&aaaaaaaaaaaa",
                                         "</scrip", "<a b='", "]]", "--", "\xe2\x82" };
    const size_t big = (size_t)4 << 20, small = big / 8;
    char *in = malloc(big + 16);
    sh_canon_opts o = { DEF | SH_CANON_HTML | SH_CANON_PUNCT, SH_UTF8_SKIP, SH_SIMD_AUTO };
    sh_tokens t = { 0 };
    size_t u;
    CHECK(in != NULL);
    if (!in)
        return;
    for (u = 0; u < sizeof units / sizeof *units; u++) {
        size_t m = strlen(units[u]), w, ws;
        double t_small, t_big;
        int ok = 1;
        for (w = 0; w + m <= big; w += m)
            memcpy(in + w, units[u], m);
        if (u == 8) /* everything after an open <script> */
            memcpy(in, "<script>", 8);
        ws = small - small % m;
        t_small = cpu_seconds(&o, in, ws, &t, 5, &ok);
        t_big = cpu_seconds(&o, in, w, &t, 3, &ok);
        CHECK(ok);
        if (t_small < 1e-4) /* below the clock's useful resolution: compare against 0.1 ms */
            t_small = 1e-4;
        if (t_big > 24 * t_small)
            fprintf(stderr, "  unit \"%s\": %zu bytes in %.4f s, %zu bytes in %.4f s\n", units[u], ws, t_small, w,
                    t_big);
        CHECK(t_big <= 24 * t_small);
    }
    sh_tokens_free(&t);
    free(in);
}

int main(void)
{
    RUN(test_splits_ascii_text_into_words);
    RUN(test_lowercases_only_when_asked);
    RUN(test_keeps_or_drops_numbers);
    RUN(test_keeps_or_drops_punctuation);
    RUN(test_token_spans_point_at_the_original_bytes);
    RUN(test_lowercases_utf8_letters);
    RUN(test_gives_one_token_per_ideograph);
    RUN(test_fold_normalizes_compatibility_case_and_marks);
    RUN(test_invalid_utf8_is_an_error_naming_the_byte);
    RUN(test_invalid_utf8_is_skipped_as_a_separator);
    RUN(test_invalid_utf8_is_read_as_latin1);
    RUN(test_html_strips_tags);
    RUN(test_html_block_tags_separate_and_inline_tags_join);
    RUN(test_html_drops_comments);
    RUN(test_html_drops_script_and_style_contents);
    RUN(test_html_decodes_entities);
    RUN(test_html_decodes_every_named_entity);
    RUN(test_html_entity_span_counts_whole);
    RUN(test_html_edge_cases);
    RUN(test_nul_bytes_are_separators);
    RUN(test_a_100mb_word_is_one_token);
    RUN(test_empty_input_gives_no_tokens);
    RUN(test_rejects_misuse);
    RUN(test_reusing_tokens_gives_identical_output);
    RUN(test_random_inputs_give_tokens_in_bounds);
    RUN(test_ascii_fast_path_matches_reference);
    RUN(test_fast_paths_match_a_piecewise_reference);
    RUN(test_pathological_markup_is_linear);
    return TEST_END();
}
