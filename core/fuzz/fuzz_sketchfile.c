/* Sketch files (core/sketchfile.c): the input is a file's bytes, taken as
 * it is and again with every checksum made right (header, each record, the
 * trailer), so that the fuzzer reaches the field checks behind them.
 * Invariants:
 *   - every sketch the reader hands out is one the sketch deserializer
 *     accepts (shingle.load would load it) and can be compared with the
 *     file's parameters;
 *   - a file read to its end without an error writes back, through the
 *     writer, to exactly the same bytes (when it was not compressed), and
 *     the records read back are the same;
 *   - an error names the file; the reader stays ended after it. */
#include <dirent.h>
#include <unistd.h>
#include <zlib.h>
#include "byteorder.h"
#include "fuzz.h"
#include "sketch.h"
#include "sketchfile.h"
#include "zio.h"

static char dir[64];

/* the scratch directory and what is left in it go when the fuzzer exits */
static void remove_dir(void)
{
    DIR *d;
    struct dirent *e;
    char p[128];
    if (!dir[0] || !(d = opendir(dir))) return;
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        unlink(p);
    }
    closedir(d);
    rmdir(dir);
}

static void check(const unsigned char *in, size_t n)
{
    sh_skfile_reader *r;
    sh_skfile_writer *w = NULL;
    sh_error err;
    sh_status st;
    sh_skkey key;
    const sh_sketch *sk;
    const char *meta;
    size_t meta_n;
    char path[96];
    int plain = sh_zio_kind(in, n) == SH_Z_PLAIN;
    uint64_t count = 0;
    if (sh_skfile_open_mem(in, n, "fuzz.skf", &r, &err) != SH_OK) {
        FUZZ_CHECK(strstr(err.msg, "fuzz.skf") != NULL || err.code == SH_ENOMEM);
        return;
    }
    meta = sh_skfile_meta(r, &meta_n);
    if (sh_skfile_params(r)) {
        const sh_sketch *p = sh_skfile_params(r);
        size_t sz = sh_sketch_serialized_size(p);
        unsigned char *ser = (unsigned char *)malloc(sz);
        sh_sketch *back;
        FUZZ_CHECK(p->n == 0);
        sh_sketch_serialize(p, ser);
        FUZZ_CHECK(sh_sketch_deserialize(ser, sz, &back, &err) == SH_OK);
        free(back);
        free(ser);
    }
    if (plain) {
        snprintf(path, sizeof path, "%s/back.skf", dir);
        FUZZ_CHECK(sh_skfile_create(path, &w, &err) == SH_OK);
        if (meta_n) FUZZ_CHECK(sh_skfile_set_meta(w, meta, meta_n, &err) == SH_OK);
    }
    for (;;) {
        st = sh_skfile_next(r, &key, &sk, &err);
        if (st != SH_OK) {
            FUZZ_CHECK(strstr(err.msg, "fuzz.skf") != NULL || err.code == SH_ENOMEM);
            FUZZ_CHECK(sh_skfile_next(r, &key, &sk, &err) == SH_OK && sk == NULL);
            break;
        }
        if (!sk) break;
        count++;
        FUZZ_CHECK(sh_skfile_read_count(r) == count);
        FUZZ_CHECK(sh_skfile_params(r) != NULL && sk->p.kind == sh_skfile_params(r)->p.kind);
        {
            size_t sz = sh_sketch_serialized_size(sk);
            unsigned char *ser = (unsigned char *)malloc(sz);
            sh_sketch *back;
            sh_estimate e;
            sh_sketch_serialize(sk, ser);
            st = sh_sketch_deserialize(ser, sz, &back, &err);
            if (st != SH_OK) fprintf(stderr, "record %llu: %s\n", (unsigned long long)count, err.msg);
            FUZZ_CHECK(st == SH_OK);
            FUZZ_CHECK(back->n == sk->n && (sk->n == 0 || memcmp(back->v, sk->v, 8 * sk->n) == 0));
            FUZZ_CHECK(sh_sketch_compatible(sh_skfile_params(r), back, &err) == SH_OK);
            FUZZ_CHECK(sh_sketch_estimate(back, back, &e, &err) == SH_OK);
            FUZZ_CHECK(e.resemblance >= 0 && e.resemblance <= 1);
            free(back);
            free(ser);
        }
        if (w) {
            st = sh_skfile_put(w, &key, sk, &err);
            if (st != SH_OK) fprintf(stderr, "put %llu: %s\n", (unsigned long long)count, err.msg);
            FUZZ_CHECK(st == SH_OK);
        }
    }
    if (w && st == SH_OK) {
        /* read to its end: the writer makes the same bytes */
        FILE *f;
        unsigned char *back;
        long sz;
        uint64_t wrote;
        FUZZ_CHECK(sh_skfile_commit(w, &wrote, &err) == SH_OK && wrote == count);
        f = fopen(path, "rb");
        FUZZ_CHECK(f != NULL);
        fseek(f, 0, SEEK_END);
        sz = ftell(f);
        fseek(f, 0, SEEK_SET);
        back = (unsigned char *)malloc(sz > 0 ? (size_t)sz : 1);
        FUZZ_CHECK(fread(back, 1, (size_t)sz, f) == (size_t)sz);
        fclose(f);
        if ((size_t)sz != n || memcmp(back, in, n) != 0) {
            size_t i = 0;
            while (i < n && i < (size_t)sz && back[i] == in[i]) i++;
            fprintf(stderr, "written back: %ld bytes, read %zu; first difference at byte %zu\n", sz, n, i);
            FUZZ_CHECK(!"a sketch file read whole writes back the same bytes");
        }
        free(back);
        unlink(path);
    } else if (w) {
        sh_skfile_abort(w);
    }
    sh_skfile_close(r);
}

/* in[0..n) with the checksums of the header, the records and the trailer
 * computed as a writer would (lengths taken as they are). */
static void fix_checksums(unsigned char *p, size_t n)
{
    size_t at, psize, msize;
    if (n < 28) return;
    psize = sh_load_le32(p + 16);
    msize = sh_load_le32(p + 20);
    if (psize > n || msize > n || 24 + psize + msize + 4 > n) return;
    at = 24 + psize + msize;
    sh_store_le32(p + at, (uint32_t)crc32(0L, p, (uInt)at));
    at += 4;
    while (at + 4 <= n) {
        uint32_t len = sh_load_le32(p + at);
        if (len == 0xffffffffu) {
            if (at + 24 <= n) sh_store_le32(p + at + 20, (uint32_t)crc32(0L, p + at + 4, 16));
            return;
        }
        if (len < 4 || len > n - at - 4) return;
        sh_store_le32(p + at + len, (uint32_t)crc32(0L, p + at + 4, (uInt)(len - 4)));
        at += 4 + (size_t)len;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    unsigned char *fixed;
    if (!dir[0]) {
        snprintf(dir, sizeof dir, "/dev/shm/shingle-fuzz-skf-XXXXXX");
        if (!mkdtemp(dir)) {
            snprintf(dir, sizeof dir, "/tmp/shingle-fuzz-skf-XXXXXX");
            FUZZ_CHECK(mkdtemp(dir) != NULL);
        }
        atexit(remove_dir);
    }
    check(data, size);
    fixed = (unsigned char *)malloc(size ? size : 1);
    if (size) memcpy(fixed, data, size);
    fix_checksums(fixed, size);
    if (size && memcmp(fixed, data, size) != 0) check(fixed, size);
    free(fixed);
    return 0;
}
