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

/*
 * A value is 32 bytes, so that a pickle of millions of small opcodes stays
 * small: what only storages and tensors have is allocated for them alone,
 * and values come from slabs.
 */
struct value {
    unsigned char kind;     /* enum kind */
    uint32_t count, cap;    /* V_TUPLE, V_LIST, V_DICT: the items */
    union {
        int64_t i;              /* V_INT, V_BOOL; V_GLOBAL: enum global */
        double f;               /* V_FLOAT */
        struct {
            char *s;            /* V_STR (NUL-terminated; len bytes) */
            size_t len;
        } str;
        struct value **items;   /* V_TUPLE, V_LIST; V_DICT: key, value, key, value ... */
        struct pickle_tensor *t; /* V_STORAGE: storage, dtype, storage_numel; V_TENSOR: all */
    } u;
};

/* Values are made SLAB_VALUES at a time; the machine frees the slabs at the end. */
#define SLAB_VALUES 1024
struct slab {
    struct slab *next;
    struct value v[SLAB_VALUES];
};

struct machine {
    const unsigned char *p, *end, *start;
    const char *path;
    struct attn_error *err;
    struct slab *slabs;   /* every value made (the newest slab first), freed at the end */
    size_t slab_used;     /* values taken from the newest slab */
    size_t values;        /* values made */
    size_t bytes, bytes_max; /* memory the machine holds, and what a pickle of its size may */
    struct value **stack;
    size_t depth, stack_cap;
    struct value **memo;
    size_t memo_cap;
    size_t memo_next; /* MEMOIZE's next index */
};

/* Values no opcode changes are shared, not made: the mark, None, True, False, (). */
static struct value mark = { V_MARK, 0, 0, { 0 } };
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
static int
fail(struct machine *m, const char *fmt, const char *what)
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
        fail(m, "more values than a state dict makes", NULL);
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
        return fail(m, "the stack grows deeper than a state dict's", NULL);
    if (grow(m, (void **)&m->stack, &m->stack_cap, m->depth + 1, sizeof *m->stack) != 0)
        return -1;
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
    /* A pickler numbers what it memoizes from 0, each a value made before. */
    if (index > m->values + 16)
        return fail(m, "a memo index past the values made so far", NULL);
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
        return fail(m, "a memo entry is read before it is written", NULL);
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
    struct value *key;

    if (id == NULL)
        return -1;
    if (id->kind != V_TUPLE || id->count != 5 || id->u.items[0]->kind != V_STR ||
        strcmp(id->u.items[0]->u.str.s, "storage") != 0 || id->u.items[1]->kind != V_GLOBAL ||
        id->u.items[2]->kind != V_STR || !is_int(id->u.items[4]))
        return fail(m, "a persistent id that is not a storage's ('storage', type, key, location, "
                       "size)",
                    NULL);
    type = id->u.items[1];
    key = id->u.items[2];
    if (type->u.i != G_FLOAT_STORAGE && type->u.i != G_HALF_STORAGE &&
        type->u.i != G_BFLOAT16_STORAGE)
        return fail(m, "a storage of a type that is not one", NULL);
    if (id->u.items[4]->u.i < 0 || key->u.str.len == 0 || key->u.str.len > 64 ||
        strchr(key->u.str.s, '/') != NULL || memchr(key->u.str.s, '\0', key->u.str.len))
        return fail(m, "a storage's key or size is not one", NULL);
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
        return fail(m, "_rebuild_tensor_v2 is not given a storage and an offset", NULL);
    if ((t = make(m, V_TENSOR)) == NULL || make_tensor(m, t) != 0)
        return -1;
    *t->u.t = *args->u.items[0]->u.t;
    t->u.t->offset = args->u.items[1]->u.i;
    n = dims(args->u.items[2], t->u.t->shape);
    if (n < 0 || dims(args->u.items[3], stride) != n)
        return fail(m, "a tensor's size and strides are not tuples of as many counts (at most 8)",
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
        return fail(m, "REDUCE of something that is not a known name and its arguments", NULL);
    if (callable->u.i == G_ORDERED_DICT) {
        if (args->count != 0)
            return fail(m, "OrderedDict is given items (state dicts fill it with SETITEMS)", NULL);
        return push(m, make(m, V_DICT));
    }
    if (callable->u.i == G_REBUILD_TENSOR)
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

/* TUPLE1, TUPLE2, TUPLE3: the n values at the top of the stack. */
static int
small_tuple(struct machine *m, size_t n)
{
    if (m->depth < n)
        return fail(m, "a tuple of more values than the stack has", NULL);
    for (size_t k = m->depth - n; k < m->depth; k++)
        if (m->stack[k] == &mark)
            return fail(m, "a tuple takes a mark", NULL);
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
        return fail(m, "an integer wider than 64 bits", NULL);
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
        return fail(m, "STACK_GLOBAL of something that is not two names", NULL);
    return global(m, module->u.str.s, module->u.str.len, name->u.str.s, name->u.str.len);
}

/* An opcode no state dict is written with, refused by its name. */
static int
unknown_opcode(struct machine *m, unsigned char op)
{
    char what[64];

    snprintf(what, sizeof what, "0x%02x (%s)", op, opcode_name(op));
    return fail(m, "the pickle uses an opcode a state dict does not: ", what);
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
            return fail(m, "the pickle ends inside an opcode", NULL);
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
            return fail(m, "BUILD of something that is not a dict's attributes", NULL);
        return 0;
    default:
        m->p--;
        return unknown_opcode(m, op);
    }
}

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
