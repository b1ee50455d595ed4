/* Link extraction and URL resolution (core/links.c). The input is a page
 * URL (its first line, at most 300 bytes) and the HTML after it. Invariants:
 * every link is an absolute URL without a fragment, inside the output text,
 * whose tag and attribute lie inside the page in document order; a link
 * normalizes to itself (normalization is idempotent); resolving the page URL
 * against itself and then against the result is stable. */
#include "fuzz.h"
#include "links.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *s = (const char *)data;
    const char *nl = (const char *)memchr(s, '\n', size < 300 ? size : 300);
    size_t ulen = nl ? (size_t)(nl - s) : 0, n;
    const char *html = nl ? nl + 1 : s;
    sh_links ls;
    sh_error err;
    size_t i;
    n = size - (size_t)(html - s);
    memset(&ls, 0, sizeof ls);
    if (sh_links_extract(html, n, ulen ? s : NULL, ulen, &ls, &err) != SH_OK) {
        FUZZ_CHECK(err.code == SH_ENOMEM);
        sh_links_free(&ls);
        return 0;
    }
    for (i = 0; i < ls.n; i++) {
        const sh_link *l = &ls.v[i];
        sh_url_parts p;
        char *again;
        size_t alen;
        FUZZ_CHECK(l->off + l->len <= ls.text_len && l->len > 0);
        FUZZ_CHECK(l->tag_off < n && l->val_off + l->val_len <= n);
        if (i > 0) FUZZ_CHECK(l->tag_off >= ls.v[i - 1].tag_off);
        FUZZ_CHECK(memchr(ls.text + l->off, '#', l->len) == NULL);
        FUZZ_CHECK(sh_url_split(ls.text + l->off, l->len, &p, &err) == SH_OK && p.has_scheme);
        again = (char *)malloc(SH_URL_OUT_MAX(0, l->len));
        FUZZ_CHECK(sh_url_normalize(ls.text + l->off, l->len, again, SH_URL_OUT_MAX(0, l->len), &alen, &err) == SH_OK);
        FUZZ_CHECK(alen == l->len && memcmp(again, ls.text + l->off, alen) == 0);
        free(again);
    }
    if (ulen) {
        /* the page URL resolved against itself, then normalized again: stable */
        char *r1 = (char *)malloc(SH_URL_OUT_MAX(ulen, ulen)), *r2;
        size_t l1, l2;
        if (sh_url_resolve(s, ulen, s, ulen, SH_URL_NORMALIZE | SH_URL_DROP_FRAGMENT, r1, SH_URL_OUT_MAX(ulen, ulen), &l1, &err) ==
            SH_OK) {
            r2 = (char *)malloc(SH_URL_OUT_MAX(0, l1));
            FUZZ_CHECK(sh_url_normalize(r1, l1, r2, SH_URL_OUT_MAX(0, l1), &l2, &err) == SH_OK);
            FUZZ_CHECK(l2 == l1 && memcmp(r1, r2, l1) == 0);
            free(r2);
        }
        free(r1);
    }
    sh_links_free(&ls);
    return 0;
}
