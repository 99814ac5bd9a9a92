/* digest.c: a file's SHA-256 (see digest.h). */
#include "config.h"

#include <nettle/sha2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnscope/files/digest.h"
#include "attnscope/files/fileio.h"

enum attn_status
digest_sha256_file(const char *path, size_t max_bytes, char hex[65], struct attn_error *err)
{
    struct sha256_ctx ctx;
    uint8_t sum[SHA256_DIGEST_SIZE];
    char *data;
    size_t len;
    enum attn_status rc = fileio_read_regular(path, max_bytes, &data, &len, err);

    if (rc != ATTN_OK)
        return rc;
    sha256_init(&ctx);
    sha256_update(&ctx, len, (const uint8_t *)data);
    sha256_digest(&ctx, sizeof sum, sum);
    free(data);
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
