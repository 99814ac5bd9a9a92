/*
 * pickle.h: the state dict in a torch.save archive's data.pkl, read by a
 * pickle machine that executes nothing.
 *
 * Python's pickle is a small stack language whose GLOBAL and REDUCE
 * opcodes import and call anything by name: loading an untrusted pickle
 * with Python runs its code.  This machine knows only the opcodes a state
 * dict is written with (protocols 2 to 5: PROTO, FRAME, the memo's
 * PUT/GET/MEMOIZE, MARK, the empty tuple, list and dict and what fills
 * them, integers, floats, strings, None, True, False, BINPERSID, REDUCE,
 * BUILD, STOP) and only these names: collections.OrderedDict (a dict),
 * torch._utils._rebuild_tensor_v2 (a tensor: a storage, an offset, a shape
 * and strides) and torch.FloatStorage, HalfStorage and BFloat16Storage
 * (the storages' dtypes).  Anything else, an opcode or a name, is refused
 * with one line naming it; nothing a pickle names is ever called.
 *
 * What is read is a state dict: the pickle's dict of names to tensors, or
 * the one under its "model_state_dict" (chapter 5's
 * model_and_optimizer.pth), "state_dict" or "model" key.  Tensors elsewhere
 * (an optimizer's moments) are not listed.
 */
#ifndef ATTNSCOPE_PICKLE_H
#define ATTNSCOPE_PICKLE_H

#include <stddef.h>
#include <stdint.h>

#include "attnscope/base/status.h"
#include "attnscope/files/tensor.h"

/* The most values (of any kind) one pickle may make: a state dict makes a few per tensor. */
#define PICKLE_VALUES_MAX 20000000

/* One tensor of the state dict: a view of a storage (a zip entry data/KEY). */
struct pickle_tensor {
    char *name;
    char *storage;          /* the storage's key */
    enum tensor_dtype dtype;
    int64_t storage_numel;  /* the storage's elements, as its persistent id says */
    int64_t offset;         /* the view's first element in it */
    int ndim;
    int64_t shape[TENSOR_NDIM_MAX];
    int64_t stride[TENSOR_NDIM_MAX];
};

struct pickle_state_dict {
    struct pickle_tensor *tensors;
    int count;
    const char *under; /* the key the state dict was under ("model_state_dict"), or NULL */
};

/*
 * Runs the pickle of len bytes at data (named path in messages) and takes
 * its state dict into sd (the caller's to pickle_state_dict_free).
 */
enum attn_status pickle_state_dict(const unsigned char *data, size_t len, const char *path,
                                   struct pickle_state_dict *sd, struct attn_error *err);
void pickle_state_dict_free(struct pickle_state_dict *sd);

#endif
