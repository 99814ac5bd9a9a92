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

#include "attnscope/formats/pickle.h"
#include "pickle_internal.h"

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

/* Values no opcode changes are shared, not made: the mark, None, True, False, (). */
struct value pickle_mark = { V_MARK, 0, 0, { 0 } };
static struct value none = { V_NONE, 0, 0, { 0 } };
static struct value true_value = { V_BOOL, 0, 0, { .i = 1 } };
static struct value false_value = { V_BOOL, 0, 0, { .i = 0 } };
static struct value empty_tuple = { V_TUPLE, 0, 0, { 0 } };
/* And the integers BININT1 pushes, 0 to 255 (a shape's and an offset's numbers, mostly). */
#define INT1(n) { V_INT, 0, 0, { .i = (n) } }
#define INT4(n) INT1(n), INT1((n) + 1), INT1((n) + 2), INT1((n) + 3)
#define INT16(n) INT4(n), INT4((n) + 4), INT4((n) + 8), INT4((n) + 12)
#define INT64(n) INT16(n), INT16((n) + 16), INT16((n) + 32), INT16((n) + 48)
static struct value small_ints[256] = { INT64(0), INT64(64), INT64(128), INT64(192) };

/* -1 with the message: the pickle's file, the byte, what is wrong. */
int
pickle_fail(struct machine *m, const char *fmt, const char *what)
{
    attn_fail(m->err, ATTN_EPARSE, "%s: data.pkl, byte %zu: %s%s", m->path,
              (size_t)(m->p - m->start), fmt, what != NULL ? what : "");
    return -1;
}

/*
 * n more bytes held: refused past what a state dict's pickle of this size
 * needs (bytes_max), so that the memory follows the file, not its opcodes.
 */
static int
charge(struct machine *m, size_t n)
{
    if (n > m->bytes_max - m->bytes) {
        attn_fail(m->err, ATTN_ENOMEM,
                  "%s: data.pkl, byte %zu: the pickle (%zu bytes) asks for more than the %zu MiB "
                  "a state dict of its size needs: refused",
                  m->path, (size_t)(m->p - m->start), (size_t)(m->end - m->start),
                  m->bytes_max >> 20);
        return -1;
    }
    m->bytes += n;
    return 0;
}

/* An array of at least need elements of size bytes (doubling), charged; -1 with err set. */
static int
grow(struct machine *m, void **array, size_t *cap, size_t need, size_t size)
{
    void *bigger;
    size_t n;

    if (need <= *cap)
        return 0;
    n = *cap > 0 ? *cap : 16;
    while (n < need)
        n *= 2;
    if (charge(m, (n - *cap) * size) != 0)
        return -1;
    bigger = realloc(*array, n * size);
    if (bigger == NULL) {
        attn_fail(m->err, ATTN_ENOMEM, "%s: out of memory", m->path);
        return -1;
    }
    *array = bigger;
    *cap = n;
    return 0;
}

static struct value *
make(struct machine *m, enum kind kind)
{
    struct value *v;

    if (m->values >= PICKLE_VALUES_MAX) {
        pickle_fail(m, "more values than a state dict makes", NULL);
        return NULL;
    }
    if (m->slabs == NULL || m->slab_used == SLAB_VALUES) {
        struct slab *s;
        if (charge(m, sizeof *s) != 0)
            return NULL;
        if ((s = malloc(sizeof *s)) == NULL) {
            attn_fail(m->err, ATTN_ENOMEM, "%s: out of memory", m->path);
            return NULL;
        }
        s->next = m->slabs;
        m->slabs = s;
        m->slab_used = 0;
    }
    v = &m->slabs->v[m->slab_used++];
    memset(v, 0, sizeof *v);
    v->kind = (unsigned char)kind;
    m->values++;
    return v;
}

/* A storage's or tensor's own record, for v. */
static int
make_tensor(struct machine *m, struct value *v)
{
    if (charge(m, sizeof *v->u.t) != 0)
        return -1;
    if ((v->u.t = calloc(1, sizeof *v->u.t)) == NULL) {
        attn_fail(m->err, ATTN_ENOMEM, "%s: out of memory", m->path);
        return -1;
    }
    return 0;
}

static int
push(struct machine *m, struct value *v)
{
    if (v == NULL)
        return -1;
    if (m->depth >= PICKLE_STACK_MAX)
        return pickle_fail(m, "the stack grows deeper than a state dict's", NULL);
    if (grow(m, (void **)&m->stack, &m->stack_cap, m->depth + 1, sizeof *m->stack) != 0)
        return -1;
    m->stack[m->depth++] = v;
    return 0;
}

static struct value *
pop(struct machine *m)
{
    if (m->depth == 0 || m->stack[m->depth - 1] == &pickle_mark) {
        pickle_fail(m, "an opcode takes a value from an empty stack", NULL);
        return NULL;
    }
    return m->stack[--m->depth];
}

