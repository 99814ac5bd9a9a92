/*
 * pickle_internal.h: what pickle.c (the machine and its opcodes) and
 * pickle_dict.c (its result: the state dict) share.  Not for use outside
 * src/core/formats.
 */
#ifndef ATTNSCOPE_PICKLE_INTERNAL_H
#define ATTNSCOPE_PICKLE_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "attnscope/base/status.h"
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

/* The mark, shared by every MARK: no value is it but the mark. */
extern struct value pickle_mark;

/* Runs one opcode at m->p: 0 to go on, 1 at STOP, -1 with m->err set. */
int pickle_step(struct machine *m);
/* -1 with the message: the pickle's file, the byte, what is wrong (fmt, then what). */
int pickle_fail(struct machine *m, const char *fmt, const char *what);

#endif
