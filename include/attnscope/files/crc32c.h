/*
 * crc32c.h: CRC-32C (Castagnoli), as LevelDB's tables and TensorFlow's
 * checkpoints checksum their blocks and tensors, and its masking (stored
 * checksums are masked, so that a CRC of data holding CRCs stays useful).
 */
#ifndef ATTNSCOPE_CRC32C_H
#define ATTNSCOPE_CRC32C_H

#include <stddef.h>
#include <stdint.h>

/* The CRC-32C of n more bytes after the crc of what came before (0 to start). */
uint32_t crc32c_extend(uint32_t crc, const unsigned char *data, size_t n);

/* The same by the table alone, never the CPU's instruction (for tests that compare the two). */
uint32_t crc32c_extend_portable(uint32_t crc, const unsigned char *data, size_t n);

/* The masked form stored in files, and back. */
uint32_t crc32c_mask(uint32_t crc);
uint32_t crc32c_unmask(uint32_t masked);

#endif