static struct value *
top(struct machine *m)
{
    if (m->depth == 0 || m->stack[m->depth - 1] == &pickle_mark) {
        pickle_fail(m, "an opcode reads a value from an empty stack", NULL);
        return NULL;
    }
    return m->stack[m->depth - 1];
}

/* The values above the last mark (first is where they start), or -1 when there is no mark. */
static int
since_mark(struct machine *m, size_t *first)
{
    for (size_t k = m->depth; k > 0; k--)
        if (m->stack[k - 1] == &pickle_mark) {
            *first = k;
            return 0;
        }
    return pickle_fail(m, "an opcode wants a mark and there is none", NULL);
}

static int
append(struct machine *m, struct value *to, struct value *v)
{
    size_t cap = to->cap;

    if (grow(m, (void **)&to->u.items, &cap, (size_t)to->count + 1, sizeof *to->u.items) != 0)
        return -1;
    to->cap = (uint32_t)cap; /* (at most PICKLE_VALUES_MAX items, far below 2^32) */
    to->u.items[to->count++] = v;
    return 0;
}

/*
 * A tuple of the values from stack[first] up (popped, and the stack cut
 * back to keep): its items in an array of exactly their number.
 */
static int
tuple_of(struct machine *m, size_t first, size_t keep)
{
    const size_t n = m->depth - first;
    struct value *t;

    if (n == 0) {
        m->depth = keep;
        return push(m, &empty_tuple);
    }
    if ((t = make(m, V_TUPLE)) == NULL || charge(m, n * sizeof *t->u.items) != 0)
        return -1;
    if ((t->u.items = malloc(n * sizeof *t->u.items)) == NULL) {
        attn_fail(m->err, ATTN_ENOMEM, "%s: out of memory", m->path);
        return -1;
    }
    memcpy(t->u.items, m->stack + first, n * sizeof *t->u.items);
    t->count = t->cap = (uint32_t)n;
    m->depth = keep;
    return push(m, t);
}

