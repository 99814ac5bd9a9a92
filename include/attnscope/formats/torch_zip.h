/*
 * torch_zip.h: reading a state dict saved by torch.save (model.pth,
 * pytorch_model.bin), without running its pickle.
 *
 * Since PyTorch 1.6 torch.save writes a zip archive (read with libzip,
 * ZIP64 included): one folder, whatever its name ("archive", the file's
 * stem), holding data.pkl (the pickled state dict: pickle.h reads it with
 * a machine that executes nothing), data/KEY (each storage's raw
 * little-endian bytes, stored uncompressed), and small files newer
 * versions add (version, byteorder, .format_version, .storage_alignment,
 * .data/serialization_id; a byteorder other than little is refused).
 * Every tensor is checked against its storage before anything is read:
 * the storage is in the archive and as long as its id says, the view's
 * offset, shape and strides stay inside it; tensors sharing one storage
 * (tied weights) are read from it each.  A view that is not contiguous is
 * listed and refused by name when read.  The `location` (cuda:0) is
 * ignored: the bytes are the same.
 */
#ifndef ATTNSCOPE_TORCH_ZIP_H
#define ATTNSCOPE_TORCH_ZIP_H

#include <stddef.h>
#include <stdint.h>

#include "attnscope/base/status.h"
#include "attnscope/formats/tensor.h"

/* The largest data.pkl read (a state dict's pickle holds names and numbers: kilobytes). */
#define TORCH_PICKLE_MAX ((size_t)64 << 20)

struct torch_zip {
    char *path;
    void *zip;                   /* (zip_t *) the archive, open */
    int unit_count;              /* the storages the tensors view */
    uint64_t *unit_entry;        /* each one's entry in the archive */
    uint64_t *unit_size;         /* its bytes */
    unsigned char *unit_stored;  /* 1 when stored uncompressed (as torch.save stores) */
    const char *under;           /* the key the state dict was under ("model_state_dict"), or NULL */
    struct tensor_catalogue cat; /* the state dict's tensors, in the pickle's order */
};

/* Opens and checks path; on failure nothing is left open and err names the file. */
enum attn_status torch_zip_open(struct torch_zip *tz, const char *path, struct attn_error *err);
void torch_zip_close(struct torch_zip *tz);

const struct tensor_info *torch_zip_find(const struct torch_zip *tz, const char *name);

/* t's values as float32 (t->numel of them). */
enum attn_status torch_zip_read_f32(const struct torch_zip *tz, const struct tensor_info *t,
                                    float *out, struct attn_error *err);
/* The same as float32 or as stored (tensor_read's as). */
enum attn_status torch_zip_read(const struct torch_zip *tz, const struct tensor_info *t,
                                enum tensor_dtype as, void *out, struct attn_error *err);

#endif
