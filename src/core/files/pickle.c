/*
 * pickle.c: a state dict from a pickle, by a machine that executes nothing
 * (see pickle.h).
 *
 * The machine keeps Python's stack, marks and memo, as pickletools
 * describes them, but its values are only data: numbers, strings, tuples,
 * lists, dicts, the three whitelisted names, storages and tensors.  REDUCE
 * "calls" a name by building the value it stands for, and only for the
 * two names that make values (OrderedDict, _rebuild_tensor_v2).  Every
 * value lives in one pool freed at the end, so the memo's shared
 * references and a malformed pickle's cycles cost nothing to free.
 */
#include "config.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnscope/files/pickle.h"

enum kind {
    V_MARK,
    V_NONE,
    V_BOOL,
    V_INT,
    V_FLOAT,
    V_STR,
    V_TUPLE,
    V_LIST,
    V_DICT,
    V_GLOBAL,
    V_STORAGE,
    V_TENSOR,
};

/* The globals a state dict names, the only ones the machine knows. */
enum global {
    G_ORDERED_DICT,
    G_REBUILD_TENSOR,
    G_FLOAT_STORAGE,
    G_HALF_STORAGE,
    G_BFLOAT16_STORAGE,
};

static const struct {
    const char *module, *name;
    enum global g;
} whitelist[] = {
    { "collections", "OrderedDict", G_ORDERED_DICT },
    { "torch._utils", "_rebuild_tensor_v2", G_REBUILD_TENSOR },
    { "torch", "FloatStorage", G_FLOAT_STORAGE },
    { "torch", "HalfStorage", G_HALF_STORAGE },
    { "torch", "BFloat16Storage", G_BFLOAT16_STORAGE },
};

struct value {
    enum kind kind;
    int64_t i;              /* V_INT, V_BOOL; V_GLOBAL: enum global */
    double f;
    char *s;                /* V_STR (NUL-terminated; len bytes) */
    size_t len;
    struct value **items;   /* V_TUPLE, V_LIST; V_DICT: key, value, key, value ... */
    size_t count, cap;
    struct pickle_tensor t; /* V_STORAGE: storage, dtype, storage_numel; V_TENSOR: all */
    struct value *storage;  /* V_TENSOR: its storage */
};

struct machine {
    const unsigned char *p, *end, *start;
    const char *path;
    struct attn_error *err;
    struct value **pool; /* every value made, freed at the end */
    size_t pool_count, pool_cap;
    struct value **stack;
    size_t depth, stack_cap;
    struct value **memo;
    size_t memo_cap;
    size_t memo_next; /* MEMOIZE's next index */
};

static struct value mark = { V_MARK, 0, 0.0, NULL, 0, NULL, 0, 0, { 0 }, NULL };

/* -1 with the message: the pickle's file, the byte, what is wrong. */
static int
fail(struct machine *m, const char *fmt, const char *what)
{
    attn_fail(m->err, ATTN_EPARSE, "%s: data.pkl, byte %zu: %s%s", m->path,
              (size_t)(m->p - m->start), fmt, what != NULL ? what : "");
    return -1;
}

static int
grow(void **array, size_t *cap, size_t need, size_t size)
{
    void *bigger;
    size_t n;

    if (need <= *cap)
        return 0;
    n = *cap > 0 ? *cap : 16;
    while (n < need)
        n *= 2;
    bigger = realloc(*array, n * size);
    if (bigger == NULL)
        return -1;
    *array = bigger;
    *cap = n;
    return 0;
}

static struct value *
make(struct machine *m, enum kind kind)
{
    struct value *v;

    if (m->pool_count >= PICKLE_VALUES_MAX) {
        fail(m, "more values than a state dict makes", NULL);
        return NULL;
    }
    if (grow((void **)&m->pool, &m->pool_cap, m->pool_count + 1, sizeof *m->pool) != 0 ||
        (v = calloc(1, sizeof *v)) == NULL) {
        attn_fail(m->err, ATTN_ENOMEM, "%s: out of memory", m->path);
        return NULL;
    }
    v->kind = kind;
    m->pool[m->pool_count++] = v;
    return v;
}

static int
push(struct machine *m, struct value *v)
{
    if (v == NULL)
        return -1;
    if (grow((void **)&m->stack, &m->stack_cap, m->depth + 1, sizeof *m->stack) != 0) {
        attn_fail(m->err, ATTN_ENOMEM, "%s: out of memory", m->path);
        return -1;
    }
    m->stack[m->depth++] = v;
    return 0;
}

