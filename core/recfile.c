#include "recfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

static void put32(unsigned char *p, uint32_t v) { int i; for (i = 0; i < 4; i++) p[i] = (unsigned char)(v >> (8 * i)); }
static void put64(unsigned char *p, uint64_t v) { int i; for (i = 0; i < 8; i++) p[i] = (unsigned char)(v >> (8 * i)); }
static uint32_t get32(const unsigned char *p) { uint32_t v = 0; int i; for (i = 3; i >= 0; i--) v = (v << 8) | p[i]; return v; }
static uint64_t get64(const unsigned char *p) { uint64_t v = 0; int i; for (i = 7; i >= 0; i--) v = (v << 8) | p[i]; return v; }

static char *dupstr(const char *a, const char *b)
{
    size_t na = strlen(a), nb = strlen(b);
    char *s = (char *)malloc(na + nb + 1);
    if (s) { memcpy(s, a, na); memcpy(s + na, b, nb + 1); }
    return s;
}

static sh_status io_error(sh_error *err, const char *what, const char *path)
{
    int e = errno;
    sh_error_set(err, SH_EIO, 0, "cannot %s %s: %s", what, path, strerror(e));
    if (err) err->sys_errno = e;
    return SH_EIO;
}

sh_status sh_recwriter_open(sh_recwriter *w, const char *path, const char magic[8], uint32_t record_size,
                            const void *meta, uint32_t meta_size, sh_error *err)
{
    unsigned char h[SH_RECFILE_HEADER];
    uint32_t padded;
    memset(w, 0, sizeof *w);
    w->path = dupstr(path, "");
    w->tmp = dupstr(path, ".tmp");
    if (!w->path || !w->tmp) { sh_recwriter_abort(w); return sh_error_set(err, SH_ENOMEM, 0, "out of memory"); }
    w->f = fopen(w->tmp, "wb");
    if (!w->f) { sh_status st = io_error(err, "create", w->tmp); sh_recwriter_abort(w); return st; }
    /* meta is padded with zeros to a multiple of 8 bytes, so records start
     * aligned and a reader may map them straight onto C structs */
    padded = (meta_size + 7u) & ~7u;
    memcpy(h, magic, 8);
    put32(h + 8, 1);
    put32(h + 12, record_size);
    put32(h + 16, padded);
    put32(h + 20, 0);
    w->hcrc = (uint32_t)crc32(0L, h, SH_RECFILE_HEADER);
    w->record_size = record_size;
    if (meta_size) /* crc32 with a NULL buffer would return the initial value */
        w->hcrc = (uint32_t)crc32(w->hcrc, (const Bytef *)meta, meta_size);
    w->crc = (uint32_t)crc32(0L, Z_NULL, 0);
    if (padded > meta_size) {
        static const unsigned char zeros[8] = { 0 };
        w->hcrc = (uint32_t)crc32(w->hcrc, zeros, padded - meta_size);
    }
    if (fwrite(h, 1, sizeof h, w->f) != sizeof h || (meta_size && fwrite(meta, 1, meta_size, w->f) != meta_size) ||
        (padded > meta_size && fwrite("\0\0\0\0\0\0\0", 1, padded - meta_size, w->f) != padded - meta_size)) {
        sh_status st = io_error(err, "write", w->tmp);
        sh_recwriter_abort(w);
        return st;
    }
    return SH_OK;
}

sh_status sh_recwriter_append(sh_recwriter *w, const void *records, size_t n, sh_error *err)
{
    size_t bytes = n * w->record_size;
    const unsigned char *p = (const unsigned char *)records;
    size_t done = 0;
    while (done < bytes) { /* crc32 takes a uInt length */
        size_t c = bytes - done > (1u << 30) ? (1u << 30) : bytes - done;
        w->crc = (uint32_t)crc32(w->crc, p + done, (uInt)c);
        done += c;
    }
    if (bytes && fwrite(records, 1, bytes, w->f) != bytes) return io_error(err, "write", w->tmp);
    w->count += n;
    return SH_OK;
}

