#include "recfile.h"
#include "outdir.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "byteorder.h"

static char *dupstr(const char *a, const char *b)
{
    size_t na = strlen(a), nb = strlen(b);
    char *s = (char *)malloc(na + nb + 1);
    if (s) { memcpy(s, a, na); memcpy(s + na, b, nb + 1); }
    return s;
}

/* core/formats.h: records are little-endian structs mapped in place */
static sh_status big_endian(sh_error *err, const char *path)
{
    return sh_error_set(err, SH_EINVAL, 0, "%s: this host is big-endian, and record files are little-endian structs "
                        "read in place; use a little-endian host (docs/formats.md, \"Byte order\")", path);
}

/* The checks every reader makes on the header and trailer: SH_OK, or
 * SH_EFORMAT naming path and the place. */
static sh_status check_frame(const unsigned char *h, const unsigned char *t, uint64_t size, const char *path,
                             const char magic[8], uint32_t record_size, sh_error *err)
{
    uint32_t rs = sh_load_le32(h + 12), ms = sh_load_le32(h + 16);
    uint64_t count = sh_load_le64(t), body = size - SH_RECFILE_HEADER - SH_RECFILE_TRAILER;
    if (memcmp(h, magic, 8) != 0)
        return sh_error_set(err, SH_EFORMAT, 0, "%s is not a %.6s file (wrong magic at byte 0)", path, magic);
    if (sh_load_le32(h + 8) != SH_RECFILE_VERSION)
        return sh_error_set(err, SH_EFORMAT, 8, "%s has format version %u; this build reads version %u", path,
                            sh_load_le32(h + 8), SH_RECFILE_VERSION);
    if (memcmp(t + 16, SH_RECFILE_END, 8) != 0 || rs == 0 || ms > body || (body - ms) / rs != count || (body - ms) % rs != 0)
        return sh_error_set(err, SH_EFORMAT, (size_t)(size - SH_RECFILE_TRAILER), "%s is truncated or corrupt (its trailer "
                            "does not match its size): delete it and run the phase that writes it again", path);
    if (record_size && rs != record_size)
        return sh_error_set(err, SH_EFORMAT, 12, "%s holds records of %u bytes where this build reads %u: it was written "
                            "by another version; run the phase that writes it again", path, rs, record_size);
    return SH_OK;
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
    if (!sh_host_little_endian()) return big_endian(err, path);
    w->path = dupstr(path, "");
    w->tmp = dupstr(path, ".tmp");
    if (!w->path || !w->tmp) { sh_recwriter_abort(w); return sh_error_set(err, SH_ENOMEM, 0, "out of memory"); }
    w->f = fopen(w->tmp, "wb");
    if (!w->f) { sh_status st = io_error(err, "create", w->tmp); sh_recwriter_abort(w); return st; }
    /* meta is padded with zeros to a multiple of 8 bytes, so records start
     * aligned and a reader may map them straight onto C structs */
    padded = (meta_size + 7u) & ~7u;
    memcpy(h, magic, 8);
    sh_store_le32(h + 8, SH_RECFILE_VERSION);
    sh_store_le32(h + 12, record_size);
    sh_store_le32(h + 16, padded);
    sh_store_le32(h + 20, 0);
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
    w->written += bytes;
    /* a large file goes to the disk as it is written, so that the fsync of
     * the commit does not wait for all of it at once */
    if (!w->scratch && w->written - w->synced >= SH_WRITEBACK_BYTES) {
        if (fflush(w->f) != 0) return io_error(err, "write", w->tmp);
        /* from the first byte not yet handed over (records start after the
         * header and meta: this is at or before it) to the end */
        sh_writeback(fileno(w->f), w->synced, 0);
        w->synced = w->written;
    }
    return SH_OK;
}

