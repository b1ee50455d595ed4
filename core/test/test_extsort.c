/* Tests for core/extsort: the radix sort and the external sort against qsort,
 * run files rejected when changed on disk, I/O errors reported, memory kept
 * within the budget. Throughput figures are in bench/extsort_bench.c. */
#include "extsort.h"
#include "test.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif
#ifndef UNDER_ASAN
#define UNDER_ASAN 0
#endif

/* ------------------------------------------------------------- helpers */

static uint64_t splitmix(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15u);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
    return z ^ (z >> 31);
}

static void put_be(unsigned char *p, uint64_t v, size_t n)
{
    while (n-- > 0) {
        p[n] = (unsigned char)v;
        v >>= 8;
    }
}

static uint64_t get_be(const unsigned char *p, size_t n)
{
    uint64_t v = 0;
    size_t i;
    for (i = 0; i < n; i++)
        v = v << 8 | p[i];
    return v;
}

/* Record i: a key of min(ks, 8) bytes (random, or random mod distinct if
 * distinct != 0) padded to ks bytes, then i big-endian in the rest, so that a
 * full-record memcmp orders by (key, input position): the stable order. */
static void make_record(unsigned char *r, size_t rs, size_t ks, uint64_t i, uint64_t *seed,
                        uint64_t distinct)
{
    uint64_t k = splitmix(seed);
    size_t kb = ks < 8 ? ks : 8;
    if (distinct)
        k %= distinct;
    memset(r, 0, rs);
    put_be(r, k, kb);
    if (ks > 8)
        put_be(r + 8, k * 31, ks - 8 < 8 ? ks - 8 : 8);
    if (rs > ks)
        put_be(r + ks, i, rs - ks < 8 ? rs - ks : 8);
}

static unsigned char *make_records(size_t n, size_t rs, size_t ks, uint64_t seed, uint64_t distinct)
{
    unsigned char *a = malloc(n * rs + 1);
    size_t i;
    for (i = 0; i < n; i++)
        make_record(a + i * rs, rs, ks, i, &seed, distinct);
    return a;
}

static size_t cmp_size;  /* qsort has no context argument */

static int cmp_full(const void *a, const void *b)
{
    return memcmp(a, b, cmp_size);
}

static unsigned char *qsorted(const unsigned char *a, size_t n, size_t rs)
{
    unsigned char *b = malloc(n * rs + 1);
    memcpy(b, a, n * rs);
    cmp_size = rs;
    qsort(b, n, rs, cmp_full);
    return b;
}

static sh_extsort_config config(size_t rs, size_t ks, size_t budget)
{
    sh_extsort_config c;
    memset(&c, 0, sizeof c);
    c.record_size = rs;
    c.key_size = ks;
    c.memory_budget = budget;
    return c;
}

/* Adds the n records in uneven chunks, finishes, reads in uneven chunks into
 * out (room for n records). Returns the first failing status. */
static sh_status ext_sort(const sh_extsort_config *c, const unsigned char *in, size_t n,
                          unsigned char *out, size_t *n_out, sh_extsort_stats *stats, sh_error *err)
{
    sh_extsort *s;
    sh_status st;
    size_t i = 0, got, total = 0, chunk;
    uint64_t seed = n;
    *n_out = 0;
    if ((st = sh_extsort_new(&s, c, err)) != SH_OK)
        return st;
    while (i < n) {
        chunk = 1 + splitmix(&seed) % 50000;
        if (chunk > n - i)
            chunk = n - i;
        if ((st = sh_extsort_add(s, in + i * c->record_size, chunk, err)) != SH_OK)
            goto out;
        i += chunk;
    }
    if ((st = sh_extsort_finish(s, err)) != SH_OK)
        goto out;
    for (;;) {
        chunk = 1 + splitmix(&seed) % 30000;
        if (chunk > n - total)
            chunk = n - total + 1;  /* room for one more: must get 0 at the end */
        if ((st = sh_extsort_read(s, out + total * c->record_size, chunk, &got, err)) != SH_OK)
            goto out;
        if (got == 0)
            break;
        total += got;
    }
out:
    *n_out = total;
    if (stats)
        sh_extsort_get_stats(s, stats);
    sh_extsort_free(s);
    return st;
}

