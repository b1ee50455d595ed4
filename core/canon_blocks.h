/* The block scanner of canon.c, once per instruction set: canon.c includes
 * this file after defining
 *   BLOCKS_FN        the function's name
 *   BLOCKS_TARGET    its target attribute (the instruction set)
 *   BLOCKS_CLASSIFY  classify64 for that instruction set (see canon.c)
 *   BLOCKS_RANGE     range64 for that instruction set (see canon.c)
 *   BLOCKS_TAGS      tag_masks for that instruction set (see canon.c)
 *   BLOCKS_LEVEL     the sh_simd level it runs at (the tag path's)
 *   BLOCKS_WORDS_VBMI  (optional) a block's words by words_vbmi (see canon.c)
 * Not a header of its own: it sees canon.c's statics. */

/* Plain ASCII words from position *pos, no word in progress (the byte before
 * *pos, if any, ended one): 64 bytes at a time, bit masks of the word bytes
 * (ASCII letters and digits) and of the bytes the masks cannot decide
 * (>= 0x80; '<' and '&' in HTML), one step per word by counting trailing
 * zeros. The canonical bytes of these words are the input's, lowercased, at
 * the same offsets: the block's image goes to text[i, i + 64) (reserved by
 * sh_canon_tokenize), so a token records where it is and nothing is copied
 * per word.
 *
 * The CJK ideographs of the common range (cjk_at) followed by what cannot
 * be a combining mark are found for the whole block by masks (I below)
 * and are tokens of their own in the same pass as the words. A byte the
 * masks cannot decide is looked at (stop_kind; a tag, the commonest
 * character references and a CJK ideograph of the common range followed by
 * ASCII or another, without a call: markup_tag, entity_fast, ideo_fast): a
 * separator beyond ASCII, markup, or
 * an entity for a separator ends the words before it and is skipped (its
 * bytes taken out of the word mask; the block's words are taken once its
 * last such byte is passed), and the scan goes on in the same block after it; any
 * other (a letter beyond ASCII, an entity for one, an inline tag right after
 * a word, which the word may continue past, invalid UTF-8, CDATA) stops the
 * scanner there, or at the start of the word that runs into it. A block only
 * ends the words that it sees end: the next block starts at the first word
 * it could not end (so no word straddles two blocks), and a word that fills
 * a whole block stops the scanner at its first byte. ascii_words takes a
 * word the scanner stops at byte by byte. Returns with *pos at a byte it
 * cannot handle (or at end). */
#define BLOCKS_CAT2(a, b) a##b
#define BLOCKS_CAT(a, b) BLOCKS_CAT2(a, b)
BLOCKS_TARGET CANON_HOT sh_status BLOCKS_CAT(BLOCKS_FN, _body)(canon *c, size_t *pos, size_t end, const int html)
{
    const unsigned char *p = c->p;
    sh_tokens *o = c->out;
    unsigned char *img = (unsigned char *)o->text;
    const int lower = c->low == ascii_lower;
    const int keep_numbers = (c->flags & SH_CANON_NUMBERS) != 0;
    /* ideographs by masks: not folded, as ideo_fast (folding leaves those
     * ideographs as they are, so this only keeps to its rule). In CDATA
     * (html 0 in an HTML document) the masks decide '<' and '&' where
     * ideo_fast leaves an ideograph before them to stop_kind: it ends
     * there either way, as they are punctuation there */
    const int ideos = !(c->flags & SH_CANON_FOLD);
    size_t i = *pos, nt = o->n;
    sh_status st = SH_OK;
    sh_token *tok;
    unsigned char *hd;

/* Tokens for the words and ideographs (I: their first bytes) of the block
 * that start and end in the bits of live (an ideograph is all in or all out).
 * E_ marks the byte after each one (a live token never ends at bit 63: a
 * word there goes on in the next block, an ideograph in I has its follower
 * in the block), so its end is a count of zeros without an addition. */
#define BLOCK_WORDS_ONE(live) do { \
    uint64_t S_ = ((A & ~(A << 1)) | I) & (live), E_ = (((A & ~(A >> 1)) | I << 2) & (live)) << 1; \
    while (S_) { \
        const unsigned a_ = (unsigned)__builtin_ctzll(S_), e_ = (unsigned)__builtin_ctzll(E_); \
        S_ &= S_ - 1; \
        E_ &= E_ - 1; \
        if (!keep_numbers && ((L >> a_) & (((uint64_t)2 << (e_ - a_ - 1)) - 1)) == 0) \
            continue; /* only digits */ \
        tok->src_off = tok->off = i + a_; \
        tok->src_len = tok->len = e_ - a_; \
        HEAD16(hd, img + i + a_, e_ - a_); \
        tok++; \
        hd += SH_TOKEN_HEAD; \
    } \
} while (0)
/* With BLOCKS_WORDS_VBMI, the same by words_vbmi, which keeps every token
 * (a word of digits only too: without SH_CANON_NUMBERS, BLOCK_WORDS_ONE). */
