/*
 * digest.h: a file's SHA-256 (Nettle's), to tell a published file from
 * another one under its name.
 */
#ifndef ATTNSCOPE_DIGEST_H
#define ATTNSCOPE_DIGEST_H

#include <stdbool.h>
#include <stddef.h>

#include "attnscope/base/status.h"

/* The SHA-256 of the regular file at path (at most max_bytes), as 64 hex digits and a NUL. */
enum attn_status digest_sha256_file(const char *path, size_t max_bytes, char hex[65],
                                    struct attn_error *err);

/* Whether the file at path (at most max_bytes) has the SHA-256 hex says (lower case). */
bool digest_file_is(const char *path, size_t max_bytes, const char *hex);

#endif
