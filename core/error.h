/* Error reporting for the C core. Engine functions never longjmp and never
 * print: they return an sh_status and, when given one, fill an sh_error whose
 * message names the place (byte offset, file, record) and says what would work.
 * Bindings turn misuse into Lua errors and the rest into `nil, msg`. */
#ifndef SHINGLE_ERROR_H
#define SHINGLE_ERROR_H

#include <stddef.h>

typedef enum sh_status {
    SH_OK = 0,
    SH_ENOMEM,      /* allocation failed */
    SH_EINVAL,      /* an argument out of range (misuse) */
    SH_EUTF8,       /* invalid UTF-8 in the input (with SH_UTF8_ERROR) */
    SH_EFORMAT,     /* a serialized sketch or file is truncated, corrupt or foreign */
    SH_EMISMATCH,   /* two objects made with incompatible parameters */
    SH_EIO,         /* an operating-system I/O failure; errno is in sys_errno */
    SH_EBUSY,       /* a lock is held by another process (the message names it) */
    SH_ELIMIT       /* input beyond a configured limit (size, decompressed size, line length) */
} sh_status;

typedef struct sh_error {
    sh_status code;
    size_t offset;       /* byte offset in the input the error refers to, if any */
    int sys_errno;       /* errno for SH_EIO, else 0 */
    char msg[512];       /* a complete sentence for the user */
} sh_error;

/* Fill err (if not NULL) with code, offset and a printf-style message; returns code. */
sh_status sh_error_set(sh_error *err, sh_status code, size_t offset, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

/* Append a printf-style message to the NUL-terminated message in buf[0..cap),
 * "; " between two, for the warnings a reader collects about one record;
 * what does not fit is dropped. */
void sh_msg_append(char *buf, size_t cap, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* A short symbolic name for a status ("ENOMEM", "EFORMAT", ...). */
const char *sh_status_name(sh_status code);

#endif
