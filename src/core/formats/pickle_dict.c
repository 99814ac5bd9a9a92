/*
 * pickle_dict.c: a state dict from a pickle (see pickle.h): the machine of
 * pickle.c run to STOP, its one value taken as the dict of tensors (or the
 * dict a checkpoint nests it under), and the machine's values freed.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "attnscope/formats/pickle.h"
#include "pickle_internal.h"

/* Frees what a value holds beside itself. */
static void
forget(struct value *v)
{
    switch ((enum kind)v->kind) {
    case V_STR:
        free(v->u.str.s);
        break;
    case V_TUPLE:
    case V_LIST:
    case V_DICT:
        free(v->u.items);
        break;
    case V_STORAGE:
    case V_TENSOR:
        free(v->u.t);
        break;
    case V_MARK:
    case V_NONE:
    case V_BOOL:
    case V_INT:
    case V_FLOAT:
    case V_GLOBAL:
        break;
    }
}

/* The value of key in dict d, or NULL. */
static const struct value *
lookup(const struct value *d, const char *key)
{
    for (size_t k = 0; k + 1 < d->count; k += 2)
        if (d->u.items[k]->kind == V_STR && strcmp(d->u.items[k]->u.str.s, key) == 0)
            return d->u.items[k + 1];
    return NULL;
}

/* The state dict: the tensors of d, each named by its string key. */
static enum attn_status
take_state_dict(struct machine *m, const struct value *d, struct pickle_state_dict *sd)
{
    size_t tensors = 0;

    for (size_t k = 0; k + 1 < d->count; k += 2)
        tensors += d->u.items[k + 1]->kind == V_TENSOR;
    if (tensors == 0)
        return attn_fail(m->err, ATTN_EPARSE,
                         "%s: holds no tensors by name: not a state dict (save "
                         "model.state_dict())",
                         m->path);
    sd->tensors = calloc(tensors, sizeof *sd->tensors);
    if (sd->tensors == NULL)
        return attn_fail(m->err, ATTN_ENOMEM, "%s: out of memory", m->path);
    for (size_t k = 0; k + 1 < d->count; k += 2) {
        const struct value *key = d->u.items[k];
        const struct value *t = d->u.items[k + 1];
        struct pickle_tensor *out = &sd->tensors[sd->count];
        if (t->kind != V_TENSOR)
            continue;
        if (key->kind != V_STR || key->u.str.len == 0 ||
            memchr(key->u.str.s, '\0', key->u.str.len) != NULL)
            return attn_fail(m->err, ATTN_EPARSE,
                             "%s: a tensor of the state dict is not named by a string", m->path);
        *out = *t->u.t;
        out->name = strdup(key->u.str.s);
        out->storage = strdup(t->u.t->storage);
        sd->count++;
        if (out->name == NULL || out->storage == NULL)
            return attn_fail(m->err, ATTN_ENOMEM, "%s: out of memory", m->path);
    }
    return ATTN_OK;
}

enum attn_status
pickle_state_dict(const unsigned char *data, size_t len, const char *path,
                  struct pickle_state_dict *sd, struct attn_error *err)
{
    static const char *const nested[] = { "model_state_dict", "state_dict", "model" };
    struct machine m;
    const struct value *result = NULL;
    enum attn_status rc = ATTN_EPARSE;
    int r = 0;

    memset(sd, 0, sizeof *sd);
    memset(&m, 0, sizeof m);
    m.p = m.start = data;
    m.end = data + len;
    m.path = path;
    m.err = err;
    m.bytes_max = pickle_memory_max(len);
    while (r == 0) {
        if (m.p >= m.end) {
            pickle_fail(&m, "the pickle ends without STOP", NULL);
            r = -1;
            break;
        }
        r = pickle_step(&m);
    }
    if (r == 1) {
        if (m.depth != 1 || m.stack[0] == &pickle_mark)
            pickle_fail(&m, "STOP leaves other than one value", NULL);
        else
            result = m.stack[0];
    }
    if (result != NULL && result->kind != V_DICT) {
        attn_fail(err, ATTN_EPARSE, "%s: holds a %s, not a state dict (save model.state_dict())",
                  path, result->kind == V_TENSOR ? "single tensor" : "value of another kind");
        result = NULL;
    }
    for (size_t k = 0; result != NULL && k < sizeof nested / sizeof nested[0]; k++) {
        const struct value *inner = lookup(result, nested[k]);
        if (inner != NULL && inner->kind == V_DICT) {
            result = inner;
            sd->under = nested[k];
            break;
        }
    }
    if (result != NULL)
        rc = take_state_dict(&m, result, sd);
    /* The newest slab holds slab_used values, every older one is full. */
    for (size_t used = m.slab_used; m.slabs != NULL; used = SLAB_VALUES) {
        struct slab *next = m.slabs->next;
        for (size_t k = 0; k < used; k++)
            forget(&m.slabs->v[k]);
        free(m.slabs);
        m.slabs = next;
    }
    free(m.stack);
    free(m.memo);
    if (rc != ATTN_OK)
        pickle_state_dict_free(sd);
    sd->memory = m.bytes;
    return rc;
}

void
pickle_state_dict_free(struct pickle_state_dict *sd)
{
    for (int i = 0; sd->tensors != NULL && i < sd->count; i++) {
        free(sd->tensors[i].name);
        free(sd->tensors[i].storage);
    }
    free(sd->tensors);
    memset(sd, 0, sizeof *sd);
}
