/*
 * workspace.h: the memory a computation reuses from one call to the next.
 *
 * What were process-wide globals (the matrix products' packing scratch and
 * the spare stage arena a destroyed pipeline leaves for the next) live in a
 * struct attn_workspace, one per thread: two pipelines, or two threads
 * computing at once, never share a buffer.  A thread's workspace is made on
 * first use and freed when the thread ends (the main thread's at exit).
 */
#ifndef ATTNSCOPE_WORKSPACE_H
#define ATTNSCOPE_WORKSPACE_H

#include <stddef.h>

struct attn_workspace {
    float *scratch;        /* packing space for the products */
    size_t scratch_floats;
    float *widened;        /* a quantized matrix's rows widened for a product (decoder.h) */
    size_t widened_floats;
    void *spare;           /* one stage arena kept for the next pipeline */
    size_t spare_bytes;
};

/* The calling thread's workspace, or NULL when out of memory. */
struct attn_workspace *workspace_thread(void);

/* At least floats floats of scratch (kept for the next call), or NULL. */
float *workspace_scratch(struct attn_workspace *ws, size_t floats);
/* The same, for widened rows (beside the packing scratch the products take meanwhile). */
float *workspace_widened(struct attn_workspace *ws, size_t floats);

/*
 * A 64-byte-aligned arena of at least bytes (the spare one when it fits,
 * else a new one, on 2 MiB pages when large); *got is its real size.
 */
void *workspace_arena_get(struct attn_workspace *ws, size_t bytes, size_t *got);

/* Gives an arena back: kept as the spare when it is the larger, else freed. */
void workspace_arena_put(struct attn_workspace *ws, void *arena, size_t bytes);

/* Frees what ws holds (it stays usable). */
void workspace_release(struct attn_workspace *ws);

#endif
