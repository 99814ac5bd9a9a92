/* status.c: status texts and error recording (see status.h). */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "attnscope/status.h"
#include "attnscope/utf8.h"

enum attn_status
attn_fail(struct attn_error *err, enum attn_status status, const char *fmt, ...)
{
    va_list ap;

    if (err == NULL)
        return status;
    err->status = status;
    va_start(ap, fmt);
    attn_vformat_text(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
    return status;
}

void
attn_appendf(char *buf, size_t size, size_t *len, const char *fmt, ...)
{
    va_list ap;
    int n;

    if (*len + 1 >= size)
        return;
    va_start(ap, fmt);
    n = vsnprintf(buf + *len, size - *len, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    *len = *len + (size_t)n < size ? *len + (size_t)n : size - 1;
}

int
attn_fail_text(char *dst, size_t size, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    attn_vformat_text(dst, size, fmt, ap);
    va_end(ap);
    return -1;
}

size_t
attn_vformat_text(char *dst, size_t size, const char *fmt, va_list ap)
{
    /* Escaping only grows a message: what does not fit raw would not fit escaped. */
    char raw[1024];

    vsnprintf(raw, size < sizeof raw ? size : sizeof raw, fmt, ap);
    return attn_escape_text(dst, size, raw);
}

size_t
attn_escape_text(char *dst, size_t size, const char *src)
{
    const unsigned char *s = (const unsigned char *)src;
    size_t len = strlen(src);
    size_t out = 0;

    if (size == 0)
        return 0;
    for (size_t i = 0; i < len;) {
        char piece[8];
        size_t n;
        size_t step = 1;
        int valid = s[i] < 0x80 ? 1 : utf8_length(s + i, len - i);
        if (s[i] == '\n' || s[i] == '\r' || s[i] == '\t') {
            piece[0] = '\\';
            piece[1] = s[i] == '\n' ? 'n' : s[i] == '\r' ? 'r' : 't';
            n = 2;
        } else if (valid == 0 || utf8_control_length(s + i, len - i) > 0) {
            n = (size_t)snprintf(piece, sizeof piece, "\\x%02X", s[i]);
        } else {
            memcpy(piece, s + i, (size_t)valid);
            n = step = (size_t)valid;
        }
        if (out + n >= size)
            break;
        memcpy(dst + out, piece, n);
        out += n;
        i += step;
    }
    dst[out] = '\0';
    return out;
}

void
attn_error_clear(struct attn_error *err)
{
    if (err == NULL)
        return;
    err->status = ATTN_OK;
    err->msg[0] = '\0';
}