#ifdef BLOCKS_WORDS_VBMI
#define BLOCK_WORDS(live) do { \
    uint64_t SV_, EV_; \
    unsigned nv_; \
    if (!keep_numbers) { \
        BLOCK_WORDS_ONE(live); \
        break; \
    } \
    SV_ = ((A & ~(A << 1)) | I) & (live); \
    EV_ = (((A & ~(A >> 1)) | I << 2) & (live)) << 1; \
    nv_ = (unsigned)__builtin_popcountll(SV_); \
    if (nv_) { \
        words_vbmi(tok, hd, img + i, i, SV_, EV_, nv_); \
        tok += nv_; \
        hd += (size_t)nv_ * SH_TOKEN_HEAD; \
    } \
} while (0)
#else
#define BLOCK_WORDS(live) BLOCK_WORDS_ONE(live)
#endif
/* The first byte of the run of word bytes that ends at bit b (A's bit b set). */
#define RUN_START(b) (((~A & (((uint64_t)1 << (b)) - 1)) != 0) \
    ? 64 - (unsigned)__builtin_clzll(~A & (((uint64_t)1 << (b)) - 1)) : 0)

    tag_masks tm; /* html only */

    memset(&tm, 0, sizeof tm);
    while (i < end) {
        uint64_t A, L, X, I = 0;
        unsigned seg = 0; /* the block's bytes below seg are done */
        const size_t avail = end - i;
        const unsigned char *q = p + i; /* the block, or its copy followed by separators */
        unsigned char tail[64];
        if (o->cap - nt < 64) { /* a block holds at most 32 words and 64 ideographs */
            o->n = nt;
            if ((st = token_grow(c)) != SH_OK)
                break;
            nt = o->n; /* 0 when the tokens were flushed (streaming, canon.h) */
        }
        tok = o->tok + nt;
        hd = o->head + nt * SH_TOKEN_HEAD;
        if (avail >= 64) {
            BLOCKS_CLASSIFY(q, img + i, html, lower, &A, &L, &X);
            if (html)
                BLOCKS_TAGS(q, &tm);
        } else {
            /* the last bytes, followed by separators */
            unsigned char d[64];
            memcpy(tail, p + i, avail);
            memset(tail + avail, ' ', 64 - avail);
            q = tail;
            BLOCKS_CLASSIFY(q, d, html, lower, &A, &L, &X);
            if (html)
                BLOCKS_TAGS(q, &tm);
            memcpy(img + i, d, avail);
        }
        if (X && ideos && (!html || BLOCKS_RANGE(q, 0x80, 128))) {
            /* I: the ideographs U+4E00..U+9FA5 (as cjk_at: E4 B8 80 ..
             * E9 BE A5) whose follower is in the block and cannot be a
             * combining mark (as ideo_fast and stop_kind decide): an ASCII
             * byte the masks decide, another of them, U+FF00..U+FF7F
             * (EF BC/BD xx) or U+3000..U+3029 (E3 80 80..A9), none of them
             * a mark in any Unicode version. They leave X: each is a token
             * of its own, between the words around it */
            const uint64_t cont = BLOCKS_RANGE(q, 0x80, 64), e4 = BLOCKS_RANGE(q, 0xE4, 1), e9 = BLOCKS_RANGE(q, 0xE9, 1);
            const uint64_t in = BLOCKS_RANGE(q, 0xE4, 6) & (cont >> 1) & (cont >> 2)
                & ~(e4 & ~(BLOCKS_RANGE(q, 0xB8, 8) >> 1))
                & ~(e9 & ~((BLOCKS_RANGE(q, 0x80, 0x3E) >> 1) | (BLOCKS_RANGE(q, 0xBE, 1) >> 1 & BLOCKS_RANGE(q, 0x80, 0x26) >> 2)));
            const uint64_t decided = ~X & (avail >= 64 ? ~(uint64_t)0 : ((uint64_t)1 << avail) - 1);
            const uint64_t ok = decided | in
                | (BLOCKS_RANGE(q, 0xEF, 1) & BLOCKS_RANGE(q, 0xBC, 2) >> 1 & cont >> 2)
                | (BLOCKS_RANGE(q, 0xE3, 1) & BLOCKS_RANGE(q, 0x80, 1) >> 1 & BLOCKS_RANGE(q, 0x80, 0x2A) >> 2);
            I = in & ok >> 3;
            X &= ~(I | I << 1 | I << 2);
            L |= I; /* no number */
        }
        for (;;) {
            unsigned x, lim;
            size_t next;
            int kind, adj;
            if (!X) {
                /* no byte left to decide: the words up to the last one, which
                 * may go on in the next block */
                lim = (A >> 63) ? RUN_START(63) : 64;
                BLOCK_WORDS(lim == 64 ? ~(uint64_t)0 : ((uint64_t)1 << lim) - 1);
                nt = (size_t)(tok - o->tok);
                if (lim == 64)
                    i = avail > 64 ? i + 64 : end;
                else if (lim > 0)
                    i += lim;
                else
                    goto out; /* a word of 64 bytes or more */
                break;
            }
            x = (unsigned)__builtin_ctzll(X);
            adj = x > 0 && ((A >> (x - 1)) & 1); /* no byte of markup passed is in A */
            if (html && opens_tag(p, i + x, end)) {
                /* a tag (most bytes this scanner leaves in a page): from the
                 * block's masks, else markup's tag path inlined */
                int mk = tag_in_block(&tm, A, p, i, x, end, adj, X, &next);
                if (mk + !adj >= MK_ENDS) {
                    /* one that ends the words before it, follows no
                     * word, or (inline) is followed by a separator or
                     * punctuation in the block (tag_in_block answers
                     * MK_ENDS for those two without the kind): its bytes
                     * leave the masks as below, without
                     * the branches on its kind (one test: the next tag
                     * does not wait for this one's name) */
                    const uint64_t cover = ((uint64_t)2 << (next - 1 - i)) - ((uint64_t)1 << x);
                    A &= ~cover;
                    X &= ~cover;
                    I &= ~cover; /* ideographs in its attributes */
                    continue;
                }
                if (mk == MK_KEEPS) {
                    /* an inline tag right after a word, not followed by a
                     * separator: mostly by more tags ("w</a></li>"). The
                     * tags that follow it in the block are read from the
                     * masks as keeps_then_ends would read them: one that
                     * ends words, or an inline one followed by a separator
                     * or punctuation (tag_in_block's MK_ENDS with adj set),
                     * ends the word, and the tags up to it leave the masks
                     * at once; another inline one: the next; anything else
                     * (text, a comment, a tag leaving the block, 7 hops,
                     * keeps_then_ends's 8 with the follower's) is
                     * keeps_then_ends's, as before */
                    size_t at = next, past;
                    int hops, then = MK_KEEPS;
                    for (hops = 0; hops < 7 && then == MK_KEEPS; hops++, at = past) {
                        const unsigned y = (unsigned)(at - i);
                        if (!(opens_tag(p, at, end) && y < 64))
                            break;
                        then = tag_in_block(&tm, A, p, i, y, end, 1, X, &past);
                    }
                    if (then == MK_ENDS) {
                        const uint64_t cover = ((uint64_t)2 << (past - 1 - i)) - ((uint64_t)1 << x);
                        A &= ~cover;
                        X &= ~cover;
                        I &= ~cover;
                        continue;
                    }
                }
                if (mk < 0)
                    mk = markup_tag(BLOCKS_LEVEL, p, i + x, end, &next);
                kind = mk == MK_KEEPS ? STOP_KEEPS : STOP_ENDS;
            } else if (p[i + x] == '&' ? (kind = entity_fast(p, i + x, end, &next)) < 0
                     : (p[i + x] < 0xE4 || (kind = ideo_fast(c, i + x, end, &next)) < 0))
                kind = stop_kind(c, i + x, end, &next);
            /* markup that does not end a word (an inline tag, a comment)
             * right after one, followed by an ASCII separator or
             * punctuation, or by more such markup and then one of those, or
             * by markup that ends words: the word ends there all the same,
             * and its source span and bytes are what the markup leaves out,
             * so it ends before the markup (as "fn</span> x" or
             * "f</a></code>)" in highlighted code) */
            if (kind == STOP_KEEPS && adj)
                kind = keeps_then_ends(c, next, end) ? STOP_ENDS : STOP_KEEPS;
            if (kind == STOP_OTHER || (kind == STOP_KEEPS && adj)) {
                lim = adj ? RUN_START(x - 1) : x;
                BLOCK_WORDS(((uint64_t)1 << lim) - 1);
                nt = (size_t)(tok - o->tok);
                i += lim;
                goto out;
            }
            /* the byte ends every word before it. The words before it are
             * taken here only before an ideograph (its token comes after
             * them) or when the scan leaves the block; else the bytes it
             * covers leave A (so that they end the words on either side)
             * and the words are taken with the block's others: one pass
             * over the words of a block, not one per tag */
            if (kind == STOP_IDEO) {
                /* a token of its own, its bytes as they are: the block's
                 * image has them (bytes >= 0x80 unchanged), unless it
                 * reaches past the block (copied then) */
                const size_t a = i + x, len = next - a;
                BLOCK_WORDS(((uint64_t)1 << x) - 1);
                if (next > i + 64)
                    memcpy(img + a, p + a, len);
                tok->src_off = tok->off = a;
                tok->src_len = tok->len = len;
                HEAD16(hd, img + a, len);
                tok++;
                hd += SH_TOKEN_HEAD;
                nt = (size_t)(tok - o->tok);
                if (next - i >= 64 || next >= end) {
                    i = next;
                    break;
                }
                seg = (unsigned)(next - i);
                A &= ~(uint64_t)0 << seg;
                I &= ~(uint64_t)0 << seg;
            } else {
                if (next - i >= 64 || next >= end) {
                    BLOCK_WORDS(((uint64_t)1 << x) - 1);
                    nt = (size_t)(tok - o->tok);
                    i = next;
                    break;
                }
                seg = (unsigned)(next - i);
                A &= ~((((uint64_t)1 << seg) - 1) & (~(uint64_t)0 << x));
                I &= ~((((uint64_t)1 << seg) - 1) & (~(uint64_t)0 << x)); /* in a tag's attributes */
            }
            X &= ~(uint64_t)0 << seg;
        }
    }