static struct value *
pop(struct machine *m)
{
    if (m->depth == 0 || m->stack[m->depth - 1] == &mark) {
        fail(m, "an opcode takes a value from an empty stack", NULL);
        return NULL;
    }
    return m->stack[--m->depth];
}

static struct value *
top(struct machine *m)
{
    if (m->depth == 0 || m->stack[m->depth - 1] == &mark) {
        fail(m, "an opcode reads a value from an empty stack", NULL);
        return NULL;
    }
    return m->stack[m->depth - 1];
}

/* The values above the last mark (first is where they start), or -1 when there is no mark. */
static int
since_mark(struct machine *m, size_t *first)
{
    for (size_t k = m->depth; k > 0; k--)
        if (m->stack[k - 1] == &mark) {
            *first = k;
            return 0;
        }
    return fail(m, "an opcode wants a mark and there is none", NULL);
}

static int
append(struct machine *m, struct value *to, struct value *v)
{
    if (grow((void **)&to->items, &to->cap, to->count + 1, sizeof *to->items) != 0) {
        attn_fail(m->err, ATTN_ENOMEM, "%s: out of memory", m->path);
        return -1;
    }
    to->items[to->count++] = v;
    return 0;
}

/* A tuple of the n values at the top of the stack (popped). */
static int
tuple_of(struct machine *m, size_t first)
{
    struct value *t = make(m, V_TUPLE);

    if (t == NULL)
        return -1;
    for (size_t k = first; k < m->depth; k++)
        if (append(m, t, m->stack[k]) != 0)
            return -1;
    m->depth = first;
    return push(m, t);
}

/* n bytes of the opcode's argument, or NULL past the end. */
static const unsigned char *
take(struct machine *m, size_t n)
{
    const unsigned char *at = m->p;

    if ((size_t)(m->end - m->p) < n) {
        fail(m, "the pickle ends inside an opcode", NULL);
        return NULL;
    }
    m->p += n;
    return at;
}

static uint64_t
little(const unsigned char *b, int n)
{
    uint64_t v = 0;

    for (int k = n - 1; k >= 0; k--)
        v = v << 8 | b[k];
    return v;
}

static int
memo_put(struct machine *m, uint64_t index)
{
    struct value *v = top(m);
    size_t had = m->memo_cap;

    if (v == NULL)
        return -1;
    if (index >= PICKLE_VALUES_MAX)
        return fail(m, "a memo index larger than a state dict uses", NULL);
    if (grow((void **)&m->memo, &m->memo_cap, (size_t)index + 1, sizeof *m->memo) != 0) {
        attn_fail(m->err, ATTN_ENOMEM, "%s: out of memory", m->path);
        return -1;
    }
    /* Entries never written read as absent. */
    for (size_t k = had; k < m->memo_cap; k++)
        m->memo[k] = NULL;
    m->memo[index] = v;
    return 0;
}

static int
memo_get(struct machine *m, uint64_t index)
{
    if (index >= m->memo_cap || m->memo[index] == NULL)
        return fail(m, "a memo entry is read before it is written", NULL);
    return push(m, m->memo[index]);
}

static int
string(struct machine *m, size_t n)
{
    const unsigned char *b = take(m, n);
    struct value *v;

    if (b == NULL || (v = make(m, V_STR)) == NULL)
        return -1;
    v->s = malloc(n + 1);
    if (v->s == NULL) {
        attn_fail(m->err, ATTN_ENOMEM, "%s: out of memory", m->path);
        return -1;
    }
    memcpy(v->s, b, n);
    v->s[n] = '\0';
    v->len = n;
    return push(m, v);
}

static int
integer(struct machine *m, int64_t i)
{
    struct value *v = make(m, V_INT);

    if (v == NULL)
        return -1;
    v->i = i;
    return push(m, v);
}

