/* The record files of a cluster run (core/recfile.c): the input is a file's
 * bytes. Invariants: a file that sh_recfile_open accepts lies whole in its
 * map (header, meta, count records, trailer); sh_recstream_open accepts
 * exactly the same files with the same count and record size, and reading
 * every record with pread gives the mapped bytes. */
#include <unistd.h>
#include "fuzz.h"
#include "recfile.h"

static char path[64];

/* the scratch file goes when the fuzzer exits (a crash leaves it: it is
 * then next to the crash input's story) */
static void remove_path(void)
{
    if (path[0]) unlink(path);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    sh_recfile r;
    sh_recstream st;
    sh_error err;
    sh_status a, b;
    FILE *f;
    if (!path[0]) {
        int fd;
        /* in memory where there is a tmpfs: on a disk every run waits on
         * the file's truncation and write: 350 runs/s there against
         * 32,000 in /dev/shm on the 2-core machine of docs/robustness.md */
        snprintf(path, sizeof path, "%s/shingle-fuzz-recfile-XXXXXX",
                 access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp");
        fd = mkstemp(path);
        FUZZ_CHECK(fd >= 0);
        close(fd);
        atexit(remove_path);
    }
    f = fopen(path, "wb");
    FUZZ_CHECK(f != NULL);
    if (size) FUZZ_CHECK(fwrite(data, 1, size, f) == size);
    fclose(f);
    /* the magic the input claims (any of the pipeline's would do) */
    a = sh_recfile_open(&r, path, size >= 8 ? (const char *)data : "SHDOCS\0\0", 0, 1, &err);
    b = sh_recstream_open(&st, path, size >= 8 ? (const char *)data : "SHDOCS\0\0", 0, &err);
    FUZZ_CHECK((a == SH_OK) == (b == SH_OK));
    if (a == SH_OK) {
        size_t bytes = (size_t)(r.count * r.record_size);
        FUZZ_CHECK(r.records >= (const unsigned char *)r.map && r.records + bytes <= (const unsigned char *)r.map + r.map_size);
        FUZZ_CHECK(st.count == r.count && st.record_size == r.record_size);
        if (bytes) {
            unsigned char *buf = (unsigned char *)malloc(bytes);
            FUZZ_CHECK(sh_recstream_read(&st, 0, r.count, buf, &err) == SH_OK);
            FUZZ_CHECK(memcmp(buf, r.records, bytes) == 0);
            free(buf);
        }
        FUZZ_CHECK(sh_recstream_read(&st, r.count, 1, NULL, &err) == SH_EFORMAT);
        sh_recfile_close(&r);
        sh_recstream_close(&st);
    }
    return 0;
}
