/* Link extraction from HTML and URL resolution.
 *
 * The link graph is what Cho et al. ("Finding replicated web collections",
 * section 2) compare between candidate collections: an arc from page a to
 * page b for every hyperlink. This unit turns a page into its out-links as
 * absolute, normalized URLs, so that the same target spelled differently
 * ("../x.html", "HTTP://Host:80/x.html", "x.html#top") becomes one string.
 *
 * URLs: RFC 3986. sh_url_resolve implements reference resolution (section
 * 5.2, with remove_dot_segments of 5.2.4) and, on request, the normalizations
 * of section 6.2.2/6.2.3 listed at SH_URL_NORMALIZE.
 *
 * HTML: a tolerant scanner, not a DOM. See docs/formats-warc-links.md for the
 * exact rules (which tags, which schemes are skipped, <base>, entities).
 *
 * Reentrant, no global state, never reads outside [ptr, ptr + len). */
#ifndef SHINGLE_LINKS_H
#define SHINGLE_LINKS_H

#include <stddef.h>
#include "error.h"

/* ---- URLs ------------------------------------------------------------------ */

/* The components of a URL reference (RFC 3986 appendix B), as spans of the
 * input. "Defined but empty" and "undefined" differ in RFC 3986 (a "?" with
 * nothing after it), hence the has_* flags. The host of an IPv6 literal keeps
 * its brackets. */
typedef struct sh_url_parts {
    size_t scheme_off, scheme_len;   /* without the ':' */
    size_t auth_off, auth_len;       /* authority: [userinfo@]host[:port], without "//" */
    size_t host_off, host_len;
    size_t port_off, port_len;       /* digits only, without the ':' (may be empty) */
    size_t path_off, path_len;
    size_t query_off, query_len;     /* without the '?' */
    size_t frag_off, frag_len;       /* without the '#' */
    unsigned char has_scheme, has_auth, has_port, has_query, has_frag;
} sh_url_parts;

/* Split url[0..n) into its components. Pure; never allocates.
 * Returns SH_OK, or SH_EFORMAT when the authority is malformed (an unclosed
 * '[' in the host, a port that is not all digits); p is then unspecified. */
sh_status sh_url_split(const char *url, size_t n, sh_url_parts *p, sh_error *err);

enum {
    /* lowercase scheme and host; drop the port when it is empty or the
     * default (http 80, https 443); an empty path with an authority becomes
     * "/"; percent-escapes get uppercase hex and escapes of unreserved
     * characters are decoded (RFC 3986 6.2.2.1, 6.2.2.2, 6.2.3); dot segments
     * are removed from every path, also one taken from the base unchanged. */
    SH_URL_NORMALIZE     = 1u << 0,
    SH_URL_DROP_FRAGMENT = 1u << 1   /* leave out "#fragment" */
};

/* The most bytes sh_url_resolve writes for a base of blen and a reference of
 * rlen bytes (and sh_url_normalize for a URL of rlen bytes, with blen 0). */
#define SH_URL_OUT_MAX(blen, rlen) ((blen) + (rlen) + 8)

/* Resolve the reference ref[0..rlen) against the absolute URL base[0..blen)
 * (RFC 3986 5.2.2, strict: a reference with a scheme is used as is, even when
 * it is the base's scheme). With flags 0 the result is exactly the RFC's; see
 * SH_URL_NORMALIZE and SH_URL_DROP_FRAGMENT. base may be NULL when ref is
 * absolute. Writes the result to out (not NUL-terminated) and its length to
 * *out_len; cap must be at least SH_URL_OUT_MAX(blen, rlen).
 * Returns SH_OK; SH_EINVAL if cap is too small; SH_EFORMAT if ref is relative
 * and base is missing or not absolute, or a malformed authority. */
sh_status sh_url_resolve(const char *base, size_t blen, const char *ref, size_t rlen,
                         unsigned flags, char *out, size_t cap, size_t *out_len,
                         sh_error *err);

/* Normalize the absolute URL url[0..n): sh_url_resolve(NULL, 0, url, n,
 * SH_URL_NORMALIZE | SH_URL_DROP_FRAGMENT, ...). cap >= SH_URL_OUT_MAX(0, n). */
sh_status sh_url_normalize(const char *url, size_t n, char *out, size_t cap,
                           size_t *out_len, sh_error *err);

/* ---- links ----------------------------------------------------------------- */

typedef enum sh_link_tag {
    SH_LINK_A = 0, SH_LINK_AREA, SH_LINK_LINK, SH_LINK_FRAME, SH_LINK_IFRAME
} sh_link_tag;

typedef struct sh_link {
    size_t off, len;         /* the resolved URL: sh_links.text[off .. off+len) */
    size_t tag_off;          /* offset in the page of the tag's '<' */
    size_t val_off, val_len; /* the raw attribute value in the page (before decoding) */
    sh_link_tag tag;
} sh_link;

/* Output buffers, reused across calls (they only grow). Zero-initialize before
 * first use; release with sh_links_free. */
typedef struct sh_links {
    sh_link *v;
    size_t n, cap;
    char *text;              /* resolved URLs back to back (not NUL-separated) */
    size_t text_len, text_cap;
    char *scratch;           /* private: decoded attribute values */
    size_t scratch_len, scratch_cap;
    size_t base_off, base_len;   /* private: <base href> in scratch, if any */
    int has_base;
} sh_links;

/* Extract the links of the HTML page html[0..n) whose URL is page_url[0..ulen)
 * (may be NULL or empty: then only absolute links are kept), in document
 * order, into out (its previous contents are discarded). Every URL is
 * resolved against the <base href> if the page has one, else the page URL,
 * with SH_URL_NORMALIZE | SH_URL_DROP_FRAGMENT. Links that cannot be resolved
 * are left out. Returns SH_OK or SH_ENOMEM (out is then valid but its
 * contents unspecified). Malformed HTML is never an error. */
sh_status sh_links_extract(const char *html, size_t n, const char *page_url, size_t ulen,
                           sh_links *out, sh_error *err);

void sh_links_free(sh_links *l);

#endif