sh_status sh_recwriter_commit(sh_recwriter *w, sh_error *err)
{
    unsigned char t[SH_RECFILE_TRAILER];
    sh_status st = SH_OK;
    put64(t, w->count);
    put32(t + 8, w->crc);
    put32(t + 12, w->hcrc);
    memcpy(t + 16, "SHEND\0\0\0", 8);
    if (fwrite(t, 1, sizeof t, w->f) != sizeof t || fflush(w->f) != 0 || fsync(fileno(w->f)) != 0)
        st = io_error(err, "write", w->tmp);
    if (fclose(w->f) != 0 && st == SH_OK) st = io_error(err, "close", w->tmp);
    w->f = NULL;
    if (st == SH_OK && rename(w->tmp, w->path) != 0) st = io_error(err, "rename", w->tmp);
    if (st != SH_OK) { sh_recwriter_abort(w); return st; }
    free(w->path);
    free(w->tmp);
    memset(w, 0, sizeof *w);
    return SH_OK;
}

void sh_recwriter_abort(sh_recwriter *w)
{
    if (w->f) fclose(w->f);
    if (w->tmp) remove(w->tmp);
    free(w->path);
    free(w->tmp);
    memset(w, 0, sizeof *w);
}

sh_status sh_recfile_open(sh_recfile *r, const char *path, const char magic[8], int verify, sh_error *err)
{
    struct stat stt;
    const unsigned char *m, *t;
    uint32_t rs, ms;
    uint64_t count, body;
    int fd;
    memset(r, 0, sizeof *r);
    fd = open(path, O_RDONLY);
    if (fd < 0) return io_error(err, "open", path);
    if (fstat(fd, &stt) != 0) { close(fd); return io_error(err, "stat", path); }
    if ((size_t)stt.st_size < SH_RECFILE_HEADER + SH_RECFILE_TRAILER) {
        close(fd);
        return sh_error_set(err, SH_EFORMAT, 0, "%s is truncated (%lld bytes): delete it and run the phase that writes it again",
                            path, (long long)stt.st_size);
    }
    m = (const unsigned char *)mmap(NULL, (size_t)stt.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (m == (const unsigned char *)MAP_FAILED) return io_error(err, "map", path);
    r->map = (void *)(uintptr_t)m;
    r->map_size = (size_t)stt.st_size;
    if (memcmp(m, magic, 8) != 0) {
        sh_recfile_close(r);
        return sh_error_set(err, SH_EFORMAT, 0, "%s is not a %.6s file (wrong magic at byte 0)", path, magic);
    }
    if (get32(m + 8) != 1) {
        uint32_t v = get32(m + 8);
        sh_recfile_close(r);
        return sh_error_set(err, SH_EFORMAT, 8, "%s has format version %u; this build reads version 1", path, v);
    }
    rs = get32(m + 12);
    ms = get32(m + 16);
    t = m + r->map_size - SH_RECFILE_TRAILER;
    count = get64(t);
    body = (uint64_t)r->map_size - SH_RECFILE_HEADER - SH_RECFILE_TRAILER;
    if (memcmp(t + 16, "SHEND\0\0\0", 8) != 0 || rs == 0 || ms > body || (body - ms) / rs != count || (body - ms) % rs != 0) {
        sh_recfile_close(r);
        return sh_error_set(err, SH_EFORMAT, (size_t)(t - m), "%s is truncated or corrupt (its trailer does not match its size): "
                            "delete it and run the phase that writes it again", path);
    }
    if ((uint32_t)crc32(0L, m, SH_RECFILE_HEADER + ms) != get32(t + 12)) {
        sh_recfile_close(r);
        return sh_error_set(err, SH_EFORMAT, 0, "%s has a corrupt header (checksum mismatch)", path);
    }
    r->meta = m + SH_RECFILE_HEADER;
    r->meta_size = ms;
    r->records = r->meta + ms;
    r->record_size = rs;
    r->count = count;
    if (verify) {
        uint32_t c = (uint32_t)crc32(0L, Z_NULL, 0);
        uint64_t left = count * rs, off = 0;
        while (left) {
            uInt n = (uInt)(left > (1u << 30) ? (1u << 30) : left);
            c = (uint32_t)crc32(c, r->records + off, n);
            off += n;
            left -= n;
        }
        if (c != get32(t + 8)) {
            sh_recfile_close(r);
            return sh_error_set(err, SH_EFORMAT, SH_RECFILE_HEADER + ms, "%s has corrupt records (checksum mismatch): "
                                "delete it and run the phase that writes it again", path);
        }
    }
    return SH_OK;
}

void sh_recfile_close(sh_recfile *r)
{
    if (r->map) munmap(r->map, r->map_size);
    memset(r, 0, sizeof *r);
}
