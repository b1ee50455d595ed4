/* The stored formats: the byte-order helpers (core/byteorder.h) against
 * known bytes, the record sizes core/formats.h fixes, and record files
 * (core/recfile.h) read back through the run readers of core/cluster.h,
 * refusing what is not theirs: another magic, another record size, a
 * truncated or damaged file. */
#include <stdlib.h>
#include <unistd.h>
#include "../byteorder.h"
#include "../cluster.h"
#include "../outdir.h"
#include "test.h"

static void byte_order_helpers_write_and_read_known_bytes(void)
{
    unsigned char b[9];
    const unsigned char le64[8] = { 0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01 };
    const unsigned char be64[8] = { 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08 };
    sh_store_le64(b + 1, 0x0102030405060708ULL);       /* unaligned on purpose */
    CHECK(memcmp(b + 1, le64, 8) == 0);
    CHECK_EQ_U64(sh_load_le64(b + 1), 0x0102030405060708ULL);
    sh_store_be64(b + 1, 0x0102030405060708ULL);
    CHECK(memcmp(b + 1, be64, 8) == 0);
    CHECK_EQ_U64(sh_load_be64(b + 1), 0x0102030405060708ULL);
    sh_store_le32(b, 0xa1b2c3d4u);
    CHECK(b[0] == 0xd4 && b[3] == 0xa1 && sh_load_le32(b) == 0xa1b2c3d4u);
    sh_store_be32(b, 0xa1b2c3d4u);
    CHECK(b[0] == 0xa1 && b[3] == 0xd4 && sh_load_be32(b) == 0xa1b2c3d4u);
    CHECK_EQ_U64(sh_load_be(be64, 3), 0x010203u);
    CHECK_EQ_U64(sh_load_be(be64, 0), 0);
    /* the records are stored as this host lays them out: it must be little-endian */
    CHECK(sh_host_little_endian());
}

/* The sizes are part of the formats (docs/formats.md); formats.h checks them
 * at compile time, this says them once more where a reader of the tests looks. */
static void record_sizes_are_the_documented_ones(void)
{
    CHECK(sizeof(sh_docrec) == 64 && sizeof(sh_pairrec) == 12 && sizeof(sh_linkrec) == 32 && sizeof(sh_clusterrec) == 8);
    CHECK(sizeof(sh_pagerec) == 48 && sizeof(sh_weblinkrec) == 8 && sizeof(sh_chunkrec) == 8);
    CHECK(sizeof(sh_summaryrec) == 24 && sizeof(sh_tcgrec) == 8 && sizeof(sh_memberrec) == 16 && sizeof(sh_collrec) == 56);
    CHECK(sizeof(sh_ixdoc) == 56 && SH_DOCS_META_SIZE == 92 && SH_SKETCH_PARAMS_SIZE == 88);
}

static char dir[] = "/tmp/shingle-test-formats-XXXXXX";

static void write_clusters(const char *magic, uint32_t size, uint32_t n)
{
    char path[256];
    sh_recwriter w;
    sh_error err;
    unsigned char rec[16];
    uint32_t i;
    snprintf(path, sizeof path, "%s/clusters.bin", dir);
    CHECK(sh_recwriter_open(&w, path, magic, size, NULL, 0, &err) == SH_OK);
    for (i = 0; i < n; i++) {
        memset(rec, 0, sizeof rec);
        sh_store_le32(rec, i / 2);
        sh_store_le32(rec + 4, i);
        CHECK(sh_recwriter_append(&w, rec, 1, &err) == SH_OK);
    }
    CHECK(sh_recwriter_commit(&w, &err) == SH_OK);
}

