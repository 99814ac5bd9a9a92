/*
 * tensors.h: a model's weights by name, whatever file holds them.
 *
 * The seam between the families and the file formats: a family asks for a
 * tensor by name (its dtype, shape and values as float32) and never knows
 * which format it reads.  Each format is one reader behind it:
 *   safetensors.h    model.safetensors, or the shards a
 *                    model.safetensors.index.json names (every tensor of
 *                    the map checked to be in its shard, the map kept in a
 *                    hash table so a lookup costs the same with one shard
 *                    or a thousand);
 *   tf_checkpoint.h  a TensorFlow checkpoint (OpenAI's GPT-2 as the book's
 *                    chapter 5 downloads it);
 *   torch_zip.h      a PyTorch state dict saved by torch.save (model.pth,
 *                    pytorch_model.bin), read without running its pickle;
 *   gguf.h           a GGUF file (llama.cpp's, Ollama's, LM Studio's), its
 *                    quantized tensors dequantized as ggml does.
 * The files stay open until tensors_close(); the readers read, never map.
 */
#ifndef ATTNSCOPE_TENSORS_H
#define ATTNSCOPE_TENSORS_H

#include <stddef.h>

#include "attnscope/base/status.h"
#include "attnscope/formats/tensor.h"

struct tensor_reader;

/* One open file of a source and the reader of its format. */
struct filemap;
struct tensor_file {
    const struct tensor_reader *reader;
    void *self;
    struct filemap *map; /* the file mapped (tensors_map), until taken or closed */
    bool map_refused;    /* it could not be: its tensors are read */
};

struct tensor_source {
    char path[4096];          /* what was opened: the weights file, the shard index, the
                                 checkpoint's index */
    const char *format;       /* its format, as the screen says it ("safetensors") */
    const char *within;       /* the key of the file's dict its state dict was under
                                 ("model_state_dict"), or NULL */
    struct tensor_file *files;
    int file_count;           /* the files open */
    int file_capacity;        /* the files reserved */
    void *shard_of;           /* (json_t *) tensor name -> file, from a shard index */
};

/*
 * Opens the weights at path: a weights file (by what it holds, whatever its
 * name: a .safetensors, a torch.save zip, a checkpoint's .index or data
 * file, or a checkpoint's prefix), or a model folder, where the first of
 * these is read: model.safetensors, model.safetensors.index.json, the
 * TensorFlow checkpoint its `checkpoint` file names (or model.ckpt),
 * pytorch_model.bin, or its one .pth / .pt file.  ATTN_EABSENT (err naming
 * what was looked for) when a folder has none; files attnscope does not
 * read (Keras' .h5, PyTorch's format from before 1.6) are named as such.
 * On any failure nothing is left open.
 */
enum attn_status tensors_open(struct tensor_source *s, const char *path, struct attn_error *err);
void tensors_close(struct tensor_source *s);

/* The tensor called name, or NULL. */
const struct tensor_info *tensors_find(const struct tensor_source *s, const char *name);

/* Its values as float32 into out (t->numel of them), converted exactly. */
enum attn_status tensors_read_f32(const struct tensor_source *s, const struct tensor_info *t,
                                  float *out, struct attn_error *err);
/*
 * As float32 (as TENSOR_F32) or as stored (as t->dtype: a bfloat16 model's
 * weights kept bfloat16), tensor_read's rules.
 */
enum attn_status tensors_read(const struct tensor_source *s, const struct tensor_info *t,
                              enum tensor_dtype as, void *out, struct attn_error *err);

/*
 * t's values in the file itself, mapped from the page cache (filemap.h),
 * when they are stored exactly as `as` (a float32 tensor as float32, a
 * bfloat16 or quantized one as itself), contiguous and aligned, in a format
 * that keeps tensors as plain bytes (safetensors, GGUF); NULL otherwise,
 * and then tensors_read copies them.  The memory is private: changes stay
 * the process's.  It lives until the mapping is closed: with the source,
 * or by whoever took it (tensors_take_maps).
 */
const void *tensors_map(struct tensor_source *s, const struct tensor_info *t,
                        enum tensor_dtype as);
/*
 * The mappings tensors_map made, moved to the caller: up to max of them
 * into maps (the caller closes each with filemap_close); returns how many.
 */
int tensors_take_maps(struct tensor_source *s, struct filemap **maps, int max);

/* How many tensors the source has, and each (in no promised order). */
int tensors_count(const struct tensor_source *s);
const struct tensor_info *tensors_at(const struct tensor_source *s, int i);

/*
 * The bytes every tensor of the source takes in memory, each from a 64-byte
 * boundary: as float32, or, when keep_bf16, a bfloat16 matrix (two
 * dimensions or more) as its 16-bit patterns, and when keep_quant a
 * quantized matrix as its blocks (an upper bound for a model,
 * which reads its tensors once each).  SIZE_MAX when it overflows.
 */
size_t tensors_held_bytes(const struct tensor_source *s, bool keep_bf16, bool keep_quant);

/* The source's GGUF file, when it is one (its metadata describes the model), or NULL. */
struct gguf;
const struct gguf *tensors_gguf(const struct tensor_source *s);

/* The file that holds t (for messages). */
const char *tensors_file_of(const struct tensor_source *s, const struct tensor_info *t);

#endif