sh_status sh_recwriter_commit(sh_recwriter *w, sh_error *err)
{
    unsigned char t[SH_RECFILE_TRAILER];
    sh_status st = SH_OK;
    sh_store_le64(t, w->count);
    sh_store_le32(t + 8, w->crc);
    sh_store_le32(t + 12, w->hcrc);
    memcpy(t + 16, SH_RECFILE_END, 8);
    if (fwrite(t, 1, sizeof t, w->f) != sizeof t || fflush(w->f) != 0 || (!w->scratch && !w->sync_later && fsync(fileno(w->f)) != 0))
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

sh_status sh_recfile_open(sh_recfile *r, const char *path, const char magic[8], uint32_t record_size, int verify,
                          sh_error *err)
{
    struct stat stt;
    const unsigned char *m, *t;
    uint32_t rs, ms;
    uint64_t count;
    sh_status st;
    int fd;
    memset(r, 0, sizeof *r);
    if (!sh_host_little_endian()) return big_endian(err, path);
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
    t = m + r->map_size - SH_RECFILE_TRAILER;
    if ((st = check_frame(m, t, r->map_size, path, magic, record_size, err)) != SH_OK) {
        sh_recfile_close(r);
        return st;
    }
    rs = sh_load_le32(m + 12);
    ms = sh_load_le32(m + 16);
    count = sh_load_le64(t);
    if ((uint32_t)crc32(0L, m, SH_RECFILE_HEADER + ms) != sh_load_le32(t + 12)) {
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
        if (c != sh_load_le32(t + 8)) {
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

static sh_status pread_all(int fd, void *buf, size_t n, uint64_t off, const char *path, sh_error *err)
{
    unsigned char *b = (unsigned char *)buf;
    while (n > 0) {
        ssize_t got = pread(fd, b, n, (off_t)off);
        if (got < 0) {
            if (errno == EINTR) continue;
            return io_error(err, "read", path);
        }
        if (got == 0) return sh_error_set(err, SH_EFORMAT, (size_t)off, "%s is truncated at byte %llu", path, (unsigned long long)off);
        b += got;
        n -= (size_t)got;
        off += (uint64_t)got;
    }
    return SH_OK;
}

sh_status sh_recstream_open(sh_recstream *r, const char *path, const char magic[8], uint32_t record_size, sh_error *err)
{
    unsigned char h[SH_RECFILE_HEADER], t[SH_RECFILE_TRAILER];
    struct stat st;
    uint32_t ms, crc, hcrc;
    uint64_t size, left, off;
    unsigned char *buf;
    sh_status s;
    memset(r, 0, sizeof *r);
    r->fd = -1;
    if (!sh_host_little_endian()) return big_endian(err, path);
    snprintf(r->path, sizeof r->path, "%s", path);
    if ((r->fd = open(path, O_RDONLY)) < 0) return io_error(err, "open", path);
    if (fstat(r->fd, &st) != 0) { s = io_error(err, "stat", path); goto fail; }
    size = (uint64_t)st.st_size;
    if (size < SH_RECFILE_HEADER + SH_RECFILE_TRAILER) {
        s = sh_error_set(err, SH_EFORMAT, 0, "%s is truncated (%llu bytes): delete it and run the phase that writes it again",
                         path, (unsigned long long)size);
        goto fail;
    }
    if ((s = pread_all(r->fd, h, sizeof h, 0, path, err)) != SH_OK) goto fail;
    if ((s = pread_all(r->fd, t, sizeof t, size - SH_RECFILE_TRAILER, path, err)) != SH_OK) goto fail;
    if ((s = check_frame(h, t, size, path, magic, record_size, err)) != SH_OK) goto fail;
    r->record_size = sh_load_le32(h + 12);
    ms = sh_load_le32(h + 16);
    r->count = sh_load_le64(t);
    r->records_off = SH_RECFILE_HEADER + (uint64_t)ms;
    buf = (unsigned char *)malloc(1 << 20);
    if (!buf) { s = sh_error_set(err, SH_ENOMEM, 0, "out of memory"); goto fail; }
    /* the header + meta checksum, then the records' */
    hcrc = (uint32_t)crc32(0L, h, SH_RECFILE_HEADER);
    for (off = SH_RECFILE_HEADER; off < r->records_off; off += 1u << 20) {
        size_t n = (size_t)(r->records_off - off < (1u << 20) ? r->records_off - off : (1u << 20));
        if ((s = pread_all(r->fd, buf, n, off, path, err)) != SH_OK) { free(buf); goto fail; }
        hcrc = (uint32_t)crc32(hcrc, buf, (uInt)n);
    }
    crc = (uint32_t)crc32(0L, Z_NULL, 0);
    for (off = r->records_off, left = r->count * r->record_size; left > 0;) {
        size_t n = (size_t)(left < (1u << 20) ? left : (1u << 20));
        if ((s = pread_all(r->fd, buf, n, off, path, err)) != SH_OK) { free(buf); goto fail; }
        crc = (uint32_t)crc32(crc, buf, (uInt)n);
        off += n;
        left -= n;
    }
    free(buf);
    if (hcrc != sh_load_le32(t + 12)) { s = sh_error_set(err, SH_EFORMAT, 0, "%s has a corrupt header (checksum mismatch)", path); goto fail; }
    if (crc != sh_load_le32(t + 8)) {
        s = sh_error_set(err, SH_EFORMAT, (size_t)r->records_off, "%s has corrupt records (checksum mismatch): "
                         "delete it and run the phase that writes it again", path);
        goto fail;
    }
#ifdef POSIX_FADV_RANDOM
    posix_fadvise(r->fd, 0, 0, POSIX_FADV_RANDOM);
#endif
    return SH_OK;
fail:
    sh_recstream_close(r);
    return s;
}

sh_status sh_recstream_read(const sh_recstream *r, uint64_t first, uint64_t n, void *out, sh_error *err)
{
    if (first + n > r->count)
        return sh_error_set(err, SH_EFORMAT, 0, "%s: records %llu..%llu asked for, it holds %llu", r->path,
                            (unsigned long long)first, (unsigned long long)(first + n), (unsigned long long)r->count);
    return pread_all(r->fd, out, (size_t)(n * r->record_size), r->records_off + first * r->record_size, r->path, err);
}

void sh_recstream_close(sh_recstream *r)
{
    if (r->fd >= 0) close(r->fd);
    r->fd = -1;
}