out:
    o->n = nt;
    *pos = i;
    return st;
#undef BLOCK_WORDS
#undef BLOCK_WORDS_ONE
#undef RUN_START
}

/* The scanner compiled twice, for HTML and for plain text (html a
 * constant in each: the text loop carries none of the tag code, and each
 * loop gets its own registers; 0.03-0.04 cycles a byte off either set). */
BLOCKS_TARGET __attribute__((noinline)) static sh_status BLOCKS_CAT(BLOCKS_FN, _html)(canon *c, size_t *pos, size_t end)
{
    return BLOCKS_CAT(BLOCKS_FN, _body)(c, pos, end, 1);
}

BLOCKS_TARGET __attribute__((noinline)) static sh_status BLOCKS_CAT(BLOCKS_FN, _text)(canon *c, size_t *pos, size_t end)
{
    return BLOCKS_CAT(BLOCKS_FN, _body)(c, pos, end, 0);
}

BLOCKS_TARGET static sh_status BLOCKS_FN(canon *c, size_t *pos, size_t end, int html)
{
    return html ? BLOCKS_CAT(BLOCKS_FN, _html)(c, pos, end) : BLOCKS_CAT(BLOCKS_FN, _text)(c, pos, end);
}

#undef BLOCKS_CAT
#undef BLOCKS_CAT2

#undef BLOCKS_FN
#undef BLOCKS_TARGET
#undef BLOCKS_CLASSIFY
#undef BLOCKS_RANGE
#undef BLOCKS_TAGS
#undef BLOCKS_LEVEL
#undef BLOCKS_WORDS_VBMI