/* Sorts n generated records with budget and checks the result equals qsort's. */
static void check_against_qsort(size_t n, size_t rs, size_t ks, size_t budget, uint64_t distinct,
                                unsigned fan, sh_extsort_stats *stats)
{
    unsigned char *in = make_records(n, rs, ks, 42 + n + rs, distinct);
    unsigned char *want = qsorted(in, n, rs);
    unsigned char *got = malloc(n * rs + rs);
    sh_extsort_config c = config(rs, ks, budget);
    sh_error err;
    size_t m;
    sh_status st;
    c.max_fan_in = fan;
    st = ext_sort(&c, in, n, got, &m, stats, &err);
    if (st != SH_OK)
        fprintf(stderr, "ext_sort: %s\n", err.msg);
    CHECK(st == SH_OK);
    CHECK_EQ_U64(m, n);
    CHECK(m == n && memcmp(got, want, n * rs) == 0);
    free(in);
    free(want);
    free(got);
}

static int dir_exists(const char *p)
{
    struct stat sb;
    return stat(p, &sb) == 0 && S_ISDIR(sb.st_mode);
}

static char *make_temp_dir(void)
{
    char *t = malloc(64);
    strcpy(t, "/tmp/test-extsort-XXXXXX");
    if (!mkdtemp(t)) {
        free(t);
        return NULL;
    }
    return t;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static long max_rss_kb(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss;
}

/* ----------------------------------------------------------- radix sort */

static void radix_sort_matches_qsort_for_record_and_key_sizes(void)
{
    static const size_t ns[] = { 0, 1, 2, 3, 24, 25, 100, 1000, 30000, 200000 };
    static const size_t shapes[][2] = { { 8, 8 }, { 12, 8 }, { 16, 8 }, { 12, 12 }, { 7, 3 }, { 5, 1 },
                                        { 20, 16 } };
    size_t i, j, d;
    for (d = 0; d < 3; d++) {
        uint64_t distinct = d == 0 ? 0 : d == 1 ? 7 : 5000;
        for (j = 0; j < sizeof shapes / sizeof shapes[0]; j++) {
            for (i = 0; i < sizeof ns / sizeof ns[0]; i++) {
                size_t n = ns[i], rs = shapes[j][0], ks = shapes[j][1];
                unsigned char *a = make_records(n, rs, ks, 7 * n + rs, distinct);
                unsigned char *aux = malloc(n * rs + 1);
                unsigned char *want = qsorted(a, n, rs);
                sh_radix_sort(a, aux, n, rs, ks);
                if (memcmp(a, want, n * rs) != 0)
                    fprintf(stderr, "radix sort differs: n=%zu rs=%zu ks=%zu distinct=%llu\n", n, rs,
                            ks, (unsigned long long)distinct);
                CHECK(memcmp(a, want, n * rs) == 0);
                free(a);
                free(aux);
                free(want);
            }
        }
    }
}

static void radix_sort_orders_big_endian_keys_numerically(void)
{
    uint64_t vals[] = { 0xFFFFFFFFFFFFFFFFu, 1, 256, 0, 0x0100000000000000u, 255, 0x00FF000000000000u };
    unsigned char a[7 * 8], aux[7 * 8];
    size_t i;
    for (i = 0; i < 7; i++)
        put_be(a + 8 * i, vals[i], 8);
    sh_radix_sort(a, aux, 7, 8, 8);
    for (i = 1; i < 7; i++)
        CHECK(get_be(a + 8 * (i - 1), 8) < get_be(a + 8 * i, 8));
    CHECK_EQ_U64(get_be(a, 8), 0);
    CHECK_EQ_U64(get_be(a + 48, 8), 0xFFFFFFFFFFFFFFFFu);
}

/* ---------------------------------------------------------- extsort */

static void sorts_empty_input_to_nothing_without_files(void)
{
    sh_extsort_config c = config(12, 8, 1 << 20);
    sh_extsort *s;
    unsigned char out[12];
    size_t got = 99;
    CHECK(sh_extsort_new(&s, &c, NULL) == SH_OK);
    CHECK(sh_extsort_add(s, NULL, 0, NULL) == SH_OK);
    CHECK(sh_extsort_finish(s, NULL) == SH_OK);
    CHECK(sh_extsort_read(s, out, 1, &got, NULL) == SH_OK);
    CHECK_EQ_U64(got, 0);
    CHECK(sh_extsort_run_dir(s) == NULL);
    sh_extsort_free(s);
}

static void sorts_in_memory_without_writing_a_file(void)
{
    sh_extsort_stats st;
    check_against_qsort(100000, 12, 8, 8u << 20, 0, 0, &st);
    CHECK_EQ_U64(st.runs_spilled, 0);
    CHECK_EQ_U64(st.bytes_written, 0);
    CHECK_EQ_U64(st.final_fan_in, 0);
    CHECK(st.peak_memory <= 8u << 20);
}

static void sorts_several_runs_like_qsort(void)
{
    sh_extsort_stats st;
    /* 4 MB budget: runs of 2 MB (174762 records) */
    check_against_qsort(1000000, 12, 8, 4u << 20, 0, 0, &st);
    CHECK_EQ_U64(st.runs_spilled, 6);
    CHECK_EQ_U64(st.intermediate_merges, 0);
    CHECK_EQ_U64(st.final_fan_in, 6);
    CHECK_EQ_U64(st.records_out, 1000000);
    CHECK(st.peak_memory <= 4u << 20);
    /* one record over the buffer: two runs */
    check_against_qsort((4u << 20) / 24 + 1, 12, 8, 4u << 20, 0, 0, &st);
    CHECK_EQ_U64(st.runs_spilled, 2);
    /* exactly the buffer: in memory */
    check_against_qsort((4u << 20) / 24, 12, 8, 4u << 20, 0, 0, &st);
    CHECK_EQ_U64(st.runs_spilled, 0);
}

static void sorts_many_runs_with_intermediate_merge_passes(void)
{
    sh_extsort_stats st;
    /* the smallest budget: 5461 records per run, 184 runs, 4 merged at the end */
    check_against_qsort(1000000, 12, 8, SH_EXTSORT_MIN_BUDGET, 0, 0, &st);
    CHECK_EQ_U64(st.runs_spilled, 184);
    CHECK(st.intermediate_merges > 50);
    CHECK(st.final_fan_in <= 4);
    CHECK(st.peak_memory <= SH_EXTSORT_MIN_BUDGET);
    /* fan-in 2: a binary merge tree, odd run counts */
    check_against_qsort(300001, 12, 8, 1u << 20, 0, 2, &st);
    CHECK(st.intermediate_merges > 0);
    CHECK_EQ_U64(st.final_fan_in, 2);
    check_against_qsort(300001, 12, 8, 1u << 20, 0, 3, &st);
    CHECK_EQ_U64(st.final_fan_in, 3);
    /* each record read about log_fan(runs) + 1 times */
    CHECK(st.bytes_read < 5u * 300001 * 12);
}

static void sorts_record_sizes_8_12_16_and_odd_ones(void)
{
    sh_extsort_stats st;
    check_against_qsort(500000, 8, 8, 1u << 20, 0, 0, &st);
    CHECK(st.runs_spilled > 1);
    check_against_qsort(500000, 12, 8, 1u << 20, 0, 0, &st);
    check_against_qsort(500000, 16, 8, 1u << 20, 0, 0, &st);
    check_against_qsort(300000, 12, 12, 1u << 20, 0, 0, &st);
    check_against_qsort(200000, 7, 3, 1u << 20, 0, 0, &st);
    check_against_qsort(100000, 100, 10, 1u << 20, 0, 0, &st);
    CHECK(st.runs_spilled > 1);
}

static void keeps_equal_keys_in_input_order_across_runs(void)
{
    sh_extsort_stats st;
    /* the payload is the input position, so matching qsort on whole records
     * means equal keys came out in input order */
    check_against_qsort(400000, 12, 8, 256u << 10, 7, 0, &st);
    CHECK(st.intermediate_merges > 0);
    check_against_qsort(400000, 16, 8, 1u << 20, 1000, 0, &st);
    check_against_qsort(200000, 12, 8, 1u << 20, 1, 0, &st);
    CHECK(st.runs_spilled > 1);
}

static void sorts_a_few_million_records_like_qsort(void)
{
    sh_extsort_stats st;
    check_against_qsort(3000000, 12, 8, 16u << 20, 0, 0, &st);
    CHECK_EQ_U64(st.runs_spilled, 5);
    CHECK(st.peak_memory <= 16u << 20);
}

/* Records <u64 key, u32 count>: combine adds the counts. */
static void add_counts(void *acc, const void *rec, void *ud)
{
    unsigned char *a = acc;
    const unsigned char *r = rec;
    (void)ud;
    put_be(a + 8, get_be(a + 8, 4) + get_be(r + 8, 4), 4);
}

static void combines_equal_keys_in_runs_and_merges(void)
{
    const size_t n = 600000, distinct = 20000;
    unsigned *freq = calloc(distinct, sizeof *freq);
    unsigned char *in = malloc(n * 12), *out = malloc(n * 12 + 12);
    uint64_t seed = 5;
    size_t i, m, budgets[3] = { 128u << 10, 1u << 20, 64u << 20 };
    size_t b;
    for (i = 0; i < n; i++) {
        uint64_t k = splitmix(&seed) % distinct;
        freq[k]++;
        put_be(in + 12 * i, k * 1000003u, 8);
        put_be(in + 12 * i + 8, 1, 4);
    }
    for (b = 0; b < 3; b++) {
        sh_extsort_config c = config(12, 8, budgets[b]);
        sh_extsort_stats st;
        sh_error err;
        int ok = 1;
        c.combine = add_counts;
        CHECK(ext_sort(&c, in, n, out, &m, &st, &err) == SH_OK);
        CHECK_EQ_U64(m, distinct);
        for (i = 0; i < m && i < distinct; i++)
            ok &= get_be(out + 12 * i, 8) == i * 1000003u && get_be(out + 12 * i + 8, 4) == freq[i];
        CHECK(ok);
        if (b == 0)
            CHECK(st.intermediate_merges > 0);
        if (b == 2)
            CHECK_EQ_U64(st.runs_spilled, 0);
    }
    free(freq);
    free(in);
    free(out);
}

static void unique_mode_keeps_the_first_record_of_each_key(void)
{
    const size_t n = 300000;
    unsigned char *in = make_records(n, 12, 8, 11, 3000);
    unsigned char *out = malloc(n * 12 + 12), *want = qsorted(in, n, 12);
    sh_extsort_config c = config(12, 8, 256u << 10);
    size_t m, i, w = 0;
    int ok = 1;
    c.combine = sh_extsort_keep_first;
    CHECK(ext_sort(&c, in, n, out, &m, NULL, NULL) == SH_OK);
    /* qsort's stable order: the first of each key has the smallest position */
    for (i = 0; i < n; i++) {
        if (i > 0 && memcmp(want + 12 * i, want + 12 * (i - 1), 8) == 0)
            continue;
        ok &= w < m && memcmp(out + 12 * w, want + 12 * i, 12) == 0;
        w++;
    }
    CHECK(ok);
    CHECK_EQ_U64(m, w);
    free(in);
    free(out);
    free(want);
}

static uint64_t le(const unsigned char *p, size_t n)
{
    uint64_t v = 0;
    while (n-- > 0)
        v = v << 8 | p[n];
    return v;
}

/* Pins docs/formats-runs.md: field offsets, byte order, checksums. */
static void writes_run_files_in_the_documented_layout(void)
{
    const size_t per_run = SH_EXTSORT_MIN_BUDGET / 24, n = 2 * per_run + 1;
    const size_t size = 32 + per_run * 12 + 8;
    char *tmp = make_temp_dir(), path[512];
    unsigned char *in = make_records(n, 12, 8, 77, 0), *want = qsorted(in, per_run, 12);
    unsigned char *f = malloc(size + 1);
    sh_extsort_config c = config(12, 8, SH_EXTSORT_MIN_BUDGET);
    sh_extsort *s;
    FILE *fp;
    c.temp_dir = tmp;
    CHECK(crc32(0, (const unsigned char *)"123456789", 9) == 0xCBF43926u);  /* the CRC variant */
    CHECK(sh_extsort_new(&s, &c, NULL) == SH_OK);
    CHECK(sh_extsort_add(s, in, n, NULL) == SH_OK);
    snprintf(path, sizeof path, "%s/run-000001", sh_extsort_run_dir(s));
    fp = fopen(path, "rb");
    CHECK(fp != NULL);
    if (fp) {
        CHECK_EQ_U64(fread(f, 1, size + 1, fp), size);
        fclose(fp);
        CHECK(memcmp(f, "SHRUN\0\0\1", 8) == 0);
        CHECK_EQ_U64(le(f + 8, 4), 1);
        CHECK_EQ_U64(le(f + 12, 4), 12);
        CHECK_EQ_U64(le(f + 16, 4), 8);
        CHECK_EQ_U64(le(f + 20, 4), 0);
        CHECK_EQ_U64(le(f + 24, 8), per_run);
        CHECK(memcmp(f + 32, want, per_run * 12) == 0);
        CHECK_EQ_U64(le(f + 32 + per_run * 12, 4), crc32(0, f + 32, (uInt)(per_run * 12)));
        CHECK_EQ_U64(le(f + 36 + per_run * 12, 4), crc32(0, f, 32));
    }
    CHECK(sh_extsort_finish(s, NULL) == SH_OK);
    sh_extsort_free(s);
    CHECK(rmdir(tmp) == 0);
    free(tmp);
    free(in);
    free(want);
    free(f);
}

/* Adds n records of several runs into a sorter writing under dir; returns it. */
static sh_extsort *sorter_with_runs(const char *dir, size_t n)
{
    sh_extsort_config c = config(12, 8, 1u << 20);
    sh_extsort *s = NULL;
    unsigned char *in = make_records(n, 12, 8, 99, 0);
    c.temp_dir = dir;
    CHECK(sh_extsort_new(&s, &c, NULL) == SH_OK);
    CHECK(sh_extsort_add(s, in, n, NULL) == SH_OK);
    free(in);
    return s;
}

/* Finishes and reads everything; returns the first error. */
static sh_status drain(sh_extsort *s, sh_error *err)
{
    unsigned char out[12 * 4096];
    size_t got;
    sh_status st = sh_extsort_finish(s, err);
    while (st == SH_OK) {
        st = sh_extsort_read(s, out, 4096, &got, err);
        if (got == 0)
            break;
    }
    return st;
}

static void flip_byte(const char *path, long off)
{
    FILE *f = fopen(path, "r+b");
    int c;
    CHECK(f != NULL);
    if (!f)
        return;
    fseek(f, off, SEEK_SET);
    c = fgetc(f);
    fseek(f, off, SEEK_SET);
    fputc(c ^ 0x10, f);
    fclose(f);
}

enum { FLIP_PAYLOAD, FLIP_MAGIC, FLIP_RECORD_SIZE, FLIP_COUNT, FLIP_TRAILER, TRUNCATE, FOREIGN };

static void check_damaged_run_rejected(int how)
{
    char *tmp = make_temp_dir();
    sh_extsort *s = sorter_with_runs(tmp, 200000);  /* 43690 records per run: 5 runs */
    char path[512], rundir[256];
    sh_error err;
    sh_status st;
    struct stat sb;

    snprintf(rundir, sizeof rundir, "%s", sh_extsort_run_dir(s));
    snprintf(path, sizeof path, "%s/run-000002", rundir);
    CHECK(stat(path, &sb) == 0);
    switch (how) {
    case FLIP_PAYLOAD: flip_byte(path, 32 + 12 * 20000 + 5); break;
    case FLIP_MAGIC: flip_byte(path, 0); break;
    case FLIP_RECORD_SIZE: flip_byte(path, 12); break;
    case FLIP_COUNT: flip_byte(path, 24); break;
    case FLIP_TRAILER: flip_byte(path, (long)sb.st_size - 2); break;
    case TRUNCATE: CHECK(truncate(path, sb.st_size - 5) == 0); break;
    case FOREIGN: {
        FILE *f = fopen(path, "wb");
        fputs("#!/bin/sh\n# this is a shell script, not a run file of the sorter\n", f);
        fclose(f);
        break;
    }
    }
    st = drain(s, &err);
    CHECK(st == SH_EFORMAT);
    CHECK(strstr(err.msg, path) != NULL);
    CHECK(strstr(err.msg, "at byte") != NULL);
    if (how == FLIP_PAYLOAD)
        CHECK(strstr(err.msg, "payload checksum") != NULL);
    if (how == FLIP_MAGIC || how == FOREIGN)
        CHECK(strstr(err.msg, "bad magic") != NULL && err.offset == 0);
    if (how == FLIP_RECORD_SIZE)
        CHECK(strstr(err.msg, "header checksum") != NULL);
    if (how == TRUNCATE)
        CHECK(strstr(err.msg, "truncated") != NULL);
    if (st != SH_EFORMAT || !strstr(err.msg, path))
        fprintf(stderr, "damage %d: %s\n", how, err.msg);
    /* the failure is sticky */
    CHECK(sh_extsort_finish(s, NULL) == SH_EFORMAT);
    sh_extsort_free(s);
    CHECK(!dir_exists(rundir));
    CHECK(rmdir(tmp) == 0);  /* empty: nothing left behind */
    free(tmp);
}

static void rejects_a_run_file_with_a_flipped_payload_byte(void) { check_damaged_run_rejected(FLIP_PAYLOAD); }
static void rejects_a_run_file_with_a_flipped_header_byte(void)
{
    check_damaged_run_rejected(FLIP_MAGIC);
    check_damaged_run_rejected(FLIP_RECORD_SIZE);
    check_damaged_run_rejected(FLIP_COUNT);
}
static void rejects_a_run_file_with_a_flipped_trailer_byte(void) { check_damaged_run_rejected(FLIP_TRAILER); }
static void rejects_a_truncated_run_file(void) { check_damaged_run_rejected(TRUNCATE); }
static void rejects_a_foreign_file_in_place_of_a_run(void) { check_damaged_run_rejected(FOREIGN); }

static void reports_an_unusable_temp_dir_as_eio(void)
{
    char file[] = "/tmp/test-extsort-file-XXXXXX";
    const char *dirs[2];
    size_t i;
    int fd = mkstemp(file);
    CHECK(fd >= 0);
    close(fd);
    dirs[0] = "/nonexistent/shingle-test";
    dirs[1] = file;  /* a regular file, not a directory */
    for (i = 0; i < 2; i++) {
        sh_extsort_config c = config(12, 8, 256u << 10);
        unsigned char *in = make_records(100000, 12, 8, 1, 0);
        sh_extsort *s;
        sh_error err;
        c.temp_dir = dirs[i];
        CHECK(sh_extsort_new(&s, &c, NULL) == SH_OK);
        CHECK(sh_extsort_add(s, in, 100000, &err) == SH_EIO);
        CHECK(strstr(err.msg, dirs[i]) != NULL);
        CHECK(strstr(err.msg, "writable directory") != NULL);
        CHECK(err.sys_errno == (i == 0 ? ENOENT : ENOTDIR));
        CHECK(sh_extsort_finish(s, NULL) == SH_EIO);  /* sticky */
        sh_extsort_free(s);
        free(in);
    }
    unlink(file);
}

static void reports_a_full_disk_as_eio_and_cleans_up(void)
{
    /* A file size limit makes write() fail with EFBIG, like a full disk. */
    char *tmp = make_temp_dir();
    sh_extsort_config c = config(12, 8, 4u << 20);
    unsigned char *in = make_records(1000000, 12, 8, 3, 0);
    struct rlimit old, lim;
    struct sigaction ign, prev;
    sh_extsort *s;
    sh_error err;
    sh_status st;
    char rundir[256] = "";

    c.temp_dir = tmp;
    memset(&ign, 0, sizeof ign);
    ign.sa_handler = SIG_IGN;
    sigaction(SIGXFSZ, &ign, &prev);
    getrlimit(RLIMIT_FSIZE, &old);
    lim = old;
    lim.rlim_cur = 1u << 20;
    setrlimit(RLIMIT_FSIZE, &lim);
    CHECK(sh_extsort_new(&s, &c, NULL) == SH_OK);
    st = sh_extsort_add(s, in, 1000000, &err);
    setrlimit(RLIMIT_FSIZE, &old);
    sigaction(SIGXFSZ, &prev, NULL);
    CHECK(st == SH_EIO);
    CHECK(err.sys_errno == EFBIG);
    CHECK(strstr(err.msg, "run-000001.tmp") != NULL);
    CHECK(strstr(err.msg, "free space") != NULL);
    if (sh_extsort_run_dir(s))
        snprintf(rundir, sizeof rundir, "%s", sh_extsort_run_dir(s));
    sh_extsort_free(s);
    CHECK(rundir[0] && !dir_exists(rundir));
    CHECK(rmdir(tmp) == 0);
    free(tmp);
    free(in);
}

static void rejects_bad_configurations_and_misuse(void)
{
    sh_extsort_config c = config(12, 8, 1u << 20);
    sh_extsort *s;
    sh_error err;
    unsigned char r[12] = { 0 };
    size_t got;
    c.key_size = 13;
    CHECK(sh_extsort_new(&s, &c, &err) == SH_EINVAL && s == NULL);
    CHECK(strstr(err.msg, "key_size") != NULL);
    c = config(0, 0, 1u << 20);
    CHECK(sh_extsort_new(&s, &c, NULL) == SH_EINVAL);
    c = config(SH_EXTSORT_MAX_RECORD + 1, 8, 1u << 20);
    CHECK(sh_extsort_new(&s, &c, NULL) == SH_EINVAL);
    c = config(12, 8, SH_EXTSORT_MIN_BUDGET - 1);
    CHECK(sh_extsort_new(&s, &c, &err) == SH_EINVAL);
    CHECK(strstr(err.msg, "memory_budget") != NULL);
    c = config(12, 8, 1u << 20);
    c.max_fan_in = 1;
    CHECK(sh_extsort_new(&s, &c, NULL) == SH_EINVAL);
    c.max_fan_in = 0;
    CHECK(sh_extsort_new(&s, &c, NULL) == SH_OK);
    CHECK(sh_extsort_read(s, r, 1, &got, NULL) == SH_EINVAL);
    CHECK(sh_extsort_add(s, r, 1, NULL) == SH_OK);
    CHECK(sh_extsort_finish(s, NULL) == SH_OK);
    CHECK(sh_extsort_read(s, r, 0, &got, &err) == SH_EINVAL && got == 0);
    CHECK(strstr(err.msg, "at least 1") != NULL);
    CHECK(sh_extsort_finish(s, NULL) == SH_EINVAL);
    CHECK(sh_extsort_add(s, r, 1, NULL) == SH_EINVAL);
    CHECK(sh_extsort_read(s, r, 1, &got, NULL) == SH_OK && got == 1);
    CHECK(sh_extsort_read(s, r, 1, &got, NULL) == SH_OK && got == 0);
    sh_extsort_free(s);
    sh_extsort_free(NULL);
}

/* ------------------------------------------------- memory and throughput */

/* A hash of a record summed over a stream: equal multisets, equal sums. */
static uint64_t rec_hash(const unsigned char *r)
{
    uint64_t s = get_be(r, 8) ^ get_be(r + 8, 4) * 0x9E3779B97F4A7C15u;
    return splitmix(&s);
}

typedef struct stream_result {
    int ok;
    double seconds;        /* in sh_extsort calls only */
    long rss_growth_kb;
    sh_extsort_stats st;
} stream_result;

/* Generates n 12-byte records in chunks (never all in memory), sorts them with
 * budget, reads them back in chunks checking order, count and multiset. */
static stream_result stream_sort(size_t n, size_t budget)
{
    const size_t chunk = 65536;
    unsigned char *buf = malloc(chunk * 12);
    uint64_t seed = 2024, sum_in = 0, sum_out = 0, prev = 0;
    size_t i, j, k, total = 0, got;
    sh_extsort_config c = config(12, 8, budget);
    sh_extsort *s;
    stream_result res;
    long rss0 = max_rss_kb();
    double t0, t = 0;
    int ok = 1;

    memset(&res, 0, sizeof res);
    if (sh_extsort_new(&s, &c, NULL) != SH_OK)
        return res;
    for (i = 0; i < n; i += k) {
        k = n - i < chunk ? n - i : chunk;
        for (j = 0; j < k; j++) {
            make_record(buf + 12 * j, 12, 8, i + j, &seed, 0);
            sum_in += rec_hash(buf + 12 * j);
        }
        t0 = now_s();
        ok &= sh_extsort_add(s, buf, k, NULL) == SH_OK;
        t += now_s() - t0;
    }
    t0 = now_s();
    ok &= sh_extsort_finish(s, NULL) == SH_OK;
    t += now_s() - t0;
    while (ok) {
        t0 = now_s();
        ok &= sh_extsort_read(s, buf, chunk, &got, NULL) == SH_OK;
        t += now_s() - t0;
        if (got == 0)
            break;
        for (j = 0; j < got; j++) {
            uint64_t key = get_be(buf + 12 * j, 8);
            ok &= key >= prev;
            prev = key;
            sum_out += rec_hash(buf + 12 * j);
        }
        total += got;
    }
    res.seconds = t;
    sh_extsort_get_stats(s, &res.st);
    sh_extsort_free(s);
    free(buf);
    res.rss_growth_kb = max_rss_kb() - rss0;
    res.ok = ok && total == n && sum_in == sum_out;
    return res;
}

/* Run first, in a child process, so that ru_maxrss is not the high-water mark
 * of earlier tests. */
static void keeps_peak_memory_within_the_budget(void)
{
    /* under the sanitizer RSS is not checked: a smaller input saves time */
    const size_t budget = 20u << 20, n = (UNDER_ASAN ? 60u << 20 : 200u << 20) / 12;
    int fd[2], status = 0;
    stream_result res;
    pid_t pid;

    memset(&res, 0, sizeof res);
    CHECK(pipe(fd) == 0);
    fflush(NULL);
    pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        close(fd[0]);
        res = stream_sort(n, budget);
        if (write(fd[1], &res, sizeof res) != (ssize_t)sizeof res)
            _exit(2);
        _exit(0);
    }
    close(fd[1]);
    CHECK(read(fd[0], &res, sizeof res) == (ssize_t)sizeof res);
    close(fd[0]);
    waitpid(pid, &status, 0);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    CHECK(res.ok);
    CHECK(res.st.peak_memory <= budget);
    CHECK(res.st.runs_spilled >= (UNDER_ASAN ? 3 : 10));
    printf("info: %.0f MB of 12-byte records with a 20 MB budget: %.2f s, %llu runs, "
           "peak buffers %.1f MB, max RSS growth %.1f MB\n",
           (double)n * 12 / (1 << 20), res.seconds, (unsigned long long)res.st.runs_spilled,
           (double)res.st.peak_memory / (1 << 20), (double)res.rss_growth_kb / 1024);
    if (!UNDER_ASAN)  /* the sanitizer's quarantine holds freed buffers */
        CHECK(res.rss_growth_kb < (long)(budget >> 10) + 6 * 1024);
}