/* A global by its module and name: one of the whitelist's, or refused by name. */
static int
global(struct machine *m, const char *module, size_t ml, const char *name, size_t nl)
{
    char what[300];
    struct value *v;

    for (size_t k = 0; k < sizeof whitelist / sizeof whitelist[0]; k++)
        if (strlen(whitelist[k].module) == ml && memcmp(whitelist[k].module, module, ml) == 0 &&
            strlen(whitelist[k].name) == nl && memcmp(whitelist[k].name, name, nl) == 0) {
            if ((v = make(m, V_GLOBAL)) == NULL)
                return -1;
            v->i = whitelist[k].g;
            return push(m, v);
        }
    /* Printable in the message whatever the bytes: anything else becomes '?'. */
    snprintf(what, sizeof what, "%.*s.%.*s", (int)(ml < 120 ? ml : 120), module,
             (int)(nl < 120 ? nl : 120), name);
    for (char *c = what; *c != '\0'; c++)
        if ((unsigned char)*c < 0x20 || (unsigned char)*c >= 0x7f)
            *c = '?';
    attn_fail(m->err, ATTN_EPARSE,
              "%s: refuses to load %s: not a state dict (attnscope reads tensors and runs nothing "
              "a pickle names); save model.state_dict() instead",
              m->path, what);
    return -1;
}

/* GLOBAL's argument: "module\nname\n". */
static int
global_lines(struct machine *m)
{
    const unsigned char *module = m->p;
    const unsigned char *nl1 = memchr(module, '\n', (size_t)(m->end - module));
    const unsigned char *name;
    const unsigned char *nl2;

    if (nl1 == NULL || (nl2 = memchr(nl1 + 1, '\n', (size_t)(m->end - nl1 - 1))) == NULL)
        return fail(m, "GLOBAL's module and name do not end", NULL);
    name = nl1 + 1;
    m->p = nl2 + 1;
    return global(m, (const char *)module, (size_t)(nl1 - module), (const char *)name,
                  (size_t)(nl2 - name));
}

static bool
is_int(const struct value *v)
{
    return v != NULL && v->kind == V_INT;
}

/* BINPERSID's id: ('storage', StorageType, key, location, numel): a storage. */
static int
persistent(struct machine *m)
{
    struct value *id = pop(m);
    struct value *s;
    struct value *type;

    if (id == NULL)
        return -1;
    if (id->kind != V_TUPLE || id->count != 5 || id->items[0]->kind != V_STR ||
        strcmp(id->items[0]->s, "storage") != 0 || id->items[1]->kind != V_GLOBAL ||
        id->items[2]->kind != V_STR || !is_int(id->items[4]))
        return fail(m, "a persistent id that is not a storage's ('storage', type, key, location, "
                       "size)",
                    NULL);
    type = id->items[1];
    if (type->i != G_FLOAT_STORAGE && type->i != G_HALF_STORAGE && type->i != G_BFLOAT16_STORAGE)
        return fail(m, "a storage of a type that is not one", NULL);
    if (id->items[4]->i < 0 || id->items[2]->len == 0 || id->items[2]->len > 64 ||
        strchr(id->items[2]->s, '/') != NULL || memchr(id->items[2]->s, '\0', id->items[2]->len))
        return fail(m, "a storage's key or size is not one", NULL);
    if ((s = make(m, V_STORAGE)) == NULL)
        return -1;
    s->t.storage = id->items[2]->s;
    s->t.storage_numel = id->items[4]->i;
    s->t.dtype = type->i == G_FLOAT_STORAGE  ? TENSOR_F32
                 : type->i == G_HALF_STORAGE ? TENSOR_F16
                                             : TENSOR_BF16;
    return push(m, s);
}

/* A tuple of whole numbers into out (at most TENSOR_NDIM_MAX); -1 when it is not one. */
static int
dims(const struct value *v, int64_t *out)
{
    if (v->kind != V_TUPLE || v->count > TENSOR_NDIM_MAX)
        return -1;
    for (size_t k = 0; k < v->count; k++) {
        if (!is_int(v->items[k]) || v->items[k]->i < 0)
            return -1;
        out[k] = v->items[k]->i;
    }
    return (int)v->count;
}

