/*
 * status.h: the one error convention of the core.
 *
 * Every fallible core function returns an enum attn_status and, when the
 * status is not ATTN_OK, leaves a one-line message in the caller's
 * struct attn_error.  The message names what went wrong where (file, row and
 * column, or the option) and what would be valid.  The core never prints and
 * never exits; front ends decide what to do with the message.
 */
#ifndef ATTNSCOPE_STATUS_H
#define ATTNSCOPE_STATUS_H

#include <stdarg.h>
#include <stddef.h>

/* X-macro: the enum and its message table are generated from one list. */
#define ATTN_STATUS_LIST(X)                                      \
    X(ATTN_OK, "success")                                        \
    X(ATTN_ENOMEM, "out of memory")                              \
    X(ATTN_EIO, "cannot read or write a file")                   \
    X(ATTN_EPARSE, "malformed input")                            \
    X(ATTN_EVALUE, "value out of range")                         \
    X(ATTN_ELIMIT, "size beyond attnscope's documented limits")  \
    X(ATTN_ESHAPE, "shapes do not fit together")

enum attn_status {
#define ATTN_STATUS_ENUM(name, text) name,
    ATTN_STATUS_LIST(ATTN_STATUS_ENUM)
#undef ATTN_STATUS_ENUM
    ATTN_STATUS_COUNT
};

#define ATTN_ERROR_MAX 512

struct attn_error {
    enum attn_status status;
    char msg[ATTN_ERROR_MAX];
};

/* The generic text of a status ("out of memory"). */
const char *attn_status_text(enum attn_status status);

/*
 * Records status and a printf-style message in err (err may be NULL),
 * escaped by attn_escape_text(), and returns status, so that callers can
 * write `return attn_fail(err, ...)`.
 */
enum attn_status attn_fail(struct attn_error *err, enum attn_status status,
                           const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

void attn_error_clear(struct attn_error *err);

/*
 * Copies src into dst (size bytes, always NUL-terminated) as one line of
 * text that is safe to show: line ends and tabs become \n, \r and \t, and
 * every other control character and every byte that is not valid UTF-8
 * becomes \xHH.  Messages quote what users typed and what files hold;
 * attn_fail() passes every message through this.  Returns the length.
 */
size_t attn_escape_text(char *dst, size_t size, const char *src);

/*
 * Formats a printf-style message into dst (size bytes) and escapes it by
 * attn_escape_text(): the one way attnscope makes a message it will show.
 * Returns the length.
 */
size_t attn_vformat_text(char *dst, size_t size, const char *fmt, va_list ap)
    __attribute__((format(printf, 3, 0)));

#endif
