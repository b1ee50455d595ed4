/* flock(2) is not in POSIX; glibc declares it under _DEFAULT_SOURCE,
 * sync_file_range(2) under _GNU_SOURCE. */
#define _DEFAULT_SOURCE 1
#define _GNU_SOURCE 1
#include "outdir.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

struct sh_lock {
    int fd;
};

static sh_status io_error(sh_error *err, const char *what, const char *path)
{
    int e = errno;
    sh_error_set(err, SH_EIO, 0, "cannot %s %s: %s", what, path, strerror(e));
    if (err) err->sys_errno = e;
    return SH_EIO;
}

sh_status sh_lock_acquire(const char *path, const char *what, const char *holder, sh_lock **out, sh_error *err)
{
    char info[600], host[256];
    struct tm tm;
    time_t now = time(NULL);
    size_t n;
    sh_lock *l;
    int fd;
    *out = NULL;
    fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) return io_error(err, "open the lock file", path);
    while (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        ssize_t got;
        if (errno == EINTR) continue;
        if (errno != EWOULDBLOCK) { sh_status s = io_error(err, "lock", path); close(fd); return s; }
        /* the holder writes who it is right after taking the lock: give it a moment */
        {
            int tries = 0;
            while ((got = pread(fd, info, sizeof info - 1, 0)) <= 0 && tries++ < 50) {
                struct timespec ts = { 0, 10 * 1000 * 1000 };
                nanosleep(&ts, NULL);
            }
        }
        close(fd);
        info[got > 0 ? got : 0] = 0;
        info[strcspn(info, "\n")] = 0;
        return sh_error_set(err, SH_EBUSY, 0, "%s is in use by %s (lock file %s): wait for that run to finish, "
                            "or choose another output", what, info[0] ? info : "another process", path);
    }
    l = (sh_lock *)malloc(sizeof *l);
    if (!l) { close(fd); return sh_error_set(err, SH_ENOMEM, 0, "out of memory"); }
    l->fd = fd;
    if (gethostname(host, sizeof host) != 0) snprintf(host, sizeof host, "?");
    host[sizeof host - 1] = 0;
    gmtime_r(&now, &tm);
    n = (size_t)snprintf(info, sizeof info, "pid %ld on host %s since %04d-%02d-%02dT%02d:%02d:%02dZ%s%.300s\n", (long)getpid(),
                         host, tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                         holder && *holder ? ": " : "", holder ? holder : "");
    if (n >= sizeof info) n = sizeof info - 1;
    /* the description is for people; a failure to write it does not matter */
    if (ftruncate(fd, 0) == 0 && pwrite(fd, info, n, 0) < 0) { /* ignored */ }
    *out = l;
    return SH_OK;
}

void sh_lock_release(sh_lock *l)
{
    if (!l) return;
    close(l->fd); /* drops the flock */
    free(l);
}

sh_status sh_sync_path(const char *path, sh_error *err)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return io_error(err, "open", path);
    if (fsync(fd) != 0 && errno != EINVAL && errno != EROFS) { /* EINVAL: a special file that cannot sync */
        sh_status s = io_error(err, "sync", path);
        close(fd);
        return s;
    }
    close(fd);
    return SH_OK;
}

sh_status sh_sync_tree(const char *dir, sh_error *err)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    sh_status s = SH_OK;
    size_t dl = strlen(dir);
    if (!d) return io_error(err, "open the directory", dir);
    while (s == SH_OK && (errno = 0, e = readdir(d)) != NULL) {
        struct stat st;
        size_t nl = strlen(e->d_name);
        char *p;
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
        p = (char *)malloc(dl + nl + 2);
        if (!p) { s = sh_error_set(err, SH_ENOMEM, 0, "out of memory"); break; }
        memcpy(p, dir, dl);
        p[dl] = '/';
        memcpy(p + dl + 1, e->d_name, nl + 1);
        if (lstat(p, &st) != 0) s = io_error(err, "stat", p);
        else if (S_ISDIR(st.st_mode)) s = sh_sync_tree(p, err);
        else if (S_ISREG(st.st_mode)) s = sh_sync_path(p, err);
        free(p);
    }
    if (s == SH_OK && errno != 0 && e == NULL) s = io_error(err, "read the directory", dir);
    closedir(d);
    if (s == SH_OK) s = sh_sync_path(dir, err);
    return s;
}

void sh_writeback(int fd, uint64_t off, uint64_t len)
{
#if defined(__linux__) && defined(SYNC_FILE_RANGE_WRITE)
    /* a hint: a failure here is the fsync's to report */
    (void)sync_file_range(fd, (off_t)off, (off_t)len, SYNC_FILE_RANGE_WRITE);
#else
    (void)fd; (void)off; (void)len;
#endif
}
