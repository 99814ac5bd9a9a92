/* jsonfile.c: a model's JSON files, capped (see jsonfile.h). */
#include "config.h"

#include <stdlib.h>

#include "attnscope/files/fileio.h"
#include "attnscope/files/jsonfile.h"

json_t *
jsonfile_load(const char *path, size_t max_bytes, struct attn_error *err)
{
    json_error_t jerr;
    json_t *root;
    char *text;
    size_t len;

    if (fileio_read_regular(path, max_bytes, &text, &len, err) != ATTN_OK)
        return NULL;
    root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
    free(text);
    if (root != NULL)
        return root;
    if (json_error_code(&jerr) == json_error_out_of_memory || jerr.text[0] == '\0')
        attn_fail(err, ATTN_ENOMEM, "%s: out of memory parsing its %zu bytes of JSON", path, len);
    else
        attn_fail(err, ATTN_EPARSE, "%s:%d:%d: not JSON: %s", path, jerr.line, jerr.column,
                  jerr.text);
    return NULL;
}

int
jsonfile_int(json_t *root, const char *path, const char *name, const char *alias, int min,
           struct attn_error *err)
{
    json_t *v = json_object_get(root, name);

    if (v == NULL && alias != NULL)
        v = json_object_get(root, alias);
    if (v == NULL) {
        attn_fail(err, ATTN_EPARSE, "%s: \"%s\" is missing", path, name);
        return -1;
    }
    if (!json_is_integer(v) || json_integer_value(v) < min || json_integer_value(v) > 1 << 24) {
        attn_fail(err, ATTN_EPARSE, "%s: \"%s\" is not a whole number from %d to %d", path, name,
                  min, 1 << 24);
        return -1;
    }
    return (int)json_integer_value(v);
}

int
jsonfile_bool(json_t *root, const char *path, const char *name, bool def, struct attn_error *err)
{
    json_t *v = json_object_get(root, name);

    if (v == NULL || json_is_null(v))
        return def;
    if (!json_is_boolean(v)) {
        attn_fail(err, ATTN_EPARSE, "%s: \"%s\" is not true or false", path, name);
        return -1;
    }
    return json_is_true(v);
}
