/* Sketch deserialization (core/sketch.c). The input is taken as a sketch
 * string as it is, and again with its checksum made right (so the fuzzer
 * reaches the field checks behind it). Invariants: a sketch that loads
 * serializes back to exactly the same bytes; it resembles itself fully
 * (when it has values) and estimates against itself without undefined
 * behaviour; every estimate lies in [0, 1]. */
#include <zlib.h>
#include "byteorder.h"
#include "fuzz.h"
#include "sketch.h"

static void check(const unsigned char *in, size_t n)
{
    sh_sketch *a;
    sh_error err;
    unsigned char *out;
    sh_estimate e;
    if (sh_sketch_deserialize(in, n, &a, &err) != SH_OK) {
        FUZZ_CHECK(err.code == SH_EFORMAT || err.code == SH_ENOMEM);
        return;
    }
    FUZZ_CHECK(sh_sketch_serialized_size(a) == n);
    out = (unsigned char *)malloc(n);
    sh_sketch_serialize(a, out);
    FUZZ_CHECK(memcmp(out, in, n) == 0);
    free(out);
    FUZZ_CHECK(sh_sketch_estimate(a, a, &e, &err) == SH_OK);
    FUZZ_CHECK(e.resemblance >= 0 && e.resemblance <= 1 && e.contain_ab >= 0 && e.contain_ab <= 1);
    if (a->n > 0) FUZZ_CHECK(e.resemblance == 1.0);
    if (a->p.kind == SH_SKETCH_CLASS && a->p.cls < 63) {
        sh_sketch *r;
        FUZZ_CHECK(sh_sketch_reduce(a, a->p.cls + 1, &r, &err) == SH_OK);
        FUZZ_CHECK(r->n <= a->n);
        FUZZ_CHECK(sh_sketch_estimate(a, r, &e, &err) == SH_OK);
        FUZZ_CHECK(e.resemblance >= 0 && e.resemblance <= 1);
        free(r);
    }
    free(a);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    check(data, size);
    if (size >= 8) {
        unsigned char *fixed = (unsigned char *)malloc(size);
        memcpy(fixed, data, size);
        sh_store_le32(fixed + size - 4, (uint32_t)crc32(0L, fixed, (uInt)(size - 4)));
        check(fixed, size);
        free(fixed);
    }
    return 0;
}
