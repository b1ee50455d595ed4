#include "error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

sh_status sh_error_set(sh_error *err, sh_status code, size_t offset, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        err->code = code;
        err->offset = offset;
        err->sys_errno = 0;
        va_start(ap, fmt);
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
    }
    return code;
}

void sh_msg_append(char *buf, size_t cap, const char *fmt, ...)
{
    size_t used = strlen(buf);
    va_list ap;
    if (used && used + 2 < cap) {
        memcpy(buf + used, "; ", 3);
        used += 2;
    }
    if (used + 1 >= cap)
        return;
    va_start(ap, fmt);
    vsnprintf(buf + used, cap - used, fmt, ap);
    va_end(ap);
}

const char *sh_status_name(sh_status code)
{
    switch (code) {
    case SH_OK: return "OK";
    case SH_ENOMEM: return "ENOMEM";
    case SH_EINVAL: return "EINVAL";
    case SH_EUTF8: return "EUTF8";
    case SH_EFORMAT: return "EFORMAT";
    case SH_EMISMATCH: return "EMISMATCH";
    case SH_EIO: return "EIO";
    case SH_EBUSY: return "EBUSY";
    case SH_ELIMIT: return "ELIMIT";
    }
    return "EUNKNOWN";
}
