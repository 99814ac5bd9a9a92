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

/*
 * What kind of failure; the message in struct attn_error says the rest.
 * A plain enum: every front end reports the message, never a generic text.
 */
enum attn_status {
    ATTN_OK,
    ATTN_ENOMEM, /* out of memory */
    ATTN_EIO,    /* cannot read or write a file */
    ATTN_EPARSE, /* malformed input */
    ATTN_EVALUE, /* a value out of range */
    ATTN_ELIMIT, /* a size beyond attnscope's documented limits */
    ATTN_ESHAPE, /* shapes that do not fit together */
    ATTN_EABSENT, /* something named is not on this machine (a lesson's model) */
    ATTN_ESTOPPED, /* the user stopped it (progress_stop()) */
};

#define ATTN_ERROR_MAX 1024

struct attn_error {
    enum attn_status status;
    char msg[ATTN_ERROR_MAX];
};

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
 * The shortest %g text that reads back as v (0.9999999999, not 1; 0.1,
 * not 0.10000000000000001), for numbers users typed.  Returns its length.
 */
size_t attn_shortest(char *buf, size_t size, double v);

/*
 * bytes as people read a size: "824 B", "6.0 KiB", "6.3 MiB", "1.2 GiB"
 * (binary units, one decimal), into buf; returns buf.
 */
const char *attn_size_text(char *buf, size_t size, size_t bytes);

/*
 * Copies src into dst (size bytes, always NUL-terminated) as one line of
 * text that is safe to show: line ends and tabs become \n, \r and \t, and
 * every other control character and every byte that is not valid UTF-8
 * becomes \xHH.  Messages quote what users typed and what files hold;
 * attn_fail() passes every message through this.  Returns the length.
 */
size_t attn_escape_text(char *dst, size_t size, const char *src);

/*
 * Appends printf-style text to buf (size bytes, *len used so far), cutting
 * it at the end of the buffer; *len stays below size.
 */
void attn_appendf(char *buf, size_t size, size_t *len, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/*
 * Formats a message as attn_fail does into a caller's buffer of size bytes
 * (for parsers that report into char buffers); returns -1, so that
 * `return attn_fail_text(...)` fails.
 */
int attn_fail_text(char *dst, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/*
 * Formats a printf-style message into dst (size bytes) and escapes it by
 * attn_escape_text(): the one way attnscope makes a message it will show.
 * A message too long for dst loses its middle, not its end: the start
 * names what and where, the end says why.  Returns the length.
 */
size_t attn_vformat_text(char *dst, size_t size, const char *fmt, va_list ap)
    __attribute__((format(printf, 3, 0)));

#endif
