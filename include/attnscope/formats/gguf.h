/*
 * gguf.h: reading a GGUF file (llama.cpp's format, which Ollama and LM
 * Studio keep too): a header (the magic "GGUF", version 2 or 3, the counts
 * of tensors and of metadata keys), the metadata (typed keys: numbers,
 * strings, arrays of either: the architecture, its sizes, the tokenizer),
 * each tensor's name, dimensions, ggml type and offset, and the data from
 * the next multiple of general.alignment.
 *
 * Everything is checked against the file before it is used: every count,
 * length and offset fits what is left of the file; keys are at most 65,535
 * bytes and given once; an array holds numbers or strings, never arrays;
 * the tensors lie inside the data, aligned, each a whole number of its
 * type's blocks, none overlapping another.  A tensor of a type attnscope
 * does not dequantize (IQ2_XXS, TQ1_0, MXFP4...) is listed, and refused by
 * its type's name when read.  Messages name the file and what is wrong.
 * The tensors' bytes are read (pread), never mapped, as safetensors.h says
 * why.
 */
#ifndef ATTNSCOPE_GGUF_H
#define ATTNSCOPE_GGUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "attnscope/base/status.h"
#include "attnscope/formats/tensor.h"

/* The types of a metadata value, as the file numbers them. */
enum gguf_type {
    GGUF_U8,
    GGUF_I8,
    GGUF_U16,
    GGUF_I16,
    GGUF_U32,
    GGUF_I32,
    GGUF_F32,
    GGUF_BOOL,
    GGUF_STRING,
    GGUF_ARRAY,
    GGUF_U64,
    GGUF_I64,
    GGUF_F64,
    GGUF_TYPES
};

struct gguf_kv {
    char *key;
    enum gguf_type type;
    /* A number or a bool: as an integer (i, u: whichever holds it) or a float (f). */
    int64_t i;
    uint64_t u;
    double f;
    /* A string (its bytes, NUL-ended; len without the NUL). */
    char *str;
    size_t len;
    /* An array: its items' type and count; numbers as doubles and integers, strings as strs. */
    enum gguf_type item;
    size_t count;
    int64_t *ints;    /* (count) an array of integers or bools, or NULL */
    double *floats;   /* (count) an array of floats, or NULL */
    char **strs;      /* (count) an array of strings, each NUL-ended, or NULL */
    size_t *lens;     /* (count) their lengths */
};

struct gguf {
    char *path;
    int fd;
    uint32_t version;
    uint64_t file_size;
    uint64_t data_start;  /* where the data starts: after the tensor infos, aligned */
    uint64_t alignment;   /* general.alignment, or 32 */
    struct gguf_kv *kv;
    size_t kv_count;
    struct tensor_catalogue cat; /* the tensors, in the file's order */
    uint32_t *ggml_types; /* (cat.count) each tensor's ggml type number */
};

/* The largest key, and the most memory the metadata may take beyond 4 bytes per file byte. */
#define GGUF_KEY_MAX 65535
#define GGUF_META_SLACK ((size_t)64 << 20)

/* Opens and checks path; on failure nothing is left open and err names the file. */
enum attn_status gguf_open(struct gguf *g, const char *path, struct attn_error *err);
void gguf_close(struct gguf *g);

/* Whether head (a file's first 4 bytes) is a GGUF file's magic. */
bool gguf_magic(const unsigned char head[4]);
/* Whether path is a regular file that starts like a GGUF file (4 bytes read). */
bool gguf_file_is(const char *path);

/* The key's entry, or NULL. */
const struct gguf_kv *gguf_find(const struct gguf *g, const char *key);
/* A key's integer (any integer type, or a bool), float (either float type, or an integer), or
   string; false (NULL) when absent or of another kind. */
bool gguf_int(const struct gguf *g, const char *key, int64_t *v);
bool gguf_float(const struct gguf *g, const char *key, double *v);
const char *gguf_string(const struct gguf *g, const char *key);

/* Reads t as float32 (dequantized) or as stored (a plain dtype), tensor_read's rules. */
enum attn_status gguf_read(const struct gguf *g, const struct tensor_info *t, enum tensor_dtype as,
                           void *out, struct attn_error *err);

/* A metadata value type's name as the format's description spells it ("UINT32", "ARRAY"). */
const char *gguf_type_name(enum gguf_type type);

/* The name of ggml type number type ("Q4_K", "IQ2_XXS"; "type 99" past the known). */
const char *gguf_ggml_type_name(uint32_t type, char *buf, size_t size);

/*
 * The tensors' types and how many have each, most first ("Q4_K 168
 * tensors, Q6_K 29, F32 57"), into buf.
 */
const char *gguf_type_mix(const struct gguf *g, char *buf, size_t size);

#endif
