/* The index's document records (core/ixcheck.c, sh_ixdoc_decode): what
 * index.c reads back from LMDB before it trusts it. Invariants: a record
 * that decodes has exactly the size its header says, its URL inside it, its
 * values ascending; its sketch, under each kind of parameters, estimates
 * against itself without undefined behaviour, within [0, 1]. */
#include "fuzz.h"
#include "ixcheck.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    sh_ixdoc d;
    const char *url;
    size_t ul;
    sh_error err;
    int kind;
    if (sh_ixdoc_decode(data, size, 7, &d, &url, &ul, &err) != SH_OK) {
        FUZZ_CHECK(err.code == SH_EFORMAT);
        return 0;
    }
    FUZZ_CHECK(sizeof d + 8 * (size_t)d.n_values + d.url_len == size);
    FUZZ_CHECK(url == (const char *)data + sizeof d + 8 * (size_t)d.n_values && url + ul == (const char *)data + size);
    for (kind = SH_SKETCH_MIN; kind <= SH_SKETCH_FULL; kind++) {
        sh_sketch_params p;
        sh_sketch *sk = (sh_sketch *)malloc(sizeof *sk + 8 * ((size_t)d.n_values + 1));
        sh_estimate e;
        size_t i;
        memset(&p, 0, sizeof p);
        p.kind = (uint8_t)kind;
        p.k = 64;
        p.w = 10;
        p.s = 200;
        p.m = kind == SH_SKETCH_MOD || kind == SH_SKETCH_MINMOD ? 25 : 0;
        sh_ixdoc_sketch(&p, &d, data, sk);
        for (i = 1; i < sk->n; i++) FUZZ_CHECK(sk->v[i] > sk->v[i - 1]);
        FUZZ_CHECK(sh_sketch_estimate(sk, sk, &e, &err) == SH_OK);
        FUZZ_CHECK(e.resemblance >= 0 && e.resemblance <= 1 && e.contain_ab >= 0 && e.contain_ab <= 1);
        free(sk);
    }
    return 0;
}