/* _rebuild_tensor_v2(storage, offset, size, stride, requires_grad, hooks[, metadata]). */
static int
rebuild_tensor(struct machine *m, const struct value *args)
{
    int64_t stride[TENSOR_NDIM_MAX];
    struct value *t;
    int n;

    if (args->count < 6 || args->count > 7 || args->items[0]->kind != V_STORAGE ||
        !is_int(args->items[1]) || args->items[1]->i < 0)
        return fail(m, "_rebuild_tensor_v2 is not given a storage and an offset", NULL);
    if ((t = make(m, V_TENSOR)) == NULL)
        return -1;
    t->storage = args->items[0];
    t->t = args->items[0]->t;
    t->t.offset = args->items[1]->i;
    n = dims(args->items[2], t->t.shape);
    if (n < 0 || dims(args->items[3], stride) != n)
        return fail(m, "a tensor's size and strides are not tuples of as many counts (at most 8)",
                    NULL);
    t->t.ndim = n;
    memcpy(t->t.stride, stride, sizeof stride);
    return push(m, t);
}

/* REDUCE: a whitelisted callable and its arguments, as the value it would make. */
static int
reduce(struct machine *m)
{
    struct value *args = pop(m);
    struct value *callable = pop(m);

    if (args == NULL || callable == NULL)
        return -1;
    if (callable->kind != V_GLOBAL || args->kind != V_TUPLE)
        return fail(m, "REDUCE of something that is not a known name and its arguments", NULL);
    if (callable->i == G_ORDERED_DICT) {
        if (args->count != 0)
            return fail(m, "OrderedDict is given items (state dicts fill it with SETITEMS)", NULL);
        return push(m, make(m, V_DICT));
    }
    if (callable->i == G_REBUILD_TENSOR)
        return rebuild_tensor(m, args);
    return fail(m, "a storage type is called", NULL);
}

/*
 * SETITEM(S) / APPEND(S): the values from first on into the dict or list at
 * stack[at]; the stack is then cut back to keep.
 */
static int
fill(struct machine *m, size_t at, size_t first, size_t keep, enum kind want)
{
    struct value *into = m->stack[at];

    if (into == &mark || into->kind != want)
        return fail(m, want == V_DICT ? "SETITEMS into something that is not a dict"
                                      : "APPENDS into something that is not a list",
                    NULL);
    if (want == V_DICT && (m->depth - first) % 2 != 0)
        return fail(m, "SETITEMS with a key and no value", NULL);
    for (size_t k = first; k < m->depth; k++) {
        if (m->stack[k] == &mark)
            return fail(m, "a mark among the items", NULL);
        if (append(m, into, m->stack[k]) != 0)
            return -1;
    }
    m->depth = keep;
    return 0;
}

/* The names of the opcodes a state dict does not use, for the message that refuses them. */
static const char *
opcode_name(unsigned char op)
{
    static const struct {
        unsigned char op;
        const char *name;
    } names[] = {
        { 'i', "INST" },        { 'o', "OBJ" },         { 0x81, "NEWOBJ" },
        { 0x92, "NEWOBJ_EX" },  { 'P', "PERSID" },      { 'I', "INT" },
        { 'L', "LONG" },        { 'F', "FLOAT" },       { 'S', "STRING" },
        { 'T', "BINSTRING" },   { 'U', "SHORT_BINSTRING" }, { 'V', "UNICODE" },
        { 'B', "BINBYTES" },    { 'C', "SHORT_BINBYTES" }, { 0x8e, "BINBYTES8" },
        { 0x96, "BYTEARRAY8" }, { 0x97, "NEXT_BUFFER" }, { 0x98, "READONLY_BUFFER" },
        { 0x8b, "LONG4" },      { 'l', "LIST" },        { 'd', "DICT" },
        { 0x8f, "EMPTY_SET" },  { 0x90, "ADDITEMS" },   { 0x91, "FROZENSET" },
        { '0', "POP" },         { '1', "POP_MARK" },    { '2', "DUP" },
        { 'p', "PUT" },         { 'g', "GET" },         { 0x82, "EXT1" },
        { 0x83, "EXT2" },       { 0x84, "EXT4" },
    };

    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++)
        if (names[k].op == op)
            return names[k].name;
    return "unknown";
}

