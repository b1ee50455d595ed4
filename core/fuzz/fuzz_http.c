/* HTTP responses inside WARC records (core/http.c): status line, header
 * fields, de-chunking, gzip and deflate decoding. The first input byte sets
 * the body limit. Invariants: SH_OK for any block (what cannot be read is a
 * warning); the decoded body is never longer than the limit and never NULL;
 * the raw headers lie inside the block; a status is 0 or a three-digit code;
 * every field is NUL-terminated; parsing again gives the same result. */
#include "fuzz.h"
#include "http.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    sh_http *h;
    sh_http_response r;
    sh_error err;
    size_t max, i, plen;
    char *block, *first;
    int status;
    if (size == 0) return 0;
    max = 16 + (size_t)data[0] * 64;
    block = (char *)malloc(size);
    memcpy(block, data + 1, size - 1);
    block[size - 1] = 0;
    FUZZ_CHECK(sh_http_new(&h, &err) == SH_OK);
    if (sh_http_parse(h, block, size - 1, max, &r, &err) != SH_OK) {
        FUZZ_CHECK(err.code == SH_ENOMEM);
        sh_http_free(h);
        free(block);
        return 0;
    }
    /* a decoded (gzip, deflate) body stops at the limit; a plain or de-chunked one is at most the block */
    FUZZ_CHECK(r.payload != NULL && r.payload_len <= (size - 1 > max ? size - 1 : max));
    FUZZ_CHECK(r.status == 0 || (r.status >= 100 && r.status <= 999));
    if (r.headers) FUZZ_CHECK(r.headers >= block && r.headers + r.headers_len <= block + size - 1);
    for (i = 0; i < r.nfields; i++) FUZZ_CHECK(r.fields[i].name && r.fields[i].value);
    status = r.status;
    plen = r.payload_len;
    first = (char *)malloc(plen ? plen : 1);
    memcpy(first, r.payload, plen);
    FUZZ_CHECK(sh_http_parse(h, block, size - 1, max, &r, &err) == SH_OK);
    FUZZ_CHECK(r.status == status && r.payload_len == plen && memcmp(r.payload, first, plen) == 0);
    free(first);
    sh_http_free(h);
    free(block);
    return 0;
}