/* n bytes of the opcode's argument, or NULL past the end. */
static const unsigned char *
take(struct machine *m, size_t n)
{
    const unsigned char *at = m->p;

    if ((size_t)(m->end - m->p) < n) {
        pickle_fail(m, "the pickle ends inside an opcode", NULL);
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
    /* A pickler numbers what it memoizes from 0, each a value made before. */
    if (index > m->values + 16)
        return pickle_fail(m, "a memo index past the values made so far", NULL);
    if (grow(m, (void **)&m->memo, &m->memo_cap, (size_t)index + 1, sizeof *m->memo) != 0)
        return -1;
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
        return pickle_fail(m, "a memo entry is read before it is written", NULL);
    return push(m, m->memo[index]);
}

static int
string(struct machine *m, size_t n)
{
    const unsigned char *b = take(m, n);
    struct value *v;

    /* (Charged with malloc's own header: an empty string is not free.) */
    if (b == NULL || (v = make(m, V_STR)) == NULL || charge(m, n + 1 + 16) != 0)
        return -1;
    v->u.str.s = malloc(n + 1);
    if (v->u.str.s == NULL) {
        attn_fail(m->err, ATTN_ENOMEM, "%s: out of memory", m->path);
        return -1;
    }
    memcpy(v->u.str.s, b, n);
    v->u.str.s[n] = '\0';
    v->u.str.len = n;
    return push(m, v);
}

static int
integer(struct machine *m, int64_t i)
{
    struct value *v = make(m, V_INT);

    if (v == NULL)
        return -1;
    v->u.i = i;
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
            v->u.i = whitelist[k].g;
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
        return pickle_fail(m, "GLOBAL's module and name do not end", NULL);
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
    struct value *key;

    if (id == NULL)
        return -1;
    if (id->kind != V_TUPLE || id->count != 5 || id->u.items[0]->kind != V_STR ||
        strcmp(id->u.items[0]->u.str.s, "storage") != 0 || id->u.items[1]->kind != V_GLOBAL ||
        id->u.items[2]->kind != V_STR || !is_int(id->u.items[4]))
        return pickle_fail(m, "a persistent id that is not a storage's ('storage', type, key, location, "
                       "size)",
                    NULL);
    type = id->u.items[1];
    key = id->u.items[2];
    if (type->u.i != G_FLOAT_STORAGE && type->u.i != G_HALF_STORAGE &&
        type->u.i != G_BFLOAT16_STORAGE)
        return pickle_fail(m, "a storage of a type that is not one", NULL);
    if (id->u.items[4]->u.i < 0 || key->u.str.len == 0 || key->u.str.len > 64 ||
        strchr(key->u.str.s, '/') != NULL || memchr(key->u.str.s, '\0', key->u.str.len))
        return pickle_fail(m, "a storage's key or size is not one", NULL);
    if ((s = make(m, V_STORAGE)) == NULL || make_tensor(m, s) != 0)
        return -1;
    s->u.t->storage = key->u.str.s;
    s->u.t->storage_numel = id->u.items[4]->u.i;
    s->u.t->dtype = type->u.i == G_FLOAT_STORAGE  ? TENSOR_F32
                    : type->u.i == G_HALF_STORAGE ? TENSOR_F16
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
        if (!is_int(v->u.items[k]) || v->u.items[k]->u.i < 0)
            return -1;
        out[k] = v->u.items[k]->u.i;
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

    if (args->count < 6 || args->count > 7 || args->u.items[0]->kind != V_STORAGE ||
        !is_int(args->u.items[1]) || args->u.items[1]->u.i < 0)
        return pickle_fail(m, "_rebuild_tensor_v2 is not given a storage and an offset", NULL);
    if ((t = make(m, V_TENSOR)) == NULL || make_tensor(m, t) != 0)
        return -1;
    *t->u.t = *args->u.items[0]->u.t;
    t->u.t->offset = args->u.items[1]->u.i;
    n = dims(args->u.items[2], t->u.t->shape);
    if (n < 0 || dims(args->u.items[3], stride) != n)
        return pickle_fail(m, "a tensor's size and strides are not tuples of as many counts (at most 8)",
                    NULL);
    t->u.t->ndim = n;
    memcpy(t->u.t->stride, stride, sizeof stride);
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
        return pickle_fail(m, "REDUCE of something that is not a known name and its arguments", NULL);
    if (callable->u.i == G_ORDERED_DICT) {
        if (args->count != 0)
            return pickle_fail(m, "OrderedDict is given items (state dicts fill it with SETITEMS)", NULL);
        return push(m, make(m, V_DICT));
    }
    if (callable->u.i == G_REBUILD_TENSOR)
        return rebuild_tensor(m, args);
    return pickle_fail(m, "a storage type is called", NULL);
}

/*
 * SETITEM(S) / APPEND(S): the values from first on into the dict or list at
 * stack[at]; the stack is then cut back to keep.
 */
static int
fill(struct machine *m, size_t at, size_t first, size_t keep, enum kind want)
{
    struct value *into = m->stack[at];

    if (into == &pickle_mark || into->kind != want)
        return pickle_fail(m, want == V_DICT ? "SETITEMS into something that is not a dict"
                                      : "APPENDS into something that is not a list",
                    NULL);
    if (want == V_DICT && (m->depth - first) % 2 != 0)
        return pickle_fail(m, "SETITEMS with a key and no value", NULL);
    for (size_t k = first; k < m->depth; k++) {
        if (m->stack[k] == &pickle_mark)
            return pickle_fail(m, "a mark among the items", NULL);
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

/* TUPLE1, TUPLE2, TUPLE3: the n values at the top of the stack. */
static int
small_tuple(struct machine *m, size_t n)
{
    if (m->depth < n)
        return pickle_fail(m, "a tuple of more values than the stack has", NULL);
    for (size_t k = m->depth - n; k < m->depth; k++)
        if (m->stack[k] == &pickle_mark)
            return pickle_fail(m, "a tuple takes a mark", NULL);
    return tuple_of(m, m->depth - n, m->depth - n);
}

/* LONG1: a count of bytes, then a little-endian two's complement integer of them. */
static int
long1(struct machine *m)
{
    const unsigned char *b = take(m, 1);
    size_t n;
    uint64_t u;

    if (b == NULL)
        return -1;
    n = *b;
    if (n > 8)
        return pickle_fail(m, "an integer wider than 64 bits", NULL);
    if ((b = take(m, n)) == NULL)
        return -1;
    u = little(b, (int)n);
    /* Two's complement in n bytes: sign-extend. */
    if (n > 0 && n < 8 && (b[n - 1] & 0x80))
        u |= ~(uint64_t)0 << (8 * n);
    return integer(m, (int64_t)u);
}

/* BINFLOAT: a double, big-endian. */
static int
binfloat(struct machine *m)
{
    const unsigned char *b = take(m, 8);
    struct value *v;
    uint64_t bits = 0;

    if (b == NULL || (v = make(m, V_FLOAT)) == NULL)
        return -1;
    for (int k = 0; k < 8; k++)
        bits = bits << 8 | b[k];
    memcpy(&v->u.f, &bits, sizeof v->u.f);
    return push(m, v);
}

/* STACK_GLOBAL: the module and name at the top of the stack, as GLOBAL's. */
static int
stack_global(struct machine *m)
{
    struct value *name = pop(m);
    struct value *module = name != NULL ? pop(m) : NULL;

    if (module == NULL)
        return -1;
    if (module->kind != V_STR || name->kind != V_STR)
        return pickle_fail(m, "STACK_GLOBAL of something that is not two names", NULL);
    return global(m, module->u.str.s, module->u.str.len, name->u.str.s, name->u.str.len);
}

/* An opcode no state dict is written with, refused by its name. */
static int
unknown_opcode(struct machine *m, unsigned char op)
{
    char what[64];

    snprintf(what, sizeof what, "0x%02x (%s)", op, opcode_name(op));
    return pickle_fail(m, "the pickle uses an opcode a state dict does not: ", what);
}

/* One opcode: 0 to go on, 1 at STOP, -1 on an error. */
int
pickle_step(struct machine *m)
{
    const unsigned char op = *m->p++;
    const unsigned char *b;
    struct value *v;
    size_t first;

    switch (op) {
    case 0x80: /* PROTO */
        if ((b = take(m, 1)) == NULL)
            return -1;
        return *b >= 2 && *b <= 5 ? 0 : pickle_fail(m, "a pickle protocol other than 2 to 5", NULL);
    case 0x95: /* FRAME */
        return take(m, 8) == NULL ? -1 : 0;
    case '.': /* STOP */
        return 1;
    case '(': /* MARK */
        return push(m, &pickle_mark);
    case ')': /* EMPTY_TUPLE */
        return push(m, &empty_tuple);
    case ']': /* EMPTY_LIST */
        return push(m, make(m, V_LIST));
    case '}': /* EMPTY_DICT */
        return push(m, make(m, V_DICT));
    case 't': /* TUPLE: the values above the mark, the mark dropped */
        if (since_mark(m, &first) != 0)
            return -1;
        return tuple_of(m, first, first - 1);
    case 0x85: /* TUPLE1 */
    case 0x86: /* TUPLE2 */
    case 0x87: /* TUPLE3 */
        return small_tuple(m, (size_t)(op - 0x84));
    case 'a': /* APPEND */
        if (m->depth < 2)
            return pickle_fail(m, "APPEND without a list and a value", NULL);
        return fill(m, m->depth - 2, m->depth - 1, m->depth - 1, V_LIST);
    case 'e': /* APPENDS */
    case 'u': /* SETITEMS: the list or dict is below the mark; the mark goes */
        if (since_mark(m, &first) != 0)
            return -1;
        if (first < 2)
            return pickle_fail(m, "a mark with nothing below it to fill", NULL);
        return fill(m, first - 2, first, first - 1, op == 'e' ? V_LIST : V_DICT);
    case 's': /* SETITEM */
        if (m->depth < 3)
            return pickle_fail(m, "SETITEM without a dict, a key and a value", NULL);
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
        return (b = take(m, 1)) == NULL ? -1 : push(m, &small_ints[*b]);
    case 'M': /* BININT2 */
        return (b = take(m, 2)) == NULL ? -1 : integer(m, (int64_t)little(b, 2));
    case 'J': /* BININT */
        return (b = take(m, 4)) == NULL ? -1 : integer(m, (int32_t)(uint32_t)little(b, 4));
    case 0x8a: /* LONG1 */
        return long1(m);
    case 'G': /* BINFLOAT: big-endian */
        return binfloat(m);
    case 'X': /* BINUNICODE */
        return (b = take(m, 4)) == NULL ? -1 : string(m, (size_t)little(b, 4));
    case 0x8c: /* SHORT_BINUNICODE */
        return (b = take(m, 1)) == NULL ? -1 : string(m, *b);
    case 0x8d: /* BINUNICODE8 */
        if ((b = take(m, 8)) == NULL)
            return -1;
        if (little(b, 8) > (uint64_t)(m->end - m->p))
            return pickle_fail(m, "the pickle ends inside an opcode", NULL);
        return string(m, (size_t)little(b, 8));
    case 'N': /* NONE */
        return push(m, &none);
    case 0x88: /* NEWTRUE */
        return push(m, &true_value);
    case 0x89: /* NEWFALSE */
        return push(m, &false_value);
    case 'c': /* GLOBAL */
        return global_lines(m);
    case 0x93: /* STACK_GLOBAL */
        return stack_global(m);
    case 'Q': /* BINPERSID */
        return persistent(m);
    case 'R': /* REDUCE */
        return reduce(m);
    case 'b': /* BUILD: a state dict's _metadata attribute; nothing else is built */
        if ((v = pop(m)) == NULL || top(m) == NULL)
            return -1;
        if (top(m)->kind != V_DICT || v->kind != V_DICT)
            return pickle_fail(m, "BUILD of something that is not a dict's attributes", NULL);
        return 0;
    default:
        m->p--;
        return unknown_opcode(m, op);
    }
}
