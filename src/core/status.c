/* status.c: status texts and error recording (see status.h). */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>

#include "attnscope/status.h"

static const char *const status_texts[] = {
#define ATTN_STATUS_TEXT(name, text) text,
    ATTN_STATUS_LIST(ATTN_STATUS_TEXT)
#undef ATTN_STATUS_TEXT
};

const char *
attn_status_text(enum attn_status status)
{
    if ((unsigned)status >= (unsigned)ATTN_STATUS_COUNT)
        return "unknown status";
    return status_texts[status];
}

enum attn_status
attn_fail(struct attn_error *err, enum attn_status status, const char *fmt, ...)
{
    va_list ap;

    if (err == NULL)
        return status;
    err->status = status;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
    return status;
}

void
attn_error_clear(struct attn_error *err)
{
    if (err == NULL)
        return;
    err->status = ATTN_OK;
    err->msg[0] = '\0';
}
