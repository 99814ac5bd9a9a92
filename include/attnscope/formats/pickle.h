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
#include "attnscope/formats/tensor.h"

/*
 * The most values (of any kind) one pickle may make: a state dict makes
 * about twenty per tensor (its name, storage, offset, shape, strides...),
 * so this is 200,000 tensors.
 */
#define PICKLE_VALUES_MAX 4000000
/*
 * The deepest the machine's stack may grow: torch.save fills a dict 1,000
 * items at a time, so a state dict's stack holds a few thousand at most.
 */
#define PICKLE_STACK_MAX 1000000
/*
 * The memory (bytes) the machine may hold for a pickle of len bytes: a
 * floor for small files, then in proportion to the file, at about four
 * times what a state dict's pickle needs (8 bytes a pickle byte for 20,000
 * tensors; check_formats measures the fixtures'), so that no pickle holds
 * more memory than its size warrants.
 */
static inline size_t
pickle_memory_max(size_t len)
{
    return ((size_t)16 << 20) + 32 * len;
}

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
    size_t memory;     /* the most memory the machine held running the pickle (bytes) */
};

/*
 * Runs the pickle of len bytes at data (named path in messages) and takes
 * its state dict into sd (the caller's to pickle_state_dict_free).
 */
enum attn_status pickle_state_dict(const unsigned char *data, size_t len, const char *path,
                                   struct pickle_state_dict *sd, struct attn_error *err);
void pickle_state_dict_free(struct pickle_state_dict *sd);

#endif