int main(void)
{
    RUN(keeps_peak_memory_within_the_budget);
    RUN(radix_sort_matches_qsort_for_record_and_key_sizes);
    RUN(radix_sort_orders_big_endian_keys_numerically);
    RUN(sorts_empty_input_to_nothing_without_files);
    RUN(sorts_in_memory_without_writing_a_file);
    RUN(sorts_several_runs_like_qsort);
    RUN(sorts_many_runs_with_intermediate_merge_passes);
    RUN(sorts_record_sizes_8_12_16_and_odd_ones);
    RUN(keeps_equal_keys_in_input_order_across_runs);
    RUN(sorts_a_few_million_records_like_qsort);
    RUN(combines_equal_keys_in_runs_and_merges);
    RUN(unique_mode_keeps_the_first_record_of_each_key);
    RUN(writes_run_files_in_the_documented_layout);
    RUN(rejects_a_run_file_with_a_flipped_payload_byte);
    RUN(rejects_a_run_file_with_a_flipped_header_byte);
    RUN(rejects_a_run_file_with_a_flipped_trailer_byte);
    RUN(rejects_a_truncated_run_file);
    RUN(rejects_a_foreign_file_in_place_of_a_run);
    RUN(reports_an_unusable_temp_dir_as_eio);
    RUN(reports_a_full_disk_as_eio_and_cleans_up);
    RUN(rejects_bad_configurations_and_misuse);
    return TEST_END();
}
