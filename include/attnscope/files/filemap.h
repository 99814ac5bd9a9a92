/*
 * filemap.h: a model's file mapped from the page cache, and a file that
 * shrinks under its mapping caught.
 *
 * A weights file held as it is on disk (float32, bfloat16, quantized
 * blocks) need not be copied into the process: it is mapped, and the
 * products read the kernel's page cache, as llama.cpp does.  A mapping's
 * pages are private: what a loader changes in place (a head's rows put
 * back in order) becomes the process's own copy of that page, the file
 * untouched.
 *
 * A file truncated or replaced while mapped would make a read of a page
 * past its new end a SIGBUS, which kills a process.  filemap installs a
 * handler for it: a fault inside a mapping of ours puts zero-filled memory
 * over the rest of that mapping, marks it damaged, and lets the read go on;
 * whoever computed from the mapping asks filemap_damaged() afterwards and
 * refuses the result, naming the file.  A fault anywhere else goes to the
 * handler that was there before (or kills the process as it would have).
 */
#ifndef ATTNSCOPE_FILEMAP_H
#define ATTNSCOPE_FILEMAP_H

#include <stdbool.h>
#include <stddef.h>

#include "attnscope/base/status.h"

struct filemap;

/*
 * Maps the first len bytes of the open regular file fd (named path in
 * messages; len its size when opened) read-write and private; NULL with err
 * set when it cannot be mapped (the caller then reads the file instead).
 */
struct filemap *filemap_open(int fd, const char *path, size_t len, struct attn_error *err);
/* Unmaps it; NULL is ignored. */
void filemap_close(struct filemap *fm);

/* The mapping's first byte and its length. */
unsigned char *filemap_data(const struct filemap *fm);
size_t filemap_len(const struct filemap *fm);

/* Whether [p, p + bytes) lies inside fm. */
bool filemap_holds(const struct filemap *fm, const void *p, size_t bytes);

/*
 * Whether a read from fm found the file shorter than when it was mapped
 * (or unreadable): its pages from there on read as zeros since.  Once set,
 * it stays set.
 */
bool filemap_damaged(const struct filemap *fm);

/*
 * For a SIGBUS handler of the front end's own (one installed after
 * filemap's replaces it): when addr is inside one of filemap's mappings,
 * puts zeros over the rest of it, marks it damaged and returns true (the
 * read may go on); false for any other address.  Async-signal-safe.
 */
bool filemap_repair(const void *addr);

/*
 * ATTN_OK, or ATTN_EIO with err naming fm's file when it is damaged: what
 * a computation from fm returns after it is done.
 */
enum attn_status filemap_check(const struct filemap *fm, struct attn_error *err);

#endif
