/* bpe_table.c: the tokenizer's string -> number tables, hashed (see bpe_internal.h). */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bpe_internal.h"

struct bpe_table {
    size_t cap; /* a power of two */
    size_t count;
    char **keys;
    int *values;
};

static uint64_t
hash(const char *s, size_t n)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */

    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
    return h;
}

struct bpe_table *
bpe_table_create(size_t expected)
{
    struct bpe_table *t = calloc(1, sizeof *t);

    if (t == NULL)
        return NULL;
    t->cap = 16;
    while (t->cap < 2 * expected + 16)
        t->cap *= 2;
    t->keys = calloc(t->cap, sizeof *t->keys);
    t->values = calloc(t->cap, sizeof *t->values);
    if (t->keys == NULL || t->values == NULL) {
        free(t->keys);
        free(t->values);
        free(t);
        return NULL;
    }
    return t;
}

void
bpe_table_destroy(struct bpe_table *t)
{
    if (t == NULL)
        return;
    for (size_t i = 0; i < t->cap; i++)
        free(t->keys[i]);
    free(t->keys);
    free(t->values);
    free(t);
}

/* The slot of key (n bytes): where it is, or the empty one where it would go. */
static size_t
table_slot(const struct bpe_table *t, const char *key, size_t n)
{
    size_t i = (size_t)hash(key, n) & (t->cap - 1);

    while (t->keys[i] != NULL && (strlen(t->keys[i]) != n || memcmp(t->keys[i], key, n) != 0))
        i = (i + 1) & (t->cap - 1);
    return i;
}

int
bpe_table_get(const struct bpe_table *t, const char *key, size_t n)
{
    size_t i = table_slot(t, key, n);

    return t->keys[i] != NULL ? t->values[i] : -1;
}

/*
 * key -> value, the value replaced when key was there already (1 then); -1
 * when out of memory.  (Python's dict and Rust's HashMap, which the
 * reference tokenizers build their tables with, keep the last value given.)
 */
int
bpe_table_put(struct bpe_table *t, const char *key, size_t n, int value)
{
    size_t i;

    if (2 * (t->count + 1) > t->cap) {
        struct bpe_table bigger = { t->cap * 2, 0, calloc(t->cap * 2, sizeof(char *)),
                                    calloc(t->cap * 2, sizeof(int)) };
        if (bigger.keys == NULL || bigger.values == NULL) {
            free(bigger.keys);
            free(bigger.values);
            return -1;
        }
        for (size_t k = 0; k < t->cap; k++)
            if (t->keys[k] != NULL) {
                size_t j = table_slot(&bigger, t->keys[k], strlen(t->keys[k]));
                bigger.keys[j] = t->keys[k];
                bigger.values[j] = t->values[k];
            }
        free(t->keys);
        free(t->values);
        t->keys = bigger.keys;
        t->values = bigger.values;
        t->cap = bigger.cap;
    }
    i = table_slot(t, key, n);
    if (t->keys[i] != NULL) {
        t->values[i] = value;
        return 1;
    }
    t->keys[i] = strndup(key, n);
    if (t->keys[i] == NULL)
        return -1;
    t->values[i] = value;
    t->count++;
    return 0;
}

/* ------------------------------------------------ number -> number maps */

struct bpe_idmap {
    size_t cap; /* a power of two */
    size_t count;
    uint64_t *keys; /* key + 1; 0: an empty slot */
    uint64_t *values;
};

static size_t
idmap_slot(const struct bpe_idmap *m, uint64_t key)
{
    /* (a multiplicative hash: pairs of ids and trie edges are far from uniform) */
    size_t i = (size_t)((key * 0x9e3779b97f4a7c15ull) >> 17) & (m->cap - 1);

    while (m->keys[i] != 0 && m->keys[i] != key + 1)
        i = (i + 1) & (m->cap - 1);
    return i;
}

struct bpe_idmap *
bpe_idmap_create(size_t expected)
{
    struct bpe_idmap *m = calloc(1, sizeof *m);

    if (m == NULL)
        return NULL;
    m->cap = 16;
    while (m->cap < 2 * expected + 16)
        m->cap *= 2;
    m->keys = calloc(m->cap, sizeof *m->keys);
    m->values = malloc(m->cap * sizeof *m->values);
    if (m->keys == NULL || m->values == NULL) {
        bpe_idmap_destroy(m);
        return NULL;
    }
    return m;
}

void
bpe_idmap_destroy(struct bpe_idmap *m)
{
    if (m == NULL)
        return;
    free(m->keys);
    free(m->values);
    free(m);
}

bool
bpe_idmap_get(const struct bpe_idmap *m, uint64_t key, uint64_t *value)
{
    const size_t i = idmap_slot(m, key);

    if (m->keys[i] == 0)
        return false;
    *value = m->values[i];
    return true;
}

int
bpe_idmap_put(struct bpe_idmap *m, uint64_t key, uint64_t value)
{
    size_t i;

    if (2 * (m->count + 1) > m->cap) {
        struct bpe_idmap bigger = { m->cap * 2, m->count, calloc(m->cap * 2, sizeof(uint64_t)),
                                    malloc(m->cap * 2 * sizeof(uint64_t)) };
        if (bigger.keys == NULL || bigger.values == NULL) {
            free(bigger.keys);
            free(bigger.values);
            return -1;
        }
        for (size_t k = 0; k < m->cap; k++)
            if (m->keys[k] != 0) {
                const size_t j = idmap_slot(&bigger, m->keys[k] - 1);
                bigger.keys[j] = m->keys[k];
                bigger.values[j] = m->values[k];
            }
        free(m->keys);
        free(m->values);
        *m = bigger;
    }
    i = idmap_slot(m, key);
    m->values[i] = value;
    if (m->keys[i] != 0)
        return 1;
    m->keys[i] = key + 1;
    m->count++;
    return 0;
}
