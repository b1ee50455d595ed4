/* Output directories that appear whole: the pieces a run needs so that its
 * output directory OUT always holds one complete result, the old one or the
 * new one, never a mix (docs/robustness.md, "Outputs"). The policy is in
 * lua/shingle/util.lua (util.output): a run takes a lock beside OUT, builds
 * its files in a fresh directory beside OUT, makes them durable, and swaps
 * that directory in for OUT at the end. This file gives it the lock and the
 * durability, which Lua cannot do by itself. */
#ifndef SHINGLE_OUTDIR_H
#define SHINGLE_OUTDIR_H

#include <stdint.h>
#include "error.h"

typedef struct sh_lock sh_lock;

/* Take the exclusive lock file path (created if absent) without waiting: an
 * flock(2) on it, which the kernel drops when the holder exits however it
 * exits, so a lock is never left behind by a killed run. The file then says
 * who holds it: "pid P on host H since YYYY-MM-DDTHH:MM:SSZ: holder".
 * SH_EBUSY when another process holds it, with a message naming what, that
 * holder's pid, host, start time and description; SH_EIO if the file cannot
 * be opened. *out is malloc'ed; release it with sh_lock_release. */
sh_status sh_lock_acquire(const char *path, const char *what, const char *holder, sh_lock **out, sh_error *err);

/* Drop the lock (the file stays: removing it would race with a process
 * waiting on the old inode). NULL is ignored. */
void sh_lock_release(sh_lock *l);

/* fsync path (a regular file or a directory). */
sh_status sh_sync_path(const char *path, sh_error *err);

/* fsync every regular file below dir (recursively, not following symbolic
 * links), then every directory, dir last: after it a crash cannot lose what
 * was written there, so dir may be renamed into place. */
sh_status sh_sync_tree(const char *dir, sh_error *err);

/* Start writing bytes [off, off + len) (len 0: to its end) of the file open as fd to the disk
 * without waiting for it (Linux's sync_file_range, SYNC_FILE_RANGE_WRITE;
 * elsewhere nothing): a large output then goes to the disk while the run
 * goes on, and the fsync that makes it durable (sh_sync_tree, a record
 * file's commit) has little left to wait for. The data must be in the
 * file (flushed from stdio). Durability is still the fsync's. */
void sh_writeback(int fd, uint64_t off, uint64_t len);

/* Bytes a writer of a large output hands to sh_writeback at a time. */
#define SH_WRITEBACK_BYTES ((uint64_t)16 << 20)

#endif
