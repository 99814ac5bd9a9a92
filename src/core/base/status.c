/* status.c: status texts and error recording (see status.h). */
#include "config.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnscope/base/status.h"
#include "attnscope/base/utf8.h"

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

/*
 * Copies src (len bytes) into dst (size bytes); when it does not fit, keeps
 * its start (what and where) and its end (why) around " ... ", cutting on
 * UTF-8 character boundaries.  Returns the length written.
 */
static size_t
fit_middle(char *dst, size_t size, const char *src, size_t len)
{
    static const char cut[] = " ... ";
    const size_t mark = sizeof cut - 1;
    size_t head;
    size_t tail;

    if (len < size) {
        memcpy(dst, src, len + 1);
        return len;
    }
    if (size < 2 * mark + 1) {
        head = size - 1;
        while (head > 0 && ((unsigned char)src[head] & 0xC0) == 0x80)
            head--;
        memcpy(dst, src, head);
        dst[head] = '\0';
        return head;
    }
    head = (size - 1 - mark) / 2;
    while (head > 0 && ((unsigned char)src[head] & 0xC0) == 0x80)
        head--;
    tail = len - (size - 1 - mark - head);
    while (tail < len && ((unsigned char)src[tail] & 0xC0) == 0x80)
        tail++;
    memcpy(dst, src, head);
    memcpy(dst + head, cut, mark);
    memcpy(dst + head + mark, src + tail, len - tail + 1);
    return head + mark + len - tail;
}

size_t
attn_vformat_text(char *dst, size_t size, const char *fmt, va_list ap)
{
    va_list again;
    char *raw = NULL;
    char *escaped = NULL;
    size_t len;
    int n;

    if (size == 0)
        return 0;
    va_copy(again, ap);
    n = vsnprintf(NULL, 0, fmt, ap);
    if (n >= 0 && (size_t)n < SIZE_MAX / 4 - 1) {
        raw = malloc((size_t)n + 1);
        escaped = malloc(4 * (size_t)n + 1); /* an escape is at most 4 bytes per byte */
    }
    if (raw == NULL || escaped == NULL) {
        /* No memory for the whole message (out of memory is reported this way): its start. */
        char small[1024];
        free(raw);
        free(escaped);
        vsnprintf(small, sizeof small, fmt, again);
        va_end(again);
        return attn_escape_text(dst, size, small);
    }
    vsnprintf(raw, (size_t)n + 1, fmt, again);
    va_end(again);
    len = attn_escape_text(escaped, 4 * (size_t)n + 1, raw);
    len = fit_middle(dst, size, escaped, len);
    free(raw);
    free(escaped);
    return len;
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

size_t
attn_shortest(char *buf, size_t size, double v)
{
    int n = 0;

    for (int digits = 1; digits <= 17; digits++) {
        n = snprintf(buf, size, "%.*g", digits, v);
        if (strtod(buf, NULL) == v)
            break;
    }
    return n < 0 ? 0 : (size_t)n;
}

const char *
attn_size_text(char *buf, size_t size, size_t bytes)
{
    static const char *const unit[] = { "KiB", "MiB", "GiB", "TiB" };
    double v = (double)bytes;
    int u = -1;

    if (bytes < 1024) {
        snprintf(buf, size, "%zu B", bytes);
        return buf;
    }
    /* the unit that leaves under 1024 of it, once rounded to a decimal */
    while (u < 3 && (u < 0 || v >= 1023.95)) {
        v /= 1024.0;
        u++;
    }
    snprintf(buf, size, "%.1f %s", v, unit[u]);
    return buf;
}

void
attn_error_clear(struct attn_error *err)
{
    if (err == NULL)
        return;
    err->status = ATTN_OK;
    err->msg[0] = '\0';
}