/* One opcode: 0 to go on, 1 at STOP, -1 on an error. */
static int
step(struct machine *m)
{
    const unsigned char op = *m->p++;
    const unsigned char *b;
    struct value *v;
    size_t first;

    switch (op) {
    case 0x80: /* PROTO */
        if ((b = take(m, 1)) == NULL)
            return -1;
        return *b >= 2 && *b <= 5 ? 0 : fail(m, "a pickle protocol other than 2 to 5", NULL);
    case 0x95: /* FRAME */
        return take(m, 8) == NULL ? -1 : 0;
    case '.': /* STOP */
        return 1;
    case '(': /* MARK */
        return push(m, &mark);
    case ')': /* EMPTY_TUPLE */
        return push(m, make(m, V_TUPLE));
    case ']': /* EMPTY_LIST */
        return push(m, make(m, V_LIST));
    case '}': /* EMPTY_DICT */
        return push(m, make(m, V_DICT));
    case 't': /* TUPLE: the values above the mark, the mark dropped */
        if (since_mark(m, &first) != 0 || (v = make(m, V_TUPLE)) == NULL)
            return -1;
        for (size_t k = first; k < m->depth; k++)
            if (append(m, v, m->stack[k]) != 0)
                return -1;
        m->depth = first - 1;
        return push(m, v);
    case 0x85: /* TUPLE1 */
    case 0x86: /* TUPLE2 */
    case 0x87: /* TUPLE3 */
        first = (size_t)(op - 0x84);
        if (m->depth < first)
            return fail(m, "a tuple of more values than the stack has", NULL);
        for (size_t k = m->depth - first; k < m->depth; k++)
            if (m->stack[k] == &mark)
                return fail(m, "a tuple takes a mark", NULL);
        return tuple_of(m, m->depth - first);
    case 'a': /* APPEND */
        if (m->depth < 2)
            return fail(m, "APPEND without a list and a value", NULL);
        return fill(m, m->depth - 2, m->depth - 1, m->depth - 1, V_LIST);
    case 'e': /* APPENDS */
    case 'u': /* SETITEMS: the list or dict is below the mark; the mark goes */
        if (since_mark(m, &first) != 0)
            return -1;
        if (first < 2)
            return fail(m, "a mark with nothing below it to fill", NULL);
        return fill(m, first - 2, first, first - 1, op == 'e' ? V_LIST : V_DICT);
    case 's': /* SETITEM */
        if (m->depth < 3)
            return fail(m, "SETITEM without a dict, a key and a value", NULL);
        return fill(m, m->depth - 3, m->depth - 2, m->depth - 2, V_DICT);
    case 'q': /* BINPUT */
        return (b = take(m, 1)) == NULL ? -1 : memo_put(m, *b);
    case 'r': /* LONG_BINPUT */
        return (b = take(m, 4)) == NULL ? -1 : memo_put(m, little(b, 4));
    case 0x94: /* MEMOIZE */
        return memo_put(m, m->memo_next++);
    case 'h': /* BINGET */
        return (b = take(m, 1)) == NULL ? -1 : memo_get(m, *b);
    case 'j': /* LONG_BINGET */
        return (b = take(m, 4)) == NULL ? -1 : memo_get(m, little(b, 4));
    case 'K': /* BININT1 */
        return (b = take(m, 1)) == NULL ? -1 : integer(m, *b);
    case 'M': /* BININT2 */
        return (b = take(m, 2)) == NULL ? -1 : integer(m, (int64_t)little(b, 2));
    case 'J': /* BININT */
        return (b = take(m, 4)) == NULL ? -1 : integer(m, (int32_t)(uint32_t)little(b, 4));
    case 0x8a: /* LONG1 */
        if ((b = take(m, 1)) == NULL)
            return -1;
        first = *b;
        if (first > 8)
            return fail(m, "an integer wider than 64 bits", NULL);
        if ((b = take(m, first)) == NULL)
            return -1;
        {
            uint64_t u = little(b, (int)first);
            /* Two's complement in first bytes: sign-extend. */
            if (first > 0 && first < 8 && (b[first - 1] & 0x80))
                u |= ~(uint64_t)0 << (8 * first);
            return integer(m, (int64_t)u);
        }
    case 'G': /* BINFLOAT: big-endian */
        if ((b = take(m, 8)) == NULL || (v = make(m, V_FLOAT)) == NULL)
            return -1;
        {
            uint64_t bits = 0;
            for (int k = 0; k < 8; k++)
                bits = bits << 8 | b[k];
            memcpy(&v->f, &bits, sizeof v->f);
        }
        return push(m, v);
    case 'X': /* BINUNICODE */
        return (b = take(m, 4)) == NULL ? -1 : string(m, (size_t)little(b, 4));
    case 0x8c: /* SHORT_BINUNICODE */
        return (b = take(m, 1)) == NULL ? -1 : string(m, *b);
    case 0x8d: /* BINUNICODE8 */
        if ((b = take(m, 8)) == NULL)
            return -1;
        if (little(b, 8) > (uint64_t)(m->end - m->p))
            return fail(m, "the pickle ends inside an opcode", NULL);
        return string(m, (size_t)little(b, 8));
    case 'N': /* NONE */
        return push(m, make(m, V_NONE));
    case 0x88: /* NEWTRUE */
    case 0x89: /* NEWFALSE */
        if ((v = make(m, V_BOOL)) == NULL)
            return -1;
        v->i = op == 0x88;
        return push(m, v);
    case 'c': /* GLOBAL */
        return global_lines(m);
    case 0x93: /* STACK_GLOBAL */
    {
        struct value *name = pop(m);
        struct value *module = name != NULL ? pop(m) : NULL;
        if (module == NULL)
            return -1;
        if (module->kind != V_STR || name->kind != V_STR)
            return fail(m, "STACK_GLOBAL of something that is not two names", NULL);
        return global(m, module->s, module->len, name->s, name->len);
    }
    case 'Q': /* BINPERSID */
        return persistent(m);
    case 'R': /* REDUCE */
        return reduce(m);
    case 'b': /* BUILD: a state dict's _metadata attribute; nothing else is built */
        if ((v = pop(m)) == NULL || top(m) == NULL)
            return -1;
        if (top(m)->kind != V_DICT || v->kind != V_DICT)
            return fail(m, "BUILD of something that is not a dict's attributes", NULL);
        return 0;
    default:
        m->p--;
        {
            char what[64];
            snprintf(what, sizeof what, "0x%02x (%s)", op, opcode_name(op));
            return fail(m, "the pickle uses an opcode a state dict does not: ", what);
        }
    }
}