static void run_readers_return_the_records_and_refuse_others(void)
{
    sh_recfile f;
    const sh_clusterrec *c;
    const sh_linkrec *l;
    size_t n;
    sh_error err;
    char path[256];
    FILE *fp;
    long size;
    write_clusters(SH_MAGIC_CLUSTERS, sizeof(sh_clusterrec), 6);
    CHECK(sh_run_clusters(&f, dir, &c, &n, &err) == SH_OK && n == 6);
    CHECK(c[5].cluster == 2 && c[5].doc == 5);
    sh_recfile_close(&f);
    /* no links.bin: an I/O error naming it */
    CHECK(sh_run_links(&f, dir, &l, &n, &err) == SH_EIO && strstr(err.msg, "links.bin") != NULL);
    /* records of another size under the right magic: refused, not misread */
    write_clusters(SH_MAGIC_CLUSTERS, 12, 6);
    CHECK(sh_run_clusters(&f, dir, &c, &n, &err) == SH_EFORMAT && strstr(err.msg, "records of 12 bytes") != NULL);
    CHECK(c == NULL);
    /* another file's magic */
    write_clusters(SH_MAGIC_PAIRS, sizeof(sh_clusterrec), 6);
    CHECK(sh_run_clusters(&f, dir, &c, &n, &err) == SH_EFORMAT && strstr(err.msg, "wrong magic") != NULL);
    /* a flipped byte in the records, then a truncated file */
    write_clusters(SH_MAGIC_CLUSTERS, sizeof(sh_clusterrec), 6);
    snprintf(path, sizeof path, "%s/clusters.bin", dir);
    fp = fopen(path, "r+b");
    CHECK(fp != NULL);
    if (!fp) return;
    fseek(fp, SH_RECFILE_HEADER + 3, SEEK_SET);
    fputc(0x55, fp);
    fseek(fp, 0, SEEK_END);
    size = ftell(fp);
    fclose(fp);
    CHECK(sh_run_clusters(&f, dir, &c, &n, &err) == SH_EFORMAT && strstr(err.msg, "corrupt records") != NULL);
    CHECK(truncate(path, size - 5) == 0);
    CHECK(sh_run_clusters(&f, dir, &c, &n, &err) == SH_EFORMAT && strstr(err.msg, "truncated") != NULL);
    remove(path);
}

/* A record file larger than SH_WRITEBACK_BYTES, appended in pieces of
 * every size: the writer hands it to the disk's writeback as it goes
 * (flushing stdio first), and what it leaves is every record, in order,
 * under the checksum (read back verified). */
static void a_large_file_written_back_as_it_grows_reads_back_whole(void)
{
    char path[256];
    sh_recwriter w;
    sh_recfile f;
    sh_error err;
    const size_t n = (size_t)(2 * SH_WRITEBACK_BYTES / 8 + 12345);
    uint64_t *v = (uint64_t *)malloc(n * 8), st = 5;
    size_t i, at = 0, bad = 0;
    CHECK(v != NULL);
    if (!v) return;
    for (i = 0; i < n; i++) v[i] = i * 0x9e3779b97f4a7c15ULL;
    snprintf(path, sizeof path, "%s/large.bin", dir);
    CHECK(sh_recwriter_open(&w, path, SH_MAGIC_SKETCHES, 8, "meta", 4, &err) == SH_OK);
    while (at < n) {
        size_t k = 1 + (size_t)((st = st * 6364136223846793005ULL + 1442695040888963407ULL) >> 44) % 700000;
        if (k > n - at) k = n - at;
        CHECK(sh_recwriter_append(&w, v + at, k, &err) == SH_OK);
        at += k;
    }
    CHECK(w.synced >= SH_WRITEBACK_BYTES); /* it was handed over on the way */
    CHECK(sh_recwriter_commit(&w, &err) == SH_OK);
    CHECK(sh_recfile_open(&f, path, SH_MAGIC_SKETCHES, 8, 1, &err) == SH_OK);
    CHECK(f.count == n);
    for (i = 0; i < n && i < f.count; i++) bad += ((const uint64_t *)(const void *)f.records)[i] != v[i];
    CHECK(bad == 0);
    sh_recfile_close(&f);
    remove(path);
    free(v);
}

int main(void)
{
    int rc;
    if (!mkdtemp(dir)) { perror("mkdtemp"); return 1; }
    RUN(byte_order_helpers_write_and_read_known_bytes);
    RUN(record_sizes_are_the_documented_ones);
    RUN(run_readers_return_the_records_and_refuse_others);
    RUN(a_large_file_written_back_as_it_grows_reads_back_whole);
    rc = TEST_END();
    rmdir(dir);
    return rc;
}
