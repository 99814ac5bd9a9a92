/*
 * fileio.h: whole-file reads with a size limit, a model's files opened
 * only when they are regular files, and reads that say when a file
 * changed under them.  Writing is fileio_batch.h's (a group of files, all
 * or nothing) and filewrite.h's (one file the user names).
 */
#ifndef ATTNSCOPE_FILEIO_H
#define ATTNSCOPE_FILEIO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "attnscope/base/status.h"

/*
 * Reads the file at path into a NUL-terminated buffer the caller frees.
 * Directories, unreadable files and files longer than max_bytes are refused.
 */
/*
 * The folder sub (a relative path, at most 32 bytes) beside the running
 * program, into buf: how a build in a clone finds its samples without
 * installing.  buf is "" when the program's path cannot be read.
 */
void fileio_beside_program(const char *sub, char *buf, size_t size);

enum attn_status fileio_read_all(const char *path, size_t max_bytes, char **buf,
                                 size_t *len, struct attn_error *err);

/*
 * A model's files must be regular files.  fileio_open_regular() opens path
 * without ever blocking (a FIFO would wait for a writer forever in open())
 * and refuses whatever is not a regular file with a message saying what it
 * is ("is a FIFO, not a file", "is a folder, not a file", "is a symbolic
 * link to nothing", "a loop of symbolic links").  *fd is the caller's to
 * close.  fileio_read_regular() is fileio_read_all() through it; a file
 * over max_bytes is refused before any of it is read.
 */
enum attn_status fileio_open_regular(const char *path, int *fd, struct attn_error *err);
enum attn_status fileio_read_regular(const char *path, size_t max_bytes, char **buf,
                                     size_t *len, struct attn_error *err);

/*
 * What is at path when it is there but neither a regular file nor a folder
 * ("a FIFO", "a device", "a socket"), else NULL: a name given for a model
 * is said to be what it is, not looked for elsewhere.
 */
const char *fileio_odd_kind(const char *path);
/* Whether nothing at all is at path (not even a symbolic link to nothing). */
bool fileio_absent(const char *path);
/* The process's umask, read without changing it (what a new file's or folder's mode loses). */
mode_t fileio_umask(void);

/*
 * Reads len bytes at offset of the open file fd (named path in messages),
 * whatever pread returns at a time; a file that ends first was truncated
 * or replaced since it was opened, and is reported so, never read past.
 */
enum attn_status fileio_pread(int fd, const char *path, void *buf, size_t len, uint64_t offset,
                              struct attn_error *err);

#endif
