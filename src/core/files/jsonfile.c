/* jsonfile.c: a model's JSON files, capped (see jsonfile.h). */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "attnscope/files/fileio.h"
#include "attnscope/files/jsonfile.h"

/*
 * Where an integer too big for json_int_t ends, so that it can be read as
 * the number it is: Hugging Face saves a tokenizer without a length as
 * "model_max_length": int(1e30), and jansson refuses a whole file for one
 * such integer.  Outside strings a number is a run of - + . e E and digits;
 * only the runs of digits alone (after an optional -) are integers.
 */
static size_t
big_integer_ends(const char *text, size_t len, size_t *ends, size_t max)
{
    size_t count = 0;
    bool quoted = false;

    for (size_t i = 0; i < len; i++) {
        const char c = text[i];
        size_t j = i, digits = 0;
        bool integer = true;

        if (quoted) {
            if (c == '\\')
                i++;
            else if (c == '"')
                quoted = false;
            continue;
        }
        if (c == '"') {
            quoted = true;
            continue;
        }
        if (c != '-' && (c < '0' || c > '9'))
            continue;
        for (; j < len && text[j] != '\0' && strchr("-+.eE0123456789", text[j]) != NULL; j++) {
            digits += text[j] >= '0' && text[j] <= '9';
            integer = integer && (text[j] != '.' && text[j] != 'e' && text[j] != 'E' &&
                                  text[j] != '+' && (text[j] != '-' || j == i));
        }
        /* (19 digits may overflow: 9223372036854775808 does, so compare as jansson would) */
        if (integer && digits >= 19) {
            char buf[32];
            bool big = digits > 19;
            if (!big) {
                memcpy(buf, text + i, j - i);
                buf[j - i] = '\0';
                errno = 0;
                (void)strtoll(buf, NULL, 10);
                big = errno == ERANGE;
            }
            if (big && count < max)
                ends[count] = j;
            count += big;
        }
        i = j - 1;
    }
    return count;
}

/* text with ".0" after each integer that ends at ends[0 .. count): a real; NULL: no memory. */
static char *
as_reals(const char *text, size_t len, const size_t *ends, size_t count, size_t *out_len)
{
    char *copy = malloc(len + 2 * count + 1);
    size_t from = 0, at = 0;

    if (copy == NULL)
        return NULL;
    for (size_t k = 0; k < count; k++) {
        memcpy(copy + at, text + from, ends[k] - from);
        at += ends[k] - from;
        memcpy(copy + at, ".0", 2);
        at += 2;
        from = ends[k];
    }
    memcpy(copy + at, text + from, len - from);
    at += len - from;
    copy[at] = '\0';
    *out_len = at;
    return copy;
}

/*
 * jerr's column moved back over the ".0"s put in before it on its line
 * (none holds a newline, so its line is the file's).
 */
static int
column_in_file(const char *text, const size_t *ends, size_t count, const json_error_t *jerr)
{
    int column = jerr->column;
    size_t put = 0;

    for (size_t k = 0; k < count && (size_t)jerr->position > ends[k] + 2 * put; k++, put++) {
        const size_t at = ends[k];
        const size_t error_at = (size_t)jerr->position - 2 * (put + 1);
        if (memchr(text + at, '\n', error_at > at ? error_at - at : 0) == NULL)
            column -= 2;
    }
    return column;
}

json_t *
jsonfile_parse(const char *path, const char *text, size_t len, struct attn_error *err)
{
    enum { MAX_BIG = 64 };
    size_t ends[MAX_BIG];
    const size_t big = big_integer_ends(text, len, ends, MAX_BIG);
    json_error_t jerr;
    char *copy = NULL;
    json_t *root;
    int column;

    if (big > MAX_BIG) {
        attn_fail(err, ATTN_ELIMIT,
                  "%s: %zu integers too big for 64 bits (at most %d are read, as reals)", path,
                  big, MAX_BIG);
        return NULL;
    }
    if (big > 0) {
        size_t copy_len;
        if ((copy = as_reals(text, len, ends, big, &copy_len)) == NULL) {
            attn_fail(err, ATTN_ENOMEM, "%s: out of memory parsing its %zu bytes of JSON", path,
                      len);
            return NULL;
        }
        root = json_loadb(copy, copy_len, JSON_REJECT_DUPLICATES, &jerr);
        free(copy);
    } else {
        root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
    }
    if (root != NULL)
        return root;
    column = column_in_file(text, ends, big, &jerr);
    if (json_error_code(&jerr) == json_error_out_of_memory || jerr.text[0] == '\0')
        attn_fail(err, ATTN_ENOMEM, "%s: out of memory parsing its %zu bytes of JSON", path, len);
    else
        attn_fail(err, ATTN_EPARSE, "%s:%d:%d: not JSON: %s", path, jerr.line, column, jerr.text);
    return NULL;
}

json_t *
jsonfile_load(const char *path, size_t max_bytes, struct attn_error *err)
{
    json_t *root;
    char *text;
    size_t len;

    if (fileio_read_regular(path, max_bytes, &text, &len, err) != ATTN_OK)
        return NULL;
    root = jsonfile_parse(path, text, len, err);
    free(text);
    return root;
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
