/* digest.c: a file's SHA-256 (see digest.h). */
#include "config.h"

#include <errno.h>
#include <nettle/sha2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "attnscope/base/progress.h"
#include "attnscope/files/digest.h"
#include "attnscope/files/fileio.h"

/* The bytes read and hashed at a time: a blob of gigabytes is never held whole. */
#define DIGEST_CHUNK ((size_t)1 << 20)

enum attn_status
digest_sha256_file(const char *path, size_t max_bytes, char hex[65], struct attn_error *err)
{
    struct sha256_ctx ctx;
    uint8_t sum[SHA256_DIGEST_SIZE];
    unsigned char *chunk;
    size_t total = 0;
    enum attn_status rc;
    int fd;

    if ((rc = fileio_open_regular(path, &fd, err)) != ATTN_OK)
        return rc;
    if ((chunk = malloc(DIGEST_CHUNK)) == NULL) {
        close(fd);
        return attn_fail(err, ATTN_ENOMEM, "%s: out of memory", path);
    }
    sha256_init(&ctx);
    for (;;) {
        const ssize_t got = read(fd, chunk, DIGEST_CHUNK);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0) {
            rc = attn_fail(err, ATTN_EIO, "%s: cannot read: %s", path, strerror(errno));
            break;
        }
        if (got == 0)
            break;
        total += (size_t)got;
        if (total > max_bytes) {
            rc = attn_fail(err, ATTN_ELIMIT, "%s: more than %zu bytes; attnscope reads at most "
                                             "%zu of such a file",
                           path, max_bytes, max_bytes);
            break;
        }
        if (progress_stopped()) {
            rc = attn_fail(err, ATTN_ESTOPPED, "%s: stopped after %zu bytes of its SHA-256", path,
                           total);
            break;
        }
        sha256_update(&ctx, (size_t)got, chunk);
    }
    free(chunk);
    close(fd);
    if (rc != ATTN_OK)
        return rc;
    sha256_digest(&ctx, sizeof sum, sum);
    for (size_t i = 0; i < sizeof sum; i++)
        snprintf(hex + 2 * i, 3, "%02x", sum[i]);
    return ATTN_OK;
}

bool
digest_file_is(const char *path, size_t max_bytes, const char *hex)
{
    char got[65];
    struct attn_error err;

    return digest_sha256_file(path, max_bytes, got, &err) == ATTN_OK && strcmp(got, hex) == 0;
}