/* The value of key in dict d, or NULL. */
static const struct value *
lookup(const struct value *d, const char *key)
{
    for (size_t k = 0; k + 1 < d->count; k += 2)
        if (d->items[k]->kind == V_STR && strcmp(d->items[k]->s, key) == 0)
            return d->items[k + 1];
    return NULL;
}

/* The state dict: the tensors of d, each named by its string key. */
static enum attn_status
take_state_dict(struct machine *m, const struct value *d, struct pickle_state_dict *sd)
{
    size_t tensors = 0;

    for (size_t k = 0; k + 1 < d->count; k += 2)
        tensors += d->items[k + 1]->kind == V_TENSOR;
    if (tensors == 0)
        return attn_fail(m->err, ATTN_EPARSE,
                         "%s: holds no tensors by name: not a state dict (save "
                         "model.state_dict())",
                         m->path);
    sd->tensors = calloc(tensors, sizeof *sd->tensors);
    if (sd->tensors == NULL)
        return attn_fail(m->err, ATTN_ENOMEM, "%s: out of memory", m->path);
    for (size_t k = 0; k + 1 < d->count; k += 2) {
        const struct value *key = d->items[k];
        const struct value *t = d->items[k + 1];
        struct pickle_tensor *out = &sd->tensors[sd->count];
        if (t->kind != V_TENSOR)
            continue;
        if (key->kind != V_STR || key->len == 0 || memchr(key->s, '\0', key->len) != NULL)
            return attn_fail(m->err, ATTN_EPARSE,
                             "%s: a tensor of the state dict is not named by a string", m->path);
        *out = t->t;
        out->name = strdup(key->s);
        out->storage = strdup(t->t.storage);
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
    struct machine m = { data, data + len, data, path, err, NULL, 0, 0, NULL, 0, 0, NULL, 0, 0 };
    const struct value *result = NULL;
    enum attn_status rc = ATTN_EPARSE;
    int r = 0;

    memset(sd, 0, sizeof *sd);
    while (r == 0) {
        if (m.p >= m.end) {
            fail(&m, "the pickle ends without STOP", NULL);
            r = -1;
            break;
        }
        r = step(&m);
    }
    if (r == 1) {
        if (m.depth != 1 || m.stack[0] == &mark)
            fail(&m, "STOP leaves other than one value", NULL);
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
    for (size_t k = 0; k < m.pool_count; k++) {
        free(m.pool[k]->s);
        free(m.pool[k]->items);
        free(m.pool[k]);
    }
    free(m.pool);
    free(m.stack);
    free(m.memo);
    if (rc != ATTN_OK)
        pickle_state_dict_free(sd);
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
