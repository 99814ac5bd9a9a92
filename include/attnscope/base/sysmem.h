/*
 * sysmem.h: how much memory the machine has, and how much a new
 * allocation can still have without pushing something out: what decides
 * whether a model's weights fit before a byte of them is read.
 */
#ifndef ATTNSCOPE_SYSMEM_H
#define ATTNSCOPE_SYSMEM_H

#include <stddef.h>

/* The machine's physical memory in bytes (0: unknown). */
size_t sysmem_total(void);
/*
 * The memory that can still be had, in bytes: the kernel's MemAvailable
 * (free memory and what can be reclaimed, the page cache included), less
 * where a control group's memory.max is lower (a container's limit);
 * sysmem_total() when neither can be read, 0 when nothing can.
 */
size_t sysmem_available(void);

#endif
